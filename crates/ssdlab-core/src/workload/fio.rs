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
//! * `include FILE` inside a section reads FILE's options as if they were
//!   pasted in place of the line. A relative FILE is relative to the
//!   directory of the including file (for [`parse_str`], of its `file`
//!   name). Includes nest; as in fio an included file may not contain
//!   `[section]` headers. A missing file or an include cycle is an error
//!   naming the including file and line; errors inside an included file
//!   name that file and its own line.
//! * `${VAR}` in an option value or a section name is replaced by the
//!   environment variable `VAR` (once, no recursion). Unlike fio, which
//!   substitutes an empty string, an unset variable is an error naming it
//!   (an empty but set variable expands to nothing). Values of ignored
//!   options (`filename=${DEV}`) are not expanded, as they are not used.
//! * Sizes: plain integers are bytes; `0x` hexadecimal is accepted; unit
//!   prefixes (any case, optionally followed by `b`) depend on `kb_base`:
//!   - `kb_base=1024` (fio's default "compatibility" mode): `k`, `m`, `g`,
//!     `t`, `p` are powers of 1024. IEC forms such as `4KiB` are rejected:
//!     in this mode fio reads them as *decimal* (`4KiB` = 4000 bytes), and
//!     accepting them either way would silently disagree with fio or with
//!     the author.
//!   - `kb_base=1000` (fio's IEC 80000-13 mode): `k`, `m`, ... (and `kB`,
//!     `MB`, ...) are powers of 1000; `Ki`, `Mi`, `Gi`, `Ti`, `Pi` (and
//!     `KiB`, ...) are powers of 1024.
//!
//!   As in fio, `kb_base` takes effect for the whole section it is in,
//!   wherever it appears there, and a `[global]` `kb_base` is inherited by
//!   the jobs below it. Any other value is an error.
//! * Times: a bare integer is seconds (microseconds for `thinktime`);
//!   suffixes `us`/`usec`, `ms`/`msec`, `s`/`sec`, `m`/`min`, `h`/`hour`,
//!   `d`/`day` (any case).
//! * Per-direction values (`bs`, `bsrange`, `bssplit`, `blockalign`,
//!   `percentage_random`, `random_distribution`, `rate`, `rate_iops`)
//!   follow fio: `r,w[,t]` gives reads, writes (and trims); a value not
//!   followed by a comma also applies to the directions after it
//!   (`bs=8k,32k`: 8k reads, 32k writes and trims); an empty field keeps the
//!   direction's current value (`bs=,8k`).
//! * Block sizes: `bssplit` takes precedence over `bsrange`, which takes
//!   precedence over `bs`, whatever their order (as in fio). `bssplit`
//!   entries without a percentage share the remainder equally.
//! * Trims: `rw=trim` / `rw=randtrim` ([`TrimMode::Only`]) trim blocks of
//!   the trim size of `bs` (its third field, [`JobSpec::trim_bs`]) at
//!   sequential / uniformly random offsets: the job's write direction
//!   describes the trims (`rw.read_pct` is 0, `bs` is `trim_bs`, and the
//!   write direction's `blockalign`, `percentage_random` and
//!   `random_distribution` are reset to their defaults unless their trim
//!   fields say otherwise, which is an error). `rw=trimwrite`
//!   ([`TrimMode::TrimWrite`], sequential) trims each block, then writes it,
//!   with the write sizes. Only `bs` sets trim sizes: on a job that trims, a
//!   trim value of `bsrange`/`bssplit` (or, for `randtrim`, a non-default
//!   trim value of `blockalign`, `percentage_random` or
//!   `random_distribution`; for `trimwrite` one that differs from the write
//!   value) is an error rather than silently ignored. On jobs that do not
//!   trim, trim fields have no effect (as in fio). `rw=randtrimwrite` is not
//!   supported.
//! * Flushes: `fsync=N` / `fdatasync=N` issue an NVMe Flush after every N
//!   writes; `end_fsync` / `fsync_on_close` one when the job's I/O is done.
//! * Rates: `rate=` (bytes/s, size syntax) and `rate_iops=` per direction
//!   (0 = no cap, as in fio); `rate_process=linear|poisson`.
//! * Think time: `thinktime=` (bare numbers are microseconds, as in fio),
//!   `thinktime_blocks=`, `thinktime_blocks_type=complete|issue`,
//!   `thinktime_iotime=` (bare numbers are seconds, as in fio).
//! * Job ordering: `stonewall` / `wait_for_previous` (wait for every
//!   earlier job) and `new_group`; in a `[global]` section they apply to
//!   every job below it. Reporting groups are numbered from 0; a job with
//!   `stonewall` or `new_group` starts a new group unless it is the first
//!   job (fio's rule). `wait_for=NAME` must name an *earlier* job whose name
//!   is unique in the file, and not the job itself.
//! * `read_iolog=FILE` (relative to the directory of the file containing
//!   the line; it must exist) replays a fio iolog (v3) as the job's I/O:
//!   with its timing ([`Replay::Open`], speed-up `replay_time_scale` / 100,
//!   since fio divides the gaps by `replay_time_scale`/100), or, with
//!   `replay_no_stall=1`, as fast as the job's final `iodepth` allows
//!   ([`Replay::Closed`]). Offsets beyond the drive wrap around
//!   ([`Remap::Wrap`]); no record filter is applied. `replay_redirect` is
//!   ignored (the drive is the target); `replay_align`, `replay_scale`,
//!   `write_iolog`, several `:`-separated files and stdin (`-`) are errors.
//!
//! Options without meaning in a simulator (`ioengine`, `direct`,
//! `filename`, `rate_min`, `thinktime_spin`, ...) are accepted and listed
//! once each in [`Workload::ignored`] with the reason; every other option
//! outside the supported subset is an error naming the file, the line and
//! the option. So are fio features not modelled yet: percentage sizes,
//! arithmetic expressions, the `$pagesize`/`$ncpus`/`$mb_memory` keywords,
//! `sync`, `write_barrier`, `rate_ignore_thinktime=1`.

use super::trace::{Remap, TraceFilter, TraceFormat};
use super::{
    BlockSize, Distribution, IgnoredOption, JobSpec, RateProcess, Replay, RwPattern, Sequencer,
    TraceSpec, TrimMode, Workload, WorkloadError,
};
use crate::units::Time;
use std::path::{Path, PathBuf};

/// Options that are parsed and applied to [`JobSpec`] (aliases included).
const SUPPORTED: &str = "rw/readwrite (with ':N' modifier), rw_sequencer, rwmixread, rwmixwrite, \
     bs/blocksize, bsrange/blocksize_range, bssplit, blockalign/ba, iodepth, numjobs, size, \
     offset/fileoffset, io_size/io_limit, number_ios, runtime/timeout, time_based, ramp_time, \
     randseed, randrepeat, norandommap, percentage_random, percentage_sequential, \
     random_distribution, kb_base, fsync, fdatasync, end_fsync, fsync_on_close, rate, rate_iops, \
     rate_process, thinktime, thinktime_blocks, thinktime_blocks_type, thinktime_iotime, \
     stonewall/wait_for_previous, new_group, wait_for, read_iolog, replay_no_stall, \
     replay_time_scale, loops, startdelay, exitall, include, ssdlab_trace (+ ssdlab_trace_format, ssdlab_replay, \
     ssdlab_trace_speed, ssdlab_trace_device, ssdlab_trace_start, ssdlab_trace_end, \
     ssdlab_trace_remap), ssdlab_sq_priority, ssdlab_pattern, ssdlab_hot_space, \
     ssdlab_hot_access, ssdlab_lru_reuse, ssdlab_lru_mean";

/// Supported options that take a value (`kb_base` is handled before the others).
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
    "fsync",
    "fdatasync",
    "rate",
    "rate_iops",
    "rate_process",
    "thinktime",
    "thinktime_blocks",
    "thinktime_blocks_type",
    "thinktime_iotime",
    "wait_for",
    "read_iolog",
    "replay_time_scale",
    "loops",
    "startdelay",
    "ssdlab_trace",
    "ssdlab_trace_format",
    "ssdlab_replay",
    "ssdlab_trace_speed",
    "ssdlab_trace_device",
    "ssdlab_trace_start",
    "ssdlab_trace_end",
    "ssdlab_trace_remap",
];

/// Picoseconds per second.
const PS_PER_S: u64 = 1_000_000_000_000;
/// Picoseconds per microsecond.
const PS_PER_US: u64 = 1_000_000;

/// Parse a fio job file from disk.
///
/// The file name used in errors is `path` as displayed; `include` and
/// `read_iolog` paths are relative to its directory. A read failure is
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

/// Parse the text of a fio job file; `file` names it in error messages, and
/// its directory (`Path::new(file).parent()`) is where relative `include`
/// and `read_iolog` paths are looked up.
///
/// Returns the jobs in file order (with `[global]` defaults applied, before
/// `numjobs` expansion) and the accepted-but-ignored options, each listed
/// once. Fails on the first unsupported option, invalid value, malformed
/// line, or if the file defines no job.
pub fn parse_str(text: &str, file: &str) -> Result<Workload, WorkloadError> {
    let mut parser = Parser {
        global: Settings::default(),
        current: None,
        workload: Workload::default(),
        group: 0,
        job_headers: Vec::new(),
        waits: Vec::new(),
        // The top file's own path, to detect it including itself.
        include_stack: vec![std::fs::canonicalize(file).unwrap_or_else(|_| PathBuf::from(file))],
        top_file: file.to_string(),
    };
    parser.read_text(text, file, false)?;
    parser.finish()
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
    Trim,
    RandTrim,
    TrimWrite,
}

impl RwKind {
    fn is_random(self) -> bool {
        matches!(
            self,
            RwKind::RandRead | RwKind::RandWrite | RwKind::RandMixed | RwKind::RandTrim
        )
    }

    fn name(self) -> &'static str {
        match self {
            RwKind::Read => "read",
            RwKind::Write => "write",
            RwKind::Mixed => "rw",
            RwKind::RandRead => "randread",
            RwKind::RandWrite => "randwrite",
            RwKind::RandMixed => "randrw",
            RwKind::Trim => "trim",
            RwKind::RandTrim => "randtrim",
            RwKind::TrimWrite => "trimwrite",
        }
    }
}

/// `kb_base=`: how unit prefixes of sizes are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum KbBase {
    /// fio's default compatibility mode: `k`, `m`, ... are powers of 1024
    /// (IEC prefixes, which fio reads as powers of 1000, are rejected).
    #[default]
    K1024,
    /// IEC 80000-13: `k`, `m`, ... are powers of 1000, `Ki`, `Mi`, ... of 1024.
    K1000,
}

/// Where an option was given: file, line and option name.
#[derive(Debug, Clone, PartialEq)]
struct Loc {
    file: String,
    line: usize,
    key: String,
}

impl Loc {
    fn err(&self, message: impl Into<String>) -> WorkloadError {
        error(&self.file, self.line, Some(&self.key), message)
    }

    /// `line N` if `other` is in the same file as `self`, else `FILE:N`.
    fn refer(&self, other: &Loc) -> String {
        if other.file == self.file {
            format!("line {}", other.line)
        } else {
            format!("{}:{}", other.file, other.line)
        }
    }
}

/// Trim-direction values of the per-direction options other than `bs`,
/// with where each was last set (checked when the job trims).
#[derive(Debug, Clone, Default)]
struct TrimFields {
    bsrange: Option<((u64, u64), Loc)>,
    bssplit: Option<(Vec<(u64, f64)>, Loc)>,
    blockalign: Option<(u64, Loc)>,
    percentage_random: Option<(u32, Loc)>,
    random_distribution: Option<(Distribution, Loc)>,
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
    /// `kb_base=`.
    kb: KbBase,
    /// `bs=` per direction (read, write, trim).
    bs: [u64; 3],
    /// `bsrange=` per direction.
    bsrange: [Option<(u64, u64)>; 2],
    /// `bssplit=` per direction.
    bssplit: [Option<Vec<(u64, f64)>>; 2],
    /// Trim fields of the other per-direction options.
    trim_fields: TrimFields,
    /// `new_group`.
    new_group: bool,
    /// `end_fsync=`.
    end_fsync: bool,
    /// `fsync_on_close=`.
    fsync_on_close: bool,
    /// Where `wait_for=` was set.
    wait_for_at: Option<Loc>,
    /// `read_iolog=`, resolved against the job file's directory.
    read_iolog: Option<PathBuf>,
    /// `replay_no_stall=`.
    replay_no_stall: bool,
    /// `replay_time_scale=` (percent; default 100).
    replay_time_scale: u32,
    /// A replay option given (reported as ignored if there is no `read_iolog`).
    replay_option: Option<String>,
    /// `ssdlab_trace=` and its options: a block trace as the job's I/O.
    trace: TraceOptions,
    /// `thinktime_blocks=` was given (fio ignores the blocks count when only
    /// `thinktime_iotime` is set).
    thinktime_blocks_set: bool,
}

/// `ssdlab_trace=FILE` and `ssdlab_trace_*` (ssdlab options fio ignores):
/// replay a block trace of any supported format as a job, with the options
/// of `ssdlab run --trace`.
#[derive(Debug, Clone, Default)]
struct TraceOptions {
    /// The trace and where `ssdlab_trace=` was set.
    path: Option<(PathBuf, Loc)>,
    format: Option<TraceFormat>,
    /// `ssdlab_replay=closed` (as fast as `iodepth` allows) rather than open (trace times).
    closed: bool,
    speed: Option<f64>,
    filter: TraceFilter,
    scale: bool,
    /// The first `ssdlab_trace_*`/`ssdlab_replay` option given (an error without `ssdlab_trace`).
    option: Option<Loc>,
    /// Where `ssdlab_trace_speed` was set.
    speed_at: Option<Loc>,
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
            kb: KbBase::K1024,
            bs: [4096; 3],
            bsrange: [None, None],
            bssplit: [None, None],
            trim_fields: TrimFields::default(),
            new_group: false,
            end_fsync: false,
            fsync_on_close: false,
            wait_for_at: None,
            read_iolog: None,
            replay_no_stall: false,
            replay_time_scale: 100,
            replay_option: None,
            trace: TraceOptions::default(),
            thinktime_blocks_set: false,
        }
    }
}

/// A section being applied.
struct Section {
    /// `None` for a global section.
    job_name: Option<String>,
    settings: Settings,
    /// First `rwmixread=`/`rwmixwrite=` of this section and its read %, to
    /// reject contradictory pairs whatever their order.
    rwmix_set: Option<(Loc, u32)>,
}

/// One `key[=value]` line of a section (after `${VAR}` expansion).
struct Entry {
    at: Loc,
    value: Option<String>,
}

/// A section being read: its options are applied when it ends, `kb_base` first.
struct Pending {
    /// `None` for a global section.
    job_name: Option<String>,
    /// Where the header is (`key` is the section name).
    header: Loc,
    entries: Vec<Entry>,
}

struct Parser {
    global: Settings,
    current: Option<Pending>,
    workload: Workload,
    /// Reporting group of the last job.
    group: u32,
    /// Header of each job in `workload.jobs`.
    job_headers: Vec<Loc>,
    /// Jobs with `wait_for=` (index, where it was set), checked at the end.
    waits: Vec<(usize, Loc)>,
    /// Files being read (canonical paths), outermost first.
    include_stack: Vec<PathBuf>,
    /// The file name given to [`parse_str`].
    top_file: String,
}

impl Parser {
    /// Read the lines of `file` (`nested` for an included file).
    fn read_text(&mut self, text: &str, file: &str, nested: bool) -> Result<(), WorkloadError> {
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
                if nested {
                    return Err(error(
                        file,
                        lineno,
                        None,
                        format!(
                            "section header '{line}' in an included file; as in fio, included \
                             files may only hold options (put the section in the including file)"
                        ),
                    ));
                }
                self.section_header(line, file, lineno)?;
                continue;
            }
            let mut words = line.splitn(2, char::is_whitespace);
            if words.next() == Some("include") {
                self.include(words.next().unwrap_or("").trim(), file, lineno)?;
                continue;
            }
            let (key, value) = match line.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (line, None),
            };
            if key.is_empty() {
                return Err(error(
                    file,
                    lineno,
                    None,
                    format!("'{line}' has no option name before '='"),
                ));
            }
            self.option(key, value, file, lineno)?;
        }
        Ok(())
    }

    /// An `include FILE` line of `file`.
    fn include(&mut self, name: &str, file: &str, lineno: usize) -> Result<(), WorkloadError> {
        let fail = |m: String| error(file, lineno, None, m);
        if name.is_empty() {
            return Err(fail(
                "include needs a file name ('include common.fio')".into(),
            ));
        }
        if self.current.is_none() {
            return Err(fail(format!(
                "'include {name}' appears before any [section]; as in fio, include options \
                 under [global] or a job section"
            )));
        }
        let path = relative_to(file, name);
        let shown = path.display().to_string();
        let canonical = std::fs::canonicalize(&path)
            .map_err(|e| fail(format!("cannot read include file '{shown}': {e}")))?;
        if let Some(i) = self.include_stack.iter().position(|p| *p == canonical) {
            let chain: Vec<String> = self.include_stack[i..]
                .iter()
                .map(|p| p.display().to_string())
                .chain([canonical.display().to_string()])
                .collect();
            return Err(fail(format!(
                "include cycle: '{shown}' is already being read ({})",
                chain.join(" -> ")
            )));
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| fail(format!("cannot read include file '{shown}': {e}")))?;
        self.include_stack.push(canonical);
        let result = self.read_text(&text, &shown, true);
        self.include_stack.pop();
        result
    }

    fn section_header(
        &mut self,
        line: &str,
        file: &str,
        lineno: usize,
    ) -> Result<(), WorkloadError> {
        self.finish_section()?;
        let Some(inner) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) else {
            return Err(error(
                file,
                lineno,
                None,
                format!("malformed section header '{line}'; expected '[name]'"),
            ));
        };
        let name = expand_env(inner.trim())
            .map_err(|m| error(file, lineno, None, format!("section name: {m}")))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(error(file, lineno, None, "empty section name '[]'"));
        }
        // fio treats every section whose name starts with "global" as global.
        let is_global = name.starts_with("global");
        self.current = Some(Pending {
            job_name: (!is_global).then(|| name.to_string()),
            header: Loc {
                file: file.to_string(),
                line: lineno,
                key: name.to_string(),
            },
            entries: Vec::new(),
        });
        Ok(())
    }

    fn option(
        &mut self,
        key: &str,
        value: Option<&str>,
        file: &str,
        lineno: usize,
    ) -> Result<(), WorkloadError> {
        let Some(section) = self.current.as_mut() else {
            return Err(error(
                file,
                lineno,
                Some(key),
                "appears before any [section]; put options under [global] or a job section",
            ));
        };
        // The values of ignored options are never used: they are not expanded
        // (so `filename=${DEV}` needs no DEV).
        let value = match value {
            Some(v) if ignored_reason(key).is_none() => {
                Some(expand_env(v).map_err(|m| error(file, lineno, Some(key), m))?)
            }
            v => v.map(str::to_string),
        };
        section.entries.push(Entry {
            at: Loc {
                file: file.to_string(),
                line: lineno,
                key: key.to_string(),
            },
            value,
        });
        Ok(())
    }

    /// Apply the options of the section read so far (`kb_base` first): a
    /// global section updates the defaults, a job is emitted.
    fn finish_section(&mut self) -> Result<(), WorkloadError> {
        let Some(pending) = self.current.take() else {
            return Ok(());
        };
        let mut section = Section {
            job_name: pending.job_name,
            settings: self.global.clone(),
            rwmix_set: None,
        };
        // As in fio, kb_base applies to the whole section, wherever it is.
        let mut kb_set: Option<(KbBase, &Loc)> = None;
        for e in pending.entries.iter().filter(|e| e.at.key == "kb_base") {
            let kb = parse_kb_base(e.value.as_deref()).map_err(|m| e.at.err(m))?;
            if let Some((prev, at)) = kb_set {
                if prev != kb {
                    return Err(e.at.err(format!(
                        "contradicts kb_base on {} of the same section",
                        e.at.refer(at)
                    )));
                }
            }
            kb_set = Some((kb, &e.at));
            section.settings.kb = kb;
        }
        for e in &pending.entries {
            if e.at.key == "kb_base" {
                continue;
            }
            if let Some(reason) = ignored_reason(&e.at.key) {
                ignore(&mut self.workload.ignored, &e.at.key, reason);
                continue;
            }
            apply(&mut section, &e.at, e.value.as_deref()).map_err(|m| e.at.err(m))?;
        }
        match section.job_name {
            None => self.global = section.settings,
            Some(name) => self.emit_job(name, section.settings, pending.header)?,
        }
        Ok(())
    }

    /// Build the [`JobSpec`] of a finished job section.
    fn emit_job(&mut self, name: String, s: Settings, header: Loc) -> Result<(), WorkloadError> {
        let mix = s.rwmix_read.unwrap_or(50);
        let (random, read_pct, trim) = match s.rw {
            RwKind::Read => (false, 100, TrimMode::None),
            RwKind::Write => (false, 0, TrimMode::None),
            RwKind::Mixed => (false, mix, TrimMode::None),
            RwKind::RandRead => (true, 100, TrimMode::None),
            RwKind::RandWrite => (true, 0, TrimMode::None),
            RwKind::RandMixed => (true, mix, TrimMode::None),
            RwKind::Trim => (false, 0, TrimMode::Only),
            RwKind::RandTrim => (true, 0, TrimMode::Only),
            RwKind::TrimWrite => (false, 0, TrimMode::TrimWrite),
        };
        check_trim_fields(&s, &name, trim)?;
        let mut spec = s.spec;
        spec.name = name;
        spec.rw = RwPattern { random, read_pct };
        spec.trim = trim;
        spec.trim_bs = s.bs[2];
        match s.rw_mod {
            RwModifier::None => {}
            RwModifier::Skip(b) => spec.seq_skip = b,
            RwModifier::Repeat(n) => spec.offset_repeat = n,
        }
        if trim == TrimMode::Only {
            // The write direction describes the trims: fixed trim_bs blocks
            // at the trim direction's (default) offsets.
            spec.bs = s.bs[2];
            spec.block_sizes = None;
            spec.blockalign[1] = None;
            spec.percentage_random[1] = 100;
            spec.random_distribution[1] = Distribution::Uniform;
        } else {
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
        }
        spec.end_fsync = s.end_fsync || s.fsync_on_close;
        if spec.time_based && spec.runtime.is_none() {
            // fio: "time_based requires a runtime/timeout setting" and clears it.
            spec.time_based = false;
            ignore(
                &mut self.workload.ignored,
                "time_based",
                "no runtime is set, so (as in fio) it has no effect",
            );
        }
        // fio: a stonewall or new_group job starts a new reporting group,
        // unless no job precedes it.
        if (spec.stonewall || s.new_group) && !self.workload.jobs.is_empty() {
            self.group += 1;
        }
        spec.group = self.group;
        if let (Some(_), Some(at)) = (&spec.wait_for, s.wait_for_at) {
            self.waits.push((self.workload.jobs.len(), at));
        }
        // fio: with thinktime_iotime and no thinktime_blocks, only the I/O
        // time triggers a think.
        if spec.thinktime > Time::ZERO
            && spec.thinktime_iotime > Time::ZERO
            && !s.thinktime_blocks_set
        {
            spec.thinktime_blocks = u32::MAX;
        }
        // Options that only qualify another one: listed when that one is absent,
        // as they have no effect (fio ignores them too).
        if spec.thinktime == Time::ZERO {
            for (given, key) in [
                (spec.thinktime_blocks != 1, "thinktime_blocks"),
                (spec.thinktime_blocks_issue, "thinktime_blocks_type"),
                (spec.thinktime_iotime > Time::ZERO, "thinktime_iotime"),
            ] {
                if given {
                    ignore(
                        &mut self.workload.ignored,
                        key,
                        "no thinktime is set, so (as in fio) it has no effect",
                    );
                }
            }
        }
        if spec.rate_process == super::RateProcess::Poisson
            && spec.rate.iter().chain(&spec.rate_iops).all(Option::is_none)
        {
            ignore(
                &mut self.workload.ignored,
                "rate_process",
                "no rate or rate_iops is set, so (as in fio) it has no effect",
            );
        }
        if let Some(at) = &s.trace.option {
            if s.trace.path.is_none() {
                return Err(at.err(format!(
                    "job '{name}': has no effect without ssdlab_trace=FILE (the trace to replay)",
                    name = spec.name
                )));
            }
        }
        if let Some((path, at)) = s.trace.path.clone() {
            if s.read_iolog.is_some() {
                return Err(at.err(format!(
                    "job '{}' replays one trace: give read_iolog or ssdlab_trace, not both",
                    spec.name
                )));
            }
            if let (true, Some(sat)) = (s.trace.closed, &s.trace.speed_at) {
                return Err(sat.err(
                    "applies to open-loop replay only (ssdlab_replay=closed runs as fast as \
                     iodepth allows)",
                ));
            }
            spec.read_iolog = Some(TraceSpec {
                path,
                format: s.trace.format,
                replay: if s.trace.closed {
                    Replay::Closed {
                        iodepth: spec.iodepth,
                    }
                } else {
                    Replay::Open {
                        speed: s.trace.speed.unwrap_or(1.0),
                    }
                },
                filter: s.trace.filter.clone(),
                // Scale from the trace's own address space, learnt when the run starts.
                remap: if s.trace.scale {
                    Remap::Scale { max_offset: 0 }
                } else {
                    Remap::Wrap
                },
            });
            replay_ignores(&mut self.workload.ignored, &spec);
            self.workload.jobs.push(spec);
            self.job_headers.push(header);
            return Ok(());
        }
        match s.read_iolog {
            Some(path) => {
                let replay = if s.replay_no_stall {
                    Replay::Closed {
                        iodepth: spec.iodepth,
                    }
                } else {
                    Replay::Open {
                        speed: f64::from(s.replay_time_scale) / 100.0,
                    }
                };
                spec.read_iolog = Some(TraceSpec {
                    path,
                    format: Some(TraceFormat::FioIolog),
                    replay,
                    filter: TraceFilter::default(),
                    remap: Remap::Wrap,
                });
                replay_ignores(&mut self.workload.ignored, &spec);
            }
            None => {
                if let Some(key) = &s.replay_option {
                    ignore(
                        &mut self.workload.ignored,
                        key,
                        "the job has no read_iolog, so it has no effect",
                    );
                }
            }
        }
        self.workload.jobs.push(spec);
        self.job_headers.push(header);
        Ok(())
    }

    /// End of input: emit the last section and check the job references.
    fn finish(mut self) -> Result<Workload, WorkloadError> {
        self.finish_section()?;
        if self.workload.jobs.is_empty() {
            return Err(error(
                &self.top_file,
                0,
                None,
                "no jobs: the file defines no job section (only [global] or nothing)",
            ));
        }
        let jobs = &self.workload.jobs;
        for (idx, at) in &self.waits {
            let job = &jobs[*idx];
            let name = job.wait_for.as_deref().unwrap_or_default();
            let lines_of = |range: std::ops::Range<usize>| -> Vec<String> {
                range
                    .filter(|&i| jobs[i].name == name)
                    .map(|i| at.refer(&self.job_headers[i]))
                    .collect()
            };
            if name == job.name {
                return Err(at.err(format!(
                    "job '{}' cannot wait for itself (wait_for={name})",
                    job.name
                )));
            }
            let earlier = lines_of(0..*idx);
            let later = lines_of(*idx + 1..jobs.len());
            if earlier.is_empty() {
                return Err(at.err(match later.first() {
                    Some(l) => format!(
                        "job '{}' waits for '{name}', which is defined after it ({l}); as in \
                         fio, wait_for must name an earlier job",
                        job.name
                    ),
                    None => format!(
                        "job '{}' waits for '{name}', but no job has that name",
                        job.name
                    ),
                }));
            }
            if earlier.len() + later.len() > 1 {
                let all: Vec<String> = earlier.into_iter().chain(later).collect();
                return Err(at.err(format!(
                    "job '{}' waits for '{name}', but several jobs have that name ({}); as in \
                     fio, wait_for needs a unique job name",
                    job.name,
                    all.join(", ")
                )));
            }
        }
        Ok(self.workload)
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

/// A job that replays a trace (`read_iolog`, `ssdlab_trace`) takes its
/// directions, sizes and offsets from the trace: the generator options it
/// was given have no effect, and are listed (compared with fio's defaults).
/// `runtime` and `ramp_time` do apply (the replay stops at the runtime).
fn replay_ignores(ignored: &mut Vec<IgnoredOption>, spec: &JobSpec) {
    let d = JobSpec::default();
    let reason = "the job replays a trace, which gives the I/O directions, sizes and offsets";
    let set = [
        (spec.rw != d.rw || spec.trim != d.trim, "rw"),
        (spec.bs != d.bs || spec.block_sizes.is_some(), "bs"),
        (spec.size.is_some(), "size"),
        (spec.offset != 0, "offset"),
        (spec.io_size.is_some(), "io_size"),
        (spec.number_ios.is_some(), "number_ios"),
        (
            spec.random_distribution != d.random_distribution,
            "random_distribution",
        ),
        (
            spec.percentage_random != d.percentage_random,
            "percentage_random",
        ),
        (spec.locality.is_some(), "ssdlab_pattern"),
        (spec.fsync != 0, "fsync"),
        (spec.end_fsync, "end_fsync"),
        (spec.time_based, "time_based"),
    ];
    for (given, key) in set {
        if given {
            ignore(ignored, key, reason);
        }
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
        "group_reporting" => {
            "applies to --output-format fio / fio-json (one entry per reporting group); \
             ssdlab's own report is per direction for the whole run"
        }
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
        "rate_min" | "rate_iops_min" | "rate_cycle" => {
            "fio aborts a job that falls below rate_min; ssdlab reports the achieved rate instead"
        }
        "thinktime_spin" => {
            "spinning and sleeping look the same to the drive; thinktime is the total idle time"
        }
        "replay_redirect" => "the simulated drive is the target of the replay",
        "cpus_allowed"
        | "cpus_allowed_policy"
        | "cpumask"
        | "numa_cpu_nodes"
        | "numa_mem_policy"
        | "nice"
        | "prio"
        | "prioclass"
        | "ioscheduler" => {
            "host CPU placement and scheduling are not modelled (one host CPU per job clone)"
        }
        "create_on_open"
        | "create_serialize"
        | "create_fsync"
        | "unlink"
        | "unlink_each_loop"
        | "allow_mounted_write"
        | "overwrite"
        | "fallocate"
        | "pre_read"
        | "lockfile"
        | "fadvise_hint"
        | "fadvise_stream" => "the simulated drive is the target (no files)",
        "refill_buffers"
        | "scramble_buffers"
        | "zero_buffers"
        | "buffer_pattern"
        | "buffer_compress_percentage"
        | "buffer_compress_chunk"
        | "dedupe_percentage" => {
            "data content is not modelled (the drive model has no compression or deduplication)"
        }
        "iomem" | "mem" | "iomem_align" | "mem_align" | "hugepage_size" | "lockmem" => {
            "host I/O buffers are not modelled"
        }
        "disable_lat"
        | "disable_clat"
        | "disable_slat"
        | "disable_bw_measurement"
        | "clat_percentiles"
        | "lat_percentiles"
        | "slat_percentiles"
        | "percentile_list"
        | "significant_figures"
        | "stats"
        | "unified_rw_reporting"
        | "write_hist_log"
        | "log_hist_msec"
        | "log_hist_coarseness"
        | "log_max_value"
        | "log_offset"
        | "log_compression"
        | "log_store_compressed" => {
            "ssdlab's statistics are fixed: every latency is recorded, per direction, with \
             fio's 17 default percentiles in fio-json"
        }
        "exitall_on_error" | "continue_on_error" | "ignore_error" | "error_dump" => {
            "the simulated drive returns no I/O errors"
        }
        "allrandrepeat" => "every ssdlab random stream is seeded from the run seed (reruns repeat)",
        _ => return None,
    })
}

/// Resolve `name` against the directory of `file` (unless it is absolute).
fn relative_to(file: &str, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    match Path::new(file).parent() {
        Some(dir) => dir.join(p),
        None => p.to_path_buf(),
    }
}

/// Replace each `${VAR}` of `v` by the value of the environment variable `VAR`.
fn expand_env(v: &str) -> Result<String, String> {
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!(
                "'{v}': '${{' without a closing '}}'; expected ${{NAME}}"
            ));
        };
        let name = &after[..end];
        if name.is_empty() {
            return Err(format!("'{v}': empty variable name in '${{}}'"));
        }
        match std::env::var(name) {
            Ok(x) => out.push_str(&x),
            Err(std::env::VarError::NotPresent) => {
                return Err(format!(
                    "environment variable '{name}' (in '{v}') is not set; set it (fio would \
                     silently use an empty string)"
                ))
            }
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(format!(
                    "environment variable '{name}' (in '{v}') is not valid UTF-8"
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `kb_base=` value.
fn parse_kb_base(value: Option<&str>) -> Result<KbBase, String> {
    match value {
        Some("1024") => Ok(KbBase::K1024),
        Some("1000") => Ok(KbBase::K1000),
        None | Some("") => Err("needs a value: 'kb_base=1024' or 'kb_base=1000'".into()),
        Some(v) => Err(format!(
            "'{v}' is not a kb_base; expected 1024 (fio's default: k, m, g, t, p are powers of \
             1024) or 1000 (k, m, g, t, p are powers of 1000, Ki, Mi, Gi, Ti, Pi of 1024)"
        )),
    }
}

/// On a job that trims, reject trim fields of options other than `bs`,
/// which ssdlab's trims do not follow.
fn check_trim_fields(s: &Settings, job: &str, trim: TrimMode) -> Result<(), WorkloadError> {
    let rw = s.rw.name();
    let t = &s.trim_fields;
    let reject = |at: &Loc| -> Result<(), WorkloadError> {
        let how = if trim == TrimMode::TrimWrite {
            "trims each block it writes, with the write sizes and offsets"
        } else {
            "trims blocks of the trim size of bs (its third field) at uniform (randtrim) or \
             sequential (trim) offsets"
        };
        let key = &at.key;
        Err(at.err(format!(
            "job '{job}' (rw={rw}) {how}: only bs sets trim sizes and trims use uniform \
             offsets, so the trim value of {key} would be ignored; give {key} for reads and \
             writes only ('{key}=<reads>,<writes>,')"
        )))
    };
    match trim {
        TrimMode::None => {}
        TrimMode::Only => {
            if let Some((_, at)) = &t.bsrange {
                reject(at)?;
            }
            if let Some((_, at)) = &t.bssplit {
                reject(at)?;
            }
            if s.rw.is_random() {
                if let Some((_, at)) = &t.blockalign {
                    reject(at)?;
                }
                if let Some((_, at)) = t.percentage_random.as_ref().filter(|p| p.0 != 100) {
                    reject(at)?;
                }
                if let Some((_, at)) = t
                    .random_distribution
                    .as_ref()
                    .filter(|d| d.0 != Distribution::Uniform)
                {
                    reject(at)?;
                }
            }
        }
        TrimMode::TrimWrite => {
            // The trims are the written blocks: a trim value equal to the
            // write value is what happens anyway.
            if let Some((_, at)) = t.bsrange.as_ref().filter(|r| Some(r.0) != s.bsrange[1]) {
                reject(at)?;
            }
            if let Some((_, at)) = t
                .bssplit
                .as_ref()
                .filter(|r| Some(&r.0) != s.bssplit[1].as_ref())
            {
                reject(at)?;
            }
        }
    }
    Ok(())
}

/// Apply one supported option to `section`; the error is the message only.
fn apply(section: &mut Section, at: &Loc, value: Option<&str>) -> Result<(), String> {
    let key = at.key.as_str();
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
        "stonewall" | "wait_for_previous" => s.spec.stonewall = parse_flag(value)?,
        "new_group" => s.new_group = parse_flag(value)?,
        "end_fsync" => s.end_fsync = parse_flag(value)?,
        "exitall" => s.spec.exitall = parse_flag(value)?,
        "fsync_on_close" => s.fsync_on_close = parse_flag(value)?,
        "replay_no_stall" => {
            s.replay_no_stall = parse_flag(value)?;
            s.replay_option.get_or_insert_with(|| key.to_string());
        }
        "rate_ignore_thinktime" => {
            if parse_flag(value)? {
                return Err(
                    "not supported yet: how a rate-limited job catches up after a \
                            think time is fixed (fio's default, rate_ignore_thinktime=0)"
                        .into(),
                );
            }
        }
        "write_iolog" => {
            return Err(
                "not supported: ssdlab does not write fio iologs (remove the option)".into(),
            )
        }
        "replay_align" | "replay_scale" => {
            return Err(format!(
                "{key} is not supported yet: read_iolog offsets beyond the drive wrap around \
                 (offset modulo capacity)"
            ))
        }
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
            apply_valued(section, at, v)?;
        }
    }
    Ok(())
}

/// Apply a supported option that takes a value.
fn apply_valued(section: &mut Section, at: &Loc, v: &str) -> Result<(), String> {
    let key = at.key.as_str();
    let kb = section.settings.kb;
    let st = &mut section.settings;
    let spec = &mut st.spec;
    let trims = &mut st.trim_fields;
    match key {
        "rw" | "readwrite" => {
            let (rw, modifier) = parse_rw(v)?;
            st.rw = rw;
            st.rw_mod = parse_rw_modifier(rw, modifier, v, kb)?;
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
            let t = set_rw(
                &mut st.bsrange,
                per_dir(v, |p| parse_bsrange(p, kb).map(Some))?,
            );
            if let Some(t) = t.flatten() {
                trims.bsrange = Some((t, at.clone()));
            }
        }
        "bssplit" => {
            let t = set_rw(
                &mut st.bssplit,
                per_dir(v, |p| parse_bssplit(p, kb).map(Some))?,
            );
            if let Some(t) = t.flatten() {
                trims.bssplit = Some((t, at.clone()));
            }
        }
        "blockalign" | "ba" => {
            let t = set_rw(
                &mut spec.blockalign,
                per_dir(v, |p| {
                    let b = parse_int(p, kb)?;
                    if b == 0 {
                        return Err("the alignment must be greater than 0".into());
                    }
                    Ok(Some(b))
                })?,
            );
            if let Some(t) = t.flatten() {
                trims.blockalign = Some((t, at.clone()));
            }
        }
        "percentage_random" | "percentage_sequential" => {
            let seq = key == "percentage_sequential";
            let t = set_rw(
                &mut spec.percentage_random,
                per_dir(v, |p| {
                    let n = parse_int(p, kb)?;
                    if n > 100 {
                        return Err(format!(
                            "'{p}' is out of range; expected a percentage 0..=100"
                        ));
                    }
                    let n = n as u32;
                    Ok(if seq { 100 - n } else { n })
                })?,
            );
            if let Some(t) = t {
                trims.percentage_random = Some((t, at.clone()));
            }
        }
        "random_distribution" => {
            let t = set_rw(
                &mut spec.random_distribution,
                per_dir(v, |p| parse_distribution(p, kb))?,
            );
            if let Some(t) = t {
                trims.random_distribution = Some((t, at.clone()));
            }
        }
        "rwmixread" | "rwmixwrite" => {
            let pct = parse_int(v, kb)?;
            if pct > 100 {
                return Err(format!(
                    "'{v}' is out of range; expected a percentage 0..=100"
                ));
            }
            // `pct <= 100`, so the conversion cannot fail.
            let pct = u32::try_from(pct).unwrap_or(100);
            let read = if key == "rwmixread" { pct } else { 100 - pct };
            match &section.rwmix_set {
                Some((other, prev)) if *prev != read => {
                    return Err(format!(
                        "contradicts '{}' on {} of the same section \
                         ({read}% reads here, {prev}% there)",
                        other.key,
                        at.refer(other)
                    ));
                }
                Some(_) => {}
                None => section.rwmix_set = Some((at.clone(), read)),
            }
            st.rwmix_read = Some(read);
        }
        "bs" | "blocksize" => {
            let dirs = per_dir(v, |p| {
                let bs = parse_int(p, kb)?;
                if bs == 0 {
                    return Err("block size must be greater than 0".into());
                }
                Ok(bs)
            })?;
            for (d, x) in st.bs.iter_mut().zip(dirs) {
                if let Some(x) = x {
                    *d = x;
                }
            }
        }
        "iodepth" => spec.iodepth = parse_count(v, kb)?,
        "numjobs" => spec.numjobs = parse_count(v, kb)?,
        "number_ios" => {
            let n = parse_int(v, kb)?;
            if n == 0 {
                return Err("must be at least 1".into());
            }
            spec.number_ios = Some(n);
        }
        // fio: 0 means "unset" (the whole device / `size`).
        "size" => spec.size = Some(parse_size(v, kb)?).filter(|&b| b > 0),
        "io_size" | "io_limit" => spec.io_size = Some(parse_size(v, kb)?).filter(|&b| b > 0),
        "offset" | "fileoffset" => spec.offset = parse_size(v, kb)?,
        // fio: runtime 0 means no limit.
        "runtime" | "timeout" => spec.runtime = Some(parse_time(v)?).filter(|&t| t > Time::ZERO),
        "ramp_time" => spec.ramp_time = parse_time(v)?,
        "randseed" => spec.randseed = Some(parse_int(v, kb)?),
        "fsync" | "fdatasync" => {
            let n = parse_int(v, kb)?;
            spec.fsync = u32::try_from(n)
                .map_err(|_| format!("'{v}' is too large (at most {})", u32::MAX))?;
        }
        // fio: a rate of 0 means no cap.
        "rate" | "rate_iops" => {
            let dirs = per_dir(v, |p| parse_int(p, kb))?;
            let dst = if key == "rate" {
                &mut spec.rate
            } else {
                &mut spec.rate_iops
            };
            for (d, x) in dst.iter_mut().zip(dirs) {
                if let Some(x) = x {
                    *d = Some(x).filter(|&r| r > 0);
                }
            }
        }
        "rate_process" => {
            spec.rate_process = match v {
                "linear" => RateProcess::Linear,
                "poisson" => RateProcess::Poisson,
                _ => {
                    return Err(format!(
                        "unknown rate process '{v}'; expected linear or poisson"
                    ))
                }
            }
        }
        "thinktime" => spec.thinktime = parse_time_unit(v, PS_PER_US, "microseconds")?,
        "thinktime_blocks" => {
            spec.thinktime_blocks = parse_count(v, kb)?;
            st.thinktime_blocks_set = true;
        }
        "thinktime_blocks_type" => {
            spec.thinktime_blocks_issue = match v {
                "complete" => false,
                "issue" => true,
                _ => {
                    return Err(format!(
                        "unknown thinktime_blocks_type '{v}'; expected complete or issue"
                    ))
                }
            }
        }
        "thinktime_iotime" => spec.thinktime_iotime = parse_time(v)?,
        "loops" => spec.loops = parse_count(v, kb)?,
        "startdelay" => {
            if v.contains('-') {
                return Err(format!(
                    "'{v}': a random start delay range is not supported yet; give one time"
                ));
            }
            spec.startdelay = parse_time(v)?;
        }
        "wait_for" => {
            spec.wait_for = Some(v.to_string());
            st.wait_for_at = Some(at.clone());
        }
        "read_iolog" => {
            if v == "-" {
                return Err(
                    "reading an iolog from stdin ('-') is not supported; give a file".into(),
                );
            }
            if v.contains(':') {
                return Err(format!(
                    "'{v}': several iolog files (separated by ':') are not supported yet; give one file"
                ));
            }
            let path = relative_to(&at.file, v);
            if !path.exists() {
                return Err(format!(
                    "iolog file '{}' does not exist (relative paths are relative to the job \
                     file's directory)",
                    path.display()
                ));
            }
            if !path.is_file() {
                return Err(format!("'{}' is not a file", path.display()));
            }
            st.read_iolog = Some(path);
        }
        "ssdlab_trace" => {
            let path = relative_to(&at.file, v);
            if !path.is_file() {
                return Err(format!(
                    "trace file '{}' does not exist or is not a file (relative paths are \
                     relative to the job file's directory)",
                    path.display()
                ));
            }
            st.trace.path = Some((path, at.clone()));
        }
        "ssdlab_trace_format"
        | "ssdlab_replay"
        | "ssdlab_trace_speed"
        | "ssdlab_trace_device"
        | "ssdlab_trace_start"
        | "ssdlab_trace_end"
        | "ssdlab_trace_remap" => {
            let t = &mut st.trace;
            match key {
                "ssdlab_trace_format" => t.format = Some(v.parse::<TraceFormat>()?),
                "ssdlab_replay" => {
                    t.closed = match v {
                        "open" => false,
                        "closed" => true,
                        _ => return Err(format!("'{v}': expected open (trace timestamps) or closed (as fast as iodepth allows)")),
                    }
                }
                "ssdlab_trace_speed" => {
                    let x = v
                        .parse::<f64>()
                        .ok()
                        .filter(|x| *x > 0.0 && x.is_finite())
                        .ok_or_else(|| format!("'{v}' must be a positive number (2 replays twice as fast)"))?;
                    t.speed = Some(x);
                    t.speed_at = Some(at.clone());
                }
                "ssdlab_trace_device" => t.filter.device = Some(v.to_string()),
                "ssdlab_trace_start" => t.filter.start = Some(parse_time(v)?),
                "ssdlab_trace_end" => t.filter.end = Some(parse_time(v)?),
                _ => {
                    t.scale = match v {
                        "wrap" => false,
                        "scale" => true,
                        _ => return Err(format!("'{v}': expected wrap (offset modulo capacity) or scale (spread the trace's address space over the drive)")),
                    }
                }
            }
            t.option.get_or_insert_with(|| at.clone());
        }
        "replay_time_scale" => {
            let n = parse_int(v, kb)?;
            if n == 0 {
                return Err("must be at least 1 (percent of the original rate)".into());
            }
            st.replay_time_scale = u32::try_from(n)
                .map_err(|_| format!("'{v}' is too large (at most {})", u32::MAX))?;
            st.replay_option.get_or_insert_with(|| key.to_string());
        }
        _ => {
            return Err(format!(
                "not supported by ssdlab yet (supported: {SUPPORTED})"
            ))
        }
    }
    Ok(())
}

/// Store the read and write fields of a per-direction value; returns the trim field.
fn set_rw<T>(dst: &mut [T; 2], src: [Option<T>; 3]) -> Option<T> {
    let [read, write, trim] = src;
    if let Some(r) = read {
        dst[0] = r;
    }
    if let Some(w) = write {
        dst[1] = w;
    }
    trim
}

/// Split a per-direction value `read[,write[,trim]]` as fio does and parse
/// each field: a field not followed by a comma also applies to the
/// directions after it; an empty field leaves its direction unset (`None`).
fn per_dir<T: Clone>(
    v: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<[Option<T>; 3], String> {
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
    Ok([field(0)?, field(1)?, field(2)?])
}

/// A `bsrange` field: `min-max` (or `min:max`) sizes.
fn parse_bsrange(v: &str, kb: KbBase) -> Result<(u64, u64), String> {
    let Some((a, b)) = v.split_once(['-', ':']) else {
        return Err(format!(
            "'{v}' is not a range; expected min-max, e.g. 4k-64k"
        ));
    };
    let (min, max) = (parse_int(a.trim(), kb)?, parse_int(b.trim(), kb)?);
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
fn parse_bssplit(v: &str, kb: KbBase) -> Result<Vec<(u64, f64)>, String> {
    let mut entries = Vec::new();
    for e in v.split(':') {
        let (size, pct) = match e.split_once('/') {
            Some((s, p)) => (s.trim(), Some(p.trim()).filter(|p| !p.is_empty())),
            None => (e.trim(), None),
        };
        if size.is_empty() {
            return Err(format!("'{v}': empty entry; expected size/percent entries separated by ':', e.g. 4k/50:64k/50"));
        }
        let bytes = parse_int(size, kb)?;
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
fn parse_distribution(v: &str, kb: KbBase) -> Result<Distribution, String> {
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
                    .map(|(a, r)| Ok((a, parse_int(r, kb)?)))
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
fn parse_rw_modifier(
    rw: RwKind,
    modifier: Option<&str>,
    v: &str,
    kb: KbBase,
) -> Result<RwModifier, String> {
    let Some(m) = modifier else {
        return Ok(RwModifier::None);
    };
    if rw.is_random() {
        let n = parse_int(m, kb).map_err(|e| {
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
        let skip = parse_int(m, kb).map_err(|e| {
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
        "trim" => RwKind::Trim,
        "randtrim" => RwKind::RandTrim,
        "trimwrite" => RwKind::TrimWrite,
        "randtrimwrite" => {
            return Err(format!(
                "rw={kind} is not supported yet (trim, randtrim and trimwrite are)"
            ))
        }
        _ => {
            return Err(format!(
                "unknown I/O pattern '{v}'; expected read, write, randread, randwrite, rw, \
                 readwrite, randrw, trim, randtrim or trimwrite"
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
fn parse_count(v: &str, kb: KbBase) -> Result<u32, String> {
    let n = parse_int(v, kb)?;
    if n == 0 {
        return Err("must be at least 1".into());
    }
    u32::try_from(n).map_err(|_| format!("'{v}' is too large (at most {})", u32::MAX))
}

/// A byte count (`size`, `offset`, `io_size`): like [`parse_int`], with a
/// specific message for fio's percentage form.
fn parse_size(v: &str, kb: KbBase) -> Result<u64, String> {
    if v.ends_with('%') {
        return Err(format!(
            "percentage values ('{v}') are not supported yet; give a size in bytes"
        ));
    }
    parse_int(v, kb)
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

/// An integer in fio size syntax: `4096`, `4096b`, `4k`, `4KB`, `1m`, `10g`,
/// `2t`, `1p` (case-insensitive), or hexadecimal `0x1000`. With
/// `kb_base=1024` the prefixes are powers of 1024 and IEC prefixes (`Ki`...)
/// are rejected; with `kb_base=1000` they are powers of 1000 and `Ki`, `Mi`,
/// `Gi`, `Ti`, `Pi` (optionally followed by `b`) powers of 1024.
fn parse_int(v: &str, kb: KbBase) -> Result<u64, String> {
    check_unsupported_syntax(v)?;
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!("'{v}' is not a hexadecimal number"));
        }
        return u64::from_str_radix(hex, 16).map_err(|_| format!("'{v}' is too large"));
    }
    let (n, suffix) = split_digits(v)?;
    let lower = suffix.to_ascii_lowercase();
    let si: u64 = match kb {
        KbBase::K1024 => 1024,
        KbBase::K1000 => 1000,
    };
    let (base, pow) = match lower.as_str() {
        "" | "b" => (1, 0),
        "k" | "kb" => (si, 1),
        "m" | "mb" => (si, 2),
        "g" | "gb" => (si, 3),
        "t" | "tb" => (si, 4),
        "p" | "pb" => (si, 5),
        "ki" | "kib" | "mi" | "mib" | "gi" | "gib" | "ti" | "tib" | "pi" | "pib" => {
            if kb == KbBase::K1024 {
                let letter = &lower[..1];
                return Err(format!(
                    "'{v}' is ambiguous: with fio's default kb_base=1024, IEC prefixes such as \
                     'Ki' are powers of 1000 (fio reads '4KiB' as 4000 bytes); write '{n}{letter}' \
                     for powers of 1024, set kb_base=1000 (then 'Ki' is 1024 and 'k' 1000), or \
                     give the exact byte count"
                ));
            }
            let pow = match &lower[..1] {
                "k" => 1,
                "m" => 2,
                "g" => 3,
                "t" => 4,
                _ => 5,
            };
            (1024, pow)
        }
        _ if lower.starts_with('.') => {
            return Err(format!(
            "'{v}': fractional values are not supported; use a smaller unit (e.g. 1536m, not 1.5g)"
        ))
        }
        _ if lower.ends_with('%') => return Err(format!("'{v}': a percentage is not valid here")),
        _ => {
            return Err(match kb {
                KbBase::K1024 => format!(
                    "'{v}' has an unknown unit suffix '{suffix}'; expected none (bytes) or \
                     b, k, m, g, t, p (powers of 1024, optionally followed by 'b')"
                ),
                KbBase::K1000 => format!(
                    "'{v}' has an unknown unit suffix '{suffix}'; expected none (bytes) or \
                     b, k, m, g, t, p (powers of 1000 with kb_base=1000) or ki, mi, gi, ti, pi \
                     (powers of 1024), optionally followed by 'b'"
                ),
            })
        }
    };
    base.checked_pow(pow)
        .and_then(|m| n.checked_mul(m))
        .ok_or_else(|| format!("'{v}' is too large"))
}

/// A duration in fio time syntax: a bare integer is seconds; suffixes
/// `us`/`usec`, `ms`/`msec`, `s`/`sec`, `m`/`min`, `h`/`hour`, `d`/`day`
/// (case-insensitive).
fn parse_time(v: &str) -> Result<Time, String> {
    parse_time_unit(v, PS_PER_S, "seconds")
}

/// Like [`parse_time`], with `bare` picoseconds per unit for a bare integer
/// (named `bare_name` in messages).
fn parse_time_unit(v: &str, bare: u64, bare_name: &str) -> Result<Time, String> {
    check_unsupported_syntax(v)?;
    let (n, suffix) = split_digits(v)?;
    let lower = suffix.to_ascii_lowercase();
    const S: u64 = PS_PER_S;
    let ps_per_unit: u64 = match lower.as_str() {
        "" => bare,
        "s" | "sec" => S,
        "us" | "usec" => PS_PER_US,
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
                "'{v}' has an unknown time unit '{suffix}'; expected none ({bare_name}) or \
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
    fn stonewall_orders_jobs_and_starts_groups() {
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

[mixed]
rw=randrw
";
        let w = parse(text);
        let got: Vec<(&str, bool, u32)> = w
            .jobs
            .iter()
            .map(|j| (j.name.as_str(), j.stonewall, j.group))
            .collect();
        // The first job is in group 0 even with a stonewall (fio's rule).
        assert_eq!(
            got,
            [
                ("seq-read", true, 0),
                ("rand-read", true, 1),
                ("mixed", false, 1)
            ]
        );
        assert!(job("wait_for_previous").stonewall);
        assert!(!job("stonewall=0").stonewall);
        assert_value_err("stonewall=yes", "stonewall", "expected 0, 1");
        assert_value_err("new_group=2", "new_group", "expected 0, 1");
        assert_value_err("wait_for", "wait_for", "needs a value");
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
            assert_eq!(parse_int(text, KbBase::K1024), Ok(bytes), "{text}");
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
        assert_value_err("sync=1", "sync", "not supported by ssdlab yet");
        assert_value_err(
            "write_barrier=4",
            "write_barrier",
            "not supported by ssdlab yet",
        );
        assert_value_err(
            "replay_skip=write",
            "replay_skip",
            "not supported by ssdlab yet",
        );
        assert_value_err(
            "rate_ignore_thinktime=1",
            "rate_ignore_thinktime",
            "not supported yet",
        );
        assert_eq!(job("rate_ignore_thinktime=0").rate, [None; 3]);
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
        assert_err("include common.fio\n[j]\n", 1, None, "before any [section]");
        assert_err("[j]\ninclude\n", 2, None, "include needs a file name");
        assert_err(
            "[j]\ninclude common.fio\n",
            2,
            None,
            "cannot read include file 'jobs/common.fio'",
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
        assert_value_err(
            "rw=randtrimwrite",
            "rw",
            "rw=randtrimwrite is not supported yet",
        );
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
        // The trim field sets trim_bs (and does not change the write sizes).
        let j = job("bs=4k,8k,16k");
        assert_eq!(
            (j.block_sizes.map(|b| b[1].max()), j.trim_bs),
            (Some(8 * KIB), 16 * KIB)
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

    // ---- kb_base, include, ${VAR}, trims, flushes, rates, think time,
    // ---- job ordering, read_iolog, and realistic job files.

    /// A fresh directory for file-based tests.
    fn temp_dir(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("ssdlab-fio-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(std::fs::create_dir_all(&dir).is_ok());
        dir
    }

    fn write(path: &std::path::Path, text: &str) {
        assert!(std::fs::write(path, text).is_ok(), "{}", path.display());
    }

    fn parse_at(text: &str, file: &std::path::Path) -> Result<Workload, WorkloadError> {
        parse_str(text, &file.display().to_string())
    }

    fn ok<T>(r: Result<T, WorkloadError>) -> T {
        match r {
            Ok(x) => x,
            Err(e) => panic!("unexpected error: {e}"),
        }
    }

    fn err<T: std::fmt::Debug>(r: Result<T, WorkloadError>) -> WorkloadError {
        match r {
            Ok(x) => panic!("expected an error, got {x:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn kb_base_1000_units() {
        let k = KbBase::K1000;
        let cases: &[(&str, u64)] = &[
            ("4096", 4096),
            ("4k", 4000),
            ("4K", 4000),
            ("4kB", 4000),
            ("1m", 1_000_000),
            ("1MB", 1_000_000),
            ("1000k", 1_000_000),
            ("1g", 1_000_000_000),
            ("1t", 1_000_000_000_000),
            ("1p", 1_000_000_000_000_000),
            ("4ki", 4096),
            ("4Ki", 4096),
            ("4KiB", 4096),
            ("4kib", 4096),
            ("1mi", MIB),
            ("1024ki", MIB),
            ("10GiB", 10 * GIB),
            ("1ti", 1 << 40),
            ("1Pi", 1 << 50),
            ("0x1000", 4096),
        ];
        for &(text, bytes) in cases {
            assert_eq!(parse_int(text, k), Ok(bytes), "{text}");
        }
        assert!(parse_int("4x", k).is_err_and(|e| e.contains("powers of 1000")));
        // Default 1024 mode: IEC prefixes stay ambiguous errors.
        let e = parse_int("4KiB", KbBase::K1024).err().unwrap_or_default();
        assert!(e.contains("set kb_base=1000"), "{e}");
    }

    #[test]
    fn kb_base_applies_to_the_whole_section_in_any_order() {
        // kb_base after the options it affects, as fio allows.
        let j = job("bs=4k\nsize=1g\nrate=1m,2MiB\nkb_base=1000\nrw=randwrite:8k");
        assert_eq!(j.bs, 4000);
        assert_eq!(j.size, Some(1_000_000_000));
        assert_eq!(j.rate, [Some(1_000_000), Some(2 * MIB), Some(2 * MIB)]);
        assert_eq!(j.offset_repeat, 8000);
        let j = job("kb_base=1000\nbsrange=4KiB-64KiB\nrandom_distribution=zoned_abs:100/1g");
        assert_eq!(
            j.block_sizes.map(|b| b[0].clone()),
            Some(BlockSize::Range {
                min: 4 * KIB,
                max: 64 * KIB
            })
        );
        assert_eq!(
            j.random_distribution[0],
            Distribution::ZonedAbs(vec![(100.0, 1_000_000_000)])
        );
        assert_eq!(job("kb_base=1024\nbs=4k").bs, 4 * KIB);
        // A [global] kb_base is inherited (even when given after its sizes);
        // a job can switch back.
        let w = parse(
            "[global]\nsize=1g\nkb_base=1000\n[a]\nbs=4k\n[b]\nkb_base=1024\nbs=4k\n[c]\nbs=4KiB\n",
        );
        let got: Vec<(u64, Option<u64>)> = w.jobs.iter().map(|j| (j.bs, j.size)).collect();
        assert_eq!(
            got,
            [
                (4000, Some(1_000_000_000)),
                (4 * KIB, Some(1_000_000_000)),
                (4 * KIB, Some(1_000_000_000))
            ]
        );
        // A job's kb_base does not change values inherited from [global].
        let w = parse("[global]\nbs=4k\n[a]\nkb_base=1000\n");
        assert_eq!(w.jobs[0].bs, 4 * KIB);
        // Errors, located.
        assert_value_err("kb_base=512", "kb_base", "expected 1024");
        assert_value_err("kb_base", "kb_base", "needs a value");
        assert_err(
            "[j]\nkb_base=1000\nbs=4k\nkb_base=1024\n",
            4,
            Some("kb_base"),
            "contradicts kb_base on line 2",
        );
        // The kb_base error comes first, wherever it is in the section.
        assert_err(
            "[j]\nbs=4KiB\nkb_base=1001\n",
            3,
            Some("kb_base"),
            "not a kb_base",
        );
        assert_err("[j]\nbs=4KiB\nkb_base=1024\n", 2, Some("bs"), "ambiguous");
        assert_eq!(job("kb_base=1000\nkb_base=1000\nbs=8k").bs, 8000);
    }

    #[test]
    fn include_pastes_options_in_place() {
        let dir = temp_dir("include");
        assert!(std::fs::create_dir_all(dir.join("inc/deeper")).is_ok());
        write(
            &dir.join("inc/common.fio"),
            "; shared\nbs=16k\ninclude deeper/qd.fio\nrw=randread\n",
        );
        write(&dir.join("inc/deeper/qd.fio"), "iodepth=8\n");
        write(&dir.join("global.fio"), "size=1g\n");
        let main = dir.join("main.fio");
        let w = ok(parse_at(
            "[global]\ninclude global.fio\n[a]\nbs=4k\ninclude inc/common.fio\n[b]\ninclude inc/common.fio\nbs=64k\niodepth=2\n",
            &main,
        ));
        let got: Vec<(u64, u32, Option<u64>, RwPattern)> = w
            .jobs
            .iter()
            .map(|j| (j.bs, j.iodepth, j.size, j.rw))
            .collect();
        assert_eq!(
            got,
            [
                (16 * KIB, 8, Some(GIB), pattern(true, 100)),
                (64 * KIB, 2, Some(GIB), pattern(true, 100))
            ]
        );
        // An absolute path, and kb_base from an included file covering the section.
        write(&dir.join("kb.fio"), "kb_base=1000\n");
        let kb = dir.join("kb.fio").display().to_string();
        let w = ok(parse_at(&format!("[a]\nbs=4k\ninclude {kb}\n"), &main));
        assert_eq!(w.jobs[0].bs, 4000);
        // parse_file resolves against the job file's directory too.
        write(&main, "[a]\ninclude inc/common.fio\n");
        assert_eq!(ok(parse_file(&main)).jobs[0].iodepth, 8);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn include_errors_are_located() {
        let dir = temp_dir("include-err");
        let main = dir.join("main.fio");
        let shown = main.display().to_string();
        // Missing file: the including file and line.
        let e = err(parse_at("[a]\nbs=4k\ninclude nope.fio\n", &main));
        assert_eq!((e.file.as_str(), e.line), (shown.as_str(), 3), "{e}");
        assert!(e.message.contains("cannot read include file"), "{e}");
        assert!(e.message.contains("nope.fio"), "{e}");
        // An error inside an included file names that file and its line.
        let bad = dir.join("bad.fio");
        write(&bad, "bs=4k\n\niodepth=zero\n");
        write(&dir.join("mid.fio"), "; one level more\ninclude bad.fio\n");
        let e = err(parse_at("[a]\ninclude mid.fio\n", &main));
        assert_eq!(
            (e.file.as_str(), e.line, e.option.as_deref()),
            (bad.display().to_string().as_str(), 3, Some("iodepth")),
            "{e}"
        );
        assert!(e.to_string().contains("bad.fio:3: option 'iodepth'"), "{e}");
        // Sections are not allowed in included files.
        write(&dir.join("sect.fio"), "bs=4k\n[other]\n");
        let e = err(parse_at("[a]\ninclude sect.fio\n", &main));
        assert!(e.file.ends_with("sect.fio") && e.line == 2, "{e}");
        assert!(
            e.message.contains("included files may only hold options"),
            "{e}"
        );
        // Cycles: a -> b -> a, and a file including itself.
        write(&dir.join("a.fio"), "bs=4k\ninclude b.fio\n");
        write(&dir.join("b.fio"), "iodepth=2\ninclude a.fio\n");
        let e = err(parse_at("[j]\ninclude a.fio\n", &main));
        assert!(e.file.ends_with("b.fio") && e.line == 2, "{e}");
        assert!(e.message.contains("include cycle"), "{e}");
        write(&main, "[j]\ninclude main.fio\n");
        let e = err(parse_file(&main));
        assert_eq!((e.file.as_str(), e.line), (shown.as_str(), 2), "{e}");
        assert!(e.message.contains("include cycle"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn environment_variables_expand() {
        std::env::set_var("SSDLAB_FIO_T1_BS", "16k");
        std::env::set_var("SSDLAB_FIO_T1_NAME", "dev0");
        std::env::set_var("SSDLAB_FIO_T1_EMPTY", "");
        std::env::remove_var("SSDLAB_FIO_T1_UNSET");
        let w = parse(
            "[global]\nbs=${SSDLAB_FIO_T1_BS}\n[job-${SSDLAB_FIO_T1_NAME}]\n\
             size=${SSDLAB_FIO_T1_EMPTY}2g\nrandom_distribution=zipf:1.${SSDLAB_FIO_T1_EMPTY}5\n",
        );
        let j = &w.jobs[0];
        assert_eq!(j.name, "job-dev0");
        assert_eq!(j.bs, 16 * KIB);
        assert_eq!(j.size, Some(2 * GIB));
        assert_eq!(
            j.random_distribution[0],
            Distribution::Zipf {
                theta: 1.5,
                center: None
            }
        );
        let e = assert_err(
            "[j]\nbs=4k\nsize=${SSDLAB_FIO_T1_UNSET}\n",
            3,
            Some("size"),
            "environment variable 'SSDLAB_FIO_T1_UNSET'",
        );
        assert!(e.message.contains("is not set"), "{e}");
        assert_err(
            "[job-${SSDLAB_FIO_T1_UNSET}]\n",
            1,
            None,
            "'SSDLAB_FIO_T1_UNSET' (in 'job-${SSDLAB_FIO_T1_UNSET}') is not set",
        );
        assert_value_err("bs=${SSDLAB_FIO_T1_BS", "bs", "without a closing");
        // Ignored options are not expanded: their values are not used.
        let w = parse("[j]\nfilename=${SSDLAB_FIO_T1_UNSET}\n");
        assert_eq!(w.ignored[0].option, "filename");
        assert_value_err("bs=${}", "bs", "empty variable name");
        // fio's keywords are still unsupported (and not taken for variables).
        assert_value_err("size=$mb_memory", "size", "keyword substitution");
    }

    #[test]
    fn trim_patterns_and_trim_size() {
        let j = job("rw=trim");
        assert_eq!(
            (j.trim, j.rw, j.bs, j.trim_bs, j.block_sizes),
            (TrimMode::Only, pattern(false, 0), 4096, 4096, None)
        );
        let j = job("rw=randtrim\nbs=4k,16k");
        assert_eq!(
            (j.trim, j.rw, j.bs, j.trim_bs),
            (TrimMode::Only, pattern(true, 0), 16 * KIB, 16 * KIB)
        );
        let j = job("rw=randtrim\nbs=8k");
        assert_eq!((j.bs, j.trim_bs), (8 * KIB, 8 * KIB));
        // `bs=4k,1m,` leaves trims at their current size.
        let j = job("rw=trim\nbs=4k,1m,");
        assert_eq!((j.bs, j.trim_bs, j.block_sizes), (4096, 4096, None));
        let j = job("readwrite=randtrim:4\nbs=,,64k");
        assert_eq!((j.offset_repeat, j.bs), (4, 64 * KIB));
        assert_eq!(job("rw=trim:1m").seq_skip, MIB);
        // The write direction describes the trims: its other settings are reset.
        let j = job("rw=randtrim\nrandom_distribution=random,zipf:1.2,random\n\
             percentage_random=100,30,100\nblockalign=8k,8k,");
        assert_eq!(
            (
                j.random_distribution[1].clone(),
                j.percentage_random[1],
                j.blockalign[1]
            ),
            (Distribution::Uniform, 100, None)
        );
        // Non-trim jobs keep trim_bs but do not trim.
        let j = job("rw=randwrite\nbs=4k,8k,32k");
        assert_eq!(
            (j.trim, j.trim_bs, j.bs),
            (TrimMode::None, 32 * KIB, 8 * KIB)
        );
        // trimwrite: sequential, write sizes.
        let j = job("rw=trimwrite\nbs=4k,64k");
        assert_eq!(
            (j.trim, j.rw, j.bs, j.trim_bs, j.block_sizes),
            (
                TrimMode::TrimWrite,
                pattern(false, 0),
                64 * KIB,
                64 * KIB,
                Some([BlockSize::Fixed(4 * KIB), BlockSize::Fixed(64 * KIB)])
            )
        );
        let j = job("rw=trimwrite\nbsrange=4k-64k");
        assert_eq!(j.trim, TrimMode::TrimWrite);
        // rwmix does not apply.
        assert_eq!(job("rw=randtrim\nrwmixread=70").rw, pattern(true, 0));
    }

    #[test]
    fn trim_fields_of_other_options_are_rejected_on_trim_jobs() {
        let needle = "only bs sets trim sizes and trims use uniform offsets";
        assert_err(
            "[j]\nrw=randtrim\nbsrange=4k-64k\n",
            3,
            Some("bsrange"),
            needle,
        );
        assert_err(
            "[j]\nbssplit=4k/50:8k/50\nrw=trim\n",
            2,
            Some("bssplit"),
            needle,
        );
        assert_err(
            "[j]\nrw=randtrim\nrandom_distribution=zipf:1.2\n",
            3,
            Some("random_distribution"),
            needle,
        );
        assert_err(
            "[j]\nrw=randtrim\npercentage_random=,,50\n",
            3,
            Some("percentage_random"),
            needle,
        );
        assert_err("[j]\nrw=randtrim\nba=,,16k\n", 3, Some("ba"), needle);
        // A [global] value applies to trims too: its line is named.
        let e = assert_err(
            "[global]\nrandom_distribution=zipf:1.2\n[reads]\nrw=randread\n[trims]\nrw=randtrim\n",
            2,
            Some("random_distribution"),
            "job 'trims' (rw=randtrim)",
        );
        assert!(
            e.message
                .contains("'random_distribution=<reads>,<writes>,'"),
            "{e}"
        );
        // Trim values equal to the defaults are fine; so are reads and writes only.
        let j = job(
            "rw=randtrim\nrandom_distribution=zipf:1.2,zipf:1.2,random\npercentage_random=100\n\
             bsrange=4k-8k,4k-8k,",
        );
        assert_eq!(j.trim, TrimMode::Only);
        // Sequential trims have no random offsets to shape.
        assert_eq!(
            job("rw=trim\nrandom_distribution=zipf:1.2\nba=8k").trim,
            TrimMode::Only
        );
        // Jobs that do not trim ignore trim fields, as fio does.
        assert_eq!(
            job("rw=randwrite\nbsrange=4k-8k,4k-8k,1m-2m").trim,
            TrimMode::None
        );
        // trimwrite trims the written blocks: a different trim value is an error.
        assert_err(
            "[j]\nrw=trimwrite\nbsrange=4k-8k,4k-8k,16k-32k\n",
            3,
            Some("bsrange"),
            "trims each block it writes",
        );
        assert_err(
            "[j]\nrw=trimwrite\nbssplit=4k/100,,8k/100\n",
            3,
            Some("bssplit"),
            needle,
        );
    }

    #[test]
    fn fsync_and_end_fsync() {
        assert_eq!((job("").fsync, job("").end_fsync), (0, false));
        assert_eq!(job("rw=randwrite\nfsync=32").fsync, 32);
        assert_eq!(job("fdatasync=8").fsync, 8);
        assert_eq!(job("fsync=32\nfsync=0").fsync, 0);
        assert!(job("end_fsync=1").end_fsync);
        assert!(job("end_fsync").end_fsync);
        assert!(job("fsync_on_close=1").end_fsync);
        assert!(!job("end_fsync=0\nfsync_on_close=0").end_fsync);
        // Inherited from [global]; a job can turn it off.
        let w = parse("[global]\nfsync=16\nend_fsync\n[a]\n[b]\nfsync=0\nend_fsync=0\n");
        assert_eq!((w.jobs[0].fsync, w.jobs[0].end_fsync), (16, true));
        assert_eq!((w.jobs[1].fsync, w.jobs[1].end_fsync), (0, false));
        assert_value_err("fsync=x", "fsync", "not a number");
        assert_value_err("fsync=4294967296", "fsync", "too large");
        assert_value_err("end_fsync=yes", "end_fsync", "expected 0, 1");
    }

    #[test]
    fn rates_per_direction() {
        let j = job("rate=1m,500k");
        assert_eq!(j.rate, [Some(MIB), Some(500 * KIB), Some(500 * KIB)]);
        assert_eq!(j.rate_iops, [None; 3]);
        assert_eq!(
            job("rate=,500k").rate,
            [None, Some(500 * KIB), Some(500 * KIB)]
        );
        assert_eq!(job("rate=500k,").rate, [Some(500 * KIB), None, None]);
        assert_eq!(
            job("rate=1m,2m,3m").rate,
            [Some(MIB), Some(2 * MIB), Some(3 * MIB)]
        );
        // 0 means no cap.
        assert_eq!(job("rate=0,1m").rate, [None, Some(MIB), Some(MIB)]);
        let j = job("rate_iops=1000,,200");
        assert_eq!(j.rate_iops, [Some(1000), None, Some(200)]);
        assert_eq!(j.rate_process, RateProcess::Linear);
        assert_eq!(
            job("rate_process=poisson").rate_process,
            RateProcess::Poisson
        );
        // A job keeps the [global] cap of a direction it leaves empty.
        let w = parse("[global]\nrate_iops=5000\n[a]\nrate_iops=,100\n");
        assert_eq!(w.jobs[0].rate_iops, [Some(5000), Some(100), Some(100)]);
        assert_value_err("rate=fast", "rate", "not a number");
        assert_value_err("rate=1m,2x", "rate", "(value for writes)");
        assert_value_err("rate_iops=1,2,3,4", "rate_iops", "at most 3");
        assert_value_err(
            "rate_process=burst",
            "rate_process",
            "expected linear or poisson",
        );
        // rate_min and friends are reported as ignored.
        let w = parse("[j]\nrate_min=1m\nrate_iops_min=100\nrate_cycle=500\n");
        let names: Vec<&str> = w.ignored.iter().map(|i| i.option.as_str()).collect();
        assert_eq!(names, ["rate_min", "rate_iops_min", "rate_cycle"]);
        assert!(w.ignored[0].reason.contains("reports the achieved rate"));
    }

    #[test]
    fn generator_options_of_replay_jobs_are_listed_as_ignored() {
        let dir = std::env::temp_dir().join(format!("ssdlab-fio-replay-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("tmp");
        std::fs::write(dir.join("x.log"), "fio version 3 iolog\n0 f add\n").expect("log");
        let text = "[j]\nread_iolog=x.log\nrw=randwrite\nbs=64k\nnumber_ios=10\nruntime=5\n";
        let w = parse_str(text, &dir.join("j.fio").display().to_string()).expect("parses");
        let names: Vec<&str> = w.ignored.iter().map(|i| i.option.as_str()).collect();
        assert_eq!(names, ["rw", "bs", "number_ios"]);
        assert_eq!(w.jobs[0].runtime, Some(Time::s(5)));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn loops_startdelay_exitall_and_host_only_options() {
        let w = parse(
            "[global]\ncpus_allowed=0-3\nrefill_buffers\npercentile_list=99:99.9\n\
             [j]\nrw=read\nloops=3\nstartdelay=250ms\nexitall\n",
        );
        let j = &w.jobs[0];
        assert_eq!((j.loops, j.startdelay, j.exitall), (3, Time::ms(250), true));
        let names: Vec<&str> = w.ignored.iter().map(|i| i.option.as_str()).collect();
        assert_eq!(names, ["cpus_allowed", "refill_buffers", "percentile_list"]);
        assert_value_err("loops=0", "loops", "at least 1");
        assert_value_err("startdelay=1-5", "startdelay", "range");
    }

    #[test]
    fn qualifiers_without_their_option_are_listed_as_ignored() {
        let w = parse("[j]\nrw=randread\nthinktime_blocks=4\nrate_process=poisson\n");
        let names: Vec<&str> = w.ignored.iter().map(|i| i.option.as_str()).collect();
        assert!(
            names.contains(&"thinktime_blocks") && names.contains(&"rate_process"),
            "{names:?}"
        );
        let w = parse("[j]\nrw=randread\nthinktime=10\nthinktime_blocks=4\nrate_iops=100\nrate_process=poisson\n");
        assert!(w.ignored.is_empty(), "{:?}", w.ignored);
    }

    #[test]
    fn think_time_units_and_options() {
        let j = job("");
        assert_eq!(
            (
                j.thinktime,
                j.thinktime_blocks,
                j.thinktime_blocks_issue,
                j.thinktime_iotime
            ),
            (Time::ZERO, 1, false, Time::ZERO)
        );
        // fio: thinktime defaults to microseconds, thinktime_iotime to seconds.
        assert_eq!(job("thinktime=10").thinktime, Time::us(10));
        assert_eq!(job("thinktime=10ms").thinktime, Time::ms(10));
        assert_eq!(job("thinktime=2s").thinktime, Time::s(2));
        assert_eq!(job("thinktime=250usec").thinktime, Time::us(250));
        assert_eq!(job("thinktime_iotime=9").thinktime_iotime, Time::s(9));
        assert_eq!(
            job("thinktime_iotime=500ms").thinktime_iotime,
            Time::ms(500)
        );
        let j = job("thinktime=1s\nthinktime_blocks=32\nthinktime_blocks_type=issue");
        assert_eq!(
            (j.thinktime, j.thinktime_blocks, j.thinktime_blocks_issue),
            (Time::s(1), 32, true)
        );
        assert!(!job("thinktime_blocks_type=complete").thinktime_blocks_issue);
        let w = parse("[j]\nthinktime=100\nthinktime_spin=50\n");
        assert_eq!(w.ignored[0].option, "thinktime_spin");
        assert!(w.ignored[0].reason.contains("thinktime is the total"));
        let e = assert_err(
            "[j]\nthinktime=1ns\n",
            2,
            Some("thinktime"),
            "unknown time unit",
        );
        assert!(e.message.contains("none (microseconds)"), "{e}");
        assert_value_err("thinktime_blocks=0", "thinktime_blocks", "at least 1");
        assert_value_err(
            "thinktime_blocks_type=submit",
            "thinktime_blocks_type",
            "expected complete or issue",
        );
        assert_value_err("thinktime_iotime=1.5s", "thinktime_iotime", "fractional");
    }

    #[test]
    fn groups_stonewall_new_group_and_wait_for() {
        let w = parse(
            "[a]\n[b]\nstonewall\n[c]\n[d]\nnew_group\n[e]\nwait_for=a\n[f]\nwait_for_previous\nnew_group\n",
        );
        let got: Vec<(&str, bool, Option<&str>, u32)> = w
            .jobs
            .iter()
            .map(|j| (j.name.as_str(), j.stonewall, j.wait_for.as_deref(), j.group))
            .collect();
        assert_eq!(
            got,
            [
                ("a", false, None, 0),
                ("b", true, None, 1),
                ("c", false, None, 1),
                ("d", false, None, 2),
                ("e", false, Some("a"), 2),
                ("f", true, None, 3),
            ]
        );
        // A first job with new_group stays in group 0; [global] flags apply to every job.
        let w = parse("[first]\nnew_group\n[global]\nstonewall\n[x]\n[y]\n");
        let groups: Vec<(bool, u32)> = w.jobs.iter().map(|j| (j.stonewall, j.group)).collect();
        assert_eq!(groups, [(false, 0), (true, 1), (true, 2)]);
        let w = parse("[global]\nnew_group\n[x]\n[y]\n[z]\nnew_group=0\n");
        let groups: Vec<u32> = w.jobs.iter().map(|j| j.group).collect();
        assert_eq!(groups, [0, 1, 1]);
        // wait_for errors name the wait_for line.
        assert_err(
            "[a]\nwait_for=b\n[b]\n",
            2,
            Some("wait_for"),
            "defined after it (line 3)",
        );
        assert_err(
            "[a]\n[b]\nwait_for=zz\n",
            3,
            Some("wait_for"),
            "no job has that name",
        );
        assert_err(
            "[a]\nwait_for=a\n",
            2,
            Some("wait_for"),
            "cannot wait for itself",
        );
        assert_err(
            "[a]\n[a]\n[b]\nwait_for=a\n",
            4,
            Some("wait_for"),
            "several jobs have that name (line 1, line 2)",
        );
        assert_err(
            "[a]\n[b]\nwait_for=a\n[a]\n",
            3,
            Some("wait_for"),
            "several jobs have that name (line 1, line 4)",
        );
        // From [global]: the global line is named, with the job.
        assert_err(
            "[a]\n[global]\nwait_for=a\n[a]\n",
            3,
            Some("wait_for"),
            "job 'a' cannot wait for itself",
        );
    }

    #[test]
    fn read_iolog_and_replay_options() {
        let dir = temp_dir("iolog");
        assert!(std::fs::create_dir_all(dir.join("logs")).is_ok());
        let log = dir.join("logs/app.iolog");
        write(
            &log,
            "fio version 3 iolog\n0 /dev/sda add\n0 /dev/sda open\n10 /dev/sda write 0 4096\n",
        );
        let main = dir.join("replay.fio");
        let w = ok(parse_at("[replay]\nread_iolog=logs/app.iolog\n", &main));
        assert_eq!(
            w.jobs[0].read_iolog,
            Some(TraceSpec {
                path: dir.join("logs/app.iolog"),
                format: Some(TraceFormat::FioIolog),
                replay: Replay::Open { speed: 1.0 },
                filter: TraceFilter::default(),
                remap: Remap::Wrap,
            })
        );
        // replay_time_scale=200 replays at twice the original rate.
        let w = ok(parse_at(
            "[r]\nreplay_time_scale=200\nread_iolog=logs/app.iolog\n[s]\nread_iolog=logs/app.iolog\nreplay_time_scale=50\n",
            &main,
        ));
        let replays: Vec<Option<Replay>> = w
            .jobs
            .iter()
            .map(|j| j.read_iolog.as_ref().map(|t| t.replay))
            .collect();
        assert_eq!(
            replays,
            [
                Some(Replay::Open { speed: 2.0 }),
                Some(Replay::Open { speed: 0.5 })
            ]
        );
        // replay_no_stall: closed loop at the job's final iodepth, from [global] too.
        let abs = log.display().to_string();
        let w = ok(parse_at(
            &format!(
                "[global]\nread_iolog={abs}\nreplay_no_stall=1\niodepth=4\n[r]\niodepth=16\nreplay_redirect=/dev/sdc\n[s]\n"
            ),
            &main,
        ));
        let t = w.jobs[0].read_iolog.as_ref();
        assert_eq!(t.map(|t| t.replay), Some(Replay::Closed { iodepth: 16 }));
        assert_eq!(t.map(|t| t.path.clone()), Some(log.clone()));
        assert_eq!(
            w.jobs[1].read_iolog.as_ref().map(|t| t.replay),
            Some(Replay::Closed { iodepth: 4 })
        );
        assert_eq!(w.ignored[0].option, "replay_redirect");
        // Replay options without an iolog are reported.
        let w = ok(parse_at("[r]\nreplay_no_stall=1\n", &main));
        assert_eq!(w.jobs[0].read_iolog, None);
        assert_eq!(w.ignored[0].option, "replay_no_stall");
        // Errors, located in the job file.
        let shown = main.display().to_string();
        let located = |text: &str, line: usize, option: &str, needle: &str| {
            let e = err(parse_at(text, &main));
            assert_eq!(
                (e.file.as_str(), e.line, e.option.as_deref()),
                (shown.as_str(), line, Some(option)),
                "{e}"
            );
            assert!(e.message.contains(needle), "{e}");
        };
        located(
            "[r]\nbs=4k\nread_iolog=logs/missing.iolog\n",
            3,
            "read_iolog",
            "does not exist",
        );
        located("[r]\nread_iolog=logs\n", 2, "read_iolog", "is not a file");
        located("[r]\nread_iolog=-\n", 2, "read_iolog", "stdin");
        located(
            "[r]\nread_iolog=a.log:b.log\n",
            2,
            "read_iolog",
            "several iolog files",
        );
        located(
            "[r]\nreplay_time_scale=0\n",
            2,
            "replay_time_scale",
            "at least 1",
        );
        located(
            "[r]\nreplay_scale=2\n",
            2,
            "replay_scale",
            "not supported yet",
        );
        located(
            "[r]\nreplay_align=4k\n",
            2,
            "replay_align",
            "not supported yet",
        );
        located(
            "[r]\nwrite_iolog=out.log\n",
            2,
            "write_iolog",
            "does not write fio iologs",
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A job file of tests/data/fio.
    fn data_file(name: &str) -> Workload {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/fio")
            .join(name);
        ok(parse_file(&path))
    }

    #[test]
    fn data_ssd_test_four_corners() {
        let w = data_file("ssd-test.fio");
        let got: Vec<(&str, RwPattern, bool, u32)> = w
            .jobs
            .iter()
            .map(|j| (j.name.as_str(), j.rw, j.stonewall, j.group))
            .collect();
        assert_eq!(
            got,
            [
                ("seq-read", pattern(false, 100), true, 0),
                ("rand-read", pattern(true, 100), true, 1),
                ("seq-write", pattern(false, 0), true, 2),
                ("rand-write", pattern(true, 0), true, 3),
            ]
        );
        for j in &w.jobs {
            assert_eq!((j.bs, j.block_sizes.clone(), j.iodepth), (4096, None, 4));
            assert_eq!(
                (j.size, j.runtime, j.time_based),
                (Some(10 * GIB), Some(Time::s(60)), true)
            );
            assert_eq!(
                (j.trim, j.fsync, j.wait_for.clone()),
                (TrimMode::None, 0, None)
            );
            assert_eq!(
                (j.rate, j.rate_iops, j.thinktime),
                ([None; 3], [None; 3], Time::ZERO)
            );
        }
        // ioengine, direct and filename come from the included nvme-common.inc.
        let ignored: Vec<&str> = w.ignored.iter().map(|i| i.option.as_str()).collect();
        assert_eq!(ignored, ["ioengine", "direct", "filename"]);
    }

    #[test]
    fn data_mixed_oltp_with_rate_and_thinktime() {
        let w = data_file("mixed-oltp.fio");
        assert_eq!(w.jobs.len(), 1);
        let j = &w.jobs[0];
        assert_eq!(j.name, "oltp-70-30");
        assert_eq!(j.rw, pattern(true, 70));
        assert_eq!((j.bs, j.numjobs, j.iodepth), (8 * KIB, 4, 32));
        assert_eq!(j.rate_iops, [Some(20_000), Some(8_000), Some(8_000)]);
        assert_eq!(j.rate, [None; 3]);
        assert_eq!(j.rate_process, RateProcess::Poisson);
        assert_eq!(
            (j.thinktime, j.thinktime_blocks, j.thinktime_blocks_issue),
            (Time::us(250), 64, true)
        );
        assert_eq!(j.thinktime_iotime, Time::ZERO);
        assert_eq!(
            (j.runtime, j.ramp_time, j.time_based),
            (Some(Time::s(120)), Time::s(10), true)
        );
        assert_eq!((j.group, j.stonewall), (0, false));
        let ignored: Vec<&str> = w.ignored.iter().map(|i| i.option.as_str()).collect();
        assert_eq!(
            ignored,
            [
                "ioengine",
                "direct",
                "thread",
                "group_reporting",
                "rate_min"
            ]
        );
    }

    #[test]
    fn data_hotspot_zoned_and_zipf() {
        let w = data_file("hotspot.fio");
        let names: Vec<&str> = w.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["zoned-reads", "zipf-writes", "zipf-mixed"]);
        let groups: Vec<u32> = w.jobs.iter().map(|j| j.group).collect();
        assert_eq!(groups, [0, 1, 1]);
        let zoned = Distribution::Zoned(vec![(60.0, 10.0), (30.0, 20.0), (10.0, 70.0)]);
        assert_eq!(w.jobs[0].rw, pattern(true, 100));
        assert_eq!(w.jobs[0].random_distribution, [zoned.clone(), zoned]);
        let zipf = Distribution::Zipf {
            theta: 1.2,
            center: None,
        };
        assert_eq!(w.jobs[1].rw, pattern(true, 0));
        assert_eq!(w.jobs[1].random_distribution, [zipf.clone(), zipf]);
        assert_eq!(w.jobs[1].randseed, Some(1234));
        let centred = Distribution::Zipf {
            theta: 1.2,
            center: Some(0.5),
        };
        assert_eq!(w.jobs[2].rw, pattern(true, 50));
        assert_eq!(w.jobs[2].random_distribution, [centred.clone(), centred]);
        for j in &w.jobs {
            assert_eq!((j.bs, j.iodepth, j.size), (4096, 16, Some(64 * GIB)));
            assert_eq!((j.runtime, j.time_based), (Some(Time::s(300)), true));
            assert!(j.norandommap && !j.randrepeat && !j.stonewall);
            assert_eq!(j.randseed.is_some(), j.name == "zipf-writes");
        }
    }

    #[test]
    fn data_trim_phases_with_ordering_and_fsync() {
        let w = data_file("trim-phases.fio");
        let got: Vec<(&str, bool, Option<&str>, u32)> = w
            .jobs
            .iter()
            .map(|j| (j.name.as_str(), j.stonewall, j.wait_for.as_deref(), j.group))
            .collect();
        assert_eq!(
            got,
            [
                ("precondition", false, None, 0),
                ("trim-phase", true, None, 1),
                ("post-trim-write", false, Some("trim-phase"), 1),
                ("reader", false, Some("precondition"), 2),
            ]
        );
        let [pre, trim, post, reader] = &w.jobs[..] else {
            panic!("expected 4 jobs, got {}", w.jobs.len());
        };
        assert_eq!(
            (pre.rw, pre.bs, pre.iodepth, pre.trim),
            (pattern(false, 0), 128 * KIB, 16, TrimMode::None)
        );
        assert_eq!(
            (
                trim.rw,
                trim.trim,
                trim.bs,
                trim.trim_bs,
                trim.block_sizes.clone()
            ),
            (pattern(true, 0), TrimMode::Only, 256 * KIB, 256 * KIB, None)
        );
        assert_eq!((trim.iodepth, trim.io_size), (8, Some(16 * GIB)));
        assert_eq!(
            (post.rw, post.bs, post.iodepth, post.fsync, post.end_fsync),
            (pattern(true, 0), 4096, 32, 32, true)
        );
        assert_eq!((post.runtime, post.time_based), (Some(Time::s(60)), true));
        assert_eq!(
            (reader.rw, reader.iodepth, reader.rate),
            (pattern(true, 100), 4, [Some(200 * MIB); 3])
        );
        for j in &w.jobs {
            assert_eq!(j.size, Some(32 * GIB));
            assert_eq!(j.read_iolog, None);
            assert_eq!(j.end_fsync, j.name == "post-trim-write");
        }
    }
}
