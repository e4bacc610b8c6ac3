//! Live requests: a host queue whose I/Os come from outside the simulation
//! (a served NBD connection, [`crate::serve`]). Each request is put on the
//! queue at its arrival time by an [`Event::LiveArrival`], goes to the drive
//! like any other command (driver submit cost, doorbell, ...), and is
//! reported back, with the tag its caller gave it, when the host has
//! completed it (after the driver's completion cost). A request that finds
//! the submission queue full waits on the host, in arrival order, and its
//! latency still counts from its arrival.

use super::queue::Source;
use super::{Drives, Host};
use crate::engine::EventQueue;
use crate::events::Event;
use crate::units::Time;
use crate::workload::gen::Io;
use std::collections::VecDeque;

/// A live queue's state.
#[derive(Default)]
pub(crate) struct LiveSource {
    /// Requests scheduled to arrive (an `Event::LiveArrival` each), in
    /// arrival order: (arrival, I/O, tag).
    arrivals: VecDeque<(Time, Io, u64)>,
    /// Arrived while the submission queue was full: (arrival, I/O, tag).
    pub(crate) overflow: VecDeque<(Time, Io, u64)>,
    /// The caller's tag of each host command id in flight on this queue.
    pub(crate) tags: Vec<u64>,
    /// Completed: (tag, host completion time), until taken.
    pub(crate) done: Vec<(u64, Time)>,
}

impl Host {
    /// Whether host queue `q` takes live requests.
    pub fn is_live(&self, q: u32) -> bool {
        matches!(
            self.queues.get(q as usize).map(|h| &h.gen),
            Some(Source::Live(_))
        )
    }

    /// Schedule live request `io` (tagged `tag`) to arrive on queue `q` at
    /// `at` (not before the current simulated time, and not before an
    /// earlier arrival on the same queue).
    pub(crate) fn live_schedule(
        &mut self,
        q: u32,
        at: Time,
        io: Io,
        tag: u64,
        eq: &mut EventQueue<Event>,
    ) {
        if let Some(Source::Live(l)) = self.queues.get_mut(q as usize).map(|h| &mut h.gen) {
            let at = at
                .max(eq.now())
                .max(l.arrivals.back().map_or(Time::ZERO, |a| a.0));
            l.arrivals.push_back((at, io, tag));
            eq.at(at, Event::LiveArrival { q });
        }
    }

    /// A live request arrives on queue `q`: submit it, or hold it if the
    /// submission queue is full.
    pub(crate) fn live_arrival<S>(
        &mut self,
        now: Time,
        q: u32,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) where
        S: Drives,
    {
        let limit = self.queue_limit;
        let h = &mut self.queues[q as usize];
        let Source::Live(l) = &mut h.gen else {
            return;
        };
        let Some((_, io, tag)) = l.arrivals.pop_front() else {
            return;
        };
        if h.outstanding < limit && l.overflow.is_empty() {
            self.submit_io(q, now, io, eq, submit);
            if let Some(cmd) = self.last_cmd {
                self.live_tag(q, cmd, tag);
            }
        } else {
            l.overflow.push_back((now, io, tag));
        }
    }

    /// Remember that host command `cmd` on live queue `q` carries `tag`.
    pub(crate) fn live_tag(&mut self, q: u32, cmd: u32, tag: u64) {
        if let Source::Live(l) = &mut self.queues[q as usize].gen {
            let i = cmd as usize;
            if l.tags.len() <= i {
                l.tags.resize(i + 1, 0);
            }
            l.tags[i] = tag;
        }
    }

    /// Move the live requests completed so far, as (tag, completion time),
    /// into `out`.
    pub fn take_live_done(&mut self, out: &mut Vec<(u64, Time)>) {
        for h in &mut self.queues {
            if let Source::Live(l) = &mut h.gen {
                out.append(&mut l.done);
            }
        }
    }

    /// Requests on live queues not yet completed (scheduled, held or in flight).
    pub fn live_pending(&self) -> usize {
        self.queues
            .iter()
            .map(|h| match &h.gen {
                Source::Live(l) => l.arrivals.len() + l.overflow.len() + h.outstanding as usize,
                _ => 0,
            })
            .sum()
    }
}
