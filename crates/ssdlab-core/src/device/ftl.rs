//! Flash translation layer: page-level mapping over flat arrays, active-block
//! allocation striped over parallel units, garbage-collection victim
//! selection, write-amplification accounting, TRIM, and a fast functional
//! preconditioner.
//!
//! Memory: at most 4 bytes per logical mapping unit (L2P) + 4 bytes per
//! physical slot (P2L) + about 18 bytes per block: a 960 GB drive with 4 KiB
//! mapping needs at most about 1.9 GB, independent of how long it is
//! simulated. The tables cost only the pages written (`map`): a fresh or
//! sequentially filled drive that is only read holds a few MB.
//!
//! This module is purely functional (no time): the drive's event loop
//! decides *when* each operation happens and calls in here for *what* it
//! does to the mapping.

mod checkpoint;
pub(crate) mod config;
pub mod durability;
mod hybrid;
mod map;
pub mod mapcache;
mod overwrite;
mod precondition;
mod slc;
mod stats;
mod steady;
pub use precondition::PreconditionMethod;
mod translation;
mod validity;

use crate::config::{FtlConfig, GcPolicy, MappingScheme, StripeDim, WearLeveling};
use crate::nand::Geometry;
use crate::units::{FastDiv, Lpn, Ppa};
pub use hybrid::{
    hybrid_checkpoint_reserve, hybrid_checkpoint_size, logical_blocks_per_unit, HybridStep,
    MergeKind, MergePlan,
};
use map::{SeqFill, SparseTable, Table, UNMAPPED};
use overwrite::PendingInvalidations;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
pub use stats::FtlStats;

/// L2P marker: the latest version of the LPN is host data in the
/// controller's DRAM buffer.
pub const IN_BUFFER: u32 = u32::MAX - 1;

/// L2P marker: the latest version of the LPN is a GC copy staged in the
/// DRAM buffer (read out of its victim, not yet programmed). A host write
/// of the LPN turns it into [`IN_BUFFER`], so a staged copy is the latest
/// exactly while its LPN still reads `IN_GC` ([`Ftl::gc_copy_is_latest`]),
/// and the buffer need not look its LPN up to find a newer host version.
const IN_GC: u32 = u32::MAX - 2;

/// Is the L2P value a flash slot (not a marker)?
#[inline(always)]
fn on_flash(v: u32) -> bool {
    v < IN_GC
}

/// Is the L2P value "in the DRAM buffer" (host data or a GC copy)?
#[inline(always)]
fn buffered(v: u32) -> bool {
    v == IN_BUFFER || v == IN_GC
}

/// Where an LPN's latest data lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mapping {
    /// Never written or trimmed: reads return zeros without touching flash.
    Unmapped,
    /// In the DRAM write buffer (or GC staging).
    InBuffer,
    /// On flash at this slot.
    Flash(Ppa),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum BlockState {
    Free,
    Active,
    Closed,
    Victim,
    /// A full block in SLC mode: folding collects it, GC does not.
    SlcClosed,
    /// Found bad at the factory: never used.
    Bad,
    /// Grown bad: retired in service (a failed erase, or the rated
    /// endurance reached); its erases stay in the wear figures.
    Retired,
}

/// Factory bad blocks of a unit of `blocks` for a `share` of them (rounded
/// to the nearest block).
pub fn factory_bad_per_unit(blocks: u32, share: f64) -> u32 {
    (blocks as f64 * share).round() as u32
}

struct Unit {
    free: std::collections::VecDeque<u32>,
    /// Active block (local index) and next slot offset in it.
    active: Option<(u32, u32)>,
    /// Active SLC-mode block and next slot offset (SLC cache).
    slc_active: Option<(u32, u32)>,
    /// Erased blocks of the static SLC region.
    slc_free: std::collections::VecDeque<u32>,
    /// Dynamic SLC blocks in use (taken from `free`, not yet folded and erased).
    slc_dynamic: u32,
    /// Full SLC blocks waiting to be folded.
    slc_closed: u32,
    /// Active block of translation pages (cached mapping) and next slot offset.
    map_active: Option<(u32, u32)>,
}

/// The FTL state.
pub struct Ftl {
    /// Geometry.
    pub geo: Geometry,
    cfg: FtlConfig,
    l2p: SparseTable,
    p2l: Table,
    /// What the tables hold where nothing was written: a sequential fill's
    /// closed form, or unmapped.
    fill: SeqFill,
    /// Valid slots per block, less those of its slots that wait in
    /// `pending` (read through [`Ftl::valid_in`]).
    valid: Vec<u32>,
    /// Old slots of overwritten LPNs whose P2L entry and block count are
    /// not yet updated ([`overwrite`]).
    pending: PendingInvalidations,
    state: Vec<BlockState>,
    close_seq: Vec<u64>,
    erase_count: Vec<u32>,
    units: Vec<Unit>,
    stripe: Vec<u32>,
    stripe_pos: usize,
    seq: u64,
    rng: Xoshiro256PlusPlus,
    /// Functional path: relocated or written LPNs per unit not yet filling a program unit.
    leftover: Vec<Vec<Lpn>>,
    /// Per block: in SLC mode (empty without an SLC cache).
    slc_mode: Vec<bool>,
    /// The SLC cache's sizes, if the drive has one.
    slc: Option<slc::SlcCache>,
    /// Logical units holding data (written and not trimmed).
    mapped: u64,
    /// Logical units (the L2P's first `lpns` entries; translation pages'
    /// locations, the directory, follow them).
    lpns: u64,
    /// Translation pages (0: the whole mapping is in DRAM).
    tpages: u32,
    /// L2P entries per translation page.
    tpe: u32,
    /// Division by `tpe` (per update).
    tpe_div: FastDiv,
    /// Units of a checkpoint record (0: no checkpoints), after the
    /// translation pages in the L2P.
    crec: u32,
    /// L-log: the first validity page (after the translation pages and the
    /// checkpoint record) and how many there are (0: no L-log).
    vbase: u32,
    vpages: u32,
    /// Metadata page id of the directory's first page (after the validity
    /// pages); its levels follow, level 1 (locating translation pages) first.
    dbase: u32,
    /// Directory pages stored on flash per level, level 1 first (empty:
    /// the whole directory in DRAM).
    dlevels: Vec<u32>,
    /// Validity updates are noted (an L-log, from the measured run on).
    vtrack: bool,
    /// Validity pages updated since the drive last took them.
    vtouched: Vec<u32>,
    /// Checkpoints of a mapping held whole in DRAM: translation pages
    /// changed since the last one (a bit each; empty otherwise).
    ckpt_dirty: Vec<u64>,
    /// Per block: opened for translation pages (empty without them).
    map_block: Vec<bool>,
    /// Functional path: translation pages waiting for a program unit, per unit.
    map_leftover: Vec<Vec<u32>>,
    /// Grown bad blocks per unit (retired in service).
    grown_bad: Vec<u32>,
    /// Of all grown bad blocks, those retired at the rated endurance.
    retired_worn: u64,
    /// Draws of failed erases (their own stream: nothing else's draws change).
    bad_rng: Xoshiro256PlusPlus,
    /// Good blocks a unit needs: its share of the exported capacity, the
    /// GC reserve, and translation blocks with a cached mapping.
    min_good_per_unit: u32,
    /// Set when a retirement left a unit with fewer good blocks than that.
    worn_out: Option<String>,
    /// Erased blocks set aside per unit to replace grown bad blocks
    /// (`ftl.spare_blocks`), and how many there were at first in all.
    replacements: Vec<Vec<u32>>,
    replacements_total: u64,
    /// Units not yet durable and their newest durable version, when a
    /// power loss is scheduled ([`durability`]).
    durability: Option<Box<durability::Durability>>,
    /// Block or hybrid mapping lost its block map with the power (see
    /// [`durability`]).
    hybrid_map_lost: bool,
    /// Block or hybrid mapping's block map (None: page mapping).
    hybrid: Option<Box<hybrid::Hybrid>>,
    /// LPNs the preconditioner has written since its fill, a bit each
    /// (kept only by the reduced drive of a scaled steady state, `steady.rs`).
    rewritten: Vec<u64>,
    /// The steady-state preconditioner's mapping cache, while it brings
    /// translation blocks to their steady state (`precondition.rs`).
    pre_cache: Option<Box<precondition::PreCache>>,
    /// Counters.
    pub stats: FtlStats,
}

impl Ftl {
    /// A fresh (all erased, unmapped) FTL with `logical_units` LPNs.
    pub fn new(geo: Geometry, cfg: FtlConfig, logical_units: u64, seed: u64) -> Ftl {
        let blocks = geo.units as usize * geo.blocks_per_unit as usize;
        let units = (0..geo.units)
            .map(|_| Unit {
                free: (0..geo.blocks_per_unit).collect(),
                active: None,
                slc_active: None,
                slc_free: Default::default(),
                slc_dynamic: 0,
                slc_closed: 0,
                map_active: None,
            })
            .collect();
        let stripe = stripe_order(&geo, &cfg.allocation);
        let tpe = cfg.entries_per_translation_page();
        let tpages = if cfg.keeps_translation_pages() {
            logical_units.div_ceil(tpe as u64) as u32
        } else {
            0
        };
        // A checkpoint record's units follow the translation pages in the
        // L2P (written, relocated and read like them).
        let crec = cfg.checkpoint_record_units(tpages as u64, blocks as u64) as u32;
        // The L-log's validity pages follow the record, and the directory's
        // pages (level 1 first) follow them.
        let vpages = cfg.validity_pages(geo.total_slots()) as u32;
        let dlevels: Vec<u32> = cfg
            .directory_levels(tpages as u64)
            .iter()
            .map(|&n| n as u32)
            .collect();
        let dpages: u32 = dlevels.iter().sum();
        let mut f = Ftl {
            l2p: SparseTable::new(
                logical_units as usize
                    + tpages as usize
                    + crec as usize
                    + vpages as usize
                    + dpages as usize,
            ),
            dbase: tpages + crec + vpages,
            dlevels,
            crec,
            vbase: tpages + crec,
            vpages,
            vtrack: false,
            pending: PendingInvalidations::new(),
            vtouched: Vec::new(),
            map_block: if tpages + vpages + dpages > 0 {
                vec![false; blocks]
            } else {
                Vec::new()
            },
            ckpt_dirty: if cfg.checkpoints() && cfg.mapping_cache.is_none() {
                vec![0; (tpages as usize).div_ceil(64)]
            } else {
                Vec::new()
            },
            lpns: logical_units,
            tpages,
            tpe,
            tpe_div: FastDiv::new(tpe),
            map_leftover: vec![Vec::new(); geo.units as usize],
            grown_bad: vec![0; geo.units as usize],
            retired_worn: 0,
            bad_rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6772_6f77_6e5f_6264),
            min_good_per_unit: {
                let spb = geo.slots_per_block.max(1) as u64;
                let units = geo.units.max(1) as u64;
                let data = logical_units.div_ceil(units).div_ceil(spb);
                let map = if tpages + vpages + dpages > 0 {
                    ((tpages + crec + vpages + dpages) as u64)
                        .div_ceil(units)
                        .div_ceil(spb)
                        + 1
                } else {
                    0
                };
                (data + cfg.gc_threshold as u64 + 2 + map) as u32
            },
            worn_out: None,
            replacements: vec![Vec::new(); geo.units as usize],
            replacements_total: 0,
            durability: None,
            hybrid_map_lost: false,
            hybrid: None,
            p2l: Table::new(geo.total_slots() as usize),
            fill: SeqFill::default(),
            valid: vec![0; blocks],
            state: vec![BlockState::Free; blocks],
            close_seq: vec![0; blocks],
            erase_count: vec![0; blocks],
            units,
            stripe,
            stripe_pos: 0,
            leftover: vec![Vec::new(); geo.units as usize],
            seq: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6674_6c5f_7263),
            stats: FtlStats::default(),
            rewritten: Vec::new(),
            pre_cache: None,
            slc_mode: Vec::new(),
            slc: None,
            mapped: 0,
            geo,
            cfg,
        };
        f.mark_factory_bad(seed);
        f.init_slc();
        f.set_aside_replacements();
        if f.cfg.mapping != MappingScheme::Page {
            // A data block per logical block, the log blocks and one to
            // merge into (config.rs checks the drive starts with them).
            f.min_good_per_unit = (logical_blocks_per_unit(&f.geo, logical_units)
                + f.cfg.log_blocks as u64
                + 1) as u32;
            f.hybrid = Some(Box::new(hybrid::Hybrid::new(
                f.cfg.mapping,
                f.cfg.log_blocks,
                &f.geo,
                &f.stripe,
                logical_units,
            )));
            if f.cfg.checkpoints() {
                f.hybrid_reserve_checkpoints(logical_units);
            }
        }
        f
    }

    /// Replacement blocks per unit (`ftl.spare_blocks`, rounded to the
    /// nearest block).
    fn replacements_per_unit(&self) -> u32 {
        factory_bad_per_unit(self.geo.blocks_per_unit, self.cfg.spare_blocks)
    }

    /// Take each unit's replacement blocks from the end of its free list
    /// (the sequential fill uses the blocks from the start).
    fn set_aside_replacements(&mut self) {
        let k = self.replacements_per_unit() as usize;
        if k == 0 {
            return;
        }
        for (u, pool) in self.units.iter_mut().zip(&mut self.replacements) {
            let n = u.free.len().saturating_sub(k);
            pool.extend(u.free.drain(n..).rev());
            self.replacements_total += pool.len() as u64;
        }
    }

    /// Replacement blocks set aside at first, and those used.
    pub fn replacement_blocks(&self) -> (u64, u64) {
        let left: u64 = self.replacements.iter().map(|p| p.len() as u64).sum();
        (self.replacements_total, self.replacements_total - left)
    }

    /// Mark `geo.bad_per_unit` blocks of each unit bad, at places drawn
    /// from `seed` (their own stream: nothing else's draws change).
    fn mark_factory_bad(&mut self, seed: u64) {
        let bad = self.geo.bad_per_unit;
        if bad == 0 {
            return;
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6261_645f_626c_6b73);
        let bpu = self.geo.blocks_per_unit;
        for u in 0..self.geo.units {
            let mut marked = 0;
            while marked < bad {
                let b = rng.gen_range(0..bpu);
                let bid = (u * bpu + b) as usize;
                if self.state[bid] != BlockState::Bad {
                    self.state[bid] = BlockState::Bad;
                    marked += 1;
                }
            }
            let base = u * bpu;
            let state = &self.state;
            self.units[u as usize]
                .free
                .retain(|&b| state[(base + b) as usize] != BlockState::Bad);
        }
    }

    /// Blocks marked bad (factory).
    pub fn bad_blocks(&self) -> u64 {
        self.geo.bad_per_unit as u64 * self.geo.units as u64
    }

    /// Number of logical mapping units.
    pub fn logical_units(&self) -> u64 {
        self.lpns
    }

    /// Hint the CPU to bring `lpn`'s L2P entry into cache: the L2P is far
    /// larger than any cache, so random accesses miss; issuing several
    /// prefetches before using them overlaps the misses. No effect on results.
    #[inline]
    pub fn prefetch(&self, lpn: Lpn) {
        self.l2p.prefetch(lpn.0 as usize);
    }

    /// Does [`Ftl::prefetch`] bring anything into cache (the L2P is dense)?
    #[inline]
    pub fn prefetch_pays(&self) -> bool {
        self.l2p.is_dense()
    }

    /// L2P entry of `lpn`.
    #[inline(always)]
    fn l2p(&self, lpn: u32) -> u32 {
        match self.l2p.explicit(lpn as usize) {
            Some(v) => v,
            None => self.fill.slot_of(lpn),
        }
    }

    #[inline(always)]
    fn set_l2p(&mut self, lpn: u32, v: u32) {
        self.l2p.set(lpn as usize, v)
    }

    /// P2L entry of `slot` (unmapped while its invalidation waits in
    /// `pending`).
    #[inline(always)]
    fn p2l(&self, slot: u32) -> u32 {
        if !self.pending.is_empty() && self.pending.contains(slot) {
            return UNMAPPED;
        }
        self.p2l_stored(slot)
    }

    /// P2L entry of `slot` as stored (stale while its invalidation waits).
    #[inline(always)]
    fn p2l_stored(&self, slot: u32) -> u32 {
        match self.p2l.explicit(slot as usize) {
            Some(v) => v,
            None => self.fill.lpn_at(slot),
        }
    }

    /// Does slot `ppa` hold `lpn`'s latest version? The L2P alone
    /// answers: the tables are each other's inverse for every mapped slot
    /// (an L2P entry is set to a slot together with the slot's P2L entry,
    /// and moves off the slot before the slot is invalidated; a block is
    /// erased, and its slots reused, only when none is valid). So the
    /// slot's P2L entry, a second cache miss per GC-moved slot (the
    /// victim's entries were read when it was chosen, long before), is
    /// checked in debug builds only. Nor can the slot's invalidation be
    /// waiting in `pending` (a slot waits only once its LPN's entry has
    /// moved off it).
    #[inline(always)]
    fn holds_latest(&self, ppa: u32, lpn: u32) -> bool {
        if self.l2p(lpn) != ppa {
            return false;
        }
        debug_assert!(
            !self.pending.contains(ppa),
            "slot {ppa} mapped while waiting"
        );
        debug_assert_eq!(
            self.p2l_stored(ppa),
            lpn,
            "the L2P names slot {ppa} for LPN {lpn}, its P2L entry another"
        );
        true
    }

    #[inline(always)]
    fn set_p2l(&mut self, slot: u32, v: u32) {
        self.p2l.set(slot as usize, v)
    }

    /// Where `lpn` lives.
    #[inline]
    pub fn lookup(&self, lpn: Lpn) -> Mapping {
        let v = self.l2p(lpn.0);
        if on_flash(v) {
            Mapping::Flash(Ppa(v))
        } else if v == UNMAPPED {
            Mapping::Unmapped
        } else {
            Mapping::InBuffer
        }
    }

    /// Is the GC copy of `lpn` staged in the buffer its latest version (no
    /// host write of it since the copy was read, no trim)? A stale staged
    /// copy is dropped when its program is assembled.
    #[inline(always)]
    pub fn gc_copy_is_latest(&self, lpn: Lpn) -> bool {
        self.l2p(lpn.0) == IN_GC
    }

    #[inline]
    fn invalidate_slot(&mut self, ppa: u32) {
        if self.vtrack {
            self.validity_touch_slot(ppa);
        }
        self.set_p2l(ppa, UNMAPPED);
        let b = self.geo.block_of(Ppa(ppa)) as usize;
        self.valid[b] -= 1;
    }

    /// Are host overwrites' invalidations kept back and applied in batches
    /// ([`overwrite`])? With page mapping only, and not while an L-log
    /// notes each validity change or a durability journal is kept (those
    /// paths read counts and P2L entries directly).
    #[inline(always)]
    fn defers_invalidations(&self) -> bool {
        !self.vtrack && self.durability.is_none() && self.hybrid.is_none()
    }

    /// Apply the invalidations kept back: prefetch every P2L entry and
    /// block count they touch, then update them, so the misses overlap.
    fn apply_invalidations(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        for &old in self.pending.slots() {
            self.p2l.prefetch(old as usize);
            map::prefetch_read(&self.valid, self.geo.block_of(Ppa(old)) as usize);
        }
        let slots = self.pending.take();
        for &old in &slots {
            self.invalidate_slot(old);
        }
        self.pending.restore(slots);
    }

    /// Valid slots in block `b`.
    #[inline]
    fn valid_in(&self, b: usize) -> u32 {
        let v = self.valid[b];
        if self.pending.is_empty() {
            return v;
        }
        let spb = self.geo.slots_per_block;
        v - self.pending.in_range(b as u32 * spb, spb)
    }

    /// A host write of `lpn` was accepted into the DRAM buffer: the old flash copy is now invalid.
    #[inline]
    pub fn write_to_buffer(&mut self, lpn: Lpn) {
        let old = self.l2p(lpn.0);
        if self.durability.is_some() {
            self.journal_new_version(lpn.0, old, true);
        }
        if on_flash(old) {
            if self.defers_invalidations() {
                if self.pending.push(old) {
                    self.apply_invalidations();
                }
            } else {
                self.invalidate_slot(old);
            }
        }
        self.mapped += (old == UNMAPPED) as u64;
        self.set_l2p(lpn.0, IN_BUFFER);
        self.stats.host_slots += 1;
    }

    /// TRIM (deallocate) `lpn`. The caller must also drop any DRAM copy
    /// (dirty, being programmed or clean). Returns true if the latest version was in the buffer.
    pub fn trim(&mut self, lpn: Lpn) -> bool {
        let old = self.l2p(lpn.0);
        if on_flash(old) {
            self.invalidate_slot(old);
        }
        self.mapped -= (old != UNMAPPED) as u64;
        self.set_l2p(lpn.0, UNMAPPED);
        self.stats.trimmed_slots += 1;
        if !self.ckpt_dirty.is_empty() {
            self.checkpoint_touch(lpn.0);
        }
        if self.durability.is_some() {
            self.journal_trim(lpn.0);
        }
        buffered(old)
    }

    /// One line on a unit's blocks, for a stall report: free, active,
    /// closed (with their valid slots), victims, SLC-closed and bad.
    pub fn unit_summary(&self, unit: u32) -> String {
        let bpu = self.geo.blocks_per_unit as usize;
        let lo = unit as usize * bpu;
        let mut n = [0u32; 7];
        let mut valid_closed = 0u64;
        for b in lo..lo + bpu {
            let k = self.state[b] as usize;
            n[k] += 1;
            if self.state[b] == BlockState::Closed {
                valid_closed += self.valid_in(b) as u64;
            }
        }
        let u = &self.units[unit as usize];
        format!(
            "unit {unit}: {} free (queue {}), {} active, {} closed ({valid_closed} valid slots), {} victim, {} SLC closed, {} bad, {} retired; active {:?}, map active {:?}",
            n[BlockState::Free as usize],
            u.free.len(),
            n[BlockState::Active as usize],
            n[BlockState::Closed as usize],
            n[BlockState::Victim as usize],
            n[BlockState::SlcClosed as usize],
            n[BlockState::Bad as usize],
            n[BlockState::Retired as usize],
            u.active,
            u.map_active
        )
    }

    /// Free blocks in a unit.
    #[inline]
    pub fn free_blocks(&self, unit: u32) -> u32 {
        self.units[unit as usize].free.len() as u32
    }

    /// Can a program unit be allocated on `unit`? Host data may not open a new
    /// block when only `gc_hard_threshold` free blocks are left; GC
    /// relocation data may take the last free block (the victim's erase gives
    /// it back).
    /// With an SLC cache, host data goes to SLC while it has room; when it
    /// is full, to native blocks (`slc_when_full = "direct"`) or nowhere
    /// until folding frees SLC blocks (`"fold"`).
    pub fn can_allocate(&self, unit: u32, host_data: bool) -> bool {
        if host_data && self.slc.is_some() {
            if self.slc_room(unit) {
                return true;
            }
            if self.slc_waits_for_fold() && self.slc_can_free(unit) {
                return false;
            }
        }
        let u = &self.units[unit as usize];
        if let Some((_, off)) = u.active {
            if off < self.geo.slots_per_block {
                return true;
            }
        }
        let floor = if host_data {
            self.cfg.gc_hard_threshold
        } else {
            0
        };
        u.free.len() as u32 > floor
    }

    /// The unit striping order (unit ids, fastest-varying dimension first).
    pub fn stripe(&self) -> &[u32] {
        &self.stripe
    }

    /// Next position in the stripe order (the allocator's cursor).
    pub fn stripe_cursor(&mut self) -> &mut usize {
        &mut self.stripe_pos
    }

    /// Allocate the next program unit on `unit`: returns its first slot; the
    /// program unit is `geo.slots_per_program` consecutive slots. Host data
    /// (`host_data`) goes to the SLC cache while it has room (see
    /// [`Ftl::can_allocate`]). Returns None if no block is available.
    #[inline]
    pub fn allocate_program(&mut self, unit: u32, host_data: bool) -> Option<Ppa> {
        if host_data && self.slc.is_some() {
            if self.slc_room(unit) {
                return self.allocate_slc(unit);
            }
            self.stats.direct_slots += self.geo.slots_per_program as u64;
        }
        self.allocate_native(unit, false)
    }

    /// Allocate the next program unit on `unit` in its data (`map` false)
    /// or translation-page (`map`) frontier.
    fn allocate_native(&mut self, unit: u32, map: bool) -> Option<Ppa> {
        let spb = self.geo.slots_per_block;
        let spp = self.geo.slots_per_program;
        let u = &mut self.units[unit as usize];
        let frontier = if map { u.map_active } else { u.active };
        let (blk, off) = match frontier {
            Some((b, off)) if off < spb => (b, off),
            _ => {
                let old = if map {
                    u.map_active.take()
                } else {
                    u.active.take()
                };
                if let Some((b, _)) = old {
                    let bid = (unit * self.geo.blocks_per_unit + b) as usize;
                    // A full block was closed when it filled, and GC may
                    // have chosen it (Victim) or erased it (Free) since:
                    // those states stand (closing it again would put an
                    // erased block on the free list twice, and two writers
                    // would then share its slots).
                    if matches!(self.state[bid], BlockState::Active | BlockState::Closed) {
                        self.state[bid] = BlockState::Closed;
                        self.close_seq[bid] = self.seq;
                    }
                }
                let b = if self.cfg.wear_leveling == WearLeveling::None {
                    u.free.pop_front()?
                } else {
                    // Dynamic wear levelling: the least-worn free block (the
                    // first of them in erase order).
                    let base = (unit * self.geo.blocks_per_unit) as usize;
                    let mut best: Option<(u32, usize)> = None;
                    for (i, &b) in u.free.iter().enumerate() {
                        let e = self.erase_count[base + b as usize];
                        if best.is_none_or(|(be, _)| e < be) {
                            best = Some((e, i));
                            if e == 0 {
                                break;
                            }
                        }
                    }
                    u.free.remove(best?.1)?
                };
                self.stats.blocks_opened += 1;
                self.stats.free_at_open += u.free.len() as u64;
                let bid = (unit * self.geo.blocks_per_unit + b) as usize;
                self.state[bid] = BlockState::Active;
                if !self.map_block.is_empty() {
                    self.map_block[bid] = map;
                }
                (b, 0)
            }
        };
        let next = off + spp;
        let bid = unit * self.geo.blocks_per_unit + blk;
        let frontier = if map {
            &mut u.map_active
        } else {
            &mut u.active
        };
        *frontier = Some((blk, next.min(spb)));
        if next >= spb {
            // Block full: close it now so GC can consider it.
            self.state[bid as usize] = BlockState::Closed;
            self.close_seq[bid as usize] = self.seq;
        }
        self.stats.programmed_slots += spp as u64;
        if map {
            self.stats.map_slots += spp as u64;
        }
        Some(Ppa(bid * spb + off))
    }

    /// Map `lpn` (whose latest version is in the buffer) to a freshly allocated slot.
    #[inline]
    pub fn commit(&mut self, lpn: Lpn, ppa: Ppa) {
        self.commit_one(lpn, ppa)
    }

    /// Map a program unit's LPNs, in order, to the consecutive slots from
    /// `first`, each as [`Ftl::commit`] (one call per program, the loop's
    /// body inlined: a call per slot cost about a fifth of the commit).
    pub fn commit_unit(&mut self, lpns: &[u32], first: Ppa) {
        for (i, &l) in lpns.iter().enumerate() {
            self.commit_one(Lpn(l), Ppa(first.0 + i as u32));
        }
    }

    #[inline(always)]
    fn commit_one(&mut self, lpn: Lpn, ppa: Ppa) {
        let old = self.l2p(lpn.0);
        if on_flash(old) {
            // The same LPN twice in one program unit: the earlier copy is stale.
            self.invalidate_slot(old);
        }
        self.set_l2p(lpn.0, ppa.0);
        self.set_p2l(ppa.0, lpn.0);
        if self.vtrack {
            self.validity_touch_slot(ppa.0);
        }
        let b = self.geo.block_of(ppa) as usize;
        self.valid[b] += 1;
        self.seq += 1;
        if !self.ckpt_dirty.is_empty() {
            self.checkpoint_touch(lpn.0);
        }
    }

    /// A newer version of `lpn` arrived while `ppa` (committed, program in flight) held it.
    #[inline]
    pub fn supersede(&mut self, lpn: Lpn) {
        self.write_to_buffer(lpn);
    }

    /// GC needed on this unit (free blocks at or below the threshold)?
    #[inline]
    pub fn needs_gc(&self, unit: u32, extra_margin: u32) -> bool {
        self.free_blocks(unit) <= self.cfg.gc_threshold + extra_margin
    }

    /// Choose a victim block on `unit` per the configured policy and mark it.
    pub fn select_victim(&mut self, unit: u32) -> Option<u32> {
        // The policies below read `valid` directly.
        self.apply_invalidations();
        let bpu = self.geo.blocks_per_unit;
        let lo = (unit * bpu) as usize;
        let hi = lo + bpu as usize;
        let spb = self.geo.slots_per_block;
        // At most one victim in 8 is chosen for wear, so moving cold data
        // cannot take over the drive's GC bandwidth.
        if self.cfg.wear_leveling == WearLeveling::Static && self.stats.gc_runs.is_multiple_of(8) {
            if let Some(b) = self.static_wl_victim(lo, hi) {
                self.state[b] = BlockState::Victim;
                self.stats.gc_runs += 1;
                self.stats.static_wl_runs += 1;
                return Some(b as u32);
            }
        }
        let pick = match self.cfg.gc_policy {
            GcPolicy::Greedy => {
                let mut best: Option<(u32, usize)> = None;
                for b in lo..hi {
                    if self.state[b] == BlockState::Closed {
                        let v = self.valid[b];
                        if best.is_none_or(|(bv, _)| v < bv) {
                            best = Some((v, b));
                            if v == 0 {
                                break;
                            }
                        }
                    }
                }
                best.map(|(_, b)| b)
            }
            GcPolicy::CostBenefit => {
                let now = self.seq;
                let mut best: Option<(f64, usize)> = None;
                for b in lo..hi {
                    if self.state[b] == BlockState::Closed {
                        let u = self.valid[b] as f64 / spb as f64;
                        let age = (now - self.close_seq[b]) as f64 + 1.0;
                        let score = if u == 0.0 {
                            f64::INFINITY
                        } else {
                            (1.0 - u) * age / (2.0 * u)
                        };
                        if best.is_none_or(|(bs, _)| score > bs) {
                            best = Some((score, b));
                        }
                    }
                }
                best.map(|(_, b)| b)
            }
            GcPolicy::Fifo => {
                let mut best: Option<(u64, usize)> = None;
                for b in lo..hi {
                    if self.state[b] == BlockState::Closed
                        && best.is_none_or(|(s, _)| self.close_seq[b] < s)
                    {
                        best = Some((self.close_seq[b], b));
                    }
                }
                best.map(|(_, b)| b)
            }
            GcPolicy::Random | GcPolicy::DChoice => {
                let closed: u32 = (lo..hi)
                    .filter(|&b| self.state[b] == BlockState::Closed)
                    .count() as u32;
                if closed == 0 {
                    None
                } else {
                    let d = if self.cfg.gc_policy == GcPolicy::Random {
                        1
                    } else {
                        self.cfg.gc_d_choices
                    };
                    let mut best: Option<(u32, usize)> = None;
                    for _ in 0..d {
                        let k = self.rng.gen_range(0..closed);
                        let b = (lo..hi)
                            .filter(|&b| self.state[b] == BlockState::Closed)
                            .nth(k as usize);
                        if let Some(b) = b {
                            if best.is_none_or(|(v, _)| self.valid[b] < v) {
                                best = Some((self.valid[b], b));
                            }
                        }
                    }
                    best.map(|(_, b)| b)
                }
            }
        }?;
        self.state[pick] = BlockState::Victim;
        self.stats.gc_runs += 1;
        Some(pick as u32)
    }

    /// Static wear levelling on blocks `lo..hi` (one unit): when the most
    /// worn block has been erased more than `static_wl_threshold` times
    /// more than the least-worn full block, that full block (the oldest of
    /// them: cold data) is the victim.
    fn static_wl_victim(&self, lo: usize, hi: usize) -> Option<usize> {
        let max = (lo..hi)
            .filter(|&b| !matches!(self.state[b], BlockState::Bad | BlockState::Retired))
            .map(|b| self.erase_count[b])
            .max()?;
        let (e, _, b) = (lo..hi)
            .filter(|&b| self.state[b] == BlockState::Closed)
            .map(|b| (self.erase_count[b], self.close_seq[b], b))
            .min()?;
        (max - e > self.cfg.static_wl_threshold).then_some(b)
    }

    /// Erase counts of every usable (not bad) block: (min, max, mean,
    /// standard deviation).
    pub fn erase_distribution(&self) -> (u32, u32, f64, f64) {
        let usable = self.erase_count.len() as u64 - self.bad_blocks();
        let n = usable.max(1) as f64;
        let (mut min, mut max, mut sum, mut sq) = (u32::MAX, 0u32, 0f64, 0f64);
        for (b, &e) in self.erase_count.iter().enumerate() {
            if self.state[b] == BlockState::Bad {
                continue;
            }
            min = min.min(e);
            max = max.max(e);
            sum += e as f64;
            sq += e as f64 * e as f64;
        }
        let mean = sum / n;
        let var = (sq / n - mean * mean).max(0.0);
        (if min == u32::MAX { 0 } else { min }, max, mean, var.sqrt())
    }

    /// Valid (slot, lpn) pairs of a block, in slot order.
    pub fn valid_slots(&self, block_id: u32) -> Vec<(Ppa, Lpn)> {
        let first = self.geo.block_first_slot(block_id) as usize;
        let n = self.geo.slots_per_block as usize;
        let mut out = Vec::with_capacity(self.valid_in(block_id as usize) as usize);
        for slot in first as u32..(first + n) as u32 {
            let l = self.p2l(slot);
            if l != UNMAPPED {
                out.push((Ppa(slot), Lpn(l)));
            }
        }
        out
    }

    /// Valid slots in a block.
    #[inline]
    pub fn valid_count(&self, block_id: u32) -> u32 {
        self.valid_in(block_id as usize)
    }

    /// GC read of `ppa` holding `lpn` finished: if it is still the latest
    /// version, move it to the buffer (returns true; caller stages it for
    /// programming), else it was overwritten meanwhile (false).
    pub fn relocate_to_buffer(&mut self, ppa: Ppa, lpn: Lpn) -> bool {
        if self.holds_latest(ppa.0, lpn.0) {
            if self.durability.is_some() {
                self.journal_new_version(lpn.0, ppa.0, false);
            }
            self.invalidate_slot(ppa.0);
            self.set_l2p(lpn.0, IN_GC);
            if self.is_slc(ppa) {
                self.stats.fold_slots_moved += 1;
            } else {
                self.stats.gc_slots_moved += 1;
            }
            true
        } else {
            false
        }
    }

    /// Erase a victim block (must hold no valid data) and return it to the
    /// free list, or retire it: at the rated endurance
    /// (`ftl.retire_at_endurance`), or when the erase fails
    /// (`nand.grown_bad_rate`).
    pub fn erase(&mut self, block_id: u32) {
        // None of the block's slots may be reused while an invalidation of
        // one waits (it would unmap the new data).
        self.apply_invalidations();
        debug_assert_eq!(self.valid[block_id as usize], 0);
        debug_assert_eq!(self.state[block_id as usize], BlockState::Victim);
        let unit = self.geo.unit_of_block(block_id);
        self.state[block_id as usize] = BlockState::Free;
        self.erase_count[block_id as usize] += 1;
        self.stats.blocks_erased += 1;
        let worn = self.cfg.retire_at_endurance
            && self.erase_count[block_id as usize] >= self.geo.endurance;
        if worn
            || (self.geo.grown_bad_rate > 0.0
                && self.bad_rng.gen::<f64>() < self.geo.grown_bad_rate)
        {
            self.retire(block_id, worn);
            return;
        }
        if !self.slc_mode.is_empty()
            && self.slc_mode[block_id as usize]
            && self.slc_erased(block_id)
        {
            return;
        }
        self.units[unit as usize]
            .free
            .push_back(block_id % self.geo.blocks_per_unit);
    }

    /// Retire erased block `block_id` as grown bad (`worn`: at the rated
    /// endurance, else a failed erase); check its unit still has the good
    /// blocks it needs.
    fn retire(&mut self, block_id: u32, worn: bool) {
        let unit = self.geo.unit_of_block(block_id);
        if !self.slc_mode.is_empty() && self.slc_mode[block_id as usize] {
            self.slc_retired(block_id);
        }
        self.state[block_id as usize] = BlockState::Retired;
        self.grown_bad[unit as usize] += 1;
        self.retired_worn += worn as u64;
        if let Some(b) = self.replacements[unit as usize].pop() {
            // A replacement takes the retired block's place: the free pool
            // the GC works with is as it would have been.
            self.units[unit as usize].free.push_back(b);
            return;
        }
        if self.worn_out.is_none() && self.units[unit as usize].free.is_empty() {
            // The GC's last free block went with the retired one: the
            // next victim's data may have nowhere to go.
            self.worn_out = Some(format!(
                "worn out: parallel unit {unit} retired block {} ({}) with no replacement block left (ftl.spare_blocks) and no free block left for GC ({} of its blocks retired in service; in the drive {} at the rated endurance of {} P/E cycles)",
                block_id % self.geo.blocks_per_unit,
                if worn { "rated endurance reached" } else { "erase failed" },
                self.grown_bad[unit as usize],
                self.retired_worn,
                self.geo.endurance,
            ));
            return;
        }
        // Good blocks for native data (the static SLC region's are not);
        // retirements are rare: a scan of the unit.
        let bpu = self.geo.blocks_per_unit;
        let native = bpu - self.slc_static_blocks();
        let base = (unit * bpu) as usize;
        let good = (0..native as usize)
            .filter(|&b| !matches!(self.state[base + b], BlockState::Bad | BlockState::Retired))
            .count() as u32;
        if good < self.min_good_per_unit && self.worn_out.is_none() {
            self.worn_out = Some(format!(
                "worn out: parallel unit {unit} has {good} good blocks left ({} found bad at the factory, {} retired in service, {} of them at the rated endurance of {} P/E cycles; most erased block {} times), fewer than the {} {}",
                self.geo.bad_per_unit,
                self.grown_bad[unit as usize],
                self.retired_worn,
                self.geo.endurance,
                self.erase_count.iter().max().copied().unwrap_or(0),
                self.min_good_per_unit,
                if self.hybrid.is_some() {
                    "its logical blocks, log blocks and a block to merge into need"
                } else {
                    "its share of the exported capacity, the GC reserve (gc_threshold + 2) and translation blocks need"
                }
            ));
        }
    }

    /// Why the drive can no longer work (a unit with too few good blocks), if so.
    pub fn worn_out(&self) -> Option<&str> {
        self.worn_out.as_deref()
    }

    /// Grown bad blocks (retired in service) and, of them, those retired
    /// at the rated endurance.
    pub fn grown_bad_blocks(&self) -> (u64, u64) {
        (
            self.grown_bad.iter().map(|&g| g as u64).sum(),
            self.retired_worn,
        )
    }

    /// Max and mean erase count (wear).
    pub fn wear(&self) -> (u32, f64) {
        let max = self.erase_count.iter().copied().max().unwrap_or(0);
        let mean = self.erase_count.iter().map(|&e| e as f64).sum::<f64>()
            / self.erase_count.len().max(1) as f64;
        (max, mean)
    }

    /// Total valid slots (for invariant checks).
    pub fn total_valid(&self) -> u64 {
        self.valid.iter().map(|&v| v as u64).sum::<u64>() - self.pending.len() as u64
    }

    /// Check internal consistency (test helper; O(capacity)).
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut valid = vec![0u32; self.valid.len()];
        for slot in 0..self.p2l.len() {
            let l = self.p2l(slot as u32);
            if l != UNMAPPED {
                if self.l2p(l) != slot as u32 {
                    return Err(format!("p2l[{slot}] = {l} but l2p[{l}] = {}", self.l2p(l)));
                }
                valid[slot / self.geo.slots_per_block as usize] += 1;
            }
        }
        for lpn in 0..self.l2p.len() {
            let p = self.l2p(lpn as u32);
            if on_flash(p) && self.p2l(p) != lpn as u32 {
                return Err(format!("l2p[{lpn}] = {p} but p2l[{p}] = {}", self.p2l(p)));
            }
        }
        if (0..valid.len()).any(|b| valid[b] != self.valid_in(b)) {
            return Err("per-block valid counts disagree with P2L".into());
        }
        let mapped = (0..self.lpns as u32)
            .filter(|&l| self.l2p(l) != UNMAPPED)
            .count() as u64;
        if mapped != self.mapped {
            return Err(format!(
                "{} logical units hold data but the FTL counts {}",
                mapped, self.mapped
            ));
        }
        self.check_slc()?;
        self.check_hybrid()?;
        for (u, unit) in self.units.iter().enumerate() {
            for &b in &unit.free {
                let bid = u * self.geo.blocks_per_unit as usize + b as usize;
                if self.state[bid] != BlockState::Free || self.valid_in(bid) != 0 {
                    return Err(format!("free block {bid} is not empty"));
                }
            }
        }
        Ok(())
    }

    /// Reset counters (after preconditioning).
    pub fn reset_stats(&mut self) {
        self.stats = FtlStats::default();
    }
}

fn stripe_order(geo: &Geometry, order: &[StripeDim]) -> Vec<u32> {
    // Dimension sizes: channel C, die-in-channel D, plane-unit P.
    let size = |d: StripeDim| match d {
        StripeDim::Channel => geo.channels,
        StripeDim::Die => geo.dies_per_channel,
        StripeDim::Plane => geo.units_per_die,
    };
    let mut out = Vec::with_capacity(geo.units as usize);
    for i in 0..geo.units {
        let mut rem = i;
        let (mut c, mut d, mut p) = (0, 0, 0);
        for &dim in order {
            let s = size(dim);
            let v = rem % s;
            rem /= s;
            match dim {
                StripeDim::Channel => c = v,
                StripeDim::Die => d = v,
                StripeDim::Plane => p = v,
            }
        }
        let die = c * geo.dies_per_channel + d;
        out.push(die * geo.units_per_die + p);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Device, DeviceFile};

    pub(crate) fn small_device(policy: &str, multi_plane: bool) -> Device {
        let text = format!(
            r#"
name = "tiny"
[ftl]
mapping_unit = "4KiB"
over_provisioning = "25%"
gc_policy = "{policy}"
gc_threshold = 3
gc_hard_threshold = 2
[cache]
write_buffer = "64KiB"
[nand]
channels = 2
chips_per_channel = 1
dies_per_chip = 2
planes_per_die = 2
blocks_per_plane = 32
pages_per_block = 12
page_size = "8KiB"
cell = "tlc"
t_read = ["40us","45us","50us"]
t_prog = ["400us","400us","400us"]
one_shot_program = true
t_prog_one_shot = "1ms"
t_erase = "3ms"
multi_plane = {multi_plane}
bus_bandwidth = "400MB/s"
"#
        );
        DeviceFile::from_toml_str(&text, "tiny")
            .unwrap()
            .resolve("tiny")
            .unwrap()
    }

    pub(super) fn ftl_for(d: &Device) -> Ftl {
        let g = Geometry::new(&d.nand, d.ftl.mapping_unit);
        let n = crate::config::logical_units(&d.nand, &d.ftl);
        Ftl::new(g, d.ftl.clone(), n, 1)
    }

    /// A factory-bad block in the static SLC region (each unit's last
    /// blocks) is never used: the region is that much smaller.
    #[test]
    fn the_static_slc_region_leaves_bad_blocks_alone() {
        let mut d = small_device("greedy", true);
        d.ftl.slc_static = crate::units::Bytes(1 << 20); // 4 blocks per unit
        d.nand.factory_bad_blocks = 0.2;
        let mut hit = 0;
        for seed in 1..40 {
            let g = Geometry::new(&d.nand, d.ftl.mapping_unit);
            let n = crate::config::logical_units(&d.nand, &d.ftl);
            let mut f = Ftl::new(g, d.ftl.clone(), n, seed);
            let bpu = f.geo.blocks_per_unit;
            let static_per_unit = f.slc_static_blocks();
            for u in 0..f.geo.units {
                let bad = (bpu - static_per_unit..bpu)
                    .filter(|&b| f.state[(u * bpu + b) as usize] == BlockState::Bad)
                    .count() as u32;
                hit += (bad > 0) as u32;
                assert_eq!(
                    f.units[u as usize].slc_free.len() as u32,
                    static_per_unit - bad,
                    "seed {seed} unit {u}"
                );
            }
            f.check_invariants()
                .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
            // Host programs take the region's good blocks only.
            for u in 0..f.geo.units {
                while f.slc_room(u) && f.slc_closed(u) < static_per_unit {
                    let p = f.allocate_program(u, true).expect("SLC room");
                    let b = (p.0 / f.geo.slots_per_block) as usize;
                    assert_ne!(f.state[b], BlockState::Bad, "seed {seed}: block {b}");
                }
            }
            f.check_slc().unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
        assert!(hit > 0, "some static region held a bad block");
    }

    /// Everything an FTL holds, for comparing two of them.
    fn state_of(f: &Ftl) -> String {
        let l2p: Vec<u32> = (0..f.l2p.len() as u32).map(|l| f.l2p(l)).collect();
        let p2l: Vec<u32> = (0..f.p2l.len() as u32).map(|s| f.p2l(s)).collect();
        let units: Vec<String> = f
            .units
            .iter()
            .map(|u| {
                format!(
                    "{:?} {:?} slc {:?} {:?} {} {}",
                    u.free, u.active, u.slc_free, u.slc_active, u.slc_dynamic, u.slc_closed
                )
            })
            .collect();
        format!(
            "{l2p:?}\n{p2l:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{units:?}\n{:?}\n{} {} {} {:?}\n{:?}",
            f.valid,
            f.state,
            f.close_seq,
            f.erase_count,
            f.leftover,
            f.seq,
            f.stripe_pos,
            f.mapped,
            f.stats,
            f.slc_mode
        )
    }

    /// The closed-form fill leaves exactly what the per-LPN fill leaves
    /// (every table entry, block state and counter), and random overwrites,
    /// GC and trims on top of either stay identical.
    #[test]
    fn the_closed_form_fill_equals_the_per_lpn_fill_and_so_does_what_follows() {
        let mut closed_form = 0;
        // SLC cache: (static, dynamic) bytes and whether host writes wait
        // for folding when it is full (the fill writes native blocks); the
        // share of factory bad blocks (gaps in the units' free lists).
        let no_slc = (0, 0, false);
        for (policy, mp, op, wl, (slc_static, slc_dynamic, fold), bad) in [
            ("greedy", true, 0.25, "none", no_slc, 0.0),
            ("cost-benefit", false, 0.25, "dynamic", no_slc, 0.0),
            ("greedy", true, 0.23, "none", no_slc, 0.0), // a last, partial program unit
            ("greedy", false, 0.23, "static", no_slc, 0.0),
            ("fifo", false, 0.11, "none", no_slc, 0.0),
            ("greedy", true, 0.03, "none", no_slc, 0.0), // too little spare: per LPN
            (
                "greedy",
                true,
                0.25,
                "none",
                (256 << 10, 1 << 20, false),
                0.0,
            ),
            (
                "greedy",
                false,
                0.23,
                "dynamic",
                (256 << 10, 2 << 20, true),
                0.0,
            ),
            ("greedy", false, 0.25, "none", (1 << 20, 0, false), 0.0), // no room: per LPN
            ("cost-benefit", true, 0.25, "none", (0, 2 << 20, true), 0.0),
            ("greedy", true, 0.25, "static", (0, 2 << 20, false), 0.0),
            ("greedy", true, 0.30, "none", no_slc, 0.07),
            ("cost-benefit", false, 0.30, "dynamic", no_slc, 0.07),
            (
                "greedy",
                false,
                0.35,
                "static",
                (256 << 10, 1 << 20, false),
                0.07,
            ),
        ] {
            let mut d = small_device(policy, mp);
            d.ftl.over_provisioning = op;
            d.ftl.slc_static = crate::units::Bytes(slc_static);
            d.ftl.slc_dynamic = crate::units::Bytes(slc_dynamic);
            if fold {
                d.ftl.slc_when_full = crate::config::SlcWhenFull::Fold;
            }
            d.nand.factory_bad_blocks = bad;
            d.ftl.wear_leveling = match wl {
                "dynamic" => WearLeveling::Dynamic,
                "static" => WearLeveling::Static,
                _ => WearLeveling::None,
            };
            let mut a = ftl_for(&d);
            let mut b = ftl_for(&d);
            a.fill_sequential();
            b.fill_sequential_per_lpn();
            if a.fill.n > 0 {
                closed_form += 1;
                assert_eq!(
                    a.fill.follows_free_lists(),
                    bad > 0.0,
                    "{policy} {op}: the fill follows free lists with gaps only with bad blocks"
                );
                assert_eq!(
                    a.l2p.written() + a.p2l.written(),
                    0,
                    "{policy} {op}: no entry written"
                );
            }
            assert_eq!(
                state_of(&a),
                state_of(&b),
                "{policy} mp={mp} op={op}: after the fill"
            );
            a.check_invariants()
                .unwrap_or_else(|e| panic!("{policy} mp={mp} op={op}, after the fill: {e}"));
            let (da, wa) = a.precondition_steady_after_fill(11, 3.0);
            let (db, wb) = b.precondition_steady_after_fill(11, 3.0);
            assert_eq!((da, wa), (db, wb));
            for l in (0..a.logical_units() as u32).step_by(7) {
                a.trim(Lpn(l));
                b.trim(Lpn(l));
            }
            assert_eq!(
                state_of(&a),
                state_of(&b),
                "{policy} mp={mp} op={op}: after writes"
            );
            a.check_invariants()
                .unwrap_or_else(|e| panic!("{policy} mp={mp} op={op}: {e}"));
        }
        assert_eq!(
            closed_form, 12,
            "the closed form applies to all but the 3 % case and the one whose SLC region leaves too little room"
        );
    }

    #[test]
    fn stripe_is_a_permutation_channel_first() {
        let d = Device::preset("pm9a3-960g").unwrap();
        let g = Geometry::new(&d.nand, d.ftl.mapping_unit);
        let s = stripe_order(&g, &d.ftl.allocation);
        let mut sorted = s.clone();
        sorted.sort();
        assert_eq!(sorted, (0..32).collect::<Vec<_>>());
        // channel-first: consecutive units are on different channels
        assert_ne!(
            g.channel_of_die(g.die_of_unit(s[0])),
            g.channel_of_die(g.die_of_unit(s[1]))
        );
    }

    /// With little spare, GC runs during the fill itself and can pick the
    /// block a unit just filled (still its `active` entry); the next
    /// allocation on that unit must not close the erased block again (it
    /// would sit on the free list twice and two program units would share
    /// its slots: l2p and p2l disagree).
    #[test]
    fn gc_of_a_just_filled_block_does_not_free_it_twice() {
        for (policy, mp) in [("greedy", true), ("fifo", false), ("cost-benefit", true)] {
            let mut d = small_device(policy, mp);
            d.ftl.over_provisioning = 0.03;
            let mut f = ftl_for(&d);
            f.fill_sequential();
            assert!(f.stats.gc_runs > 0, "{policy}: GC ran during the fill");
            f.check_invariants()
                .unwrap_or_else(|e| panic!("{policy} mp={mp}: {e}"));
            let (_, waf) = f.precondition_steady(3, 2.0);
            assert!(waf > 1.0);
            f.check_invariants()
                .unwrap_or_else(|e| panic!("{policy} mp={mp}, steady: {e}"));
        }
    }

    #[test]
    fn fill_then_steady_keeps_invariants_and_waf_above_one() {
        for policy in ["greedy", "cost-benefit", "random", "fifo", "d-choice"] {
            for mp in [true, false] {
                let d = small_device(policy, mp);
                let mut f = ftl_for(&d);
                f.fill_sequential();
                f.check_invariants().unwrap();
                assert_eq!(f.total_valid(), f.logical_units());
                let (dw, waf) = f.precondition_steady(7, 4.0);
                f.check_invariants().unwrap();
                assert_eq!(f.total_valid(), f.logical_units(), "{policy}");
                assert!(dw >= 1.0);
                assert!(waf > 1.0, "{policy} waf {waf}");
                assert!(f.stats.gc_runs > 0);
                let buffered = (0..f.logical_units() as u32)
                    .filter(|&l| f.lookup(Lpn(l)) == Mapping::InBuffer)
                    .count();
                assert_eq!(
                    buffered, 0,
                    "{policy}: the preconditioner leaves nothing in the buffer"
                );
            }
        }
    }
}
