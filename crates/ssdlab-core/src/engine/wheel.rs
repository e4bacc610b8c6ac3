//! The event queue's near future: a timing wheel (a calendar queue of
//! fixed slots), where scheduling and popping an event cost about the same
//! however many are pending.

use super::heap::Entry;

/// log2 of a slot's width in ps: 65,536 ps (about 66 ns), so a slot
/// rarely holds more than one event even with several busy drives (a few
/// events per simulated µs each), and a pop's scan of its slot is short
/// and predictable (262 ns slots: a third more mispredicted branches per
/// I/O with four drives; 33 ns: no better. docs/performance.md).
pub(super) const SHIFT: u32 = 16;
/// Slots on the wheel: with [`SHIFT`], 134 µs ahead of the clock, past a
/// NAND page read (tens of µs); programs (about a ms) go to the heap. The
/// slots take 8 KiB (4,096 slots with 32-bit heads and separate counts,
/// 20 KiB, had two more L1d misses per I/O with four drives, and ran
/// slower: docs/performance.md).
pub(super) const SLOTS: usize = 2048;
const MASK: u64 = SLOTS as u64 - 1;
/// Words of the slot bitmap: 32, so one `u32` marks them and rotates.
const WORDS: usize = SLOTS / 64;
const _: () = assert!(WORDS == 32);
/// Entries a slot holds (a pop scans its slot): more go to the heap, so a
/// burst of events at one instant costs a heap's log, not a scan of all.
const CAP: u16 = 8;
/// End of a list.
const NIL: u16 = u16::MAX;
// Every entry the wheel can hold has a 16-bit index other than `NIL`.
const _: () = assert!(SLOTS * (CAP as usize) < NIL as usize);

/// A slot: its list's first entry and how many it holds (one 4-byte word,
/// so a push or pop touches one line of the slots).
#[derive(Clone, Copy)]
struct Slot {
    head: u16,
    count: u16,
}

/// Events due within [`SLOTS`] slots of the clock, each in the slot of its
/// time (`time >> SHIFT`, modulo [`SLOTS`]): a slot is an unsorted list
/// threaded through a slab of entries, a bitmap marks the slots that hold
/// any. Every entry's slot is in `[base, base + SLOTS)` (`base` the clock's
/// slot; events are never scheduled in the past), so the first marked slot
/// from `base` on, wrapping, holds the earliest entries, and the smallest
/// key there is the wheel's.
pub(super) struct Wheel<E> {
    /// Slab of entries; `next` threads each slot's list and the free list.
    /// Both only grow, together, so every index the wheel ever handed out
    /// (on a list, on the free list, in a [`Min`]) stays below their
    /// length: the unchecked accesses below rely on this.
    entries: Vec<Entry<E>>,
    next: Vec<u16>,
    /// First free entry of the slab.
    free: u16,
    slots: Box<[Slot; SLOTS]>,
    /// Slots holding entries, a bit each.
    bits: [u64; WORDS],
    /// Words of `bits` that are not zero, a bit each.
    words: u32,
    /// The clock's slot (absolute: time >> SHIFT).
    base: u64,
}

/// Where the wheel's smallest entry is: its slot, its index in the slab and
/// the entry before it in the slot's list (`NIL`: it is the first).
#[derive(Clone, Copy)]
pub(super) struct Min {
    pub(super) key: u128,
    slot: usize,
    at: u16,
    prev: u16,
}

impl<E: Copy> Wheel<E> {
    /// Empty wheel at time zero.
    pub(super) fn new() -> Self {
        Wheel {
            entries: Vec::with_capacity(256),
            next: Vec::with_capacity(256),
            free: NIL,
            slots: Box::new(
                [Slot {
                    head: NIL,
                    count: 0,
                }; SLOTS],
            ),
            bits: [0; WORDS],
            words: 0,
            base: 0,
        }
    }

    /// Hold `e` if it is due within the wheel's reach of the clock and its
    /// slot has room; otherwise give it back.
    #[inline(always)]
    pub(super) fn push(&mut self, e: Entry<E>) -> Result<(), Entry<E>> {
        let abs = (e.key >> 64) as u64 >> SHIFT;
        debug_assert!(abs >= self.base, "an event before the clock's slot");
        if abs.wrapping_sub(self.base) >= SLOTS as u64 {
            return Err(e);
        }
        let slot = (abs & MASK) as usize;
        if self.slots[slot].count >= CAP {
            return Err(e);
        }
        let i = if self.free != NIL {
            let i = self.free;
            // SAFETY: indices on the free list were handed out below, so
            // they are below `entries.len() == next.len()`.
            unsafe {
                self.free = *self.next.get_unchecked(i as usize);
                *self.entries.get_unchecked_mut(i as usize) = e;
            }
            i
        } else {
            // (At most `SLOTS * CAP` entries are ever held: below `NIL`.)
            let i = self.entries.len() as u16;
            self.entries.push(e);
            self.next.push(NIL);
            i
        };
        let sl = &mut self.slots[slot];
        // SAFETY: `i` is a slab index (free list, or just pushed).
        unsafe { *self.next.get_unchecked_mut(i as usize) = sl.head };
        sl.head = i;
        sl.count += 1;
        self.bits[slot / 64] |= 1 << (slot % 64);
        self.words |= 1 << (slot / 64);
        Ok(())
    }

    /// The smallest entry, if any.
    #[inline(always)]
    pub(super) fn min(&self) -> Option<Min> {
        // No marked word: no entries.
        if self.words == 0 {
            return None;
        }
        let slot = self.first_slot();
        let mut at = self.slots[slot].head;
        // SAFETY (here and in the loop): a marked slot's list holds slab
        // indices only, below `entries.len() == next.len()`, ended by NIL.
        debug_assert!((at as usize) < self.entries.len());
        let mut best = Min {
            key: unsafe { self.entries.get_unchecked(at as usize) }.key,
            slot,
            at,
            prev: NIL,
        };
        let mut prev = at;
        at = unsafe { *self.next.get_unchecked(at as usize) };
        while at != NIL {
            debug_assert!((at as usize) < self.entries.len());
            let key = unsafe { self.entries.get_unchecked(at as usize) }.key;
            if key < best.key {
                best = Min {
                    key,
                    slot,
                    at,
                    prev,
                };
            }
            prev = at;
            at = unsafe { *self.next.get_unchecked(at as usize) };
        }
        Some(best)
    }

    /// The first slot holding entries, from the clock's on, wrapping (the
    /// wheel is not empty): in the clock's word of the bitmap, else in the
    /// first marked word after it, wrapping ([`Wheel::words`] rotated to
    /// start there; when no other word is marked this is the clock's word
    /// again, its slots before the clock's being the far end of the
    /// wheel's reach). Both are computed and one chosen, without a branch
    /// that depends on where the next event is.
    #[inline(always)]
    fn first_slot(&self) -> usize {
        let from = (self.base & MASK) as usize;
        let w = from / 64;
        let here = self.bits[w] & (!0u64 << (from % 64));
        let others = (self.words & !(1u32 << w)).rotate_right(w as u32);
        let later = (w + others.trailing_zeros() as usize) % WORDS;
        let (w, bits) = if here != 0 {
            (w, here)
        } else {
            (later, self.bits[later])
        };
        debug_assert!(bits != 0, "the wheel holds entries but no slot is marked");
        w * 64 + bits.trailing_zeros() as usize
    }

    /// Remove and return the entry `m` ([`Wheel::min`], nothing pushed or
    /// taken since).
    #[inline(always)]
    pub(super) fn take(&mut self, m: Min) -> Entry<E> {
        debug_assert!((m.at as usize) < self.entries.len());
        debug_assert!(m.prev == NIL || (m.prev as usize) < self.entries.len());
        // SAFETY: `m.at` and `m.prev` (unless NIL) are indices the slab
        // handed out, and it never shrinks. (That `m` is current, from `min`
        // with nothing pushed or taken since, is for correctness only.)
        let (e, after) = unsafe {
            (
                *self.entries.get_unchecked(m.at as usize),
                *self.next.get_unchecked(m.at as usize),
            )
        };
        let sl = &mut self.slots[m.slot];
        if m.prev == NIL {
            sl.head = after;
        } else {
            unsafe { *self.next.get_unchecked_mut(m.prev as usize) = after };
        }
        sl.count -= 1;
        let empty = sl.count == 0;
        unsafe { *self.next.get_unchecked_mut(m.at as usize) = self.free };
        self.free = m.at;
        if empty {
            let w = m.slot / 64;
            self.bits[w] &= !(1 << (m.slot % 64));
            if self.bits[w] == 0 {
                self.words &= !(1 << w);
            }
        }
        e
    }

    /// The clock has reached `time` (ps); nothing is pushed before it.
    #[inline(always)]
    pub(super) fn advance(&mut self, time: u64) {
        self.base = time >> SHIFT;
    }

    /// Entries held (a count over the slots: tests and reports only).
    pub(super) fn len(&self) -> usize {
        self.slots.iter().map(|s| s.count as usize).sum()
    }
}
