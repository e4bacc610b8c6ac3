//! Dotted-path overrides of a device description.
//!
//! A design-space sweep or a script changes a few values of a base device
//! file: `nand.channels = 16`, `nand.t_read[1] = "50us"`, `ftl.gc_policy =
//! "cost-benefit"`. [`apply`] sets each value at its key path (the same paths
//! [`crate::config::DeviceFile::resolve`] names in its problems) in the TOML
//! of the base file and reads the result back as a
//! [`DeviceFile`], so an override is checked by exactly the same rules as a
//! value written in the file. An unknown key, an index out of range or a
//! value of the wrong type is a [`ConfigProblem`] keyed by that override's
//! path; every such problem is reported, not only the first.
//!
//! Paths: keys separated by `.`, each optionally followed by `[i]` indices
//! (`nand.t_read[2]`, `nvme.wrr_weights[0]`). A missing table on the way
//! (`host.submit_overhead` when the file has no `[host]`) is created.

use crate::config::{ConfigError, ConfigProblem, DeviceFile};
use toml::{Table, Value};

/// One step of a key path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A table key.
    Key(String),
    /// An array index.
    Index(usize),
}

/// Split a dotted key path (`nand.t_read[1]`) into its segments.
pub fn parse_path(path: &str) -> Result<Vec<Segment>, String> {
    let mut segs = Vec::new();
    if path.trim().is_empty() {
        return Err("empty key path".into());
    }
    for part in path.split('.') {
        let (name, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if name.is_empty() {
            return Err(format!(
                "'{path}' is not a key path (expected keys joined by '.', e.g. nand.channels or nand.t_read[1])"
            ));
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return Err(format!("'{name}' in '{path}' is not a TOML bare key"));
        }
        segs.push(Segment::Key(name.to_string()));
        while !rest.is_empty() {
            let Some(end) = rest.find(']') else {
                return Err(format!("unclosed '[' in '{path}'"));
            };
            let idx = rest[1..end]
                .trim()
                .parse::<usize>()
                .map_err(|_| format!("'{}' in '{path}' is not an array index", &rest[..=end]))?;
            segs.push(Segment::Index(idx));
            rest = &rest[end + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(format!("unexpected '{rest}' after an index in '{path}'"));
            }
        }
    }
    Ok(segs)
}

/// Read an override value written as text, as on a command line: TOML
/// value syntax if it parses (`16`, `true`, `"50us"`, `["40us", "45us"]`),
/// otherwise the text itself as a string (`50us`, `cost-benefit`).
pub fn parse_value(text: &str) -> Value {
    let t = text.trim();
    match toml::from_str::<Table>(&format!("v = {t}")) {
        Ok(mut tab) => tab.remove("v").unwrap_or_else(|| Value::String(t.into())),
        Err(_) => Value::String(t.to_string()),
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a datetime",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

/// Set `value` at `segs` in `root`, creating missing tables on the way.
fn set(root: &mut Table, segs: &[Segment], value: Value) -> Result<(), String> {
    let mut cur: &mut Value = {
        let Some(Segment::Key(first)) = segs.first() else {
            return Err("a key path starts with a key".into());
        };
        if segs.len() == 1 {
            root.insert(first.clone(), value);
            return Ok(());
        }
        root.entry(first.clone()).or_insert_with(|| match segs[1] {
            Segment::Key(_) => Value::Table(Table::new()),
            Segment::Index(_) => Value::Array(Vec::new()),
        })
    };
    let mut walked = match &segs[0] {
        Segment::Key(k) => k.clone(),
        Segment::Index(_) => unreachable!("checked above"),
    };
    for (i, seg) in segs.iter().enumerate().skip(1) {
        let last = i == segs.len() - 1;
        let next_is_key = matches!(segs.get(i + 1), Some(Segment::Key(_)));
        match seg {
            Segment::Key(k) => {
                let Value::Table(t) = cur else {
                    return Err(format!("{walked} is {}, not a table", type_name(cur)));
                };
                if last {
                    t.insert(k.clone(), value);
                    return Ok(());
                }
                cur = t.entry(k.clone()).or_insert_with(|| {
                    if next_is_key {
                        Value::Table(Table::new())
                    } else {
                        Value::Array(Vec::new())
                    }
                });
                walked = format!("{walked}.{k}");
            }
            Segment::Index(ix) => {
                let Value::Array(a) = cur else {
                    return Err(format!("{walked} is {}, not an array", type_name(cur)));
                };
                let len = a.len();
                let Some(slot) = a.get_mut(*ix) else {
                    return Err(format!(
                        "index {ix} is out of range: {walked} has {len} element{}",
                        if len == 1 { "" } else { "s" }
                    ));
                };
                if last {
                    *slot = value;
                    return Ok(());
                }
                cur = slot;
                walked = format!("{walked}[{ix}]");
            }
        }
    }
    Ok(())
}

fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

fn read_back(t: &Table) -> Result<DeviceFile, String> {
    Value::Table(t.clone())
        .try_into::<DeviceFile>()
        .map_err(|e| one_line(&e.to_string()))
}

/// Apply `overrides` (key path, value) to the device file `text` (its
/// `extends` chain resolved, see [`crate::compose`]) and return the edited
/// [`DeviceFile`] (not yet resolved: call [`DeviceFile::resolve`] for the
/// value checks).
///
/// Errors: a problem in `text` itself is reported as by
/// [`DeviceFile::from_toml_str`]; otherwise every override that names no
/// key of a device file, indexes out of range, or has a value of the wrong
/// type is one problem keyed by its path.
pub fn apply(
    text: &str,
    source: &str,
    overrides: &[(String, Value)],
) -> Result<DeviceFile, ConfigError> {
    Ok(apply_to(&crate::compose::compose(text, source)?, overrides)?.0)
}

/// [`apply`] on a description whose `extends` chain is already merged.
///
/// Two conveniences, both checked like any override afterwards: a key named
/// in exactly one section may omit it (`channels` -> `nand.channels`), and
/// one value for a per-page-type list fills the list (`nand.t_read = "50us"`
/// -> `["50us", "50us", "50us"]` on TLC).
///
/// Returns the edited file and the overrides as applied (shorthands
/// expanded, bare numbers given as unit strings where the file wants those).
pub fn apply_to(
    composed: &crate::compose::Composed,
    overrides: &[(String, Value)],
) -> Result<(DeviceFile, Vec<(String, Value)>), ConfigError> {
    let source = composed.source.as_str();
    let base = composed.device_file()?;
    if overrides.is_empty() {
        return Ok((base, Vec::new()));
    }
    // Every key with its default filled in, for the shorthands.
    let full: Table = match Value::try_from(&base) {
        Ok(Value::Table(t)) => t,
        _ => Table::new(),
    };
    apply_table(&composed.table, overrides, read_back, |p, v| {
        shorthand(&full, p, v)
    })
    .map_err(|problems| ConfigError {
        source: source.to_string(),
        problems,
    })
}

/// One override as applied: (key path after shorthands, value).
pub type Applied = (String, Value);

/// The override engine of device and system files: set each override
/// (after `expand`) on `base` alone and read it back with `read_back`, so
/// a problem (unknown key, index out of range, wrong type) is keyed by that
/// override's path; a bare number where the file wants a string with a unit
/// (`--set cache.write_buffer=64`) is taken as that string, so the unit
/// check says what is missing, as it would in the file. Returns the file
/// with every override applied and the overrides as applied, or every
/// problem.
pub fn apply_table<T>(
    base: &Table,
    overrides: &[(String, Value)],
    read_back: impl Fn(&Table) -> Result<T, String>,
    expand: impl Fn(&str, &Value) -> Result<(String, Value), String>,
) -> Result<(T, Vec<Applied>), Vec<ConfigProblem>> {
    let mut applied = Vec::with_capacity(overrides.len());
    let mut problems = Vec::new();
    let mut all = base.clone();
    let problem = |key: &str, message: String| ConfigProblem {
        key: key.to_string(),
        message,
    };
    for (given, value) in overrides {
        let (path, value) = match expand(given, value) {
            Ok(x) => x,
            Err(m) => {
                problems.push(problem(given, m));
                continue;
            }
        };
        let segs = match parse_path(&path) {
            Ok(s) => s,
            Err(m) => {
                problems.push(problem(&path, m));
                continue;
            }
        };
        let alone = |v: &Value| {
            let mut t = base.clone();
            set(&mut t, &segs, v.clone()).and_then(|()| read_back(&t))
        };
        let mut value = value;
        let mut checked = alone(&value).map(|_| ());
        if matches!(&checked, Err(m) if m.contains("expected a string"))
            && matches!(value, Value::Integer(_) | Value::Float(_))
        {
            let as_text = Value::String(value.to_string());
            if alone(&as_text).is_ok() {
                value = as_text;
                checked = Ok(());
            }
        }
        if let Err(m) = checked.and_then(|()| set(&mut all, &segs, value.clone())) {
            problems.push(problem(&path, m));
            continue;
        }
        applied.push((path, value));
    }
    if problems.is_empty() {
        match read_back(&all) {
            Ok(f) => return Ok((f, applied)),
            Err(m) => problems.push(problem("(overrides)", m)),
        }
    }
    Err(problems)
}

/// Say in each problem whose key an override of `applied` set (the key
/// itself, inside it, or a table holding it) that the override set it.
/// Returns the problems it did not attribute.
pub fn attribute(problems: &mut [ConfigProblem], applied: &[(String, Value)]) -> Vec<usize> {
    let mut rest = Vec::new();
    for (i, p) in problems.iter_mut().enumerate() {
        let by = applied.iter().rev().find(|(k, _)| {
            *k == p.key
                || p.key.starts_with(&format!("{k}."))
                || p.key.starts_with(&format!("{k}["))
                || k.starts_with(&format!("{}.", p.key))
                || k.starts_with(&format!("{}[", p.key))
        });
        match by {
            Some((k, v)) => p.message = format!("{} (set by override {k} = {v})", p.message),
            None => rest.push(i),
        }
    }
    rest
}

/// Expand the two shorthands of [`apply_to`] against `full` (every key of
/// the base file, defaults filled in).
fn shorthand(full: &Table, path: &str, value: &Value) -> Result<(String, Value), String> {
    let mut path = path.trim().to_string();
    if !path.contains('.') && !path.contains('[') && !full.contains_key(&path) {
        let hits: Vec<&String> = full
            .iter()
            .filter(|(_, v)| matches!(v, Value::Table(t) if t.contains_key(&path)))
            .map(|(k, _)| k)
            .collect();
        if hits.len() > 1 {
            return Err(format!(
                "'{path}' is in several sections; give one of {}",
                hits.iter()
                    .map(|h| format!("{h}.{path}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if let Some(h) = hits.first() {
            path = format!("{h}.{path}");
        }
    }
    let mut value = value.clone();
    if let Some((sec, key)) = path.split_once('.') {
        if !key.contains('.')
            && !key.contains('[')
            && matches!(
                value,
                Value::String(_) | Value::Integer(_) | Value::Float(_)
            )
        {
            if let Some(Value::Array(cur)) = full.get(sec).and_then(|t| t.get(key)) {
                value = Value::Array(vec![value; cur.len()]);
            }
        }
    }
    Ok((path, value))
}

/// [`apply`] with values written as text (see [`parse_value`]).
pub fn apply_str(
    text: &str,
    source: &str,
    overrides: &[(String, String)],
) -> Result<DeviceFile, ConfigError> {
    let ov: Vec<(String, Value)> = overrides
        .iter()
        .map(|(k, v)| (k.clone(), parse_value(v)))
        .collect();
    apply(text, source, &ov)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::preset_text;

    fn pm() -> String {
        preset_text("pm9a3-960g").unwrap().to_string()
    }

    fn ov(k: &str, v: Value) -> (String, Value) {
        (k.to_string(), v)
    }

    #[test]
    fn paths_parse() {
        assert_eq!(
            parse_path("nand.t_read[1]").unwrap(),
            vec![
                Segment::Key("nand".into()),
                Segment::Key("t_read".into()),
                Segment::Index(1)
            ]
        );
        assert!(parse_path("nand..channels").is_err());
        assert!(parse_path("nand.t_read[x]").is_err());
        assert!(parse_path("nand.t_read[1").is_err());
        assert!(parse_path("").is_err());
    }

    #[test]
    fn values_parse_as_toml_or_string() {
        assert_eq!(parse_value("16"), Value::Integer(16));
        assert_eq!(parse_value("true"), Value::Boolean(true));
        assert_eq!(parse_value("50us"), Value::String("50us".into()));
        assert_eq!(parse_value("\"50us\""), Value::String("50us".into()));
        assert_eq!(
            parse_value("[\"1us\", \"2us\"]"),
            Value::Array(vec![
                Value::String("1us".into()),
                Value::String("2us".into())
            ])
        );
    }

    #[test]
    fn overrides_change_the_resolved_device() {
        let f = apply(
            &pm(),
            "pm",
            &[
                ov("nand.channels", Value::Integer(16)),
                ov("nand.t_read[1]", Value::String("50us".into())),
                ov("ftl.gc_policy", Value::String("cost-benefit".into())),
                ov("firmware.fetch", Value::String("1us".into())),
            ],
        )
        .unwrap();
        let d = f.resolve("pm").unwrap();
        assert_eq!(d.nand.channels, 16);
        assert_eq!(d.nand.t_read[1], crate::units::parse_time("50us").unwrap());
        assert_eq!(d.ftl.gc_policy, crate::config::GcPolicy::CostBenefit);
        assert_eq!(d.firmware.fetch, crate::units::parse_time("1us").unwrap());
    }

    #[test]
    fn every_bad_override_is_a_problem_at_its_path() {
        let e = apply(
            &pm(),
            "pm",
            &[
                ov("nand.chanels", Value::Integer(16)),
                ov("nand.channels", Value::String("many".into())),
                ov("nand.t_read[7]", Value::String("50us".into())),
                ov("nandd.channels", Value::Integer(1)),
                ov("nand.channels.x", Value::Integer(1)),
                ov("ftl.gc_policy", Value::String("greedy".into())),
            ],
        )
        .unwrap_err();
        let keys: Vec<_> = e.problems.iter().map(|p| p.key.as_str()).collect();
        assert_eq!(
            keys,
            vec![
                "nand.chanels",
                "nand.channels",
                "nand.t_read[7]",
                "nandd.channels",
                "nand.channels.x"
            ],
            "{e}"
        );
        assert!(e.problems[0].message.contains("chanels"), "{e}");
        assert!(e.problems[2].message.contains("out of range"), "{e}");
    }

    #[test]
    fn value_errors_come_from_resolve_with_the_same_key() {
        let f = apply(&pm(), "pm", &[ov("pcie.generation", Value::Integer(9))]).unwrap();
        let e = f.resolve("pm").unwrap_err();
        assert_eq!(e.problems[0].key, "pcie.generation");
    }

    #[test]
    fn bad_base_text_is_reported_as_by_from_toml_str() {
        let e = apply("name = ", "x.toml", &[]).unwrap_err();
        assert_eq!(e.source, "x.toml");
        assert_eq!(e.problems.len(), 1);
    }

    #[test]
    fn missing_tables_are_created() {
        let text: String = pm()
            .lines()
            .filter(|l| {
                !l.starts_with("[host]")
                    && !l.starts_with("submit_overhead")
                    && !l.starts_with("complete_overhead")
            })
            .collect::<Vec<_>>()
            .join("\n");
        assert!(!text.contains("[host]"));
        let f = apply_str(&text, "x", &[("host.submit_overhead".into(), "3us".into())]).unwrap();
        assert_eq!(f.host.submit_overhead, "3us");
    }
}
