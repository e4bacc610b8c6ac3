//! Building the [`JobSpec`]s: each finished section's options are applied
//! in order (a global section then updates the defaults of the sections
//! below it); a job's pattern, block sizes, trims, flushes and replay are
//! resolved, options that end up without effect are listed, reporting groups
//! are numbered, and `wait_for` references are checked at the end.

use super::grammar::{error, Loc, Pending};
use super::options::{apply, ignore, ignored_reason, Section, Settings};
use super::values::{KbBase, RwKind, RwModifier};
use crate::units::Time;
use crate::workload::trace::{Remap, TraceFilter, TraceFormat};
use crate::workload::{
    BlockSize, Distribution, IgnoredOption, JobSpec, RateProcess, Replay, RwPattern, SteadyState,
    TraceSpec, TrimMode, Workload, WorkloadError,
};

/// fio engines that do not drive a block device: a job with one cannot run
/// against a simulated drive.
const NON_BLOCK_ENGINES: &[&str] = &[
    "net",
    "netsplice",
    "rdma",
    "http",
    "rados",
    "gfapi",
    "gfapi_async",
    "libhdfs",
    "nfs",
    "filecreate",
    "filestat",
    "filedelete",
    "dircreate",
    "dirstat",
    "dirdelete",
    "falloc",
    "ftruncate",
    "e4defrag",
    "exec",
    "cpuio",
];

/// Refuse an engine that does not drive a block device (others are the
/// simulator's business and listed as ignored).
fn check_engine(v: Option<&str>) -> Result<(), String> {
    let engine = v.unwrap_or("").trim();
    if NON_BLOCK_ENGINES.contains(&engine) {
        return Err(format!(
            "ioengine={engine} does not drive a block device; ssdlab simulates an NVMe drive \
             under block I/O (use a block engine such as libaio, io_uring or psync, or remove \
             the option)"
        ));
    }
    Ok(())
}

/// The jobs read so far, and the defaults the global sections set for the
/// jobs below them.
#[derive(Default)]
pub(super) struct Jobs {
    /// The defaults set by the global sections read so far.
    global: Settings,
    /// The jobs emitted so far and the ignored options listed so far.
    workload: Workload,
    /// Reporting group of the last job.
    group: u32,
    /// Header of each job in `workload.jobs`.
    job_headers: Vec<Loc>,
    /// Jobs with `wait_for=` (index, where it was set), checked at the end.
    waits: Vec<(usize, Loc)>,
}

impl Jobs {
    /// Apply the options of a finished section in order (`kb`: its
    /// `kb_base`, if given, which covers the whole section): a global
    /// section updates the defaults, a job is emitted.
    pub(super) fn section(
        &mut self,
        pending: Pending,
        kb: Option<KbBase>,
    ) -> Result<(), WorkloadError> {
        let mut section = Section {
            job_name: pending.job_name,
            settings: self.global.clone(),
            rwmix_set: None,
        };
        if let Some(kb) = kb {
            section.settings.kb = kb;
        }
        for e in &pending.entries {
            if e.at.key == "kb_base" {
                continue;
            }
            if let Some(reason) = ignored_reason(&e.at.key) {
                if e.at.key == "ioengine" {
                    check_engine(e.value.as_deref()).map_err(|m| e.at.err(m))?;
                }
                if e.at.key == "group_reporting"
                    && !super::values::parse_flag(e.value.as_deref()).map_err(|m| e.at.err(m))?
                {
                    // fio reads group_reporting=0 as off (the default).
                    continue;
                }
                if e.at.key == "filename" {
                    // Used by systems of several drives (see JobSpec::filename).
                    section.settings.spec.filename = e.value.clone();
                }
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
        match (s.ss, &s.ss_dur) {
            (Some((iops, slope, limit, pct)), Some((dur_s, at))) => {
                let interval_s = s.ss_interval.as_ref().map_or(1, |i| i.0);
                if *dur_s % interval_s != 0 || *dur_s < interval_s {
                    let at = s.ss_interval.as_ref().map_or(at, |i| &i.1);
                    return Err(at.err(format!(
                        "job '{}': ss_dur ({dur_s} s) must be a whole number of ss_interval ({interval_s} s) samples",
                        spec.name
                    )));
                }
                spec.steadystate = Some(SteadyState {
                    iops,
                    slope,
                    limit,
                    pct,
                    dur_s: *dur_s,
                    ramp: s.ss_ramp,
                    interval_s,
                });
            }
            (None, Some((_, at))) => {
                return Err(at.err(format!(
                    "job '{}': steady-state detection needs its criterion too: add ss=CRITERION:LIMIT (e.g. ss=iops:10%)",
                    spec.name
                )));
            }
            (Some(_), None) => ignore(
                &mut self.workload.ignored,
                "steadystate",
                "no steadystate_duration/ss_dur is set, so (as in fio) detection is off",
            ),
            (None, None) => {
                if s.ss_ramp > Time::ZERO {
                    ignore(
                        &mut self.workload.ignored,
                        "steadystate_ramp_time",
                        "no steadystate_duration/ss_dur is set, so (as in fio) it has no effect",
                    );
                }
            }
        }
        {
            use crate::workload::{VerifyMethod, VerifySpec};
            let vo = &s.verify;
            // fio: verify_pattern without verify= means verify=pattern_hdr.
            let method = match &vo.method {
                Some((m, _)) => *m,
                None if vo.pattern.is_some() => Some(VerifyMethod::PatternHdr),
                None => None,
            };
            match method {
                Some(m) => {
                    if matches!(m, VerifyMethod::Pattern | VerifyMethod::PatternHdr)
                        && vo.pattern.is_none()
                    {
                        let at = vo.method.as_ref().map(|(_, at)| at.clone());
                        let msg = format!(
                            "job '{}': verify={} checks a pattern: give it with verify_pattern= (e.g. verify_pattern=0xdeadbeef)",
                            spec.name,
                            m.name()
                        );
                        return Err(match at {
                            Some(at) => at.err(msg),
                            None => crate::workload::WorkloadError {
                                file: String::new(),
                                line: 0,
                                option: Some("verify".into()),
                                message: msg,
                            },
                        });
                    }
                    spec.verify = Some(VerifySpec {
                        method: m,
                        interval: vo.interval,
                        pattern: vo.pattern.clone(),
                        do_verify: vo.do_verify,
                        verify_only: vo.verify_only,
                        backlog: vo.backlog,
                        batch: vo.batch,
                        fatal: vo.fatal,
                    });
                }
                None => {
                    for k in &vo.given {
                        ignore(
                            &mut self.workload.ignored,
                            k,
                            "no verify is set, so (as in fio) it has no effect",
                        );
                    }
                }
            }
        }
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
        if spec.rate_process == RateProcess::Poisson
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

    /// End of input (after the last section of `top_file`, the file given
    /// to [`parse_str`](super::parse_str)): check the job references.
    pub(super) fn finish(self, top_file: &str) -> Result<Workload, WorkloadError> {
        if self.workload.jobs.is_empty() {
            return Err(error(
                top_file,
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

#[cfg(test)]
mod tests {
    use super::super::parse_str;
    use super::*;
    use crate::workload::fio::test_util::*;

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
        assert_eq!(ignored, ["ioengine", "filename"]);
        assert_eq!(w.ignored[0].reason, "the simulator is the I/O engine");
        assert_eq!(w.ignored[1].reason, "the simulated drive is the target");
        assert!(w.jobs.iter().all(|j| j.direct));
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
        assert_eq!(w.ignored.len(), 2); // ioengine, group_reporting (direct=1 applies)
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
        assert_eq!(job("rw=trim:1m").seq_skip, MIB as i64);
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
}
