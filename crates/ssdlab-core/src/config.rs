//! Device configuration: TOML device files and shipped presets.
//!
//! A device file is read in two steps. [`DeviceFile`] mirrors the TOML with
//! every value as written (unit strings such as `"45us"`), rejecting unknown
//! keys (`deny_unknown_fields`). [`DeviceFile::resolve`] then checks every
//! value and the relations between them and returns a typed [`Device`] or
//! *every* problem found, each with its key path (`nand.t_read[1]`).
//!
//! Each section lives next to the stage it configures, as that stage's
//! `config` module: its `XFile` (as written, with its defaults), its resolved
//! `XConfig` and the `resolve` that checks it (`device/nvme/config.rs`,
//! `device/{firmware,cache,ftl,nand,flash,backend}/config.rs`,
//! `host/config.rs`; `[pcie]` in `fabric/pcie/config.rs`). This file keeps
//! what several sections share: the `Collector` of problems, [`DeviceFile`]
//! and [`Device`], the order in which sections are resolved, the checks
//! across sections (geometry), TOML error keys, and the presets. Every
//! section type is re-exported here (`crate::config::NandConfig`).

use crate::units::{
    parse_bandwidth, parse_bytes, parse_percent, parse_time, Bandwidth, Bytes, Time,
};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// One problem in a device description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    /// Dotted key path, e.g. `nand.t_read[1]`.
    pub key: String,
    /// What is wrong and what was expected.
    pub message: String,
}

/// All problems found in a device description, with the file it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// File name (or `preset NAME`).
    pub source: String,
    /// Every problem found.
    pub problems: Vec<ConfigProblem>,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: {} problem{}",
            self.source,
            self.problems.len(),
            if self.problems.len() == 1 { "" } else { "s" }
        )?;
        for p in &self.problems {
            writeln!(f, "  {}: {}", p.key, p.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigError {}

// Each section of a device file lives next to the stage it configures (its
// `XFile` as written, its resolved `XConfig` and its checks); they are
// re-exported here, so `crate::config::NandConfig` and the like keep working.

pub use crate::device::backend::config::{Backend, BackendFile};
pub use crate::device::cache::config::{BufferUnit, CacheConfig, CacheFile, CachePolicy, DramFile};
pub use crate::device::firmware::config::{FirmwareConfig, FirmwareFile};
pub use crate::device::flash::config::{ExecutionModel, FlashConfig, FlashFile, OpKind};
pub use crate::device::ftl::config::{
    FtlConfig, FtlFile, GcPolicy, MappingScheme, SlcWhenFull, StripeDim, WearLeveling,
};
pub use crate::device::nand::config::{CellType, NandConfig, NandFile};
pub use crate::device::nvme::config::{Arbitration, NvmeConfig, NvmeFile};
pub use crate::fabric::pcie::config::{PcieConfig, PcieFile};
pub use crate::host::config::{HostConfig, HostFile};

pub(crate) fn d_str(s: &str) -> String {
    s.to_string()
}

pub(crate) fn zero_time() -> String {
    d_str("0ns")
}

/// A device description as written in TOML.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceFile {
    /// Device name (shown in reports).
    pub name: String,
    /// One-line description.
    #[serde(default)]
    pub description: String,
    /// Host driver costs.
    #[serde(default)]
    pub host: HostFile,
    /// PCIe link.
    #[serde(default)]
    pub pcie: PcieFile,
    /// NVMe controller front end.
    #[serde(default)]
    pub nvme: NvmeFile,
    /// Firmware stage service times.
    #[serde(default)]
    pub firmware: FirmwareFile,
    /// Controller DRAM.
    #[serde(default)]
    pub dram: DramFile,
    /// Data cache / write buffer.
    #[serde(default)]
    pub cache: CacheFile,
    /// Flash translation layer.
    #[serde(default)]
    pub ftl: FtlFile,
    /// NAND flash (optional only for a RAM-disk backend).
    #[serde(default)]
    pub nand: Option<NandFile>,
    /// Flash scheduler.
    #[serde(default)]
    pub flash: FlashFile,
    /// Controller compute: cores and accelerators (replaces `[firmware]` service times).
    #[serde(default)]
    pub controller: Option<crate::compute::ControllerFile>,
    /// Power and energy parameters and budgets.
    #[serde(default)]
    pub power: Option<crate::power::PowerFile>,
    /// Storage behind the controller: NAND flash (default) or a RAM disk.
    #[serde(default)]
    pub backend: Option<BackendFile>,
    /// A computational storage drive's FPGA (seed 003's SmartSSD).
    #[serde(default)]
    pub fpga: Option<crate::csd::config::FpgaFile>,
    /// The PCIe switch inside a computational storage drive.
    #[serde(default)]
    pub internal_switch: Option<crate::csd::config::SwitchFile>,
}

// ---------------------------------------------------------------------------
// Resolved, typed configuration
// ---------------------------------------------------------------------------

/// A fully resolved, validated device.
#[derive(Debug, Clone, Serialize)]
pub struct Device {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Host.
    pub host: HostConfig,
    /// PCIe.
    pub pcie: PcieConfig,
    /// NVMe.
    pub nvme: NvmeConfig,
    /// Firmware stages.
    pub firmware: FirmwareConfig,
    /// Cache and DRAM.
    pub cache: CacheConfig,
    /// FTL.
    pub ftl: FtlConfig,
    /// NAND.
    pub nand: NandConfig,
    /// Flash scheduler.
    pub flash: FlashConfig,
    /// Controller compute model, if configured.
    pub controller: Option<crate::compute::ControllerConfig>,
    /// Power model, if configured.
    pub power: Option<crate::power::PowerConfig>,
    /// Storage backend.
    pub backend: Backend,
    /// The FPGA of a computational storage drive, and the switch inside it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fpga: Option<crate::csd::config::FpgaConfig>,
    /// How the description was composed (`extends` chain, overrides): in
    /// the report's `device` section, not part of the resolved values.
    #[serde(skip)]
    pub origin: Origin,
}

/// How a device description was composed: what the report records.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Origin {
    /// The `extends` chain, nearest parent first (empty for a plain file or preset).
    pub extends: Vec<String>,
    /// Overrides applied after the file, in order.
    pub overrides: Vec<AppliedOverride>,
}

/// One override as applied: key path and the TOML value it set.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct AppliedOverride {
    /// Dotted key path, e.g. `nand.channels`.
    pub key: String,
    /// The value, as TOML (`16`, `"64MiB"`).
    pub value: String,
}

/// Problems found while resolving a device file, in the order found; each
/// section's `resolve` reports to it.
pub(crate) struct Collector {
    pub(crate) problems: Vec<ConfigProblem>,
}

/// Longest time a device or system file may give (one hour): beyond it a
/// value is a mistake, and sums of such times must not overflow.
pub const MAX_CONFIG_TIME: Time = Time::s(3600);
/// Largest size a device or system file may give (1 PiB).
pub const MAX_CONFIG_BYTES: u64 = 1 << 50;
/// Highest rate a device or system file may give (10 TB/s).
pub const MAX_CONFIG_BANDWIDTH: f64 = 10e12;

/// Lowest clock a device or system file may give (1 MHz): below it no
/// processor or FPGA of a drive or host runs, and a cycle count turned into
/// time would pass the longest accepted time.
pub const MIN_CONFIG_FREQUENCY: f64 = 1e6;
/// Highest clock a device or system file may give (100 GHz).
pub const MAX_CONFIG_FREQUENCY: f64 = 100e9;

/// A time from a device or system file: parsed, and within
/// [`MAX_CONFIG_TIME`].
pub(crate) fn config_time(v: &str) -> Result<Time, crate::units::UnitError> {
    let t = parse_time(v)?;
    if t > MAX_CONFIG_TIME {
        return Err(crate::units::UnitError(format!(
            "'{v}' is longer than the longest accepted ({MAX_CONFIG_TIME})"
        )));
    }
    Ok(t)
}

/// A size from a device or system file: parsed, and at most
/// [`MAX_CONFIG_BYTES`].
pub(crate) fn config_bytes(v: &str) -> Result<Bytes, crate::units::UnitError> {
    let b = parse_bytes(v)?;
    if b.0 > MAX_CONFIG_BYTES {
        return Err(crate::units::UnitError(format!(
            "'{v}' is larger than the largest accepted ({})",
            Bytes(MAX_CONFIG_BYTES)
        )));
    }
    Ok(b)
}

/// A rate from a device or system file: parsed, and at most
/// [`MAX_CONFIG_BANDWIDTH`].
pub(crate) fn config_bandwidth(v: &str) -> Result<Bandwidth, crate::units::UnitError> {
    let b = parse_bandwidth(v)?;
    if b.0 > MAX_CONFIG_BANDWIDTH {
        return Err(crate::units::UnitError(format!(
            "'{v}' is above the highest accepted rate (10 TB/s)"
        )));
    }
    Ok(b)
}

/// A clock from a device or system file: parsed, and from
/// [`MIN_CONFIG_FREQUENCY`] to [`MAX_CONFIG_FREQUENCY`].
pub(crate) fn config_frequency(v: &str) -> Result<f64, crate::units::UnitError> {
    let f = crate::units::parse_frequency(v)?;
    if f < MIN_CONFIG_FREQUENCY {
        return Err(crate::units::UnitError(format!(
            "'{v}' is below the lowest accepted clock (1MHz)"
        )));
    }
    if f > MAX_CONFIG_FREQUENCY {
        return Err(crate::units::UnitError(format!(
            "'{v}' is above the highest accepted clock (100GHz)"
        )));
    }
    Ok(f)
}

impl Collector {
    pub(crate) fn push(&mut self, key: &str, msg: impl Into<String>) {
        self.problems.push(ConfigProblem {
            key: key.to_string(),
            message: msg.into(),
        });
    }
    /// A problem is already reported for `key` (e.g. it did not parse).
    pub(crate) fn has(&self, key: &str) -> bool {
        self.problems.iter().any(|p| p.key == key)
    }
    pub(crate) fn time(&mut self, key: &str, v: &str) -> Time {
        config_time(v).unwrap_or_else(|e| {
            self.push(key, e.0);
            Time::ZERO
        })
    }
    pub(crate) fn bytes(&mut self, key: &str, v: &str) -> Bytes {
        config_bytes(v).unwrap_or_else(|e| {
            self.push(key, e.0);
            Bytes(0)
        })
    }
    pub(crate) fn pct(&mut self, key: &str, v: &str) -> f64 {
        parse_percent(v).unwrap_or_else(|e| {
            self.push(key, e.0);
            0.0
        })
    }
    pub(crate) fn bw(&mut self, key: &str, v: &str) -> Bandwidth {
        config_bandwidth(v).unwrap_or_else(|e| {
            self.push(key, e.0);
            Bandwidth(1.0)
        })
    }
    pub(crate) fn positive(&mut self, key: &str, v: u32) {
        if v == 0 {
            self.push(key, "must be at least 1");
        }
    }
    /// A count with a stated largest value: `why` says where it comes from.
    pub(crate) fn at_most(&mut self, key: &str, v: u64, max: u64, why: &str) {
        if v > max {
            self.push(
                key,
                format!("{v} is above the largest accepted ({max}: {why})"),
            );
        }
    }
}

/// What is wrong with a PCIe generation, if anything (1 to 5 are).
pub(crate) fn pcie_generation_problem(g: u32) -> Option<String> {
    (!(1..=5).contains(&g)).then(|| format!("{g} is not a PCIe generation (expected 1 to 5)"))
}

/// What is wrong with a PCIe link width, if anything.
pub(crate) fn pcie_lanes_problem(l: u32) -> Option<String> {
    (![1, 2, 4, 8, 16].contains(&l))
        .then(|| format!("{l} lanes is not a PCIe link width (expected 1, 2, 4, 8 or 16)"))
}

/// A TLP size (`what`: max payload size, max read request size): a size
/// with its unit, a power of two from 128 B to 4096 B.
pub(crate) fn tlp_size(text: &str, what: &str) -> Result<Bytes, String> {
    let b = parse_bytes(text).map_err(|e| e.0)?;
    if !b.0.is_power_of_two() || !(128..=4096).contains(&b.0) {
        return Err(format!(
            "{b} is not a PCIe {what} (128B to 4096B, power of two)"
        ));
    }
    Ok(b)
}

/// Largest number of mapping units addressable with 32-bit physical slot
/// indices (the top four values are the FTL's three markers and its table
/// encoding's spare value).
pub const MAX_SLOTS: u64 = u32::MAX as u64 - 3;

impl DeviceFile {
    /// Parse TOML text; `source` names the file in error messages.
    ///
    /// Every unknown key is reported (each with its table path and line), not
    /// only the first: an unknown key's line is set aside and parsing retried.
    pub fn from_toml_str(text: &str, source: &str) -> Result<DeviceFile, ConfigError> {
        DeviceFile::parse_text(text).map_err(|problems| ConfigError {
            source: source.to_string(),
            problems: problems
                .into_iter()
                .map(|(key, message, line)| ConfigProblem {
                    key,
                    message: match line {
                        Some(l) => format!("{message} (line {l})"),
                        None => message,
                    },
                })
                .collect(),
        })
    }

    /// [`DeviceFile::from_toml_str`] with messages that name no line:
    /// (key path, message) pairs, for text that no user wrote (a merged
    /// `extends` chain, see [`crate::compose`]).
    pub(crate) fn from_toml_str_bare(text: &str) -> Result<DeviceFile, Vec<(String, String)>> {
        DeviceFile::parse_text(text).map_err(|ps| ps.into_iter().map(|(k, m, _)| (k, m)).collect())
    }

    /// Parse, collecting (key path, message, line) of every problem.
    #[allow(clippy::type_complexity)]
    fn parse_text(text: &str) -> Result<DeviceFile, Vec<(String, String, Option<usize>)>> {
        let mut work = text.to_string();
        let mut problems = Vec::new();
        for _ in 0..256 {
            match toml::from_str::<DeviceFile>(&work) {
                Ok(f) if problems.is_empty() => return Ok(f),
                Ok(_) => break,
                Err(e) => {
                    let key = toml_key_of(&e, &work);
                    let line = e.span().map(|s| crate::compose::line_at(&work, s.start));
                    problems.push((key, one_line(e.message()), line));
                    let unknown = e.message().starts_with("unknown field");
                    match (unknown, e.span()) {
                        (true, Some(span)) => {
                            // Blank the offending line (keep line numbers) and look for more.
                            let start = work[..span.start].rfind('\n').map_or(0, |i| i + 1);
                            let end = work[span.start..]
                                .find('\n')
                                .map_or(work.len(), |i| span.start + i);
                            work.replace_range(start..end, &" ".repeat(end - start));
                        }
                        _ => break,
                    }
                }
            }
        }
        Err(problems)
    }

    /// Check every value and relation; return the typed device or every problem.
    pub fn resolve(&self, source: &str) -> Result<Device, ConfigError> {
        let mut c = Collector {
            problems: Vec::new(),
        };
        if self.name.trim().is_empty() {
            c.push("name", "must not be empty");
        }
        // Section by section (each in its stage's `config` module): this order
        // is the order in which problems are reported.
        let host = self.host.resolve(&mut c);
        let pcie = self.pcie.resolve(&mut c);
        let nvme = self.nvme.resolve(&mut c);
        let firmware = self.firmware.resolve(&mut c);
        let cache = self.cache.resolve(&self.dram, &mut c);
        let backend = crate::device::backend::config::resolve(self.backend.as_ref(), &mut c);
        let synthetic;
        let nf = match (&self.nand, backend) {
            (Some(n), _) => n,
            (None, Backend::RamDisk { capacity }) => {
                synthetic = crate::device::backend::config::ramdisk_nand(capacity);
                &synthetic
            }
            (None, Backend::Flash) => {
                c.push(
                    "nand",
                    "the [nand] section is required (unless [backend] kind = \"ramdisk\")",
                );
                return Err(ConfigError {
                    source: source.to_string(),
                    problems: c.problems,
                });
            }
        };
        let nand = nf.resolve(&mut c);
        let ftl = self.ftl.resolve(nand.page_size, &mut c);
        if ftl.mapping_cache.is_some() && matches!(backend, Backend::RamDisk { .. }) {
            c.push(
                "ftl.mapping_cache",
                "a RAM disk keeps no flash mapping to cache: remove the key or use \"all\"",
            );
        }
        if matches!(backend, Backend::RamDisk { .. }) {
            for (key, set) in [
                ("ftl.checkpoint_interval", ftl.checkpoint_interval.is_some()),
                ("ftl.checkpoint_log_size", ftl.checkpoint_log_size.is_some()),
            ] {
                if set {
                    c.push(
                        key,
                        "a RAM disk keeps no flash mapping to checkpoint: remove the key or use \"none\"",
                    );
                }
            }
        }
        if cache.write_buffer_unit == BufferUnit::Block && ftl.mapping == MappingScheme::Page {
            c.push(
                "cache.write_buffer_unit",
                "\"block\" gathers the logical blocks of block or hybrid mapping: set ftl.mapping = \"block\", \"bast\" or \"fast\", or use \"unit\"",
            );
        }
        let flash = self.flash.resolve(&mut c);
        let controller = self
            .controller
            .as_ref()
            .and_then(|cf| cf.resolve(&mut c.problems));
        if self.controller.is_some() {
            let f = &self.firmware;
            if [
                &f.fetch,
                &f.parse,
                &f.cache_lookup,
                &f.translate,
                &f.issue,
                &f.complete,
            ]
            .iter()
            .any(|v| !matches!(parse_time(v), Ok(t) if t == Time::ZERO))
            {
                c.push("firmware", "fixed stage service times contradict [controller]: with cores and accelerators, stage costs come from controller.costs; remove [firmware]");
            }
        }
        let power = self.power.as_ref().map(|pf| pf.resolve(&mut c.problems));
        if cache.capacitor_energy.is_some() && self.power.is_none() {
            c.push(
                "cache.capacitor_energy",
                "the power-loss flush's energy comes from the drive's power model: add a [power] section or remove the key",
            );
        }
        if self.internal_switch.is_some() && self.fpga.is_none() {
            c.push(
                "internal_switch",
                "an internal switch joins the drive and its FPGA: add an [fpga] section or remove [internal_switch]",
            );
        }
        let fpga = self
            .fpga
            .as_ref()
            .map(|f| f.resolve(self.internal_switch.as_ref(), &pcie, &mut c));
        let dev = Device {
            fpga,
            controller,
            power,
            backend,
            origin: Origin::default(),
            name: self.name.clone(),
            description: self.description.clone(),
            host,
            pcie,
            nvme,
            firmware,
            cache,
            ftl,
            nand,
            flash,
        };
        if c.problems.is_empty() {
            check_geometry(&dev, &mut c);
        }
        if c.problems.is_empty() {
            Ok(dev)
        } else {
            Err(ConfigError {
                source: source.to_string(),
                problems: c.problems,
            })
        }
    }
}

fn check_geometry(d: &Device, c: &mut Collector) {
    let n = &d.nand;
    let f = &d.ftl;
    let slots_per_page = n.page_size.0 / f.mapping_unit.0;
    let raw_slots = n.raw_bytes() / f.mapping_unit.0;
    if raw_slots > MAX_SLOTS {
        c.push(
            "nand",
            format!(
                "the drive has {raw_slots} mapping units of {}; page-level mapping supports at most {MAX_SLOTS} (use a larger ftl.mapping_unit)",
                f.mapping_unit
            ),
        );
    }
    let planes_per_unit = if n.multi_plane { n.planes_per_die } else { 1 };
    let slots_per_block = planes_per_unit as u64 * n.pages_per_block as u64 * slots_per_page;
    if slots_per_block > u16::MAX as u64 {
        c.push(
            "nand.pages_per_block",
            format!("a block of {slots_per_block} mapping units is too large (at most {}); use a larger ftl.mapping_unit or fewer pages per block", u16::MAX),
        );
    }
    let units = n.total_dies() as u64 * (n.planes_per_die / planes_per_unit) as u64;
    let blocks_total = units * n.blocks_per_plane as u64;
    let logical = logical_units(n, f);
    if logical == 0 {
        c.push("ftl.over_provisioning", "leaves no logical capacity");
    }
    let block_slots = planes_per_unit as u64 * n.pages_per_block as u64 * slots_per_page;
    // Factory bad blocks and a cached mapping's translation blocks (with
    // one open block of them per unit) come out of the spare too.
    let bad =
        units * crate::ftl::factory_bad_per_unit(n.blocks_per_plane, n.factory_bad_blocks) as u64;
    let translation = if f.keeps_metadata_pages() {
        let tpages = if f.keeps_translation_pages() {
            logical.div_ceil(f.entries_per_translation_page() as u64)
        } else {
            0
        };
        let pages = tpages
            + f.checkpoint_record_units(
                logical.div_ceil(f.entries_per_translation_page() as u64),
                blocks_total,
            )
            + f.validity_pages(blocks_total * block_slots)
            + f.directory_levels(tpages).iter().sum::<u64>();
        pages.div_ceil(block_slots.max(1)) + units
    } else {
        0
    };
    let replacements =
        units * crate::ftl::factory_bad_per_unit(n.blocks_per_plane, f.spare_blocks) as u64;
    let reserve = (f.gc_threshold as u64 + 2) * units + bad + replacements + translation;
    let needed_blocks = logical.div_ceil(block_slots.max(1)) + reserve;
    if needed_blocks > blocks_total {
        c.push(
            "ftl.over_provisioning",
            format!(
                "{:.1}% spare leaves too few free blocks: the exported capacity needs {} blocks plus {} kept free for GC (gc_threshold + 2 per unit), factory bad blocks, replacement blocks (ftl.spare_blocks) and translation pages, but the drive has {}",
                f.over_provisioning * 100.0,
                needed_blocks - reserve,
                reserve,
                blocks_total
            ),
        );
    }
    if f.has_slc() {
        if f.mapping != MappingScheme::Page {
            // By design, not a gap: an SLC cache is where a page-mapped
            // FTL lands host writes before folding them into native
            // blocks; under block and hybrid mapping the log blocks are
            // that write buffer (docs/models/ftl.md).
            c.push(
                if f.slc_static.0 > 0 {
                    "ftl.slc_static"
                } else {
                    "ftl.slc_dynamic"
                },
                format!(
                    "an SLC write cache needs page mapping (ftl.mapping = \"page\"): it is where a page-mapped FTL lands host writes before folding them into native blocks; {}",
                    if f.mapping == MappingScheme::Block {
                        "with block mapping a logical block's data lives in one block, rewritten by copying it whole"
                            .to_string()
                    } else {
                        format!(
                            "with {} mapping the log blocks (ftl.log_blocks) are the write buffer in front of the data blocks",
                            f.mapping.name()
                        )
                    }
                ),
            );
        } else {
            check_slc(d, units, blocks_total, needed_blocks, c);
        }
    }
    if f.mapping != MappingScheme::Page {
        check_block_mapping(d, units, c);
    }
    if (n.blocks_per_plane as u64) < f.gc_threshold as u64 + 4 {
        c.push(
            "nand.blocks_per_plane",
            format!(
                "{} blocks per plane cannot hold the GC reserve (gc_threshold + 4 = {})",
                n.blocks_per_plane,
                f.gc_threshold + 4
            ),
        );
    }
    let buf = d.cache.write_buffer.0;
    let unit_bytes = program_unit_bytes(n);
    if buf < unit_bytes {
        c.push("cache.write_buffer", format!("{} is smaller than one program unit ({}: planes × pages per word line × page size); the buffer must hold at least one", d.cache.write_buffer, Bytes(unit_bytes)));
    }
    if !d.cache.write_buffer.0.is_multiple_of(f.mapping_unit.0) {
        c.push(
            "cache.write_buffer",
            "must be a multiple of ftl.mapping_unit",
        );
    }
}

/// Block and hybrid mapping: every logical block of a unit needs a data
/// block, plus its log blocks and one block a merge copies into.
fn check_block_mapping(d: &Device, units: u64, c: &mut Collector) {
    let n = &d.nand;
    let f = &d.ftl;
    if f.mapping_unit.0 == 0 {
        return;
    }
    let g = crate::nand::Geometry::new(n, f.mapping_unit);
    let lbns = crate::ftl::logical_blocks_per_unit(&g, logical_units(n, f));
    let bad = crate::ftl::factory_bad_per_unit(n.blocks_per_plane, n.factory_bad_blocks) as u64
        + crate::ftl::factory_bad_per_unit(n.blocks_per_plane, f.spare_blocks) as u64;
    let good = (g.blocks_per_unit as u64).saturating_sub(bad);
    // Checkpoints: the checkpoint log's blocks (the last complete one,
    // which may straddle two blocks, and the one being written).
    let ckpt = if f.checkpoints() {
        let k = crate::ftl::hybrid_checkpoint_size(&g, lbns, f.log_blocks).1;
        crate::ftl::hybrid_checkpoint_reserve(k) as u64
    } else {
        0
    };
    let need = lbns + f.log_blocks as u64 + 1 + ckpt;
    if units > 0 && need > good {
        c.push(
            "ftl.log_blocks",
            format!(
                "{} mapping needs {need} blocks per parallel unit ({lbns} data blocks for its share of the exported capacity, {} log blocks, 1 to merge into{}) but a unit has {good} good blocks (after factory bad and replacement blocks); lower ftl.log_blocks or raise ftl.over_provisioning",
                f.mapping.name(),
                f.log_blocks,
                if ckpt > 0 { format!(", {ckpt} for the checkpoint log") } else { String::new() }
            ),
        );
    }
}

/// The SLC cache's cross-section checks: SLC-mode timings given, word lines
/// that split into whole SLC program units, and room for the static region.
fn check_slc(d: &Device, units: u64, blocks_total: u64, needed_blocks: u64, c: &mut Collector) {
    let n = &d.nand;
    let f = &d.ftl;
    let bits = n.cell.bits() as u64;
    if bits == 1 {
        c.push(
            "ftl.slc_static",
            "the NAND is SLC already (nand.cell = \"slc\"): an SLC cache needs multi-bit cells",
        );
        return;
    }
    if n.t_read_slc.is_none() {
        c.push(
            "nand.t_read_slc",
            "required with an SLC cache (ftl.slc_static or ftl.slc_dynamic): array read time of an SLC-mode page",
        );
    }
    if n.t_prog_slc.is_none() {
        c.push(
            "nand.t_prog_slc",
            "required with an SLC cache (ftl.slc_static or ftl.slc_dynamic): program time of an SLC-mode page",
        );
    }
    let pages_per_program = if n.t_prog_one_shot.is_some() { bits } else { 1 };
    let wl = n.pages_per_block as u64 / bits;
    if !(n.pages_per_block as u64).is_multiple_of(bits) || !wl.is_multiple_of(pages_per_program) {
        c.push(
            "nand.pages_per_block",
            format!(
                "{} pages per block do not make whole SLC-mode program units: a block in SLC mode holds pages_per_block / {bits} pages, which must be a multiple of {pages_per_program} (pages per program)",
                n.pages_per_block
            ),
        );
        return;
    }
    let logical = logical_units(n, f) * f.mapping_unit.0;
    let cache = f.slc_static.0 + f.slc_dynamic.0;
    if cache >= logical {
        c.push(
            "ftl.slc_static",
            format!(
                "an SLC cache of {} (static {} + dynamic {}) is not smaller than the drive ({})",
                Bytes(cache),
                f.slc_static,
                f.slc_dynamic,
                Bytes(logical)
            ),
        );
        return;
    }
    let per_unit = slc_static_blocks_per_unit(n, f, units);
    if needed_blocks + per_unit * units > blocks_total
        || (n.blocks_per_plane as u64) < per_unit + f.gc_threshold as u64 + 4
    {
        c.push(
            "ftl.slc_static",
            format!(
                "{} of static SLC takes {} blocks per unit ({} in all), leaving too few for the exported capacity and the GC reserve ({} needed of {} blocks); raise ftl.over_provisioning or shrink the static region",
                f.slc_static,
                per_unit,
                per_unit * units,
                needed_blocks,
                blocks_total
            ),
        );
    }
}

/// Blocks per parallel unit the static SLC region keeps in SLC mode.
pub(crate) fn slc_static_blocks_per_unit(n: &NandConfig, f: &FtlConfig, units: u64) -> u64 {
    let planes = if n.multi_plane { n.planes_per_die } else { 1 } as u64;
    let slc_block_bytes = planes * (n.pages_per_block / n.cell.bits()) as u64 * n.page_size.0;
    f.slc_static.0.div_ceil((units * slc_block_bytes).max(1))
}

/// Bytes programmed by one program operation on one parallel unit.
pub fn program_unit_bytes(n: &NandConfig) -> u64 {
    let planes = if n.multi_plane { n.planes_per_die } else { 1 } as u64;
    let pages = if n.t_prog_one_shot.is_some() {
        n.cell.bits() as u64
    } else {
        1
    };
    planes * pages * n.page_size.0
}

/// Exported capacity in mapping units: raw / (1 + OP), rounded down.
pub fn logical_units(n: &NandConfig, f: &FtlConfig) -> u64 {
    let raw_slots = n.raw_bytes() / f.mapping_unit.0.max(1);
    (raw_slots as f64 / (1.0 + f.over_provisioning)).floor() as u64
}

fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The dotted key a TOML error is about: the table header above the error
/// plus the offending field name when the message names one.
fn toml_key_of(e: &toml::de::Error, text: &str) -> String {
    let Some(span) = e.span() else {
        return "(toml)".to_string();
    };
    let before = &text[..span.start.min(text.len())];
    let table = before
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('[') && l.ends_with(']'))
        .map(|l| l.trim_matches(|c| c == '[' || c == ']').trim().to_string());
    let msg = e.message();
    let field = msg
        .split('`')
        .nth(1)
        .filter(|_| msg.starts_with("unknown field") || msg.starts_with("missing field"));
    // The key of the line the error points into: a type error points at the
    // value, so take what stands before that line's `=` when the span is after it.
    let at = span.start.min(text.len());
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = text[line_start..].split('\n').next().unwrap_or("");
    let line_key = match line.split_once('=') {
        Some((k, _)) if line_start + k.len() < at => Some(k.trim()),
        _ => text[at..].split(['=', '\n']).next().map(str::trim),
    }
    .filter(|k| !k.is_empty() && !k.starts_with('['));
    // A field of an inline table (`fetch = { cycle = 1 }`) belongs to the
    // line's key: `controller.costs.fetch.cycle`.
    let inline = line
        .split_once('=')
        .is_some_and(|(k, v)| line_start + k.len() < at && v.trim_start().starts_with('{'));
    let nested = match (field, line_key) {
        (Some(f), Some(k)) if inline => Some(format!("{k}.{f}")),
        _ => None,
    };
    let leaf = nested.as_deref().or(field).or(line_key);
    match (table, leaf) {
        (Some(t), Some(f)) => format!("{t}.{f}"),
        (None, Some(f)) => f.to_string(),
        (Some(t), None) => t,
        (None, None) => "(toml)".to_string(),
    }
}

/// Shipped presets: (name, TOML text).
pub const PRESETS: &[(&str, &str)] = &[
    ("pm9a3-960g", include_str!("../presets/pm9a3-960g.toml")),
    (
        "seed001-slc-onfi",
        include_str!("../presets/seed001-slc-onfi.toml"),
    ),
    (
        "seed001-slc-conventional",
        include_str!("../presets/seed001-slc-conventional.toml"),
    ),
    (
        "seed001-mlc-onfi",
        include_str!("../presets/seed001-mlc-onfi.toml"),
    ),
    (
        "seed001-mlc-conventional",
        include_str!("../presets/seed001-mlc-conventional.toml"),
    ),
    (
        "seed000-eisc-ramdisk",
        include_str!("../presets/seed000-eisc-ramdisk.toml"),
    ),
    (
        "seed000-a9-ramdisk",
        include_str!("../presets/seed000-a9-ramdisk.toml"),
    ),
    ("970evo-1t", include_str!("../presets/970evo-1t.toml")),
    (
        "smartssd-3.84t",
        include_str!("../presets/smartssd-3.84t.toml"),
    ),
    (
        "seed002-gen3-value",
        include_str!("../presets/seed002-gen3-value.toml"),
    ),
];

/// Name of the default device.
pub const DEFAULT_DEVICE: &str = "pm9a3-960g";

impl Device {
    /// Load a shipped preset by name.
    pub fn preset(name: &str) -> Result<Device, ConfigError> {
        let Some(text) = preset_text(name) else {
            return Err(ConfigError {
                source: format!("preset {name}"),
                problems: vec![ConfigProblem {
                    key: "(device)".into(),
                    message: format!(
                        "no preset named '{name}'; presets: {}",
                        preset_names().join(", ")
                    ),
                }],
            });
        };
        Ok(crate::compose::load(&text, &format!("preset {name}"), &[])?.1)
    }

    /// Load a TOML device file (its `extends` chain resolved).
    pub fn from_path(path: &Path) -> Result<Device, ConfigError> {
        let src = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            source: src.clone(),
            problems: vec![ConfigProblem {
                key: "(file)".into(),
                message: format!("cannot read: {e}"),
            }],
        })?;
        Ok(crate::compose::load(&text, &src, &[])?.1)
    }

    /// A preset name or a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<Device, ConfigError> {
        Device::load_with(name_or_path, &[])
    }

    /// A preset name or a path to a TOML file, with overrides (key path,
    /// value) applied: see [`crate::compose::load`].
    pub fn load_with(
        name_or_path: &str,
        overrides: &[crate::compose::Override],
    ) -> Result<Device, ConfigError> {
        Ok(crate::compose::load_named(name_or_path, overrides)?.1)
    }

    /// Exported capacity in bytes.
    pub fn capacity_bytes(&self) -> u64 {
        match self.backend {
            Backend::RamDisk { capacity } => {
                capacity.0 / self.ftl.mapping_unit.0 * self.ftl.mapping_unit.0
            }
            Backend::Flash => logical_units(&self.nand, &self.ftl) * self.ftl.mapping_unit.0,
        }
    }
}

/// The TOML text of a preset, if it exists.
pub fn preset_text(name: &str) -> Option<std::borrow::Cow<'static, str>> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| std::borrow::Cow::Borrowed(*t))
        .or_else(|| crate::presets::generated(name).map(std::borrow::Cow::Owned))
}

/// Names of every preset (shipped files and generated variants).
pub fn preset_names() -> Vec<String> {
    PRESETS
        .iter()
        .map(|(n, _)| n.to_string())
        .chain(crate::presets::generated_names())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn all_presets_resolve() {
        for (name, _) in PRESETS {
            let d = Device::preset(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&d.name, name);
        }
    }

    #[test]
    fn pm9a3_capacity_is_960gb() {
        let d = Device::preset("pm9a3-960g").unwrap();
        let cap = d.capacity_bytes() as f64;
        assert!((cap / 960e9 - 1.0).abs() < 0.001, "capacity {cap}");
    }

    #[test]
    fn unknown_key_names_line() {
        let t = preset_text("pm9a3-960g")
            .unwrap()
            .replace("[nand]", "[nand]\nchanels = 8");
        let e = DeviceFile::from_toml_str(&t, "x.toml").unwrap_err();
        let s = e.to_string();
        assert!(s.contains("x.toml"), "{s}");
        assert!(s.contains("chanels"), "{s}");
        assert!(s.contains("line"), "{s}");
    }

    #[test]
    fn every_unknown_key_is_reported_with_its_path() {
        let t = preset_text("pm9a3-960g")
            .unwrap()
            .replace("[nand]", "[nand]\nchanels = 8\nplanez = 2")
            .replace("[pcie]", "[pcie]\nlanez = 4");
        let e = DeviceFile::from_toml_str(&t, "x.toml").unwrap_err();
        let keys: Vec<&str> = e.problems.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            vec!["pcie.lanez", "nand.chanels", "nand.planez"],
            "{e}"
        );
        assert!(e.problems.iter().all(|p| p.message.contains("line")), "{e}");
    }

    #[test]
    fn a_value_of_the_wrong_type_names_its_key() {
        let t = preset_text("pm9a3-960g")
            .unwrap()
            .replace("multi_plane = true", "multi_plane = \"yes\"");
        let e = DeviceFile::from_toml_str(&t, "x.toml").unwrap_err();
        assert_eq!(e.problems[0].key, "nand.multi_plane", "{e}");
        assert!(e.problems[0].message.contains("expected a boolean"), "{e}");
    }

    #[test]
    fn every_problem_reported_with_key() {
        let t = preset_text("pm9a3-960g")
            .unwrap()
            .replace("t_erase = \"3.5ms\"", "t_erase = \"3.5\"")
            .replace("generation = 4", "generation = 7")
            .replace("gc_policy = \"greedy\"", "gc_policy = \"smart\"");
        let e = DeviceFile::from_toml_str(&t, "x.toml")
            .unwrap()
            .resolve("x.toml")
            .unwrap_err();
        let keys: Vec<_> = e.problems.iter().map(|p| p.key.as_str()).collect();
        assert!(keys.contains(&"nand.t_erase"), "{e}");
        assert!(keys.contains(&"pcie.generation"), "{e}");
        assert!(keys.contains(&"ftl.gc_policy"), "{e}");
        assert!(e.to_string().contains("no unit"), "{e}");
    }

    #[test]
    fn impossible_geometry_rejected() {
        let t = preset_text("pm9a3-960g").unwrap().replace(
            "over_provisioning = \"14.55%\"",
            "over_provisioning = \"0%\"",
        );
        let e = DeviceFile::from_toml_str(&t, "x.toml")
            .unwrap()
            .resolve("x.toml")
            .unwrap_err();
        assert!(
            e.problems.iter().any(|p| p.key == "ftl.over_provisioning"),
            "{e}"
        );
        let t = preset_text("pm9a3-960g")
            .unwrap()
            .replace("blocks_per_plane = 2731", "blocks_per_plane = 5102000");
        let e = DeviceFile::from_toml_str(&t, "x.toml")
            .unwrap()
            .resolve("x.toml")
            .unwrap_err();
        assert!(e.to_string().contains("mapping_unit"), "{e}");
    }

    #[test]
    fn contradictory_bus_rejected() {
        let t = preset_text("pm9a3-960g").unwrap().replace(
            "bus_width_bits = 8",
            "bus_width_bits = 8\nbus_bandwidth = \"1GB/s\"",
        );
        let e = DeviceFile::from_toml_str(&t, "x.toml")
            .unwrap()
            .resolve("x.toml")
            .unwrap_err();
        assert!(
            e.problems.iter().any(|p| p.key == "nand.bus_bandwidth"),
            "{e}"
        );
    }
}
