//! The host-CPU baseline: the same kernel on one core of the host, the way
//! seed 003 ran it (Intel i7-8700K, one thread, clock 0.8-4.7 GHz).
//!
//! Time per element is the longer of the core's work (`host_cycles` plus
//! mispredicted branches times the misprediction penalty, over the clock)
//! and the element's bytes over the single-thread memory bandwidth: scan
//! kernels are memory-bound at high clocks, a merge pays for its
//! mispredicted branches. Core power scales with the clock from its value
//! at the top clock (dynamic power at fixed voltage: a lower bound on what
//! the core saves at low clocks). Sources and assumptions:
//! docs/models/computational-storage.md.

use super::kernel::{KernelSpec, Work};
use crate::units::Time;
use serde::Serialize;

/// One host core.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HostCpu {
    /// Core clock, Hz.
    pub clock_hz: f64,
    /// Highest clock (turbo), Hz.
    pub max_clock_hz: f64,
    /// Lowest clock, Hz.
    pub min_clock_hz: f64,
    /// Single-thread memory bandwidth, bytes/s.
    pub memory_bandwidth: f64,
    /// Cycles lost per mispredicted branch.
    pub mispredict_penalty: f64,
    /// Core power at the top clock, W.
    pub power_at_max_w: f64,
}

impl HostCpu {
    /// Seed 003's host (i7-8700K: 3.7 GHz base, 4.7 GHz turbo, 0.8 GHz lowest
    /// P-state) at `clock_hz`.
    pub fn i7_8700k(clock_hz: f64) -> HostCpu {
        HostCpu {
            clock_hz,
            max_clock_hz: 4.7e9,
            min_clock_hz: 0.8e9,
            // Assumption: one Coffee Lake core streaming from dual-channel
            // DDR4-2666 (42.7 GB/s peak); a single thread's line-fill
            // buffers limit it to about 12 GB/s.
            memory_bandwidth: 12e9,
            // Skylake/Coffee Lake: 15-20 cycles (Agner Fog, microarchitecture guide).
            mispredict_penalty: 16.5,
            // Assumption: one busy core of a 95 W TDP six-core part at 4.7 GHz.
            power_at_max_w: 20.0,
        }
    }

    /// An error unless the clock is within the core's range.
    pub fn check(&self) -> Result<(), String> {
        if !(self.min_clock_hz..=self.max_clock_hz).contains(&self.clock_hz) {
            return Err(format!(
                "host clock {:.2} GHz is outside the core's range ({:.1} to {:.1} GHz)",
                self.clock_hz / 1e9,
                self.min_clock_hz / 1e9,
                self.max_clock_hz / 1e9
            ));
        }
        Ok(())
    }

    /// Core power at this clock, W.
    pub fn power_w(&self) -> f64 {
        self.power_at_max_w * self.clock_hz / self.max_clock_hz
    }

    /// Time of `k` doing `work` on this core.
    pub fn kernel_time(&self, k: &KernelSpec, work: &Work) -> Time {
        let cycles =
            work.steps as f64 * (k.host_cycles + k.host_mispredicts * self.mispredict_penalty);
        let compute = cycles / self.clock_hz;
        let bytes = (work.elements_in + work.elements_out) as f64 * 4.0;
        let memory = bytes / self.memory_bandwidth;
        Time::from_secs_f64(compute.max(memory))
    }
}
