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
//! which never names a waiting slot ([`super::Ftl::holds_latest`]). The
//! FTL applies the batch before anything reads counts or P2L entries in
//! bulk: before choosing a victim, before an erase, and before the
//! validity log or the durability journal is switched on. Those two, and
//! block or hybrid mapping (chosen when the drive is built), never defer
//! ([`super::Ftl::defers_invalidations`]).

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
    use crate::device::ftl::tests::{ftl_for, small_device};
    use crate::device::ftl::Ftl;
    use crate::units::{Lpn, Ppa};
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

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

    /// Host overwrites' invalidations wait in batches (this module); no
    /// reader may see the delay. The timed path's calls (buffer writes,
    /// programs, GC relocation, erases) drive two FTLs: one defers, the
    /// other keeps a durability journal, which never defers. After every
    /// step each block's valid count, each slot's P2L entry, each LPN's
    /// mapping and the totals agree, and the deferring one's invariants
    /// hold (with invalidations waiting most of the time).
    #[test]
    fn batched_invalidations_are_invisible() {
        let d = small_device("greedy", true);
        let (mut a, mut b) = (ftl_for(&d), ftl_for(&d));
        b.track_durability();
        for f in [&mut a, &mut b] {
            f.fill_sequential();
        }
        assert!(a.defers_invalidations() && !b.defers_invalidations());
        let spp = a.geo.slots_per_program as usize;
        let units = a.geo.units;
        let lpns = a.logical_units();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut buffered: Vec<u32> = Vec::new();
        let (mut unit, mut waited, mut victims) = (0u32, 0u32, 0u32);
        let same = |a: &Ftl, b: &Ftl, step: usize| {
            let blocks = a.valid.len();
            for blk in 0..blocks {
                assert_eq!(
                    a.valid_count(blk as u32),
                    b.valid_count(blk as u32),
                    "step {step}: block {blk}"
                );
            }
            for slot in 0..a.p2l.len() as u32 {
                assert_eq!(a.p2l(slot), b.p2l(slot), "step {step}: slot {slot}");
            }
            for l in 0..lpns as u32 {
                assert_eq!(a.lookup(Lpn(l)), b.lookup(Lpn(l)), "step {step}: lpn {l}");
            }
            assert_eq!(a.total_valid(), b.total_valid(), "step {step}");
            a.check_invariants()
                .unwrap_or_else(|e| panic!("step {step}: {e}"));
        };
        for step in 0..3_000 {
            let l = rng.gen_range(0..lpns as u32);
            if !buffered.contains(&l) {
                buffered.push(l);
            }
            a.write_to_buffer(Lpn(l));
            b.write_to_buffer(Lpn(l));
            waited += !a.pending.is_empty() as u32;
            if buffered.len() >= spp {
                unit = (unit + 1) % units;
                if a.needs_gc(unit, 0) {
                    let (va, vb) = (a.select_victim(unit), b.select_victim(unit));
                    assert_eq!(va, vb, "step {step}");
                    if let Some(v) = va {
                        victims += 1;
                        let slots = a.valid_slots(v);
                        assert_eq!(slots, b.valid_slots(v), "step {step}");
                        let mut moved = Vec::new();
                        for &(p, l) in &slots {
                            let (ra, rb) = (a.relocate_to_buffer(p, l), b.relocate_to_buffer(p, l));
                            assert_eq!(ra, rb, "step {step}");
                            if ra {
                                moved.push(l.0);
                            }
                        }
                        for chunk in moved.chunks(spp) {
                            for f in [&mut a, &mut b] {
                                let first = f.allocate_program(unit, false).expect("GC room");
                                for (i, &l) in chunk.iter().enumerate() {
                                    f.commit(Lpn(l), Ppa(first.0 + i as u32));
                                }
                            }
                        }
                        a.erase(v);
                        b.erase(v);
                    }
                }
                if a.can_allocate(unit, true) {
                    let take: Vec<u32> = buffered.drain(..spp).collect();
                    for f in [&mut a, &mut b] {
                        let first = f.allocate_program(unit, true).expect("room");
                        for (i, &l) in take.iter().enumerate() {
                            f.commit(Lpn(l), Ppa(first.0 + i as u32));
                        }
                    }
                }
            }
            if step % 97 == 0 {
                same(&a, &b, step);
            }
        }
        same(&a, &b, 3_000);
        assert!(victims > 20, "GC ran ({victims} victims)");
        assert!(
            waited > 2_000,
            "invalidations waited at {waited} of 3,000 steps"
        );
    }
}
