//! Driving a system from outside, one request at a time (serving it in real
//! time, [`crate::serve`]): requests are scheduled at their arrival on the
//! host's live queues, the event loop is advanced to a given time, and the
//! completed requests are collected with their simulated completion times.

use super::{SimError, System};
use crate::units::Time;
use crate::workload::gen::Io;

impl System {
    /// Start every host queue (live queues wait for their requests).
    pub fn live_start(&mut self) -> Result<(), SimError> {
        for q in 0..self.host.queues.len() as u32 {
            self.start_queue(q, Time::ZERO)?;
        }
        if let Some(e) = self.host.failure.take() {
            return Err(e);
        }
        Ok(())
    }

    /// Current simulated time (that of the last event processed).
    pub fn now(&self) -> Time {
        self.q.now()
    }

    /// Time of the next pending event, if any.
    pub fn next_event_time(&self) -> Option<Time> {
        self.q.next_time()
    }

    /// Schedule request `io`, tagged `tag`, to arrive on live host queue `q`
    /// at `at` (at the current simulated time if `at` is earlier). An I/O
    /// outside the drive's logical space, or a queue that takes no live
    /// requests, is refused.
    pub fn live_submit(&mut self, q: u32, at: Time, io: Io, tag: u64) -> Result<(), SimError> {
        if !self.host.is_live(q) {
            return Err(SimError::Device(format!(
                "host queue {q} takes no live requests"
            )));
        }
        let d = self.host.queues[q as usize].targets[0].0 as usize;
        let lpns = self.host.lpns[d];
        if io.nlpn > 0 && io.lpn as u64 + io.nlpn as u64 > lpns {
            return Err(SimError::Device(format!(
                "request for mapping units {}..{} lies beyond drive '{}' ({lpns} units)",
                io.lpn,
                io.lpn as u64 + io.nlpn as u64,
                self.names[d]
            )));
        }
        self.host.live_schedule(q, at, io, tag, &mut self.q);
        Ok(())
    }

    /// Process every event due at or before `t`.
    pub fn advance_to(&mut self, t: Time) -> Result<(), SimError> {
        while let Some(next) = self.q.next_time() {
            if next > t {
                break;
            }
            let Some((now, ev)) = self.q.pop() else {
                break;
            };
            self.step(now, ev)?;
        }
        Ok(())
    }

    /// Move the live requests completed so far, as (tag, completion time), into `out`.
    pub fn take_live_done(&mut self, out: &mut Vec<(u64, Time)>) {
        self.host.take_live_done(out);
    }

    /// Live requests not yet completed.
    pub fn live_pending(&self) -> usize {
        self.host.live_pending()
    }

    /// Queue `q`'s drive index (the drive its requests go to).
    pub fn live_drive(&self, q: u32) -> Option<usize> {
        self.host
            .queues
            .get(q as usize)
            .and_then(|h| h.targets.first())
            .map(|t| t.0 as usize)
    }
}
