//! Systems of several drives: topology errors, a switch's latency, shared
//! uplinks, peer-to-peer transfers, determinism, and the one-drive system
//! equal to a `--device` run.

use ssdlab_core::config::Device;
use ssdlab_core::fabric::{Fabric, PortSpec, SwitchSpec, Upper};
use ssdlab_core::system::config::{SystemConfig, SystemFile};
use ssdlab_core::units::Time;
use ssdlab_core::workload::fio;
use ssdlab_core::{simulate_quiet, simulate_system, Precondition, Report, RunSpec};
use std::path::{Path, PathBuf};

/// A RAM-disk drive with no firmware cost: it streams at its link's rate.
const RAMDISK: &str = include_str!("../../../tests/data/stream-ramdisk.toml");

fn dir(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("system-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("stream.toml"), RAMDISK).unwrap();
    d
}

/// A switch with `n` stream drives, uplink Gen3 x`up`.
fn switch_system(n: usize, up: u32) -> String {
    let mut s = format!(
        "name = \"t\"\n[root_complex]\ngeneration = 3\nlanes = 16\nports = 1\n\
         [[switch]]\nname = \"sw0\"\nupstream_lanes = {up}\ndownstream_lanes = 4\nports = 8\nlatency = \"150ns\"\n"
    );
    for i in 0..n {
        s +=
            &format!("[[drive]]\nname = \"nvme{i}\"\ndevice = \"stream.toml\"\nattach = \"sw0\"\n");
    }
    s
}

/// The stream drive's own link (its payload rate is one drive's S).
fn stream_link(d: &Path) -> ssdlab_core::pcie::Link {
    let dev = Device::load(&d.join("stream.toml").display().to_string()).unwrap();
    ssdlab_core::pcie::Link::new(&dev.pcie)
}

fn load(d: &Path, text: &str) -> Result<SystemConfig, ssdlab_core::config::ConfigError> {
    let p = d.join("sys.toml");
    std::fs::write(&p, text).unwrap();
    SystemConfig::load(&p.display().to_string())
}

fn spec(dev: Device, job: &str) -> RunSpec {
    let mut s = RunSpec::new(dev, fio::parse_str(job, "t.fio").unwrap(), "t.fio");
    s.precondition = Precondition::Fresh;
    s
}

fn run_sys(cfg: SystemConfig, job: &str) -> Report {
    let dev = cfg.drives[0].device.clone();
    simulate_system(cfg, &spec(dev, job), &mut |_| {}, &|| false)
        .unwrap()
        .0
}

fn reads_on(n: usize, extra: &str) -> String {
    let mut j = format!("[global]\nrw=read\nbs=128k\niodepth=16\nnumber_ios=4000\n{extra}\n");
    for i in 0..n {
        j += &format!("[j{i}]\nfilename=nvme{i}\n");
    }
    j
}

#[test]
fn drives_behind_a_shared_uplink_stream_min_of_their_sum_and_the_uplink() {
    let d = dir("uplink");
    let link = stream_link(&d);
    let s = link.effective_bandwidth().0; // one drive's x4 payload rate
    for (n, up) in [(1, 8), (2, 8), (4, 8), (4, 16), (3, 4)] {
        let cfg = load(&d, &switch_system(n, up)).unwrap();
        let uplink = ssdlab_core::pcie::Link::new(&cfg.switches[0].uplink);
        let b = uplink.effective_bandwidth().0;
        let r = run_sys(cfg, &reads_on(n, ""));
        let expect = (n as f64 * s).min(b);
        let got = r.read.bw_bytes_per_s;
        // Each 128 KiB read also sends a 16 B CQE and a 4 B MSI-X up the same
        // links (under 0.1 %), and the pipeline fills and drains once: 3 %.
        assert!(
            (got / expect - 1.0).abs() < 0.03,
            "{n} drives, x{up} uplink: {got:.3e} B/s, expected min({n} x {s:.3e}, {b:.3e}) = {expect:.3e}"
        );
        let up_link = r.links.iter().find(|l| l.name == "sw0-up").unwrap();
        if n as f64 * s > 1.05 * b {
            assert!(
                up_link.util_up > 0.95,
                "the uplink is the bottleneck: {}",
                up_link.util_up
            );
        }
    }
}

#[test]
fn the_root_complex_memory_port_caps_what_all_drives_move_together() {
    // Four stream drives behind an x16 uplink (which carries all four):
    // with `root_complex.memory_bandwidth` M they stream min(4 S, M) both
    // ways (reads: data written into host memory; writes: data read from
    // it), and a port faster than the links changes nothing at all.
    let d = dir("memory");
    let s = stream_link(&d).effective_bandwidth().0;
    let with = |m: &str| {
        switch_system(4, 16).replace(
            "ports = 1\n",
            &format!("ports = 1\nmemory_bandwidth = \"{m}\"\n"),
        )
    };
    let writes = reads_on(4, "").replace("rw=read", "rw=write");
    for (m, bw) in [("2GB/s", 2e9), ("5GB/s", 5e9)] {
        let expect = (4.0 * s).min(bw);
        let r = run_sys(load(&d, &with(m)).unwrap(), &reads_on(4, ""));
        let got = r.read.bw_bytes_per_s;
        assert!(
            (got / expect - 1.0).abs() < 0.03,
            "reads, {m}: {got:.3e} vs {expect:.3e}"
        );
        let port = r.links.iter().find(|l| l.name == "root-memory").unwrap();
        assert_eq!((port.generation, port.lanes), (0, 0));
        assert!(port.util_up > 0.95 && port.util_down < 0.05, "{port:?}");
        let w = run_sys(load(&d, &with(m)).unwrap(), &writes);
        let got = w.write.bw_bytes_per_s;
        assert!(
            (got / expect - 1.0).abs() < 0.03,
            "writes, {m}: {got:.3e} vs {expect:.3e}"
        );
    }
    // 1 TB/s: never the bottleneck, so every figure is the same as without it.
    let a = run_sys(load(&d, &switch_system(4, 16)).unwrap(), &reads_on(4, ""));
    let b = run_sys(load(&d, &with("1TB/s")).unwrap(), &reads_on(4, ""));
    assert_eq!(a.read.iops, b.read.iops);
    assert_eq!(a.read.lat_ns.mean, b.read.lat_ns.mean);
    assert_eq!(b.links.len(), a.links.len() + 1);
    // One drive straight on a root port: the port caps it too.
    let one = "name = \"t\"\n[root_complex]\ngeneration = 3\nlanes = 4\nports = 1\nmemory_bandwidth = \"1GB/s\"\n\
               [[drive]]\nname = \"nvme0\"\ndevice = \"stream.toml\"\n";
    let r = run_sys(load(&d, one).unwrap(), &reads_on(1, ""));
    assert!(
        (r.read.bw_bytes_per_s / 1e9 - 1.0).abs() < 0.03,
        "{}",
        r.read.bw_bytes_per_s
    );
    // Bad values are named by key.
    for bad in ["0GB/s", "4", "fast"] {
        let e = problems(&d, &with(bad));
        assert!(e.contains("root_complex.memory_bandwidth"), "{bad}: {e}");
    }
}

#[test]
fn a_small_ingress_buffer_limits_a_link_to_one_buffer_per_credit_round_trip() {
    let d = dir("credits");
    let link = stream_link(&d);
    let s = link.effective_bandwidth().0;
    // Round trip of a credit over the drive's link: its 200 ns latency each
    // way plus the switch's 150 ns.
    let rtt: f64 = 2.0 * 200e-9 + 150e-9;
    for (buffer, bytes) in [("1KiB", 1024.0f64), ("2KiB", 2048.0), ("64KiB", 65536.0)] {
        let text = switch_system(1, 8).replace(
            "latency = \"150ns\"\n",
            &format!("latency = \"150ns\"\ningress_buffer = \"{buffer}\"\n"),
        );
        let r = run_sys(load(&d, &text).unwrap(), &reads_on(1, ""));
        let expect = (bytes / rtt).min(s);
        let got = r.read.bw_bytes_per_s;
        assert!(
            (got / expect - 1.0).abs() < 0.03,
            "ingress buffer {buffer}: {got:.3e} B/s, expected min({bytes} B / {rtt:.2e} s, {s:.3e}) = {expect:.3e}"
        );
    }
}

#[test]
fn drives_with_equal_demand_share_a_saturated_uplink_equally() {
    let d = dir("fair");
    let link = stream_link(&d);
    // Four drives behind an x4 uplink (about one drive's rate).
    let cfg = load(&d, &switch_system(4, 4)).unwrap();
    let uplink = ssdlab_core::pcie::Link::new(&cfg.switches[0].uplink);
    let mut j = "[global]\nrw=read\nbs=128k\niodepth=8\nruntime=20ms\ntime_based=1\n".to_string();
    for i in 0..4 {
        j += &format!("[j{i}]\nfilename=nvme{i}\n");
    }
    let r = run_sys(cfg, &j);
    let total = r.read.bw_bytes_per_s;
    let b = uplink.effective_bandwidth().0;
    assert!(
        (total / b - 1.0).abs() < 0.03,
        "{total:.3e} B/s vs uplink {b:.3e}"
    );
    for i in 0..4 {
        let n = format!("nvme{i}");
        let share = r.drives[&n].read.bw_bytes_per_s / total;
        assert!(
            (share - 0.25).abs() < 0.02,
            "{n} got {:.1} % of the uplink",
            share * 100.0
        );
        // Its own link is stalled (flow control) most of the time, and a
        // stall is not busy time: the link is busy for its data's wire time.
        let own = r.links.iter().find(|l| l.name == n).unwrap();
        let expect = b / 4.0 / link.effective_bandwidth().0;
        assert!(
            (own.util_up / expect - 1.0).abs() < 0.03,
            "{n}'s link: busy {:.3} of the time, expected {expect:.3}",
            own.util_up
        );
    }
}

#[test]
fn a_switch_adds_exactly_its_latency_per_crossing_at_qd1() {
    let d = dir("latency");
    let job = "[j]\nrw=randread\nbs=4k\niodepth=1\nnumber_ios=200\nfilename=nvme0\n";
    // Drive at the root vs behind one switch vs behind two, every link alike.
    let root = "name = \"r\"\n[root_complex]\nlanes = 4\n[[drive]]\nname = \"nvme0\"\ndevice = \"stream.toml\"\n";
    let one = "name = \"s1\"\n[root_complex]\nlanes = 4\n[[switch]]\nname = \"a\"\nupstream_lanes = 4\ndownstream_lanes = 4\nports = 1\nlatency = \"150ns\"\n\
               [[drive]]\nname = \"nvme0\"\ndevice = \"stream.toml\"\nattach = \"a\"\n";
    let lat = |text: &str| {
        let r = run_sys(load(&d, text).unwrap(), job);
        (r.read.lat_ns.min, r.read.lat_ns.max)
    };
    let (r0, r0max) = lat(root);
    let (r1, _) = lat(one);
    assert_eq!(
        r0, r0max,
        "QD1 on an idle RAM disk: every read takes the same time"
    );
    // One read crosses the switch: doorbell down; SQE read request up and
    // completion down; data up; CQE up then MSI-X up (serialised on the
    // link, so the MSI-X follows the CQE: one crossing). Each crossing costs
    // the switch's 150 ns plus the extra link's latency (100 ns, the root
    // complex default) — and the extra link's own wire time of each TLP.
    let crossings = 5.0;
    let per = 150.0 + 100.0;
    let extra = (r1 - r0) as f64;
    assert!(
        extra >= crossings * per && extra < crossings * per + 600.0,
        "behind one switch a QD1 read takes {extra} ns longer; {crossings} crossings x {per} ns = {} ns plus wire time",
        crossings * per
    );
}

#[test]
fn work_booked_ahead_on_a_drives_link_holds_no_read_data_back() {
    // Behind a switch, a drive's link gets work booked microseconds ahead:
    // command fetches for when the host will have rung the doorbell (after
    // its CPU's completion and submission work), completion entries for
    // when the data will have reached the host. Read data ready now must
    // use the idle link before such bookings. At QD16 the switch then costs
    // about what it costs at QD1 (its latency per crossing); when the
    // drive's link was a FIFO that remembered one idle gap, the gaps before
    // earlier bookings were lost and read data waited behind them: 2.3 us
    // more per read here against 1.25 us at QD1.
    let d = dir("ahead");
    let drive =
        |attach: &str| format!("[[drive]]\nname = \"nvme0\"\ndevice = \"pm9a3-960g\"\n{attach}");
    let root = "name = \"r\"\n[root_complex]\ngeneration = 4\nlanes = 4\n".to_string() + &drive("");
    let behind = "name = \"s\"\n[root_complex]\ngeneration = 4\nlanes = 16\n\
                  [[switch]]\nname = \"sw0\"\nupstream_generation = 4\nupstream_lanes = 16\n\
                  downstream_generation = 4\ndownstream_lanes = 4\nports = 4\nlatency = \"150ns\"\n"
        .to_string() + &drive("attach = \"sw0\"\n");
    let mean = |text: &str, qd: u32| {
        let cfg = load(&d, text).unwrap();
        let dev = cfg.drives[0].device.clone();
        let job =
            format!("[j]\nrw=randread\nbs=4k\niodepth={qd}\nnumber_ios=20000\nfilename=nvme0\n");
        let mut sp = spec(dev, &job);
        sp.precondition = Precondition::Fill;
        let r = simulate_system(cfg, &sp, &mut |_| {}, &|| false).unwrap().0;
        r.read.lat_ns.mean
    };
    let qd1 = mean(&behind, 1) - mean(&root, 1);
    let qd16 = mean(&behind, 16) - mean(&root, 16);
    assert!(qd1 > 1000.0, "the switch costs at QD1: {qd1} ns");
    assert!(
        qd16 <= 1.25 * qd1,
        "at QD16 a read behind the switch takes {qd16:.0} ns longer than at the root port; at QD1 {qd1:.0} ns"
    );
}

/// The fabric of a system whose drives all sit behind its first switch
/// (`switch_system`), as `Fabric::build` takes it.
fn fabric_specs(cfg: &SystemConfig) -> (Vec<SwitchSpec<'_>>, Vec<PortSpec<'_>>) {
    let sw = cfg
        .switches
        .iter()
        .map(|s| SwitchSpec {
            name: &s.name,
            upstream: Upper::Root,
            uplink: &s.uplink,
            latency: s.latency,
            ingress_buffer: s.ingress_buffer,
        })
        .collect();
    let ports = cfg
        .drives
        .iter()
        .map(|p| PortSpec {
            name: &p.name,
            attach: Upper::Switch(0),
            link: &p.link,
        })
        .collect();
    (sw, ports)
}

#[test]
fn a_peer_to_peer_transfer_never_touches_the_uplink() {
    let d = dir("p2p");
    let cfg = load(&d, &switch_system(2, 8)).unwrap();
    let (sw, ports) = fabric_specs(&cfg);
    let mut f = Fabric::build(&sw, &ports, None);
    let t = f.peer_write(0, 1, Time::ZERO, 1 << 20);
    let by = |n: &str| {
        f.links()
            .find(|(i, _)| i.name == n)
            .map(|(_, l)| l.bytes())
            .unwrap()
    };
    assert_eq!(by("sw0-up"), (0, 0), "the uplink carried nothing");
    assert_eq!(by("nvme0"), (1 << 20, 0), "up from the source");
    assert_eq!(by("nvme1"), (0, 1 << 20), "down to the target");
    // Two x4 hops in cut-through: one hop's wire time plus both latencies and the switch.
    let one = ssdlab_core::pcie::Link::new(&cfg.drives[0].link);
    let expect = one.payload_time(1 << 20) + Time::ns(200).times(2) + Time::ns(150);
    assert_eq!(t, expect);
    // The same transfer through the host crosses the uplink twice.
    let mut g = Fabric::build(&sw, &ports, None);
    let at_host = g.device_write(0, Time::ZERO, 1 << 20);
    g.host_write(1, at_host, 1 << 20);
    let up = g
        .links()
        .find(|(i, _)| i.name == "sw0-up")
        .map(|(_, l)| l.bytes())
        .unwrap();
    assert_eq!(up, (1 << 20, 1 << 20));
}

#[test]
fn a_completion_entry_passes_data_booked_ahead_on_a_drives_link() {
    // A drive interleaves its DMA engines' TLPs: a completion entry and its
    // interrupt (two TLPs of at most 64 B) wait at most one TLP behind data
    // already on its link, not behind the whole transfer. Behind a switch
    // they pass every link of the path: they arrive when they would on an
    // idle path, while a megabyte of read data is still on the drive's link.
    let d = dir("ctl");
    let cfg = load(&d, &switch_system(2, 8)).unwrap();
    let (sw, ports) = fabric_specs(&cfg);
    let idle = Fabric::build(&sw, &ports, None).completion(0, Time::ZERO, 16, Some(4));
    let mut f = Fabric::build(&sw, &ports, None);
    let data_at_host = f.device_write(0, Time::ZERO, 1 << 20);
    let cqe_at_host = f.completion(0, Time::ZERO, 16, Some(4));
    assert_eq!(cqe_at_host, idle);
    assert!(
        data_at_host > cqe_at_host.times(50),
        "{data_at_host:?} vs {cqe_at_host:?}"
    );
    // Their wire time is kept: the next data on the drive's link starts
    // after the megabyte and the two control TLPs.
    let link = ssdlab_core::pcie::Link::new(&cfg.drives[0].link);
    let next = f.device_write(0, Time::ZERO, 4096);
    let mut g = Fabric::build(&sw, &ports, None);
    g.device_write(0, Time::ZERO, 1 << 20);
    let without = g.device_write(0, Time::ZERO, 4096);
    assert_eq!(next - without, link.payload_time(16) + link.payload_time(4));
}

#[test]
fn multi_drive_runs_are_deterministic_and_report_every_drive() {
    let d = dir("det");
    let job = "[global]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=8\nnumber_ios=3000\n[a]\nfilename=nvme0:nvme1\n[b]\nfilename=/dev/nvme2n1\n";
    let text = switch_system(3, 8);
    let a = run_sys(load(&d, &text).unwrap(), job);
    let b = run_sys(load(&d, &text).unwrap(), job);
    let strip = |r: &Report| {
        let mut r = r.clone();
        r.wall_time_s = 0.0;
        r.sim_ios_per_wall_s = 0.0;
        r.to_json()
    };
    assert_eq!(strip(&a), strip(&b));
    assert_eq!(a.drives.len(), 3);
    // Job a stripes round robin over nvme0 and nvme1; job b uses nvme2 alone.
    let ios = |n: &str| a.drives[n].read.ios + a.drives[n].write.ios;
    assert_eq!(ios("nvme0") + ios("nvme1"), 3000);
    assert_eq!(ios("nvme0"), 1500);
    assert_eq!(ios("nvme2"), 3000);
    assert_eq!(a.read.ios + a.write.ios, 6000);
    assert_eq!(a.links.len(), 4);
    assert!(a.ignored_options.iter().all(|i| i.option != "filename"));
}

#[test]
fn the_one_drive_system_equals_the_device_run() {
    let d = dir("one");
    let dev = Device::load(&d.join("stream.toml").display().to_string()).unwrap();
    let job = "[j]\nrw=randrw\nbs=4k\niodepth=8\nnumber_ios=4000\nfilename=/dev/nvme0n1\n";
    let plain = simulate_quiet(&spec(dev.clone(), job)).unwrap();
    // A system file: the same drive on a root port at least as wide and new.
    let cfg = load(
        &d,
        "name = \"one\"\n[root_complex]\ngeneration = 4\nlanes = 8\n[[drive]]\nname = \"nvme0\"\ndevice = \"stream.toml\"\n",
    )
    .unwrap();
    assert_eq!(cfg.drives[0].link.lanes, 4);
    assert_eq!(cfg.drives[0].link.generation, 3);
    let sys = run_sys(cfg, job);
    let inner = &sys.drives["nvme0"];
    for r in [&sys, inner] {
        assert_eq!(r.read, plain.read);
        assert_eq!(r.write, plain.write);
        assert_eq!(r.sim_time_ns, plain.sim_time_ns);
        assert_eq!(r.waf, plain.waf);
        assert_eq!(r.utilisation.pcie_up, plain.utilisation.pcie_up);
    }
    // The same through SystemConfig::single (what `--device` builds).
    let single = simulate_system(
        SystemConfig::single(dev.clone()),
        &spec(dev, job),
        &mut |_| {},
        &|| false,
    )
    .unwrap()
    .0;
    assert_eq!(single.read, plain.read);
}

fn problems(d: &Path, text: &str) -> String {
    match load(d, text) {
        Ok(_) => panic!("expected errors for:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn topology_errors_name_the_key_and_what_is_wrong() {
    let d = dir("errors");
    let drive = |name: &str, attach: &str| {
        format!("[[drive]]\nname = \"{name}\"\ndevice = \"stream.toml\"\nattach = \"{attach}\"\n")
    };
    let sw = |name: &str, up: &str, lanes: u32, ports: u32| {
        format!("[[switch]]\nname = \"{name}\"\nupstream = \"{up}\"\nupstream_lanes = {lanes}\ndownstream_lanes = 4\nports = {ports}\n")
    };
    // cycle
    let e = problems(
        &d,
        &format!(
            "name = \"x\"\n{}{}{}",
            sw("a", "b", 4, 2),
            sw("b", "a", 4, 2),
            drive("nvme0", "a")
        ),
    );
    assert!(e.contains("switches attach in a cycle: a -> b -> a"), "{e}");
    // dangling attachment
    let e = problems(&d, &format!("name = \"x\"\n{}", drive("nvme0", "sw9")));
    assert!(
        e.contains("drive[0].attach: 'sw9' is not a switch of this system"),
        "{e}"
    );
    // an ingress buffer that cannot hold one TLP, and one without a unit
    let e = problems(
        &d,
        &format!(
            "name = \"x\"\n{}ingress_buffer = \"256B\"\n{}",
            sw("a", "root", 4, 4),
            drive("nvme0", "a")
        ),
    );
    assert!(
        e.contains("switch[0].ingress_buffer: '256B' cannot hold one full TLP (256B of payload and 24B of overhead)"),
        "{e}"
    );
    let e = problems(
        &d,
        &format!(
            "name = \"x\"\n{}ingress_buffer = \"8192\"\n{}",
            sw("a", "root", 4, 4),
            drive("nvme0", "a")
        ),
    );
    assert!(
        e.contains("switch[0].ingress_buffer: '8192' has no unit"),
        "{e}"
    );
    // a drive attached twice
    let e = problems(
        &d,
        &format!(
            "name = \"x\"\n{}{}{}",
            sw("a", "root", 4, 4),
            drive("nvme0", "a"),
            drive("nvme0", "a")
        ),
    );
    assert!(
        e.contains("drive[1].name: 'nvme0' is already the name of drive[0].name"),
        "{e}"
    );
    // a port wider than the switch allows
    let e = problems(&d, &format!("name = \"x\"\n{}[[drive]]\nname = \"n\"\ndevice = \"stream.toml\"\nattach = \"a\"\nlanes = 8\n", sw("a", "root", 4, 4)));
    assert!(
        e.contains("drive[0].lanes: x8 is wider than switch 'a' allows on a downstream port (x4)"),
        "{e}"
    );
    // more attachments than ports
    let e = problems(
        &d,
        &format!(
            "name = \"x\"\n{}{}{}",
            sw("a", "root", 4, 1),
            drive("n0", "a"),
            drive("n1", "a")
        ),
    );
    assert!(
        e.contains("switch[0].ports: 2 things attach to switch 'a' but it has 1 downstream ports"),
        "{e}"
    );
    // an uplink wider than the root port
    let e = problems(
        &d,
        &format!(
            "name = \"x\"\n[root_complex]\nlanes = 4\n{}{}",
            sw("a", "root", 8, 2),
            drive("n0", "a")
        ),
    );
    assert!(
        e.contains("switch[0].upstream_lanes: x8 is wider than a root port (x4)"),
        "{e}"
    );
    // unknown key, with its line
    let e = problems(
        &d,
        &format!(
            "name = \"x\"\n[root_complex]\nlanez = 4\n{}",
            drive("n0", "root")
        ),
    );
    assert!(e.contains("lanez") && e.contains("line 3"), "{e}");
    // a drive whose device is wrong: the device's own problem, under the drive's key
    let e = problems(
        &d,
        "name = \"x\"\n[[drive]]\nname = \"n0\"\ndevice = \"nothere.toml\"\n",
    );
    assert!(
        e.contains("drive[0].device") && e.contains("nothere.toml"),
        "{e}"
    );
    // no drives
    let e = problems(&d, "name = \"x\"\n");
    assert!(
        e.contains("drive: a system needs at least one [[drive]]"),
        "{e}"
    );
    // bad units and values
    let e = problems(&d, &format!("name = \"x\"\n[[switch]]\nname = \"a\"\nupstream_lanes = 3\ndownstream_lanes = 4\nports = 2\nlatency = \"150\"\npower = \"-1W\"\n{}", drive("n0", "a")));
    assert!(
        e.contains("switch[0].upstream_lanes: 3 lanes is not a PCIe link width"),
        "{e}"
    );
    assert!(e.contains("switch[0].latency"), "{e}");
    assert!(
        e.contains("switch[0].power: '-1W' must be a non-negative number"),
        "{e}"
    );
}

#[test]
fn jobs_must_name_drives_on_a_system_of_several() {
    let d = dir("filename");
    let cfg = load(&d, &switch_system(2, 8)).unwrap();
    let dev = cfg.drives[0].device.clone();
    let run =
        |job: &str| simulate_system(cfg.clone(), &spec(dev.clone(), job), &mut |_| {}, &|| false);
    let e = run("[j]\nrw=read\nnumber_ios=10\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("this system has 2 drives (nvme0, nvme1); say which with filename="),
        "{e}"
    );
    let e = run("[j]\nrw=read\nnumber_ios=10\nfilename=nvme7\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("'nvme7' names no drive of this system (drives: nvme0, nvme1)"),
        "{e}"
    );
    assert!(run("[j]\nrw=read\nnumber_ios=10\nfilename=/dev/nvme1n1\n").is_ok());
}

#[test]
fn the_seed002_preset_resolves_to_its_topology() {
    let s = SystemConfig::load("seed002-4x-gen3-switch").unwrap();
    assert_eq!(s.drives.len(), 4);
    assert_eq!(s.switches[0].uplink.lanes, 8);
    assert_eq!(s.switches[0].uplink.generation, 3);
    // PM9A3-class drives are Gen4 x4; behind a Gen3 switch they train to Gen3 x4.
    assert!(s
        .drives
        .iter()
        .all(|d| d.link.generation == 3 && d.link.lanes == 4));
    let f = SystemFile::from_toml_str(
        "name = \"x\"\nextends = \"seed002-4x-gen3-switch\"\n",
        "x.toml",
    )
    .unwrap();
    assert_eq!(f.drives.len(), 4, "extends a system preset");
}

#[test]
fn a_trace_replays_each_mapped_device_on_its_drive() {
    use ssdlab_core::workload::trace::{Remap, TraceFilter};
    use ssdlab_core::workload::{Replay, TraceSpec, Workload};
    let d = dir("trace");
    // MSR records: 300 on disk hm_0, 200 on hm_1, 100 on hm_2 (not mapped).
    let mut t = String::new();
    for i in 0..600u64 {
        let disk = if i % 6 < 3 {
            0
        } else if i % 6 < 5 {
            1
        } else {
            2
        };
        let op = if i % 2 == 0 { "Read" } else { "Write" };
        t += &format!(
            "{},hm,{disk},{op},{},4096,10\n",
            128166372000000000u64 + i * 1000,
            (i * 7919 % 4096) * 4096
        );
    }
    let path = d.join("t.csv");
    std::fs::write(&path, t).unwrap();
    let cfg = load(&d, &switch_system(2, 8)).unwrap();
    let dev = cfg.drives[0].device.clone();
    let trace = |map: &[(&str, &str)]| Workload {
        trace: Some(TraceSpec {
            path: path.clone(),
            format: None,
            replay: Replay::Closed { iodepth: 4 },
            filter: TraceFilter::default(),
            remap: Remap::Wrap,
        }),
        trace_drives: map
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        ..Workload::default()
    };
    let run = |w: Workload| {
        let mut s = RunSpec::new(dev.clone(), w, "t.csv");
        s.precondition = Precondition::Fresh;
        simulate_system(cfg.clone(), &s, &mut |_| {}, &|| false)
    };
    let r = run(trace(&[("hm_0", "nvme1"), ("hm_1", "nvme0")]))
        .unwrap()
        .0;
    let ios = |n: &str| r.drives[n].read.ios + r.drives[n].write.ios;
    assert_eq!(ios("nvme1"), 300, "hm_0 replays on nvme1");
    assert_eq!(ios("nvme0"), 200, "hm_1 replays on nvme0");
    assert_eq!(r.read.ios + r.write.ios, 500, "hm_2 is not mapped");
    // Errors: no map on several drives; a drive that does not exist.
    let e = run(trace(&[])).unwrap_err().to_string();
    assert!(
        e.contains("needs --trace-drives TRACE_DEVICE=DRIVE") && e.contains("nvme0, nvme1"),
        "{e}"
    );
    let e = run(trace(&[("hm_0", "nvme9")])).unwrap_err().to_string();
    assert!(e.contains("'nvme9' is not a drive of this system"), "{e}");
    // A map on a one-drive run is refused, not ignored.
    let mut s = RunSpec::new(dev.clone(), trace(&[("hm_0", "nvme0")]), "t.csv");
    s.precondition = Precondition::Fresh;
    let e = simulate_quiet(&s).unwrap_err().to_string();
    assert!(
        e.contains("--trace-drives maps a trace's devices onto the drives of a system"),
        "{e}"
    );
}

/// Unequal demand behind a saturated x4 uplink: one drive at QD32 against
/// three at QD2. A drive keeps its read data until its own link can take
/// it, so the switch sees each port's transfers as they arrive and serves
/// them in arrival order (about round robin): the light drives are not
/// starved behind the heavy one's backlog (before: 84 % against 5 % each).
#[test]
fn a_deep_queue_does_not_starve_shallow_ones_behind_a_shared_uplink() {
    let d = dir("unequal");
    let cfg = load(&d, &switch_system(4, 4)).unwrap();
    let uplink = ssdlab_core::pcie::Link::new(&cfg.switches[0].uplink);
    let mut j = "[global]\nrw=read\nbs=128k\nruntime=20ms\ntime_based=1\n".to_string();
    for i in 0..4 {
        j += &format!(
            "[j{i}]\nfilename=nvme{i}\niodepth={}\n",
            if i == 0 { 32 } else { 2 }
        );
    }
    let r = run_sys(cfg, &j);
    let total = r.read.bw_bytes_per_s;
    let b = uplink.effective_bandwidth().0;
    assert!((total / b - 1.0).abs() < 0.03, "{total:.3e} vs {b:.3e}");
    let share = |i: usize| r.drives[&format!("nvme{i}")].read.bw_bytes_per_s / total;
    let lat = |i: usize| r.drives[&format!("nvme{i}")].read.lat_ns.mean;
    assert!(
        share(0) < 0.5,
        "the QD32 drive took {:.1} %",
        share(0) * 100.0
    );
    for i in 1..4 {
        // At most a fair quarter; well above starvation.
        assert!(
            share(i) > 0.15 && share(i) <= 0.25 + 0.01,
            "nvme{i} got {:.1} %",
            share(i) * 100.0
        );
        assert!(
            lat(i) < lat(0) / 4.0,
            "nvme{i} waits {} ns vs {}",
            lat(i),
            lat(0)
        );
    }
}
