//! A [`ServeSpec`] from `key=value` parameters: what `ssdlab serve` passes
//! to the NBD plugin (and what a user may pass to nbdkit directly).

use super::{ServeClock, ServeSpec};
use crate::compose;
use crate::config::Device;
use crate::device::Precondition;
use crate::system::config::SystemConfig;
use crate::units::{parse_bytes, parse_time, Time};
use std::path::PathBuf;

/// The keys [`ServeSpec::from_params`] takes, with what each means.
pub const KEYS: &[(&str, &str)] = &[
    (
        "device",
        "preset name or device TOML file (default pm9a3-960g)",
    ),
    (
        "system",
        "system TOML file (several drives behind a fabric); with drive=",
    ),
    (
        "drive",
        "which drive of the system to serve (default: its first)",
    ),
    (
        "set",
        "KEY=VALUE override of the device or system (repeatable)",
    ),
    (
        "backing",
        "sparse file holding the data (created if missing, kept); default: a temporary file",
    ),
    ("precondition", "fresh, fill (default) or steady"),
    ("seed", "simulation seed (default 42)"),
    (
        "queues",
        "NVMe queue pairs, 1 to 65535 (default 8); connection k uses pair k mod queues",
    ),
    (
        "max_transfer",
        "largest command (MDTS), e.g. 1MiB (default); larger requests are split",
    ),
    (
        "clock",
        "wall (default: requests released in real time) or simulated (released as soon as simulated; time advances only with the requests)",
    ),
    (
        "lookahead",
        "how far the simulation may run ahead of the wall clock, e.g. 20us (default)",
    ),
    (
        "spin",
        "the last part of each wait spent spinning rather than sleeping, e.g. 20us (default)",
    ),
    (
        "late_threshold",
        "a release later than this after its simulated completion counts late (default 20us)",
    ),
];

impl ServeSpec {
    /// Parse `params` (in order; `set` may repeat). Each error names its key
    /// and what was expected.
    pub fn from_params(params: &[(String, String)]) -> Result<ServeSpec, String> {
        let mut device: Option<String> = None;
        let mut system: Option<String> = None;
        let mut drive: Option<String> = None;
        let mut sets: Vec<String> = Vec::new();
        let mut rest: Vec<(&str, &str)> = Vec::new();
        for (k, v) in params {
            let v = v.trim();
            let once = |slot: &Option<String>| -> Result<(), String> {
                if slot.is_some() {
                    return Err(format!("serve: key '{k}' given twice"));
                }
                Ok(())
            };
            match k.as_str() {
                "device" => {
                    once(&device)?;
                    device = Some(v.to_string());
                }
                "system" => {
                    once(&system)?;
                    system = Some(v.to_string());
                }
                "drive" => {
                    once(&drive)?;
                    drive = Some(v.to_string());
                }
                "set" => sets.push(v.to_string()),
                _ if KEYS.iter().any(|(n, _)| *n == k) => {
                    if rest.iter().any(|(n, _)| n == k) {
                        return Err(format!("serve: key '{k}' given twice"));
                    }
                    rest.push((k.as_str(), v));
                }
                _ => {
                    return Err(format!(
                        "serve: unknown key '{k}' (expected one of: {})",
                        KEYS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                    ))
                }
            }
        }
        let overrides = compose::parse_sets(&sets).map_err(|e| format!("serve: key 'set': {e}"))?;
        let mut spec = match (&system, &device) {
            (Some(_), Some(_)) => return Err(
                "serve: keys 'system' and 'device' together: a system file names its own drives"
                    .into(),
            ),
            (Some(s), None) => {
                let cfg = SystemConfig::load_with(s, &overrides)
                    .map_err(|e| format!("serve: key 'system': {e}"))?;
                let first = cfg
                    .drives
                    .first()
                    .map(|d| d.name.clone())
                    .unwrap_or_default();
                let mut spec = ServeSpec::new_system(cfg);
                spec.drive = drive.clone().unwrap_or(first);
                spec
            }
            (None, d) => {
                if drive.is_some() {
                    return Err(
                        "serve: key 'drive' picks a drive of a system: give system= too".into(),
                    );
                }
                let name = d.as_deref().unwrap_or(crate::config::DEFAULT_DEVICE);
                let dev = Device::load_with(name, &overrides)
                    .map_err(|e| format!("serve: key 'device': {e}"))?;
                ServeSpec::new(dev)
            }
        };
        for (k, v) in rest {
            spec.set(k, v)?;
        }
        spec.check()?;
        Ok(spec)
    }

    /// Set one of the keys that tune serving (`backing`, `precondition`,
    /// `seed`, `queues`, `max_transfer`, `clock`, `lookahead`, `spin`,
    /// `late_threshold`) from its text; the error names the key.
    pub fn set(&mut self, k: &str, v: &str) -> Result<(), String> {
        let v = v.trim();
        let bad = |what: &str| format!("serve: key '{k}': expected {what}, got '{v}'");
        match k {
            "backing" => {
                if v.is_empty() {
                    return Err(bad("a file path"));
                }
                self.backing = Some(PathBuf::from(v));
            }
            "precondition" => {
                self.precondition = Precondition::parse(v)
                    .ok_or_else(|| bad("fresh, fill, steady or steady-exact"))?
            }
            "seed" => self.seed = v.parse().map_err(|_| bad("a whole number"))?,
            "queues" => {
                self.queues = v
                    .parse()
                    .ok()
                    .filter(|q| (1..=65_535).contains(q))
                    .ok_or_else(|| bad("a whole number from 1 to 65535"))?
            }
            "max_transfer" => {
                self.max_transfer = parse_bytes(v)
                    .map_err(|e| bad(&format!("a size such as 1MiB ({e})")))?
                    .0
            }
            "clock" => self.clock = ServeClock::parse(v).ok_or_else(|| bad("wall or simulated"))?,
            "lookahead" => self.lookahead = time(v, &bad)?,
            "late_threshold" => self.late_threshold = time(v, &bad)?,
            "spin" => self.spin = time(v, &bad)?,
            _ => return Err(format!("serve: key '{k}' is not a serving setting")),
        }
        Ok(())
    }
}

fn time(v: &str, bad: &dyn Fn(&str) -> String) -> Result<Time, String> {
    let t = parse_time(v).map_err(|e| bad(&format!("a time such as 20us ({e})")))?;
    if t > Time::s(1) {
        return Err(bad("a time of at most 1s"));
    }
    Ok(t)
}
