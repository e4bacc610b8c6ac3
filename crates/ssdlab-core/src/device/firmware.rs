//! Controller firmware pipeline (stage skeleton).
//!
//! The request path runs through the stages of seed 004: (1) fetch,
//! (2) parse/split, (3) data-cache lookup, (4) logical-to-physical
//! translation, (5) flash command issue, (7) completion; stage (6) is the
//! flash operation itself. Here each stage is one FIFO server with a
//! configurable service time (zero by default): per command for fetch,
//! parse and completion, per mapping unit for lookup, translation and issue.
//! Putting stages on modelled cores and accelerators replaces [`Stage`]'s
//! server with a core model without changing the call sites.

pub(crate) mod config;

use crate::compute::Compute;
use crate::config::FirmwareConfig;
use crate::engine::FifoServer;
use crate::units::Time;

/// Firmware stages on the critical path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageId {
    /// (1) Fetch the command from the host submission queue.
    Fetch = 0,
    /// (2) Parse and split into flash transactions.
    Parse = 1,
    /// (3) Data-cache lookup.
    CacheLookup = 2,
    /// (4) Logical-to-physical translation.
    Translate = 3,
    /// (5) Flash command issue.
    Issue = 4,
    /// (7) Completion return.
    Complete = 5,
}

/// Stage names in order, for reports.
pub const STAGE_NAMES: [&str; 6] = [
    "fetch",
    "parse",
    "cache_lookup",
    "translate",
    "issue",
    "complete",
];

/// One stage: a FIFO server with a fixed service time per operation.
#[derive(Debug, Clone, Default)]
pub struct Stage {
    server: FifoServer,
    service: Time,
    ops: u64,
}

impl Stage {
    /// Serve `n` operations arriving at `at`; returns completion time.
    #[inline]
    pub fn serve(&mut self, at: Time, n: u64) -> Time {
        if self.service == Time::ZERO || n == 0 {
            return at;
        }
        self.ops += n;
        self.server.reserve(at, self.service.times(n)).1
    }
    /// When the stage is next free.
    pub fn free_at(&self) -> Time {
        self.server.free_at()
    }
    /// Busy time.
    pub fn busy(&self) -> Time {
        self.server.busy()
    }
    /// Service time per operation.
    pub fn service(&self) -> Time {
        self.service
    }
}

/// The firmware pipeline.
pub struct Firmware {
    /// Fixed-time stages indexed by [`StageId`] (used without a compute model).
    pub stages: [Stage; 6],
    front_zero: bool,
    /// Cores and accelerators, when the device has a `[controller]`.
    pub compute: Option<Compute>,
}

impl Firmware {
    /// From config.
    pub fn new(c: &FirmwareConfig) -> Firmware {
        let mk = |t: Time| Stage {
            server: FifoServer::default(),
            service: t,
            ops: 0,
        };
        let stages = [
            mk(c.fetch),
            mk(c.parse),
            mk(c.cache_lookup),
            mk(c.translate),
            mk(c.issue),
            mk(c.complete),
        ];
        let front_zero = [c.parse, c.cache_lookup, c.translate, c.issue]
            .iter()
            .all(|t| *t == Time::ZERO);
        Firmware {
            stages,
            front_zero,
            compute: None,
        }
    }

    /// With a compute model: stages run on its cores and accelerators.
    pub fn with_compute(mut self, c: Option<Compute>) -> Firmware {
        if c.is_some() {
            self.front_zero = false;
        }
        self.compute = c;
        self
    }

    /// Fetch costs nothing and never queues (the drive may then skip arbitration).
    pub fn fetch_is_free(&self) -> bool {
        self.compute.is_none() && self.stages[StageId::Fetch as usize].service() == Time::ZERO
    }

    /// A compute model whose fetch executor serves nothing else (see
    /// [`Compute::fetch_is_dedicated`]).
    pub fn fetch_is_dedicated(&self) -> bool {
        self.compute
            .as_ref()
            .is_some_and(|c| c.fetch_is_dedicated())
    }

    /// When the fetch stage can next start.
    pub fn fetch_free_at(&self) -> Time {
        match &self.compute {
            Some(c) => c.free_at(StageId::Fetch as usize),
            None => self.stages[StageId::Fetch as usize].free_at(),
        }
    }

    /// When firmware notices a doorbell that arrived at `at` (polling delay).
    #[inline]
    pub fn notice_doorbell(&self, at: Time) -> Time {
        self.compute.as_ref().map_or(at, |c| c.notice_doorbell(at))
    }

    /// Stage (1) for one command arriving at `at`, then the host controller's SQE handling.
    #[inline]
    pub fn fetch(&mut self, at: Time) -> Time {
        match &mut self.compute {
            Some(c) => {
                let t = c.serve(StageId::Fetch as usize, at, 1);
                c.host_controller(t)
            }
            None => self.stages[StageId::Fetch as usize].serve(at, 1),
        }
    }

    /// Background firmware work (0 GC victim selection, 1 eviction decision, 2 block allocation).
    #[inline]
    pub fn background(&mut self, kind: usize, at: Time) -> Time {
        match &mut self.compute {
            Some(c) => c.background(kind, at),
            None => at,
        }
    }

    /// Stages (2)-(5) for a command of `units` mapping units arriving at
    /// `at`: parse once, cache lookup and translation per unit, and the
    /// issue stage for the `issue_units` units that become flash commands
    /// now (a read's units; a write's data is issued later, when its program
    /// unit is, see [`Firmware::issue_flash_command`]; a trim issues none).
    #[inline]
    pub fn front(&mut self, at: Time, units: u64, issue_units: u64) -> Time {
        if self.front_zero {
            return at;
        }
        if let Some(c) = &mut self.compute {
            let t = c.serve(StageId::Parse as usize, at, 1);
            let t = c.serve(StageId::CacheLookup as usize, t, units);
            let t = c.serve(StageId::Translate as usize, t, units);
            return c.serve(StageId::Issue as usize, t, issue_units);
        }
        let t = self.stages[StageId::Parse as usize].serve(at, 1);
        let t = self.stages[StageId::CacheLookup as usize].serve(t, units);
        let t = self.stages[StageId::Translate as usize].serve(t, units);
        self.stages[StageId::Issue as usize].serve(t, issue_units)
    }

    /// Stage (5) for a flash command the firmware issues on its own: a
    /// program of buffered data, a GC read, an erase. It occupies the issue
    /// stage's executor from `at`; the flash operation is not delayed by it
    /// (the firmware hands it to the flash controller's queue).
    #[inline]
    pub fn issue_flash_command(&mut self, at: Time) {
        if self.front_zero {
            return;
        }
        match &mut self.compute {
            Some(c) => {
                c.serve(StageId::Issue as usize, at, 1);
            }
            None => {
                self.stages[StageId::Issue as usize].serve(at, 1);
            }
        }
    }

    /// The issue stage started a host data transfer at `from` that takes
    /// `span()` on an idle link; with `host_dma = "blocking"` its executor
    /// spins that long ([`Compute::hold_for_dma`]). The span is computed
    /// only when modelled cores run the stages (a fabric path's idle time
    /// and a DRAM transfer time per command otherwise for nothing).
    #[inline]
    pub fn host_dma(&mut self, from: Time, span: impl FnOnce() -> Time) {
        if let Some(c) = &mut self.compute {
            c.hold_for_dma(from, span());
        }
    }

    /// Stage (7) for one command.
    #[inline]
    pub fn complete(&mut self, at: Time) -> Time {
        match &mut self.compute {
            Some(c) => c.serve(StageId::Complete as usize, at, 1),
            None => self.stages[StageId::Complete as usize].serve(at, 1),
        }
    }
}
