//! System files: a host, its PCIe root complex, any number of switches and
//! drives, and where each attaches.
//!
//! ```toml
//! name = "seed002-4x-m2"
//! [root_complex]
//! generation = 3
//! lanes = 8                  # per root port
//! [[switch]]
//! name = "sw0"
//! upstream = "root"          # the root complex, or another switch's name
//! upstream_lanes = 8
//! downstream_lanes = 4       # widest downstream port
//! ports = 4
//! latency = "150ns"          # cut-through, port to port
//! ingress_buffer = "6KiB"    # per port: what its flow-control credits cover
//! [[drive]]
//! name = "nvme0"
//! device = "pm9a3-960g"      # preset, or a device file relative to this file
//! attach = "sw0"
//! lanes = 4
//! ```
//!
//! Same conventions as device files: units in strings, unknown keys are
//! errors, every problem is reported with its key path, and `extends` works
//! (see [`crate::compose`]). A drive's link trains to the narrower and older
//! of its two ends; switch uplinks use the root complex's TLP parameters.

use crate::compose::{self, Composed};
use crate::config::{ConfigError, ConfigProblem, Device, PcieConfig};
use crate::units::{parse_percent, parse_power, Bandwidth, Bytes, Time};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// `[root_complex]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RootFile {
    /// PCIe generation of the root ports (1-5).
    #[serde(default = "d_gen")]
    pub generation: u32,
    /// Lanes per root port.
    #[serde(default = "d_root_lanes")]
    pub lanes: u32,
    /// Root ports.
    #[serde(default = "d_root_ports")]
    pub ports: u32,
    /// Max payload size on the fabric's links (switch uplinks).
    #[serde(default = "d_mps")]
    pub max_payload: String,
    /// Max read request size on the fabric's links.
    #[serde(default = "d_mrrs")]
    pub max_read_request: String,
    /// Per-TLP overhead (header, framing, LCRC).
    #[serde(default = "d_tlp")]
    pub tlp_overhead: String,
    /// DLLP share of link time.
    #[serde(default = "d_dllp")]
    pub dllp_overhead: String,
    /// One-way latency of a switch uplink (wire and PHY).
    #[serde(default = "d_lat")]
    pub latency: String,
    /// Rate of the root complex's DMA port into host memory, per direction
    /// (writes into memory: drives' read data; reads from it: write data),
    /// shared by every drive; "" (the default): not a limit.
    #[serde(default)]
    pub memory_bandwidth: String,
}

/// `[[switch]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchFile {
    /// Name (unique among switches and drives; not `root`).
    pub name: String,
    /// What the upstream port attaches to: `root` or another switch.
    #[serde(default = "d_root")]
    pub upstream: String,
    /// Upstream port generation.
    #[serde(default = "d_gen")]
    pub upstream_generation: u32,
    /// Upstream port lanes.
    pub upstream_lanes: u32,
    /// Downstream ports' generation.
    #[serde(default = "d_gen")]
    pub downstream_generation: u32,
    /// Widest downstream port, lanes.
    pub downstream_lanes: u32,
    /// Downstream ports.
    pub ports: u32,
    /// Port-to-port cut-through latency.
    #[serde(default = "d_sw_lat")]
    pub latency: String,
    /// Power drawn by the switch (constant), e.g. "3W".
    #[serde(default = "d_zero_w")]
    pub power: String,
    /// Ingress buffer per port (flow-control credits it advertises), bytes.
    #[serde(default = "d_sw_buf")]
    pub ingress_buffer: String,
}

/// `[[drive]]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriveFile {
    /// Name, as jobs address it (`filename=nvme0`, `/dev/nvme0n1`).
    pub name: String,
    /// Preset name or device file (relative to the system file).
    pub device: String,
    /// What it attaches to: `root` or a switch.
    #[serde(default = "d_root")]
    pub attach: String,
    /// Link width (default: the device's own).
    #[serde(default)]
    pub lanes: Option<u32>,
}

/// A system file as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemFile {
    /// Name.
    pub name: String,
    /// One-line description.
    #[serde(default)]
    pub description: String,
    /// Host driver costs: `submit_overhead`, `complete_overhead` (default: the first drive's `[host]`).
    #[serde(default)]
    pub host: Option<crate::config::HostFile>,
    /// The root complex.
    #[serde(default = "d_root_file")]
    pub root_complex: RootFile,
    /// Switches.
    #[serde(default, rename = "switch")]
    pub switches: Vec<SwitchFile>,
    /// Drives.
    #[serde(default, rename = "drive")]
    pub drives: Vec<DriveFile>,
}

fn d_gen() -> u32 {
    3
}
fn d_root_lanes() -> u32 {
    16
}
fn d_root_ports() -> u32 {
    4
}
fn d_mps() -> String {
    "256B".into()
}
fn d_mrrs() -> String {
    "512B".into()
}
fn d_tlp() -> String {
    "24B".into()
}
fn d_dllp() -> String {
    "4%".into()
}
fn d_lat() -> String {
    "100ns".into()
}
fn d_sw_lat() -> String {
    "150ns".into()
}
fn d_sw_buf() -> String {
    // PEX 8532 data book, table 8-1: 27,520 B of ingress packet RAM per
    // station of four ports, about 6.7 KiB a port.
    "6KiB".into()
}
fn d_zero_w() -> String {
    "0W".into()
}
fn d_root() -> String {
    "root".into()
}
fn d_root_file() -> RootFile {
    RootFile {
        generation: d_gen(),
        lanes: d_root_lanes(),
        ports: d_root_ports(),
        max_payload: d_mps(),
        max_read_request: d_mrrs(),
        tlp_overhead: d_tlp(),
        dllp_overhead: d_dllp(),
        latency: d_lat(),
        memory_bandwidth: String::new(),
    }
}

/// Where something attaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Parent {
    /// A root port.
    Root,
    /// A switch (index into [`SystemConfig::switches`]).
    Switch(usize),
}

/// A resolved switch.
#[derive(Debug, Clone, Serialize)]
pub struct SwitchConfig {
    /// Name.
    pub name: String,
    /// Upstream attachment.
    pub upstream: Parent,
    /// The upstream link.
    pub uplink: PcieConfig,
    /// Downstream ports' generation.
    pub downstream_generation: u32,
    /// Widest downstream port.
    pub downstream_lanes: u32,
    /// Downstream ports.
    pub ports: u32,
    /// Port-to-port latency.
    pub latency: Time,
    /// Constant power, watts.
    pub power_w: f64,
    /// Ingress buffer per port, bytes (what its flow-control credits cover).
    pub ingress_buffer: Bytes,
}

/// A resolved drive attachment.
#[derive(Debug, Clone)]
pub struct DriveConfig {
    /// Name.
    pub name: String,
    /// The device.
    pub device: Device,
    /// Where it attaches.
    pub attach: Parent,
    /// Its link (trained to the narrower, older end).
    pub link: PcieConfig,
}

/// A resolved, validated system.
#[derive(Debug, Clone)]
pub struct SystemConfig {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// Host driver costs.
    pub host: crate::config::HostConfig,
    /// Root port generation.
    pub root_generation: u32,
    /// Lanes per root port.
    pub root_lanes: u32,
    /// Root ports.
    pub root_ports: u32,
    /// The root complex's DMA port into host memory (per direction), if it
    /// limits.
    pub root_memory_bandwidth: Option<Bandwidth>,
    /// Switches.
    pub switches: Vec<SwitchConfig>,
    /// Drives.
    pub drives: Vec<DriveConfig>,
    /// Other endpoints (a computational storage drive's FPGA): fabric ports
    /// that take peer-to-peer transfers, after the drives' ports.
    pub endpoints: Vec<EndpointConfig>,
}

/// A PCIe endpoint that is not a drive (an accelerator's memory).
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// Name.
    pub name: String,
    /// Where it attaches.
    pub attach: Parent,
    /// Its link.
    pub link: PcieConfig,
}

/// Most ports of a root complex or a switch.
pub const MAX_PORTS: u32 = 256;

struct Problems(Vec<ConfigProblem>);

impl Problems {
    fn push(&mut self, key: impl Into<String>, msg: impl Into<String>) {
        self.0.push(ConfigProblem {
            key: key.into(),
            message: msg.into(),
        });
    }
    fn gen(&mut self, key: &str, g: u32) {
        if let Some(m) = crate::config::pcie_generation_problem(g) {
            self.push(key, m);
        }
    }
    fn lanes(&mut self, key: &str, l: u32) {
        if let Some(m) = crate::config::pcie_lanes_problem(l) {
            self.push(key, m);
        }
    }
    /// A port count: PCIe bus numbers are 8 bits, so a hierarchy has at
    /// most [`MAX_PORTS`] buses, a port each.
    fn ports(&mut self, key: &str, n: u32) {
        if n > MAX_PORTS {
            self.push(
                key,
                format!("{n} is above the largest accepted ({MAX_PORTS}: a PCIe hierarchy has at most 256 buses)"),
            );
        }
    }
    fn tlp_size(&mut self, key: &str, v: &str, what: &str) -> Bytes {
        crate::config::tlp_size(v, what).unwrap_or_else(|m| {
            self.push(key, m);
            Bytes(0)
        })
    }
    fn time(&mut self, key: &str, v: &str) -> Time {
        crate::config::config_time(v).unwrap_or_else(|e| {
            self.push(key, e.0);
            Time::ZERO
        })
    }
    fn bytes(&mut self, key: &str, v: &str) -> Bytes {
        crate::config::config_bytes(v).unwrap_or_else(|e| {
            self.push(key, e.0);
            Bytes(0)
        })
    }
    /// An optional rate: "" is none; otherwise above zero.
    fn opt_bandwidth(&mut self, key: &str, v: &str) -> Option<Bandwidth> {
        if v.trim().is_empty() {
            return None;
        }
        match crate::config::config_bandwidth(v) {
            Ok(b) if b.0 > 0.0 => Some(b),
            Ok(_) => {
                self.push(key, "must be above zero (leave it out for no limit)");
                None
            }
            Err(e) => {
                self.push(key, e.0);
                None
            }
        }
    }
}

impl SystemFile {
    /// Parse TOML text (with its `extends` chain); `source` names it in errors.
    pub fn from_toml_str(text: &str, source: &str) -> Result<SystemFile, ConfigError> {
        let c: Composed = compose::compose_system(text, source)?;
        // The merged table is already parsed: read it directly when valid;
        // the text below is for errors with lines.
        if let Ok(f) = toml::Value::Table(c.table.clone()).try_into::<SystemFile>() {
            return Ok(f);
        }
        // A merged chain is written out to be read with lines (errors).
        let t = if c.layers.len() == 1 {
            String::new()
        } else {
            toml::to_string(&c.table).map_err(|e| ConfigError {
                source: source.into(),
                problems: vec![ConfigProblem {
                    key: "(toml)".into(),
                    message: e.to_string(),
                }],
            })?
        };
        let text = if c.layers.len() == 1 { text } else { &t };
        toml::from_str::<SystemFile>(text).map_err(|e| {
            let line = e.span().map(|s| compose::line_at(text, s.start));
            let key = e
                .message()
                .split('`')
                .nth(1)
                .filter(|_| e.message().starts_with("unknown field"))
                .unwrap_or("(toml)")
                .to_string();
            ConfigError {
                source: source.into(),
                problems: vec![ConfigProblem {
                    key,
                    message: match line {
                        Some(l) if c.layers.len() == 1 => {
                            format!("{} (line {l})", e.message().trim())
                        }
                        _ => e.message().trim().to_string(),
                    },
                }],
            }
        })
    }

    /// Check the topology and every value; load each drive's device
    /// (relative paths against `dir`). Every problem, with its key path.
    pub fn resolve(&self, source: &str, dir: &Path) -> Result<SystemConfig, ConfigError> {
        self.resolve_with(source, |_, d| load_device(&d.device, dir))
    }

    /// [`SystemFile::resolve`] with each drive's device made by
    /// `device(drive_index, drive)` instead of loaded from `drive.device`
    /// (Python's `System.build` gives devices as TOML text, and device
    /// overrides per drive). A device's problems are reported under
    /// `drive[i].device`, as for a file.
    pub fn resolve_with(
        &self,
        source: &str,
        mut device: impl FnMut(usize, &DriveFile) -> Result<Device, ConfigError>,
    ) -> Result<SystemConfig, ConfigError> {
        let mut p = Problems(Vec::new());
        if self.name.trim().is_empty() {
            p.push("name", "must not be empty");
        }
        let r = &self.root_complex;
        p.gen("root_complex.generation", r.generation);
        p.lanes("root_complex.lanes", r.lanes);
        if r.ports == 0 {
            p.push("root_complex.ports", "must be at least 1");
        }
        p.ports("root_complex.ports", r.ports);
        let mps = p.tlp_size(
            "root_complex.max_payload",
            &r.max_payload,
            "max payload size",
        );
        let mrrs = p.tlp_size(
            "root_complex.max_read_request",
            &r.max_read_request,
            "max read request size",
        );
        let tlp = p.bytes("root_complex.tlp_overhead", &r.tlp_overhead);
        let dllp = parse_percent(&r.dllp_overhead).unwrap_or_else(|e| {
            p.push("root_complex.dllp_overhead", e.0);
            0.0
        });
        if !(0.0..0.5).contains(&dllp) {
            p.push(
                "root_complex.dllp_overhead",
                "must be at least 0% and below 50%",
            );
        }
        let uplink_latency = p.time("root_complex.latency", &r.latency);
        let memory_bandwidth =
            p.opt_bandwidth("root_complex.memory_bandwidth", &r.memory_bandwidth);
        // Names.
        let mut names: Vec<(&str, String)> = Vec::new();
        for (i, s) in self.switches.iter().enumerate() {
            names.push((&s.name, format!("switch[{i}].name")));
        }
        for (i, d) in self.drives.iter().enumerate() {
            names.push((&d.name, format!("drive[{i}].name")));
        }
        for (i, (n, key)) in names.iter().enumerate() {
            if n.trim().is_empty() {
                p.push(key.clone(), "must not be empty");
            } else if *n == "root" {
                p.push(
                    key.clone(),
                    "'root' names the root complex; choose another name",
                );
            } else if let Some((_, first)) = names[..i].iter().find(|(m, _)| m == n) {
                p.push(
                    key.clone(),
                    format!("'{n}' is already the name of {first} (a drive attached twice, or two parts with one name)"),
                );
            }
        }
        if self.drives.is_empty() {
            p.push("drive", "a system needs at least one [[drive]]");
        }
        let switch_names: Vec<&str> = self.switches.iter().map(|s| s.name.as_str()).collect();
        let parent_of = |p: &mut Problems, key: String, target: &str| -> Option<Parent> {
            if target == "root" {
                return Some(Parent::Root);
            }
            match switch_names.iter().position(|n| *n == target) {
                Some(i) => Some(Parent::Switch(i)),
                None => {
                    p.push(
                        key,
                        format!(
                            "'{target}' is not a switch of this system (expected root{}{})",
                            if switch_names.is_empty() {
                                ""
                            } else {
                                " or one of: "
                            },
                            switch_names.join(", ")
                        ),
                    );
                    None
                }
            }
        };
        let mut switches = Vec::new();
        let mut uplinks: Vec<Option<Parent>> = Vec::new();
        for (i, s) in self.switches.iter().enumerate() {
            let k = |f: &str| format!("switch[{i}].{f}");
            p.gen(&k("upstream_generation"), s.upstream_generation);
            p.gen(&k("downstream_generation"), s.downstream_generation);
            p.lanes(&k("upstream_lanes"), s.upstream_lanes);
            p.lanes(&k("downstream_lanes"), s.downstream_lanes);
            if s.ports == 0 {
                p.push(k("ports"), "must be at least 1");
            }
            p.ports(&k("ports"), s.ports);
            let latency = p.time(&k("latency"), &s.latency);
            let power_w = parse_power(&s.power).unwrap_or_else(|e| {
                p.push(k("power"), e.0);
                0.0
            });
            if power_w < 0.0 {
                p.push(k("power"), "must not be negative");
            }
            let ingress_buffer = match crate::config::config_bytes(&s.ingress_buffer) {
                Err(e) => {
                    p.push(k("ingress_buffer"), e.0);
                    Bytes(0)
                }
                Ok(b) if b.0 < mps.0 + tlp.0 => {
                    p.push(
                        k("ingress_buffer"),
                        format!(
                            "'{}' cannot hold one full TLP ({} of payload and {} of overhead)",
                            s.ingress_buffer, mps, tlp
                        ),
                    );
                    b
                }
                Ok(b) => b,
            };
            let up = parent_of(&mut p, k("upstream"), &s.upstream);
            if up == Some(Parent::Switch(i)) {
                p.push(
                    k("upstream"),
                    format!("switch '{}' cannot attach to itself", s.name),
                );
            }
            uplinks.push(up);
            switches.push(SwitchConfig {
                name: s.name.clone(),
                upstream: up.unwrap_or(Parent::Root),
                uplink: PcieConfig {
                    generation: s.upstream_generation,
                    lanes: s.upstream_lanes,
                    max_payload: mps,
                    max_read_request: mrrs,
                    tlp_overhead: tlp,
                    dllp_overhead: dllp,
                    latency: uplink_latency,
                    interface_bandwidth: None,
                },
                downstream_generation: s.downstream_generation,
                downstream_lanes: s.downstream_lanes,
                ports: s.ports,
                latency,
                power_w,
                ingress_buffer,
            });
        }
        // Cycles: every switch's upstream chain must reach the root.
        for i in 0..switches.len() {
            let mut seen = vec![i];
            let mut cur = uplinks[i];
            while let Some(Parent::Switch(j)) = cur {
                if seen.contains(&j) {
                    if seen[0] == j && j == i && seen.len() > 1 {
                        let mut names: Vec<&str> =
                            seen.iter().map(|&x| switches[x].name.as_str()).collect();
                        names.push(&switches[i].name);
                        p.push(
                            format!("switch[{i}].upstream"),
                            format!("switches attach in a cycle: {}", names.join(" -> ")),
                        );
                    }
                    break;
                }
                seen.push(j);
                cur = uplinks[j];
            }
        }
        // Widths and port counts.
        let mut used_root = 0u32;
        let mut used: Vec<u32> = vec![0; switches.len()];
        for (i, s) in switches.iter().enumerate() {
            match uplinks[i] {
                Some(Parent::Root) => {
                    used_root += 1;
                    if s.uplink.lanes > self.root_complex.lanes {
                        p.push(
                            format!("switch[{i}].upstream_lanes"),
                            format!(
                                "x{} is wider than a root port (x{})",
                                s.uplink.lanes, self.root_complex.lanes
                            ),
                        );
                    }
                }
                Some(Parent::Switch(j)) if j != i => {
                    used[j] += 1;
                    if s.uplink.lanes > switches[j].downstream_lanes {
                        p.push(
                            format!("switch[{i}].upstream_lanes"),
                            format!(
                                "x{} is wider than switch '{}' allows on a downstream port (x{})",
                                s.uplink.lanes, switches[j].name, switches[j].downstream_lanes
                            ),
                        );
                    }
                }
                _ => {}
            }
        }
        let mut drives = Vec::new();
        for (i, d) in self.drives.iter().enumerate() {
            let k = |f: &str| format!("drive[{i}].{f}");
            let attach = parent_of(&mut p, k("attach"), &d.attach);
            let device = match device(i, d) {
                Ok(dev) => Some(dev),
                Err(e) => {
                    for q in e.problems {
                        p.push(
                            format!("drive[{i}].device"),
                            format!("{}: {}: {}", e.source, q.key, q.message),
                        );
                    }
                    None
                }
            };
            if let Some(l) = d.lanes {
                p.lanes(&k("lanes"), l);
            }
            let (port_gen, port_lanes, what) = match attach {
                Some(Parent::Root) => {
                    used_root += 1;
                    (
                        self.root_complex.generation,
                        self.root_complex.lanes,
                        "a root port".to_string(),
                    )
                }
                Some(Parent::Switch(j)) => {
                    used[j] += 1;
                    (
                        switches[j].downstream_generation,
                        switches[j].downstream_lanes,
                        format!("switch '{}' allows on a downstream port", switches[j].name),
                    )
                }
                None => (5, 16, String::new()),
            };
            if let Some(l) = d.lanes {
                if l > port_lanes {
                    p.push(
                        k("lanes"),
                        format!("x{l} is wider than {what} (x{port_lanes})"),
                    );
                }
            }
            if let (Some(dev), Some(attach)) = (device, attach) {
                let mut link = dev.pcie.clone();
                link.lanes = d
                    .lanes
                    .unwrap_or(link.lanes)
                    .min(link.lanes)
                    .min(port_lanes);
                link.generation = link.generation.min(port_gen);
                drives.push(DriveConfig {
                    name: d.name.clone(),
                    device: dev,
                    attach,
                    link,
                });
            }
        }
        if used_root > self.root_complex.ports {
            p.push(
                "root_complex.ports",
                format!(
                    "{used_root} things attach to the root complex but it has {} ports",
                    self.root_complex.ports
                ),
            );
        }
        for (j, s) in switches.iter().enumerate() {
            if used[j] > s.ports {
                p.push(
                    format!("switch[{j}].ports"),
                    format!(
                        "{} things attach to switch '{}' but it has {} downstream ports",
                        used[j], s.name, s.ports
                    ),
                );
            }
        }
        let host = match &self.host {
            Some(h) => {
                let mut c = crate::config::Collector {
                    problems: Vec::new(),
                };
                let host = h.resolve(&mut c);
                p.0.extend(c.problems);
                host
            }
            None => drives
                .first()
                .map(|d: &DriveConfig| d.device.host.clone())
                .unwrap_or_else(|| crate::config::HostConfig::driver_only(Time::ZERO, Time::ZERO)),
        };
        if !p.0.is_empty() {
            return Err(ConfigError {
                source: source.into(),
                problems: p.0,
            });
        }
        Ok(SystemConfig {
            name: self.name.clone(),
            description: self.description.clone(),
            host,
            root_generation: self.root_complex.generation,
            root_lanes: self.root_complex.lanes,
            root_ports: self.root_complex.ports,
            root_memory_bandwidth: memory_bandwidth,
            switches,
            drives,
            endpoints: Vec::new(),
        })
    }
}

fn load_device(name: &str, dir: &Path) -> Result<Device, ConfigError> {
    if crate::config::preset_text(name).is_some() {
        return Device::preset(name);
    }
    let p = dir.join(name);
    Device::load(&p.display().to_string())
}

/// Shipped system presets: (name, TOML text).
pub const SYSTEM_PRESETS: &[(&str, &str)] = &[(
    "seed002-4x-gen3-switch",
    include_str!("../../presets/systems/seed002-4x-gen3-switch.toml"),
)];

/// Names of the system presets.
pub fn system_preset_names() -> Vec<String> {
    SYSTEM_PRESETS.iter().map(|(n, _)| n.to_string()).collect()
}

/// The TOML text of a system preset.
pub fn system_preset_text(name: &str) -> Option<&'static str> {
    SYSTEM_PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| *t)
}

/// Device overrides given per drive, as (drive name or `"*"` for every
/// drive, key, value): those of drive `name`, in order.
pub fn drive_overrides(
    per_drive: &[(String, String, toml::Value)],
    name: &str,
) -> Vec<compose::Override> {
    per_drive
        .iter()
        .filter(|(who, _, _)| who == "*" || who == name)
        .map(|(_, k, v)| (k.clone(), v.clone()))
        .collect()
}

/// What `--set` accepts on a system.
const SET_HELP: &str = "on a system, --set takes a system-file key (root_complex.lanes, switch[0].latency, drive[1].lanes, host.submit_overhead), drives.KEY for every drive's device (drives.nand.channels) or DRIVE.KEY for one drive's (nvme0.ftl.over_provisioning)";

/// Is `key` a key of the system file itself (not of a drive's device)?
fn is_system_key(key: &str) -> bool {
    let head = key.split(['.', '[']).next().unwrap_or("").trim();
    matches!(
        head,
        "name" | "description" | "host" | "root_complex" | "switch" | "drive" | "extends"
    )
}

/// A system preset's or file's text, its source label and the directory
/// its relative device paths resolve against.
fn read_system(name_or_path: &str) -> Result<(String, String, PathBuf), ConfigError> {
    if let Some(t) = system_preset_text(name_or_path) {
        return Ok((
            t.to_string(),
            format!("system preset {name_or_path}"),
            PathBuf::from("."),
        ));
    }
    let path = Path::new(name_or_path);
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        source: name_or_path.into(),
        problems: vec![ConfigProblem {
            key: "(file)".into(),
            message: if path.extension().is_none() {
                format!(
                    "cannot read ({e}); system presets: {}",
                    system_preset_names().join(", ")
                )
            } else {
                format!("cannot read: {e}")
            },
        }],
    })?;
    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    Ok((text, name_or_path.to_string(), dir))
}

impl SystemConfig {
    /// A system preset by name, or a system file.
    pub fn load(name_or_path: &str) -> Result<SystemConfig, ConfigError> {
        let (text, source, dir) = read_system(name_or_path)?;
        SystemFile::from_toml_str(&text, &source)?.resolve(&source, &dir)
    }

    /// [`SystemConfig::load`] with `--set` overrides. A key of the system
    /// file (`root_complex.lanes`, `switch[0].ingress_buffer`,
    /// `drive[1].lanes`, `host.submit_overhead`) edits the system; any other
    /// key edits drives' devices as a device file's `--set` does:
    /// `drives.KEY` every drive's, `NAME.KEY` the drive named NAME's
    /// (`nvme0.nand.channels`).
    pub fn load_with(
        name_or_path: &str,
        overrides: &[compose::Override],
    ) -> Result<SystemConfig, ConfigError> {
        if overrides.is_empty() {
            return SystemConfig::load(name_or_path);
        }
        let (text, source, dir) = read_system(name_or_path)?;
        let (sys, dev): (Vec<_>, Vec<_>) = overrides
            .iter()
            .cloned()
            .partition(|(k, _)| is_system_key(k));
        // Device overrides: (drive or "*", key within the device, value).
        let per_drive: Vec<(String, String, toml::Value)> = dev
            .into_iter()
            .filter_map(|(k, v)| {
                let (who, rest) = k.split_once('.')?;
                Some((
                    if who == "drives" {
                        "*".into()
                    } else {
                        who.to_string()
                    },
                    rest.to_string(),
                    v,
                ))
            })
            .collect();
        let mut problems = Vec::new();
        for (k, _) in overrides {
            if !is_system_key(k) && !k.contains('.') {
                problems.push(ConfigProblem {
                    key: k.clone(),
                    message: SET_HELP.into(),
                });
            }
        }
        let mut names = Vec::new();
        let loaded = load_system_with(&text, &source, &sys, |_, d| {
            names.push(d.name.clone());
            load_drive_device(&d.device, &dir, &drive_overrides(&per_drive, &d.name))
        });
        // (No names: the file failed before its drives; its errors say why.)
        for (who, k, _) in per_drive.iter().filter(|_| !names.is_empty()) {
            if who != "*" && !names.contains(who) {
                problems.push(ConfigProblem {
                    key: format!("{who}.{k}"),
                    message: format!(
                        "'{who}' is neither a key of a system file nor a drive of this one ({}); {SET_HELP}",
                        names.join(", ")
                    ),
                });
            }
        }
        let cfg = match loaded {
            Ok((_, cfg)) => cfg,
            Err(mut e) => {
                e.problems.extend(problems);
                return Err(e);
            }
        };
        if problems.is_empty() {
            Ok(cfg)
        } else {
            Err(ConfigError { source, problems })
        }
    }

    /// The one-drive system of a device: a root port and the drive.
    pub fn single(device: Device) -> SystemConfig {
        if device.fpga.is_some() {
            return crate::csd::system_of(device);
        }
        SystemConfig {
            name: device.name.clone(),
            description: device.description.clone(),
            host: device.host.clone(),
            root_generation: device.pcie.generation,
            root_lanes: device.pcie.lanes,
            root_ports: 1,
            root_memory_bandwidth: None,
            switches: Vec::new(),
            drives: vec![DriveConfig {
                name: "nvme0".into(),
                link: device.pcie.clone(),
                device,
                attach: Parent::Root,
            }],
            endpoints: Vec::new(),
        }
    }
}

// Composing a system from code (Python's `ssdlab.System`): overrides of the
// system file's keys, devices given as text, device overrides per drive.

/// The directory a system named `source` resolves relative device paths
/// against: the file's own directory if `source` is a file, else `.`.
pub fn source_dir(source: &str) -> PathBuf {
    let p = Path::new(source);
    if p.is_file() {
        p.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."))
    } else {
        PathBuf::from(".")
    }
}

fn read_back_system(t: &toml::Table) -> Result<SystemFile, String> {
    toml::Value::Table(t.clone())
        .try_into::<SystemFile>()
        .map_err(|e| {
            e.to_string()
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" ")
        })
}

/// Parse a system file's text (with its `extends` chain) and apply
/// `overrides` at their key paths (`switch[0].upstream_lanes`,
/// `root_complex.lanes`, `drive[1].attach`), each checked alone on the file
/// so that a problem (unknown key, index out of range, wrong type) is keyed
/// by its override's path. A bare number where the file wants a string with
/// a unit (`switch[0].latency = 150`) is read as that string, as
/// `--set` does for device files. Returns the edited file and the overrides
/// as applied. The values are not checked yet: see [`SystemFile::resolve`].
pub fn apply_system_overrides(
    text: &str,
    source: &str,
    overrides: &[compose::Override],
) -> Result<(SystemFile, Vec<compose::Override>), ConfigError> {
    let file = SystemFile::from_toml_str(text, source)?;
    if overrides.is_empty() {
        return Ok((file, Vec::new()));
    }
    let base = compose::compose_system(text, source)?.table;
    crate::overrides::apply_table(&base, overrides, read_back_system, |p, v| {
        Ok((p.trim().to_string(), v.clone()))
    })
    .map_err(|problems| ConfigError {
        source: source.to_string(),
        problems,
    })
}

/// A drive's device as [`SystemFile::resolve`] loads it (`name` a preset,
/// or a device file relative to `dir`), with device `overrides` applied
/// (see [`crate::compose::load`]).
pub fn load_drive_device(
    name: &str,
    dir: &Path,
    overrides: &[compose::Override],
) -> Result<Device, ConfigError> {
    if overrides.is_empty() {
        return load_device(name, dir);
    }
    if let Some(t) = crate::config::preset_text(name) {
        return Ok(compose::load(&t, &format!("preset {name}"), overrides)?.1);
    }
    let p = dir.join(name);
    Device::load_with(&p.display().to_string(), overrides)
}

/// The whole door for a system built in code: the file's `extends` chain,
/// `overrides` of its keys ([`apply_system_overrides`]), and every check of
/// [`SystemFile::resolve`], each drive's device made by `device(index,
/// drive)`. A problem in a value an override set says so (`(set by
/// override switch[0].upstream_lanes = 32)`). Returns the file as edited
/// (for `to_toml`) and the resolved system.
pub fn load_system_with(
    text: &str,
    source: &str,
    overrides: &[compose::Override],
    device: impl FnMut(usize, &DriveFile) -> Result<Device, ConfigError>,
) -> Result<(SystemFile, SystemConfig), ConfigError> {
    let (file, applied) = apply_system_overrides(text, source, overrides)?;
    match file.resolve_with(source, device) {
        Ok(cfg) => Ok((file, cfg)),
        Err(mut e) => {
            crate::overrides::attribute(&mut e.problems, &applied);
            Err(e)
        }
    }
}
