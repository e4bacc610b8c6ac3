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
//!
//! Files: this one holds the generator's state and its next I/O (stop
//! conditions, read/write mix, sequential and random offsets, trims and
//! flushes); `setup.rs` builds it ([`JobGen::new`]: checks against the
//! drive, seeds, per-direction state); `sizes.rs` the block-size choice;
//! `distributions.rs` the offset distributions and the draw of a random
//! slot; `permutation.rs` the keyed permutation and the random map;
//! `locality.rs` seed 001's locality model.

mod distributions;
mod locality;
mod permutation;
mod setup;
mod sizes;
#[cfg(test)]
mod test_util;

pub use locality::Locality;
pub use permutation::Permutation;

use super::{Op, Sequencer, TrimMode};
use crate::units::Time;
use distributions::Dist;
use permutation::RandMap;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use sizes::Sizes;

/// One generated I/O: the mapping units it touches and, for I/O smaller
/// than a unit or not aligned to one, the 512 B sectors of the first and
/// last unit it leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Io {
    /// Read, write, trim or flush (a flush has `lpn` = `nlpn` = 0).
    pub op: Op,
    /// First logical page.
    pub lpn: u32,
    /// Logical pages.
    pub nlpn: u32,
    /// Sectors of the first unit before the I/O starts (0: aligned).
    pub head: u8,
    /// Sectors of the last unit after the I/O ends (0: aligned).
    pub tail: u8,
}

impl Io {
    /// The logical block (sector) size of partial I/O, bytes.
    pub const SECTOR: u64 = 512;

    /// An NVMe Flush.
    pub const FLUSH: Io = Io {
        op: Op::Flush,
        lpn: 0,
        nlpn: 0,
        head: 0,
        tail: 0,
    };

    /// Whole mapping units `lpn .. lpn + nlpn`.
    #[inline]
    pub fn units(op: Op, lpn: u32, nlpn: u32) -> Io {
        Io {
            op,
            lpn,
            nlpn,
            head: 0,
            tail: 0,
        }
    }

    /// `len` bytes at byte `offset` (both multiples of [`Io::SECTOR`]) on a
    /// drive of `unit`-byte mapping units.
    #[inline]
    pub fn from_bytes(op: Op, offset: u64, len: u64, unit: u64) -> Io {
        let first = offset / unit;
        let end = offset + len;
        let last = end.div_ceil(unit);
        Io {
            op,
            lpn: first as u32,
            nlpn: (last - first) as u32,
            head: ((offset - first * unit) / Io::SECTOR) as u8,
            tail: ((last * unit - end) / Io::SECTOR) as u8,
        }
    }

    /// Bytes moved.
    #[inline]
    pub fn bytes(&self, unit: u64) -> u64 {
        self.nlpn as u64 * unit - (self.head as u64 + self.tail as u64) * Io::SECTOR
    }

    /// Byte offset of its first byte.
    #[inline]
    pub fn offset(&self, unit: u64) -> u64 {
        self.lpn as u64 * unit + self.head as u64 * Io::SECTOR
    }

    /// Covers part of a mapping unit (read-modify-write for a write).
    #[inline]
    pub fn partial(&self) -> bool {
        (self.head | self.tail) != 0
    }

    /// A write?
    #[inline]
    pub fn is_write(&self) -> bool {
        self.op == Op::Write
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
    unit: u32,
    /// The drive's mapping unit, bytes (`unit` is smaller for sub-unit I/O).
    map_unit: u32,
    /// Units skipped after each sequential I/O (negative: backwards).
    skip: i64,
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

impl JobGen {
    /// The job starts at `t` (a `stonewall`/`wait_for` job starts when the
    /// jobs it waits for end): its ramp and runtime count from there.
    pub fn start_at(&mut self, t: Time) {
        self.deadline = self.deadline.map(|d| d + t);
        self.ramp_end += t;
    }

    /// Next I/O at simulated time `now`, or None when the job is done.
    #[inline]
    pub fn next_io(&mut self, now: Time) -> Option<Io> {
        if let Some(io) = crate::take_if_set(&mut self.pending) {
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

    /// The job's runtime is over at `now` (fio's `runtime_exceeded`).
    #[inline]
    pub fn past_deadline(&self, now: Time) -> bool {
        self.deadline.is_some_and(|d| now >= d)
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
            dir.seq_next = if self.skip >= 0 {
                off + s + self.skip as u64
            } else {
                // fio: step back; past the start, wrap to the end and step
                // back from there (get_next_seq_offset).
                let next = (off + s) as i64 + self.skip;
                if next >= 0 {
                    next as u64
                } else {
                    (len as i64 + self.skip).max(0) as u64
                }
            };
            off
        };
        let dir = &mut self.dirs[d];
        dir.last_off = off;
        dir.last_end = off + s;
        self.issued_bytes += s * self.unit as u64;
        let op = if write { Op::Write } else { Op::Read };
        if self.unit == self.map_unit {
            Io::units(op, (self.start + off) as u32, s as u32)
        } else {
            // Sub-mapping-unit I/O: the generator counts in sectors.
            Io::from_bytes(
                op,
                (self.start + off) * self.unit as u64,
                s * self.unit as u64,
                self.map_unit as u64,
            )
        }
    }

    /// LPNs of the job's next I/Os, when they can be known without
    /// drawing them: one direction, every offset random (uniform, from a
    /// copy of the generator's random state, or the random map's next
    /// entries), one size, no locality model or offset repeats. Fills the
    /// front of `out` and returns how many it filled (0 when the pattern is
    /// not that). Exact unless something else draws in between; the host
    /// only prefetches their mapping entries with them, so results never
    /// depend on it.
    pub fn peek_lpns(&self, out: &mut [u32]) -> usize {
        if !self.random
            || !(self.read_pct == 0 || self.read_pct == 100)
            || self.locality.is_some()
            || self.offset_repeat != 1
            || self.unit != self.map_unit
        {
            return 0;
        }
        let dir = &self.dirs[(self.read_pct == 0) as usize];
        if dir.prand < 100 || !matches!(dir.sizes, sizes::Sizes::Fixed(_)) {
            return 0;
        }
        let lpn = |slot: u64| (self.start + slot * dir.ba) as u32;
        match (dir.map, &dir.dist) {
            (Some(m), _) => {
                let map = &self.maps[m];
                let mut n = 0;
                for (k, o) in out.iter_mut().enumerate() {
                    let Some(slot) = map.peek(k as u64) else {
                        break;
                    };
                    *o = lpn(slot);
                    n += 1;
                }
                n
            }
            (None, Dist::Uniform) => {
                let mut rng = self.rng.clone();
                for o in out.iter_mut() {
                    *o = lpn(rng.gen_range(0..dir.slots));
                }
                out.len()
            }
            _ => 0,
        }
    }

    /// Some of its I/Os cover part of a mapping unit (sizes, alignment or
    /// offset below the unit).
    pub fn sub_unit(&self) -> bool {
        self.unit != self.map_unit
    }

    /// I/Os issued so far.
    pub fn issued(&self) -> u64 {
        self.issued
    }
}

#[cfg(test)]
mod tests {
    use super::test_util::*;
    use super::*;
    use crate::workload::{JobSpec, RwPattern};

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
    fn generator_stays_small() {
        // The drive keeps generators in an enum beside a boxed trace source
        // (208 B with the trim/flush state).
        assert!(
            std::mem::size_of::<JobGen>() <= 224,
            "{}",
            std::mem::size_of::<JobGen>()
        );
    }

    /// What `peek_lpns` says the next I/Os are is what they are, for the
    /// patterns it answers (uniform offsets and the random map, across a
    /// pass's end, where the map's peek stops short); it answers nothing
    /// for the others.
    #[test]
    fn peeked_lpns_are_the_next_ios() {
        for body in [
            "rw=randwrite\nbs=4k\nnorandommap\nnumber_ios=2000",
            "rw=randread\nbs=8k\nnorandommap\noffset=64k\nsize=1m\nio_size=1g\nnumber_ios=2000",
            "rw=randwrite\nbs=4k\nsize=200k\nio_size=1g\nnumber_ios=2000",
            "rw=randread\nbs=16k\nblockalign=32k\nsize=2m\nio_size=1g\nnumber_ios=2000",
        ] {
            let mut g = gen(body, 1 << 20);
            let (mut peeked, mut total) = (0, 0);
            let mut ahead = [0u32; 16];
            loop {
                let n = g.peek_lpns(&mut ahead);
                let ios: Vec<Io> = (0..16).map_while(|_| g.next_io(Time::ZERO)).collect();
                for (k, io) in ios.iter().enumerate().take(n) {
                    assert_eq!(io.lpn, ahead[k], "{body}: I/O {k} ahead");
                }
                peeked += n.min(ios.len());
                total += ios.len();
                if ios.len() < 16 {
                    break;
                }
            }
            // The 200 KiB map's passes of 50 end inside a batch of 16.
            assert_eq!(total, 2000, "{body}");
            assert!(peeked >= 1_500, "{body}: peeked {peeked} of 2000");
        }
        for body in [
            "rw=randrw\nbs=4k\nnorandommap",
            "rw=randread\nbs=4k\nrandom_distribution=zipf:1.2",
            "rw=randwrite\nbsrange=4k-16k\nnorandommap",
            "rw=randread\nbs=4k\npercentage_random=50",
            "rw=randread:4\nbs=4k",
            "rw=write\nbs=4k",
        ] {
            let g = gen(body, 1 << 20);
            assert_eq!(g.peek_lpns(&mut [0u32; 16]), 0, "{body}");
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
        // Backwards, as fio: 4k I/O stepping back 8k: 0, then from the end
        // (12 units: 12 - 2 = 10), 9, 8, ...
        let ios = all(gen("rw=read:-8k\nbs=4k\nsize=48k\nnumber_ios=6", 100));
        let lpns: Vec<u32> = ios.iter().map(|io| io.lpn).collect();
        assert_eq!(lpns, [0, 10, 9, 8, 7, 6]);
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
        // A skip below the mapping unit: sub-unit offsets (2 KiB writes, 2 KiB apart).
        let ios = all(gen("rw=write:2k\nbs=2k\nnumber_ios=4", 100));
        let at: Vec<(u32, u8, u8)> = ios.iter().map(|io| (io.lpn, io.head, io.tail)).collect();
        assert_eq!(at, [(0, 0, 4), (1, 0, 4), (2, 0, 4), (3, 0, 4)]);
        let e = gen_err("rw=write:1000", 100);
        assert_eq!(e.option.as_deref(), Some("rw"));
    }
}
