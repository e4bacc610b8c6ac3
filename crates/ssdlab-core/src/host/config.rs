//! The `[host]` section of a device or system file: [`HostFile`] as
//! written, [`HostConfig`] resolved, and its checks.
//!
//! The driver costs apply to every I/O. The rest describes the host's CPU
//! and memory for buffered I/O (fio `direct=0` / `buffered=1`) through the
//! page-cache model (docs/models/page-cache.md): without `memory` a
//! buffered job is refused.

use crate::config::{config_frequency, zero_time, Collector};
use crate::units::{Bandwidth, Bytes, Time};
use serde::{Deserialize, Serialize};

fn d_share() -> String {
    "75%".into()
}
fn d_copy() -> String {
    "8GB/s".into()
}
fn d_clock() -> String {
    "3GHz".into()
}
fn d_page_cycles() -> u32 {
    2500
}
fn d_ra() -> String {
    "128KiB".into()
}
fn d_dirty() -> String {
    "20%".into()
}
fn d_dirty_bg() -> String {
    "10%".into()
}
fn d_wb_depth() -> u32 {
    32
}
fn d_expire() -> String {
    "30s".into()
}
fn d_wb_interval() -> String {
    "5s".into()
}
fn d_zero_bytes() -> String {
    "0B".into()
}
fn d_throttle() -> String {
    "proportional".into()
}

/// Largest `host.cores` accepted (each core is a modelled CPU).
pub const MAX_HOST_CORES: u32 = 4096;
/// Largest `host.page_cycles` accepted.
pub const MAX_PAGE_CYCLES: u32 = 10_000_000;
/// Largest `host.writeback_depth` accepted.
pub const MAX_WRITEBACK_DEPTH: u32 = 65536;

/// `[host]`: the host driver's per-I/O software cost, and the CPU and
/// memory buffered I/O uses.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostFile {
    /// Time for the driver to build an SQE and ring the doorbell (per command).
    #[serde(default = "zero_time")]
    pub submit_overhead: String,
    /// Time from the interrupt reaching the host to the I/O being reaped (per command).
    #[serde(default = "zero_time")]
    pub complete_overhead: String,
    /// Host memory; "0B" (the default): none modelled (buffered I/O is refused).
    #[serde(default = "d_zero_bytes")]
    pub memory: String,
    /// Share of `memory` the page cache may hold (percent).
    #[serde(default = "d_share")]
    pub page_cache_share: String,
    /// Host CPU cores; 0: each job thread has a core of its own.
    #[serde(default)]
    pub cores: u32,
    /// Core clock.
    #[serde(default = "d_clock")]
    pub clock: String,
    /// One thread's copy rate between user buffers and cached pages.
    #[serde(default = "d_copy")]
    pub copy_bandwidth: String,
    /// CPU cycles per 4 KiB page added to or dropped from the cache
    /// (allocation, index insert, LRU, reclaim).
    #[serde(default = "d_page_cycles")]
    pub page_cycles: u32,
    /// Largest readahead window (Linux `read_ahead_kb`).
    #[serde(default = "d_ra")]
    pub readahead: String,
    /// Largest request the block layer sends (Linux `max_sectors_kb`).
    #[serde(default = "d_ra")]
    pub max_request: String,
    /// Dirty share of the page cache at which writers are throttled
    /// (Linux `vm.dirty_ratio`).
    #[serde(default = "d_dirty")]
    pub dirty_ratio: String,
    /// Dirty share at which background writeback starts
    /// (`vm.dirty_background_ratio`).
    #[serde(default = "d_dirty_bg")]
    pub dirty_background_ratio: String,
    /// Writeback requests in flight per drive.
    #[serde(default = "d_wb_depth")]
    pub writeback_depth: u32,
    /// Age at which dirty data is written back whatever the thresholds
    /// (Linux `vm.dirty_expire_centisecs`).
    #[serde(default = "d_expire")]
    pub dirty_expire: String,
    /// How often the flusher looks for expired dirty data
    /// (`vm.dirty_writeback_centisecs`).
    #[serde(default = "d_wb_interval")]
    pub dirty_writeback_interval: String,
    /// How writers are held back between the background and the hard
    /// limit: "proportional" (Linux's `balance_dirty_pages` since 3.2:
    /// paused to the writeback rate, more as dirty data nears the limit) or
    /// "hard" (they run free until `dirty_ratio`, then wait under it).
    #[serde(default = "d_throttle")]
    pub dirty_throttle: String,
}

impl Default for HostFile {
    fn default() -> Self {
        HostFile {
            submit_overhead: zero_time(),
            complete_overhead: zero_time(),
            memory: d_zero_bytes(),
            page_cache_share: d_share(),
            cores: 0,
            clock: d_clock(),
            copy_bandwidth: d_copy(),
            page_cycles: d_page_cycles(),
            readahead: d_ra(),
            max_request: d_ra(),
            dirty_ratio: d_dirty(),
            dirty_background_ratio: d_dirty_bg(),
            writeback_depth: d_wb_depth(),
            dirty_expire: d_expire(),
            dirty_writeback_interval: d_wb_interval(),
            dirty_throttle: d_throttle(),
        }
    }
}

/// How buffered writers are held back as dirty data grows (`host.dirty_throttle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DirtyThrottle {
    /// Linux's IO-less dirty throttling (`mm/page-writeback.c`): above the
    /// midpoint of the background and hard limits a writer pauses after
    /// each write, at a rate that follows the drive's writeback bandwidth
    /// and falls to zero at the hard limit.
    Proportional,
    /// Writers run free until the hard limit, then wait until writeback
    /// brings dirty data back under it.
    Hard,
}

/// Resolved host parameters.
#[derive(Debug, Clone, Serialize)]
pub struct HostConfig {
    /// Submit cost.
    pub submit_overhead: Time,
    /// Completion cost.
    pub complete_overhead: Time,
    /// Host memory; zero: none modelled.
    pub memory: Bytes,
    /// Share of `memory` for the page cache (0-1).
    pub page_cache_share: f64,
    /// Cores; 0: one per job thread.
    pub cores: u32,
    /// Clock (Hz).
    pub clock_hz: f64,
    /// Copy rate of one thread.
    pub copy_bandwidth: Bandwidth,
    /// CPU cycles per page added to or dropped from the cache.
    pub page_cycles: u32,
    /// Largest readahead window.
    pub readahead: Bytes,
    /// Largest block request.
    pub max_request: Bytes,
    /// Dirty share at which writers wait (0-1).
    pub dirty_ratio: f64,
    /// Dirty share at which writeback starts (0-1).
    pub dirty_background_ratio: f64,
    /// Writeback requests in flight per drive.
    pub writeback_depth: u32,
    /// Age at which dirty data is written back.
    pub dirty_expire: Time,
    /// Flusher wake-up period.
    pub dirty_writeback_interval: Time,
    /// How writers are held back between the thresholds.
    pub dirty_throttle: DirtyThrottle,
}

impl HostConfig {
    /// Driver costs only (no host memory: direct I/O).
    pub fn driver_only(submit_overhead: Time, complete_overhead: Time) -> HostConfig {
        let mut c = Collector {
            problems: Vec::new(),
        };
        let mut h = HostFile::default().resolve(&mut c);
        h.submit_overhead = submit_overhead;
        h.complete_overhead = complete_overhead;
        h
    }

    /// Time the host CPU spends per page added to or dropped from the cache.
    pub fn page_time(&self) -> Time {
        Time::from_secs_f64(self.page_cycles as f64 / self.clock_hz.max(1.0))
    }
}

impl HostFile {
    /// Resolve and check `[host]`, reporting problems to `c`.
    pub(crate) fn resolve(&self, c: &mut Collector) -> HostConfig {
        let share = c.pct("host.page_cache_share", &self.page_cache_share);
        let dirty = c.pct("host.dirty_ratio", &self.dirty_ratio);
        let dirty_bg = c.pct("host.dirty_background_ratio", &self.dirty_background_ratio);
        let clock_hz = config_frequency(&self.clock).unwrap_or_else(|e| {
            c.push("host.clock", e.0);
            1.0
        });
        let readahead = c.bytes("host.readahead", &self.readahead);
        let max_request = c.bytes("host.max_request", &self.max_request);
        if max_request.0 < 4096 && !self.max_request.trim().is_empty() {
            c.push(
                "host.max_request",
                format!("{max_request} is below one 4 KiB page"),
            );
        }
        if !(share > 0.0 && share <= 1.0) {
            c.push("host.page_cache_share", "must be above 0% and at most 100%");
        }
        if !(dirty > 0.0 && dirty <= 1.0) {
            c.push("host.dirty_ratio", "must be above 0% and at most 100%");
        }
        if !(dirty_bg > 0.0 && dirty_bg <= dirty) {
            c.push(
                "host.dirty_background_ratio",
                format!(
                    "must be above 0% and at most host.dirty_ratio ({})",
                    self.dirty_ratio
                ),
            );
        }
        if self.writeback_depth == 0 {
            c.push("host.writeback_depth", "must be at least 1");
        }
        c.at_most(
            "host.writeback_depth",
            self.writeback_depth as u64,
            MAX_WRITEBACK_DEPTH as u64,
            "requests in flight per drive; an NVMe queue holds at most 65536",
        );
        c.at_most(
            "host.cores",
            self.cores as u64,
            MAX_HOST_CORES as u64,
            "host CPU cores; 0 gives each job thread a core of its own",
        );
        c.at_most(
            "host.page_cycles",
            self.page_cycles as u64,
            MAX_PAGE_CYCLES as u64,
            "CPU cycles per 4 KiB page: 10 ms at 1 GHz",
        );
        let dirty_expire = c.time("host.dirty_expire", &self.dirty_expire);
        let interval = c.time(
            "host.dirty_writeback_interval",
            &self.dirty_writeback_interval,
        );
        if !c.has("host.dirty_writeback_interval") && interval < Time::us(1) {
            c.push(
                "host.dirty_writeback_interval",
                "must be at least 1us (the flusher's wake-up period)",
            );
        }
        let dirty_throttle = match self.dirty_throttle.trim() {
            "proportional" => DirtyThrottle::Proportional,
            "hard" => DirtyThrottle::Hard,
            other => {
                c.push(
                    "host.dirty_throttle",
                    format!("\"{other}\": expected \"proportional\" or \"hard\""),
                );
                DirtyThrottle::Proportional
            }
        };
        HostConfig {
            submit_overhead: c.time("host.submit_overhead", &self.submit_overhead),
            complete_overhead: c.time("host.complete_overhead", &self.complete_overhead),
            memory: c.bytes("host.memory", &self.memory),
            page_cache_share: share,
            cores: self.cores,
            clock_hz,
            copy_bandwidth: c.bw("host.copy_bandwidth", &self.copy_bandwidth),
            page_cycles: self.page_cycles,
            readahead,
            max_request,
            dirty_ratio: dirty,
            dirty_background_ratio: dirty_bg,
            writeback_depth: self.writeback_depth,
            dirty_expire,
            dirty_writeback_interval: interval,
            dirty_throttle,
        }
    }
}
