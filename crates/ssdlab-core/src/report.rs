//! The versioned run report (`ssdlab.report.v1`): JSON and human text.
//!
//! Throughput is computed over the exact measured simulated interval (from
//! the end of ramp time to the last measured completion), never rounded to
//! whole seconds.

use crate::device::Snapshot;
use crate::stats::DirStats;
use crate::system::System;
use crate::units::Time;
use crate::workload::IgnoredOption;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;

mod mapping;
mod waf;
pub use mapping::{hit_ratio, DirectoryCache, MappingCache};
pub use waf::WafSplit;

/// Report schema identifier.
pub const SCHEMA: &str = "ssdlab.report.v1";

/// Latency summary in ns.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Latency {
    /// Minimum.
    pub min: u64,
    /// Mean.
    pub mean: f64,
    /// Maximum.
    pub max: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    #[serde(rename = "p99.9")]
    pub p99_9: u64,
    /// 99.99th percentile.
    #[serde(rename = "p99.99")]
    pub p99_99: u64,
}

/// One direction's results.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Direction {
    /// I/Os completed in the measured window.
    pub ios: u64,
    /// Bytes.
    pub bytes: u64,
    /// I/Os per second.
    pub iops: f64,
    /// Bytes per second.
    pub bw_bytes_per_s: f64,
    /// Latency (ns).
    pub lat_ns: Latency,
    /// Raw latency histogram: (latency ns, count), when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lat_hist_ns: Option<Vec<(u64, u64)>>,
}

/// GC counters.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Gc {
    /// Victims collected.
    pub runs: u64,
    /// Mapping units relocated.
    pub pages_moved: u64,
    /// Blocks erased.
    pub blocks_erased: u64,
    /// Erased blocks a parallel unit held, on average, when it opened a
    /// block for writing (the reserve GC keeps; 0 if none was opened).
    pub mean_free_blocks: f64,
}

/// SLC write cache, over the measured window (devices with one).
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Slc {
    /// Bytes programmed into SLC-mode blocks (host data, padding included).
    pub slc_written_bytes: u64,
    /// Host bytes programmed straight into native (TLC/QLC) blocks.
    pub direct_written_bytes: u64,
    /// SLC blocks folded into native blocks.
    pub fold_runs: u64,
    /// Bytes folded (valid data moved from SLC to native blocks).
    pub folded_bytes: u64,
    /// Data held in SLC at the end of the run (bytes).
    pub occupancy_bytes: u64,
    /// What the SLC cache could still take at the end of the run (bytes).
    pub room_bytes: u64,
    /// Data held in SLC at the end of each `--sample-interval` window
    /// (bytes; same windows as `timeseries`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub occupancy_series_bytes: Vec<f64>,
}

/// Wear at the end of the run: the blocks' erase counts (preconditioning
/// included), and what they say about the drive's life.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Wear {
    /// Least, most and mean erases of a block, and their standard deviation.
    pub erase_min: u32,
    /// Most erases of a block.
    pub erase_max: u32,
    /// Mean erases per block.
    pub erase_mean: f64,
    /// Standard deviation of the erase counts.
    pub erase_std: f64,
    /// Wear-levelling index: mean / max erases (1 = perfectly level; 1 when
    /// nothing was erased).
    pub wl_index: f64,
    /// Rated program/erase cycles per block (`nand.endurance`).
    pub endurance: u32,
    /// Most erases of a block / endurance: the life the most worn block has used.
    pub life_used: f64,
    /// Host bytes the drive takes before its mean block reaches
    /// `endurance`, at the measured window's write amplification:
    /// endurance × raw bytes / WAF (0 when the window wrote nothing).
    pub tbw_bytes: f64,
    /// GC victims chosen by static wear levelling in the window.
    pub static_wl_runs: u64,
    /// Blocks found bad at the factory (`nand.factory_bad_blocks`).
    pub bad_blocks: u64,
    /// Grown bad blocks: retired in service since the drive was new
    /// (preconditioning included), by a failed erase
    /// (`nand.grown_bad_rate`) or at the rated endurance.
    pub grown_bad_blocks: u64,
    /// Of the grown bad blocks, those retired at the rated endurance
    /// (`ftl.retire_at_endurance`).
    pub retired_at_endurance: u64,
    /// Replacement blocks set aside for grown bad blocks (`ftl.spare_blocks`).
    pub spare_blocks: u64,
    /// Of them, those that have replaced a retired block.
    pub spare_blocks_used: u64,
}

impl Wear {
    /// The wear of one drive: its FTL's erase counts and `waf` (the window's).
    pub(crate) fn of(
        ftl: &crate::ftl::Ftl,
        endurance: u32,
        raw_bytes: u64,
        waf: f64,
        static_wl_runs: u64,
    ) -> Wear {
        let (min, max, mean, std) = ftl.erase_distribution();
        Wear {
            erase_min: min,
            erase_max: max,
            erase_mean: mean,
            erase_std: std,
            wl_index: if max == 0 { 1.0 } else { mean / max as f64 },
            endurance,
            life_used: max as f64 / endurance.max(1) as f64,
            tbw_bytes: if waf > 0.0 && waf.is_finite() {
                endurance as f64 * raw_bytes as f64 / waf
            } else {
                0.0
            },
            static_wl_runs,
            bad_blocks: ftl.bad_blocks(),
            grown_bad_blocks: ftl.grown_bad_blocks().0,
            retired_at_endurance: ftl.grown_bad_blocks().1,
            spare_blocks: ftl.replacement_blocks().0,
            spare_blocks_used: ftl.replacement_blocks().1,
        }
    }
}

/// Flash operation counts.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Flash {
    /// Read transactions (page or multi-plane page reads).
    pub reads: u64,
    /// Program transactions (program units).
    pub programs: u64,
    /// Block erases.
    pub erases: u64,
    /// Program/erase suspensions.
    pub suspends: u64,
}

/// Utilisation over the measured window (0..1).
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Utilisation {
    /// Mean over channel buses.
    pub channel_mean: f64,
    /// Busiest channel bus.
    pub channel_max: f64,
    /// Mean over dies.
    pub die_mean: f64,
    /// Busiest die.
    pub die_max: f64,
    /// PCIe device→host direction.
    pub pcie_up: f64,
    /// PCIe host→device direction.
    pub pcie_down: f64,
    /// Controller DRAM.
    pub dram: f64,
    /// Firmware stages by name (fixed-time skeleton).
    pub firmware: std::collections::BTreeMap<String, f64>,
    /// Core groups (mean over a group's cores), keyed "index:spec:stages".
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub cores: std::collections::BTreeMap<String, f64>,
    /// Accelerators (mean over instances), keyed by stage.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub accelerators: std::collections::BTreeMap<String, f64>,
}

/// Device summary.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct DeviceInfo {
    /// Name.
    pub name: String,
    /// Exported capacity.
    pub capacity_bytes: u64,
    /// Raw NAND capacity.
    pub raw_bytes: u64,
    /// Effective PCIe payload bandwidth.
    pub pcie_bw_bytes_per_s: f64,
    /// The device file's `extends` chain, nearest parent first (absent when empty).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extends: Vec<String>,
    /// Overrides applied on top of the file (`--set`, `Device.with_`), in order (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<crate::config::AppliedOverride>,
}

/// Preconditioning summary.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct PreconditionInfo {
    /// fresh | fill | steady.
    pub mode: String,
    /// Drive writes performed by the preconditioner.
    pub drive_writes: f64,
    /// WAF of the preconditioner's last window.
    pub waf: f64,
    /// How the steady state was reached: `exact` (random overwrites on the
    /// drive itself) or `scaled: U of N units, K snapshots` (built from a
    /// reduced drive, docs/models/ftl.md); empty for fresh and fill.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub method: String,
}

/// The run report.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Report {
    /// Schema id.
    pub schema: String,
    /// ssdlab version.
    pub version: String,
    /// Seed.
    pub seed: u64,
    /// Device.
    pub device: DeviceInfo,
    /// Workload name(s).
    pub workload: String,
    /// Preconditioning.
    pub precondition: PreconditionInfo,
    /// Measured simulated interval (ns).
    pub sim_time_ns: f64,
    /// Wall time of the simulation (s).
    pub wall_time_s: f64,
    /// Simulated host I/Os per wall second.
    pub sim_ios_per_wall_s: f64,
    /// Events processed.
    pub events: u64,
    /// Reads.
    pub read: Direction,
    /// Writes.
    pub write: Direction,
    /// Trims (NVMe Dataset Management, deallocate); bytes are the ranges trimmed.
    pub trim: Direction,
    /// NVMe Flush commands (no bytes).
    pub flush: Direction,
    /// Write amplification (flash programmed / host written) in the window.
    pub waf: f64,
    /// The WAF by writer (user data, GC, SLC folding, mapping table).
    pub waf_split: WafSplit,
    /// GC.
    pub gc: Gc,
    /// SLC write cache, when the device has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slc: Option<Slc>,
    /// Cached mapping table, when the device caches it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mapping: Option<MappingCache>,
    /// Wear: erase counts and life.
    pub wear: Wear,
    /// Flash operations.
    pub flash: Flash,
    /// Utilisation.
    pub utilisation: Utilisation,
    /// Options accepted but without effect.
    pub ignored_options: Vec<IgnoredOptionOut>,
    /// Throughput and latency over simulated time, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeseries: Option<TimeSeries>,
    /// Power, when the device has a `[power]` section.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power: Option<crate::power::PowerReport>,
    /// Energy over the measured window (J).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    /// Energy per completed I/O (J).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_per_io_j: Option<f64>,
    /// Energy per byte transferred (J).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_per_byte_j: Option<f64>,
    /// Systems of several drives: each drive's own report, by name.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub drives: BTreeMap<String, Report>,
    /// Systems of several drives: every PCIe link.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkReport>,
    /// fio steady-state detection (`ss=`): one entry per judged job clone
    /// (or reporting group, with `group_reporting`), in fio's layout.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steadystate: Vec<crate::host::steady::SteadyStateOut>,
    /// The host page cache, when a job did buffered I/O (`direct=0`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub page_cache: Option<crate::host::buffered::PageCacheReport>,
    /// The functional data store, when the run kept data (`--data-store`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_store: Option<DataStoreReport>,
    /// fio verify results, when a job verified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::host::verify::VerifyReport>,
    /// Writes of part of a mapping unit (read-modify-write), when there were any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rmw: Option<Rmw>,
    /// The L-log (`ftl.validity_log`), when the drive keeps one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validity_log: Option<crate::device::validity::ValidityLogReport>,
    /// Block and hybrid mapping's merges (`ftl.mapping`), with those schemes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merges: Option<crate::device::hybrid::MergeReport>,
    /// Mapping checkpoints (`ftl.checkpoint_interval`), when the drive takes them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint: Option<crate::device::checkpoint::CheckpointReport>,
    /// The power loss and recovery (`--power-loss-at`), when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<crate::device::recovery::RecoveryReport>,
    /// The run after the power returned (`--after-recovery JOB`): the
    /// drives as recovery rebuilt them, a new host, its own clock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_recovery: Option<Box<Report>>,
}

/// Read-modify-write: host writes smaller than the mapping unit or not
/// aligned to it, in the measured window.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Rmw {
    /// Partial units written (one or two per such write).
    pub partial_units: u64,
    /// Of those, units whose old data was first read from flash (the rest
    /// were merged in DRAM, or had no old data).
    pub flash_reads: u64,
    /// Bytes the host wrote.
    pub host_write_bytes: u64,
    /// Bytes programmed on flash (host data, GC copies, padding).
    pub programmed_bytes: u64,
    /// Write amplification in bytes: programmed / host-written bytes (the
    /// top-level `waf` counts mapping units).
    pub waf_bytes: f64,
}

impl Rmw {
    fn from(now: &crate::ftl::FtlStats, base: &crate::ftl::FtlStats, unit: u64) -> Option<Rmw> {
        let partial_units = now.rmw_units - base.rmw_units;
        if partial_units == 0 {
            return None;
        }
        let host = now.host_bytes - base.host_bytes;
        let prog = (now.programmed_slots - base.programmed_slots) * unit;
        Some(Rmw {
            partial_units,
            flash_reads: now.rmw_flash_reads - base.rmw_flash_reads,
            host_write_bytes: host,
            programmed_bytes: prog,
            waf_bytes: if host == 0 {
                0.0
            } else {
                prog as f64 / host as f64
            },
        })
    }

    fn add(a: Option<Rmw>, b: &Rmw) -> Option<Rmw> {
        let mut a = a.unwrap_or_default();
        a.partial_units += b.partial_units;
        a.flash_reads += b.flash_reads;
        a.host_write_bytes += b.host_write_bytes;
        a.programmed_bytes += b.programmed_bytes;
        a.waf_bytes = if a.host_write_bytes == 0 {
            0.0
        } else {
            a.programmed_bytes as f64 / a.host_write_bytes as f64
        };
        Some(a)
    }
}

/// The functional data store of a run (all drives).
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct DataStoreReport {
    /// `memory` or `file PATH` (of the first drive).
    pub backing: String,
    /// Bytes written into it (overwrites count again).
    pub bytes_written: u64,
    /// Bytes read out of it (by verifying reads).
    pub bytes_read: u64,
    /// Bytes trimmed.
    pub bytes_trimmed: u64,
    /// Memory (or sparse-file blocks) the data occupies at the end, bytes.
    pub resident_bytes: u64,
}

/// One PCIe link of a system.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct LinkReport {
    /// Name (a drive's, or `<switch>-up`).
    pub name: String,
    /// Endpoint towards the root.
    pub upper: String,
    /// Endpoint away from the root.
    pub lower: String,
    /// Trained generation (0: the root complex's memory port).
    pub generation: u32,
    /// Trained width (0: the root complex's memory port).
    pub lanes: u32,
    /// Payload bandwidth per direction for large transfers (bytes/s).
    pub payload_bw_bytes_per_s: f64,
    /// Busy share towards the root over the measured window.
    pub util_up: f64,
    /// Busy share away from the root.
    pub util_down: f64,
    /// Payload bytes carried towards the root (whole run).
    pub bytes_up: u64,
    /// Payload bytes carried away from the root (whole run).
    pub bytes_down: u64,
}

/// Per-interval series over the measured window (parallel arrays).
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct TimeSeries {
    /// Interval (ns).
    pub interval_ns: f64,
    /// Window start, ns after the start of the measured window.
    pub t_ns: Vec<f64>,
    /// Read IOPS in the window.
    pub read_iops: Vec<f64>,
    /// Read bytes per second.
    pub read_bw_bytes_per_s: Vec<f64>,
    /// Mean read latency (ns; 0 if none completed).
    pub read_lat_mean_ns: Vec<f64>,
    /// Max read latency (ns).
    pub read_lat_max_ns: Vec<f64>,
    /// Write IOPS.
    pub write_iops: Vec<f64>,
    /// Write bytes per second.
    pub write_bw_bytes_per_s: Vec<f64>,
    /// Mean write latency (ns).
    pub write_lat_mean_ns: Vec<f64>,
    /// Max write latency (ns).
    pub write_lat_max_ns: Vec<f64>,
}

impl TimeSeries {
    fn from_sampler(s: &crate::stats::Sampler) -> TimeSeries {
        let secs = s.interval.as_secs_f64();
        let n = s.ios.len();
        let mut t = TimeSeries {
            interval_ns: s.interval.as_ns_f64(),
            ..TimeSeries::default()
        };
        for w in 0..n {
            t.t_ns.push(w as f64 * s.interval.as_ns_f64());
            for d in 0..2 {
                let ios = s.ios[w][d];
                let mean = if ios == 0 {
                    0.0
                } else {
                    s.lat_sum_ps[w][d] as f64 / ios as f64 / 1e3
                };
                let max = s.lat_max_ps[w][d] as f64 / 1e3;
                let (iops, bw) = (ios as f64 / secs, s.bytes[w][d] as f64 / secs);
                if d == 0 {
                    t.read_iops.push(iops);
                    t.read_bw_bytes_per_s.push(bw);
                    t.read_lat_mean_ns.push(mean);
                    t.read_lat_max_ns.push(max);
                } else {
                    t.write_iops.push(iops);
                    t.write_bw_bytes_per_s.push(bw);
                    t.write_lat_mean_ns.push(mean);
                    t.write_lat_max_ns.push(max);
                }
            }
        }
        t
    }
}

/// Serializable ignored option.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct IgnoredOptionOut {
    /// Option.
    pub option: String,
    /// Reason.
    pub reason: String,
}

fn dir(s: &DirStats, secs: f64) -> Direction {
    if s.ios == 0 {
        return Direction::default();
    }
    Direction {
        ios: s.ios,
        bytes: s.bytes,
        iops: if secs > 0.0 { s.ios as f64 / secs } else { 0.0 },
        bw_bytes_per_s: if secs > 0.0 {
            s.bytes as f64 / secs
        } else {
            0.0
        },
        lat_ns: Latency {
            min: s.min.as_ns(),
            mean: s.mean_ns(),
            max: s.max.as_ns(),
            p50: s.pct_ns(50.0),
            p90: s.pct_ns(90.0),
            p99: s.pct_ns(99.0),
            p99_9: s.pct_ns(99.9),
            p99_99: s.pct_ns(99.99),
        },
        lat_hist_ns: None,
    }
}

/// Every link of the system's fabric over the measured `secs`.
fn link_reports(d: &System, secs: f64) -> Vec<LinkReport> {
    d.fabric
        .links()
        .map(|(info, l)| {
            let (up, down) = l.busy();
            let (bu, bd) = l.bytes();
            let u = |b: Time| {
                if secs > 0.0 {
                    (b.as_secs_f64() / secs).min(1.0)
                } else {
                    0.0
                }
            };
            LinkReport {
                name: info.name.clone(),
                upper: info.upper.clone(),
                lower: info.lower.clone(),
                generation: l.config().generation,
                lanes: l.config().lanes,
                payload_bw_bytes_per_s: l.effective_bandwidth().0,
                util_up: u(up),
                util_down: u(down),
                bytes_up: bu,
                bytes_down: bd,
            }
        })
        .collect()
}

/// Add a constant draw of `w` watts over `secs` to `p` as component
/// `name`; returns its energy (J). Nothing for zero watts.
fn constant_power(p: &mut crate::power::PowerReport, name: &str, w: f64, secs: f64) -> f64 {
    if w <= 0.0 {
        return 0.0;
    }
    p.avg_w += w;
    p.peak_w += w;
    p.components.insert(
        name.into(),
        crate::power::ComponentPower {
            avg_w: w,
            energy_j: w * secs,
            peak_w: w,
        },
    );
    w * secs
}

fn util(busy: &[Time], base: &[Time], secs: f64) -> (f64, f64) {
    if busy.is_empty() || secs <= 0.0 {
        return (0.0, 0.0);
    }
    let u: Vec<f64> = busy
        .iter()
        .zip(base.iter().chain(std::iter::repeat(&Time::ZERO)))
        .map(|(b, a)| (b.saturating_sub(*a).as_secs_f64() / secs).min(1.0))
        .collect();
    (
        u.iter().sum::<f64>() / u.len() as f64,
        u.iter().cloned().fold(0.0, f64::max),
    )
}

impl Report {
    /// Set the run's energy (J), and per I/O and per byte from its counts.
    fn set_energy(&mut self, energy: f64) {
        let ios = self.read.ios + self.write.ios;
        let bytes = self.read.bytes + self.write.bytes;
        self.energy_j = Some(energy);
        self.energy_per_io_j = Some(if ios > 0 { energy / ios as f64 } else { 0.0 });
        self.energy_per_byte_j = Some(if bytes > 0 {
            energy / bytes as f64
        } else {
            0.0
        });
    }

    /// Build the report of a finished run.
    pub fn from_system(
        d: &System,
        workload: &str,
        ignored: &[IgnoredOption],
        wall_s: f64,
    ) -> Report {
        let h = &d.host;
        let mut r = if !d.multi {
            Report::for_drive(
                d,
                0,
                [&h.read, &h.write, &h.trim, &h.flush],
                h.last_completion,
                workload,
                ignored,
                wall_s,
            )
        } else {
            Report::aggregate(d, workload, ignored, wall_s)
        };
        // A one-drive system behind its own switch (a computational storage
        // drive): the switch's and the idle FPGA's constant draw join the
        // drive's ledger.
        if !d.multi {
            let secs = r.sim_time_ns / 1e9;
            if d.fabric.links().count() > 1 {
                r.links = link_reports(d, secs);
            }
            if let Some(p) = r.power.as_mut() {
                let e = constant_power(p, "switches", d.switch_power_w, secs)
                    + constant_power(p, "fpga", d.fpga_idle_w, secs);
                if e > 0.0 {
                    r.set_energy(r.energy_j.unwrap_or(0.0) + e);
                }
            }
        }
        r.steadystate = h.steady_results();
        r.page_cache = h.page_cache_report();
        if h.data {
            let mut ds = DataStoreReport::default();
            for (i, st) in d.drives.iter().filter_map(|x| x.store.as_ref()).enumerate() {
                if i == 0 {
                    ds.backing = st.backing_name();
                }
                ds.bytes_written += st.bytes_written;
                ds.bytes_read += st.bytes_read;
                ds.bytes_trimmed += st.bytes_trimmed;
                ds.resident_bytes += st.resident_bytes();
            }
            r.data_store = Some(ds);
        }
        if h.queues.iter().any(|q| q.verify.is_some()) {
            r.verify = Some(h.verify.clone());
        }
        r
    }

    /// The report of drive `i` with the host statistics `stats` (read,
    /// write, trim, flush) over the measured window ending at `last`.
    #[allow(clippy::too_many_arguments)]
    fn for_drive(
        d: &System,
        i: usize,
        stats: [&crate::stats::DirStats; 4],
        last: Time,
        workload: &str,
        ignored: &[IgnoredOption],
        wall_s: f64,
    ) -> Report {
        let start = d.ramp_end();
        let end = last.max(start);
        let secs = (end - start).as_secs_f64();
        let now: Snapshot = d.snapshot_of(i);
        let drive = &d.drives[i];
        let base = &drive.ramp_snapshot;
        let host = now.ftl.host_slots - base.ftl.host_slots;
        let prog = now.ftl.programmed_slots - base.ftl.programmed_slots;
        let waf = if host == 0 {
            if prog == 0 {
                1.0
            } else {
                f64::INFINITY
            }
        } else {
            prog as f64 / host as f64
        };
        let (cm, cx) = util(&now.channel_busy, &base.channel_busy, secs);
        let (dm, dx) = util(&now.die_busy, &base.die_busy, secs);
        let (up, down) = (
            util(&[now.link_busy.0], &[base.link_busy.0], secs).0,
            util(&[now.link_busy.1], &[base.link_busy.1], secs).0,
        );
        let mut cores = std::collections::BTreeMap::new();
        let mut accelerators = std::collections::BTreeMap::new();
        if let Some(c) = &drive.firmware().compute {
            // Busy time over the measured window: after the ramp snapshot.
            let measured = |now: &[Time], base: &[Time], i: usize| {
                now[i] - base.get(i).copied().unwrap_or(Time::ZERO)
            };
            for (gi, (pool, g)) in c.groups.iter().zip(&c.cfg.groups).enumerate() {
                let names: Vec<&str> = g
                    .stages
                    .iter()
                    .map(|&i| crate::compute::STAGES[i])
                    .chain(g.ftl.then_some("ftl"))
                    .collect();
                let busy = measured(&now.core_busy, &base.core_busy, gi);
                let u = busy.as_secs_f64() / (secs * pool.servers() as f64);
                cores.insert(
                    format!("{gi}:{}:{}", g.spec.name, names.join("+")),
                    if secs > 0.0 { u.min(1.0) } else { 0.0 },
                );
            }
            for (ai, (pool, a)) in c.accels.iter().zip(&c.cfg.accelerators).enumerate() {
                let busy = measured(&now.accel_busy, &base.accel_busy, ai);
                let u = busy.as_secs_f64() / (secs * pool.servers() as f64);
                accelerators.insert(
                    crate::compute::STAGES[a.stage].to_string(),
                    if secs > 0.0 { u.min(1.0) } else { 0.0 },
                );
            }
        }
        // The fixed-time stage skeleton; with a compute model the stages run
        // on its cores and accelerators (reported above), so none are listed.
        let mut firmware = std::collections::BTreeMap::new();
        if drive.firmware().compute.is_none() {
            for (i, name) in crate::firmware::STAGE_NAMES.iter().enumerate() {
                firmware.insert(
                    name.to_string(),
                    util(&[now.stage_busy[i]], &[base.stage_busy[i]], secs).0,
                );
            }
        }
        let dev = &drive.dev;
        let (pm, pdw, pwaf, how) = drive.precondition_info;
        Report {
            schema: SCHEMA.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            seed: d.seed,
            device: DeviceInfo {
                name: dev.name.clone(),
                capacity_bytes: dev.capacity_bytes(),
                raw_bytes: dev.nand.raw_bytes(),
                pcie_bw_bytes_per_s: d.link_of(i).effective_bandwidth().0,
                extends: dev.origin.extends.clone(),
                overrides: dev.origin.overrides.clone(),
            },
            workload: workload.into(),
            precondition: PreconditionInfo {
                mode: pm.name().into(),
                drive_writes: pdw,
                waf: if pwaf.is_finite() { pwaf } else { 0.0 },
                method: match how {
                    None => String::new(),
                    Some(crate::ftl::PreconditionMethod::FillPerLpn { why }) => {
                        format!("per LPN, not in closed form: {why}")
                    }
                    Some(crate::ftl::PreconditionMethod::Exact { why: None }) => "exact".into(),
                    Some(crate::ftl::PreconditionMethod::Exact { why: Some(why) }) => {
                        format!("exact, not scaled: {why}")
                    }
                    Some(crate::ftl::PreconditionMethod::Scaled { units, snapshots }) => format!(
                        "scaled: {units} of {} units, {snapshots} snapshots",
                        units * snapshots
                    ),
                },
            },
            sim_time_ns: secs * 1e9,
            wall_time_s: wall_s,
            sim_ios_per_wall_s: if wall_s > 0.0 {
                d.host.ios_done as f64 / wall_s
            } else {
                0.0
            },
            events: d.events,
            read: dir(stats[0], secs),
            write: dir(stats[1], secs),
            trim: dir(stats[2], secs),
            flush: dir(stats[3], secs),
            waf: if waf.is_finite() { waf } else { 0.0 },
            waf_split: WafSplit::of(
                host,
                prog,
                now.ftl.relocated_programmed - base.ftl.relocated_programmed,
                (
                    now.ftl.gc_slots_moved - base.ftl.gc_slots_moved,
                    now.ftl.fold_slots_moved - base.ftl.fold_slots_moved,
                ),
                (
                    now.ftl.map_slots - base.ftl.map_slots,
                    now.ftl.checkpoint_slots - base.ftl.checkpoint_slots,
                    now.ftl.validity_slots - base.ftl.validity_slots,
                ),
                now.ftl.merge_slots_programmed - base.ftl.merge_slots_programmed,
            ),
            gc: Gc {
                runs: now.ftl.gc_runs - base.ftl.gc_runs,
                pages_moved: now.ftl.gc_slots_moved - base.ftl.gc_slots_moved,
                blocks_erased: now.ftl.blocks_erased - base.ftl.blocks_erased,
                mean_free_blocks: (now.ftl.free_at_open - base.ftl.free_at_open) as f64
                    / (now.ftl.blocks_opened - base.ftl.blocks_opened).max(1) as f64,
            },
            slc: drive.slc_report(base),
            mapping: drive.mapping_report(base),
            wear: Wear::of(
                &drive.ftl,
                dev.nand.endurance,
                dev.nand.raw_bytes(),
                if host == 0 { 0.0 } else { waf },
                now.ftl.static_wl_runs - base.ftl.static_wl_runs,
            ),
            rmw: Rmw::from(&now.ftl, &base.ftl, drive.dev.ftl.mapping_unit.0),
            recovery: drive.recovery.clone(),
            after_recovery: None,
            merges: drive.merge_report(&base.ftl),
            validity_log: drive.validity_report(&base.validity),
            checkpoint: drive.checkpoint_report(),
            flash: Flash {
                reads: now.flash[0] - base.flash[0],
                programs: now.flash[1] - base.flash[1],
                erases: now.flash[2] - base.flash[2],
                suspends: now.flash[3] - base.flash[3],
            },
            utilisation: Utilisation {
                channel_mean: cm,
                channel_max: cx,
                die_mean: dm,
                die_max: dx,
                pcie_up: up,
                pcie_down: down,
                dram: util(&[now.dram_busy], &[base.dram_busy], secs).0,
                firmware,
                cores,
                accelerators,
            },
            ignored_options: ignored
                .iter()
                .map(|i| IgnoredOptionOut {
                    option: i.option.clone(),
                    reason: i.reason.clone(),
                })
                .collect(),
            timeseries: d.host.sampler.as_ref().map(TimeSeries::from_sampler),
            power: None,
            energy_j: None,
            energy_per_io_j: None,
            energy_per_byte_j: None,
            drives: BTreeMap::new(),
            links: Vec::new(),
            steadystate: Vec::new(),
            page_cache: None,
            data_store: None,
            verify: None,
        }
        .with_power(d, i, start, end)
    }

    fn with_power(mut self, d: &System, i: usize, start: Time, end: Time) -> Report {
        let Some(ledger) = &d.drives[i].ledger else {
            return self;
        };
        let s = d.drives[i].ramp_energy.unwrap_or((start, [0.0; 8]));
        let e = (end, d.energy_of(i, end));
        let p = crate::power::PowerReport::build(ledger, s, e);
        self.set_energy(e.1[7] - s.1[7]);
        self.power = Some(p);
        self
    }

    /// A system of several drives: the host's statistics over every drive
    /// at the top, device counters summed (utilisation averaged over the
    /// drives, maxima over all), power summed with the switches', and one
    /// full report per drive under `drives` plus per-link figures under `links`.
    fn aggregate(d: &System, workload: &str, ignored: &[IgnoredOption], wall_s: f64) -> Report {
        let h = &d.host;
        let all = h.measured();
        let start = d.ramp_end();
        let end = h.last_completion.max(start);
        let secs = (end - start).as_secs_f64();
        let per: Vec<Report> = (0..d.drives.len())
            .map(|i| {
                let st = &h.per_drive[i];
                let mut r = Report::for_drive(
                    d,
                    i,
                    [&st[0], &st[1], &st[2], &st[3]],
                    end,
                    workload,
                    ignored,
                    wall_s,
                );
                r.ignored_options.clear();
                // The time series is the host's, over every drive: at the top only.
                r.timeseries = None;
                r.events = 0;
                r.wall_time_s = 0.0;
                r.sim_ios_per_wall_s = 0.0;
                r
            })
            .collect();
        let n = per.len() as f64;
        let sum = |f: &dyn Fn(&Report) -> f64| per.iter().map(f).sum::<f64>();
        let max = |f: &dyn Fn(&Report) -> f64| per.iter().map(f).fold(0.0, f64::max);
        let (mut host_units, mut prog_units) = (0u64, 0u64);
        for (i, dr) in d.drives.iter().enumerate() {
            let now = d.snapshot_of(i);
            host_units += now.ftl.host_slots - dr.ramp_snapshot.ftl.host_slots;
            prog_units += now.ftl.programmed_slots - dr.ramp_snapshot.ftl.programmed_slots;
        }
        let waf = if host_units == 0 {
            if prog_units == 0 {
                1.0
            } else {
                0.0
            }
        } else {
            prog_units as f64 / host_units as f64
        };
        let links = link_reports(d, secs);
        let mut r = Report {
            schema: SCHEMA.into(),
            version: env!("CARGO_PKG_VERSION").into(),
            seed: d.seed,
            device: DeviceInfo {
                name: d.name.clone(),
                capacity_bytes: per.iter().map(|p| p.device.capacity_bytes).sum(),
                raw_bytes: per.iter().map(|p| p.device.raw_bytes).sum(),
                pcie_bw_bytes_per_s: sum(&|p| p.device.pcie_bw_bytes_per_s),
                extends: Vec::new(),
                overrides: Vec::new(),
            },
            workload: workload.into(),
            precondition: PreconditionInfo {
                mode: per[0].precondition.mode.clone(),
                drive_writes: sum(&|p| p.precondition.drive_writes) / n,
                waf: sum(&|p| p.precondition.waf) / n,
                method: per[0].precondition.method.clone(),
            },
            sim_time_ns: secs * 1e9,
            wall_time_s: wall_s,
            sim_ios_per_wall_s: if wall_s > 0.0 {
                h.ios_done as f64 / wall_s
            } else {
                0.0
            },
            events: d.events,
            read: dir(&all[0], secs),
            write: dir(&all[1], secs),
            trim: dir(&all[2], secs),
            flush: dir(&all[3], secs),
            waf,
            waf_split: WafSplit::sum(&per.iter().map(|p| &p.waf_split).collect::<Vec<_>>()),
            gc: Gc {
                runs: per.iter().map(|p| p.gc.runs).sum(),
                pages_moved: per.iter().map(|p| p.gc.pages_moved).sum(),
                blocks_erased: per.iter().map(|p| p.gc.blocks_erased).sum(),
                // Each drive's reserve, averaged over the drives.
                mean_free_blocks: per.iter().map(|p| p.gc.mean_free_blocks).sum::<f64>() / n,
            },
            slc: per
                .iter()
                .filter_map(|p| p.slc.as_ref())
                .fold(None, |acc, s| {
                    let mut a: Slc = acc.unwrap_or_default();
                    a.slc_written_bytes += s.slc_written_bytes;
                    a.direct_written_bytes += s.direct_written_bytes;
                    a.fold_runs += s.fold_runs;
                    a.folded_bytes += s.folded_bytes;
                    a.occupancy_bytes += s.occupancy_bytes;
                    a.room_bytes += s.room_bytes;
                    Some(a)
                }),
            rmw: per
                .iter()
                .filter_map(|p| p.rmw.as_ref())
                .fold(None, Rmw::add),
            validity_log: crate::device::validity::ValidityLogReport::combine(
                &per.iter()
                    .filter_map(|p| p.validity_log.as_ref())
                    .collect::<Vec<_>>(),
            ),
            merges: crate::device::hybrid::MergeReport::combine(
                &per.iter()
                    .filter_map(|p| p.merges.as_ref())
                    .collect::<Vec<_>>(),
            ),
            checkpoint: crate::device::checkpoint::CheckpointReport::combine(
                &per.iter()
                    .filter_map(|p| p.checkpoint.as_ref())
                    .collect::<Vec<_>>(),
            ),
            after_recovery: None,
            recovery: crate::device::recovery::RecoveryReport::combine(
                &per.iter()
                    .filter_map(|p| p.recovery.as_ref())
                    .collect::<Vec<_>>(),
            ),
            mapping: per
                .iter()
                .filter_map(|p| p.mapping.as_ref())
                .fold(None, MappingCache::add),
            // Over the drives: the extremes, the mean of the means, the
            // largest spread; the life is the most worn drive's, the bytes
            // the drives take together.
            wear: Wear {
                erase_min: per.iter().map(|p| p.wear.erase_min).min().unwrap_or(0),
                erase_max: per.iter().map(|p| p.wear.erase_max).max().unwrap_or(0),
                erase_mean: per.iter().map(|p| p.wear.erase_mean).sum::<f64>() / n,
                erase_std: per.iter().map(|p| p.wear.erase_std).fold(0.0, f64::max),
                wl_index: per.iter().map(|p| p.wear.wl_index).fold(1.0, f64::min),
                endurance: per.iter().map(|p| p.wear.endurance).min().unwrap_or(0),
                life_used: per.iter().map(|p| p.wear.life_used).fold(0.0, f64::max),
                tbw_bytes: per.iter().map(|p| p.wear.tbw_bytes).sum(),
                static_wl_runs: per.iter().map(|p| p.wear.static_wl_runs).sum(),
                bad_blocks: per.iter().map(|p| p.wear.bad_blocks).sum(),
                grown_bad_blocks: per.iter().map(|p| p.wear.grown_bad_blocks).sum(),
                retired_at_endurance: per.iter().map(|p| p.wear.retired_at_endurance).sum(),
                spare_blocks: per.iter().map(|p| p.wear.spare_blocks).sum(),
                spare_blocks_used: per.iter().map(|p| p.wear.spare_blocks_used).sum(),
            },
            flash: Flash {
                reads: per.iter().map(|p| p.flash.reads).sum(),
                programs: per.iter().map(|p| p.flash.programs).sum(),
                erases: per.iter().map(|p| p.flash.erases).sum(),
                suspends: per.iter().map(|p| p.flash.suspends).sum(),
            },
            utilisation: Utilisation {
                channel_mean: sum(&|p| p.utilisation.channel_mean) / n,
                channel_max: max(&|p| p.utilisation.channel_max),
                die_mean: sum(&|p| p.utilisation.die_mean) / n,
                die_max: max(&|p| p.utilisation.die_max),
                pcie_up: sum(&|p| p.utilisation.pcie_up) / n,
                pcie_down: sum(&|p| p.utilisation.pcie_down) / n,
                dram: sum(&|p| p.utilisation.dram) / n,
                ..Utilisation::default()
            },
            ignored_options: ignored
                .iter()
                .filter(|i| i.option != "filename")
                .map(|i| IgnoredOptionOut {
                    option: i.option.clone(),
                    reason: i.reason.clone(),
                })
                .collect(),
            timeseries: h.sampler.as_ref().map(TimeSeries::from_sampler),
            power: None,
            energy_j: None,
            energy_per_io_j: None,
            energy_per_byte_j: None,
            drives: BTreeMap::new(),
            links,
            steadystate: Vec::new(),
            page_cache: None,
            data_store: None,
            verify: None,
        };
        // Power: each drive's ledger, plus the switches' constant draw.
        if per.iter().any(|p| p.power.is_some()) {
            let mut p = crate::power::PowerReport::default();
            let mut energy = 0.0;
            for q in &per {
                if let Some(qp) = &q.power {
                    p.avg_w += qp.avg_w;
                    p.peak_w += qp.peak_w;
                    p.window_ns = qp.window_ns;
                    for (k, c) in &qp.components {
                        let e = p.components.entry(k.clone()).or_default();
                        e.avg_w += c.avg_w;
                        e.energy_j += c.energy_j;
                        e.peak_w += c.peak_w;
                    }
                }
                energy += q.energy_j.unwrap_or(0.0);
            }
            energy += constant_power(&mut p, "switches", d.switch_power_w, secs);
            energy += constant_power(&mut p, "fpga", d.fpga_idle_w, secs);
            p.budget_ok = per
                .iter()
                .all(|q| q.power.as_ref().is_none_or(|x| x.budget_ok));
            r.set_energy(energy);
            r.power = Some(p);
        }
        r.drives = d.names.iter().cloned().zip(per).collect();
        r
    }

    /// JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
    }

    /// Human-readable summary.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "ssdlab {} — device {} ({:.1} GB exported, {:.1} GB raw), seed {}",
            self.version,
            self.device.name,
            self.device.capacity_bytes as f64 / 1e9,
            self.device.raw_bytes as f64 / 1e9,
            self.seed
        );
        if !self.device.extends.is_empty() {
            let _ = writeln!(s, "  extends: {}", self.device.extends.join(" -> "));
        }
        if !self.device.overrides.is_empty() {
            let o: Vec<String> = self
                .device
                .overrides
                .iter()
                .map(|o| format!("{} = {}", o.key, o.value))
                .collect();
            let _ = writeln!(s, "  overrides: {}", o.join(", "));
        }
        let method = if self.precondition.method.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.precondition.method)
        };
        let _ = writeln!(
            s,
            "workload: {}   precondition: {}{method}",
            self.workload, self.precondition.mode
        );
        let _ = writeln!(
            s,
            "measured: {:.3} ms simulated in {:.2} s wall ({:.2} M simulated I/Os per wall second)",
            self.sim_time_ns / 1e6,
            self.wall_time_s,
            self.sim_ios_per_wall_s / 1e6
        );
        for (name, d) in [
            ("read", &self.read),
            ("write", &self.write),
            ("trim", &self.trim),
            ("flush", &self.flush),
        ] {
            if d.ios == 0 {
                continue;
            }
            let _ = writeln!(
                s,
                "{name:>5}: {:>10.0} IOPS  {:>9.1} MB/s  {} I/Os",
                d.iops,
                d.bw_bytes_per_s / 1e6,
                d.ios
            );
            let l = &d.lat_ns;
            let us = |v: u64| v as f64 / 1e3;
            let _ = writeln!(
                s,
                "       lat (us): min {:.1}  mean {:.1}  p50 {:.1}  p90 {:.1}  p99 {:.1}  p99.9 {:.1}  p99.99 {:.1}  max {:.1}",
                us(l.min),
                l.mean / 1e3,
                us(l.p50),
                us(l.p90),
                us(l.p99),
                us(l.p99_9),
                us(l.p99_99),
                us(l.max)
            );
        }
        if let Some(pc) = &self.page_cache {
            let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
            let _ = writeln!(
                s,
                "  page cache: {:.0} MiB (peak {:.0} MiB); reads {} pages hit, {} missed; {:.1} MiB read from drives, {:.1} MiB written back; {:.1} MiB dirty at end (peak {:.1} MiB); {} writes paused ({:.3} s), {} waited at dirty_ratio ({:.3} s)",
                mib(pc.capacity_bytes),
                mib(pc.peak_bytes),
                pc.hit_pages,
                pc.miss_pages,
                mib(pc.read_from_drive_bytes),
                mib(pc.written_back_bytes),
                mib(pc.dirty_at_end_bytes),
                mib(pc.dirty_peak_bytes),
                pc.paused_writes,
                pc.pause_time_s,
                pc.throttled_writes,
                pc.throttle_time_s
            );
        }
        if let Some(m) = &self.merges {
            s += &m.text();
        }
        if let Some(v) = &self.validity_log {
            s += &v.text();
        }
        if let Some(c) = &self.checkpoint {
            s += &c.text();
        }
        if let Some(r) = &self.recovery {
            s += &r.text();
        }
        if let Some(m) = &self.rmw {
            let _ = writeln!(
                s,
                "  read-modify-write: {} partial units ({} read from flash first); WAF {:.3} in bytes ({:.1} MiB programmed for {:.1} MiB written)",
                m.partial_units,
                m.flash_reads,
                m.waf_bytes,
                m.programmed_bytes as f64 / (1u64 << 20) as f64,
                m.host_write_bytes as f64 / (1u64 << 20) as f64
            );
        }
        if let Some(ds) = &self.data_store {
            let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
            let _ = writeln!(
                s,
                "  data store: {}; {:.1} MiB written, {:.1} MiB read, {:.1} MiB trimmed; {:.1} MiB held",
                ds.backing,
                mib(ds.bytes_written),
                mib(ds.bytes_read),
                mib(ds.bytes_trimmed),
                mib(ds.resident_bytes)
            );
        }
        if let Some(v) = &self.verify {
            let _ = writeln!(
                s,
                "  verify: {} blocks ({:.1} MiB) checked, {} failed",
                v.blocks,
                v.bytes as f64 / (1u64 << 20) as f64,
                v.failures
            );
            for f in &v.first_failures {
                let _ = writeln!(s, "    {f}");
            }
        }
        for ss in &self.steadystate {
            match ss.attained_at_s {
                Some(t) => {
                    let _ = writeln!(
                        s,
                        "  steady state: {} {} attained after {:.0} s (criterion {}, mean {} IOPS)",
                        ss.job, ss.ss, t, ss.criterion, ss.data.iops_mean
                    );
                }
                None => {
                    let _ = writeln!(
                        s,
                        "  steady state: {} {} not attained (last criterion {})",
                        ss.job, ss.ss, ss.criterion
                    );
                }
            }
        }
        let _ = writeln!(
            s,
            "  WAF: {:.3}   GC: {} runs, {} pages moved, {} blocks erased",
            self.waf, self.gc.runs, self.gc.pages_moved, self.gc.blocks_erased
        );
        if self.waf_split.host_units > 0 {
            let w = &self.waf_split;
            let _ = writeln!(
                s,
                "  WAF by writer: user {:.3} + GC {:.3} + SLC fold {:.3} + mapping {:.3}{}{}{}",
                w.user,
                w.gc,
                w.slc_fold,
                w.mapping,
                if self.validity_log.is_some() {
                    format!(" + validity log {:.3}", w.validity)
                } else {
                    String::new()
                },
                if self.checkpoint.is_some() {
                    format!(" + checkpoints {:.3}", w.checkpoint)
                } else {
                    String::new()
                },
                if self.merges.is_some() {
                    format!(" + merges {:.3}", w.merge)
                } else {
                    String::new()
                }
            );
        }
        if self.gc.runs > 0 {
            let _ = writeln!(
                s,
                "  GC reserve: {:.2} free blocks per parallel unit when a block is opened",
                self.gc.mean_free_blocks
            );
        }
        {
            let w = &self.wear;
            let mut bad = if w.bad_blocks > 0 {
                format!(", {} factory bad blocks", w.bad_blocks)
            } else {
                String::new()
            };
            if w.grown_bad_blocks > 0 {
                bad.push_str(&format!(
                    ", {} grown bad ({} at the endurance limit)",
                    w.grown_bad_blocks, w.retired_at_endurance
                ));
            }
            if w.spare_blocks > 0 {
                bad.push_str(&format!(
                    ", {} of {} replacement blocks used",
                    w.spare_blocks_used, w.spare_blocks
                ));
            }
            let life = if w.tbw_bytes > 0.0 {
                format!("{:.1} TB writable at this WAF", w.tbw_bytes / 1e12)
            } else {
                "no writes to estimate life from".into()
            };
            let _ = writeln!(
                s,
                "  Wear: erases per block min {} / mean {:.2} / max {} (std {:.2}, WL index {:.2}); {:.2}% of {} P/E used; {life}{bad}",
                w.erase_min,
                w.erase_mean,
                w.erase_max,
                w.erase_std,
                w.wl_index,
                w.life_used * 100.0,
                w.endurance,
            );
        }
        if let Some(m) = &self.mapping {
            let _ = writeln!(
                s,
                "  Mapping cache: {:.1} MiB ({} of {} translation pages), hit ratio {:.2}%, {} translation reads, {} writes ({} GC moves); WAF from mapping {:.3}",
                m.cache_bytes as f64 / (1u64 << 20) as f64,
                m.cached_pages,
                m.translation_pages,
                m.hit_ratio * 100.0,
                m.translation_reads,
                m.translation_writes,
                m.translation_gc_moves,
                m.waf_mapping
            );
            if let Some(d) = &m.directory {
                let _ = writeln!(
                    s,
                    "  Directory on flash: {:?} pages per level under a root in DRAM, {:.1} MiB cached ({} pages), hit ratio {:.2}%, {} directory reads, {} writes",
                    d.levels,
                    d.cache_bytes as f64 / (1u64 << 20) as f64,
                    d.cached_pages,
                    d.hit_ratio * 100.0,
                    d.reads,
                    d.writes
                );
            }
        }
        if let Some(c) = &self.slc {
            let _ = writeln!(
                s,
                "   SLC: {:.1} MB written to SLC, {:.1} MB direct to native, {} folds moving {:.1} MB; {:.1} MB held, room for {:.1} MB",
                c.slc_written_bytes as f64 / 1e6,
                c.direct_written_bytes as f64 / 1e6,
                c.fold_runs,
                c.folded_bytes as f64 / 1e6,
                c.occupancy_bytes as f64 / 1e6,
                c.room_bytes as f64 / 1e6
            );
        }
        let _ = writeln!(
            s,
            "flash: {} reads, {} programs, {} erases, {} suspends",
            self.flash.reads, self.flash.programs, self.flash.erases, self.flash.suspends
        );
        let u = &self.utilisation;
        let _ = writeln!(
            s,
            "  util: channels {:.1}% (max {:.1}%), dies {:.1}% (max {:.1}%), PCIe up {:.1}% down {:.1}%, DRAM {:.1}%",
            u.channel_mean * 100.0,
            u.channel_max * 100.0,
            u.die_mean * 100.0,
            u.die_max * 100.0,
            u.pcie_up * 100.0,
            u.pcie_down * 100.0,
            u.dram * 100.0
        );
        if let Some(p) = &self.power {
            let _ = writeln!(
                s,
                " power: avg {:.3} W, peak {:.3} W, energy {:.4} J ({:.2} uJ/IO), budgets {}",
                p.avg_w,
                p.peak_w,
                self.energy_j.unwrap_or(0.0),
                self.energy_per_io_j.unwrap_or(0.0) * 1e6,
                if p.budget_ok { "met" } else { "EXCEEDED" }
            );
            let parts: Vec<String> = p
                .components
                .iter()
                .map(|(k, v)| format!("{k} {:.1} mW (peak {:.1})", v.avg_w * 1e3, v.peak_w * 1e3))
                .collect();
            let _ = writeln!(s, "        {}", parts.join(", "));
            for (k, (limit, avg, ok)) in &p.budgets {
                if !ok {
                    let _ = writeln!(
                        s,
                        "        budget {k}: {:.1} mW > {:.1} mW",
                        avg * 1e3,
                        limit * 1e3
                    );
                }
            }
        }
        for (name, d) in &self.drives {
            let _ = writeln!(
                s,
                "-- drive {name}: {} ({:.1} GB exported) --",
                d.device.name,
                d.device.capacity_bytes as f64 / 1e9
            );
            // The drive's block without the run-wide header lines.
            let text = d.to_text();
            for line in text
                .lines()
                .skip_while(|l| !l.starts_with("measured:"))
                .skip(1)
            {
                let _ = writeln!(s, "  {line}");
            }
        }
        if !self.links.is_empty() {
            let _ = writeln!(s, "links (PCIe):");
            for l in &self.links {
                // The root complex's memory port is not a PCIe link.
                let kind = if l.generation == 0 {
                    "memory  ".to_string()
                } else {
                    format!("Gen{} x{:<2}", l.generation, l.lanes)
                };
                let _ = writeln!(
                    s,
                    "  {:<12} {:>6} <-> {:<8} {kind} {:>6.2} GB/s  up {:>5.1}%  down {:>5.1}%  {:.3} GB up, {:.3} GB down",
                    l.name,
                    l.upper,
                    l.lower,
                    l.payload_bw_bytes_per_s / 1e9,
                    l.util_up * 100.0,
                    l.util_down * 100.0,
                    l.bytes_up as f64 / 1e9,
                    l.bytes_down as f64 / 1e9
                );
            }
        }
        if !self.ignored_options.is_empty() {
            let _ = writeln!(s, "ignored options (no meaning in a simulator):");
            for i in &self.ignored_options {
                let _ = writeln!(s, "  {}: {}", i.option, i.reason);
            }
        }
        if let Some(a) = &self.after_recovery {
            let _ = writeln!(
                s,
                "\nAfter recovery (the power returned; the drive as recovery rebuilt it, a new host and clock):"
            );
            s += &a.to_text();
        }
        s
    }
}
