//! The `[ftl]` section of a device file: [`FtlFile`] as written,
//! [`FtlConfig`] resolved, and its checks.

use crate::config::{d_str, Collector};
use crate::device::nand::config::{MAX_BLOCKS_PER_PLANE, MAX_ENDURANCE};
use crate::units::{Bytes, Time};
use serde::{Deserialize, Serialize};

/// Largest `ftl.gc_d_choices` accepted.
pub const MAX_GC_D_CHOICES: u32 = 1024;

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
    /// Static SLC write cache: user data held in blocks kept in SLC mode for
    /// good, taken out of the spare blocks (`0B`: none).
    #[serde(default = "d_zero_bytes")]
    pub slc_static: String,
    /// Dynamic SLC write cache: at most this much user data in free blocks
    /// run in SLC mode; shrinks as the drive fills (`0B`: none).
    #[serde(default = "d_zero_bytes")]
    pub slc_dynamic: String,
    /// When the SLC cache is full, host writes go `direct` to the native
    /// cells (the write cliff) or wait for `fold`ing to free SLC blocks.
    #[serde(default = "d_slc_full")]
    pub slc_when_full: String,
    /// Idle time after which the drive folds SLC data into native blocks.
    #[serde(default = "d_slc_idle")]
    pub slc_fold_idle: String,
    /// Controller DRAM for the mapping table: `"all"` keeps the whole L2P
    /// in DRAM; a size (`"2MiB"`) caches that much of it, in translation
    /// pages of one mapping unit, loaded from flash on demand (DFTL-style).
    #[serde(default = "d_mapping_cache")]
    pub mapping_cache: String,
    /// `none`: free blocks are used in the order they were erased;
    /// `dynamic`: the least-worn free block is opened next; `static`: that,
    /// and when a unit's erase counts spread by more than
    /// `static_wl_threshold`, GC collects its least-worn full block (cold
    /// data) so the block rejoins the cycle.
    #[serde(default = "d_wl")]
    pub wear_leveling: String,
    /// Erase-count spread (most worn block minus least worn full block, per
    /// unit) that triggers static wear levelling.
    #[serde(default = "d_wl_thr")]
    pub static_wl_threshold: u32,
    /// Retire a block when its erase count reaches `nand.endurance` (it
    /// becomes a grown bad block; the spare shrinks). When a unit has too
    /// few good blocks left for its share of the data and the GC reserve,
    /// the drive is worn out and the run ends with that error.
    #[serde(default = "d_true")]
    pub retire_at_endurance: bool,
    /// Erased blocks of each unit set aside to replace grown bad blocks
    /// (`"2%"` of its blocks; default none), taken out of the spare: a
    /// retired block's place in the free pool goes to one of them (NVMe's
    /// "available spare"). With none left, a retirement shrinks the spare
    /// the GC works with.
    #[serde(default = "d_zero_pct")]
    pub spare_blocks: String,
    /// Checkpoint the mapping every this long (`"100ms"`; default `"none"`):
    /// the mapping pages changed since the last checkpoint and a record
    /// (the directory of mapping pages and the block table) are programmed
    /// to flash, and recovery after a power loss reads them and scans only
    /// the blocks written since (seed 001's C-log).
    #[serde(default = "d_none")]
    pub checkpoint_interval: String,
    /// Also checkpoint when the mapping log since the last checkpoint
    /// began reaches this size (`"64MiB"`; default `"none"`): 8 B per
    /// mapping update (a unit programmed by the host or moved by GC, a unit
    /// trimmed), so recovery never replays more than this (seed 001's
    /// C-log with a log-size trigger).
    #[serde(default = "d_none")]
    pub checkpoint_log_size: String,
    /// Mapping scheme: `page` (default: page-level mapping with GC),
    /// `block` (block-level: a unit's fixed place in its block; rewriting a
    /// written place copies the block), `bast` or `fast` (hybrid log-block
    /// mapping, seed 001's W-log: Kim et al. 2002; Lee et al. 2007).
    #[serde(default = "d_page")]
    pub mapping: String,
    /// Log blocks per parallel unit of a hybrid mapping (`bast`: one per
    /// logical block being rewritten; `fast`: one sequential log and the
    /// rest shared random logs).
    #[serde(default)]
    pub log_blocks: u32,
    /// Seed 001's L-log: the validity bitmaps (a bit per physical mapping
    /// unit) live on flash, and controller DRAM caches this much of them
    /// (`"256KiB"`; default `"none"`: all of them in DRAM, never written).
    /// Every program and invalidation updates a bitmap page (loaded first
    /// when absent); GC reads its victim's pages before copying.
    #[serde(default = "d_none")]
    pub validity_log: String,
    /// Replacement policy of the mapping cache (M-log buffer): `"lru"`
    /// (default) or `"fifo"`.
    #[serde(default = "d_lru")]
    pub mapping_cache_policy: String,
    /// Replacement policy of the validity log's cache (L-log buffer):
    /// `"lru"` (default) or `"fifo"`.
    #[serde(default = "d_lru")]
    pub validity_log_policy: String,
    /// DRAM for the mapping directory's pages (seed 001's M-logs of
    /// M-logs): `"all"` (default: the directory of translation-page
    /// locations is held whole in DRAM, never written) or a size: the
    /// directory is itself stored in pages on flash, level above level
    /// (each page holds the locations of `mapping_unit / 4 B` pages of the
    /// level below) until one page, the root, holds the top; that many
    /// bytes of those pages are cached (the mapping cache's policy). Needs
    /// a cached mapping (`ftl.mapping_cache`).
    #[serde(default = "d_mapping_cache")]
    pub directory_cache: String,
}
fn d_lru() -> String {
    d_str("lru")
}
fn d_page() -> String {
    d_str("page")
}
fn d_none() -> String {
    d_str("none")
}
fn d_zero_pct() -> String {
    d_str("0%")
}
fn d_true() -> bool {
    true
}
fn d_wl() -> String {
    d_str("none")
}
fn d_wl_thr() -> u32 {
    64
}
/// The shortest checkpoint period (`ftl.checkpoint_interval`).
pub const MIN_CHECKPOINT_INTERVAL: Time = Time::us(100);

fn d_mapping_cache() -> String {
    d_str("all")
}
fn d_zero_bytes() -> String {
    d_str("0B")
}
fn d_slc_full() -> String {
    d_str("direct")
}
fn d_slc_idle() -> String {
    d_str("5ms")
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
            slc_static: d_zero_bytes(),
            slc_dynamic: d_zero_bytes(),
            slc_when_full: d_slc_full(),
            slc_fold_idle: d_slc_idle(),
            mapping_cache: d_mapping_cache(),
            wear_leveling: d_wl(),
            static_wl_threshold: d_wl_thr(),
            retire_at_endurance: true,
            spare_blocks: d_zero_pct(),
            checkpoint_interval: d_none(),
            checkpoint_log_size: d_none(),
            mapping: d_page(),
            log_blocks: 0,
            validity_log: d_none(),
            mapping_cache_policy: d_lru(),
            validity_log_policy: d_lru(),
            directory_cache: d_mapping_cache(),
        }
    }
}

/// Mapping scheme (`ftl.mapping`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MappingScheme {
    /// Page-level mapping, garbage collection by victim blocks.
    Page,
    /// Block-level mapping: a rewrite below a block's write pointer copies the block.
    Block,
    /// Hybrid, block-associative log blocks (BAST).
    Bast,
    /// Hybrid, fully associative random log blocks and one sequential log (FAST).
    Fast,
}

impl MappingScheme {
    /// Name as in the device file.
    pub fn name(self) -> &'static str {
        match self {
            MappingScheme::Page => "page",
            MappingScheme::Block => "block",
            MappingScheme::Bast => "bast",
            MappingScheme::Fast => "fast",
        }
    }
}

/// What host writes do when the SLC cache is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SlcWhenFull {
    /// Write the native cells directly (the write cliff).
    Direct,
    /// Wait for folding to free SLC blocks.
    Fold,
}

/// Wear levelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum WearLeveling {
    /// Free blocks in erase order.
    None,
    /// The least-worn free block first.
    Dynamic,
    /// Dynamic, and cold full blocks collected when the spread passes a threshold.
    Static,
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
    /// Static SLC cache capacity (user data).
    pub slc_static: Bytes,
    /// Largest dynamic SLC cache capacity (user data).
    pub slc_dynamic: Bytes,
    /// Host writes once the SLC cache is full.
    pub slc_when_full: SlcWhenFull,
    /// Idle time before folding starts.
    pub slc_fold_idle: Time,
    /// Mapping-table DRAM: `None` holds the whole L2P; else this many
    /// bytes of translation pages are cached.
    pub mapping_cache: Option<Bytes>,
    /// Wear levelling.
    pub wear_leveling: WearLeveling,
    /// Erase-count spread that triggers static wear levelling.
    pub static_wl_threshold: u32,
    /// Retire blocks at the rated endurance.
    pub retire_at_endurance: bool,
    /// Replacement blocks for grown bad blocks, a share of each unit's blocks.
    pub spare_blocks: f64,
    /// Mapping checkpoints (C-log) this often, if at all.
    pub checkpoint_interval: Option<Time>,
    /// Mapping checkpoints (C-log) also when this many bytes of mapping
    /// log (8 B per update) have accumulated, if at all.
    pub checkpoint_log_size: Option<Bytes>,
    /// Mapping scheme.
    pub mapping: MappingScheme,
    /// Log blocks per parallel unit (hybrid mapping).
    pub log_blocks: u32,
    /// L-log: validity bitmaps on flash, this many bytes of them cached
    /// (None: all in DRAM).
    pub validity_log: Option<Bytes>,
    /// The mapping cache evicts in load order (FIFO), not LRU.
    pub mapping_cache_fifo: bool,
    /// The validity log's cache evicts in load order (FIFO), not LRU.
    pub validity_log_fifo: bool,
    /// Directory pages on flash, this many bytes of them cached (None: the
    /// whole directory in DRAM).
    pub directory_cache: Option<Bytes>,
}

/// Bytes of one mapping-log entry (an LPN and its new location, 4 B each).
pub const CHECKPOINT_LOG_ENTRY: u64 = 8;

impl FtlConfig {
    /// Is there an SLC write cache?
    pub fn has_slc(&self) -> bool {
        self.slc_static.0 > 0 || self.slc_dynamic.0 > 0
    }

    /// Does the mapping live on flash in translation pages (a cached
    /// mapping, or checkpoints of a mapping held whole in DRAM)?
    pub fn keeps_translation_pages(&self) -> bool {
        self.mapping_cache.is_some() || (self.checkpoints() && self.mapping == MappingScheme::Page)
    }

    /// Are mapping checkpoints taken (by interval, log size or both)?
    pub fn checkpoints(&self) -> bool {
        self.checkpoint_interval.is_some() || self.checkpoint_log_size.is_some()
    }

    /// Are there metadata pages on flash (translation pages, checkpoint
    /// records or the L-log's validity pages), in blocks of their own?
    pub fn keeps_metadata_pages(&self) -> bool {
        self.keeps_translation_pages() || self.validity_log.is_some()
    }

    /// Validity-bitmap pages (L-log) of `slots` physical mapping units: a
    /// bit each, a mapping unit a page (0 without an L-log).
    pub fn validity_pages(&self, slots: u64) -> u64 {
        if self.validity_log.is_none() {
            return 0;
        }
        slots.div_ceil((self.mapping_unit.0 * 8).max(1))
    }

    /// Mapping units of a checkpoint record: the directory of `tpages`
    /// translation pages (4 B each) and the table of `blocks` blocks
    /// (state, valid count and erase count: 8 B each). 0 without checkpoints.
    pub fn checkpoint_record_units(&self, tpages: u64, blocks: u64) -> u64 {
        if !self.checkpoints() || self.mapping != MappingScheme::Page {
            // Block and hybrid mapping checkpoint their block maps in
            // blocks of their own (`hybrid_checkpoint_size`).
            return 0;
        }
        (tpages * 4 + blocks * 8).div_ceil(self.mapping_unit.0.max(1))
    }

    /// Pages of the mapping directory stored on flash, per level from the
    /// one above the `tpages` translation pages up to, not including, the
    /// root (one page, in DRAM); empty with the directory whole in DRAM
    /// (`directory_cache = "all"`) or when one page holds it.
    pub fn directory_levels(&self, tpages: u64) -> Vec<u64> {
        let mut out = Vec::new();
        if self.directory_cache.is_none() {
            return out;
        }
        let per = (self.mapping_unit.0 / 4).max(2);
        let mut n = tpages.div_ceil(per);
        while n > 1 {
            out.push(n);
            n = n.div_ceil(per);
        }
        out
    }

    /// L2P entries per translation page (one mapping unit of 4-byte entries).
    pub fn entries_per_translation_page(&self) -> u32 {
        (self.mapping_unit.0 / 4).max(1) as u32
    }
}

impl FtlFile {
    /// Resolve and check `[ftl]` for NAND pages of `page_size`, reporting
    /// problems to `c`.
    pub(crate) fn resolve(&self, page_size: Bytes, c: &mut Collector) -> FtlConfig {
        let ff = self;
        let mapping_unit = c.bytes("ftl.mapping_unit", &ff.mapping_unit);
        if !c.has("ftl.mapping_unit") && (!mapping_unit.0.is_power_of_two() || mapping_unit.0 < 512)
        {
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
        c.at_most(
            "ftl.gc_d_choices",
            ff.gc_d_choices as u64,
            MAX_GC_D_CHOICES as u64,
            "candidates sampled per victim choice",
        );
        // Free-block counts: none can pass the blocks of a plane (nor, added
        // together, overflow).
        for (k, v) in [
            ("ftl.gc_threshold", ff.gc_threshold),
            ("ftl.gc_background_margin", ff.gc_background_margin),
        ] {
            c.at_most(
                k,
                v as u64,
                MAX_BLOCKS_PER_PLANE as u64,
                "free blocks per parallel unit; nand.blocks_per_plane is at most that",
            );
        }
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
        let slc_when_full = match ff.slc_when_full.as_str() {
            "direct" => SlcWhenFull::Direct,
            "fold" => SlcWhenFull::Fold,
            o => {
                c.push(
                    "ftl.slc_when_full",
                    format!("'{o}' is not a policy (expected direct or fold)"),
                );
                SlcWhenFull::Direct
            }
        };
        let mapping_cache = match ff.mapping_cache.trim() {
            "all" => None,
            v => {
                let b = c.bytes("ftl.mapping_cache", v);
                if !c.has("ftl.mapping_cache") && mapping_unit.0 > 0 && b.0 < mapping_unit.0 {
                    c.push(
                        "ftl.mapping_cache",
                        format!(
                            "{b} is smaller than one translation page ({mapping_unit}: {} entries of 4 B); \
                             give at least {mapping_unit}, or \"all\" to keep the whole table in DRAM",
                            mapping_unit.0 / 4
                        ),
                    );
                }
                Some(b)
            }
        };
        let wear_leveling = match ff.wear_leveling.as_str() {
            "none" => WearLeveling::None,
            "dynamic" => WearLeveling::Dynamic,
            "static" => WearLeveling::Static,
            o => {
                c.push(
                    "ftl.wear_leveling",
                    format!(
                        "'{o}' is not a wear-levelling policy (expected none, dynamic or static)"
                    ),
                );
                WearLeveling::None
            }
        };
        c.positive("ftl.static_wl_threshold", ff.static_wl_threshold);
        c.at_most(
            "ftl.static_wl_threshold",
            ff.static_wl_threshold as u64,
            MAX_ENDURANCE as u64,
            "an erase-count spread; nand.endurance is at most that",
        );
        let checkpoint_interval = match ff.checkpoint_interval.trim() {
            "none" => None,
            v => {
                let t = c.time("ftl.checkpoint_interval", v);
                // A checkpoint programs at least its record (one page);
                // a shorter period would start one per event (a picosecond
                // period: 10^12 per simulated second, found by the
                // structured fuzzer as a hang).
                if !c.has("ftl.checkpoint_interval") && t < MIN_CHECKPOINT_INTERVAL {
                    c.push(
                        "ftl.checkpoint_interval",
                        format!("{v}: expected a time of at least 100us (\"100ms\"), or \"none\""),
                    );
                }
                Some(t)
            }
        };
        let checkpoint_log_size = match ff.checkpoint_log_size.trim() {
            "none" => None,
            v => {
                let b = c.bytes("ftl.checkpoint_log_size", v);
                if !c.has("ftl.checkpoint_log_size") && b.0 < CHECKPOINT_LOG_ENTRY {
                    c.push(
                        "ftl.checkpoint_log_size",
                        format!(
                            "{v}: expected a size of at least one {CHECKPOINT_LOG_ENTRY} B log entry (\"64MiB\"), or \"none\""
                        ),
                    );
                }
                Some(b)
            }
        };
        let mapping = self.resolve_mapping(&mapping_cache, c);
        let validity_log = match ff.validity_log.trim() {
            "none" => None,
            v => {
                let b = c.bytes("ftl.validity_log", v);
                if !c.has("ftl.validity_log") && mapping_unit.0 > 0 && b.0 < mapping_unit.0 {
                    c.push(
                        "ftl.validity_log",
                        format!(
                            "{b} is smaller than one validity page ({mapping_unit}: a bit for each of {} mapping units); give at least {mapping_unit}, or \"none\" to keep every bitmap in DRAM",
                            mapping_unit.0 * 8
                        ),
                    );
                }
                if mapping != MappingScheme::Page {
                    c.push(
                        "ftl.validity_log",
                        format!("a validity log is not available with {} mapping (page mapping only: block and hybrid mapping have no GC victims to read it for)", mapping.name()),
                    );
                }
                Some(b)
            }
        };
        let fifo = |c: &mut Collector, key: &str, v: &str| match v.trim() {
            "lru" => false,
            "fifo" => true,
            o => {
                c.push(
                    key,
                    format!("'{o}' is not a cache policy (expected \"lru\" or \"fifo\")"),
                );
                false
            }
        };
        let mapping_cache_fifo = fifo(c, "ftl.mapping_cache_policy", &ff.mapping_cache_policy);
        let directory_cache = match ff.directory_cache.trim() {
            "all" => None,
            v => {
                let b = c.bytes("ftl.directory_cache", v);
                if !c.has("ftl.directory_cache") {
                    if mapping_cache.is_none() {
                        c.push(
                            "ftl.directory_cache",
                            "the mapping directory is stored on flash only with a cached mapping: set ftl.mapping_cache too, or use \"all\"",
                        );
                    } else if mapping_unit.0 > 0 && b.0 < mapping_unit.0 {
                        c.push(
                            "ftl.directory_cache",
                            format!("{b} is smaller than one directory page ({mapping_unit}); give at least {mapping_unit}, or \"all\""),
                        );
                    }
                }
                Some(b)
            }
        };
        let validity_log_fifo = fifo(c, "ftl.validity_log_policy", &ff.validity_log_policy);
        FtlConfig {
            directory_cache,
            mapping_cache_fifo,
            validity_log_fifo,
            validity_log,
            mapping,
            log_blocks: ff.log_blocks,
            checkpoint_interval,
            checkpoint_log_size,
            wear_leveling,
            static_wl_threshold: ff.static_wl_threshold,
            retire_at_endurance: ff.retire_at_endurance,
            spare_blocks: {
                let f = c.pct("ftl.spare_blocks", &ff.spare_blocks);
                if !(0.0..0.5).contains(&f) {
                    c.push(
                        "ftl.spare_blocks",
                        format!(
                            "{}: expected a share from 0% to under 50% of each unit's blocks",
                            ff.spare_blocks
                        ),
                    );
                }
                f.clamp(0.0, 0.49)
            },
            mapping_cache,
            slc_static: c.bytes("ftl.slc_static", &ff.slc_static),
            slc_dynamic: c.bytes("ftl.slc_dynamic", &ff.slc_dynamic),
            slc_when_full,
            slc_fold_idle: c.time("ftl.slc_fold_idle", &ff.slc_fold_idle),
            mapping_unit,
            over_provisioning: op,
            allocation,
            gc_policy,
            gc_d_choices: ff.gc_d_choices,
            gc_threshold: ff.gc_threshold,
            gc_hard_threshold: ff.gc_hard_threshold,
            gc_background: ff.gc_background,
            gc_background_margin: ff.gc_background_margin,
        }
    }
}

impl FtlFile {
    /// `ftl.mapping` and `ftl.log_blocks`, and what block and hybrid
    /// mapping do not combine with (yet): each refused by its key.
    fn resolve_mapping(&self, mapping_cache: &Option<Bytes>, c: &mut Collector) -> MappingScheme {
        let m = match self.mapping.trim() {
            "page" => MappingScheme::Page,
            "block" => MappingScheme::Block,
            "bast" => MappingScheme::Bast,
            "fast" => MappingScheme::Fast,
            o => {
                c.push(
                    "ftl.mapping",
                    format!("'{o}' is not a mapping scheme (expected page, block, bast or fast)"),
                );
                return MappingScheme::Page;
            }
        };
        let name = m.name();
        match m {
            MappingScheme::Page | MappingScheme::Block if self.log_blocks > 0 => c.push(
                "ftl.log_blocks",
                format!("{}: {name} mapping has no log blocks (they belong to the hybrid schemes bast and fast); remove the key or choose one of them", self.log_blocks),
            ),
            MappingScheme::Bast if self.log_blocks == 0 => c.push(
                "ftl.log_blocks",
                "hybrid mapping (bast) without log blocks: give at least 1 per parallel unit",
            ),
            MappingScheme::Fast if self.log_blocks < 2 => c.push(
                "ftl.log_blocks",
                format!("{}: hybrid mapping (fast) needs at least 2 log blocks per parallel unit (one sequential log and at least one random log)", self.log_blocks),
            ),
            _ => {}
        }
        if m != MappingScheme::Page && mapping_cache.is_some() {
            // A DFTL-style cache pages a page-level map; a block map is
            // small enough for DRAM (docs/models/ftl.md).
            c.push(
                "ftl.mapping_cache",
                format!(
                    "a cached mapping table is not available with {name} mapping (page mapping only: {name} mapping keeps its block map, 8 B per logical block, in DRAM); remove the key or set it to \"all\""
                ),
            );
        }
        m
    }
}
