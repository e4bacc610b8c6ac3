//! The messages of the one event loop: what the host, the fabric and the
//! drives schedule for one another. The loop ([`crate::system`]) pops them in
//! (time, sequence) order and hands each to the part it names; no part calls
//! into another's internals.

use crate::device::flash::FlashEvent;

/// One scheduled event.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    // -- drive (NVMe controller, firmware, flash) --------------------------
    /// A submission queue's doorbell write has reached the controller.
    Doorbell {
        /// Drive.
        d: u16,
        /// Submission queue (the drive's own index).
        q: u32,
    },
    /// The fetch stage is free again: arbitrate the next command.
    FetchFree {
        /// Drive.
        d: u16,
    },
    /// A command's SQE has arrived in the controller.
    Fetched {
        /// Drive.
        d: u16,
        /// Command id.
        cmd: u32,
    },
    /// A command's front firmware stages are done.
    FrontDone {
        /// Drive.
        d: u16,
        /// Command id.
        cmd: u32,
    },
    /// The flash scheduler's own event.
    Flash {
        /// Drive.
        d: u16,
        /// The scheduler's event.
        fe: FlashEvent,
    },
    /// One DMA part of a command has reached the host.
    ReadDma {
        /// Drive.
        d: u16,
        /// Command id.
        cmd: u32,
    },
    /// A write command's data is in the drive's DRAM.
    WriteIn {
        /// Drive.
        d: u16,
        /// Command id.
        cmd: u32,
    },
    /// The drive's link can take its next queued read-data transfer.
    DmaReady {
        /// Drive.
        d: u16,
    },
    /// The drive is worn out (a unit has too few good blocks left), or its
    /// data store failed: the run ends with that error.
    WornOut {
        /// Drive.
        d: u16,
    },
    /// Check whether the drive has been idle for `ftl.slc_fold_idle`
    /// (then it folds its SLC cache).
    SlcIdle {
        /// Drive.
        d: u16,
    },
    // -- host ----------------------------------------------------------------
    /// A command's CQE and interrupt have reached the host.
    HostDone {
        /// Drive.
        d: u16,
        /// Command id.
        cmd: u32,
    },
    /// A live request (a served NBD connection's) arrives on host queue `q`.
    LiveArrival {
        /// Host queue.
        q: u32,
    },
    /// A buffered application I/O ends (its copy is done, or writeback
    /// let a throttled write go).
    AppDone {
        /// Application I/O.
        app: u32,
    },
    /// The page cache's flusher wakes to write back expired dirty data.
    FlusherWake,
    /// The measured window starts.
    RampEnd,
    /// A drive's checkpoint interval is over (`ftl.checkpoint_interval`),
    /// or its mapping log reached `ftl.checkpoint_log_size` (`by_log`).
    Checkpoint {
        /// Drive.
        d: u16,
        /// Started by the log size, not the interval.
        by_log: bool,
    },
    /// The power fails (`--power-loss-at`): the run ends, every drive
    /// loses what was not durable and recovers.
    PowerLoss,
    /// Open-loop trace replay: the next request arrives.
    TraceArrival {
        /// Host queue.
        q: u32,
    },
    /// A rate-capped queue's held I/O is due.
    HostWake {
        /// Host queue.
        q: u32,
    },
    /// A queue's think time is over.
    ThinkEnd {
        /// Host queue.
        q: u32,
    },
    /// A steady-state unit's second is over (`ss=`).
    SteadyTick {
        /// Unit.
        unit: u32,
    },
    /// A job's `startdelay` is over.
    JobStart {
        /// Job index in the workload.
        job: u32,
    },
}
