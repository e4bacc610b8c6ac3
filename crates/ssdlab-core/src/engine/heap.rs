//! The event queue's overflow: a binary min-heap of keyed entries, for
//! the events the timing wheel ([`super::wheel`]) does not hold.

/// A scheduled event and its key: time (ps) in the high 64 bits, the
/// scheduling sequence number in the low 64 (unique, so no two keys tie).
#[derive(Clone, Copy)]
pub(super) struct Entry<E> {
    pub(super) key: u128,
    pub(super) ev: E,
}

/// A binary min-heap on the entries' keys, hand-rolled for the hot path.
/// `pop` moves a hole from the root to the bottom (one comparison per
/// level, between the two children) and lifts the last entry into it from
/// there, the bottom-up variant that std's `BinaryHeap::pop` also uses;
/// unlike std it copies whole entries (events are `Copy`) rather than
/// swapping them in 8-byte pieces, which made the next load of the root
/// wait on a failed store-to-load forward (docs/performance.md).
///
/// Entries are numbered from 1 (the root) and stored two to a 64-byte
/// aligned [`Pair`]: the children of entry `k` are `2k` and `2k + 1`, one
/// pair, so each level of a pop reads one cache line.
pub(super) struct Heap<E> {
    /// Entry `k` is `pairs[k / 2].0[k % 2]`; entry 0 is unused.
    pairs: Vec<Pair<E>>,
    /// Entries in the heap (numbered `1..=len`).
    len: usize,
}

/// Two sibling entries of the heap, on one cache line when an entry is 32
/// bytes (the simulator's events).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Pair<E>([Entry<E>; 2]);

impl<E: Copy> Heap<E> {
    /// Empty heap.
    pub(super) fn new() -> Self {
        assert_eq!(
            std::mem::size_of::<Pair<E>>(),
            2 * std::mem::size_of::<Entry<E>>(),
            "an event's heap entry must fill half a cache line, or whole lines"
        );
        Heap {
            pairs: Vec::with_capacity(64),
            len: 0,
        }
    }

    /// Entry `k` (`1 <= k < 2 * pairs.len()`): pairs have no padding
    /// (asserted in [`Heap::new`]), so the entries are one array.
    #[inline(always)]
    fn slot(&mut self, k: usize) -> *mut Entry<E> {
        debug_assert!(k < 2 * self.pairs.len());
        // SAFETY: callers pass `k < 2 * pairs.len()` (entries of the heap,
        // or the one just past them, whose pair exists), and a pair is
        // exactly two entries.
        unsafe { (self.pairs.as_mut_ptr() as *mut Entry<E>).add(k) }
    }

    /// Add `e`.
    #[inline(always)]
    pub(super) fn push(&mut self, e: Entry<E>) {
        self.len += 1;
        if self.len >= 2 * self.pairs.len() {
            // (The filler is overwritten before it is read.)
            self.pairs.push(Pair([e, e]));
        }
        self.sift_up(self.len, e);
    }

    /// Put `e` where the hole at `pos` rises to: parents with larger keys
    /// move down into the hole.
    #[inline(always)]
    fn sift_up(&mut self, mut pos: usize, e: Entry<E>) {
        let pos_ok = pos >= 1 && pos <= self.len;
        assert!(pos_ok, "heap position out of range");
        // SAFETY: `1 <= pos <= len` (asserted) and every entry visited is an
        // ancestor of `pos`, so in `1..=len`. Entries are `Copy`.
        unsafe {
            while pos > 1 {
                let parent = pos / 2;
                let p = *self.slot(parent);
                if p.key < e.key {
                    break;
                }
                *self.slot(pos) = p;
                pos = parent;
            }
            *self.slot(pos) = e;
        }
    }

    /// Key of the smallest entry; `u128::MAX` when empty (no entry has it:
    /// sequence numbers never reach `u64::MAX`).
    #[inline(always)]
    pub(super) fn top_key(&self) -> u128 {
        if self.len == 0 {
            u128::MAX
        } else {
            self.pairs[0].0[1].key
        }
    }

    /// Remove and return the smallest entry.
    #[inline]
    pub(super) fn pop(&mut self) -> Option<Entry<E>> {
        if self.len == 0 {
            return None;
        }
        let len = self.len - 1;
        // SAFETY: entries `1..=self.len` exist; below, every entry read or
        // written is `1`, `child < len` or `child + 1 <= len` (the loop
        // conditions), or `pos`, a former `child`: all in `1..=len`.
        let (top, last) = unsafe { (*self.slot(1), *self.slot(self.len)) };
        self.len = len;
        if len > 0 {
            let pos = unsafe {
                // The hole at the root goes down to a leaf along the
                // smaller children...
                let mut pos = 1;
                let mut child = 2;
                while child < len {
                    child += ((*self.slot(child + 1)).key < (*self.slot(child)).key) as usize;
                    *self.slot(pos) = *self.slot(child);
                    pos = child;
                    child = 2 * pos;
                }
                if child == len {
                    *self.slot(pos) = *self.slot(child);
                    pos = child;
                }
                pos
            };
            // ...and the last entry rises from there to its place.
            self.sift_up(pos, last);
        }
        Some(top)
    }

    /// Entries held.
    pub(super) fn len(&self) -> usize {
        self.len
    }
}
