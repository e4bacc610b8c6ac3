//! Run statistics: per-direction I/O counts, bytes and latency histograms
//! (HDR histogram, 3 significant digits, 1 ns to 1 hour).

use crate::units::Time;
use hdrhistogram::Histogram;
use std::cell::RefCell;

/// Statistics of one direction.
pub struct DirStats {
    /// Completed I/Os measured.
    pub ios: u64,
    /// Bytes measured.
    pub bytes: u64,
    /// Minimum latency.
    pub min: Time,
    /// Maximum latency.
    pub max: Time,
    /// Sum of latencies (ps, for an exact mean).
    pub sum_ps: u128,
    /// Latency histogram in ns, and latencies not yet recorded in it.
    lat: RefCell<Latencies>,
}

/// Latencies recorded in batches: a histogram's counters (3 significant
/// digits: tens of KiB for the latencies of a run) are touched at random,
/// so a record per I/O pushed the simulator's own state out of the CPU's
/// cache (most in systems of several drives: docs/performance.md). The
/// counts are the same whatever the order.
struct Latencies {
    hist: Histogram<u64>,
    pending: [u64; PENDING],
    n: usize,
}

/// Latencies held before they are recorded in the histogram.
const PENDING: usize = 128;

impl Latencies {
    #[inline(never)]
    fn settle(&mut self) {
        for &v in &self.pending[..self.n] {
            self.hist.saturating_record(v);
        }
        self.n = 0;
    }
}

impl Default for DirStats {
    fn default() -> Self {
        DirStats {
            ios: 0,
            bytes: 0,
            min: Time::MAX,
            max: Time::ZERO,
            sum_ps: 0,
            lat: RefCell::new(Latencies {
                hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3)
                    .expect("static histogram bounds are valid"),
                pending: [0; PENDING],
                n: 0,
            }),
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
        let l = self.lat.get_mut();
        l.pending[l.n] = lat.as_ns().max(1);
        l.n += 1;
        if l.n == PENDING {
            l.settle();
        }
    }

    /// Mean latency in ns.
    pub fn mean_ns(&self) -> f64 {
        if self.ios == 0 {
            0.0
        } else {
            self.sum_ps as f64 / self.ios as f64 / 1e3
        }
    }

    /// The histogram with every latency recorded so far.
    fn hist(&self) -> std::cell::Ref<'_, Histogram<u64>> {
        self.lat.borrow_mut().settle();
        std::cell::Ref::map(self.lat.borrow(), |l| &l.hist)
    }

    /// Latency at percentile `p` (0..100) in ns.
    pub fn pct_ns(&self, p: f64) -> u64 {
        if self.ios == 0 {
            0
        } else {
            self.hist().value_at_quantile(p / 100.0)
        }
    }
}

impl DirStats {
    /// Several statistics as one: counts, bytes, sums and histograms
    /// added, the extremes of all.
    pub fn merged<'a>(parts: impl IntoIterator<Item = &'a DirStats>) -> DirStats {
        let mut m = DirStats::default();
        for p in parts {
            m.ios += p.ios;
            m.bytes += p.bytes;
            m.sum_ps += p.sum_ps;
            m.min = m.min.min(p.min);
            m.max = m.max.max(p.max);
            let l = m.lat.get_mut();
            // Same bounds (every `DirStats` is made by `default`), so
            // every value fits: the add cannot fail.
            if l.hist.add(&*p.hist()).is_err() {
                for v in p.hist().iter_recorded() {
                    l.hist
                        .saturating_record_n(v.value_iterated_to(), v.count_at_value());
                }
            }
        }
        m
    }

    /// Recorded latency histogram as (latency ns, count) pairs, ascending.
    pub fn histogram(&self) -> Vec<(u64, u64)> {
        self.hist()
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    }
}

/// Throughput and latency per fixed interval of simulated time.
#[derive(Debug, Clone, Default)]
pub struct Sampler {
    /// Interval.
    pub interval: Time,
    /// Per window and direction (0 read, 1 write): I/Os.
    pub ios: Vec<[u64; 2]>,
    /// Bytes.
    pub bytes: Vec<[u64; 2]>,
    /// Sum of latencies (ps).
    pub lat_sum_ps: Vec<[u128; 2]>,
    /// Max latency (ps).
    pub lat_max_ps: Vec<[u64; 2]>,
}

impl Sampler {
    /// Record an I/O completing `since` after the start of the measured window.
    #[inline]
    pub fn record(&mut self, since: Time, write: bool, lat: Time, bytes: u64) {
        let w = (since.0 / self.interval.0) as usize;
        if w >= self.ios.len() {
            self.ios.resize(w + 1, [0; 2]);
            self.bytes.resize(w + 1, [0; 2]);
            self.lat_sum_ps.resize(w + 1, [0; 2]);
            self.lat_max_ps.resize(w + 1, [0; 2]);
        }
        let d = write as usize;
        self.ios[w][d] += 1;
        self.bytes[w][d] += bytes;
        self.lat_sum_ps[w][d] += lat.0 as u128;
        self.lat_max_ps[w][d] = self.lat_max_ps[w][d].max(lat.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Latencies recorded in batches, and per-drive statistics added up,
    /// give exactly what recording every latency in one place gives (the
    /// report of a system of several drives is built that way).
    #[test]
    fn merged_statistics_equal_one_record_of_everything() {
        let mut all = DirStats::default();
        let mut parts = [
            DirStats::default(),
            DirStats::default(),
            DirStats::default(),
        ];
        // 1,000 latencies from 10 ns to about 3 ms, spread over the parts
        // unevenly (one part gets fewer than a batch).
        let mut x: u64 = 12345;
        for i in 0..1000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let lat = Time::ns(10 + (x >> 33) % 3_000_000);
            let bytes = 4096 * (1 + i % 3);
            all.record(lat, bytes);
            parts[if i % 50 == 0 { 2 } else { (i % 2) as usize }].record(lat, bytes);
        }
        let m = DirStats::merged(&parts);
        assert_eq!((m.ios, m.bytes, m.sum_ps), (all.ios, all.bytes, all.sum_ps));
        assert_eq!((m.min, m.max), (all.min, all.max));
        assert_eq!(m.histogram(), all.histogram());
        for p in [50.0, 99.0, 99.99] {
            assert_eq!(m.pct_ns(p), all.pct_ns(p));
        }
        // Pending latencies count before they are settled, and reading
        // twice changes nothing.
        assert_eq!(parts[2].histogram().iter().map(|v| v.1).sum::<u64>(), 20);
        assert_eq!(parts[2].histogram().iter().map(|v| v.1).sum::<u64>(), 20);
    }
}
