//! The event engine: a single-threaded priority queue ordered by
//! (time, sequence number). Equal-time events run in the order they were
//! scheduled, so a run is bit-identical for identical inputs and seed.

use crate::units::Time;

mod calendar;
pub use calendar::Calendar;

/// A scheduled event and its key: time (ps) in the high 64 bits, the
/// scheduling sequence number in the low 64 (unique, so no two keys tie).
#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    ev: E,
}

/// Future-event list: a binary min-heap on (time, seq), hand-rolled for
/// the hot path. `pop` moves a hole from the root to the bottom (one
/// comparison per level, between the two children) and lifts the last
/// entry into it from there, the bottom-up variant that std's
/// `BinaryHeap::pop` also uses; unlike std it copies whole entries (events
/// are `Copy`) rather than swapping them in 8-byte pieces, which made the
/// next load of the root wait on a failed store-to-load forward (most of
/// the event loop's own samples in a profile, docs/performance.md).
///
/// Entries are numbered from 1 (the root) and stored two to a 64-byte
/// aligned [`Pair`]: the children of entry `k` are `2k` and `2k + 1`, one
/// pair, so each level of a pop reads one cache line (with several drives
/// the heap holds about a hundred events and its lower levels are not in
/// the L1 cache: docs/performance.md).
pub struct EventQueue<E> {
    /// Entry `k` is `pairs[k / 2].0[k % 2]`; entry 0 is unused.
    pairs: Vec<Pair<E>>,
    /// Entries in the heap (numbered `1..=len`).
    len: usize,
    seq: u64,
    now: Time,
}

/// Two sibling entries of the heap, on one cache line when an entry is 32
/// bytes (the simulator's events).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Pair<E>([Entry<E>; 2]);

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// Empty queue at time zero.
    pub fn new() -> Self {
        assert_eq!(
            std::mem::size_of::<Pair<E>>(),
            2 * std::mem::size_of::<Entry<E>>(),
            "an event's heap entry must fill half a cache line, or whole lines"
        );
        EventQueue {
            pairs: Vec::with_capacity(512),
            len: 0,
            seq: 0,
            now: Time::ZERO,
        }
    }

    /// Entry `k` (`1 <= k < 2 * pairs.len()`): pairs have no padding
    /// (asserted in [`EventQueue::new`]), so the entries are one array.
    #[inline(always)]
    fn slot(&mut self, k: usize) -> *mut Entry<E> {
        debug_assert!(k < 2 * self.pairs.len());
        // SAFETY: callers pass `k < 2 * pairs.len()` (entries of the heap,
        // or the one just past them, whose pair exists), and a pair is
        // exactly two entries.
        unsafe { (self.pairs.as_mut_ptr() as *mut Entry<E>).add(k) }
    }

    /// Current simulated time (time of the last popped event).
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedule `ev` at absolute time `at` (never before now). Always
    /// inlined: the caller's event is built in registers rather than on the
    /// stack (a 16-byte load of an event just stored field by field waits
    /// on a failed store forward).
    #[inline(always)]
    pub fn at(&mut self, at: Time, ev: E) {
        debug_assert!(at >= self.now, "event scheduled in the past");
        let t = if at < self.now { self.now } else { at };
        self.seq += 1;
        let e = Entry {
            key: ((t.0 as u128) << 64) | self.seq as u128,
            ev,
        };
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
        debug_assert!(pos >= 1 && pos <= self.len);
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

    /// Schedule `ev` after `delay`.
    #[inline]
    pub fn after(&mut self, delay: Time, ev: E) {
        let t = self.now + delay;
        self.at(t, ev)
    }

    /// Pop the next event, advancing time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
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
        self.now = Time((top.key >> 64) as u64);
        Some((self.now, top.ev))
    }

    /// Time of the next event, if any (without popping it).
    #[inline]
    pub fn next_time(&self) -> Option<Time> {
        (self.len > 0).then(|| Time((self.pairs[0].0[1].key >> 64) as u64))
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.len
    }

    /// No events pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Events scheduled so far.
    pub fn scheduled(&self) -> u64 {
        self.seq
    }
}

/// A single server whose occupancy is tracked as "busy until".
///
/// Requests reserved at the moment they arrive (event time) get exactly FIFO
/// service, because events are processed in time order. A request may also
/// be booked ahead, to start at a later time (a chain of fixed delays
/// computed in one event); the idle gap such a booking leaves is remembered,
/// and a later-processed request that fits in it entirely is served there
/// instead of queueing behind the booking (one gap is tracked: the most
/// recent).
#[derive(Debug, Clone, Default)]
pub struct FifoServer {
    busy_until: Time,
    busy_total: Time,
    gap_from: Time,
    gap_to: Time,
    /// Start of the latest busy period (the block that ends at `busy_until`).
    tail_start: Time,
}

impl FifoServer {
    /// Reserve `service` starting no earlier than `at`; returns (start, end).
    #[inline]
    pub fn reserve(&mut self, at: Time, service: Time) -> (Time, Time) {
        self.busy_total += service;
        let s = if at > self.gap_from {
            at
        } else {
            self.gap_from
        };
        if s + service <= self.gap_to {
            self.gap_from = s + service;
            return (s, s + service);
        }
        let start = if self.busy_until > at {
            self.busy_until
        } else {
            if at > self.busy_until {
                self.gap_from = self.busy_until;
                self.gap_to = at;
                self.tail_start = at;
            }
            at
        };
        let end = start + service;
        self.busy_until = end;
        (start, end)
    }
    /// Nothing may start before `t` (the server is stalled, not working:
    /// no busy time is added, and the stall is no gap later work can fill).
    pub fn hold_until(&mut self, t: Time) {
        if t > self.busy_until {
            self.busy_until = t;
        }
    }
    /// When [`FifoServer::reserve`] of `service` ready at `at` would start,
    /// without booking it: in the remembered idle gap if it fits there,
    /// otherwise after everything booked.
    #[inline]
    pub fn start_for(&self, at: Time, service: Time) -> Time {
        let s = if at > self.gap_from {
            at
        } else {
            self.gap_from
        };
        if s + service <= self.gap_to {
            return s;
        }
        self.busy_until.max(at)
    }
    /// Time the server becomes free.
    #[inline]
    pub fn free_at(&self) -> Time {
        self.busy_until
    }
    /// Total busy time booked so far (including work booked to run later).
    pub fn busy(&self) -> Time {
        self.busy_total
    }
    /// Busy time that has run by `t`: the booked total less the part of the
    /// latest busy period still ahead of `t`. Exact when work booked ahead
    /// forms one back-to-back block (a backlog); work booked into an earlier
    /// idle gap, or an older block still ahead of `t`, counts as done when
    /// booked. Never decreases as `t` grows or as work is booked.
    pub fn busy_by(&self, t: Time) -> Time {
        let ahead = self.busy_until.saturating_sub(t.max(self.tail_start));
        self.busy_total.saturating_sub(ahead)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The simulator's events pair up on one cache line (the heap's
    /// layout assumes it: a larger event makes every level of a pop read
    /// two lines).
    #[test]
    fn two_simulator_events_fill_one_cache_line() {
        assert_eq!(std::mem::size_of::<Pair<crate::events::Event>>(), 64);
        assert_eq!(std::mem::align_of::<Pair<crate::events::Event>>(), 64);
    }

    proptest::proptest! {
        /// Events pop in (time, scheduling order), pushes and pops interleaved.
        #[test]
        fn pops_in_time_then_scheduling_order(ops in proptest::collection::vec((0u64..50, proptest::bool::ANY), 1..300)) {
            let mut q = EventQueue::new();
            let mut reference: Vec<(u64, u32)> = Vec::new();
            let mut n = 0u32;
            for (dt, pop) in ops {
                if pop {
                    let got = q.pop().map(|(t, e)| (t.0, e));
                    reference.sort();
                    let want = (!reference.is_empty()).then(|| reference.remove(0));
                    proptest::prop_assert_eq!(got, want);
                } else {
                    let t = q.now().0 + dt;
                    q.at(Time(t), n);
                    reference.push((t, n));
                    n += 1;
                }
            }
            reference.sort();
            for want in reference {
                proptest::prop_assert_eq!(q.pop().map(|(t, e)| (t.0, e)), Some(want));
            }
            proptest::prop_assert!(q.pop().is_none());
        }
    }

    #[test]
    fn busy_by_charges_booked_work_when_it_runs() {
        let mut f = FifoServer::default();
        // A backlog booked at once: 3 x 10 ns from t = 100 ns.
        for _ in 0..3 {
            f.reserve(Time::ns(100), Time::ns(10));
        }
        assert_eq!(f.busy(), Time::ns(30));
        assert_eq!(f.busy_by(Time::ns(50)), Time::ZERO);
        assert_eq!(f.busy_by(Time::ns(115)), Time::ns(15));
        assert_eq!(f.busy_by(Time::ns(200)), Time::ns(30));
        // A block booked after an idle period, seen from before it: nothing
        // of it has run, and booking it never lowers what has.
        let before = f.busy_by(Time::ns(120));
        f.reserve(Time::ns(500), Time::ns(40));
        assert!(f.busy_by(Time::ns(120)) >= before);
        assert_eq!(f.busy_by(Time::ns(520)), Time::ns(50));
        assert_eq!(f.busy_by(Time::ns(600)), Time::ns(70));
    }

    #[test]
    fn orders_by_time_then_sequence() {
        let mut q = EventQueue::new();
        q.at(Time::ns(5), 'a');
        q.at(Time::ns(1), 'b');
        q.at(Time::ns(5), 'c');
        q.at(Time::ns(1), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert_eq!(q.now(), Time::ns(5));
    }

    #[test]
    fn fifo_server_queues() {
        let mut s = FifoServer::default();
        assert_eq!(
            s.reserve(Time::ns(0), Time::ns(10)),
            (Time::ns(0), Time::ns(10))
        );
        assert_eq!(
            s.reserve(Time::ns(5), Time::ns(10)),
            (Time::ns(10), Time::ns(20))
        );
        assert_eq!(
            s.reserve(Time::ns(30), Time::ns(1)),
            (Time::ns(30), Time::ns(31))
        );
        assert_eq!(s.busy(), Time::ns(21));
    }

    #[test]
    fn start_for_predicts_reserve() {
        let mut s = FifoServer::default();
        s.reserve(Time::ns(100), Time::ns(10));
        // Fits in the gap [0, 100) at its ready time; too long for it: after.
        assert_eq!(s.start_for(Time::ns(20), Time::ns(30)), Time::ns(20));
        assert_eq!(s.start_for(Time::ns(80), Time::ns(30)), Time::ns(110));
        assert_eq!(
            s.reserve(Time::ns(80), Time::ns(30)),
            (Time::ns(110), Time::ns(140))
        );
    }

    #[test]
    fn booking_ahead_leaves_a_usable_gap() {
        let mut s = FifoServer::default();
        // Booked ahead: [100, 110).
        assert_eq!(
            s.reserve(Time::ns(100), Time::ns(10)),
            (Time::ns(100), Time::ns(110))
        );
        // Processed later but arriving earlier, and fitting before the booking.
        assert_eq!(
            s.reserve(Time::ns(20), Time::ns(30)),
            (Time::ns(20), Time::ns(50))
        );
        assert_eq!(
            s.reserve(Time::ns(40), Time::ns(30)),
            (Time::ns(50), Time::ns(80))
        );
        // Does not fit in the gap any more: queues behind the booking.
        assert_eq!(
            s.reserve(Time::ns(60), Time::ns(30)),
            (Time::ns(110), Time::ns(140))
        );
    }
}
