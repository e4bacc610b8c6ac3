//! A host queue (one NVMe queue pair per job clone, or the trace replay's)
//! and the ordering state of the workload's jobs.

use super::trace_feed::TraceSource;
use crate::units::Time;
use crate::workload::gen::{Io, JobGen};
use crate::workload::pacing::Pacer;
use crate::workload::Replay;

/// Where a host queue's I/Os come from.
pub(crate) enum Source {
    /// A fio job clone.
    Job(JobGen),
    /// A block trace.
    Trace(Box<TraceSource>),
    /// Requests from outside the simulation (a served connection).
    Live(Box<super::live::LiveSource>),
}

pub(crate) struct HostQueue {
    pub(crate) gen: Source,
    pub(crate) depth: u32,
    pub(crate) outstanding: u32,
    /// The CPU its thread runs on (index into the host's CPUs).
    pub(crate) cpu: usize,
    /// Buffered I/O (through the page cache).
    pub(crate) buffered: bool,
    /// The source has no more I/O.
    pub(crate) done: bool,
    /// Done and every I/O completed (the job clone has ended).
    pub(crate) finished: bool,
    /// Index of the job in the workload (`usize::MAX` for a `--trace` replay).
    pub(crate) job: usize,
    /// Waiting for other jobs to end (`stonewall`, `wait_for`).
    pub(crate) waiting: bool,
    /// Rate caps and think time, if the job has any.
    pub(crate) pacer: Option<Box<Pacer>>,
    /// An I/O drawn but not yet due under the rate cap, with its due time.
    pub(crate) held: Option<(Time, Io)>,
    /// A `HostWake` event is scheduled.
    pub(crate) wake_pending: bool,
    /// Think time is due: submit nothing until the queue drains.
    pub(crate) quiesce: bool,
    /// Idling in think time until a `ThinkEnd` event.
    pub(crate) sleeping: bool,
    /// `start_queue` has run (a queue starts once).
    pub(crate) started: bool,
    /// I/Os submitted from this time on are measured (after the ramp).
    pub(crate) measure_from: Time,
    /// The drives this queue's I/Os go to, each with the submission queue
    /// the queue has there: (drive, SQ). Round robin over them, one I/O each
    /// (fio's default `file_service_type=roundrobin`).
    pub(crate) targets: Vec<(u16, u32)>,
    /// Next target.
    pub(crate) next_target: usize,
    /// Reads, writes and trims completed, and their bytes (ramp included;
    /// fio's counters for steady-state detection).
    pub(crate) done_ios: u64,
    pub(crate) done_bytes: u64,
    /// The steady-state unit judging this queue, if any.
    pub(crate) steady: Option<u32>,
    /// fio's verify state, if the job verifies.
    pub(crate) verify: Option<Box<super::verify::QueueVerify>>,
    /// Seed of the data this queue writes (with a data store).
    pub(crate) data_seed: u64,
    /// Writes issued (the job's write numbers, fio's `numberio`).
    pub(crate) numberio: u64,
    /// The next I/O reads back a logged write: its drive and write number.
    pub(crate) read_back: Option<(u16, u64)>,
    /// What its writes carry (with a data store, when it does not verify).
    pub(crate) buffer: crate::workload::BufferFill,
}

impl HostQueue {
    pub(crate) fn new(gen: Source, depth: u32, job: usize, pacer: Option<Box<Pacer>>) -> HostQueue {
        HostQueue {
            gen,
            depth,
            outstanding: 0,
            cpu: 0,
            buffered: false,
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
            targets: Vec::new(),
            next_target: 0,
            done_ios: 0,
            done_bytes: 0,
            steady: None,
            verify: None,
            data_seed: 0,
            numberio: 0,
            read_back: None,
            buffer: crate::workload::BufferFill::Random,
        }
    }

    pub(crate) fn open_trace(&self) -> bool {
        matches!(&self.gen, Source::Trace(t) if matches!(t.spec.replay, Replay::Open { .. }))
    }

    /// Open loop: requests arrive on their own (a timed trace, or live
    /// requests), not when an earlier one completes.
    #[inline]
    pub(crate) fn open_loop(&self) -> bool {
        match &self.gen {
            Source::Job(_) => false,
            Source::Trace(t) => matches!(t.spec.replay, Replay::Open { .. }),
            Source::Live(_) => true,
        }
    }
}

/// Ordering state of one job of the workload (`stonewall`, `wait_for`).
pub(crate) struct JobRun {
    /// Jobs this one still waits for.
    pub(crate) waits_on: u32,
    /// Jobs waiting for this one.
    pub(crate) dependents: Vec<usize>,
    /// Its host queues.
    pub(crate) queues: std::ops::Range<u32>,
    /// Clones not yet ended.
    pub(crate) live: u32,
    /// Ramp time (counted from the job's start).
    pub(crate) ramp: Time,
    /// Delay between when the job may start and its start (`startdelay`).
    pub(crate) startdelay: Time,
    /// Reporting group.
    pub(crate) group: u32,
    /// Ending this job ends the others of its group (`exitall`).
    pub(crate) exitall: bool,
    /// When its queues started and when its last clone ended.
    pub(crate) started: Option<Time>,
    pub(crate) ended: Option<Time>,
}
