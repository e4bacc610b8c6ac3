//! Invalidations of overwritten slots, applied in batches.
//!
//! A host write makes its LPN's old slot invalid: the slot's P2L entry
//! becomes unmapped and its block loses a valid slot. Both are random
//! accesses into tables far larger than any cache (1.9 GB of L2P and P2L on
//! the 960 GB preset, and 700 KB of valid counts), and each costs a cache
//! miss and a TLB miss. On a virtual machine the page walk of a TLB miss
//! holds up retirement wherever it is issued, so one invalidation at a time
//! costs each host write the whole walk. Kept back and applied
//! [`BATCH`] at a time, after prefetching every entry of the batch, the
//! walks overlap (issue 16; docs/performance.md gives the measurements).
//!
//! Nothing can observe the delay. [`super::Ftl::p2l`] reads a slot that
//! waits here as unmapped, and [`super::Ftl::valid_in`] subtracts a block's
//! waiting slots from its count; GC's staleness test asks the L2P first,
//! which never names a waiting slot ([`super::Ftl::holds_latest`]). The FTL applies the batch before anything
//! reads counts or P2L entries in bulk: before choosing a victim, before an
//! erase, and before the validity log, the durability journal or block
//! and hybrid mapping start (they never defer: see
//! [`super::Ftl::defers_invalidations`]).

/// Invalidations kept back before they are applied together.
pub(super) const BATCH: usize = 16;

/// Old slots of overwritten LPNs whose P2L entry and block count are not
/// yet updated (at most [`BATCH`], in arrival order, each slot once).
#[derive(Debug, Default)]
pub(super) struct PendingInvalidations {
    slots: Vec<u32>,
}

impl PendingInvalidations {
    pub(super) fn new() -> Self {
        Self {
            slots: Vec::with_capacity(BATCH),
        }
    }

    /// Nothing waits.
    #[inline(always)]
    pub(super) fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Slots waiting.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Keep `slot` back; true when the batch is full (apply it now).
    #[inline]
    pub(super) fn push(&mut self, slot: u32) -> bool {
        debug_assert!(!self.slots.contains(&slot), "slot {slot} invalidated twice");
        self.slots.push(slot);
        self.slots.len() >= BATCH
    }

    /// Does `slot` wait here?
    #[inline]
    pub(super) fn contains(&self, slot: u32) -> bool {
        self.slots.contains(&slot)
    }

    /// Waiting slots of the block whose slots are `first..first + n`.
    #[inline]
    pub(super) fn in_range(&self, first: u32, n: u32) -> u32 {
        self.slots
            .iter()
            .filter(|&&s| s.wrapping_sub(first) < n)
            .count() as u32
    }

    /// The waiting slots.
    #[inline]
    pub(super) fn slots(&self) -> &[u32] {
        &self.slots
    }

    /// Take the waiting slots, to apply them (give the vector back with
    /// [`PendingInvalidations::restore`]: it keeps its allocation).
    #[inline]
    pub(super) fn take(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.slots)
    }

    /// Put back the vector [`PendingInvalidations::take`] took, emptied.
    #[inline]
    pub(super) fn restore(&mut self, mut v: Vec<u32>) {
        v.clear();
        self.slots = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_fills_at_its_size_and_counts_by_block() {
        let mut p = PendingInvalidations::new();
        for s in 0..BATCH as u32 - 1 {
            assert!(!p.push(s * 10));
        }
        assert!(p.push(1_000_000));
        assert_eq!(p.len(), BATCH);
        assert!(p.contains(30) && !p.contains(31));
        // Slots 0, 10, 20, ... 140 and 1,000,000: 0..=20 lie in 0..25.
        assert_eq!(p.in_range(0, 25), 3);
        assert_eq!(p.in_range(999_990, 20), 1);
        assert_eq!(p.in_range(2_000_000, 100), 0);
        let v = p.take();
        assert!(p.is_empty());
        assert_eq!(v.len(), BATCH);
        p.restore(v);
        assert!(p.is_empty() && p.slots().is_empty());
    }
}
