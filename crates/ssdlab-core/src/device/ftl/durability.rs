//! What survives a power loss (issue 14, part 5): for every logical unit
//! whose latest version is not yet durable (it is in the volatile DRAM
//! buffer, or its program has not finished), the newest version that is on
//! flash, and what a power loss then does to the mapping.
//!
//! Kept only when a run has a power loss scheduled
//! ([`Ftl::track_durability`]); otherwise every hook below is one
//! predictable branch. The journal holds at most the units the buffer and
//! the programs in flight hold (each entry leaves when its unit's latest
//! version is programmed), so it stays small whatever the drive's size.
//!
//! Versions are ordered by the FTL's commit sequence (the number an OOB
//! scan would read next to the LPN): a program that finishes after a newer
//! version of its unit was already programmed does not move the entry back.
//!
//! Assumptions (docs/models/recovery.md): a trim is durable when it is
//! acknowledged (the FTL logs it at once); a program interrupted by the
//! power loss leaves nothing readable (its slots are invalid after
//! recovery, the block is closed); an older version survives only while
//! its block has not been erased since it was superseded. Translation pages
//! of a cached mapping are not journalled: recovery rebuilds the mapping
//! from the scan, and the pages it rebuilt stay dirty in DRAM.

use super::map::UNMAPPED;
use super::{BlockState, Ftl, IN_BUFFER};
use crate::device::cache::LpnHasher;
use crate::units::{Lpn, Ppa};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// The newest durable version of a unit whose latest version is not.
#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Slot of that version, or `UNMAPPED` (none: the unit was unmapped).
    slot: u32,
    /// Erases of the slot's block when the version was recorded: a later
    /// erase destroyed it.
    erases: u32,
    /// Commit sequence of that version (an upper bound when it was recorded
    /// from the mapping: every later commit is newer).
    seq: u64,
    /// A host write is among the versions not yet durable (otherwise only
    /// GC moved the unit, and the durable version holds the same data).
    host: bool,
}

/// The journal of not-yet-durable units.
#[derive(Debug, Default)]
pub(crate) struct Durability {
    entries: HashMap<u32, Entry, BuildHasherDefault<LpnHasher>>,
}

/// What a power loss did to the mapping.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PowerLossEffect {
    /// Units whose latest host-written version was lost (acknowledged,
    /// not yet durable).
    pub host_units_lost: u64,
    /// Of those, units that went back to an older version on flash.
    pub reverted: u64,
    /// Of those, units left with no data: never written before, or their
    /// older version's block was erased since.
    pub unmapped: u64,
    /// Units only GC had moved whose flash copy was erased before the
    /// move was programmed (data lost without a host write: should be 0).
    pub relocated_lost: u64,
    /// Program units in flight (their slots are invalid after recovery).
    pub open_blocks_closed: u64,
}

impl Ftl {
    /// Keep the durability journal from now on (a power loss is scheduled).
    pub fn track_durability(&mut self) {
        if self.durability.is_none() {
            self.durability = Some(Box::default());
        }
    }

    /// Is the journal kept (a power loss is scheduled)?
    #[inline]
    pub fn tracks_durability(&self) -> bool {
        self.durability.is_some()
    }

    /// Units whose latest version is not durable yet (journal size).
    pub fn not_durable(&self) -> usize {
        self.durability.as_ref().map_or(0, |d| d.entries.len())
    }

    /// A new version of `lpn` is about to replace `old` (its L2P entry) in
    /// DRAM; `host` when the host wrote it (else GC staged it).
    #[inline]
    pub(super) fn journal_new_version(&mut self, lpn: u32, old: u32, host: bool) {
        if (lpn as u64) >= self.lpns {
            return;
        }
        let seq = self.seq;
        let erases = if old < IN_BUFFER {
            self.erase_count[(old / self.geo.slots_per_block) as usize]
        } else {
            0
        };
        let Some(d) = self.durability.as_mut() else {
            return;
        };
        d.entries
            .entry(lpn)
            .and_modify(|e| e.host |= host)
            .or_insert(Entry {
                // With no entry the latest version is durable: at `old`,
                // or nowhere (unmapped). `IN_BUFFER` without an entry
                // cannot happen; treat it as no version.
                slot: if old < IN_BUFFER { old } else { UNMAPPED },
                erases,
                seq,
                host,
            });
    }

    /// A trim of `lpn` was acknowledged: durable at once (assumption).
    #[inline]
    pub(super) fn journal_trim(&mut self, lpn: u32) {
        if let Some(d) = self.durability.as_mut() {
            d.entries.remove(&lpn);
        }
    }

    /// The program holding `lpn` at `ppa` (commit sequence `seq`) finished:
    /// that version is durable now.
    pub fn programmed(&mut self, lpn: Lpn, ppa: Ppa, seq: u64) {
        if self.durability.is_none() {
            return;
        }
        let latest = self.l2p(lpn.0) == ppa.0;
        let erases = self.erase_count[(ppa.0 / self.geo.slots_per_block) as usize];
        let Some(d) = self.durability.as_mut() else {
            return;
        };
        if latest {
            d.entries.remove(&lpn.0);
        } else if let Some(e) = d.entries.get_mut(&lpn.0) {
            if seq > e.seq {
                *e = Entry {
                    slot: ppa.0,
                    erases,
                    seq,
                    host: e.host,
                };
            }
        }
    }

    /// The power-loss capacitors programmed `lpn`'s latest version (in
    /// DRAM): it is durable; the mapping keeps it.
    pub fn saved_by_capacitors(&mut self, lpn: u32) {
        if let Some(d) = self.durability.as_mut() {
            d.entries.remove(&lpn);
        }
    }

    /// The commit sequence number the next committed slot gets, less one.
    #[inline]
    pub fn commit_seq(&self) -> u64 {
        self.seq
    }

    /// The power fails: every unit whose latest version was not durable
    /// goes back to its newest durable version (or to unmapped), programs
    /// in flight leave invalid slots (`in_flight`: their first slots and
    /// lengths), open blocks are closed and GC victims return to the closed
    /// blocks. `erasing`: blocks whose erase had been issued (an
    /// interrupted erase leaves nothing readable). What is left is the
    /// mapping recovery rebuilds.
    pub fn power_loss(&mut self, in_flight: &[(Ppa, u32)], erasing: &[u32]) -> PowerLossEffect {
        let mut fx = PowerLossEffect::default();
        let entries = self
            .durability
            .as_mut()
            .map(|d| std::mem::take(&mut d.entries))
            .unwrap_or_default();
        let mut sorted: Vec<(u32, Entry)> = entries.into_iter().collect();
        sorted.sort_unstable_by_key(|&(l, _)| l);
        for (lpn, e) in sorted {
            let cur = self.l2p(lpn);
            if cur < IN_BUFFER {
                // Its program never finished.
                self.invalidate_slot(cur);
            }
            let spb = self.geo.slots_per_block;
            let intact = e.slot < IN_BUFFER
                && self.erase_count[(e.slot / spb) as usize] == e.erases
                && !erasing.contains(&(e.slot / spb))
                && self.p2l(e.slot) == UNMAPPED
                && !matches!(
                    self.state[(e.slot / spb) as usize],
                    BlockState::Free | BlockState::Bad | BlockState::Retired
                );
            if intact {
                self.set_l2p(lpn, e.slot);
                self.set_p2l(e.slot, lpn);
                self.valid[(e.slot / spb) as usize] += 1;
            } else {
                self.mapped -= (cur != UNMAPPED) as u64;
                self.set_l2p(lpn, UNMAPPED);
            }
            if e.host {
                fx.host_units_lost += 1;
                if intact {
                    fx.reverted += 1;
                } else {
                    fx.unmapped += 1;
                }
            } else if !intact {
                fx.relocated_lost += 1;
            }
        }
        // Slots of programs in flight that still map a unit (translation
        // pages, or data the journal did not cover) are invalid too.
        for &(first, n) in in_flight {
            for s in first.0..first.0 + n {
                let l = self.p2l(s);
                if l != UNMAPPED && (l as u64) < self.lpns {
                    self.invalidate_slot(s);
                    self.set_l2p(l, UNMAPPED);
                    self.mapped -= 1;
                    fx.relocated_lost += 1;
                }
            }
        }
        for u in 0..self.units.len() {
            // An open SLC block is closed as the drive closes it when idle.
            self.close_slc_active(u as u32);
            let unit = &mut self.units[u];
            for a in [unit.active.take(), unit.map_active.take()]
                .into_iter()
                .flatten()
            {
                let bid = u * self.geo.blocks_per_unit as usize + a.0 as usize;
                if self.state[bid] == BlockState::Active {
                    self.state[bid] = BlockState::Closed;
                    self.close_seq[bid] = self.seq;
                    fx.open_blocks_closed += 1;
                }
            }
        }
        // GC and folding stop: their victims are closed blocks again.
        let bpu = self.geo.blocks_per_unit as usize;
        for b in 0..self.state.len() {
            if self.state[b] == BlockState::Victim {
                if !self.slc_mode.is_empty() && self.slc_mode[b] {
                    self.state[b] = BlockState::SlcClosed;
                    self.units[b / bpu].slc_closed += 1;
                } else {
                    self.state[b] = BlockState::Closed;
                }
            }
        }
        fx
    }
}

/// Bytes a block summary or out-of-band area holds per slot: its LPN and
/// its commit sequence number, 4 B each (assumption).
pub const SUMMARY_BYTES_PER_SLOT: u64 = 8;

/// The reads recovery makes on one parallel unit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct UnitScan {
    /// Pages of block summaries read: each closed block's summary, written
    /// in its last pages, lists the LPN and sequence number of each of its
    /// slots (`SUMMARY_BYTES_PER_SLOT` each) and takes as many pages as that needs.
    pub summary_reads: u64,
    /// Out-of-band areas read: one per page row written in an open block
    /// (it has no summary yet).
    pub oob_reads: u64,
    /// Page reads of the last checkpoint (its record, and with the whole
    /// mapping in DRAM the translation pages on flash; units programmed
    /// together are read together).
    pub checkpoint_reads: u64,
    /// Mapping units those reads move.
    pub checkpoint_units: u64,
    /// Array time of those reads (the caller's `read_time` per page).
    pub array_time: crate::units::Time,
}

impl Ftl {
    /// What recovery reads to rebuild the mapping: the summary of every
    /// closed block (only those closed after commit sequence `since`, the
    /// start of the last checkpoint, if there is one) and the out-of-band
    /// area of every written page row of every open block, per unit.
    /// `read_time(slc, page)`: the array read time of page `page` of a
    /// block (in SLC mode when `slc`).
    pub fn recovery_scan(
        &self,
        since: Option<u64>,
        read_time: impl Fn(bool, u32) -> crate::units::Time,
    ) -> Vec<UnitScan> {
        let g = &self.geo;
        let row = (g.planes_per_unit * g.slots_per_page).max(1);
        let page_bytes =
            (g.planes_per_unit as u64 * g.slots_per_page as u64 * g.mapping_unit.0).max(1);
        let bpu = g.blocks_per_unit;
        let mut out = vec![UnitScan::default(); self.units.len()];
        for (u, unit) in self.units.iter().enumerate() {
            let s = &mut out[u];
            for b in 0..bpu {
                let bid = (u as u32 * bpu + b) as usize;
                let slc = !self.slc_mode.is_empty() && self.slc_mode[bid];
                if !self.map_block.is_empty() && self.map_block[bid] {
                    // Translation pages and checkpoint records: the data
                    // blocks' summaries rebuild what they hold.
                    continue;
                }
                let written = match self.state[bid] {
                    BlockState::Free | BlockState::Bad | BlockState::Retired => continue,
                    BlockState::Active => [unit.active, unit.map_active, unit.slc_active]
                        .into_iter()
                        .flatten()
                        .find(|&(ab, _)| ab == b)
                        .map(|(_, off)| off),
                    _ => None,
                };
                match written {
                    Some(off) => {
                        let rows = off.div_ceil(row);
                        s.oob_reads += rows as u64;
                        for r in 0..rows {
                            s.array_time += read_time(slc, r);
                        }
                    }
                    None if since.is_some_and(|s| self.close_seq[bid] <= s) => {}
                    None => {
                        let pages = if slc {
                            g.pages_per_block / g.bits.max(1)
                        } else {
                            g.pages_per_block
                        };
                        let spb = if slc {
                            g.slots_per_block / g.bits.max(1)
                        } else {
                            g.slots_per_block
                        };
                        let n = (spb as u64 * SUMMARY_BYTES_PER_SLOT)
                            .div_ceil(page_bytes)
                            .max(1);
                        s.summary_reads += n;
                        for k in 0..n as u32 {
                            s.array_time += read_time(slc, pages.saturating_sub(1 + k));
                        }
                    }
                }
            }
        }
        out
    }
}
