//! Block and hybrid log-block mapping (`ftl.mapping = "block" | "bast" |
//! "fast"`; seed 001's D-log with a block buffer unit, and its W-log).
//!
//! Each parallel unit maps its own logical blocks: program unit `k` of the
//! logical space goes to unit `stripe[k % units]`, as the page FTL's
//! sequential fill places it, so a sequential stream still stripes over
//! every die; a logical block is one physical block's worth of those
//! mapping units (`slots_per_block`), and unit `i` of it has the fixed place
//! `i` in its data block.
//!
//! * `block`: a write lands in its place if that place is at or past the
//!   data block's write pointer (NAND programs a block's pages in order);
//!   otherwise the block is copied: a new block takes every valid unit and
//!   the new data, in place order, and the old block is erased (a full
//!   merge).
//! * `bast` (Kim et al., "A space-efficient flash translation layer for
//!   CompactFlash systems", IEEE TCE 2002): a rewrite goes to the logical
//!   block's own log block, appended in arrival order. A full log, or a
//!   log taken for another logical block when all `log_blocks` are in use
//!   (least recently written first), is merged: a **switch** when it holds
//!   every place in order (it becomes the data block; the old one is
//!   erased: one erase, no copies), a **partial** merge when it holds the
//!   first places in order (the rest are copied in behind them; one erase),
//!   else a **full** merge (every valid unit copied into a new block; the
//!   data and log blocks erased).
//! * `fast` (Lee et al., "A log buffer-based flash translation layer using
//!   fully-associative sector translation", ACM TECS 2007): one sequential
//!   log takes a rewrite of a block's first place and the places that
//!   follow it in order (switch or partial merge when it is replaced or
//!   full); every other rewrite is appended to shared random logs
//!   (`log_blocks - 1` of them); when they are all full the oldest is
//!   reclaimed with a full merge of every logical block it holds data of.
//!
//! A program unit holds mapping units of one block only; a log's partly
//! filled program unit is padded (the log is then no longer in place order).
//! Merges are planned here, functionally: the mapping, block states, erase
//! counts and free lists change at once, and the drive times the plan's
//! reads, programs and erases on the unit's die in that order
//! ([`HybridStep`]). Writes reach a unit one group at a time, after the
//! previous group's steps finished, so no plan sees another's half-done work.

mod checkpoint;
mod rebuild;
mod steady;

pub use checkpoint::{hybrid_checkpoint_reserve, hybrid_checkpoint_size};

use super::map::SeqFill;
use super::{buffered, on_flash, BlockState, Ftl};
use crate::config::MappingScheme;
use crate::nand::Geometry;
use crate::units::{Lpn, Ppa};

/// No block.
const NONE: u32 = u32::MAX;

/// Logical blocks of one parallel unit: its share of `logical_units`.
pub fn logical_blocks_per_unit(g: &Geometry, logical_units: u64) -> u64 {
    let spp = g.slots_per_program.max(1) as u64;
    let pus_per_unit = logical_units.div_ceil(spp).div_ceil(g.units.max(1) as u64);
    (pus_per_unit * spp).div_ceil(g.slots_per_block.max(1) as u64)
}

/// Kind of merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeKind {
    /// A log holding every place in order becomes the data block.
    Switch,
    /// A log holding the first places in order takes the rest and becomes the data block.
    Partial,
    /// Every valid unit of a logical block copied into a new block.
    Full,
}

/// What the drive times for one group of host writes on one unit, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HybridStep {
    /// Program the program unit starting at this slot (host data, padded).
    Program(Ppa),
    /// A merge: its reads, then its programs, then its erases.
    Merge(MergePlan),
}

/// The flash work of one merge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergePlan {
    /// Kind.
    pub kind: MergeKind,
    /// Slots read (valid units copied), ascending.
    pub reads: Vec<Ppa>,
    /// First slot of each program unit programmed, in program order.
    pub programs: Vec<Ppa>,
    /// Blocks erased (global block ids).
    pub erases: Vec<u32>,
}

/// Erases timed with the step before them (the merge that emptied the
/// blocks), or as a step of their own.
fn push_erases(steps: &mut Vec<HybridStep>, erases: Vec<u32>) {
    if let Some(HybridStep::Merge(m)) = steps.last_mut() {
        m.erases.extend(erases);
    } else {
        steps.push(HybridStep::Merge(MergePlan {
            kind: MergeKind::Full,
            reads: Vec::new(),
            programs: Vec::new(),
            erases,
        }));
    }
}

/// A log block.
#[derive(Debug, Clone, Copy)]
struct Log {
    /// Block within the unit.
    block: u32,
    /// Logical block it logs (BAST, and FAST's sequential log).
    lbn: u32,
    /// Next slot offset to program.
    wp: u32,
    /// Every slot below `wp` holds its own place (no padding, no other place).
    aligned: bool,
    /// Last write (least recently written log goes first).
    used: u64,
}

/// One unit's block map.
#[derive(Debug, Clone, Default)]
struct UnitMap {
    /// Per logical block: its data block (within the unit), or NONE.
    data: Vec<u32>,
    /// Per logical block: the data block's write pointer (slot offset).
    dwp: Vec<u32>,
    /// BAST: the open logs; FAST: the random logs, oldest first.
    logs: Vec<Log>,
    /// FAST: the sequential log.
    sw: Option<Log>,
    /// Groups planned (static wear levelling looks every 8th).
    groups: u64,
}

/// Block and hybrid mapping state (see the module docs).
#[derive(Debug, Clone)]
pub(super) struct Hybrid {
    scheme: MappingScheme,
    log_blocks: u32,
    /// Position of each unit in the stripe.
    pos_of_unit: Vec<u32>,
    units: Vec<UnitMap>,
    clock: u64,
    /// Checkpoint blocks (with `ftl.checkpoint_interval` or `_log_size`).
    ckpt: Option<checkpoint::HybridCheckpoints>,
}

/// Which free block [`Ftl::hybrid_alloc`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pick {
    /// The allocator's usual choice (first free, or least worn).
    Next,
    /// The most worn (the first of them in erase order).
    MostWorn,
}

/// Where a slot goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dest {
    /// Its place in the data block.
    Data,
    /// Appended to a log (BAST's own, or FAST's sequential log).
    Log,
    /// Appended to FAST's random logs.
    Random,
}

impl Hybrid {
    pub(super) fn new(
        scheme: MappingScheme,
        log_blocks: u32,
        g: &Geometry,
        stripe: &[u32],
        lpns: u64,
    ) -> Hybrid {
        let lbns = logical_blocks_per_unit(g, lpns) as usize;
        let mut pos_of_unit = vec![0; g.units as usize];
        for (i, &u) in stripe.iter().enumerate() {
            pos_of_unit[u as usize] = i as u32;
        }
        Hybrid {
            scheme,
            log_blocks,
            pos_of_unit,
            units: (0..g.units)
                .map(|_| UnitMap {
                    data: vec![NONE; lbns],
                    dwp: vec![0; lbns],
                    ..UnitMap::default()
                })
                .collect(),
            clock: 0,
            ckpt: None,
        }
    }
}

impl Ftl {
    /// Block or hybrid mapping in use?
    #[inline]
    pub fn is_hybrid(&self) -> bool {
        self.hybrid.is_some()
    }

    /// (unit, logical block within the unit, place in it) of `lpn`.
    #[inline]
    pub fn hybrid_locate(&self, lpn: u32) -> (u32, u32, u32) {
        let g = &self.geo;
        let (spp, spb, n) = (
            g.slots_per_program,
            g.slots_per_block,
            self.stripe.len() as u32,
        );
        let pu = lpn / spp;
        let unit = self.stripe[(pu % n) as usize];
        let ulp = (pu / n) * spp + lpn % spp;
        (unit, ulp / spb, ulp % spb)
    }

    /// The LPN at `place` of logical block `lbn` of `unit`, if it exists.
    fn hybrid_lpn_at(&self, unit: u32, lbn: u32, place: u32) -> Option<u32> {
        let h = self.hybrid.as_ref()?;
        let g = &self.geo;
        let (spp, n) = (g.slots_per_program as u64, self.stripe.len() as u64);
        let ulp = lbn as u64 * g.slots_per_block as u64 + place as u64;
        let pu = (ulp / spp) * n + h.pos_of_unit[unit as usize] as u64;
        let lpn = pu * spp + ulp % spp;
        (lpn < self.lpns).then_some(lpn as u32)
    }

    /// Writes going to `unit` and this key may share program units and
    /// merges: the logical block (block mapping, BAST) or the unit (FAST).
    #[inline]
    pub fn hybrid_group_key(&self, lpn: u32) -> (u32, u32) {
        let (u, lbn, _) = self.hybrid_locate(lpn);
        match self.hybrid.as_ref().map(|h| h.scheme) {
            Some(MappingScheme::Fast) => (u, 0),
            _ => (u, lbn),
        }
    }

    /// Take an erased block of `unit` for a data or log block: the first
    /// free one, the least worn with wear levelling, or (`Pick::MostWorn`,
    /// static wear levelling's destination for cold data) the most worn.
    fn hybrid_alloc(&mut self, unit: u32, pick: Pick) -> Option<u32> {
        self.hybrid_alloc_where(unit, pick, |_| true)
    }

    /// [`Ftl::hybrid_alloc`] among the free blocks `ok` accepts (`Pick::Next` only).
    fn hybrid_alloc_where(
        &mut self,
        unit: u32,
        pick: Pick,
        ok: impl Fn(u32) -> bool,
    ) -> Option<u32> {
        let u = &mut self.units[unit as usize];
        let base = (unit * self.geo.blocks_per_unit) as usize;
        let erases = |b: u32| self.erase_count[base + b as usize];
        let b = match pick {
            Pick::Next if self.cfg.wear_leveling == super::WearLeveling::None => {
                let i = u.free.iter().position(|&b| ok(b))?;
                u.free.remove(i)?
            }
            Pick::Next => {
                let (i, _) = u
                    .free
                    .iter()
                    .enumerate()
                    .filter(|&(_, &b)| ok(b))
                    .min_by_key(|&(i, &b)| (erases(b), i))?;
                u.free.remove(i)?
            }
            Pick::MostWorn => {
                let (i, _) = u
                    .free
                    .iter()
                    .enumerate()
                    .max_by_key(|&(i, &b)| (erases(b), std::cmp::Reverse(i)))?;
                u.free.remove(i)?
            }
        };
        self.stats.blocks_opened += 1;
        self.stats.free_at_open += u.free.len() as u64;
        let bid = unit * self.geo.blocks_per_unit + b;
        self.state[bid as usize] = BlockState::Active;
        self.hybrid_changed(bid);
        Some(b)
    }

    /// Erase a block of `unit` whose data all moved (now, functionally; the
    /// drive times it with the plan).
    fn hybrid_erase(&mut self, unit: u32, b: u32, erases: &mut Vec<u32>) {
        let bid = unit * self.geo.blocks_per_unit + b;
        debug_assert_eq!(
            self.valid[bid as usize], 0,
            "erasing block {bid} with valid data"
        );
        self.state[bid as usize] = BlockState::Victim;
        self.erase(bid);
        self.hybrid_changed(bid);
        self.stats.merge_erases += 1;
        erases.push(bid);
    }

    /// Move the latest version of `lpn` (on flash at `old`) to `new`.
    fn hybrid_move(&mut self, lpn: u32, old: u32, new: u32) {
        if self.durability.is_some() {
            self.journal_new_version(lpn, old, false);
        }
        self.invalidate_slot(old);
        self.set_l2p(lpn, new);
        self.set_p2l(new, lpn);
        self.valid[(new / self.geo.slots_per_block) as usize] += 1;
        self.stats.merge_slots_copied += 1;
        // The copy is a version of its own (the sequence number its
        // out-of-band area holds).
        self.seq += 1;
        self.note_planned(new, lpn);
    }

    /// Record a merge's programs: `pus` (first slot offsets in block `bid`,
    /// ascending) of which `host` slots held host data.
    fn hybrid_merge_programs(&mut self, bid: u32, pus: &[u32], host: u64) -> Vec<Ppa> {
        let spb = self.geo.slots_per_block;
        let spp = self.geo.slots_per_program as u64;
        let n = pus.len() as u64 * spp;
        self.stats.programmed_slots += n;
        self.stats.merge_slots_programmed += n - host;
        pus.iter().map(|&o| Ppa(bid * spb + o)).collect()
    }

    /// Write a group of LPNs (latest versions in the buffer, all of `unit`
    /// and, but for FAST, of one logical block: see
    /// [`Ftl::hybrid_group_key`]): map them, merging where the scheme
    /// must, and append the flash work to `steps`. Returns false if a unit
    /// ran out of erased blocks (worn out: [`Ftl::worn_out`] says why).
    pub fn hybrid_write(&mut self, unit: u32, lpns: &[u32], steps: &mut Vec<HybridStep>) -> bool {
        let Some(scheme) = self.hybrid.as_ref().map(|h| h.scheme) else {
            return false;
        };
        let mut order: Vec<(u32, u32, u32)> = lpns
            .iter()
            .map(|&l| {
                let (_, lbn, place) = self.hybrid_locate(l);
                (lbn, place, l)
            })
            .collect();
        order.sort_unstable();
        let spp = self.geo.slots_per_program;
        // The program unit being filled: (block within the unit, first slot offset).
        let mut open: Option<(u32, u32)> = None;
        let mut i = 0;
        while i < order.len() {
            let (lbn, place, lpn) = order[i];
            if !buffered(self.l2p(lpn)) {
                // Trimmed since it was taken for this group.
                i += 1;
                continue;
            }
            let um = &self.hybrid.as_ref().expect("hybrid").units[unit as usize];
            let data = um.data[lbn as usize];
            // Its place is still erased: past the write pointer, or in the
            // program unit this group is filling there.
            let in_place = data == NONE
                || place >= um.dwp[lbn as usize]
                || open == Some((data, place / spp * spp));
            let dest = if in_place {
                Dest::Data
            } else {
                match scheme {
                    MappingScheme::Block => {
                        // Copy the block, with this group's writes to it.
                        self.close_open(unit, &mut open, steps);
                        let host: Vec<(u32, u32)> = order[i..]
                            .iter()
                            .filter(|o| o.0 == lbn)
                            .map(|o| (o.1, o.2))
                            .collect();
                        i += host.len();
                        if !self.hybrid_full_merge(unit, lbn, &host, steps, Pick::Next) {
                            return false;
                        }
                        continue;
                    }
                    MappingScheme::Bast => Dest::Log,
                    MappingScheme::Fast => {
                        let seq = um.sw.is_some_and(|s| {
                            s.lbn == lbn && s.wp == place && s.wp < self.geo.slots_per_block
                        });
                        if seq || place == 0 {
                            Dest::Log
                        } else {
                            Dest::Random
                        }
                    }
                    MappingScheme::Page => unreachable!("page mapping has no hybrid state"),
                }
            };
            let (block, slot) = match dest {
                Dest::Data => {
                    let um = &self.hybrid.as_ref().expect("hybrid").units[unit as usize];
                    let b = um.data[lbn as usize];
                    let b = if b == NONE {
                        self.close_open(unit, &mut open, steps);
                        let Some(b) = self.hybrid_block(unit, Pick::Next) else {
                            return false;
                        };
                        let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
                        um.data[lbn as usize] = b;
                        um.dwp[lbn as usize] = 0;
                        b
                    } else {
                        b
                    };
                    let pu = place / spp * spp;
                    if open != Some((b, pu)) {
                        self.close_open(unit, &mut open, steps);
                        open = Some((b, pu));
                    }
                    let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
                    um.dwp[lbn as usize] = pu + spp;
                    (b, place)
                }
                Dest::Log => match self.log_slot(unit, lbn, place, scheme, &mut open, steps) {
                    Some(x) => x,
                    None => return false,
                },
                Dest::Random => match self.random_slot(unit, &mut open, steps) {
                    Some(x) => x,
                    None => return false,
                },
            };
            let bid = unit * self.geo.blocks_per_unit + block;
            let ppa = bid * self.geo.slots_per_block + slot;
            self.commit(Lpn(lpn), Ppa(ppa));
            self.note_planned(ppa, lpn);
            i += 1;
        }
        self.close_open(unit, &mut open, steps);
        if self.cfg.wear_leveling == super::WearLeveling::Static {
            let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
            um.groups += 1;
            if um.groups.is_multiple_of(8) {
                let busy: Vec<u32> = order.iter().map(|o| o.0).collect();
                return self.hybrid_static_wl(unit, &busy, steps);
            }
        }
        true
    }

    /// Static wear levelling under block or hybrid mapping: when the unit's
    /// most worn block has been erased more than `static_wl_threshold`
    /// times more than its least worn data block, that block's logical
    /// block (not one of `busy`, this group's) is copied by a full merge
    /// into the most worn free block (cold data parks on worn flash) and the
    /// cold block is erased, so dynamic wear levelling hands it to the
    /// next writes. At most one such move per look; only while the unit
    /// keeps more than two free blocks. Returns false if worn out.
    fn hybrid_static_wl(&mut self, unit: u32, busy: &[u32], steps: &mut Vec<HybridStep>) -> bool {
        let bpu = self.geo.blocks_per_unit;
        let base = (unit * bpu) as usize;
        let max = (base..base + bpu as usize)
            .filter(|&b| !matches!(self.state[b], BlockState::Bad | BlockState::Retired))
            .map(|b| self.erase_count[b])
            .max()
            .unwrap_or(0);
        let um = &self.hybrid.as_ref().expect("hybrid").units[unit as usize];
        let cold = um
            .data
            .iter()
            .enumerate()
            .filter(|&(lbn, &d)| d != NONE && !busy.contains(&(lbn as u32)))
            .map(|(lbn, &d)| (self.erase_count[base + d as usize], lbn as u32))
            .min();
        let Some((e, lbn)) = cold else {
            return true;
        };
        if max.saturating_sub(e) <= self.cfg.static_wl_threshold
            || self.units[unit as usize].free.len() <= 2
        {
            return true;
        }
        self.stats.static_wl_runs += 1;
        self.hybrid_full_merge(unit, lbn, &[], steps, Pick::MostWorn)
    }

    /// Emit the open program unit (if any) as a program step; a log whose
    /// program unit was not full is padded to the next one.
    fn close_open(
        &mut self,
        unit: u32,
        open: &mut Option<(u32, u32)>,
        steps: &mut Vec<HybridStep>,
    ) {
        let Some((b, pu)) = open.take() else { return };
        let spp = self.geo.slots_per_program;
        let bid = unit * self.geo.blocks_per_unit + b;
        self.stats.programmed_slots += spp as u64;
        steps.push(HybridStep::Program(
            Ppa(bid * self.geo.slots_per_block + pu),
        ));
        let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
        for log in um.logs.iter_mut().chain(um.sw.iter_mut()) {
            if log.block == b && log.wp > pu && log.wp < pu + spp {
                log.wp = pu + spp;
                log.aligned = false;
            }
        }
    }

    /// An erased block for `unit` (`pick`), or None (worn out, with the
    /// reason set).
    fn hybrid_block(&mut self, unit: u32, pick: Pick) -> Option<u32> {
        let b = self.hybrid_alloc(unit, pick);
        if b.is_none() && self.worn_out.is_none() {
            self.worn_out = Some(format!(
                "worn out: parallel unit {unit} has no erased block left for {} mapping ({} blocks retired in service)",
                self.cfg.mapping.name(),
                self.grown_bad[unit as usize]
            ));
        }
        b
    }

    /// The slot a rewrite of `place` of `lbn` takes in its log (BAST: the
    /// block's own; FAST: the sequential log), merging logs as needed: a
    /// full log when its block is rewritten again, the least recently
    /// written when BAST needs another, FAST's sequential log when a new
    /// sequential run starts.
    fn log_slot(
        &mut self,
        unit: u32,
        lbn: u32,
        place: u32,
        scheme: MappingScheme,
        open: &mut Option<(u32, u32)>,
        steps: &mut Vec<HybridStep>,
    ) -> Option<(u32, u32)> {
        let spb = self.geo.slots_per_block;
        let spp = self.geo.slots_per_program;
        let h = self.hybrid.as_mut().expect("hybrid");
        h.clock += 1;
        let clock = h.clock;
        let log_blocks = h.log_blocks as usize;
        let um = &mut h.units[unit as usize];
        let mut victim = None;
        let mut existing = None;
        match scheme {
            MappingScheme::Bast => match um.logs.iter().position(|l| l.lbn == lbn) {
                Some(i) if um.logs[i].wp >= spb => victim = Some(um.logs.remove(i)),
                Some(i) => existing = Some(i),
                None if um.logs.len() >= log_blocks => {
                    let i = (0..um.logs.len()).min_by_key(|&i| um.logs[i].used)?;
                    victim = Some(um.logs.remove(i));
                }
                None => {}
            },
            _ => {
                if um
                    .sw
                    .is_some_and(|s| s.lbn == lbn && s.wp == place && s.wp < spb)
                {
                    existing = Some(0);
                } else {
                    victim = um.sw.take();
                }
            }
        }
        let idx = match existing {
            Some(i) => i,
            None => {
                self.close_open(unit, open, steps);
                if let Some(v) = victim {
                    if !self.merge_log(unit, v, steps) {
                        // No block to merge into (worn out): the log stays.
                        let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
                        if scheme == MappingScheme::Bast {
                            um.logs.push(v);
                        } else {
                            um.sw = Some(v);
                        }
                        return None;
                    }
                }
                let b = self.hybrid_block(unit, Pick::Next)?;
                let log = Log {
                    block: b,
                    lbn,
                    wp: 0,
                    aligned: true,
                    used: clock,
                };
                let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
                if scheme == MappingScheme::Bast {
                    um.logs.push(log);
                    um.logs.len() - 1
                } else {
                    um.sw = Some(log);
                    0
                }
            }
        };
        let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
        let log = match scheme {
            MappingScheme::Bast => &mut um.logs[idx],
            _ => um.sw.as_mut().expect("sequential log"),
        };
        let (b, slot) = (log.block, log.wp);
        log.aligned &= slot == place;
        log.used = clock;
        log.wp += 1;
        let pu = slot / spp * spp;
        if *open != Some((b, pu)) {
            self.close_open(unit, open, steps);
            *open = Some((b, pu));
        }
        Some((b, slot))
    }

    /// The slot a rewrite takes in FAST's random logs; the oldest is
    /// reclaimed (full merges of the blocks it holds) when all are full.
    fn random_slot(
        &mut self,
        unit: u32,
        open: &mut Option<(u32, u32)>,
        steps: &mut Vec<HybridStep>,
    ) -> Option<(u32, u32)> {
        let spb = self.geo.slots_per_block;
        let spp = self.geo.slots_per_program;
        let h = self.hybrid.as_mut().expect("hybrid");
        let max = h.log_blocks as usize - 1;
        let um = &mut h.units[unit as usize];
        if um.logs.last().is_none_or(|l| l.wp >= spb) {
            self.close_open(unit, open, steps);
            let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
            if um.logs.len() >= max {
                let victim = um.logs.remove(0);
                if !self.reclaim_random_log(unit, victim, steps) {
                    // Worn out part way: the log (what it still holds) stays.
                    let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
                    um.logs.insert(0, victim);
                    return None;
                }
            }
            let b = self.hybrid_block(unit, Pick::Next)?;
            let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
            um.logs.push(Log {
                block: b,
                lbn: NONE,
                wp: 0,
                aligned: false,
                used: 0,
            });
        }
        let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
        let log = um.logs.last_mut().expect("random log");
        let (b, slot) = (log.block, log.wp);
        log.wp += 1;
        let pu = slot / spp * spp;
        if *open != Some((b, pu)) {
            self.close_open(unit, open, steps);
            *open = Some((b, pu));
        }
        Some((b, slot))
    }

    /// Reclaim a full random log (FAST): a full merge of each logical
    /// block it holds valid data of, then its erase.
    fn reclaim_random_log(&mut self, unit: u32, log: Log, steps: &mut Vec<HybridStep>) -> bool {
        let bid = unit * self.geo.blocks_per_unit + log.block;
        let mut lbns: Vec<u32> = self
            .valid_slots(bid)
            .iter()
            .map(|&(_, l)| self.hybrid_locate(l.0).1)
            .collect();
        lbns.sort_unstable();
        lbns.dedup();
        for lbn in lbns {
            if !self.hybrid_full_merge(unit, lbn, &[], steps, Pick::Next) {
                return false;
            }
        }
        let mut erases = Vec::new();
        self.hybrid_erase(unit, log.block, &mut erases);
        push_erases(steps, erases);
        true
    }

    /// Merge a log of `lbn` (BAST's, or FAST's sequential log): switch,
    /// partial or full, as its contents allow.
    fn merge_log(&mut self, unit: u32, log: Log, steps: &mut Vec<HybridStep>) -> bool {
        let spb = self.geo.slots_per_block;
        let spp = self.geo.slots_per_program;
        let bpu = self.geo.blocks_per_unit;
        let lbn = log.lbn;
        if !log.aligned {
            return self.hybrid_full_merge(unit, lbn, &[], steps, Pick::Next)
                && self.erase_if_empty(unit, log.block, steps);
        }
        let lbid = unit * bpu + log.block;
        let old = self.hybrid.as_ref().expect("hybrid").units[unit as usize].data[lbn as usize];
        let mut reads = Vec::new();
        let mut pus: Vec<u32> = Vec::new();
        // Places past the log's end come from wherever their latest version is.
        for place in log.wp..spb {
            let Some(lpn) = self.hybrid_lpn_at(unit, lbn, place) else {
                break;
            };
            let p = self.l2p(lpn);
            if on_flash(p) {
                reads.push(Ppa(p));
                self.hybrid_move(lpn, p, lbid * spb + place);
                let pu = place / spp * spp;
                if pus.last() != Some(&pu) {
                    pus.push(pu);
                }
            }
        }
        let kind = if log.wp == spb {
            self.stats.merges_switch += 1;
            MergeKind::Switch
        } else {
            self.stats.merges_partial += 1;
            MergeKind::Partial
        };
        let programs = self.hybrid_merge_programs(lbid, &pus, 0);
        let mut erases = Vec::new();
        if old != NONE {
            self.hybrid_erase(unit, old, &mut erases);
        }
        let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
        um.data[lbn as usize] = log.block;
        um.dwp[lbn as usize] = pus.last().map_or(log.wp, |&p| (p + spp).max(log.wp));
        reads.sort_unstable();
        steps.push(HybridStep::Merge(MergePlan {
            kind,
            reads,
            programs,
            erases,
        }));
        true
    }

    /// Erase a former log block once nothing valid is left in it.
    fn erase_if_empty(&mut self, unit: u32, b: u32, steps: &mut Vec<HybridStep>) -> bool {
        let bid = unit * self.geo.blocks_per_unit + b;
        if self.valid[bid as usize] == 0 {
            let mut erases = Vec::new();
            self.hybrid_erase(unit, b, &mut erases);
            push_erases(steps, erases);
        }
        true
    }

    /// Full merge of `lbn`: every valid unit (wherever it is) and the `host`
    /// writes (place, LPN) into a new block (`pick`) in place order; the old
    /// data block, and BAST's log of it, erased.
    fn hybrid_full_merge(
        &mut self,
        unit: u32,
        lbn: u32,
        host: &[(u32, u32)],
        steps: &mut Vec<HybridStep>,
        pick: Pick,
    ) -> bool {
        let Some(nb) = self.hybrid_block(unit, pick) else {
            return false;
        };
        let spb = self.geo.slots_per_block;
        let spp = self.geo.slots_per_program;
        let bpu = self.geo.blocks_per_unit;
        let nbid = unit * bpu + nb;
        let mut reads = Vec::new();
        let mut pus: Vec<u32> = Vec::new();
        let mut h = host.iter().peekable();
        let mut host_slots = 0u64;
        for place in 0..spb {
            let Some(lpn) = self.hybrid_lpn_at(unit, lbn, place) else {
                break;
            };
            let new = nbid * spb + place;
            let written = if h.peek().is_some_and(|&&(p, _)| p == place) {
                let (_, l) = *h.next().expect("peeked");
                // Host data: in the buffer (unless trimmed meanwhile).
                if buffered(self.l2p(l)) {
                    self.commit(Lpn(l), Ppa(new));
                    self.note_planned(new, l);
                    host_slots += 1;
                    true
                } else {
                    false
                }
            } else {
                let p = self.l2p(lpn);
                if on_flash(p) {
                    reads.push(Ppa(p));
                    self.hybrid_move(lpn, p, new);
                    true
                } else {
                    false
                }
            };
            if written {
                let pu = place / spp * spp;
                if pus.last() != Some(&pu) {
                    pus.push(pu);
                }
            }
        }
        self.stats.merges_full += 1;
        let programs = self.hybrid_merge_programs(nbid, &pus, host_slots);
        let mut erases = Vec::new();
        let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
        let old = std::mem::replace(&mut um.data[lbn as usize], nb);
        um.dwp[lbn as usize] = pus.last().map_or(0, |&p| p + spp);
        // BAST's log of this block, and FAST's sequential log if it logs
        // it, hold nothing valid now.
        let mut logs = Vec::new();
        match self.cfg.mapping {
            MappingScheme::Bast => {
                if let Some(i) = um.logs.iter().position(|l| l.lbn == lbn) {
                    logs.push(um.logs.remove(i).block);
                }
            }
            MappingScheme::Fast if um.sw.is_some_and(|s| s.lbn == lbn) => {
                logs.push(um.sw.take().expect("sequential log").block);
            }
            _ => {}
        }
        if old != NONE {
            self.hybrid_erase(unit, old, &mut erases);
        }
        for b in logs {
            self.hybrid_erase(unit, b, &mut erases);
        }
        reads.sort_unstable();
        steps.push(HybridStep::Merge(MergePlan {
            kind: MergeKind::Full,
            reads,
            programs,
            erases,
        }));
        true
    }
}

impl Ftl {
    /// Sequential fill under block or hybrid mapping: every logical block
    /// written in place. On a fresh drive this is the page FTL's closed
    /// form ([`SeqFill`]: the same places, each unit's blocks in free-list
    /// order), set per program unit without touching the tables; else LPN
    /// by LPN.
    /// Returns why it ran LPN by LPN (None: in closed form).
    pub(super) fn hybrid_fill(&mut self) -> Option<&'static str> {
        let n = self.lpns;
        let (spp, spb, bpu) = (
            self.geo.slots_per_program as u64,
            self.geo.slots_per_block as u64,
            self.geo.blocks_per_unit,
        );
        let fill = SeqFill::new(&self.geo, &self.stripe, n);
        // The logs and the merge target come from the blocks left free
        // (bad and replacement blocks are not on the free lists).
        let fewest_free = self.units.iter().map(|u| u.free.len()).min().unwrap_or(0) as u32;
        let floor = self.cfg.log_blocks + 1 + bpu.saturating_sub(fewest_free);
        let fresh = self.seq == 0
            && self.fill.n == 0
            && self.stats.host_slots == 0
            && self.stats.programmed_slots == 0
            && self.units.iter().enumerate().all(|(u, m)| {
                m.active.is_none()
                    && self
                        .hybrid
                        .as_ref()
                        .is_some_and(|h| h.units[u].data.iter().all(|&d| d == NONE))
            });
        let floor_why =
            "a fill that reaches the log blocks' reserve [ftl.log_blocks, ftl.over_provisioning]";
        if let Some(why) = fill.per_lpn_because(fresh, floor, floor_why) {
            let mut steps = Vec::new();
            let mut l = 0u64;
            while l < n {
                let cnt = spp.min(n - l);
                let chunk: Vec<u32> = (l..l + cnt).map(|x| x as u32).collect();
                for &x in &chunk {
                    self.write_to_buffer(Lpn(x));
                }
                let unit = self.hybrid_locate(chunk[0]).0;
                if !self.hybrid_write(unit, &chunk, &mut steps) {
                    return Some(why);
                }
                steps.clear();
                l += cnt;
            }
            return Some(why);
        }
        // Each unit's blocks in free-list order (gaps where blocks are bad).
        let fill = fill.with_free_lists(self.units.iter().map(|u| u.free.iter()));
        let units = self.stripe.len() as u64;
        let ppb = spb / spp;
        let batches = n.div_ceil(spp);
        let mut programs = vec![0u64; self.geo.units as usize];
        for k in 0..batches {
            let cnt = spp.min(n - k * spp);
            let unit = self.stripe[(k % units) as usize];
            let j = k / units;
            let bid = unit as u64 * bpu as u64 + fill.block(unit, (j / ppb) as u32) as u64;
            self.valid[bid as usize] += cnt as u32;
            programs[unit as usize] += 1;
        }
        for unit in 0..self.geo.units {
            let p = programs[unit as usize];
            for lbn in 0..p.div_ceil(ppb) {
                let popped = self.units[unit as usize].free.pop_front();
                let b = fill.block(unit, lbn as u32);
                debug_assert_eq!(popped, Some(b));
                let bid = unit * bpu + b;
                self.state[bid as usize] = BlockState::Active;
                self.stats.blocks_opened += 1;
                let um = &mut self.hybrid.as_mut().expect("hybrid").units[unit as usize];
                um.data[lbn as usize] = b;
                um.dwp[lbn as usize] = ((p - lbn * ppb).min(ppb) * spp) as u32;
            }
        }
        self.stats.host_slots += n;
        self.stats.programmed_slots += batches * spp;
        self.seq += n;
        self.fill = fill;
        self.mapped = n;
        None
    }

    /// Role of each block of `unit` in the block map: (a log?, its write
    /// pointer in slots), or None if it is neither a data block nor a log.
    pub(super) fn hybrid_block_roles(&self, unit: u32) -> Vec<Option<(bool, u32)>> {
        let mut roles = vec![None; self.geo.blocks_per_unit as usize];
        let Some(h) = self.hybrid.as_ref() else {
            return roles;
        };
        let um = &h.units[unit as usize];
        for (lbn, &d) in um.data.iter().enumerate() {
            if d != NONE {
                roles[d as usize] = Some((false, um.dwp[lbn]));
            }
        }
        for l in um.logs.iter().chain(um.sw.iter()) {
            roles[l.block as usize] = Some((true, l.wp));
        }
        roles
    }

    /// Block map consistency: each unit on flash is in its logical block's
    /// data block at its own place, or in one of its unit's logs; every
    /// data or log block is in use (not free); no block serves twice.
    pub(super) fn check_hybrid(&self) -> Result<(), String> {
        let Some(h) = self.hybrid.as_ref() else {
            return Ok(());
        };
        if self.hybrid_map_lost {
            return Ok(());
        }
        self.check_hybrid_checkpoints()?;
        let (spb, bpu) = (self.geo.slots_per_block, self.geo.blocks_per_unit);
        let mut role = vec![0u8; self.valid.len()];
        for (u, um) in h.units.iter().enumerate() {
            let base = u as u32 * bpu;
            let blocks = um
                .data
                .iter()
                .filter(|&&b| b != NONE)
                .copied()
                .chain(um.logs.iter().map(|l| l.block))
                .chain(um.sw.iter().map(|l| l.block));
            for b in blocks {
                let bid = (base + b) as usize;
                if role[bid] != 0 {
                    return Err(format!("block {bid} serves twice in the block map"));
                }
                role[bid] = 1;
                if !matches!(self.state[bid], BlockState::Active) {
                    return Err(format!("mapped block {bid} is {:?}", self.state[bid]));
                }
            }
        }
        for lpn in 0..self.lpns as u32 {
            let p = self.l2p(lpn);
            if !on_flash(p) {
                continue;
            }
            let (u, lbn, place) = self.hybrid_locate(lpn);
            let um = &h.units[u as usize];
            let b = p / spb;
            if b / bpu != u {
                return Err(format!("LPN {lpn} of unit {u} is on unit {}", b / bpu));
            }
            let local = b % bpu;
            let in_data = um.data[lbn as usize] == local && p % spb == place;
            let in_log = um.logs.iter().chain(um.sw.iter()).any(|l| l.block == local);
            if !in_data && !in_log {
                return Err(format!(
                    "LPN {lpn} (logical block {lbn} of unit {u}, place {place}) is at slot {} of block {b}, neither its place in data block {} nor in a log",
                    p % spb,
                    um.data[lbn as usize]
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Device, DeviceFile};
    use crate::device::ftl::Mapping;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// One die, one plane, 8 pages of one mapping unit a block: place
    /// arithmetic by hand.
    pub(in crate::device::ftl::hybrid) fn device(
        mapping: &str,
        log_blocks: u32,
        page: &str,
    ) -> Device {
        let logs = if log_blocks > 0 {
            format!("log_blocks = {log_blocks}")
        } else {
            String::new()
        };
        let text = format!(
            r#"
name = "tiny-{mapping}"
[ftl]
mapping_unit = "4KiB"
over_provisioning = "40%"
mapping = "{mapping}"
{logs}
[cache]
write_buffer = "64KiB"
[nand]
channels = 2
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 32
pages_per_block = 8
page_size = "{page}"
cell = "slc"
t_read = ["25us"]
t_prog = ["200us"]
t_erase = "2ms"
bus_bandwidth = "400MB/s"
"#
        );
        DeviceFile::from_toml_str(&text, "tiny")
            .unwrap()
            .resolve("tiny")
            .unwrap()
    }

    fn ftl(mapping: &str, log_blocks: u32, page: &str) -> Ftl {
        let d = device(mapping, log_blocks, page);
        let g = Geometry::new(&d.nand, d.ftl.mapping_unit);
        let n = crate::config::logical_units(&d.nand, &d.ftl);
        Ftl::new(g, d.ftl.clone(), n, 1)
    }

    /// The drive's write: into the buffer, then flushed as one group.
    fn write(f: &mut Ftl, lpns: &[u32]) -> Vec<HybridStep> {
        for &l in lpns {
            f.write_to_buffer(Lpn(l));
        }
        let unit = f.hybrid_locate(lpns[0]).0;
        let mut steps = Vec::new();
        assert!(f.hybrid_write(unit, lpns, &mut steps));
        f.check_invariants().unwrap();
        steps
    }

    /// The LPNs of logical block `lbn` of unit `u`, by place.
    fn block_lpns(f: &Ftl, u: u32, lbn: u32) -> Vec<u32> {
        (0..f.geo.slots_per_block)
            .filter_map(|p| f.hybrid_lpn_at(u, lbn, p))
            .collect()
    }

    fn merges(steps: &[HybridStep]) -> Vec<&MergePlan> {
        steps
            .iter()
            .filter_map(|s| match s {
                HybridStep::Merge(m) => Some(m),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn places_invert_and_follow_the_sequential_fill() {
        // With factory bad blocks too: the fill opens each unit's blocks in
        // free-list order, around the bad ones.
        for (page, bad) in [("4KiB", 0.0), ("16KiB", 0.0), ("4KiB", 0.1), ("16KiB", 0.1)] {
            let ftl = |mapping: &str, log_blocks: u32, page: &str| {
                let mut d = device(mapping, log_blocks, page);
                d.nand.factory_bad_blocks = bad;
                let g = Geometry::new(&d.nand, d.ftl.mapping_unit);
                let n = crate::config::logical_units(&d.nand, &d.ftl);
                Ftl::new(g, d.ftl.clone(), n, 1)
            };
            let mut f = ftl("bast", 2, page);
            for l in 0..f.lpns as u32 {
                let (u, lbn, place) = f.hybrid_locate(l);
                assert_eq!(f.hybrid_lpn_at(u, lbn, place), Some(l));
            }
            f.fill_sequential();
            f.check_invariants().unwrap();
            assert!(f.fill.n > 0, "{page} bad {bad}: the closed form applies");
            assert_eq!(f.fill.follows_free_lists(), bad > 0.0);
            // The closed form agrees with the block map.
            let mut g = ftl("bast", 2, page);
            g.stats.host_slots = 1; // not fresh: LPN by LPN
            g.fill_sequential();
            g.check_invariants().unwrap();
            for l in 0..f.lpns as u32 {
                assert_eq!(
                    f.lookup(Lpn(l)),
                    g.lookup(Lpn(l)),
                    "{page} bad {bad}: LPN {l}"
                );
            }
            for u in 0..f.geo.units {
                assert_eq!(f.hybrid_block_roles(u), g.hybrid_block_roles(u));
            }
            assert_eq!(f.valid, g.valid, "{page} bad {bad}");
        }
    }

    #[test]
    fn bast_switch_merge_costs_one_erase_and_no_copies() {
        let mut f = ftl("bast", 2, "4KiB");
        f.fill_sequential();
        f.reset_stats();
        let lpns = block_lpns(&f, 0, 1);
        assert_eq!(lpns.len(), 8);
        // Rewrite the whole block in order: all into its log, no merge yet.
        for &l in &lpns {
            assert!(merges(&write(&mut f, &[l])).is_empty());
        }
        // Written again: the full, in-order log is switched in first.
        let steps = write(&mut f, &[lpns[0]]);
        let m = merges(&steps);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].kind, MergeKind::Switch);
        assert!(m[0].reads.is_empty() && m[0].programs.is_empty());
        assert_eq!(m[0].erases.len(), 1);
        assert_eq!(
            (
                f.stats.merges_switch,
                f.stats.merge_slots_copied,
                f.stats.merge_erases
            ),
            (1, 0, 1)
        );
        // Host programs only: WAF 1.
        assert_eq!(f.stats.programmed_slots, 9);
    }

    #[test]
    fn bast_partial_and_full_merges_copy_what_the_log_lacks() {
        let mut f = ftl("bast", 1, "4KiB");
        f.fill_sequential();
        f.reset_stats();
        let a = block_lpns(&f, 0, 1);
        let b = block_lpns(&f, 0, 2);
        // The first three places in order, then another block needs the
        // only log: partial merge, the other five copied behind them.
        write(&mut f, &a[..3]);
        let steps = write(&mut f, &[b[4]]);
        let m = merges(&steps);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].kind, MergeKind::Partial);
        assert_eq!(
            (m[0].reads.len(), m[0].programs.len(), m[0].erases.len()),
            (5, 5, 1)
        );
        // Out of order: full merge (all eight copied, data and log erased).
        let steps = write(&mut f, &[a[0]]);
        let m = merges(&steps);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].kind, MergeKind::Full);
        assert_eq!(
            (m[0].reads.len(), m[0].programs.len(), m[0].erases.len()),
            (8, 8, 2)
        );
        assert_eq!(
            (
                f.stats.merges_partial,
                f.stats.merges_full,
                f.stats.merge_slots_copied,
                f.stats.merge_erases
            ),
            (1, 1, 13, 3)
        );
    }

    #[test]
    fn block_mapping_copies_the_block_on_a_rewrite() {
        let mut f = ftl("block", 0, "4KiB");
        f.fill_sequential();
        f.reset_stats();
        let a = block_lpns(&f, 1, 0);
        let steps = write(&mut f, &[a[2], a[5]]);
        let m = merges(&steps);
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].kind, MergeKind::Full);
        // Six copies and the two new units: eight programs, one erase.
        assert_eq!(
            (m[0].reads.len(), m[0].programs.len(), m[0].erases.len()),
            (6, 8, 1)
        );
        assert_eq!(
            (f.stats.merge_slots_copied, f.stats.merge_slots_programmed),
            (6, 6)
        );
        assert_eq!(f.stats.programmed_slots, 8);
        // An untouched block written in place needs no merge.
        let mut g = ftl("block", 0, "4KiB");
        let fresh = block_lpns(&g, 0, 3);
        assert_eq!(
            write(&mut g, &fresh[4..6]),
            vec![HybridStep::Program(Ppa(4)), HybridStep::Program(Ppa(5))]
        );
    }

    #[test]
    fn fast_reclaims_its_oldest_random_log_with_full_merges() {
        let mut f = ftl("fast", 3, "4KiB");
        f.fill_sequential();
        f.reset_stats();
        // Random rewrites (not place 0) of unit 0: two random logs of 8.
        let lpns: Vec<u32> = (0..4)
            .flat_map(|lbn| block_lpns(&f, 0, lbn)[1..5].to_vec())
            .collect();
        for &l in &lpns {
            assert!(merges(&write(&mut f, &[l])).is_empty());
        }
        // The 17th needs a third random log: the oldest (blocks 0 and 1's
        // rewrites) is reclaimed with two full merges.
        let c = block_lpns(&f, 0, 5);
        let steps = write(&mut f, &[c[3]]);
        assert_eq!(f.stats.merges_full, 2);
        assert_eq!(f.stats.merge_slots_copied, 16);
        // Two data blocks and the log.
        assert_eq!(f.stats.merge_erases, 3);
        assert_eq!(merges(&steps).len(), 2);
        // A rewrite of place 0 and its successors goes to the sequential log.
        let d = block_lpns(&f, 0, 6);
        for &l in &d {
            write(&mut f, &[l]);
        }
        let e = block_lpns(&f, 0, 7)[0];
        let steps = write(&mut f, &[e]);
        assert_eq!(merges(&steps)[0].kind, MergeKind::Switch);
    }

    #[test]
    fn random_writes_and_trims_keep_every_unit_where_the_map_says() {
        for (scheme, logs) in [
            ("block", 0),
            ("bast", 1),
            ("bast", 3),
            ("fast", 2),
            ("fast", 4),
        ] {
            for page in ["4KiB", "16KiB"] {
                let mut f = ftl(scheme, logs, page);
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
                let n = f.lpns as u32;
                let mut shadow = vec![false; n as usize];
                if rng.gen_bool(0.5) {
                    f.fill_sequential();
                    shadow.fill(true);
                }
                for _ in 0..1500 {
                    let l = rng.gen_range(0..n);
                    if rng.gen_bool(0.1) {
                        f.trim(Lpn(l));
                        shadow[l as usize] = false;
                        continue;
                    }
                    // A group of one key, as the drive forms them.
                    let key = f.hybrid_group_key(l);
                    let mut group = vec![l];
                    for _ in 0..rng.gen_range(0..4) {
                        let m = rng.gen_range(0..n);
                        if f.hybrid_group_key(m) == key && !group.contains(&m) {
                            group.push(m);
                        }
                    }
                    write(&mut f, &group);
                    for &g in &group {
                        shadow[g as usize] = true;
                    }
                }
                for l in 0..n {
                    let on_flash = matches!(f.lookup(Lpn(l)), Mapping::Flash(_));
                    assert_eq!(on_flash, shadow[l as usize], "{scheme}/{page}: LPN {l}");
                }
                let s = &f.stats;
                assert!(
                    s.merges_full + s.merges_partial + s.merges_switch > 0,
                    "{scheme}: no merge"
                );
            }
        }
    }
}
