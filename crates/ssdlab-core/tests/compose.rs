//! Device files that extend a preset or another file, and `--set` overrides:
//! chain resolution, merge rules, and the errors of each, by message.

use ssdlab_core::compose::{self, load, load_named, parse_sets};
use ssdlab_core::config::Device;
use ssdlab_core::units::parse_time;
use std::path::PathBuf;
use toml::Value;

/// A fresh directory for one test's files.
fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("compose-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(d: &std::path::Path, name: &str, text: &str) -> String {
    let p = d.join(name);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn err_of(r: Result<Device, ssdlab_core::config::ConfigError>) -> String {
    match r {
        Ok(d) => panic!("expected an error, got device {}", d.name),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_chain_merges_key_by_key_and_records_itself() {
    let d = dir("chain");
    // base/ extends a preset; the child, in another folder, extends base by a relative path.
    write(
        &d,
        "base/noplp.toml",
        "extends = \"pm9a3-960g\"\n[cache]\npower_loss_protection = false\n",
    );
    let child = write(
        &d,
        "exp/wide.toml",
        "extends = \"../base/noplp.toml\"\nname = \"wide\"\n[nand]\nchannels = 16\n",
    );
    let pm = Device::preset("pm9a3-960g").unwrap();
    let dev = Device::load(&child).unwrap();
    assert_eq!(dev.name, "wide");
    assert_eq!(dev.nand.channels, 16);
    // Everything else of [nand] comes from the preset, not from defaults.
    assert_eq!(dev.nand.t_read, pm.nand.t_read);
    assert_eq!(dev.nand.dies_per_chip, pm.nand.dies_per_chip);
    assert!(!dev.cache.power_loss_protection);
    assert!(pm.cache.power_loss_protection);
    assert_eq!(dev.origin.extends.len(), 2, "{:?}", dev.origin.extends);
    assert!(dev.origin.extends[0].ends_with("noplp.toml"));
    assert_eq!(dev.origin.extends[1], "preset pm9a3-960g");
    // A file that sets no name is named after itself.
    let base = Device::load(&d.join("base/noplp.toml").display().to_string()).unwrap();
    assert_eq!(base.name, "noplp");
    // A file without extends is what it always was.
    assert!(pm.origin.extends.is_empty() && pm.origin.overrides.is_empty());
}

#[test]
fn an_array_replaces_the_parents_whole() {
    let d = dir("array");
    let f = write(
        &d,
        "f.toml",
        "extends = \"pm9a3-960g\"\n[nand]\nt_read = [\"10us\", \"20us\", \"30us\"]\n",
    );
    let dev = Device::load(&f).unwrap();
    assert_eq!(dev.nand.t_read[2], parse_time("30us").unwrap());
}

#[test]
fn a_cycle_is_an_error_naming_every_file() {
    let d = dir("cycle");
    let a = write(&d, "a.toml", "extends = \"b.toml\"\n");
    write(&d, "b.toml", "extends = \"c.toml\"\nname = \"b\"\n");
    write(&d, "c.toml", "extends = \"a.toml\"\nname = \"c\"\n");
    let e = err_of(Device::load(&a));
    assert!(e.contains("extends: cycle in extends"), "{e}");
    for f in ["a.toml", "b.toml", "c.toml"] {
        assert!(e.contains(f), "{e}");
    }
    let selfref = write(&d, "self.toml", "extends = \"self.toml\"\n");
    let e = err_of(Device::load(&selfref));
    assert!(e.contains("cycle"), "{e}");
}

#[test]
fn a_missing_or_mistyped_parent_is_an_error_at_extends() {
    let d = dir("missing");
    let f = write(&d, "f.toml", "extends = \"pm9a3-96g\"\n");
    let e = err_of(Device::load(&f));
    assert!(
        e.contains("extends: 'pm9a3-96g' is neither a preset nor a file"),
        "{e}"
    );
    assert!(e.contains("pm9a3-960g"), "lists the presets: {e}");
    let g = write(&d, "g.toml", "extends = 3\n");
    let e = err_of(Device::load(&g));
    assert!(
        e.contains("extends: expected a preset name or a file path"),
        "{e}"
    );
    // A TOML syntax error in a parent names the parent and its line.
    write(&d, "broken.toml", "name = \"x\"\n[nand\n");
    let h = write(&d, "h.toml", "extends = \"broken.toml\"\n");
    let e = err_of(Device::load(&h));
    assert!(e.contains("broken.toml") && e.contains("line 2"), "{e}");
}

#[test]
fn problems_say_which_file_of_the_chain_set_the_value() {
    let d = dir("where");
    write(
        &d,
        "parent.toml",
        "extends = \"pm9a3-960g\"\nname = \"p\"\n\n[pcie]\nlanes = 3\n",
    );
    let child = write(
        &d,
        "child.toml",
        "extends = \"parent.toml\"\n[nand]\nchanels = 8\n",
    );
    // An unknown key: in the child, at its line.
    let e = err_of(Device::load(&child));
    assert!(e.contains("nand.chanels: unknown field `chanels`"), "{e}");
    assert!(e.contains("(line 3)"), "{e}");
    // A bad value set by the parent: the child names it, and where it was set.
    let child2 = write(&d, "child2.toml", "extends = \"parent.toml\"\n");
    let e = err_of(Device::load(&child2));
    assert!(
        e.contains("pcie.lanes: 3 lanes is not a PCIe link width"),
        "{e}"
    );
    assert!(e.contains("set in "), "{e}");
    assert!(e.contains("parent.toml, line 5"), "{e}");
}

#[test]
fn sets_parse_and_apply_like_the_file() {
    let ov = parse_sets(&[
        "nand.channels=16".into(),
        "cache.write_buffer=64MiB".into(),
        "nand.t_read[1]=\"50us\"".into(),
    ])
    .unwrap();
    assert_eq!(ov[0], ("nand.channels".into(), Value::Integer(16)));
    assert_eq!(ov[1].1, Value::String("64MiB".into()));
    let (_, dev) = load_named("pm9a3-960g", &ov).unwrap();
    assert_eq!(dev.nand.channels, 16);
    assert_eq!(dev.cache.write_buffer.0, 64 << 20);
    assert_eq!(dev.nand.t_read[1], parse_time("50us").unwrap());
    let keys: Vec<_> = dev
        .origin
        .overrides
        .iter()
        .map(|o| o.key.as_str())
        .collect();
    assert_eq!(
        keys,
        ["nand.channels", "cache.write_buffer", "nand.t_read[1]"]
    );
    assert_eq!(dev.origin.overrides[1].value, "\"64MiB\"");
    // Shorthands: a key of one section, one value for a list.
    let (_, dev) = load_named(
        "pm9a3-960g",
        &parse_sets(&["channels=4".into(), "nand.t_read=40us".into()]).unwrap(),
    )
    .unwrap();
    assert_eq!(dev.nand.channels, 4);
    assert!(dev
        .nand
        .t_read
        .iter()
        .all(|&t| t == parse_time("40us").unwrap()));
    assert_eq!(dev.origin.overrides[0].key, "nand.channels");
}

#[test]
fn set_errors_name_the_key_and_what_was_expected() {
    let e = parse_sets(&["nand.channels".into(), "=3".into()]).unwrap_err();
    assert_eq!(e.problems.len(), 2, "{e}");
    assert!(e.to_string().contains("expected KEY=VALUE"), "{e}");
    let all = |sets: &[&str]| {
        let ov = parse_sets(&sets.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
        load_named("pm9a3-960g", &ov).map(|x| x.1)
    };
    // unknown key
    let e = err_of(all(&["nand.chanels=8"]));
    assert!(e.contains("nand.chanels: unknown field `chanels`"), "{e}");
    // missing unit: a bare number where a size is wanted says so, as in the file
    let e = err_of(all(&["cache.write_buffer=64"]));
    assert!(e.contains("cache.write_buffer: '64' has no unit"), "{e}");
    assert!(e.contains("set by override cache.write_buffer"), "{e}");
    // out of range
    let e = err_of(all(&["pcie.generation=9"]));
    assert!(
        e.contains("pcie.generation: 9 is not a PCIe generation"),
        "{e}"
    );
    // wrong type
    let e = err_of(all(&["nand.channels=many"]));
    assert!(e.contains("nand.channels: invalid type"), "{e}");
    // index out of range
    let e = err_of(all(&["nand.t_read[7]=1us"]));
    assert!(e.contains("index 7 is out of range"), "{e}");
    // ambiguous shorthand
    let e = err_of(all(&["latency=1us"]));
    assert!(e.contains("'latency' is in several sections"), "{e}");
    // every problem, not only the first
    let e = all(&["nand.chanels=8", "ftl.gc_polcy=greedy"]).unwrap_err();
    assert_eq!(e.problems.len(), 2, "{e}");
}

#[test]
fn overrides_apply_on_top_of_an_extended_file() {
    let d = dir("both");
    let f = write(
        &d,
        "f.toml",
        "extends = \"pm9a3-960g\"\n[nand]\nchannels = 4\n",
    );
    let text = std::fs::read_to_string(&f).unwrap();
    let (file, dev) = load(&text, &f, &[("nand.channels".into(), Value::Integer(2))]).unwrap();
    assert_eq!(dev.nand.channels, 2);
    assert_eq!(file.nand.as_ref().unwrap().channels, 2);
    // The merged description has no `extends` left in it.
    let c = compose::compose(&text, &f).unwrap();
    assert!(!c.table.contains_key("extends"));
    assert_eq!(c.extends(), vec!["preset pm9a3-960g".to_string()]);
}

#[test]
fn the_report_records_extends_and_overrides() {
    let d = dir("report");
    let f = write(&d, "small.toml", "extends = \"seed001-slc-onfi\"\n");
    let ov = parse_sets(&["cache.write_buffer=1MiB".into()]).unwrap();
    let dev = Device::load_with(&f, &ov).unwrap();
    let spec = ssdlab_core::RunSpec {
        device: dev,
        workload: ssdlab_core::workload::fio::parse_str(
            "[w]\nrw=randwrite\nbs=4k\niodepth=4\nnumber_ios=2000\n",
            "t.fio",
        )
        .unwrap(),
        workload_name: "default".into(),
        seed: 1,
        precondition: ssdlab_core::Precondition::Fresh,
        sample_interval: None,
        latency_histogram: false,
        job_stats: false,
        data_store: None,
        power_loss_at: None,
        after_recovery: None,
        later_power_losses: Vec::new(),
    };
    let r = ssdlab_core::simulate_quiet(&spec).unwrap();
    let j: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(j["device"]["extends"][0], "preset seed001-slc-onfi");
    assert_eq!(j["device"]["overrides"][0]["key"], "cache.write_buffer");
    assert!(r
        .to_text()
        .contains("overrides: cache.write_buffer = \"1MiB\""));
    // A plain preset's report has neither key (reports of existing runs unchanged).
    let mut plain = spec.clone();
    plain.device = Device::preset("seed001-slc-onfi").unwrap();
    let r = ssdlab_core::simulate_quiet(&plain).unwrap();
    let j: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert!(j["device"].get("extends").is_none() && j["device"].get("overrides").is_none());
}

#[test]
fn zero_tlp_sizes_are_refused_by_the_validator_not_a_panic() {
    // Issue 17's two panics (divide by zero in the PCIe link): `check` and
    // `run` must refuse these files with the key.
    for (key, what) in [
        ("pcie.max_payload", "max payload size"),
        ("pcie.max_read_request", "max read request size"),
    ] {
        let ov = parse_sets(&[format!("{key}=0B")]).unwrap();
        let e = err_of(load_named("pm9a3-960g", &ov).map(|x| x.1));
        assert!(e.contains(key) && e.contains(what), "{e}");
    }
}
