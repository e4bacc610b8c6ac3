//! Translation pages on flash, for a cached mapping table
//! ([`super::mapcache`]): where each one lives (the directory, DFTL's GTD,
//! kept as L2P entries after the logical units), and their own write
//! frontier per parallel unit, so translation pages fill their own blocks.
//! GC collects those blocks like data blocks (greedy picks them when they
//! hold few valid pages); their valid pages go back to the controller's
//! translation write queue, not into a data block.

use super::{buffered, on_flash, Ftl, Mapping, IN_BUFFER};
use crate::units::{Lpn, Ppa};

impl Ftl {
    /// Translation pages (0 when the whole mapping is in DRAM).
    pub fn translation_pages(&self) -> u32 {
        self.tpages
    }

    /// L2P entries per translation page.
    pub fn entries_per_translation_page(&self) -> u32 {
        self.tpe
    }

    /// Pages of the mapping directory stored on flash, all levels (0: the
    /// directory is held whole in DRAM).
    pub fn directory_pages(&self) -> u32 {
        self.dlevels.iter().sum()
    }

    /// Directory pages per level stored on flash, level 1 (locating the
    /// translation pages) first; the root above them is in DRAM.
    pub fn directory_levels(&self) -> &[u32] {
        &self.dlevels
    }

    /// Is metadata page `t` a directory page?
    #[inline]
    pub fn is_directory_page(&self, t: u32) -> bool {
        t >= self.dbase && t - self.dbase < self.directory_pages()
    }

    /// Directory page `t`'s index among the directory's pages.
    #[inline]
    pub fn directory_index(&self, t: u32) -> u32 {
        t - self.dbase
    }

    /// Metadata page id of the directory page with index `i`.
    #[inline]
    pub fn directory_page(&self, i: u32) -> u32 {
        self.dbase + i
    }

    /// The directory page holding metadata page `t`'s location: a level-1
    /// page for a translation page, the level above for a directory page;
    /// `None` when the root (in DRAM) holds it, or `t` is neither.
    pub fn directory_parent(&self, t: u32) -> Option<u32> {
        if self.dlevels.is_empty() {
            return None;
        }
        let per = self.tpe;
        if t < self.tpages {
            return Some(self.dbase + t / per);
        }
        let mut first = self.dbase;
        for (k, &n) in self.dlevels.iter().enumerate() {
            if t >= first && t < first + n {
                let j = t - first;
                return (k + 1 < self.dlevels.len()).then_some(first + n + j / per);
            }
            first += n;
        }
        None
    }

    /// The translation page holding `lpn`'s entry.
    #[inline]
    pub fn translation_page_of(&self, lpn: u32) -> u32 {
        self.tpe_div.quotient(lpn)
    }

    /// Where translation page `t` is: never written (`Unmapped`: all its
    /// entries are unmapped), waiting in the controller to be written
    /// (`InBuffer`), or on flash.
    #[inline]
    pub fn translation_location(&self, t: u32) -> Mapping {
        self.lookup(Lpn(self.lpns as u32 + t))
    }

    /// The translation page a block's slot holds, if it holds one (a
    /// [`Ftl::valid_slots`] entry).
    #[inline]
    pub fn as_translation_page(&self, lpn: Lpn) -> Option<u32> {
        (lpn.0 as u64 >= self.lpns).then(|| (lpn.0 as u64 - self.lpns) as u32)
    }

    /// Bring the P2L entry of translation page `t`'s flash copy into cache
    /// ahead of [`Ftl::translation_to_buffer`] (a hint: no effect).
    #[inline]
    pub fn prefetch_translation_slot(&self, t: u32) {
        let old = self.l2p(self.lpns as u32 + t);
        if on_flash(old) {
            self.p2l.prefetch(old as usize);
        }
    }

    /// Translation page `t` is to be written back (a dirty eviction): its
    /// flash copy is stale from now on. Returns false if it was already
    /// waiting to be written.
    pub fn translation_to_buffer(&mut self, t: u32) -> bool {
        let l = self.lpns as u32 + t;
        let old = self.l2p(l);
        if buffered(old) {
            return false;
        }
        if on_flash(old) {
            self.invalidate_slot(old);
        }
        self.set_l2p(l, IN_BUFFER);
        true
    }

    /// GC read translation page `t` out of `ppa`: if that is still its
    /// latest copy, it is to be written again (returns true), else it was
    /// written back meanwhile (false).
    pub fn relocate_translation(&mut self, ppa: Ppa, t: u32) -> bool {
        let l = self.lpns as u32 + t;
        if self.holds_latest(ppa.0, l) {
            self.invalidate_slot(ppa.0);
            self.set_l2p(l, IN_BUFFER);
            self.stats.map_pages_moved += 1;
            true
        } else {
            false
        }
    }

    /// Can a program unit of translation pages go to `unit`? They may not
    /// take the last free block (GC relocation needs it to make progress).
    pub fn can_allocate_map(&self, unit: u32) -> bool {
        let u = &self.units[unit as usize];
        if let Some((_, off)) = u.map_active {
            if off < self.geo.slots_per_block {
                return true;
            }
        }
        u.free.len() > 1
    }

    /// Allocate a program unit of translation pages on `unit`: returns its first slot.
    pub fn allocate_map(&mut self, unit: u32) -> Option<Ppa> {
        self.allocate_native(unit, true)
    }

    /// Translation page `t` (waiting to be written) is programmed at `ppa`.
    pub fn commit_translation(&mut self, t: u32, ppa: Ppa) {
        if self.is_validity_page(t) {
            self.stats.validity_slots += 1;
        } else if self.is_directory_page(t) {
            self.stats.directory_slots += 1;
        }
        self.commit(Lpn(self.lpns as u32 + t), ppa);
    }

    /// Preconditioning: write every translation page once (after a fill,
    /// so the directory points at flash), a program unit at a time over
    /// the units in striping order.
    pub(super) fn write_translation_pages(&mut self) {
        for t in 0..self.tpages {
            if self.translation_to_buffer(t) {
                let n = self.stripe.len();
                let u = self.stripe[(t / self.geo.slots_per_program) as usize % n];
                self.stage_translation_functional(u, t);
            }
        }
        self.write_validity_pages();
        // Then the directory, level by level (each points at the level below).
        for i in 0..self.directory_pages() {
            let t = self.dbase + i;
            if self.translation_to_buffer(t) {
                let n = self.stripe.len();
                let u = self.stripe[(t / self.geo.slots_per_program) as usize % n];
                self.stage_translation_functional(u, t);
            }
        }
        self.flush_translation_leftovers();
    }

    /// Functional path: stage translation page `t` (waiting to be written)
    /// on `unit`; program a unit's staged pages once they fill a program unit.
    pub(super) fn stage_translation_functional(&mut self, unit: u32, t: u32) {
        let spp = self.geo.slots_per_program as usize;
        self.map_leftover[unit as usize].push(t);
        if self.map_leftover[unit as usize].len() >= spp {
            let mut ts = std::mem::take(&mut self.map_leftover[unit as usize]);
            self.program_translations_functional(unit, &ts);
            // The staging buffer goes back for the next pages (an
            // allocation and three regrowths per program unit otherwise),
            // unless pages were staged again for want of a block.
            let left = &mut self.map_leftover[unit as usize];
            if left.is_empty() {
                ts.clear();
                *left = ts;
            }
        }
    }

    pub(super) fn program_translations_functional(&mut self, unit: u32, ts: &[u32]) {
        let spp = self.geo.slots_per_program as usize;
        for (k, chunk) in ts.chunks(spp).enumerate() {
            // Translation pages never take the unit's last free block (GC
            // relocation needs it), as on the timed path.
            let first = if self.can_allocate_map(unit) {
                self.allocate_map(unit)
            } else {
                None
            };
            let Some(first) = first else {
                // No block left on this unit: keep the rest staged.
                self.map_leftover[unit as usize].extend_from_slice(&ts[k * spp..]);
                return;
            };
            for (i, &t) in chunk.iter().enumerate() {
                if self.translation_location(t) == Mapping::InBuffer {
                    self.commit_translation(t, Ppa(first.0 + i as u32));
                }
            }
        }
    }

    /// Program every unit's staged translation pages (padding the last program unit).
    pub(super) fn flush_translation_leftovers(&mut self) {
        for u in 0..self.geo.units {
            let ts = std::mem::take(&mut self.map_leftover[u as usize]);
            if !ts.is_empty() {
                self.program_translations_functional(u, &ts);
            }
        }
    }
}
