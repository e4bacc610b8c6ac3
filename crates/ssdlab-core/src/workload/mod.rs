//! Workloads: fio job files (core options) and the per-job I/O generators.
//!
//! A [`Workload`] is a list of [`JobSpec`]s; each job (after `numjobs`
//! expansion) drives its own NVMe submission/completion queue pair.

pub mod fio;
pub mod gen;
pub mod pacing;
pub mod trace;

use crate::units::Time;
use std::fmt;

/// What a command does: the NVMe I/O command set ssdlab models.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Op {
    /// NVMe Read.
    #[default]
    Read,
    /// NVMe Write.
    Write,
    /// NVMe Dataset Management, deallocate (fio `trim`, a trace's discard).
    Trim,
    /// NVMe Flush (fio `fsync`/`fdatasync`, a trace's sync); no data.
    Flush,
}

impl Op {
    /// Lower-case name (`read`, `write`, `trim`, `flush`).
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
            Op::Flush => "flush",
        }
    }
}

/// Trim patterns (fio `rw=trim|randtrim|trimwrite`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TrimMode {
    /// No trims.
    #[default]
    None,
    /// Every I/O is a trim (`rw=trim`, sequential; `rw=randtrim`, random):
    /// the write direction's offsets and the trim block size.
    Only,
    /// `rw=trimwrite`: each block is trimmed, then written (sequential).
    TrimWrite,
}

/// How a rate-limited job spaces its I/Os (`rate_process=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RateProcess {
    /// Evenly spaced (fio's default).
    #[default]
    Linear,
    /// Exponentially distributed gaps with the same mean (a Poisson process).
    Poisson,
}

/// Direction mix and access order of a job (fio `rw=`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RwPattern {
    /// Random (true) or sequential (false) offsets.
    pub random: bool,
    /// Percentage of reads, 0..=100 (`read`=100, `write`=0, `rw`/`randrw` = `rwmixread`).
    pub read_pct: u32,
}

/// One fio job, after `[global]` defaults are applied (before `numjobs` expansion).
#[derive(Debug, Clone, PartialEq)]
pub struct JobSpec {
    /// Section name.
    pub name: String,
    /// `rw=` / `readwrite=` with `rwmixread=` / `rwmixwrite=` applied.
    pub rw: RwPattern,
    /// Block size in bytes (`bs=`; default 4096). When [`JobSpec::block_sizes`]
    /// is set, the largest size a write of this job can have (a read, for a
    /// read-only job): the size the drive checks against its write buffer.
    pub bs: u64,
    /// Per-direction block sizes `[read, write]` (`bs=r,w`, `bsrange=`,
    /// `bssplit=`); `None` = every I/O is `bs` bytes.
    pub block_sizes: Option<[BlockSize; 2]>,
    /// Alignment of random offsets in bytes `[read, write]` (`blockalign=`);
    /// `None` = the direction's smallest block size. Setting it turns the
    /// random map off, as in fio.
    pub blockalign: [Option<u64>; 2],
    /// Bytes skipped after each I/O of a sequential pattern (`rw=write:4k`);
    /// negative steps back (`rw=read:-8k` with 4 KiB blocks reads backwards).
    pub seq_skip: i64,
    /// I/Os per new random offset (`rw=randread:8`; default 1).
    pub offset_repeat: u32,
    /// What the I/Os after a new random offset do when `offset_repeat > 1`
    /// (`rw_sequencer=`).
    pub rw_sequencer: Sequencer,
    /// Percentage of random I/Os `[read, write]` of a random pattern
    /// (`percentage_random=`; default 100); the rest continue sequentially.
    pub percentage_random: [u32; 2],
    /// Random offset distribution `[read, write]` (`random_distribution=`).
    pub random_distribution: [Distribution; 2],
    /// Same random sequence every run (`randrepeat=`; default true). When
    /// false and no `randseed` is given, the run seed is mixed into the job
    /// seed once more, so the job's offsets differ from a `randrepeat=1` run.
    pub randrepeat: bool,
    /// Queue depth (`iodepth=`; default 1).
    pub iodepth: u32,
    /// Number of clones (`numjobs=`; default 1).
    pub numjobs: u32,
    /// Region size in bytes (`size=`); `None` = the whole device from `offset`.
    pub size: Option<u64>,
    /// Region start in bytes (`offset=`; default 0).
    pub offset: u64,
    /// Bytes to transfer (`io_size=`/`io_limit=`); `None` = `size`.
    pub io_size: Option<u64>,
    /// I/O count limit (`number_ios=`).
    pub number_ios: Option<u64>,
    /// Time limit (`runtime=`/`timeout=`; fio default unit seconds).
    pub runtime: Option<Time>,
    /// Keep going until `runtime` even after `io_size` is done (`time_based`).
    pub time_based: bool,
    /// Warm-up time excluded from statistics (`ramp_time=`).
    pub ramp_time: Time,
    /// Seed for this job's offsets (`randseed=`).
    pub randseed: Option<u64>,
    /// Do not track which blocks were already hit in a pass (`norandommap`).
    pub norandommap: bool,
    /// NVMe weighted-round-robin class of this job's submission queues
    /// (`ssdlab_sq_priority=urgent|high|medium|low`, an ssdlab option fio ignores).
    pub sq_priority: SqPriority,
    /// Seed 001 locality pattern (`ssdlab_pattern=` and its parameters).
    pub locality: Option<LocalitySpec>,
    /// Trim pattern (`rw=trim|randtrim|trimwrite`). With [`TrimMode::Only`]
    /// `rw.read_pct` is 0 and the write direction's offsets are trimmed.
    pub trim: TrimMode,
    /// Trim size in bytes (third field of `bs=`; default 4096).
    pub trim_bs: u64,
    /// Issue an NVMe Flush after every N writes (`fsync=N`, `fdatasync=N`; 0 = never).
    pub fsync: u32,
    /// Issue one NVMe Flush when the job's I/O is done (`end_fsync=1`).
    pub end_fsync: bool,
    /// Direct I/O (`direct=1`, `buffered=0`, and ssdlab's default: it
    /// simulates the drive); `false` goes through the host page cache
    /// (`direct=0` / `buffered=1` given explicitly).
    pub direct: bool,
    /// Bandwidth caps `[read, write, trim]` in bytes per second (`rate=`).
    pub rate: [Option<u64>; 3],
    /// I/O-rate caps `[read, write, trim]` in I/Os per second (`rate_iops=`).
    pub rate_iops: [Option<u64>; 3],
    /// Spacing of rate-limited I/Os (`rate_process=`).
    pub rate_process: RateProcess,
    /// Idle time after every `thinktime_blocks` I/Os, once those in flight
    /// have completed (`thinktime=`; fio's default unit is microseconds).
    pub thinktime: Time,
    /// I/Os between think times (`thinktime_blocks=`; default 1).
    pub thinktime_blocks: u32,
    /// Count `thinktime_blocks` at issue (`thinktime_blocks_type=issue`)
    /// rather than at completion (`complete`, the default).
    pub thinktime_blocks_issue: bool,
    /// Also think after this much I/O time since the last think (`thinktime_iotime=`; 0 = off).
    pub thinktime_iotime: Time,
    /// Start only when every job before this one in the file has finished (`stonewall`).
    pub stonewall: bool,
    /// Start only when the named (earlier) job has finished (`wait_for=`).
    pub wait_for: Option<String>,
    /// Reporting group (fio `groupid`): 0 for the first, +1 at each `new_group`/`stonewall` job.
    pub group: u32,
    /// Replay a fio iolog as this job's I/O (`read_iolog=`), instead of generating it.
    pub read_iolog: Option<TraceSpec>,
    /// Passes over the job's I/O (`loops=`; default 1).
    pub loops: u32,
    /// Delay from when the job could start to when it starts (`startdelay=`).
    pub startdelay: Time,
    /// When this job ends, end every other job of its reporting group (`exitall`).
    pub exitall: bool,
    /// `filename=` as written: the drive (or `:`-separated drives) the job
    /// addresses in a system of several drives (`nvme0`, `/dev/nvme0n1`);
    /// a one-drive system has nothing to choose and lists it as ignored.
    pub filename: Option<String>,
    /// fio's steady-state detection (`ss=`, `ss_dur=`, `ss_ramp=`): the job
    /// ends when its criterion holds over the window.
    pub steadystate: Option<SteadyState>,
    /// fio's verify options, if `verify=` (or `verify_pattern=`) is set.
    pub verify: Option<VerifySpec>,
    /// What writes carry when the run keeps data (`--data-store`).
    pub buffer: BufferFill,
    /// Send the data of this job's I/Os peer to peer to (reads) or from
    /// (writes) this endpoint of the system instead of host memory; commands
    /// and completions still go to the host. Set from code (computational
    /// storage), not from job files.
    pub peer: Option<String>,
    /// Its I/Os come from outside the simulation, one request at a time,
    /// each at its arrival (a served NBD connection: [`crate::serve`]). Set
    /// from code, not from job files.
    pub live: bool,
}

/// fio's verify (`verify=`, `verify_pattern=`, `verify_interval=`,
/// `do_verify=`, `verify_only=`, `verify_backlog=`, `verify_backlog_batch=`,
/// `verify_fatal=`): each write carries a header and checksum (or a pattern)
/// that reads check on the data the simulated drive returns. Needs the
/// functional data store (`--data-store`).
#[derive(Debug, Clone, PartialEq)]
pub struct VerifySpec {
    /// What is checked.
    pub method: VerifyMethod,
    /// Bytes per header (`verify_interval`; `None` = each write's size).
    pub interval: Option<u64>,
    /// `verify_pattern` bytes (the data after the header, or the whole
    /// block with `verify=pattern`).
    pub pattern: Option<Vec<u8>>,
    /// Verify what a write job wrote once it is done (`do_verify`; default on).
    pub do_verify: bool,
    /// Write nothing; verify what an earlier run wrote (`verify_only`).
    pub verify_only: bool,
    /// Verify after every this many written blocks (`verify_backlog`; 0 = at the end).
    pub backlog: u64,
    /// Blocks verified each time (`verify_backlog_batch`; 0 = `backlog`).
    pub batch: u64,
    /// Stop the job at the first failure (`verify_fatal`).
    pub fatal: bool,
}

/// fio's verify methods (`verify=`): a checksum of the block stored in its
/// header, the header alone (`meta`), or a pattern.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum VerifyMethod {
    Md5,
    Crc64,
    Crc32,
    Crc32c,
    Crc16,
    Crc7,
    Sha1,
    Sha256,
    Sha512,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    Xxhash,
    /// Header only (offset, write number, header checksum).
    Meta,
    /// The pattern alone, no header (`verify=pattern`).
    Pattern,
    /// The pattern after a header (`verify=pattern_hdr`).
    PatternHdr,
    /// Pretend to verify (`verify=null`): reads are issued, nothing is checked.
    Null,
}

impl VerifyMethod {
    /// fio's name for it.
    pub fn name(self) -> &'static str {
        use VerifyMethod::*;
        match self {
            Md5 => "md5",
            Crc64 => "crc64",
            Crc32 => "crc32",
            Crc32c => "crc32c",
            Crc16 => "crc16",
            Crc7 => "crc7",
            Sha1 => "sha1",
            Sha256 => "sha256",
            Sha512 => "sha512",
            Sha3_224 => "sha3-224",
            Sha3_256 => "sha3-256",
            Sha3_384 => "sha3-384",
            Sha3_512 => "sha3-512",
            Xxhash => "xxhash",
            Meta => "meta",
            Pattern => "pattern",
            PatternHdr => "pattern_hdr",
            Null => "null",
        }
    }
}

/// What a job's writes carry when the run keeps data (`--data-store`) and
/// the job does not verify: fio's default random bytes, `zero_buffers`, or
/// `buffer_pattern`.
#[derive(Debug, Clone, PartialEq)]
pub enum BufferFill {
    /// Pseudo-random bytes (fio's default), from the job's seed.
    Random,
    /// Zeros (`zero_buffers`).
    Zero,
    /// A repeated pattern (`buffer_pattern`).
    Pattern(Vec<u8>),
    /// The bytes of an image that starts at byte `base` of the drive (a
    /// computational-storage run writing its inputs and results); bytes
    /// outside it are zeros. Set from code, not from job files.
    Image {
        /// Drive byte offset of the image's first byte.
        base: u64,
        /// The image.
        data: std::sync::Arc<Vec<u8>>,
    },
}

/// fio's steady-state criterion (`steadystate=`/`ss=` with
/// `steadystate_duration=`/`ss_dur=` and `steadystate_ramp_time=`/`ss_ramp=`),
/// judged as fio does: one sample per `ss_interval` of simulated time (the
/// I/Os and bytes completed in it, per second), over a rolling window of
/// `dur_s` seconds; with `group_reporting` over the whole reporting group,
/// else per job clone.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SteadyState {
    /// Judge IOPS (`iops`, `iops_slope`); else bandwidth (`bw`, `bw_slope`).
    pub iops: bool,
    /// The least-squares slope of the window (`*_slope`); else the largest
    /// deviation of a sample from the window's mean.
    pub slope: bool,
    /// Limit: percent of the window's mean if `pct`, else IOPS or bytes/s
    /// (per second, for a slope).
    pub limit: f64,
    /// The limit is a percentage (`iops:10%`).
    pub pct: bool,
    /// Window length, seconds.
    pub dur_s: u32,
    /// Samples start one interval after this much time from the job's start.
    pub ramp: Time,
    /// Seconds between samples (`ss_interval`; default 1): the window holds
    /// `dur_s / interval_s` samples, each a per-second rate.
    pub interval_s: u32,
}

impl SteadyState {
    /// The criterion as fio prints it (`iops_slope:0.300000%`).
    pub fn name(&self) -> String {
        format!(
            "{}{}:{:.6}{}",
            if self.iops { "iops" } else { "bw" },
            if self.slope { "_slope" } else { "" },
            self.limit as f32,
            if self.pct { "%" } else { "" }
        )
    }
}

/// Seed 001's synthetic locality patterns (ssdlab job options, which fio ignores):
/// `ssdlab_pattern=uniform|hotcold|lru|hotcold_lru|sequential` and its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LocalitySpec {
    /// The pattern (`None`: only parameters were given, which is an error at run time).
    pub pattern: Option<LocalityPattern>,
    /// `ssdlab_hot_space`: share of the region that is hot (default 20 %).
    pub hot_space: Option<f64>,
    /// `ssdlab_hot_access`: share of new references to the hot space (default 80 %).
    pub hot_access: Option<f64>,
    /// `ssdlab_lru_reuse`: probability of re-referencing a recent block (default 50 %).
    pub lru_reuse: Option<f64>,
    /// `ssdlab_lru_mean`: mean LRU stack distance in blocks (default 1000).
    pub lru_mean: Option<f64>,
}

/// Seed 001's five workload patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalityPattern {
    /// Uniformly random.
    Uniform,
    /// Spatial locality: a hot part of the space takes most new references.
    HotCold,
    /// Temporal locality: re-references at LRU stack distances.
    Lru,
    /// Both.
    HotColdLru,
    /// Sequential.
    Sequential,
}

impl LocalitySpec {
    /// (hot space, hot access) when the pattern has spatial locality.
    pub fn hot(&self) -> Option<(f64, f64)> {
        matches!(
            self.pattern,
            Some(LocalityPattern::HotCold | LocalityPattern::HotColdLru)
        )
        .then(|| {
            (
                self.hot_space.unwrap_or(0.2),
                self.hot_access.unwrap_or(0.8),
            )
        })
    }
    /// (reuse probability, mean stack distance) when the pattern has temporal locality.
    pub fn lru(&self) -> Option<(f64, f64)> {
        matches!(
            self.pattern,
            Some(LocalityPattern::Lru | LocalityPattern::HotColdLru)
        )
        .then(|| {
            (
                self.lru_reuse.unwrap_or(0.5),
                self.lru_mean.unwrap_or(1000.0),
            )
        })
    }
    /// Sequential offsets.
    pub fn sequential(&self) -> bool {
        self.pattern == Some(LocalityPattern::Sequential)
    }
    /// A parameter given that the pattern does not use, if any (it would be silently ignored).
    pub fn unused_parameter(&self) -> Option<&'static str> {
        if self.hot().is_none() && self.hot_space.is_some() {
            return Some("ssdlab_hot_space");
        }
        if self.hot().is_none() && self.hot_access.is_some() {
            return Some("ssdlab_hot_access");
        }
        if self.lru().is_none() && self.lru_reuse.is_some() {
            return Some("ssdlab_lru_reuse");
        }
        if self.lru().is_none() && self.lru_mean.is_some() {
            return Some("ssdlab_lru_mean");
        }
        None
    }
}

/// NVMe submission-queue priority class (used by WRR arbitration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SqPriority {
    /// Strict priority over all WRR classes.
    Urgent,
    /// WRR high.
    High,
    /// WRR medium (default).
    #[default]
    Medium,
    /// WRR low.
    Low,
}

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec {
            name: "job".into(),
            rw: RwPattern {
                random: false,
                read_pct: 100,
            },
            bs: 4096,
            block_sizes: None,
            blockalign: [None, None],
            seq_skip: 0,
            offset_repeat: 1,
            rw_sequencer: Sequencer::Sequential,
            percentage_random: [100, 100],
            random_distribution: [Distribution::Uniform, Distribution::Uniform],
            randrepeat: true,
            iodepth: 1,
            numjobs: 1,
            size: None,
            offset: 0,
            io_size: None,
            number_ios: None,
            runtime: None,
            time_based: false,
            ramp_time: Time::ZERO,
            randseed: None,
            norandommap: false,
            sq_priority: SqPriority::Medium,
            locality: None,
            trim: TrimMode::None,
            trim_bs: 4096,
            fsync: 0,
            end_fsync: false,
            direct: true,
            rate: [None; 3],
            rate_iops: [None; 3],
            rate_process: RateProcess::Linear,
            thinktime: Time::ZERO,
            thinktime_blocks: 1,
            thinktime_blocks_issue: false,
            thinktime_iotime: Time::ZERO,
            stonewall: false,
            wait_for: None,
            group: 0,
            read_iolog: None,
            loops: 1,
            startdelay: Time::ZERO,
            exitall: false,
            filename: None,
            steadystate: None,
            verify: None,
            buffer: BufferFill::Random,
            peer: None,
            live: false,
        }
    }
}

/// Block sizes of one direction.
#[derive(Debug, Clone, PartialEq)]
pub enum BlockSize {
    /// Every I/O has this many bytes (`bs=`).
    Fixed(u64),
    /// Uniformly one of the multiples of `min` in `[min, max]` bytes (`bsrange=`).
    Range {
        /// Smallest size in bytes.
        min: u64,
        /// Largest size in bytes.
        max: u64,
    },
    /// Weighted sizes (`bssplit=`): `(bytes, percent)`, percentages summing to 100.
    Split(Vec<(u64, f64)>),
}

impl BlockSize {
    /// Smallest size in bytes.
    pub fn min(&self) -> u64 {
        match self {
            BlockSize::Fixed(b) => *b,
            BlockSize::Range { min, .. } => *min,
            BlockSize::Split(v) => v.iter().map(|e| e.0).min().unwrap_or(0),
        }
    }
    /// Largest size in bytes that can be issued.
    pub fn max(&self) -> u64 {
        match self {
            BlockSize::Fixed(b) => *b,
            BlockSize::Range { min, max } => max / min.max(&1) * min,
            BlockSize::Split(v) => v.iter().map(|e| e.0).max().unwrap_or(0),
        }
    }
    /// The fio option this choice comes from.
    pub fn option(&self) -> &'static str {
        match self {
            BlockSize::Fixed(_) => "bs",
            BlockSize::Range { .. } => "bsrange",
            BlockSize::Split(_) => "bssplit",
        }
    }
}

/// Distribution of random offsets (`random_distribution=`).
///
/// For `Zipf`, `Pareto` and `Normal` a rank is drawn, mapped to a block by a
/// fixed pseudo-random bijection (so the hot blocks are scattered over the
/// region, as fio hashes them), then rotated by `center` × region.
#[derive(Debug, Clone, PartialEq)]
pub enum Distribution {
    /// Uniform (`random`), the default.
    Uniform,
    /// Zipf with exponent `theta` (`zipf:θ[:center]`).
    Zipf {
        /// Skew exponent (> 0, != 1 as in fio).
        theta: f64,
        /// Rotation of the hot spot, 0.0..=1.0 of the region.
        center: Option<f64>,
    },
    /// Pareto / self-similar with parameter `h` (`pareto:h[:center]`): a
    /// fraction `1-h` of the accesses goes to the hottest fraction `h` of blocks.
    Pareto {
        /// Parameter, 0 < h < 1.
        h: f64,
        /// Rotation of the hot spot, 0.0..=1.0 of the region.
        center: Option<f64>,
    },
    /// Normal with standard deviation `dev` percent of the region (`normal:dev[:center]`).
    Normal {
        /// Deviation as a percentage of the region, 0 < dev <= 100.
        dev: f64,
        /// Rotation of the hot spot, 0.0..=1.0 of the region.
        center: Option<f64>,
    },
    /// Zones as `(percent of accesses, percent of the region)` in region order (`zoned:`).
    Zoned(Vec<(f64, f64)>),
    /// Zones as `(percent of accesses, bytes)` in region order (`zoned_abs:`).
    ZonedAbs(Vec<(f64, u64)>),
}

/// How the I/Os after a new random offset are placed (`rw_sequencer=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sequencer {
    /// Each continues where the previous one ended.
    Sequential,
    /// Each reuses the same offset.
    Identical,
}

/// An option accepted but without meaning in a simulator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IgnoredOption {
    /// Option name.
    pub option: String,
    /// Why it has no effect.
    pub reason: String,
}

/// A parsed workload: jobs and the options that were ignored (listed once).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Workload {
    /// Jobs in file order.
    pub jobs: Vec<JobSpec>,
    /// Ignored options, each listed once.
    pub ignored: Vec<IgnoredOption>,
    /// A block trace to replay (on its own queue pair, besides any jobs).
    pub trace: Option<TraceSpec>,
    /// On a system of several drives: which trace device (as in
    /// [`trace::TraceRecord::device`]) replays on which drive, by name. Each
    /// pair gets its own queue pair, fed with that device's records only.
    pub trace_drives: Vec<(String, String)>,
}

/// How a trace is replayed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Replay {
    /// Open loop: each request is submitted at its trace time divided by `speed`.
    Open {
        /// Speed-up factor (2.0 replays twice as fast).
        speed: f64,
    },
    /// Closed loop: as fast as `iodepth` outstanding requests allow, in trace order.
    Closed {
        /// Queue depth.
        iodepth: u32,
    },
}

/// A block trace to replay.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSpec {
    /// Trace file.
    pub path: std::path::PathBuf,
    /// Format, or None to detect.
    pub format: Option<trace::TraceFormat>,
    /// Replay mode.
    pub replay: Replay,
    /// Device and time-window selection.
    pub filter: trace::TraceFilter,
    /// Mapping of trace offsets onto the drive.
    pub remap: trace::Remap,
}

/// A workload input error naming file, line and option.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadError {
    /// File name.
    pub file: String,
    /// 1-based line number (0 if not tied to a line).
    pub line: usize,
    /// Option or section concerned, if any.
    pub option: Option<String>,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: ", self.file, self.line)?;
        } else {
            write!(f, "{}: ", self.file)?;
        }
        if let Some(o) = &self.option {
            write!(f, "option '{o}': ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for WorkloadError {}

impl Workload {
    /// The built-in default job: 4 KiB random read, QD32, 1 GiB of I/O per run... see [`Workload::default_job`].
    pub fn default_job() -> Workload {
        Workload {
            jobs: vec![JobSpec {
                name: "randread-4k-qd32".into(),
                rw: RwPattern {
                    random: true,
                    read_pct: 100,
                },
                bs: 4096,
                iodepth: 32,
                number_ios: Some(1_000_000),
                ..JobSpec::default()
            }],
            ignored: Vec::new(),
            trace: None,
            trace_drives: Vec::new(),
        }
    }
}
