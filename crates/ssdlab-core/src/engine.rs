//! The event engine: a single-threaded priority queue ordered by
//! (time, sequence number). Equal-time events run in the order they were
//! scheduled, so a run is bit-identical for identical inputs and seed.

use crate::units::Time;

mod calendar;
mod heap;
mod wheel;
pub use calendar::Calendar;
use heap::{Entry, Heap};
use wheel::Wheel;

/// Future-event list: a timing wheel (`engine/wheel.rs`) for the events due
/// within 134 µs of the clock (nearly all of them: commands,
/// transfers, NAND reads), and a binary heap (`engine/heap.rs`) for the rest
/// (further ahead, or past a slot's capacity). A pop takes the smaller of
/// the two minima, so the order is exactly (time, sequence) whichever holds
/// an event. With the heap alone a pop sifted through every level of it,
/// and a system of four drives has four times the events pending (two
/// levels more per pop: docs/performance.md); on the wheel scheduling and
/// popping cost about the same however many are pending.
pub struct EventQueue<E> {
    wheel: Wheel<E>,
    heap: Heap<E>,
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
            wheel: Wheel::new(),
            heap: Heap::new(),
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
        if let Err(e) = self.wheel.push(e) {
            self.heap.push(e);
        }
    }

    /// Schedule `ev` after `delay`.
    #[inline]
    pub fn after(&mut self, delay: Time, ev: E) {
        let t = self.now + delay;
        self.at(t, ev)
    }

    /// Pop the next event, advancing time. Always inlined: the event loop
    /// holds it, whatever else the compiler inlines there (`System::step`).
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = match self.wheel.min() {
            Some(m) if m.key < self.heap.top_key() => self.wheel.take(m),
            _ => self.heap.pop()?,
        };
        let t = (e.key >> 64) as u64;
        self.wheel.advance(t);
        self.now = Time(t);
        Some((self.now, e.ev))
    }

    /// Time of the next event, if any (without popping it).
    #[inline]
    pub fn next_time(&self) -> Option<Time> {
        let key = self
            .wheel
            .min()
            .map_or(u128::MAX, |m| m.key)
            .min(self.heap.top_key());
        (key != u128::MAX).then_some(Time((key >> 64) as u64))
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        self.wheel.len() + self.heap.len()
    }

    /// No events pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        assert_eq!(std::mem::size_of::<heap::Pair<crate::events::Event>>(), 64);
        assert_eq!(std::mem::align_of::<heap::Pair<crate::events::Event>>(), 64);
    }

    proptest::proptest! {
        /// Events pop in (time, scheduling order), pushes and pops
        /// interleaved, at every scale: within one slot of the wheel (and
        /// past its capacity), across slots, wrapping, and beyond its reach
        /// (the heap); `next_time` and `len` agree with what pops.
        #[test]
        fn pops_in_time_then_scheduling_order(ops in proptest::collection::vec((0u64..1000, 0usize..5, proptest::bool::ANY), 1..400)) {
            let mut q = EventQueue::new();
            let mut reference: Vec<(u64, u32)> = Vec::new();
            let mut n = 0u32;
            for (v, scale, pop) in ops {
                if pop {
                    reference.sort();
                    proptest::prop_assert_eq!(q.next_time().map(|t| t.0), reference.first().map(|r| r.0));
                    let got = q.pop().map(|(t, e)| (t.0, e));
                    let want = (!reference.is_empty()).then(|| reference.remove(0));
                    proptest::prop_assert_eq!(got, want);
                } else {
                    // 0..1 ns, ..256 ns, ..65 µs, ..1 ms, ..17 ms ahead.
                    let dt = v << [0, 8, 16, 20, 24][scale];
                    let t = q.now().0 + dt;
                    q.at(Time(t), n);
                    reference.push((t, n));
                    n += 1;
                }
                proptest::prop_assert_eq!(q.len(), reference.len());
            }
            reference.sort();
            for want in reference {
                proptest::prop_assert_eq!(q.pop().map(|(t, e)| (t.0, e)), Some(want));
            }
            proptest::prop_assert!(q.pop().is_none());
            proptest::prop_assert!(q.next_time().is_none());
        }
    }

    /// A burst at one instant (more than a slot of the wheel holds) and
    /// events at the edge of the wheel's reach pop in scheduling order.
    #[test]
    fn bursts_and_the_wheels_edge_keep_scheduling_order() {
        let mut q = EventQueue::new();
        let reach = (wheel::SLOTS as u64) << wheel::SHIFT;
        let mut want = Vec::new();
        for k in 0..100u32 {
            let t = match k % 3 {
                0 => 5,
                1 => reach - 1,
                _ => reach,
            };
            q.at(Time(t), k);
            want.push((t, k));
        }
        want.sort();
        let got: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect();
        assert_eq!(got, want);
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
