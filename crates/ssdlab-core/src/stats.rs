//! Run statistics: per-direction I/O counts, bytes and latency histograms
//! (HDR histogram, 3 significant digits, 1 ns to 1 hour).

use crate::units::Time;
use hdrhistogram::Histogram;

/// Statistics of one direction.
pub struct DirStats {
    /// Completed I/Os measured.
    pub ios: u64,
    /// Bytes measured.
    pub bytes: u64,
    /// Latency histogram in ns.
    pub hist: Histogram<u64>,
    /// Minimum latency.
    pub min: Time,
    /// Maximum latency.
    pub max: Time,
    /// Sum of latencies (ps, for an exact mean).
    pub sum_ps: u128,
}

impl Default for DirStats {
    fn default() -> Self {
        DirStats {
            ios: 0,
            bytes: 0,
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
                .expect("static histogram bounds are valid"),
            min: Time::MAX,
            max: Time::ZERO,
            sum_ps: 0,
        }
    }
}

impl DirStats {
    /// Record one completed I/O.
    #[inline]
    pub fn record(&mut self, lat: Time, bytes: u64) {
        self.ios += 1;
        self.bytes += bytes;
        self.sum_ps += lat.0 as u128;
        if lat < self.min {
            self.min = lat;
        }
        if lat > self.max {
            self.max = lat;
        }
        self.hist.saturating_record(lat.as_ns().max(1));
    }

    /// Mean latency in ns.
    pub fn mean_ns(&self) -> f64 {
        if self.ios == 0 {
            0.0
        } else {
            self.sum_ps as f64 / self.ios as f64 / 1e3
        }
    }

    /// Latency at percentile `p` (0..100) in ns.
    pub fn pct_ns(&self, p: f64) -> u64 {
        if self.ios == 0 {
            0
        } else {
            self.hist.value_at_quantile(p / 100.0)
        }
    }
}
