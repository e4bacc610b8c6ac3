//! The SLC write cache through the timed drive: the two write plateaus and
//! their analytic ratio, folding that keeps every written LBA, reads of
//! folded data at native timings, idle folding, and bad input.

use ssdlab_core::config::{Device, DeviceFile};
use ssdlab_core::ftl::Mapping;
use ssdlab_core::units::Lpn;
use ssdlab_core::workload::fio;
use ssdlab_core::{Precondition, Report, System};

/// A small TLC drive with easy numbers: 4 dies on 2 channels, 2 planes
/// (multi-plane), one-shot programs of 3 x 2 x 16 KiB = 96 KiB (1 ms TLC;
/// 3 x 150 us SLC), a 1.2 GB/s channel bus (96 KiB in 81.92 us), Gen3 x4.
fn slc_text(ftl: &str) -> String {
    format!(
        r#"
name = "slc-test"
[host]
submit_overhead = "1us"
complete_overhead = "2us"
[pcie]
generation = 3
lanes = 4
[cache]
write_buffer = "1MiB"
[ftl]
mapping_unit = "4KiB"
over_provisioning = "30%"
gc_threshold = 3
gc_hard_threshold = 2
{ftl}
[nand]
channels = 2
chips_per_channel = 1
dies_per_chip = 2
planes_per_die = 2
blocks_per_plane = 128
pages_per_block = 36
page_size = "16KiB"
cell = "tlc"
t_read = ["40us", "45us", "50us"]
t_prog = ["1ms", "1ms", "1ms"]
one_shot_program = true
t_prog_one_shot = "1ms"
t_erase = "3ms"
t_read_slc = "30us"
t_prog_slc = "150us"
bus_bandwidth = "1200MB/s"
"#
    )
}

fn slc_device(ftl: &str) -> Device {
    DeviceFile::from_toml_str(&slc_text(ftl), "slc-test")
        .unwrap()
        .resolve("slc-test")
        .unwrap()
}

fn system(dev: Device, job: &str, sample: Option<&str>) -> System {
    let w = fio::parse_str(job, "t.fio").unwrap();
    let mut s = System::new(dev, &w, "t", 5, Precondition::Fresh).unwrap();
    if let Some(i) = sample {
        s.sample_every(ssdlab_core::units::parse_time(i).unwrap());
    }
    s.run(&mut |_| {}, &|| false).unwrap();
    s
}

fn report(s: &System) -> Report {
    Report::from_system(s, "t", &[], 1.0)
}

/// A sequential fill longer than the SLC region writes at two plateaus:
/// per die, one 96 KiB program unit per (bus transfer + 3 SLC page
/// programs) inside the cache and per (bus transfer + one-shot TLC
/// program) after it (`slc_when_full = "direct"`).
#[test]
fn a_fill_longer_than_the_slc_region_shows_two_plateaus() {
    let dev = slc_device("slc_static = \"24MiB\"");
    let s = system(
        dev,
        "[w]\nrw=write\nbs=128k\niodepth=32\nsize=200m\n",
        Some("5ms"),
    );
    let r = report(&s);
    let ts = r.timeseries.as_ref().unwrap();
    let bw = &ts.write_bw_bytes_per_s;
    let unit = 96.0 * 1024.0;
    let xfer = unit / 1.2e9;
    let slc = 4.0 * unit / (xfer + 450e-6);
    let tlc = 4.0 * unit / (xfer + 1e-3);
    // 24 MiB at ~740 MB/s is ~34 ms: windows 1..5 are inside the cache.
    let inside: f64 = bw[1..6].iter().sum::<f64>() / 5.0;
    let half = bw.len() / 2;
    let after: f64 = bw[half..bw.len() - 1].iter().sum::<f64>() / (bw.len() - 1 - half) as f64;
    assert!(
        (inside / slc - 1.0).abs() < 0.05,
        "SLC plateau {inside:.3e} B/s vs {slc:.3e}"
    );
    assert!(
        (after / tlc - 1.0).abs() < 0.05,
        "TLC plateau {after:.3e} B/s vs {tlc:.3e}"
    );
    let ratio = (xfer + 1e-3) / (xfer + 450e-6);
    assert!(
        ((inside / after) / ratio - 1.0).abs() < 0.06,
        "plateau ratio {} vs {ratio}",
        inside / after
    );
    let c = r.slc.as_ref().unwrap();
    assert_eq!(c.slc_written_bytes, 24 << 20, "the static region fills");
    // All of it but what the 1 MiB buffer still holds at the end.
    let programmed = c.slc_written_bytes + c.direct_written_bytes;
    assert!(
        (199 << 20..=200 << 20).contains(&programmed),
        "{programmed}"
    );
    assert_eq!(c.fold_runs, 0, "no idle time, direct policy: no folding");
    assert_eq!(c.occupancy_series_bytes.len(), bw.len());
    assert_eq!(*c.occupancy_series_bytes.last().unwrap(), (24 << 20) as f64);
}

/// Folding under pressure (`slc_when_full = "fold"`) with random
/// overwrites: every LBA written is still mapped (on flash or in the
/// buffer), nothing else is, and the FTL's books (SLC counts included)
/// agree with its tables.
#[test]
fn folding_keeps_every_written_lba() {
    let dev =
        slc_device("slc_static = \"6MiB\"\nslc_dynamic = \"12MiB\"\nslc_when_full = \"fold\"");
    let s = system(
        dev,
        "[w]\nrw=randwrite\nbs=4k\niodepth=32\nsize=64m\nloops=2\n",
        None,
    );
    let r = report(&s);
    let c = r.slc.as_ref().unwrap();
    assert!(c.fold_runs > 0 && c.folded_bytes > 0, "{c:?}");
    assert_eq!(c.direct_written_bytes, 0, "fold policy never writes direct");
    let d = &s.drives[0];
    d.ftl.check_invariants().unwrap();
    let region = (64u64 << 20) / 4096;
    for l in 0..d.ftl.logical_units() as u32 {
        match d.ftl.lookup(Lpn(l)) {
            Mapping::Unmapped => assert!(l as u64 >= region, "lpn {l} lost"),
            Mapping::InBuffer => {
                assert!((l as u64) < region);
                assert!(
                    d.cache.holds(l),
                    "lpn {l} mapped to the buffer but not in it"
                );
            }
            Mapping::Flash(_) => assert!((l as u64) < region, "lpn {l} never written"),
        }
    }
    // WAF: every host slot is programmed once into SLC, folded data once more.
    assert!(
        r.waf > 1.0 + 0.5 * c.folded_bytes as f64 / (r.write.bytes as f64),
        "{}",
        r.waf
    );
    // By writer: the folded units programmed over the host units (a few
    // copies are superseded by host writes before they are programmed);
    // the parts add up.
    let w = &r.waf_split;
    assert_eq!(w.host_units, r.write.bytes / 4096);
    let folded = c.folded_bytes as f64 / 4096.0 / w.host_units as f64;
    assert!(
        w.slc_fold <= folded && w.slc_fold > 0.98 * folded,
        "{w:?} vs {folded}"
    );
    assert_eq!(w.gc, 0.0);
    assert_eq!(w.mapping, 0.0);
    assert!(
        (w.user + w.gc + w.slc_fold + w.mapping - r.waf).abs() < 1e-9,
        "{w:?} vs {}",
        r.waf
    );
}

/// Mean QD1 random-read latency over 8 MiB written just before, with the
/// read job starting 300 ms later; `fold_idle` decides whether the drive
/// folds its SLC cache in that gap.
fn read_after_gap(fold_idle: &str) -> (f64, Report) {
    let dev = slc_device(&format!(
        "slc_static = \"24MiB\"\nslc_fold_idle = \"{fold_idle}\""
    ));
    let s = system(
        dev,
        "[w]\nrw=write\nbs=128k\niodepth=8\nsize=8m\n\n[r]\nstonewall\nstartdelay=300ms\nrw=randread\nbs=4k\niodepth=1\nsize=8m\nnumber_ios=400\n",
        None,
    );
    let r = report(&s);
    (r.read.lat_ns.mean, r)
}

/// Reads of data still in SLC use the SLC read time; once folded, the
/// native (TLC) page-type times: the mean QD1 latency differs by the mean
/// TLC read (45 us over LSB/CSB/MSB) minus the SLC read (30 us).
#[test]
fn reads_of_folded_data_use_native_timings() {
    let (in_slc, a) = read_after_gap("10s");
    let (folded, b) = read_after_gap("1ms");
    assert_eq!(a.slc.as_ref().unwrap().fold_runs, 0);
    let fb = b.slc.as_ref().unwrap();
    assert!(fb.fold_runs > 0, "idle folding ran: {fb:?}");
    assert_eq!(fb.occupancy_bytes, 0, "everything folded in 300 ms");
    let diff = (folded - in_slc) / 1e3;
    assert!(
        (13.0..17.0).contains(&diff),
        "TLC minus SLC read latency {diff:.2} us (SLC {in_slc:.0} ns, folded {folded:.0} ns)"
    );
}

fn problems(ftl: &str, slc_timings: bool) -> String {
    let mut text = slc_text(ftl);
    if !slc_timings {
        text = text.replace("t_read_slc = \"30us\"\nt_prog_slc = \"150us\"\n", "");
    }
    match DeviceFile::from_toml_str(&text, "bad.toml").and_then(|f| f.resolve("bad.toml")) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_slc_settings_are_refused_by_key() {
    let e = problems("slc_static = \"2GB\"", true);
    assert!(
        e.contains("ftl.slc_static") && e.contains("not smaller than the drive"),
        "{e}"
    );
    let e = problems("slc_dynamic = \"12MiB\"", false);
    assert!(
        e.contains("nand.t_read_slc") && e.contains("nand.t_prog_slc"),
        "{e}"
    );
    let e = problems("slc_static = \"12\"", true);
    assert!(e.contains("ftl.slc_static"), "{e}");
    let e = problems("slc_dynamic = \"-1MiB\"", true);
    assert!(e.contains("ftl.slc_dynamic"), "{e}");
    let e = problems("slc_static = \"6MiB\"\nslc_when_full = \"stall\"", true);
    assert!(
        e.contains("ftl.slc_when_full") && e.contains("direct or fold"),
        "{e}"
    );
    let e = problems("slc_static = \"100MiB\"", true);
    assert!(
        e.contains("ftl.slc_static") && e.contains("over_provisioning"),
        "{e}"
    );
    // An SLC cache on SLC NAND.
    let text = slc_text("slc_static = \"6MiB\"")
        .replace("cell = \"tlc\"", "cell = \"slc\"")
        .replace("[\"40us\", \"45us\", \"50us\"]", "[\"25us\"]")
        .replace("[\"1ms\", \"1ms\", \"1ms\"]", "[\"200us\"]")
        .replace("one_shot_program = true\nt_prog_one_shot = \"1ms\"\n", "");
    let e = DeviceFile::from_toml_str(&text, "s.toml")
        .and_then(|f| f.resolve("s.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ftl.slc_static") && e.contains("SLC already"),
        "{e}"
    );
    // SLC-mode blocks that do not split into whole program units (one-shot
    // TLC: pages_per_block / 3 must be a multiple of 3).
    let e = DeviceFile::from_toml_str(
        &slc_text("slc_static = \"6MiB\"").replace("pages_per_block = 36", "pages_per_block = 33"),
        "p.toml",
    )
    .and_then(|f| f.resolve("p.toml"))
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("nand.pages_per_block") && e.contains("SLC-mode"),
        "{e}"
    );
}

/// The consumer-drive validation checks (the value drive's run under the
/// `seed00` filter of the compute tests): what passes today keeps passing;
/// the two 970 EVO write gaps are known (docs/validation.md).
#[test]
fn consumer_validation_checks_hold_their_tolerances() {
    let checks = ssdlab_core::validate::run_all(Some("970evo"), &mut |_| {}).unwrap();
    assert_eq!(checks.len(), 3);
    for c in &checks {
        let known =
            c.scenario == "970evo-seqwrite-in-slc" || c.scenario == "970evo-seqwrite-after-slc";
        if known {
            // The gaps are in one direction: the model writes faster than rated.
            assert!(c.error_pct > 0.0, "{c:?}");
        } else {
            assert!(c.pass, "{c:?}");
        }
    }
    // The cliff itself: after the cache, well under half the in-cache rate.
    assert!(checks[1].simulated < 0.5 * checks[0].simulated);
}

/// SLC-mode programs cost program energy in proportion to their array
/// time: with every NAND energy but programming set to zero, the same
/// sequential write costs `t_prog_slc_unit / t_prog_one_shot` as much in
/// SLC as written natively (3 x 150 us against 1 ms: 0.45).
#[test]
fn slc_program_energy_follows_its_array_time() {
    let power = "[power]\nnand_read_energy = \"0J\"\nnand_erase_energy = \"0J\"\nnand_bus_energy_per_byte = \"0J\"\nnand_idle_power = \"0W\"\nnand_program_energy = \"10uJ\"\n";
    let nand_energy = |slc: bool| {
        let mut text = slc_text(if slc { "slc_static = \"24MiB\"" } else { "" });
        text.push_str(power);
        let dev = ssdlab_core::config::DeviceFile::from_toml_str(&text, "p")
            .and_then(|f| f.resolve("p"))
            .unwrap();
        let w = ssdlab_core::workload::fio::parse_str(
            "[w]\nrw=write\nbs=128k\niodepth=8\nsize=8m\nend_fsync=1\n",
            "w.fio",
        )
        .unwrap();
        let spec = ssdlab_core::RunSpec {
            device: dev,
            workload: w,
            workload_name: "w.fio".into(),
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
        let (r, _) = ssdlab_core::simulate_with_jobs(&spec, &mut |_| {}, &|| false).unwrap();
        let p = r.power.expect("power report");
        let nand = &p.components["nand"];
        (nand.energy_j, r.slc.map_or(0, |s| s.slc_written_bytes))
    };
    let (e_slc, in_slc) = nand_energy(true);
    let (e_native, in_native) = nand_energy(false);
    // All 8 MiB through SLC, in whole 96 KiB program units (the flush pads
    // the last one).
    assert_eq!(in_slc, (8u64 << 20).div_ceil(96 << 10) * (96 << 10));
    assert_eq!(in_native, 0);
    let ratio = e_slc / e_native;
    assert!(
        (ratio - 0.45).abs() < 0.005,
        "{e_slc} / {e_native} = {ratio}"
    );
}
