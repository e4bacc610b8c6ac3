//! Controller compute and power: analytic cases, conservation, monotonicity,
//! and the seed 000 / seed 004 validation scenarios.

mod common;
use ssdlab_core::config::{Device, DeviceFile};
use ssdlab_core::workload::fio;
use ssdlab_core::{simulate_quiet, Precondition, Report, RunSpec};

/// One channel, one SLC die, Gen3 x4, zero host/link latency parts except the
/// link itself; one core running every stage with `cycles` per fetch at `clock`.
fn device(clock: &str, fetch_cycles: u64, power: bool) -> Device {
    resolve(&device_text(clock, fetch_cycles, power))
}

fn resolve(text: &str) -> Device {
    common::device(text, "compute")
}

/// The same drive with the fetch stage on a core of its own: with one
/// submission queue the drive books each fetch when the doorbell is rung
/// instead of when it is seen (one event fewer), which must not change the
/// compute timing.
fn device_own_fetch_core(clock: &str, fetch_cycles: u64) -> Device {
    device_own_fetch_core_power(clock, fetch_cycles, false)
}

fn device_own_fetch_core_power(clock: &str, fetch_cycles: u64, power: bool) -> Device {
    let text = device_text(clock, fetch_cycles, power);
    let shared =
        r#"stages = ["fetch", "parse", "cache_lookup", "translate", "issue", "complete", "ftl"]"#;
    assert!(text.contains(shared));
    let split = r#"stages = ["parse", "cache_lookup", "translate", "issue", "complete", "ftl"]
[[controller.cores]]
spec = "test"
stages = ["fetch"]"#;
    resolve(&text.replace(shared, split))
}

/// The one-core 100 MHz drive with `cycles` per operation of `stage`
/// (a critical-path stage other than fetch, or background work).
fn device_with_cost(stage: &str, cycles: u64) -> Device {
    resolve(&device_text("100MHz", 0, false).replace(
        "[controller.costs]\n",
        &format!("[controller.costs]\n{stage} = {{ cycles = {cycles}, mem_accesses = 0 }}\n"),
    ))
}

fn device_text(clock: &str, fetch_cycles: u64, power: bool) -> String {
    let power = if power {
        r#"
[power]
dram_background = "100mW"
dram_energy_per_byte = "10pJ"
nand_read_energy = "2uJ"
nand_program_energy = "10uJ"
nand_erase_energy = "50uJ"
nand_bus_energy_per_byte = "20pJ"
nand_idle_power = "1mW"
pcie_active_power = "500mW"
pcie_idle_power = "200mW"
other_power = "300mW"
budget_cores = "10mW"
window = "100us"
"#
    } else {
        ""
    };
    format!(
        r#"
name = "compute"
[pcie]
generation = 3
lanes = 4
latency = "0ns"
[cache]
write_buffer = "256KiB"
[ftl]
over_provisioning = "25%"
gc_threshold = 3
gc_hard_threshold = 2
[nand]
channels = 1
chips_per_channel = 4
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 64
pages_per_block = 64
page_size = "4KiB"
cell = "slc"
t_read = ["25us"]
t_prog = ["200us"]
t_erase = "2ms"
bus_bandwidth = "400MB/s"
[controller]
[controller.core_specs.test]
clock = "{clock}"
memory_latency = "100ns"
active_power = "20mW"
idle_power = "5mW"
[[controller.cores]]
spec = "test"
stages = ["fetch", "parse", "cache_lookup", "translate", "issue", "complete", "ftl"]
[controller.costs]
fetch = {{ cycles = {fetch_cycles}, mem_accesses = 0 }}
{power}
"#
    )
}

fn run(dev: Device, job: &str) -> Report {
    let w = fio::parse_str(job, "t.fio").unwrap();
    let mut spec = RunSpec::new(dev, w, "t");
    spec.precondition = Precondition::Fill;
    simulate_quiet(&spec).unwrap()
}

const QD1: &str = "[r]\nrw=randread\nbs=4k\niodepth=1\nnumber_ios=300\n";

#[test]
fn one_core_one_stage_adds_cycles_over_clock_at_qd1() {
    let base = run(device("100MHz", 0, false), QD1);
    let with = run(device("100MHz", 5000, false), QD1);
    // 5000 cycles at 100 MHz = 50 us, on the critical path once per command.
    assert_eq!(
        with.read.lat_ns.min - base.read.lat_ns.min,
        50_000,
        "{} vs {}",
        with.read.lat_ns.min,
        base.read.lat_ns.min
    );
    assert_eq!(with.read.lat_ns.max - base.read.lat_ns.max, 50_000);
}

#[test]
fn a_saturated_core_caps_iops_at_clock_over_cycles() {
    // 20000 cycles at 100 MHz = 200 us per command: at most 5,000 IOPS, far below the NAND.
    let r = run(
        device("100MHz", 20_000, false),
        "[r]\nrw=randread\nbs=4k\niodepth=32\nnumber_ios=3000\n",
    );
    let cap = 100e6 / 20_000.0;
    assert!(
        (r.read.iops - cap).abs() / cap < 0.01,
        "{} vs {cap}",
        r.read.iops
    );
    assert!(
        r.utilisation.cores.values().all(|&u| u > 0.99),
        "{:?}",
        r.utilisation.cores
    );
}

#[test]
fn a_fetch_core_of_its_own_times_like_the_shared_core_at_qd1_and_caps_iops() {
    // QD1: nothing queues, so the fetch stage adds exactly its 50 us whether
    // its core is shared or its own.
    let base = run(device_own_fetch_core("100MHz", 0), QD1);
    let own = run(device_own_fetch_core("100MHz", 5000), QD1);
    let shared = run(device("100MHz", 5000, false), QD1);
    assert_eq!(own.read.lat_ns.min - base.read.lat_ns.min, 50_000);
    assert_eq!(own.read.lat_ns.max - base.read.lat_ns.max, 50_000);
    assert_eq!(own.read.lat_ns.min, shared.read.lat_ns.min);
    assert_eq!(own.read.lat_ns.max, shared.read.lat_ns.max);
    // ... with one event fewer per command (no doorbell event).
    assert!(
        own.events + 300 <= shared.events,
        "{} vs {}",
        own.events,
        shared.events
    );
    // QD32: the fetch core alone is the bottleneck at clock / cycles.
    let r = run(
        device_own_fetch_core("100MHz", 20_000),
        "[r]\nrw=randread\nbs=4k\niodepth=32\nnumber_ios=3000\n",
    );
    let cap = 100e6 / 20_000.0;
    assert!(
        (r.read.iops - cap).abs() / cap < 0.01,
        "{} vs {cap}",
        r.read.iops
    );
    let busiest = r.utilisation.cores.values().cloned().fold(0.0, f64::max);
    assert!(busiest > 0.99, "{:?}", r.utilisation.cores);
}

#[test]
fn blocking_host_dma_adds_the_transfer_to_the_core_time() {
    // One core runs every stage: 20000 fetch cycles at 100 MHz = 200 us per
    // command. With async DMA it caps IOPS at 5,000; when the firmware
    // spins on each host transfer (host_dma = "blocking"), the core also
    // spends the 16 KiB transfer's own link time per command.
    let job = "[r]\nrw=randread\nbs=16k\niodepth=32\nnumber_ios=2000\n";
    let blocking = |clock: &str, cycles: u64| {
        let text = device_text(clock, cycles, false);
        let text = text.replace("[controller]\n", "[controller]\nhost_dma = \"blocking\"\n");
        assert!(text.contains("host_dma"));
        resolve(&text)
    };
    let dev = blocking("100MHz", 20_000);
    let span = ssdlab_core::pcie::Link::new(&dev.pcie).device_write_time(16384);
    assert!(span > ssdlab_core::units::Time::us(4), "{span:?}");
    let a = run(device("100MHz", 20_000, false), job);
    let b = run(dev, job);
    let async_cap = 100e6 / 20_000.0;
    let blocking_cap = 1.0 / (200e-6 + span.as_secs_f64());
    assert!(
        (a.read.iops - async_cap).abs() / async_cap < 0.01,
        "{}",
        a.read.iops
    );
    assert!(
        (b.read.iops - blocking_cap).abs() / blocking_cap < 0.005,
        "{} vs {blocking_cap}",
        b.read.iops
    );
    // QD1: the spin overlaps the transfer the command waits for anyway.
    let q1a = run(device("100MHz", 5_000, false), QD1);
    let q1b = run(blocking("100MHz", 5_000), QD1);
    assert_eq!(q1a.read.lat_ns.min, q1b.read.lat_ns.min);
    assert_eq!(q1a.read.lat_ns.max, q1b.read.lat_ns.max);
}

#[test]
fn core_utilisation_counts_the_measured_window_only() {
    // QD1, 20 us of core time per command: the core's utilisation is the
    // same whether or not the first 20 ms are a ramp left out of the report.
    let job = "[r]\nrw=randread\nbs=4k\niodepth=1\nnumber_ios=2000\n";
    let plain = run(device("100MHz", 2_000, false), job);
    let ramped = run(
        device("100MHz", 2_000, false),
        &format!("{job}ramp_time=20ms\n"),
    );
    let u = |r: &Report| *r.utilisation.cores.values().next().unwrap();
    assert!(u(&plain) > 0.1 && u(&plain) < 0.9, "{}", u(&plain));
    assert!(
        (u(&plain) - u(&ramped)).abs() < 0.01,
        "{} vs {}",
        u(&plain),
        u(&ramped)
    );
    // The fixed-time stage skeleton is not in use with a compute model.
    assert!(plain.utilisation.firmware.is_empty());
}

#[test]
fn a_bad_host_dma_mode_names_its_key() {
    let text = device_text("100MHz", 0, false)
        .replace("[controller]\n", "[controller]\nhost_dma = \"sync\"\n");
    let err = DeviceFile::from_toml_str(&text, "compute")
        .unwrap()
        .resolve("compute")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("controller.host_dma") && err.contains("\"blocking\""),
        "{err}"
    );
}

fn resolve_err(text: &str) -> String {
    match DeviceFile::from_toml_str(text, "compute") {
        Err(e) => e.to_string(),
        Ok(f) => f.resolve("compute").unwrap_err().to_string(),
    }
}

#[test]
fn bad_controller_and_power_values_name_their_keys() {
    let base = device_text("100MHz", 0, false);
    // Idle power above active power.
    let err = resolve_err(&base.replace("idle_power = \"5mW\"", "idle_power = \"50mW\""));
    assert!(
        err.contains("controller.core_specs.test.idle_power") && err.contains("above active"),
        "{err}"
    );
    // ... but an unparsable value is reported once, not compared.
    let err = resolve_err(&base.replace("active_power = \"20mW\"", "active_power = \"lots\""));
    assert!(
        err.contains("controller.core_specs.test.active_power") && !err.contains("above active"),
        "{err}"
    );
    // The same rule for the PCIe link.
    let err = resolve_err(
        &device_text("100MHz", 0, true)
            .replace("pcie_idle_power = \"200mW\"", "pcie_idle_power = \"9W\""),
    );
    assert!(
        err.contains("power.pcie_idle_power") && err.contains("above active"),
        "{err}"
    );
    // An accelerator for an unknown stage still has its other fields checked.
    let err = resolve_err(&format!(
        "{base}\n[[controller.accelerators]]\nstage = \"dedupe\"\nlatency = \"soon\"\nthroughput = \"1Mop/s\"\nactive_power = \"1mW\"\nidle_power = \"1mW\"\n"
    ));
    assert!(
        err.contains("controller.accelerators[0].stage")
            && err.contains("controller.accelerators[0].latency"),
        "{err}"
    );
    // A misspelt field inside a cost names the stage.
    let err = resolve_err(&base.replace(
        "fetch = { cycles = 0, mem_accesses = 0 }",
        "fetch = { cycle = 0, mem_accesses = 0 }",
    ));
    assert!(err.contains("controller.costs.fetch.cycle"), "{err}");
}

#[test]
fn a_core_budget_without_cores_is_left_out() {
    let text = device_text("100MHz", 0, true);
    let (head, rest) = text.split_once("[controller]\n").unwrap();
    let power = &rest[rest.find("[power]").unwrap()..];
    let r = run(resolve(&format!("{head}{power}")), QD1);
    let p = r.power.as_ref().unwrap();
    assert!(!p.budgets.contains_key("cores"), "{:?}", p.budgets);
    assert!(p.budgets.contains_key("total") || p.budgets.is_empty());
    let with_cores = run(device("100MHz", 0, true), QD1);
    assert!(with_cores
        .power
        .as_ref()
        .unwrap()
        .budgets
        .contains_key("cores"));
}

#[test]
fn a_faster_clock_never_lowers_iops() {
    let mut last = 0.0;
    for clock in ["50MHz", "100MHz", "200MHz", "400MHz", "1GHz"] {
        let r = run(
            device(clock, 8_000, false),
            "[r]\nrw=randread\nbs=4k\niodepth=16\nnumber_ios=4000\n",
        );
        assert!(
            r.read.iops >= last * 0.999,
            "{clock}: {} < {last}",
            r.read.iops
        );
        last = r.read.iops;
    }
}

#[test]
fn component_energies_add_up_to_the_total() {
    let r = run(
        device("100MHz", 2_000, true),
        "[m]\nrw=randrw\nrwmixread=50\nbs=4k\niodepth=8\nnumber_ios=5000\n",
    );
    let p = r.power.as_ref().unwrap();
    let sum: f64 = p.components.values().map(|c| c.energy_j).sum();
    let total = r.energy_j.unwrap();
    assert!(
        (sum - total).abs() <= 1e-9 * total.max(1.0),
        "{sum} vs {total}"
    );
    assert!(p.peak_w >= p.avg_w);
    // Per-component peaks over the same 100 us windows: a constant draw
    // peaks at itself, one busy 20 mW core cannot peak above 20 mW, and a
    // core that is not always busy peaks above its average.
    assert!(p.series.len() > 10, "{} windows", p.series.len());
    let other = &p.components["other"];
    assert!((other.peak_w - 0.300).abs() < 1e-9, "{}", other.peak_w);
    let cores = &p.components["cores"];
    assert!(cores.peak_w <= 0.020 + 1e-9, "{}", cores.peak_w);
    assert!(
        cores.peak_w > cores.avg_w,
        "{} vs {}",
        cores.peak_w,
        cores.avg_w
    );
    assert!(
        !p.budget_ok,
        "a 10 mW core budget cannot hold a busy 20 mW core"
    );
    assert!((r.energy_per_io_j.unwrap() - total / 5000.0).abs() < 1e-12);
}

#[test]
fn nand_energy_counts_every_flash_operation_including_gc() {
    // Random overwrites of a full drive: every flash read is a GC read. One
    // plane, 4 KiB pages, SLC: a read or program is one plane-page and 4 KiB
    // on the bus, an erase one plane-block.
    let r = run(
        device("1GHz", 0, true),
        "[w]\nrw=randwrite\nbs=4k\niodepth=8\nnumber_ios=20000\n",
    );
    assert!(r.flash.reads > 1000, "GC must run: {:?}", r.flash);
    let p = r.power.as_ref().unwrap();
    let secs = r.sim_time_ns * 1e-9;
    let ops = r.flash.reads as f64 * 2e-6
        + r.flash.programs as f64 * 10e-6
        + r.flash.erases as f64 * 50e-6
        + (r.flash.reads + r.flash.programs) as f64 * 4096.0 * 20e-12;
    let expect = 4.0 * 1e-3 * secs + ops;
    let got = p.components["nand"].energy_j;
    assert!(
        (got - expect).abs() / expect < 0.01,
        "{got} J vs {expect} J ({:?})",
        r.flash
    );
}

#[test]
fn opening_an_active_block_costs_block_alloc_on_the_ftl_core() {
    // 64 one-page programs fill a block: every 64th program opens a new
    // active block and costs `block_alloc` (20000 cycles at 100 MHz = 200 us).
    let job = "[w]\nrw=randwrite\nbs=4k\niodepth=8\nnumber_ios=20000\n";
    let with = |cycles: u64| run(device_with_cost("block_alloc", cycles), job);
    let busy = |r: &Report| r.utilisation.cores.values().next().unwrap() * r.sim_time_ns * 1e-9;
    let base = with(0);
    let charged = with(20_000);
    assert_eq!(busy(&base), 0.0);
    let expect = charged.flash.programs as f64 / 64.0 * 200e-6;
    let got = busy(&charged);
    assert!(
        (got - expect).abs() / expect < 0.05,
        "{got} s vs {expect} s"
    );
}

#[test]
fn work_booked_ahead_is_charged_when_it_runs() {
    // Bursts of 64 commands after 2 ms of think time: each burst books
    // 64 x 20 us of fetch work at once on the fetch core. Charged when
    // booked, one 100 us window would show the 20 mW core at 12 times its
    // active power; charged when it runs, no window exceeds it.
    let r = run(
        device_own_fetch_core_power("100MHz", 2_000, true),
        "[b]\nrw=randread\nbs=4k\niodepth=64\nthinktime=2ms\nthinktime_blocks=64\nnumber_ios=2560\n",
    );
    let p = r.power.as_ref().unwrap();
    // Two 20 mW cores (fetch, and the rest at zero cost): at most one busy.
    let cores = &p.components["cores"];
    assert!(cores.peak_w <= 0.020 + 0.005 + 1e-9, "{} W", cores.peak_w);
    assert!(
        cores.peak_w > 0.020,
        "the fetch core is saturated during a burst: {} W",
        cores.peak_w
    );
}

#[test]
fn the_issue_stage_is_charged_per_flash_command() {
    // issue = 10000 cycles at 100 MHz = 100 us per operation, every other
    // stage free. A read's unit is a flash read (+100 us on its latency); a
    // trim issues no flash command; a write is issued with its program unit.
    let with = |issue: u64, job: &str| run(device_with_cost("issue", issue), job);
    let reads = "[r]\nrw=randread\nbs=4k\niodepth=1\nnumber_ios=200\n";
    assert_eq!(
        with(10_000, reads).read.lat_ns.min - with(0, reads).read.lat_ns.min,
        100_000
    );
    let trims = "[t]\nrw=randtrim\nbs=1m\niodepth=1\nnumber_ios=20\n";
    let (a, b) = (with(0, trims), with(10_000, trims));
    assert_eq!(
        (a.trim.lat_ns.min, a.trim.lat_ns.max),
        (b.trim.lat_ns.min, b.trim.lat_ns.max)
    );
    let writes = "[w]\nrw=randwrite\nbs=4k\niodepth=4\nnumber_ios=3000\n";
    let w = with(10_000, writes);
    let busy = w.utilisation.cores.values().next().unwrap() * w.sim_time_ns * 1e-9;
    let expect = (w.flash.programs + w.flash.reads + w.flash.erases) as f64 * 100e-6;
    assert!(
        (busy - expect).abs() / expect < 0.02,
        "{busy} s vs {expect} s"
    );
}

#[test]
fn no_window_draws_more_than_the_cores_can() {
    // Parse (15 us) and issue (5 us) on cores of their own: reads book
    // their parse and issue ahead at fetch, while programs, GC reads and
    // erases book their issue when they happen, into the gaps left ahead.
    // In 5 us windows the cores may never draw more than two busy cores
    // (20 mW) plus two idle ones (5 mW).
    let text = device_text("100MHz", 0, true)
        .replace(
            r#"stages = ["fetch", "parse", "cache_lookup", "translate", "issue", "complete", "ftl"]"#,
            r#"stages = ["fetch"]
[[controller.cores]]
spec = "test"
stages = ["parse", "cache_lookup", "translate"]
[[controller.cores]]
spec = "test"
stages = ["issue"]
[[controller.cores]]
spec = "test"
stages = ["complete", "ftl"]"#,
        )
        .replace(
            "fetch = { cycles = 0, mem_accesses = 0 }",
            "parse = { cycles = 1500, mem_accesses = 0 }\nissue = { cycles = 500, mem_accesses = 0 }",
        )
        .replace("window = \"100us\"", "window = \"5us\"");
    assert!(text.contains("window = \"5us\"") && text.contains("cycles = 500"));
    let r = run(
        resolve(&text),
        "[m]\nrw=randrw\nrwmixread=70\nbs=4k\niodepth=32\nnumber_ios=20000\n",
    );
    let p = r.power.as_ref().unwrap();
    let max = 2.0 * 0.020 + 2.0 * 0.005;
    let cores = &p.components["cores"];
    assert!(cores.peak_w <= max + 1e-9, "{} W > {max} W", cores.peak_w);
    // ... and the energy is all still there over the run.
    let busy = r.utilisation.cores.values().sum::<f64>() * r.sim_time_ns * 1e-9;
    let expect = 4.0 * 0.005 * r.sim_time_ns * 1e-9 + 0.015 * busy;
    assert!(
        (cores.energy_j - expect).abs() / expect < 0.01,
        "{} J vs {expect} J",
        cores.energy_j
    );
}

#[test]
fn program_energy_is_spread_over_tprog() {
    // Sequential writes on a fresh drive: only programs (10 uJ over 200 us
    // each, 50 mW per die). Charged whole at completion, a 20 us window in
    // which a die finishes a program would show 500 mW for it; spread over
    // tPROG no window exceeds 4 x 50 mW plus idle and bus power.
    let w = fio::parse_str(
        "[w]\nrw=write\nbs=4k\niodepth=8\nnumber_ios=8000\n",
        "t.fio",
    )
    .unwrap();
    let dev =
        resolve(&device_text("1GHz", 0, true).replace("window = \"100us\"", "window = \"20us\""));
    let mut spec = RunSpec::new(dev, w, "t");
    spec.precondition = Precondition::Fresh;
    let r = simulate_quiet(&spec).unwrap();
    assert!(
        r.flash.programs > 1000 && r.flash.reads == 0,
        "{:?}",
        r.flash
    );
    let nand = &r.power.as_ref().unwrap().components["nand"];
    let bus = 4.0 * 4096.0 * 20e-12 / 20e-6;
    let max = 4.0 * 0.050 + 4.0 * 0.001 + bus;
    assert!(nand.peak_w <= max * 1.001, "{} W > {max} W", nand.peak_w);
    assert!(nand.peak_w > 0.5 * max, "{} W", nand.peak_w);
}

#[test]
fn an_idle_drive_draws_idle_power_only() {
    use ssdlab_core::units::Time;
    use ssdlab_core::System;
    let dev = device("100MHz", 2_000, true);
    let w = fio::parse_str("[r]\nrw=read\nbs=4k\niodepth=1\nnumber_ios=1\n", "t").unwrap();
    let d = System::new(dev, &w, "t", 1, Precondition::Fresh).unwrap();
    // Nothing has run: energy over 1 s is the sum of idle powers.
    let e = d.energy_at(Time::s(1));
    let idle = 0.005 /* core */ + 0.100 /* dram */ + 4.0 * 0.001 /* dies */ + 0.200 /* pcie */ + 0.300 /* other */;
    assert!((e[7] - idle).abs() < 1e-9, "{} vs {idle}", e[7]);
}

/// Seed 003 findings the FPGA model does not reproduce without fitting a
/// constant to them (docs/seed003.md says why for each).
const SEED003_GAPS: [&str; 10] = [
    "vadd: a 1 MiB buffer is slower",
    "vadd: best multi-CU",
    "vadd: 90 % of the best by 5 CUs",
    "merge: still gaining from 5 to 15 CUs",
    "merge: all optimisations",
    "FPGA beats a 4.7 GHz core",
    "average: FPGA vs a 0.8 GHz core",
    "merge: a 0.8 GHz core vs FPGA",
    "merge: a 4.7 GHz core vs FPGA",
    "P2P flash -> FPGA",
];

#[test]
fn seed_validation_scenarios_hold_their_tolerances() {
    let checks = ssdlab_core::validate::run_all(Some("seed00"), &mut |_| {}).unwrap();
    assert!(checks.len() >= 38, "{}", checks.len());
    // Out of tolerance today (see docs/validation.md): the EISC 128 KiB
    // predictions (+15.4 % / +15.8 % against a 15 % target) and the size of
    // controller 2's IOPS cut (our PM9A3-class drive is NAND-bound well below
    // the 100 MHz cores' limit). Everything else must stay within tolerance.
    let known = ["seed000-eisc-seqread-128k", "seed000-eisc-seqwrite-128k"];
    for c in &checks {
        // Seed 001: with 4 KiB random reads, ONFI MLC (one 8 KiB page read,
        // 30 us on the bus) beats conventional SLC (two 2 KiB pages, 100 us)
        // in this model; see docs/validation.md.
        // Seed 002's four drives at once: the model is capped by the x8
        // uplink (read) and the drives' SLC rate (write), above the seed's
        // 4 / 3.4 GB/s, which the host side sets (host CPU and page cache
        // are not modelled yet; docs/seed002.md).
        // Seed 002 through the page cache: the A53 host's CPU figures are
        // assumptions; the model reads 26 % slower and writes 40 % faster
        // than the seed (docs/seed002.md).
        let known_gap = known.contains(&c.scenario.as_str())
            || c.scenario == "seed002-4drives"
            || c.scenario.starts_with("seed002-value-dd-pagecache")
            || c.metric.starts_with("ctrl 2 vs 1: IOPS")
            || c.metric.contains("SLC-conventional beats MLC-ONFI")
            || (c.scenario == "seed003-smartssd"
                && SEED003_GAPS.iter().any(|g| c.metric.starts_with(g)));
        if !known_gap {
            assert!(
                c.pass,
                "{} / {}: simulated {} vs reference {} ({:+.1}%)",
                c.scenario, c.metric, c.simulated, c.reference, c.error_pct
            );
        }
    }
}
