//! Block-size choice of one direction (`bs`, `bsrange`, `bssplit`).

use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;

/// Block-size choice of one direction, in mapping units.
#[derive(Debug, Clone)]
pub(super) enum Sizes {
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
    pub(super) fn min(&self) -> u64 {
        match self {
            Sizes::Fixed(b) => *b,
            Sizes::Range { min, .. } => *min,
            Sizes::Split { sizes, .. } => sizes.iter().copied().min().unwrap_or(1),
        }
    }

    pub(super) fn max(&self) -> u64 {
        match self {
            Sizes::Fixed(b) => *b,
            Sizes::Range { min, count } => min * count,
            Sizes::Split { sizes, .. } => sizes.iter().copied().max().unwrap_or(1),
        }
    }

    #[inline]
    pub(super) fn draw(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
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
    pub(super) fn fit(&self, s: u64, room: u64) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::super::Io;

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
}
