//! The host: jobs and their generators, one NVMe queue pair per job clone
//! (or the trace replay's), driver submit/complete costs on the host CPU,
//! pacing (rate caps, think time), job ordering (`stonewall`, `wait_for`,
//! `startdelay`, `exitall`), and the per-direction and per-job statistics.
//!
//! The host hands each command to a drive as a [`Submission`] (through the
//! `Drives` door the event loop gives it) and learns of its completion from
//! an [`Event::HostDone`]; it never sees the drive's internals.

pub mod buffered;
pub(crate) mod config;
mod data;
pub(crate) mod live;
pub(crate) mod pagecache;
pub(crate) mod queue;
pub mod steady;
pub(crate) mod trace_feed;
pub mod verify;

use crate::config::{logical_units, Device, HostConfig};
use crate::device::nvme::QueueClass;
use crate::engine::{EventQueue, FifoServer};
use crate::events::Event;
use crate::stats::{DirStats, Sampler};
use crate::system::SimError;
use crate::units::Time;
use crate::workload::gen::{Io, JobGen};
use crate::workload::pacing::Pacer;
use crate::workload::{Op, Replay, SqPriority, Workload, WorkloadError};
use data::{check_verify, verify_overlap_risk, VerifyNext};
use queue::{HostQueue, JobRun, Source};
use trace_feed::trace_source;

/// A command the host puts on a drive's submission queue.
#[derive(Debug, Clone, Copy)]
pub struct Submission {
    /// Command id (the host's; reused once the command completes).
    pub cmd: u32,
    /// Drive.
    pub d: u16,
    /// Submission queue on that drive.
    pub q: u32,
    /// Operation.
    pub op: Op,
    /// First mapping unit.
    pub lpn: u32,
    /// Mapping units.
    pub nlpn: u32,
    /// 512 B sectors of the first unit before the data starts (sub-unit I/O).
    pub head: u8,
    /// 512 B sectors of the last unit after the data ends.
    pub tail: u8,
    /// When the driver rings the doorbell (after its submit cost).
    pub ready: Time,
}

/// The drives as the host sees them: where a command goes.
pub(crate) trait Drives {
    /// A command for `lpn` is about to be submitted to drive `d` (a hint: no
    /// timing, no state).
    fn hint(&mut self, d: u16, lpn: u32);
    /// Would hints to drive `d` prefetch anything (its mapping table is
    /// held as a dense array)? The host peeks at its next I/Os only then.
    fn hints_pay(&self, d: u16) -> bool;
    /// Put `sub` on its drive's submission queue and ring the doorbell.
    fn submit(&mut self, eq: &mut EventQueue<Event>, sub: Submission);
    /// The data a write to drive `d` carries, at byte `offset` (the
    /// functional data store; called only when the run keeps data).
    fn write_data(&mut self, d: u16, offset: u64, data: &[u8]) -> Result<(), String>;
    /// The data drive `d` holds at byte `offset`, into `buf`.
    fn read_data(&mut self, d: u16, offset: u64, buf: &mut [u8]) -> Result<(), String>;
    /// `len` bytes at `offset` of drive `d` are deallocated.
    fn trim_data(&mut self, d: u16, offset: u64, len: u64) -> Result<(), String>;
}

/// A job whose next I/Os' LPNs are known ahead ([`JobGen::peek_lpns`])
/// hints this many at once, every this many I/Os (16: +4.6 % steady random
/// writes on the 960 GB preset by ratio, profile-guided; 32 was slower
/// than 16, 8 about the same: docs/performance.md).
const AHEAD: u64 = 16;

/// Hint the drive the mapping entries of a job's next [`AHEAD`] I/Os
/// together, so the page walks of those random accesses overlap instead
/// of each stalling alone at its own submission. Only for a job on one
/// drive whose table a hint can prefetch; hints change no result.
#[inline]
fn hint_ahead<S: Drives>(g: &JobGen, targets: &[(u16, u32)], submit: &mut S) {
    let [(d, _)] = *targets else {
        return;
    };
    if !submit.hints_pay(d) {
        return;
    }
    let mut ahead = [0u32; AHEAD as usize];
    let n = g.peek_lpns(&mut ahead);
    for &l in &ahead[..n] {
        submit.hint(d, l);
    }
}

/// What the host knows of one drive: the name jobs address it by, and its description.
#[derive(Clone, Copy)]
pub struct DriveView<'a> {
    /// Name (`nvme0`).
    pub name: &'a str,
    /// The device.
    pub dev: &'a Device,
}

/// The drives a job addresses: all of a one-drive system; on several, the
/// `:`-separated names in `filename=` (`nvme0`, or `/dev/nvme0n1`).
fn targets_of(
    job: &crate::workload::JobSpec,
    drives: &[DriveView<'_>],
    file: &str,
) -> Result<Vec<usize>, SimError> {
    if drives.len() == 1 {
        return Ok(vec![0]);
    }
    let names = || drives.iter().map(|d| d.name).collect::<Vec<_>>().join(", ");
    let Some(f) = job.filename.as_deref().filter(|f| !f.trim().is_empty()) else {
        return Err(werr(
            file,
            Some("filename"),
            format!(
                "job '{}': this system has {} drives ({}); say which with filename= (a drive name or /dev/NAMEn1, several joined by ':')",
                job.name,
                drives.len(),
                names()
            ),
        ));
    };
    let mut out = Vec::new();
    for part in f.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let n = part.strip_prefix("/dev/").unwrap_or(part);
        let by_name = |n: &str| drives.iter().position(|d| d.name == n);
        // `/dev/nvme0n1` names namespace 1 of nvme0.
        let ns_stripped = n
            .rfind('n')
            .filter(|&i| i > 0 && n[i + 1..].chars().all(|c| c.is_ascii_digit()) && i + 1 < n.len())
            .map(|i| &n[..i]);
        match by_name(n).or_else(|| ns_stripped.and_then(by_name)) {
            Some(i) if !out.contains(&i) => out.push(i),
            Some(_) => {}
            None => {
                return Err(werr(
                    file,
                    Some("filename"),
                    format!(
                        "job '{}': '{part}' names no drive of this system (drives: {})",
                        job.name,
                        names()
                    ),
                ))
            }
        }
    }
    if out.is_empty() {
        return Err(werr(
            file,
            Some("filename"),
            format!(
                "job '{}': filename names no drive (drives: {})",
                job.name,
                names()
            ),
        ));
    }
    Ok(out)
}

/// What the host keeps of a command in flight (or of a buffered
/// application I/O).
#[derive(Debug, Clone, Copy)]
pub(crate) struct HostCmd {
    q: u32,
    d: u16,
    op: Op,
    nlpn: u32,
    submit: Time,
    /// When the submission reached the doorbell (end of the host submit cost).
    issued: Time,
    measured: bool,
    /// The page cache's block request this command carries, or
    /// [`buffered::NO_BLOCK`] (an application's own command).
    block: u32,
    /// First mapping unit (used by the data store and verify).
    lpn: u32,
    /// What the data store does with it when it completes (its write
    /// number, if any, is in `Host::numberio`).
    tag: verify::DataTag,
    /// Sectors of the first and last unit left out (sub-unit I/O).
    head: u8,
    tail: u8,
}

impl HostCmd {
    /// Bytes it moves.
    #[inline]
    fn bytes(&self, unit: u64) -> u64 {
        self.nlpn as u64 * unit - (self.head as u64 + self.tail as u64) * Io::SECTOR
    }
}

/// The simulated host.
pub struct Host {
    pub(crate) queues: Vec<HostQueue>,
    pub(crate) jobs: Vec<JobRun>,
    cmds: Vec<HostCmd>,
    free_cmds: Vec<u32>,
    /// Queues whose source still has I/O.
    pub(crate) active: usize,
    /// Commands submitted and not yet completed.
    pub(crate) outstanding: u64,
    last_cmd: Option<u32>,
    /// A failure raised inside a host step (a bad trace record), for the loop to report.
    pub(crate) failure: Option<SimError>,
    submit_overhead: Time,
    complete_overhead: Time,
    unit_bytes: u64,
    /// Commands one submission queue holds (entries - 1).
    queue_limit: u32,
    /// Time series sampler, if asked for.
    pub sampler: Option<Sampler>,
    /// Per-queue (job clone) statistics for fio-compatible output, if asked for.
    pub job_stats: Option<Vec<crate::fio_output::JobStats>>,
    /// Reads measured (a system of one drive; with several, each drive's
    /// are in `per_drive` and [`Host::measured`] adds them up).
    pub read: DirStats,
    /// Writes measured (one drive: see `read`).
    pub write: DirStats,
    /// Trims (deallocate) measured (one drive: see `read`).
    pub trim: DirStats,
    /// Flushes measured (one drive: see `read`).
    pub flush: DirStats,
    /// Per drive (systems of several drives only): reads, writes, trims, flushes measured.
    pub per_drive: Vec<[DirStats; 4]>,
    /// Last measured completion per drive (systems of several drives only).
    pub per_drive_last: Vec<Time>,
    /// Completed I/Os (all, including ramp).
    pub ios_done: u64,
    pub(crate) ios_total: Option<u64>,
    pub(crate) deadline: Option<Time>,
    pub(crate) ramp_end: Time,
    /// Last host completion time.
    pub last_completion: Time,
    /// Steady-state detection units (`ss=`), if any job asked for it.
    pub(crate) steady: Vec<steady::SsUnit>,
    /// The CPUs threads run on: one per host queue (and one for the
    /// page cache's flusher), or `host.cores` shared round robin.
    pub(crate) cpus: Vec<FifoServer>,
    /// Buffered I/O state, if any job does buffered I/O.
    pub(crate) buffered: Option<buffered::Buffered>,
    /// Per drive: logical units.
    pub(crate) lpns: Vec<u64>,
    /// One thread's copy rate (buffered I/O).
    copy_bw: crate::units::Bandwidth,
    /// The run keeps data (a functional data store on every drive).
    pub(crate) data: bool,
    /// Verify results (with the data store and a verifying job).
    pub verify: verify::VerifyReport,
    /// Scratch buffer for data.
    data_buf: Vec<u8>,
    /// Write number of each command id that carries a data tag.
    numberio: Vec<u64>,
}

fn werr(file: &str, option: Option<&str>, message: String) -> SimError {
    SimError::Workload(WorkloadError {
        file: file.into(),
        line: 0,
        option: option.map(Into::into),
        message,
    })
}

impl Host {
    /// Reads, writes, trims and flushes measured on every drive: the
    /// host's own with one drive, the drives' added up with several.
    pub fn measured(&self) -> [DirStats; 4] {
        if self.per_drive.is_empty() {
            [&self.read, &self.write, &self.trim, &self.flush].map(|s| DirStats::merged([s]))
        } else {
            std::array::from_fn(|k| DirStats::merged(self.per_drive.iter().map(|s| &s[k])))
        }
    }

    /// Commands submitted and not yet completed, per drive (`drives` of
    /// them): what a power loss catches in flight.
    pub(crate) fn in_flight_per_drive(&self, drives: usize) -> Vec<u64> {
        let mut free = vec![false; self.cmds.len()];
        for &c in &self.free_cmds {
            free[c as usize] = true;
        }
        let mut n = vec![0u64; drives];
        for (c, f) in self.cmds.iter().zip(free) {
            if !f && (c.d as usize) < drives {
                n[c.d as usize] += 1;
            }
        }
        n
    }

    /// The host's queues and jobs for `workload` on `drives`; also the
    /// NVMe class of each submission queue, per drive. `per_drive_stats`:
    /// also keep each drive's statistics apart.
    pub(crate) fn new(
        cfg: &HostConfig,
        drives: &[DriveView<'_>],
        workload: &Workload,
        workload_file: &str,
        seed: u64,
        per_drive_stats: bool,
    ) -> Result<(Host, Vec<Vec<QueueClass>>), SimError> {
        let unit_bytes = drives[0].dev.ftl.mapping_unit.0;
        let lpns_of = |d: usize| logical_units(&drives[d].dev.nand, &drives[d].dev.ftl);
        let mut hosts = Vec::new();
        let mut queue_targets: Vec<Vec<usize>> = Vec::new();
        let mut ios_total = Some(0u64);
        let mut deadline: Option<Time> = None;
        let mut ramp_end = Time::ZERO;
        let mut jobs: Vec<JobRun> = Vec::new();
        let mut est_end: Vec<Time> = Vec::new();
        for (ji, job) in workload.jobs.iter().enumerate() {
            if job.numjobs == 0 || job.iodepth == 0 {
                return Err(werr(
                    workload_file,
                    Some(if job.numjobs == 0 {
                        "numjobs"
                    } else {
                        "iodepth"
                    }),
                    format!("job '{}': numjobs and iodepth must be at least 1", job.name),
                ));
            }
            let targets = targets_of(job, drives, workload_file)?;
            for &t in &targets {
                if drives[t].dev.ftl.mapping_unit.0 != unit_bytes {
                    return Err(werr(workload_file, Some("filename"), format!("job '{}': drive '{}' maps {} units but '{}' maps {}: one job's drives need one mapping unit", job.name, drives[t].name, drives[t].dev.ftl.mapping_unit, drives[0].name, drives[0].dev.ftl.mapping_unit)));
                }
            }
            // The job's limits are those of its smallest drive.
            let dev = targets
                .iter()
                .map(|&t| drives[t].dev)
                .min_by_key(|d| (d.nvme.max_queue_depth, d.cache.write_buffer.0))
                .unwrap_or(drives[0].dev);
            let lpns = targets.iter().map(|&t| lpns_of(t)).min().unwrap_or(0);
            let write_buffer = targets
                .iter()
                .map(|&t| drives[t].dev.cache.write_buffer)
                .min_by_key(|b| b.0)
                .unwrap_or(dev.cache.write_buffer);
            if job.iodepth > dev.nvme.max_queue_depth - 1 {
                return Err(werr(workload_file, Some("iodepth"), format!("job '{}': iodepth {} exceeds the device's queue size ({} entries hold {} commands)", job.name, job.iodepth, dev.nvme.max_queue_depth, dev.nvme.max_queue_depth - 1)));
            }
            if job.rw.read_pct < 100
                && job.trim != crate::workload::TrimMode::Only
                && job.bs > write_buffer.0
            {
                return Err(werr(
                    workload_file,
                    Some("bs"),
                    format!(
                        "job '{}': a {} B write cannot fit the device's {} write buffer",
                        job.name, job.bs, write_buffer
                    ),
                ));
            }
            let first = hosts.len() as u32;
            for clone in 0..job.numjobs {
                let js = seed.wrapping_add((ji as u64) << 20);
                let pacer = Pacer::new(job, js.wrapping_add(clone as u64)).map(Box::new);
                let (gen, depth) = match &job.read_iolog {
                    _ if job.live => (Source::Live(Box::default()), dev.nvme.max_queue_depth - 1),
                    Some(ts) => {
                        let mut src =
                            trace_source(ts, lpns * unit_bytes, unit_bytes, write_buffer.0)?;
                        if let (Source::Trace(t), Some(r)) = (&mut src, job.runtime) {
                            // fio stops a replay at its runtime too.
                            t.limit = Some(job.ramp_time + r);
                        }
                        let depth = match ts.replay {
                            Replay::Closed { iodepth } => iodepth,
                            Replay::Open { .. } => {
                                if pacer.is_some() {
                                    return Err(werr(workload_file, Some("read_iolog"), format!("job '{}': rate caps and think time cannot apply to a timed iolog replay; add replay_no_stall=1 to replay it as fast as iodepth allows", job.name)));
                                }
                                0
                            }
                        };
                        (src, depth)
                    }
                    None => (
                        Source::Job(
                            JobGen::new(job, clone, js, lpns, unit_bytes, workload_file)
                                .map_err(SimError::Workload)?,
                        ),
                        job.iodepth,
                    ),
                };
                let mut hq = HostQueue::new(gen, depth, ji, pacer);
                hq.data_seed = js
                    .wrapping_add(clone as u64)
                    .wrapping_mul(0x9e37_79b9_7f4a_7c15);
                hq.buffer = job.buffer.clone();
                if let Some(v) = &job.verify {
                    hq.verify = Some(Box::new(verify::QueueVerify::new(
                        v.clone(),
                        verify_overlap_risk(job),
                        job.rw.read_pct == 100,
                    )));
                }
                hosts.push(hq);
                queue_targets.push(targets.clone());
            }
            if let Some(v) = &job.verify {
                check_verify(job, v, workload_file)?;
            }
            let mut waits: Vec<usize> = if job.stonewall {
                (0..ji).collect()
            } else {
                Vec::new()
            };
            if let Some(name) = &job.wait_for {
                match workload.jobs[..ji].iter().position(|j| &j.name == name) {
                    Some(w) if !waits.contains(&w) => waits.push(w),
                    Some(_) => {}
                    None => {
                        return Err(werr(
                            workload_file,
                            Some("wait_for"),
                            format!(
                                "job '{}' waits for '{name}', which is not a job defined before it",
                                job.name
                            ),
                        ))
                    }
                }
            }
            for &w in &waits {
                jobs[w].dependents.push(ji);
            }
            // Progress estimate only: when the job would end if every job ran its runtime.
            let begin = waits
                .iter()
                .map(|&w| est_end[w])
                .fold(Time::ZERO, Time::max)
                + job.startdelay;
            est_end.push(begin + job.ramp_time + job.runtime.unwrap_or(Time::ZERO));
            jobs.push(JobRun {
                waits_on: waits.len() as u32,
                dependents: Vec::new(),
                queues: first..hosts.len() as u32,
                live: job.numjobs,
                ramp: job.ramp_time,
                startdelay: job.startdelay,
                group: job.group,
                exitall: job.exitall,
                started: (waits.is_empty() && job.startdelay == Time::ZERO).then_some(Time::ZERO),
                ended: None,
            });
            if job.read_iolog.is_some() {
                ios_total = None;
            }
            if waits.is_empty() && job.startdelay == Time::ZERO {
                ramp_end = ramp_end.max(job.ramp_time);
            }
            match (job.time_based, job.runtime) {
                (true, Some(_)) => {
                    ios_total = None;
                    deadline = Some(deadline.unwrap_or(Time::ZERO).max(est_end[ji]));
                }
                _ => {
                    let by_bytes = job.io_size.or(job.size).map(|b| b.div_ceil(job.bs));
                    let n = match (by_bytes, job.number_ios) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    }
                    .map(|n| n.saturating_mul(job.loops.max(1) as u64));
                    match (n, ios_total) {
                        (Some(n), Some(t)) => ios_total = Some(t + n * job.numjobs as u64),
                        _ => {
                            if n.is_none() {
                                let cap = lpns * unit_bytes - job.offset;
                                ios_total = ios_total
                                    .map(|t| t + cap.div_ceil(job.bs) * job.numjobs as u64);
                            }
                        }
                    }
                    if job.runtime.is_some() {
                        deadline = Some(deadline.unwrap_or(Time::ZERO).max(est_end[ji]));
                    }
                }
            }
        }
        if let Some(ts) = &workload.trace {
            let file = ts.path.display().to_string();
            // Which drives replay which of the trace's devices.
            let routes: Vec<(Option<String>, usize)> = if workload.trace_drives.is_empty() {
                if drives.len() > 1 {
                    return Err(werr(&file, None, format!("a trace replay on a system of {} drives needs --trace-drives TRACE_DEVICE=DRIVE,... (the trace's devices: `ssdlab trace stats FILE`; drives: {})", drives.len(), drives.iter().map(|d| d.name).collect::<Vec<_>>().join(", "))));
                }
                vec![(None, 0)]
            } else {
                if drives.len() == 1 {
                    return Err(werr(&file, Some("trace-drives"), "--trace-drives maps a trace's devices onto the drives of a system (--system); on one drive, pick a device with --trace-device".into()));
                }
                if ts.filter.device.is_some() {
                    return Err(werr(&file, Some("trace-drives"), "--trace-device and --trace-drives together: the map already picks the devices".into()));
                }
                let mut r = Vec::new();
                for (tdev, name) in &workload.trace_drives {
                    let Some(i) = drives.iter().position(|d| d.name == name.as_str()) else {
                        return Err(werr(
                            &file,
                            Some("trace-drives"),
                            format!(
                                "'{name}' is not a drive of this system (drives: {})",
                                drives.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
                            ),
                        ));
                    };
                    if drives[i].dev.ftl.mapping_unit.0 != unit_bytes {
                        return Err(werr(&file, Some("trace-drives"), format!("drive '{name}' maps {} units but '{}' maps {}: a trace's drives need one mapping unit", drives[i].dev.ftl.mapping_unit, drives[0].name, drives[0].dev.ftl.mapping_unit)));
                    }
                    r.push((Some(tdev.clone()), i));
                }
                r
            };
            for (tdev, i) in routes {
                let dev = drives[i].dev;
                let lpns = lpns_of(i);
                let mut one = ts.clone();
                if tdev.is_some() {
                    one.filter.device = tdev;
                }
                let src = trace_source(
                    &one,
                    lpns * unit_bytes,
                    unit_bytes,
                    dev.cache.write_buffer.0,
                )?;
                let depth = match ts.replay {
                    Replay::Closed { iodepth } => iodepth,
                    Replay::Open { speed } => {
                        if !(speed > 0.0 && speed.is_finite()) {
                            return Err(werr(
                                &file,
                                None,
                                format!("replay speed {speed} must be a positive number"),
                            ));
                        }
                        0
                    }
                };
                if depth >= dev.nvme.max_queue_depth {
                    return Err(werr(
                        &file,
                        None,
                        format!(
                            "iodepth {depth} exceeds the device's queue size ({} entries)",
                            dev.nvme.max_queue_depth
                        ),
                    ));
                }
                hosts.push(HostQueue::new(src, depth, usize::MAX, None));
                queue_targets.push(vec![i]);
            }
            ios_total = None;
        }
        if hosts.is_empty() {
            return Err(werr(
                workload_file,
                None,
                "the workload has no jobs and no trace".into(),
            ));
        }
        // Each queue has a submission queue on every drive it targets,
        // numbered per drive in queue order.
        let mut per_drive_queues: Vec<Vec<u32>> = vec![Vec::new(); drives.len()];
        for (q, ts) in queue_targets.iter().enumerate() {
            for &t in ts {
                let sq = per_drive_queues[t].len() as u32;
                per_drive_queues[t].push(q as u32);
                hosts[q].targets.push((t as u16, sq));
            }
        }
        for (d, qs) in per_drive_queues.iter().enumerate() {
            let dev = drives[d].dev;
            if qs.len() as u32 > dev.nvme.max_queues {
                let n = if drives.len() == 1 {
                    hosts.len()
                } else {
                    qs.len()
                };
                return Err(werr(
                    workload_file,
                    Some("numjobs"),
                    format!(
                        "{n} jobs need {n} queue pairs but the device{} has {}",
                        if drives.len() == 1 {
                            String::new()
                        } else {
                            format!(" '{}'", drives[d].name)
                        },
                        dev.nvme.max_queues
                    ),
                ));
            }
        }
        let mut classes: Vec<QueueClass> = workload
            .jobs
            .iter()
            .flat_map(|j| {
                let c = match j.sq_priority {
                    SqPriority::Urgent => QueueClass::Urgent,
                    SqPriority::High => QueueClass::High,
                    SqPriority::Medium => QueueClass::Medium,
                    SqPriority::Low => QueueClass::Low,
                };
                std::iter::repeat_n(c, j.numjobs as usize)
            })
            .collect();
        classes.resize(hosts.len(), QueueClass::Medium);
        let classes: Vec<Vec<QueueClass>> = per_drive_queues
            .iter()
            .map(|qs| qs.iter().map(|&q| classes[q as usize]).collect())
            .collect();
        // Buffered jobs (direct=0): the host needs memory for a page cache.
        for hq in hosts.iter_mut() {
            let j = hq.job;
            if j == usize::MAX || workload.jobs[j].direct {
                continue;
            }
            let job = &workload.jobs[j];
            if cfg.memory.0 == 0 {
                return Err(werr(workload_file, Some("direct"), format!("job '{}': buffered I/O (direct=0 or buffered=1) goes through the host page cache, but the host has no memory: set host.memory in the device or system file (e.g. --set host.memory=16GiB)", job.name)));
            }
            if hq.open_trace() {
                return Err(werr(workload_file, Some("direct"), format!("job '{}': a timed iolog replay submits each record straight to the drive; buffered I/O needs replay_no_stall=1", job.name)));
            }
            if matches!(&hq.gen, Source::Job(g) if g.sub_unit()) {
                return Err(werr(workload_file, Some("direct"), format!("job '{}': buffered I/O smaller than the page (mapping unit) or not aligned to it is not supported yet (the page cache works in whole pages); use direct=1", job.name)));
            }
            hq.buffered = true;
        }
        let any_buffered = hosts.iter().any(|h| h.buffered);
        // CPUs: each queue's thread on a core of its own, or `cores` shared
        // round robin; the flusher thread after the queues.
        let threads = hosts.len() + any_buffered as usize;
        let ncpu = if cfg.cores == 0 {
            threads
        } else {
            cfg.cores as usize
        };
        for (q, hq) in hosts.iter_mut().enumerate() {
            hq.cpu = q % ncpu;
        }
        let flusher_cpu = hosts.len() % ncpu;
        let buffered = any_buffered.then(|| {
            buffered::Buffered::new(cfg, unit_bytes, drives.len(), hosts.len(), flusher_cpu)
        });
        let lpns: Vec<u64> = (0..drives.len()).map(lpns_of).collect();
        let multi = per_drive_stats;
        let mut h = Host {
            cpus: vec![FifoServer::default(); ncpu],
            buffered,
            lpns,
            copy_bw: cfg.copy_bandwidth,
            active: hosts.len(),
            queues: hosts,
            jobs,
            cmds: Vec::with_capacity(1024),
            free_cmds: Vec::new(),
            outstanding: 0,
            last_cmd: None,
            failure: None,
            submit_overhead: cfg.submit_overhead,
            complete_overhead: cfg.complete_overhead,
            unit_bytes,
            queue_limit: drives
                .iter()
                .map(|d| d.dev.nvme.max_queue_depth - 1)
                .min()
                .unwrap_or(0),
            sampler: None,
            job_stats: None,
            read: DirStats::default(),
            write: DirStats::default(),
            trim: DirStats::default(),
            flush: DirStats::default(),
            per_drive: if multi {
                (0..drives.len()).map(|_| Default::default()).collect()
            } else {
                Vec::new()
            },
            per_drive_last: if multi {
                vec![Time::ZERO; drives.len()]
            } else {
                Vec::new()
            },
            ios_done: 0,
            ios_total,
            deadline,
            ramp_end,
            last_completion: Time::ZERO,
            steady: Vec::new(),
            data: false,
            verify: verify::VerifyReport::default(),
            data_buf: Vec::new(),
            numberio: Vec::new(),
        };
        h.steady_units(workload, workload_file)?;
        for q in 0..h.queues.len() {
            let j = h.queues[q].job;
            if j != usize::MAX && (h.jobs[j].waits_on > 0 || h.jobs[j].startdelay > Time::ZERO) {
                h.queues[q].waiting = true;
            } else {
                // Jobs that start at once are measured from the latest of their ramps.
                h.queues[q].measure_from = h.ramp_end;
            }
        }
        Ok((h, classes))
    }

    /// The steady-state units of `workload`: with `group_reporting`, one per
    /// reporting group whose jobs ask for it (their settings must agree, as
    /// fio requires), else one per job clone.
    fn steady_units(&mut self, workload: &Workload, file: &str) -> Result<(), SimError> {
        let grouped = crate::fio_output::group_reporting(workload);
        for (ji, job) in workload.jobs.iter().enumerate() {
            let Some(spec) = job.steadystate else {
                continue;
            };
            let queues: Vec<u32> = self.jobs[ji].queues.clone().collect();
            if grouped {
                let existing = self.steady.iter().position(|u| {
                    u.queues.first().is_some_and(|&q| {
                        let j = self.queues[q as usize].job;
                        workload.jobs[j].group == job.group
                    })
                });
                if let Some(k) = existing {
                    if self.steady[k].spec != spec {
                        return Err(werr(file, Some("steadystate"), format!("job '{}': with group_reporting, steady-state options must be the same for every job of a reporting group (as fio requires); '{}' differs", job.name, self.steady[k].name)));
                    }
                    self.steady[k].queues.extend(&queues);
                    for &q in &queues {
                        self.queues[q as usize].steady = Some(k as u32);
                    }
                    continue;
                }
                let k = self.steady.len() as u32;
                for &q in &queues {
                    self.queues[q as usize].steady = Some(k);
                }
                self.steady.push(steady::SsUnit::new(
                    spec,
                    queues,
                    job.name.clone(),
                    job.group,
                ));
            } else {
                for (c, &q) in queues.iter().enumerate() {
                    let k = self.steady.len() as u32;
                    self.queues[q as usize].steady = Some(k);
                    let name = if job.numjobs > 1 {
                        format!("{}.{c}", job.name)
                    } else {
                        job.name.clone()
                    };
                    self.steady
                        .push(steady::SsUnit::new(spec, vec![q], name, job.group));
                }
            }
        }
        Ok(())
    }

    /// Steady-state results, one per unit (empty without `ss=`).
    pub fn steady_results(&self) -> Vec<steady::SteadyStateOut> {
        self.steady.iter().map(|u| u.result()).collect()
    }

    /// A steady-state unit's second is over: take its sample, and end its
    /// jobs if the criterion holds.
    pub(crate) fn steady_tick<S>(
        &mut self,
        unit: u32,
        now: Time,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) where
        S: Drives,
    {
        let u = &self.steady[unit as usize];
        if u.attained.is_some() || u.queues.iter().all(|&q| self.queues[q as usize].done) {
            return;
        }
        let done = u.queues.iter().fold((0, 0), |(i, b), &q| {
            let h = &self.queues[q as usize];
            (i + h.done_ios, b + h.done_bytes)
        });
        if self.steady[unit as usize].tick(now, done) {
            let qs = self.steady[unit as usize].queues.clone();
            for &q in &qs {
                self.stop_queue(q);
            }
            for &q in &qs {
                self.check_finished(q, now, eq, submit);
            }
        } else {
            let iv = self.steady[unit as usize].interval();
            eq.at(now + iv, Event::SteadyTick { unit });
        }
    }

    /// Schedule the jobs that start after a `startdelay` (at time zero).
    pub(crate) fn schedule_delayed_starts(&self, eq: &mut EventQueue<Event>) {
        for (j, run) in self.jobs.iter().enumerate() {
            if run.waits_on == 0 && run.startdelay > Time::ZERO {
                eq.at(run.startdelay, Event::JobStart { job: j as u32 });
            }
        }
    }

    /// Keep fio-style statistics per job clone (one per host queue).
    pub fn enable_job_stats(&mut self, w: &Workload) {
        let mut v = Vec::new();
        for j in &w.jobs {
            for _ in 0..j.numjobs {
                v.push(crate::fio_output::JobStats::new(&j.name, Some(j.clone())));
            }
        }
        if w.trace.is_some() {
            // One per trace queue (one per mapped device on several drives).
            while v.len() < self.queues.len() {
                v.push(crate::fio_output::JobStats::new("trace", None));
            }
        }
        v.truncate(self.queues.len());
        self.job_stats = Some(v);
    }

    /// Sample throughput and latency every `interval` of simulated time.
    pub fn sample_every(&mut self, interval: Time) {
        self.sampler = Some(Sampler {
            interval,
            ..Sampler::default()
        });
    }

    /// Start of the measured window.
    pub fn ramp_end(&self) -> Time {
        self.ramp_end
    }

    /// Number of host queues.
    pub fn queues(&self) -> usize {
        self.queues.len()
    }

    /// Start queue `q` at `at` (time zero, or when the jobs it waits for end).
    pub(crate) fn start_queue<S>(
        &mut self,
        q: u32,
        at: Time,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) -> Result<(), SimError>
    where
        S: Drives,
    {
        let h = &mut self.queues[q as usize];
        if h.waiting || h.started || h.done {
            return Ok(());
        }
        h.started = true;
        if let Some(p) = h.pacer.as_mut() {
            p.start_at(at);
        }
        if let Some(k) = h.steady {
            let u = &mut self.steady[k as usize];
            if u.start.is_none() {
                u.start = Some(at);
                eq.at(at + u.interval(), Event::SteadyTick { unit: k });
            }
        }
        let h = &mut self.queues[q as usize];
        match &mut h.gen {
            Source::Job(g) => g.start_at(at),
            Source::Trace(t) => {
                t.base = at;
                t.deadline = t.limit.map(|l| at + l);
            }
            // Requests arrive on their own (`live_arrival`).
            Source::Live(_) => return Ok(()),
        }
        if h.open_trace() {
            return self.trace_schedule_next(q, eq, submit);
        }
        self.fill(q, at, eq, submit);
        Ok(())
    }

    /// Submit I/Os on queue `q` at `at` while it has room, its I/O is due
    /// (rate caps) and it is not thinking.
    pub(crate) fn fill<S>(&mut self, q: u32, at: Time, eq: &mut EventQueue<Event>, submit: &mut S)
    where
        S: Drives,
    {
        loop {
            let h = &mut self.queues[q as usize];
            if h.done || h.waiting || h.sleeping {
                return;
            }
            if h.quiesce {
                // fio quiesces before thinking: wait for the queue to drain.
                if h.outstanding == 0 {
                    h.quiesce = false;
                    h.sleeping = true;
                    let wake = at + h.pacer.as_ref().map_or(Time::ZERO, |p| p.think_time());
                    if let Some(p) = h.pacer.as_mut() {
                        p.think(wake);
                    }
                    eq.at(wake, Event::ThinkEnd { q });
                }
                return;
            }
            if h.outstanding >= h.depth {
                return;
            }
            if let Source::Job(g) = &h.gen {
                if h.held.is_none() && h.outstanding > 0 && g.end_flush_next(at) {
                    return;
                }
            }
            if h.held.is_none() && h.verify.is_some() {
                match self.verify_next(q, at) {
                    VerifyNext::Gen => {}
                    VerifyNext::Wait => return,
                    VerifyNext::End => {
                        let h = &mut self.queues[q as usize];
                        if !h.done {
                            h.done = true;
                            self.active -= 1;
                        }
                        self.check_finished(q, at, eq, submit);
                        return;
                    }
                    VerifyNext::Io(io) => {
                        self.submit_io(q, at, io, eq, submit);
                        continue;
                    }
                }
            }
            let h = &mut self.queues[q as usize];
            let (due, io) = match crate::take_if_set(&mut h.held) {
                Some(x) => x,
                None => {
                    let next = match &mut h.gen {
                        Source::Job(g) => {
                            let io = g.next_io(at);
                            if g.issued() % AHEAD == 0 {
                                hint_ahead(g, &h.targets, submit);
                            }
                            io
                        }
                        Source::Trace(t) if t.deadline.is_some_and(|d| at >= d) => None,
                        Source::Trace(t) => match t.pull() {
                            Ok(x) => x.map(|(_, io)| io),
                            Err(e) => {
                                self.failure = Some(SimError::Workload(e));
                                None
                            }
                        },
                        // Live requests are submitted as they arrive.
                        Source::Live(_) => return,
                    };
                    let Some(io) = next else {
                        if verify::begin(h, at) {
                            continue;
                        }
                        h.done = true;
                        self.active -= 1;
                        self.check_finished(q, at, eq, submit);
                        return;
                    };
                    if h.verify.is_some() && verify::dry_run(h, io, self.unit_bytes) {
                        // verify_only: the write is logged, not issued.
                        continue;
                    }
                    let due = match h.pacer.as_mut() {
                        Some(p) => p.due(io.op, io.bytes(self.unit_bytes)),
                        None => Time::ZERO,
                    };
                    (due, io)
                }
            };
            if due > at {
                h.held = Some((due, io));
                if !h.wake_pending {
                    h.wake_pending = true;
                    eq.at(due, Event::HostWake { q });
                }
                return;
            }
            if io.op != Op::Flush && h.pacer.as_mut().is_some_and(|p| p.on_issue(at)) {
                h.quiesce = true;
            }
            if h.buffered {
                self.buffered_io(q, at, io, eq, submit);
            } else {
                self.submit_io(q, at, io, eq, submit);
            }
        }
    }

    /// If queue `q`'s job clone has ended, account for it; when its whole
    /// job has ended, start the jobs that were waiting for it.
    #[inline]
    fn check_finished<S>(&mut self, q: u32, at: Time, eq: &mut EventQueue<Event>, submit: &mut S)
    where
        S: Drives,
    {
        let h = &self.queues[q as usize];
        if h.finished || !h.done || h.outstanding > 0 {
            return;
        }
        self.queue_finished(q, at, eq, submit);
    }

    /// [`Host::check_finished`] once queue `q`'s clone is done and drained
    /// (out of line: the test above runs at every completion).
    #[inline(never)]
    fn queue_finished<S>(&mut self, q: u32, at: Time, eq: &mut EventQueue<Event>, submit: &mut S)
    where
        S: Drives,
    {
        let h = &mut self.queues[q as usize];
        if let Source::Trace(t) = &h.gen {
            if !t.overflow.is_empty() {
                return;
            }
        }
        h.finished = true;
        let j = h.job;
        if j == usize::MAX {
            return;
        }
        self.jobs[j].live -= 1;
        if self.jobs[j].exitall {
            // fio's exitall: when one of its clones ends, every other job of
            // the group (and the job's other clones) ends now. All are marked
            // first, then accounted, so none starts in between.
            self.jobs[j].exitall = false;
            let group = self.jobs[j].group;
            let targets: Vec<u32> = (0..self.jobs.len())
                .filter(|&k| self.jobs[k].group == group)
                .flat_map(|k| self.jobs[k].queues.clone())
                .collect();
            for &qq in &targets {
                self.stop_queue(qq);
            }
            for &qq in &targets {
                self.check_finished(qq, at, eq, submit);
            }
        }
        if self.jobs[j].live > 0 {
            return;
        }
        self.jobs[j].ended = Some(at);
        for k in std::mem::take(&mut self.jobs[j].dependents) {
            self.jobs[k].waits_on -= 1;
            if self.jobs[k].waits_on == 0 {
                let delay = self.jobs[k].startdelay;
                if delay > Time::ZERO {
                    eq.at(at + delay, Event::JobStart { job: k as u32 });
                } else {
                    self.start_job(k, at, eq, submit);
                }
            }
        }
    }

    /// When job `j` (in workload order) started and when its last clone
    /// ended, once it has.
    pub fn job_span(&self, j: usize) -> Option<(Time, Time)> {
        let r = self.jobs.get(j)?;
        Some((r.started?, r.ended?))
    }

    /// Start job `k`'s queues at `at` (its ramp and runtime count from here).
    pub(crate) fn start_job<S>(
        &mut self,
        k: usize,
        at: Time,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) where
        S: Drives,
    {
        let ramp = self.jobs[k].ramp;
        self.jobs[k].started = Some(at);
        for qq in self.jobs[k].queues.clone() {
            let h = &mut self.queues[qq as usize];
            if h.done {
                continue;
            }
            h.waiting = false;
            h.measure_from = at + ramp;
            if let Err(e) = self.start_queue(qq, at, eq, submit) {
                self.failure = Some(e);
            }
        }
    }

    /// Stop queue `q` (`exitall`): it submits nothing more; I/Os in flight
    /// complete. A queue still waiting to start never starts. The caller
    /// then runs [`Host::check_finished`] on it.
    fn stop_queue(&mut self, q: u32) {
        let h = &mut self.queues[q as usize];
        if h.finished {
            return;
        }
        h.held = None;
        h.quiesce = false;
        if let Source::Trace(t) = &mut h.gen {
            t.overflow.clear();
            t.next = None;
        }
        if !h.done {
            h.done = true;
            self.active -= 1;
        }
        h.waiting = false;
    }

    /// Put one I/O generated at `at` on queue `q`'s submission queue and
    /// ring its doorbell (the drive's part is `submit`).
    fn submit_io<S>(&mut self, q: u32, at: Time, io: Io, eq: &mut EventQueue<Event>, submit: &mut S)
    where
        S: Drives,
    {
        let h = &mut self.queues[q as usize];
        let read_back = h.read_back.take();
        let (d, sq) = match read_back {
            // A read-back goes to the drive the write went to.
            Some((rd, _)) => h
                .targets
                .iter()
                .copied()
                .find(|t| t.0 == rd)
                .unwrap_or(h.targets[0]),
            None => {
                let t = h.targets[h.next_target];
                if h.targets.len() > 1 {
                    h.next_target = (h.next_target + 1) % h.targets.len();
                }
                t
            }
        };
        let (tag, numberio) = if self.data {
            self.data_issue(q, d, io, read_back, submit)
        } else {
            (verify::DataTag::None, 0)
        };
        let h = &mut self.queues[q as usize];
        // Tell the drive what is coming first, so it can start fetching its
        // mapping entry while the host does its own part.
        submit.hint(d, io.lpn);
        let (_, ready) = self.cpus[h.cpu].reserve(at, self.submit_overhead);
        if let Some(js) = self.job_stats.as_mut() {
            js[q as usize].submitted(h.outstanding);
        }
        h.outstanding += 1;
        // Jobs that start together are measured after the latest of their
        // ramps; a job that waited for others, after its own.
        let measured = at >= h.measure_from;
        let c = HostCmd {
            q,
            d,
            op: io.op,
            nlpn: io.nlpn,
            submit: at,
            issued: ready,
            measured,
            block: buffered::NO_BLOCK,
            lpn: io.lpn,
            tag,
            head: io.head,
            tail: io.tail,
        };
        let id = self.new_cmd(c);
        if tag != verify::DataTag::None {
            let i = id as usize;
            if self.numberio.len() <= i {
                self.numberio.resize(i + 1, 0);
            }
            self.numberio[i] = numberio;
        }
        self.outstanding += 1;
        self.last_cmd = Some(id);
        submit.submit(
            eq,
            Submission {
                cmd: id,
                d,
                q: sq,
                op: io.op,
                lpn: io.lpn,
                nlpn: io.nlpn,
                head: io.head,
                tail: io.tail,
                ready,
            },
        );
    }

    /// A command id for `c`.
    #[inline]
    fn new_cmd(&mut self, c: HostCmd) -> u32 {
        match self.free_cmds.pop() {
            Some(i) => {
                self.cmds[i as usize] = c;
                i
            }
            None => {
                self.cmds.push(c);
                (self.cmds.len() - 1) as u32
            }
        }
    }

    /// Open-loop trace: read the next record and schedule its arrival.
    fn trace_schedule_next<S>(
        &mut self,
        q: u32,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) -> Result<(), SimError>
    where
        S: Drives,
    {
        let now = eq.now();
        let h = &mut self.queues[q as usize];
        let Source::Trace(t) = &mut h.gen else {
            return Ok(());
        };
        let next = t.pull().map_err(SimError::Workload)?;
        // A replay job with a runtime ends there.
        let next = next.filter(|(at, _)| t.deadline.is_none_or(|d| t.base + *at < d));
        match next {
            Some((at, io)) => {
                t.next = Some((at, io));
                eq.at((t.base + at).max(now), Event::TraceArrival { q });
            }
            None => {
                if !h.done {
                    h.done = true;
                    self.active -= 1;
                    self.check_finished(q, now, eq, submit);
                }
            }
        }
        Ok(())
    }

    /// Open-loop trace: a request arrives; submit it, or hold it if the queue is full.
    pub(crate) fn trace_arrival<S>(
        &mut self,
        now: Time,
        q: u32,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) -> Result<(), SimError>
    where
        S: Drives,
    {
        let limit = self.queue_limit;
        let h = &mut self.queues[q as usize];
        if h.done {
            // Ended (exitall): nothing more arrives.
            return Ok(());
        }
        let Source::Trace(t) = &mut h.gen else {
            return Ok(());
        };
        if let Some((_, io)) = t.next.take() {
            if h.outstanding < limit && t.overflow.is_empty() {
                self.submit_io(q, now, io, eq, submit);
            } else {
                t.overflow.push_back((now, io));
            }
        }
        self.trace_schedule_next(q, eq, submit)
    }

    /// A rate-capped queue's held I/O is due.
    pub(crate) fn wake<S>(&mut self, q: u32, now: Time, eq: &mut EventQueue<Event>, submit: &mut S)
    where
        S: Drives,
    {
        self.queues[q as usize].wake_pending = false;
        self.fill(q, now, eq, submit);
    }

    /// A queue's think time is over.
    pub(crate) fn think_end<S>(
        &mut self,
        q: u32,
        now: Time,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) where
        S: Drives,
    {
        self.queues[q as usize].sleeping = false;
        self.fill(q, now, eq, submit);
    }

    /// The CQE of command `cmd` has reached the host at `now`: the driver's
    /// completion cost, statistics, and the queue's next submissions.
    pub(crate) fn complete<S>(
        &mut self,
        now: Time,
        cmd: u32,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) where
        S: Drives,
    {
        let c = self.cmds[cmd as usize];
        if c.block != buffered::NO_BLOCK {
            return self.block_done(now, cmd, c, eq, submit);
        }
        let cpu = self.queues[c.q as usize].cpu;
        let (_, end) = self.cpus[cpu].reserve(now, self.complete_overhead);
        self.finish(c, Some(cmd), end, eq, submit);
    }

    /// I/O `c` (command `cmd`, if it is one) ends at `end`: statistics, and
    /// the queue's next submissions.
    pub(crate) fn finish<S>(
        &mut self,
        c: HostCmd,
        cmd: Option<u32>,
        end: Time,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) where
        S: Drives,
    {
        if c.tag != verify::DataTag::None {
            self.data_complete(&c, cmd, submit);
        }
        let lat = end - c.submit;
        if c.op != Op::Flush {
            let h = &mut self.queues[c.q as usize];
            h.done_ios += 1;
            h.done_bytes += c.bytes(self.unit_bytes);
        }
        if c.measured {
            let bytes = c.bytes(self.unit_bytes);
            if let Some(st) = self.per_drive.get_mut(c.d as usize) {
                // Several drives: each drive's own; `Host::measured` adds
                // them up (one record per I/O, not two).
                let k = match c.op {
                    Op::Read => 0,
                    Op::Write => 1,
                    Op::Trim => 2,
                    Op::Flush => 3,
                };
                st[k].record(lat, if c.op == Op::Flush { 0 } else { bytes });
                let last = &mut self.per_drive_last[c.d as usize];
                *last = (*last).max(end);
            } else {
                match c.op {
                    Op::Read => self.read.record(lat, bytes),
                    Op::Write => self.write.record(lat, bytes),
                    Op::Trim => self.trim.record(lat, bytes),
                    Op::Flush => self.flush.record(lat, 0),
                }
            }
            if let Some(s) = self.sampler.as_mut() {
                if matches!(c.op, Op::Read | Op::Write) {
                    s.record(
                        end.saturating_sub(self.ramp_end),
                        c.op == Op::Write,
                        lat,
                        bytes,
                    );
                }
            }
            if let Some(js) = self.job_stats.as_mut() {
                js[c.q as usize].completed(
                    c.op,
                    bytes,
                    c.issued - c.submit,
                    end - c.issued,
                    (
                        c.submit,
                        end,
                        end.saturating_sub(self.queues[c.q as usize].measure_from),
                    ),
                );
            }
            if end > self.last_completion {
                self.last_completion = end;
            }
        }
        self.ios_done += 1;
        self.outstanding -= 1;
        self.queues[c.q as usize].outstanding -= 1;
        if let Some(cmd) = cmd {
            self.free_cmds.push(cmd);
        }
        if self.queues[c.q as usize].open_loop() {
            // Open loop: the next request does not wait for this one, but a held one may go now.
            let held = match &mut self.queues[c.q as usize].gen {
                Source::Trace(t) => t.overflow.pop_front().map(|(a, io)| (a, io, None)),
                Source::Live(l) => {
                    if let Some(cmd) = cmd {
                        l.done.push((l.tags[cmd as usize], end));
                    }
                    l.overflow
                        .pop_front()
                        .map(|(a, io, tag)| (a, io, Some(tag)))
                }
                Source::Job(_) => None,
            };
            if let Some((arrived, io, tag)) = held {
                self.submit_io(c.q, end, io, eq, submit);
                // Latency counts from the arrival, not from when the queue had room.
                if let Some(last) = self.last_cmd {
                    self.cmds[last as usize].submit = arrived;
                    if let Some(tag) = tag {
                        self.live_tag(c.q, last, tag);
                    }
                }
            }
        } else {
            let h = &mut self.queues[c.q as usize];
            // fio counts think-time blocks over reads, writes and trims only.
            if c.op != Op::Flush && h.pacer.as_mut().is_some_and(|p| p.on_complete(end)) {
                h.quiesce = true;
            }
            self.fill(c.q, end, eq, submit);
        }
        self.check_finished(c.q, end, eq, submit);
    }
}
