//! Mapping checkpoints (seed 001's C-log; issue 14, part 5): what a
//! checkpoint writes and what recovery reads back.
//!
//! The mapping lives on flash in translation pages (one mapping unit of
//! 4-byte L2P entries each, as with a cached mapping): a checkpoint writes
//! those changed since the previous one (with the whole mapping in DRAM the
//! FTL marks a page when a program or trim changes one of its entries; with
//! a cached mapping, the pages dirty in DRAM) and a record: the directory of
//! translation pages (4 B each) and the block table (8 B a block). The
//! record's units follow the translation pages in the L2P, so they are
//! written, garbage-collected and located like them. Recovery reads the
//! record and, with the whole mapping in DRAM, every translation page that
//! is on flash (the drive boots with its full map), then scans only the
//! blocks closed since the checkpoint began and the open ones.

use super::{on_flash, Ftl};
use crate::units::Time;

impl Ftl {
    /// A program or trim changed `lpn`'s entry: its translation page is to
    /// be in the next checkpoint (whole mapping in DRAM only).
    #[inline]
    pub(super) fn checkpoint_touch(&mut self, lpn: u32) {
        if (lpn as u64) < self.lpns {
            let t = self.translation_page_of(lpn) as usize;
            self.ckpt_dirty[t / 64] |= 1 << (t % 64);
        }
    }

    /// Units of a checkpoint record (0 without checkpoints).
    pub fn checkpoint_record_units(&self) -> u32 {
        self.crec
    }

    /// Start a checkpoint: the translation pages to write (`cached_dirty`:
    /// those dirty in a cached mapping's DRAM; with the whole mapping in
    /// DRAM, those marked since the last checkpoint) and the record's
    /// units, each made stale on flash. Returns the pages to queue for
    /// programming (those not already waiting to be written).
    pub fn checkpoint_pages(&mut self, cached_dirty: Vec<u32>) -> Vec<u32> {
        let mut pages = cached_dirty;
        for (w, bits) in self.ckpt_dirty.iter_mut().enumerate() {
            let mut b = std::mem::take(bits);
            while b != 0 {
                pages.push(w as u32 * 64 + b.trailing_zeros());
                b &= b - 1;
            }
        }
        pages.extend(self.tpages..self.tpages + self.crec);
        pages.retain(|&t| self.translation_to_buffer(t));
        self.stats.checkpoint_slots += pages.len() as u64;
        pages
    }

    /// Per unit: loading the last checkpoint (its record, and with the
    /// whole mapping in DRAM every translation page on flash): the page
    /// reads (units programmed together share a (multi-plane) page row,
    /// read once), the mapping units they move, and their array time.
    /// `read_time(slc, page)` as in [`Ftl::recovery_scan`].
    pub fn checkpoint_reads(&self, read_time: impl Fn(bool, u32) -> Time) -> Vec<(u64, u64, Time)> {
        if self.is_hybrid() {
            return self.hybrid_checkpoint_reads(read_time);
        }
        let mut out = vec![(0u64, 0u64, Time::ZERO); self.units.len()];
        let all = !self.ckpt_dirty.is_empty();
        let first = if all { 0 } else { self.tpages };
        let row = (self.geo.planes_per_unit * self.geo.slots_per_page).max(1);
        let mut slots: Vec<u32> = (first..self.tpages + self.crec)
            .map(|t| self.l2p(self.lpns as u32 + t))
            .filter(|&p| on_flash(p))
            .collect();
        slots.sort_unstable();
        let mut last_row = u32::MAX;
        for p in slots {
            let block = p / self.geo.slots_per_block;
            let u = self.geo.unit_of_block(block) as usize;
            out[u].1 += 1;
            if p / row != last_row {
                last_row = p / row;
                let slc = !self.slc_mode.is_empty() && self.slc_mode[block as usize];
                let a = self.geo.decode(crate::units::Ppa(p));
                out[u].0 += 1;
                out[u].2 += read_time(slc, a.page);
            }
        }
        out
    }
}
