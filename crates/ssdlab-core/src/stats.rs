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
///
/// A batch is counted in `counts`, laid out as the histogram's own
/// counters ([`bucket_of`]), and those counts are added to `hist` when it
/// is read: the histogram's own record (about 60 instructions, its range
/// checks and extremes) cost 2 % of a simulated random read.
struct Latencies {
    hist: Histogram<u64>,
    /// Latencies (ns) counted by [`bucket_of`], not yet in `hist`; empty
    /// until the first batch.
    counts: Vec<u64>,
    /// The range of `counts` that may be non-zero.
    touched: (usize, usize),
    pending: [u64; PENDING],
    n: usize,
}

/// Latencies held before they are recorded in the histogram.
const PENDING: usize = 128;

/// Lowest and highest latency the histogram tracks, ns, and its
/// significant digits.
const LOWEST_NS: u64 = 1;
const HIGHEST_NS: u64 = 3_600_000_000_000;
const DIGITS: u8 = 3;

/// log2 of the histogram's counters per bucket: 3 significant digits need
/// 2,000 distinct values, so 2,048 (HdrHistogram's layout: values below
/// 2,048 ns exactly, then each power of two in 1,024 steps).
const SUB_BITS: u32 = 11;

/// The counter of latency `ns` (>= 1) in HdrHistogram's layout for a
/// lowest value of 1 and 3 significant digits: bucket `b` holds the values
/// of `ns >> b` in 1,024..2,048 (or all below 2,048 for `b` = 0), each
/// counter `2^b` ns wide. The test `buckets_match_the_histogram` checks it
/// against the histogram's own equivalence ranges.
#[inline(always)]
fn bucket_of(ns: u64) -> usize {
    let b = (64 - SUB_BITS) - (ns | ((1 << SUB_BITS) - 1)).leading_zeros();
    ((b as usize) << (SUB_BITS - 1)) + (ns >> b) as usize
}

/// The lowest latency (ns) counted by counter `i` of [`bucket_of`].
fn lowest_of(i: usize) -> u64 {
    let b = ((i >> (SUB_BITS - 1)) as u32).saturating_sub(1);
    ((i - ((b as usize) << (SUB_BITS - 1))) as u64) << b
}

impl Latencies {
    fn new() -> Latencies {
        Latencies {
            hist: Histogram::new_with_bounds(LOWEST_NS, HIGHEST_NS, DIGITS)
                .expect("static histogram bounds are valid"),
            counts: Vec::new(),
            touched: (usize::MAX, 0),
            pending: [0; PENDING],
            n: 0,
        }
    }

    /// Count the pending latencies.
    #[inline(never)]
    fn settle(&mut self) {
        // Nothing pending (a report reading a direction with no I/O): no
        // counters to make.
        if self.n == 0 {
            return;
        }
        if self.counts.is_empty() {
            self.counts = vec![0; self.hist.distinct_values()];
        }
        let (mut lo, mut hi) = self.touched;
        for &v in &self.pending[..self.n] {
            let i = bucket_of(v);
            match self.counts.get_mut(i) {
                Some(c) => {
                    *c += 1;
                    lo = lo.min(i);
                    hi = hi.max(i + 1);
                }
                // Past the histogram's counters (over an hour): it clamps.
                None => self.hist.saturating_record(v),
            }
        }
        self.touched = (lo, hi);
        self.n = 0;
    }

    /// The histogram with every latency recorded so far.
    fn sync(&mut self) -> &Histogram<u64> {
        self.settle();
        let (lo, hi) = std::mem::replace(&mut self.touched, (usize::MAX, 0));
        for i in lo..hi {
            let c = std::mem::take(&mut self.counts[i]);
            if c > 0 {
                self.hist.saturating_record_n(lowest_of(i), c);
            }
        }
        &self.hist
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
            lat: RefCell::new(Latencies::new()),
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
        self.lat.borrow_mut().sync();
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

    /// [`bucket_of`] is the histogram's own layout: a latency and the
    /// lowest of its counter are equivalent in the histogram, and the
    /// counters cover exactly its range, so counting by it and adding the
    /// counts gives the histogram a record of each latency gives.
    #[test]
    fn buckets_match_the_histogram() {
        let h = Latencies::new().hist;
        // The counters run to the end of the highest value's bucket; the
        // histogram records values up to there as they are and clamps
        // those past it, as `settle` does.
        let n = h.distinct_values();
        assert!(bucket_of(HIGHEST_NS) < n);
        assert_eq!(bucket_of(lowest_of(n - 1)), n - 1);
        assert_eq!(bucket_of(h.next_non_equivalent(lowest_of(n - 1))), n);
        let mut x: u64 = 99;
        let check = |v: u64| {
            let i = bucket_of(v);
            let lo = lowest_of(i);
            assert!(lo <= v, "{v}: counter {i} starts at {lo}");
            assert_eq!(h.lowest_equivalent(v), lo, "{v}: counter {i}");
            if i + 1 < h.distinct_values() {
                assert_eq!(h.next_non_equivalent(v), lowest_of(i + 1), "{v}");
            }
        };
        for v in 1..100_000 {
            check(v);
        }
        for s in 0..42 {
            for d in [0, 1, 2, 3] {
                check((1u64 << s).saturating_sub(d).max(1));
                check((1u64 << s) + d);
            }
        }
        for _ in 0..100_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            check(1 + (x >> 22) % HIGHEST_NS);
        }
    }

    /// Latencies counted in batches give the histogram, percentiles and
    /// extremes that recording each in the histogram gives, over an hour
    /// (clamped) included, and read between batches.
    #[test]
    fn batched_counts_equal_direct_records() {
        let mut s = DirStats::default();
        let mut h =
            Histogram::<u64>::new_with_bounds(LOWEST_NS, HIGHEST_NS, DIGITS).expect("bounds");
        let mut x: u64 = 7;
        for i in 0..5_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let ns = match i % 7 {
                0 => 1 + (x >> 40) % 3_000,
                1 => HIGHEST_NS + (x >> 30),
                _ => 1 + (x >> 20) % 50_000_000,
            };
            s.record(Time::ns(ns), 4096);
            h.saturating_record(ns);
            if i % 1_111 == 0 {
                assert_eq!(s.pct_ns(50.0), h.value_at_quantile(0.5));
            }
        }
        let direct: Vec<(u64, u64)> = h
            .iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect();
        assert_eq!(s.histogram(), direct);
        for p in [0.0, 1.0, 50.0, 99.0, 99.99, 100.0] {
            assert_eq!(s.pct_ns(p), h.value_at_quantile(p / 100.0), "p{p}");
        }
        let l = s.hist();
        assert_eq!((l.min(), l.max(), l.len()), (h.min(), h.max(), h.len()));
        assert_eq!(l.mean(), h.mean());
    }
}
