//! The whole drive: wires host queues, PCIe link, NVMe controller, firmware
//! stages, DRAM cache, FTL and flash scheduler around one event loop.
//!
//! Command path (read): host driver → doorbell (PCIe down) → arbitration and
//! SQE fetch (PCIe round trip) → firmware stages → cache lookup → L2P →
//! flash read transactions (grouped per physical page, multi-plane) → data
//! DMA to host per transaction (PCIe up) → completion stage → CQE and MSI-X
//! (PCIe up) → host completion cost.
//!
//! Write: ... → write-buffer space reservation → data DMA from host (PCIe
//! read requests up, completions down) → DRAM → acknowledged (write-back).
//! Full program units are flushed from the buffer to the next free parallel
//! unit in striping order; GC relocations go through the same buffer.

use crate::cache::DataCache;
use crate::compute::Compute;
use crate::config::{logical_units, program_unit_bytes, Backend, Device, OpKind};
use crate::engine::{EventQueue, FifoServer};
use crate::firmware::{Firmware, StageId};
use crate::flash::{FlashEvent, FlashScheduler, Txn};
use crate::ftl::{Ftl, FtlStats, Mapping};
use crate::nand::{Geometry, Timings};
use crate::nvme::{Controller, QueueClass, CQE_BYTES, DOORBELL_BYTES, MSIX_BYTES, SQE_BYTES};
use crate::pcie::Link;
use crate::power::{Activity, Ledger};
use crate::stats::{DirStats, Sampler};
use crate::units::{Lpn, Ppa, Time};
use crate::workload::gen::{Io, JobGen};
use crate::workload::pacing::Pacer;
use crate::workload::trace::{Remap, TraceReader};
use crate::workload::{Op, Replay, SqPriority, TraceSpec, Workload, WorkloadError};
use std::collections::VecDeque;
use std::fmt;

/// How the drive is prepared before the measured run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precondition {
    /// Factory fresh: everything erased and unmapped.
    Fresh,
    /// Every LBA written once, sequentially.
    Fill,
    /// Filled, then random overwrites until write amplification settles.
    Steady,
}

impl Precondition {
    /// Parse `fresh|fill|steady`.
    pub fn parse(s: &str) -> Option<Precondition> {
        match s {
            "fresh" => Some(Precondition::Fresh),
            "fill" => Some(Precondition::Fill),
            "steady" => Some(Precondition::Steady),
            _ => None,
        }
    }
    /// Name.
    pub fn name(self) -> &'static str {
        match self {
            Precondition::Fresh => "fresh",
            Precondition::Fill => "fill",
            Precondition::Steady => "steady",
        }
    }
}

/// A simulation error.
#[derive(Debug, Clone)]
pub enum SimError {
    /// Bad workload for this device.
    Workload(WorkloadError),
    /// The device cannot be simulated (e.g. too large for this machine's memory).
    Device(String),
    /// Commands were outstanding but nothing could make progress (a model bug).
    Stalled(String),
    /// Stopped by the caller.
    Interrupted,
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Workload(e) => write!(f, "{e}"),
            SimError::Device(s) => write!(f, "{s}"),
            SimError::Stalled(s) => write!(f, "simulation stalled: {s}"),
            SimError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for SimError {}

#[derive(Debug, Clone, Copy)]
enum Event {
    Doorbell {
        q: u32,
    },
    FetchFree,
    Fetched {
        cmd: u32,
    },
    FrontDone {
        cmd: u32,
    },
    Flash(FlashEvent),
    ReadDma {
        cmd: u32,
    },
    WriteIn {
        cmd: u32,
    },
    HostDone {
        cmd: u32,
    },
    RampEnd,
    TraceArrival {
        q: u32,
    },
    /// A rate-capped queue's held I/O is due.
    HostWake {
        q: u32,
    },
    /// A queue's think time is over.
    ThinkEnd {
        q: u32,
    },
    /// A job's `startdelay` is over.
    JobStart {
        job: u32,
    },
}

#[derive(Debug, Clone, Copy, Default)]
struct Cmd {
    q: u32,
    op: Op,
    lpn: u32,
    nlpn: u32,
    submit: Time,
    /// When the submission reached the doorbell (end of the host submit cost).
    issued: Time,
    pending: u32,
    measured: bool,
}

/// Where a host queue's I/Os come from.
enum Source {
    /// A fio job clone.
    Job(JobGen),
    /// A block trace.
    Trace(Box<TraceSource>),
}

/// Records per batch handed from the trace reader thread to the simulation.
const TRACE_BATCH: usize = 4096;
/// Batches in flight between them (memory: 4 x 4,096 records).
const TRACE_BATCHES: usize = 4;

/// One batch of replayable requests, or the trace's first error.
type TraceBatch = Result<Vec<(Time, Io)>, WorkloadError>;

/// Streaming trace replay state (constant memory). The trace is read,
/// parsed, filtered and remapped on its own thread, a few batches ahead of
/// the simulation, in trace order (so replay stays deterministic).
struct TraceSource {
    rx: std::sync::mpsc::Receiver<TraceBatch>,
    /// The reader thread, joined when its channel closes (to report a panic
    /// rather than end the replay early without a word).
    reader: Option<std::thread::JoinHandle<()>>,
    batch: std::vec::IntoIter<(Time, Io)>,
    /// The reader has ended (end of trace or error).
    ended: bool,
    spec: TraceSpec,
    /// Open loop: requests that arrived while the queue was full (arrival time, I/O).
    overflow: VecDeque<(Time, Io)>,
    /// Open loop: the next record, not yet arrived.
    next: Option<(Time, Io)>,
    /// Replay start (a `read_iolog` job that waited for others starts later).
    base: Time,
    /// A replay job's `ramp_time + runtime`, counted from its start.
    limit: Option<Time>,
    /// Absolute end of the replay (`base + limit`), once started.
    deadline: Option<Time>,
}

impl TraceSource {
    /// Next kept record as an I/O in mapping units, with its (scaled) arrival time.
    #[inline]
    fn pull(&mut self) -> Result<Option<(Time, Io)>, WorkloadError> {
        loop {
            if let Some(x) = self.batch.next() {
                return Ok(Some(x));
            }
            if self.ended {
                return Ok(None);
            }
            match self.rx.recv() {
                Ok(Ok(b)) => self.batch = b.into_iter(),
                Ok(Err(e)) => {
                    self.ended = true;
                    return Err(e);
                }
                Err(_) => {
                    self.ended = true;
                    if let Some(h) = self.reader.take() {
                        if h.join().is_err() {
                            return Err(WorkloadError {
                                file: self.spec.path.display().to_string(),
                                line: 0,
                                option: None,
                                message: "the trace reader failed (an internal error); the \
                                          replay stopped before the end of the trace"
                                    .into(),
                            });
                        }
                    }
                    return Ok(None);
                }
            }
        }
    }
}

/// The reading side of a trace replay (runs on the reader thread).
struct TraceFeed {
    reader: TraceReader,
    spec: TraceSpec,
    capacity: u64,
    unit: u64,
    /// The write buffer's size in bytes: a larger write could never be admitted.
    max_write: u64,
}

impl TraceFeed {
    /// When a record stamped `time` (since the trace's first record) is
    /// submitted: open loop, its time from the window start divided by the
    /// speed-up; closed loop, as soon as the queue has room (zero).
    fn arrival(&self, time: Time) -> Time {
        match self.spec.replay {
            Replay::Open { speed } => Time::from_secs_f64(
                time.saturating_sub(self.spec.filter.start.unwrap_or(Time::ZERO))
                    .as_secs_f64()
                    / speed,
            ),
            Replay::Closed { .. } => Time::ZERO,
        }
    }

    /// Send batches until the trace ends, an error (sent as the last
    /// message) or the simulation drops its end of the channel.
    fn run(mut self, tx: std::sync::mpsc::SyncSender<TraceBatch>) {
        let mut batch = Vec::with_capacity(TRACE_BATCH);
        loop {
            match self.pull() {
                Ok(Some(x)) => {
                    batch.push(x);
                    if batch.len() == TRACE_BATCH {
                        let full = std::mem::replace(&mut batch, Vec::with_capacity(TRACE_BATCH));
                        if tx.send(Ok(full)).is_err() {
                            return;
                        }
                    }
                }
                Ok(None) => {
                    if !batch.is_empty() {
                        let _ = tx.send(Ok(batch));
                    }
                    return;
                }
                Err(e) => {
                    if !batch.is_empty() && tx.send(Ok(std::mem::take(&mut batch))).is_err() {
                        return;
                    }
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
    }

    /// Next kept record as an I/O in mapping units, with its (scaled) arrival time.
    fn pull(&mut self) -> Result<Option<(Time, Io)>, WorkloadError> {
        loop {
            let Some(r) = self.reader.next() else {
                return Ok(None);
            };
            let r = r.map_err(WorkloadError::from)?;
            if r.op == Op::Flush {
                if !self.spec.filter.keep(&r) {
                    continue;
                }
                return Ok(Some((self.arrival(r.time), Io::FLUSH)));
            }
            if !self.spec.filter.keep(&r) {
                if self.spec.filter.end.is_some_and(|e| r.time >= e) {
                    return Ok(None);
                }
                continue;
            }
            let (off, len) = self
                .spec
                .remap
                .apply(r.offset, r.len, self.capacity, self.unit);
            if len == 0 {
                continue;
            }
            if r.op == Op::Write && len > self.max_write {
                return Err(WorkloadError {
                    file: self.reader.file().to_string(),
                    line: self.reader.line(),
                    option: None,
                    message: format!(
                        "a write of {len} B cannot fit the device's {} B write buffer",
                        self.max_write
                    ),
                });
            }
            let t = self.arrival(r.time);
            return Ok(Some((
                t,
                Io {
                    op: r.op,
                    lpn: (off / self.unit) as u32,
                    nlpn: (len / self.unit) as u32,
                },
            )));
        }
    }
}

struct HostQueue {
    gen: Source,
    depth: u32,
    outstanding: u32,
    cpu: FifoServer,
    /// The source has no more I/O.
    done: bool,
    /// Done and every I/O completed (the job clone has ended).
    finished: bool,
    /// Index of the job in the workload (`usize::MAX` for a `--trace` replay).
    job: usize,
    /// Waiting for other jobs to end (`stonewall`, `wait_for`).
    waiting: bool,
    /// Rate caps and think time, if the job has any.
    pacer: Option<Box<Pacer>>,
    /// An I/O drawn but not yet due under the rate cap, with its due time.
    held: Option<(Time, Io)>,
    /// A `HostWake` event is scheduled.
    wake_pending: bool,
    /// Think time is due: submit nothing until the queue drains.
    quiesce: bool,
    /// Idling in think time until a `ThinkEnd` event.
    sleeping: bool,
    /// `start_queue` has run (a queue starts once).
    started: bool,
    /// I/Os submitted from this time on are measured (after the ramp).
    measure_from: Time,
}

impl HostQueue {
    fn new(gen: Source, depth: u32, job: usize, pacer: Option<Box<Pacer>>) -> HostQueue {
        HostQueue {
            gen,
            depth,
            outstanding: 0,
            cpu: FifoServer::default(),
            done: false,
            finished: false,
            job,
            waiting: false,
            pacer,
            held: None,
            wake_pending: false,
            quiesce: false,
            sleeping: false,
            started: false,
            measure_from: Time::ZERO,
        }
    }

    fn open_trace(&self) -> bool {
        matches!(&self.gen, Source::Trace(t) if matches!(t.spec.replay, Replay::Open { .. }))
    }
}

/// Ordering state of one job of the workload (`stonewall`, `wait_for`).
struct JobRun {
    /// Jobs this one still waits for.
    waits_on: u32,
    /// Jobs waiting for this one.
    dependents: Vec<usize>,
    /// Its host queues.
    queues: std::ops::Range<u32>,
    /// Clones not yet ended.
    live: u32,
    /// Ramp time (counted from the job's start).
    ramp: Time,
    /// Delay between when the job may start and its start (`startdelay`).
    startdelay: Time,
    /// Reporting group.
    group: u32,
    /// Ending this job ends the others of its group (`exitall`).
    exitall: bool,
}

struct GcJob {
    victim: u32,
    slots: Vec<(Ppa, Lpn)>,
    next: usize,
    inflight: u32,
    erasing: bool,
}

const TAG_SHIFT: u32 = 56;
const TAG_HREAD: u64 = 1;
const TAG_GCREAD: u64 = 2;
const TAG_PROG: u64 = 3;
const TAG_ERASE: u64 = 4;
const GC_READS_INFLIGHT: u32 = 4;
const PROGRAMS_PER_DIE: usize = 2;

/// Activity the drive counts for the power ledger.
#[derive(Debug, Clone, Copy, Default)]
struct ActCounters {
    dram_bytes: u64,
    nand_read_pages: u64,
    nand_bus_bytes: u64,
}

/// Counter snapshot used to measure only the post-ramp window.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Time of the snapshot.
    pub at: Time,
    /// FTL counters.
    pub ftl: FtlStats,
    /// Flash reads, programs, erases, suspends.
    pub flash: [u64; 4],
    /// Channel bus busy time.
    pub channel_busy: Vec<Time>,
    /// Die busy time.
    pub die_busy: Vec<Time>,
    /// PCIe busy (up, down).
    pub link_busy: (Time, Time),
    /// Firmware stage busy times.
    pub stage_busy: Vec<Time>,
    /// DRAM busy.
    pub dram_busy: Time,
    /// Busy time of each compute core group (summed over its cores).
    pub core_busy: Vec<Time>,
    /// Busy time of each accelerator (summed over its instances).
    pub accel_busy: Vec<Time>,
}

/// Progress of a running simulation.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Simulated time.
    pub sim_time: Time,
    /// Host I/Os completed.
    pub ios_done: u64,
    /// Host I/Os expected in total, if known.
    pub ios_total: Option<u64>,
    /// Fraction done (0..1), if known.
    pub fraction: Option<f64>,
}

/// The simulated drive plus its host.
pub struct Drive {
    /// Device description.
    pub dev: Device,
    /// Geometry.
    pub geo: Geometry,
    timings: Timings,
    q: EventQueue<Event>,
    link: Link,
    ctl: Controller,
    fw: Firmware,
    fetch_wakeup: bool,
    /// log2 of slots per page when it is a power of two.
    spp_shift: Option<u32>,
    /// Busy time charged at the last power mark (see [`Drive::power_mark`]).
    charged: Option<(Time, Activity)>,
    /// One submission queue and a fetch executor that serves nothing else:
    /// fetches are booked when the doorbell is rung (see `submit_io`).
    direct_fetch: bool,
    dram: FifoServer,
    /// DRAM cache.
    pub cache: DataCache,
    /// FTL.
    pub ftl: Ftl,
    /// Flash scheduler.
    pub flash: FlashScheduler,
    cmds: Vec<Cmd>,
    free_cmds: Vec<u32>,
    hosts: Vec<HostQueue>,
    jobs: Vec<JobRun>,
    /// NVMe Flush commands waiting for the write buffer: (barrier, command).
    flushes: VecDeque<(u32, u32)>,
    active_hosts: usize,
    /// Program transactions the dies can still take (PROGRAMS_PER_DIE each, minus queued or running).
    program_room: u32,
    /// Program id -> (LPNs programmed, how many of the first are GC data).
    progs: Vec<(Vec<u32>, usize)>,
    free_progs: Vec<u32>,
    gc: Vec<Option<GcJob>>,
    wait_buffer: VecDeque<u32>,
    /// Read groups of one command: (multi-plane page key, first PPA, slots, planes touched mask).
    scratch_groups: Vec<(u32, u32, u32, u64)>,
    done_buf: Vec<(u64, OpKind)>,
    unit_bytes: u64,
    outstanding: u64,
    /// Time series sampler, if asked for.
    pub sampler: Option<Sampler>,
    /// Per-queue (job clone) statistics for fio-compatible output, if asked for.
    pub job_stats: Option<Vec<crate::fio_output::JobStats>>,
    /// Reads measured.
    pub read: DirStats,
    /// Writes measured.
    pub write: DirStats,
    /// Trims (deallocate) measured.
    pub trim: DirStats,
    /// Flushes measured.
    pub flush: DirStats,
    /// Completed I/Os (all, including ramp).
    pub ios_done: u64,
    ios_total: Option<u64>,
    deadline: Option<Time>,
    /// Snapshot at the start of the measured window.
    pub ramp_snapshot: Snapshot,
    ramdisk: bool,
    failure: Option<SimError>,
    last_cmd: Option<u32>,
    /// Power ledger, when the device has a `[power]` section.
    pub ledger: Option<Ledger>,
    next_mark: Time,
    /// Cumulative energy at the start of the measured window.
    pub ramp_energy: Option<(Time, [f64; 8])>,
    act: ActCounters,
    ramp_end: Time,
    /// Last host completion time.
    pub last_completion: Time,
    /// Events processed.
    pub events: u64,
    /// Seed.
    pub seed: u64,
    /// Precondition: drive writes done and final WAF of the preconditioner (steady only).
    pub precondition_info: (Precondition, f64, f64),
}

/// A streaming trace reader for `ts` on a drive of `capacity` bytes.
///
/// `Remap::Scale { max_offset: 0 }` means "scale from the trace's own
/// address space": one streaming pass over the trace learns it first.
fn trace_source(
    ts: &TraceSpec,
    capacity: u64,
    unit: u64,
    max_write: u64,
) -> Result<Source, SimError> {
    let err = |e: crate::workload::trace::TraceError| SimError::Workload(e.into());
    let mut spec = ts.clone();
    if spec.remap == (Remap::Scale { max_offset: 0 }) {
        let r = TraceReader::open(&ts.path, ts.format).map_err(err)?;
        let st = crate::workload::trace::stats(r, &ts.filter).map_err(err)?;
        spec.remap = Remap::Scale {
            max_offset: st.max_end_bytes,
        };
    }
    let reader = TraceReader::open(&ts.path, ts.format).map_err(err)?;
    let feed = TraceFeed {
        reader,
        spec: spec.clone(),
        capacity,
        unit,
        max_write,
    };
    let (tx, rx) = std::sync::mpsc::sync_channel(TRACE_BATCHES);
    let handle = std::thread::Builder::new()
        .name("ssdlab-trace".into())
        .spawn(move || feed.run(tx))
        .map_err(|e| SimError::Device(format!("cannot start the trace reader thread: {e}")))?;
    Ok(Source::Trace(Box::new(TraceSource {
        rx,
        reader: Some(handle),
        batch: Vec::new().into_iter(),
        ended: false,
        spec,
        overflow: VecDeque::new(),
        next: None,
        base: Time::ZERO,
        limit: None,
        deadline: None,
    })))
}

#[cold]
fn unreachable_program(unit: u32) {
    debug_assert!(false, "unit {unit}: allocation failed after can_allocate");
}

/// Estimated bytes of simulator state for a device (mapping tables and block metadata).
pub fn memory_estimate(dev: &Device) -> u64 {
    let g = Geometry::new(&dev.nand, dev.ftl.mapping_unit);
    let lpns = logical_units(&dev.nand, &dev.ftl);
    let blocks = g.units as u64 * g.blocks_per_unit as u64;
    lpns * 4 + g.total_slots() * 4 + blocks * 18
}

fn available_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

impl Drive {
    /// Build a drive and its host for `workload`, preconditioned as asked.
    pub fn new(
        dev: Device,
        workload: &Workload,
        workload_file: &str,
        seed: u64,
        pre: Precondition,
    ) -> Result<Drive, SimError> {
        let need = memory_estimate(&dev);
        if let Some(avail) = available_memory() {
            if need > avail {
                return Err(SimError::Device(format!(
                    "device '{}' needs about {:.1} GiB for its mapping tables but only {:.1} GiB of memory is available; use a larger ftl.mapping_unit or a smaller drive",
                    dev.name,
                    need as f64 / (1u64 << 30) as f64,
                    avail as f64 / (1u64 << 30) as f64
                )));
            }
        }
        let geo = Geometry::new(&dev.nand, dev.ftl.mapping_unit);
        let lpns = logical_units(&dev.nand, &dev.ftl);
        let unit_bytes = dev.ftl.mapping_unit.0;
        let mut ftl = Ftl::new(geo.clone(), dev.ftl.clone(), lpns, seed);
        let mut info = (pre, 0.0, 0.0);
        match pre {
            Precondition::Fresh => {}
            Precondition::Fill => {
                ftl.fill_sequential();
                info.1 = 1.0;
                info.2 = ftl.stats.waf();
            }
            Precondition::Steady => {
                let (dw, waf) = ftl.precondition_steady(seed, 6.0);
                info.1 = dw;
                info.2 = waf;
            }
        }
        ftl.reset_stats();
        // Host queues: one per job clone.
        let mut hosts = Vec::new();
        let mut ios_total = Some(0u64);
        let mut deadline: Option<Time> = None;
        let mut ramp_end = Time::ZERO;
        let mut jobs: Vec<JobRun> = Vec::new();
        let mut est_end: Vec<Time> = Vec::new();
        for (ji, job) in workload.jobs.iter().enumerate() {
            if job.numjobs == 0 || job.iodepth == 0 {
                return Err(SimError::Workload(WorkloadError {
                    file: workload_file.into(),
                    line: 0,
                    option: Some(
                        if job.numjobs == 0 {
                            "numjobs"
                        } else {
                            "iodepth"
                        }
                        .into(),
                    ),
                    message: format!("job '{}': numjobs and iodepth must be at least 1", job.name),
                }));
            }
            if job.iodepth > dev.nvme.max_queue_depth - 1 {
                return Err(SimError::Workload(WorkloadError {
                    file: workload_file.into(),
                    line: 0,
                    option: Some("iodepth".into()),
                    message: format!("job '{}': iodepth {} exceeds the device's queue size ({} entries hold {} commands)", job.name, job.iodepth, dev.nvme.max_queue_depth, dev.nvme.max_queue_depth - 1),
                }));
            }
            if job.rw.read_pct < 100
                && job.trim != crate::workload::TrimMode::Only
                && job.bs > dev.cache.write_buffer.0
            {
                return Err(SimError::Workload(WorkloadError {
                    file: workload_file.into(),
                    line: 0,
                    option: Some("bs".into()),
                    message: format!(
                        "job '{}': a {} B write cannot fit the device's {} write buffer",
                        job.name, job.bs, dev.cache.write_buffer
                    ),
                }));
            }
            let first = hosts.len() as u32;
            for clone in 0..job.numjobs {
                let js = seed.wrapping_add((ji as u64) << 20);
                let pacer = Pacer::new(job, js.wrapping_add(clone as u64)).map(Box::new);
                let (gen, depth) = match &job.read_iolog {
                    Some(ts) => {
                        let mut src = trace_source(
                            ts,
                            lpns * unit_bytes,
                            unit_bytes,
                            dev.cache.write_buffer.0,
                        )?;
                        if let (Source::Trace(t), Some(r)) = (&mut src, job.runtime) {
                            // fio stops a replay at its runtime too.
                            t.limit = Some(job.ramp_time + r);
                        }
                        let depth = match ts.replay {
                            Replay::Closed { iodepth } => iodepth,
                            Replay::Open { .. } => {
                                if pacer.is_some() {
                                    return Err(SimError::Workload(WorkloadError {
                                        file: workload_file.into(),
                                        line: 0,
                                        option: Some("read_iolog".into()),
                                        message: format!("job '{}': rate caps and think time cannot apply to a timed iolog replay; add replay_no_stall=1 to replay it as fast as iodepth allows", job.name),
                                    }));
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
                hosts.push(HostQueue::new(gen, depth, ji, pacer));
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
                        return Err(SimError::Workload(WorkloadError {
                            file: workload_file.into(),
                            line: 0,
                            option: Some("wait_for".into()),
                            message: format!(
                                "job '{}' waits for '{name}', which is not a job defined before it",
                                job.name
                            ),
                        }))
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
        let mut trace_remap_note = None;
        if let Some(ts) = &workload.trace {
            let err = |m: String| {
                SimError::Workload(WorkloadError {
                    file: ts.path.display().to_string(),
                    line: 0,
                    option: None,
                    message: m,
                })
            };
            let src = trace_source(ts, lpns * unit_bytes, unit_bytes, dev.cache.write_buffer.0)?;
            let depth = match ts.replay {
                Replay::Closed { iodepth } => iodepth,
                Replay::Open { speed } => {
                    if !(speed > 0.0 && speed.is_finite()) {
                        return Err(err(format!(
                            "replay speed {speed} must be a positive number"
                        )));
                    }
                    0
                }
            };
            if depth >= dev.nvme.max_queue_depth {
                return Err(err(format!(
                    "iodepth {depth} exceeds the device's queue size ({} entries)",
                    dev.nvme.max_queue_depth
                )));
            }
            trace_remap_note = Some(ts.remap);
            hosts.push(HostQueue::new(src, depth, usize::MAX, None));
            ios_total = None;
        }
        let _ = trace_remap_note;
        if hosts.is_empty() {
            return Err(SimError::Workload(WorkloadError {
                file: workload_file.into(),
                line: 0,
                option: None,
                message: "the workload has no jobs and no trace".into(),
            }));
        }
        if hosts.len() as u32 > dev.nvme.max_queues {
            return Err(SimError::Workload(WorkloadError {
                file: workload_file.into(),
                line: 0,
                option: Some("numjobs".into()),
                message: format!(
                    "{} jobs need {} queue pairs but the device has {}",
                    hosts.len(),
                    hosts.len(),
                    dev.nvme.max_queues
                ),
            }));
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
        let spp_bytes = program_unit_bytes(&dev.nand);
        let wb_slots = dev.cache.write_buffer.0 / unit_bytes;
        let _ = spp_bytes;
        let mut d = Drive {
            timings: Timings::new(&dev.nand),
            q: EventQueue::new(),
            link: Link::new(&dev.pcie),
            ctl: Controller::new(&dev.nvme, &classes),
            fw: Firmware::new(&dev.firmware).with_compute(dev.controller.clone().map(Compute::new)),
            ramdisk: matches!(dev.backend, Backend::RamDisk { .. }),
            failure: None,
            last_cmd: None,
            ledger: dev
                .power
                .clone()
                .map(|p| Ledger::new(p, dev.controller.clone(), dev.nand.total_dies())),
            next_mark: Time::ZERO,
            ramp_energy: None,
            act: ActCounters::default(),
            fetch_wakeup: false,
            charged: None,
            spp_shift: geo
                .slots_per_page
                .is_power_of_two()
                .then(|| geo.slots_per_page.trailing_zeros()),
            direct_fetch: false,
            dram: FifoServer::default(),
            cache: DataCache::new(
                wb_slots,
                dev.cache.read_cache.0 / unit_bytes,
                dev.cache.policy,
                geo.units,
            ),
            flash: FlashScheduler::new(&dev.nand, &dev.flash),
            gc: (0..geo.units).map(|_| None).collect(),
            ftl,
            geo,
            cmds: Vec::with_capacity(1024),
            free_cmds: Vec::new(),
            active_hosts: hosts.len(),
            program_room: dev.nand.total_dies() * PROGRAMS_PER_DIE as u32,
            hosts,
            jobs,
            flushes: VecDeque::new(),
            progs: Vec::new(),
            free_progs: Vec::new(),
            wait_buffer: VecDeque::new(),
            scratch_groups: Vec::new(),
            done_buf: Vec::new(),
            unit_bytes,
            outstanding: 0,
            sampler: None,
            job_stats: None,
            read: DirStats::default(),
            write: DirStats::default(),
            trim: DirStats::default(),
            flush: DirStats::default(),
            ios_done: 0,
            ios_total,
            deadline,
            ramp_snapshot: Snapshot::default(),
            ramp_end,
            last_completion: Time::ZERO,
            events: 0,
            seed,
            precondition_info: info,
            dev,
        };
        // Flushes wait for the buffer only if it is volatile; only workloads
        // that can flush (fsync, end_fsync, or a trace) need the counters.
        let may_flush = workload.trace.is_some()
            || workload
                .jobs
                .iter()
                .any(|j| j.fsync > 0 || j.end_fsync || j.read_iolog.is_some());
        if d.dev.cache.power_loss_protection || !may_flush {
            d.cache.disable_flush_tracking();
        }
        d.direct_fetch = d.hosts.len() == 1 && d.fw.fetch_is_dedicated();
        d.ramp_snapshot = d.snapshot();
        for (j, run) in d.jobs.iter().enumerate() {
            if run.waits_on == 0 && run.startdelay > Time::ZERO {
                d.q.at(run.startdelay, Event::JobStart { job: j as u32 });
            }
        }
        for q in 0..d.hosts.len() {
            let j = d.hosts[q].job;
            if j != usize::MAX && (d.jobs[j].waits_on > 0 || d.jobs[j].startdelay > Time::ZERO) {
                d.hosts[q].waiting = true;
            } else {
                // Jobs that start at once are measured from the latest of their ramps.
                d.hosts[q].measure_from = d.ramp_end;
            }
        }
        Ok(d)
    }

    /// Current counters.
    pub fn snapshot(&self) -> Snapshot {
        let f = &self.flash.stats;
        Snapshot {
            at: self.q.now(),
            ftl: self.ftl.stats.clone(),
            flash: [f.reads, f.programs, f.erases, f.suspends],
            channel_busy: self.flash.channel_busy(),
            die_busy: self.flash.die_busy(),
            link_busy: self.link.busy(),
            stage_busy: self.fw.stages.iter().map(|s| s.busy()).collect(),
            dram_busy: self.dram.busy(),
            // Busy time that has run by now (work booked ahead counts when it runs).
            core_busy: self.fw.compute.as_ref().map_or_else(Vec::new, |c| {
                c.groups.iter().map(|p| p.busy_by(self.q.now())).collect()
            }),
            accel_busy: self.fw.compute.as_ref().map_or_else(Vec::new, |c| {
                c.accels.iter().map(|p| p.busy_by(self.q.now())).collect()
            }),
        }
    }

    fn activity(&self, t: Time) -> Activity {
        let f = &self.flash.stats;
        let g = &self.geo;
        let running = self.flash.array_progress(t);
        let mut a = Activity {
            dram_bytes: self.act.dram_bytes,
            nand_read_pages: self.act.nand_read_pages,
            nand_program_pages: f.programs * (g.planes_per_unit * g.pages_per_program) as u64,
            nand_erase_blocks: f.erases * g.planes_per_unit as u64,
            nand_program_pages_running: running.0
                * (g.planes_per_unit * g.pages_per_program) as f64,
            nand_erase_blocks_running: running.1 * g.planes_per_unit as f64,
            nand_bus_bytes: self.act.nand_bus_bytes
                + f.programs * g.slots_per_program as u64 * self.unit_bytes,
            // Busy time that has run by `t`: work booked ahead (stages booked
            // at fetch, a burst's backlog) is charged when it runs.
            pcie_busy: {
                let (up, down) = self.link.busy_by(t);
                up + down
            },
            ..Activity::default()
        };
        if let Some(c) = &self.fw.compute {
            for (gi, pool) in c.groups.iter().enumerate() {
                let grp = &c.cfg.groups[gi];
                // A core that polls doorbells never idles.
                let polling =
                    c.cfg.polling.is_some() && grp.stages.contains(&(StageId::Fetch as usize));
                a.group_busy.push(if polling {
                    t.times(grp.count as u64)
                } else {
                    pool.busy_by(t)
                });
            }
            a.accel_busy = c.accels.iter().map(|p| p.busy_by(t)).collect();
            a.host_controller_busy = c.host_controller.busy_by(t);
        }
        a
    }

    /// Cumulative energy per component at `t` (zeros without a power model).
    pub fn energy_at(&self, t: Time) -> [f64; 8] {
        match &self.ledger {
            Some(l) => l.energy(&self.activity(t), t),
            None => [0.0; 8],
        }
    }

    /// The activity at `now` with busy times limited to what the hardware
    /// can have run since the last mark (servers × elapsed time): work that
    /// counts as run when booked ([`FifoServer::busy_by`]: into an idle gap,
    /// or an older block still ahead) is carried into later windows instead
    /// of raising one window above the hardware's power. Busy time stays
    /// monotone and the end-of-run energy ([`Drive::energy_at`]) is exact.
    fn charged_activity(&mut self, now: Time) -> Activity {
        let mut a = self.activity(now);
        if let Some((at, last)) = &self.charged {
            let dt = now.saturating_sub(*at);
            let cap = |prev: Time, busy: Time, servers: u64| busy.min(prev + dt.times(servers));
            a.pcie_busy = cap(last.pcie_busy, a.pcie_busy, 2);
            if let Some(c) = &self.fw.compute {
                for (i, b) in a.group_busy.iter_mut().enumerate() {
                    *b = cap(last.group_busy[i], *b, c.cfg.groups[i].count as u64);
                }
                for (i, b) in a.accel_busy.iter_mut().enumerate() {
                    *b = cap(
                        last.accel_busy[i],
                        *b,
                        c.cfg.accelerators[i].instances as u64,
                    );
                }
                a.host_controller_busy = cap(last.host_controller_busy, a.host_controller_busy, 1);
            }
        }
        self.charged = Some((now, a.clone()));
        a
    }

    fn power_mark(&mut self, now: Time) {
        if self.ledger.is_none() {
            return;
        }
        let a = self.charged_activity(now);
        if let Some(l) = self.ledger.as_mut() {
            let e = l.energy(&a, now);
            l.mark(now, e);
            self.next_mark = now + l.window;
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
            v.push(crate::fio_output::JobStats::new("trace", None));
        }
        v.truncate(self.hosts.len());
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

    /// The firmware pipeline (stages, cores, accelerators).
    pub fn firmware(&self) -> &Firmware {
        &self.fw
    }

    /// The PCIe link.
    pub fn link(&self) -> &Link {
        &self.link
    }

    /// Number of host queues.
    pub fn queues(&self) -> usize {
        self.hosts.len()
    }

    /// Run to completion, calling `progress` now and then; `stop` is polled
    /// at the same points and ends the run with [`SimError::Interrupted`].
    pub fn run(
        &mut self,
        progress: &mut dyn FnMut(Progress),
        stop: &dyn Fn() -> bool,
    ) -> Result<(), SimError> {
        for q in 0..self.hosts.len() as u32 {
            self.start_queue(q, Time::ZERO)?;
        }
        if self.ramp_end > Time::ZERO {
            self.q.at(self.ramp_end, Event::RampEnd);
        }
        let mut tick: u32 = 0;
        while self.outstanding > 0 || self.active_hosts > 0 {
            let Some((now, ev)) = self.q.pop() else {
                return Err(SimError::Stalled(format!(
                    "{} commands outstanding, {} waiting for write-buffer space, {} flash transactions in flight, no events pending",
                    self.outstanding,
                    self.wait_buffer.len(),
                    self.flash.outstanding()
                )));
            };
            self.events += 1;
            if now >= self.next_mark && self.ledger.is_some() {
                self.power_mark(now);
            }
            self.dispatch(now, ev);
            if let Some(e) = self.failure.take() {
                return Err(e);
            }
            tick = tick.wrapping_add(1);
            if tick & 0xffff == 0 {
                if stop() {
                    return Err(SimError::Interrupted);
                }
                progress(self.progress());
            }
        }
        // A failure raised while starting the queues (e.g. a trace whose
        // first record is bad) may leave nothing to run: report it.
        if let Some(e) = self.failure.take() {
            return Err(e);
        }
        progress(self.progress());
        Ok(())
    }

    fn progress(&self) -> Progress {
        let now = self.q.now();
        let fraction = match (self.ios_total, self.deadline) {
            (Some(t), _) if t > 0 => Some((self.ios_done as f64 / t as f64).min(1.0)),
            (_, Some(d)) if d > Time::ZERO => Some((now.as_secs_f64() / d.as_secs_f64()).min(1.0)),
            _ => None,
        };
        Progress {
            sim_time: now,
            ios_done: self.ios_done,
            ios_total: self.ios_total,
            fraction,
        }
    }

    #[inline]
    fn dispatch(&mut self, now: Time, ev: Event) {
        match ev {
            Event::Doorbell { q } => {
                self.ctl.doorbell(q);
                self.try_fetch(now);
            }
            Event::FetchFree => {
                self.fetch_wakeup = false;
                self.try_fetch(now);
            }
            Event::Fetched { cmd } => {
                let (units, issue) = self.front_units(cmd);
                let t = self.fw.front(now, units, issue);
                if t > now {
                    self.q.at(t, Event::FrontDone { cmd });
                } else {
                    self.process(now, cmd);
                }
            }
            Event::FrontDone { cmd } => self.process(now, cmd),
            Event::Flash(fe) => {
                let mut done = std::mem::take(&mut self.done_buf);
                let q = &mut self.q;
                self.flash
                    .on_event(now, fe, &mut done, &mut |t, e| q.at(t, Event::Flash(e)));
                for &(owner, _) in &done {
                    self.txn_done(now, owner);
                }
                done.clear();
                self.done_buf = done;
            }
            Event::ReadDma { cmd } => self.part_done(now, cmd),
            Event::WriteIn { cmd } => self.write_in(now, cmd),
            Event::HostDone { cmd } => self.host_done(now, cmd),
            Event::TraceArrival { q } => {
                if let Err(e) = self.trace_arrival(now, q) {
                    self.failure = Some(e);
                }
            }
            Event::HostWake { q } => {
                self.hosts[q as usize].wake_pending = false;
                self.fill(q, now);
            }
            Event::ThinkEnd { q } => {
                self.hosts[q as usize].sleeping = false;
                self.fill(q, now);
            }
            Event::JobStart { job } => self.start_job(job as usize, now),
            Event::RampEnd => {
                self.ramp_snapshot = self.snapshot();
                if self.ledger.is_some() {
                    let a = self.charged_activity(now);
                    let e = self.ledger.as_ref().map(|l| l.energy(&a, now));
                    self.ramp_energy = e.map(|e| (now, e));
                }
            }
        }
    }

    /// Start queue `q` at `at` (time zero, or when the jobs it waits for end).
    fn start_queue(&mut self, q: u32, at: Time) -> Result<(), SimError> {
        let h = &mut self.hosts[q as usize];
        if h.waiting || h.started || h.done {
            return Ok(());
        }
        h.started = true;
        if let Some(p) = h.pacer.as_mut() {
            p.start_at(at);
        }
        match &mut h.gen {
            Source::Job(g) => g.start_at(at),
            Source::Trace(t) => {
                t.base = at;
                t.deadline = t.limit.map(|l| at + l);
            }
        }
        if h.open_trace() {
            return self.trace_schedule_next(q);
        }
        self.fill(q, at);
        Ok(())
    }

    /// Submit I/Os on queue `q` at `at` while it has room, its I/O is due
    /// (rate caps) and it is not thinking.
    fn fill(&mut self, q: u32, at: Time) {
        loop {
            let h = &mut self.hosts[q as usize];
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
                    self.q.at(wake, Event::ThinkEnd { q });
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
            let (due, io) = match h.held.take() {
                Some(x) => x,
                None => {
                    let next = match &mut h.gen {
                        Source::Job(g) => g.next_io(at),
                        Source::Trace(t) if t.deadline.is_some_and(|d| at >= d) => None,
                        Source::Trace(t) => match t.pull() {
                            Ok(x) => x.map(|(_, io)| io),
                            Err(e) => {
                                self.failure = Some(SimError::Workload(e));
                                None
                            }
                        },
                    };
                    let Some(io) = next else {
                        h.done = true;
                        self.active_hosts -= 1;
                        self.check_finished(q, at);
                        return;
                    };
                    let due = match h.pacer.as_mut() {
                        Some(p) => p.due(io.op, io.nlpn as u64 * self.unit_bytes),
                        None => Time::ZERO,
                    };
                    (due, io)
                }
            };
            if due > at {
                h.held = Some((due, io));
                if !h.wake_pending {
                    h.wake_pending = true;
                    self.q.at(due, Event::HostWake { q });
                }
                return;
            }
            if io.op != Op::Flush && h.pacer.as_mut().is_some_and(|p| p.on_issue(at)) {
                h.quiesce = true;
            }
            self.submit_io(q, at, io);
        }
    }

    /// If queue `q`'s job clone has ended, account for it; when its whole
    /// job has ended, start the jobs that were waiting for it.
    fn check_finished(&mut self, q: u32, at: Time) {
        let h = &mut self.hosts[q as usize];
        if h.finished || !h.done || h.outstanding > 0 {
            return;
        }
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
                self.check_finished(qq, at);
            }
        }
        if self.jobs[j].live > 0 {
            return;
        }
        for k in std::mem::take(&mut self.jobs[j].dependents) {
            self.jobs[k].waits_on -= 1;
            if self.jobs[k].waits_on == 0 {
                let delay = self.jobs[k].startdelay;
                if delay > Time::ZERO {
                    self.q.at(at + delay, Event::JobStart { job: k as u32 });
                } else {
                    self.start_job(k, at);
                }
            }
        }
    }

    /// Start job `k`'s queues at `at` (its ramp and runtime count from here).
    fn start_job(&mut self, k: usize, at: Time) {
        let ramp = self.jobs[k].ramp;
        for qq in self.jobs[k].queues.clone() {
            let h = &mut self.hosts[qq as usize];
            if h.done {
                continue;
            }
            h.waiting = false;
            h.measure_from = at + ramp;
            if let Err(e) = self.start_queue(qq, at) {
                self.failure = Some(e);
            }
        }
    }

    /// Stop queue `q` (`exitall`): it submits nothing more; I/Os in flight
    /// complete. A queue still waiting to start never starts. The caller
    /// then runs [`Drive::check_finished`] on it.
    fn stop_queue(&mut self, q: u32) {
        let h = &mut self.hosts[q as usize];
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
            self.active_hosts -= 1;
        }
        h.waiting = false;
    }

    /// Put one I/O generated at `at` on queue `q`'s submission queue and ring its doorbell.
    fn submit_io(&mut self, q: u32, at: Time, io: Io) {
        let h = &mut self.hosts[q as usize];
        self.ftl.prefetch(Lpn(io.lpn));
        let (_, ready) = h.cpu.reserve(at, self.dev.host.submit_overhead);
        if let Some(js) = self.job_stats.as_mut() {
            js[q as usize].submitted(h.outstanding);
        }
        h.outstanding += 1;
        // Jobs that start together are measured after the latest of their
        // ramps; a job that waited for others, after its own.
        let measured = at >= h.measure_from;
        let c = Cmd {
            q,
            op: io.op,
            lpn: io.lpn,
            nlpn: io.nlpn,
            submit: at,
            issued: ready,
            pending: 0,
            measured,
        };
        let id = match self.free_cmds.pop() {
            Some(i) => {
                self.cmds[i as usize] = c;
                i
            }
            None => {
                self.cmds.push(c);
                (self.cmds.len() - 1) as u32
            }
        };
        self.outstanding += 1;
        self.last_cmd = Some(id);
        let arrive = self.link.host_write(ready, DOORBELL_BYTES) + self.dev.nvme.doorbell_latency;
        if self.fw.fetch_is_free() {
            // A zero-cost fetch stage never queues: arbitration cannot reorder
            // anything, so the SQE fetch is issued when the doorbell arrives.
            let fetched = self.link.device_read(arrive, SQE_BYTES);
            // Without a compute model the front stages are dedicated FIFO servers
            // in tandem, so they are booked when the SQE arrives (one event per
            // command); issues of programs and GC operations, booked at event
            // time, fill the gaps left ahead or queue behind (see firmware.md).
            let (units, issue) = self.front_units(id);
            let ready = self.fw.front(fetched, units, issue);
            self.q
                .at(ready.max(self.q.now()), Event::FrontDone { cmd: id });
        } else if self.direct_fetch {
            // One submission queue, so arbitration takes commands in doorbell
            // order, and a fetch executor that only fetches, so no other
            // reservation can come between: booking the fetch now gives the
            // same start as booking it when the doorbell is seen (one event
            // fewer per command). As on the path above, the SQE read is then
            // reserved on the link ahead of transfers booked meanwhile.
            let seen = self.fw.notice_doorbell(arrive);
            let t = self.fw.fetch(seen);
            let fetched = self.link.device_read(t, SQE_BYTES);
            self.book_front(id, fetched.max(self.q.now()));
        } else {
            self.ctl.place(q, id);
            let seen = self.fw.notice_doorbell(arrive);
            self.q.at(seen.max(self.q.now()), Event::Doorbell { q });
        }
    }

    /// Open-loop trace: read the next record and schedule its arrival.
    fn trace_schedule_next(&mut self, q: u32) -> Result<(), SimError> {
        let now = self.q.now();
        let h = &mut self.hosts[q as usize];
        let Source::Trace(t) = &mut h.gen else {
            return Ok(());
        };
        let next = t.pull().map_err(SimError::Workload)?;
        // A replay job with a runtime ends there.
        let next = next.filter(|(at, _)| t.deadline.is_none_or(|d| t.base + *at < d));
        match next {
            Some((at, io)) => {
                t.next = Some((at, io));
                self.q.at((t.base + at).max(now), Event::TraceArrival { q });
            }
            None => {
                if !h.done {
                    h.done = true;
                    self.active_hosts -= 1;
                    self.check_finished(q, now);
                }
            }
        }
        Ok(())
    }

    /// Open-loop trace: a request arrives; submit it, or hold it if the queue is full.
    fn trace_arrival(&mut self, now: Time, q: u32) -> Result<(), SimError> {
        let limit = self.dev.nvme.max_queue_depth - 1;
        let h = &mut self.hosts[q as usize];
        if h.done {
            // Ended (exitall): nothing more arrives.
            return Ok(());
        }
        let Source::Trace(t) = &mut h.gen else {
            return Ok(());
        };
        if let Some((_, io)) = t.next.take() {
            if h.outstanding < limit && t.overflow.is_empty() {
                self.submit_io(q, now, io);
            } else {
                t.overflow.push_back((now, io));
            }
        }
        self.trace_schedule_next(q)
    }

    fn try_fetch(&mut self, now: Time) {
        loop {
            let free = self.fw.fetch_free_at();
            if free > now {
                if !self.fetch_wakeup && self.ctl.has_pending() {
                    self.fetch_wakeup = true;
                    self.q.at(free, Event::FetchFree);
                }
                return;
            }
            let Some(cmd) = self.ctl.arbitrate() else {
                return;
            };
            let t = self.fw.fetch(now);
            let arrive = self.link.device_read(t, SQE_BYTES);
            self.book_front(cmd, arrive);
        }
    }

    /// Command `cmd`'s SQE arrives at `arrive`: book its front stages now
    /// when their executors are dedicated, or, when cores may be shared
    /// between stages, when the SQE actually arrives (in event order).
    fn book_front(&mut self, cmd: u32, arrive: Time) {
        if self
            .fw
            .compute
            .as_ref()
            .is_some_and(|c| !c.front_is_dedicated())
        {
            self.q.at(arrive, Event::Fetched { cmd });
        } else {
            let (units, issue) = self.front_units(cmd);
            let ready = self.fw.front(arrive, units, issue);
            self.q.at(ready, Event::FrontDone { cmd });
        }
    }

    /// Mapping units of command `cmd` for the front stages, and how many of
    /// them the issue stage handles now: a read's units become flash reads
    /// (or, on a RAM disk, DMA set-ups), as do a RAM disk write's; a flash
    /// drive's write is issued when its program unit is ([`Drive::program`]);
    /// trims and flushes issue nothing.
    #[inline]
    fn front_units(&self, cmd: u32) -> (u64, u64) {
        let c = &self.cmds[cmd as usize];
        let n = c.nlpn as u64;
        let issue = match c.op {
            Op::Read => n,
            Op::Write if self.ramdisk => n,
            Op::Write | Op::Trim | Op::Flush => 0,
        };
        (n, issue)
    }

    /// Bit of the plane that a slot at offset `rem` within its multi-plane
    /// page group is in (a shift when slots per page is a power of two).
    #[inline]
    fn plane_bit(rem: u32, slots_per_page: u32, shift: Option<u32>) -> u64 {
        let plane = match shift {
            Some(s) => rem >> s,
            None => rem / slots_per_page,
        };
        1u64 << plane.min(63)
    }

    fn process(&mut self, now: Time, cmd: u32) {
        let c = self.cmds[cmd as usize];
        match c.op {
            Op::Trim => return self.deallocate(now, cmd),
            Op::Flush => return self.flush_cmd(now, cmd),
            Op::Read | Op::Write => {}
        }
        let write = c.op == Op::Write;
        if self.ramdisk {
            // RAM disk: the data lives in controller DRAM.
            let b = c.nlpn as u64 * self.unit_bytes;
            self.act.dram_bytes += b;
            let xfer = self.dev.cache.dram_bandwidth.transfer_time(b);
            let done = if write {
                let arrive = self.link.device_read(now, b);
                self.dram.reserve(arrive, xfer).1 + self.dev.cache.dram_latency
            } else {
                let t = self.dram.reserve(now, xfer).1 + self.dev.cache.dram_latency;
                self.link.device_write(t, b)
            };
            let span = xfer
                + self.dev.cache.dram_latency
                + if write {
                    self.link.device_read_time(b)
                } else {
                    self.link.device_write_time(b)
                };
            self.fw.host_dma(now, span);
            self.cmds[cmd as usize].pending = 1;
            self.q.at(done, Event::ReadDma { cmd });
            return;
        }
        if write {
            for l in c.lpn..c.lpn + c.nlpn {
                self.ftl.prefetch_overwrite(Lpn(l));
            }
            if self.wait_buffer.is_empty() && self.cache.reserve(c.nlpn as u64) {
                self.start_write_dma(now, cmd);
            } else {
                self.wait_buffer.push_back(cmd);
            }
            return;
        }
        // Read: cache lookup, translation, grouping per physical page.
        let mut dram_units = 0u64;
        let mut zero_units = 0u64;
        let mut groups = std::mem::take(&mut self.scratch_groups);
        groups.clear();
        let ppg = self.geo.planes_per_unit * self.geo.slots_per_page;
        for l in c.lpn..c.lpn + c.nlpn {
            if self.cache.read_lookup(l) {
                dram_units += 1;
                continue;
            }
            match self.ftl.lookup(Lpn(l)) {
                Mapping::Unmapped => zero_units += 1,
                Mapping::InBuffer => dram_units += 1,
                Mapping::Flash(p) => {
                    let key = p.0 / ppg;
                    let plane =
                        Self::plane_bit(p.0 - key * ppg, self.geo.slots_per_page, self.spp_shift);
                    match groups.iter_mut().find(|g| g.0 == key) {
                        Some(g) => {
                            g.2 += 1;
                            g.3 |= plane;
                        }
                        None => groups.push((key, p.0, 1, plane)),
                    }
                }
            }
        }
        let mut pending = 0;
        for &(_, first, n, planes) in &groups {
            let a = self.geo.decode(Ppa(first));
            let die = self.geo.die_of_unit(a.unit);
            let t = Txn {
                kind: OpKind::Read,
                die,
                t_array: self.timings.read(self.geo.page_type(a.page)),
                bytes: n as u64 * self.unit_bytes,
                owner: (TAG_HREAD << TAG_SHIFT) | ((n as u64) << 32) | cmd as u64,
            };
            pending += 1;
            // One page read per plane touched; the bus carries only the slots asked for.
            self.act.nand_read_pages += planes.count_ones() as u64;
            self.act.nand_bus_bytes += t.bytes;
            let q = &mut self.q;
            self.flash
                .submit(now, t, &mut |tt, e| q.at(tt, Event::Flash(e)));
        }
        self.scratch_groups = groups;
        if dram_units + zero_units > 0 {
            pending += 1;
            let mut t = now;
            if dram_units > 0 {
                let b = dram_units * self.unit_bytes;
                self.act.dram_bytes += b;
                t = self
                    .dram
                    .reserve(now, self.dev.cache.dram_bandwidth.transfer_time(b))
                    .1
                    + self.dev.cache.dram_latency;
            }
            let arrive = self
                .link
                .device_write(t, (dram_units + zero_units) * self.unit_bytes);
            let mut span = self
                .link
                .device_write_time((dram_units + zero_units) * self.unit_bytes);
            if dram_units > 0 {
                span = span
                    + self
                        .dev
                        .cache
                        .dram_bandwidth
                        .transfer_time(dram_units * self.unit_bytes)
                    + self.dev.cache.dram_latency;
            }
            self.fw.host_dma(now, span);
            self.q.at(arrive, Event::ReadDma { cmd });
        }
        self.cmds[cmd as usize].pending = pending;
        if pending == 0 {
            self.complete(now, cmd);
        }
    }

    /// Dataset Management (deallocate): unmap the range and drop any
    /// buffered copy; no data moves. The mapping updates are the firmware's
    /// per-page work already charged by the front stages.
    fn deallocate(&mut self, now: Time, cmd: u32) {
        let c = self.cmds[cmd as usize];
        if !self.ramdisk {
            for l in c.lpn..c.lpn + c.nlpn {
                self.ftl.trim(Lpn(l));
                self.cache.drop_lpn(l);
            }
            // Dropped buffer entries may have been all a pending flush waited for.
            self.complete_flushes(now);
        }
        self.complete(now, cmd);
    }

    /// NVMe Flush: done once every write acknowledged before it is on flash.
    /// With power-loss protection (or a RAM disk) the buffer already counts
    /// as non-volatile and the flush completes at once; otherwise the buffer
    /// writes out what it holds, padding partial program units.
    fn flush_cmd(&mut self, now: Time, cmd: u32) {
        if self.ramdisk || self.dev.cache.power_loss_protection {
            return self.complete(now, cmd);
        }
        match self.cache.flush_barrier() {
            None => self.complete(now, cmd),
            Some(barrier) => {
                self.flushes.push_back((barrier, cmd));
                self.try_flush(now);
            }
        }
    }

    /// Complete the flushes whose data is now all on flash (in order).
    fn complete_flushes(&mut self, now: Time) {
        while let Some(&(barrier, cmd)) = self.flushes.front() {
            if !self.cache.flushed(barrier) {
                return;
            }
            self.flushes.pop_front();
            self.complete(now, cmd);
        }
    }

    fn part_done(&mut self, now: Time, cmd: u32) {
        let c = &mut self.cmds[cmd as usize];
        c.pending -= 1;
        if c.pending == 0 {
            self.complete(now, cmd);
        }
    }

    fn start_write_dma(&mut self, now: Time, cmd: u32) {
        let n = self.cmds[cmd as usize].nlpn as u64 * self.unit_bytes;
        self.act.dram_bytes += n;
        let arrive = self.link.device_read(now, n);
        let (_, e) = self
            .dram
            .reserve(arrive, self.dev.cache.dram_bandwidth.transfer_time(n));
        let done = e + self.dev.cache.dram_latency;
        let span = self.link.device_read_time(n)
            + self.dev.cache.dram_bandwidth.transfer_time(n)
            + self.dev.cache.dram_latency;
        self.fw.host_dma(now, span);
        self.q.at(done, Event::WriteIn { cmd });
    }

    fn write_in(&mut self, now: Time, cmd: u32) {
        let c = self.cmds[cmd as usize];
        for l in c.lpn..c.lpn + c.nlpn {
            self.ftl.write_to_buffer(Lpn(l));
            self.cache.insert_host(l);
        }
        self.try_flush(now);
        self.complete(now, cmd);
    }

    /// Completion stage, CQE post and interrupt for a command whose data is
    /// done at `now` (which may be later than the current event time when a
    /// read's last DMA was just reserved on the link).
    fn complete(&mut self, now: Time, cmd: u32) {
        let t = self.fw.complete(now);
        let mut at = self.link.device_write(t, CQE_BYTES);
        if !self.dev.nvme.polling {
            at = self.link.device_write(t, MSIX_BYTES).max(at);
        }
        self.q.at(at, Event::HostDone { cmd });
    }

    fn host_done(&mut self, now: Time, cmd: u32) {
        let c = self.cmds[cmd as usize];
        let (_, end) = self.hosts[c.q as usize]
            .cpu
            .reserve(now, self.dev.host.complete_overhead);
        let lat = end - c.submit;
        if c.measured {
            let bytes = c.nlpn as u64 * self.unit_bytes;
            match c.op {
                Op::Read => self.read.record(lat, bytes),
                Op::Write => self.write.record(lat, bytes),
                Op::Trim => self.trim.record(lat, bytes),
                Op::Flush => self.flush.record(lat, 0),
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
                        end.saturating_sub(self.hosts[c.q as usize].measure_from),
                    ),
                );
            }
            if end > self.last_completion {
                self.last_completion = end;
            }
        }
        if c.op == Op::Read && self.dev.cache.read_cache.0 > 0 {
            for l in c.lpn..c.lpn + c.nlpn {
                if matches!(self.ftl.lookup(Lpn(l)), Mapping::Flash(_)) {
                    self.cache.insert_clean(l);
                }
            }
        }
        self.ios_done += 1;
        self.outstanding -= 1;
        self.hosts[c.q as usize].outstanding -= 1;
        self.free_cmds.push(cmd);
        if self.hosts[c.q as usize].open_trace() {
            // Open loop: the next request does not wait for this one, but a held one may go now.
            let held = match &mut self.hosts[c.q as usize].gen {
                Source::Trace(t) => t.overflow.pop_front(),
                Source::Job(_) => None,
            };
            if let Some((arrived, io)) = held {
                self.submit_io(c.q, end, io);
                // Latency counts from the trace arrival, not from when the queue had room.
                if let Some(last) = self.last_cmd {
                    self.cmds[last as usize].submit = arrived;
                }
            }
        } else {
            let h = &mut self.hosts[c.q as usize];
            // fio counts think-time blocks over reads, writes and trims only.
            if c.op != Op::Flush && h.pacer.as_mut().is_some_and(|p| p.on_complete(end)) {
                h.quiesce = true;
            }
            self.fill(c.q, end);
        }
        self.check_finished(c.q, end);
        if self.dev.ftl.gc_background {
            // Background GC: collect ahead (down to threshold + margin) on
            // units whose die has no host reads or programs waiting.
            for u in 0..self.geo.units {
                let die = self.geo.die_of_unit(u);
                if self.flash.die_load(die, OpKind::Read) == 0
                    && self.flash.die_load(die, OpKind::Write) == 0
                {
                    self.maybe_gc(now, u, self.dev.ftl.gc_background_margin);
                }
            }
        }
    }

    /// Program full program units from the DRAM buffer: GC relocation data
    /// back into its own unit first, then host data to the next unit in
    /// striping order whose die has room in its program queue.
    fn try_flush(&mut self, now: Time) {
        // Every die already has its programs queued: nothing can be flushed
        // (the common case under sustained writes; avoids scanning the units).
        if self.program_room == 0 {
            return;
        }
        let spp = self.geo.slots_per_program;
        if self.cache.dirty_gc_total() >= spp {
            for u in 0..self.geo.units {
                while self.cache.dirty_gc(u) >= spp
                    && self.flash.die_load(self.geo.die_of_unit(u), OpKind::Write)
                        < PROGRAMS_PER_DIE
                    && self.ftl.can_allocate(u, false)
                {
                    self.program(now, u, false);
                }
            }
        }
        // While data written before the oldest pending flush is still dirty,
        // partial program units are written out too (padded).
        loop {
            // Re-checked every pass: once the data before the barrier is in
            // programs, newer data is packed into full units again.
            let force = self
                .flushes
                .front()
                .is_some_and(|&(barrier, _)| self.cache.dirty_before(barrier));
            if !((force || self.cache.dirty_host() + self.cache.dirty_gc_total() >= spp)
                && self.cache.dirty_host() > 0)
            {
                return;
            }
            let n = self.ftl.stripe().len();
            let mut chosen = None;
            for i in 0..n {
                let pos = (*self.ftl.stripe_cursor() + i) % n;
                let u = self.ftl.stripe()[pos];
                if (force || self.cache.dirty_host() + self.cache.dirty_gc(u) >= spp)
                    && self.flash.die_load(self.geo.die_of_unit(u), OpKind::Write)
                        < PROGRAMS_PER_DIE
                    && self.ftl.can_allocate(u, true)
                {
                    chosen = Some((pos, u));
                    break;
                }
            }
            let Some((pos, u)) = chosen else { return };
            *self.ftl.stripe_cursor() = (pos + 1) % n;
            self.program(now, u, true);
        }
    }

    /// Allocate one program unit on `u` and issue its program transaction.
    fn program(&mut self, now: Time, u: u32, host: bool) {
        let spp = self.geo.slots_per_program as usize;
        let pid = match self.free_progs.pop() {
            Some(p) => p,
            None => {
                self.progs.push((Vec::with_capacity(spp), 0));
                (self.progs.len() - 1) as u32
            }
        };
        let (mut lpns, _) = std::mem::take(&mut self.progs[pid as usize]);
        lpns.clear();
        // The staleness check reads each staged LPN's L2P entry: overlap the misses.
        for l in self.cache.gc_staged(u, spp) {
            self.ftl.prefetch(Lpn(l));
        }
        let ftl = &self.ftl;
        let gc = self.cache.take_for_program(
            u,
            spp,
            host,
            pid,
            |l| ftl.lookup(Lpn(l)) == Mapping::InBuffer,
            &mut lpns,
        );
        if lpns.is_empty() {
            // Every staged GC entry had gone stale.
            self.progs[pid as usize] = (lpns, 0);
            self.free_progs.push(pid);
            return;
        }
        self.fw.background(1, now);
        let Some(first) = self.ftl.allocate_program(u) else {
            unreachable_program(u);
            return;
        };
        if first.0 % self.geo.slots_per_block == 0 {
            // A new active block was opened for this program.
            self.fw.background(2, now);
        }
        self.fw.issue_flash_command(now);
        // The program unit's data is read out of the buffer on its way to the
        // channel (streamed: it occupies DRAM bandwidth but does not delay the
        // slower channel transfer).
        let out = spp as u64 * self.unit_bytes;
        self.act.dram_bytes += out;
        self.dram
            .reserve(now, self.dev.cache.dram_bandwidth.transfer_time(out));
        for &l in &lpns {
            self.ftl.prefetch(Lpn(l));
        }
        for (i, &l) in lpns.iter().enumerate() {
            self.ftl.commit(Lpn(l), Ppa(first.0 + i as u32));
        }
        self.progs[pid as usize] = (lpns, gc);
        let a = self.geo.decode(first);
        let t = Txn {
            kind: OpKind::Write,
            die: self.geo.die_of_unit(u),
            t_array: self.timings.program(self.geo.page_type(a.page)),
            bytes: spp as u64 * self.unit_bytes,
            owner: (TAG_PROG << TAG_SHIFT) | pid as u64,
        };
        self.program_room -= 1;
        let q = &mut self.q;
        self.flash
            .submit(now, t, &mut |tt, e| q.at(tt, Event::Flash(e)));
        self.maybe_gc(now, u, 0);
    }

    fn maybe_gc(&mut self, now: Time, unit: u32, margin: u32) {
        if self.gc[unit as usize].is_some() || !self.ftl.needs_gc(unit, margin) {
            return;
        }
        self.fw.background(0, now);
        let Some(victim) = self.ftl.select_victim(unit) else {
            return;
        };
        let slots = self.ftl.valid_slots(victim);
        self.gc[unit as usize] = Some(GcJob {
            victim,
            slots,
            next: 0,
            inflight: 0,
            erasing: false,
        });
        self.gc_issue(now, unit);
    }

    fn gc_issue(&mut self, now: Time, unit: u32) {
        let ppg = self.geo.planes_per_unit * self.geo.slots_per_page;
        let staging_limit = 4 * self.geo.slots_per_program;
        let Some(job) = self.gc[unit as usize].as_mut() else {
            return;
        };
        while job.inflight < GC_READS_INFLIGHT
            && job.next < job.slots.len()
            && self.cache.dirty_gc(unit) < staging_limit
        {
            let start = job.next;
            let key = job.slots[start].0 .0 / ppg;
            let mut end = start + 1;
            while end < job.slots.len() && job.slots[end].0 .0 / ppg == key {
                end += 1;
            }
            job.next = end;
            job.inflight += 1;
            let (spp, shift) = (self.geo.slots_per_page, self.spp_shift);
            let planes = job.slots[start..end]
                .iter()
                .fold(0u64, |m, s| m | Self::plane_bit(s.0 .0 % ppg, spp, shift));
            // GC reads are flash commands the firmware issues, and cost NAND
            // energy like host reads.
            self.fw.issue_flash_command(now);
            self.act.nand_read_pages += planes.count_ones() as u64;
            self.act.nand_bus_bytes += (end - start) as u64 * self.unit_bytes;
            let a = self.geo.decode(job.slots[start].0);
            let t = Txn {
                kind: OpKind::Read,
                die: self.geo.die_of_unit(unit),
                t_array: self.timings.read(self.geo.page_type(a.page)),
                bytes: (end - start) as u64 * self.unit_bytes,
                owner: (TAG_GCREAD << TAG_SHIFT)
                    | ((unit as u64) << 32)
                    | ((start as u64) << 16)
                    | (end - start) as u64,
            };
            let q = &mut self.q;
            self.flash
                .submit(now, t, &mut |tt, e| q.at(tt, Event::Flash(e)));
        }
        if job.next == job.slots.len() && job.inflight == 0 && !job.erasing {
            job.erasing = true;
            self.fw.issue_flash_command(now);
            let t = Txn {
                kind: OpKind::Erase,
                die: self.geo.die_of_unit(unit),
                t_array: self.timings.t_erase,
                bytes: 0,
                owner: (TAG_ERASE << TAG_SHIFT) | unit as u64,
            };
            let q = &mut self.q;
            self.flash
                .submit(now, t, &mut |tt, e| q.at(tt, Event::Flash(e)));
        }
    }

    fn txn_done(&mut self, now: Time, owner: u64) {
        let tag = owner >> TAG_SHIFT;
        match tag {
            TAG_HREAD => {
                let cmd = (owner & 0xffff_ffff) as u32;
                let n = (owner >> 32) & 0xff_ffff;
                let arrive = self.link.device_write(now, n * self.unit_bytes);
                let span = self.link.device_write_time(n * self.unit_bytes);
                self.fw.host_dma(now, span);
                // The link is FIFO per direction: the DMA reserved last arrives
                // last, so the command completes when this one arrives if it is
                // the command's last outstanding part.
                self.part_done(arrive, cmd);
            }
            TAG_GCREAD => {
                let unit = ((owner >> 32) & 0xff_ffff) as u32;
                let start = ((owner >> 16) & 0xffff) as usize;
                let n = (owner & 0xffff) as usize;
                if let Some(job) = self.gc[unit as usize].as_mut() {
                    for &(_, l) in &job.slots[start..start + n] {
                        self.ftl.prefetch(l);
                    }
                    for i in start..start + n {
                        let (p, l) = job.slots[i];
                        if self.ftl.relocate_to_buffer(p, l) {
                            self.cache.insert_gc(l.0, unit);
                        }
                    }
                    job.inflight -= 1;
                }
                // GC data moved over the channel into DRAM.
                self.act.dram_bytes += n as u64 * self.unit_bytes;
                self.dram.reserve(
                    now,
                    self.dev
                        .cache
                        .dram_bandwidth
                        .transfer_time(n as u64 * self.unit_bytes),
                );
                self.gc_issue(now, unit);
                self.try_flush(now);
            }
            TAG_PROG => {
                let pid = (owner & 0xffff_ffff) as u32;
                self.program_room += 1;
                let (lpns, gc) = std::mem::take(&mut self.progs[pid as usize]);
                for &l in &lpns[gc..] {
                    self.cache.program_done(l, pid);
                }
                self.progs[pid as usize] = (lpns, gc);
                self.free_progs.push(pid);
                if !self.flushes.is_empty() {
                    self.complete_flushes(now);
                }
                while let Some(&c) = self.wait_buffer.front() {
                    if self.cache.reserve(self.cmds[c as usize].nlpn as u64) {
                        self.wait_buffer.pop_front();
                        self.start_write_dma(now, c);
                    } else {
                        break;
                    }
                }
                for u in 0..self.geo.units {
                    if self.gc[u as usize]
                        .as_ref()
                        .is_some_and(|j| j.next < j.slots.len() && j.inflight < GC_READS_INFLIGHT)
                    {
                        self.gc_issue(now, u);
                    }
                }
                self.try_flush(now);
            }
            TAG_ERASE => {
                let unit = (owner & 0xff_ffff) as u32;
                if let Some(job) = self.gc[unit as usize].take() {
                    self.ftl.erase(job.victim);
                }
                self.try_flush(now);
                self.maybe_gc(now, unit, 0);
            }
            _ => {}
        }
    }
}
