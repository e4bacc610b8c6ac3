//! Computational storage (seed 003): kernels that run inside the drive, on
//! an FPGA behind the drive's own PCIe switch, on the data the drive holds.
//!
//! A computational storage drive is a device with an `[fpga]` section. Its
//! system is the host's root port, the switch inside the drive
//! (`[internal_switch]`), the SSD and the FPGA on two of its ports
//! ([`system_of`]), so flash-to-FPGA transfers go peer to peer through the
//! switch and never cross the host link.
//!
//! [`run`] is seed 003's flow, timed in one simulation of that system and
//! computed on real bytes:
//! 1. the host writes the kernel's input arrays to the drive (set-up);
//! 2. load and activate the program;
//! 3. P2P in: the host asks the SSD to read the inputs into FPGA memory
//!    (NVMe reads whose data goes to the FPGA);
//! 4. launch and compute ([`timing`]);
//! 5. write back: NVMe writes whose data the SSD fetches from FPGA memory.
//!
//! The host-CPU baseline runs in the same simulation after the FPGA flow:
//! the host reads the inputs over NVMe, computes on one core
//! ([`host_cpu`]), and writes the result back. The kernel itself computes
//! through the compute namespace ([`program`]) on the bytes read back from
//! the drive's data store, and the result the flow returns is what the
//! drive holds afterwards.

pub mod config;
pub mod host_cpu;
pub mod kernel;
pub mod program;
pub mod seed003;
pub mod timing;

use crate::config::Device;
use crate::device::store::StoreSpec;
use crate::device::Precondition;
use crate::system::config::{DriveConfig, EndpointConfig, Parent, SwitchConfig, SystemConfig};
use crate::system::System;
use crate::units::Time;
use crate::workload::{BufferFill, JobSpec, RwPattern, Workload};
use config::FpgaConfig;
use host_cpu::HostCpu;
use kernel::{KernelSpec, Output, Work};
use rand::{Rng, SeedableRng};
use serde::{Serialize, Serializer};
use std::sync::Arc;
use timing::{Timing, Variant};

/// The FPGA's name on the fabric.
pub const FPGA: &str = "fpga0";
/// Idle time between writing the inputs and the flow, so the flow reads
/// them from flash, not from the write buffer.
pub const SETTLE: Time = Time::ms(100);
/// Report schema.
pub const SCHEMA: &str = "ssdlab.csd.v1";

/// Serialize a [`Time`] as seconds.
pub(crate) fn secs<S: Serializer>(t: &Time, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(t.as_secs_f64())
}

/// The system of a computational storage drive: root port → internal
/// switch (uplink: the drive's own `[pcie]` link) → the SSD and the FPGA.
pub fn system_of(device: Device) -> SystemConfig {
    let Some(f) = device.fpga.clone() else {
        return SystemConfig::single(device);
    };
    SystemConfig {
        name: device.name.clone(),
        description: device.description.clone(),
        host: device.host.clone(),
        root_generation: device.pcie.generation,
        root_lanes: device.pcie.lanes,
        root_ports: 1,
        root_memory_bandwidth: None,
        switches: vec![SwitchConfig {
            name: "csd-switch".into(),
            upstream: Parent::Root,
            uplink: device.pcie.clone(),
            downstream_generation: device.pcie.generation.max(f.link.generation),
            downstream_lanes: device.pcie.lanes.max(f.link.lanes),
            ports: 2,
            latency: f.switch.latency,
            power_w: f.switch.power_w,
            ingress_buffer: f.switch.ingress_buffer,
        }],
        drives: vec![DriveConfig {
            name: "nvme0".into(),
            link: device.pcie.clone(),
            device,
            attach: Parent::Switch(0),
        }],
        endpoints: vec![EndpointConfig {
            name: FPGA.into(),
            attach: Parent::Switch(0),
            link: f.link.clone(),
        }],
    }
}

/// One computational-storage run: what to compute, on what, built how.
#[derive(Debug, Clone)]
pub struct CsdSpec {
    /// The drive (must have an `[fpga]`).
    pub device: Device,
    /// Kernel name (`count`, `average`, `vadd`, `merge`).
    pub kernel: String,
    /// Elements per generated input array (ignored with `inputs`).
    pub elements: u64,
    /// Input arrays to use instead of generated ones.
    pub inputs: Option<Vec<Vec<i32>>>,
    /// Count's value.
    pub value: i32,
    /// Compute units, local buffer, pipelining.
    pub variant: Variant,
    /// Seed (generated inputs, the drive).
    pub seed: u64,
    /// Host core clock for the baseline, Hz.
    pub host_clock_hz: f64,
    /// Size of each NVMe transfer of the flow (the block layer's split of
    /// one large read or write), bytes.
    pub io_block: u64,
    /// Transfers in flight.
    pub io_depth: u32,
}

impl CsdSpec {
    /// Defaults: one CU, no local buffer, no pipeline pragma, seed 42, host
    /// at the i7-8700K's 3.7 GHz base clock, 128 KiB transfers 32 deep.
    pub fn new(device: Device, kernel: &str, elements: u64) -> CsdSpec {
        CsdSpec {
            device,
            kernel: kernel.into(),
            elements,
            inputs: None,
            value: 7,
            variant: Variant::default(),
            seed: crate::DEFAULT_SEED,
            host_clock_hz: 3.7e9,
            io_block: 128 << 10,
            io_depth: 32,
        }
    }
}

/// Where the arrays sit on the drive (and at the same offsets in FPGA memory).
#[derive(Debug, Clone, Serialize)]
pub struct Layout {
    /// Each input: (byte offset, bytes).
    pub inputs: Vec<(u64, u64)>,
    /// The output: (byte offset, bytes written back).
    pub output: (u64, u64),
    /// Bytes the flow moves in (padded to whole transfers).
    pub in_bytes: u64,
    /// Bytes it writes back (padded).
    pub out_bytes: u64,
}

/// The FPGA flow's phases (seconds).
#[derive(Debug, Clone, Serialize)]
pub struct FpgaFlow {
    /// Load the program (once; not in the total).
    pub program_load_s: f64,
    /// The host writing the inputs to the drive (set-up; not in the total).
    pub input_write_s: f64,
    /// Flash to FPGA memory, peer to peer.
    pub p2p_in_s: f64,
    /// Launching the compute units.
    pub launch_s: f64,
    /// The kernel's run.
    pub compute_s: f64,
    /// FPGA memory to flash.
    pub write_back_s: f64,
    /// P2P in + launch + compute + write back.
    pub total_s: f64,
}

/// The host baseline's phases (seconds).
#[derive(Debug, Clone, Serialize)]
pub struct HostFlow {
    /// Core clock, GHz.
    pub clock_ghz: f64,
    /// Reading the inputs over NVMe into host memory.
    pub read_s: f64,
    /// The kernel on one core.
    pub compute_s: f64,
    /// Writing the result back over NVMe.
    pub write_back_s: f64,
    /// Read + compute + write back.
    pub total_s: f64,
}

/// Energy of one kernel run, joules.
#[derive(Debug, Clone, Serialize)]
pub struct Energy {
    /// FPGA static and DRAM background power over the FPGA flow.
    pub fpga_static_j: f64,
    /// Active compute units over the kernel's run.
    pub fpga_compute_j: f64,
    /// FPGA DRAM traffic (P2P in, the kernel, write back).
    pub fpga_dram_j: f64,
    /// The three.
    pub fpga_j: f64,
    /// The host core over its compute phase.
    pub host_cpu_j: f64,
}

/// Bytes one link carried over the whole run.
#[derive(Debug, Clone, Serialize)]
pub struct LinkBytes {
    /// Link name (`csd-switch-up` is the host link).
    pub name: String,
    /// Towards the root (or the switch).
    pub up_bytes: u64,
    /// Away from it.
    pub down_bytes: u64,
}

/// A computational-storage run's report.
#[derive(Debug, Clone, Serialize)]
pub struct CsdReport {
    /// `ssdlab.csd.v1`.
    pub schema: &'static str,
    /// Device name.
    pub device: String,
    /// FPGA part and clock.
    pub fpga: String,
    /// Kernel.
    pub kernel: &'static KernelSpec,
    /// Elements of each input.
    pub elements: Vec<u64>,
    /// Count's value.
    pub value: Option<i32>,
    /// Compute units, local buffer, pipelining.
    pub variant: Variant,
    /// Seed.
    pub seed: u64,
    /// The result, as the drive holds it after the flow.
    pub result: Output,
    /// What the kernel's loop did.
    pub work: Work,
    /// Arrays on the drive and in FPGA memory.
    pub layout: Layout,
    /// The FPGA flow.
    pub fpga_flow: FpgaFlow,
    /// The kernel's timing on the FPGA.
    pub kernel_timing: Timing,
    /// The host baseline.
    pub host_flow: HostFlow,
    /// Host total / FPGA total (above 1: the FPGA is faster).
    pub speedup: f64,
    /// Host compute / FPGA launch + compute.
    pub compute_speedup: f64,
    /// P2P in throughput, bytes/s.
    pub p2p_bandwidth: f64,
    /// Bytes per link over the whole simulation (set-up, FPGA flow, host flow).
    pub links: Vec<LinkBytes>,
    /// Energy per kernel run.
    pub energy: Energy,
    /// Wall-clock seconds of the run.
    pub wall_time_s: f64,
}

/// A run's report and, for an array-writing kernel, the output array.
#[derive(Debug, Clone)]
pub struct CsdRun {
    /// The report.
    pub report: CsdReport,
    /// The output array as read back from the drive.
    pub output: Option<Vec<i32>>,
}

/// Generated inputs for `k`: `n` elements each, from `seed`. Count and
/// Average: uniform in [0, 1000); Vector Addition: uniform in
/// [-2^30, 2^30); Merge: sorted, uniform in [0, 2n) (so with duplicates
/// within and across the two).
pub fn generate_inputs(k: &KernelSpec, n: u64, seed: u64) -> Vec<Vec<i32>> {
    let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x6373_6469_6e70_7574);
    (0..k.inputs)
        .map(|_| {
            let mut v: Vec<i32> = match k.op {
                kernel::Operation::Count | kernel::Operation::Average => {
                    (0..n).map(|_| rng.gen_range(0..1000)).collect()
                }
                kernel::Operation::VecAdd => (0..n)
                    .map(|_| rng.gen_range(-(1 << 30)..(1 << 30)))
                    .collect(),
                kernel::Operation::Merge => {
                    let hi = (2 * n).clamp(1, i32::MAX as u64) as i32;
                    (0..n).map(|_| rng.gen_range(0..hi)).collect()
                }
            };
            if k.op == kernel::Operation::Merge {
                v.sort_unstable();
            }
            v
        })
        .collect()
}

fn pad(b: u64, to: u64) -> u64 {
    b.div_ceil(to) * to
}

/// Scalar results as the bytes written back: Count's count (u64), or
/// Average's sum (i64) and element count (u64), little-endian.
fn scalar_bytes(o: &Output) -> Vec<u8> {
    match o {
        Output::Count { count, .. } => count.to_le_bytes().to_vec(),
        Output::Average { sum, n, .. } => {
            let mut b = sum.to_le_bytes().to_vec();
            b.extend_from_slice(&n.to_le_bytes());
            b
        }
        Output::Array { .. } => Vec::new(),
    }
}

fn job(name: &str, read: bool, offset: u64, size: u64, spec: &CsdSpec) -> JobSpec {
    JobSpec {
        name: name.into(),
        rw: RwPattern {
            random: false,
            read_pct: if read { 100 } else { 0 },
        },
        bs: spec.io_block,
        iodepth: spec.io_depth,
        offset,
        size: Some(size),
        stonewall: true,
        ..JobSpec::default()
    }
}

/// Run `spec`'s flow (see the module documentation).
pub fn run(spec: &CsdSpec) -> Result<CsdRun, String> {
    let wall = std::time::Instant::now();
    let dev = &spec.device;
    let fpga: &FpgaConfig = dev.fpga.as_ref().ok_or_else(|| {
        format!(
            "device '{}' has no [fpga] section: it is not a computational storage drive (try smartssd-3.84t)",
            dev.name
        )
    })?;
    let k = kernel::kernel(&spec.kernel)?;
    if !fpga.programs.iter().any(|p| p == k.name) {
        return Err(format!(
            "device '{}' does not offer kernel '{}' (fpga.programs: {})",
            dev.name,
            k.name,
            fpga.programs.join(", ")
        ));
    }
    let cpu = HostCpu::i7_8700k(spec.host_clock_hz);
    cpu.check()?;
    if spec.io_block == 0 || !spec.io_block.is_multiple_of(dev.ftl.mapping_unit.0) {
        return Err(format!(
            "the transfer size ({} B) must be a whole number of the drive's {} mapping units",
            spec.io_block, dev.ftl.mapping_unit
        ));
    }
    let most = dev.nvme.max_queue_depth.saturating_sub(1);
    if spec.io_depth == 0 || spec.io_depth > most {
        return Err(format!(
            "the transfer depth (io_depth, --io-depth) must be 1 to {most} (the drive's queues hold {} entries), got {}",
            dev.nvme.max_queue_depth, spec.io_depth
        ));
    }
    if dev.cache.write_buffer.0 > 0 && spec.io_block > dev.cache.write_buffer.0 {
        return Err(format!(
            "the transfer size (io_block, --io-block: {} B) must fit the drive's {} write buffer",
            spec.io_block, dev.cache.write_buffer
        ));
    }
    // Resources first (compute units, on-chip buffers), before any work.
    timing::kernel_time(fpga, k, &Work::default(), &spec.variant)?;
    // Sizes first: generated inputs that cannot fit are refused before
    // they are made.
    let lens: Vec<u64> = match &spec.inputs {
        Some(v) => v.iter().map(|a| a.len() as u64).collect(),
        None => vec![spec.elements; k.inputs as usize],
    };
    let blk = spec.io_block;
    let in_need: u64 = lens.iter().map(|&n| pad(n * 4, blk)).sum();
    let out_need = if k.array_output {
        match k.op {
            kernel::Operation::Merge => lens.iter().sum::<u64>() * 4,
            _ => lens.first().copied().unwrap_or(0) * 4,
        }
    } else {
        16
    };
    let need = in_need + pad(out_need.max(1), blk);
    if need > fpga.dram.0 {
        return Err(format!(
            "the inputs and output need {need} B of FPGA memory (arrays padded to whole {blk} B transfers); the FPGA has {} B",
            fpga.dram.0
        ));
    }
    let cap = dev.capacity_bytes();
    if need > cap {
        return Err(format!(
            "the inputs and output need {need} B on the drive; it holds {cap} B"
        ));
    }
    let inputs = match &spec.inputs {
        Some(v) => v.clone(),
        None => generate_inputs(k, spec.elements, spec.seed),
    };
    let (output, array, work) = kernel::compute(k, &inputs, spec.value)?;
    // Layout: inputs from byte 0, each padded to whole transfers; the
    // output after them.
    let mut at = 0u64;
    let mut placed = Vec::new();
    let mut in_image = Vec::new();
    for v in &inputs {
        let b = kernel::to_bytes(v);
        placed.push((at, b.len() as u64));
        in_image.resize(at as usize, 0);
        in_image.extend_from_slice(&b);
        at += pad(b.len() as u64, blk);
    }
    let in_bytes = at;
    let out_data = match &array {
        Some(a) => kernel::to_bytes(a),
        None => scalar_bytes(&output),
    };
    // The output range holds the largest output the kernel can write.
    let out_cap = if k.array_output {
        match k.op {
            kernel::Operation::Merge => work.elements_in * 4,
            _ => inputs[0].len() as u64 * 4,
        }
    } else {
        out_data.len() as u64
    };
    let out_off = in_bytes;
    let out_bytes = pad(out_data.len().max(1) as u64, blk);
    let t = timing::kernel_time(fpga, k, &work, &spec.variant)?;
    let host_compute = cpu.kernel_time(k, &work);
    // One simulation: set-up write, the FPGA flow, the host flow.
    let in_image = Arc::new(in_image);
    let out_image = Arc::new(out_data.clone());
    let mut jobs = Vec::new();
    let mut idx = [usize::MAX; 5];
    if in_bytes > 0 {
        let mut j = job("input-write", false, 0, in_bytes, spec);
        j.stonewall = false;
        j.buffer = BufferFill::Image {
            base: 0,
            data: in_image.clone(),
        };
        idx[0] = jobs.len();
        jobs.push(j);
        let mut j = job("p2p-in", true, 0, in_bytes, spec);
        j.peer = Some(FPGA.into());
        // The inputs have been on the drive a while: the flow starts once
        // the write buffer has drained to flash.
        j.startdelay = SETTLE;
        idx[1] = jobs.len();
        jobs.push(j);
    }
    let fpga_compute = t.launch + t.run;
    let mut j = job("write-back", false, out_off, out_bytes, spec);
    j.peer = Some(FPGA.into());
    j.startdelay = fpga_compute;
    j.buffer = BufferFill::Image {
        base: out_off,
        data: out_image.clone(),
    };
    j.stonewall = !jobs.is_empty();
    idx[2] = jobs.len();
    jobs.push(j);
    if in_bytes > 0 {
        idx[3] = jobs.len();
        let mut j = job("host-read", true, 0, in_bytes, spec);
        j.startdelay = SETTLE;
        jobs.push(j);
    }
    let mut j = job("host-write", false, out_off, out_bytes, spec);
    j.startdelay = host_compute;
    j.buffer = BufferFill::Image {
        base: out_off,
        data: out_image.clone(),
    };
    idx[4] = jobs.len();
    jobs.push(j);
    let workload = Workload {
        jobs,
        ignored: Vec::new(),
        trace: None,
        trace_drives: Vec::new(),
    };
    let name = "computational storage flow";
    let mut sys = System::from_config(
        system_of(dev.clone()),
        &workload,
        name,
        spec.seed,
        Precondition::Fresh,
    )
    .map_err(|e| e.to_string())?;
    sys.set_data_store(Some(&StoreSpec::Memory), &workload, name)
        .map_err(|e| e.to_string())?;
    sys.run(&mut |_| {}, &|| false).map_err(|e| e.to_string())?;
    let span = |i: usize| -> Result<(Time, Time), String> {
        if i == usize::MAX {
            return Ok((Time::ZERO, Time::ZERO));
        }
        sys.host
            .job_span(i)
            .ok_or_else(|| format!("phase '{}' did not run to its end", workload.jobs[i].name))
    };
    let dur = |i: usize| -> Result<f64, String> {
        let (a, b) = span(i)?;
        Ok((b - a).as_secs_f64())
    };
    let (wb_start, _) = span(idx[2])?;
    let p2p_end = span(idx[1])?.1;
    // The write-back job starts after its start delay (the kernel).
    let write_back_s = dur(idx[2])?;
    let p2p_in_s = dur(idx[1])?;
    let (hw_start, hw_end) = span(idx[4])?;
    let host_read_s = dur(idx[3])?;
    let host_write_s = (hw_end - hw_start).as_secs_f64();
    debug_assert!(wb_start >= p2p_end);
    // The kernel, through the compute namespace, on the bytes the drive holds.
    let mut ns = program::ComputeNamespace::new(fpga);
    let program_load = ns
        .load_program(0, k.name, spec.variant, 16 << 20)
        .map_err(|e| e.to_string())?;
    ns.activate(0).map_err(|e| e.to_string())?;
    let store = sys.drives[0]
        .store
        .as_mut()
        .ok_or("the flow's data store is missing")?;
    let mut ranges = Vec::new();
    for &(off, len) in &placed {
        let mut b = vec![0u8; len as usize];
        store.read(off, &mut b).map_err(|e| e.0)?;
        ns.write(off, &b).map_err(|e| e.to_string())?;
        ranges.push((off, len));
    }
    if k.array_output {
        ranges.push((out_off, pad(out_cap.max(4), 4)));
    }
    ns.set_ranges(0, &ranges).map_err(|e| e.to_string())?;
    let exec = ns.execute(0, 0, spec.value).map_err(|e| e.to_string())?;
    // What the drive holds at the output after the flow.
    let mut held = vec![0u8; out_data.len()];
    store.read(out_off, &mut held).map_err(|e| e.0)?;
    let fpga_out = match &exec.array {
        Some(a) => kernel::to_bytes(a),
        None => scalar_bytes(&exec.output),
    };
    if held != fpga_out || exec.output != output {
        return Err(format!(
            "internal error: the drive holds a different result than the FPGA computed for kernel '{}'",
            k.name
        ));
    }
    let result_array = exec.array.as_ref().map(|_| kernel::from_bytes(&held));
    let fpga_total = p2p_in_s + fpga_compute.as_secs_f64() + write_back_s;
    let host_total = host_read_s + host_compute.as_secs_f64() + host_write_s;
    // Energy of one run.
    let static_w = fpga.static_power_w + fpga.dram_background_w;
    let fpga_static_j = static_w * fpga_total;
    let fpga_compute_j = fpga.cu_power_w * spec.variant.compute_units as f64 * t.run.as_secs_f64();
    let dram_bytes = in_bytes + t.dram_read + t.dram_written + out_bytes;
    let fpga_dram_j = fpga.dram_energy_per_byte_j * dram_bytes as f64;
    let host_cpu_j = cpu.power_w() * host_compute.as_secs_f64();
    let links = sys
        .fabric
        .links()
        .map(|(info, l)| {
            let (up, down) = l.bytes();
            LinkBytes {
                name: info.name.clone(),
                up_bytes: up,
                down_bytes: down,
            }
        })
        .collect();
    let report = CsdReport {
        schema: SCHEMA,
        device: dev.name.clone(),
        fpga: format!("{} @ {:.0} MHz", fpga.part, fpga.clock_hz / 1e6),
        kernel: k,
        elements: inputs.iter().map(|v| v.len() as u64).collect(),
        value: (k.op == kernel::Operation::Count).then_some(spec.value),
        variant: spec.variant,
        seed: spec.seed,
        result: exec.output.clone(),
        work,
        layout: Layout {
            inputs: placed,
            output: (out_off, out_data.len() as u64),
            in_bytes,
            out_bytes,
        },
        fpga_flow: FpgaFlow {
            program_load_s: program_load.as_secs_f64(),
            input_write_s: dur(idx[0])?,
            p2p_in_s,
            launch_s: t.launch.as_secs_f64(),
            compute_s: t.run.as_secs_f64(),
            write_back_s,
            total_s: fpga_total,
        },
        kernel_timing: t,
        host_flow: HostFlow {
            clock_ghz: spec.host_clock_hz / 1e9,
            read_s: host_read_s,
            compute_s: host_compute.as_secs_f64(),
            write_back_s: host_write_s,
            total_s: host_total,
        },
        speedup: if fpga_total > 0.0 {
            host_total / fpga_total
        } else {
            0.0
        },
        compute_speedup: host_compute.as_secs_f64() / fpga_compute.as_secs_f64().max(1e-15),
        p2p_bandwidth: if p2p_in_s > 0.0 {
            in_bytes as f64 / p2p_in_s
        } else {
            0.0
        },
        links,
        energy: Energy {
            fpga_static_j,
            fpga_compute_j,
            fpga_dram_j,
            fpga_j: fpga_static_j + fpga_compute_j + fpga_dram_j,
            host_cpu_j,
        },
        wall_time_s: wall.elapsed().as_secs_f64(),
    };
    Ok(CsdRun {
        report,
        output: result_array,
    })
}

/// Seconds with a unit that keeps four significant digits.
fn t(s: f64) -> String {
    let (v, u) = if s >= 1.0 {
        (s, "s")
    } else if s >= 1e-3 {
        (s * 1e3, "ms")
    } else if s >= 1e-6 {
        (s * 1e6, "us")
    } else {
        (s * 1e9, "ns")
    };
    format!("{v:.3} {u}")
}

/// The report as text.
pub fn to_text(r: &CsdReport) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let v = &r.variant;
    let elems: Vec<String> = r.elements.iter().map(|n| n.to_string()).collect();
    let _ = writeln!(
        s,
        "ssdlab csd: kernel {} on {} ({}), input(s) of {} elements, {} CU(s), local buffer {}, pipeline {}, seed {}",
        r.kernel.name,
        r.device,
        r.fpga,
        elems.join(" + "),
        v.compute_units,
        v.local_buffer
            .map_or("none".to_string(), |b| crate::units::Bytes(b).to_string()),
        if v.pipeline { "on" } else { "off" },
        r.seed
    );
    let res = match &r.result {
        Output::Count { value, count } => format!("{count} occurrence(s) of {value}"),
        Output::Average { sum, n, mean } => format!("average {mean:.6} (sum {sum} over {n})"),
        Output::Array { len, crc32c } => format!("array of {len} elements, crc32c {crc32c:08x}"),
    };
    let _ = writeln!(s, "result:  {res} (as read back from the drive)");
    let f = &r.fpga_flow;
    let h = &r.host_flow;
    let _ = writeln!(
        s,
        "\n{:<22}{:>14}   {:<26}{:>14}",
        "FPGA flow",
        "",
        format!("host CPU ({:.2} GHz, 1 thread)", h.clock_ghz),
        ""
    );
    let _ = writeln!(
        s,
        "  {:<20}{:>14}   {:<26}{:>14}",
        "P2P flash -> FPGA",
        t(f.p2p_in_s),
        "read over NVMe",
        t(h.read_s)
    );
    let _ = writeln!(s, "  {:<20}{:>14}", "launch", t(f.launch_s));
    let _ = writeln!(
        s,
        "  {:<20}{:>14}   {:<26}{:>14}",
        "compute",
        t(f.compute_s),
        "compute",
        t(h.compute_s)
    );
    let _ = writeln!(
        s,
        "  {:<20}{:>14}   {:<26}{:>14}",
        "write back",
        t(f.write_back_s),
        "write back over NVMe",
        t(h.write_back_s)
    );
    let _ = writeln!(
        s,
        "  {:<20}{:>14}   {:<26}{:>14}",
        "total",
        t(f.total_s),
        "total",
        t(h.total_s)
    );
    let _ = writeln!(
        s,
        "  (once: program load {}; set-up: host writes the inputs {})",
        t(f.program_load_s),
        t(f.input_write_s)
    );
    let _ = writeln!(
        s,
        "\nFPGA vs host: {:.2}x the whole flow, {:.2}x the kernel alone (above 1: the FPGA is faster)",
        r.speedup, r.compute_speedup
    );
    let k = &r.kernel_timing;
    let _ = writeln!(
        s,
        "kernel:  {:.2} cycles/element per CU alone, bound by {}, bank {:.0}% busy, per-CU throughput {:.2} of one CU alone",
        k.cycles_per_element,
        k.bound,
        k.bank_utilisation * 100.0,
        k.per_cu_throughput
    );
    let _ = writeln!(
        s,
        "P2P:     {} in at {:.2} GB/s; links over the run: {}",
        crate::units::Bytes(r.layout.in_bytes),
        r.p2p_bandwidth / 1e9,
        r.links
            .iter()
            .map(|l| format!(
                "{} {}/{}",
                l.name,
                crate::units::Bytes(l.up_bytes),
                crate::units::Bytes(l.down_bytes)
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let e = &r.energy;
    let _ = writeln!(
        s,
        "energy:  FPGA {:.4} J (static {:.4}, CUs {:.4}, DRAM {:.4}); host core {:.4} J",
        e.fpga_j, e.fpga_static_j, e.fpga_compute_j, e.fpga_dram_j, e.host_cpu_j
    );
    s
}
