//! The functional (untimed) write path the preconditioner uses: the
//! sequential fill (per block in closed form where it applies, else per
//! LPN) and the steady state of random overwrites with inline GC; and
//! [`PreconditionMethod`], how the report names the way a state was reached.

use super::map::SeqFill;
use super::mapcache::{Access, MapCache};
use super::{buffered, on_flash, BlockState, Ftl, IN_BUFFER};
use crate::units::{Lpn, Ppa};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// How a preconditioned state was reached, where there is more than one
/// way (the report's `precondition.method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreconditionMethod {
    /// A fill written LPN by LPN, `why` the closed form did not apply
    /// (a fill in closed form has no method to report).
    FillPerLpn {
        /// What kept the fill from its closed form.
        why: &'static str,
    },
    /// Random overwrites on the drive itself: asked for (`why` is None,
    /// `steady-exact`), or `why` the state could not be scaled (what the
    /// report names, so no setting turns `steady` into the long process
    /// unsaid).
    Exact {
        /// What kept `steady` from scaling (None: asked for).
        why: Option<&'static str>,
    },
    /// Built from a drive of `units` units (`snapshots` of them).
    Scaled {
        /// Units of the reduced drive.
        units: u32,
        /// Snapshots taken of it (full units / reduced units).
        snapshots: u32,
    },
}

/// The mapping cache of the steady state's last phase
/// ([`Ftl::steady_mapping_functional`]): the translation pages a drive with
/// `ftl.mapping_cache` holds, and how many dirty ones it has written back
/// (a program unit of them at a time, to the units in striping order).
pub(super) struct PreCache {
    cache: MapCache,
    staged: u64,
    /// Units that took written-back pages since GC last ran on them.
    touched: Vec<u32>,
    /// Pages one program's entries evicted dirty, in eviction order (kept
    /// for its allocation).
    evicted: Vec<u32>,
}

impl Ftl {
    pub(super) fn next_unit_functional(&mut self) -> u32 {
        let n = self.stripe.len();
        for _ in 0..n {
            let u = self.stripe[self.stripe_pos % n];
            self.stripe_pos = (self.stripe_pos + 1) % n;
            if self.can_allocate(u, true) {
                return u;
            }
        }
        // Every unit is at its host floor: collect on the next one regardless.
        let u = self.stripe[self.stripe_pos % n];
        self.stripe_pos = (self.stripe_pos + 1) % n;
        u
    }

    /// Collect one victim on `unit` functionally, relocating valid data within the unit.
    pub(super) fn gc_functional(&mut self, unit: u32) -> bool {
        let Some(victim) = self.select_victim(unit) else {
            return false;
        };
        let moved = self.valid_slots(victim);
        let mut pending: Vec<Lpn> = Vec::with_capacity(moved.len());
        let mut tpages = Vec::new();
        // Each relocation reads a random L2P entry: ask for the entries a
        // few slots ahead so their cache misses overlap.
        const AHEAD: usize = 16;
        for &(_, l) in moved.iter().take(AHEAD) {
            self.l2p.prefetch(l.0 as usize);
        }
        for (i, &(ppa, lpn)) in moved.iter().enumerate() {
            if let Some(&(_, l)) = moved.get(i + AHEAD) {
                self.l2p.prefetch(l.0 as usize);
            }
            match self.as_translation_page(lpn) {
                None => {
                    if self.relocate_to_buffer(ppa, lpn) {
                        pending.push(lpn);
                    }
                }
                Some(t) => {
                    if self.relocate_translation(ppa, t) {
                        tpages.push(t);
                    }
                }
            }
        }
        self.erase(victim);
        self.program_functional(unit, &pending);
        for t in tpages {
            self.stage_translation_functional(unit, t);
        }
        true
    }

    /// Program `lpns` (latest versions in the buffer) into `unit`, in whole
    /// program units; a remainder waits for the next batch on that unit.
    pub(super) fn program_functional(&mut self, unit: u32, lpns: &[Lpn]) {
        let spp = self.geo.slots_per_program as usize;
        let mut pending = std::mem::take(&mut self.leftover[unit as usize]);
        pending.extend_from_slice(lpns);
        let full = pending.len() / spp * spp;
        for chunk in pending[..full].chunks(spp) {
            let Some(first) = self.allocate_program(unit, false) else {
                // Cannot happen while the GC reserve holds; keep the rest buffered.
                self.leftover[unit as usize] = pending;
                return;
            };
            for (i, &l) in chunk.iter().enumerate() {
                self.commit(l, Ppa(first.0 + i as u32));
            }
            if self.pre_cache.is_some() {
                self.pre_cache_update(chunk);
            }
        }
        pending.drain(..full);
        self.leftover[unit as usize] = pending;
    }

    /// Program every unit's remainder (padding the last program unit).
    pub(super) fn flush_leftovers(&mut self) {
        self.flush_translation_leftovers();
        for u in 0..self.geo.units {
            let rest = std::mem::take(&mut self.leftover[u as usize]);
            if rest.is_empty() {
                continue;
            }
            if let Some(first) = self.allocate_program(u, false) {
                for (i, &l) in rest.iter().enumerate() {
                    if buffered(self.l2p(l.0)) {
                        self.commit(l, Ppa(first.0 + i as u32));
                    }
                }
            }
        }
    }

    /// Write a batch of one program unit of LPNs (functional), with inline GC.
    /// GC runs while the unit's free blocks are at or below the hard
    /// threshold: the equilibrium of a drive saturated by writes, where host
    /// writes stall there and GC sets the pace.
    pub(super) fn write_batch_functional(&mut self, lpns: &[Lpn]) {
        // Random LPNs: overlap their L2P misses, then their old slots' P2L misses.
        for &l in lpns {
            self.l2p.prefetch(l.0 as usize);
        }
        for &l in lpns {
            let old = self.l2p(l.0);
            if on_flash(old) {
                self.p2l.prefetch(old as usize);
            }
        }
        for &l in lpns {
            // As write_to_buffer, without counting mapped units: the fill
            // maps every one (see fill_sequential).
            let old = self.l2p(l.0);
            if on_flash(old) {
                self.invalidate_slot(old);
            }
            self.set_l2p(l.0, IN_BUFFER);
            self.stats.host_slots += 1;
            if !self.rewritten.is_empty() {
                self.rewritten[l.0 as usize / 64] |= 1 << (l.0 % 64);
            }
        }
        let unit = self.next_unit_functional();
        self.collect_to_floor_functional(unit);
        self.program_functional(unit, lpns);
    }

    /// Collect on `unit` functionally while its free blocks are at or below
    /// the hard threshold (at most 64 victims): the equilibrium of a drive
    /// saturated by writes, where host writes stall there and GC sets the
    /// pace.
    #[inline]
    pub(super) fn collect_to_floor_functional(&mut self, unit: u32) {
        let mut guard = 0;
        while self.free_blocks(unit) <= self.cfg.gc_hard_threshold && guard < 64 {
            if !self.gc_functional(unit) {
                break;
            }
            guard += 1;
        }
    }

    /// Precondition: write every LPN once, sequentially. On a fresh FTL
    /// without an SLC cache, where the fill needs no GC, this runs per
    /// block, not per LPN: the block metadata and counters are exactly the
    /// per-LPN fill's, and the mapping is `SeqFill`'s closed form until
    /// something overwrites it (cost: one step per block the fill opens, no
    /// mapping memory touched). Returns why it ran LPN by LPN (None: in
    /// closed form), for the report.
    pub fn fill_sequential(&mut self) -> Option<&'static str> {
        if self.hybrid.is_some() {
            return self.hybrid_fill();
        }
        let why = self.fill_data_sequential();
        // With a cached mapping, the fill also wrote the mapping out.
        self.write_translation_pages();
        why
    }

    /// [`Ftl::fill_sequential`]'s user data; why LPN by LPN, if it was.
    fn fill_data_sequential(&mut self) -> Option<&'static str> {
        let n = self.lpns;
        let fill = SeqFill::new(&self.geo, &self.stripe, n);
        let fresh = self.seq == 0
            && self.stripe_pos == 0
            && self.fill.n == 0
            && self.stats.host_slots == 0
            && self.stats.programmed_slots == 0
            && self.units.iter().all(|u| u.active.is_none());
        // The fill writes native blocks from the start of each unit's free
        // list (the static SLC region, factory bad blocks and replacement
        // blocks are not on it) and must stay above the host's GC floor.
        let fewest_free = self.units.iter().map(|u| u.free.len()).min().unwrap_or(0) as u32;
        let floor =
            self.cfg.gc_hard_threshold + self.geo.blocks_per_unit.saturating_sub(fewest_free);
        let floor_why =
            "a fill that reaches the GC floor [ftl.gc_hard_threshold, ftl.over_provisioning]";
        if let Some(why) = fill.per_lpn_because(fresh, floor, floor_why) {
            self.fill_sequential_per_lpn();
            return Some(why);
        }
        // Each unit's blocks in free-list order (gaps where blocks are bad).
        let fill = fill.with_free_lists(self.units.iter().map(|u| u.free.iter()));
        // Nothing written yet: every table entry is still at its default.
        debug_assert_eq!(self.l2p.written() + self.p2l.written(), 0);
        // Batch k (one program unit of LPNs) goes to unit stripe[k mod U]
        // (no unit reaches its host floor: `applies`), so each unit's
        // programs are known in advance and the units are independent but
        // for the counters: run a unit's programs a block at a time. Each
        // block is opened by the allocator itself (free-list order, wear
        // levelling, the previous block's close) with the sequence number
        // it would have seen; the rest of its programs only advance the
        // frontier. Same state as the per-LPN fill (tested).
        let spp = self.geo.slots_per_program as u64;
        let ppb = (self.geo.slots_per_block as u64 / spp).max(1);
        let batches = n.div_ceil(spp);
        let nunits = self.stripe.len() as u64;
        for p in 0..nunits.min(batches) {
            let unit = self.stripe[p as usize];
            // Programs of this unit: batches p, p + U, p + 2U, ...
            let programs = (batches - p).div_ceil(nunits);
            let mut j = 0;
            while j < programs {
                let last = programs.min(j + ppb - j % ppb);
                let k = j * nunits + p;
                self.seq = k * spp;
                let first = self.allocate_program(unit, false);
                assert!(
                    first.is_some_and(|f| f.0 == fill.slot_of((k * spp) as u32)),
                    "sequential fill: program unit of LPN {} at {first:?}, closed form {}",
                    k * spp,
                    fill.slot_of((k * spp) as u32)
                );
                let Some(first) = first else { break };
                let block = first.0 / self.geo.slots_per_block;
                let Some((blk, after_first)) = self.units[unit as usize].active else {
                    break;
                };
                // Programs j+1 .. last-1 of this block, as allocate_native
                // would do them one by one.
                let more = last - j - 1;
                if more > 0 {
                    let next = after_first + (more * spp) as u32;
                    self.units[unit as usize].active =
                        Some((blk, next.min(self.geo.slots_per_block)));
                    self.stats.programmed_slots += more * spp;
                    if next >= self.geo.slots_per_block {
                        self.state[block as usize] = BlockState::Closed;
                        self.close_seq[block as usize] = (last - 1) * nunits * spp + p * spp;
                    }
                }
                // Slots filled in this block: whole batches but the fill's
                // last, which holds what is left.
                let lpn_end = (((last - 1) * nunits + p + 1) * spp).min(n);
                let slots = (last - j - 1) * spp + lpn_end - ((last - 1) * nunits + p) * spp;
                self.valid[block as usize] += slots as u32;
                j = last;
            }
        }
        self.stats.host_slots += n;
        self.stripe_pos = (batches % nunits.max(1)) as usize;
        self.seq = n;
        self.fill = fill;
        self.mapped = n;
        None
    }

    /// [`Ftl::fill_sequential`] LPN by LPN (when the closed form does not
    /// apply, and in tests as its reference).
    pub(super) fn fill_sequential_per_lpn(&mut self) {
        let n = self.lpns;
        self.write_functional((0..n).map(|l| Lpn(l as u32)));
        // Every logical unit has been written once.
        self.mapped = n;
    }

    /// Write `lpns` functionally (with inline GC), a program unit at a
    /// time, then program what is left over.
    pub(super) fn write_functional(&mut self, lpns: impl IntoIterator<Item = Lpn>) {
        let spp = self.geo.slots_per_program as usize;
        let mut batch = Vec::with_capacity(spp);
        for l in lpns {
            batch.push(l);
            if batch.len() == spp {
                self.write_batch_functional(&batch);
                batch.clear();
            }
        }
        if !batch.is_empty() {
            self.write_batch_functional(&batch);
        }
        self.flush_leftovers();
    }

    /// Precondition to steady state: fill, then uniformly random overwrites
    /// until the windowed WAF changes by under 1% across two consecutive
    /// windows of capacity/16 writes (at least one full drive write, at most
    /// `max_drive_writes`). Block and hybrid mapping: their own windows
    /// and bound (`hybrid/steady.rs`). Returns (drive writes done, final
    /// window WAF).
    pub fn precondition_steady(&mut self, seed: u64, max_drive_writes: f64) -> (f64, f64) {
        self.fill_sequential();
        if self.hybrid.is_some() {
            return self.hybrid_steady_after_fill(seed, max_drive_writes);
        }
        self.precondition_steady_after_fill(seed, max_drive_writes)
    }

    /// [`Ftl::precondition_steady`] from a filled drive on.
    pub(super) fn precondition_steady_after_fill(
        &mut self,
        seed: u64,
        max_drive_writes: f64,
    ) -> (f64, f64) {
        // It rewrites the whole table at random: dense from the start.
        self.l2p.densify();
        let n = self.lpns;
        let spp = self.geo.slots_per_program as usize;
        let window = (n / 16).max(spp as u64);
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x5354_4541_4459);
        let mut batch = Vec::with_capacity(spp);
        let max = (max_drive_writes * n as f64) as u64;
        let (mut written, mut last_waf) =
            self.overwrite_until_settled(&mut rng, &mut batch, window, n, 0, max);
        if let Some(bytes) = self.cfg.mapping_cache.filter(|_| self.tpages > 0) {
            let (w, waf) = self.steady_mapping_functional(bytes.0, &mut rng, &mut batch);
            written += w;
            last_waf = waf;
        }
        if !batch.is_empty() {
            self.write_batch_functional(&batch);
        }
        self.flush_leftovers();
        (written as f64 / n as f64, last_waf)
    }
}

impl Ftl {
    /// The steady state's last phase with a cached mapping
    /// (`ftl.mapping_cache` of `cache_bytes`): the random overwrites go on
    /// with the cache modelled as the timed drive keeps it. Each program's
    /// entries (host data and GC's copies alike) dirty their translation
    /// page, loaded first when absent; a load into a full cache evicts the
    /// least recently used page (or the oldest, with FIFO), and a dirty one
    /// is written back into translation blocks, which GC collects with the
    /// data blocks. The data blocks reached their steady state before
    /// this phase, when the translation pages had been written once, packed
    /// into full blocks; here the translation blocks reach theirs: it runs
    /// until the windowed WAF, translation pages included, settles within
    /// 1 % twice (windows of twice the translation pages in host writes, so
    /// each translation page is written back several times in each), once
    /// GC and write-back have programmed as many slots as the drive has
    /// LPNs (the data blocks' layout turned over). Then
    /// every dirty page is written back, and the measured run starts with
    /// an empty cache. Returns (host writes done, the last window's WAF).
    fn steady_mapping_functional(
        &mut self,
        cache_bytes: u64,
        rng: &mut Xoshiro256PlusPlus,
        batch: &mut Vec<Lpn>,
    ) -> (u64, f64) {
        let n = self.lpns;
        let spp = self.geo.slots_per_program as usize;
        if self.pre_cache.is_none() {
            self.start_pre_cache(cache_bytes);
        }
        let window = (2 * self.tpages as u64).max(n / 1024).max(spp as u64);
        // At least two windows, and not before GC and write-back have
        // programmed the drive's LPNs' worth of slots on top of the host's:
        // until then the data blocks keep much of the layout the phase
        // without the mapping left, and the WAF is still rising (on the
        // 960 GB preset, seed 43, it passed the 1 % test at 14.1 after 4
        // windows and settles near 16.6 after about 34: 16 M host writes).
        // At most 64 windows (29 M host writes there).
        let done = self.overwrite_until_settled(rng, batch, window, 2 * window, n, 64 * window);
        if !batch.is_empty() {
            self.write_batch_functional(batch);
            batch.clear();
        }
        // Write back what is dirty: the run's cache starts empty.
        if let Some(mut pc) = self.pre_cache.take() {
            for t in pc.cache.take_dirty() {
                self.write_back_functional(&mut pc, t);
            }
        }
        done
    }

    /// The preconditioner's mapping cache of `cache_bytes`, empty.
    fn start_pre_cache(&mut self, cache_bytes: u64) {
        let capacity = (cache_bytes / self.geo.mapping_unit.0.max(1)).min(u32::MAX as u64) as u32;
        self.pre_cache = Some(Box::new(PreCache {
            cache: MapCache::new(self.tpages, capacity).with_fifo(self.cfg.mapping_cache_fifo),
            staged: 0,
            touched: Vec::new(),
            evicted: Vec::new(),
        }));
    }

    /// The steady state of a cached mapping from data blocks already at
    /// theirs and no translation page written (the scaled steady state,
    /// `steady.rs`): every translation page is written once, a program
    /// unit at a time to the units in striping order, GC making room as
    /// for pages written back; then the translation phase runs
    /// ([`Ftl::steady_mapping_functional`]) and what is left is
    /// programmed. Returns (host writes done, the last window's WAF).
    pub(super) fn steady_mapping_from_data(&mut self, seed: u64) -> (u64, f64) {
        let Some(bytes) = self.cfg.mapping_cache.filter(|_| self.tpages > 0) else {
            return (0, 0.0);
        };
        let spp = self.geo.slots_per_program as usize;
        self.start_pre_cache(bytes.0);
        for t in 0..self.tpages {
            if let Some(mut pc) = self.pre_cache.take() {
                self.write_back_functional(&mut pc, t);
                self.pre_cache = Some(pc);
            }
            if (t as usize + 1).is_multiple_of(spp) {
                self.collect_after_write_backs();
            }
        }
        self.collect_after_write_backs();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x4d41_5050_494e_4753);
        let mut batch = Vec::with_capacity(spp);
        let done = self.steady_mapping_functional(bytes.0, &mut rng, &mut batch);
        if !batch.is_empty() {
            self.write_batch_functional(&batch);
        }
        self.flush_leftovers();
        done
    }

    /// Random overwrites of single units (`batch` carries a partial program
    /// unit from call to call) in windows of `window` host writes, until a
    /// window's WAF is within 1 % (relative) of the previous window's twice
    /// in a row, counting only windows that end once `settle_from` writes
    /// are done and programs beyond the host's (GC, write-back) reach
    /// `turnover` slots, or until `max` writes are done. Returns (host
    /// writes done, the last window's WAF).
    fn overwrite_until_settled(
        &mut self,
        rng: &mut Xoshiro256PlusPlus,
        batch: &mut Vec<Lpn>,
        window: u64,
        settle_from: u64,
        turnover: u64,
        max: u64,
    ) -> (u64, f64) {
        let n = self.lpns;
        let spp = self.geo.slots_per_program as usize;
        let (mut written, mut last_waf, mut stable) = (0u64, 0.0, 0);
        let first = self.stats.clone();
        loop {
            let start = self.stats.clone();
            for _ in 0..window {
                batch.push(Lpn(rng.gen_range(0..n) as u32));
                if batch.len() == spp {
                    self.write_batch_functional(batch);
                    batch.clear();
                    if self.pre_cache.is_some() {
                        self.collect_after_write_backs();
                    }
                }
            }
            written += window;
            let host = (self.stats.host_slots - start.host_slots) as f64;
            let prog = (self.stats.programmed_slots - start.programmed_slots) as f64;
            let waf = prog / host.max(1.0);
            let moved = (self.stats.programmed_slots - first.programmed_slots)
                .saturating_sub(self.stats.host_slots - first.host_slots);
            if written >= settle_from
                && moved >= turnover
                && (waf - last_waf).abs() / waf.max(1e-9) < 0.01
            {
                stable += 1;
            } else {
                stable = 0;
            }
            last_waf = waf;
            if stable >= 2 || written >= max {
                return (written, last_waf);
            }
        }
    }

    /// GC on the units that took written-back translation pages, as on a
    /// host batch's unit (their programs take blocks too), and a program of
    /// pages a unit kept staged for want of a block.
    fn collect_after_write_backs(&mut self) {
        let spp = self.geo.slots_per_program as usize;
        // Each collection can write more pages back (GC's copies update
        // entries): until none is left, at most 1,024 rounds.
        for _ in 0..1024 {
            let Some(pc) = self.pre_cache.as_mut() else {
                return;
            };
            let Some(u) = pc.touched.pop() else {
                return;
            };
            self.collect_to_floor_functional(u);
            if self.map_leftover[u as usize].len() >= spp {
                let ts = std::mem::take(&mut self.map_leftover[u as usize]);
                self.program_translations_functional(u, &ts);
            }
        }
    }

    /// Entries of `lpns` changed (they were programmed): their translation
    /// pages in the preconditioner's cache become dirty, loaded first when
    /// absent, and a dirty page a load evicts is written back.
    fn pre_cache_update(&mut self, lpns: &[Lpn]) {
        let Some(mut pc) = self.pre_cache.take() else {
            return;
        };
        let mut evicted = std::mem::take(&mut pc.evicted);
        for &l in lpns {
            let t = self.translation_page_of(l.0);
            if pc.cache.access(t, true) != Access::Load {
                continue;
            }
            if let (_, Some(v)) = pc.cache.loaded(t, true) {
                evicted.push(v);
            }
        }
        // The write-backs change nothing the cache decides on, so they can
        // follow the loads: first ask for their old copies' P2L entries
        // (random), so the misses overlap; then write back in eviction order.
        for &v in &evicted {
            self.prefetch_translation_slot(v);
        }
        for &v in &evicted {
            self.write_back_functional(&mut pc, v);
        }
        evicted.clear();
        pc.evicted = evicted;
        self.pre_cache = Some(pc);
    }

    /// Translation page `t` is written back: staged on the next unit in
    /// striping order, a program unit of pages per unit.
    fn write_back_functional(&mut self, pc: &mut PreCache, t: u32) {
        if self.translation_to_buffer(t) {
            let spp = self.geo.slots_per_program.max(1) as u64;
            let units = self.stripe.len() as u64;
            let u = self.stripe[((pc.staged / spp) % units) as usize];
            pc.staged += 1;
            if pc.touched.last() != Some(&u) {
                pc.touched.push(u);
            }
            self.stage_translation_functional(u, t);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{Device, MappingScheme};
    use crate::device::ftl::tests::{ftl_for, small_device};

    /// No shipped drive's configuration turns the fill into a per-LPN pass
    /// (issue 16): every preset takes the closed form, also with factory
    /// bad blocks and under BAST mapping (the SLC presets but for BAST,
    /// which refuses an SLC cache). The fill writes no table entry.
    #[test]
    fn every_preset_fills_in_closed_form() {
        for name in crate::config::preset_names() {
            let base = Device::preset(&name).expect("shipped preset");
            if matches!(base.backend, crate::config::Backend::RamDisk { .. }) {
                continue;
            }
            for (bad, bast) in [(0.0, false), (0.005, false), (0.005, true)] {
                let mut d = base.clone();
                d.nand.factory_bad_blocks = bad;
                if bast {
                    if d.ftl.has_slc() {
                        continue;
                    }
                    d.ftl.mapping = MappingScheme::Bast;
                    d.ftl.log_blocks = 2;
                }
                let mut f = ftl_for(&d);
                assert_eq!(f.fill_sequential(), None, "{name}: a reason given");
                assert!(
                    f.fill.n > 0,
                    "{name} (bad blocks {bad}, BAST {bast}): the fill went LPN by LPN"
                );
                assert_eq!(f.l2p.written() + f.p2l.written(), 0, "{name}");
            }
        }
    }

    /// A fill that would reach the GC floor (or, under block or hybrid
    /// mapping, the log blocks' reserve) runs LPN by LPN and says why: the
    /// report names it, so no setting makes the fill a full pass unsaid.
    #[test]
    fn a_fill_past_its_floor_runs_per_lpn_and_says_why() {
        let mut d = small_device("greedy", true);
        assert_eq!(ftl_for(&d).fill_sequential(), None);
        d.ftl.gc_threshold = 11;
        d.ftl.gc_hard_threshold = 10;
        let mut f = ftl_for(&d);
        assert_eq!(
            f.fill_sequential(),
            Some("a fill that reaches the GC floor [ftl.gc_hard_threshold, ftl.over_provisioning]")
        );
        assert_eq!(f.fill.n, 0, "closed form used");
        f.check_invariants().unwrap();
        let mut d = small_device("greedy", true);
        d.ftl.mapping = MappingScheme::Bast;
        d.ftl.log_blocks = 2;
        assert_eq!(ftl_for(&d).fill_sequential(), None);
        d.ftl.log_blocks = 9;
        let mut f = ftl_for(&d);
        assert_eq!(
            f.fill_sequential(),
            Some("a fill that reaches the log blocks' reserve [ftl.log_blocks, ftl.over_provisioning]")
        );
        f.check_invariants().unwrap();
    }
}
