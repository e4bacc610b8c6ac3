//! I/O smaller than the mapping unit (JESD219, Iometer): reads fetch whole
//! units and move only the sectors asked for; writes of part of a unit
//! read-modify-write it (merged in DRAM if the unit is buffered, read from
//! flash first if it is only on flash, nothing to read if never written),
//! counted in the report with the byte WAF they cause.

mod common;

use ssdlab_core::config::Device;
use ssdlab_core::device::store::StoreSpec;
use ssdlab_core::workload::fio;
use ssdlab_core::{simulate_with_jobs, Precondition, Report, RunSpec};

/// One channel, one die, one plane, SLC, 4 KiB pages (4 KiB mapping unit):
/// every timing adds up in series.
fn one_die() -> Device {
    let text = r#"
name = "one-die"
[pcie]
generation = 3
lanes = 4
[cache]
write_buffer = "64KiB"
[ftl]
over_provisioning = "25%"
[nand]
channels = 1
chips_per_channel = 1
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 256
pages_per_block = 64
page_size = "4KiB"
cell = "slc"
t_read = ["25us"]
t_prog = ["200us"]
t_erase = "2ms"
bus_bandwidth = "400MB/s"
"#;
    common::device(text, "one-die")
}

fn run_dev(dev: Device, job: &str, pre: Precondition, store: Option<StoreSpec>) -> Report {
    let spec = RunSpec {
        device: dev,
        workload: fio::parse_str(job, "rmw.fio").unwrap(),
        workload_name: "rmw.fio".into(),
        seed: 9,
        precondition: pre,
        sample_interval: None,
        latency_histogram: false,
        job_stats: false,
        data_store: store,
        power_loss_at: None,
        after_recovery: None,
        later_power_losses: Vec::new(),
    };
    simulate_with_jobs(&spec, &mut |_| {}, &|| false).unwrap().0
}

fn run(job: &str, pre: Precondition) -> Report {
    run_dev(one_die(), job, pre, None)
}

#[test]
fn a_sub_unit_write_to_a_unit_on_flash_waits_for_its_read() {
    // QD1 512 B writes, one per unit (a 3584 B skip after each): on a
    // fresh drive there is nothing to merge; on a filled one each first
    // reads its unit from flash (array read + 4 KiB over the bus) before
    // the write is in the buffer.
    let job = "[w]\nrw=write:3584\nbs=512\niodepth=1\nnumber_ios=200\n";
    let fresh = run(job, Precondition::Fresh);
    let filled = run(job, Precondition::Fill);
    let (f, m) = (fresh.rmw.clone().unwrap(), filled.rmw.clone().unwrap());
    assert_eq!(
        (f.partial_units, f.flash_reads),
        (200, 0),
        "fresh: nothing to read"
    );
    assert_eq!(m.partial_units, 200);
    assert_eq!(m.flash_reads, 200, "filled: every unit read from flash");
    assert_eq!(filled.write.bytes, 200 * 512);
    // The read in series: t_cmd + t_read 25 us + 4 KiB at 400 MB/s (10.24 us).
    let extra = (filled.write.lat_ns.min as f64 - fresh.write.lat_ns.min as f64) / 1e3;
    assert!(
        (34.0..37.0).contains(&extra),
        "read before the merge: +{extra:.2} us"
    );
    // The byte WAF: 4 KiB programmed for each 512 B written, at least.
    assert!(m.waf_bytes >= 7.9, "{}", m.waf_bytes);
}

#[test]
fn sub_unit_writes_to_a_buffered_unit_merge_in_dram() {
    // Sequential 512 B writes: eight per unit; the first reads the unit
    // from flash, the next seven find it in the write buffer.
    let job = "[w]\nrw=write\nbs=512\niodepth=1\nsize=256k\n";
    let r = run(job, Precondition::Fill);
    let m = r.rmw.unwrap();
    assert_eq!(m.partial_units, 512);
    assert!((60..=70).contains(&m.flash_reads), "{}", m.flash_reads);
}

#[test]
fn sub_unit_reads_move_only_their_sectors() {
    let job = "[r]\nrw=randread\nbs=1k\niodepth=4\nnumber_ios=4000\n";
    let r = run(job, Precondition::Fill);
    assert_eq!(r.read.bytes, 4000 * 1024);
    assert!(r.flash.reads >= 4000, "whole units read from flash");
    assert!(r.rmw.is_none(), "reads do not read-modify-write");
    // Unaligned 4 KiB writes (512 B alignment) cover two partial units.
    let job = "[w]\nrw=randwrite\nbs=4k\nblockalign=512\niodepth=1\nnumber_ios=100\nsize=4m\n";
    let r = run(job, Precondition::Fresh);
    let m = r.rmw.unwrap();
    // Two partial units per write unless it happens to start on a unit (1 in 8).
    assert!(
        (150..=190).contains(&m.partial_units),
        "{}",
        m.partial_units
    );
    // Aligned 4 KiB writes have no read-modify-write section.
    let r = run(
        "[w]\nrw=randwrite\nbs=4k\nnumber_ios=100\n",
        Precondition::Fresh,
    );
    assert!(r.rmw.is_none());
}

#[test]
fn verify_checks_sub_unit_blocks_on_the_data_store() {
    let job = "[w]\nrw=randwrite\nbssplit=512/30:1536/30:4k/40\nblockalign=512\niodepth=8\nsize=2m\nio_size=4m\nverify=crc32c\n";
    let r = run_dev(one_die(), job, Precondition::Fill, Some(StoreSpec::Memory));
    let v = r.verify.unwrap();
    // About 1,860 writes; the log keeps the newest of overlapping ones.
    assert!(v.blocks > 400, "{}", v.blocks);
    assert_eq!(v.failures, 0, "{:?}", v.first_failures);
}

#[test]
fn jesd219_and_iometer_file_server_run_as_fio_ships_them() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/fio");
    for (file, reads) in [("jesd219.fio", 0.40), ("iometer-file-server.fio", 0.80)] {
        let mut w = fio::parse_file(std::path::Path::new(&format!("{dir}/{file}"))).unwrap();
        for j in &mut w.jobs {
            j.number_ios = Some(20_000);
            j.size = Some(512 << 20);
        }
        let spec = RunSpec {
            device: Device::preset("pm9a3-960g").unwrap(),
            workload: w,
            workload_name: file.into(),
            seed: 1,
            precondition: Precondition::Fresh,
            sample_interval: None,
            latency_histogram: false,
            job_stats: false,
            data_store: None,
            power_loss_at: None,
            after_recovery: None,
            later_power_losses: Vec::new(),
        };
        let r = simulate_with_jobs(&spec, &mut |_| {}, &|| false).unwrap().0;
        let ios = (r.read.ios + r.write.ios) as f64;
        assert!(((r.read.ios as f64 / ios) - reads).abs() < 0.02, "{file}");
        let m = r.rmw.as_ref().expect("sub-unit writes");
        assert!(m.partial_units > 1000, "{file}: {m:?}");
    }
}

#[test]
fn bad_sub_unit_input_is_refused_by_key() {
    let e = fio::parse_str("[w]\nrw=write\nbs=100\n", "b.fio")
        .map(|w| {
            let spec = RunSpec::new(one_die(), w, "b.fio");
            simulate_with_jobs(&spec, &mut |_| {}, &|| false).map(|_| ())
        })
        .unwrap()
        .unwrap_err()
        .to_string();
    assert!(e.contains("512 B logical block") && e.contains("bs"), "{e}");
    for (job, needle) in [
        (
            "[t]\nrw=randtrim\nbs=512\n",
            "trims of part of a mapping unit",
        ),
        ("[b]\nrw=randwrite\nbs=512\ndirect=0\n", "not supported yet"),
    ] {
        let mut dev = one_die();
        dev.host.memory = ssdlab_core::units::Bytes(1 << 30);
        let spec = RunSpec::new(dev, fio::parse_str(job, "b.fio").unwrap(), "b.fio");
        let e = simulate_with_jobs(&spec, &mut |_| {}, &|| false)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(e.contains(needle), "{job}: {e}");
    }
}
