//! When a job issues its I/Os: rate caps (`rate`, `rate_iops`,
//! `rate_process`) and think time (`thinktime`, `thinktime_blocks`,
//! `thinktime_blocks_type`, `thinktime_iotime`).
//!
//! The generator ([`super::gen::JobGen`]) decides *what* a job issues; the
//! pacer decides *when*. Semantics follow fio's documentation:
//!
//! * Rate caps are per direction (read, write, trim). With the linear
//!   process the n-th byte of a direction is due `n / rate` after the job
//!   started (and the n-th I/O `n / rate_iops` after it), so a job that fell
//!   behind (the drive was slower) catches up at once, as fio's budget does;
//!   with `rate_process=poisson` the gaps are exponential with the same mean.
//!   When both `rate` and `rate_iops` are set, both caps hold. Flushes are
//!   not rate-limited. The time an I/O waits for its slot is not latency:
//!   like fio, latency counts from submission.
//! * Think time: after `thinktime_blocks` I/Os (counted at completion, or
//!   at issue with `thinktime_blocks_type=issue`), or after
//!   `thinktime_iotime` of I/O since the last think, the job stops
//!   submitting, waits for its I/Os in flight to complete (fio quiesces
//!   the queue), then idles for `thinktime` before submitting again.
//!   `thinktime_spin` is part of `thinktime` as far as the drive can tell.

use super::{JobSpec, Op, RateProcess};
use crate::units::Time;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

const PS_PER_S: f64 = 1e12;

/// Issue timing of one job clone. `None` from [`Pacer::new`] means the job
/// issues as fast as its queue depth allows (no state, no cost).
#[derive(Debug)]
pub struct Pacer {
    /// Picoseconds per byte `[read, write, trim]` (`rate=`).
    ps_per_byte: [Option<f64>; 3],
    /// Picoseconds per I/O (`rate_iops=`).
    ps_per_io: [Option<f64>; 3],
    poisson: bool,
    rng: Xoshiro256PlusPlus,
    /// Job start.
    start: Time,
    /// Earliest issue time of the next I/O, per direction and cap (bytes, I/Os).
    next: [[Time; 2]; 3],
    /// Bytes and I/Os issued per direction.
    issued: [(u64, u64); 3],
    think: Time,
    think_blocks: u32,
    think_at_issue: bool,
    think_iotime: Time,
    /// I/Os counted toward `thinktime_blocks` since the last think.
    count: u32,
    /// Start of the current I/O period (for `thinktime_iotime`).
    period_start: Time,
}

fn dir(op: Op) -> Option<usize> {
    match op {
        Op::Read => Some(0),
        Op::Write => Some(1),
        Op::Trim => Some(2),
        Op::Flush => None,
    }
}

impl Pacer {
    /// The pacer of a job, or `None` if it has neither rate caps nor think time.
    pub fn new(job: &JobSpec, seed: u64) -> Option<Pacer> {
        let ps_per_byte = job
            .rate
            .map(|r| r.filter(|&r| r > 0).map(|r| PS_PER_S / r as f64));
        let ps_per_io = job
            .rate_iops
            .map(|r| r.filter(|&r| r > 0).map(|r| PS_PER_S / r as f64));
        let paced = ps_per_byte.iter().chain(&ps_per_io).any(Option::is_some);
        if !paced && job.thinktime == Time::ZERO {
            return None;
        }
        Some(Pacer {
            ps_per_byte,
            ps_per_io,
            poisson: job.rate_process == RateProcess::Poisson,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x7261_7465_7061_6365),
            start: Time::ZERO,
            next: [[Time::ZERO; 2]; 3],
            issued: [(0, 0); 3],
            think: job.thinktime,
            think_blocks: job.thinktime_blocks.max(1),
            think_at_issue: job.thinktime_blocks_issue,
            think_iotime: job.thinktime_iotime,
            count: 0,
            period_start: Time::ZERO,
        })
    }

    /// The job starts at `t`: rate budgets and the first I/O period count from there.
    pub fn start_at(&mut self, t: Time) {
        self.start = t;
        self.next = [[t; 2]; 3];
        self.period_start = t;
    }

    /// Book an I/O of `bytes` in direction `op`: the earliest time it may be
    /// submitted (its rate budget then moves on).
    pub fn due(&mut self, op: Op, bytes: u64) -> Time {
        let Some(d) = dir(op) else {
            return Time::ZERO;
        };
        let due = self.next[d][0].max(self.next[d][1]);
        let (b, n) = &mut self.issued[d];
        *b += bytes;
        *n += 1;
        let (b, n) = (*b, *n);
        if let Some(ps) = self.ps_per_byte[d] {
            self.next[d][0] = if self.poisson {
                self.next[d][0] + Time(self.exp(ps * bytes as f64))
            } else {
                self.start + Time((ps * b as f64) as u64)
            };
        }
        if let Some(ps) = self.ps_per_io[d] {
            self.next[d][1] = if self.poisson {
                self.next[d][1] + Time(self.exp(ps))
            } else {
                self.start + Time((ps * n as f64) as u64)
            };
        }
        due
    }

    /// An exponential draw with mean `mean` picoseconds.
    fn exp(&mut self, mean: f64) -> u64 {
        let u: f64 = 1.0 - self.rng.gen::<f64>();
        (-u.ln() * mean) as u64
    }

    /// An I/O was submitted at `now`: should the job think now?
    pub fn on_issue(&mut self, now: Time) -> bool {
        if self.think == Time::ZERO {
            return false;
        }
        if self.think_at_issue {
            self.count += 1;
        }
        self.think_due(now)
    }

    /// An I/O completed at `now`: should the job think now?
    pub fn on_complete(&mut self, now: Time) -> bool {
        if self.think == Time::ZERO {
            return false;
        }
        if !self.think_at_issue {
            self.count += 1;
        }
        self.think_due(now)
    }

    fn think_due(&self, now: Time) -> bool {
        self.count >= self.think_blocks
            || (self.think_iotime > Time::ZERO && now >= self.period_start + self.think_iotime)
    }

    /// Think time (idle once the queue is empty).
    pub fn think_time(&self) -> Time {
        self.think
    }

    /// The job thinks until `wake`: counters restart and a new I/O period starts then.
    pub fn think(&mut self, wake: Time) {
        self.count = 0;
        self.period_start = wake;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(f: impl FnOnce(&mut JobSpec)) -> JobSpec {
        let mut j = JobSpec::default();
        f(&mut j);
        j
    }

    #[test]
    fn no_rate_no_think_is_no_pacer() {
        assert!(Pacer::new(&JobSpec::default(), 1).is_none());
    }

    #[test]
    fn linear_rate_spaces_bytes_evenly() {
        // 4 MB/s with 4 KB I/Os: one I/O per ms.
        let mut p = Pacer::new(&job(|j| j.rate[1] = Some(4_000_000)), 1).expect("paced");
        let dues: Vec<Time> = (0..4).map(|_| p.due(Op::Write, 4000)).collect();
        assert_eq!(
            dues,
            vec![Time::ZERO, Time::ms(1), Time::ms(2), Time::ms(3)]
        );
        // Reads are not capped.
        assert_eq!(p.due(Op::Read, 4000), Time::ZERO);
        assert_eq!(p.due(Op::Flush, 0), Time::ZERO);
    }

    #[test]
    fn both_caps_hold_and_start_shifts() {
        let mut p = Pacer::new(
            &job(|j| {
                j.rate[0] = Some(1_000_000);
                j.rate_iops[0] = Some(100);
            }),
            1,
        )
        .expect("paced");
        p.start_at(Time::ms(5));
        assert_eq!(p.due(Op::Read, 1000), Time::ms(5));
        // Bytes allow the next at +1 ms, IOPS at +10 ms.
        assert_eq!(p.due(Op::Read, 1000), Time::ms(15));
    }

    #[test]
    fn poisson_gaps_have_the_configured_mean() {
        let mut p = Pacer::new(
            &job(|j| {
                j.rate_iops[0] = Some(10_000);
                j.rate_process = RateProcess::Poisson;
            }),
            7,
        )
        .expect("paced");
        let n = 200_000;
        let mut last = Time::ZERO;
        let mut gaps = Vec::with_capacity(n);
        for _ in 0..n {
            let d = p.due(Op::Read, 4096);
            gaps.push((d - last).as_secs_f64());
            last = d;
        }
        let mean: f64 = gaps[1..].iter().sum::<f64>() / (n - 1) as f64;
        let var: f64 = gaps[1..].iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 2) as f64;
        // Exponential: mean 100 us, standard deviation equal to the mean.
        assert!((mean / 100e-6 - 1.0).abs() < 0.01, "mean {mean}");
        assert!(
            (var.sqrt() / mean - 1.0).abs() < 0.02,
            "cv {}",
            var.sqrt() / mean
        );
    }

    #[test]
    fn think_after_blocks_at_completion_or_issue() {
        let mut p = Pacer::new(
            &job(|j| {
                j.thinktime = Time::us(50);
                j.thinktime_blocks = 3;
            }),
            1,
        )
        .expect("think");
        assert!(!p.on_issue(Time::ZERO));
        assert!(!p.on_complete(Time::us(1)));
        assert!(!p.on_complete(Time::us(2)));
        assert!(p.on_complete(Time::us(3)));
        assert_eq!(p.think_time(), Time::us(50));
        p.think(Time::us(53));
        assert!(!p.on_complete(Time::us(60)));
        let mut q = Pacer::new(
            &job(|j| {
                j.thinktime = Time::us(50);
                j.thinktime_blocks = 2;
                j.thinktime_blocks_issue = true;
            }),
            1,
        )
        .expect("think");
        assert!(!q.on_issue(Time::ZERO));
        assert!(q.on_issue(Time::ZERO));
    }

    #[test]
    fn think_after_iotime() {
        let mut p = Pacer::new(
            &job(|j| {
                j.thinktime = Time::ms(1);
                j.thinktime_blocks = 1_000_000;
                j.thinktime_iotime = Time::ms(10);
            }),
            1,
        )
        .expect("think");
        assert!(!p.on_complete(Time::ms(9)));
        assert!(p.on_complete(Time::ms(10)));
        p.think(Time::ms(11));
        assert!(!p.on_complete(Time::ms(20)));
        assert!(p.on_complete(Time::ms(21)));
    }
}
