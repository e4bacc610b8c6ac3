//! fio job-file parser (core subset).
//!
//! Reads the INI-style job files of [fio](https://github.com/axboe/fio) and
//! turns them into a [`Workload`]. The syntax follows fio's own parser:
//!
//! * `[name]` starts a job; a section whose name begins with `global` (as in
//!   fio) sets defaults for the jobs *below* it. Several global sections
//!   accumulate; a section name may repeat (each is a separate job).
//! * `key=value` (spaces around `=` allowed) or a bare `key` for flags such as
//!   `time_based`. A line whose first non-blank character is `;` or `#` is a
//!   comment, and, as in fio, everything from a `;` or `#` to the end of a
//!   line is dropped.
//! * Sizes: plain integers are bytes; `k`, `m`, `g`, `t`, `p` (any case,
//!   optionally followed by `b`) are powers of 1024 (fio's default
//!   `kb_base=1024`); `0x` hexadecimal is accepted. IEC forms such as `4KiB`
//!   are rejected: under fio's default `kb_base=1024` they are *decimal*
//!   (fio reads `4KiB` as 4000 bytes); accepting them either way would
//!   silently disagree with fio or with the author.
//! * Times: a bare integer is seconds; suffixes `us`/`usec`, `ms`/`msec`,
//!   `s`/`sec`, `m`/`min`, `h`/`hour`, `d`/`day` (any case).
//!
//! Options without meaning in a simulator (`ioengine`, `direct`,
//! `filename`, ...) are accepted and listed once each in
//! [`Workload::ignored`]; every other option outside the supported subset is
//! an error naming the file, the line and the option. So are fio features
//! not modelled yet: trim patterns, per-direction `bs`, percentage sizes,
//! `stonewall`/`wait_for`/`new_group`, `include`, `${VAR}` expansion and
//! arithmetic expressions.

use super::{IgnoredOption, JobSpec, RwPattern, Workload, WorkloadError};
use crate::units::Time;
use std::path::Path;

/// Options that are parsed and applied to [`JobSpec`] (aliases included).
const SUPPORTED: &str = "rw/readwrite, rwmixread, rwmixwrite, bs/blocksize, iodepth, numjobs, \
     size, offset/fileoffset, io_size/io_limit, number_ios, runtime/timeout, time_based, ramp_time, \
     randseed, norandommap";

/// Supported options that take a value.
const VALUED: &[&str] = &[
    "rw",
    "readwrite",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "blocksize",
    "iodepth",
    "numjobs",
    "size",
    "offset",
    "fileoffset",
    "io_size",
    "io_limit",
    "number_ios",
    "runtime",
    "timeout",
    "ramp_time",
    "randseed",
];

/// Parse a fio job file from disk.
///
/// The file name used in errors is `path` as displayed. A read failure is
/// reported as a [`WorkloadError`] with line 0.
pub fn parse_file(path: &Path) -> Result<Workload, WorkloadError> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => parse_str(&text, &file),
        Err(e) => Err(WorkloadError {
            file,
            line: 0,
            option: None,
            message: format!("cannot read job file: {e}"),
        }),
    }
}

/// Parse the text of a fio job file; `file` names it in error messages.
///
/// Returns the jobs in file order (with `[global]` defaults applied, before
/// `numjobs` expansion) and the accepted-but-ignored options, each listed
/// once. Fails on the first unsupported option, invalid value, malformed
/// line, or if the file defines no job.
pub fn parse_str(text: &str, file: &str) -> Result<Workload, WorkloadError> {
    Parser {
        file,
        global: Settings::default(),
        current: None,
        workload: Workload::default(),
    }
    .run(text)
}

/// `rw=` value, before the mix percentage is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RwKind {
    Read,
    Write,
    Mixed,
    RandRead,
    RandWrite,
    RandMixed,
}

/// Option values of a `[global]` or job section.
#[derive(Debug, Clone)]
struct Settings {
    /// Everything except `rw` (and `name`, which comes from the section).
    spec: JobSpec,
    /// `rw=`; fio's default is `read`.
    rw: RwKind,
    /// Read percentage from `rwmixread=`/`rwmixwrite=`; applies to mixed `rw` only.
    rwmix_read: Option<u32>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            spec: JobSpec::default(),
            rw: RwKind::Read,
            rwmix_read: None,
        }
    }
}

/// The section being read.
struct Section {
    /// `None` for a global section.
    job_name: Option<String>,
    settings: Settings,
    /// First `rwmixread=`/`rwmixwrite=` of this section: (line, option, read %),
    /// to reject contradictory pairs whatever their order.
    rwmix_set: Option<(usize, String, u32)>,
}

struct Parser<'a> {
    file: &'a str,
    global: Settings,
    current: Option<Section>,
    workload: Workload,
}

impl Parser<'_> {
    fn run(mut self, text: &str) -> Result<Workload, WorkloadError> {
        for (idx, raw) in text.lines().enumerate() {
            let lineno = idx + 1;
            let raw = if idx == 0 {
                raw.trim_start_matches('\u{feff}')
            } else {
                raw
            };
            // As in fio, a `;` or `#` starts a comment wherever it appears.
            let line = match raw.find([';', '#']) {
                Some(i) => &raw[..i],
                None => raw,
            }
            .trim();
            if line.is_empty() {
                continue;
            }
            if line.starts_with('[') {
                self.section_header(line, lineno)?;
                continue;
            }
            if line.split_whitespace().next() == Some("include") {
                return Err(error(
                    self.file,
                    lineno,
                    None,
                    "include is not supported yet; paste the included options into this file",
                ));
            }
            let (key, value) = match line.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (line, None),
            };
            if key.is_empty() {
                return Err(error(
                    self.file,
                    lineno,
                    None,
                    format!("'{line}' has no option name before '='"),
                ));
            }
            self.option(key, value, lineno)?;
        }
        self.finish_section();
        if self.workload.jobs.is_empty() {
            return Err(error(
                self.file,
                0,
                None,
                "no jobs: the file defines no job section (only [global] or nothing)",
            ));
        }
        Ok(self.workload)
    }

    fn section_header(&mut self, line: &str, lineno: usize) -> Result<(), WorkloadError> {
        let Some(inner) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) else {
            return Err(error(
                self.file,
                lineno,
                None,
                format!("malformed section header '{line}'; expected '[name]'"),
            ));
        };
        let name = inner.trim();
        if name.is_empty() {
            return Err(error(self.file, lineno, None, "empty section name '[]'"));
        }
        if name.contains("${") {
            return Err(error(
                self.file,
                lineno,
                None,
                format!(
                    "section name '{name}': environment variable expansion is not supported yet"
                ),
            ));
        }
        self.finish_section();
        // fio treats every section whose name starts with "global" as global.
        let is_global = name.starts_with("global");
        self.current = Some(Section {
            job_name: (!is_global).then(|| name.to_string()),
            settings: self.global.clone(),
            rwmix_set: None,
        });
        Ok(())
    }

    /// Close the current section: a global one updates the defaults, a job is emitted.
    fn finish_section(&mut self) {
        let Some(section) = self.current.take() else {
            return;
        };
        let Some(name) = section.job_name else {
            self.global = section.settings;
            return;
        };
        let s = section.settings;
        let mix = s.rwmix_read.unwrap_or(50);
        let (random, read_pct) = match s.rw {
            RwKind::Read => (false, 100),
            RwKind::Write => (false, 0),
            RwKind::Mixed => (false, mix),
            RwKind::RandRead => (true, 100),
            RwKind::RandWrite => (true, 0),
            RwKind::RandMixed => (true, mix),
        };
        let mut spec = s.spec;
        spec.name = name;
        spec.rw = RwPattern { random, read_pct };
        if spec.time_based && spec.runtime.is_none() {
            // fio: "time_based requires a runtime/timeout setting" and clears it.
            spec.time_based = false;
            ignore(
                &mut self.workload.ignored,
                "time_based",
                "no runtime is set, so (as in fio) it has no effect",
            );
        }
        self.workload.jobs.push(spec);
    }

    fn option(
        &mut self,
        key: &str,
        value: Option<&str>,
        lineno: usize,
    ) -> Result<(), WorkloadError> {
        let file = self.file;
        let Some(section) = self.current.as_mut() else {
            return Err(error(
                file,
                lineno,
                Some(key),
                "appears before any [section]; put options under [global] or a job section",
            ));
        };
        if value.is_some_and(|v| v.contains("${")) {
            return Err(error(
                file,
                lineno,
                Some(key),
                "environment variable expansion is not supported yet",
            ));
        }
        if let Some(reason) = ignored_reason(key) {
            ignore(&mut self.workload.ignored, key, reason);
            return Ok(());
        }
        apply(section, key, value, lineno).map_err(|m| error(file, lineno, Some(key), m))
    }
}

/// Build an error located in `file` at `line` (0 = whole file).
fn error(
    file: &str,
    line: usize,
    option: Option<&str>,
    message: impl Into<String>,
) -> WorkloadError {
    WorkloadError {
        file: file.to_string(),
        line,
        option: option.map(str::to_string),
        message: message.into(),
    }
}

/// Record an ignored option unless it is already listed.
fn ignore(ignored: &mut Vec<IgnoredOption>, option: &str, reason: &str) {
    if !ignored.iter().any(|i| i.option == option) {
        ignored.push(IgnoredOption {
            option: option.to_string(),
            reason: reason.to_string(),
        });
    }
}

/// Why an option is accepted but has no effect, or `None` if it is not such an option.
fn ignored_reason(key: &str) -> Option<&'static str> {
    Some(match key {
        "ioengine" => "the simulator is the I/O engine",
        "direct" | "buffered" | "invalidate" => "no host page cache is modelled",
        "filename" | "directory" | "filename_format" => "the simulated drive is the target",
        "group_reporting" => "statistics are reported per direction for the whole run",
        "name" => "the section name names the job",
        "description" => "free text with no effect on the I/O",
        "thread" => "host threads and processes are not modelled",
        "iodepth_batch"
        | "iodepth_batch_submit"
        | "iodepth_batch_complete_min"
        | "iodepth_batch_complete" => "the NVMe queue model submits each I/O as it is generated",
        "gtod_reduce" | "clocksource" => {
            "simulated time is exact; host clock settings do not apply"
        }
        "per_job_logs" | "write_bw_log" | "write_lat_log" | "write_iops_log" | "log_avg_msec" => {
            "time series are produced by ssdlab itself"
        }
        "output-format" => "ssdlab writes its own report",
        _ => return None,
    })
}

/// Apply one supported option to `section`; the error is the message only.
fn apply(
    section: &mut Section,
    key: &str,
    value: Option<&str>,
    lineno: usize,
) -> Result<(), String> {
    let s = &mut section.settings;
    match key {
        "time_based" => s.spec.time_based = parse_flag(value)?,
        "norandommap" => s.spec.norandommap = parse_flag(value)?,
        "stonewall" | "wait_for_previous" => {
            return Err(
                "job ordering (stonewall) is not supported yet; all jobs run concurrently".into(),
            )
        }
        "wait_for" => return Err("job ordering (wait_for) is not supported yet".into()),
        "new_group" => return Err("job groups (new_group) are not supported yet".into()),
        _ if !VALUED.contains(&key) => {
            return Err(format!(
                "not supported by ssdlab yet (supported: {SUPPORTED})"
            ))
        }
        _ => {
            let Some(v) = value else {
                return Err("needs a value ('option=value')".into());
            };
            if v.is_empty() {
                return Err("empty value".into());
            }
            apply_valued(section, key, v, lineno)?;
        }
    }
    Ok(())
}

/// Apply a supported option that takes a value.
fn apply_valued(section: &mut Section, key: &str, v: &str, lineno: usize) -> Result<(), String> {
    let spec = &mut section.settings.spec;
    match key {
        "rw" | "readwrite" => section.settings.rw = parse_rw(v)?,
        "rwmixread" | "rwmixwrite" => {
            let pct = parse_int(v)?;
            if pct > 100 {
                return Err(format!(
                    "'{v}' is out of range; expected a percentage 0..=100"
                ));
            }
            // `pct <= 100`, so the conversion cannot fail.
            let pct = u32::try_from(pct).unwrap_or(100);
            let read = if key == "rwmixread" { pct } else { 100 - pct };
            match &section.rwmix_set {
                Some((line, other, prev)) if *prev != read => {
                    return Err(format!(
                        "contradicts '{other}' on line {line} of the same section \
                         ({read}% reads here, {prev}% there)"
                    ));
                }
                Some(_) => {}
                None => section.rwmix_set = Some((lineno, key.to_string(), read)),
            }
            section.settings.rwmix_read = Some(read);
        }
        "bs" | "blocksize" => {
            if v.contains(',') {
                return Err(format!(
                    "per-direction block sizes are not supported yet ('{v}' gives \
                     read,write[,trim] sizes); give a single size"
                ));
            }
            let bs = parse_int(v)?;
            if bs == 0 {
                return Err("block size must be greater than 0".into());
            }
            spec.bs = bs;
        }
        "iodepth" => spec.iodepth = parse_count(v)?,
        "numjobs" => spec.numjobs = parse_count(v)?,
        "number_ios" => {
            let n = parse_int(v)?;
            if n == 0 {
                return Err("must be at least 1".into());
            }
            spec.number_ios = Some(n);
        }
        // fio: 0 means "unset" (the whole device / `size`).
        "size" => spec.size = Some(parse_size(v)?).filter(|&b| b > 0),
        "io_size" | "io_limit" => spec.io_size = Some(parse_size(v)?).filter(|&b| b > 0),
        "offset" | "fileoffset" => spec.offset = parse_size(v)?,
        // fio: runtime 0 means no limit.
        "runtime" | "timeout" => spec.runtime = Some(parse_time(v)?).filter(|&t| t > Time::ZERO),
        "ramp_time" => spec.ramp_time = parse_time(v)?,
        "randseed" => spec.randseed = Some(parse_int(v)?),
        _ => {
            return Err(format!(
                "not supported by ssdlab yet (supported: {SUPPORTED})"
            ))
        }
    }
    Ok(())
}

/// `rw=` values.
fn parse_rw(v: &str) -> Result<RwKind, String> {
    let (kind, modifier) = match v.split_once(':') {
        Some((k, m)) => (k.trim(), Some(m)),
        None => (v, None),
    };
    let rw = match kind {
        "read" => RwKind::Read,
        "write" => RwKind::Write,
        "rw" | "readwrite" => RwKind::Mixed,
        "randread" => RwKind::RandRead,
        "randwrite" => RwKind::RandWrite,
        "randrw" => RwKind::RandMixed,
        "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => {
            return Err(format!("rw={kind}: trim workloads are not supported yet"))
        }
        _ => {
            return Err(format!(
                "unknown I/O pattern '{v}'; expected read, write, randread, randwrite, rw, \
                 readwrite or randrw"
            ))
        }
    };
    if let Some(m) = modifier {
        return Err(format!(
            "the ':{m}' offset modifier ('{v}') is not supported yet; use '{kind}'"
        ));
    }
    Ok(rw)
}

/// A flag: bare (`time_based`) or `0`/`1`.
fn parse_flag(value: Option<&str>) -> Result<bool, String> {
    match value {
        None | Some("1") => Ok(true),
        Some("0") => Ok(false),
        Some(v) => Err(format!(
            "'{v}' is not a flag value; expected 0, 1 or the bare option name"
        )),
    }
}

/// A count that must fit `u32` and be at least 1 (`iodepth`, `numjobs`).
fn parse_count(v: &str) -> Result<u32, String> {
    let n = parse_int(v)?;
    if n == 0 {
        return Err("must be at least 1".into());
    }
    u32::try_from(n).map_err(|_| format!("'{v}' is too large (at most {})", u32::MAX))
}

/// A byte count (`size`, `offset`, `io_size`): like [`parse_int`], with a
/// specific message for fio's percentage form.
fn parse_size(v: &str) -> Result<u64, String> {
    if v.ends_with('%') {
        return Err(format!(
            "percentage values ('{v}') are not supported yet; give a size in bytes"
        ));
    }
    parse_int(v)
}

/// Reject value syntax fio evaluates but ssdlab does not (arithmetic,
/// `$` keywords), and negative numbers.
fn check_unsupported_syntax(v: &str) -> Result<(), String> {
    if v.starts_with('(') {
        return Err(format!(
            "arithmetic expressions ('{v}') are not supported yet"
        ));
    }
    if v.contains('$') {
        return Err(format!(
            "'{v}': fio keyword substitution ($pagesize, $ncpus, $mb_memory) is not supported yet"
        ));
    }
    if v.starts_with('-') {
        return Err(format!(
            "'{v}' is negative; expected a non-negative integer"
        ));
    }
    Ok(())
}

/// The leading decimal digits of `v` as a number, and the rest.
fn split_digits(v: &str) -> Result<(u64, &str), String> {
    let end = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    if end == 0 {
        return Err(format!("'{v}' is not a number"));
    }
    let (digits, rest) = v.split_at(end);
    let n = digits
        .parse::<u64>()
        .map_err(|_| format!("'{v}' is too large"))?;
    Ok((n, rest))
}

/// An integer in fio size syntax, `kb_base=1024`: `4096`, `4096b`, `4k`, `4KB`,
/// `1m`, `10g`, `2t`, `1p` (case-insensitive), or hexadecimal `0x1000`.
fn parse_int(v: &str) -> Result<u64, String> {
    check_unsupported_syntax(v)?;
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!("'{v}' is not a hexadecimal number"));
        }
        return u64::from_str_radix(hex, 16).map_err(|_| format!("'{v}' is too large"));
    }
    let (n, suffix) = split_digits(v)?;
    let lower = suffix.to_ascii_lowercase();
    let pow = match lower.as_str() {
        "" | "b" => 0,
        "k" | "kb" => 1,
        "m" | "mb" => 2,
        "g" | "gb" => 3,
        "t" | "tb" => 4,
        "p" | "pb" => 5,
        "ki" | "kib" | "mi" | "mib" | "gi" | "gib" | "ti" | "tib" | "pi" | "pib" => {
            let letter = &lower[..1];
            return Err(format!(
                "'{v}' is ambiguous: with fio's default kb_base=1024, IEC prefixes such as \
                 'Ki' are powers of 1000 (fio reads '4KiB' as 4000 bytes); write '{n}{letter}' \
                 for powers of 1024, or give the exact byte count"
            ));
        }
        _ if lower.starts_with('.') => {
            return Err(format!(
            "'{v}': fractional values are not supported; use a smaller unit (e.g. 1536m, not 1.5g)"
        ))
        }
        _ if lower.ends_with('%') => return Err(format!("'{v}': a percentage is not valid here")),
        _ => {
            return Err(format!(
                "'{v}' has an unknown unit suffix '{suffix}'; expected none (bytes) or \
                 b, k, m, g, t, p (powers of 1024, optionally followed by 'b')"
            ))
        }
    };
    1024u64
        .checked_pow(pow)
        .and_then(|m| n.checked_mul(m))
        .ok_or_else(|| format!("'{v}' is too large"))
}

/// A duration in fio time syntax: a bare integer is seconds; suffixes
/// `us`/`usec`, `ms`/`msec`, `s`/`sec`, `m`/`min`, `h`/`hour`, `d`/`day`
/// (case-insensitive).
fn parse_time(v: &str) -> Result<Time, String> {
    check_unsupported_syntax(v)?;
    let (n, suffix) = split_digits(v)?;
    let lower = suffix.to_ascii_lowercase();
    const S: u64 = 1_000_000_000_000;
    let ps_per_unit: u64 = match lower.as_str() {
        "" | "s" | "sec" => S,
        "us" | "usec" => 1_000_000,
        "ms" | "msec" => 1_000_000_000,
        "m" | "min" => 60 * S,
        "h" | "hour" => 3_600 * S,
        "d" | "day" => 86_400 * S,
        _ if lower.starts_with('.') => {
            return Err(format!(
                "'{v}': fractional values are not supported; use a smaller unit (e.g. 1500ms, not 1.5s)"
            ))
        }
        _ => {
            return Err(format!(
                "'{v}' has an unknown time unit '{suffix}'; expected none (seconds) or \
                 us, ms, s, m, h, d (also usec, msec, sec, min, hour, day)"
            ))
        }
    };
    n.checked_mul(ps_per_unit)
        .map(Time)
        .ok_or_else(|| format!("'{v}' is too long (at most about 213 days)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    const GIB: u64 = 1024 * MIB;

    fn parse(text: &str) -> Workload {
        match parse_str(text, "t.fio") {
            Ok(w) => w,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    /// Parse a single job `[j]` with the given body.
    fn job(body: &str) -> JobSpec {
        let mut w = parse(&format!("[j]\n{body}\n"));
        assert_eq!(w.jobs.len(), 1);
        w.jobs.remove(0)
    }

    /// Assert that `text` fails at `line` on `option` with a message containing `needle`,
    /// and that the displayed error names the file, the line and the option.
    fn assert_err(text: &str, line: usize, option: Option<&str>, needle: &str) -> WorkloadError {
        let e = match parse_str(text, "jobs/t.fio") {
            Ok(w) => panic!("expected an error containing {needle:?}, got {w:?}"),
            Err(e) => e,
        };
        assert_eq!(e.file, "jobs/t.fio", "{e}");
        assert_eq!(e.line, line, "{e}");
        assert_eq!(e.option.as_deref(), option, "{e}");
        assert!(
            e.message.contains(needle),
            "{e:?} should contain {needle:?}"
        );
        let shown = e.to_string();
        if line > 0 {
            assert!(
                shown.starts_with(&format!("jobs/t.fio:{line}: ")),
                "{shown}"
            );
        } else {
            assert!(shown.starts_with("jobs/t.fio: "), "{shown}");
        }
        if let Some(o) = option {
            assert!(shown.contains(&format!("option '{o}'")), "{shown}");
        }
        e
    }

    /// Error for `key=value` as the second line of a job section.
    fn assert_value_err(option_line: &str, option: &str, needle: &str) {
        assert_err(&format!("[j]\n{option_line}\n"), 2, Some(option), needle);
    }

    fn pattern(random: bool, read_pct: u32) -> RwPattern {
        RwPattern { random, read_pct }
    }

    #[test]
    fn ssd_test_style_file() {
        let w = parse(
            "; Sequential and random, reads and writes, on an NVMe drive
[global]
bs=4k
ioengine=libaio
iodepth=4
size=10g
direct=1
runtime=60
filename=/dev/nvme0n1

[seq-read]
rw=read

[rand-read]
rw=randread

[seq-write]
rw=write

[rand-write]
rw=randwrite
",
        );
        let names: Vec<&str> = w.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["seq-read", "rand-read", "seq-write", "rand-write"]);
        let pats: Vec<RwPattern> = w.jobs.iter().map(|j| j.rw).collect();
        assert_eq!(
            pats,
            [
                pattern(false, 100),
                pattern(true, 100),
                pattern(false, 0),
                pattern(true, 0)
            ]
        );
        for j in &w.jobs {
            assert_eq!(j.bs, 4096);
            assert_eq!(j.iodepth, 4);
            assert_eq!(j.size, Some(10 * GIB));
            assert_eq!(j.runtime, Some(Time::s(60)));
            assert_eq!(j.numjobs, 1);
            assert_eq!(j.offset, 0);
            assert!(!j.time_based);
        }
        let ignored: Vec<&str> = w.ignored.iter().map(|i| i.option.as_str()).collect();
        assert_eq!(ignored, ["ioengine", "direct", "filename"]);
        assert_eq!(w.ignored[0].reason, "the simulator is the I/O engine");
        assert_eq!(w.ignored[1].reason, "no host page cache is modelled");
        assert_eq!(w.ignored[2].reason, "the simulated drive is the target");
    }

    #[test]
    fn stonewall_is_rejected() {
        let text = "[global]
bs=4k
ioengine=libaio
iodepth=4
size=10g
direct=1
runtime=60
filename=/dev/nvme0n1

[seq-read]
rw=read
stonewall

[rand-read]
rw=randread
stonewall
";
        assert_err(
            text,
            12,
            Some("stonewall"),
            "job ordering (stonewall) is not supported yet",
        );
        assert_value_err("wait_for_previous", "wait_for_previous", "stonewall");
        assert_value_err("wait_for=a", "wait_for", "job ordering (wait_for)");
        assert_value_err("new_group", "new_group", "new_group");
    }

    #[test]
    fn mixed_randrw_with_numjobs() {
        let w = parse(
            "[global]
ioengine=io_uring
direct=1
bs=4k
iodepth=32
numjobs=4
time_based
runtime=30s
group_reporting

[oltp-70-30]
rwmixread=70
rw=randrw
",
        );
        let j = &w.jobs[0];
        assert_eq!(j.rw, pattern(true, 70));
        assert_eq!(j.numjobs, 4);
        assert_eq!(j.iodepth, 32);
        assert!(j.time_based);
        assert_eq!(j.runtime, Some(Time::s(30)));
        assert_eq!(w.ignored.len(), 3);
    }

    #[test]
    fn mix_percentages_in_any_order() {
        assert_eq!(job("rw=randrw\nrwmixread=70").rw, pattern(true, 70));
        assert_eq!(job("rwmixread=70\nrw=randrw").rw, pattern(true, 70));
        assert_eq!(job("rwmixwrite=30\nrw=randrw").rw, pattern(true, 70));
        assert_eq!(job("rw=rw\nrwmixwrite=80").rw, pattern(false, 20));
        assert_eq!(job("readwrite=readwrite").rw, pattern(false, 50));
        assert_eq!(job("rw=randrw").rw, pattern(true, 50));
        assert_eq!(job("rwmixread=0\nrw=randrw").rw, pattern(true, 0));
        assert_eq!(job("rwmixread=100\nrw=rw").rw, pattern(false, 100));
        // Consistent pair in one section is fine.
        assert_eq!(
            job("rwmixread=60\nrwmixwrite=40\nrw=randrw").rw,
            pattern(true, 60)
        );
        // The mix does not apply to one-direction patterns.
        assert_eq!(job("rwmixread=70\nrw=randwrite").rw, pattern(true, 0));
        assert_eq!(job("rwmixread=70").rw, pattern(false, 100));
        // fio's default pattern is sequential read.
        assert_eq!(job("bs=8k").rw, pattern(false, 100));
        // A job overrides the mix of [global], whichever option either uses.
        let w = parse("[global]\nrwmixread=70\nrw=randrw\n[a]\n[b]\nrwmixwrite=10\n");
        assert_eq!(w.jobs[0].rw, pattern(true, 70));
        assert_eq!(w.jobs[1].rw, pattern(true, 90));
    }

    #[test]
    fn contradictory_mix_in_one_section() {
        let e = assert_err(
            "[j]\nrw=randrw\nrwmixread=70\nrwmixwrite=40\n",
            4,
            Some("rwmixwrite"),
            "contradicts 'rwmixread' on line 3",
        );
        assert!(e.message.contains("60% reads here, 70% there"), "{e}");
        assert_value_err("rwmixread=101", "rwmixread", "0..=100");
        assert_value_err(
            "rwmixwrite=70%",
            "rwmixwrite",
            "percentage is not valid here",
        );
    }

    #[test]
    fn global_sections_apply_to_jobs_below_them() {
        let w = parse(
            "[global]
bs=4k
iodepth=8
rw=randread

[a]

[global]
bs=128k
rw=write

[b]
[c]
bs=8k
iodepth=1
[b]
",
        );
        let got: Vec<(&str, u64, u32, RwPattern)> = w
            .jobs
            .iter()
            .map(|j| (j.name.as_str(), j.bs, j.iodepth, j.rw))
            .collect();
        assert_eq!(
            got,
            [
                ("a", 4096, 8, pattern(true, 100)),
                ("b", 128 * KIB, 8, pattern(false, 0)),
                ("c", 8 * KIB, 1, pattern(false, 0)),
                // Same section name twice: two separate jobs.
                ("b", 128 * KIB, 8, pattern(false, 0)),
            ]
        );
    }

    #[test]
    fn job_settings_do_not_leak_into_later_jobs() {
        let w = parse("[a]\nbs=64k\nrw=write\ntime_based\nruntime=5\n[b]\n");
        assert_eq!(w.jobs[1].bs, 4096);
        assert_eq!(w.jobs[1].rw, pattern(false, 100));
        assert!(!w.jobs[1].time_based);
        assert_eq!(w.jobs[1].runtime, None);
    }

    #[test]
    fn fio_treats_sections_named_global_prefix_as_global() {
        let w = parse("[global-defaults]\nbs=16k\n[j]\n");
        assert_eq!(w.jobs.len(), 1);
        assert_eq!(w.jobs[0].bs, 16 * KIB);
    }

    #[test]
    fn comments_blank_lines_and_whitespace() {
        let w = parse(
            "\u{feff}# a comment
; another comment
   # indented comment

[global]   ; trailing comment on a header
  bs = 8k        # trailing comment
\tiodepth\t=\t16\t; tab-separated
size=1g;no space before the comment, as fio allows
   ;

[ spaced name ]\r
rw = randwrite\r
time_based # flag with a comment
runtime=10
",
        );
        let j = &w.jobs[0];
        assert_eq!(j.name, "spaced name");
        assert_eq!(j.bs, 8 * KIB);
        assert_eq!(j.iodepth, 16);
        assert_eq!(j.size, Some(GIB));
        assert_eq!(j.rw, pattern(true, 0));
        assert!(j.time_based);
        assert_eq!(j.runtime, Some(Time::s(10)));
    }

    #[test]
    fn every_size_unit() {
        let cases: &[(&str, u64)] = &[
            ("0", 0),
            ("4096", 4096),
            ("4096b", 4096),
            ("4096B", 4096),
            ("4k", 4 * KIB),
            ("4K", 4 * KIB),
            ("4kb", 4 * KIB),
            ("4kB", 4 * KIB),
            ("4KB", 4 * KIB),
            ("4Kb", 4 * KIB),
            ("1m", MIB),
            ("1M", MIB),
            ("1mb", MIB),
            ("1MB", MIB),
            ("1024k", MIB),
            ("10g", 10 * GIB),
            ("10G", 10 * GIB),
            ("10GB", 10 * GIB),
            ("2t", 2 << 40),
            ("2T", 2 << 40),
            ("2tb", 2 << 40),
            ("1p", 1 << 50),
            ("1P", 1 << 50),
            ("1PB", 1 << 50),
            ("0x1000", 4096),
            ("0X1f", 31),
            ("16383p", 16383 << 50),
        ];
        for &(text, bytes) in cases {
            assert_eq!(parse_int(text), Ok(bytes), "{text}");
        }
        // And through a job file, on every size option and alias.
        let j = job("bs=64K\nsize=10G\noffset=1m\nio_size=512m");
        assert_eq!(
            (j.bs, j.size, j.offset, j.io_size),
            (64 * KIB, Some(10 * GIB), MIB, Some(512 * MIB))
        );
        let j = job("blocksize=128k\nfileoffset=0x100000\nio_limit=2g");
        assert_eq!((j.bs, j.offset, j.io_size), (128 * KIB, MIB, Some(2 * GIB)));
    }

    #[test]
    fn every_time_unit() {
        let cases: &[(&str, Time)] = &[
            ("60", Time::s(60)),
            ("500us", Time::us(500)),
            ("500usec", Time::us(500)),
            ("500US", Time::us(500)),
            ("250ms", Time::ms(250)),
            ("250msec", Time::ms(250)),
            ("250MS", Time::ms(250)),
            ("30s", Time::s(30)),
            ("30sec", Time::s(30)),
            ("30S", Time::s(30)),
            ("2m", Time::s(120)),
            ("2min", Time::s(120)),
            ("2M", Time::s(120)),
            ("1h", Time::s(3600)),
            ("1hour", Time::s(3600)),
            ("1H", Time::s(3600)),
            ("1d", Time::s(86_400)),
            ("1day", Time::s(86_400)),
            ("1D", Time::s(86_400)),
            ("0", Time::ZERO),
        ];
        for &(text, t) in cases {
            assert_eq!(parse_time(text), Ok(t), "{text}");
        }
        let j = job("runtime=2m\nramp_time=5");
        assert_eq!(j.runtime, Some(Time::s(120)));
        assert_eq!(j.ramp_time, Time::s(5));
        assert_eq!(job("timeout=1500ms").runtime, Some(Time::ms(1500)));
    }

    #[test]
    fn zero_means_unset_as_in_fio() {
        let j = job("size=0\nio_size=0\nruntime=0");
        assert_eq!((j.size, j.io_size, j.runtime), (None, None, None));
    }

    #[test]
    fn remaining_options() {
        let j = job(
            "rw=randread\nrandseed=42\nnorandommap\nnumber_ios=1000\niodepth=0x20\nnumjobs=2\noffset=1g",
        );
        assert_eq!(j.randseed, Some(42));
        assert!(j.norandommap);
        assert_eq!(j.number_ios, Some(1000));
        assert_eq!(j.iodepth, 32);
        assert_eq!(j.numjobs, 2);
        assert_eq!(j.offset, GIB);
        assert_eq!(j.size, None);
        assert_eq!(
            job("randseed=18446744073709551615").randseed,
            Some(u64::MAX)
        );
        // Flags take 0/1 too; a job can turn off a global flag.
        let w = parse("[global]\nnorandommap\ntime_based=1\nruntime=1\n[a]\nnorandommap=0\n[b]\ntime_based=0\n");
        assert!(!w.jobs[0].norandommap && w.jobs[0].time_based);
        assert!(w.jobs[1].norandommap && !w.jobs[1].time_based);
    }

    #[test]
    fn time_based_without_runtime_is_reported_and_dropped() {
        let w = parse("[a]\ntime_based\nsize=1g\n[b]\ntime_based\n");
        assert!(w.jobs.iter().all(|j| !j.time_based));
        assert_eq!(w.ignored.len(), 1);
        assert_eq!(w.ignored[0].option, "time_based");
        assert!(w.ignored[0].reason.contains("no runtime"));
    }

    #[test]
    fn ignored_options_listed_once() {
        let w = parse(
            "[global]
ioengine=libaio
direct=1
[a]
ioengine=io_uring
direct=0
buffered=1
filename=/dev/nvme0n1
directory=/mnt
filename_format=f.$jobnum
group_reporting
name=first
description=warm-up pass
thread
invalidate=1
iodepth_batch=8
iodepth_batch_submit=8
iodepth_batch_complete_min=1
iodepth_batch_complete=1
gtod_reduce=1
clocksource=cpu
per_job_logs=0
write_bw_log=a
write_lat_log=a
write_iops_log=a
log_avg_msec=1000
output-format=json
[b]
ioengine=sync
filename=/dev/nvme1n1
group_reporting
",
        );
        let names: Vec<&str> = w.ignored.iter().map(|i| i.option.as_str()).collect();
        assert_eq!(
            names,
            [
                "ioengine",
                "direct",
                "buffered",
                "filename",
                "directory",
                "filename_format",
                "group_reporting",
                "name",
                "description",
                "thread",
                "invalidate",
                "iodepth_batch",
                "iodepth_batch_submit",
                "iodepth_batch_complete_min",
                "iodepth_batch_complete",
                "gtod_reduce",
                "clocksource",
                "per_job_logs",
                "write_bw_log",
                "write_lat_log",
                "write_iops_log",
                "log_avg_msec",
                "output-format",
            ]
        );
        assert!(w.ignored.iter().all(|i| !i.reason.is_empty()));
        assert_eq!(w.jobs[0].name, "a", "name= does not rename the job");
        assert_eq!(w.jobs.len(), 2);
    }

    #[test]
    fn unsupported_option_is_an_error() {
        let e = assert_err(
            "[global]\nbs=4k\n\n[j]\nrw=randread\nbssplit=4k/50:64k/50\n",
            6,
            Some("bssplit"),
            "not supported by ssdlab yet",
        );
        assert!(
            e.message.contains("rwmixread"),
            "lists what is supported: {e}"
        );
        assert_value_err("rate_iops=1000", "rate_iops", "not supported by ssdlab yet");
        assert_value_err("kb_base=1000", "kb_base", "not supported by ssdlab yet");
        // Option names are case-sensitive, as in fio.
        assert_value_err("BS=4k", "BS", "not supported by ssdlab yet");
    }

    #[test]
    fn structural_errors() {
        assert_err("bs=4k\n[j]\n", 1, Some("bs"), "before any [section]");
        assert_err(
            "\n; c\ntime_based\n[j]\n",
            3,
            Some("time_based"),
            "before any [section]",
        );
        assert_err("[j]\n[job\n", 2, None, "malformed section header");
        assert_err("[j]\n[]\n", 2, None, "empty section name");
        assert_err("[j]\n= 4k\n", 2, None, "no option name");
        assert_err("[global]\nbs=4k\n", 0, None, "no jobs");
        assert_err("", 0, None, "no jobs");
        assert_err("; only comments\n", 0, None, "no jobs");
        assert_err(
            "[j]\ninclude common.fio\n",
            2,
            None,
            "include is not supported yet",
        );
        assert_err(
            "include common.fio\n[j]\n",
            1,
            None,
            "include is not supported yet",
        );
        assert_err(
            "[j]\nfilename=${DEV}\n",
            2,
            Some("filename"),
            "environment variable expansion is not supported yet",
        );
        assert_err(
            "[job-${N}]\n",
            1,
            None,
            "environment variable expansion is not supported yet",
        );
    }

    #[test]
    fn value_errors_name_file_line_and_option() {
        // Missing or empty values.
        assert_value_err("bs", "bs", "needs a value");
        assert_value_err("rw=", "rw", "empty value");
        assert_value_err("runtime =  ", "runtime", "empty value");
        // Patterns.
        assert_value_err("rw=randomread", "rw", "unknown I/O pattern 'randomread'");
        assert_value_err("readwrite=Read", "readwrite", "unknown I/O pattern");
        for p in ["trim", "randtrim", "trimwrite", "randtrimwrite"] {
            assert_value_err(
                &format!("rw={p}"),
                "rw",
                "trim workloads are not supported yet",
            );
        }
        assert_value_err("rw=randread:8", "rw", "offset modifier");
        // Sizes.
        assert_value_err("bs=4x", "bs", "unknown unit suffix 'x'");
        assert_value_err("bs=0", "bs", "greater than 0");
        assert_value_err(
            "bs=4k,64k",
            "bs",
            "per-direction block sizes are not supported yet",
        );
        assert_value_err("blocksize=4k,", "blocksize", "per-direction");
        assert_value_err("bs=4KiB", "bs", "write '4k' for powers of 1024");
        assert_value_err("size=10GiB", "size", "fio reads '4KiB' as 4000 bytes");
        assert_value_err("size=-1", "size", "negative");
        assert_value_err("size=-4k", "size", "negative");
        assert_value_err(
            "size=50%",
            "size",
            "percentage values ('50%') are not supported yet",
        );
        assert_value_err("offset=10%", "offset", "not supported yet");
        assert_value_err("io_size=10%", "io_size", "not supported yet");
        assert_value_err("size=1.5g", "size", "fractional values are not supported");
        assert_value_err("size=big", "size", "not a number");
        assert_value_err("size=4 k", "size", "unknown unit suffix");
        assert_value_err("size=16384p", "size", "too large");
        assert_value_err("size=99999999999999999999", "size", "too large");
        assert_value_err("offset=0xZZ", "offset", "not a hexadecimal number");
        assert_value_err("size=(1024*1024)", "size", "arithmetic expressions");
        assert_value_err("bs=$pagesize", "bs", "keyword substitution");
        assert_value_err("size=10z", "size", "unknown unit suffix 'z'");
        // Counts.
        assert_value_err("iodepth=0", "iodepth", "at least 1");
        assert_value_err("numjobs=0", "numjobs", "at least 1");
        assert_value_err("number_ios=0", "number_ios", "at least 1");
        assert_value_err("iodepth=4294967296", "iodepth", "too large");
        assert_value_err("iodepth=-1", "iodepth", "negative");
        assert_value_err("randseed=x", "randseed", "not a number");
        // Times.
        assert_value_err("runtime=10 minutes", "runtime", "unknown time unit");
        assert_value_err("runtime=10ns", "runtime", "unknown time unit 'ns'");
        assert_value_err("ramp_time=1.5s", "ramp_time", "fractional");
        assert_value_err("runtime=-5", "runtime", "negative");
        assert_value_err("runtime=300d", "runtime", "too long");
        // Flags.
        assert_value_err("time_based=2", "time_based", "expected 0, 1");
        assert_value_err("norandommap=yes", "norandommap", "expected 0, 1");
    }

    #[test]
    fn errors_in_global_sections_are_located() {
        assert_err(
            "; header\n[global]\nbs=4k\niodepth=zero\n[j]\n",
            4,
            Some("iodepth"),
            "'zero' is not a number",
        );
    }

    #[test]
    fn parse_file_reads_and_reports() {
        let dir = std::env::temp_dir().join(format!("ssdlab-fio-test-{}", std::process::id()));
        assert!(std::fs::create_dir_all(&dir).is_ok());
        let path = dir.join("randread.fio");
        assert!(std::fs::write(&path, "[randread]\nrw=randread\nbs=4k\niodepth=32\n").is_ok());
        let w = match parse_file(&path) {
            Ok(w) => w,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(w.jobs[0].name, "randread");
        assert_eq!(w.jobs[0].iodepth, 32);

        assert!(std::fs::write(&path, "[j]\nbs=4x\n").is_ok());
        let e = parse_file(&path).err();
        let shown = path.display().to_string();
        assert_eq!(
            e.as_ref().map(|e| (e.file.as_str(), e.line)),
            Some((shown.as_str(), 2))
        );

        let missing = dir.join("missing.fio");
        let e = parse_file(&missing).err();
        assert_eq!(e.as_ref().map(|e| e.line), Some(0));
        let e = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(e.starts_with(&missing.display().to_string()), "{e}");
        assert!(e.contains("cannot read job file"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
