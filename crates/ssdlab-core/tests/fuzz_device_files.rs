//! Structured fuzzing of device files (issue 17, in-process part): every
//! shipped preset, shrunk to a small drive, with one to three values
//! replaced by odd ones (zero, negative, huge, non-numbers, wrong types,
//! unit-less numbers). Each mutant is either refused by the validator with
//! a key-path error, or it runs a short mixed job to the end: never a
//! panic, never a hang. Thousands of cases run in seconds.

mod common;

use proptest::prelude::*;
use ssdlab_core::config::{preset_names, preset_text, DeviceFile};
use ssdlab_core::workload::fio;
use ssdlab_core::{simulate_with_jobs, Precondition, RunSpec};
use std::time::{Duration, Instant};

/// Odd values a user (or a script) might write.
fn odd_values() -> Vec<toml::Value> {
    use toml::Value as V;
    vec![
        V::String("0B".into()),
        V::String("0".into()),
        V::String("0ns".into()),
        V::String("-5us".into()),
        V::String("1e300".into()),
        V::String("nan".into()),
        V::String("".into()),
        V::String("1PiB".into()),
        V::String("0%".into()),
        V::String("100%".into()),
        V::String("1000%".into()),
        V::String("0GT/s".into()),
        V::String("1ps".into()),
        V::String("1B".into()),
        V::String("abc".into()),
        V::Integer(0),
        V::Integer(-1),
        V::Integer(1),
        V::Integer(4_294_967_296),
        V::Integer(i64::MAX),
        V::Float(1e300),
        V::Float(f64::NAN),
        V::Float(-0.5),
        V::Boolean(true),
        V::Array(vec![]),
        // Valid-looking extremes: these get past the parser, so the model
        // itself meets them.
        V::String("512B".into()),
        V::String("4KiB".into()),
        V::String("1KiB".into()),
        V::String("1ns".into()),
        V::String("1s".into()),
        V::String("1%".into()),
        V::String("99%".into()),
        V::String("1MB/s".into()),
        V::String("100GB/s".into()),
        V::String("1MHz".into()),
        V::String("1mW".into()),
        V::String("1MT/s".into()),
        V::Integer(2),
        V::Integer(3),
        V::Integer(1000),
        V::Integer(65536),
        V::Float(0.5),
    ]
}

/// Dotted paths of every leaf (arrays count as leaves) of a table.
fn leaves(t: &toml::Table, prefix: &str, out: &mut Vec<String>) {
    for (k, v) in t {
        let p = if prefix.is_empty() {
            k.clone()
        } else {
            format!("{prefix}.{k}")
        };
        match v {
            toml::Value::Table(sub) => leaves(sub, &p, out),
            _ => out.push(p),
        }
    }
}

fn set(t: &mut toml::Table, path: &str, v: toml::Value) {
    let mut cur = t;
    let parts: Vec<&str> = path.split('.').collect();
    for p in &parts[..parts.len() - 1] {
        cur = match cur.get_mut(*p) {
            Some(toml::Value::Table(x)) => x,
            _ => return,
        };
    }
    cur.insert(parts[parts.len() - 1].to_string(), v);
}

/// A preset made small enough to simulate in milliseconds, with every key
/// written out (defaults included), so mutations reach them all.
fn small_preset(name: &str) -> toml::Table {
    let text = preset_text(name).expect("preset");
    let file = DeviceFile::from_toml_str(&text, name).expect("preset parses");
    let full = toml::to_string(&file).expect("serialise");
    let mut t: toml::Table = toml::from_str(&full).expect("preset TOML");
    // `extends` is resolved already.
    t.remove("extends");
    if let Some(toml::Value::Table(n)) = t.get_mut("nand") {
        n.insert("blocks_per_plane".into(), toml::Value::Integer(96));
        n.insert("channels".into(), toml::Value::Integer(2));
    }
    if let toml::Value::Table(f) = t
        .entry("ftl")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
    {
        // Static SLC regions sized for the full drive do not fit the small one.
        f.remove("slc_static");
        f.remove("slc_dynamic");
        f.insert(
            "over_provisioning".into(),
            toml::Value::String("25%".into()),
        );
    }
    if let Some(toml::Value::Table(h)) = t.get_mut("host") {
        // Buffered jobs need host memory.
        h.insert("memory".into(), toml::Value::String("64MiB".into()));
    }
    if let Some(toml::Value::Table(b)) = t.get_mut("backend") {
        b.insert("capacity".into(), toml::Value::String("64MiB".into()));
    }
    t
}

const JOB: &str = "[j]\nrw=randrw\nbs=4k,16k\niodepth=8\nnumber_ios=300\n[s]\nstonewall\nrw=write\nbs=128k\nnumber_ios=40\nfsync=8\n";
/// The same through the host page cache, with a sequential re-read.
const JOB_BUFFERED: &str = "[global]\ndirect=0\n[j]\nrw=randrw\nbs=4k,16k\niodepth=8\nnumber_ios=300\n[s]\nstonewall\nrw=write\nbs=128k\nnumber_ios=40\nfsync=8\n[r]\nstonewall\nrw=read\nbs=8k\nnumber_ios=200\n";

/// Resolve and (if valid) run the mutant; `Err` describes a panic or a hang.
fn exercise(t: &toml::Table) -> Result<(), String> {
    exercise_with(t, JOB)
}

fn exercise_with(t: &toml::Table, job: &str) -> Result<(), String> {
    let text = toml::to_string(t).map_err(|e| format!("serialise: {e}"))?;
    let outcome = std::panic::catch_unwind(|| {
        let Ok(dev) = DeviceFile::from_toml_str(&text, "mutant").and_then(|f| f.resolve("mutant"))
        else {
            return Ok(());
        };
        run_briefly(dev, job)
    });
    unwind(outcome).map_err(|e| format!("{e}\n{text}"))
}

/// Run `job` on `dev` for at most 10 s of wall time: an error only for a
/// hang (any simulation error is a clean refusal).
fn run_briefly(dev: ssdlab_core::config::Device, job: &str) -> Result<(), String> {
    let workload = fio::parse_str(job, "j.fio").expect("job");
    let spec = RunSpec {
        device: dev,
        workload,
        workload_name: "j.fio".into(),
        seed: 7,
        precondition: Precondition::Fresh,
        sample_interval: None,
        latency_histogram: false,
        job_stats: false,
        data_store: None,
        power_loss_at: None,
        after_recovery: None,
        later_power_losses: Vec::new(),
    };
    let t0 = Instant::now();
    let stop = || t0.elapsed() > Duration::from_secs(10);
    match simulate_with_jobs(&spec, &mut |_| {}, &stop) {
        Err(ssdlab_core::SimError::Interrupted) => {
            Err("hang: still running after 10 s".to_string())
        }
        _ => Ok(()),
    }
}

/// A caught panic as an error.
fn unwind(outcome: std::thread::Result<Result<(), String>>) -> Result<(), String> {
    match outcome {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            Err(format!("panic: {msg}"))
        }
    }
}

/// Values as a shell passes them to `--set KEY=VALUE` (text, parsed by
/// `overrides::parse_value`).
const ODD_SET_VALUES: &[&str] = &[
    "",
    "0",
    "-1",
    "1e309",
    "NaN",
    "inf",
    "18446744073709551616",
    "4KiB",
    "10PiB",
    "1h",
    "-5us",
    "50%",
    "200%",
    "true",
    "[1,2",
    "[]",
    "[\"1us\",\"2us\"]",
    "\"quoted\"",
    "1.5",
    "0.0000001",
    "lru",
    "{}",
    "=",
    "0B",
    "1TB/s",
];

fn presets() -> Vec<String> {
    let mut v: Vec<String> = preset_names()
        .into_iter()
        .filter(|n| preset_text(n).is_some())
        .collect();
    v.sort();
    v
}

#[test]
fn every_small_preset_runs_unmutated() {
    for p in presets() {
        let t = small_preset(&p);
        let text = toml::to_string(&t).unwrap();
        DeviceFile::from_toml_str(&text, &p)
            .and_then(|f| f.resolve(&p))
            .unwrap_or_else(|e| panic!("{p}: the shrunk preset must stay valid: {e}"));
        exercise(&t).unwrap_or_else(|e| panic!("{p}: {e}"));
        exercise_with(&t, JOB_BUFFERED).unwrap_or_else(|e| panic!("{p} (buffered): {e}"));
    }
}

proptest! {
    // SSDLAB_FUZZ_CASES=N runs a longer campaign (600 in the suite).
    #![proptest_config(ProptestConfig {
        cases: std::env::var("SSDLAB_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(600),
        failure_persistence: None,
        .. ProptestConfig::default()
    })]

    #[test]
    fn mutated_device_files_are_refused_or_run(
        preset in 0usize..64,
        picks in proptest::collection::vec((0usize..10_000, 0usize..64), 1..=2),
        buffered in any::<bool>(),
    ) {
        let names = presets();
        let name = &names[preset % names.len()];
        let mut t = small_preset(name);
        let mut paths = Vec::new();
        leaves(&t, "", &mut paths);
        paths.sort();
        let odd = odd_values();
        let mut changed = Vec::new();
        for (k, v) in picks {
            let path = &paths[k % paths.len()];
            let val = odd[v % odd.len()].clone();
            changed.push(format!("{path} = {val}"));
            set(&mut t, path, val);
        }
        if let Err(e) = exercise_with(&t, if buffered { JOB_BUFFERED } else { JOB }) {
            let first = e.lines().next().unwrap_or_default().to_string();
            panic!("{name} with {}: {first}", changed.join(", "));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("SSDLAB_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).map_or(300, |n: u32| n / 2),
        failure_persistence: None,
        .. ProptestConfig::default()
    })]

    /// `--set KEY=VALUE` as a user types it (issue 17): a key of the file,
    /// its bare name, an index past a list, a misspelling or a malformed
    /// path, with an odd value. Each is refused with an error that names
    /// what was set, or the edited drive runs: never a panic or a hang.
    #[test]
    fn mutated_set_overrides_are_refused_by_key_or_run(
        preset in 0usize..64,
        k in 0usize..10_000,
        v in 0usize..64,
        shape in 0usize..6,
    ) {
        let names = presets();
        let name = &names[preset % names.len()];
        let t = small_preset(name);
        let mut paths = Vec::new();
        leaves(&t, "", &mut paths);
        paths.sort();
        let path = &paths[k % paths.len()];
        let key = match shape {
            0 | 1 => path.clone(),
            2 => path.rsplit('.').next().unwrap_or(path).to_string(),
            3 => format!("{path}[7]"),
            4 => format!("{path}x"),
            _ => format!("{path}..["),
        };
        let val = ODD_SET_VALUES[v % ODD_SET_VALUES.len()];
        let text = toml::to_string(&t).unwrap();
        let ov = [(key.clone(), val.to_string())];
        let outcome = std::panic::catch_unwind(|| {
            match ssdlab_core::overrides::apply_str(&text, "mutant", &ov).and_then(|f| f.resolve("mutant")) {
                Err(e) => {
                    let msg = e.to_string();
                    let head = key.split(['.', '[']).next().unwrap_or(&key);
                    if msg.contains(head) {
                        Ok(())
                    } else {
                        Err(format!("the error does not name '{key}': {msg}"))
                    }
                }
                Ok(dev) => run_briefly(dev, JOB),
            }
        });
        if let Err(e) = unwind(outcome) {
            panic!("{name} with --set {key}={val}: {e}");
        }
    }
}

/// Seed 002's board with small drives (a device file next to it), as a
/// table, every key written out by the parser.
fn small_system(dir: &std::path::Path) -> toml::Table {
    let dev = toml::to_string(&small_preset("seed002-gen3-value")).unwrap();
    std::fs::write(dir.join("small.toml"), dev).unwrap();
    let text = preset_system_text();
    let mut t: toml::Table = toml::from_str(&text).unwrap();
    if let Some(toml::Value::Array(drives)) = t.get_mut("drive") {
        for d in drives {
            if let toml::Value::Table(d) = d {
                d.insert("device".into(), toml::Value::String("small.toml".into()));
            }
        }
    }
    t
}

fn preset_system_text() -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("presets/systems/seed002-4x-gen3-switch.toml"),
    )
    .unwrap()
}

/// Resolve and (if valid) run a mutated system file: refused, or run to
/// the end; never a panic or a hang.
fn exercise_system(t: &toml::Table, dir: &std::path::Path) -> Result<(), String> {
    use ssdlab_core::system::config::SystemFile;
    let text = toml::to_string(t).map_err(|e| format!("serialise: {e}"))?;
    let mut job = String::from("[global]\nrw=randrw\nbs=4k,64k\niodepth=4\nnumber_ios=200\n");
    for d in 0..4 {
        job += &format!("[d{d}]\nfilename=nvme{d}\n");
    }
    let outcome = std::panic::catch_unwind(|| {
        let Ok(cfg) = SystemFile::from_toml_str(&text, "mutant.toml")
            .and_then(|f| f.resolve("mutant.toml", dir))
        else {
            return Ok(());
        };
        let w = fio::parse_str(&job, "j.fio").expect("job");
        let Ok(mut sys) =
            ssdlab_core::System::from_config(cfg, &w, "j.fio", 7, Precondition::Fresh)
        else {
            return Ok(());
        };
        let t0 = Instant::now();
        match sys.run(&mut |_| {}, &|| t0.elapsed() > Duration::from_secs(10)) {
            Err(ssdlab_core::SimError::Interrupted) => {
                Err("hang: still running after 10 s".to_string())
            }
            _ => Ok(()),
        }
    });
    match outcome {
        Ok(r) => r.map_err(|e| format!("{e}\n{text}")),
        Err(_) => Err(format!("panic\n{text}")),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("SSDLAB_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(300),
        failure_persistence: None,
        .. ProptestConfig::default()
    })]

    #[test]
    fn mutated_system_files_are_refused_or_run(
        picks in proptest::collection::vec((0usize..10_000, 0usize..64), 1..=2),
    ) {
        let dir = std::env::temp_dir().join(format!("ssdlab-fuzz-sys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut t = small_system(&dir);
        // Leaves, with the drive and switch arrays' entries addressed by index.
        let mut paths: Vec<(String, Option<usize>, String)> = Vec::new();
        for (k, v) in &t {
            match v {
                toml::Value::Table(sub) => {
                    for kk in sub.keys() {
                        paths.push((k.clone(), None, kk.clone()));
                    }
                }
                toml::Value::Array(items) => {
                    for (i, it) in items.iter().enumerate() {
                        if let toml::Value::Table(sub) = it {
                            for kk in sub.keys() {
                                paths.push((k.clone(), Some(i), kk.clone()));
                            }
                        }
                    }
                }
                _ => paths.push((k.clone(), None, String::new())),
            }
        }
        paths.sort();
        let odd = odd_values();
        let mut changed = Vec::new();
        for (k, v) in picks {
            let (sec, idx, key) = &paths[k % paths.len()];
            let val = odd[v % odd.len()].clone();
            changed.push(format!("{sec}{}.{key} = {val}", idx.map(|i| format!("[{i}]")).unwrap_or_default()));
            let target = match (t.get_mut(sec), idx) {
                (Some(toml::Value::Table(x)), None) => Some(x),
                (Some(toml::Value::Array(a)), Some(i)) => match a.get_mut(*i) {
                    Some(toml::Value::Table(x)) => Some(x),
                    _ => None,
                },
                _ => None,
            };
            match target {
                Some(x) if !key.is_empty() => {
                    x.insert(key.clone(), val);
                }
                _ => {
                    t.insert(sec.clone(), val);
                }
            }
        }
        let r = exercise_system(&t, &dir);
        if let Err(e) = r {
            let first = e.lines().next().unwrap_or_default().to_string();
            panic!("system with {}: {first}", changed.join(", "));
        }
    }
}

#[test]
fn the_small_system_runs_unmutated() {
    let dir = std::env::temp_dir().join(format!("ssdlab-fuzz-sys0-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let t = small_system(&dir);
    let text = toml::to_string(&t).unwrap();
    ssdlab_core::system::config::SystemFile::from_toml_str(&text, "s.toml")
        .and_then(|f| f.resolve("s.toml", &dir))
        .unwrap_or_else(|e| panic!("the small system must stay valid: {e}"));
    exercise_system(&t, &dir).unwrap();
}

/// Inputs AFL++ found (`scripts/fuzz.sh`), kept as regressions: each file
/// in tests/data/fuzz/ is a device file and a job separated by a line
/// `----`, run as the `simulate` target runs it. Each must be refused by
/// key or run to its end; `expect` names the key that refuses it.
#[test]
fn afl_findings_stay_fixed() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/fuzz");
    let expect = [("simulate-page-size-2PiB.txt", Some("nand.page_size"))];
    for (name, key) in expect {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let (dev_text, job_text) = text.split_once("\n----\n").unwrap();
        let dev = ssdlab_core::compose::load(dev_text, name, &[]);
        match (dev, key) {
            (Err(e), Some(k)) => assert!(e.to_string().contains(k), "{name}: {e}"),
            (Err(e), None) => panic!("{name}: refused: {e}"),
            (Ok(_), Some(k)) => panic!("{name}: accepted, expected a problem at {k}"),
            (Ok((_, dev)), None) => {
                let w = ssdlab_core::workload::fio::parse_str(job_text, name).unwrap();
                let mut spec = ssdlab_core::RunSpec::new(dev, w, name);
                spec.precondition = ssdlab_core::Precondition::Fresh;
                let _ = ssdlab_core::simulate_quiet(&spec);
            }
        }
    }
    // AFL++ (system_file): 256 quote characters in a row overflowed the toml
    // writer's run counter when a merged file was written back: refused by
    // key in every file and override.
    let text = std::fs::read(dir.join("system-file-quote-run.toml")).unwrap();
    let text = String::from_utf8_lossy(&text);
    let e = ssdlab_core::system::config::SystemFile::from_toml_str(&text, "q.toml")
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("y") && e.contains("quote characters in a row"),
        "{e}"
    );
    let quotes = "\"".repeat(300);
    let dev = format!("extends = \"pm9a3-960g\"\ndescription = '{quotes}'\n");
    let e = ssdlab_core::compose::load(&dev, "q.toml", &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("description") && e.contains("in a row"), "{e}");
    let quotes = "'".repeat(254);
    let dev = format!("extends = \"pm9a3-960g\"\ndescription = \"{quotes}\"\n");
    assert!(
        ssdlab_core::compose::load(&dev, "q.toml", &[]).is_ok(),
        "254 in a row are fine"
    );
    let e = ssdlab_core::compose::parse_sets(&[format!("description='{}'", "\"".repeat(256))])
        .unwrap_err()
        .to_string();
    assert!(e.contains("description") && e.contains("in a row"), "{e}");
    // AFL++ (overrides): the same in a `--set` value.
    let text = std::fs::read(dir.join("overrides-quote-run.txt")).unwrap();
    let text = String::from_utf8_lossy(&text);
    let sets: Vec<String> = text.lines().skip(1).map(str::to_string).collect();
    let refused = match ssdlab_core::compose::parse_sets(&sets) {
        Err(e) => e.to_string(),
        Ok(o) => ssdlab_core::compose::load_named("pm9a3-960g", &o)
            .map(|_| ())
            .unwrap_err()
            .to_string(),
    };
    assert!(refused.contains("nand.t_read"), "{refused}");
}

/// Every time, size and rate in a device file has a stated range (one hour,
/// 1 PiB, 10 TB/s), and the NAND counts theirs: beyond them the validator
/// refuses the value by key (`ssdlab check` and `run` alike).
#[test]
fn values_beyond_their_stated_ranges_are_refused_by_key() {
    let base = common::SMALL_SLC;
    for (from, to, key) in [
        (
            r#"write_buffer = "256KiB""#,
            r#"write_buffer = "2PiB""#,
            "cache.write_buffer",
        ),
        (
            r#"t_prog = ["200us"]"#,
            r#"t_prog = ["2000000s"]"#,
            "nand.t_prog[0]",
        ),
        (
            r#"bus_bandwidth = "400MB/s""#,
            r#"bus_bandwidth = "400TB/s""#,
            "nand.bus_bandwidth",
        ),
        (
            r#"page_size = "4KiB""#,
            r#"page_size = "2PiB""#,
            "nand.page_size",
        ),
        ("channels = 2", "channels = 100000", "nand.channels"),
        (
            "pages_per_block = 64",
            "pages_per_block = 1000000",
            "nand.pages_per_block",
        ),
    ] {
        assert!(base.contains(from), "{from}");
        let text = base.replace(from, to);
        let e = ssdlab_core::config::DeviceFile::from_toml_str(&text, "t.toml")
            .unwrap()
            .resolve("t.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains(key), "{to}: {e}");
    }
}
