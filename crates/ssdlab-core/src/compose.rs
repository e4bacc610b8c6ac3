//! Composing a device description: `extends` chains and overrides.
//!
//! A device file may start from a preset or another file and change only what
//! differs:
//!
//! ```toml
//! extends = "pm9a3-960g"        # a preset name, or a path relative to this file
//! name = "pm9a3-noplp"
//! [cache]
//! power_loss_protection = false
//! ```
//!
//! The parent is resolved first (it may extend another; a cycle is an error
//! naming every file in it), then this file's tables are merged into the
//! parent's key by key: a table merges recursively, any other value (numbers,
//! strings, arrays) replaces the parent's whole. A file cannot remove a key
//! its parent sets. A file that sets no `name` is named after its file stem.
//!
//! Overrides (`ssdlab run --set nand.channels=16`, Python's
//! `Device.with_`) are applied to the merged description by
//! [`crate::overrides::apply`]; [`load`] is the one door both use, so the
//! same key paths, value syntax and errors hold everywhere.
//!
//! Every problem keeps its key path; one found in a value that a parent file
//! (or an override) set says where it was set, with the line.

use crate::config::{preset_names, preset_text, ConfigError, ConfigProblem, Device, DeviceFile};
use crate::overrides::{parse_path, Segment};
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// Longest `extends` chain accepted (a deeper one is almost surely a mistake).
pub const MAX_CHAIN: usize = 32;

/// What kind of file a chain is made of: its presets are the ones `extends` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Device,
    System,
}

impl Kind {
    fn preset(self, name: &str) -> Option<String> {
        match self {
            Kind::Device => preset_text(name).map(|t| t.into_owned()),
            Kind::System => crate::system::config::system_preset_text(name).map(str::to_string),
        }
    }
    fn names(self) -> Vec<String> {
        match self {
            Kind::Device => preset_names(),
            Kind::System => crate::system::config::system_preset_names(),
        }
    }
}

/// Where a description's text came from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Place {
    /// A shipped preset.
    Preset(String),
    /// A file on disk (relative `extends` resolve against its directory).
    File(PathBuf),
    /// Text with no file (relative `extends` resolve against the current directory).
    Text(String),
}

impl Place {
    /// How errors name it.
    fn label(&self) -> String {
        match self {
            Place::Preset(n) => format!("preset {n}"),
            Place::File(p) => p.display().to_string(),
            Place::Text(s) => s.clone(),
        }
    }
    /// Identity for cycle detection.
    fn id(&self) -> String {
        match self {
            Place::Preset(n) => format!("preset:{n}"),
            Place::File(p) => {
                let c = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
                format!("file:{}", c.display())
            }
            Place::Text(s) => format!("text:{s}"),
        }
    }
    fn dir(&self) -> PathBuf {
        match self {
            Place::File(p) => p
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| PathBuf::from(".")),
            _ => PathBuf::from("."),
        }
    }
    /// A `source` string as given by a caller: a path if such a file exists.
    fn of_source(source: &str, kind: Kind) -> Place {
        if let Some(n) = source
            .strip_prefix("preset ")
            .or_else(|| source.strip_prefix("system preset "))
        {
            if kind.preset(n).is_some() {
                return Place::Preset(n.to_string());
            }
        }
        let p = Path::new(source);
        if p.is_file() {
            Place::File(p.to_path_buf())
        } else {
            Place::Text(source.to_string())
        }
    }
}

/// One file of a chain, as written.
#[derive(Debug, Clone)]
pub struct Layer {
    /// How errors name it (path, or `preset NAME`).
    pub source: String,
    text: String,
    table: Table,
}

/// A description with its `extends` chain merged.
#[derive(Debug, Clone)]
pub struct Composed {
    /// The named file (the most derived).
    pub source: String,
    /// The merged TOML, without `extends`.
    pub table: Table,
    /// The chain, most derived first.
    pub layers: Vec<Layer>,
}

fn problem(source: &str, key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError {
        source: source.to_string(),
        problems: vec![ConfigProblem {
            key: key.to_string(),
            message: message.into(),
        }],
    }
}

/// Read a preset name or a TOML file path: (text, source).
pub fn read(name_or_path: &str) -> Result<(String, String), ConfigError> {
    let p = Path::new(name_or_path);
    if preset_text(name_or_path).is_none() && (name_or_path.ends_with(".toml") || p.exists()) {
        let text = std::fs::read_to_string(p)
            .map_err(|e| problem(name_or_path, "(file)", format!("cannot read: {e}")))?;
        return Ok((text, name_or_path.to_string()));
    }
    match preset_text(name_or_path) {
        Some(t) => Ok((t.into_owned(), format!("preset {name_or_path}"))),
        None => Err(problem(
            &format!("preset {name_or_path}"),
            "(device)",
            format!(
                "no preset or file named '{name_or_path}'; presets: {}",
                preset_names().join(", ")
            ),
        )),
    }
}

/// The parent named by `extends = "<target>"` in the file at `from`.
fn find_parent(target: &str, from: &Place, kind: Kind) -> Result<(String, Place), String> {
    let looks_like_path =
        target.contains('/') || target.contains('\\') || target.ends_with(".toml");
    if !looks_like_path {
        if let Some(t) = kind.preset(target) {
            return Ok((t, Place::Preset(target.to_string())));
        }
    }
    let p = Path::new(target);
    let path = if p.is_absolute() {
        p.to_path_buf()
    } else {
        from.dir().join(p)
    };
    if path.is_file() {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read '{}': {e}", path.display()))?;
        return Ok((text, Place::File(path)));
    }
    Err(format!(
        "'{target}' is neither a preset nor a file (looked for {}); presets: {}",
        path.display(),
        kind.names().join(", ")
    ))
}

/// Longest run of one quote character a string value may hold: the toml
/// crate's writer (toml_write 0.1) counts runs in a `u8`, which overflows
/// at 256 (found by AFL++, `system_file`); merged files and `devices show`
/// are written back as TOML, so such a string is refused by key instead.
pub const MAX_QUOTE_RUN: usize = 255;

/// Key paths of string values in `t` (under `prefix`) that hold a run of
/// [`MAX_QUOTE_RUN`] or more `'` or `"`.
fn long_quote_runs(t: &Table, prefix: &str, out: &mut Vec<String>) {
    fn visit(v: &Value, path: String, out: &mut Vec<String>) {
        match v {
            Value::String(s) => {
                let (mut run, mut last) = (0usize, 0u8);
                for &b in s.as_bytes() {
                    run = if (b == b'"' || b == b'\'') && b == last {
                        run + 1
                    } else {
                        1
                    };
                    last = b;
                    if (b == b'"' || b == b'\'') && run >= MAX_QUOTE_RUN {
                        out.push(path);
                        return;
                    }
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    visit(x, format!("{path}[{i}]"), out);
                }
            }
            Value::Table(t) => long_quote_runs(t, &path, out),
            _ => {}
        }
    }
    for (k, v) in t {
        let path = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        visit(v, path, out);
    }
}

/// A shipped preset's text, parsed once per process (presets are compiled
/// in; the text is compared, so a caller's own text under a preset's name is
/// parsed as given).
fn preset_table(kind: Kind, name: &str, text: &str, source: &str) -> Result<Table, ConfigError> {
    type Memo = std::collections::HashMap<(bool, String), (String, Table)>;
    static MEMO: std::sync::Mutex<Option<Memo>> = std::sync::Mutex::new(None);
    let key = (kind == Kind::System, name.to_string());
    if let Ok(m) = MEMO.lock() {
        if let Some((t, table)) = m.as_ref().and_then(|m| m.get(&key)) {
            if t == text {
                return Ok(table.clone());
            }
        }
    }
    let table = parse_table(text, source)?;
    if let Ok(mut m) = MEMO.lock() {
        m.get_or_insert_with(Memo::new)
            .insert(key, (text.to_string(), table.clone()));
    }
    Ok(table)
}

fn parse_table(text: &str, source: &str) -> Result<Table, ConfigError> {
    toml::from_str::<Table>(text).map_err(|e| {
        let line = e.span().map(|s| line_at(text, s.start));
        let msg = match line {
            Some(l) => format!("{} (line {l})", e.message().trim()),
            None => e.message().trim().to_string(),
        };
        problem(source, "(toml)", msg)
    })
}

/// 1-based line of byte offset `at` in `text`.
pub(crate) fn line_at(text: &str, at: usize) -> usize {
    text.as_bytes()[..at.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// Merge `over` into `base`: tables recursively, anything else replaces.
fn merge(base: &mut Table, over: Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(Value::Table(b)), Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Resolve the `extends` chain of `text` (named `source`: a file path, a
/// `preset NAME`, or any label) and merge it into one table.
pub fn compose(text: &str, source: &str) -> Result<Composed, ConfigError> {
    compose_at(
        text,
        Place::of_source(source, Kind::Device),
        source,
        Kind::Device,
    )
}

/// [`compose`] for a system file (its `extends` names system presets).
pub fn compose_system(text: &str, source: &str) -> Result<Composed, ConfigError> {
    compose_at(
        text,
        Place::of_source(source, Kind::System),
        source,
        Kind::System,
    )
}

fn compose_at(
    text: &str,
    place: Place,
    top_source: &str,
    kind: Kind,
) -> Result<Composed, ConfigError> {
    let mut layers: Vec<Layer> = Vec::new();
    let mut ids: Vec<String> = Vec::new();
    let mut labels: Vec<String> = Vec::new();
    let mut cur_text = text.to_string();
    let mut cur = place;
    loop {
        let label = if layers.is_empty() {
            top_source.to_string()
        } else {
            cur.label()
        };
        let id = cur.id();
        if let Some(i) = ids.iter().position(|x| *x == id) {
            let mut cycle: Vec<String> = labels[i..].to_vec();
            cycle.push(label);
            return Err(problem(
                top_source,
                "extends",
                format!("cycle in extends: {}", cycle.join(" -> ")),
            ));
        }
        if layers.len() >= MAX_CHAIN {
            return Err(problem(
                top_source,
                "extends",
                format!("extends chain longer than {MAX_CHAIN} files"),
            ));
        }
        let mut table = match &cur {
            Place::Preset(name) => preset_table(kind, name, &cur_text, &label)?,
            _ => parse_table(&cur_text, &label)?,
        };
        let mut runs = Vec::new();
        long_quote_runs(&table, "", &mut runs);
        if let Some(key) = runs.first() {
            return Err(problem(
                &label,
                key,
                format!(
                    "a string with {MAX_QUOTE_RUN} or more quote characters in a row cannot be written back as TOML (a limit of the toml crate's writer): shorten the run"
                ),
            ));
        }
        let parent = table.remove("extends");
        ids.push(id);
        labels.push(label.clone());
        let next = match parent {
            None => None,
            Some(Value::String(target)) => match find_parent(&target, &cur, kind) {
                Ok(x) => Some(x),
                Err(m) => return Err(problem(&label, "extends", m)),
            },
            Some(other) => {
                return Err(problem(
                    &label,
                    "extends",
                    format!(
                        "expected a preset name or a file path (a string), found {}",
                        other.type_str()
                    ),
                ))
            }
        };
        layers.push(Layer {
            source: label,
            text: cur_text,
            table,
        });
        match next {
            None => break,
            Some((t, p)) => {
                cur_text = t;
                cur = p;
            }
        }
    }
    let mut merged = Table::new();
    for l in layers.iter().rev() {
        merge(&mut merged, l.table.clone());
    }
    // A derived file that sets no name is named after itself, not its parent.
    if layers.len() > 1 && !layers[0].table.contains_key("name") {
        let own = match Place::of_source(top_source, kind) {
            Place::File(p) => p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| top_source.to_string()),
            Place::Preset(n) => n,
            Place::Text(s) => s,
        };
        merged.insert("name".into(), Value::String(own));
    }
    Ok(Composed {
        source: top_source.to_string(),
        table: merged,
        layers,
    })
}

impl Composed {
    /// Sources of the chain's parents, nearest first (empty without `extends`).
    pub fn extends(&self) -> Vec<String> {
        self.layers
            .iter()
            .skip(1)
            .map(|l| l.source.clone())
            .collect()
    }

    /// Read the merged table as a [`DeviceFile`] (unknown keys and wrong
    /// types reported as for one file, each placed in the file that set it).
    pub fn device_file(&self) -> Result<DeviceFile, ConfigError> {
        // The merged table is already parsed: read it directly when it is
        // valid (the same serde reading as from text); the text paths below
        // are for the errors, which name lines and files.
        if let Ok(f) = Value::Table(self.table.clone()).try_into::<DeviceFile>() {
            return Ok(f);
        }
        if self.layers.len() == 1 {
            return DeviceFile::from_toml_str(&self.layers[0].text, &self.source);
        }
        let text = toml::to_string(&self.table)
            .map_err(|e| problem(&self.source, "(toml)", e.to_string()))?;
        let e = match DeviceFile::from_toml_str_bare(&text) {
            Ok(f) => return Ok(f),
            Err(e) => e,
        };
        Err(ConfigError {
            source: self.source.clone(),
            problems: e
                .into_iter()
                .map(|(key, msg)| {
                    let message = match self.where_set(&key) {
                        Some(w) => format!("{msg} ({w})"),
                        None => msg,
                    };
                    ConfigProblem { key, message }
                })
                .collect(),
        })
    }

    /// Where the value at `key` was written: "line N" in the named file, or
    /// "set in FILE, line N" in a parent. `None` if no file of the chain sets it.
    pub fn where_set(&self, key: &str) -> Option<String> {
        let segs = parse_path(key).ok()?;
        for (i, l) in self.layers.iter().enumerate() {
            if !table_has(&l.table, &segs) {
                continue;
            }
            let line = line_of(&l.text, &segs);
            return Some(match (i, line) {
                (0, Some(n)) => format!("line {n}"),
                (0, None) => return None,
                (_, Some(n)) => format!("set in {}, line {n}", l.source),
                (_, None) => format!("set in {}", l.source),
            });
        }
        None
    }
}

fn table_has(t: &Table, segs: &[Segment]) -> bool {
    let mut cur: Option<&Value> = None;
    for (i, s) in segs.iter().enumerate() {
        cur = match (i, s, cur) {
            (0, Segment::Key(k), _) => t.get(k),
            (_, Segment::Key(k), Some(Value::Table(t))) => t.get(k),
            (_, Segment::Index(ix), Some(Value::Array(a))) => a.get(*ix),
            _ => None,
        };
        if cur.is_none() {
            return false;
        }
    }
    true
}

/// Line (1-based) where the value at `segs` is written in `text`.
fn line_of(text: &str, segs: &[Segment]) -> Option<usize> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut item: &toml_edit::Item = doc.as_item();
    let mut span = None;
    for s in segs {
        match s {
            Segment::Key(k) => {
                let t = item.as_table_like()?;
                let (key, it) = t.get_key_value(k)?;
                span = key.span().or(it.span()).or(span);
                item = it;
            }
            Segment::Index(ix) => {
                let v = item.as_array()?.get(*ix)?;
                span = v.span().or(span);
                return span.map(|s| line_at(text, s.start));
            }
        }
    }
    span.map(|s| line_at(text, s.start))
}

/// One override as given: key path and TOML value.
pub type Override = (String, Value);

/// The whole door: resolve the `extends` chain of `text` (named `source`),
/// apply `overrides` in order, and validate. Returns the merged file as
/// written (for `devices show`) and the resolved device, or every problem,
/// each with its key path and, where a parent file or an override set the
/// value, where that was.
pub fn load(
    text: &str,
    source: &str,
    overrides: &[Override],
) -> Result<(DeviceFile, Device), ConfigError> {
    let composed = compose(text, source)?;
    let (file, overrides) = crate::overrides::apply_to(&composed, overrides)?;
    let mut dev = match file.resolve(source) {
        Ok(d) => d,
        Err(mut e) => {
            for i in crate::overrides::attribute(&mut e.problems, &overrides) {
                let p = &mut e.problems[i];
                if let Some(w) = composed.where_set(&p.key) {
                    p.message = format!("{} ({w})", p.message);
                }
            }
            return Err(e);
        }
    };
    dev.origin.extends = composed.extends();
    dev.origin.overrides = overrides
        .iter()
        .map(|(k, v)| crate::config::AppliedOverride {
            key: k.clone(),
            value: v.to_string(),
        })
        .collect();
    Ok((file, dev))
}

/// [`load`] of a preset name or file path.
pub fn load_named(
    name_or_path: &str,
    overrides: &[Override],
) -> Result<(DeviceFile, Device), ConfigError> {
    let (text, source) = read(name_or_path)?;
    load(&text, &source, overrides)
}

/// Parse `--set KEY=VALUE` arguments into overrides (value as in
/// [`crate::overrides::parse_value`]).
pub fn parse_sets(args: &[String]) -> Result<Vec<Override>, ConfigError> {
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for a in args {
        match a.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                let value = crate::overrides::parse_value(v);
                let mut runs = Vec::new();
                let mut one = Table::new();
                one.insert(k.trim().to_string(), value.clone());
                long_quote_runs(&one, "", &mut runs);
                if runs.is_empty() {
                    out.push((k.trim().to_string(), value));
                } else {
                    problems.push(ConfigProblem {
                        key: k.trim().to_string(),
                        message: format!(
                            "a string with {MAX_QUOTE_RUN} or more quote characters in a row cannot be written back as TOML: shorten the run"
                        ),
                    });
                }
            }
            _ => problems.push(ConfigProblem {
                key: a.clone(),
                message: "expected KEY=VALUE, e.g. --set nand.channels=16 or --set cache.write_buffer=64MiB".into(),
            }),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(ConfigError {
            source: "--set".into(),
            problems,
        })
    }
}
