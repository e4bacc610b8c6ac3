//! A reservation calendar: a server whose work is booked ahead of when it
//! runs, in any order (PCIe links: see `fabric`).

use crate::units::Time;

/// A server whose work can be booked ahead, in any order: each booking takes
/// idle time from its ready time on, filling the holes earlier bookings left
/// (a reservation calendar, fluid at the booking's granularity).
///
/// Used for PCIe links, whose transfers are booked ahead of when they run:
/// the host books a doorbell when its CPU will have finished the submission
/// and the drive its command fetch for when the doorbell will have arrived;
/// completion entries are booked for when the data will have reached the
/// host; a switch's uplink gets cut-through transfers of several drives.
/// Work ready now fills the holes such bookings leave, as a link's
/// transmitter interleaves TLPs (a FIFO's single "busy until" would push it
/// behind them).
///
/// Each booking passes the event loop's clock (`floor`: nothing is booked
/// earlier from then on), and busy stretches that ended by then are
/// dropped, so the calendar holds only work still ahead. The stretches live
/// in a ring buffer: work ends at the front, bookings far ahead join at the
/// back, and work ready about now is inserted near the front; each moves
/// only the few stretches on its shorter side.
#[derive(Debug, Clone)]
pub struct Calendar {
    /// Busy stretches (start ps, end ps), sorted, non-overlapping, adjacent
    /// ones merged: `len` entries from `head`, wrapping (the capacity is a
    /// power of two).
    buf: Vec<(u64, u64)>,
    head: usize,
    len: usize,
    total: Time,
    /// Nothing starts before this (flow control: see [`Calendar::hold_until`]).
    stall: u64,
    /// Work that passed without a place on the calendar
    /// ([`Calendar::pass`]), carried by the next booking (ps).
    carried: u64,
}

impl Default for Calendar {
    fn default() -> Self {
        Calendar {
            buf: vec![(0, 0); 8],
            head: 0,
            len: 0,
            total: Time::ZERO,
            stall: 0,
            carried: 0,
        }
    }
}

/// Stretches scanned one by one from the front before a binary search of
/// the rest (most bookings land near the present).
const SCAN: usize = 8;

impl Calendar {
    /// Physical index of live stretch `i`.
    #[inline(always)]
    fn idx(&self, i: usize) -> usize {
        (self.head + i) & (self.buf.len() - 1)
    }

    #[inline(always)]
    fn get(&self, i: usize) -> (u64, u64) {
        self.buf[self.idx(i)]
    }

    #[inline(always)]
    fn set(&mut self, i: usize, x: (u64, u64)) {
        let k = self.idx(i);
        self.buf[k] = x;
    }

    /// Double the ring, live stretches first.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let mut b = Vec::with_capacity(self.buf.len() * 2);
        b.extend((0..self.len).map(|i| self.get(i)));
        b.resize(self.buf.len() * 2, (0, 0));
        self.buf = b;
        self.head = 0;
    }

    #[inline(always)]
    fn push_back(&mut self, x: (u64, u64)) {
        if self.len == self.buf.len() {
            self.grow();
        }
        self.set(self.len, x);
        self.len += 1;
    }

    /// Insert `x` before live stretch `i`, moving the shorter side.
    #[inline(always)]
    fn insert(&mut self, i: usize, x: (u64, u64)) {
        if self.len == self.buf.len() {
            self.grow();
        }
        if i < self.len - i {
            self.head = (self.head + self.buf.len() - 1) & (self.buf.len() - 1);
            for j in 0..i {
                let v = self.get(j + 1);
                self.set(j, v);
            }
        } else {
            for j in (i..self.len).rev() {
                let v = self.get(j);
                self.set(j + 1, v);
            }
        }
        self.set(i, x);
        self.len += 1;
    }

    /// Remove live stretch `i`, moving the shorter side.
    #[inline(always)]
    fn remove(&mut self, i: usize) {
        if i < self.len - 1 - i {
            for j in (0..i).rev() {
                let v = self.get(j);
                self.set(j + 1, v);
            }
            self.head = (self.head + 1) & (self.buf.len() - 1);
        } else {
            for j in i..self.len - 1 {
                let v = self.get(j + 1);
                self.set(j, v);
            }
        }
        self.len -= 1;
    }

    /// Drop the stretches that ended by `floor` (the clock).
    #[inline(always)]
    fn forget(&mut self, floor: u64) {
        while self.len > 0 && self.buf[self.head].1 <= floor {
            self.head = (self.head + 1) & (self.buf.len() - 1);
            self.len -= 1;
        }
    }

    /// Index of the first live stretch that ends after `s` (`len` if none).
    #[inline(always)]
    fn first_ending_after(&self, s: u64) -> usize {
        let near = self.len.min(SCAN);
        let mut i = 0;
        while i < near && self.get(i).1 <= s {
            i += 1;
        }
        if i < near {
            return i;
        }
        // Binary search of [near, len): ends are sorted too.
        let (mut lo, mut hi) = (near, self.len);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.get(mid).1 <= s {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Book `service` of work ready at `at` (the clock is at `floor`): it
    /// takes the idle time from `at` on, hole by hole, until it has had
    /// `service` of it (an arbiter interleaving its TLPs with the work
    /// already booked), plus whatever passed since the last booking
    /// ([`Calendar::pass`]); returns (first start, last end).
    #[inline]
    pub fn reserve(&mut self, floor: Time, at: Time, service: Time) -> (Time, Time) {
        self.total += service;
        self.forget(floor.0);
        let need = service.0 + std::mem::take(&mut self.carried);
        if need == 0 {
            return (at, at);
        }
        let s = at.0.max(self.stall);
        if self.len == 0 {
            // Nothing ahead.
            self.push_back((s, s + need));
            return (Time(s), Time(s + need));
        }
        let k = self.idx(self.len - 1);
        let last = &mut self.buf[k];
        if last.1 <= s {
            // Ready after everything booked: append.
            if last.1 == s {
                last.1 = s + need;
            } else {
                self.push_back((s, s + need));
            }
            return (Time(s), Time(s + need));
        }
        if last.0 <= s {
            // Ready inside the last busy stretch: queue right behind it.
            let start = last.1;
            last.1 += need;
            return (Time(start), Time(start + need));
        }
        self.fill_holes(s, need)
    }

    /// [`Calendar::reserve`] of `need` ready at `s`, which falls before the
    /// last busy stretch: hole by hole, then after the last stretch.
    #[inline(never)]
    fn fill_holes(&mut self, mut s: u64, mut need: u64) -> (Time, Time) {
        let mut i = self.first_ending_after(s);
        let mut first = u64::MAX;
        // Every stretch before `i` ends by `s`.
        while i < self.len {
            let (st, e) = self.get(i);
            if st <= s {
                // Inside a busy stretch: skip it.
                s = e;
                i += 1;
                continue;
            }
            first = first.min(s);
            let joins_prev = i > 0 && self.get(i - 1).1 == s;
            let room = st - s;
            if need < room {
                // Fits, with idle time left before stretch `i`.
                let end = s + need;
                if joins_prev {
                    self.set(i - 1, (self.get(i - 1).0, end));
                } else {
                    self.insert(i, (s, end));
                }
                return (Time(first), Time(end));
            }
            // Fills the hole: it and stretch `i` become one.
            need -= room;
            if joins_prev {
                self.set(i - 1, (self.get(i - 1).0, e));
                self.remove(i);
            } else {
                self.set(i, (s, e));
                i += 1;
            }
            if need == 0 {
                return (Time(first), Time(st));
            }
            s = e;
        }
        // After the last stretch, which ends at `s`.
        first = first.min(s);
        let last = self.len - 1;
        self.set(last, (self.get(last).0, s + need));
        (Time(first), Time(s + need))
    }

    /// Let `service` of work ready at `at` pass without a place on the
    /// calendar: it neither waits for the work booked nor makes any wait
    /// (a flow-control stall still holds it: [`Calendar::hold_until`]);
    /// its time is added to the next booking instead (so the server's
    /// capacity is kept). Returns (start, end): from `at`, or from the end
    /// of the stall.
    #[inline]
    pub fn pass(&mut self, at: Time, service: Time) -> (Time, Time) {
        self.total += service;
        self.carried += service.0;
        let s = Time(at.0.max(self.stall));
        (s, s + service)
    }

    /// When a booking of `service` ready at `at` would end, without making
    /// it ([`Calendar::reserve`]'s placement; the clock is at `floor`).
    pub fn end_for(&self, floor: Time, at: Time, service: Time) -> Time {
        let mut need = service.0 + self.carried;
        let mut s = at.0.max(self.stall);
        if need == 0 {
            return at;
        }
        if self.len == 0 || self.get(self.len - 1).1 <= s {
            // Nothing booked from `s` on.
            return Time(s + need);
        }
        let mut i = 0;
        while i < self.len && self.get(i).1 <= floor.0.max(s) {
            i += 1;
        }
        while i < self.len {
            let (st, e) = self.get(i);
            if st > s {
                let take = need.min(st - s);
                need -= take;
                if need == 0 {
                    return Time(s + take);
                }
            }
            s = s.max(e);
            i += 1;
        }
        Time(s + need)
    }

    /// An upper bound of [`Calendar::end_for`] for `at` at or after the
    /// floor: the booking would end by then even if all the work booked
    /// came before it (after the last stretch everything is idle). O(1).
    #[inline]
    pub fn end_bound(&self, at: Time, service: Time) -> Time {
        let need = service.0 + self.carried;
        let s = at.0.max(self.stall);
        if need == 0 {
            return at;
        }
        let last = if self.len == 0 {
            0
        } else {
            self.get(self.len - 1).1
        };
        Time(s.max(last) + need)
    }

    /// Flow control: nothing starts before `t` (the link is stalled, not
    /// working: no busy time is added).
    pub fn hold_until(&mut self, t: Time) {
        self.stall = self.stall.max(t.0);
    }

    /// Total busy time booked so far.
    pub fn busy(&self) -> Time {
        self.total
    }

    /// Busy time that has run by `t`: the booked total less what lies after `t`.
    pub fn busy_by(&self, t: Time) -> Time {
        let ahead: u64 = (0..self.len)
            .rev()
            .map(|i| self.get(i))
            .take_while(|&(_, e)| e > t.0)
            .map(|(s, e)| e - s.max(t.0))
            .sum();
        self.total.saturating_sub(Time(ahead + self.carried))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bookings_fill_the_holes_left_ahead() {
        let mut c = Calendar::default();
        let ns = Time::ns;
        let z = Time::ZERO;
        assert_eq!(c.reserve(z, ns(10), ns(5)), (ns(10), ns(15)));
        assert_eq!(c.reserve(z, ns(30), ns(5)), (ns(30), ns(35)));
        // Fits in [15, 30): placed at its ready time 20.
        assert_eq!(c.reserve(z, ns(20), ns(5)), (ns(20), ns(25)));
        // Longer than the hole [25, 30): 5 ns there, 3 ns after 35.
        assert_eq!(c.reserve(z, ns(24), ns(8)), (ns(25), ns(38)));
        // Ready before anything: the front hole [0, 10), then 2 ns of [15, 20).
        assert_eq!(c.reserve(z, ns(0), ns(12)), (ns(0), ns(17)));
        assert_eq!(c.busy(), ns(35));
        assert_eq!(c.busy_by(ns(1000)), ns(35));
        assert_eq!(c.busy_by(ns(36)), ns(33));
    }

    #[test]
    fn a_hold_stalls_what_is_booked_after_it() {
        let mut c = Calendar::default();
        let (z, ns) = (Time::ZERO, Time::ns);
        assert_eq!(c.reserve(z, ns(10), ns(5)), (ns(10), ns(15)));
        c.hold_until(ns(40));
        // The hole [15, 40) is stalled: nothing starts before 40.
        assert_eq!(c.end_for(z, ns(20), ns(5)), ns(45));
        assert_eq!(c.reserve(z, ns(20), ns(5)), (ns(40), ns(45)));
        // A stall is not busy time.
        assert_eq!(c.busy(), ns(10));
        // Booked work and the stall are forgotten alike once past.
        assert_eq!(c.reserve(ns(100), ns(100), ns(1)), (ns(100), ns(101)));
    }

    #[test]
    fn passed_work_is_carried_by_the_next_booking() {
        let mut c = Calendar::default();
        let (z, ns) = (Time::ZERO, Time::ns);
        assert_eq!(c.reserve(z, ns(10), ns(100)), (ns(10), ns(110)));
        // Ready inside the booking, it passes at once...
        assert_eq!(c.pass(ns(50), ns(3)), (ns(50), ns(53)));
        // ...and the next booking takes its time as well.
        assert_eq!(c.end_for(z, ns(200), ns(10)), ns(213));
        assert_eq!(c.reserve(z, ns(200), ns(10)), (ns(200), ns(213)));
        assert_eq!(c.busy(), ns(113));
        assert_eq!(c.busy_by(ns(1000)), ns(113));
    }

    /// Against a unit-by-unit reference (a bitmap of busy nanoseconds) on
    /// random bookings and advancing clocks: each booking takes the first
    /// free units at or after its ready time, across holes; `end_for`
    /// predicts it. Covers the append, queue-behind-the-last and
    /// hole-filling paths, insertions and removals on both sides of the
    /// ring, its growth and wrap-around, and calendars longer than the
    /// linear scan.
    #[test]
    fn bookings_match_a_unit_by_unit_reference() {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut rnd = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for round in 0..80 {
            let mut c = Calendar::default();
            let mut busy = vec![false; 40_000];
            let mut now = 0u64;
            // Some rounds book far ahead (long calendars), some near.
            let reach = if round % 2 == 0 { 60 } else { 400 };
            for _ in 0..600 {
                now += rnd(4);
                let at = now + rnd(reach);
                let need = 1 + rnd(9);
                let ahead = c.end_for(Time::ns(now), Time::ns(at), Time::ns(need));
                assert!(
                    c.end_bound(Time::ns(at), Time::ns(need)) >= ahead,
                    "end_bound must bound end_for"
                );
                let (s, e) = c.reserve(Time::ns(now), Time::ns(at), Time::ns(need));
                assert_eq!(ahead, e, "end_for must predict reserve");
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
