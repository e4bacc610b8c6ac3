//! NVMe controller front end: submission/completion queue pairs, doorbells
//! and command-fetch arbitration (round robin, or weighted round robin with
//! an urgent class, NVMe base specification 1.4 §4.13).

pub(crate) mod config;

use crate::config::{Arbitration, NvmeConfig};
use std::collections::VecDeque;

/// Bytes of one submission queue entry.
pub const SQE_BYTES: u64 = 64;
/// Bytes of one completion queue entry.
pub const CQE_BYTES: u64 = 16;
/// Bytes of a doorbell register write.
pub const DOORBELL_BYTES: u64 = 4;
/// Bytes of an MSI-X interrupt message.
pub const MSIX_BYTES: u64 = 4;

/// WRR priority class of a submission queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueClass {
    /// Served before all others (strict priority).
    Urgent,
    /// WRR high.
    High,
    /// WRR medium.
    Medium,
    /// WRR low.
    Low,
}

struct Sq {
    /// Commands the host has placed (ids), in order.
    entries: VecDeque<u32>,
    /// Entries announced by doorbell and not yet fetched.
    announced: u32,
    class: QueueClass,
}

/// The controller's view of the I/O queues.
pub struct Controller {
    arb: Arbitration,
    burst: u32,
    weights: [u32; 3],
    sqs: Vec<Sq>,
    rr: usize,
    /// Remaining fetches in the current burst of queue `rr`.
    burst_left: u32,
    credits: [u32; 3],
    class_rr: [usize; 3],
}

impl Controller {
    /// Controller with `queues` SQ/CQ pairs.
    pub fn new(cfg: &NvmeConfig, classes: &[QueueClass]) -> Controller {
        Controller {
            arb: cfg.arbitration,
            burst: cfg.arbitration_burst,
            weights: cfg.wrr_weights,
            sqs: classes
                .iter()
                .map(|&c| Sq {
                    entries: VecDeque::new(),
                    announced: 0,
                    class: c,
                })
                .collect(),
            rr: 0,
            burst_left: 0,
            credits: cfg.wrr_weights,
            class_rr: [0; 3],
        }
    }

    /// The host placed command `cmd` in SQ `q` (before ringing the doorbell).
    pub fn place(&mut self, q: u32, cmd: u32) {
        self.sqs[q as usize].entries.push_back(cmd);
    }

    /// A doorbell write for SQ `q` arrived (one new entry).
    pub fn doorbell(&mut self, q: u32) {
        self.sqs[q as usize].announced += 1;
    }

    /// Pick the next command to fetch, per the arbitration policy.
    pub fn arbitrate(&mut self) -> Option<u32> {
        let n = self.sqs.len();
        if n == 0 {
            return None;
        }
        if n == 1 {
            // One queue: every policy takes its head.
            let sq = &mut self.sqs[0];
            if sq.announced == 0 {
                return None;
            }
            sq.announced -= 1;
            return sq.entries.pop_front();
        }
        let q = match self.arb {
            Arbitration::Rr => {
                if self.burst_left > 0 && self.sqs[self.rr].announced > 0 {
                    self.burst_left -= 1;
                    self.rr
                } else {
                    let start = (self.rr + 1) % n;
                    let q = (0..n)
                        .map(|i| (start + i) % n)
                        .find(|&q| self.sqs[q].announced > 0)?;
                    self.rr = q;
                    self.burst_left = self.burst - 1;
                    q
                }
            }
            Arbitration::Wrr => {
                if let Some(q) = (0..n)
                    .find(|&q| self.sqs[q].class == QueueClass::Urgent && self.sqs[q].announced > 0)
                {
                    q
                } else {
                    let class_of = |c: QueueClass| match c {
                        QueueClass::High | QueueClass::Urgent => 0,
                        QueueClass::Medium => 1,
                        QueueClass::Low => 2,
                    };
                    let has = |k: usize, sqs: &Vec<Sq>| {
                        sqs.iter()
                            .any(|s| class_of(s.class) == k && s.announced > 0)
                    };
                    if !(0..3).any(|k| has(k, &self.sqs)) {
                        return None;
                    }
                    // Refill credits when every class with work has spent its weight.
                    if !(0..3).any(|k| self.credits[k] > 0 && has(k, &self.sqs)) {
                        self.credits = self.weights;
                    }
                    let k = (0..3).find(|&k| self.credits[k] > 0 && has(k, &self.sqs))?;
                    self.credits[k] -= 1;
                    let start = self.class_rr[k];
                    let q = (0..n)
                        .map(|i| (start + i) % n)
                        .find(|&q| class_of(self.sqs[q].class) == k && self.sqs[q].announced > 0)?;
                    self.class_rr[k] = (q + 1) % n;
                    q
                }
            }
        };
        let s = &mut self.sqs[q];
        s.announced -= 1;
        s.entries.pop_front()
    }

    /// Any announced, unfetched entries?
    pub fn has_pending(&self) -> bool {
        self.sqs.iter().any(|s| s.announced > 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Device;

    fn ctl(arb: Arbitration, classes: &[QueueClass]) -> Controller {
        let mut cfg = Device::preset("pm9a3-960g").unwrap().nvme;
        cfg.arbitration = arb;
        cfg.wrr_weights = [4, 2, 1];
        Controller::new(&cfg, classes)
    }

    #[test]
    fn round_robin_alternates_queues() {
        let mut c = ctl(Arbitration::Rr, &[QueueClass::Medium; 3]);
        for (q, cmd) in [(0, 0), (0, 1), (1, 10), (1, 11), (2, 20)] {
            c.place(q, cmd);
            c.doorbell(q);
        }
        let order: Vec<u32> = std::iter::from_fn(|| c.arbitrate()).collect();
        assert_eq!(order, vec![10, 20, 0, 11, 1]);
    }

    #[test]
    fn wrr_serves_by_weight() {
        let mut c = ctl(Arbitration::Wrr, &[QueueClass::High, QueueClass::Low]);
        for i in 0..20 {
            c.place(0, i);
            c.doorbell(0);
            c.place(1, 100 + i);
            c.doorbell(1);
        }
        let first: Vec<u32> = (0..10).filter_map(|_| c.arbitrate()).collect();
        let low = first.iter().filter(|&&x| x >= 100).count();
        assert_eq!(low, 2, "{first:?}");
    }
}
