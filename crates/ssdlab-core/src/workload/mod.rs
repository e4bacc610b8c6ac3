//! Workloads: fio job files (core options) and the per-job I/O generators.
//!
//! A [`Workload`] is a list of [`JobSpec`]s; each job (after `numjobs`
//! expansion) drives its own NVMe submission/completion queue pair.

pub mod fio;
pub mod gen;
pub mod trace;

use crate::units::Time;
use std::fmt;

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
    /// Block size in bytes (`bs=`; default 4096).
    pub bs: u64,
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
        }
    }
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
        }
    }
}
