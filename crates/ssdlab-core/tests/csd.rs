//! Computational storage (seed 003): kernels compute real results on the
//! data the drive holds, the timing model's analytic cases, peer-to-peer
//! transfers that never cross the host link, and clear errors.

use rand::{Rng, SeedableRng};
use ssdlab_core::compose;
use ssdlab_core::config::Device;
use ssdlab_core::csd::kernel::{self, Output, Work};
use ssdlab_core::csd::program::{ComputeNamespace, CsError};
use ssdlab_core::csd::timing::{kernel_time, Variant};
use ssdlab_core::csd::{self, CsdSpec};
use ssdlab_core::units::Time;

/// The SmartSSD preset with fewer blocks per plane (same channels, dies
/// and timings; 64 GB instead of 3.84 TB), so tests build it quickly.
fn smartssd() -> Device {
    let sets = compose::parse_sets(&["nand.blocks_per_plane=80".to_string()]).unwrap();
    compose::load_named("smartssd-3.84t", &sets).unwrap().1
}

fn spec(k: &str, n: u64) -> CsdSpec {
    CsdSpec::new(smartssd(), k, n)
}

fn random(n: usize, seed: u64, lo: i32, hi: i32) -> Vec<i32> {
    let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed);
    (0..n).map(|_| r.gen_range(lo..hi)).collect()
}

#[test]
fn kernels_compute_the_reference_on_what_the_drive_holds() {
    // Count and average on random data.
    let a = random(300_001, 1, -50, 50);
    let mut s = spec("count", 0);
    s.inputs = Some(vec![a.clone()]);
    s.value = -3;
    let r = csd::run(&s).unwrap();
    let want = a.iter().filter(|&&x| x == -3).count() as u64;
    assert_eq!(
        r.report.result,
        Output::Count {
            value: -3,
            count: want
        }
    );
    let mut s = spec("average", 0);
    s.inputs = Some(vec![a.clone()]);
    let r = csd::run(&s).unwrap();
    let sum: i64 = a.iter().map(|&x| x as i64).sum();
    match r.report.result {
        Output::Average { sum: got, n, mean } => {
            assert_eq!((got, n), (sum, a.len() as u64));
            assert!((mean - sum as f64 / a.len() as f64).abs() < 1e-12);
        }
        o => panic!("{o:?}"),
    }
    // Vector addition wraps like the FPGA's 32-bit adder.
    let b = random(300_001, 2, i32::MIN, i32::MAX);
    let c = random(300_001, 3, i32::MIN, i32::MAX);
    let mut s = spec("vadd", 0);
    s.inputs = Some(vec![b.clone(), c.clone()]);
    let r = csd::run(&s).unwrap();
    let want: Vec<i32> = b.iter().zip(&c).map(|(x, y)| x.wrapping_add(*y)).collect();
    assert_eq!(r.output.as_deref(), Some(&want[..]));
    // Merge: duplicates within and across the inputs, and empty inputs.
    let mut x = random(200_000, 4, 0, 150_000);
    let mut y = random(123_457, 5, 0, 150_000);
    x.sort();
    y.sort();
    for (p, q) in [
        (x.clone(), y.clone()),
        (vec![], y.clone()),
        (x.clone(), vec![]),
        (vec![], vec![]),
    ] {
        let mut s = spec("merge", 0);
        s.inputs = Some(vec![p.clone(), q.clone()]);
        let r = csd::run(&s).unwrap();
        let mut want: Vec<i32> = p.iter().chain(&q).copied().collect();
        want.sort();
        want.dedup();
        assert_eq!(r.output.as_deref(), Some(&want[..]));
        assert_eq!(
            r.report.result,
            Output::Array {
                len: want.len() as u64,
                crc32c: kernel::crc32c(&kernel::to_bytes(&want))
            }
        );
    }
}

#[test]
fn one_cu_one_array_pipelined_is_launch_plus_bytes_over_the_port() {
    // Count, one CU, pipelined: one element per cycle (the 32-bit port moves
    // 4 B per cycle, below the bank's 64 B), after the first burst's
    // scheduled latency (64 cycles) and the loop's depth (op + 2 = 3 cycles).
    let dev = smartssd();
    let f = dev.fpga.as_ref().unwrap();
    let k = kernel::kernel("count").unwrap();
    let n = 1_000_000u64;
    let w = Work {
        elements_in: n,
        steps: n,
        elements_out: 0,
    };
    let v = Variant {
        compute_units: 1,
        local_buffer: None,
        pipeline: true,
    };
    let t = kernel_time(f, k, &w, &v).unwrap();
    let bytes_per_cycle =
        (f.port_bytes as f64).min(f.bank_bytes_per_cycle * f.bank_read_efficiency);
    let cycles = (n as f64 * 4.0) / bytes_per_cycle + 64.0 + 3.0;
    assert!((t.cycles - cycles).abs() < 1e-6, "{} vs {cycles}", t.cycles);
    assert_eq!(t.launch, Time::us(15));
    assert_eq!(t.run, Time::from_secs_f64(cycles / 300e6));
    assert_eq!(t.bound, "compute");
    // Auto-pipelining (64+ iterations) makes the pragma change nothing here.
    let auto = kernel_time(
        f,
        k,
        &w,
        &Variant {
            pipeline: false,
            ..v
        },
    )
    .unwrap();
    assert_eq!(auto.cycles, t.cycles);
}

#[test]
fn compute_units_share_the_bank() {
    let dev = smartssd();
    let f = dev.fpga.as_ref().unwrap();
    for name in ["count", "average", "vadd", "merge"] {
        let k = kernel::kernel(name).unwrap();
        let w = Work {
            elements_in: 4 << 20,
            steps: 2 << 20,
            elements_out: 2 << 20,
        };
        let one = kernel_time(f, k, &w, &Variant::default()).unwrap();
        for n in 2..=f.max_compute_units() {
            let t = kernel_time(
                f,
                k,
                &w,
                &Variant {
                    compute_units: n,
                    ..Variant::default()
                },
            )
            .unwrap();
            // Never more than N times one CU; never below one CU's share.
            let speedup = one.cycles / t.cycles;
            assert!(speedup <= n as f64 + 1e-9, "{name} {n}: {speedup}");
            assert!(speedup >= 1.0 / n as f64, "{name} {n}: {speedup}");
            assert!(t.bank_utilisation <= 1.0);
        }
        // More CUs than the bank's interfaces: refused, naming the limit.
        let e = kernel_time(
            f,
            k,
            &w,
            &Variant {
                compute_units: 16,
                ..Variant::default()
            },
        )
        .unwrap_err();
        assert!(e.contains("offer 15"), "{e}");
    }
}

#[test]
fn p2p_does_not_touch_the_host_link() {
    let mut s = spec("vadd", 1 << 20);
    s.io_block = 1 << 20;
    let r = csd::run(&s).unwrap();
    let rep = &r.report;
    let link = |n: &str| rep.links.iter().find(|l| l.name == n).unwrap().clone();
    let host = link("csd-switch-up");
    let fpga = link(csd::FPGA);
    let data_in = rep.layout.in_bytes;
    let out = rep.layout.out_bytes;
    // The FPGA link carried the P2P in (down) and the write-back (up).
    assert!(fpga.down_bytes >= data_in && fpga.down_bytes < data_in + data_in / 50);
    assert!(fpga.up_bytes >= out && fpga.up_bytes < out + out / 50);
    // The host link carried only the host's own data: the set-up write and
    // the baseline's write back (down), the baseline's read (up), plus
    // commands and completions.
    assert!(host.down_bytes < data_in + out + (1 << 20), "{host:?}");
    assert!(host.up_bytes < data_in + (1 << 20), "{host:?}");
    // P2P over a Gen3 x4 path: below its payload rate.
    assert!(
        rep.p2p_bandwidth > 1e9 && rep.p2p_bandwidth < 3.6e9,
        "{}",
        rep.p2p_bandwidth
    );
}

#[test]
fn reruns_are_identical() {
    let a = csd::run(&spec("merge", 50_000)).unwrap();
    let b = csd::run(&spec("merge", 50_000)).unwrap();
    let strip = |r: &csd::CsdReport| {
        let mut v = serde_json::to_value(r).unwrap();
        v.as_object_mut().unwrap().remove("wall_time_s");
        v
    };
    assert_eq!(strip(&a.report), strip(&b.report));
    assert_eq!(a.output, b.output);
}

#[test]
fn bad_input_gets_a_clear_error() {
    let e = csd::run(&spec("sort", 10)).unwrap_err();
    assert!(
        e.contains("unknown kernel 'sort'") && e.contains("merge"),
        "{e}"
    );
    // Larger than the FPGA's 4 GiB: refused before anything is generated.
    let e = csd::run(&spec("vadd", 1 << 30)).unwrap_err();
    assert!(e.contains("FPGA memory") && e.contains("4294967296"), "{e}");
    let mut s = spec("merge", 0);
    s.inputs = Some(vec![vec![3, 1], vec![]]);
    let e = csd::run(&s).unwrap_err();
    assert!(e.contains("input 1 is not sorted at element 1"), "{e}");
    let mut s = spec("vadd", 0);
    s.inputs = Some(vec![vec![1, 2]]);
    let e = csd::run(&s).unwrap_err();
    assert!(e.contains("takes 2 input array(s), 1 given"), "{e}");
    let mut s = spec("count", 10);
    s.variant.local_buffer = Some(8 << 20);
    s.variant.compute_units = 2;
    let e = csd::run(&s).unwrap_err();
    assert!(e.contains("on-chip memory"), "{e}");
    let mut s = spec("count", 10);
    s.io_depth = 4_000_000_000;
    let e = csd::run(&s).unwrap_err();
    assert!(e.contains("--io-depth") && e.contains("1 to 1023"), "{e}");
    let mut s = spec("count", 10);
    s.io_block = 1 << 30;
    let e = csd::run(&s).unwrap_err();
    assert!(
        e.contains("--io-block") && e.contains("write buffer"),
        "{e}"
    );
    let mut s = spec("count", 10);
    s.host_clock_hz = 0.5e9;
    assert!(csd::run(&s)
        .unwrap_err()
        .contains("outside the core's range"));
    let mut s = spec("count", 10);
    s.device = Device::preset("pm9a3-960g").unwrap();
    assert!(csd::run(&s).unwrap_err().contains("no [fpga] section"));
    // A device file: a bad FPGA key is named.
    let text = include_str!("../presets/smartssd-3.84t.toml").replace("banks = 1 ", "banks = 0 ");
    let e = ssdlab_core::config::DeviceFile::from_toml_str(&text, "x.toml")
        .unwrap()
        .resolve("x.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("fpga.banks"), "{e}");
    let text = include_str!("../presets/smartssd-3.84t.toml").replace(
        r#"programs = ["count", "average", "vadd", "merge"]"#,
        r#"programs = ["count", "sort"]"#,
    );
    let e = ssdlab_core::config::DeviceFile::from_toml_str(&text, "x.toml")
        .unwrap()
        .resolve("x.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("fpga.programs[1]") && e.contains("unknown kernel 'sort'"),
        "{e}"
    );
    // A drive that offers only some kernels refuses the others.
    let sets = compose::parse_sets(&[
        "nand.blocks_per_plane=80".to_string(),
        r#"fpga.programs=["count"]"#.to_string(),
    ])
    .unwrap();
    let mut s = spec("vadd", 10);
    s.device = compose::load_named("smartssd-3.84t", &sets).unwrap().1;
    let e = csd::run(&s).unwrap_err();
    assert!(e.contains("does not offer kernel 'vadd'"), "{e}");
}

#[test]
fn the_compute_namespace_refuses_what_nvme_would() {
    let dev = smartssd();
    let mut ns = ComputeNamespace::new(dev.fpga.as_ref().unwrap());
    let v = Variant::default();
    assert!(matches!(ns.execute(0, 0, 0), Err(CsError::NoProgram(0))));
    assert!(matches!(
        ns.load_program(9, "count", v, 1024),
        Err(CsError::InvalidSlot(9))
    ));
    assert!(matches!(
        ns.load_program(0, "sort", v, 1024),
        Err(CsError::InvalidProgram(_))
    ));
    assert!(matches!(
        ns.load_program(0, "count", v, 1 << 40),
        Err(CsError::InsufficientResources(_))
    ));
    ns.load_program(0, "count", v, 1024).unwrap();
    ns.set_ranges(0, &[(0, 16)]).unwrap();
    let e = ns.execute(0, 0, 0).unwrap_err();
    assert_eq!(e, CsError::NotActivated(0));
    assert!(e.to_string().contains("not activated"));
    ns.activate(0).unwrap();
    assert!(matches!(
        ns.set_ranges(1, &[(2, 16)]),
        Err(CsError::InvalidMemoryRange(_))
    ));
    let e = ns.set_ranges(1, &[(4 << 30, 4)]).unwrap_err().to_string();
    assert!(e.contains("beyond"), "{e}");
    assert!(matches!(
        ns.execute(0, 3, 0),
        Err(CsError::InvalidRangeSet(_))
    ));
    // A program runs on what is in its memory.
    ns.write(0, &kernel::to_bytes(&[5, 7, 7, 1])).unwrap();
    let x = ns.execute(0, 0, 7).unwrap();
    assert_eq!(x.output, Output::Count { value: 7, count: 2 });
}

#[test]
fn a_plain_run_crosses_the_internal_switch_and_counts_the_idle_fpga() {
    let w = ssdlab_core::workload::fio::parse_str(
        "[r]\nrw=randread\nbs=4k\niodepth=8\nnumber_ios=2000\n",
        "t.fio",
    )
    .unwrap();
    let mut spec = ssdlab_core::RunSpec::new(smartssd(), w, "t.fio");
    spec.precondition = ssdlab_core::Precondition::Fresh;
    let r = ssdlab_core::simulate_quiet(&spec).unwrap();
    let p = r.power.as_ref().unwrap();
    // 3 W static + 0.5 W DRAM background, and the switch's 2 W.
    assert!((p.components["fpga"].avg_w - 3.5).abs() < 1e-9);
    assert!((p.components["switches"].avg_w - 2.0).abs() < 1e-9);
    let parts: f64 = p.components.values().map(|c| c.energy_j).sum();
    assert!((r.energy_j.unwrap() - parts).abs() < 1e-9 * parts.max(1.0));
    let names: Vec<&str> = r.links.iter().map(|l| l.name.as_str()).collect();
    assert!(
        names.contains(&"csd-switch-up") && names.contains(&"fpga0"),
        "{names:?}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
    /// Structured fuzzing of the computational-storage inputs: any kernel
    /// name, build, slot, range set and arrays through the compute
    /// namespace and the timing model. Every command is a result or a
    /// clear error, never a panic; a result's timing is finite.
    #[test]
    fn compute_namespace_never_panics(
        k in 0usize..5,
        cus in 0u32..20,
        buffer in proptest::option::of(0u64..(1 << 22)),
        pipeline in proptest::bool::ANY,
        slot in 0u16..10,
        activate in proptest::bool::ANY,
        a in proptest::collection::vec(proptest::num::i32::ANY, 0..64),
        b in proptest::collection::vec(-8i32..8, 0..64),
        sorted in proptest::bool::ANY,
        ranges in 0usize..4,
        value in proptest::num::i32::ANY,
    ) {
        let dev = Device::preset("smartssd-3.84t").unwrap();
        let mut ns = ComputeNamespace::new(dev.fpga.as_ref().unwrap());
        let name = ["count", "average", "vadd", "merge", "sort"][k];
        let v = Variant { compute_units: cus, local_buffer: buffer, pipeline };
        let (mut a, mut b) = (a, b);
        if sorted {
            a.sort();
            b.sort();
        }
        if ns.load_program(slot, name, v, 1 << 20).is_err() {
            return Ok(());
        }
        if activate {
            ns.activate(slot).unwrap();
        }
        let (ab, bb) = (kernel::to_bytes(&a), kernel::to_bytes(&b));
        ns.write(0, &ab).unwrap();
        ns.write(1 << 20, &bb).unwrap();
        let all = [(0, ab.len() as u64), (1 << 20, bb.len() as u64), (2 << 20, 1 << 20)];
        if ns.set_ranges(0, &all[..ranges.min(3)]).is_ok() {
            if let Ok(x) = ns.execute(slot, 0, value) {
                proptest::prop_assert!(x.timing.cycles.is_finite() && x.timing.cycles >= 0.0);
            }
        }
    }
}
