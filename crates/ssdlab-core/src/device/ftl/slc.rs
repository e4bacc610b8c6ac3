//! The SLC write cache: multi-bit blocks run in SLC mode (one page per word
//! line), a static region kept in SLC mode for good and a dynamic region
//! borrowed from the free blocks, and folding (SLC data collected into
//! native blocks).
//!
//! - *Capacity.* A block in SLC mode holds `slots_per_block / bits` slots
//!   (the first ones of the block). The static region is
//!   `ceil(slc_static / (units x SLC block bytes))` blocks per parallel unit,
//!   the last ones of each unit, never on the free list (a factory-bad one
//!   among them is never used: that unit's region is smaller). Dynamic SLC blocks
//!   come off a unit's free list while (a) the unit keeps more than
//!   `gc_threshold + 1` free blocks, so borrowing never starts GC, (b) the
//!   unit holds fewer than its share of `slc_dynamic`, and (c) the native
//!   capacity the borrowed blocks give up, `(slots_per_block - SLC slots)`
//!   each, fits in the logical space no data occupies: the dynamic region
//!   shrinks as the drive fills and is gone when it is full (Samsung's
//!   "Intelligent TurboWrite" behaves this way; docs/models/slc-cache.md).
//! - *Folding.* A full SLC block is collected like a GC victim (valid data
//!   read, staged in the buffer, programmed into native blocks of the same
//!   unit) and erased; a static block goes back to the static region, a
//!   dynamic one back to the free list in native mode. GC never picks an
//!   SLC block. The drive decides when to fold (idle time, or host writes
//!   waiting for SLC room); this module picks the victim: fewest valid
//!   slots, the oldest on ties.

use super::{BlockState, Ftl, UNMAPPED};
use crate::config::SlcWhenFull;
use crate::units::Ppa;

/// The SLC cache's sizes and occupancy.
#[derive(Debug, Clone)]
pub(super) struct SlcCache {
    /// Slots a block holds in SLC mode.
    pub(super) slots_per_block: u32,
    /// Static SLC blocks per unit (the unit's last ones).
    pub(super) static_per_unit: u32,
    /// Dynamic SLC blocks a unit may hold at once.
    pub(super) dynamic_per_unit: u32,
    /// Dynamic SLC blocks in use, whole drive.
    pub(super) dynamic_used: u64,
}

impl Ftl {
    /// Set up the SLC cache from the configuration (no-op without one).
    pub(super) fn init_slc(&mut self) {
        if !self.cfg.has_slc() {
            return;
        }
        let g = &self.geo;
        let spb = g.slots_per_block / g.bits;
        let mu = g.mapping_unit.0;
        let per_unit_bytes = g.units as u64 * spb as u64 * mu;
        let static_per_unit =
            (self.cfg.slc_static.0.div_ceil(per_unit_bytes.max(1)) as u32).min(g.blocks_per_unit);
        let dynamic_per_unit =
            (self.cfg.slc_dynamic.0.div_ceil(per_unit_bytes.max(1)) as u32).min(g.blocks_per_unit);
        let bpu = g.blocks_per_unit;
        self.slc_mode = vec![false; (g.units * bpu) as usize];
        for (u, unit) in self.units.iter_mut().enumerate() {
            for b in bpu - static_per_unit..bpu {
                self.slc_mode[u * bpu as usize + b as usize] = true;
            }
            unit.free.retain(|&b| b < bpu - static_per_unit);
            // A factory-bad block of the region is never used: the region
            // is that much smaller on this unit.
            let first = u as u32 * bpu;
            unit.slc_free = (bpu - static_per_unit..bpu)
                .filter(|&b| self.state[(first + b) as usize] != BlockState::Bad)
                .collect();
        }
        self.slc = Some(SlcCache {
            slots_per_block: spb,
            static_per_unit,
            dynamic_per_unit,
            dynamic_used: 0,
        });
    }

    /// Does the drive have an SLC cache?
    #[inline]
    pub fn has_slc(&self) -> bool {
        self.slc.is_some()
    }

    /// Is `ppa` in a block run in SLC mode?
    #[inline]
    pub fn is_slc(&self, ppa: Ppa) -> bool {
        !self.slc_mode.is_empty() && self.slc_mode[self.geo.block_of(ppa) as usize]
    }

    /// Host writes wait for folding when the SLC cache is full.
    #[inline]
    pub(super) fn slc_waits_for_fold(&self) -> bool {
        self.cfg.slc_when_full == SlcWhenFull::Fold
    }

    /// Can folding ever give `unit` SLC room again: does it hold SLC
    /// blocks in use (open, full or being folded), dynamic or static? When
    /// failed erases have retired its whole static region and it borrows
    /// no dynamic block, host writes that waited for folding would wait
    /// forever: they go to native blocks instead.
    pub(super) fn slc_can_free(&self, unit: u32) -> bool {
        let Some(s) = &self.slc else {
            return false;
        };
        let u = &self.units[unit as usize];
        if u.slc_dynamic > 0 || u.slc_closed > 0 || u.slc_active.is_some() {
            return true;
        }
        let bpu = self.geo.blocks_per_unit;
        (bpu - s.static_per_unit..bpu).any(|b| {
            matches!(
                self.state[(unit * bpu + b) as usize],
                BlockState::Active | BlockState::SlcClosed | BlockState::Victim
            )
        })
    }

    /// Can host data on `unit` go to SLC now?
    pub fn slc_room(&self, unit: u32) -> bool {
        let Some(s) = &self.slc else {
            return false;
        };
        let u = &self.units[unit as usize];
        if u.slc_active.is_some() || !u.slc_free.is_empty() {
            return true;
        }
        let given_up = (self.geo.slots_per_block - s.slots_per_block) as u64;
        let unused = self.lpns - self.mapped;
        u.slc_dynamic < s.dynamic_per_unit
            && u.free.len() as u32 > self.cfg.gc_threshold + 1
            && (s.dynamic_used + 1) * given_up <= unused
    }

    /// Next SLC program unit on `unit` (the caller checked [`Ftl::slc_room`]).
    pub(super) fn allocate_slc(&mut self, unit: u32) -> Option<Ppa> {
        let spp = self.geo.slots_per_program;
        let bpu = self.geo.blocks_per_unit;
        let s = self.slc.as_mut()?;
        let cap = s.slots_per_block;
        let u = &mut self.units[unit as usize];
        let (blk, off) = match u.slc_active {
            Some(a) => a,
            None => {
                let b = match u.slc_free.pop_front() {
                    Some(b) => b,
                    None => {
                        let b = u.free.pop_front()?;
                        self.slc_mode[(unit * bpu + b) as usize] = true;
                        u.slc_dynamic += 1;
                        s.dynamic_used += 1;
                        b
                    }
                };
                self.state[(unit * bpu + b) as usize] = BlockState::Active;
                (b, 0)
            }
        };
        let bid = unit * bpu + blk;
        let next = off + spp;
        if next >= cap {
            // Full: folding may collect it from now on.
            u.slc_active = None;
            u.slc_closed += 1;
            self.state[bid as usize] = BlockState::SlcClosed;
            self.close_seq[bid as usize] = self.seq;
        } else {
            u.slc_active = Some((blk, next));
        }
        self.stats.programmed_slots += spp as u64;
        self.stats.slc_slots += spp as u64;
        Some(Ppa(bid * self.geo.slots_per_block + off))
    }

    /// Close `unit`'s open SLC block, if it holds data, so folding can
    /// collect it (idle folding empties the whole cache).
    pub fn close_slc_active(&mut self, unit: u32) {
        let bpu = self.geo.blocks_per_unit;
        let u = &mut self.units[unit as usize];
        if let Some((b, off)) = u.slc_active {
            if off > 0 {
                let bid = (unit * bpu + b) as usize;
                u.slc_active = None;
                u.slc_closed += 1;
                self.state[bid] = BlockState::SlcClosed;
                self.close_seq[bid] = self.seq;
            }
        }
    }

    /// Full SLC blocks on `unit` waiting to be folded.
    #[inline]
    pub fn slc_closed(&self, unit: u32) -> u32 {
        self.units[unit as usize].slc_closed
    }

    /// Choose the SLC block of `unit` to fold next (fewest valid slots, the
    /// oldest on ties) and mark it a victim.
    pub fn select_fold_victim(&mut self, unit: u32) -> Option<u32> {
        // Read `valid` directly below.
        self.apply_invalidations();
        let bpu = self.geo.blocks_per_unit as usize;
        let lo = unit as usize * bpu;
        let mut best: Option<(u32, u64, usize)> = None;
        for b in lo..lo + bpu {
            if self.state[b] == BlockState::SlcClosed {
                let key = (self.valid[b], self.close_seq[b]);
                if best.is_none_or(|(v, s, _)| key < (v, s)) {
                    best = Some((key.0, key.1, b));
                }
            }
        }
        let (_, _, b) = best?;
        self.state[b] = BlockState::Victim;
        self.units[unit as usize].slc_closed -= 1;
        self.stats.fold_runs += 1;
        Some(b as u32)
    }

    /// An SLC block was erased: a static one rejoins the static region
    /// (returns true: it does not go on the free list); a dynamic one goes
    /// back to native mode (false).
    pub(super) fn slc_erased(&mut self, block_id: u32) -> bool {
        let bpu = self.geo.blocks_per_unit;
        let unit = self.geo.unit_of_block(block_id);
        let local = block_id % bpu;
        let Some(s) = self.slc.as_mut() else {
            return false;
        };
        let u = &mut self.units[unit as usize];
        if local >= bpu - s.static_per_unit {
            u.slc_free.push_back(local);
            true
        } else {
            self.slc_mode[block_id as usize] = false;
            u.slc_dynamic -= 1;
            s.dynamic_used -= 1;
            false
        }
    }

    /// SLC-mode block `block_id`, erased, is retired: a static-region
    /// block leaves the SLC cache for good; a dynamic one stops counting
    /// as SLC.
    pub(super) fn slc_retired(&mut self, block_id: u32) {
        let bpu = self.geo.blocks_per_unit;
        let unit = self.geo.unit_of_block(block_id);
        let Some(s) = self.slc.as_mut() else {
            return;
        };
        if block_id % bpu < bpu - s.static_per_unit {
            self.slc_mode[block_id as usize] = false;
            self.units[unit as usize].slc_dynamic -= 1;
            s.dynamic_used -= 1;
        }
    }

    /// Blocks of each unit in the static SLC region (not for native data).
    pub(super) fn slc_static_blocks(&self) -> u32 {
        self.slc.as_ref().map_or(0, |s| s.static_per_unit)
    }

    /// Mapping units of data held in SLC mode (not yet folded): a scan of
    /// the blocks (O(blocks)); the per-slot mapping updates stay free of
    /// SLC bookkeeping.
    pub fn slc_valid(&self) -> u64 {
        let held: u64 = self
            .slc_mode
            .iter()
            .zip(&self.valid)
            .filter(|(&slc, _)| slc)
            .map(|(_, &v)| v as u64)
            .sum();
        let waiting = self
            .pending
            .slots()
            .iter()
            .filter(|&&s| self.slc_mode[self.geo.block_of(Ppa(s)) as usize])
            .count() as u64;
        held - waiting
    }

    /// Mapping units the SLC cache could take now (free SLC capacity:
    /// the active blocks' rest, erased static blocks, and what the dynamic
    /// region may still borrow).
    pub fn slc_room_slots(&self) -> u64 {
        let Some(s) = &self.slc else {
            return 0;
        };
        let given_up = (self.geo.slots_per_block - s.slots_per_block) as u64;
        let unused = self.lpns - self.mapped;
        let mut dyn_budget = (unused / given_up.max(1)).saturating_sub(s.dynamic_used);
        let mut room = 0u64;
        for u in &self.units {
            if let Some((_, off)) = u.slc_active {
                room += (s.slots_per_block - off) as u64;
            }
            room += u.slc_free.len() as u64 * s.slots_per_block as u64;
            let spare = (u.free.len() as u32).saturating_sub(self.cfg.gc_threshold + 1);
            let dynamic = s.dynamic_per_unit.saturating_sub(u.slc_dynamic).min(spare) as u64;
            let take = dynamic.min(dyn_budget);
            dyn_budget -= take;
            room += take * s.slots_per_block as u64;
        }
        room
    }

    /// Check the SLC bookkeeping (test helper).
    pub(super) fn check_slc(&self) -> Result<(), String> {
        let Some(s) = &self.slc else {
            return Ok(());
        };
        let spb = self.geo.slots_per_block as usize;
        for (b, &slc) in self.slc_mode.iter().enumerate() {
            let first = b * spb;
            if slc
                && (first + s.slots_per_block as usize..first + spb)
                    .any(|slot| self.p2l(slot as u32) != UNMAPPED)
            {
                return Err(format!("SLC block {b} holds data past its SLC capacity"));
            }
        }
        let bpu = self.geo.blocks_per_unit;
        for (u, unit) in self.units.iter().enumerate() {
            let bad = unit
                .slc_free
                .iter()
                .chain(unit.slc_active.as_ref().map(|(b, _)| b))
                .find(|&&b| self.state[u * bpu as usize + b as usize] == BlockState::Bad);
            if let Some(b) = bad {
                return Err(format!("unit {u}: bad block {b} in the SLC region's use"));
            }
        }
        let dynamic: u64 = self.units.iter().map(|u| u.slc_dynamic as u64).sum();
        if dynamic != s.dynamic_used {
            return Err("dynamic SLC block counts disagree".into());
        }
        Ok(())
    }
}
