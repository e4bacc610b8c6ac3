//! Which dies can take another program: bit sets over index spaces of the
//! drive's (its parallel units, its stripe positions), each index naming a
//! die, kept as the dies' write loads change. A flush finds the next unit
//! or stripe position whose die has room by a bit scan, where it tested
//! every one in turn (a data-dependent branch each: about 3 % of a steady
//! random write's time, docs/performance.md).

/// Bit sets of "this index's die has fewer than `limit` write
/// transactions queued, running or suspended", one per view.
#[derive(Debug, Clone)]
pub struct WriteRoom {
    limit: u32,
    /// Per die: the (view, index) pairs that name it.
    of_die: Vec<Vec<(u32, u32)>>,
    /// Per view: a bit per index.
    views: Vec<Vec<u64>>,
}

impl WriteRoom {
    /// Views over `dies` idle dies: `views[v][i]` is the die of index `i`
    /// of view `v`.
    pub fn new(limit: u32, dies: usize, views: &[&[u32]]) -> WriteRoom {
        let mut of_die = vec![Vec::new(); dies];
        let mut bits = Vec::with_capacity(views.len());
        for (v, view) in views.iter().enumerate() {
            let mut b = vec![0u64; view.len().div_ceil(64)];
            for (i, &die) in view.iter().enumerate() {
                of_die[die as usize].push((v as u32, i as u32));
                if limit > 0 {
                    b[i / 64] |= 1 << (i % 64);
                }
            }
            bits.push(b);
        }
        WriteRoom {
            limit,
            of_die,
            views: bits,
        }
    }

    /// `die` now has `load` write transactions.
    #[inline]
    pub fn load_changed(&mut self, die: usize, load: u32) {
        let room = load < self.limit;
        for &(v, i) in &self.of_die[die] {
            let (w, bit) = ((i / 64) as usize, 1u64 << (i % 64));
            let word = &mut self.views[v as usize][w];
            if room {
                *word |= bit;
            } else {
                *word &= !bit;
            }
        }
    }

    /// The first index of view `v` from `from` on whose die has room.
    #[inline]
    pub fn next(&self, v: usize, from: usize) -> Option<usize> {
        let bits = &self.views[v];
        let mut w = from / 64;
        let mut word = bits.get(w)? & (!0u64 << (from % 64));
        loop {
            if word != 0 {
                return Some(w * 64 + word.trailing_zeros() as usize);
            }
            w += 1;
            word = *bits.get(w)?;
        }
    }

    /// Whether index `i` of view `v` is marked as having room.
    pub fn has(&self, v: usize, i: usize) -> bool {
        self.views[v][i / 64] >> (i % 64) & 1 == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The marks follow the loads over more than a word of indices, in
    /// every view that names a die, and the scan finds exactly the marked
    /// indices in order.
    #[test]
    fn marks_follow_the_loads() {
        // 70 dies; view 0: two units per die; view 1: a permutation.
        let units: Vec<u32> = (0..140).map(|u| u / 2).collect();
        let perm: Vec<u32> = (0..70).map(|i| (i * 31) % 70).collect();
        let mut r = WriteRoom::new(2, 70, &[&units, &perm]);
        let mut load = vec![0u32; 70];
        let mut x = 12345u64;
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let die = ((x >> 33) % 70) as usize;
            if (x >> 20) & 1 == 1 && load[die] < 3 {
                load[die] += 1;
            } else if load[die] > 0 {
                load[die] -= 1;
            }
            r.load_changed(die, load[die]);
            for (v, view) in [&units[..], &perm[..]].iter().enumerate() {
                let want: Vec<usize> = (0..view.len())
                    .filter(|&i| load[view[i] as usize] < 2)
                    .collect();
                let got: Vec<usize> =
                    std::iter::successors(r.next(v, 0), |&i| r.next(v, i + 1)).collect();
                assert_eq!(got, want);
                for i in 0..view.len() {
                    assert_eq!(r.has(v, i), load[view[i] as usize] < 2);
                }
            }
        }
        assert_eq!(r.next(0, 140), None);
        assert_eq!(r.next(1, 1000), None);
    }
}
