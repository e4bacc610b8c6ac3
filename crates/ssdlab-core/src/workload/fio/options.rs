//! Option semantics: what each supported option sets in a section's
//! [`Settings`] (most of them fields of its [`JobSpec`]), the lists of
//! supported options, and the options accepted but ignored, with the reason.

use super::grammar::{relative_to, Loc};
pub(super) use super::ignored::{ignore, ignored_reason};
use super::values::{
    parse_bsrange, parse_bssplit, parse_count, parse_distribution, parse_flag, parse_int, parse_rw,
    parse_rw_modifier, parse_size, parse_time, parse_time_unit, per_dir, KbBase, RwKind,
    RwModifier, PS_PER_US,
};
pub(super) use super::verify_opts::VerifyOptions;
use super::verify_opts::{parse_pattern, parse_verify_method};
use crate::units::Time;
use crate::workload::trace::{TraceFilter, TraceFormat};
use crate::workload::{Distribution, JobSpec, RateProcess, Sequencer};
use std::path::PathBuf;

/// Options that are parsed and applied to [`JobSpec`] (aliases included).
const SUPPORTED: &str = "rw/readwrite (with ':N' modifier), rw_sequencer, rwmixread, rwmixwrite, \
     bs/blocksize, bsrange/blocksize_range, bssplit, blockalign/ba, iodepth, numjobs, size, \
     offset/fileoffset, io_size/io_limit, number_ios, runtime/timeout, time_based, ramp_time, \
     randseed, randrepeat, norandommap, percentage_random, percentage_sequential, \
     random_distribution, kb_base, fsync, fdatasync, end_fsync, fsync_on_close, direct, buffered, \
     rate, rate_iops, \
     rate_process, thinktime, thinktime_blocks, thinktime_blocks_type, thinktime_iotime, \
     stonewall/wait_for_previous, new_group, wait_for, steadystate/ss, steadystate_duration/ss_dur, \
     steadystate_ramp_time/ss_ramp, steadystate_check_interval/ss_interval, read_iolog, replay_no_stall, \
     replay_time_scale, loops, startdelay, exitall, include, ssdlab_trace (+ ssdlab_trace_format, ssdlab_replay, \
     ssdlab_trace_speed, ssdlab_trace_device, ssdlab_trace_start, ssdlab_trace_end, \
     ssdlab_trace_remap), ssdlab_sq_priority, ssdlab_pattern, ssdlab_hot_space, \
     ssdlab_hot_access, ssdlab_lru_reuse, ssdlab_lru_mean, verify, verify_pattern, \
     verify_interval, do_verify, verify_only, verify_backlog, verify_backlog_batch, verify_fatal, \
     buffer_pattern, zero_buffers";

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
    "steadystate",
    "ss",
    "steadystate_duration",
    "ss_dur",
    "steadystate_ramp_time",
    "ss_ramp",
    "steadystate_check_interval",
    "ss_interval",
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
    "verify",
    "verify_pattern",
    "verify_interval",
    "verify_backlog",
    "verify_backlog_batch",
    "buffer_pattern",
];

/// Trim-direction values of the per-direction options other than `bs`,
/// with where each was last set (checked when the job trims).
#[derive(Debug, Clone, Default)]
pub(super) struct TrimFields {
    pub(super) bsrange: Option<((u64, u64), Loc)>,
    pub(super) bssplit: Option<(Vec<(u64, f64)>, Loc)>,
    pub(super) blockalign: Option<(u64, Loc)>,
    pub(super) percentage_random: Option<(u32, Loc)>,
    pub(super) random_distribution: Option<(Distribution, Loc)>,
}

/// Option values of a `[global]` or job section.
#[derive(Debug, Clone)]
pub(super) struct Settings {
    /// Everything except `rw` (and `name`, which comes from the section).
    pub(super) spec: JobSpec,
    /// `rw=`; fio's default is `read`.
    pub(super) rw: RwKind,
    /// Read percentage from `rwmixread=`/`rwmixwrite=`; applies to mixed `rw` only.
    pub(super) rwmix_read: Option<u32>,
    /// The `:N` suffix of `rw=`.
    pub(super) rw_mod: RwModifier,
    /// `kb_base=`.
    pub(super) kb: KbBase,
    /// `bs=` per direction (read, write, trim).
    pub(super) bs: [u64; 3],
    /// `bsrange=` per direction.
    pub(super) bsrange: [Option<(u64, u64)>; 2],
    /// `bssplit=` per direction.
    pub(super) bssplit: [Option<Vec<(u64, f64)>>; 2],
    /// Trim fields of the other per-direction options.
    pub(super) trim_fields: TrimFields,
    /// `new_group`.
    pub(super) new_group: bool,
    /// `end_fsync=`.
    pub(super) end_fsync: bool,
    /// `fsync_on_close=`.
    pub(super) fsync_on_close: bool,
    /// Where `wait_for=` was set.
    pub(super) wait_for_at: Option<Loc>,
    /// `read_iolog=`, resolved against the job file's directory.
    pub(super) read_iolog: Option<PathBuf>,
    /// `replay_no_stall=`.
    pub(super) replay_no_stall: bool,
    /// `replay_time_scale=` (percent; default 100).
    pub(super) replay_time_scale: u32,
    /// A replay option given (reported as ignored if there is no `read_iolog`).
    pub(super) replay_option: Option<String>,
    /// `ssdlab_trace=` and its options: a block trace as the job's I/O.
    pub(super) trace: TraceOptions,
    /// `thinktime_blocks=` was given (fio ignores the blocks count when only
    /// `thinktime_iotime` is set).
    pub(super) thinktime_blocks_set: bool,
    /// `steadystate=`/`ss=`: (iops, slope, limit, percent).
    pub(super) ss: Option<(bool, bool, f64, bool)>,
    /// `steadystate_duration=`/`ss_dur=` (whole seconds) and where it was set.
    pub(super) ss_dur: Option<(u32, Loc)>,
    /// `steadystate_ramp_time=`/`ss_ramp=`.
    pub(super) ss_ramp: Time,
    /// `steadystate_check_interval=`/`ss_interval=` (whole seconds) and where it was set.
    pub(super) ss_interval: Option<(u32, Loc)>,
    /// fio's verify options as given.
    pub(super) verify: VerifyOptions,
}

/// `ssdlab_trace=FILE` and `ssdlab_trace_*` (ssdlab options fio ignores):
/// replay a block trace of any supported format as a job, with the options
/// of `ssdlab run --trace`.
#[derive(Debug, Clone, Default)]
pub(super) struct TraceOptions {
    /// The trace and where `ssdlab_trace=` was set.
    pub(super) path: Option<(PathBuf, Loc)>,
    pub(super) format: Option<TraceFormat>,
    /// `ssdlab_replay=closed` (as fast as `iodepth` allows) rather than open (trace times).
    pub(super) closed: bool,
    pub(super) speed: Option<f64>,
    pub(super) filter: TraceFilter,
    pub(super) scale: bool,
    /// The first `ssdlab_trace_*`/`ssdlab_replay` option given (an error without `ssdlab_trace`).
    pub(super) option: Option<Loc>,
    /// Where `ssdlab_trace_speed` was set.
    pub(super) speed_at: Option<Loc>,
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
            ss: None,
            ss_dur: None,
            ss_ramp: Time::ZERO,
            ss_interval: None,
            verify: VerifyOptions::default(),
        }
    }
}

/// A section being applied.
pub(super) struct Section {
    /// `None` for a global section.
    pub(super) job_name: Option<String>,
    pub(super) settings: Settings,
    /// First `rwmixread=`/`rwmixwrite=` of this section and its read %, to
    /// reject contradictory pairs whatever their order.
    pub(super) rwmix_set: Option<(Loc, u32)>,
}

/// Apply one supported option to `section`; the error is the message only.
pub(super) fn apply(section: &mut Section, at: &Loc, value: Option<&str>) -> Result<(), String> {
    let key = at.key.as_str();
    let s = &mut section.settings;
    match key {
        "time_based" => s.spec.time_based = parse_flag(value)?,
        "norandommap" => s.spec.norandommap = parse_flag(value)?,
        "ssdlab_pattern" => {
            use crate::workload::LocalityPattern as P;
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
                "urgent" => crate::workload::SqPriority::Urgent,
                "high" => crate::workload::SqPriority::High,
                "medium" => crate::workload::SqPriority::Medium,
                "low" => crate::workload::SqPriority::Low,
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
        "direct" => s.spec.direct = parse_flag(value)?,
        "do_verify" | "verify_only" | "verify_fatal" => {
            let f = parse_flag(value)?;
            match key {
                "do_verify" => s.verify.do_verify = f,
                "verify_only" => s.verify.verify_only = f,
                _ => s.verify.fatal = f,
            }
            s.verify.given.push(key.to_string());
        }
        "zero_buffers" => {
            if parse_flag(value)? {
                s.spec.buffer = crate::workload::BufferFill::Zero;
            }
        }
        "zonemode"
        | "zonesize"
        | "zonecapacity"
        | "zonerange"
        | "zoneskip"
        | "read_beyond_wp"
        | "max_open_zones"
        | "job_max_open_zones"
        | "ignore_zone_limits"
        | "zone_reset_threshold"
        | "zone_reset_frequency"
        | "recover_zbd_write_error"
        | "write_zone_remainder" => {
            return Err(
                "zoned block devices (ZNS, zonemode) are not modelled: the simulated drive \
                 exposes one conventional namespace"
                    .into(),
            )
        }
        "fdp" | "dataplacement" | "plid_select" | "plids" | "dp_scheme" | "write_hint" => {
            return Err(
                "NVMe data placement (FDP, streams, write hints) is not modelled yet: the FTL \
                 places every write the same way"
                    .into(),
            )
        }
        "latency_target" | "latency_window" | "latency_percentile" | "latency_run"
        | "max_latency" => {
            return Err(
                "fio's latency-target profiling (searching the queue depth that meets a \
                 latency) is not modelled yet; sweep iodepth instead"
                    .into(),
            )
        }
        "flow" | "flow_id" | "flow_watermark" | "flow_sleep" => {
            return Err(
                "fio's flow control between jobs is not modelled yet; use rate or thinktime".into(),
            )
        }
        "verify_offset"
        | "verify_pattern_interval"
        | "verify_state_save"
        | "verify_state_load"
        | "verify_header_seed"
        | "verify_write_sequence"
        | "experimental_verify"
        | "trim_verify_zero"
        | "trim_percentage"
        | "trim_backlog"
        | "trim_backlog_batch" => {
            return Err(format!(
                "{key} is not supported yet (ssdlab's verify covers verify, verify_pattern, \
                 verify_interval, do_verify, verify_only, verify_backlog, verify_backlog_batch \
                 and verify_fatal)"
            ))
        }
        "buffered" => s.spec.direct = !parse_flag(value)?,
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
        "nrfiles" | "filesize" | "openfiles" | "file_append" | "create_only" => {
            return Err(
                "a file-level option: files need a file system, which ssdlab does not model \
                 (a job addresses the simulated drive as a block device)"
                    .into(),
            )
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
        "steadystate" | "ss" => st.ss = Some(parse_steadystate(v)?),
        "steadystate_duration" | "ss_dur" => {
            let t = parse_time(v)?;
            let s = t.0 / 1_000_000_000_000;
            if s * 1_000_000_000_000 != t.0 {
                return Err(format!(
                    "'{v}': fio samples steady state once a second; give whole seconds"
                ));
            }
            let s = u32::try_from(s).map_err(|_| format!("'{v}' is too long"))?;
            st.ss_dur = (s > 0).then(|| (s, at.clone()));
        }
        "steadystate_ramp_time" | "ss_ramp" => st.ss_ramp = parse_time(v)?,
        "steadystate_check_interval" | "ss_interval" => {
            let t = parse_time(v)?;
            let s = t.0 / 1_000_000_000_000;
            if s == 0 || s * 1_000_000_000_000 != t.0 {
                // fio divides by the interval in whole seconds.
                return Err(format!(
                    "'{v}': fio samples steady state at whole seconds; give at least 1s"
                ));
            }
            let s = u32::try_from(s).map_err(|_| format!("'{v}' is too long"))?;
            st.ss_interval = Some((s, at.clone()));
        }
        "verify" => st.verify.method = Some((parse_verify_method(v)?, at.clone())),
        "verify_pattern" => {
            st.verify.pattern = Some(parse_pattern(v)?);
            st.verify.given.push(key.to_string());
        }
        "buffer_pattern" => spec.buffer = crate::workload::BufferFill::Pattern(parse_pattern(v)?),
        "verify_interval" => {
            let n = parse_size(v, kb)?;
            if n == 0 {
                return Err("must be at least 1 byte".into());
            }
            st.verify.interval = Some(n);
            st.verify.given.push(key.to_string());
        }
        "verify_backlog" | "verify_backlog_batch" => {
            let n = parse_int(v, kb)?;
            if key == "verify_backlog" {
                st.verify.backlog = n;
            } else {
                st.verify.batch = n;
            }
            st.verify.given.push(key.to_string());
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

/// `iops:10%`, `iops_slope:0.3%`, `bw:20000000`, `bw_slope:1%` (fio's
/// `steadystate=` criteria): (iops, slope, limit, percent).
fn parse_steadystate(v: &str) -> Result<(bool, bool, f64, bool), String> {
    let Some((crit, limit)) = v.split_once(':') else {
        return Err(format!(
            "'{v}': give CRITERION:LIMIT, e.g. iops:10% or bw_slope:1% (fio requires the limit)"
        ));
    };
    let (iops, slope) = match crit.trim() {
        "iops" => (true, false),
        "iops_slope" => (true, true),
        "bw" => (false, false),
        "bw_slope" => (false, true),
        o => {
            return Err(format!(
                "unknown criterion '{o}'; expected iops, iops_slope, bw or bw_slope"
            ))
        }
    };
    let limit = limit.trim();
    let (num, pct) = match limit.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (limit, false),
    };
    let x: f64 = num
        .parse()
        .map_err(|_| format!("'{limit}': the limit must be a number, optionally with '%'"))?;
    if !x.is_finite() || x < 0.0 {
        return Err(format!(
            "'{limit}': the limit must be a non-negative number"
        ));
    }
    Ok((iops, slope, x, pct))
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

#[cfg(test)]
mod tests {
    use super::super::parse_str;
    use super::*;
    use crate::workload::fio::test_util::*;
    use crate::workload::BlockSize;

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
    fn zero_means_unset_as_in_fio() {
        let j = job("size=0\nio_size=0\nruntime=0");
        assert_eq!((j.size, j.io_size, j.runtime), (None, None, None));
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

    /// Issue 18's grammar: options fio accepts get fio's meaning or a
    /// reason in the right category.
    #[test]
    fn engines_files_and_flag_values_as_fio_reads_them() {
        // A flag given 0 is off, as fio's parser reads it.
        let w = parse_str("[global]\ngroup_reporting=0\n[a]\n", "g.fio").unwrap();
        assert!(!crate::fio_output::group_reporting(&w));
        let w = parse_str("[global]\ngroup_reporting=1\n[a]\n", "g.fio").unwrap();
        assert!(crate::fio_output::group_reporting(&w));
        let w = parse_str("[a]\nnorandommap=0\ntime_based=0\nruntime=5\n", "g.fio").unwrap();
        assert!(!w.jobs[0].norandommap && !w.jobs[0].time_based);
        // Accepted with a reason: engine details the drive cannot see.
        let w = parse_str(
            "[a]\nioengine=io_uring_cmd\ncmd_type=nvme\nio_submit_mode=offload\n\
             random_generator=tausworthe64\nratemin=1m\n",
            "g.fio",
        )
        .unwrap();
        for k in [
            "ioengine",
            "cmd_type",
            "io_submit_mode",
            "random_generator",
            "ratemin",
        ] {
            let i = w
                .ignored
                .iter()
                .find(|i| i.option == k)
                .unwrap_or_else(|| panic!("{k}"));
            assert!(!i.reason.is_empty());
        }
        // Refused with the reason a user understands.
        let e = parse_str("[a]\nioengine=http\n", "g.fio").unwrap_err();
        assert_eq!((e.line, e.option.as_deref()), (2, Some("ioengine")));
        assert!(e.message.contains("does not drive a block device"), "{e}");
        for opt in ["nrfiles=4", "filesize=1g"] {
            let e = parse_str(&format!("[a]\n{opt}\n"), "g.fio").unwrap_err();
            assert!(e.message.contains("file system"), "{opt}: {e}");
        }
    }

    #[test]
    fn option_families_are_refused_or_ignored_with_their_reason() {
        for (opt, needle) in [
            ("zonemode=zbd", "zoned block devices"),
            ("write_hint=short", "data placement"),
            ("latency_target=1ms", "latency-target"),
            ("flow=2", "flow control"),
        ] {
            let key = opt.split('=').next().unwrap_or(opt);
            assert_value_err(opt, key, needle);
        }
        let w = parse_str("[j]\nlog_entries=1024\ncgroup=x\nexec_prerun=ls\n", "g.fio").unwrap();
        let names: Vec<&str> = w.ignored.iter().map(|i| i.option.as_str()).collect();
        assert_eq!(names, ["log_entries", "cgroup", "exec_prerun"]);
    }

    #[test]
    fn unsupported_option_is_an_error() {
        let e = assert_err(
            "[global]\nbs=4k\n\n[j]\nrw=randread\nmysterious=1\n",
            6,
            Some("mysterious"),
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
    fn blockalign_modifiers_and_sequencer() {
        let j = job("blockalign=8k");
        assert_eq!(j.blockalign, [Some(8 * KIB), Some(8 * KIB)]);
        assert_eq!(job("ba=,16k").blockalign, [None, Some(16 * KIB)]);
        assert_value_err("ba=0", "ba", "greater than 0");
        let j = job("rw=write:4k");
        assert_eq!(
            (j.rw, j.seq_skip, j.offset_repeat),
            (pattern(false, 0), 4 * KIB as i64, 1)
        );
        // fio: a negative skip steps back.
        assert_eq!(job("rw=read:-8k").seq_skip, -8 * KIB as i64);
        assert_value_err("rw=read:-x", "rw", "negative: step back");
        let j = job("rw=randread:8\nrw_sequencer=identical");
        assert_eq!(
            (j.rw, j.seq_skip, j.offset_repeat),
            (pattern(true, 100), 0, 8)
        );
        assert_eq!(j.rw_sequencer, Sequencer::Identical);
        assert_eq!(job("rw=randread").rw_sequencer, Sequencer::Sequential);
        // A later rw= without a modifier drops it.
        let w = parse("[global]\nrw=read:64k\n[a]\n[b]\nrw=read\n");
        assert_eq!(
            (w.jobs[0].seq_skip, w.jobs[1].seq_skip),
            (64 * KIB as i64, 0)
        );
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
}
