//! The event engine: a single-threaded priority queue ordered by
//! (time, sequence number). Equal-time events run in the order they were
//! scheduled, so a run is bit-identical for identical inputs and seed.

use crate::units::Time;

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
pub struct EventQueue<E> {
    heap: Vec<Entry<E>>,
    seq: u64,
    now: Time,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// Empty queue at time zero.
    pub fn new() -> Self {
        EventQueue {
            heap: Vec::with_capacity(1024),
            seq: 0,
            now: Time::ZERO,
        }
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
        let pos = self.heap.len();
        self.heap.push(e);
        self.sift_up(pos, e);
    }

    /// Put `e` where the hole at `pos` rises to: parents with larger keys
    /// move down into the hole.
    #[inline(always)]
    fn sift_up(&mut self, mut pos: usize, e: Entry<E>) {
        while pos > 0 {
            let parent = (pos - 1) / 2;
            let p = self.heap[parent];
            if p.key < e.key {
                break;
            }
            self.heap[pos] = p;
            pos = parent;
        }
        self.heap[pos] = e;
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
        let last = self.heap.pop()?;
        let len = self.heap.len();
        let top = if len == 0 {
            last
        } else {
            let top = self.heap[0];
            // The hole at the root goes down to a leaf along the smaller
            // children...
            let mut pos = 0;
            let mut child = 1;
            while child + 1 < len {
                child += (self.heap[child + 1].key < self.heap[child].key) as usize;
                self.heap[pos] = self.heap[child];
                pos = child;
                child = 2 * pos + 1;
            }
            if child + 1 == len {
                self.heap[pos] = self.heap[child];
                pos = child;
            }
            // ...and the last entry rises from there to its place.
            self.sift_up(pos, last);
            top
        };
        self.now = Time((top.key >> 64) as u64);
        Some((self.now, top.ev))
    }

    /// Time of the next event, if any (without popping it).
    #[inline]
    pub fn next_time(&self) -> Option<Time> {
        self.heap.first().map(|e| Time((e.key >> 64) as u64))
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// No events pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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

/// A server whose work can be booked ahead, in any order: each booking takes
/// idle time from its ready time on, filling the holes earlier bookings left
/// (a reservation calendar, fluid at the booking's granularity).
/// Used for links several drives share (switch uplinks), where cut-through
/// transfers are booked ahead of when they run and a FIFO's single "busy
/// until" would push one drive's whole backlog in front of another's: here
/// the second drive's transfers fill the holes the first one's leave, as a
/// switch's arbiter interleaves their TLPs.
///
/// Busy stretches that ended before the time given to [`Calendar::forget_before`]
/// (the event loop's clock: nothing is booked earlier) are dropped, so the
/// calendar holds only work still ahead.
#[derive(Debug, Clone, Default)]
pub struct Calendar {
    /// Busy stretches (start ps, end ps), sorted, non-overlapping, adjacent
    /// ones merged; those before `head` have ended (forgotten).
    busy: Vec<(u64, u64)>,
    head: usize,
    total: Time,
    floor: u64,
}

impl Calendar {
    /// Nothing will be booked before `t` from now on: forget what ended earlier.
    #[inline]
    pub fn forget_before(&mut self, t: Time) {
        self.floor = self.floor.max(t.0);
    }

    /// Book `service` of work ready at `at`: it takes the idle time from
    /// `at` on, hole by hole, until it has had `service` of it (an arbiter
    /// interleaving its TLPs with the work already booked); returns (first
    /// start, last end).
    pub fn reserve(&mut self, at: Time, service: Time) -> (Time, Time) {
        self.total += service;
        while self
            .busy
            .get(self.head)
            .is_some_and(|&(_, e)| e <= self.floor)
        {
            self.head += 1;
        }
        if self.head >= 32 && self.head * 2 >= self.busy.len() {
            self.busy.drain(..self.head);
            self.head = 0;
        }
        let mut need = service.0;
        if need == 0 {
            return (at, at);
        }
        let mut s = at.0;
        // Ready after everything booked: append (the common case).
        let live = self.busy.len() > self.head;
        match self.busy.last_mut() {
            Some(last) if live && last.1 <= s => {
                if last.1 == s {
                    last.1 = s + need;
                } else {
                    self.busy.push((s, s + need));
                }
                return (at, Time(s + need));
            }
            // Ready inside the last busy stretch: queue right behind it.
            Some(last) if live && last.0 <= s => {
                let start = last.1;
                last.1 += need;
                return (Time(start), Time(start + need));
            }
            None => {
                self.busy.push((s, s + need));
                return (at, Time(s + need));
            }
            _ => {}
        }
        let mut first = None;
        loop {
            // The first stretch that ends after `s` (ends are sorted too).
            // Requests cluster near the present: scan on from the head a
            // few stretches, then search the rest.
            let mut i = self.head;
            let near = self.busy.len().min(self.head + 8);
            while i < near && self.busy[i].1 <= s {
                i += 1;
            }
            if i == near {
                i += self.busy[i..].partition_point(|&(_, e)| e <= s);
            }
            let next = match self.busy.get(i) {
                Some(&(st, e)) if st <= s => {
                    // Inside a busy stretch: skip it.
                    s = e;
                    continue;
                }
                Some(&(st, _)) => st,
                None => u64::MAX,
            };
            let take = need.min(next - s);
            self.insert_at(i, s, s + take);
            first.get_or_insert(s);
            need -= take;
            if need == 0 {
                return (Time(first.unwrap_or(at.0)), Time(s + take));
            }
            s = next;
        }
    }

    /// Mark [start, end) busy at index `i` (the stretch there starts at or
    /// after `end`), merging with neighbours.
    fn insert_at(&mut self, i: usize, start: u64, end: u64) {
        let merge_prev = i > self.head && self.busy[i - 1].1 == start;
        let merge_next = self.busy.get(i).is_some_and(|&(st, _)| st == end);
        match (merge_prev, merge_next) {
            (true, true) => {
                let e = self.busy[i].1;
                self.busy[i - 1].1 = e;
                self.busy.remove(i);
            }
            (true, false) => self.busy[i - 1].1 = end,
            (false, true) => self.busy[i].0 = start,
            (false, false) => self.busy.insert(i, (start, end)),
        }
    }

    /// Total busy time booked so far.
    pub fn busy(&self) -> Time {
        self.total
    }

    /// Busy time that has run by `t`: the booked total less what lies after `t`.
    pub fn busy_by(&self, t: Time) -> Time {
        let ahead: u64 = self.busy[self.head..]
            .iter()
            .rev()
            .take_while(|&&(_, e)| e > t.0)
            .map(|&(s, e)| e - s.max(t.0))
            .sum();
        self.total.saturating_sub(Time(ahead))
    }
}

#[cfg(test)]
mod calendar_tests {
    use super::*;

    #[test]
    fn bookings_fill_the_holes_left_ahead() {
        let mut c = Calendar::default();
        let ns = Time::ns;
        assert_eq!(c.reserve(ns(10), ns(5)), (ns(10), ns(15)));
        assert_eq!(c.reserve(ns(30), ns(5)), (ns(30), ns(35)));
        // Fits in [15, 30): placed at its ready time 20.
        assert_eq!(c.reserve(ns(20), ns(5)), (ns(20), ns(25)));
        // Longer than the hole [25, 30): 5 ns there, 3 ns after 35.
        assert_eq!(c.reserve(ns(24), ns(8)), (ns(25), ns(38)));
        // Ready before anything: the front hole [0, 10), then 2 ns of [15, 20).
        assert_eq!(c.reserve(ns(0), ns(12)), (ns(0), ns(17)));
        assert_eq!(c.busy(), ns(35));
        assert_eq!(c.busy_by(ns(1000)), ns(35));
        assert_eq!(c.busy_by(ns(36)), ns(33));
    }

    /// Against a unit-by-unit reference (a bitmap of busy nanoseconds) on
    /// random bookings and advancing floors: each booking takes the first
    /// free units at or after its ready time, across holes. Covers the
    /// append, queue-behind-the-last and hole-filling paths, and calendars
    /// longer than the head scan.
    #[test]
    fn bookings_match_a_unit_by_unit_reference() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rnd = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..50 {
            let mut c = Calendar::default();
            let mut busy = vec![false; 20_000];
            let mut now = 0u64;
            for _ in 0..400 {
                now += rnd(4);
                c.forget_before(Time::ns(now));
                let at = now + rnd(60);
                let need = 1 + rnd(9);
                let (s, e) = c.reserve(Time::ns(at), Time::ns(need));
                // Reference: the first `need` free units from `at`.
                let mut left = need;
                let mut t = at as usize;
                let mut first = None;
                while left > 0 {
                    if !busy[t] {
                        busy[t] = true;
                        first.get_or_insert(t);
                        left -= 1;
                    }
                    t += 1;
                }
                assert_eq!(
                    (s, e),
                    (Time::ns(first.unwrap() as u64), Time::ns(t as u64))
                );
            }
        }
    }
}
