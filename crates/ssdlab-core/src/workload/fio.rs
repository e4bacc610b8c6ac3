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
//! * Per-direction values (`bs`, `bsrange`, `bssplit`, `blockalign`,
//!   `percentage_random`, `random_distribution`) follow fio: `r,w[,t]`
//!   gives reads, writes (and trims); a value not followed by a comma also
//!   applies to the directions after it (`bs=8k,32k`: 8k reads, 32k
//!   writes); an empty field keeps the direction's current value
//!   (`bs=,8k`). The trim field is checked but unused (no trim workloads).
//! * Block sizes: `bssplit` takes precedence over `bsrange`, which takes
//!   precedence over `bs`, whatever their order (as in fio). `bssplit`
//!   entries without a percentage share the remainder equally.
//!
//! Options without meaning in a simulator (`ioengine`, `direct`,
//! `filename`, ...) are accepted and listed once each in
//! [`Workload::ignored`]; every other option outside the supported subset is
//! an error naming the file, the line and the option. So are fio features
//! not modelled yet: trim patterns, percentage sizes,
//! `stonewall`/`wait_for`/`new_group`, `include`, `${VAR}` expansion and
//! arithmetic expressions.

use super::{
    BlockSize, Distribution, IgnoredOption, JobSpec, RwPattern, Sequencer, Workload, WorkloadError,
};
use crate::units::Time;
use std::path::Path;

/// Options that are parsed and applied to [`JobSpec`] (aliases included).
const SUPPORTED: &str = "rw/readwrite (with ':N' modifier), rw_sequencer, rwmixread, rwmixwrite, \
     bs/blocksize, bsrange/blocksize_range, bssplit, blockalign/ba, iodepth, numjobs, size, \
     offset/fileoffset, io_size/io_limit, number_ios, runtime/timeout, time_based, ramp_time, \
     randseed, randrepeat, norandommap, percentage_random, percentage_sequential, \
     random_distribution, ssdlab_sq_priority, ssdlab_pattern, ssdlab_hot_space, ssdlab_hot_access, \
     ssdlab_lru_reuse, ssdlab_lru_mean";

/// Supported options that take a value.
const VALUED: &[&str] = &[
    "ssdlab_sq_priority",
    "ssdlab_pattern",
    "ssdlab_hot_space",
    "ssdlab_hot_access",
    "ssdlab_lru_reuse",
    "ssdlab_lru_mean",
    "rw",
    "readwrite",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "blocksize",
    "bsrange",
    "blocksize_range",
    "bssplit",
    "blockalign",
    "ba",
    "rw_sequencer",
    "percentage_random",
    "percentage_sequential",
    "random_distribution",
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
    /// The `:N` suffix of `rw=`.
    rw_mod: RwModifier,
    /// `bs=` per direction.
    bs: [u64; 2],
    /// `bsrange=` per direction.
    bsrange: [Option<(u64, u64)>; 2],
    /// `bssplit=` per direction.
    bssplit: [Option<Vec<(u64, f64)>>; 2],
}

/// The `:N` suffix of `rw=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RwModifier {
    None,
    /// Sequential patterns: bytes skipped after each I/O.
    Skip(u64),
    /// Random patterns: I/Os per new random offset.
    Repeat(u32),
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            spec: JobSpec::default(),
            rw: RwKind::Read,
            rwmix_read: None,
            rw_mod: RwModifier::None,
            bs: [4096, 4096],
            bsrange: [None, None],
            bssplit: [None, None],
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
        match s.rw_mod {
            RwModifier::None => {}
            RwModifier::Skip(b) => spec.seq_skip = b,
            RwModifier::Repeat(n) => spec.offset_repeat = n,
        }
        let dir = |d: usize| match (&s.bssplit[d], s.bsrange[d]) {
            (Some(v), _) => BlockSize::Split(v.clone()),
            (None, Some((min, max))) => BlockSize::Range { min, max },
            (None, None) => BlockSize::Fixed(s.bs[d]),
        };
        let sizes = [dir(0), dir(1)];
        match &sizes {
            [BlockSize::Fixed(r), BlockSize::Fixed(w)] if r == w => {
                spec.bs = *r;
                spec.block_sizes = None;
            }
            _ => {
                spec.bs = if read_pct < 100 {
                    sizes[1].max()
                } else {
                    sizes[0].max()
                };
                spec.block_sizes = Some(sizes);
            }
        }
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
        "ssdlab_pattern" => {
            use super::LocalityPattern as P;
            let p = match value.unwrap_or("") {
                "uniform" => P::Uniform,
                "hotcold" => P::HotCold,
                "lru" => P::Lru,
                "hotcold_lru" => P::HotColdLru,
                "sequential" => P::Sequential,
                o => return Err(format!("'{o}' is not a locality pattern (expected uniform, hotcold, lru, hotcold_lru or sequential)")),
            };
            s.spec.locality.get_or_insert_with(Default::default).pattern = Some(p);
        }
        "ssdlab_hot_space" | "ssdlab_hot_access" | "ssdlab_lru_reuse" => {
            let v = value.unwrap_or("");
            let f = v
                .strip_suffix('%')
                .and_then(|x| x.trim().parse::<f64>().ok())
                .filter(|x| (0.0..=100.0).contains(x))
                .ok_or_else(|| {
                    format!("'{v}' must be a percentage from 0% to 100% (e.g. \"20%\")")
                })?
                / 100.0;
            let l = s.spec.locality.get_or_insert_with(Default::default);
            match key {
                "ssdlab_hot_space" => l.hot_space = Some(f),
                "ssdlab_hot_access" => l.hot_access = Some(f),
                _ => l.lru_reuse = Some(f),
            }
        }
        "ssdlab_lru_mean" => {
            let v = value.unwrap_or("");
            let m = v
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|m| *m >= 1.0 && m.is_finite())
                .ok_or_else(|| {
                    format!("'{v}' must be a mean stack distance of at least 1 (blocks)")
                })?;
            s.spec
                .locality
                .get_or_insert_with(Default::default)
                .lru_mean = Some(m);
        }
        "ssdlab_sq_priority" => {
            s.spec.sq_priority = match value.unwrap_or("") {
                "urgent" => super::SqPriority::Urgent,
                "high" => super::SqPriority::High,
                "medium" => super::SqPriority::Medium,
                "low" => super::SqPriority::Low,
                o => {
                    return Err(format!(
                    "'{o}' is not an NVMe queue priority (expected urgent, high, medium or low)"
                ))
                }
            }
        }
        "randrepeat" => s.spec.randrepeat = parse_flag(value)?,
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
        "rw" | "readwrite" => {
            let (rw, modifier) = parse_rw(v)?;
            section.settings.rw = rw;
            section.settings.rw_mod = parse_rw_modifier(rw, modifier, v)?;
        }
        "rw_sequencer" => {
            spec.rw_sequencer = match v {
                "sequential" => Sequencer::Sequential,
                "identical" => Sequencer::Identical,
                _ => {
                    return Err(format!(
                        "unknown sequencer '{v}'; expected sequential or identical"
                    ))
                }
            }
        }
        "bsrange" | "blocksize_range" => {
            set_dirs(
                &mut section.settings.bsrange,
                per_dir(v, |p| parse_bsrange(p).map(Some))?,
            );
        }
        "bssplit" => {
            set_dirs(
                &mut section.settings.bssplit,
                per_dir(v, |p| parse_bssplit(p).map(Some))?,
            );
        }
        "blockalign" | "ba" => {
            set_dirs(
                &mut spec.blockalign,
                per_dir(v, |p| {
                    let b = parse_int(p)?;
                    if b == 0 {
                        return Err("the alignment must be greater than 0".into());
                    }
                    Ok(Some(b))
                })?,
            );
        }
        "percentage_random" | "percentage_sequential" => {
            let seq = key == "percentage_sequential";
            set_dirs(
                &mut spec.percentage_random,
                per_dir(v, |p| {
                    let n = parse_int(p)?;
                    if n > 100 {
                        return Err(format!(
                            "'{p}' is out of range; expected a percentage 0..=100"
                        ));
                    }
                    let n = n as u32;
                    Ok(if seq { 100 - n } else { n })
                })?,
            );
        }
        "random_distribution" => {
            set_dirs(
                &mut spec.random_distribution,
                per_dir(v, parse_distribution)?,
            );
        }
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
            set_dirs(
                &mut section.settings.bs,
                per_dir(v, |p| {
                    let bs = parse_int(p)?;
                    if bs == 0 {
                        return Err("block size must be greater than 0".into());
                    }
                    Ok(bs)
                })?,
            );
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

/// Store the directions a per-direction value sets.
fn set_dirs<T>(dst: &mut [T; 2], src: [Option<T>; 2]) {
    for (d, s) in dst.iter_mut().zip(src) {
        if let Some(s) = s {
            *d = s;
        }
    }
}

/// Split a per-direction value `read[,write[,trim]]` as fio does and parse
/// each field: a field not followed by a comma also applies to the
/// directions after it; an empty field leaves its direction unset (`None`).
/// The trim field is parsed (to report errors) and dropped.
fn per_dir<T: Clone>(
    v: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<[Option<T>; 2], String> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!(
            "'{v}' has {} comma-separated values; expected at most 3 (reads, writes, trims)",
            parts.len()
        ));
    }
    let field = |i: usize| -> Result<Option<T>, String> {
        let p = parts[i.min(parts.len() - 1)];
        if p.is_empty() {
            return Ok(None);
        }
        let which = ["reads", "writes", "trims"][i];
        parse(p).map(Some).map_err(|e| {
            if parts.len() > 1 {
                format!("{e} (value for {which})")
            } else {
                e
            }
        })
    };
    let read = field(0)?;
    let write = field(1)?;
    field(2)?;
    Ok([read, write])
}

/// A `bsrange` field: `min-max` (or `min:max`) sizes.
fn parse_bsrange(v: &str) -> Result<(u64, u64), String> {
    let Some((a, b)) = v.split_once(['-', ':']) else {
        return Err(format!(
            "'{v}' is not a range; expected min-max, e.g. 4k-64k"
        ));
    };
    let (min, max) = (parse_int(a.trim())?, parse_int(b.trim())?);
    if min == 0 {
        return Err(format!(
            "'{v}': the smallest block size must be greater than 0"
        ));
    }
    if max < min {
        return Err(format!(
            "'{v}': the largest block size is below the smallest"
        ));
    }
    Ok((min, max))
}

/// A percentage such as `50` or `12.5`, 0..=100.
fn parse_pct(v: &str) -> Result<f64, String> {
    let p = parse_float(v)?;
    if p > 100.0 {
        return Err(format!(
            "'{v}' is out of range; expected a percentage 0..=100"
        ));
    }
    Ok(p)
}

/// A non-negative decimal number such as `1.2`, `.5` or `3`.
fn parse_float(v: &str) -> Result<f64, String> {
    if v.starts_with('-') {
        return Err(format!("'{v}' is negative; expected a non-negative number"));
    }
    let ok = !v.is_empty()
        && v.chars().all(|c| c.is_ascii_digit() || c == '.')
        && v.chars().filter(|&c| c == '.').count() <= 1
        && v.chars().any(|c| c.is_ascii_digit());
    match v.parse::<f64>() {
        Ok(x) if ok => Ok(x),
        _ => Err(format!("'{v}' is not a number")),
    }
}

/// Check that a list of percentages adds up to 100.
fn check_sum_100(what: &str, sum: f64, v: &str) -> Result<(), String> {
    if (sum - 100.0).abs() > 1e-6 {
        return Err(format!(
            "'{v}': the {what} add up to {sum}%; they must add up to 100%"
        ));
    }
    Ok(())
}

/// A `bssplit` field: `size/percent:size/percent...`; entries without a
/// percentage (`4k/` or `4k`) share what the others leave of 100% equally.
fn parse_bssplit(v: &str) -> Result<Vec<(u64, f64)>, String> {
    let mut entries = Vec::new();
    for e in v.split(':') {
        let (size, pct) = match e.split_once('/') {
            Some((s, p)) => (s.trim(), Some(p.trim()).filter(|p| !p.is_empty())),
            None => (e.trim(), None),
        };
        if size.is_empty() {
            return Err(format!("'{v}': empty entry; expected size/percent entries separated by ':', e.g. 4k/50:64k/50"));
        }
        let bytes = parse_int(size)?;
        if bytes == 0 {
            return Err(format!("'{v}': block size must be greater than 0"));
        }
        entries.push((bytes, pct.map(parse_pct).transpose()?));
    }
    if entries.len() > 64 {
        return Err(format!(
            "'{v}' has {} entries; fio allows at most 64",
            entries.len()
        ));
    }
    let given: f64 = entries.iter().filter_map(|e| e.1).sum();
    let missing = entries.iter().filter(|e| e.1.is_none()).count();
    if given > 100.0 + 1e-6 {
        return Err(format!(
            "'{v}': the percentages add up to {given}%, more than 100%"
        ));
    }
    let share = if missing > 0 {
        let left = 100.0 - given;
        if left <= 1e-6 {
            return Err(format!(
                "'{v}': the given percentages leave nothing for the entries without one"
            ));
        }
        left / missing as f64
    } else {
        check_sum_100("percentages", given, v)?;
        0.0
    };
    Ok(entries
        .into_iter()
        .map(|(b, p)| (b, p.unwrap_or(share)))
        .collect())
}

/// A `center` argument (0.0..=1.0) of zipf, pareto and normal.
fn parse_center(v: &str) -> Result<f64, String> {
    let c = parse_float(v)?;
    if c > 1.0 {
        return Err(format!("center '{v}' is out of range; expected 0.0..=1.0"));
    }
    Ok(c)
}

/// A `random_distribution` field.
fn parse_distribution(v: &str) -> Result<Distribution, String> {
    let (name, rest) = match v.split_once(':') {
        Some((n, r)) => (n.trim(), Some(r.trim())),
        None => (v, None),
    };
    // zipf, pareto, normal: value[:center].
    let args = |what: &str| -> Result<(f64, Option<f64>), String> {
        let Some(rest) = rest.filter(|r| !r.is_empty()) else {
            return Err(format!(
                "{name} needs a {what}: '{name}:<{what}>[:<center>]'"
            ));
        };
        let mut it = rest.split(':');
        let x = parse_float(it.next().unwrap_or("").trim())?;
        let center = it.next().map(|c| parse_center(c.trim())).transpose()?;
        if it.next().is_some() {
            return Err(format!(
                "'{v}' has too many values; expected '{name}:<{what}>[:<center>]'"
            ));
        }
        Ok((x, center))
    };
    Ok(match name {
        "random" => {
            if rest.is_some() {
                return Err(format!(
                    "'{v}': the uniform distribution 'random' takes no value"
                ));
            }
            Distribution::Uniform
        }
        "zipf" => {
            let (theta, center) = args("theta")?;
            if theta <= 0.0 || theta == 1.0 {
                return Err(format!(
                    "'{v}': zipf theta must be greater than 0 and different from 1.0 (as in fio)"
                ));
            }
            Distribution::Zipf { theta, center }
        }
        "pareto" => {
            let (h, center) = args("power")?;
            if h <= 0.0 || h >= 1.0 {
                return Err(format!(
                    "'{v}': the pareto power must be between 0 and 1 (exclusive)"
                ));
            }
            Distribution::Pareto { h, center }
        }
        "normal" => {
            let (dev, center) = args("deviation")?;
            if dev <= 0.0 || dev > 100.0 {
                return Err(format!("'{v}': the normal deviation must be greater than 0 and at most 100 (percent of the region)"));
            }
            Distribution::Normal { dev, center }
        }
        "zoned" | "zoned_abs" => {
            let Some(rest) = rest.filter(|r| !r.is_empty()) else {
                return Err(format!(
                    "{name} needs zones: '{name}:<access%>/<{}>:...'",
                    if name == "zoned" { "range%" } else { "size" }
                ));
            };
            let mut zones = Vec::new();
            for z in rest.split(':') {
                let Some((a, r)) = z.split_once('/') else {
                    return Err(format!(
                        "zone '{z}' of '{v}': expected <access%>/<{}>",
                        if name == "zoned" { "range%" } else { "size" }
                    ));
                };
                zones.push((parse_pct(a.trim())?, r.trim()));
            }
            if zones.len() > 256 {
                return Err(format!(
                    "'{v}' has {} zones; fio allows at most 256",
                    zones.len()
                ));
            }
            check_sum_100("access percentages", zones.iter().map(|z| z.0).sum(), v)?;
            if name == "zoned" {
                let zones: Vec<(f64, f64)> = zones
                    .into_iter()
                    .map(|(a, r)| Ok((a, parse_pct(r)?)))
                    .collect::<Result<_, String>>()?;
                check_sum_100("range percentages", zones.iter().map(|z| z.1).sum(), v)?;
                if let Some(z) = zones.iter().find(|z| z.0 > 0.0 && z.1 == 0.0) {
                    return Err(format!(
                        "'{v}': a zone of 0% of the range cannot take {}% of the accesses",
                        z.0
                    ));
                }
                Distribution::Zoned(zones)
            } else {
                let zones: Vec<(f64, u64)> = zones
                    .into_iter()
                    .map(|(a, r)| Ok((a, parse_int(r)?)))
                    .collect::<Result<_, String>>()?;
                if let Some(z) = zones.iter().find(|z| z.0 > 0.0 && z.1 == 0) {
                    return Err(format!(
                        "'{v}': a zone of 0 bytes cannot take {}% of the accesses",
                        z.0
                    ));
                }
                Distribution::ZonedAbs(zones)
            }
        }
        _ => {
            return Err(format!(
                "unknown distribution '{name}'; expected random, zipf:θ, pareto:h, normal:dev, \
                 zoned:... or zoned_abs:..."
            ))
        }
    })
}

/// The `:N` suffix of `rw=` (`v` is the whole value): for random patterns a
/// count of I/Os per new random offset, for sequential ones a size to skip
/// after each I/O.
fn parse_rw_modifier(rw: RwKind, modifier: Option<&str>, v: &str) -> Result<RwModifier, String> {
    let Some(m) = modifier else {
        return Ok(RwModifier::None);
    };
    if matches!(rw, RwKind::RandRead | RwKind::RandWrite | RwKind::RandMixed) {
        let n = parse_int(m).map_err(|e| {
            format!(
                "the ':{m}' modifier of a random pattern is a count of I/Os per random offset: {e}"
            )
        })?;
        if n == 0 {
            return Err(format!("'{v}': the I/O count after ':' must be at least 1"));
        }
        let n =
            u32::try_from(n).map_err(|_| format!("'{v}': the I/O count after ':' is too large"))?;
        Ok(RwModifier::Repeat(n))
    } else {
        let skip = parse_int(m).map_err(|e| {
            format!(
                "the ':{m}' modifier of a sequential pattern is a size to skip after each I/O: {e}"
            )
        })?;
        Ok(RwModifier::Skip(skip))
    }
}

/// `rw=` values, with the `:N` modifier if any.
fn parse_rw(v: &str) -> Result<(RwKind, Option<&str>), String> {
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
    if modifier.is_some_and(|m| m.trim().is_empty()) {
        return Err(format!(
            "'{v}': nothing after ':'; expected e.g. '{kind}:8'"
        ));
    }
    Ok((rw, modifier.map(str::trim)))
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
mod sq_priority_tests {
    use super::*;

    #[test]
    fn sq_priority_parses_and_rejects_garbage() {
        let w = parse_str("[a]\nssdlab_sq_priority=urgent\n[b]\n", "p.fio").unwrap();
        assert_eq!(w.jobs[0].sq_priority, crate::workload::SqPriority::Urgent);
        assert_eq!(w.jobs[1].sq_priority, crate::workload::SqPriority::Medium);
        let e = parse_str("[a]\nssdlab_sq_priority=vip\n", "p.fio").unwrap_err();
        assert_eq!(
            (e.line, e.option.as_deref()),
            (2, Some("ssdlab_sq_priority")),
            "{e}"
        );
    }

    #[test]
    fn locality_pattern_options() {
        let w = parse_str("[a]\nrw=read\nssdlab_pattern=hotcold_lru\nssdlab_hot_space=10%\nssdlab_hot_access=90%\nssdlab_lru_reuse=60%\nssdlab_lru_mean=250\n", "p.fio").unwrap();
        let l = w.jobs[0].locality.unwrap();
        assert_eq!(l.hot(), Some((0.1, 0.9)));
        assert_eq!(l.lru(), Some((0.6, 250.0)));
        let w = parse_str("[a]\nrw=randread\nssdlab_pattern=sequential\n", "p.fio").unwrap();
        assert!(w.jobs[0].locality.unwrap().sequential());
        // Parameters the pattern does not use are reported, not ignored.
        let w = parse_str(
            "[a]\nrw=randread\nssdlab_lru_reuse=70%\nssdlab_pattern=uniform\n",
            "p.fio",
        )
        .unwrap();
        assert_eq!(
            w.jobs[0].locality.unwrap().unused_parameter(),
            Some("ssdlab_lru_reuse")
        );
        for (bad, opt) in [
            ("ssdlab_pattern=zipfy", "ssdlab_pattern"),
            ("ssdlab_hot_space=120%", "ssdlab_hot_space"),
            ("ssdlab_lru_mean=0", "ssdlab_lru_mean"),
            ("ssdlab_lru_reuse=0.5", "ssdlab_lru_reuse"),
        ] {
            let e = parse_str(&format!("[a]\n{bad}\n"), "p.fio").unwrap_err();
            assert_eq!((e.line, e.option.as_deref()), (2, Some(opt)), "{e}");
        }
    }
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
            "[global]\nbs=4k\n\n[j]\nrw=randread\nrandom_generator=lfsr\n",
            6,
            Some("random_generator"),
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
        assert_value_err("rw=randread:0", "rw", "at least 1");
        assert_value_err("rw=randread:x", "rw", "count of I/Os");
        assert_value_err("rw=write:4x", "rw", "size to skip");
        assert_value_err("rw=write:", "rw", "nothing after ':'");
        // Sizes.
        assert_value_err("bs=4x", "bs", "unknown unit suffix 'x'");
        assert_value_err("bs=0", "bs", "greater than 0");
        assert_value_err("bs=4k,0", "bs", "greater than 0 (value for writes)");
        assert_value_err("bs=4k,8k,4k,4k", "bs", "at most 3");
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
    fn per_direction_block_sizes() {
        let j = job("bs=4k,64k\nrw=randrw");
        assert_eq!(
            j.block_sizes,
            Some([BlockSize::Fixed(4 * KIB), BlockSize::Fixed(64 * KIB)])
        );
        // `bs` is the largest write size (what the drive checks against its buffer).
        assert_eq!(j.bs, 64 * KIB);
        // Read-only job: the largest read size.
        assert_eq!(job("bs=4k,64k").bs, 4 * KIB);
        // One value, or equal values: no per-direction sizes.
        let j = job("bs=8k");
        assert_eq!((j.bs, j.block_sizes.clone()), (8 * KIB, None));
        assert_eq!(job("bs=8k,8k,8k").block_sizes, None);
        // A trailing comma: writes keep their current value (the default 4k here).
        let j = job("blocksize=16k,\nrw=write");
        assert_eq!(
            j.block_sizes,
            Some([BlockSize::Fixed(16 * KIB), BlockSize::Fixed(4 * KIB)])
        );
        // An empty first field keeps the read size, here from [global].
        let w = parse("[global]\nbs=32k\n[j]\nbs=,8k\nrw=rw\n");
        assert_eq!(
            w.jobs[0].block_sizes,
            Some([BlockSize::Fixed(32 * KIB), BlockSize::Fixed(8 * KIB)])
        );
        // The trim field is validated but unused.
        assert_eq!(
            job("bs=4k,8k,16k").block_sizes.map(|b| b[1].max()),
            Some(8 * KIB)
        );
        assert_value_err("bs=4k,8k,zz", "bs", "(value for trims)");
    }

    #[test]
    fn bsrange_and_bssplit() {
        let j = job("bsrange=4k-64k\nrw=randwrite");
        let r = BlockSize::Range {
            min: 4 * KIB,
            max: 64 * KIB,
        };
        assert_eq!(j.block_sizes, Some([r.clone(), r]));
        let j = job("blocksize_range=4k:8k,16k-1m\nrw=randrw");
        assert_eq!(
            j.block_sizes,
            Some([
                BlockSize::Range {
                    min: 4 * KIB,
                    max: 8 * KIB
                },
                BlockSize::Range {
                    min: 16 * KIB,
                    max: MIB
                }
            ])
        );
        assert_eq!(j.bs, MIB);
        let j = job("bssplit=4k/50:64k/50");
        let s = BlockSize::Split(vec![(4 * KIB, 50.0), (64 * KIB, 50.0)]);
        assert_eq!(j.block_sizes, Some([s.clone(), s]));
        // fio's example: blank percentages share the remainder equally.
        let j = job("bssplit=4k/50:1k/:32k/");
        let s = BlockSize::Split(vec![(4 * KIB, 50.0), (KIB, 25.0), (32 * KIB, 25.0)]);
        assert_eq!(j.block_sizes.map(|b| b[0].clone()), Some(s));
        let j = job("bssplit=2k/50:4k/50,4k/90:8k/10\nrw=rw");
        assert_eq!(
            j.block_sizes,
            Some([
                BlockSize::Split(vec![(2 * KIB, 50.0), (4 * KIB, 50.0)]),
                BlockSize::Split(vec![(4 * KIB, 90.0), (8 * KIB, 10.0)])
            ])
        );
        // Precedence whatever the order: bssplit > bsrange > bs.
        let j = job("bssplit=8k/100\nbsrange=4k-16k\nbs=32k");
        assert_eq!(
            j.block_sizes.map(|b| b[0].clone()),
            Some(BlockSize::Split(vec![(8 * KIB, 100.0)]))
        );
        let j = job("bs=32k\nbsrange=4k-16k,");
        assert_eq!(
            j.block_sizes,
            Some([
                BlockSize::Range {
                    min: 4 * KIB,
                    max: 16 * KIB
                },
                BlockSize::Fixed(32 * KIB)
            ])
        );
        assert_value_err("bsrange=4k", "bsrange", "not a range");
        assert_value_err("bsrange=64k-4k", "bsrange", "below the smallest");
        assert_value_err("bsrange=0-4k", "bsrange", "greater than 0");
        assert_value_err("bssplit=4k/60:8k/50", "bssplit", "more than 100%");
        assert_value_err("bssplit=4k/60:8k/30", "bssplit", "add up to 90%");
        assert_value_err("bssplit=4k/100:8k/", "bssplit", "leave nothing");
        assert_value_err("bssplit=4k/50::8k/50", "bssplit", "empty entry");
        assert_value_err("bssplit=4k/x", "bssplit", "'x' is not a number");
        assert_value_err(
            "bssplit=4k/50:8k/50,4k/150",
            "bssplit",
            "(value for writes)",
        );
    }

    #[test]
    fn blockalign_modifiers_and_sequencer() {
        let j = job("blockalign=8k");
        assert_eq!(j.blockalign, [Some(8 * KIB), Some(8 * KIB)]);
        assert_eq!(job("ba=,16k").blockalign, [None, Some(16 * KIB)]);
        assert_value_err("ba=0", "ba", "greater than 0");
        let j = job("rw=write:4k");
        assert_eq!(
            (j.rw, j.seq_skip, j.offset_repeat),
            (pattern(false, 0), 4 * KIB, 1)
        );
        let j = job("rw=randread:8\nrw_sequencer=identical");
        assert_eq!(
            (j.rw, j.seq_skip, j.offset_repeat),
            (pattern(true, 100), 0, 8)
        );
        assert_eq!(j.rw_sequencer, Sequencer::Identical);
        assert_eq!(job("rw=randread").rw_sequencer, Sequencer::Sequential);
        // A later rw= without a modifier drops it.
        let w = parse("[global]\nrw=read:64k\n[a]\n[b]\nrw=read\n");
        assert_eq!((w.jobs[0].seq_skip, w.jobs[1].seq_skip), (64 * KIB, 0));
        assert_value_err(
            "rw_sequencer=random",
            "rw_sequencer",
            "expected sequential or identical",
        );
    }

    #[test]
    fn percentage_random_and_randrepeat() {
        assert_eq!(job("rw=randread").percentage_random, [100, 100]);
        assert_eq!(job("percentage_random=50").percentage_random, [50, 50]);
        assert_eq!(job("percentage_random=10,90").percentage_random, [10, 90]);
        assert_eq!(job("percentage_random=,30").percentage_random, [100, 30]);
        assert_eq!(job("percentage_sequential=20").percentage_random, [80, 80]);
        assert_value_err("percentage_random=101", "percentage_random", "0..=100");
        assert_value_err(
            "percentage_random=50,x",
            "percentage_random",
            "(value for writes)",
        );
        assert!(job("").randrepeat);
        assert!(!job("randrepeat=0").randrepeat);
        assert!(job("randrepeat").randrepeat);
        assert_value_err("randrepeat=yes", "randrepeat", "expected 0, 1");
    }

    #[test]
    fn random_distributions() {
        use Distribution as D;
        let d = |v: &str| job(&format!("random_distribution={v}")).random_distribution;
        let both = |x: D| [x.clone(), x];
        assert_eq!(d("random"), both(D::Uniform));
        assert_eq!(
            d("zipf:1.2"),
            both(D::Zipf {
                theta: 1.2,
                center: None
            })
        );
        assert_eq!(
            d("zipf:0.8:0.25"),
            both(D::Zipf {
                theta: 0.8,
                center: Some(0.25)
            })
        );
        assert_eq!(
            d("pareto:0.2"),
            both(D::Pareto {
                h: 0.2,
                center: None
            })
        );
        assert_eq!(
            d("normal:5:0.5"),
            both(D::Normal {
                dev: 5.0,
                center: Some(0.5)
            })
        );
        assert_eq!(
            d("zoned:60/10:30/20:8/30:2/40"),
            both(D::Zoned(vec![
                (60.0, 10.0),
                (30.0, 20.0),
                (8.0, 30.0),
                (2.0, 40.0)
            ]))
        );
        assert_eq!(
            d("zoned_abs:60/20g:30/100g:10/500g"),
            both(D::ZonedAbs(vec![
                (60.0, 20 * GIB),
                (30.0, 100 * GIB),
                (10.0, 500 * GIB)
            ]))
        );
        assert_eq!(
            d("zipf:1.1,random"),
            [
                D::Zipf {
                    theta: 1.1,
                    center: None
                },
                D::Uniform
            ]
        );
        assert_eq!(d(",pareto:0.3")[0], D::Uniform);
        let e = |v: &str, needle: &str| {
            assert_value_err(
                &format!("random_distribution={v}"),
                "random_distribution",
                needle,
            )
        };
        e("zipf", "needs a theta");
        e("zipf:1", "different from 1.0");
        e("zipf:0", "greater than 0");
        e("zipf:1.2:1.5", "center '1.5' is out of range");
        e("zipf:1.2:0.5:1", "too many values");
        e("pareto:1.5", "between 0 and 1");
        e("normal:0", "greater than 0");
        e("normal:150", "at most 100");
        e("random:1", "takes no value");
        e("gauss:1", "unknown distribution 'gauss'");
        e("zipf:abc", "'abc' is not a number");
        e("zoned:60/10:30/90", "access percentages add up to 90%");
        e("zoned:60/10:40/80", "range percentages add up to 90%");
        e("zoned:60/0:40/100", "0% of the range");
        e("zoned:60-10", "expected <access%>/<range%>");
        e("zoned", "needs zones");
        e("zoned_abs:100/1x", "unknown unit suffix");
        e("zipf:1.2,zipf:1", "(value for writes)");
    }

    #[test]
    fn new_options_errors_are_located() {
        assert_err(
            "[global]\nbs=4k\n[j]\nrw=randrw\nbssplit=4k/70:8k/20\n",
            5,
            Some("bssplit"),
            "add up to 90%",
        );
        assert_err(
            "[global]\nrandom_distribution=zipf:1\n[j]\n",
            2,
            Some("random_distribution"),
            "zipf theta",
        );
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
