//! `ssdlab bench`: the simulator's own speed (simulated I/Os per wall
//! second, one core) and memory on a device.

use serde::Serialize;
use ssdlab_core::config::Device;
use ssdlab_core::workload::fio;
use ssdlab_core::{Precondition, System};
use std::fmt::Write as _;
use std::time::Instant;

/// One benchmark case.
#[derive(Debug, Serialize)]
pub struct Case {
    /// Case name.
    pub name: String,
    /// Preconditioning used.
    pub precondition: String,
    /// Wall time of preconditioning (s).
    pub precondition_s: f64,
    /// Simulated I/Os.
    pub ios: u64,
    /// Wall time of the simulation (s).
    pub sim_wall_s: f64,
    /// Simulated I/Os per wall second.
    pub sim_ios_per_wall_s: f64,
    /// Events per wall second.
    pub events_per_wall_s: f64,
    /// Wall time of the whole case as a user waits for it (s): building
    /// the drive, preconditioning, the simulation and freeing it all.
    pub whole_wall_s: f64,
    /// Resident memory after the case (bytes).
    pub rss_bytes: u64,
    /// Peak resident memory of the process so far (bytes).
    pub peak_rss_bytes: u64,
}

/// All cases.
#[derive(Debug, Serialize)]
pub struct BenchResult {
    /// Device.
    pub device: String,
    /// How this binary was built: `debug`, `release`, or `release+pgo`
    /// when `scripts/build_pgo.sh` built it with profile-guided
    /// optimisation (speeds are not comparable across them).
    pub build: String,
    /// Cases.
    pub cases: Vec<Case>,
}

fn status_kb(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(key))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .unwrap_or(0)
        * 1024
}

/// Write an MSR-format trace of `n` random 4 KiB reads over `capacity`
/// bytes, 10 us apart (a fixed linear congruential sequence).
fn write_trace(path: &std::path::Path, n: u64, capacity: u64) -> Result<(), String> {
    use std::io::Write as _;
    let f = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut w = std::io::BufWriter::new(f);
    let blocks = (capacity / 4096).max(1);
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..n {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let off = ((x >> 11) % blocks) * 4096;
        writeln!(
            w,
            "{},bench,0,Read,{off},4096,0",
            128_166_372_000_000_000u64 + i * 100
        )
        .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    w.flush().map_err(|e| format!("{}: {e}", path.display()))
}

/// Run the benchmark cases.
pub fn run(dev: &Device, ios: u64, filter: Option<&str>) -> Result<BenchResult, String> {
    let trace = std::env::temp_dir().join(format!("ssdlab-bench-{}.csv", std::process::id()));
    let trace_opts = format!(
        "ssdlab_trace={}\nssdlab_trace_format=msr\nssdlab_replay=closed\niodepth=32",
        trace.display()
    );
    let four = "[global]\nrw=randread\nbs=4k\niodepth=32\n".to_string()
        + &(0..4)
            .map(|i| format!("[d{i}]\nfilename=nvme{i}\nnumber_ios={}\n", ios / 4))
            .collect::<String>();
    let cases: [(&str, &str, Precondition); 8] = [
        (
            "randread-4k-qd32",
            "rw=randread\nbs=4k\niodepth=32",
            Precondition::Fill,
        ),
        (
            "randread-4k-qd32-zipf",
            "rw=randread\nbs=4k\niodepth=32\nrandom_distribution=zipf:1.2",
            Precondition::Fill,
        ),
        ("randread-4k-qd32-trace", &trace_opts, Precondition::Fill),
        (
            "randwrite-4k-qd32-steady",
            "rw=randwrite\nbs=4k\niodepth=32\nnorandommap",
            Precondition::Steady,
        ),
        // The same with a DFTL-style cached mapping table of 2 MiB (issue
        // 14's speed target: 0.5 M simulated I/Os per wall second).
        (
            "randwrite-4k-qd32-steady-mapcache-2m",
            "rw=randwrite\nbs=4k\niodepth=32\nnorandommap",
            Precondition::Steady,
        ),
        (
            "seqread-128k-qd32",
            "rw=read\nbs=128k\niodepth=32",
            Precondition::Fill,
        ),
        (
            "seqwrite-128k-qd32",
            "rw=write\nbs=128k\niodepth=32",
            Precondition::Fill,
        ),
        // Four copies of the device behind one switch, QD32 on each (the
        // same I/O count in all): the system's own cost per I/O.
        ("randread-4k-qd32-4drives", &four, Precondition::Fill),
    ];
    let mut out = Vec::new();
    for (name, opts, pre) in cases {
        if filter.is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let text = if name.ends_with("-4drives") {
            opts.to_string()
        } else if name.ends_with("-trace") {
            // Not timed: the trace file is written before the case runs.
            write_trace(&trace, ios, dev.capacity_bytes())?;
            format!("[{name}]\n{opts}\n")
        } else {
            format!("[{name}]\n{opts}\nnumber_ios={ios}\n")
        };
        let w = fio::parse_str(&text, name).map_err(|e| e.to_string());
        let w = match w {
            Ok(w) => w,
            Err(e) => {
                let _ = std::fs::remove_file(&trace);
                return Err(e);
            }
        };
        let t0 = Instant::now();
        let mut d = if name.ends_with("-4drives") {
            System::from_config(four_drives(dev), &w, name, ssdlab_core::DEFAULT_SEED, pre)
        } else if name.ends_with("-mapcache-2m") {
            let mut dev = dev.clone();
            dev.ftl.mapping_cache = Some(ssdlab_core::units::Bytes(2 << 20));
            System::new(dev, &w, name, ssdlab_core::DEFAULT_SEED, pre)
        } else {
            System::new(dev.clone(), &w, name, ssdlab_core::DEFAULT_SEED, pre)
        }
        .map_err(|e| e.to_string())?;
        let pre_s = t0.elapsed().as_secs_f64();
        let t1 = Instant::now();
        let ran = d.run(&mut |_| {}, &|| false).map_err(|e| e.to_string());
        if name.ends_with("-trace") {
            let _ = std::fs::remove_file(&trace);
        }
        ran?;
        let wall = t1.elapsed().as_secs_f64();
        let (ios, events) = (d.host.ios_done, d.events);
        let (rss, peak) = (status_kb("VmRSS:"), status_kb("VmHWM:"));
        drop(d);
        let whole = t0.elapsed().as_secs_f64();
        out.push(Case {
            name: name.into(),
            precondition: pre.name().into(),
            precondition_s: pre_s,
            ios,
            sim_wall_s: wall,
            sim_ios_per_wall_s: ios as f64 / wall,
            events_per_wall_s: events as f64 / wall,
            whole_wall_s: whole,
            rss_bytes: rss,
            peak_rss_bytes: peak,
        });
    }
    Ok(BenchResult {
        device: dev.name.clone(),
        build: build_flavour().into(),
        cases: out,
    })
}

/// `debug`, `release`, or `release+pgo` (`SSDLAB_BUILD_PGO` set at compile
/// time by `scripts/build_pgo.sh`).
fn build_flavour() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else if option_env!("SSDLAB_BUILD_PGO").is_some() {
        "release+pgo"
    } else {
        "release"
    }
}

/// Four copies of `dev` behind one switch whose uplink (x16, the device's
/// generation) is wider than their sum, so the case measures the simulator,
/// not the fabric's cap.
fn four_drives(dev: &Device) -> ssdlab_core::system::config::SystemConfig {
    use ssdlab_core::system::config::{DriveConfig, Parent, SwitchConfig, SystemConfig};
    let mut uplink = dev.pcie.clone();
    uplink.lanes = 16;
    SystemConfig {
        name: format!("4x {}", dev.name),
        description: String::new(),
        host: dev.host.clone(),
        root_generation: dev.pcie.generation,
        root_lanes: 16,
        root_ports: 1,
        root_memory_bandwidth: None,
        switches: vec![SwitchConfig {
            name: "sw0".into(),
            upstream: Parent::Root,
            uplink,
            downstream_generation: dev.pcie.generation,
            downstream_lanes: dev.pcie.lanes,
            ports: 4,
            latency: ssdlab_core::units::Time::ns(150),
            power_w: 0.0,
            ingress_buffer: ssdlab_core::units::Bytes(6 << 10),
        }],
        drives: (0..4)
            .map(|i| DriveConfig {
                name: format!("nvme{i}"),
                device: dev.clone(),
                attach: Parent::Switch(0),
                link: dev.pcie.clone(),
            })
            .collect(),
        endpoints: Vec::new(),
    }
}

/// Text table.
pub fn to_text(r: &BenchResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "device {}  (build: {})", r.device, r.build);
    let _ = writeln!(
        s,
        "{:<26} {:>8} {:>10} {:>10} {:>14} {:>12} {:>8} {:>10} {:>10}",
        "case",
        "precond",
        "precond s",
        "I/Os",
        "sim I/Os per s",
        "events/s",
        "whole s",
        "RSS GiB",
        "peak GiB"
    );
    for c in &r.cases {
        let _ = writeln!(
            s,
            "{:<26} {:>8} {:>10.1} {:>10} {:>14.0} {:>12.0} {:>8.2} {:>10.2} {:>10.2}",
            c.name,
            c.precondition,
            c.precondition_s,
            c.ios,
            c.sim_ios_per_wall_s,
            c.events_per_wall_s,
            c.whole_wall_s,
            c.rss_bytes as f64 / (1u64 << 30) as f64,
            c.peak_rss_bytes as f64 / (1u64 << 30) as f64
        );
    }
    s
}
