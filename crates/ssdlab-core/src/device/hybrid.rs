//! Block and hybrid mapping, timed: host data leaves the write buffer in
//! groups that share a logical block (block mapping, BAST) or a parallel
//! unit (FAST); the FTL maps each group and plans its merges
//! ([`crate::device::ftl::HybridStep`]); the drive runs a unit's steps one
//! after another on its die: a host program, or a merge's reads, then its
//! programs, then its erases (each phase's transactions queued together).
//! A unit takes its next group only when the previous one's steps are
//! done, so a merge holds up later writes to that unit (and only to it):
//! the foreground-merge latency that sets hybrid FTLs apart.

use super::{Drive, TAG_HYB, TAG_SHIFT};
use crate::config::BufferUnit;
use crate::config::OpKind;
use crate::device::flash::Txn;
use crate::device::ftl::{HybridStep, MergePlan};
use crate::engine::EventQueue;
use crate::events::Event;
use crate::fabric::Fabric;
use crate::units::{Lpn, Ppa, Time};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Dirty host entries (oldest first) searched for a group.
const GROUP_WINDOW: usize = 256;

/// A write buffer of whole logical blocks keeps 1/`LOW_WATER` of its
/// size free for arriving writes.
const LOW_WATER: u64 = 8;

/// Where a unit's current step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Phase {
    /// No step running.
    #[default]
    Idle,
    /// A host program.
    Program,
    /// A merge's reads, programs, erases.
    Reads,
    Programs,
    Erases,
}

/// One unit's group in progress.
#[derive(Debug, Default)]
pub(crate) struct HybridUnit {
    steps: VecDeque<HybridStep>,
    phase: Phase,
    merge: Option<MergePlan>,
    /// Transactions of the phase not yet done.
    outstanding: u32,
    /// When the running merge issued its first operation.
    started: Time,
    /// The program id holding the group's host LPNs.
    pid: Option<u32>,
    /// The running host program (its first slot).
    program: Option<Ppa>,
    /// The running merge's programs (first slots, in issue order: a die
    /// runs its queued programs in order) and how many have finished.
    merge_programs: Vec<Ppa>,
    programs_done: usize,
    /// The running merge's erases, once issued.
    erasing: Vec<u32>,
}

impl HybridUnit {
    fn idle(&self) -> bool {
        self.pid.is_none()
    }
}

/// A write buffer whose unit is a logical block (`cache.write_buffer_unit
/// = "block"`; seed 001: block mapping "expressed by the D-log's buffer
/// unit"): the logical blocks with buffered host data in order of their
/// latest write, each with the units written to it since it last left.
/// The buffer's entries stay in [`crate::device::cache::DataCache`]; this
/// only orders whole blocks for eviction.
#[derive(Debug, Default)]
pub(crate) struct BlockBuffer {
    seq: u64,
    /// (unit, logical block) -> (sequence of its latest write, units written).
    blocks: HashMap<(u32, u32), (u64, Vec<u32>)>,
    /// Latest-write sequence -> (unit, logical block): least recent first.
    order: BTreeMap<u64, (u32, u32)>,
}

impl BlockBuffer {
    /// Host data for `lpn` of logical block `key` entered the buffer.
    fn touch(&mut self, key: (u32, u32), lpn: u32) {
        self.seq += 1;
        let seq = self.seq;
        let e = self.blocks.entry(key).or_insert((0, Vec::new()));
        if e.0 != 0 {
            self.order.remove(&e.0);
        }
        e.0 = seq;
        if e.1.last() != Some(&lpn) {
            e.1.push(lpn);
            if e.1.len() >= 4096 && e.1.len().is_power_of_two() {
                // Rewrites of a block that stays in the buffer: bound the list.
                e.1.sort_unstable();
                e.1.dedup();
            }
        }
        self.order.insert(seq, key);
    }

    /// Remove and return the least recently written logical block among
    /// the first `window` whose unit is `ready`, with the units written to it.
    fn take_lru(
        &mut self,
        window: usize,
        ready: impl Fn(u32) -> bool,
    ) -> Option<((u32, u32), Vec<u32>)> {
        let (&seq, &key) = self.order.iter().take(window).find(|(_, k)| ready(k.0))?;
        self.order.remove(&seq);
        let (_, lpns) = self.blocks.remove(&key)?;
        Some((key, lpns))
    }
}

impl Drive {
    /// The write buffer gathers whole logical blocks (`cache.write_buffer_unit
    /// = "block"`).
    pub(super) fn block_buffer(dev: &crate::config::Device, hybrid: bool) -> Option<BlockBuffer> {
        (hybrid && dev.cache.write_buffer_unit == BufferUnit::Block).then(BlockBuffer::default)
    }

    /// Host data for `lpns` entered the write buffer: their logical blocks
    /// become the most recently written.
    pub(super) fn block_buffer_touch(&mut self, lpns: std::ops::Range<u32>) {
        if let Some(b) = &mut self.gather {
            for l in lpns {
                let (unit, lbn, _) = self.ftl.hybrid_locate(l);
                b.touch((unit, lbn), l);
            }
        }
    }

    /// Block or hybrid mapping's flush: start a group on every idle unit
    /// with buffered data for it (oldest first), while a program unit's
    /// worth of host data is dirty or a flush waits for it.
    #[cold]
    #[inline(never)]
    pub(super) fn hybrid_flush(&mut self, now: Time, eq: &mut EventQueue<Event>) {
        if self.gather.is_some() {
            return self.hybrid_flush_blocks(now, eq);
        }
        let spp = self.geo.slots_per_program;
        let spb = self.geo.slots_per_block as usize;
        loop {
            let force = self.flush_waits_on_dirty();
            if self.cache.dirty_host() == 0 || !(force || self.cache.dirty_host() >= spp) {
                return;
            }
            let (ftl, hyb) = (&self.ftl, &self.hyb);
            let Some((_, key)) = self.cache.host_head(
                GROUP_WINDOW,
                |l| ftl.hybrid_group_key(l),
                |k| hyb[k.0 as usize].idle(),
            ) else {
                return;
            };
            let (pid, mut lpns) = self.hybrid_group_id();
            let ftl = &self.ftl;
            self.cache.take_host_matching(
                spb,
                GROUP_WINDOW,
                pid,
                key,
                |l| ftl.hybrid_group_key(l),
                &mut lpns,
            );
            self.hybrid_start_group(now, key.0, pid, lpns, eq);
        }
    }

    /// A program id for a new group, and its (empty) LPN list.
    fn hybrid_group_id(&mut self) -> (u32, Vec<u32>) {
        let pid = match self.free_progs.pop() {
            Some(p) => p,
            None => {
                self.progs.push((Vec::new(), 0));
                (self.progs.len() - 1) as u32
            }
        };
        let (mut lpns, _) = std::mem::take(&mut self.progs[pid as usize]);
        lpns.clear();
        (pid, lpns)
    }

    /// The flush of a write buffer that gathers whole logical blocks:
    /// while the buffer would have less room than the next write needs (a
    /// program unit, or the first waiting write) or than 1/[`LOW_WATER`]
    /// of its size once its programs are done, or a flush waits for
    /// buffered data, the least recently written logical block on an idle
    /// unit leaves whole, its units in place order. (The low-water mark
    /// keeps every die busy: evicting only on demand would run one
    /// eviction at a time.)
    fn hybrid_flush_blocks(&mut self, now: Time, eq: &mut EventQueue<Event>) {
        let spp = self.geo.slots_per_program as u64;
        loop {
            let force = self.flush_waits_on_dirty();
            let need = self
                .wait_buffer
                .front()
                .map_or(spp, |&c| spp.max(self.cmds[c as usize].nlpn as u64))
                .max(self.cache.write_buffer_units() / LOW_WATER);
            if self.cache.dirty_host() == 0 || !(force || self.cache.room_after_programs() < need) {
                return;
            }
            let hyb = &self.hyb;
            let Some(buf) = self.gather.as_mut() else {
                return;
            };
            let Some(((unit, _), mut written)) =
                buf.take_lru(GROUP_WINDOW, |u| hyb[u as usize].idle())
            else {
                return;
            };
            written.sort_unstable_by_key(|&l| self.ftl.hybrid_locate(l).2);
            written.dedup();
            let (pid, mut lpns) = self.hybrid_group_id();
            for l in written {
                self.cache.take_host_if_dirty(l, pid, &mut lpns);
            }
            if lpns.is_empty() {
                // Trimmed, or already written by a flush: nothing left.
                self.progs[pid as usize] = (lpns, 0);
                self.free_progs.push(pid);
                continue;
            }
            self.hybrid_start_group(now, unit, pid, lpns, eq);
        }
    }

    /// Map group `lpns` (program id `pid`) on `unit`, plan its merges and
    /// start its first step.
    fn hybrid_start_group(
        &mut self,
        now: Time,
        unit: u32,
        pid: u32,
        lpns: Vec<u32>,
        eq: &mut EventQueue<Event>,
    ) {
        for &l in &lpns {
            self.ftl.prefetch(Lpn(l));
        }
        self.fw.background(1, now);
        let out = lpns.len() as u64 * self.unit_bytes;
        self.act.dram_bytes += out;
        self.dram.reserve(now, self.dram_xfer.time(out));
        let mut steps = Vec::new();
        let copied = self.ftl.stats.merge_slots_copied;
        let placed = self.ftl.hybrid_write(unit, &lpns, &mut steps);
        if self.ckpt.is_some() {
            // Mapping updates: the group's units and the merges' copies.
            let data = lpns.len() as u64 + self.ftl.stats.merge_slots_copied - copied;
            self.checkpoint_after_program(now, true, data, eq);
        }
        if self.versions.is_some() {
            // What each planned program will carry, for the store.
            for (slot, l) in self.ftl.take_planned() {
                self.store_program_issued(Ppa(slot), &[l]);
            }
        }
        if (!placed || self.ftl.worn_out().is_some()) && !self.worn_out_raised {
            // Too few good blocks left (a retirement), or none erased
            // for this group: the run ends with the reason.
            self.worn_out_raised = true;
            eq.at(now, Event::WornOut { d: self.index });
        }
        self.progs[pid as usize] = (lpns, 0);
        let hu = &mut self.hyb[unit as usize];
        hu.steps.extend(steps);
        hu.pid = Some(pid);
        if !self.hybrid_advance(now, unit, eq) {
            // Nothing to program (cannot happen: the group's data was
            // dirty): release it at once.
            self.hybrid_release(unit);
        }
    }

    /// Start the next phase or step of `unit` once its transactions are
    /// done. Returns false when the group has no step left (the caller
    /// releases it).
    fn hybrid_advance(&mut self, now: Time, unit: u32, eq: &mut EventQueue<Event>) -> bool {
        loop {
            let hu = &mut self.hyb[unit as usize];
            match hu.phase {
                Phase::Idle => match hu.steps.pop_front() {
                    None => return false,
                    Some(HybridStep::Program(first)) => {
                        hu.phase = Phase::Program;
                        hu.outstanding = 1;
                        hu.program = Some(first);
                        self.hybrid_program(now, unit, first, eq);
                        return true;
                    }
                    Some(HybridStep::Merge(mut plan)) => {
                        hu.started = now;
                        hu.phase = Phase::Reads;
                        let reads = std::mem::take(&mut plan.reads);
                        hu.merge = Some(plan);
                        let n = self.hybrid_reads(now, unit, &reads, eq);
                        self.hyb[unit as usize].outstanding = n;
                        if n > 0 {
                            return true;
                        }
                    }
                },
                Phase::Program => hu.phase = Phase::Idle,
                Phase::Reads => {
                    hu.phase = Phase::Programs;
                    let programs = hu
                        .merge
                        .as_mut()
                        .map(|m| std::mem::take(&mut m.programs))
                        .unwrap_or_default();
                    for &p in &programs {
                        self.hybrid_program(now, unit, p, eq);
                    }
                    let hu = &mut self.hyb[unit as usize];
                    hu.outstanding = programs.len() as u32;
                    hu.programs_done = 0;
                    let any = !programs.is_empty();
                    hu.merge_programs = programs;
                    if any {
                        return true;
                    }
                }
                Phase::Programs => {
                    hu.phase = Phase::Erases;
                    let erases = hu
                        .merge
                        .as_mut()
                        .map(|m| std::mem::take(&mut m.erases))
                        .unwrap_or_default();
                    for _ in &erases {
                        self.hybrid_submit(now, unit, OpKind::Erase, self.timings.t_erase, 0, eq);
                    }
                    let hu = &mut self.hyb[unit as usize];
                    hu.outstanding = erases.len() as u32;
                    let any = !erases.is_empty();
                    hu.erasing = erases;
                    if any {
                        return true;
                    }
                }
                Phase::Erases => {
                    hu.phase = Phase::Idle;
                    hu.merge = None;
                    hu.erasing.clear();
                    hu.merge_programs.clear();
                    let started = hu.started;
                    self.ftl.stats.merges_timed += 1;
                    self.ftl.stats.merge_ps += (now - started).0;
                }
            }
        }
    }

    /// Queue the reads of a merge's copies on `unit`'s die, one
    /// transaction per (multi-plane) page; returns how many.
    fn hybrid_reads(
        &mut self,
        now: Time,
        unit: u32,
        reads: &[Ppa],
        eq: &mut EventQueue<Event>,
    ) -> u32 {
        let mut n = 0;
        let mut start = 0;
        while start < reads.len() {
            let key = self.geo.page_row(reads[start]);
            let mut end = start + 1;
            while end < reads.len() && self.geo.page_row(reads[end]) == key {
                end += 1;
            }
            let planes = reads[start..end]
                .iter()
                .fold(0u64, |m, s| m | self.geo.plane_bit(*s));
            let bytes = (end - start) as u64 * self.unit_bytes;
            self.act.nand_read_pages += planes.count_ones() as u64;
            self.act.nand_bus_bytes += bytes;
            self.act.dram_bytes += bytes;
            let a = self.geo.decode(reads[start]);
            let t_read = self.timings.read(self.geo.page_type(a.page));
            self.hybrid_submit(now, unit, OpKind::Read, t_read, bytes, eq);
            n += 1;
            start = end;
        }
        n
    }

    /// Queue the program of the program unit at `first` on `unit`'s die.
    fn hybrid_program(&mut self, now: Time, unit: u32, first: Ppa, eq: &mut EventQueue<Event>) {
        let owner = (TAG_HYB << TAG_SHIFT) | unit as u64;
        self.hybrid_program_for(now, unit, first, owner, eq);
    }

    /// Queue the program of the program unit at `first` on `unit`'s die
    /// for `owner` (a group's step, or a checkpoint).
    pub(super) fn hybrid_program_for(
        &mut self,
        now: Time,
        unit: u32,
        first: Ppa,
        owner: u64,
        eq: &mut EventQueue<Event>,
    ) {
        let bytes = self.geo.slots_per_program as u64 * self.unit_bytes;
        let a = self.geo.decode(first);
        let t_prog = self.timings.program(self.geo.page_type(a.page));
        self.hybrid_submit_for(now, unit, (OpKind::Write, t_prog, bytes), owner, eq);
    }

    /// Issue one flash operation of `unit`'s step on its die (the
    /// firmware's command cost, then the transaction).
    fn hybrid_submit(
        &mut self,
        now: Time,
        unit: u32,
        kind: OpKind,
        t_array: Time,
        bytes: u64,
        eq: &mut EventQueue<Event>,
    ) {
        let owner = (TAG_HYB << TAG_SHIFT) | unit as u64;
        self.hybrid_submit_for(now, unit, (kind, t_array, bytes), owner, eq);
    }

    /// Issue one flash operation (kind, array time, bus bytes) on `unit`'s
    /// die for `owner` (the firmware's command cost, then the transaction).
    pub(super) fn hybrid_submit_for(
        &mut self,
        now: Time,
        unit: u32,
        (kind, t_array, bytes): (OpKind, Time, u64),
        owner: u64,
        eq: &mut EventQueue<Event>,
    ) {
        self.fw.issue_flash_command(now);
        let t = Txn {
            kind,
            die: self.geo.die_of_unit(unit),
            t_array,
            bytes,
            owner,
            slc: false,
        };
        let d = self.index;
        self.flash
            .submit(now, t, &mut |tt, e| eq.at(tt, Event::Flash { d, fe: e }));
    }

    /// Blocks (global ids, ascending) whose erase a unit's planned or
    /// running merges have not finished: the FTL has them free already,
    /// but on flash they hold their data until then.
    pub(super) fn hybrid_pending_erases(&self) -> Vec<u32> {
        let mut out: Vec<u32> = Vec::new();
        for hu in &self.hyb {
            out.extend(&hu.erasing);
            out.extend(hu.merge.iter().flat_map(|m| m.erases.iter()));
            for s in &hu.steps {
                if let HybridStep::Merge(m) = s {
                    out.extend(&m.erases);
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// A transaction of `unit`'s step finished.
    #[cold]
    #[inline(never)]
    pub(super) fn hybrid_txn_done(
        &mut self,
        now: Time,
        unit: u32,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        let hu = &mut self.hyb[unit as usize];
        // A program of the step is on flash: what it holds is durable.
        let programmed = match hu.phase {
            Phase::Program => hu.program.take(),
            Phase::Programs => {
                let p = hu.merge_programs.get(hu.programs_done).copied();
                hu.programs_done += 1;
                p
            }
            _ => None,
        };
        hu.outstanding -= 1;
        if let Some(first) = programmed {
            let n = self.geo.slots_per_program;
            let planned = if self.versions.is_some() {
                self.ftl.planned_in(first, n)
            } else {
                Vec::new()
            };
            self.ftl.hybrid_programmed(first, n);
            for (slot, l) in planned {
                self.store_program_done(Ppa(slot), &[l]);
            }
        }
        let hu = &mut self.hyb[unit as usize];
        if hu.outstanding > 0 || self.hybrid_advance(now, unit, eq) {
            return;
        }
        // The group is on flash: its buffer entries are released, flushes
        // it satisfied complete, waiting writes start, the next groups go.
        self.hybrid_release(unit);
        self.program_done(now, eq, fabric);
    }

    /// At a power loss: the blocks block or hybrid mapping planned to erase
    /// whose erase was not issued (`unerased`: on flash their data is still
    /// there) and those whose erase was (`erasing`). The groups stop (what
    /// their programs had not made durable, the FTL's journal knows).
    pub(super) fn hybrid_power_loss(&mut self) -> (Vec<u32>, Vec<u32>) {
        let (mut unerased, mut erasing) = (Vec::new(), Vec::new());
        for hu in &mut self.hyb {
            hu.program = None;
            if let Some(m) = hu.merge.take() {
                // Not yet in its erase phase: erases not issued.
                unerased.extend_from_slice(&m.erases);
            }
            erasing.append(&mut hu.erasing);
            for step in hu.steps.drain(..) {
                if let HybridStep::Merge(m) = step {
                    unerased.extend_from_slice(&m.erases);
                }
            }
            hu.phase = Phase::Idle;
            hu.outstanding = 0;
            hu.merge_programs.clear();
            hu.programs_done = 0;
            hu.pid = None;
        }
        (unerased, erasing)
    }

    /// Release `unit`'s finished group: its buffer entries and program id.
    fn hybrid_release(&mut self, unit: u32) {
        let Some(pid) = self.hyb[unit as usize].pid.take() else {
            return;
        };
        let (lpns, gc) = std::mem::take(&mut self.progs[pid as usize]);
        for &l in &lpns {
            self.cache.program_done(l, pid);
        }
        self.progs[pid as usize] = (lpns, gc);
        self.free_progs.push(pid);
    }
}

/// The `merges` section of the report (block and hybrid mapping), over
/// the measured window.
#[derive(Debug, Clone, serde::Serialize, Default, PartialEq)]
pub struct MergeReport {
    /// `block`, `bast` or `fast`.
    pub mapping: String,
    /// Log blocks per parallel unit.
    pub log_blocks: u32,
    /// Switch merges (a log became the data block: one erase, no copies).
    pub switch: u64,
    /// Partial merges (a log took the rest of its block's data).
    pub partial: u64,
    /// Full merges (block mapping's block copies included).
    pub full: u64,
    /// Mapping units merges copied.
    pub units_copied: u64,
    /// Blocks merges erased.
    pub blocks_erased: u64,
    /// Mean time of a merge on its die, first operation issued to last
    /// done (ms; 0 if none finished in the window).
    pub mean_ms: f64,
}

impl MergeReport {
    /// The report's text line.
    pub fn text(&self) -> String {
        format!(
            "  Merges ({} mapping, {} log blocks per unit): {} switch, {} partial, {} full; {} units copied, {} blocks erased, {:.3} ms each on average\n",
            self.mapping,
            self.log_blocks,
            self.switch,
            self.partial,
            self.full,
            self.units_copied,
            self.blocks_erased,
            self.mean_ms
        )
    }

    /// Over drives: counts summed, the mean weighted by merges.
    pub fn combine(parts: &[&MergeReport]) -> Option<MergeReport> {
        let first = parts.first()?;
        let mut r = (*first).clone();
        let n = |p: &MergeReport| (p.switch + p.partial + p.full) as f64;
        let mut weighted = first.mean_ms * n(first);
        for p in &parts[1..] {
            r.switch += p.switch;
            r.partial += p.partial;
            r.full += p.full;
            r.units_copied += p.units_copied;
            r.blocks_erased += p.blocks_erased;
            weighted += p.mean_ms * n(p);
            if p.mapping != r.mapping {
                r.mapping = "mixed".into();
            }
        }
        r.mean_ms = if n(&r) > 0.0 { weighted / n(&r) } else { 0.0 };
        Some(r)
    }
}

impl Drive {
    /// The `merges` section of the report, since `base`.
    pub fn merge_report(&self, base: &crate::device::ftl::FtlStats) -> Option<MergeReport> {
        if self.hyb.is_empty() {
            return None;
        }
        let (now, f) = (&self.ftl.stats, &self.dev.ftl);
        let timed = now.merges_timed - base.merges_timed;
        Some(MergeReport {
            mapping: f.mapping.name().into(),
            log_blocks: f.log_blocks,
            switch: now.merges_switch - base.merges_switch,
            partial: now.merges_partial - base.merges_partial,
            full: now.merges_full - base.merges_full,
            units_copied: now.merge_slots_copied - base.merge_slots_copied,
            blocks_erased: now.merge_erases - base.merge_erases,
            mean_ms: if timed == 0 {
                0.0
            } else {
                (now.merge_ps - base.merge_ps) as f64 / timed as f64 / 1e9
            },
        })
    }
}
