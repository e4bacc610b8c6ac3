//! Trace statistics ([`stats`], [`TraceStats`]) in bounded memory.

use super::reader::Item;
use super::{TraceError, TraceFilter, TraceFormat, TraceReader, TraceRecord};
use crate::units::Time;
use crate::workload::Op;
use hdrhistogram::Histogram;

/// Block size used by the footprint count.
const FOOTPRINT_BLOCK: u64 = 4096;
/// Address range (bytes) up to which the footprint is counted exactly: 1 TiB,
/// that is a bitmap of at most 2^28 bits = 32 MiB.
pub const FOOTPRINT_EXACT_LIMIT_BYTES: u64 = 1 << 40;

/// One power-of-two bucket of request sizes: `min_bytes..=max_bytes`
/// (`max_bytes = 2 * min_bytes - 1`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SizeBucket {
    /// Smallest size in the bucket (a power of two).
    pub min_bytes: u64,
    /// Largest size in the bucket.
    pub max_bytes: u64,
    /// Requests in the bucket.
    pub count: u64,
}

/// Inter-arrival times between consecutive kept requests, in nanoseconds
/// (HDR histogram, 3 significant digits).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct InterArrival {
    /// Number of intervals (requests - 1).
    pub samples: u64,
    /// Mean interval.
    pub mean_ns: f64,
    /// Median.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Largest interval.
    pub max_ns: u64,
}

/// Summary of a trace (after a [`TraceFilter`]), computed in bounded memory.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TraceStats {
    /// Format of the trace.
    pub format: TraceFormat,
    /// Requests: reads, writes, trims and flushes.
    pub records: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Trims (discards, fio `trim`).
    pub trims: u64,
    /// Flushes (fio `sync`/`datasync`, blkparse flush requests).
    pub flushes: u64,
    /// Operations counted but not replayed: SCSI pass-through requests and
    /// discards without a sector range (blkparse).
    pub other: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Bytes trimmed (the sum of the trims' lengths).
    pub trim_bytes: u64,
    /// Read and write sizes in power-of-two buckets, smallest first; empty
    /// buckets are left out (trims and flushes are not counted).
    pub size_histogram: Vec<SizeBucket>,
    /// Bytes of distinct 4 KiB blocks touched by reads and writes.
    pub footprint_bytes: u64,
    /// Whether `footprint_bytes` is exact. It is while every touched block
    /// lies below [`FOOTPRINT_EXACT_LIMIT_BYTES`] (1 TiB; a bitmap of at
    /// most 32 MiB, grown as offsets are seen); above that it is a
    /// HyperLogLog estimate (2^16 registers, standard error about 0.4%).
    pub footprint_exact: bool,
    /// Largest request end (`offset + len`) of the reads, writes and trims
    /// seen: the trace's address space.
    pub max_end_bytes: u64,
    /// Time of the first kept request (since the first record of the file).
    pub first: Time,
    /// Time from the first to the last kept request.
    pub duration: Time,
    /// Inter-arrival times (between kept requests of any kind).
    pub interarrival: InterArrival,
}

impl TraceStats {
    /// Fraction of requests that are reads (0 when there are none).
    pub fn read_fraction(&self) -> f64 {
        if self.records == 0 {
            0.0
        } else {
            self.reads as f64 / self.records as f64
        }
    }

    /// A human-readable multi-line summary.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let share = |n: u64, of: u64| {
            if of == 0 {
                0.0
            } else {
                n as f64 * 100.0 / of as f64
            }
        };
        let pct = |n: u64| share(n, self.records);
        let _ = writeln!(s, "format         {}", self.format.description());
        let _ = write!(
            s,
            "requests       {} (reads {} = {:.1}%, writes {} = {:.1}%",
            self.records,
            self.reads,
            pct(self.reads),
            self.writes,
            pct(self.writes)
        );
        if self.trims > 0 {
            let _ = write!(s, ", trims {} = {:.1}%", self.trims, pct(self.trims));
        }
        if self.flushes > 0 {
            let _ = write!(s, ", flushes {} = {:.1}%", self.flushes, pct(self.flushes));
        }
        let _ = writeln!(s, ")");
        if self.other > 0 {
            let _ = writeln!(
                s,
                "other ops      {} (SCSI pass-through, discards without a range; counted, not simulated)",
                self.other
            );
        }
        let _ = write!(
            s,
            "bytes          read {}, written {}",
            human_bytes(self.read_bytes),
            human_bytes(self.write_bytes)
        );
        if self.trims > 0 {
            let _ = write!(s, ", trimmed {}", human_bytes(self.trim_bytes));
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "duration       {:.6} s (first request at {:.6} s)",
            self.duration.as_secs_f64(),
            self.first.as_secs_f64()
        );
        let _ = writeln!(
            s,
            "footprint      {} of distinct 4 KiB blocks ({})",
            human_bytes(self.footprint_bytes),
            if self.footprint_exact {
                "exact"
            } else {
                "HyperLogLog estimate, ~0.4% standard error"
            }
        );
        let _ = writeln!(s, "address space  {}", human_bytes(self.max_end_bytes));
        let ia = &self.interarrival;
        if ia.samples > 0 {
            let _ = writeln!(
                s,
                "inter-arrival  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  mean {} ({} intervals)",
                human_ns(ia.p50_ns as f64),
                human_ns(ia.p90_ns as f64),
                human_ns(ia.p99_ns as f64),
                human_ns(ia.p999_ns as f64),
                human_ns(ia.max_ns as f64),
                human_ns(ia.mean_ns),
                ia.samples
            );
        }
        if !self.size_histogram.is_empty() {
            let data = self.reads + self.writes;
            let _ = writeln!(s, "request sizes (reads and writes)");
            for b in &self.size_histogram {
                let _ = writeln!(
                    s,
                    "  {:>10} .. {:<10} {:>12}  {:5.1}%",
                    human_bytes(b.min_bytes),
                    human_bytes(b.max_bytes + 1),
                    b.count,
                    share(b.count, data)
                );
            }
        }
        s
    }
}

fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

fn human_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3}s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3}ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.3}us", ns / 1e3)
    } else {
        format!("{ns:.0}ns")
    }
}

/// 64-bit mixer (splitmix64 finaliser) for the HyperLogLog.
fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// HyperLogLog distinct counter with `2^P` one-byte registers and Ertl's
/// improved raw estimator (no bias tables needed).
struct Hll {
    regs: Vec<u8>,
}

impl Hll {
    const P: u32 = 16;
    const Q: u32 = 64 - Self::P;

    fn new() -> Hll {
        Hll {
            regs: vec![0; 1 << Self::P],
        }
    }

    fn insert(&mut self, x: u64) {
        let h = mix64(x);
        let idx = (h >> Self::Q) as usize;
        let w = h << Self::P;
        let rank = if w == 0 {
            Self::Q + 1
        } else {
            w.leading_zeros() + 1
        } as u8;
        if let Some(r) = self.regs.get_mut(idx) {
            if *r < rank {
                *r = rank;
            }
        }
    }

    fn estimate(&self) -> f64 {
        let m = self.regs.len() as f64;
        let q = Self::Q as usize;
        let mut c = vec![0u64; q + 2];
        for &r in &self.regs {
            c[(r as usize).min(q + 1)] += 1;
        }
        let mut z = m * hll_tau(1.0 - c[q + 1] as f64 / m);
        for k in (1..=q).rev() {
            z = 0.5 * (z + c[k] as f64);
        }
        z += m * hll_sigma(c[0] as f64 / m);
        if !z.is_finite() || z <= 0.0 {
            return 0.0;
        }
        let alpha_inf = 1.0 / (2.0 * std::f64::consts::LN_2);
        alpha_inf * m * m / z
    }
}

fn hll_sigma(mut x: f64) -> f64 {
    if x >= 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let old = z;
        z += x * y;
        y += y;
        if z == old {
            return z;
        }
    }
}

fn hll_tau(mut x: f64) -> f64 {
    if x <= 0.0 || x >= 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let old = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if z == old {
            return z / 3.0;
        }
    }
}

/// Distinct 4 KiB blocks touched: an exact, growable bitmap while every
/// block lies below `limit_blocks`, then a HyperLogLog.
struct Footprint {
    bits: Vec<u64>,
    limit_blocks: u64,
    hll: Option<Hll>,
}

impl Footprint {
    fn new(limit_bytes: u64) -> Footprint {
        Footprint {
            bits: Vec::new(),
            limit_blocks: limit_bytes / FOOTPRINT_BLOCK,
            hll: None,
        }
    }

    fn add(&mut self, offset: u64, len: u64) {
        if len == 0 {
            return;
        }
        let first = offset / FOOTPRINT_BLOCK;
        let last = offset.saturating_add(len - 1) / FOOTPRINT_BLOCK;
        if self.hll.is_none() && last >= self.limit_blocks {
            self.switch_to_hll();
        }
        match &mut self.hll {
            Some(h) => {
                for b in first..=last {
                    h.insert(b);
                }
            }
            None => self.set_range(first, last),
        }
    }

    fn set_range(&mut self, first: u64, last: u64) {
        let need = (last / 64 + 1) as usize;
        if self.bits.len() < need {
            let limit_words = self.limit_blocks.div_ceil(64) as usize;
            let new_len = need.max(self.bits.len() * 2).min(limit_words.max(need));
            self.bits.resize(new_len, 0);
        }
        let (fw, lw) = ((first / 64) as usize, (last / 64) as usize);
        for w in fw..=lw {
            let lo = if w == fw { first % 64 } else { 0 };
            let hi = if w == lw { last % 64 } else { 63 };
            let mask = (u64::MAX >> (63 - (hi - lo))) << lo;
            if let Some(word) = self.bits.get_mut(w) {
                *word |= mask;
            }
        }
    }

    fn switch_to_hll(&mut self) {
        let mut h = Hll::new();
        for (i, &w) in self.bits.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                let b = w.trailing_zeros() as u64;
                h.insert(i as u64 * 64 + b);
                w &= w - 1;
            }
        }
        self.bits = Vec::new();
        self.hll = Some(h);
    }

    /// (distinct blocks, exact?)
    fn count(&self) -> (u64, bool) {
        match &self.hll {
            Some(h) => (h.estimate().round() as u64, false),
            None => (
                self.bits.iter().map(|w| u64::from(w.count_ones())).sum(),
                true,
            ),
        }
    }
}

/// Running totals for [`stats`].
struct StatsAcc {
    reads: u64,
    writes: u64,
    trims: u64,
    flushes: u64,
    other: u64,
    read_bytes: u64,
    write_bytes: u64,
    trim_bytes: u64,
    sizes: [u64; 64],
    footprint: Footprint,
    max_end: u64,
    first: Option<Time>,
    last: Time,
    ia: Option<Histogram<u64>>,
    ia_sum_ns: u128,
    ia_n: u64,
}

impl StatsAcc {
    fn new(footprint_limit_bytes: u64) -> StatsAcc {
        StatsAcc {
            reads: 0,
            writes: 0,
            trims: 0,
            flushes: 0,
            other: 0,
            read_bytes: 0,
            write_bytes: 0,
            trim_bytes: 0,
            sizes: [0; 64],
            footprint: Footprint::new(footprint_limit_bytes),
            max_end: 0,
            first: None,
            last: Time::ZERO,
            ia: Histogram::new(3).ok(),
            ia_sum_ns: 0,
            ia_n: 0,
        }
    }

    fn add(&mut self, r: &TraceRecord) {
        let data = match r.op {
            Op::Read => {
                self.reads += 1;
                self.read_bytes = self.read_bytes.saturating_add(r.len);
                true
            }
            Op::Write => {
                self.writes += 1;
                self.write_bytes = self.write_bytes.saturating_add(r.len);
                true
            }
            Op::Trim => {
                self.trims += 1;
                self.trim_bytes = self.trim_bytes.saturating_add(r.len);
                false
            }
            Op::Flush => {
                self.flushes += 1;
                false
            }
        };
        if data {
            if r.len > 0 {
                self.sizes[63 - r.len.leading_zeros() as usize] += 1;
            }
            self.footprint.add(r.offset, r.len);
        }
        if r.op != Op::Flush {
            self.max_end = self.max_end.max(r.offset.saturating_add(r.len));
        }
        if self.first.is_none() {
            self.first = Some(r.time);
        } else {
            let d = r.time.saturating_sub(self.last).as_ns();
            if let Some(h) = &mut self.ia {
                // `record` grows the histogram; clamp only if it cannot.
                if h.record(d).is_err() {
                    h.saturating_record(d);
                }
            }
            self.ia_sum_ns += u128::from(d);
            self.ia_n += 1;
        }
        self.last = r.time;
    }

    fn finish(self, format: TraceFormat) -> TraceStats {
        let (blocks, exact) = self.footprint.count();
        let size_histogram = self
            .sizes
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(k, &c)| SizeBucket {
                min_bytes: 1u64 << k,
                max_bytes: (1u64 << k)
                    .saturating_mul(2)
                    .saturating_sub(1)
                    .max(1u64 << k),
                count: c,
            })
            .collect();
        let mut interarrival = InterArrival {
            samples: self.ia_n,
            ..InterArrival::default()
        };
        if self.ia_n > 0 {
            interarrival.mean_ns = self.ia_sum_ns as f64 / self.ia_n as f64;
            if let Some(h) = &self.ia {
                interarrival.p50_ns = h.value_at_quantile(0.5);
                interarrival.p90_ns = h.value_at_quantile(0.9);
                interarrival.p99_ns = h.value_at_quantile(0.99);
                interarrival.p999_ns = h.value_at_quantile(0.999);
                interarrival.max_ns = h.max();
            }
        }
        let first = self.first.unwrap_or(Time::ZERO);
        TraceStats {
            format,
            records: self.reads + self.writes + self.trims + self.flushes,
            reads: self.reads,
            writes: self.writes,
            trims: self.trims,
            flushes: self.flushes,
            other: self.other,
            read_bytes: self.read_bytes,
            write_bytes: self.write_bytes,
            trim_bytes: self.trim_bytes,
            size_histogram,
            footprint_bytes: blocks.saturating_mul(FOOTPRINT_BLOCK),
            footprint_exact: exact,
            max_end_bytes: self.max_end,
            first,
            duration: self.last.saturating_sub(first),
            interarrival,
        }
    }
}

/// Summarise a trace: request mix (reads, writes, trims, flushes), bytes,
/// size histogram, footprint, inter-arrival percentiles and duration of the
/// records `filter` keeps (operations with nothing to replay that it keeps
/// are counted in [`TraceStats::other`]).
///
/// Reads the whole trace (every line is validated, also outside the
/// window) in bounded memory: at most 32 MiB of footprint bitmap (see
/// [`TraceStats::footprint_exact`]), 64 KiB of HyperLogLog registers and a
/// small HDR histogram. Fails with the reader's first error.
pub fn stats(reader: TraceReader, filter: &TraceFilter) -> Result<TraceStats, TraceError> {
    stats_with_limit(reader, filter, FOOTPRINT_EXACT_LIMIT_BYTES)
}

fn stats_with_limit(
    mut reader: TraceReader,
    filter: &TraceFilter,
    footprint_limit_bytes: u64,
) -> Result<TraceStats, TraceError> {
    let mut acc = StatsAcc::new(footprint_limit_bytes);
    while let Some(item) = reader.next_item() {
        match item? {
            Item::Record(r) => {
                if filter.keep(&r) {
                    acc.add(&r);
                }
            }
            Item::Other { time, device } => {
                if filter.keep_at(time, &device) {
                    acc.other += 1;
                }
            }
        }
    }
    Ok(acc.finish(reader.format()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::trace::testutil::{reader, Rng, BLKPARSE, IOLOG, MSR};

    #[test]
    fn stats_on_a_sample() {
        let st = stats(reader(MSR, TraceFormat::Msr), &TraceFilter::default()).unwrap();
        assert_eq!(st.format, TraceFormat::Msr);
        assert_eq!((st.records, st.reads, st.writes, st.other), (4, 2, 2, 0));
        assert_eq!((st.read_bytes, st.write_bytes), (4096 + 65536, 4096 + 8192));
        assert!((st.read_fraction() - 0.5).abs() < 1e-12);
        let h: Vec<(u64, u64, u64)> = st
            .size_histogram
            .iter()
            .map(|b| (b.min_bytes, b.max_bytes, b.count))
            .collect();
        assert_eq!(
            h,
            vec![(4096, 8191, 2), (8192, 16383, 1), (65536, 131071, 1)]
        );
        // 3154059264/4096 = 770034; the 8 KiB write at 3154063360 covers
        // 770035..=770036, so 1 + 1 + 2 + 16 distinct blocks.
        assert_eq!(st.footprint_bytes, 20 * 4096);
        assert!(st.footprint_exact);
        assert_eq!(st.max_end_bytes, 3154063360 + 8192);
        assert_eq!(st.duration, Time::ns(3_332_069_400));
        let ia = &st.interarrival;
        assert_eq!(ia.samples, 3);
        // Intervals 1.3320526 s, 1.000009 s, 1.0000078 s.
        assert!(
            ia.p50_ns.abs_diff(1_000_009_000) < 1_000_009_000 / 500,
            "{ia:?}"
        );
        assert!(
            ia.max_ns.abs_diff(1_332_052_600) < 1_332_052_600 / 500,
            "{ia:?}"
        );
        assert!((ia.mean_ns - 3_332_069_400.0 / 3.0).abs() < 1.0);
        let text = st.to_text();
        assert!(text.contains("requests       4 (reads 2 = 50.0%"), "{text}");
        assert!(text.contains("footprint      80 KiB"), "{text}");
        assert!(text.contains("inter-arrival  p50 1.000s"), "{text}");
        // Blkparse: the flush and the discard are requests, the
        // pass-through is "other".
        let st = stats(
            reader(BLKPARSE, TraceFormat::Blkparse),
            &TraceFilter::default(),
        )
        .unwrap();
        assert_eq!((st.records, st.trims, st.flushes, st.other), (5, 1, 1, 1));
        // iolog: trims and flushes in the counts, the text and the JSON.
        let st = stats(
            reader(IOLOG, TraceFormat::FioIolog),
            &TraceFilter::default(),
        )
        .unwrap();
        assert_eq!(
            (st.records, st.reads, st.writes, st.trims, st.flushes, st.other),
            (5, 1, 2, 1, 1, 0)
        );
        assert_eq!((st.trim_bytes, st.read_bytes), (4096, 4096));
        // Trims extend the address space but not the footprint or the
        // read/write size histogram; all five requests are timed.
        assert_eq!(st.max_end_bytes, 4096 + 131072);
        assert_eq!(st.footprint_bytes, 33 * 4096);
        assert_eq!(st.size_histogram.iter().map(|b| b.count).sum::<u64>(), 3);
        assert_eq!(st.interarrival.samples, 4);
        let text = st.to_text();
        assert!(
            text.contains(
                "requests       5 (reads 1 = 20.0%, writes 2 = 40.0%, trims 1 = 20.0%, flushes 1 = 20.0%)"
            ),
            "{text}"
        );
        assert!(
            text.contains("bytes          read 4 KiB, written 132 KiB, trimmed 4 KiB"),
            "{text}"
        );
        assert!(!text.contains("other ops"), "{text}");
        let json = serde_json::to_value(&st).unwrap();
        assert_eq!(json["trims"], 1);
        assert_eq!(json["flushes"], 1);
        assert_eq!(json["trim_bytes"], 4096);
        let st = stats(
            reader(BLKPARSE, TraceFormat::Blkparse),
            &TraceFilter {
                device: Some("8,16".into()),
                ..TraceFilter::default()
            },
        )
        .unwrap();
        assert_eq!((st.records, st.other, st.interarrival.samples), (1, 0, 0));
    }

    #[test]
    fn footprint_bitmap_and_hll_fallback() {
        // Exact below the limit.
        let mut fp = Footprint::new(1 << 30);
        fp.add(0, 4096);
        fp.add(4095, 2); // blocks 0 and 1
        fp.add(1 << 20, 1 << 20); // 256 blocks
        assert_eq!(fp.count(), (258, true));
        // Crossing the limit switches to an estimate that keeps what was seen.
        fp.add(1 << 31, 4096);
        let (n, exact) = fp.count();
        assert!(!exact);
        assert!(n.abs_diff(259) <= 3, "{n}");
        // Estimate accuracy over a range of cardinalities.
        for &n in &[10u64, 1_000, 50_000, 200_000, 1_000_000] {
            let mut h = Hll::new();
            let mut x = Rng(n);
            for _ in 0..n {
                h.insert(x.next() >> 12);
            }
            let e = h.estimate();
            let err = (e - n as f64).abs() / n as f64;
            assert!(err < 0.015, "n={n} estimate={e} err={err}");
        }
        assert_eq!(Hll::new().estimate(), 0.0);
        // stats() with a small exact limit reports an estimate.
        let text = "0,R,0,4096,1\n0,R,1099511627776,4096,2\n0,W,8192,8192,3\n";
        let st = stats_with_limit(
            reader(text, TraceFormat::Alibaba),
            &TraceFilter::default(),
            1 << 20,
        )
        .unwrap();
        assert!(!st.footprint_exact);
        assert_eq!(st.footprint_bytes, 4 * 4096);
        let st = stats(reader(text, TraceFormat::Alibaba), &TraceFilter::default()).unwrap();
        assert!(
            !st.footprint_exact,
            "block at 1 TiB is beyond the exact bound"
        );
        assert_eq!(st.footprint_bytes, 4 * 4096);
    }
}
