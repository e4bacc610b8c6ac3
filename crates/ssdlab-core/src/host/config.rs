//! The `[host]` section of a device file: [`HostFile`] as written,
//! [`HostConfig`] resolved, and its checks.

use crate::config::{zero_time, Collector};
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// `[host]`: the host driver's per-I/O software cost.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostFile {
    /// Time for the driver to build an SQE and ring the doorbell (per command).
    #[serde(default = "zero_time")]
    pub submit_overhead: String,
    /// Time from the interrupt reaching the host to the I/O being reaped (per command).
    #[serde(default = "zero_time")]
    pub complete_overhead: String,
}

impl Default for HostFile {
    fn default() -> Self {
        HostFile {
            submit_overhead: zero_time(),
            complete_overhead: zero_time(),
        }
    }
}

/// Resolved host parameters.
#[derive(Debug, Clone, Serialize)]
pub struct HostConfig {
    /// Submit cost.
    pub submit_overhead: Time,
    /// Completion cost.
    pub complete_overhead: Time,
}

impl HostFile {
    /// Resolve and check `[host]`, reporting problems to `c`.
    pub(crate) fn resolve(&self, c: &mut Collector) -> HostConfig {
        HostConfig {
            submit_overhead: c.time("host.submit_overhead", &self.submit_overhead),
            complete_overhead: c.time("host.complete_overhead", &self.complete_overhead),
        }
    }
}
