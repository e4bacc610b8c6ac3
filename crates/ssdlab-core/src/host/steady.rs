//! fio's steady-state detection (`ss=`, `ss_dur=`, `ss_ramp=`): once a
//! second of simulated time each judged unit (a job clone, or with
//! `group_reporting` a whole reporting group) takes the I/Os and bytes its
//! queues completed in that second as one sample; over a rolling window of
//! `ss_dur` samples it checks the criterion the way fio's `steadystate.c`
//! does (largest deviation from the window's mean, or the least-squares
//! slope, absolute or as a percentage of the mean), and when it holds the
//! unit's jobs end, as at the end of their runtime.

use crate::units::Time;
use crate::workload::SteadyState;
use serde::Serialize;
use std::collections::VecDeque;

/// One second.
pub(crate) const TICK: Time = Time(1_000_000_000_000);

/// What is judged together.
#[derive(Debug, Clone)]
pub(crate) struct SsUnit {
    /// The criterion.
    pub(crate) spec: SteadyState,
    /// Host queues whose completions count.
    pub(crate) queues: Vec<u32>,
    /// Name (the job's, or its group's first job's).
    pub(crate) name: String,
    /// Reporting group.
    pub(crate) group: u32,
    /// When the first of its queues started (`None`: not yet).
    pub(crate) start: Option<Time>,
    /// Counters at the previous tick.
    prev: (u64, u64),
    ramp_over: bool,
    /// Window samples (IOPS, bytes/s), oldest first.
    iops: VecDeque<u64>,
    bw: VecDeque<u64>,
    /// Last evaluation.
    slope: f64,
    deviation: f64,
    criterion: f64,
    /// When the criterion held.
    pub(crate) attained: Option<Time>,
}

impl SsUnit {
    pub(crate) fn new(spec: SteadyState, queues: Vec<u32>, name: String, group: u32) -> SsUnit {
        SsUnit {
            spec,
            queues,
            name,
            group,
            start: None,
            prev: (0, 0),
            ramp_over: spec.ramp == Time::ZERO,
            iops: VecDeque::new(),
            bw: VecDeque::new(),
            slope: 0.0,
            deviation: 0.0,
            criterion: 0.0,
            attained: None,
        }
    }

    /// Time between samples (`ss_interval`).
    pub(crate) fn interval(&self) -> Time {
        TICK.times(self.spec.interval_s.max(1) as u64)
    }

    /// Samples in the window.
    fn samples(&self) -> usize {
        (self.spec.dur_s / self.spec.interval_s.max(1)).max(1) as usize
    }

    /// One tick at `now` with the unit's completed (I/Os, bytes) so far;
    /// returns true when steady state is attained.
    pub(crate) fn tick(&mut self, now: Time, done: (u64, u64)) -> bool {
        let start = self.start.unwrap_or(now);
        if !self.ramp_over && now.saturating_sub(start) >= self.spec.ramp + self.interval() {
            // fio: data collection begins one interval after ss_ramp.
            self.ramp_over = true;
        }
        // Per-second rates over the interval (fio normalises likewise).
        let iv = self.spec.interval_s.max(1) as u64;
        let (di, db) = ((done.0 - self.prev.0) / iv, (done.1 - self.prev.1) / iv);
        self.prev = done;
        if !self.ramp_over {
            return false;
        }
        let n = self.samples();
        self.iops.push_back(di);
        self.bw.push_back(db);
        if self.iops.len() > n {
            self.iops.pop_front();
            self.bw.pop_front();
        }
        if self.iops.len() < n {
            return false;
        }
        let ys = if self.spec.iops { &self.iops } else { &self.bw };
        let sum_y: f64 = ys.iter().map(|&y| y as f64).sum();
        let mean = sum_y / n as f64;
        let held = if self.spec.slope {
            let nf = n as f64;
            let sum_x = nf * (nf - 1.0) / 2.0;
            let sum_x_sq = (nf - 1.0) * nf * (2.0 * nf - 1.0) / 6.0;
            let sum_xy: f64 = ys
                .iter()
                .enumerate()
                .map(|(i, &y)| i as f64 * y as f64)
                .sum();
            self.slope = (sum_xy - sum_x * sum_y / nf) / (sum_x_sq - sum_x * sum_x / nf);
            self.criterion = if self.spec.pct {
                100.0 * self.slope / mean
            } else {
                self.slope
            };
            self.criterion.abs() < self.spec.limit
        } else {
            self.deviation = ys
                .iter()
                .map(|&y| (y as f64 - mean).abs())
                .fold(0.0, f64::max);
            self.criterion = if self.spec.pct {
                100.0 * self.deviation / mean
            } else {
                self.deviation
            };
            self.criterion < self.spec.limit
        };
        if held {
            self.attained = Some(now);
        }
        held
    }

    /// The result, in fio's `steadystate` layout.
    pub(crate) fn result(&self) -> SteadyStateOut {
        let mean = |v: &VecDeque<u64>| {
            if v.is_empty() {
                0
            } else {
                v.iter().sum::<u64>() / self.samples() as u64
            }
        };
        SteadyStateOut {
            queues: self.queues.clone(),
            group: self.group,
            job: self.name.clone(),
            ss: self.spec.name(),
            duration: self.spec.dur_s,
            attained: self.attained.is_some() as u32,
            attained_at_s: self.attained.map(|t| {
                t.saturating_sub(self.start.unwrap_or(Time::ZERO))
                    .as_secs_f64()
            }),
            criterion: format!(
                "{:.6}{}",
                self.criterion as f32,
                if self.spec.pct { "%" } else { "" }
            ),
            max_deviation: self.deviation,
            slope: self.slope,
            data: SteadyStateData {
                bw_mean: mean(&self.bw),
                iops_mean: mean(&self.iops),
                iops: self.iops.iter().copied().collect(),
                bw: self.bw.iter().copied().collect(),
            },
        }
    }
}

/// A steady-state result, as fio's json output carries it (plus the job
/// and when the criterion held).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SteadyStateOut {
    /// Host queues (job clones) judged together.
    #[serde(skip)]
    pub queues: Vec<u32>,
    /// Reporting group.
    #[serde(skip)]
    pub group: u32,
    /// Job (or reporting group's first job, with `group_reporting`).
    pub job: String,
    /// Criterion and limit (`iops_slope:0.300000%`).
    pub ss: String,
    /// Window, seconds.
    pub duration: u32,
    /// 1 if the criterion held (the job ended there), else 0.
    pub attained: u32,
    /// Seconds from the job's start to when it held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attained_at_s: Option<f64>,
    /// The last value of the criterion (with `%` for a percentage).
    pub criterion: String,
    /// Largest deviation from the window's mean (deviation criteria).
    pub max_deviation: f64,
    /// Least-squares slope of the window (slope criteria), per second.
    pub slope: f64,
    /// The window's samples, oldest first.
    pub data: SteadyStateData,
}

/// The samples of a steady-state window.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SteadyStateData {
    /// Mean bandwidth over the window, bytes/s.
    pub bw_mean: u64,
    /// Mean IOPS over the window.
    pub iops_mean: u64,
    /// IOPS per second.
    pub iops: Vec<u64>,
    /// Bytes per second.
    pub bw: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(iops: bool, slope: bool, limit: f64, pct: bool, dur_s: u32) -> SsUnit {
        let spec = SteadyState {
            iops,
            slope,
            limit,
            pct,
            dur_s,
            interval_s: 1,
            ramp: Time::ZERO,
        };
        let mut u = SsUnit::new(spec, vec![0], "j".into(), 0);
        u.start = Some(Time::ZERO);
        u
    }

    /// Feed per-second IOPS; returns the tick (1-based) at which it held.
    fn feed(u: &mut SsUnit, per_s: &[u64]) -> Option<usize> {
        let mut total = 0;
        for (i, &x) in per_s.iter().enumerate() {
            total += x;
            if u.tick(TICK.times(i as u64 + 1), (total, total * 4096)) {
                return Some(i + 1);
            }
        }
        None
    }

    #[test]
    fn deviation_holds_once_every_sample_is_within_the_limit_of_the_mean() {
        // Window 3, 10 %: [100, 50, 100] deviates 40 % of its mean, ...,
        // [60, 95, 100] 29 %; [95, 100, 105] 5 %.
        let mut u = unit(true, false, 10.0, true, 3);
        assert_eq!(feed(&mut u, &[100, 50, 100, 60, 95, 100, 105]), Some(7));
        let r = u.result();
        assert_eq!(r.data.iops, vec![95, 100, 105]);
        assert_eq!(r.data.iops_mean, 100);
        assert!((r.max_deviation - 5.0).abs() < 1e-9);
        assert_eq!(r.criterion, "5.000000%");
        assert_eq!(r.ss, "iops:10.000000%");
    }

    #[test]
    fn slope_is_the_least_squares_slope_of_the_window() {
        // A ramp of +10 per second has slope 10 (absolute); a flat window 0.
        let mut u = unit(true, true, 1.0, false, 4);
        assert_eq!(feed(&mut u, &[10, 20, 30, 40, 50]), None);
        assert!((u.slope - 10.0).abs() < 1e-9, "{}", u.slope);
        let mut v = unit(true, true, 1.0, false, 4);
        assert_eq!(feed(&mut v, &[10, 20, 30, 40, 40, 40, 40]), Some(7));
        // Percent of the mean: slope 10 on mean 25 is 40 %.
        let mut w = unit(false, true, 50.0, true, 4);
        assert_eq!(feed(&mut w, &[10, 20, 30, 40]), Some(4));
        assert!((w.criterion - 40.0).abs() < 1e-9, "{}", w.criterion);
    }

    #[test]
    fn ramp_delays_the_first_sample_by_one_second_more() {
        let spec = SteadyState {
            iops: true,
            slope: false,
            limit: 1.0,
            pct: true,
            dur_s: 2,
            ramp: TICK.times(2),
            interval_s: 1,
        };
        let mut u = SsUnit::new(spec, vec![0], "j".into(), 0);
        u.start = Some(Time::ZERO);
        // Ticks 1, 2 are ramp; sampling starts at tick 3 (ramp + 1 s).
        assert_eq!(feed(&mut u, &[7, 9, 100, 100]), Some(4));
        assert_eq!(u.result().data.iops, vec![100, 100]);
    }
}
