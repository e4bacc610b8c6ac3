//! Per-job I/O generators: offsets, directions and stop conditions.
//!
//! Random offsets without `norandommap` visit every block of the region
//! exactly once per pass, like fio's random map; ssdlab uses a keyed
//! Feistel permutation with cycle walking (O(1) memory, any region size)
//! instead of fio's bitmap.

use super::{JobSpec, WorkloadError};
use crate::units::Time;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// One generated I/O, in mapping units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Io {
    /// Write (true) or read.
    pub write: bool,
    /// First logical page.
    pub lpn: u32,
    /// Logical pages.
    pub nlpn: u32,
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

/// Generator state for one job clone.
pub struct JobGen {
    random: bool,
    read_pct: u32,
    /// Region start (LPN) and block size (LPNs).
    start: u64,
    bs: u32,
    blocks: u64,
    seq_next: [u64; 2],
    rng: Xoshiro256PlusPlus,
    perm: Option<Permutation>,
    perm_key: u64,
    perm_idx: u64,
    ios_limit: Option<u64>,
    issued: u64,
    deadline: Option<Time>,
    /// End of ramp (I/Os submitted before it are not measured).
    pub ramp_end: Time,
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
        if !job.bs.is_multiple_of(unit) {
            return Err(err("bs", format!("block size {} B is not a multiple of the drive's mapping unit ({unit} B); sub-mapping-unit writes (read-modify-write) are not modelled yet", job.bs)));
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
        let bs = (job.bs / unit) as u32;
        let blocks = size / job.bs;
        if blocks == 0 {
            return Err(err(
                "size",
                format!(
                    "region of {size} B is smaller than one block of {} B",
                    job.bs
                ),
            ));
        }
        let io_bytes = if job.time_based {
            None
        } else {
            Some(job.io_size.unwrap_or(size))
        };
        let by_bytes = io_bytes.map(|b| b.div_ceil(job.bs).max(1));
        let ios_limit = match (by_bytes, job.number_ios) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let job_seed = job
            .randseed
            .unwrap_or(seed)
            .wrapping_add((clone as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let rng = Xoshiro256PlusPlus::seed_from_u64(job_seed);
        let perm = if job.rw.random && !job.norandommap {
            Some(Permutation::new(blocks, job_seed ^ 0xA5A5))
        } else {
            None
        };
        if ios_limit.is_none() && job.runtime.is_none() {
            return Err(err("runtime", "time_based needs runtime".into()));
        }
        Ok(JobGen {
            random: job.rw.random,
            read_pct: job.rw.read_pct,
            start: job.offset / unit,
            bs,
            blocks,
            seq_next: [0, 0],
            rng,
            perm,
            perm_key: job_seed ^ 0xA5A5,
            perm_idx: 0,
            ios_limit,
            issued: 0,
            deadline: job.runtime.map(|r| job.ramp_time + r),
            ramp_end: job.ramp_time,
        })
    }

    /// Next I/O at simulated time `now`, or None when the job is done.
    #[inline]
    pub fn next_io(&mut self, now: Time) -> Option<Io> {
        if let Some(l) = self.ios_limit {
            if self.issued >= l {
                return None;
            }
        }
        if let Some(d) = self.deadline {
            if now >= d {
                return None;
            }
        }
        self.issued += 1;
        let write = match self.read_pct {
            100 => false,
            0 => true,
            p => self.rng.gen_range(0..100) >= p,
        };
        let block = if self.random {
            if self.perm.is_some() {
                if self.perm_idx == self.blocks {
                    self.perm_idx = 0;
                    self.perm_key = self.perm_key.wrapping_add(1);
                    self.perm = Some(Permutation::new(self.blocks, self.perm_key));
                }
                let b = self.perm.as_ref().map_or(0, |p| p.get(self.perm_idx));
                self.perm_idx += 1;
                b
            } else {
                self.rng.gen_range(0..self.blocks)
            }
        } else {
            let d = write as usize;
            let b = self.seq_next[d];
            self.seq_next[d] = (b + 1) % self.blocks;
            b
        };
        Some(Io {
            write,
            lpn: (self.start + block * self.bs as u64) as u32,
            nlpn: self.bs,
        })
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
            reads += (!io.write) as u32;
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
}
