//! The `[nand]` section of a device file: [`NandFile`] as written,
//! [`NandConfig`] resolved, and its checks.

use crate::config::{d_str, Collector};
use crate::units::{parse_transfer_rate, Bandwidth, Bytes, Time};
use serde::{Deserialize, Serialize};

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
    /// Array read of one page of a block run in SLC mode (needed with an
    /// SLC cache: `ftl.slc_static` / `ftl.slc_dynamic`).
    #[serde(default)]
    pub t_read_slc: Option<String>,
    /// Program of one SLC-mode page (one word line; all planes together
    /// with multi-plane), needed with an SLC cache.
    #[serde(default)]
    pub t_prog_slc: Option<String>,
    /// Rated program/erase cycles per block (default by cell type: SLC
    /// 100,000, MLC 10,000, TLC 3,000, QLC 1,000): the wear report's life
    /// and written-bytes estimate.
    #[serde(default)]
    pub endurance: Option<u32>,
    /// Blocks found bad at the factory, as a share of each parallel unit's
    /// blocks (`"0.5%"`; default none): they never hold data and come out
    /// of the spare.
    #[serde(default)]
    pub factory_bad_blocks: Option<String>,
    /// Chance that a block erase fails, so the block is retired as a grown
    /// bad block (`"0.01%"`; default none). Its data had already been
    /// moved out: only the spare shrinks.
    #[serde(default)]
    pub grown_bad_rate: Option<String>,
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
    /// SLC-mode page read (SLC cache).
    pub t_read_slc: Option<Time>,
    /// SLC-mode page program (SLC cache).
    pub t_prog_slc: Option<Time>,
    /// Rated program/erase cycles per block.
    pub endurance: u32,
    /// Factory bad blocks, a fraction of each unit's blocks.
    pub factory_bad_blocks: f64,
    /// Chance that an erase fails and retires its block (grown bad).
    pub grown_bad_rate: f64,
}

/// Smallest NAND page accepted (small-block SLC: 512 B).
pub const MIN_PAGE: u64 = 512;
/// Largest NAND page accepted (today's TLC/QLC pages are 16 KiB; 64 KiB
/// leaves room for what comes next).
pub const MAX_PAGE: u64 = 64 << 10;

/// Largest channel count accepted.
pub const MAX_CHANNELS: u32 = 256;
/// Largest chips (targets) per channel accepted.
pub const MAX_CHIPS: u32 = 64;
/// Largest dies per chip accepted.
pub const MAX_DIES_PER_CHIP: u32 = 16;
/// Largest planes per die accepted.
pub const MAX_PLANES: u32 = 16;
/// Largest blocks per plane accepted.
pub const MAX_BLOCKS_PER_PLANE: u32 = 1 << 24;
/// Largest pages per block accepted.
pub const MAX_PAGES_PER_BLOCK: u32 = 1 << 16;
/// Largest rated endurance accepted (program/erase cycles per block; SLC
/// is rated at 10^5).
pub const MAX_ENDURANCE: u32 = 10_000_000;
/// Widest channel bus accepted, bits (ONFI and Toggle buses are 8 or 16).
pub const MAX_BUS_WIDTH_BITS: u32 = 64;

impl NandConfig {
    /// Dies per channel.
    pub fn dies_per_channel(&self) -> u32 {
        self.chips_per_channel * self.dies_per_chip
    }
    /// Total dies.
    pub fn total_dies(&self) -> u32 {
        self.channels * self.dies_per_channel()
    }
    /// Dies (saturating: a geometry too large to count is refused by the
    /// device's checks, not wrapped).
    fn dies_saturating(&self) -> u64 {
        (self.channels as u64)
            .saturating_mul(self.chips_per_channel as u64)
            .saturating_mul(self.dies_per_chip as u64)
    }
    /// Raw capacity in bytes (saturating at `u64::MAX`).
    pub fn raw_bytes(&self) -> u64 {
        self.dies_saturating()
            .saturating_mul(self.planes_per_die as u64)
            .saturating_mul(self.blocks_per_plane as u64)
            .saturating_mul(self.pages_per_block as u64)
            .saturating_mul(self.page_size.0)
    }
}

impl NandFile {
    /// Resolve and check `[nand]`, reporting problems to `c`.
    pub(crate) fn resolve(&self, c: &mut Collector) -> NandConfig {
        let nf = self;
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
        // Stated ranges: beyond them the geometry is not a NAND array, and
        // products of these counts must not overflow.
        for (k, v, max) in [
            ("nand.channels", nf.channels, MAX_CHANNELS),
            ("nand.chips_per_channel", nf.chips_per_channel, MAX_CHIPS),
            ("nand.dies_per_chip", nf.dies_per_chip, MAX_DIES_PER_CHIP),
            ("nand.planes_per_die", nf.planes_per_die, MAX_PLANES),
            (
                "nand.blocks_per_plane",
                nf.blocks_per_plane,
                MAX_BLOCKS_PER_PLANE,
            ),
            (
                "nand.pages_per_block",
                nf.pages_per_block,
                MAX_PAGES_PER_BLOCK,
            ),
        ] {
            if v > max {
                c.push(k, format!("{v} is above the largest accepted ({max})"));
            }
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
        if !c.has("nand.page_size") && !(MIN_PAGE..=MAX_PAGE).contains(&page_size.0) {
            c.push(
                "nand.page_size",
                format!(
                    "{page_size} is not a NAND page size (expected {} to {})",
                    Bytes(MIN_PAGE),
                    Bytes(MAX_PAGE)
                ),
            );
        }
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
                if w == 0 || w % 8 != 0 || w > MAX_BUS_WIDTH_BITS {
                    c.push(
                        "nand.bus_width_bits",
                        format!("{w}: expected a multiple of 8 from 8 to {MAX_BUS_WIDTH_BITS}"),
                    );
                }
                match parse_transfer_rate(r) {
                    Ok(t) => {
                        let b = t * (w as f64 / 8.0).max(1.0);
                        if b > crate::config::MAX_CONFIG_BANDWIDTH {
                            c.push(
                                "nand.bus_rate",
                                format!("'{r}' over {w} bits is above the highest accepted rate (10 TB/s)"),
                            );
                            Bandwidth(1.0)
                        } else {
                            Bandwidth(b)
                        }
                    }
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
        NandConfig {
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
            t_read_slc: nf
                .t_read_slc
                .as_deref()
                .map(|s| c.time("nand.t_read_slc", s)),
            t_prog_slc: nf
                .t_prog_slc
                .as_deref()
                .map(|s| c.time("nand.t_prog_slc", s)),
            factory_bad_blocks: match nf.factory_bad_blocks.as_deref() {
                None => 0.0,
                Some(v) => {
                    let f = c.pct("nand.factory_bad_blocks", v);
                    if !(0.0..0.5).contains(&f) {
                        c.push(
                            "nand.factory_bad_blocks",
                            format!("{v}: expected a share from 0% to under 50% of the blocks"),
                        );
                    }
                    f.clamp(0.0, 0.49)
                }
            },
            grown_bad_rate: match nf.grown_bad_rate.as_deref() {
                None => 0.0,
                Some(v) => {
                    let f = c.pct("nand.grown_bad_rate", v);
                    if !(0.0..=0.1).contains(&f) {
                        c.push(
                            "nand.grown_bad_rate",
                            format!("{v}: expected a chance per erase from 0% to 10%"),
                        );
                    }
                    f.clamp(0.0, 0.1)
                }
            },
            endurance: match nf.endurance {
                Some(0) => {
                    c.push("nand.endurance", "must be at least 1 program/erase cycle");
                    1
                }
                Some(e) if e > MAX_ENDURANCE => {
                    c.push(
                        "nand.endurance",
                        format!("{e} is above the largest accepted ({MAX_ENDURANCE} program/erase cycles)"),
                    );
                    MAX_ENDURANCE
                }
                Some(e) => e,
                // Typical rated endurance by cell type (assumptions, see
                // docs/models/ftl.md, "Wear").
                None => match cell {
                    CellType::Slc => 100_000,
                    CellType::Mlc => 10_000,
                    CellType::Tlc => 3_000,
                    CellType::Qlc => 1_000,
                },
            },
        }
    }
}
