//! The `[pcie]` section of a device file: [`PcieFile`] as written,
//! [`PcieConfig`] resolved, and its checks (the generation, width and TLP
//! size checks are shared with system files, so they stay in `config.rs`:
//! `pcie_generation_problem`, `pcie_lanes_problem`, `tlp_size`).

use crate::config::{d_str, pcie_generation_problem, pcie_lanes_problem, tlp_size, Collector};
use crate::units::{Bandwidth, Bytes, Time};
use serde::{Deserialize, Serialize};

/// `[pcie]`: the link between host and drive.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcieFile {
    /// PCIe generation, 1 to 5.
    #[serde(default = "d_gen")]
    pub generation: u32,
    /// Lane count: 1, 2, 4, 8 or 16.
    #[serde(default = "d_lanes")]
    pub lanes: u32,
    /// Max payload size per TLP.
    #[serde(default = "d_mps")]
    pub max_payload: String,
    /// Max read request size.
    #[serde(default = "d_mrrs")]
    pub max_read_request: String,
    /// Per-TLP overhead on the wire: header, sequence number, LCRC, framing.
    #[serde(default = "d_tlp_ovh")]
    pub tlp_overhead: String,
    /// Share of link time spent on DLLPs (ACK/NAK, flow-control updates).
    #[serde(default = "d_dllp")]
    pub dllp_overhead: String,
    /// One-way latency (PHY, switch-free link, root complex).
    #[serde(default = "d_pcie_lat")]
    pub latency: String,
    /// Replace the PCIe link arithmetic with a generic host interface of this
    /// payload bandwidth per direction (e.g. seed 001's 150 MB/s interface).
    #[serde(default)]
    pub interface_bandwidth: Option<String>,
}
fn d_gen() -> u32 {
    4
}
fn d_lanes() -> u32 {
    4
}
fn d_mps() -> String {
    d_str("256B")
}
fn d_mrrs() -> String {
    d_str("512B")
}
fn d_tlp_ovh() -> String {
    d_str("24B")
}
fn d_dllp() -> String {
    d_str("4%")
}
fn d_pcie_lat() -> String {
    d_str("250ns")
}
impl Default for PcieFile {
    fn default() -> Self {
        PcieFile {
            generation: d_gen(),
            lanes: d_lanes(),
            max_payload: d_mps(),
            max_read_request: d_mrrs(),
            tlp_overhead: d_tlp_ovh(),
            dllp_overhead: d_dllp(),
            latency: d_pcie_lat(),
            interface_bandwidth: None,
        }
    }
}

/// Resolved PCIe link parameters.
#[derive(Debug, Clone, Serialize)]
pub struct PcieConfig {
    /// Generation 1–5.
    pub generation: u32,
    /// Lanes.
    pub lanes: u32,
    /// Max payload size.
    pub max_payload: Bytes,
    /// Max read request size.
    pub max_read_request: Bytes,
    /// Per-TLP overhead.
    pub tlp_overhead: Bytes,
    /// DLLP share of link time.
    pub dllp_overhead: f64,
    /// One-way latency.
    pub latency: Time,
    /// Generic host-interface payload bandwidth replacing the PCIe arithmetic.
    pub interface_bandwidth: Option<Bandwidth>,
}

impl PcieConfig {
    /// Read requests (header-only TLPs) that fetch `bytes`, at least one.
    /// The size limit is a power of two (checked when parsed), so a shift
    /// rather than a division: a division here was about 0.5 % of a random
    /// read's time (docs/performance.md).
    #[inline(always)]
    pub fn read_requests(&self, bytes: u64) -> u64 {
        let m = self.max_read_request.0;
        let n = if m.is_power_of_two() {
            (bytes + (m - 1)) >> m.trailing_zeros()
        } else {
            bytes.div_ceil(m)
        };
        n.max(1)
    }
}

impl PcieFile {
    /// Resolve and check `[pcie]`, reporting problems to `c`.
    pub(crate) fn resolve(&self, c: &mut Collector) -> PcieConfig {
        let p = self;
        if let Some(m) = pcie_generation_problem(p.generation) {
            c.push("pcie.generation", m);
        }
        if let Some(m) = pcie_lanes_problem(p.lanes) {
            c.push("pcie.lanes", m);
        }
        let mps = tlp_size(&p.max_payload, "max payload size").unwrap_or_else(|m| {
            c.push("pcie.max_payload", m);
            Bytes(0)
        });
        let mrrs = tlp_size(&p.max_read_request, "max read request size").unwrap_or_else(|m| {
            c.push("pcie.max_read_request", m);
            Bytes(0)
        });
        let dllp = c.pct("pcie.dllp_overhead", &p.dllp_overhead);
        if dllp >= 0.5 {
            c.push("pcie.dllp_overhead", "must be below 50%");
        }
        PcieConfig {
            generation: p.generation,
            lanes: p.lanes,
            max_payload: mps,
            max_read_request: mrrs,
            tlp_overhead: c.bytes("pcie.tlp_overhead", &p.tlp_overhead),
            dllp_overhead: dllp,
            latency: c.time("pcie.latency", &p.latency),
            interface_bandwidth: p
                .interface_bandwidth
                .as_deref()
                .map(|b| c.bw("pcie.interface_bandwidth", b)),
        }
    }
}
