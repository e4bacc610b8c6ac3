//! The `[firmware]` section of a device file: [`FirmwareFile`] as written,
//! [`FirmwareConfig`] resolved, and its checks.

use crate::config::{zero_time, Collector};
use crate::units::Time;
use serde::{Deserialize, Serialize};

/// `[firmware]`: service time of each firmware stage (zero by default).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirmwareFile {
    /// (1) fetch: per command.
    #[serde(default = "zero_time")]
    pub fetch: String,
    /// (2) parse/split: per command.
    #[serde(default = "zero_time")]
    pub parse: String,
    /// (3) data-cache lookup: per flash transaction (mapping unit).
    #[serde(default = "zero_time")]
    pub cache_lookup: String,
    /// (4) logical-to-physical translation: per flash transaction.
    #[serde(default = "zero_time")]
    pub translate: String,
    /// (5) flash command issue: per flash transaction.
    #[serde(default = "zero_time")]
    pub issue: String,
    /// (7) completion: per command.
    #[serde(default = "zero_time")]
    pub complete: String,
}
impl Default for FirmwareFile {
    fn default() -> Self {
        FirmwareFile {
            fetch: zero_time(),
            parse: zero_time(),
            cache_lookup: zero_time(),
            translate: zero_time(),
            issue: zero_time(),
            complete: zero_time(),
        }
    }
}

/// Resolved firmware stage service times.
#[derive(Debug, Clone, Serialize)]
pub struct FirmwareConfig {
    /// Fetch (per command).
    pub fetch: Time,
    /// Parse/split (per command).
    pub parse: Time,
    /// Cache lookup (per transaction).
    pub cache_lookup: Time,
    /// Translate (per transaction).
    pub translate: Time,
    /// Issue (per transaction).
    pub issue: Time,
    /// Complete (per command).
    pub complete: Time,
}

impl FirmwareFile {
    /// Resolve and check `[firmware]`, reporting problems to `c`.
    pub(crate) fn resolve(&self, c: &mut Collector) -> FirmwareConfig {
        let f = self;
        FirmwareConfig {
            fetch: c.time("firmware.fetch", &f.fetch),
            parse: c.time("firmware.parse", &f.parse),
            cache_lookup: c.time("firmware.cache_lookup", &f.cache_lookup),
            translate: c.time("firmware.translate", &f.translate),
            issue: c.time("firmware.issue", &f.issue),
            complete: c.time("firmware.complete", &f.complete),
        }
    }
}
