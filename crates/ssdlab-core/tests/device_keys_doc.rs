//! docs/device-keys.md states every key of a device or system file with its
//! valid range (issue 17). These tests keep it honest:
//!
//! - every key the code knows (every field of `DeviceFile` and `SystemFile`,
//!   optional ones included, found by walking their serde descriptions) and
//!   every key a shipped preset writes out has a row, and every row names a
//!   real key: the doc cannot fall behind the code, nor keep a key the code
//!   dropped;
//! - for integer keys, the range a row states (`1 to 256`) is the range the
//!   validator enforces: both bounds accepted, one step outside refused
//!   with an error keyed by that key.

use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess};
use serde::Deserialize;
use ssdlab_core::compose::{load_named, parse_sets};
use ssdlab_core::config::{preset_names, ConfigError, DeviceFile};
use ssdlab_core::system::config::{
    system_preset_names, system_preset_text, SystemConfig, SystemFile,
};
use std::cell::RefCell;
use std::collections::BTreeSet;

const DOC: &str = include_str!("../../../docs/device-keys.md");

// ---------------------------------------------------------------------------
// Every key of a serde-described file type
// ---------------------------------------------------------------------------

/// A deserializer that reads nothing: it walks the type that asks, giving
/// every struct all its fields, every option a value, every list one element
/// and every map one entry named `NAME`, and records the dotted path of each
/// leaf (lists of plain values are leaves; lists of tables are `key[i]`).
struct Probe<'a> {
    path: String,
    out: &'a RefCell<BTreeSet<String>>,
}

impl<'a> Probe<'a> {
    fn at(&self, key: &str) -> Probe<'a> {
        Probe {
            path: if self.path.is_empty() {
                key.to_string()
            } else {
                format!("{}.{key}", self.path)
            },
            out: self.out,
        }
    }
    fn item(&self) -> Probe<'a> {
        Probe {
            path: format!("{}[i]", self.path),
            out: self.out,
        }
    }
    fn leaf(&self) {
        let p = self.path.strip_suffix("[i]").unwrap_or(&self.path);
        self.out.borrow_mut().insert(p.to_string());
    }
}

macro_rules! leaves {
    ($($method:ident => $visit:ident($value:expr)),* $(,)?) => {$(
        fn $method<V: de::Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
            self.leaf();
            v.$visit($value)
        }
    )*};
}

impl<'de, 'a> Deserializer<'de> for Probe<'a> {
    type Error = de::value::Error;

    fn deserialize_any<V: de::Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom(format!(
            "{}: a value of no stated type",
            self.path
        )))
    }
    leaves! {
        deserialize_bool => visit_bool(false),
        deserialize_u32 => visit_u32(0),
        deserialize_u64 => visit_u64(0),
        deserialize_i64 => visit_i64(0),
        deserialize_f64 => visit_f64(0.0),
        deserialize_str => visit_str(""),
        deserialize_string => visit_string(String::new()),
    }
    fn deserialize_option<V: de::Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        v.visit_some(self)
    }
    fn deserialize_seq<V: de::Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        v.visit_seq(Items(vec![self.item()]))
    }
    fn deserialize_tuple<V: de::Visitor<'de>>(
        self,
        len: usize,
        v: V,
    ) -> Result<V::Value, Self::Error> {
        v.visit_seq(Items((0..len).map(|_| self.item()).collect()))
    }
    fn deserialize_map<V: de::Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        let value = self.at("NAME");
        v.visit_map(Entries(vec![("NAME", value)], None))
    }
    fn deserialize_struct<V: de::Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Self::Error> {
        let entries = fields.iter().map(|f| (*f, self.at(f))).collect();
        v.visit_map(Entries(entries, None))
    }
    serde::forward_to_deserialize_any! {
        i8 i16 i32 i128 u8 u16 u128 f32 char bytes byte_buf unit unit_struct
        newtype_struct tuple_struct enum identifier ignored_any
    }
}

struct Items<'a>(Vec<Probe<'a>>);

impl<'de, 'a> SeqAccess<'de> for Items<'a> {
    type Error = de::value::Error;
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        if self.0.is_empty() {
            return Ok(None);
        }
        seed.deserialize(self.0.remove(0)).map(Some)
    }
}

struct Entries<'a>(Vec<(&'static str, Probe<'a>)>, Option<Probe<'a>>);

impl<'de, 'a> MapAccess<'de> for Entries<'a> {
    type Error = de::value::Error;
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        if self.0.is_empty() {
            return Ok(None);
        }
        let (key, value) = self.0.remove(0);
        self.1 = Some(value);
        let key: de::value::StrDeserializer<'_, Self::Error> = key.into_deserializer();
        seed.deserialize(key).map(Some)
    }
    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        match self.1.take() {
            Some(p) => seed.deserialize(p),
            None => Err(de::Error::custom("a value without its key")),
        }
    }
}

/// Every key path of the file type `T`, normalised (see [`normalise`]).
fn keys_of<'de, T: Deserialize<'de>>() -> BTreeSet<String> {
    let out = RefCell::new(BTreeSet::new());
    let probe = Probe {
        path: String::new(),
        out: &out,
    };
    if let Err(e) = T::deserialize(probe) {
        panic!("walking the file type: {e}");
    }
    out.into_inner()
        .into_iter()
        .map(|k| normalise(&k))
        .collect()
}

/// A key path as the doc writes it: list indexes as `[i]`, a core spec's
/// name as `NAME`, a stage's as `STAGE`.
fn normalise(key: &str) -> String {
    let mut parts: Vec<String> = key
        .split('.')
        .map(|p| match p.find('[') {
            Some(i) => format!("{}[i]", &p[..i]),
            None => p.to_string(),
        })
        .collect();
    if parts.len() > 2 && parts[0] == "controller" {
        match parts[1].as_str() {
            "core_specs" => parts[2] = "NAME".into(),
            "costs" => parts[2] = "STAGE".into(),
            _ => {}
        }
    }
    parts.join(".")
}

/// Dotted paths of every value a TOML table holds (lists of tables by `[i]`).
fn toml_keys(v: &toml::Value, prefix: &str, out: &mut BTreeSet<String>) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                toml_keys(v, &join(k), out);
            }
        }
        toml::Value::Array(a) if a.iter().any(|x| x.is_table()) => {
            for (i, x) in a.iter().enumerate() {
                toml_keys(x, &format!("{prefix}[{i}]"), out);
            }
        }
        _ => {
            out.insert(normalise(prefix));
        }
    }
}

// ---------------------------------------------------------------------------
// The doc's rows
// ---------------------------------------------------------------------------

/// One table row: its key and its cells.
struct Row {
    key: String,
    cells: Vec<String>,
}

/// The rows of the doc's part under the heading `## {part}`, up to the next
/// `## ` heading.
fn rows(part: &str) -> Vec<Row> {
    let heading = format!("## {part}");
    let Some(start) = DOC.lines().position(|l| l.trim() == heading) else {
        panic!("docs/device-keys.md has no '{heading}'");
    };
    DOC.lines()
        .skip(start + 1)
        .take_while(|l| !l.starts_with("## "))
        .filter_map(|l| {
            let l = l.trim();
            let inner = l.strip_prefix('|')?.strip_suffix('|')?;
            let cells: Vec<String> = inner.split(" | ").map(|c| c.trim().to_string()).collect();
            let key = cells.first()?.strip_prefix('`')?.strip_suffix('`')?;
            Some(Row {
                key: key.to_string(),
                cells,
            })
        })
        .collect()
}

const DEVICE_PART: &str = "Device files";
const SYSTEM_PART: &str = "System files";

fn row_keys(part: &str) -> BTreeSet<String> {
    let rs = rows(part);
    for r in &rs {
        assert_eq!(
            r.cells.len(),
            5,
            "docs/device-keys.md: the row of {} has {} cells, not 5 (key | type and unit | valid range | default | meaning)",
            r.key,
            r.cells.len()
        );
    }
    rs.into_iter().map(|r| r.key).collect()
}

/// Keys with no row. An empty list (`accelerators = []`) stands for its
/// tables' keys: it is documented by their rows (`accelerators[i].stage`).
fn missing(keys: &BTreeSet<String>, documented: &BTreeSet<String>) -> Vec<String> {
    keys.iter()
        .filter(|k| {
            let list = format!("{k}[i].");
            !documented.contains(*k) && !documented.iter().any(|d| d.starts_with(&list))
        })
        .cloned()
        .collect()
}

// ---------------------------------------------------------------------------
// The doc has every key, and only keys
// ---------------------------------------------------------------------------

#[test]
fn every_device_file_key_has_a_row() {
    let documented = row_keys(DEVICE_PART);
    let known = keys_of::<DeviceFile>();
    assert!(known.contains("nand.t_read_slc"), "{known:?}");
    assert!(known.contains("controller.costs.STAGE.cycles"), "{known:?}");
    let gone = missing(&known, &documented);
    assert!(
        gone.is_empty(),
        "device-file keys with no row in docs/device-keys.md ({DEVICE_PART}): {gone:?}"
    );
    // `extends` is read by the composer, before the file's own keys.
    let stale: Vec<&String> = documented
        .iter()
        .filter(|k| !known.contains(*k) && *k != "extends")
        .collect();
    assert!(
        stale.is_empty(),
        "docs/device-keys.md ({DEVICE_PART}) has rows for keys a device file does not have: {stale:?}"
    );
}

#[test]
fn every_key_of_every_device_preset_has_a_row() {
    let documented = row_keys(DEVICE_PART);
    let names = preset_names();
    assert!(names.len() >= 10, "{names:?}");
    for name in names {
        // As `ssdlab devices show` writes it: every section, defaults included.
        let (file, _) = load_named(&name, &[]).unwrap_or_else(|e| panic!("{e}"));
        let v = toml::Value::try_from(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut keys = BTreeSet::new();
        toml_keys(&v, "", &mut keys);
        assert!(keys.contains("ftl.mapping_unit"), "{name}: {keys:?}");
        let gone = missing(&keys, &documented);
        assert!(
            gone.is_empty(),
            "preset {name}: keys with no row in docs/device-keys.md: {gone:?}"
        );
    }
}

#[test]
fn every_system_file_key_has_a_row() {
    let device = row_keys(DEVICE_PART);
    let documented = row_keys(SYSTEM_PART);
    let known = keys_of::<SystemFile>();
    assert!(known.contains("switch[i].ingress_buffer"), "{known:?}");
    // A system's [host] is a device file's [host]: its rows are those.
    let (host, own): (BTreeSet<String>, BTreeSet<String>) =
        known.iter().cloned().partition(|k| k.starts_with("host."));
    let gone: Vec<String> = missing(&own, &documented)
        .into_iter()
        .chain(missing(&host, &device))
        .collect();
    assert!(
        gone.is_empty(),
        "system-file keys with no row in docs/device-keys.md: {gone:?}"
    );
    let stale: Vec<&String> = documented
        .iter()
        .filter(|k| !known.contains(*k) && *k != "extends")
        .collect();
    assert!(
        stale.is_empty(),
        "docs/device-keys.md ({SYSTEM_PART}) has rows for keys a system file does not have: {stale:?}"
    );
    for name in system_preset_names() {
        let text = system_preset_text(&name).unwrap_or_else(|| panic!("{name}"));
        let file = SystemFile::from_toml_str(text, &name).unwrap_or_else(|e| panic!("{e}"));
        let v = toml::Value::try_from(&file).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut keys = BTreeSet::new();
        toml_keys(&v, "", &mut keys);
        assert!(keys.contains("drive[i].device"), "{name}: {keys:?}");
        let (host, own): (BTreeSet<String>, BTreeSet<String>) =
            keys.into_iter().partition(|k| k.starts_with("host."));
        let gone: Vec<String> = missing(&own, &documented)
            .into_iter()
            .chain(missing(&host, &device))
            .collect();
        assert!(
            gone.is_empty(),
            "system preset {name}: keys with no row in docs/device-keys.md: {gone:?}"
        );
    }
}

// ---------------------------------------------------------------------------
// Integer ranges as stated are the ranges enforced
// ---------------------------------------------------------------------------

/// The integer range a row states: its range cell begins `LO to HI`.
fn stated_range(part: &str, key: &str) -> (u64, u64) {
    let rs = rows(part);
    let Some(r) = rs.iter().find(|r| r.key == key) else {
        panic!("docs/device-keys.md ({part}) has no row for {key}");
    };
    let cell = r.cells[2].replace('`', "");
    let num = |s: &str| s.trim_matches(|c: char| !c.is_ascii_digit()).parse::<u64>();
    let parsed = cell.split_once(" to ").and_then(|(lo, hi)| {
        let lo = num(lo.split_whitespace().last()?).ok()?;
        let hi = num(hi.split_whitespace().next()?).ok()?;
        Some((lo, hi))
    });
    parsed.unwrap_or_else(|| {
        panic!("docs/device-keys.md: the range of {key} ('{cell}') does not begin 'LO to HI'")
    })
}

/// Where and how one row's range is tried.
struct Case {
    /// The row's key.
    doc_key: &'static str,
    /// The key expected in the error, e.g. `nvme.wrr_weights[1]`.
    key: &'static str,
    /// The override that sets it, `{}` for the value (default `KEY={}`).
    set: Option<&'static str>,
    /// A device preset, or a system preset when `system`.
    preset: &'static str,
    system: bool,
    /// Overrides that make the rest of the drive fit a bound.
    with: &'static [&'static str],
    /// Try accepting the lower bound (not where the preset's other parts
    /// need more, e.g. a switch with four drives on it).
    lower_ok: bool,
}

const fn dev(doc_key: &'static str, key: &'static str, preset: &'static str) -> Case {
    Case {
        doc_key,
        key,
        preset,
        set: None,
        system: false,
        with: &[],
        lower_ok: true,
    }
}

fn cases() -> Vec<Case> {
    let small_nand: &[&str] = &["nand.blocks_per_plane=64", "ftl.over_provisioning=25%"];
    vec![
        dev("host.cores", "host.cores", "pm9a3-960g"),
        dev("host.page_cycles", "host.page_cycles", "pm9a3-960g"),
        dev("host.writeback_depth", "host.writeback_depth", "pm9a3-960g"),
        dev("pcie.generation", "pcie.generation", "pm9a3-960g"),
        dev("nvme.max_queues", "nvme.max_queues", "pm9a3-960g"),
        dev("nvme.max_queue_depth", "nvme.max_queue_depth", "pm9a3-960g"),
        dev(
            "nvme.arbitration_burst",
            "nvme.arbitration_burst",
            "pm9a3-960g",
        ),
        Case {
            set: Some("nvme.wrr_weights=[8, {}, 1]"),
            ..dev("nvme.wrr_weights", "nvme.wrr_weights[1]", "pm9a3-960g")
        },
        dev("ftl.gc_d_choices", "ftl.gc_d_choices", "pm9a3-960g"),
        dev(
            "ftl.gc_background_margin",
            "ftl.gc_background_margin",
            "pm9a3-960g",
        ),
        dev(
            "ftl.static_wl_threshold",
            "ftl.static_wl_threshold",
            "pm9a3-960g",
        ),
        Case {
            with: small_nand,
            ..dev("nand.channels", "nand.channels", "seed001-slc-onfi")
        },
        Case {
            with: small_nand,
            ..dev(
                "nand.chips_per_channel",
                "nand.chips_per_channel",
                "seed001-slc-onfi",
            )
        },
        Case {
            with: small_nand,
            ..dev(
                "nand.dies_per_chip",
                "nand.dies_per_chip",
                "seed001-slc-onfi",
            )
        },
        dev("nand.endurance", "nand.endurance", "pm9a3-960g"),
        dev("nand.bus_width_bits", "nand.bus_width_bits", "pm9a3-960g"),
        dev(
            "controller.cores[i].count",
            "controller.cores[1].count",
            "seed004-controller-1",
        ),
        dev(
            "controller.accelerators[i].instances",
            "controller.accelerators[0].instances",
            "seed004-controller-3",
        ),
        dev(
            "controller.costs.STAGE.cycles",
            "controller.costs.gc.cycles",
            "seed004-controller-1",
        ),
        dev(
            "controller.costs.STAGE.mem_accesses",
            "controller.costs.fetch.mem_accesses",
            "seed004-controller-1",
        ),
        dev(
            "controller.host_controller_cycles",
            "controller.host_controller_cycles",
            "seed000-eisc-ramdisk",
        ),
        dev("fpga.banks", "fpga.banks", "smartssd-3.84t"),
        dev(
            "fpga.interfaces_per_bank",
            "fpga.interfaces_per_bank",
            "smartssd-3.84t",
        ),
        dev("fpga.burst_beats", "fpga.burst_beats", "smartssd-3.84t"),
        dev(
            "fpga.axi_latency_cycles",
            "fpga.axi_latency_cycles",
            "smartssd-3.84t",
        ),
        Case {
            system: true,
            ..dev(
                "root_complex.ports",
                "root_complex.ports",
                "seed002-4x-gen3-switch",
            )
        },
        Case {
            system: true,
            lower_ok: false,
            ..dev(
                "switch[i].ports",
                "switch[0].ports",
                "seed002-4x-gen3-switch",
            )
        },
    ]
}

/// Resolve the case's preset with `key = value` (and its other overrides).
fn load(case: &Case, value: u64) -> Result<(), ConfigError> {
    let mut sets: Vec<String> = case.with.iter().map(|s| s.to_string()).collect();
    sets.push(match case.set {
        Some(s) => s.replace("{}", &value.to_string()),
        None => format!("{}={value}", case.key),
    });
    let overrides = parse_sets(&sets)?;
    if case.system {
        SystemConfig::load_with(case.preset, &overrides).map(|_| ())
    } else {
        load_named(case.preset, &overrides).map(|_| ())
    }
}

#[test]
fn integer_ranges_as_stated_are_enforced() {
    let cs = cases();
    assert!(cs.len() >= 10);
    let mut failures = Vec::new();
    for case in &cs {
        let part = if case.system {
            SYSTEM_PART
        } else {
            DEVICE_PART
        };
        let (lo, hi) = stated_range(part, case.doc_key);
        let mut accept = vec![hi];
        if case.lower_ok {
            accept.push(lo);
        }
        for v in accept {
            if let Err(e) = load(case, v) {
                failures.push(format!(
                    "{} = {v} (a bound stated for {}) is refused: {e}",
                    case.key, case.doc_key
                ));
            }
        }
        let mut refuse = vec![hi + 1];
        if lo > 0 {
            refuse.push(lo - 1);
        }
        for v in refuse {
            match load(case, v) {
                Ok(()) => failures.push(format!(
                    "{} = {v} (outside {lo} to {hi}, as stated for {}) is accepted",
                    case.key, case.doc_key
                )),
                Err(e) if !e.problems.iter().any(|p| p.key == case.key) => failures.push(format!(
                    "{} = {v} is refused, but no problem names {}: {e}",
                    case.key, case.key
                )),
                Err(_) => {}
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
