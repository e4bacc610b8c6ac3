//! Seed 001's locality model (`ssdlab_pattern`): a hot/cold space and LRU
//! re-references.

use super::permutation::Permutation;
use crate::workload::LocalitySpec;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

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

#[cfg(test)]
mod tests {
    use crate::units::Time;
    use crate::workload::gen::JobGen;
    use crate::workload::{JobSpec, LocalitySpec, RwPattern};
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
