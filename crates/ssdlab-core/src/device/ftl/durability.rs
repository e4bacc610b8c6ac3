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
use super::{buffered, on_flash, BlockState, Ftl, IN_BUFFER};
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
    /// Block and hybrid mapping: the LPN, commit sequence and block erase
    /// count of each slot planned but not yet programmed (their programs
    /// are steps of a group, timed after the plan, which may already have
    /// counted a later erase of the block).
    planned: HashMap<u32, (u32, u64, u32), BuildHasherDefault<LpnHasher>>,
    /// Open blocks the power loss closed: (unit, translation-page block,
    /// local block, next slot offset), for a drive that runs on.
    closed: Vec<(u32, bool, u32, u32)>,
    /// What the power loss did to each unit that lost its latest host
    /// version or was left unmapped: (LPN, an older version was left).
    outcomes: Vec<(u32, bool)>,
    /// Block or hybrid mapping: blocks a plan had erased whose erase was
    /// never issued (they hold what they held), for the block map's rebuild.
    unerased: Vec<u32>,
    /// Block or hybrid mapping: units the power loss moved, unmapped or
    /// left in DRAM for the capacitors (their logical blocks are rebuilt).
    touched: Vec<u32>,
    /// Block or hybrid mapping with a data store: (slot, LPN) of each slot
    /// planned since the drive last took them ([`Ftl::take_planned`]).
    recent: Option<Vec<(u32, u32)>>,
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
        // The journal's paths read counts and P2L entries directly.
        self.apply_invalidations();
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
        let erases = if on_flash(old) {
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
                // or nowhere (unmapped). In the buffer without an entry
                // cannot happen; treat it as no version.
                slot: if on_flash(old) { old } else { UNMAPPED },
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
        let erases = self.erase_count[(ppa.0 / self.geo.slots_per_block) as usize];
        self.programmed_at(lpn, ppa, seq, erases);
    }

    /// [`Ftl::programmed`], with the block's erase count when the version
    /// was written there.
    fn programmed_at(&mut self, lpn: Lpn, ppa: Ppa, seq: u64, erases: u32) {
        let latest = self.l2p(lpn.0) == ppa.0;
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

    /// Block or hybrid mapping committed `lpn` to `slot` (the commit
    /// sequence is the FTL's current one): durable when the program step
    /// holding the slot finishes ([`Ftl::hybrid_programmed`]).
    #[inline]
    pub(super) fn note_planned(&mut self, slot: u32, lpn: u32) {
        let seq = self.seq;
        let bid = slot / self.geo.slots_per_block;
        self.hybrid_changed(bid);
        let erases = self.erase_count[bid as usize];
        if let Some(d) = self.durability.as_mut() {
            d.planned.insert(slot, (lpn, seq, erases));
            if let Some(r) = d.recent.as_mut() {
                r.push((slot, lpn));
            }
        }
    }

    /// Block or hybrid mapping with a data store: list the slots planned
    /// from now on, for [`Ftl::take_planned`] (the store notes what each
    /// program carries).
    pub fn list_planned(&mut self) {
        if let Some(d) = self.durability.as_mut() {
            d.recent.get_or_insert_with(Vec::new);
        }
    }

    /// (slot, LPN) of each slot planned since the last call (with
    /// [`Ftl::list_planned`]).
    pub fn take_planned(&mut self) -> Vec<(u32, u32)> {
        self.durability
            .as_mut()
            .and_then(|d| d.recent.as_mut())
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// (slot, LPN) of the slots planned and not yet programmed among the
    /// `n` from `first`.
    pub fn planned_in(&self, first: Ppa, n: u32) -> Vec<(u32, u32)> {
        let Some(d) = self.durability.as_ref() else {
            return Vec::new();
        };
        (first.0..first.0 + n)
            .filter_map(|s| d.planned.get(&s).map(|p| (s, p.0)))
            .collect()
    }

    /// The program unit of `n` slots from `first` (a step of a block or
    /// hybrid mapping group) finished: the versions planned there are
    /// durable.
    pub fn hybrid_programmed(&mut self, first: Ppa, n: u32) {
        self.hybrid_changed(first.0 / self.geo.slots_per_block);
        if self.durability.is_none() {
            return;
        }
        for s in first.0..first.0 + n {
            let planned = self.durability.as_mut().and_then(|d| d.planned.remove(&s));
            if let Some((l, seq, erases)) = planned {
                self.programmed_at(Lpn(l), Ppa(s), seq, erases);
            }
        }
    }

    /// Block or hybrid mapping with power-loss protection: host data of
    /// the groups under way (committed to slots whose programs have not
    /// finished) is still in DRAM, so the capacitors save it as they save
    /// the buffer; their merges are abandoned (the units they were copying
    /// go back to their old places, still intact: [`Ftl::power_loss`]).
    /// At most `limit` of them (what the capacitors' energy covers), in
    /// the order they were planned; the rest stay in the journal (lost).
    /// Returns how many units this saves.
    pub fn hybrid_save_host_versions(&mut self, limit: u64) -> u64 {
        if self.hybrid.is_none() {
            return 0;
        }
        let Some(d) = self.durability.as_ref() else {
            return 0;
        };
        // (planned commit sequence, LPN) of host data in groups under way.
        let mut host: Vec<(u64, u32)> = d
            .entries
            .iter()
            .filter(|(_, e)| e.host)
            .filter_map(|(&l, _)| {
                let cur = self.l2p(l);
                on_flash(cur).then(|| (d.planned.get(&cur).map_or(0, |p| p.1), l))
            })
            .collect();
        host.sort_unstable();
        host.truncate(limit as usize);
        for &(_, l) in &host {
            // Planned, not programmed: saved from DRAM instead.
            let cur = self.l2p(l);
            self.invalidate_slot(cur);
            self.set_l2p(l, IN_BUFFER);
            if let Some(d) = self.durability.as_mut() {
                d.entries.remove(&l);
                d.touched.push(l);
            }
        }
        host.len() as u64
    }

    /// Units [`Ftl::hybrid_save_host_versions`] would save.
    pub fn hybrid_host_in_groups(&self) -> u64 {
        if self.hybrid.is_none() {
            return 0;
        }
        self.durability.as_ref().map_or(0, |d| {
            d.entries
                .iter()
                .filter(|(&l, e)| e.host && on_flash(self.l2p(l)))
                .count() as u64
        })
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
    /// interrupted erase leaves nothing readable). `unerased`: blocks block
    /// or hybrid mapping erased in a plan whose erase was never issued (on
    /// flash the data is still there; the erase the plan counted is taken
    /// back). What is left is the mapping recovery rebuilds.
    pub fn power_loss(
        &mut self,
        in_flight: &[(Ppa, u32)],
        erasing: &[u32],
        unerased: &[u32],
    ) -> PowerLossEffect {
        let mut fx = PowerLossEffect::default();
        // The plans counted these erases; they never happened, so the
        // blocks' wear goes back (their data is still on flash).
        for &b in unerased {
            let e = &mut self.erase_count[b as usize];
            *e = e.saturating_sub(1);
        }
        let entries = self
            .durability
            .as_mut()
            .map(|d| std::mem::take(&mut d.entries))
            .unwrap_or_default();
        let mut sorted: Vec<(u32, Entry)> = entries.into_iter().collect();
        sorted.sort_unstable_by_key(|&(l, _)| l);
        if self.hybrid.is_some() {
            if let Some(d) = self.durability.as_mut() {
                d.touched.extend(sorted.iter().map(|&(l, _)| l));
            }
        }
        // The latest versions' programs never finished: their slots first
        // (a block a plan erased and took again may hold one where another
        // unit's durable version still is).
        for &(lpn, _) in &sorted {
            let cur = self.l2p(lpn);
            if on_flash(cur) {
                self.invalidate_slot(cur);
            }
        }
        let spb = self.geo.slots_per_block;
        for (lpn, e) in sorted {
            let cur = self.l2p(lpn);
            let b = (e.slot / spb) as usize;
            let unerased_here = if on_flash(e.slot) {
                unerased.iter().filter(|&&x| x as usize == b).count() as u32
            } else {
                0
            };
            let intact = on_flash(e.slot)
                && self.erase_count[b] == e.erases
                && !erasing.contains(&(b as u32))
                && self.p2l(e.slot) == UNMAPPED
                && (unerased_here > 0
                    || !matches!(
                        self.state[b],
                        BlockState::Free | BlockState::Bad | BlockState::Retired
                    ));
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
            if e.host || !intact {
                if let Some(d) = self.durability.as_mut() {
                    d.outcomes.push((lpn, intact));
                }
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
                    if let Some(d) = self.durability.as_mut() {
                        d.outcomes.push((l, false));
                        d.touched.push(l);
                    }
                }
            }
        }
        for u in 0..self.units.len() {
            // An open SLC block is closed as the drive closes it when idle.
            self.close_slc_active(u as u32);
            let unit = &mut self.units[u];
            for (map, a) in [(false, unit.active.take()), (true, unit.map_active.take())] {
                let Some(a) = a else {
                    continue;
                };
                let bid = u * self.geo.blocks_per_unit as usize + a.0 as usize;
                if self.state[bid] == BlockState::Active {
                    self.state[bid] = BlockState::Closed;
                    self.close_seq[bid] = self.seq;
                    fx.open_blocks_closed += 1;
                    if let Some(d) = self.durability.as_mut() {
                        d.closed.push((u as u32, map, a.0, a.1));
                    }
                }
            }
        }
        self.return_victims();
        if self.hybrid.is_some() {
            self.hybrid_power_loss();
            if let Some(d) = self.durability.as_mut() {
                d.unerased = unerased.to_vec();
            }
        }
        fx
    }

    /// The slot of `lpn`'s newest durable version while its latest is not
    /// durable (`UNMAPPED`: none), or `None` (its latest is durable, or no
    /// journal is kept).
    pub fn journal_slot(&self, lpn: u32) -> Option<u32> {
        self.durability.as_ref()?.entries.get(&lpn).map(|e| e.slot)
    }

    /// What the last power loss did to each unit that lost its latest host
    /// version or was left unmapped: (LPN, an older version was left),
    /// taken once.
    pub fn take_power_loss_outcomes(&mut self) -> Vec<(u32, bool)> {
        self.durability
            .as_mut()
            .map(|d| std::mem::take(&mut d.outcomes))
            .unwrap_or_default()
    }

    /// GC and folding stop: their victims are closed blocks again.
    fn return_victims(&mut self) {
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
    }

    /// The power returns after a power loss and recovery, so the drive can
    /// run on: the tables are the mapping recovery rebuilt (see
    /// [`Ftl::power_loss`]). What the power-loss capacitors programmed from
    /// DRAM (`saved`: data units in the flush's order; metadata pages
    /// waiting in DRAM are found in the tables) gets the slots that flush
    /// wrote (functionally: whole program units dealt over the parallel
    /// units in striping order, the last padded); GC victims are closed
    /// blocks again; the journal is dropped and the counters start again.
    /// Block and hybrid mapping rebuild their block map from the recovered
    /// mapping first (`Ftl::hybrid_rebuild`) and find what the capacitors
    /// saved in the tables.
    pub fn power_on(&mut self, saved: &[u32]) -> Result<(), String> {
        self.return_victims();
        if self.hybrid.is_some() {
            let (unerased, mut touched) = self
                .durability
                .take()
                .map(|d| (d.unerased, d.touched))
                .unwrap_or_default();
            touched.extend_from_slice(saved);
            self.hybrid_checkpoint_power_on();
            self.hybrid_rebuild(&unerased, &touched)?;
            self.reset_stats();
            return Ok(());
        }
        // The firmware resumes writing the open blocks the power loss
        // closed, after the pages the interrupted programs left unreadable
        // (their slots are invalid), rather than leave their room unused:
        // a unit at its GC floor would otherwise have nowhere to copy to.
        let closed = self
            .durability
            .as_mut()
            .map(|d| std::mem::take(&mut d.closed))
            .unwrap_or_default();
        let bpu = self.geo.blocks_per_unit;
        for (u, map, b, off) in closed {
            let bid = (u * bpu + b) as usize;
            let unit = &mut self.units[u as usize];
            let frontier = if map {
                &mut unit.map_active
            } else {
                &mut unit.active
            };
            if self.state[bid] == BlockState::Closed && frontier.is_none() {
                self.state[bid] = BlockState::Active;
                *frontier = Some((b, off));
            }
        }
        let spp = self.geo.slots_per_program as usize;
        let mut data: Vec<Lpn> = Vec::with_capacity(saved.len());
        let mut seen: std::collections::HashSet<u32, BuildHasherDefault<LpnHasher>> =
            Default::default();
        for &l in saved {
            if (l as u64) < self.lpns && buffered(self.l2p(l)) && seen.insert(l) {
                data.push(Lpn(l));
            }
        }
        for chunk in data.chunks(spp) {
            let unit = self.next_unit_functional();
            self.collect_to_floor_functional(unit);
            self.program_functional(unit, chunk);
        }
        // Metadata pages (translation pages, checkpoint records, validity
        // and directory pages) that were waiting in DRAM.
        let meta: Vec<u32> = (self.lpns as u32..self.l2p.len() as u32)
            .filter(|&l| buffered(self.l2p(l)))
            .collect();
        for &l in &meta {
            let unit = self.next_unit_functional();
            self.stage_translation_functional(unit, l - self.lpns as u32);
        }
        self.flush_leftovers();
        {
            // A unit at or below its host floor (GC had taken its last free
            // block when the power failed, or the programs above did), whose
            // GC victim's copies in DRAM went back to the victim, may have
            // too little room left for the copies: collect (functionally,
            // untimed, as firmware does before it takes host writes) until
            // every unit is above its floor, the state the steady
            // preconditioner leaves (found by the swarm, seed 2652: GC and
            // host writes waited for each other for ever).
            for _ in 0..4 {
                let mut low = false;
                for u in 0..self.geo.units {
                    self.collect_to_floor_functional(u);
                    low |= self.free_blocks(u) <= self.cfg.gc_hard_threshold;
                }
                self.flush_leftovers();
                if !low {
                    break;
                }
            }
        }
        let left = data
            .iter()
            .map(|l| l.0)
            .chain(meta.iter().copied())
            .filter(|&l| buffered(self.l2p(l)))
            .count();
        if left > 0 {
            return Err(format!(
                "after the power loss, {left} units the capacitors saved found no free slot on flash (the drive is too full to run on)"
            ));
        }
        self.durability = None;
        self.reset_stats();
        Ok(())
    }

    /// Block or hybrid mapping after the power loss: a block that holds
    /// recovered data but that a plan had erased (freed, or retired at that
    /// erase) was never erased on flash: it is a closed block again. The
    /// block map in DRAM is gone: the consistency check skips it until a
    /// drive that runs on rebuilds it from the recovered L2P
    /// (`Ftl::hybrid_rebuild`).
    fn hybrid_power_loss(&mut self) {
        let bpu = self.geo.blocks_per_unit as usize;
        for b in 0..self.state.len() {
            if self.valid[b] > 0 && matches!(self.state[b], BlockState::Free | BlockState::Retired)
            {
                let local = (b % bpu) as u32;
                self.units[b / bpu].free.retain(|&x| x != local);
                self.state[b] = BlockState::Closed;
            }
        }
        self.hybrid_map_lost = true;
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
            let roles = if self.hybrid.is_some() {
                self.hybrid_block_roles(u as u32)
            } else {
                Vec::new()
            };
            for b in 0..bpu {
                let bid = (u as u32 * bpu + b) as usize;
                let slc = !self.slc_mode.is_empty() && self.slc_mode[bid];
                if !self.map_block.is_empty() && self.map_block[bid] {
                    // Translation pages and checkpoint records: the data
                    // blocks' summaries rebuild what they hold.
                    continue;
                }
                if self.hybrid.is_some() {
                    // With a checkpoint, only blocks the block map changed
                    // since it began: one erased since is read once (the
                    // checkpoint had it in use); checkpoint blocks are
                    // read by `checkpoint_reads`.
                    if self.is_hybrid_checkpoint_block(u as u32, b)
                        || !self.hybrid_scan_needed(bid as u32, since)
                    {
                        continue;
                    }
                    if matches!(
                        self.state[bid],
                        BlockState::Free | BlockState::Bad | BlockState::Retired
                    ) {
                        if since.is_some() && self.state[bid] == BlockState::Free {
                            s.oob_reads += 1;
                            s.array_time += read_time(slc, 0);
                        }
                        continue;
                    }
                    // Block or hybrid mapping: no summaries. A data block's
                    // first page row names its logical block and a binary
                    // search finds its write pointer (a full one needs no
                    // search); a log's every written row is read (its units
                    // are out of place).
                    let rows_per_block = g.pages_per_block.max(1);
                    let (log, wp) = roles[b as usize].unwrap_or((false, g.slots_per_block));
                    let rows = wp.div_ceil(row).min(rows_per_block);
                    let reads = if log {
                        rows
                    } else if rows >= rows_per_block {
                        1
                    } else {
                        1 + (u32::BITS - rows_per_block.leading_zeros())
                    };
                    s.oob_reads += reads as u64;
                    for r in 0..reads {
                        s.array_time += read_time(slc, r);
                    }
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
