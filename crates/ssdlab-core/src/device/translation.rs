//! The drive's side of a cached mapping table (`ftl.mapping_cache`, see
//! [`crate::device::ftl::mapcache`]): a read waits for the translation
//! pages of the units it must look up; a program, GC relocation or trim
//! updates entries, loading their pages first when absent (the update is
//! applied when the page arrives; the data does not wait); a
//! read-modify-write looks up its old data's location first (the old-data
//! read waits for the page); a dirty page
//! evicted by a load joins the translation write queue, which is
//! programmed a whole program unit at a time into translation blocks, on
//! the units in striping order. Every translation read and program is a
//! real flash transaction on its die, competing with host I/O.

use super::{Drive, TAG_MAPREAD, TAG_RMW, TAG_SHIFT};
use crate::config::OpKind;
use crate::device::flash::Txn;
use crate::device::ftl::mapcache::Access;
use crate::device::ftl::Mapping;
use crate::engine::EventQueue;
use crate::events::Event;
use crate::fabric::Fabric;
use crate::units::{Lpn, Ppa, Time};
use crate::workload::Op;

impl Drive {
    /// Read `cmd` is about to translate its units: load the translation
    /// pages of those not in DRAM (data in the write buffer or read cache
    /// needs no lookup). Returns true if it must wait for a page; it is
    /// processed again when the last one arrives (and then passes).
    pub(super) fn translate_read(
        &mut self,
        now: Time,
        cmd: u32,
        eq: &mut EventQueue<Event>,
    ) -> bool {
        let i = cmd as usize;
        if self.translated.len() <= i {
            self.translated.resize(i + 1, false);
        }
        if std::mem::take(&mut self.translated[i]) {
            return false;
        }
        let c = self.cmds[i];
        let mut waits = 0;
        let mut last = u32::MAX;
        for l in c.lpn..c.lpn + c.nlpn {
            if self.cache.contains(l) || self.ftl.lookup(Lpn(l)) == Mapping::InBuffer {
                continue;
            }
            let t = self.ftl.translation_page_of(l);
            let Some(mc) = self.mcache.as_mut() else {
                return false;
            };
            if mc.access(t, false) == Access::Load {
                self.load_translation(now, t, eq);
            }
            let Some(mc) = self.mcache.as_mut() else {
                return false;
            };
            if !mc.is_resident(t) && t != last {
                mc.wait(t, cmd);
                waits += 1;
                last = t;
            }
        }
        self.cmds[i].pending = waits;
        self.translated[i] = waits > 0;
        waits > 0
    }

    /// A read-modify-write of write `cmd` needs the old location of unit
    /// `lpn`: look its translation page up. False: it is in DRAM (read the
    /// old data now); true: the page is being read and `cmd` waits for it
    /// ([`Self::rmw_translated`] reads the old data then).
    pub(super) fn rmw_translation_wait(
        &mut self,
        now: Time,
        lpn: u32,
        cmd: u32,
        eq: &mut EventQueue<Event>,
    ) -> bool {
        let t = self.ftl.translation_page_of(lpn);
        let Some(mc) = self.mcache.as_mut() else {
            return false;
        };
        if mc.access(t, false) == Access::Load {
            self.load_translation(now, t, eq);
        }
        let Some(mc) = self.mcache.as_mut() else {
            return false;
        };
        if mc.is_resident(t) {
            return false;
        }
        if !mc.is_waiting(t, cmd) {
            mc.wait(t, cmd);
        }
        true
    }

    /// Translation page `t` came in for write `cmd`'s read-modify-write:
    /// for each of its partial units that waited for `t`, read the old data
    /// (or, if a write since brought the unit into DRAM or a trim unmapped
    /// it, count that part done).
    fn rmw_translated(
        &mut self,
        now: Time,
        cmd: u32,
        t: u32,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        for (i, l) in self.rmw_units(cmd).into_iter().enumerate() {
            let Some(l) = l else { continue };
            let w = &mut self.rmw_waiting[cmd as usize];
            if *w & (1 << i) == 0 || self.ftl.translation_page_of(l) != t {
                continue;
            }
            *w &= !(1 << i);
            let old = if self.cache.contains(l) {
                Mapping::InBuffer
            } else {
                self.ftl.lookup(Lpn(l))
            };
            match old {
                Mapping::Flash(p) => {
                    self.ftl.stats.rmw_flash_reads += 1;
                    self.read_unit(now, p, (TAG_RMW << TAG_SHIFT) | cmd as u64, eq);
                }
                Mapping::Unmapped | Mapping::InBuffer => self.write_in(now, cmd, eq, fabric),
            }
        }
    }

    /// The entry of `lpn` changes (a program commits it, GC moved it, or a
    /// trim unmapped it): its translation page becomes dirty, once loaded.
    #[inline]
    pub(super) fn update_translation(&mut self, now: Time, lpn: u32, eq: &mut EventQueue<Event>) {
        let t = self.ftl.translation_page_of(lpn);
        if let Some(mc) = self.mcache.as_mut() {
            if mc.access(t, true) == Access::Load {
                self.load_translation(now, t, eq);
            }
        }
    }

    /// Start loading translation page `t`: one flash read of one unit, or
    /// nothing when it was never written (all its entries are unmapped) or
    /// waits in the write queue (it is in DRAM).
    pub(super) fn load_translation(&mut self, now: Time, t: u32, eq: &mut EventQueue<Event>) {
        match self.ftl.translation_location(t) {
            Mapping::Flash(p) => {
                // Its location is in a directory page (with the directory
                // on flash): that page first, if it is not in DRAM.
                if self.directory_wait(now, t, eq) {
                    return;
                }
                self.read_metadata(now, p, t, eq);
            }
            Mapping::Unmapped | Mapping::InBuffer => {
                let waiters = self.translation_in(t, false);
                debug_assert!(waiters.is_empty());
            }
        }
    }

    /// Read metadata page `t` from `p` (its location known).
    fn read_metadata(&mut self, now: Time, p: Ppa, t: u32, eq: &mut EventQueue<Event>) {
        self.fw.issue_flash_command(now);
        self.read_unit(now, p, (TAG_MAPREAD << TAG_SHIFT) | t as u64, eq);
    }

    /// Translation page `t` is in DRAM: returns the commands that waited
    /// for it. A dirty page it evicted joins the write queue.
    pub(super) fn translation_in(&mut self, t: u32, from_flash: bool) -> Vec<u32> {
        if self.ftl.is_validity_page(t) {
            return self.validity_in(t, from_flash);
        }
        if self.ftl.is_directory_page(t) {
            return self.directory_in(t, from_flash);
        }
        let Some(mc) = self.mcache.as_mut() else {
            return Vec::new();
        };
        let (waiters, evicted) = mc.loaded(t, from_flash);
        // The next load's eviction most likely takes the new LRU tail: ask
        // for its flash copy's P2L entry now (a hint; no effect on results).
        if let Some(next) = mc.next_victim() {
            self.ftl.prefetch_translation_slot(next);
        }
        if let Some(v) = evicted {
            if self.ftl.translation_to_buffer(v) {
                self.map_queue.push_back(v);
            }
        }
        waiters
    }

    /// The flash read of translation page `t` finished.
    pub(super) fn translation_read_done(
        &mut self,
        now: Time,
        t: u32,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        // The page moved over the channel into DRAM.
        self.act.dram_bytes += self.unit_bytes;
        self.dram.reserve(now, self.dram_xfer.time(self.unit_bytes));
        self.metadata_arrived(now, t, true, eq, fabric);
        // Of what `try_flush` acts on, a translation read changes only the
        // write queue (a dirty page its load evicted): program room, staged
        // data and free blocks change in events that call `try_flush`
        // themselves, and so do the commands that waited for this page. So
        // only its first step runs. With an L-log, `try_flush` also first
        // loads the validity pages the FTL changed (`drain_validity`), which
        // what waited for this page may have changed: the whole call then.
        if self.lcache.is_some() {
            self.try_flush(now, eq);
        } else if !self.map_queue.is_empty() && self.program_room > 0 {
            self.flush_translations(now, eq);
        }
    }

    /// Metadata page `t` is in DRAM (`from_flash`: read; else it was found
    /// waiting to be written, or never written): let what waited for it go.
    fn metadata_arrived(
        &mut self,
        now: Time,
        t: u32,
        from_flash: bool,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        if self.ftl.is_validity_page(t) {
            // Waiting for it: GC jobs (by unit).
            for unit in self.translation_in(t, from_flash) {
                self.validity_for_gc(now, unit, eq);
            }
            return;
        }
        if self.ftl.is_directory_page(t) {
            // Waiting for it: pages of the level below, whose locations it
            // holds: read each now (or, if it has since come into DRAM to
            // be written, it is in).
            for child in self.translation_in(t, from_flash) {
                match self.ftl.translation_location(child) {
                    Mapping::Flash(p) => self.read_metadata(now, p, child, eq),
                    Mapping::Unmapped | Mapping::InBuffer => {
                        self.metadata_arrived(now, child, false, eq, fabric)
                    }
                }
            }
            return;
        }
        for cmd in self.translation_in(t, from_flash) {
            if self.cmds[cmd as usize].op == Op::Write {
                // A read-modify-write waited for its old data's location.
                self.rmw_translated(now, cmd, t, eq, fabric);
                continue;
            }
            let c = &mut self.cmds[cmd as usize];
            c.pending -= 1;
            if c.pending == 0 {
                self.process(now, cmd, eq, fabric);
            }
        }
    }

    /// Program whole units of waiting translation pages, each on the next
    /// unit in striping order whose die has room in its program queue.
    pub(super) fn flush_translations(&mut self, now: Time, eq: &mut EventQueue<Event>) {
        let spp = self.geo.slots_per_program as usize;
        while (self.map_queue.len() >= spp
            || (!self.map_queue.is_empty() && self.checkpoint_pending()))
            && self.program_room > 0
        {
            let n = self.stripe_dies.len();
            let chosen =
                self.stripe_with_room(self.map_cursor % n, |d, u| d.ftl.can_allocate_map(u));
            let Some((pos, u)) = chosen else {
                return;
            };
            self.map_cursor = (pos + 1) % n;
            self.program_translations(now, u, eq);
        }
    }

    fn program_translations(&mut self, now: Time, u: u32, eq: &mut EventQueue<Event>) {
        let spp = self.geo.slots_per_program;
        let Some(first) = self.ftl.allocate_map(u) else {
            return;
        };
        let mut n = 0;
        for i in 0..spp {
            if let Some(t) = self.map_queue.pop_front() {
                self.ftl.commit_translation(t, Ppa(first.0 + i));
                n += 1;
                // Its location changed: so did its directory page.
                if self.dcache.is_some() {
                    self.directory_update(now, t, eq);
                }
            }
        }
        let owner = self.checkpoint_program_issued(n);
        self.fw.background(1, now);
        self.fw.issue_flash_command(now);
        let out = spp as u64 * self.unit_bytes;
        self.act.dram_bytes += out;
        self.dram.reserve(now, self.dram_xfer.time(out));
        let a = self.geo.decode(first);
        let tx = Txn {
            kind: OpKind::Write,
            die: self.geo.die_of_unit(u),
            t_array: self.timings.program(self.geo.page_type(a.page)),
            bytes: out,
            owner,
            slc: false,
        };
        self.program_room = self.program_room.wrapping_sub(1);
        let d = self.index;
        self.flash
            .submit(now, tx, &mut |tt, e| eq.at(tt, Event::Flash { d, fe: e }));
        self.maybe_gc(now, u, 0, eq);
    }

    /// Metadata page `t` is about to be read from flash: with the directory
    /// on flash, its location is in a directory page. True if that page is
    /// not in DRAM: it is being loaded and `t` is read when it arrives.
    fn directory_wait(&mut self, now: Time, t: u32, eq: &mut EventQueue<Event>) -> bool {
        if self.dcache.is_none() {
            return false;
        }
        let Some(p) = self.ftl.directory_parent(t) else {
            return false;
        };
        let i = self.ftl.directory_index(p);
        let Some(dc) = self.dcache.as_mut() else {
            return false;
        };
        if dc.access(i, false) == Access::Load {
            self.load_translation(now, p, eq);
        }
        let Some(dc) = self.dcache.as_mut() else {
            return false;
        };
        if dc.is_resident(i) {
            return false;
        }
        if !dc.is_waiting(i, t) {
            dc.wait(i, t);
        }
        true
    }

    /// Metadata page `t` was written to a new place: the directory page
    /// holding its location becomes dirty (loaded first when absent; the
    /// root, in DRAM, needs nothing).
    fn directory_update(&mut self, now: Time, t: u32, eq: &mut EventQueue<Event>) {
        let Some(p) = self.ftl.directory_parent(t) else {
            return;
        };
        let i = self.ftl.directory_index(p);
        if let Some(dc) = self.dcache.as_mut() {
            if dc.access(i, true) == Access::Load {
                self.load_translation(now, p, eq);
            }
        }
    }

    /// Directory page `t` is in DRAM: returns the pages that waited for it.
    /// A dirty page it evicted joins the write queue.
    fn directory_in(&mut self, t: u32, from_flash: bool) -> Vec<u32> {
        let i = self.ftl.directory_index(t);
        let Some(dc) = self.dcache.as_mut() else {
            return Vec::new();
        };
        let (waiters, evicted) = dc.loaded(i, from_flash);
        if let Some(v) = evicted {
            let v = self.ftl.directory_page(v);
            if self.ftl.translation_to_buffer(v) {
                self.map_queue.push_back(v);
            }
        }
        waiters
    }

    /// The `mapping` section of the report since `base` (cached mapping only).
    pub fn mapping_report(&self, base: &super::Snapshot) -> Option<crate::report::MappingCache> {
        let mc = self.mcache.as_ref()?;
        let (m, b) = (&mc.stats, &base.map);
        let (f, fb) = (&self.ftl.stats, &base.ftl);
        let lookups = (m.hits + m.misses) - (b.hits + b.misses);
        let hits = m.hits - b.hits;
        let host = f.host_slots - fb.host_slots;
        // Translation pages (and checkpoint records), not validity pages.
        let map = (f.map_slots - fb.map_slots) - (f.validity_slots - fb.validity_slots);
        Some(crate::report::MappingCache {
            cache_bytes: self.dev.ftl.mapping_cache.map_or(0, |c| c.0),
            cached_pages: mc.capacity() as u64,
            translation_pages: self.ftl.translation_pages() as u64,
            entries_per_page: self.ftl.entries_per_translation_page() as u64,
            lookups,
            hits,
            hit_ratio: crate::report::hit_ratio(hits, lookups),
            translation_reads: m.loads - b.loads,
            translation_writes: map,
            translation_gc_moves: f.map_pages_moved - fb.map_pages_moved,
            waf_mapping: if host == 0 {
                0.0
            } else {
                map as f64 / host as f64
            },
            directory: self.dcache.as_ref().map(|dc| {
                let (d, db) = (&dc.stats, &base.dir);
                let lookups = (d.hits + d.misses) - (db.hits + db.misses);
                let hits = d.hits - db.hits;
                crate::report::DirectoryCache {
                    cache_bytes: self.dev.ftl.directory_cache.map_or(0, |c| c.0),
                    cached_pages: dc.capacity() as u64,
                    levels: self
                        .ftl
                        .directory_levels()
                        .iter()
                        .map(|&n| n as u64)
                        .collect(),
                    lookups,
                    hits,
                    hit_ratio: crate::report::hit_ratio(hits, lookups),
                    reads: d.loads - db.loads,
                    writes: f.directory_slots - fb.directory_slots,
                }
            }),
        })
    }
}
