//! Seed 001's L-log (`ftl.validity_log`): the validity bitmaps, a bit per
//! physical mapping unit, live on flash in pages of one mapping unit
//! (32,768 bits of a 4 KiB unit), after the translation pages and the
//! checkpoint record in the L2P, so they are written, garbage-collected
//! and located like translation pages (their blocks' own validity is kept
//! in DRAM: the regress of logs for logs stops there). The drive caches
//! `validity_log` bytes of them ([`super::mapcache::MapCache`], LRU): each
//! program and invalidation of a data unit updates its page (loaded first
//! when absent, written back when evicted dirty), and GC reads its
//! victim's pages before it copies anything. The per-block valid counts
//! greedy selection uses stay in DRAM (2 bytes a block).

use super::Ftl;

impl Ftl {
    /// Validity pages (0 without an L-log).
    pub fn validity_pages(&self) -> u32 {
        self.vpages
    }

    /// The metadata-page index of the first validity page.
    pub fn validity_base(&self) -> u32 {
        self.vbase
    }

    /// Is metadata page `t` (a [`Ftl::as_translation_page`] index) a
    /// validity page? (The directory's pages follow them: found by the
    /// swarm once it drew both, a directory page taken for a validity page.)
    #[inline]
    pub fn is_validity_page(&self, t: u32) -> bool {
        t >= self.vbase && t - self.vbase < self.vpages
    }

    /// The validity page holding slot `ppa`'s bit.
    #[inline]
    fn validity_page_of(&self, ppa: u32) -> u32 {
        self.vbase + (ppa as u64 / (self.geo.mapping_unit.0 * 8)) as u32
    }

    /// Slot `ppa` changes validity: note its page if it holds user data.
    #[inline]
    pub(super) fn validity_touch_slot(&mut self, ppa: u32) {
        let l = self.p2l(ppa);
        if (l as u64) < self.lpns {
            let t = self.validity_page_of(ppa);
            if self.vtouched.last() != Some(&t) {
                self.vtouched.push(t);
            }
        }
    }

    /// Note validity updates from now on (an L-log, once preconditioned).
    pub fn track_validity(&mut self) {
        // From now on every invalidation is noted as it happens.
        self.apply_invalidations();
        self.vtrack = self.vpages > 0;
    }

    /// Move the validity pages updated since the last call into `out`.
    pub fn take_validity_updates(&mut self, out: &mut Vec<u32>) {
        out.clear();
        std::mem::swap(out, &mut self.vtouched);
    }

    /// The validity pages of block `block_id`'s slots.
    pub fn validity_pages_of_block(&self, block_id: u32) -> std::ops::RangeInclusive<u32> {
        let first = self.geo.block_first_slot(block_id);
        let last = first + self.geo.slots_per_block - 1;
        self.validity_page_of(first)..=self.validity_page_of(last)
    }

    /// Preconditioning: put every validity page on flash (after the
    /// translation pages).
    pub(super) fn write_validity_pages(&mut self) {
        for t in self.vbase..self.vbase + self.vpages {
            if self.translation_to_buffer(t) {
                let n = self.stripe.len();
                let u = self.stripe[(t / self.geo.slots_per_program) as usize % n];
                self.stage_translation_functional(u, t);
            }
        }
    }
}
