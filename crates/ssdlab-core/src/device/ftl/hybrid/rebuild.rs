//! The block map after a power loss (issue 14, part 5): rebuilt from the
//! mapping recovery recovered, so a drive with block or hybrid mapping can
//! run on.
//!
//! The scan (`Ftl::recovery_scan`) finds each logical unit's newest
//! durable version and, for each data block, the logical block its first
//! page names and its write pointer: a logical block none of whose units
//! the power loss touched and none of which sit in a log keeps its data
//! block and write pointer. Every other logical block (units in a log,
//! reverted, unmapped, interrupted, left in DRAM for the capacitors, or in
//! a block a plan had erased without the erase being issued) is looked at
//! again:
//!
//! * if its units all sit in one block, each at its own place, and they are
//!   all that block holds, that block is its data block (a switch without
//!   the erase); its write pointer is the one the lost map had when the
//!   block served this logical block (data block or aligned log), at least
//!   past its last unit; a block the map no longer knew (a plan had erased
//!   it, the erase was never issued) counts as full: what it holds past its
//!   last unit is unknown;
//! * else it is normalised by a full merge into a new block;
//! * every block left without valid data (logs, blocks a plan took but
//!   never programmed, blocks a merge emptied) is erased.
//!
//! The logs start empty. Then what the power-loss capacitors saved from
//! DRAM (units still mapped to DRAM) is written as host writes are. All of
//! it is functional and untimed, like page mapping's power-on (the flash
//! work shows in the erase counts, not in the run's time or counters;
//! docs/models/recovery.md). Cost: the logical blocks touched, times a
//! block's places, plus a pass over the block map.

use super::{HybridStep, Pick, NONE};
use crate::device::ftl::map::UNMAPPED;
use crate::device::ftl::{buffered, on_flash, BlockState, Ftl};

impl Ftl {
    /// Rebuild the block map from the recovered mapping (see the module
    /// docs). `unerased`: blocks a plan had erased whose erase was never
    /// issued; `touched`: units the power loss changed or left in DRAM.
    /// Errors when a unit has no erased block left for a merge.
    pub(in crate::device::ftl) fn hybrid_rebuild(
        &mut self,
        unerased: &[u32],
        touched: &[u32],
    ) -> Result<(), String> {
        let Some(h) = self.hybrid.as_ref() else {
            return Ok(());
        };
        let (spb, spp, bpu) = (
            self.geo.slots_per_block,
            self.geo.slots_per_program,
            self.geo.blocks_per_unit,
        );
        let units = self.geo.units as usize;
        // What the lost map said of each block: (logical block, write
        // pointer); FAST's random logs hold many (NONE).
        let mut was: Vec<Vec<Option<(u32, u32)>>> = vec![vec![None; bpu as usize]; units];
        // Logical blocks to look at again, per unit.
        let mut suspect: Vec<Vec<u32>> = vec![Vec::new(); units];
        let mut is_log: Vec<Vec<bool>> = vec![vec![false; bpu as usize]; units];
        let mut unerased = unerased.to_vec();
        unerased.sort_unstable();
        let unerased = |bid: u32| unerased.binary_search(&bid).is_ok();
        for (u, um) in h.units.iter().enumerate() {
            for (lbn, &d) in um.data.iter().enumerate() {
                if d != NONE {
                    was[u][d as usize] = Some((lbn as u32, um.dwp[lbn]));
                }
            }
            for l in um.logs.iter().chain(um.sw.iter()) {
                was[u][l.block as usize] = if l.aligned { Some((l.lbn, l.wp)) } else { None };
                is_log[u][l.block as usize] = true;
            }
        }
        for &l in touched {
            if (l as u64) < self.lpns {
                let (u, lbn, _) = self.hybrid_locate(l);
                suspect[u as usize].push(lbn);
            }
        }
        // Units in logs, and in blocks the map no longer knew.
        for u in 0..units as u32 {
            for b in 0..bpu {
                let bid = u * bpu + b;
                let known_data = was[u as usize][b as usize].is_some()
                    && !is_log[u as usize][b as usize]
                    && !unerased(bid);
                if self.valid[bid as usize] > 0 && !known_data {
                    for (_, l) in self.valid_slots(bid) {
                        suspect[u as usize].push(self.hybrid_locate(l.0).1);
                    }
                }
            }
        }
        let mut pending: Vec<u32> = Vec::new();
        let mut steps: Vec<HybridStep> = Vec::new();
        for unit in 0..self.geo.units {
            let u = unit as usize;
            let base = unit * bpu;
            let mut lbns = std::mem::take(&mut suspect[u]);
            lbns.sort_unstable();
            lbns.dedup();
            let hm = self.hybrid.as_mut().expect("hybrid");
            let um = &mut hm.units[u];
            um.logs.clear();
            um.sw = None;
            for &lbn in &lbns {
                um.data[lbn as usize] = NONE;
                um.dwp[lbn as usize] = 0;
            }
            let mut taken = vec![false; bpu as usize];
            for &d in &um.data {
                if d != NONE {
                    taken[d as usize] = true;
                }
            }
            let mut dirty: Vec<(u32, Vec<u32>)> = Vec::new();
            for &lbn in &lbns {
                let (mut block, mut clean, mut count, mut last) = (None, true, 0u32, 0u32);
                let mut sources: Vec<u32> = Vec::new();
                for place in 0..spb {
                    let Some(lpn) = self.hybrid_lpn_at(unit, lbn, place) else {
                        break;
                    };
                    let p = self.l2p(lpn);
                    if buffered(p) {
                        pending.push(lpn);
                        continue;
                    }
                    if p == UNMAPPED {
                        continue;
                    }
                    let local = p / spb - base;
                    count += 1;
                    last = place;
                    clean &= p % spb == place && block.is_none_or(|b| b == local);
                    block.get_or_insert(local);
                    if !sources.contains(&local) {
                        sources.push(local);
                    }
                }
                let Some(b) = block else { continue };
                let bid = (base + b) as usize;
                if clean && self.valid[bid] == count && !taken[b as usize] {
                    taken[b as usize] = true;
                    let past_last = (last / spp + 1) * spp;
                    let wp = match was[u][b as usize] {
                        Some((l, wp)) if l == lbn && !unerased(base + b) => wp.div_ceil(spp) * spp,
                        _ => spb,
                    };
                    self.state[bid] = BlockState::Active;
                    let um = &mut self.hybrid.as_mut().expect("hybrid").units[u];
                    um.data[lbn as usize] = b;
                    um.dwp[lbn as usize] = wp.max(past_last).min(spb);
                } else {
                    dirty.push((lbn, sources));
                }
            }
            // Room first: blocks in use that hold nothing valid now.
            for b in 0..bpu {
                self.erase_if_unused(unit, b, &taken);
            }
            for (lbn, sources) in dirty {
                if !self.units[u].free.is_empty() {
                    if !self.hybrid_full_merge(unit, lbn, &[], &mut steps, Pick::Next) {
                        return Err(self.too_full(unit));
                    }
                    steps.clear();
                    let nb = self.hybrid.as_ref().expect("hybrid").units[u].data[lbn as usize];
                    taken[nb as usize] = true;
                    for b in sources {
                        self.erase_if_unused(unit, b, &taken);
                    }
                    continue;
                }
                // No erased block (a merge was cut with its target partly
                // programmed and its sources not yet erased, and the unit
                // had no other): the logical block goes through DRAM. Its
                // units are read into DRAM, the blocks that held nothing
                // else are erased, and it is written back in place.
                let mut lpns = Vec::new();
                for place in 0..spb {
                    let Some(lpn) = self.hybrid_lpn_at(unit, lbn, place) else {
                        break;
                    };
                    if on_flash(self.l2p(lpn)) {
                        self.write_to_buffer(crate::units::Lpn(lpn));
                        lpns.push(lpn);
                    }
                }
                for b in sources {
                    self.erase_if_unused(unit, b, &taken);
                }
                if !self.hybrid_write(unit, &lpns, &mut steps) {
                    return Err(self.too_full(unit));
                }
                steps.clear();
                let nb = self.hybrid.as_ref().expect("hybrid").units[u].data[lbn as usize];
                if nb != NONE {
                    taken[nb as usize] = true;
                }
            }
        }
        // What the capacitors saved, written as the host's writes are.
        pending.sort_unstable_by_key(|&l| (self.hybrid_group_key(l), l));
        pending.dedup();
        let mut i = 0;
        while i < pending.len() {
            let key = self.hybrid_group_key(pending[i]);
            let n = pending[i..]
                .iter()
                .take_while(|&&l| self.hybrid_group_key(l) == key)
                .count();
            let group: Vec<u32> = pending[i..i + n].to_vec();
            if !self.hybrid_write(key.0, &group, &mut steps) {
                return Err(format!(
                    "after the power loss, {} units the capacitors saved found no erased block on parallel unit {} (the drive is too full to run on)",
                    pending.len() - i,
                    key.0
                ));
            }
            steps.clear();
            i += n;
        }
        self.hybrid_map_lost = false;
        Ok(())
    }

    /// The error when `unit` has no erased block left for the rebuild.
    fn too_full(&self, unit: u32) -> String {
        format!(
            "after the power loss, parallel unit {unit} has no erased block left to rebuild its block map (the drive is too full to run on): {}",
            self.unit_summary(unit)
        )
    }

    /// Erase block `b` of `unit` if it is in use (not free, bad or
    /// retired), holds nothing valid and is not `taken` as a data block.
    fn erase_if_unused(&mut self, unit: u32, b: u32, taken: &[bool]) {
        let bid = unit * self.geo.blocks_per_unit + b;
        if taken[b as usize]
            || self.valid[bid as usize] > 0
            || self.is_hybrid_checkpoint_block(unit, b)
            || matches!(
                self.state[bid as usize],
                BlockState::Free | BlockState::Bad | BlockState::Retired
            )
        {
            return;
        }
        let mut erases = Vec::new();
        self.hybrid_erase(unit, b, &mut erases);
    }
}
