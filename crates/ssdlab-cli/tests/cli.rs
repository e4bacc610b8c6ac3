//! End-to-end tests of the `ssdlab` binary: outputs, exit codes and error messages.

use std::process::Command;

fn ssdlab(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ssdlab"))
        .args(args)
        .output()
        .expect("run ssdlab");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn tmp(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("ssdlab-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

const SMALL_DEVICE: &str = r#"
name = "small"
[ftl]
over_provisioning = "25%"
[cache]
write_buffer = "1MiB"
[nand]
channels = 2
chips_per_channel = 2
dies_per_chip = 1
planes_per_die = 2
blocks_per_plane = 64
pages_per_block = 96
page_size = "16KiB"
cell = "tlc"
t_read = ["40us", "45us", "50us"]
t_prog = ["450us", "450us", "450us"]
one_shot_program = true
t_prog_one_shot = "1ms"
t_erase = "3ms"
bus_rate = "800MT/s"
bus_width_bits = 8
"#;

#[test]
fn json_report_has_the_documented_keys() {
    let dev = tmp("small.toml", SMALL_DEVICE);
    let job = tmp("mix.fio", "[global]\nioengine=libaio\ndirect=1\n[mix]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=16\nnumber_ios=20000\n");
    let (code, out, err) = ssdlab(&[
        "run",
        "--device",
        &dev,
        "--job",
        &job,
        "--output-format",
        "json",
        "--seed",
        "5",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("valid JSON");
    assert_eq!(v["schema"], "ssdlab.report.v1");
    assert_eq!(v["seed"], 5);
    assert_eq!(v["device"]["name"], "small");
    for k in ["sim_time_ns", "wall_time_s", "sim_ios_per_wall_s", "waf"] {
        assert!(v[k].is_number(), "{k}");
    }
    for d in ["read", "write"] {
        for k in ["ios", "bytes", "iops", "bw_bytes_per_s"] {
            assert!(v[d][k].is_number(), "{d}.{k}");
        }
        for k in ["min", "mean", "max", "p50", "p90", "p99", "p99.9", "p99.99"] {
            assert!(v[d]["lat_ns"][k].is_number(), "{d}.lat_ns.{k}");
        }
    }
    for k in ["runs", "pages_moved", "blocks_erased"] {
        assert!(v["gc"][k].is_number());
    }
    for k in ["reads", "programs", "erases"] {
        assert!(v["flash"][k].is_number());
    }
    let ignored: Vec<&str> = v["ignored_options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["option"].as_str().unwrap())
        .collect();
    assert_eq!(ignored, vec!["ioengine"]); // direct=1 is applied
    assert_eq!(
        v["read"]["ios"].as_u64().unwrap() + v["write"]["ios"].as_u64().unwrap(),
        20000
    );
}

#[test]
fn text_report_and_output_file() {
    let dev = tmp("small2.toml", SMALL_DEVICE);
    let job = tmp(
        "r.fio",
        "[r]\nrw=randread\nbs=4k\niodepth=8\nnumber_ios=5000\n",
    );
    let out_path = tmp("report.txt", "");
    let (code, out, err) = ssdlab(&[
        "run", "--device", &dev, "--job", &job, "--output", &out_path,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.is_empty());
    let text = std::fs::read_to_string(&out_path).unwrap();
    assert!(text.contains("IOPS") && text.contains("lat (us)"), "{text}");
}

#[test]
fn unknown_device_lists_presets() {
    let (code, _, err) = ssdlab(&["run", "--device", "no-such-drive"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("no-such-drive") && err.contains("pm9a3-960g"),
        "{err}"
    );
}

#[test]
fn bad_device_file_names_every_key() {
    let bad = SMALL_DEVICE
        .replace("t_erase = \"3ms\"", "t_erase = \"3\"")
        .replace("channels = 2", "channels = 0");
    let dev = tmp("bad.toml", &bad);
    let (code, _, err) = ssdlab(&["check", &dev]);
    assert_eq!(code, 2);
    assert!(err.contains("bad.toml"), "{err}");
    assert!(
        err.contains("nand.t_erase") && err.contains("no unit"),
        "{err}"
    );
    assert!(err.contains("nand.channels"), "{err}");
}

#[test]
fn unknown_device_key_names_line() {
    let dev = tmp(
        "typo.toml",
        &SMALL_DEVICE.replace("[nand]", "[nand]\nchanels = 2"),
    );
    let (code, _, err) = ssdlab(&["check", &dev]);
    assert_eq!(code, 2);
    assert!(
        err.contains("typo.toml") && err.contains("chanels") && err.contains("line"),
        "{err}"
    );
}

#[test]
fn unsupported_fio_option_names_file_line_option() {
    let job = tmp(
        "bad.fio",
        "[global]\nbs=4k\n\n[j]\nrw=randread\nwrite_barrier=4\n",
    );
    let (code, _, err) = ssdlab(&[
        "run",
        "--job",
        &job,
        "--device",
        &tmp("small3.toml", SMALL_DEVICE),
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.fio:6") && err.contains("bssplit"),
        "{err}"
    );
}

#[test]
fn devices_lists_and_shows_presets() {
    let (code, out, _) = ssdlab(&["devices"]);
    assert_eq!(code, 0);
    for p in ["pm9a3-960g", "seed001-slc-onfi", "seed001-mlc-conventional"] {
        assert!(out.contains(p), "{out}");
    }
    let (code, out, err) = ssdlab(&["devices", "show", "pm9a3-960g"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("t_prog_one_shot") && out.contains("exported capacity"),
        "{out}"
    );
}

#[test]
fn validate_json_lists_checks() {
    let (code, out, err) = ssdlab(&["validate", "--output-format", "json", "--filter", "pm9a3"]);
    let v: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out} {err}"));
    let checks = v.as_array().unwrap();
    assert_eq!(checks.len(), 3, "{out}");
    for c in checks {
        for k in [
            "scenario",
            "metric",
            "reference",
            "simulated",
            "error_pct",
            "tolerance_pct",
            "source",
            "pass",
        ] {
            assert!(!c[k].is_null(), "{k} missing in {c}");
        }
    }
    // The exit status is 1 exactly when a check is out of tolerance: the
    // PM9A3's sequential write is (a known gap since its die count and
    // program time come from NAND sources: docs/devices/pm9a3-960g.md),
    // its sequential read is not.
    let passed = |name: &str| {
        checks
            .iter()
            .filter(|c| c["scenario"] == name)
            .map(|c| c["pass"] == true)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        passed("pm9a3-seqwrite-1m-empty"),
        vec![false, true],
        "{out}"
    );
    assert_eq!(passed("pm9a3-seqread-128k"), vec![true], "{out}");
    assert_eq!(code, 1, "{err}");
    let (code, out, err) = ssdlab(&[
        "validate",
        "--output-format",
        "json",
        "--filter",
        "pm9a3-seqread",
    ]);
    assert_eq!(code, 0, "{out} {err}");
}

fn key_paths(v: &serde_json::Value, prefix: &str, out: &mut std::collections::BTreeSet<String>) {
    if let serde_json::Value::Object(m) = v {
        for (k, x) in m {
            let p = format!("{prefix}{k}");
            out.insert(p.clone());
            // Percentile maps and option maps hold data-dependent keys: compare them separately.
            if k != "percentile" && k != "job options" {
                key_paths(x, &format!("{p}."), out);
            }
        }
    }
}

#[test]
fn fio_json_has_every_key_real_fio_writes() {
    // The same job run by Debian's fio against a file, and by ssdlab.
    let fio_ok = Command::new("fio")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !fio_ok {
        assert!(
            std::env::var("SSDLAB_REQUIRE_FIO").is_err(),
            "fio is required (SSDLAB_REQUIRE_FIO is set) but not installed"
        );
        eprintln!("SKIPPED: fio is not installed; scripts/test.sh installs it");
        return;
    }
    let data = tmp("fio.dat", "");
    let job = tmp(
        "cmp.fio",
        &format!("[global]\nbs=4k\niodepth=1\nioengine=psync\nsize=8m\nfilename={data}\n[mixed]\nrw=randrw\nrwmixread=70\nnumber_ios=500\n"),
    );
    let real = Command::new("fio")
        .args(["--output-format=json", &job])
        .output()
        .expect("run fio");
    let text = String::from_utf8_lossy(&real.stdout);
    let start = text.find('{').expect("fio printed JSON");
    let real: serde_json::Value = serde_json::from_str(&text[start..]).expect("fio JSON parses");
    let (code, out, err) = ssdlab(&[
        "run",
        "--job",
        &job,
        "--device",
        &tmp("cmpdev.toml", SMALL_DEVICE),
        "--output-format",
        "fio-json",
    ]);
    assert_eq!(code, 0, "{err}");
    let ours: serde_json::Value = serde_json::from_str(&out).expect("ssdlab fio-json parses");
    let (mut rk, mut ok) = (Default::default(), Default::default());
    key_paths(&real, "", &mut rk);
    key_paths(&ours, "", &mut ok);
    // Per-job keys: compare the first job of each.
    let (mut rj, mut oj) = (Default::default(), Default::default());
    key_paths(&real["jobs"][0], "", &mut rj);
    key_paths(&ours["jobs"][0], "", &mut oj);
    let missing: Vec<&String> = rj.difference(&oj).collect();
    assert!(
        missing.is_empty(),
        "job keys fio writes but ssdlab does not: {missing:?}"
    );
    for top in [
        "fio version",
        "timestamp",
        "timestamp_ms",
        "time",
        "global options",
        "jobs",
    ] {
        assert!(ok.contains(top) && rk.contains(top), "{top}");
    }
    // Percentile keys are fio's 17 defaults, formatted alike.
    let pk = |v: &serde_json::Value| -> Vec<String> {
        v["jobs"][0]["read"]["clat_ns"]["percentile"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    assert_eq!(pk(&real), pk(&ours));
    for k in ["rw", "bs", "iodepth", "numjobs"] {
        assert!(
            ours["jobs"][0]["job options"].get(k).is_some(),
            "job options.{k}"
        );
    }
    assert_eq!(
        ours["jobs"][0]["read"]["total_ios"].as_u64().unwrap()
            + ours["jobs"][0]["write"]["total_ios"].as_u64().unwrap(),
        500
    );
}

#[test]
fn extends_and_set_from_the_shell() {
    let base = tmp("ext-base.toml", SMALL_DEVICE);
    let child = tmp(
        "ext-child.toml",
        "extends = \"ext-base.toml\"\nname = \"wider\"\n[nand]\nchannels = 4\n",
    );
    // devices show prints the merged file and the chain.
    let (code, out, err) = ssdlab(&["devices", "show", &child]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("# extends: ") && out.contains("ext-base.toml"),
        "{out}"
    );
    assert!(
        out.contains("name = \"wider\"") && out.contains("channels = 4"),
        "{out}"
    );
    assert!(out.contains("cell = \"tlc\""), "parent's keys kept: {out}");
    // check validates the merged file, and --set on top of it.
    let (code, out, err) = ssdlab(&["check", &child, "--set", "nand.channels=8"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ok (wider"), "{out}");
    let (code, _, err) = ssdlab(&["check", &child, "--set", "nand.chanels=8"]);
    assert_eq!(code, 2);
    assert!(err.contains("nand.chanels: unknown field"), "{err}");
    // run: overrides recorded in the report.
    let job = tmp(
        "ext.fio",
        "[r]\nrw=randread\nbs=4k\niodepth=4\nnumber_ios=500\n",
    );
    let (code, out, err) = ssdlab(&[
        "run",
        "--device",
        &child,
        "--job",
        &job,
        "--precondition",
        "fill",
        "--set",
        "cache.write_buffer=2MiB",
        "--set",
        "t_read=30us",
        "--output-format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["device"]["name"], "wider");
    assert!(j["device"]["extends"][0]
        .as_str()
        .unwrap()
        .ends_with("ext-base.toml"));
    assert_eq!(j["device"]["overrides"][1]["key"], "nand.t_read");
    // bad --set: the key and what was expected
    let (code, _, err) = ssdlab(&["run", "--device", &base, "--set", "cache.write_buffer=64"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("cache.write_buffer: '64' has no unit"),
        "{err}"
    );
    let (code, _, err) = ssdlab(&["run", "--device", &base, "--set", "nand.channels"]);
    assert_eq!(code, 2);
    assert!(err.contains("expected KEY=VALUE"), "{err}");
    let cyc = tmp("ext-cycle.toml", "extends = \"ext-cycle.toml\"\n");
    let (code, _, err) = ssdlab(&["check", &cyc]);
    assert_eq!(code, 2);
    assert!(err.contains("cycle in extends"), "{err}");
}

#[test]
fn set_on_a_system_edits_the_system_or_its_drives() {
    tmp("sys-small.toml", SMALL_DEVICE);
    let sys = tmp(
        "sys-two.toml",
        "name = \"two\"\n[[switch]]\nname = \"sw0\"\nupstream_lanes = 8\ndownstream_lanes = 4\nports = 2\n\
         [[drive]]\nname = \"nvme0\"\ndevice = \"sys-small.toml\"\nattach = \"sw0\"\n\
         [[drive]]\nname = \"nvme1\"\ndevice = \"sys-small.toml\"\nattach = \"sw0\"\n",
    );
    // A system key and one drive's device key.
    let (code, out, err) = ssdlab(&[
        "systems",
        "show",
        &sys,
        "--set",
        "switch[0].latency=300ns",
        "--set",
        "nvme1.nand.channels=4",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("300ns port to port"), "{out}");
    let exported = |line: &str| line.split('(').nth(1).unwrap_or("").to_string();
    let l0 = out.lines().find(|l| l.starts_with("drive nvme0")).unwrap();
    let l1 = out.lines().find(|l| l.starts_with("drive nvme1")).unwrap();
    assert_ne!(
        exported(l0),
        exported(l1),
        "nvme1 has twice the channels: {out}"
    );
    // run: the drive's overrides are in its report.
    let job = tmp(
        "sys-two.fio",
        "[r]\nrw=randread\nbs=4k\niodepth=4\nnumber_ios=400\nfilename=nvme0:nvme1\n",
    );
    let (code, out, err) = ssdlab(&[
        "run",
        "--system",
        &sys,
        "--job",
        &job,
        "--set",
        "drives.cache.write_buffer=2MiB",
        "--set",
        "nvme1.nand.channels=4",
        "--output-format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ov = |d: &str| {
        j["drives"][d]["device"]["overrides"]
            .as_array()
            .map(|a| a.len())
    };
    assert_eq!(ov("nvme0"), Some(1), "{}", j["drives"]["nvme0"]["device"]);
    assert_eq!(ov("nvme1"), Some(2), "{}", j["drives"]["nvme1"]["device"]);
    // Bad keys: by name, with what --set accepts on a system.
    let (code, _, err) = ssdlab(&[
        "check",
        &sys,
        "--set",
        "nvme7.nand.channels=4",
        "--set",
        "channels=4",
        "--set",
        "switch[0].ingress_buffer=64",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("nvme7.nand.channels: 'nvme7' is neither a key of a system file nor a drive of this one (nvme0, nvme1)"),
        "{err}"
    );
    assert!(
        err.contains("channels: on a system, --set takes a system-file key"),
        "{err}"
    );
    assert!(
        err.contains("switch[0].ingress_buffer: '64' has no unit"),
        "{err}"
    );
}

#[test]
fn verify_needs_the_data_store_and_a_failure_exits_1() {
    let dev = tmp("verify-small.toml", SMALL_DEVICE);
    let job = tmp(
        "verify.fio",
        "[w]\nrw=write\nbs=4k\nsize=256k\nverify=crc32c\n\
         [r]\nstonewall\nrw=read\nbs=4k\noffset=1m\nsize=16k\nverify=crc32c\n",
    );
    // Without a store: refused before anything runs, saying how to turn it on.
    let (code, _, err) = ssdlab(&[
        "run",
        "--device",
        &dev,
        "--job",
        &job,
        "--precondition",
        "fresh",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--data-store on"), "{err}");
    // With one: the write job's read-back passes; the read-only job reads
    // blocks nobody wrote, fails as fio does, and the run exits 1.
    let (code, out, err) = ssdlab(&[
        "run",
        "--device",
        &dev,
        "--job",
        &job,
        "--precondition",
        "fresh",
        "--data-store",
        "memory",
        "--quiet",
    ]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("verify: 68 blocks (0.3 MiB) checked, 4 failed"),
        "{out}"
    );
    assert!(err.contains("bad magic header 0"), "{err}");
    let (code, _, err) = ssdlab(&["run", "--device", &dev, "--job", &job, "--data-store", ""]);
    assert_eq!(code, 2);
    assert!(err.contains("--data-store"), "{err}");
}

#[test]
fn power_loss_at_reports_the_loss_and_refuses_bad_times() {
    let dev = tmp("pl-small.toml", SMALL_DEVICE);
    let job = tmp(
        "pl.fio",
        "[w]\nrw=randwrite\nbs=4k\niodepth=8\nnumber_ios=20000\n",
    );
    let (code, out, err) = ssdlab(&[
        "run",
        "--device",
        &dev,
        "--job",
        &job,
        "--power-loss-at",
        "5ms",
        "--quiet",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("Power loss at 0.005000 s: 8 commands in flight;"),
        "{out}"
    );
    assert!(out.contains("acknowledged units lost"), "{out}");
    assert!(out.contains("Recovery: "), "{out}");
    let (code, out, _) = ssdlab(&[
        "run",
        "--device",
        &dev,
        "--job",
        &job,
        "--power-loss-at",
        "5ms",
        "--quiet",
        "--output-format",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["recovery"]["power_loss_at_s"].as_f64(), Some(0.005));
    assert!(v["recovery"]["recovery_time_s"].as_f64().unwrap() > 0.0);
    let (code, _, err) = ssdlab(&[
        "run",
        "--device",
        &dev,
        "--job",
        &job,
        "--power-loss-at",
        "soon",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--power-loss-at"), "{err}");
    let (code, _, err) = ssdlab(&[
        "run",
        "--device",
        &dev,
        "--job",
        &job,
        "--power-loss-at",
        "100s",
        "--quiet",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("the run ended before it"), "{err}");
}

#[test]
fn hybrid_mapping_checkpoints_from_the_command_line() {
    // BAST with a checkpoint every 2 ms, the power lost at 20 ms, then a
    // run on the recovered drive: the text names the checkpoints and what
    // recovery read of the last one; JSON carries them.
    let dev = tmp("hck-small.toml", SMALL_DEVICE);
    let job = tmp(
        "hck.fio",
        "[w]\nrw=randwrite\nbs=4k\niodepth=8\nnumber_ios=20000\n",
    );
    let args = [
        "run",
        "--device",
        &dev,
        "--job",
        &job,
        "--set",
        "ftl.mapping=bast",
        "--set",
        "ftl.log_blocks=2",
        "--set",
        "ftl.checkpoint_interval=2ms",
        "--power-loss-at",
        "20ms",
        "--quiet",
    ];
    let (code, out, err) = ssdlab(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Checkpoints: every 2.000 ms,"), "{out}");
    assert!(out.contains(" checkpoint units ("), "{out}");
    assert!(!out.contains(" 0 checkpoint units ("), "{out}");
    let mut json = args.to_vec();
    json.extend(["--output-format", "json"]);
    let (code, out, err) = ssdlab(&json);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["checkpoint"]["taken"].as_u64().unwrap() >= 1, "{out}");
    assert_eq!(v["checkpoint"]["skipped_no_room"].as_u64(), Some(0));
    assert!(v["recovery"]["checkpoint_pages_read"].as_u64().unwrap() > 0);
    let mut on = args.to_vec();
    on.extend(["--after-recovery", &job]);
    let (code, out, err) = ssdlab(&on);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("After recovery"), "{out}");
    assert_eq!(
        out.matches("Checkpoints: every 2.000 ms,").count(),
        2,
        "{out}"
    );
}

#[test]
fn after_recovery_runs_a_second_job_on_the_recovered_drive() {
    let dev = tmp("ar-small.toml", SMALL_DEVICE);
    let job = tmp(
        "ar-w.fio",
        "[w]\nrw=randwrite\nbs=4k\niodepth=8\nnumber_ios=20000\n",
    );
    let then = tmp(
        "ar-r.fio",
        "[r]\nrw=randread\nbs=4k\niodepth=8\nnumber_ios=3000\n",
    );
    let run = |extra: &[&str]| {
        let mut a = vec!["run", "--device", &dev, "--job", &job, "--quiet"];
        a.extend_from_slice(extra);
        ssdlab(&a)
    };
    let (code, out, err) = run(&["--power-loss-at", "5ms", "--after-recovery", &then]);
    assert_eq!(code, 0, "{err}");
    let (first, second) = out.split_once("After recovery").expect("two reports");
    assert!(first.contains("Power loss at 0.005000 s"), "{out}");
    assert!(
        second.contains("read:") && second.contains("3000 I/Os"),
        "{out}"
    );
    assert!(!second.contains("Power loss"), "{out}");
    let (code, out, _) = run(&[
        "--power-loss-at",
        "5ms",
        "--after-recovery",
        &then,
        "--output-format",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["recovery"]["power_loss_at_s"].as_f64(), Some(0.005));
    assert_eq!(v["after_recovery"]["read"]["ios"].as_u64(), Some(3000));
    assert!(v["after_recovery"].get("recovery").is_none());
    // Without a power loss, with fio output, or a missing job: errors.
    let (code, _, err) = run(&["--after-recovery", &then]);
    assert_eq!(code, 2);
    assert!(err.contains("--power-loss-at"), "{err}");
    let (code, _, err) = run(&[
        "--power-loss-at",
        "5ms",
        "--after-recovery",
        &then,
        "--output-format",
        "fio-json",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--output-format text or json"), "{err}");
    let (code, _, err) = run(&[
        "--power-loss-at",
        "5ms",
        "--after-recovery",
        "/nonexistent.fio",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--after-recovery") && err.contains("/nonexistent.fio"),
        "{err}"
    );
    // A second power loss cuts the run after the first recovery; the read
    // job runs after the second.
    let (code, out, err) = run(&[
        "--power-loss-at",
        "5ms",
        "--after-recovery",
        &job,
        "--power-loss-at",
        "3ms",
        "--after-recovery",
        &then,
        "--output-format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let second = &v["after_recovery"];
    assert_eq!(second["recovery"]["power_loss_at_s"].as_f64(), Some(0.003));
    assert!(second["write"]["ios"].as_u64().unwrap() > 0);
    assert_eq!(second["after_recovery"]["read"]["ios"].as_u64(), Some(3000));
    assert!(second["after_recovery"].get("recovery").is_none());
    // Two power losses need a job between them; a job needs its power loss.
    let (code, _, err) = run(&["--power-loss-at", "5ms", "--power-loss-at", "3ms"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--power-loss-at given 2 times") && err.contains("--after-recovery"),
        "{err}"
    );
    let (code, _, err) = run(&[
        "--power-loss-at",
        "5ms",
        "--after-recovery",
        &then,
        "--after-recovery",
        &then,
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--after-recovery given 2 times"), "{err}");
}

/// A sampling period shorter than 1 us is refused by flag (a picosecond
/// one took 10^12 sample events per simulated second: a hang).
#[test]
fn a_too_short_sample_interval_is_refused() {
    for v in ["1ps", "999ns", "0s"] {
        let (code, _, err) = ssdlab(&["run", "--sample-interval", v, "--quiet"]);
        assert_eq!(code, 2, "{v}: {err}");
        assert!(
            err.contains("--sample-interval") && err.contains("at least 1us"),
            "{v}: {err}"
        );
    }
}

/// `--precondition steady` builds the state from a scaled-down drive where
/// it can and says so; `steady-exact` runs the whole process; the two reach
/// the same WAF (the preconditioner's last window, and the run after it).
#[test]
fn steady_is_scaled_where_it_can_be_and_steady_exact_is_not() {
    let job = tmp(
        "steady-w.fio",
        "[w]\nrw=randwrite\nbs=4k\niodepth=32\nnumber_ios=20000\nnorandommap=1\n",
    );
    // The PM9A3 preset with 600 blocks of 96 pages per plane (32 GB): a
    // sixteenth of a drive write spans 1,000+ blocks, so 4 snapshots.
    let run_set = |pre: &str, format: &str, set: &[&str]| {
        let mut args = vec![
            "run",
            "--set",
            "nand.blocks_per_plane=600",
            "--set",
            "nand.pages_per_block=96",
            "--job",
            &job,
            "--precondition",
            pre,
            "--output-format",
            format,
        ];
        for s in set {
            args.extend(["--set", s]);
        }
        let (code, out, err) = ssdlab(&args);
        assert_eq!(code, 0, "{pre}: {err}");
        out
    };
    let run = |pre: &str, format: &str| run_set(pre, format, &[]);
    let json = |pre: &str| {
        serde_json::from_str::<serde_json::Value>(&run(pre, "json")).expect("valid JSON")
    };
    let (scaled, exact) = (json("steady"), json("steady-exact"));
    assert_eq!(scaled["precondition"]["mode"], "steady");
    assert_eq!(
        scaled["precondition"]["method"],
        "scaled: 8 of 32 units, 4 snapshots"
    );
    assert_eq!(exact["precondition"]["mode"], "steady-exact");
    assert_eq!(exact["precondition"]["method"], "exact");
    let f = |v: &serde_json::Value, k: &[&str]| {
        k.iter().fold(v, |v, k| &v[k]).as_f64().expect("a number")
    };
    for key in [&["precondition", "waf"][..], &["waf"]] {
        let (a, b) = (f(&scaled, key), f(&exact, key));
        assert!((a / b - 1.0).abs() < 0.03, "{key:?}: scaled {a} exact {b}");
    }
    // The text report names the method.
    let text = run("steady", "text");
    assert!(
        text.contains("precondition: steady (scaled: 8 of 32 units, 4 snapshots)"),
        "{text}"
    );
    // A setting that keeps `steady` from scaling is named in the report.
    let out = run_set("steady", "text", &["nand.grown_bad_rate=0.01%"]);
    assert!(
        out.contains(
            "precondition: steady (exact, not scaled: grown bad blocks [nand.grown_bad_rate])"
        ),
        "{out}"
    );
}

/// `scripts/report_hash.py` (the refactor check of report_hashes.sh and
/// build_pgo.sh): the same run hashes the same whatever its wall time, a
/// different seed does not, and input that is not JSON is an error.
#[test]
fn report_hash_ignores_only_wall_time() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/report_hash.py");
    let dev = tmp("hash-small.toml", SMALL_DEVICE);
    let job = tmp(
        "hash.fio",
        "[r]\nrw=randrw\nbs=4k\niodepth=8\nnumber_ios=3000\n",
    );
    let report = |seed: &str| {
        let (code, out, err) = ssdlab(&[
            "run",
            "--quiet",
            "--device",
            &dev,
            "--job",
            &job,
            "--seed",
            seed,
            "--output-format",
            "json",
        ]);
        assert_eq!(code, 0, "{err}");
        out
    };
    let hash = |json: &str| {
        use std::io::Write as _;
        let mut child = Command::new("python3")
            .arg(script)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run python3 scripts/report_hash.py");
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(json.as_bytes())
            .expect("write the report");
        let out = child.wait_with_output().expect("wait");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (a, c) = (report("1"), report("2"));
    // The same report with other wall times (edited as text: a parse and
    // re-serialisation could round other numbers).
    let mut b = a.clone();
    for key in ["\"wall_time_s\":", "\"sim_ios_per_wall_s\":"] {
        let at = b.find(key).unwrap_or_else(|| panic!("no {key} in {a}")) + key.len();
        let end = at + b[at..].find([',', '\n', '}']).expect("end of the value");
        b.replace_range(at..end, " 12345.5");
    }
    assert_ne!(a, b);
    let (ok, ha, err) = hash(&a);
    assert!(ok && ha.len() == 64, "{ha} {err}");
    assert_eq!(hash(&b).1, ha);
    assert_eq!(hash(&report("1")).1, ha, "a rerun hashes the same");
    assert_ne!(hash(&c).1, ha, "another seed, another report");
    let (ok, _, err) = hash("{\"a\":");
    assert!(!ok);
    assert!(err.contains("not a JSON report"), "{err}");
}

/// `scripts/build_pgo.sh` (the profile-guided build: two release builds
/// and a training run, too long for the suite) at least parses, and names
/// the binary it builds and the check it makes.
#[test]
fn build_pgo_script_parses() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/build_pgo.sh");
    let out = Command::new("bash")
        .args(["-n", script])
        .output()
        .expect("run bash -n");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(script).expect("read scripts/build_pgo.sh");
    assert!(text.contains("target/pgo/release/ssdlab"), "{text}");
    assert!(text.contains("-Cprofile-use="), "{text}");
    assert!(text.contains("differs from the plain build"), "{text}");
}

/// `scripts/ab_bench.py` runs two binaries' bench at once and reports each
/// round and the median ratio (here the binary against itself, tiny runs);
/// a filter that matches no case, or a binary that is not one, is an error
/// naming it.
#[test]
fn ab_bench_compares_two_binaries() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scripts/ab_bench.py");
    let bin = env!("CARGO_BIN_EXE_ssdlab");
    let run = |filter: &str| {
        Command::new("python3")
            .args([script, bin, bin, "--filter", filter, "--ios", "2000"])
            .args(["--rounds", "2"])
            .output()
            .expect("run python3 scripts/ab_bench.py")
    };
    let out = run("seqwrite");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(text.matches("round ").count(), 2, "{text}");
    assert!(
        text.contains("seqwrite-128k-qd32") && text.contains("median B/A"),
        "{text}"
    );
    assert!(text.contains("2 rounds"), "{text}");
    // Each binary's build flavour is named (a test binary is a release or
    // debug build, never a profile-guided one).
    assert_eq!(
        text.matches("(build: release)").count() + text.matches("(build: debug)").count(),
        2,
        "{text}"
    );
    let out = run("no-such-case");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no-such-case"), "{err}");
    let out = Command::new("python3")
        .args([script, "/no/such/ssdlab", bin])
        .output()
        .expect("run python3 scripts/ab_bench.py");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/no/such/ssdlab: not an executable file"),
        "{err}"
    );
}
