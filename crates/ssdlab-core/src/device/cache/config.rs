//! The `[cache]` and `[dram]` sections of a device file: [`CacheFile`] and
//! [`DramFile`] as written, [`CacheConfig`] resolved, and their checks.

use crate::config::{d_str, Collector};
use crate::units::{parse_energy, Bandwidth, Bytes, Energy, Time};
use serde::{Deserialize, Serialize};

/// `[dram]`: controller DRAM as a shared resource.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DramFile {
    /// Sustained bandwidth.
    #[serde(default = "d_dram_bw")]
    pub bandwidth: String,
    /// Access latency added to every transfer.
    #[serde(default = "d_dram_lat")]
    pub latency: String,
}
fn d_dram_bw() -> String {
    d_str("12.8GB/s")
}
fn d_dram_lat() -> String {
    d_str("100ns")
}
impl Default for DramFile {
    fn default() -> Self {
        DramFile {
            bandwidth: d_dram_bw(),
            latency: d_dram_lat(),
        }
    }
}

/// `[cache]`: data cache and write buffer in controller DRAM.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheFile {
    /// Write buffer capacity (at least one program unit).
    #[serde(default = "d_wbuf")]
    pub write_buffer: String,
    /// Read cache capacity (0 = none).
    #[serde(default = "d_rcache")]
    pub read_cache: String,
    /// Replacement policy: `"lru"` or `"fifo"`.
    #[serde(default = "d_policy")]
    pub policy: String,
    /// Power-loss protection: capacitors hold up the write buffer, so an
    /// NVMe Flush completes at once. Without it a flush waits until the
    /// buffered writes are programmed (default false).
    #[serde(default)]
    pub power_loss_protection: bool,
    /// Energy the power-loss capacitors hold for the flush, e.g. `"40mJ"`
    /// (needs `power_loss_protection` and a `[power]` model). A flush that
    /// needs more saves the oldest data it can and loses the rest. Default:
    /// enough for any flush.
    #[serde(default)]
    pub capacitor_energy: Option<String>,
    /// What the write buffer holds and evicts: `"unit"` (mapping units,
    /// programmed as soon as a program unit's worth is dirty; the default)
    /// or `"block"` (block or hybrid mapping: whole logical blocks, held
    /// until the buffer is full, the least recently written leaving first;
    /// seed 001's block-mapped D-log buffer).
    #[serde(default = "d_wbuf_unit")]
    pub write_buffer_unit: String,
}
fn d_wbuf_unit() -> String {
    d_str("unit")
}
fn d_wbuf() -> String {
    d_str("16MiB")
}
fn d_rcache() -> String {
    d_str("0B")
}
fn d_policy() -> String {
    d_str("lru")
}
impl Default for CacheFile {
    fn default() -> Self {
        CacheFile {
            write_buffer: d_wbuf(),
            read_cache: d_rcache(),
            policy: d_policy(),
            power_loss_protection: false,
            capacitor_energy: None,
            write_buffer_unit: d_wbuf_unit(),
        }
    }
}

/// What the write buffer holds and evicts (`cache.write_buffer_unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BufferUnit {
    /// Mapping units, programmed as soon as a program unit's worth is dirty.
    #[default]
    Unit,
    /// Whole logical blocks of block or hybrid mapping, evicted least
    /// recently written first when the buffer is full (seed 001).
    Block,
}

impl BufferUnit {
    fn is_unit(&self) -> bool {
        *self == BufferUnit::Unit
    }
}

/// Cache replacement policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CachePolicy {
    /// Least recently used.
    Lru,
    /// First in, first out.
    Fifo,
}

/// Resolved cache parameters.
#[derive(Debug, Clone, Serialize)]
pub struct CacheConfig {
    /// Write buffer bytes.
    pub write_buffer: Bytes,
    /// Read cache bytes.
    pub read_cache: Bytes,
    /// Replacement policy.
    pub policy: CachePolicy,
    /// The write buffer survives power loss (flushes complete at once).
    pub power_loss_protection: bool,
    /// Energy the capacitors hold for the power-loss flush (`None`: enough
    /// for any flush).
    pub capacitor_energy: Option<Energy>,
    /// What the write buffer holds and evicts.
    #[serde(skip_serializing_if = "BufferUnit::is_unit")]
    pub write_buffer_unit: BufferUnit,
    /// DRAM bandwidth.
    pub dram_bandwidth: Bandwidth,
    /// DRAM latency.
    pub dram_latency: Time,
}

impl CacheFile {
    /// Resolve and check `[cache]` with the controller DRAM of `[dram]`,
    /// reporting problems to `c`.
    pub(crate) fn resolve(&self, dram: &DramFile, c: &mut Collector) -> CacheConfig {
        let policy = match self.policy.as_str() {
            "lru" => CachePolicy::Lru,
            "fifo" => CachePolicy::Fifo,
            o => {
                c.push(
                    "cache.policy",
                    format!("'{o}' is not a cache policy (expected \"lru\" or \"fifo\")"),
                );
                CachePolicy::Lru
            }
        };
        let capacitor_energy = self.capacitor_energy.as_deref().and_then(|v| {
            const KEY: &str = "cache.capacitor_energy";
            match parse_energy(v) {
                Ok(j) if j.is_finite() && j > 0.0 => {
                    if !self.power_loss_protection {
                        c.push(KEY, "capacitors hold energy only with power-loss protection: set cache.power_loss_protection = true or remove the key");
                    }
                    Some(Energy(j))
                }
                Ok(_) => {
                    c.push(KEY, format!("'{v}': expected an energy above 0, such as \"40mJ\""));
                    None
                }
                Err(e) => {
                    c.push(KEY, e.0);
                    None
                }
            }
        });
        let write_buffer_unit = match self.write_buffer_unit.as_str() {
            "unit" => BufferUnit::Unit,
            "block" => BufferUnit::Block,
            o => {
                c.push(
                    "cache.write_buffer_unit",
                    format!("'{o}' is not a write-buffer unit (expected \"unit\" or \"block\")"),
                );
                BufferUnit::Unit
            }
        };
        CacheConfig {
            capacitor_energy,
            write_buffer_unit,
            write_buffer: c.bytes("cache.write_buffer", &self.write_buffer),
            read_cache: c.bytes("cache.read_cache", &self.read_cache),
            policy,
            power_loss_protection: self.power_loss_protection,
            dram_bandwidth: c.bw("dram.bandwidth", &dram.bandwidth),
            dram_latency: c.time("dram.latency", &dram.latency),
        }
    }
}
