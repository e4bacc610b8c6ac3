//! A keyed pseudo-random permutation (a Feistel network with cycle walking:
//! O(1) memory, any size) and the random map built on it, renewed each pass.

use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

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

/// One pass-by-pass random map (a permutation renewed each pass).
#[derive(Debug, Clone)]
pub(super) struct RandMap {
    pub(super) n: u64,
    key: u64,
    perm: Permutation,
    idx: u64,
}

impl RandMap {
    pub(super) fn new(n: u64, key: u64) -> RandMap {
        RandMap {
            n,
            key,
            perm: Permutation::new(n, key),
            idx: 0,
        }
    }

    #[inline]
    pub(super) fn next(&mut self) -> u64 {
        if self.idx == self.n {
            self.idx = 0;
            self.key = self.key.wrapping_add(1);
            self.perm = Permutation::new(self.n, self.key);
        }
        let b = self.perm.get(self.idx);
        self.idx += 1;
        b
    }

    /// What [`RandMap::next`] returns `k` calls from now (0: the next),
    /// if that is still in this pass.
    #[inline]
    pub(super) fn peek(&self, k: u64) -> Option<u64> {
        let i = self.idx.checked_add(k)?;
        (i < self.n).then(|| self.perm.get(i))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;
    use crate::workload::gen::JobGen;
    use crate::workload::{JobSpec, RwPattern};

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
}
