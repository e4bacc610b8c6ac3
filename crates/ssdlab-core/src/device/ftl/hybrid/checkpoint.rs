//! Mapping checkpoints under block or hybrid mapping (seed 001's C-log;
//! issue 14, part 5; `ftl.checkpoint_interval`, `ftl.checkpoint_log_size`).
//!
//! A block-mapped FTL's mapping is small (a few bytes per block), so each
//! checkpoint is a full snapshot of each parallel unit's part of it (no
//! incremental pages to compact): the block table (8 B a block: erase
//! count and state), the block map (8 B a logical block: data block and
//! write pointer) and the log table (16 B a log block). Each unit programs
//! its part into blocks taken from its free pool (the usual choice, least
//! worn with wear levelling, so checkpoint blocks rotate through the drive
//! rather than wear a fixed area); when a checkpoint is complete on every
//! unit the previous one's blocks are erased and go back to the pool. So a
//! unit holds two checkpoints' blocks (config.rs reserves room for them),
//! and a third's while the oldest is being erased if its free blocks
//! allow. Recovery reads the last complete checkpoint's pages and scans
//! only the blocks programmed, allocated or erased since it began (their
//! block-map sequence, [`Ftl::hybrid_changed`]), plus one read of each
//! block of a checkpoint left incomplete.

use super::{Pick, NONE};
use crate::device::ftl::{BlockState, Ftl};
use crate::nand::Geometry;
use crate::units::{Ppa, Time};

/// Bytes of one parallel unit's checkpoint: its block table, block map
/// and log table.
pub fn hybrid_checkpoint_bytes(g: &Geometry, lbns: u64, log_blocks: u32) -> u64 {
    8 * g.blocks_per_unit as u64 + 8 * lbns + 16 * log_blocks as u64
}

/// (program units, blocks) one parallel unit's checkpoint takes: its
/// bytes in whole mapping units, padded to whole program units.
pub fn hybrid_checkpoint_size(g: &Geometry, lbns: u64, log_blocks: u32) -> (u32, u32) {
    let units = hybrid_checkpoint_bytes(g, lbns, log_blocks).div_ceil(g.mapping_unit.0.max(1));
    let spp = g.slots_per_program.max(1) as u64;
    let programs = units.div_ceil(spp).max(1);
    let blocks = (programs * spp).div_ceil(g.slots_per_block.max(1) as u64);
    (programs as u32, blocks as u32)
}

/// Checkpoint blocks of block or hybrid mapping.
#[derive(Debug, Clone, Default)]
pub(in crate::device::ftl) struct HybridCheckpoints {
    /// Program units per unit per checkpoint.
    programs: u32,
    /// Blocks per unit per checkpoint.
    blocks: u32,
    /// Per unit: the last complete checkpoint's blocks (within the unit).
    complete: Vec<Vec<u32>>,
    /// Per unit: the blocks of the one being written.
    writing: Vec<Vec<u32>>,
    /// Blocks of superseded checkpoints whose erase is under way (global
    /// ids): free once it finishes.
    erasing: Vec<u32>,
}

impl HybridCheckpoints {
    pub(in crate::device::ftl) fn new(g: &Geometry, lbns: u64, log_blocks: u32) -> Self {
        let (programs, blocks) = hybrid_checkpoint_size(g, lbns, log_blocks);
        HybridCheckpoints {
            programs,
            blocks,
            complete: vec![Vec::new(); g.units as usize],
            writing: vec![Vec::new(); g.units as usize],
            erasing: Vec::new(),
        }
    }
}

impl Ftl {
    /// Checkpoints are on: each unit keeps room for two checkpoints'
    /// blocks besides its data blocks, logs and merge target.
    pub(in crate::device::ftl) fn hybrid_reserve_checkpoints(&mut self, logical_units: u64) {
        let lbns = super::logical_blocks_per_unit(&self.geo, logical_units);
        let c = HybridCheckpoints::new(&self.geo, lbns, self.cfg.log_blocks);
        self.min_good_per_unit += 2 * c.blocks;
        if let Some(h) = self.hybrid.as_mut() {
            h.ckpt = Some(c);
        }
    }

    /// Block or hybrid mapping with checkpoints?
    fn hybrid_ckpt(&self) -> Option<&HybridCheckpoints> {
        self.hybrid.as_ref()?.ckpt.as_ref()
    }

    /// Is block `b` of `unit` a checkpoint block (complete, being written
    /// or being erased)?
    pub(in crate::device::ftl) fn is_hybrid_checkpoint_block(&self, unit: u32, b: u32) -> bool {
        let bid = unit * self.geo.blocks_per_unit + b;
        self.hybrid_ckpt().is_some_and(|c| {
            c.complete[unit as usize].contains(&b)
                || c.writing[unit as usize].contains(&b)
                || c.erasing.contains(&bid)
        })
    }

    /// Block `bid` changed now (planned into, a program finished,
    /// allocated or erased): recovery from a checkpoint that began at
    /// commit sequence `self.seq` or later reads it (`hybrid_scan_needed`).
    #[inline]
    pub(in crate::device::ftl) fn hybrid_changed(&mut self, bid: u32) {
        self.close_seq[bid as usize] = self.seq + 1;
    }

    /// Start a checkpoint: each unit takes erased blocks for its part and
    /// plans their programs. `busy(unit, block)`: a free block whose erase
    /// a merge under way has planned but not finished (its old data may
    /// still be needed after a power loss), not to be taken. Returns per
    /// unit the first slot of each program unit, in program order, or None
    /// (no checkpoints, one is being written, or a unit has no erased block
    /// to spare: the checkpoint is skipped and nothing changed).
    pub fn hybrid_checkpoint_begin(
        &mut self,
        busy: impl Fn(u32, u32) -> bool,
    ) -> Option<Vec<Vec<Ppa>>> {
        let (programs, blocks) = {
            let c = self.hybrid_ckpt()?;
            if c.writing.iter().any(|w| !w.is_empty()) {
                return None;
            }
            (c.programs, c.blocks)
        };
        let h = self.hybrid.as_ref()?;
        let (spp, spb, bpu) = (
            self.geo.slots_per_program,
            self.geo.slots_per_block,
            self.geo.blocks_per_unit,
        );
        // Each unit needs `blocks` free blocks not waiting for a merge's
        // erase, and must keep what its block map may still take: a data
        // block for each logical block without one, its logs, a merge
        // target (while the blocks of the checkpoint before the last are
        // being erased, it holds three checkpoints' blocks for a while).
        let short = self.units.iter().enumerate().any(|(u, m)| {
            let um = &h.units[u];
            let used = um.data.iter().filter(|&&d| d != NONE).count()
                + um.logs.len()
                + um.sw.is_some() as usize;
            let keep = (um.data.len() + h.log_blocks as usize + 1).saturating_sub(used);
            m.free.len() < blocks as usize + keep
                || m.free.iter().filter(|&&b| !busy(u as u32, b)).count() < blocks as usize
        });
        if short {
            return None;
        }
        let mut taken: Vec<Vec<u32>> = Vec::with_capacity(self.geo.units as usize);
        for unit in 0..self.geo.units {
            let mine: Vec<u32> = (0..blocks)
                .filter_map(|_| self.hybrid_alloc_where(unit, Pick::Next, |b| !busy(unit, b)))
                .collect();
            taken.push(mine);
        }
        let mut out = Vec::with_capacity(taken.len());
        for (unit, bs) in taken.iter().enumerate() {
            let mut ppas = Vec::with_capacity(programs as usize);
            for k in 0..programs {
                let off = k * spp;
                let bid = unit as u32 * bpu + bs[(off / spb) as usize];
                ppas.push(Ppa(bid * spb + off % spb));
            }
            for &b in bs {
                self.hybrid_changed(unit as u32 * bpu + b);
            }
            out.push(ppas);
        }
        let slots = programs as u64 * spp as u64 * self.geo.units as u64;
        self.stats.programmed_slots += slots;
        self.stats.checkpoint_slots += slots;
        self.stats.map_slots += slots;
        if let Some(c) = self.hybrid.as_mut().and_then(|h| h.ckpt.as_mut()) {
            c.writing = taken;
        }
        Some(out)
    }

    /// Units of one checkpoint over all units (its programs, padded).
    pub fn hybrid_checkpoint_slots(&self) -> u64 {
        self.hybrid_ckpt().map_or(0, |c| {
            c.programs as u64 * self.geo.slots_per_program as u64 * self.geo.units as u64
        })
    }

    /// The checkpoint being written is complete on every unit: it becomes
    /// the last complete one, and the previous one's blocks are to be
    /// erased (returned as global block ids for the drive to erase; each
    /// is free once [`Ftl::hybrid_checkpoint_erased`]).
    pub fn hybrid_checkpoint_complete(&mut self) -> Vec<u32> {
        let bpu = self.geo.blocks_per_unit;
        let Some(c) = self.hybrid.as_mut().and_then(|h| h.ckpt.as_mut()) else {
            return Vec::new();
        };
        let old = std::mem::replace(&mut c.complete, std::mem::take(&mut c.writing));
        c.writing = vec![Vec::new(); old.len()];
        let mut out = Vec::new();
        for (unit, bs) in old.into_iter().enumerate() {
            out.extend(bs.into_iter().map(|b| unit as u32 * bpu + b));
        }
        c.erasing.extend_from_slice(&out);
        for &bid in &out {
            self.state[bid as usize] = BlockState::Victim;
        }
        out
    }

    /// The erase of superseded checkpoint block `bid` finished.
    pub fn hybrid_checkpoint_erased(&mut self, bid: u32) {
        let Some(c) = self.hybrid.as_mut().and_then(|h| h.ckpt.as_mut()) else {
            return;
        };
        let Some(i) = c.erasing.iter().position(|&b| b == bid) else {
            return;
        };
        c.erasing.swap_remove(i);
        self.erase(bid);
        self.hybrid_changed(bid);
    }

    /// The power came back: the blocks of a checkpoint left incomplete and
    /// those whose erase the power loss cut are erased (functionally, as
    /// the rest of the rebuild); the last complete one stays until the
    /// next completes.
    pub(in crate::device::ftl) fn hybrid_checkpoint_power_on(&mut self) {
        let bpu = self.geo.blocks_per_unit;
        let Some(c) = self.hybrid.as_mut().and_then(|h| h.ckpt.as_mut()) else {
            return;
        };
        let units = c.writing.len();
        let writing = std::mem::replace(&mut c.writing, vec![Vec::new(); units]);
        let mut blocks = std::mem::take(&mut c.erasing);
        for (unit, bs) in writing.into_iter().enumerate() {
            for b in bs {
                let bid = unit as u32 * bpu + b;
                self.state[bid as usize] = BlockState::Victim;
                blocks.push(bid);
            }
        }
        for bid in blocks {
            self.erase(bid);
            self.hybrid_changed(bid);
        }
    }

    /// Per unit: loading the last complete checkpoint (its page rows) and
    /// one read of each block of an incomplete one (its first page tells
    /// recovery to ignore it): (reads, mapping units moved, array time).
    pub(in crate::device::ftl) fn hybrid_checkpoint_reads(
        &self,
        read_time: impl Fn(bool, u32) -> Time,
    ) -> Vec<(u64, u64, Time)> {
        let mut out = vec![(0u64, 0u64, Time::ZERO); self.units.len()];
        let Some(c) = self.hybrid_ckpt() else {
            return out;
        };
        let g = &self.geo;
        let row = (g.planes_per_unit * g.slots_per_page).max(1) as u64;
        let slots = c.programs as u64 * g.slots_per_program as u64;
        let rows = slots.div_ceil(row);
        let rows_per_block = g.pages_per_block.max(1) as u64;
        for (u, o) in out.iter_mut().enumerate() {
            if !c.complete[u].is_empty() {
                o.0 += rows;
                o.1 += slots;
                for r in 0..rows {
                    o.2 += read_time(false, (r % rows_per_block) as u32);
                }
            }
            for _ in &c.writing[u] {
                o.0 += 1;
                o.2 += read_time(false, 0);
            }
        }
        out
    }

    /// Recovery from the checkpoint that began at commit sequence `since`
    /// reads block `bid` (not a checkpoint block)? Only if it changed
    /// since: a merge planned before the checkpoint whose programs finish
    /// after it counts as changed (its programs mark it).
    pub(in crate::device::ftl) fn hybrid_scan_needed(&self, bid: u32, since: Option<u64>) -> bool {
        since.is_none_or(|s| self.close_seq[bid as usize] > s)
    }

    /// Checkpoint blocks in the block map's consistency check: every one
    /// in use and none mapped.
    pub(in crate::device::ftl) fn check_hybrid_checkpoints(&self) -> Result<(), String> {
        let Some(c) = self.hybrid_ckpt() else {
            return Ok(());
        };
        let bpu = self.geo.blocks_per_unit;
        let h = self.hybrid.as_ref().expect("hybrid");
        for (u, (done, writing)) in c.complete.iter().zip(&c.writing).enumerate() {
            let um = &h.units[u];
            for &b in done.iter().chain(writing) {
                let bid = (u as u32 * bpu + b) as usize;
                if self.state[bid] != BlockState::Active {
                    return Err(format!("checkpoint block {bid} is {:?}", self.state[bid]));
                }
                if self.valid[bid] != 0
                    || um.data.iter().any(|&d| d != NONE && d == b)
                    || um.logs.iter().chain(um.sw.iter()).any(|l| l.block == b)
                {
                    return Err(format!("checkpoint block {bid} also holds data"));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::device;
    use crate::config::WearLeveling;
    use crate::device::ftl::Ftl;
    use crate::nand::Geometry;
    use crate::units::Time;
    use std::collections::BTreeSet;

    /// The tiny drive of the hybrid tests, BAST with 2 logs, filled, with
    /// checkpoints (`wl`: dynamic wear levelling).
    fn filled(wl: bool) -> Ftl {
        let mut d = device("bast", 2, "4KiB");
        d.ftl.checkpoint_interval = Some(Time::from_secs_f64(0.001));
        if wl {
            d.ftl.wear_leveling = WearLeveling::Dynamic;
        }
        let g = Geometry::new(&d.nand, d.ftl.mapping_unit);
        let n = crate::config::logical_units(&d.nand, &d.ftl);
        let mut f = Ftl::new(g, d.ftl.clone(), n, 1);
        f.hybrid_fill();
        f
    }

    /// Run one checkpoint to completion and its predecessor's erases;
    /// returns the blocks it took.
    fn checkpoint(f: &mut Ftl) -> Vec<u32> {
        let plan = f.hybrid_checkpoint_begin(|_, _| false).expect("room");
        let spb = f.geo.slots_per_block;
        let taken: Vec<u32> = plan.iter().flatten().map(|p| p.0 / spb).collect();
        for bid in f.hybrid_checkpoint_complete() {
            f.hybrid_checkpoint_erased(bid);
        }
        f.check_invariants().unwrap();
        taken
    }

    #[test]
    fn checkpoint_blocks_rotate_through_the_free_pool() {
        // 40 checkpoints, one block per unit each: they take a different
        // block each time (the erased ones rejoin the pool behind the
        // others, or the least worn goes first), so no block is erased more
        // than its share, with wear levelling or without.
        for wl in [false, true] {
            let mut f = filled(wl);
            let mut used = BTreeSet::new();
            for _ in 0..40 {
                let taken = checkpoint(&mut f);
                assert_eq!(taken.len(), f.geo.units as usize);
                used.extend(taken);
            }
            let free: usize = (0..f.geo.units).map(|u| f.units[u as usize].free.len()).sum();
            assert!(used.len() >= free, "wl {wl}: {} blocks used, {free} free", used.len());
            let max = used.iter().map(|&b| f.erase_count[b as usize]).max().unwrap();
            let share = (40 * f.geo.units as usize).div_ceil(used.len()) as u32;
            assert!(max <= share + 1, "wl {wl}: max {max} erases, share {share}");
        }
    }

    #[test]
    fn a_checkpoint_never_takes_a_block_a_merge_has_yet_to_erase() {
        // Every free block but one per unit is "busy": the checkpoint
        // takes that one; with none left it is skipped and nothing moves.
        let mut f = filled(false);
        let keep: Vec<u32> = (0..f.geo.units)
            .map(|u| *f.units[u as usize].free.back().unwrap())
            .collect();
        let plan = f
            .hybrid_checkpoint_begin(|u, b| b != keep[u as usize])
            .expect("one block each");
        let spb = f.geo.slots_per_block;
        let bpu = f.geo.blocks_per_unit;
        for (u, ppas) in plan.iter().enumerate() {
            assert!(ppas.iter().all(|p| p.0 / spb == u as u32 * bpu + keep[u]));
        }
        for bid in f.hybrid_checkpoint_complete() {
            f.hybrid_checkpoint_erased(bid);
        }
        let free: Vec<usize> = f.units.iter().map(|u| u.free.len()).collect();
        let opened = f.stats.blocks_opened;
        assert!(f.hybrid_checkpoint_begin(|_, _| true).is_none());
        assert_eq!(f.units.iter().map(|u| u.free.len()).collect::<Vec<_>>(), free);
        assert_eq!(f.stats.blocks_opened, opened);
        f.check_invariants().unwrap();
    }
}
