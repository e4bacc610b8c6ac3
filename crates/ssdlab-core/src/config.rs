//! Device configuration: TOML device files and shipped presets.
//!
//! A device file is read in two steps. [`DeviceFile`] mirrors the TOML with
//! every value as written (unit strings such as `"45us"`), rejecting unknown
//! keys (`deny_unknown_fields`). [`DeviceFile::resolve`] then checks every
//! value and the relations between them and returns a typed [`Device`] or
//! *every* problem found, each with its key path (`nand.t_read[1]`).

use crate::units::{
    parse_bandwidth, parse_bytes, parse_percent, parse_time, parse_transfer_rate, Bandwidth, Bytes,
    Time,
};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// One problem in a device description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    /// Dotted key path, e.g. `nand.t_read[1]`.
    pub key: String,
    /// What is wrong and what was expected.
    pub message: String,
}

/// All problems found in a device description, with the file it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// File name (or `preset NAME`).
    pub source: String,
    /// Every problem found.
    pub problems: Vec<ConfigProblem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} problem{}",
            self.source,
            self.problems.len(),
            if self.problems.len() == 1 { "" } else { "s" }
        )?;
        for p in &self.problems {
            writeln!(f, "  {}: {}", p.key, p.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

fn d_str(s: &str) -> String {
    s.to_string()
}

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

fn zero_time() -> String {
    d_str("0ns")
}

impl Default for HostFile {
    fn default() -> Self {
        HostFile {
            submit_overhead: zero_time(),
            complete_overhead: zero_time(),
        }
    }
}

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

/// `[firmware]`: service time of each firmware stage (zero by default).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirmwareFile {
    /// (1) fetch: per command.
    #[serde(default = "zero_time")]
    pub fetch: String,
    /// (2) parse/split: per command.
    #[serde(default = "zero_time")]
    pub parse: String,
    /// (3) data-cache lookup: per flash transaction (mapping unit).
    #[serde(default = "zero_time")]
    pub cache_lookup: String,
    /// (4) logical-to-physical translation: per flash transaction.
    #[serde(default = "zero_time")]
    pub translate: String,
    /// (5) flash command issue: per flash transaction.
    #[serde(default = "zero_time")]
    pub issue: String,
    /// (7) completion: per command.
    #[serde(default = "zero_time")]
    pub complete: String,
}
impl Default for FirmwareFile {
    fn default() -> Self {
        FirmwareFile {
            fetch: zero_time(),
            parse: zero_time(),
            cache_lookup: zero_time(),
            translate: zero_time(),
            issue: zero_time(),
            complete: zero_time(),
        }
    }
}

/// `[dram]`: controller DRAM as a shared resource.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramFile {
    /// Sustained bandwidth.
    #[serde(default = "d_dram_bw")]
    pub bandwidth: String,
    /// Access latency added to every transfer.
    #[serde(default = "d_dram_lat")]
    pub latency: String,
}
fn d_dram_bw() -> String {
    d_str("12.8GB/s")
}
fn d_dram_lat() -> String {
    d_str("100ns")
}
impl Default for DramFile {
    fn default() -> Self {
        DramFile {
            bandwidth: d_dram_bw(),
            latency: d_dram_lat(),
        }
    }
}

/// `[cache]`: data cache and write buffer in controller DRAM.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheFile {
    /// Write buffer capacity (at least one program unit).
    #[serde(default = "d_wbuf")]
    pub write_buffer: String,
    /// Read cache capacity (0 = none).
    #[serde(default = "d_rcache")]
    pub read_cache: String,
    /// Replacement policy: `"lru"` or `"fifo"`.
    #[serde(default = "d_policy")]
    pub policy: String,
    /// Power-loss protection: capacitors hold up the write buffer, so an
    /// NVMe Flush completes at once. Without it a flush waits until the
    /// buffered writes are programmed (default false).
    #[serde(default)]
    pub power_loss_protection: bool,
}
fn d_wbuf() -> String {
    d_str("16MiB")
}
fn d_rcache() -> String {
    d_str("0B")
}
fn d_policy() -> String {
    d_str("lru")
}
impl Default for CacheFile {
    fn default() -> Self {
        CacheFile {
            write_buffer: d_wbuf(),
            read_cache: d_rcache(),
            policy: d_policy(),
            power_loss_protection: false,
        }
    }
}

/// `[ftl]`: mapping, allocation and garbage collection.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FtlFile {
    /// Mapping unit (granularity of the L2P table).
    #[serde(default = "d_mu")]
    pub mapping_unit: String,
    /// Spare capacity relative to the exported capacity: raw = exported × (1 + OP).
    #[serde(default = "d_op")]
    pub over_provisioning: String,
    /// Striping order of consecutive program units: a permutation of
    /// `channel`, `die`, `plane` joined by `-`, fastest-varying first.
    #[serde(default = "d_alloc")]
    pub allocation: String,
    /// Victim policy: `greedy`, `cost-benefit`, `random`, `fifo`, `d-choice`.
    #[serde(default = "d_gcp")]
    pub gc_policy: String,
    /// Candidates sampled by `d-choice`.
    #[serde(default = "d_gcd")]
    pub gc_d_choices: u32,
    /// GC starts on a parallel unit when its free blocks fall to this count.
    #[serde(default = "d_gc_thr")]
    pub gc_threshold: u32,
    /// Host writes to a unit stall (foreground GC) at this many free blocks.
    #[serde(default = "d_gc_hard")]
    pub gc_hard_threshold: u32,
    /// Background GC: also collect when the drive is idle, down to `gc_threshold + gc_background_margin`.
    #[serde(default)]
    pub gc_background: bool,
    /// Extra free blocks background GC aims for above `gc_threshold`.
    #[serde(default = "d_gc_bg_margin")]
    pub gc_background_margin: u32,
}
fn d_mu() -> String {
    d_str("4KiB")
}
fn d_op() -> String {
    d_str("7%")
}
fn d_alloc() -> String {
    d_str("channel-die-plane")
}
fn d_gcp() -> String {
    d_str("greedy")
}
fn d_gcd() -> u32 {
    8
}
fn d_gc_thr() -> u32 {
    4
}
fn d_gc_hard() -> u32 {
    2
}
fn d_gc_bg_margin() -> u32 {
    4
}
impl Default for FtlFile {
    fn default() -> Self {
        FtlFile {
            mapping_unit: d_mu(),
            over_provisioning: d_op(),
            allocation: d_alloc(),
            gc_policy: d_gcp(),
            gc_d_choices: d_gcd(),
            gc_threshold: d_gc_thr(),
            gc_hard_threshold: d_gc_hard(),
            gc_background: false,
            gc_background_margin: d_gc_bg_margin(),
        }
    }
}

/// `[nand]`: geometry, cell type, timings and channel bus.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NandFile {
    /// Independent channels (buses).
    pub channels: u32,
    /// Chips (packages / chip enables) per channel.
    pub chips_per_channel: u32,
    /// Dies per chip (each die operates independently).
    pub dies_per_chip: u32,
    /// Planes per die.
    pub planes_per_die: u32,
    /// Blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per block.
    pub pages_per_block: u32,
    /// Page size.
    pub page_size: String,
    /// `slc`, `mlc`, `tlc` or `qlc`.
    pub cell: String,
    /// Read latency per page type (LSB, CSB, MSB, TSB; one per bit of the cell).
    pub t_read: Vec<String>,
    /// Program latency per page type (page-by-page programming).
    pub t_prog: Vec<String>,
    /// Program latency of a whole word line in one shot (required if `one_shot_program`).
    #[serde(default)]
    pub t_prog_one_shot: Option<String>,
    /// Program all pages of a word line in one operation (TLC/QLC).
    #[serde(default)]
    pub one_shot_program: bool,
    /// Block erase latency.
    pub t_erase: String,
    /// Multi-plane read/program/erase: the planes of a die act together.
    #[serde(default = "d_true")]
    pub multi_plane: bool,
    /// Cache read: the array reads the next page while the previous one streams out.
    #[serde(default)]
    pub cache_read: bool,
    /// Channel bus transfer rate (with `bus_width_bits`), e.g. `"1200MT/s"`.
    #[serde(default)]
    pub bus_rate: Option<String>,
    /// Channel bus width in bits.
    #[serde(default)]
    pub bus_width_bits: Option<u32>,
    /// Channel bandwidth given directly (instead of rate × width), e.g. `"40MB/s"`.
    #[serde(default)]
    pub bus_bandwidth: Option<String>,
    /// Command and address cycles on the bus, per operation.
    #[serde(default = "d_tcmd")]
    pub t_cmd: String,
    /// Time to suspend an ongoing program or erase.
    #[serde(default = "d_tsus")]
    pub t_suspend: String,
    /// Time to resume a suspended program or erase.
    #[serde(default = "d_tsus")]
    pub t_resume: String,
}
fn d_true() -> bool {
    true
}
fn d_tcmd() -> String {
    d_str("0ns")
}
fn d_tsus() -> String {
    d_str("20us")
}

/// `[flash]`: the flash scheduler.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlashFile {
    /// `sequential`, `interleaved` or `out-of-order` (seed 001, after Ozone).
    #[serde(default = "d_exec")]
    pub execution: String,
    /// Priority order of transaction kinds, highest first.
    #[serde(default = "d_prio")]
    pub priority: Vec<String>,
    /// Suspend an ongoing program for a waiting read.
    #[serde(default)]
    pub program_suspend: bool,
    /// Suspend an ongoing erase for a waiting read.
    #[serde(default)]
    pub erase_suspend: bool,
}
fn d_exec() -> String {
    d_str("out-of-order")
}
fn d_prio() -> Vec<String> {
    vec![d_str("read"), d_str("write"), d_str("erase")]
}
impl Default for FlashFile {
    fn default() -> Self {
        FlashFile {
            execution: d_exec(),
            priority: d_prio(),
            program_suspend: false,
            erase_suspend: false,
        }
    }
}

/// A device description as written in TOML.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceFile {
    /// Device name (shown in reports).
    pub name: String,
    /// One-line description.
    #[serde(default)]
    pub description: String,
    /// Host driver costs.
    #[serde(default)]
    pub host: HostFile,
    /// PCIe link.
    #[serde(default)]
    pub pcie: PcieFile,
    /// NVMe controller front end.
    #[serde(default)]
    pub nvme: NvmeFile,
    /// Firmware stage service times.
    #[serde(default)]
    pub firmware: FirmwareFile,
    /// Controller DRAM.
    #[serde(default)]
    pub dram: DramFile,
    /// Data cache / write buffer.
    #[serde(default)]
    pub cache: CacheFile,
    /// Flash translation layer.
    #[serde(default)]
    pub ftl: FtlFile,
    /// NAND flash (optional only for a RAM-disk backend).
    #[serde(default)]
    pub nand: Option<NandFile>,
    /// Flash scheduler.
    #[serde(default)]
    pub flash: FlashFile,
    /// Controller compute: cores and accelerators (replaces `[firmware]` service times).
    #[serde(default)]
    pub controller: Option<crate::compute::ControllerFile>,
    /// Power and energy parameters and budgets.
    #[serde(default)]
    pub power: Option<crate::power::PowerFile>,
    /// Storage behind the controller: NAND flash (default) or a RAM disk.
    #[serde(default)]
    pub backend: Option<BackendFile>,
}

/// `[backend]`: what stores the data.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackendFile {
    /// `"flash"` (default) or `"ramdisk"` (seed 000: data lives in controller DRAM, no FTL or NAND).
    pub kind: String,
    /// RAM-disk capacity (required for `ramdisk`).
    #[serde(default)]
    pub capacity: Option<String>,
}

/// Storage behind the controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Backend {
    /// NAND flash through the FTL and flash scheduler.
    Flash,
    /// A RAM disk: reads and writes are served by controller DRAM at its bandwidth and latency.
    RamDisk {
        /// Capacity.
        capacity: Bytes,
    },
}

// ---------------------------------------------------------------------------
// Resolved, typed configuration
// ---------------------------------------------------------------------------

/// NAND cell type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CellType {
    /// 1 bit per cell.
    Slc,
    /// 2 bits per cell.
    Mlc,
    /// 3 bits per cell.
    Tlc,
    /// 4 bits per cell.
    Qlc,
}

impl CellType {
    /// Bits per cell = pages per word line.
    pub fn bits(self) -> u32 {
        match self {
            CellType::Slc => 1,
            CellType::Mlc => 2,
            CellType::Tlc => 3,
            CellType::Qlc => 4,
        }
    }
}

/// Flash scheduler execution model (seed 001, after the Ozone controller).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ExecutionModel {
    /// One operation at a time per channel controller, bus and die included.
    Sequential,
    /// Operations overlap across the chips of a bus; completions in issue order.
    Interleaved,
    /// Operations overlap; only the order of operations on the same die is kept.
    OutOfOrder,
}

/// GC victim selection policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// Fewest valid pages.
    Greedy,
    /// Max (1 − u) · age / (2u) (Rosenblum & Ousterhout / Kawaguchi et al.).
    CostBenefit,
    /// Uniformly random full block.
    Random,
    /// Oldest closed block first.
    Fifo,
    /// Best of d random candidates.
    DChoice,
}

/// Cache replacement policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CachePolicy {
    /// Least recently used.
    Lru,
    /// First in, first out.
    Fifo,
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

/// Transaction kinds for scheduler priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OpKind {
    /// Page read.
    Read,
    /// Page program.
    Write,
    /// Block erase.
    Erase,
}

/// Striping dimension.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StripeDim {
    /// Across channels.
    Channel,
    /// Across dies on a channel.
    Die,
    /// Across planes of a die (only when planes are independent).
    Plane,
}

/// Resolved NAND parameters.
#[derive(Debug, Clone, Serialize)]
pub struct NandConfig {
    /// Channels.
    pub channels: u32,
    /// Chips per channel.
    pub chips_per_channel: u32,
    /// Dies per chip.
    pub dies_per_chip: u32,
    /// Planes per die.
    pub planes_per_die: u32,
    /// Blocks per plane.
    pub blocks_per_plane: u32,
    /// Pages per block.
    pub pages_per_block: u32,
    /// Page size in bytes.
    pub page_size: Bytes,
    /// Cell type.
    pub cell: CellType,
    /// Read latency per page type.
    pub t_read: Vec<Time>,
    /// Program latency per page type.
    pub t_prog: Vec<Time>,
    /// One-shot word-line program latency (if enabled).
    pub t_prog_one_shot: Option<Time>,
    /// Erase latency.
    pub t_erase: Time,
    /// Multi-plane operations.
    pub multi_plane: bool,
    /// Cache read (array overlaps the previous page's data out).
    pub cache_read: bool,
    /// Channel bandwidth in bytes/s.
    pub bus_bandwidth: Bandwidth,
    /// Command/address overhead per operation.
    pub t_cmd: Time,
    /// Suspend latency.
    pub t_suspend: Time,
    /// Resume latency.
    pub t_resume: Time,
}

impl NandConfig {
    /// Dies per channel.
    pub fn dies_per_channel(&self) -> u32 {
        self.chips_per_channel * self.dies_per_chip
    }
    /// Total dies.
    pub fn total_dies(&self) -> u32 {
        self.channels * self.dies_per_channel()
    }
    /// Raw capacity in bytes.
    pub fn raw_bytes(&self) -> u64 {
        self.total_dies() as u64
            * self.planes_per_die as u64
            * self.blocks_per_plane as u64
            * self.pages_per_block as u64
            * self.page_size.0
    }
}

/// Resolved FTL parameters.
#[derive(Debug, Clone, Serialize)]
pub struct FtlConfig {
    /// Mapping unit in bytes.
    pub mapping_unit: Bytes,
    /// Over-provisioning fraction.
    pub over_provisioning: f64,
    /// Striping order, fastest first.
    pub allocation: Vec<StripeDim>,
    /// Victim policy.
    pub gc_policy: GcPolicy,
    /// d for d-choice.
    pub gc_d_choices: u32,
    /// Soft threshold (free blocks per unit).
    pub gc_threshold: u32,
    /// Hard threshold (free blocks per unit).
    pub gc_hard_threshold: u32,
    /// Background GC enabled.
    pub gc_background: bool,
    /// Background margin.
    pub gc_background_margin: u32,
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

/// Resolved firmware stage service times.
#[derive(Debug, Clone, Serialize)]
pub struct FirmwareConfig {
    /// Fetch (per command).
    pub fetch: Time,
    /// Parse/split (per command).
    pub parse: Time,
    /// Cache lookup (per transaction).
    pub cache_lookup: Time,
    /// Translate (per transaction).
    pub translate: Time,
    /// Issue (per transaction).
    pub issue: Time,
    /// Complete (per command).
    pub complete: Time,
}

/// Resolved cache parameters.
#[derive(Debug, Clone, Serialize)]
pub struct CacheConfig {
    /// Write buffer bytes.
    pub write_buffer: Bytes,
    /// Read cache bytes.
    pub read_cache: Bytes,
    /// Replacement policy.
    pub policy: CachePolicy,
    /// The write buffer survives power loss (flushes complete at once).
    pub power_loss_protection: bool,
    /// DRAM bandwidth.
    pub dram_bandwidth: Bandwidth,
    /// DRAM latency.
    pub dram_latency: Time,
}

/// Resolved flash scheduler parameters.
#[derive(Debug, Clone, Serialize)]
pub struct FlashConfig {
    /// Execution model.
    pub execution: ExecutionModel,
    /// Priority order, highest first.
    pub priority: Vec<OpKind>,
    /// Program suspend.
    pub program_suspend: bool,
    /// Erase suspend.
    pub erase_suspend: bool,
}

/// Resolved host parameters.
#[derive(Debug, Clone, Serialize)]
pub struct HostConfig {
    /// Submit cost.
    pub submit_overhead: Time,
    /// Completion cost.
    pub complete_overhead: Time,
}

/// A fully resolved, validated device.
#[derive(Debug, Clone, Serialize)]
pub struct Device {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Host.
    pub host: HostConfig,
    /// PCIe.
    pub pcie: PcieConfig,
    /// NVMe.
    pub nvme: NvmeConfig,
    /// Firmware stages.
    pub firmware: FirmwareConfig,
    /// Cache and DRAM.
    pub cache: CacheConfig,
    /// FTL.
    pub ftl: FtlConfig,
    /// NAND.
    pub nand: NandConfig,
    /// Flash scheduler.
    pub flash: FlashConfig,
    /// Controller compute model, if configured.
    pub controller: Option<crate::compute::ControllerConfig>,
    /// Power model, if configured.
    pub power: Option<crate::power::PowerConfig>,
    /// Storage backend.
    pub backend: Backend,
    /// How the description was composed (`extends` chain, overrides): in
    /// the report's `device` section, not part of the resolved values.
    #[serde(skip)]
    pub origin: Origin,
}

/// How a device description was composed: what the report records.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Origin {
    /// The `extends` chain, nearest parent first (empty for a plain file or preset).
    pub extends: Vec<String>,
    /// Overrides applied after the file, in order.
    pub overrides: Vec<AppliedOverride>,
}

/// One override as applied: key path and the TOML value it set.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct AppliedOverride {
    /// Dotted key path, e.g. `nand.channels`.
    pub key: String,
    /// The value, as TOML (`16`, `"64MiB"`).
    pub value: String,
}

struct Collector {
    problems: Vec<ConfigProblem>,
}

impl Collector {
    fn push(&mut self, key: &str, msg: impl Into<String>) {
        self.problems.push(ConfigProblem {
            key: key.to_string(),
            message: msg.into(),
        });
    }
    fn time(&mut self, key: &str, v: &str) -> Time {
        parse_time(v).unwrap_or_else(|e| {
            self.push(key, e.0);
            Time::ZERO
        })
    }
    fn bytes(&mut self, key: &str, v: &str) -> Bytes {
        parse_bytes(v).unwrap_or_else(|e| {
            self.push(key, e.0);
            Bytes(0)
        })
    }
    fn pct(&mut self, key: &str, v: &str) -> f64 {
        parse_percent(v).unwrap_or_else(|e| {
            self.push(key, e.0);
            0.0
        })
    }
    fn bw(&mut self, key: &str, v: &str) -> Bandwidth {
        parse_bandwidth(v).unwrap_or_else(|e| {
            self.push(key, e.0);
            Bandwidth(1.0)
        })
    }
    fn positive(&mut self, key: &str, v: u32) {
        if v == 0 {
            self.push(key, "must be at least 1");
        }
    }
}

/// What is wrong with a PCIe generation, if anything (1 to 5 are).
pub(crate) fn pcie_generation_problem(g: u32) -> Option<String> {
    (!(1..=5).contains(&g)).then(|| format!("{g} is not a PCIe generation (expected 1 to 5)"))
}

/// What is wrong with a PCIe link width, if anything.
pub(crate) fn pcie_lanes_problem(l: u32) -> Option<String> {
    (![1, 2, 4, 8, 16].contains(&l))
        .then(|| format!("{l} lanes is not a PCIe link width (expected 1, 2, 4, 8 or 16)"))
}

/// A TLP size (`what`: max payload size, max read request size): a size
/// with its unit, a power of two from 128 B to 4096 B.
pub(crate) fn tlp_size(text: &str, what: &str) -> Result<Bytes, String> {
    let b = parse_bytes(text).map_err(|e| e.0)?;
    if !b.0.is_power_of_two() || !(128..=4096).contains(&b.0) {
        return Err(format!(
            "{b} is not a PCIe {what} (128B to 4096B, power of two)"
        ));
    }
    Ok(b)
}

/// Largest number of mapping units addressable with 32-bit physical slot indices.
pub const MAX_SLOTS: u64 = u32::MAX as u64 - 1;

impl DeviceFile {
    /// Parse TOML text; `source` names the file in error messages.
    ///
    /// Every unknown key is reported (each with its table path and line), not
    /// only the first: an unknown key's line is set aside and parsing retried.
    pub fn from_toml_str(text: &str, source: &str) -> Result<DeviceFile, ConfigError> {
        DeviceFile::parse_text(text).map_err(|problems| ConfigError {
            source: source.to_string(),
            problems: problems
                .into_iter()
                .map(|(key, message, line)| ConfigProblem {
                    key,
                    message: match line {
                        Some(l) => format!("{message} (line {l})"),
                        None => message,
                    },
                })
                .collect(),
        })
    }

    /// [`DeviceFile::from_toml_str`] with messages that name no line:
    /// (key path, message) pairs, for text that no user wrote (a merged
    /// `extends` chain, see [`crate::compose`]).
    pub(crate) fn from_toml_str_bare(text: &str) -> Result<DeviceFile, Vec<(String, String)>> {
        DeviceFile::parse_text(text).map_err(|ps| ps.into_iter().map(|(k, m, _)| (k, m)).collect())
    }

    /// Parse, collecting (key path, message, line) of every problem.
    #[allow(clippy::type_complexity)]
    fn parse_text(text: &str) -> Result<DeviceFile, Vec<(String, String, Option<usize>)>> {
        let mut work = text.to_string();
        let mut problems = Vec::new();
        for _ in 0..256 {
            match toml::from_str::<DeviceFile>(&work) {
                Ok(f) if problems.is_empty() => return Ok(f),
                Ok(_) => break,
                Err(e) => {
                    let key = toml_key_of(&e, &work);
                    let line = e.span().map(|s| crate::compose::line_at(&work, s.start));
                    problems.push((key, one_line(e.message()), line));
                    let unknown = e.message().starts_with("unknown field");
                    match (unknown, e.span()) {
                        (true, Some(span)) => {
                            // Blank the offending line (keep line numbers) and look for more.
                            let start = work[..span.start].rfind('\n').map_or(0, |i| i + 1);
                            let end = work[span.start..]
                                .find('\n')
                                .map_or(work.len(), |i| span.start + i);
                            work.replace_range(start..end, &" ".repeat(end - start));
                        }
                        _ => break,
                    }
                }
            }
        }
        Err(problems)
    }

    /// Check every value and relation; return the typed device or every problem.
    pub fn resolve(&self, source: &str) -> Result<Device, ConfigError> {
        let mut c = Collector {
            problems: Vec::new(),
        };
        if self.name.trim().is_empty() {
            c.push("name", "must not be empty");
        }
        // host
        let host = HostConfig {
            submit_overhead: c.time("host.submit_overhead", &self.host.submit_overhead),
            complete_overhead: c.time("host.complete_overhead", &self.host.complete_overhead),
        };
        // pcie
        let p = &self.pcie;
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
        let pcie = PcieConfig {
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
        };
        // nvme
        let n = &self.nvme;
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
        if n.max_queue_depth < 2 || n.max_queue_depth > 65536 {
            c.push(
                "nvme.max_queue_depth",
                "must be 2 to 65536 (NVMe queue size)",
            );
        }
        c.positive("nvme.arbitration_burst", n.arbitration_burst);
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
        let nvme = NvmeConfig {
            max_queues: n.max_queues,
            max_queue_depth: n.max_queue_depth,
            arbitration,
            arbitration_burst: n.arbitration_burst,
            wrr_weights: n.wrr_weights,
            doorbell_latency: c.time("nvme.doorbell_latency", &n.doorbell_latency),
            polling,
        };
        // firmware
        let f = &self.firmware;
        let firmware = FirmwareConfig {
            fetch: c.time("firmware.fetch", &f.fetch),
            parse: c.time("firmware.parse", &f.parse),
            cache_lookup: c.time("firmware.cache_lookup", &f.cache_lookup),
            translate: c.time("firmware.translate", &f.translate),
            issue: c.time("firmware.issue", &f.issue),
            complete: c.time("firmware.complete", &f.complete),
        };
        // cache + dram
        let policy = match self.cache.policy.as_str() {
            "lru" => CachePolicy::Lru,
            "fifo" => CachePolicy::Fifo,
            o => {
                c.push(
                    "cache.policy",
                    format!("'{o}' is not a cache policy (expected \"lru\" or \"fifo\")"),
                );
                CachePolicy::Lru
            }
        };
        let cache = CacheConfig {
            write_buffer: c.bytes("cache.write_buffer", &self.cache.write_buffer),
            read_cache: c.bytes("cache.read_cache", &self.cache.read_cache),
            policy,
            power_loss_protection: self.cache.power_loss_protection,
            dram_bandwidth: c.bw("dram.bandwidth", &self.dram.bandwidth),
            dram_latency: c.time("dram.latency", &self.dram.latency),
        };
        // backend
        let backend = match self.backend.as_ref().map(|b| b.kind.as_str()) {
            None | Some("flash") => {
                if self.backend.as_ref().is_some_and(|b| b.capacity.is_some()) {
                    c.push("backend.capacity", "applies only to kind = \"ramdisk\"; a flash drive's capacity follows from [nand] and ftl.over_provisioning");
                }
                Backend::Flash
            }
            Some("ramdisk") => match self.backend.as_ref().and_then(|b| b.capacity.as_deref()) {
                Some(cap) => Backend::RamDisk {
                    capacity: c.bytes("backend.capacity", cap),
                },
                None => {
                    c.push(
                        "backend.capacity",
                        "required for a RAM disk (e.g. \"1GiB\")",
                    );
                    Backend::RamDisk { capacity: Bytes(0) }
                }
            },
            Some(o) => {
                c.push(
                    "backend.kind",
                    format!("'{o}' is not a backend (expected \"flash\" or \"ramdisk\")"),
                );
                Backend::Flash
            }
        };
        let synthetic;
        let nf = match (&self.nand, backend) {
            (Some(n), _) => n,
            (None, Backend::RamDisk { capacity }) => {
                synthetic = ramdisk_nand(capacity);
                &synthetic
            }
            (None, Backend::Flash) => {
                c.push(
                    "nand",
                    "the [nand] section is required (unless [backend] kind = \"ramdisk\")",
                );
                return Err(ConfigError {
                    source: source.to_string(),
                    problems: c.problems,
                });
            }
        };
        for (k, v) in [
            ("nand.channels", nf.channels),
            ("nand.chips_per_channel", nf.chips_per_channel),
            ("nand.dies_per_chip", nf.dies_per_chip),
            ("nand.planes_per_die", nf.planes_per_die),
            ("nand.blocks_per_plane", nf.blocks_per_plane),
            ("nand.pages_per_block", nf.pages_per_block),
        ] {
            c.positive(k, v);
        }
        let cell = match nf.cell.to_ascii_lowercase().as_str() {
            "slc" => CellType::Slc,
            "mlc" => CellType::Mlc,
            "tlc" => CellType::Tlc,
            "qlc" => CellType::Qlc,
            o => {
                c.push(
                    "nand.cell",
                    format!("'{o}' is not a cell type (expected slc, mlc, tlc or qlc)"),
                );
                CellType::Slc
            }
        };
        let bits = cell.bits() as usize;
        let page_size = c.bytes("nand.page_size", &nf.page_size);
        let t_read: Vec<Time> = nf
            .t_read
            .iter()
            .enumerate()
            .map(|(i, s)| c.time(&format!("nand.t_read[{i}]"), s))
            .collect();
        let t_prog: Vec<Time> = nf
            .t_prog
            .iter()
            .enumerate()
            .map(|(i, s)| c.time(&format!("nand.t_prog[{i}]"), s))
            .collect();
        if t_read.len() != bits {
            c.push("nand.t_read", format!("{} cells have {bits} page types, so {bits} read latencies are needed (LSB, CSB, MSB, TSB order); {} given", nf.cell, t_read.len()));
        }
        if t_prog.len() != bits {
            c.push("nand.t_prog", format!("{} cells have {bits} page types, so {bits} program latencies are needed; {} given", nf.cell, t_prog.len()));
        }
        if t_read.contains(&Time::ZERO) && t_read.len() == bits {
            c.push("nand.t_read", "read latency must be positive");
        }
        let t_prog_one_shot = nf
            .t_prog_one_shot
            .as_deref()
            .map(|s| c.time("nand.t_prog_one_shot", s));
        if nf.one_shot_program {
            if bits == 1 {
                c.push(
                    "nand.one_shot_program",
                    "one-shot programming needs a multi-bit cell (mlc, tlc or qlc)",
                );
            }
            if t_prog_one_shot.is_none() {
                c.push("nand.t_prog_one_shot", "required when one_shot_program = true (latency of programming a whole word line)");
            }
            if !nf.pages_per_block.is_multiple_of(cell.bits()) {
                c.push(
                    "nand.pages_per_block",
                    format!(
                        "must be a multiple of {} (pages per word line) for one-shot programming",
                        cell.bits()
                    ),
                );
            }
        } else if nf.t_prog_one_shot.is_some() {
            c.push(
                "nand.t_prog_one_shot",
                "given but one_shot_program is false; set one_shot_program = true or remove it",
            );
        }
        let bus_bandwidth = match (&nf.bus_rate, nf.bus_width_bits, &nf.bus_bandwidth) {
            (Some(r), Some(w), None) => {
                if w == 0 || w % 8 != 0 {
                    c.push("nand.bus_width_bits", "must be a positive multiple of 8");
                }
                match parse_transfer_rate(r) {
                    Ok(t) => Bandwidth(t * (w as f64 / 8.0).max(1.0)),
                    Err(e) => {
                        c.push("nand.bus_rate", e.0);
                        Bandwidth(1.0)
                    }
                }
            }
            (None, None, Some(b)) => c.bw("nand.bus_bandwidth", b),
            (Some(_), None, None) => {
                c.push("nand.bus_width_bits", "required with bus_rate (e.g. 8)");
                Bandwidth(1.0)
            }
            (None, Some(_), None) => {
                c.push(
                    "nand.bus_rate",
                    "required with bus_width_bits (e.g. \"1200MT/s\")",
                );
                Bandwidth(1.0)
            }
            (None, None, None) => {
                c.push(
                    "nand.bus_rate",
                    "the channel bus needs bus_rate and bus_width_bits, or bus_bandwidth",
                );
                Bandwidth(1.0)
            }
            _ => {
                c.push(
                    "nand.bus_bandwidth",
                    "contradicts bus_rate/bus_width_bits: give one or the other",
                );
                Bandwidth(1.0)
            }
        };
        let nand = NandConfig {
            channels: nf.channels,
            chips_per_channel: nf.chips_per_channel,
            dies_per_chip: nf.dies_per_chip,
            planes_per_die: nf.planes_per_die,
            blocks_per_plane: nf.blocks_per_plane,
            pages_per_block: nf.pages_per_block,
            page_size,
            cell,
            t_read,
            t_prog,
            t_prog_one_shot: if nf.one_shot_program {
                t_prog_one_shot
            } else {
                None
            },
            t_erase: c.time("nand.t_erase", &nf.t_erase),
            multi_plane: nf.multi_plane,
            cache_read: nf.cache_read,
            bus_bandwidth,
            t_cmd: c.time("nand.t_cmd", &nf.t_cmd),
            t_suspend: c.time("nand.t_suspend", &nf.t_suspend),
            t_resume: c.time("nand.t_resume", &nf.t_resume),
        };
        // ftl
        let ff = &self.ftl;
        let mapping_unit = c.bytes("ftl.mapping_unit", &ff.mapping_unit);
        if mapping_unit.0 != 0 && (!mapping_unit.0.is_power_of_two() || mapping_unit.0 < 512) {
            c.push(
                "ftl.mapping_unit",
                format!("{mapping_unit} must be a power of two of at least 512B"),
            );
        }
        if page_size.0 != 0 && mapping_unit.0 != 0 && !page_size.0.is_multiple_of(mapping_unit.0) {
            c.push(
                "ftl.mapping_unit",
                format!("{mapping_unit} must divide the page size {page_size}"),
            );
        }
        let op = c.pct("ftl.over_provisioning", &ff.over_provisioning);
        let mut allocation = Vec::new();
        for part in ff.allocation.split('-') {
            let d = match part {
                "channel" => StripeDim::Channel,
                "die" => StripeDim::Die,
                "plane" => StripeDim::Plane,
                o => {
                    c.push("ftl.allocation", format!("'{o}' is not a striping dimension (expected a permutation of channel, die, plane joined by '-')"));
                    continue;
                }
            };
            if allocation.contains(&d) {
                c.push("ftl.allocation", format!("'{part}' appears twice"));
            }
            allocation.push(d);
        }
        if allocation.len() != 3 && !c.problems.iter().any(|p| p.key == "ftl.allocation") {
            c.push(
                "ftl.allocation",
                "must name channel, die and plane once each, e.g. \"channel-die-plane\"",
            );
        }
        let gc_policy = match ff.gc_policy.as_str() {
            "greedy" => GcPolicy::Greedy,
            "cost-benefit" => GcPolicy::CostBenefit,
            "random" => GcPolicy::Random,
            "fifo" => GcPolicy::Fifo,
            "d-choice" => GcPolicy::DChoice,
            o => {
                c.push("ftl.gc_policy", format!("'{o}' is not a GC policy (expected greedy, cost-benefit, random, fifo or d-choice)"));
                GcPolicy::Greedy
            }
        };
        c.positive("ftl.gc_d_choices", ff.gc_d_choices);
        if ff.gc_hard_threshold < 1 {
            c.push(
                "ftl.gc_hard_threshold",
                "must be at least 1 (GC needs a free block to copy into)",
            );
        }
        if ff.gc_threshold < ff.gc_hard_threshold {
            c.push(
                "ftl.gc_threshold",
                format!(
                    "{} is below gc_hard_threshold {}: GC must start before host writes stall",
                    ff.gc_threshold, ff.gc_hard_threshold
                ),
            );
        }
        let ftl = FtlConfig {
            mapping_unit,
            over_provisioning: op,
            allocation,
            gc_policy,
            gc_d_choices: ff.gc_d_choices,
            gc_threshold: ff.gc_threshold,
            gc_hard_threshold: ff.gc_hard_threshold,
            gc_background: ff.gc_background,
            gc_background_margin: ff.gc_background_margin,
        };
        // flash scheduler
        let fl = &self.flash;
        let execution = match fl.execution.as_str() {
            "sequential" => ExecutionModel::Sequential,
            "interleaved" => ExecutionModel::Interleaved,
            "out-of-order" => ExecutionModel::OutOfOrder,
            o => {
                c.push("flash.execution", format!("'{o}' is not an execution model (expected sequential, interleaved or out-of-order)"));
                ExecutionModel::OutOfOrder
            }
        };
        let mut priority = Vec::new();
        for (i, s) in fl.priority.iter().enumerate() {
            let k = match s.as_str() {
                "read" => OpKind::Read,
                "write" => OpKind::Write,
                "erase" => OpKind::Erase,
                o => {
                    c.push(
                        &format!("flash.priority[{i}]"),
                        format!("'{o}' is not a transaction kind (expected read, write, erase)"),
                    );
                    continue;
                }
            };
            if priority.contains(&k) {
                c.push(
                    &format!("flash.priority[{i}]"),
                    format!("'{s}' appears twice"),
                );
            }
            priority.push(k);
        }
        if priority.len() != 3
            && !c
                .problems
                .iter()
                .any(|p| p.key.starts_with("flash.priority"))
        {
            c.push(
                "flash.priority",
                "must list read, write and erase once each, highest priority first",
            );
        }
        let flash = FlashConfig {
            execution,
            priority,
            program_suspend: fl.program_suspend,
            erase_suspend: fl.erase_suspend,
        };
        let controller = self
            .controller
            .as_ref()
            .and_then(|cf| cf.resolve(&mut c.problems));
        if self.controller.is_some() {
            let f = &self.firmware;
            if [
                &f.fetch,
                &f.parse,
                &f.cache_lookup,
                &f.translate,
                &f.issue,
                &f.complete,
            ]
            .iter()
            .any(|v| !matches!(parse_time(v), Ok(t) if t == Time::ZERO))
            {
                c.push("firmware", "fixed stage service times contradict [controller]: with cores and accelerators, stage costs come from controller.costs; remove [firmware]");
            }
        }
        let power = self.power.as_ref().map(|pf| pf.resolve(&mut c.problems));
        let dev = Device {
            controller,
            power,
            backend,
            origin: Origin::default(),
            name: self.name.clone(),
            description: self.description.clone(),
            host,
            pcie,
            nvme,
            firmware,
            cache,
            ftl,
            nand,
            flash,
        };
        if c.problems.is_empty() {
            check_geometry(&dev, &mut c);
        }
        if c.problems.is_empty() {
            Ok(dev)
        } else {
            Err(ConfigError {
                source: source.to_string(),
                problems: c.problems,
            })
        }
    }
}

fn check_geometry(d: &Device, c: &mut Collector) {
    let n = &d.nand;
    let f = &d.ftl;
    let slots_per_page = n.page_size.0 / f.mapping_unit.0;
    let raw_slots = n.raw_bytes() / f.mapping_unit.0;
    if raw_slots > MAX_SLOTS {
        c.push(
            "nand",
            format!(
                "the drive has {raw_slots} mapping units of {}; page-level mapping supports at most {MAX_SLOTS} (use a larger ftl.mapping_unit)",
                f.mapping_unit
            ),
        );
    }
    let planes_per_unit = if n.multi_plane { n.planes_per_die } else { 1 };
    let slots_per_block = planes_per_unit as u64 * n.pages_per_block as u64 * slots_per_page;
    if slots_per_block > u16::MAX as u64 {
        c.push(
            "nand.pages_per_block",
            format!("a block of {slots_per_block} mapping units is too large (at most {}); use a larger ftl.mapping_unit or fewer pages per block", u16::MAX),
        );
    }
    let units = n.total_dies() as u64 * (n.planes_per_die / planes_per_unit) as u64;
    let blocks_total = units * n.blocks_per_plane as u64;
    let reserve = (f.gc_threshold as u64 + 2) * units;
    let logical = logical_units(n, f);
    if logical == 0 {
        c.push("ftl.over_provisioning", "leaves no logical capacity");
    }
    let block_slots = planes_per_unit as u64 * n.pages_per_block as u64 * slots_per_page;
    let needed_blocks = logical.div_ceil(block_slots.max(1)) + reserve;
    if needed_blocks > blocks_total {
        c.push(
            "ftl.over_provisioning",
            format!(
                "{:.1}% spare leaves too few free blocks: the exported capacity needs {} blocks plus {} kept free for GC (gc_threshold + 2 per unit), but the drive has {}",
                f.over_provisioning * 100.0,
                needed_blocks - reserve,
                reserve,
                blocks_total
            ),
        );
    }
    if (n.blocks_per_plane as u64) < f.gc_threshold as u64 + 4 {
        c.push(
            "nand.blocks_per_plane",
            format!(
                "{} blocks per plane cannot hold the GC reserve (gc_threshold + 4 = {})",
                n.blocks_per_plane,
                f.gc_threshold + 4
            ),
        );
    }
    let buf = d.cache.write_buffer.0;
    let unit_bytes = program_unit_bytes(n);
    if buf < unit_bytes {
        c.push("cache.write_buffer", format!("{} is smaller than one program unit ({}: planes × pages per word line × page size); the buffer must hold at least one", d.cache.write_buffer, Bytes(unit_bytes)));
    }
    if !d.cache.write_buffer.0.is_multiple_of(f.mapping_unit.0) {
        c.push(
            "cache.write_buffer",
            "must be a multiple of ftl.mapping_unit",
        );
    }
}

/// The NAND description a RAM-disk device carries internally (never accessed
/// by the data path; it only gives the logical space its size).
fn ramdisk_nand(capacity: Bytes) -> NandFile {
    let block = 256u64 * 4096;
    let blocks = (capacity.0 as f64 * 1.07 / block as f64).ceil() as u32 + 16;
    NandFile {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: blocks.max(32),
        pages_per_block: 256,
        page_size: "4KiB".into(),
        cell: "slc".into(),
        t_read: vec!["1us".into()],
        t_prog: vec!["1us".into()],
        t_prog_one_shot: None,
        one_shot_program: false,
        t_erase: "1us".into(),
        multi_plane: true,
        cache_read: false,
        bus_rate: None,
        bus_width_bits: None,
        bus_bandwidth: Some("1GB/s".into()),
        t_cmd: "0ns".into(),
        t_suspend: "20us".into(),
        t_resume: "20us".into(),
    }
}

/// Bytes programmed by one program operation on one parallel unit.
pub fn program_unit_bytes(n: &NandConfig) -> u64 {
    let planes = if n.multi_plane { n.planes_per_die } else { 1 } as u64;
    let pages = if n.t_prog_one_shot.is_some() {
        n.cell.bits() as u64
    } else {
        1
    };
    planes * pages * n.page_size.0
}

/// Exported capacity in mapping units: raw / (1 + OP), rounded down.
pub fn logical_units(n: &NandConfig, f: &FtlConfig) -> u64 {
    let raw_slots = n.raw_bytes() / f.mapping_unit.0.max(1);
    (raw_slots as f64 / (1.0 + f.over_provisioning)).floor() as u64
}

fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The dotted key a TOML error is about: the table header above the error
/// plus the offending field name when the message names one.
fn toml_key_of(e: &toml::de::Error, text: &str) -> String {
    let Some(span) = e.span() else {
        return "(toml)".to_string();
    };
    let before = &text[..span.start.min(text.len())];
    let table = before
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && l.ends_with(']'))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    let msg = e.message();
    let field = msg
        .split('`')
        .nth(1)
        .filter(|_| msg.starts_with("unknown field") || msg.starts_with("missing field"));
    // The key of the line the error points into: a type error points at the
    // value, so take what stands before that line's `=` when the span is after it.
    let at = span.start.min(text.len());
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].split('\n').next().unwrap_or("");
    let line_key = match line.split_once('=') {
        Some((k, _)) if line_start + k.len() < at => Some(k.trim()),
        _ => text[at..].split(['=', '\n']).next().map(str::trim),
    }
    .filter(|k| !k.is_empty() && !k.starts_with('['));
    // A field of an inline table (`fetch = { cycle = 1 }`) belongs to the
    // line's key: `controller.costs.fetch.cycle`.
    let inline = line
        .split_once('=')
        .is_some_and(|(k, v)| line_start + k.len() < at && v.trim_start().starts_with('{'));
    let nested = match (field, line_key) {
        (Some(f), Some(k)) if inline => Some(format!("{k}.{f}")),
        _ => None,
    };
    let leaf = nested.as_deref().or(field).or(line_key);
    match (table, leaf) {
        (Some(t), Some(f)) => format!("{t}.{f}"),
        (None, Some(f)) => f.to_string(),
        (Some(t), None) => t,
        (None, None) => "(toml)".to_string(),
    }
}

/// Shipped presets: (name, TOML text).
pub const PRESETS: &[(&str, &str)] = &[
    ("pm9a3-960g", include_str!("../presets/pm9a3-960g.toml")),
    (
        "seed001-slc-onfi",
        include_str!("../presets/seed001-slc-onfi.toml"),
    ),
    (
        "seed001-slc-conventional",
        include_str!("../presets/seed001-slc-conventional.toml"),
    ),
    (
        "seed001-mlc-onfi",
        include_str!("../presets/seed001-mlc-onfi.toml"),
    ),
    (
        "seed001-mlc-conventional",
        include_str!("../presets/seed001-mlc-conventional.toml"),
    ),
    (
        "seed000-eisc-ramdisk",
        include_str!("../presets/seed000-eisc-ramdisk.toml"),
    ),
    (
        "seed000-a9-ramdisk",
        include_str!("../presets/seed000-a9-ramdisk.toml"),
    ),
];

/// Name of the default device.
pub const DEFAULT_DEVICE: &str = "pm9a3-960g";

impl Device {
    /// Load a shipped preset by name.
    pub fn preset(name: &str) -> Result<Device, ConfigError> {
        let Some(text) = preset_text(name) else {
            return Err(ConfigError {
                source: format!("preset {name}"),
                problems: vec![ConfigProblem {
                    key: "(device)".into(),
                    message: format!(
                        "no preset named '{name}'; presets: {}",
                        preset_names().join(", ")
                    ),
                }],
            });
        };
        Ok(crate::compose::load(&text, &format!("preset {name}"), &[])?.1)
    }

    /// Load a TOML device file (its `extends` chain resolved).
    pub fn from_path(path: &Path) -> Result<Device, ConfigError> {
        let src = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            source: src.clone(),
            problems: vec![ConfigProblem {
                key: "(file)".into(),
                message: format!("cannot read: {e}"),
            }],
        })?;
        Ok(crate::compose::load(&text, &src, &[])?.1)
    }

    /// A preset name or a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<Device, ConfigError> {
        Device::load_with(name_or_path, &[])
    }

    /// A preset name or a path to a TOML file, with overrides (key path,
    /// value) applied: see [`crate::compose::load`].
    pub fn load_with(
        name_or_path: &str,
        overrides: &[crate::compose::Override],
    ) -> Result<Device, ConfigError> {
        Ok(crate::compose::load_named(name_or_path, overrides)?.1)
    }

    /// Exported capacity in bytes.
    pub fn capacity_bytes(&self) -> u64 {
        match self.backend {
            Backend::RamDisk { capacity } => {
                capacity.0 / self.ftl.mapping_unit.0 * self.ftl.mapping_unit.0
            }
            Backend::Flash => logical_units(&self.nand, &self.ftl) * self.ftl.mapping_unit.0,
        }
    }
}

/// The TOML text of a preset, if it exists.
pub fn preset_text(name: &str) -> Option<std::borrow::Cow<'static, str>> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| std::borrow::Cow::Borrowed(*t))
        .or_else(|| crate::presets::generated(name).map(std::borrow::Cow::Owned))
}

/// Names of every preset (shipped files and generated variants).
pub fn preset_names() -> Vec<String> {
    PRESETS
        .iter()
        .map(|(n, _)| n.to_string())
        .chain(crate::presets::generated_names())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_presets_resolve() {
        for (name, _) in PRESETS {
            let d = Device::preset(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&d.name, name);
        }
    }

    #[test]
    fn pm9a3_capacity_is_960gb() {
        let d = Device::preset("pm9a3-960g").unwrap();
        let cap = d.capacity_bytes() as f64;
        assert!((cap / 960e9 - 1.0).abs() < 0.001, "capacity {cap}");
    }

    #[test]
    fn unknown_key_names_line() {
        let t = preset_text("pm9a3-960g")
            .unwrap()
            .replace("[nand]", "[nand]\nchanels = 8");
        let e = DeviceFile::from_toml_str(&t, "x.toml").unwrap_err();
        let s = e.to_string();
        assert!(s.contains("x.toml"), "{s}");
        assert!(s.contains("chanels"), "{s}");
        assert!(s.contains("line"), "{s}");
    }

    #[test]
    fn every_unknown_key_is_reported_with_its_path() {
        let t = preset_text("pm9a3-960g")
            .unwrap()
            .replace("[nand]", "[nand]\nchanels = 8\nplanez = 2")
            .replace("[pcie]", "[pcie]\nlanez = 4");
        let e = DeviceFile::from_toml_str(&t, "x.toml").unwrap_err();
        let keys: Vec<&str> = e.problems.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            vec!["pcie.lanez", "nand.chanels", "nand.planez"],
            "{e}"
        );
        assert!(e.problems.iter().all(|p| p.message.contains("line")), "{e}");
    }

    #[test]
    fn a_value_of_the_wrong_type_names_its_key() {
        let t = preset_text("pm9a3-960g")
            .unwrap()
            .replace("multi_plane = true", "multi_plane = \"yes\"");
        let e = DeviceFile::from_toml_str(&t, "x.toml").unwrap_err();
        assert_eq!(e.problems[0].key, "nand.multi_plane", "{e}");
        assert!(e.problems[0].message.contains("expected a boolean"), "{e}");
    }

    #[test]
    fn every_problem_reported_with_key() {
        let t = preset_text("pm9a3-960g")
            .unwrap()
            .replace("t_erase = \"3.5ms\"", "t_erase = \"3.5\"")
            .replace("generation = 4", "generation = 7")
            .replace("gc_policy = \"greedy\"", "gc_policy = \"smart\"");
        let e = DeviceFile::from_toml_str(&t, "x.toml")
            .unwrap()
            .resolve("x.toml")
            .unwrap_err();
        let keys: Vec<_> = e.problems.iter().map(|p| p.key.as_str()).collect();
        assert!(keys.contains(&"nand.t_erase"), "{e}");
        assert!(keys.contains(&"pcie.generation"), "{e}");
        assert!(keys.contains(&"ftl.gc_policy"), "{e}");
        assert!(e.to_string().contains("no unit"), "{e}");
    }

    #[test]
    fn impossible_geometry_rejected() {
        let t = preset_text("pm9a3-960g")
            .unwrap()
            .replace("over_provisioning = \"7%\"", "over_provisioning = \"0%\"");
        let e = DeviceFile::from_toml_str(&t, "x.toml")
            .unwrap()
            .resolve("x.toml")
            .unwrap_err();
        assert!(
            e.problems.iter().any(|p| p.key == "ftl.over_provisioning"),
            "{e}"
        );
        let t = preset_text("pm9a3-960g")
            .unwrap()
            .replace("blocks_per_plane = 5102", "blocks_per_plane = 5102000");
        let e = DeviceFile::from_toml_str(&t, "x.toml")
            .unwrap()
            .resolve("x.toml")
            .unwrap_err();
        assert!(e.to_string().contains("mapping_unit"), "{e}");
    }

    #[test]
    fn contradictory_bus_rejected() {
        let t = preset_text("pm9a3-960g").unwrap().replace(
            "bus_width_bits = 8",
            "bus_width_bits = 8\nbus_bandwidth = \"1GB/s\"",
        );
        let e = DeviceFile::from_toml_str(&t, "x.toml")
            .unwrap()
            .resolve("x.toml")
            .unwrap_err();
        assert!(
            e.problems.iter().any(|p| p.key == "nand.bus_bandwidth"),
            "{e}"
        );
    }
}
