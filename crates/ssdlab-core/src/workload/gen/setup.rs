//! Building a job clone's generator: [`JobGen::new`] checks the job against
//! the drive (block sizes and alignment in whole mapping units, the region
//! inside the capacity), derives the clone's seed and sets up each
//! direction's sizes, offset distribution and random map, and the locality
//! model.

use super::distributions::{Dist, Ranked, Zipf};
use super::permutation::{Permutation, RandMap};
use super::sizes::Sizes;
use super::{Dir, Io, JobGen, Locality};
use crate::workload::{BlockSize, Distribution, JobSpec, TrimMode, WorkloadError};
use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

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
        // The generator's unit: the mapping unit, or, for I/O smaller than
        // it or not aligned to it, the largest multiple of the 512 B sector
        // dividing every size, alignment, offset and skip (such writes are
        // read-modify-writes in the drive).
        let mut vals: Vec<(u64, &str)> = Vec::new();
        for d in 0..2 {
            if !used[d] {
                continue;
            }
            match &sizes[d] {
                BlockSize::Fixed(b) => vals.push((*b, sizes[d].option())),
                BlockSize::Range { min, .. } => vals.push((*min, sizes[d].option())),
                BlockSize::Split(v) => vals.extend(v.iter().map(|e| (e.0, sizes[d].option()))),
            }
            if let Some(b) = vals.iter().find(|v| v.0 == 0) {
                return Err(err(
                    b.1,
                    format!("{} block size must be positive", dir_names[d]),
                ));
            }
            if let Some(ba) = job.blockalign[d] {
                if ba == 0 {
                    return Err(err(
                        "blockalign",
                        format!("{} alignment must be positive", dir_names[d]),
                    ));
                }
                vals.push((ba, "blockalign"));
            }
        }
        vals.push((job.seq_skip.unsigned_abs(), "rw"));
        vals.push((job.offset, "offset"));
        fn gcd(a: u64, b: u64) -> u64 {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        let g = vals.iter().fold(unit, |a, v| gcd(a, v.0));
        if g != unit {
            let (v, opt) = vals
                .iter()
                .copied()
                .find(|v| !v.0.is_multiple_of(unit))
                .unwrap_or((g, "bs"));
            if job.trim != TrimMode::None {
                return Err(err(opt, format!("{v} B is not a multiple of the drive's mapping unit ({unit} B); trims of part of a mapping unit are not modelled")));
            }
            if unit / Io::SECTOR > 256 {
                let (v, opt) = vals[0];
                return Err(err(opt, format!("{v} B I/O covers part of a mapping unit, and sub-unit I/O is modelled for mapping units up to 128 KiB (this drive's is {unit} B)")));
            }
            if let Some(&(v, opt)) = vals.iter().find(|v| !v.0.is_multiple_of(Io::SECTOR)) {
                return Err(err(
                    opt,
                    format!(
                        "{v} B is not a multiple of the {} B logical block",
                        Io::SECTOR
                    ),
                ));
            }
        }
        let map_unit = unit;
        let unit = g;
        let cap = capacity_lpns * map_unit;
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
            unit: unit as u32,
            map_unit: map_unit as u32,
            skip: job.seq_skip / unit as i64,
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
}

#[cfg(test)]
mod tests {
    use super::super::test_util::*;
    use super::*;

    #[test]
    fn bad_alignment_is_an_error() {
        let job = JobSpec {
            bs: 512,
            ..JobSpec::default()
        };
        // 512 B is a sector: a sub-unit job; 100 B is not.
        assert!(JobGen::new(&job, 0, 1, 1000, 4096, "jobs.fio").is_ok());
        let job = JobSpec {
            bs: 100,
            ..JobSpec::default()
        };
        let e = JobGen::new(&job, 0, 1, 1000, 4096, "jobs.fio")
            .err()
            .unwrap();
        assert_eq!(e.option.as_deref(), Some("bs"));
        assert!(e.to_string().contains("jobs.fio"));
        assert!(e.message.contains("512 B logical block"), "{e}");
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
    fn sizes_must_be_multiples_of_the_sector() {
        for (body, opt) in [
            ("rw=randread\nbssplit=4k/50:6100/50", "bssplit"),
            ("rw=randread\nbsrange=2000-8k", "bsrange"),
            ("rw=randwrite\nbs=4k,6000", "bs"),
            ("rw=randread\nblockalign=1000", "blockalign"),
            ("rw=randread\noffset=100", "offset"),
        ] {
            let e = gen_err(body, 1 << 10);
            assert_eq!(e.option.as_deref(), Some(opt), "{e}");
            assert!(e.message.contains("512 B logical block"), "{e}");
            assert!(e.to_string().starts_with("t.fio: "), "{e}");
        }
        // Sub-unit sizes and alignments run (read-modify-write in the drive);
        // trims of part of a unit do not.
        let ios = all(gen_seeded(
            "rw=randread\nbssplit=4k/50:6k/50\nnumber_ios=2000",
            1 << 10,
            1,
        )
        .unwrap());
        assert!(ios.iter().any(|io| io.partial()));
        assert!(ios
            .iter()
            .all(|io| io.bytes(4096) == 4096 || io.bytes(4096) == 6144));
        let e = gen_err("rw=randtrim\nbs=2k", 1 << 10);
        assert!(e.message.contains("trims of part of a mapping unit"), "{e}");
        // A direction the job does not use is not checked.
        assert!(gen_seeded("rw=randread\nbs=4k,6000", 1 << 10, 1).is_ok());
        let e = gen_err("rw=read\nbssplit=4k/50:64k/50\nsize=32k", 1 << 10);
        assert_eq!(e.option.as_deref(), Some("size"));
    }
}
