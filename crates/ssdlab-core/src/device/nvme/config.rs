//! The `[nvme]` section of a device file: [`NvmeFile`] as written,
//! [`NvmeConfig`] resolved, and its checks.

use crate::config::{d_str, zero_time, Collector};
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// `[nvme]`: the NVMe controller front end.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvmeFile {
    /// Maximum number of I/O queue pairs.
    #[serde(default = "d_maxq")]
    pub max_queues: u32,
    /// Maximum entries per queue.
    #[serde(default = "d_maxqd")]
    pub max_queue_depth: u32,
    /// `"rr"` (round robin) or `"wrr"` (weighted round robin with urgent priority).
    #[serde(default = "d_arb")]
    pub arbitration: String,
    /// Commands fetched from one queue per arbitration turn.
    #[serde(default = "d_burst")]
    pub arbitration_burst: u32,
    /// WRR weights for the high, medium and low classes.
    #[serde(default = "d_weights")]
    pub wrr_weights: [u32; 3],
    /// Controller processing from doorbell write to SQE fetch request.
    #[serde(default = "zero_time")]
    pub doorbell_latency: String,
    /// `"interrupt"` (MSI-X after each CQE) or `"polling"` (host polls the CQ).
    #[serde(default = "d_completion")]
    pub completion: String,
}
fn d_maxq() -> u32 {
    128
}
fn d_maxqd() -> u32 {
    1024
}
fn d_arb() -> String {
    d_str("rr")
}
fn d_burst() -> u32 {
    1
}
fn d_weights() -> [u32; 3] {
    [8, 4, 1]
}
fn d_completion() -> String {
    d_str("interrupt")
}
impl Default for NvmeFile {
    fn default() -> Self {
        NvmeFile {
            max_queues: d_maxq(),
            max_queue_depth: d_maxqd(),
            arbitration: d_arb(),
            arbitration_burst: d_burst(),
            wrr_weights: d_weights(),
            doorbell_latency: zero_time(),
            completion: d_completion(),
        }
    }
}

/// NVMe arbitration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Arbitration {
    /// Round robin.
    Rr,
    /// Weighted round robin with urgent class.
    Wrr,
}

/// Resolved NVMe parameters.
#[derive(Debug, Clone, Serialize)]
pub struct NvmeConfig {
    /// Max queue pairs.
    pub max_queues: u32,
    /// Max depth.
    pub max_queue_depth: u32,
    /// Arbitration.
    pub arbitration: Arbitration,
    /// Burst.
    pub arbitration_burst: u32,
    /// WRR weights (high, medium, low).
    pub wrr_weights: [u32; 3],
    /// Doorbell processing latency.
    pub doorbell_latency: Time,
    /// Host polls the completion queue instead of taking interrupts.
    pub polling: bool,
}

impl NvmeFile {
    /// Resolve and check `[nvme]`, reporting problems to `c`.
    pub(crate) fn resolve(&self, c: &mut Collector) -> NvmeConfig {
        let n = self;
        let arbitration = match n.arbitration.as_str() {
            "rr" => Arbitration::Rr,
            "wrr" => Arbitration::Wrr,
            o => {
                c.push(
                    "nvme.arbitration",
                    format!("'{o}' is not an arbitration (expected \"rr\" or \"wrr\")"),
                );
                Arbitration::Rr
            }
        };
        c.positive("nvme.max_queues", n.max_queues);
        c.at_most(
            "nvme.max_queues",
            n.max_queues as u64,
            65535,
            "NVMe I/O queue identifiers are 1 to 65535",
        );
        if n.max_queue_depth < 2 || n.max_queue_depth > 65536 {
            c.push(
                "nvme.max_queue_depth",
                "must be 2 to 65536 (NVMe queue size)",
            );
        }
        c.positive("nvme.arbitration_burst", n.arbitration_burst);
        c.at_most(
            "nvme.arbitration_burst",
            n.arbitration_burst as u64,
            65536,
            "commands fetched per turn; an NVMe queue holds at most 65536",
        );
        for (i, w) in n.wrr_weights.iter().enumerate() {
            if *w == 0 || *w > 256 {
                c.push(&format!("nvme.wrr_weights[{i}]"), "must be 1 to 256");
            }
        }
        let polling = match n.completion.as_str() {
            "interrupt" => false,
            "polling" => true,
            o => {
                c.push(
                    "nvme.completion",
                    format!(
                        "'{o}' is not a completion mode (expected \"interrupt\" or \"polling\")"
                    ),
                );
                false
            }
        };
        NvmeConfig {
            max_queues: n.max_queues,
            max_queue_depth: n.max_queue_depth,
            arbitration,
            arbitration_burst: n.arbitration_burst,
            wrr_weights: n.wrr_weights,
            doorbell_latency: c.time("nvme.doorbell_latency", &n.doorbell_latency),
            polling,
        }
    }
}
