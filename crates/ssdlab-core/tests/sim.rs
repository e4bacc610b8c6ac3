//! Integration tests: analytic cases, scheduler models, determinism, GC and
//! invariants through the timed drive, and bad input.

mod common;
use common::analytic_device;
use ssdlab_core::config::{Device, DeviceFile};
use ssdlab_core::workload::fio;
use ssdlab_core::{simulate_quiet, Precondition, Report, RunSpec, System};

/// The analytic device with a fast link (Gen3 x4), so flash is the bottleneck.
fn fast_link_device(channels: u32, dies: u32, extra: &str) -> Device {
    let mut d = analytic_device(channels, dies, "", extra);
    d.pcie.generation = 3;
    d.pcie.lanes = 4;
    d
}

fn run(dev: Device, job: &str, pre: Precondition) -> Report {
    let workload = fio::parse_str(job, "test.fio").unwrap();
    simulate_quiet(&RunSpec {
        device: dev,
        workload,
        workload_name: "test".into(),
        seed: 7,
        precondition: pre,
        sample_interval: None,
        latency_histogram: false,
        job_stats: false,
        data_store: None,
        power_loss_at: None,
        after_recovery: None,
        later_power_losses: Vec::new(),
    })
    .unwrap()
}

#[test]
fn qd1_read_latency_is_exactly_the_sum_of_its_parts() {
    let dev = analytic_device(1, 1, "", "");
    let r = run(
        dev,
        "[r]\nrw=randread\nbs=4k\niodepth=1\nnumber_ios=200\n",
        Precondition::Fill,
    );
    // host submit 1000 + doorbell (4+24 B)*4 ns + 100
    // + fetch stage 100 + SQE fetch: request 24 B up (96) + 100 + (64+24) B down (352) + 100
    // + parse 200 + lookup 300 + translate 400 + issue 500
    // + t_cmd 100 + tR 25000 + 4096 B at 400 MB/s (10240)
    // + DMA 4096 B + 16 TLPs * 24 B = 4480 B * 4 ns (17920) + 100
    // + complete 600 + CQE (40 B: 160) + MSI-X (28 B: 112) + 100 + host completion 2000
    let expected = 1000
        + 112
        + 100
        + 100
        + 96
        + 100
        + 352
        + 100
        + 200
        + 300
        + 400
        + 500
        + 100
        + 25000
        + 10240
        + 17920
        + 100
        + 600
        + 160
        + 112
        + 100
        + 2000;
    assert_eq!(r.read.ios, 200);
    assert_eq!(r.read.lat_ns.min, expected, "{r:#?}");
    assert_eq!(r.read.lat_ns.max, expected);
}

#[test]
fn dies_on_one_channel_saturate_the_bus() {
    // 4 dies, tR 25 us, data out 10.24 us per 4 KiB: the bus (400 MB/s) is the bottleneck.
    let dev = fast_link_device(1, 4, "");
    let r = run(
        dev,
        "[r]\nrw=randread\nbs=4k\niodepth=64\nnumber_ios=20000\n",
        Precondition::Fill,
    );
    let bus = 400e6 * 4096.0 / (4096.0 + 400e6 * 100e-9); // t_cmd also occupies the bus
    let err = (r.read.bw_bytes_per_s - bus).abs() / bus;
    assert!(
        err < 0.02,
        "bw {} vs bus {bus}: {r:#?}",
        r.read.bw_bytes_per_s
    );
    assert!(
        r.utilisation.channel_max > 0.97,
        "{}",
        r.utilisation.channel_max
    );
}

fn iops_with(model: &str) -> f64 {
    let dev = fast_link_device(1, 4, &format!("[flash]\nexecution = \"{model}\"\n"));
    run(
        dev,
        "[r]\nrw=randread\nbs=4k\niodepth=64\nnumber_ios=20000\n",
        Precondition::Fill,
    )
    .read
    .iops
}

#[test]
fn execution_models_overlap_as_defined() {
    let seq = iops_with("sequential");
    let inter = iops_with("interleaved");
    let ooo = iops_with("out-of-order");
    // Sequential: one transaction at a time on the channel: cmd + tR + data out.
    let one = 1.0 / (100e-9 + 25e-6 + 10.24e-6);
    assert!((seq - one).abs() / one < 0.01, "sequential {seq} vs {one}");
    // Overlapping models are bus-bound (~ 4x faster here), interleaved never beats out-of-order.
    assert!(ooo > 2.5 * seq, "ooo {ooo} seq {seq}");
    assert!(inter <= ooo * 1.001, "inter {inter} ooo {ooo}");
    assert!(inter > 2.0 * seq);
}

#[test]
fn determinism_same_seed_same_report() {
    let dev = analytic_device(2, 2, "", "");
    let job = "[m]\nrw=randrw\nrwmixread=60\nbs=8k\niodepth=16\nnumber_ios=30000\n";
    let mut a = run(dev.clone(), job, Precondition::Steady);
    let mut b = run(dev, job, Precondition::Steady);
    for r in [&mut a, &mut b] {
        r.wall_time_s = 0.0;
        r.sim_ios_per_wall_s = 0.0;
    }
    assert_eq!(a, b);
    assert!(a.gc.runs > 0, "the run must exercise GC: {a:#?}");
}

#[test]
fn random_writes_at_steady_state_run_gc_and_keep_every_write() {
    let dev = analytic_device(2, 2, "", "");
    let w = fio::parse_str(
        "[w]\nrw=randwrite\nbs=4k\niodepth=32\nnumber_ios=40000\nnorandommap\n",
        "t",
    )
    .unwrap();
    let mut d = System::new(dev, &w, "t", 3, Precondition::Steady).unwrap();
    d.run(&mut |_| {}, &|| false).unwrap();
    let r = Report::from_system(&d, "t", &[], 1.0);
    assert!(r.gc.runs > 0 && r.gc.pages_moved > 0);
    assert!(r.waf > 1.0);
    d.drives[0].ftl.check_invariants().unwrap();
    // Every LPN was written by the preconditioner, so every one must still be
    // readable: on flash (valid) or in the DRAM buffer.
    let mut in_buffer = 0;
    for l in 0..d.drives[0].ftl.logical_units() as u32 {
        match d.drives[0].ftl.lookup(ssdlab_core::units::Lpn(l)) {
            ssdlab_core::ftl::Mapping::Unmapped => panic!("lpn {l} lost"),
            ssdlab_core::ftl::Mapping::InBuffer => {
                assert!(
                    d.drives[0].cache.holds(l),
                    "lpn {l} mapped to buffer but not in it"
                );
                in_buffer += 1
            }
            ssdlab_core::ftl::Mapping::Flash(_) => {}
        }
    }
    assert_eq!(
        d.drives[0].ftl.total_valid() + in_buffer,
        d.drives[0].ftl.logical_units()
    );
    // WAF accounting: a programmed slot is host data, a GC copy, or padding when
    // staged GC data went stale; so WAF = 1 + moved/host up to what is still
    // buffered and the (small) padding.
    let expect = 1.0 + r.gc.pages_moved as f64 / r.write.ios as f64;
    assert!(
        (r.waf - expect).abs() < 0.05,
        "waf {} vs 1 + moved/host {expect}",
        r.waf
    );
}

#[test]
fn suspend_lets_reads_overtake_programs() {
    let job = "[m]\nrw=randrw\nrwmixread=50\nbs=4k\niodepth=8\nnumber_ios=20000\n";
    let plain = run(analytic_device(1, 1, "", ""), job, Precondition::Fill);
    let susp = run(
        analytic_device(
            1,
            1,
            "t_suspend = \"5us\"\nt_resume = \"5us\"",
            "[flash]\nprogram_suspend = true\nerase_suspend = true\n",
        ),
        job,
        Precondition::Fill,
    );
    assert!(susp.flash.suspends > 0);
    assert!(
        susp.read.lat_ns.p99 < plain.read.lat_ns.p99,
        "suspend p99 {} plain {}",
        susp.read.lat_ns.p99,
        plain.read.lat_ns.p99
    );
}

#[test]
fn pcie_caps_sequential_reads_on_the_default_device() {
    let dev = Device::preset("pm9a3-960g").unwrap();
    let r = run(
        dev,
        "[s]\nrw=read\nbs=128k\niodepth=32\nnumber_ios=20000\n",
        Precondition::Fill,
    );
    let link = r.device.pcie_bw_bytes_per_s;
    assert!(r.read.bw_bytes_per_s <= link * 1.001);
    assert!(
        r.read.bw_bytes_per_s > 0.95 * link,
        "{} vs link {link}",
        r.read.bw_bytes_per_s
    );
}

#[test]
fn workload_bigger_than_device_is_an_error() {
    let dev = analytic_device(1, 1, "", "");
    let w = fio::parse_str("[r]\nrw=read\nsize=100g\n", "big.fio").unwrap();
    let e = simulate_quiet(&RunSpec {
        device: dev,
        workload: w,
        workload_name: "big.fio".into(),
        seed: 1,
        precondition: Precondition::Fresh,
        sample_interval: None,
        latency_histogram: false,
        job_stats: false,
        data_store: None,
        power_loss_at: None,
        after_recovery: None,
        later_power_losses: Vec::new(),
    })
    .unwrap_err();
    let s = e.to_string();
    assert!(s.contains("big.fio") && s.contains("size"), "{s}");
}

#[test]
fn drive_too_large_for_memory_is_an_error() {
    let text = ssdlab_core::config::preset_text("pm9a3-960g")
        .unwrap()
        .replace("mapping_unit = \"4KiB\"", "mapping_unit = \"512B\"")
        .replace("blocks_per_plane = 2731", "blocks_per_plane = 500000");
    let e = DeviceFile::from_toml_str(&text, "huge.toml")
        .unwrap()
        .resolve("huge.toml")
        .unwrap_err();
    assert!(e.to_string().contains("mapping_unit"), "{e}");
}

#[test]
fn background_gc_collects_while_the_host_only_reads() {
    let job = "[r]\nrw=randread\nbs=4k\niodepth=4\nnumber_ios=20000\n";
    let fg = run(analytic_device(2, 2, "", ""), job, Precondition::Steady);
    let bg_dev = analytic_device(2, 2, "", "").clone();
    let mut bg_dev = bg_dev;
    bg_dev.ftl.gc_background = true;
    let bg = run(bg_dev, job, Precondition::Steady);
    assert_eq!(fg.gc.runs, 0, "no writes, no foreground GC");
    assert!(bg.gc.runs > 0 && bg.gc.blocks_erased > 0, "{:?}", bg.gc);
    assert_eq!(bg.write.ios, 0);
}

fn write_trace(name: &str, lines: &[String]) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("ssdlab-sim-{}-{name}", std::process::id()));
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

fn trace_run(
    path: &std::path::Path,
    replay: ssdlab_core::workload::Replay,
) -> Result<Report, ssdlab_core::SimError> {
    use ssdlab_core::workload::trace::{Remap, TraceFilter};
    use ssdlab_core::workload::{TraceSpec, Workload};
    let dev = fast_link_device(2, 2, "");
    let w = Workload {
        trace: Some(TraceSpec {
            path: path.into(),
            format: None,
            replay,
            filter: TraceFilter::default(),
            remap: Remap::Wrap,
        }),
        ..Workload::default()
    };
    let mut spec = RunSpec::new(dev, w, "trace");
    spec.precondition = Precondition::Fill;
    simulate_quiet(&spec)
}

#[test]
fn open_loop_trace_replay_follows_timestamps_and_speed() {
    use ssdlab_core::workload::Replay;
    // DiskSim ASCII: time(ms) dev lba(512 B sectors) sectors type(1 = read): one 4 KiB read every 1 ms.
    let lines: Vec<String> = (0..500)
        .map(|i| {
            format!(
                "{}.0 0 {} 8 {}",
                i,
                (i * 977 % 10_000) * 8,
                if i % 4 == 0 { 0 } else { 1 }
            )
        })
        .collect();
    let p = write_trace("open.disksim", &lines);
    let r = trace_run(&p, Replay::Open { speed: 1.0 }).unwrap();
    assert_eq!(r.read.ios + r.write.ios, 500);
    assert_eq!(r.write.ios, 125);
    // The run lasts as long as the trace (499 ms) plus the last I/O's latency.
    assert!(
        r.sim_time_ns > 499e6 && r.sim_time_ns < 501e6,
        "{}",
        r.sim_time_ns
    );
    let fast = trace_run(&p, Replay::Open { speed: 10.0 }).unwrap();
    assert!(
        fast.sim_time_ns > 49.9e6 && fast.sim_time_ns < 51e6,
        "{}",
        fast.sim_time_ns
    );
    let closed = trace_run(&p, Replay::Closed { iodepth: 8 }).unwrap();
    assert_eq!(closed.read.ios + closed.write.ios, 500);
    assert!(
        closed.sim_time_ns < 100e6,
        "closed loop ignores timestamps: {}",
        closed.sim_time_ns
    );
}

#[test]
fn malformed_trace_line_stops_the_run_with_file_and_line() {
    use ssdlab_core::workload::Replay;
    let mut lines: Vec<String> = (0..50).map(|i| format!("{i}.0 0 {} 8 1", i * 8)).collect();
    lines.push("51.0 0 banana 8 1".into());
    let p = write_trace("bad.disksim", &lines);
    let e = trace_run(&p, Replay::Open { speed: 1.0 })
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad.disksim") && e.contains(":51"), "{e}");
}

#[test]
fn time_series_and_histograms_appear_when_asked_for() {
    let w = fio::parse_str("[r]\nrw=randread\nbs=4k\niodepth=8\nnumber_ios=5000\n", "t").unwrap();
    let mut spec = RunSpec::new(fast_link_device(2, 2, ""), w, "t");
    let plain = simulate_quiet(&spec).unwrap();
    assert!(plain.timeseries.is_none() && plain.read.lat_hist_ns.is_none());
    spec.sample_interval = Some(ssdlab_core::units::Time::ms(1));
    spec.latency_histogram = true;
    let r = simulate_quiet(&spec).unwrap();
    let ts = r.timeseries.as_ref().expect("time series");
    let windows = (r.sim_time_ns / 1e6).ceil() as usize;
    assert!(
        ts.t_ns.len() >= windows.saturating_sub(1) && ts.t_ns.len() <= windows + 1,
        "{} windows for {} ns",
        ts.t_ns.len(),
        r.sim_time_ns
    );
    let ios: f64 = ts.read_iops.iter().map(|x| x * 1e-3).sum();
    assert!((ios - 5000.0).abs() < 0.5, "{ios}");
    let h = r.read.lat_hist_ns.as_ref().expect("histogram");
    assert_eq!(h.iter().map(|x| x.1).sum::<u64>(), 5000);
}

#[test]
fn weighted_round_robin_shares_a_saturated_fetch_stage_by_weight() {
    use ssdlab_core::config::Arbitration;
    let mut dev = fast_link_device(2, 2, "");
    dev.firmware.fetch = ssdlab_core::units::Time::us(20); // the fetch stage is the bottleneck
    dev.nvme.arbitration = Arbitration::Wrr;
    dev.nvme.wrr_weights = [8, 4, 1];
    let w = fio::parse_str(
        "[global]\nrw=randread\nbs=4k\niodepth=32\ntime_based\nruntime=200ms\n[hi]\nssdlab_sq_priority=high\n[lo]\nssdlab_sq_priority=low\n",
        "wrr.fio",
    )
    .unwrap();
    let mut spec = RunSpec::new(dev, w, "wrr");
    spec.job_stats = true;
    let (r, jobs) = ssdlab_core::simulate_with_jobs(&spec, &mut |_| {}, &|| false).unwrap();
    let v = ssdlab_core::fio_output::to_json(&r, &jobs.unwrap(), false, 0);
    let iops = |i: usize| v["jobs"][i]["read"]["iops"].as_f64().unwrap();
    // (The drain after the deadline serves the low queue alone: a small bias toward it.)
    let ratio = iops(0) / iops(1);
    assert!(
        (ratio - 8.0).abs() < 0.5,
        "high/low IOPS ratio {ratio} ({} vs {})",
        iops(0),
        iops(1)
    );
    // The fetch stage caps the total at 1 / 20 us.
    assert!(
        (iops(0) + iops(1) - 50_000.0).abs() < 1_000.0,
        "{}",
        iops(0) + iops(1)
    );
}
