//! Per-job I/O generators: offsets, sizes, directions and stop conditions.
//!
//! Random offsets without `norandommap` visit every block of the region
//! exactly once per pass, like fio's random map; ssdlab uses a keyed
//! Feistel permutation with cycle walking (O(1) memory, any region size)
//! instead of fio's bitmap.
//!
//! Random offsets are drawn over *slots*: multiples of the direction's
//! `blockalign` (default: its smallest block size) at which its smallest
//! block still fits in the region. A block size that does not fit at the
//! drawn slot is replaced by the largest one that does (fio likewise only
//! issues sizes that fit). With variable block sizes the random map hands
//! out each slot once per pass, so larger I/Os may overlap others.
//!
//! The random map applies only to the uniform distribution without
//! `blockalign`: as fio documents, a non-uniform `random_distribution`
//! implies `norandommap` (hot blocks must be hit repeatedly), and
//! `blockalign` turns the map off.
//!
//! Non-uniform distributions (zipf, pareto, normal) draw a *rank*, map it
//! to a slot with a fixed keyed [`Permutation`] (so the hot blocks are
//! scattered over the region, as fio hashes them, not bunched at its
//! start), then rotate the result by `center` × slots. Zipf ranks use
//! rejection-inversion sampling (Hörmann and Derflinger, 1996), exact for
//! any region size in O(1) memory; pareto ranks use the inverse of the
//! self-similar ("h/1-h") distribution's CDF; normal ranks use Box-Muller
//! around the middle rank, redrawn when they fall outside the region.

use super::{
    BlockSize, Distribution, JobSpec, LocalitySpec, Op, Sequencer, TrimMode, WorkloadError,
};
use crate::units::Time;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// One generated I/O, in mapping units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Io {
    /// Read, write, trim or flush (a flush has `lpn` = `nlpn` = 0).
    pub op: Op,
    /// First logical page.
    pub lpn: u32,
    /// Logical pages.
    pub nlpn: u32,
}

impl Io {
    /// An NVMe Flush.
    pub const FLUSH: Io = Io {
        op: Op::Flush,
        lpn: 0,
        nlpn: 0,
    };

    /// A write?
    #[inline]
    pub fn is_write(&self) -> bool {
        self.op == Op::Write
    }
}

/// A pseudo-random permutation of `[0, n)`.
#[derive(Debug, Clone)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    keys: [u64; 4],
}

impl Permutation {
    /// Permutation of `[0, n)` keyed by `key`.
    pub fn new(n: u64, key: u64) -> Permutation {
        let bits = 64 - (n.max(2) - 1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        let mut r = Xoshiro256PlusPlus::seed_from_u64(key);
        Permutation {
            n,
            half_bits,
            keys: [r.gen(), r.gen(), r.gen(), r.gen()],
        }
    }

    #[inline]
    fn round(x: u64, k: u64) -> u64 {
        let mut z = x ^ k;
        z = (z ^ (z >> 31)).wrapping_mul(0x7fb5_d329_728e_a185);
        z = (z ^ (z >> 27)).wrapping_mul(0x81da_def4_bc2d_d44d);
        z ^ (z >> 33)
    }

    #[inline]
    fn encrypt(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for k in self.keys {
            let nl = r;
            r = l ^ (Self::round(r, k) & mask);
            l = nl;
        }
        (l << self.half_bits) | r
    }

    /// The `i`-th element (i < n).
    #[inline]
    pub fn get(&self, i: u64) -> u64 {
        let mut x = self.encrypt(i);
        while x >= self.n {
            x = self.encrypt(x);
        }
        x
    }
}

/// Block-size choice of one direction, in mapping units.
#[derive(Debug, Clone)]
enum Sizes {
    Fixed(u64),
    /// `min * k` for k uniform in `1..=count`.
    Range {
        min: u64,
        count: u64,
    },
    /// Sizes with cumulative probabilities (last = 1).
    Split {
        sizes: Vec<u64>,
        cum: Vec<f64>,
    },
}

impl Sizes {
    fn min(&self) -> u64 {
        match self {
            Sizes::Fixed(b) => *b,
            Sizes::Range { min, .. } => *min,
            Sizes::Split { sizes, .. } => sizes.iter().copied().min().unwrap_or(1),
        }
    }

    fn max(&self) -> u64 {
        match self {
            Sizes::Fixed(b) => *b,
            Sizes::Range { min, count } => min * count,
            Sizes::Split { sizes, .. } => sizes.iter().copied().max().unwrap_or(1),
        }
    }

    #[inline]
    fn draw(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        match self {
            Sizes::Fixed(b) => *b,
            Sizes::Range { min, count } => min * rng.gen_range(1..=*count),
            Sizes::Split { sizes, cum } => {
                let u: f64 = rng.gen();
                let i = cum.iter().position(|&c| u < c).unwrap_or(sizes.len() - 1);
                sizes[i]
            }
        }
    }

    /// `s` if it fits in `room` (>= the smallest size), else the largest size that does.
    #[inline]
    fn fit(&self, s: u64, room: u64) -> u64 {
        if s <= room {
            return s;
        }
        match self {
            Sizes::Fixed(b) => *b,
            Sizes::Range { min, .. } => room / min * min,
            Sizes::Split { sizes, .. } => sizes
                .iter()
                .copied()
                .filter(|&b| b <= room)
                .max()
                .unwrap_or(s),
        }
    }
}

/// Zipf ranks by rejection-inversion (Hörmann & Derflinger 1996):
/// P(k) ∝ k^-θ for k in 1..=n, drawn by inverting the integral of the
/// continuous hat x^-θ and accepting with a cheap squeeze test.
#[derive(Debug, Clone)]
struct Zipf {
    n: f64,
    theta: f64,
    h_x1: f64,
    h_n: f64,
    s: f64,
}

impl Zipf {
    fn new(n: u64, theta: f64) -> Zipf {
        let mut z = Zipf {
            n: n as f64,
            theta,
            h_x1: 0.0,
            h_n: 0.0,
            s: 0.0,
        };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(z.n + 0.5);
        z.s = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    /// ln(1+x)/x, accurate near 0.
    fn helper1(x: f64) -> f64 {
        if x.abs() > 1e-8 {
            x.ln_1p() / x
        } else {
            1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
        }
    }

    /// (e^x - 1)/x, accurate near 0.
    fn helper2(x: f64) -> f64 {
        if x.abs() > 1e-8 {
            x.exp_m1() / x
        } else {
            1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
        }
    }

    /// The hat function x^-θ.
    fn h(&self, x: f64) -> f64 {
        (-self.theta * x.ln()).exp()
    }

    /// Its integral from 1: (x^(1-θ) - 1) / (1-θ) (ln x for θ = 1).
    fn big_h(&self, x: f64) -> f64 {
        let lx = x.ln();
        Self::helper2((1.0 - self.theta) * lx) * lx
    }

    fn big_h_inv(&self, u: f64) -> f64 {
        let t = (u * (1.0 - self.theta)).max(-1.0);
        (Self::helper1(t) * u).exp()
    }

    /// A rank in `0..n` (0 = most frequent).
    #[inline]
    fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        loop {
            let u = self.h_n + rng.gen::<f64>() * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.big_h(k + 0.5) - self.h(k) {
                return k as u64 - 1;
            }
        }
    }
}

/// Offset distribution of one direction, over slots.
#[derive(Debug, Clone)]
enum Dist {
    Uniform,
    /// Ranked distributions: rank -> `perm` -> rotate by `rot`.
    Ranked {
        kind: Ranked,
        perm: Permutation,
        rot: u64,
    },
    /// Zones: cumulative access probability and slot range `[lo, hi)`.
    Zoned {
        cum: Vec<f64>,
        ranges: Vec<(u64, u64)>,
    },
}

#[derive(Debug, Clone)]
enum Ranked {
    Zipf(Zipf),
    /// rank = n * u^pow.
    Pareto {
        pow: f64,
    },
    /// Standard deviation in slots.
    Normal {
        sigma: f64,
    },
}

/// One pass-by-pass random map (a permutation renewed each pass).
#[derive(Debug, Clone)]
struct RandMap {
    n: u64,
    key: u64,
    perm: Permutation,
    idx: u64,
}

impl RandMap {
    fn new(n: u64, key: u64) -> RandMap {
        RandMap {
            n,
            key,
            perm: Permutation::new(n, key),
            idx: 0,
        }
    }

    #[inline]
    fn next(&mut self) -> u64 {
        if self.idx == self.n {
            self.idx = 0;
            self.key = self.key.wrapping_add(1);
            self.perm = Permutation::new(self.n, self.key);
        }
        let b = self.perm.get(self.idx);
        self.idx += 1;
        b
    }
}

/// Per-direction generator state (units are mapping units, offsets relative to the region).
#[derive(Debug, Clone)]
struct Dir {
    sizes: Sizes,
    /// Random-offset alignment.
    ba: u64,
    /// Random-offset slots: `slot * ba` with the smallest size fitting.
    slots: u64,
    dist: Dist,
    /// Index into `JobGen::maps`.
    map: Option<usize>,
    /// Percentage of random I/Os (random patterns).
    prand: u32,
    seq_next: u64,
    last_off: u64,
    last_end: u64,
    /// I/Os left to place relative to the last random offset (`rw=randread:N`).
    repeat_left: u32,
}

/// Generator state for one job clone.
pub struct JobGen {
    random: bool,
    read_pct: u32,
    /// Region start and length (LPN).
    start: u64,
    len: u64,
    unit: u64,
    skip: u64,
    offset_repeat: u32,
    sequencer: Sequencer,
    /// Per-direction state (boxed to keep `JobGen` small).
    dirs: Box<[Dir; 2]>,
    maps: Vec<RandMap>,
    rng: Xoshiro256PlusPlus,
    ios_limit: Option<u64>,
    bytes_limit: Option<u64>,
    issued: u64,
    issued_bytes: u64,
    deadline: Option<Time>,
    /// End of ramp (I/Os submitted before it are not measured).
    pub ramp_end: Time,
    /// Seed 001 locality model, if the job asks for one.
    locality: Option<Box<Locality>>,
    /// Trim pattern: writes become trims (`Only`) or trim-then-write pairs.
    trim: TrimMode,
    /// The write of a trim-then-write pair, issued next.
    pending: Option<Io>,
    /// Flush after every this many writes (0 = never).
    fsync: u32,
    writes_since_flush: u32,
    /// A final flush is still to be issued (`end_fsync`).
    end_flush: bool,
}

/// Seed 001's locality patterns over `slots` aligned block positions.
///
/// A new reference goes to the hot part of the space with probability
/// `hot_access` (the hot part, `hot_space` of the slots, is scattered over
/// the range by a seeded bijection), otherwise to the cold part; with the LRU
/// component, an access re-references a recently used block with
/// probability `reuse`, at a stack distance drawn from a geometric
/// distribution of mean `mean` (distance 0 = the most recent block). The
/// stack keeps the last `16 × mean` (at least 4,096, at most 1 Mi) distinct
/// blocks; a drawn distance beyond it becomes a new reference.
#[derive(Debug)]
pub struct Locality {
    spec: LocalitySpec,
    slots: u64,
    scatter: Permutation,
    stack: std::collections::VecDeque<u64>,
    cap: usize,
    /// ln(1 - p) for the geometric stack distance (p = 1 / (mean + 1)).
    ln_q: f64,
}

impl Locality {
    /// Model over `slots` positions.
    pub fn new(spec: LocalitySpec, slots: u64, seed: u64) -> Locality {
        let mean = spec.lru().map_or(1.0, |l| l.1);
        let cap = ((16.0 * mean) as usize).clamp(4096, 1 << 20);
        Locality {
            spec,
            slots,
            scatter: Permutation::new(slots.max(1), seed ^ 0x10ca_1e77),
            stack: std::collections::VecDeque::with_capacity(cap.min(1 << 16)),
            cap,
            ln_q: (1.0 - 1.0 / (mean + 1.0)).ln(),
        }
    }

    fn fresh(&mut self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        let n = self.slots.max(1);
        let rank = match self.spec.hot() {
            Some((space, access)) => {
                let hot = ((space * n as f64) as u64).clamp(1, n);
                if hot == n || rng.gen::<f64>() < access {
                    rng.gen_range(0..hot)
                } else {
                    rng.gen_range(hot..n)
                }
            }
            None => rng.gen_range(0..n),
        };
        self.scatter.get(rank)
    }

    /// The next slot.
    pub fn next_slot(&mut self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        if let Some((reuse, _)) = self.spec.lru() {
            if !self.stack.is_empty() && rng.gen::<f64>() < reuse {
                let u: f64 = rng.gen::<f64>().max(f64::MIN_POSITIVE);
                let d = (u.ln() / self.ln_q).floor() as usize;
                if d < self.stack.len() {
                    let idx = self.stack.len() - 1 - d;
                    if let Some(slot) = self.stack.remove(idx) {
                        self.stack.push_back(slot);
                        return slot;
                    }
                }
            }
            let slot = self.fresh(rng);
            // Keep the stack's entries distinct (the most recent copy wins).
            if let Some(pos) = self.stack.iter().rev().take(64).position(|&x| x == slot) {
                let idx = self.stack.len() - 1 - pos;
                self.stack.remove(idx);
            }
            self.stack.push_back(slot);
            if self.stack.len() > self.cap {
                self.stack.pop_front();
            }
            return slot;
        }
        self.fresh(rng)
    }
}

/// A 64-bit mix (splitmix64 finaliser).
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl JobGen {
    /// Build the generator for clone `clone` of `job` on a device of
    /// `capacity_lpns` mapping units of `unit` bytes.
    pub fn new(
        job: &JobSpec,
        clone: u32,
        seed: u64,
        capacity_lpns: u64,
        unit: u64,
        file: &str,
    ) -> Result<JobGen, WorkloadError> {
        let err = |opt: &str, msg: String| WorkloadError {
            file: file.to_string(),
            line: 0,
            option: Some(opt.to_string()),
            message: format!("job '{}': {msg}", job.name),
        };
        let sizes: [BlockSize; 2] = match &job.block_sizes {
            Some(s) => s.clone(),
            None => [BlockSize::Fixed(job.bs), BlockSize::Fixed(job.bs)],
        };
        let used = [job.rw.read_pct > 0, job.rw.read_pct < 100];
        let dir_names: [&str; 2] = if job.trim == TrimMode::Only {
            ["read", "trim"]
        } else {
            ["read", "write"]
        };
        let dir_names = &dir_names;
        for d in 0..2 {
            if !used[d] {
                continue;
            }
            let bad = match &sizes[d] {
                BlockSize::Fixed(b) => (!b.is_multiple_of(unit) || *b == 0).then_some(*b),
                BlockSize::Range { min, .. } => {
                    (!min.is_multiple_of(unit) || *min == 0).then_some(*min)
                }
                BlockSize::Split(v) => v
                    .iter()
                    .map(|e| e.0)
                    .find(|b| !b.is_multiple_of(unit) || *b == 0),
            };
            if let Some(b) = bad {
                let why = if job.trim == TrimMode::Only {
                    "trims of part of a mapping unit are not modelled"
                } else {
                    "sub-mapping-unit I/O (read-modify-write) is not modelled yet"
                };
                return Err(err(sizes[d].option(), format!("{} block size {b} B is not a multiple of the drive's mapping unit ({unit} B); {why}", dir_names[d])));
            }
            if let Some(ba) = job.blockalign[d] {
                if ba == 0 || !ba.is_multiple_of(unit) {
                    return Err(err("blockalign", format!("{} alignment {ba} B is not a multiple of the drive's mapping unit ({unit} B)", dir_names[d])));
                }
            }
        }
        if !job.seq_skip.is_multiple_of(unit) {
            return Err(err(
                "rw",
                format!(
                    "the skip of {} B after each I/O is not a multiple of the drive's mapping unit ({unit} B)",
                    job.seq_skip
                ),
            ));
        }
        if !job.offset.is_multiple_of(unit) {
            return Err(err(
                "offset",
                format!(
                    "offset {} B is not aligned to the mapping unit ({unit} B)",
                    job.offset
                ),
            ));
        }
        let cap = capacity_lpns * unit;
        if job.offset >= cap {
            return Err(err(
                "offset",
                format!(
                    "offset {} B is beyond the drive's capacity ({cap} B)",
                    job.offset
                ),
            ));
        }
        let size = job.size.unwrap_or(cap - job.offset);
        if job.offset + size > cap {
            return Err(err(
                "size",
                format!(
                    "offset + size = {} B exceeds the drive's capacity ({cap} B)",
                    job.offset + size
                ),
            ));
        }
        let len = size / unit;
        let io_bytes = if job.time_based {
            None
        } else {
            Some(job.io_size.unwrap_or(size))
        };
        if io_bytes.is_none() && job.number_ios.is_none() && job.runtime.is_none() {
            return Err(err("runtime", "time_based needs runtime".into()));
        }
        let base = match job.randseed {
            Some(s) => s,
            None if job.randrepeat => seed,
            None => mix64(seed ^ 0x7261_6e64_7265_7030),
        };
        let job_seed = base.wrapping_add((clone as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let rng = Xoshiro256PlusPlus::seed_from_u64(job_seed);
        let mut maps: Vec<RandMap> = Vec::new();
        let mut dirs = Vec::with_capacity(2);
        for d in 0..2 {
            let s = if used[d] { &sizes[d] } else { &sizes[1 - d] };
            let su = match s {
                BlockSize::Fixed(b) => Sizes::Fixed(b / unit),
                BlockSize::Range { min, max } => Sizes::Range {
                    min: min / unit,
                    count: max / min,
                },
                BlockSize::Split(v) => {
                    let v: Vec<(u64, f64)> = v.iter().filter(|e| e.1 > 0.0).copied().collect();
                    let total: f64 = v.iter().map(|e| e.1).sum();
                    let mut acc = 0.0;
                    let mut cum: Vec<f64> = v
                        .iter()
                        .map(|e| {
                            acc += e.1 / total;
                            acc
                        })
                        .collect();
                    if let Some(l) = cum.last_mut() {
                        *l = 1.0;
                    }
                    Sizes::Split {
                        sizes: v.iter().map(|e| e.0 / unit).collect(),
                        cum,
                    }
                }
            };
            if su.max() > len {
                return Err(err(
                    "size",
                    format!(
                        "region of {size} B is smaller than one {} block of {} B",
                        dir_names[d],
                        su.max() * unit
                    ),
                ));
            }
            let ba = job.blockalign[d].map_or(su.min(), |b| b / unit);
            let slots = (len - su.min()) / ba + 1;
            let dist_key = job_seed ^ 0xD157_0000_0000;
            let dist_spec = if used[d] {
                job.random_distribution[d].clone()
            } else {
                Distribution::Uniform
            };
            let ranked = |kind: Ranked, center: Option<f64>| Dist::Ranked {
                kind,
                perm: Permutation::new(slots, dist_key),
                rot: (center.unwrap_or(0.0) * slots as f64).round() as u64 % slots,
            };
            let zone_err = |i: usize| {
                err(
                    "random_distribution",
                    format!(
                        "{} zone {} covers no block of the region ({size} B in {slots} blocks of {} B)",
                        dir_names[d],
                        i + 1,
                        ba * unit
                    ),
                )
            };
            let zoned = |zones: Vec<(f64, u64, u64)>| -> Result<Dist, WorkloadError> {
                let mut acc = 0.0;
                let mut cum = Vec::new();
                let mut ranges = Vec::new();
                for (i, (a, lo, hi)) in zones.into_iter().enumerate() {
                    if a <= 0.0 {
                        continue;
                    }
                    if hi <= lo {
                        return Err(zone_err(i));
                    }
                    acc += a / 100.0;
                    cum.push(acc);
                    ranges.push((lo, hi));
                }
                if let Some(l) = cum.last_mut() {
                    *l = 1.0;
                }
                Ok(Dist::Zoned { cum, ranges })
            };
            let dist = match dist_spec {
                Distribution::Uniform => Dist::Uniform,
                Distribution::Zipf { theta, center } => {
                    ranked(Ranked::Zipf(Zipf::new(slots, theta)), center)
                }
                Distribution::Pareto { h, center } => ranked(
                    Ranked::Pareto {
                        pow: h.ln() / (1.0 - h).ln(),
                    },
                    center,
                ),
                Distribution::Normal { dev, center } => ranked(
                    Ranked::Normal {
                        sigma: dev / 100.0 * slots as f64,
                    },
                    center,
                ),
                Distribution::Zoned(z) => {
                    let mut acc = 0.0;
                    let zones = z
                        .iter()
                        .map(|&(a, r)| {
                            let lo = (acc / 100.0 * slots as f64).round() as u64;
                            acc += r;
                            let hi = ((acc / 100.0 * slots as f64).round() as u64).min(slots);
                            (a, lo, hi)
                        })
                        .collect();
                    zoned(zones)?
                }
                Distribution::ZonedAbs(z) => {
                    let total: u64 = z.iter().map(|e| e.1).sum();
                    if total > size {
                        return Err(err(
                            "random_distribution",
                            format!(
                                "{} zones cover {total} B, more than the region ({size} B)",
                                dir_names[d]
                            ),
                        ));
                    }
                    let slot_bytes = ba * unit;
                    let mut acc = 0u64;
                    let zones = z
                        .iter()
                        .map(|&(a, b)| {
                            let lo = acc.div_ceil(slot_bytes).min(slots);
                            acc += b;
                            let hi = acc.div_ceil(slot_bytes).min(slots);
                            (a, lo, hi)
                        })
                        .collect();
                    zoned(zones)?
                }
            };
            let use_map = job.rw.random
                && !job.norandommap
                && job.blockalign.iter().all(Option::is_none)
                && matches!(dist, Dist::Uniform);
            let map = if use_map {
                match maps.iter().position(|m| m.n == slots) {
                    Some(i) => Some(i),
                    None => {
                        maps.push(RandMap::new(slots, job_seed ^ 0xA5A5 ^ ((d as u64) << 40)));
                        Some(maps.len() - 1)
                    }
                }
            } else {
                None
            };
            dirs.push(Dir {
                sizes: su,
                ba,
                slots,
                dist,
                map,
                prand: job.percentage_random[d].min(100),
                seq_next: 0,
                last_off: 0,
                last_end: 0,
                repeat_left: 0,
            });
        }
        let Ok(dirs) = <Box<[Dir; 2]>>::try_from(dirs.into_boxed_slice()) else {
            unreachable!("two directions")
        };
        if let Some(l) = &job.locality {
            if l.pattern.is_none() {
                return Err(err("ssdlab_pattern", "locality parameters were given without ssdlab_pattern (uniform, hotcold, lru, hotcold_lru or sequential)".into()));
            }
            if let Some(o) = l.unused_parameter() {
                return Err(err(o, format!("has no effect with ssdlab_pattern={:?}; remove it or choose a pattern that uses it", l.pattern.unwrap_or(crate::workload::LocalityPattern::Uniform))));
            }
        }
        let seq_pattern = job.locality.is_some_and(|l| l.sequential());
        let locality = job
            .locality
            .filter(|l| l.hot().is_some() || l.lru().is_some())
            .map(|l| {
                let ba = dirs[if job.rw.read_pct > 0 { 0 } else { 1 }].ba.max(1);
                Box::new(Locality::new(l, len / ba, job_seed ^ 0x5eed_0001))
            });
        Ok(JobGen {
            locality,
            random: !seq_pattern
                && (job.rw.random
                    || job
                        .locality
                        .is_some_and(|l| l.hot().is_some() || l.lru().is_some())),
            read_pct: job.rw.read_pct,
            start: job.offset / unit,
            len,
            unit,
            skip: job.seq_skip / unit,
            offset_repeat: job.offset_repeat.max(1),
            sequencer: job.rw_sequencer,
            dirs,
            maps,
            rng,
            // `loops` repeats the job's I/O: each pass has the same limits.
            ios_limit: job
                .number_ios
                .map(|n| n.saturating_mul(job.loops.max(1) as u64)),
            bytes_limit: io_bytes.map(|b| b.saturating_mul(job.loops.max(1) as u64)),
            issued: 0,
            issued_bytes: 0,
            deadline: job.runtime.map(|r| job.ramp_time + r),
            ramp_end: job.ramp_time,
            trim: job.trim,
            pending: None,
            fsync: job.fsync,
            writes_since_flush: 0,
            end_flush: job.end_fsync,
        })
    }

    /// A random slot of direction `d`.
    #[inline]
    fn random_slot(&mut self, d: usize) -> u64 {
        let dir = &self.dirs[d];
        if let Some(m) = dir.map {
            return self.maps[m].next();
        }
        let n = dir.slots;
        match &dir.dist {
            Dist::Uniform => self.rng.gen_range(0..n),
            Dist::Ranked { kind, perm, rot } => {
                let rank = match kind {
                    Ranked::Zipf(z) => z.sample(&mut self.rng),
                    Ranked::Pareto { pow } => {
                        let u: f64 = self.rng.gen();
                        ((n as f64 * u.powf(*pow)) as u64).min(n - 1)
                    }
                    Ranked::Normal { sigma } => {
                        let mid = n as f64 / 2.0;
                        let mut x = mid;
                        for _ in 0..64 {
                            let u1: f64 = 1.0 - self.rng.gen::<f64>();
                            let u2: f64 = self.rng.gen();
                            let z =
                                (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                            x = mid + z * sigma;
                            if (0.0..n as f64).contains(&x) {
                                break;
                            }
                        }
                        (x.max(0.0) as u64).min(n - 1)
                    }
                };
                (perm.get(rank) + rot) % n
            }
            Dist::Zoned { cum, ranges } => {
                let u: f64 = self.rng.gen();
                let i = cum.iter().position(|&c| u < c).unwrap_or(ranges.len() - 1);
                let (lo, hi) = ranges[i];
                self.rng.gen_range(lo..hi)
            }
        }
    }

    /// The job starts at `t` (a `stonewall`/`wait_for` job starts when the
    /// jobs it waits for end): its ramp and runtime count from there.
    pub fn start_at(&mut self, t: Time) {
        self.deadline = self.deadline.map(|d| d + t);
        self.ramp_end += t;
    }

    /// Next I/O at simulated time `now`, or None when the job is done.
    #[inline]
    pub fn next_io(&mut self, now: Time) -> Option<Io> {
        if let Some(io) = self.pending.take() {
            self.count_write(io.op);
            return Some(io);
        }
        if self.fsync > 0 && self.writes_since_flush >= self.fsync {
            self.writes_since_flush = 0;
            return Some(Io::FLUSH);
        }
        if self.exhausted(now) {
            if self.end_flush {
                self.end_flush = false;
                return Some(Io::FLUSH);
            }
            return None;
        }
        let io = self.next_rw();
        match (io.op, self.trim) {
            (Op::Write, TrimMode::Only) => Some(Io { op: Op::Trim, ..io }),
            (Op::Write, TrimMode::TrimWrite) => {
                self.pending = Some(io);
                Some(Io { op: Op::Trim, ..io })
            }
            _ => {
                self.count_write(io.op);
                Some(io)
            }
        }
    }

    /// The job's own I/O is done (limits or deadline reached).
    #[inline]
    fn exhausted(&self, now: Time) -> bool {
        self.ios_limit.is_some_and(|l| self.issued >= l)
            || self.bytes_limit.is_some_and(|b| self.issued_bytes >= b)
            || self.deadline.is_some_and(|d| now >= d)
    }

    /// The next I/O would be the final flush (`end_fsync`): as fio does, the
    /// host first waits for the job's I/Os in flight to complete.
    #[inline]
    pub fn end_flush_next(&self, now: Time) -> bool {
        self.end_flush && self.pending.is_none() && self.exhausted(now)
    }

    #[inline]
    fn count_write(&mut self, op: Op) {
        if op == Op::Write {
            self.writes_since_flush += 1;
        }
    }

    /// Next read or write of the pattern.
    #[inline]
    fn next_rw(&mut self) -> Io {
        self.issued += 1;
        let write = match self.read_pct {
            100 => false,
            0 => true,
            p => self.rng.gen_range(0..100) >= p,
        };
        let d = write as usize;
        let len = self.len;
        let mut s = self.dirs[d].sizes.draw(&mut self.rng);
        // Where a sequential continuation from `pos` goes: wraps to the start at the end.
        let cont = |pos: u64, s: u64| if pos + s <= len { pos } else { 0 };
        let off = if self.random {
            let (repeat_left, last_off, last_end, p) = {
                let dir = &self.dirs[d];
                (dir.repeat_left, dir.last_off, dir.last_end, dir.prand)
            };
            if repeat_left > 0 {
                self.dirs[d].repeat_left -= 1;
                match self.sequencer {
                    Sequencer::Sequential => cont(last_end, s),
                    Sequencer::Identical => {
                        s = self.dirs[d].sizes.fit(s, len - last_off);
                        last_off
                    }
                }
            } else {
                let random = p >= 100 || (p > 0 && self.rng.gen_range(0..100) < p);
                if random {
                    let slot = match self.locality.as_mut() {
                        Some(l) => l.next_slot(&mut self.rng),
                        None => self.random_slot(d),
                    };
                    let off = slot * self.dirs[d].ba;
                    let dir = &mut self.dirs[d];
                    dir.repeat_left = self.offset_repeat - 1;
                    s = dir.sizes.fit(s, len - off);
                    off
                } else {
                    cont(last_end, s)
                }
            }
        } else {
            let dir = &mut self.dirs[d];
            let off = cont(dir.seq_next, s);
            dir.seq_next = off + s + self.skip;
            off
        };
        let dir = &mut self.dirs[d];
        dir.last_off = off;
        dir.last_end = off + s;
        self.issued_bytes += s * self.unit;
        Io {
            op: if write { Op::Write } else { Op::Read },
            lpn: (self.start + off) as u32,
            nlpn: s as u32,
        }
    }

    /// I/Os issued so far.
    pub fn issued(&self) -> u64 {
        self.issued
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::RwPattern;

    #[test]
    fn permutation_visits_each_once() {
        for n in [1u64, 2, 3, 17, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let x = p.get(i) as usize;
                assert!(!seen[x]);
                seen[x] = true;
            }
        }
    }

    #[test]
    fn random_map_covers_region_once_per_pass() {
        let job = JobSpec {
            rw: RwPattern {
                random: true,
                read_pct: 100,
            },
            bs: 8192,
            size: Some(8192 * 100),
            ..JobSpec::default()
        };
        let mut g = JobGen::new(&job, 0, 1, 10_000, 4096, "t").unwrap();
        let mut seen = std::collections::HashSet::new();
        while let Some(io) = g.next_io(Time::ZERO) {
            assert_eq!(io.nlpn, 2);
            assert!(seen.insert(io.lpn));
        }
        assert_eq!(seen.len(), 100);
    }

    #[test]
    fn mix_follows_rwmixread() {
        let job = JobSpec {
            rw: RwPattern {
                random: true,
                read_pct: 70,
            },
            number_ios: Some(100_000),
            ..JobSpec::default()
        };
        let mut g = JobGen::new(&job, 0, 1, 1 << 20, 4096, "t").unwrap();
        let mut reads = 0;
        while let Some(io) = g.next_io(Time::ZERO) {
            reads += (!io.is_write()) as u32;
        }
        assert!((69_000..71_000).contains(&reads), "{reads}");
    }

    #[test]
    fn bad_alignment_is_an_error() {
        let job = JobSpec {
            bs: 512,
            ..JobSpec::default()
        };
        let e = JobGen::new(&job, 0, 1, 1000, 4096, "jobs.fio")
            .err()
            .unwrap();
        assert_eq!(e.option.as_deref(), Some("bs"));
        assert!(e.to_string().contains("jobs.fio"));
    }

    const U: u64 = 4096;

    /// The generator for the single job of a fio file body, on a drive of `cap` units of 4 KiB.
    fn gen_seeded(body: &str, cap: u64, seed: u64) -> Result<JobGen, WorkloadError> {
        let w = match crate::workload::fio::parse_str(&format!("[j]\n{body}\n"), "t.fio") {
            Ok(w) => w,
            Err(e) => panic!("{e}"),
        };
        JobGen::new(&w.jobs[0], 0, seed, cap, U, "t.fio")
    }

    fn gen(body: &str, cap: u64) -> JobGen {
        match gen_seeded(body, cap, 7) {
            Ok(g) => g,
            Err(e) => panic!("{e}"),
        }
    }

    fn all(mut g: JobGen) -> Vec<Io> {
        let mut v = Vec::new();
        while let Some(io) = g.next_io(Time::ZERO) {
            v.push(io);
        }
        v
    }

    fn gen_err(body: &str, cap: u64) -> WorkloadError {
        match gen_seeded(body, cap, 7) {
            Ok(_) => panic!("expected an error for {body:?}"),
            Err(e) => e,
        }
    }

    fn frac(n: usize, total: usize) -> f64 {
        n as f64 / total as f64
    }

    #[test]
    fn generator_stays_small() {
        // The drive keeps generators in an enum beside a boxed trace source
        // (208 B with the trim/flush state).
        assert!(
            std::mem::size_of::<JobGen>() <= 224,
            "{}",
            std::mem::size_of::<JobGen>()
        );
    }

    #[test]
    fn bssplit_frequencies() {
        // Blank percentages share the remainder: 20/40/40.
        let ios = all(gen(
            "rw=randread\nbssplit=4k/20:16k/:64k/\nnumber_ios=200000\nio_size=1p",
            1 << 20,
        ));
        assert_eq!(ios.len(), 200_000);
        for (nlpn, want) in [(1, 0.2), (4, 0.4), (16, 0.4)] {
            let got = frac(ios.iter().filter(|io| io.nlpn == nlpn).count(), ios.len());
            assert!((got - want).abs() < 0.01, "{nlpn}: {got}");
        }
        assert!(ios.iter().all(|io| [1, 4, 16].contains(&io.nlpn)));
        // Per direction.
        let ios = all(gen(
            "rw=randrw\nbssplit=4k/50:64k/50,8k/10:128k/90\nnumber_ios=200000\nio_size=1p\nnorandommap",
            1 << 20,
        ));
        let (r, w): (Vec<Io>, Vec<Io>) = ios.iter().partition(|io| !io.is_write());
        let f = |v: &[Io], n: u32| frac(v.iter().filter(|io| io.nlpn == n).count(), v.len());
        assert!((f(&r, 1) - 0.5).abs() < 0.01 && (f(&r, 16) - 0.5).abs() < 0.01);
        assert!((f(&w, 2) - 0.1).abs() < 0.01 && (f(&w, 32) - 0.9).abs() < 0.01);
        // bs=r,w.
        let ios = all(gen("rw=rw\nbs=4k,64k\nnumber_ios=1000", 1 << 20));
        assert!(ios
            .iter()
            .all(|io| io.nlpn == if io.is_write() { 16 } else { 1 }));
    }

    #[test]
    fn bsrange_sizes_are_multiples_of_the_minimum() {
        let ios = all(gen(
            "rw=randwrite\nbsrange=8k-40k\nnumber_ios=50000\nio_size=1p",
            1 << 16,
        ));
        let mut seen = [0u32; 11];
        for io in &ios {
            assert!(io.nlpn % 2 == 0 && (2..=10).contains(&io.nlpn), "{io:?}");
            seen[io.nlpn as usize] += 1;
        }
        // Uniform over 8k, 16k, 24k, 32k, 40k.
        for n in [2, 4, 6, 8, 10] {
            assert!((frac(seen[n] as usize, ios.len()) - 0.2).abs() < 0.01);
        }
    }

    #[test]
    fn offsets_stay_in_the_region_and_aligned() {
        let cases = [
            (
                "rw=randrw\nbsrange=4k-64k\nblockalign=16k\noffset=1m\nsize=3m",
                4,
            ),
            ("rw=randread\nbssplit=8k/50:24k/50\noffset=64k\nsize=1m", 2),
            (
                "rw=randwrite\nbs=4k,12k\nblockalign=8k\nsize=100k\nnumber_ios=5000\nio_size=1p",
                2,
            ),
            (
                "rw=randread\nbssplit=4k/50:64k/50\nrandom_distribution=zipf:1.1\nsize=2m",
                1,
            ),
            (
                "rw=randread\nbs=16k\nrandom_distribution=zoned:50/50:50/50\nsize=1m",
                4,
            ),
            ("rw=read\nbssplit=4k/50:12k/50\nsize=1m\nio_size=10m", 1),
            ("rw=randread:4\nbsrange=4k-32k\nsize=1m\nio_size=10m", 1),
            (
                "rw=randrw:3\nrw_sequencer=identical\nbsrange=4k-32k\nsize=1m",
                1,
            ),
            (
                "rw=randrw\npercentage_random=30\nbsrange=4k-32k\nsize=1m",
                1,
            ),
            ("rw=write:8k\nbs=12k\noffset=4k\nsize=1m", 1),
        ];
        for (body, align) in cases {
            let g = gen(body, 1 << 12);
            let (start, len) = (g.start, g.len);
            let random = g.random && !body.contains(':') && !body.contains("percentage");
            let ios = all(g);
            assert!(!ios.is_empty());
            for io in &ios {
                let off = io.lpn as u64 - start;
                assert!(
                    io.lpn as u64 >= start && off + io.nlpn as u64 <= len,
                    "{body}: {io:?}"
                );
                assert!(io.nlpn > 0);
                if random {
                    assert_eq!(off % align, 0, "{body}: {io:?}");
                }
            }
        }
    }

    #[test]
    fn io_size_counts_bytes_with_variable_sizes() {
        let ios = all(gen(
            "rw=randread\nbssplit=4k/50:64k/50\nio_size=10m",
            1 << 16,
        ));
        let bytes: u64 = ios.iter().map(|io| io.nlpn as u64 * U).sum();
        let last = ios.last().map_or(0, |io| io.nlpn as u64 * U);
        assert!(bytes >= 10 << 20 && bytes - last < 10 << 20, "{bytes}");
    }

    /// Accesses per block of `n` blocks of 4 KiB.
    fn histogram(body: &str, n: u64, ios: u64) -> Vec<u32> {
        let mut h = vec![0u32; n as usize];
        for io in all(gen(&format!("{body}\nnumber_ios={ios}\nio_size=1p"), n)) {
            h[io.lpn as usize] += 1;
        }
        h
    }

    /// Share of the accesses that go to the hottest `k` blocks, and the mean
    /// position (0..1) of the hottest `m` blocks.
    fn hot(h: &[u32], k: usize, m: usize) -> (f64, f64) {
        let mut idx: Vec<usize> = (0..h.len()).collect();
        idx.sort_by_key(|&i| std::cmp::Reverse(h[i]));
        let total: u64 = h.iter().map(|&c| c as u64).sum();
        let top: u64 = idx[..k].iter().map(|&i| h[i] as u64).sum();
        let mean = idx[..m].iter().map(|&i| i as f64).sum::<f64>() / m as f64 / h.len() as f64;
        (top as f64 / total as f64, mean)
    }

    #[test]
    fn zipf_is_skewed_and_scattered() {
        let n = 1 << 20;
        let h = histogram("rw=randread\nrandom_distribution=zipf:1.2", n, 200_000);
        let (share, mean) = hot(&h, (n / 100) as usize, 100);
        assert!(share > 0.5, "{share}");
        assert!((0.35..0.65).contains(&mean), "{mean}");
        // The hottest block draws 1 / H(n, 1.2) of the accesses.
        let hn: f64 = (1..=n).map(|k| (k as f64).powf(-1.2)).sum();
        let top = *h.iter().max().unwrap_or(&0) as f64 / 200_000.0;
        assert!((top - 1.0 / hn).abs() < 0.005, "{top} vs {}", 1.0 / hn);
    }

    #[test]
    fn zipf_sampler_matches_the_exact_distribution() {
        for (n, theta) in [(10u64, 0.8), (7, 2.5), (1, 1.2), (1000, 0.5)] {
            let z = Zipf::new(n, theta);
            let norm: f64 = (1..=n).map(|k| (k as f64).powf(-theta)).sum();
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
            let mut c = vec![0u32; n as usize];
            let draws = 400_000;
            for _ in 0..draws {
                c[z.sample(&mut rng) as usize] += 1;
            }
            for (k, &ck) in c.iter().enumerate().take(10) {
                let p = ((k + 1) as f64).powf(-theta) / norm;
                let got = ck as f64 / draws as f64;
                assert!(
                    (got - p).abs() < 0.004,
                    "n={n} θ={theta} k={k}: {got} vs {p}"
                );
            }
        }
    }

    #[test]
    fn pareto_and_normal_are_skewed_and_scattered() {
        let n = 10_000;
        // pareto:0.2 is the 80/20 rule: 80% of the accesses to 20% of the blocks.
        let h = histogram("rw=randread\nrandom_distribution=pareto:0.2", n, 200_000);
        let (share, mean) = hot(&h, 2_000, 100);
        assert!(share > 0.78, "{share}");
        assert!((0.35..0.65).contains(&mean), "{mean}");
        // normal:5: ±1σ (10% of the blocks) take about 68%.
        let h = histogram("rw=randread\nrandom_distribution=normal:5", n, 200_000);
        let (share, mean) = hot(&h, 1_000, 100);
        assert!((0.66..0.75).contains(&share), "{share}");
        assert!((0.35..0.65).contains(&mean), "{mean}");
        // normal:100 is nearly uniform: the top 10% take far less.
        let h = histogram("rw=randread\nrandom_distribution=normal:100", n, 200_000);
        assert!(hot(&h, 1_000, 100).0 < 0.25);
    }

    #[test]
    fn zoned_distributions() {
        let n = 1 << 16;
        let h = histogram(
            "rw=randread\nrandom_distribution=zoned:60/10:40/90",
            n,
            200_000,
        );
        let first: u32 = h[..(n / 10) as usize].iter().sum();
        let f = first as f64 / 200_000.0;
        assert!((f - 0.6).abs() < 0.01, "{f}");
        // zoned_abs: 70% in the first 64 MiB, 30% in the next 128 MiB, none beyond.
        let h = histogram(
            "rw=randread\nrandom_distribution=zoned_abs:70/64m:30/128m",
            n,
            200_000,
        );
        let z1: u32 = h[..1 << 14].iter().sum();
        let z2: u32 = h[1 << 14..3 << 14].iter().sum();
        assert!((z1 as f64 / 200_000.0 - 0.7).abs() < 0.01);
        assert_eq!(z1 + z2, 200_000);
        // Per direction: zoned reads, uniform writes.
        let ios = all(gen(
            "rw=randrw\nrandom_distribution=zoned:100/10:0/90,random\nnumber_ios=20000",
            n,
        ));
        assert!(ios
            .iter()
            .filter(|io| !io.is_write())
            .all(|io| io.lpn as u64 <= n / 10));
        let w_hi = ios
            .iter()
            .filter(|io| io.is_write() && io.lpn as u64 >= n / 2)
            .count();
        assert!(w_hi > 4000, "{w_hi}");
        let e = gen_err(
            "rw=randread\nrandom_distribution=zoned_abs:50/200m:50/200m",
            n,
        );
        assert_eq!(e.option.as_deref(), Some("random_distribution"));
        assert!(e.message.contains("more than the region"), "{e}");
        let e = gen_err(
            "rw=randread\nrandom_distribution=zoned:50/99.99:50/0.01\nsize=64k",
            n,
        );
        assert!(e.message.contains("covers no block"), "{e}");
    }

    #[test]
    fn center_rotates_the_hot_spot() {
        let n: u64 = 1 << 20;
        let a = all(gen(
            "rw=randread\nrandom_distribution=zipf:1.2\nnumber_ios=1000",
            n,
        ));
        let b = all(gen(
            "rw=randread\nrandom_distribution=zipf:1.2:0.25\nnumber_ios=1000",
            n,
        ));
        for (x, y) in a.iter().zip(&b) {
            assert_eq!((x.lpn as u64 + n / 4) % n, y.lpn as u64);
        }
        let h0 = histogram("rw=randread\nrandom_distribution=normal:2", 1000, 20_000);
        let h1 = histogram(
            "rw=randread\nrandom_distribution=normal:2:0.5",
            1000,
            20_000,
        );
        let top = |h: &[u32]| (0..h.len()).max_by_key(|&i| h[i]).unwrap_or(0);
        assert_eq!((top(&h0) + 500) % 1000, top(&h1));
    }

    #[test]
    fn percentage_random_mixes_sequential_continuations() {
        let ios = all(gen(
            "rw=randread\npercentage_random=50\nnumber_ios=100000",
            1 << 20,
        ));
        let seq = ios
            .windows(2)
            .filter(|w| w[1].lpn == w[0].lpn + w[0].nlpn)
            .count();
        let f = frac(seq, ios.len() - 1);
        assert!((f - 0.5).abs() < 0.01, "{f}");
        // Per direction, and percentage_sequential.
        let ios = all(gen(
            "rw=randrw\npercentage_sequential=100,0\nnumber_ios=10000",
            1 << 20,
        ));
        let reads: Vec<&Io> = ios.iter().filter(|io| !io.is_write()).collect();
        assert!(reads.windows(2).all(|w| w[1].lpn == w[0].lpn + 1));
        let writes: Vec<&Io> = ios.iter().filter(|io| io.is_write()).collect();
        assert!(
            writes
                .windows(2)
                .filter(|w| w[1].lpn == w[0].lpn + 1)
                .count()
                < 10
        );
    }

    #[test]
    fn offset_modifiers() {
        // Sequential with holes: 4k I/O, 8k skipped, wrapping at the end.
        let ios = all(gen("rw=write:8k\nbs=4k\nsize=48k\nnumber_ios=6", 100));
        let lpns: Vec<u32> = ios.iter().map(|io| io.lpn).collect();
        assert_eq!(lpns, [0, 3, 6, 9, 0, 3]);
        // randread:4: a new random offset every 4 I/Os, then sequential.
        let ios = all(gen("rw=randread:4\nnumber_ios=4000", 1 << 20));
        for c in ios.chunks(4) {
            assert!(c.windows(2).all(|w| w[1].lpn == w[0].lpn + 1), "{c:?}");
        }
        let starts: std::collections::HashSet<u32> = ios.chunks(4).map(|c| c[0].lpn).collect();
        assert!(starts.len() > 990);
        // identical: the same offset 4 times.
        let ios = all(gen(
            "rw=randwrite:4\nrw_sequencer=identical\nnumber_ios=400",
            1 << 20,
        ));
        for c in ios.chunks(4) {
            assert!(c.iter().all(|io| io.lpn == c[0].lpn), "{c:?}");
        }
        let e = gen_err("rw=write:2k", 100);
        assert_eq!(e.option.as_deref(), Some("rw"));
    }

    #[test]
    fn deterministic_per_seed() {
        let body = "rw=randrw\nbssplit=4k/30:16k/70,8k\nrandom_distribution=zipf:0.9,pareto:0.3\n\
                    percentage_random=80\nnumber_ios=5000";
        let run = |b: &str, seed: u64| match gen_seeded(b, 1 << 18, seed) {
            Ok(g) => all(g),
            Err(e) => panic!("{e}"),
        };
        assert_eq!(run(body, 1), run(body, 1));
        assert_ne!(run(body, 1), run(body, 2));
        // randrepeat=0 mixes the run seed in once more: another (still reproducible) sequence.
        let rr0 = format!("{body}\nrandrepeat=0");
        assert_eq!(run(&rr0, 1), run(&rr0, 1));
        assert_ne!(run(&rr0, 1), run(body, 1));
        // randseed fixes the sequence whatever the run seed (and wins over randrepeat, as in fio).
        let fixed = format!("{body}\nrandseed=99");
        assert_eq!(run(&fixed, 1), run(&fixed, 2));
        assert_eq!(run(&format!("{fixed}\nrandrepeat=0"), 5), run(&fixed, 1));
    }

    #[test]
    fn sizes_must_be_multiples_of_the_mapping_unit() {
        for (body, opt) in [
            ("rw=randread\nbssplit=4k/50:6k/50", "bssplit"),
            ("rw=randread\nbsrange=2k-8k", "bsrange"),
            ("rw=randwrite\nbs=4k,6k", "bs"),
            ("rw=randread\nblockalign=2k", "blockalign"),
        ] {
            let e = gen_err(body, 1 << 10);
            assert_eq!(e.option.as_deref(), Some(opt), "{e}");
            assert!(e.message.contains("mapping unit"), "{e}");
            assert!(e.to_string().starts_with("t.fio: "), "{e}");
        }
        // A direction the job does not use is not checked.
        assert!(gen_seeded("rw=randread\nbs=4k,6k", 1 << 10, 1).is_ok());
        let e = gen_err("rw=read\nbssplit=4k/50:64k/50\nsize=32k", 1 << 10);
        assert_eq!(e.option.as_deref(), Some("size"));
    }
}

#[cfg(test)]
mod locality_tests {
    use super::*;
    use crate::workload::{LocalitySpec, RwPattern};
    use std::collections::{BTreeMap, HashMap};

    fn spec(hot: Option<(f64, f64)>, lru: Option<(f64, f64)>) -> LocalitySpec {
        use crate::workload::LocalityPattern as P;
        let pattern = match (hot.is_some(), lru.is_some()) {
            (true, true) => P::HotColdLru,
            (true, false) => P::HotCold,
            (false, true) => P::Lru,
            _ => P::Uniform,
        };
        LocalitySpec {
            pattern: Some(pattern),
            hot_space: hot.map(|h| h.0),
            hot_access: hot.map(|h| h.1),
            lru_reuse: lru.map(|l| l.0),
            lru_mean: lru.map(|l| l.1),
        }
    }

    fn stream_in(l: LocalitySpec, n: usize, blocks: u64) -> Vec<u32> {
        let job = JobSpec {
            rw: RwPattern {
                random: true,
                read_pct: 100,
            },
            number_ios: Some(n as u64),
            locality: Some(l),
            ..JobSpec::default()
        };
        let mut g = JobGen::new(&job, 0, 9, blocks, 4096, "t").unwrap();
        std::iter::from_fn(|| g.next_io(Time::ZERO).map(|io| io.lpn)).collect()
    }

    fn stream(l: LocalitySpec, n: usize) -> Vec<u32> {
        stream_in(l, n, 1 << 22)
    }

    /// Hit ratio of an ideal LRU cache of `cap` blocks.
    fn lru_hits(s: &[u32], cap: usize) -> f64 {
        let (mut last, mut order, mut hits) = (HashMap::new(), BTreeMap::new(), 0usize);
        for (t, &x) in s.iter().enumerate() {
            if let Some(old) = last.insert(x, t) {
                order.remove(&old);
                hits += 1;
            }
            order.insert(t, x);
            if order.len() > cap {
                if let Some((_, y)) = order.pop_first() {
                    last.remove(&y);
                }
            }
        }
        hits as f64 / s.len() as f64
    }

    #[test]
    fn lru_pattern_hit_ratio_matches_its_stack_distance_model() {
        // reuse 60 %, geometric stack distance of mean 100: an LRU cache of C
        // blocks hits 0.6 * (1 - (100/101)^C) of the accesses.
        let s = stream(spec(None, Some((0.6, 100.0))), 200_000);
        for cap in [50usize, 200, 800] {
            let want = 0.6 * (1.0 - (100.0f64 / 101.0).powi(cap as i32));
            let got = lru_hits(&s, cap);
            assert!(
                (got - want).abs() < 0.02,
                "C={cap}: hit ratio {got:.3}, model {want:.3}"
            );
        }
    }

    #[test]
    fn hot_cold_pattern_sends_the_configured_share_to_the_hot_space() {
        // 10 % of the space takes 90 % of the accesses: count accesses to the
        // 10 % most-accessed blocks.
        let space = 1u64 << 14;
        let s = stream_in(spec(Some((0.1, 0.9)), None), 300_000, space);
        let mut counts: HashMap<u32, usize> = HashMap::new();
        for &x in &s {
            *counts.entry(x).or_default() += 1;
        }
        let hot_blocks = (space as f64 * 0.1) as usize;
        let mut c: Vec<usize> = counts.values().copied().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        let share = c.iter().take(hot_blocks).sum::<usize>() as f64 / s.len() as f64;
        assert!((share - 0.9).abs() < 0.03, "hot share {share}");
        // The hot blocks are scattered, not bunched at LBA 0.
        let hot_mean = s.iter().map(|&x| x as f64).sum::<f64>() / s.len() as f64;
        assert!((hot_mean / space as f64 - 0.5).abs() < 0.05, "{hot_mean}");
    }

    #[test]
    fn hot_cold_lru_combines_both() {
        let space = 1u64 << 16;
        let both = stream_in(spec(Some((0.1, 0.9)), Some((0.5, 100.0))), 200_000, space);
        let lru_only = stream_in(spec(None, Some((0.5, 100.0))), 200_000, space);
        // A cache the size of the hot space: the hot/cold part adds hits beyond the LRU component.
        let (b, l) = (lru_hits(&both, 8192), lru_hits(&lru_only, 8192));
        assert!(b > l + 0.2, "{b} vs {l}");
    }
}
