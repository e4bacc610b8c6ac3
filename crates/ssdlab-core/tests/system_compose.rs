//! Systems built in code (Python's `ssdlab.System`): overrides of a system
//! file's keys, devices given by the caller, and their errors by key path.

use ssdlab_core::config::{Device, DeviceFile};
use ssdlab_core::system::config::{
    apply_system_overrides, load_drive_device, load_system_with, source_dir, SystemConfig,
    SystemFile,
};
use std::path::PathBuf;
use toml::Value;

const RAMDISK: &str = include_str!("../../../tests/data/stream-ramdisk.toml");

const SYS: &str = "name = \"t\"\n[root_complex]\nlanes = 8\nports = 1\n\
    [[switch]]\nname = \"sw0\"\nupstream_lanes = 8\ndownstream_lanes = 4\nports = 4\n\
    [[drive]]\nname = \"nvme0\"\ndevice = \"stream.toml\"\nattach = \"sw0\"\n\
    [[drive]]\nname = \"nvme1\"\ndevice = \"stream.toml\"\nattach = \"sw0\"\n";

fn dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("system-compose");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("stream.toml"), RAMDISK).unwrap();
    std::fs::write(d.join("sys.toml"), SYS).unwrap();
    d
}

fn ov(k: &str, v: Value) -> (String, Value) {
    (k.to_string(), v)
}

fn stream() -> Device {
    DeviceFile::from_toml_str(RAMDISK, "stream.toml")
        .unwrap()
        .resolve("stream.toml")
        .unwrap()
}

#[test]
fn resolve_with_devices_given_equals_loading_them_from_files() {
    let d = dir();
    let path = d.join("sys.toml").display().to_string();
    assert_eq!(source_dir(&path), d);
    assert_eq!(source_dir("not a file"), PathBuf::from("."));
    let from_file = SystemConfig::load(&path).unwrap();
    let (_, given) = load_system_with(SYS, "given", &[], |_, _| Ok(stream())).unwrap();
    assert_eq!(from_file.drives.len(), given.drives.len());
    for (a, b) in from_file.drives.iter().zip(&given.drives) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.device.name, b.device.name);
        assert_eq!(a.link.lanes, b.link.lanes);
        assert_eq!(a.attach, b.attach);
    }
    let via_loader = load_drive_device("stream.toml", &d, &[]).unwrap();
    assert_eq!(via_loader.name, "stream");
    let edited =
        load_drive_device("stream.toml", &d, &[ov("pcie.lanes", Value::Integer(2))]).unwrap();
    assert_eq!(edited.pcie.lanes, 2);
}

#[test]
fn overrides_change_the_system_and_their_problems_keep_their_paths() {
    let (f, applied) = apply_system_overrides(
        SYS,
        "sys.toml",
        &[
            ov("switch[0].upstream_lanes", Value::Integer(4)),
            ov("root_complex.generation", Value::Integer(4)),
            ov("switch[0].latency", Value::String("300ns".into())),
        ],
    )
    .unwrap();
    assert_eq!(f.switches[0].upstream_lanes, 4);
    assert_eq!(f.root_complex.generation, 4);
    assert_eq!(f.switches[0].latency, "300ns");
    assert_eq!(applied.len(), 3);
    // Structural problems: one per override, at its path.
    let e = apply_system_overrides(
        SYS,
        "sys.toml",
        &[
            ov("switch[0].upstream_lane", Value::Integer(4)),
            ov("switch[2].ports", Value::Integer(4)),
            ov("root_complex.lanes", Value::String("x8".into())),
            ov("drive..name", Value::String("a".into())),
        ],
    )
    .unwrap_err();
    let keys: Vec<&str> = e.problems.iter().map(|p| p.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "switch[0].upstream_lane",
            "switch[2].ports",
            "root_complex.lanes",
            "drive..name"
        ],
        "{e}"
    );
    assert!(e.problems[1].message.contains("out of range"), "{e}");
    // A bare number where a time is wanted: read as that string, so the
    // unit check says what is missing.
    let e = load_system_with(
        SYS,
        "sys.toml",
        &[ov("switch[0].latency", Value::Integer(150))],
        |_, _| Ok(stream()),
    )
    .unwrap_err();
    assert_eq!(e.problems[0].key, "switch[0].latency", "{e}");
    assert!(
        e.problems[0]
            .message
            .contains("set by override switch[0].latency"),
        "{e}"
    );
    // Value problems come from resolve, with the override that set them.
    let e = load_system_with(
        SYS,
        "sys.toml",
        &[ov("switch[0].upstream_lanes", Value::Integer(16))],
        |_, _| Ok(stream()),
    )
    .unwrap_err();
    assert_eq!(e.problems[0].key, "switch[0].upstream_lanes", "{e}");
    assert!(
        e.problems[0].message.contains("wider than a root port"),
        "{e}"
    );
    assert!(
        e.problems[0]
            .message
            .contains("set by override switch[0].upstream_lanes = 16"),
        "{e}"
    );
    // A device the caller cannot make: under drive[i].device.
    let e = load_system_with(SYS, "sys.toml", &[], |i, d| {
        if i == 1 {
            Err(ssdlab_core::config::ConfigError {
                source: d.device.clone(),
                problems: vec![ssdlab_core::config::ConfigProblem {
                    key: "nand.channels".into(),
                    message: "must be at least 1".into(),
                }],
            })
        } else {
            Ok(stream())
        }
    })
    .unwrap_err();
    assert_eq!(e.problems.len(), 1);
    assert_eq!(e.problems[0].key, "drive[1].device");
    assert!(e.problems[0]
        .message
        .contains("stream.toml: nand.channels: must be at least 1"));
    // No overrides: the file as written, parsed as SystemFile::from_toml_str does.
    let (f, none) = apply_system_overrides(SYS, "sys.toml", &[]).unwrap();
    assert!(none.is_empty());
    assert_eq!(
        toml::to_string(&f).unwrap(),
        toml::to_string(&SystemFile::from_toml_str(SYS, "sys.toml").unwrap()).unwrap()
    );
}
