//! Offset distributions of one direction (`random_distribution`: zipf,
//! pareto, normal, zoned, zoned_abs; `center`) over its slots, and the draw
//! of a random slot (from the random map when the direction has one).

use super::permutation::Permutation;
use super::JobGen;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Zipf ranks by rejection-inversion (Hörmann & Derflinger 1996):
/// P(k) ∝ k^-θ for k in 1..=n, drawn by inverting the integral of the
/// continuous hat x^-θ and accepting with a cheap squeeze test.
#[derive(Debug, Clone)]
pub(super) struct Zipf {
    n: f64,
    theta: f64,
    h_x1: f64,
    h_n: f64,
    s: f64,
}

impl Zipf {
    pub(super) fn new(n: u64, theta: f64) -> Zipf {
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
pub(super) enum Dist {
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
pub(super) enum Ranked {
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

impl JobGen {
    /// A random slot of direction `d`.
    #[inline]
    pub(super) fn random_slot(&mut self, d: usize) -> u64 {
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
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;
    use rand::SeedableRng;

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
}
