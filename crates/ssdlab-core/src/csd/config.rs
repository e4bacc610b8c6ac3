//! `[fpga]` and `[internal_switch]`: the accelerator side of a computational
//! storage drive (seed 003's SmartSSD) as its device file describes it.
//!
//! Defaults are the SmartSSD's (seed 003, table 1: Kintex UltraScale+ KU15P
//! at 300 MHz, 4 GB DDR4 in one bank, a PCIe switch inside the drive) and
//! Vitis HLS's documented interface defaults (UG1399); every figure and
//! assumption is listed in docs/devices/smartssd-3.84t.md.

use crate::config::{config_frequency, Collector, PcieConfig};
use crate::units::{parse_energy, parse_power, Bytes, Time};
use serde::{Deserialize, Serialize};

/// `[fpga]` as written.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FpgaFile {
    /// Part name (shown in reports).
    #[serde(default = "d_part")]
    pub part: String,
    /// Kernel clock, e.g. `"300MHz"`.
    #[serde(default = "d_clock")]
    pub clock: String,
    /// FPGA-attached DRAM (global memory), e.g. `"4GiB"`.
    #[serde(default = "d_dram")]
    pub dram: String,
    /// DRAM banks (memory controllers).
    #[serde(default = "one")]
    pub banks: u32,
    /// Width of a bank's AXI data port, bits (one beat per kernel cycle).
    #[serde(default = "d_bank_width")]
    pub bank_width_bits: u32,
    /// Share of a bank's peak a long read burst stream gets (refresh, row changes).
    #[serde(default = "d_read_eff")]
    pub bank_read_efficiency: f64,
    /// Share of a bank's peak a long write burst stream gets.
    #[serde(default = "d_write_eff")]
    pub bank_write_efficiency: f64,
    /// Kernel interfaces (AXI masters) one bank's interconnect accepts; one per compute unit.
    #[serde(default = "d_interfaces")]
    pub interfaces_per_bank: u32,
    /// Bank time lost when consecutive transactions come from different
    /// streams (row precharge + activate), e.g. `"26.7ns"`.
    #[serde(default = "d_row_switch")]
    pub row_switch: String,
    /// Round trip of one read from a kernel to FPGA DRAM and back (AXI
    /// interconnect, memory controller, the DRAM's own access), e.g. `"100ns"`.
    #[serde(default = "d_dram_latency")]
    pub dram_latency: String,
    /// Banks of each DRAM device (DDR4 x16: 2 bank groups x 4 banks).
    #[serde(default = "d_device_banks")]
    pub dram_device_banks: u32,
    /// Latency HLS schedules for one global-memory access, cycles (`m_axi latency`).
    #[serde(default = "d_axi_latency")]
    pub axi_latency_cycles: u32,
    /// Beats per burst (`max_read_burst_length` / `max_write_burst_length`).
    #[serde(default = "d_burst")]
    pub burst_beats: u32,
    /// Width of a kernel's global-memory port, bits (an `int*` argument without widening: 32).
    #[serde(default = "d_port_width")]
    pub port_width_bits: u32,
    /// Read latency of on-chip memory (BRAM/URAM), cycles.
    #[serde(default = "d_local_latency")]
    pub local_latency_cycles: u32,
    /// On-chip memory (BRAM + URAM) available to kernels' local buffers.
    #[serde(default = "d_onchip")]
    pub onchip_memory: String,
    /// Host-side cost of starting a kernel (XRT enqueue to start), e.g. `"15us"`.
    #[serde(default = "d_launch")]
    pub launch_overhead: String,
    /// Loading a program (an xclbin) into the FPGA.
    #[serde(default = "d_load")]
    pub program_load: String,
    /// The program types (kernels) the drive offers.
    #[serde(default = "d_programs")]
    pub programs: Vec<String>,
    /// Largest program image accepted.
    #[serde(default = "d_program_max")]
    pub max_program: String,
    /// The FPGA's link to the internal switch.
    #[serde(default = "d_gen")]
    pub link_generation: u32,
    /// Lanes of that link.
    #[serde(default = "d_lanes")]
    pub link_lanes: u32,
    /// Static power of the FPGA (leakage, clocking, idle shell), e.g. `"3W"`.
    #[serde(default = "d_static")]
    pub static_power: String,
    /// Dynamic power of one active compute unit.
    #[serde(default = "d_cu_power")]
    pub cu_power: String,
    /// FPGA DRAM background power (refresh, PHY).
    #[serde(default = "d_dram_bg")]
    pub dram_background: String,
    /// Energy per byte moved to or from FPGA DRAM.
    #[serde(default = "d_dram_energy")]
    pub dram_energy_per_byte: String,
}

/// `[internal_switch]` as written: the PCIe switch inside the drive that
/// joins the host link, the SSD controller and the FPGA.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchFile {
    /// Port-to-port latency.
    #[serde(default = "d_sw_latency")]
    pub latency: String,
    /// Ingress buffer per port (what its flow-control credits cover).
    #[serde(default = "d_sw_buffer")]
    pub ingress_buffer: String,
    /// Constant power.
    #[serde(default = "d_sw_power")]
    pub power: String,
}

fn d_part() -> String {
    "Xilinx Kintex UltraScale+ KU15P".into()
}
fn d_clock() -> String {
    "300MHz".into()
}
fn d_dram() -> String {
    "4GiB".into()
}
fn one() -> u32 {
    1
}
fn d_bank_width() -> u32 {
    512
}
fn d_read_eff() -> f64 {
    0.875
}
fn d_write_eff() -> f64 {
    0.79
}
fn d_interfaces() -> u32 {
    15
}
fn d_row_switch() -> String {
    "26.7ns".into()
}
fn d_dram_latency() -> String {
    "100ns".into()
}
fn d_device_banks() -> u32 {
    8
}
fn d_axi_latency() -> u32 {
    64
}
fn d_burst() -> u32 {
    16
}
fn d_port_width() -> u32 {
    32
}
fn d_local_latency() -> u32 {
    2
}
fn d_onchip() -> String {
    "8.8MB".into()
}
fn d_launch() -> String {
    "15us".into()
}
fn d_load() -> String {
    "300ms".into()
}
fn d_programs() -> Vec<String> {
    super::kernel::KERNELS
        .iter()
        .map(|k| k.name.to_string())
        .collect()
}
fn d_program_max() -> String {
    "64MiB".into()
}
fn d_gen() -> u32 {
    3
}
fn d_lanes() -> u32 {
    4
}
fn d_static() -> String {
    "3W".into()
}
fn d_cu_power() -> String {
    "0.4W".into()
}
fn d_dram_bg() -> String {
    "0.5W".into()
}
fn d_dram_energy() -> String {
    "40pJ".into()
}
fn d_sw_latency() -> String {
    "150ns".into()
}
fn d_sw_buffer() -> String {
    "6KiB".into()
}
fn d_sw_power() -> String {
    "2W".into()
}

impl Default for SwitchFile {
    fn default() -> Self {
        SwitchFile {
            latency: d_sw_latency(),
            ingress_buffer: d_sw_buffer(),
            power: d_sw_power(),
        }
    }
}

/// The resolved FPGA of a computational storage drive.
#[derive(Debug, Clone, Serialize)]
pub struct FpgaConfig {
    /// Part name.
    pub part: String,
    /// Kernel clock, Hz.
    pub clock_hz: f64,
    /// Global memory.
    pub dram: Bytes,
    /// DRAM banks.
    pub banks: u32,
    /// Bytes per bank beat (one per cycle).
    pub bank_bytes_per_cycle: f64,
    /// Long-burst read efficiency (0..1].
    pub bank_read_efficiency: f64,
    /// Long-burst write efficiency (0..1].
    pub bank_write_efficiency: f64,
    /// Interfaces per bank (compute units per bank).
    pub interfaces_per_bank: u32,
    /// Row switch, cycles.
    pub row_switch_cycles: f64,
    /// DRAM round trip, cycles.
    pub dram_latency_cycles: f64,
    /// Banks per DRAM device.
    pub dram_device_banks: u32,
    /// Scheduled global-memory latency, cycles.
    pub axi_latency_cycles: u32,
    /// Beats per burst.
    pub burst_beats: u32,
    /// Kernel port bytes per beat.
    pub port_bytes: u32,
    /// On-chip memory read latency, cycles.
    pub local_latency_cycles: u32,
    /// On-chip memory for local buffers.
    pub onchip_memory: Bytes,
    /// Kernel launch overhead.
    pub launch_overhead: Time,
    /// Program load time.
    pub program_load: Time,
    /// Program types offered.
    pub programs: Vec<String>,
    /// Largest program.
    pub max_program: Bytes,
    /// The FPGA's link to the internal switch.
    pub link: PcieConfig,
    /// Static power, W.
    pub static_power_w: f64,
    /// Dynamic power per active compute unit, W.
    pub cu_power_w: f64,
    /// DRAM background power, W.
    pub dram_background_w: f64,
    /// DRAM energy per byte, J.
    pub dram_energy_per_byte_j: f64,
    /// The switch inside the drive.
    pub switch: InternalSwitch,
}

/// The resolved internal switch.
#[derive(Debug, Clone, Serialize)]
pub struct InternalSwitch {
    /// Port-to-port latency.
    pub latency: Time,
    /// Ingress buffer per port.
    pub ingress_buffer: Bytes,
    /// Constant power, W.
    pub power_w: f64,
}

impl FpgaConfig {
    /// Most compute units the memory interconnect takes (one interface each).
    pub fn max_compute_units(&self) -> u32 {
        self.banks * self.interfaces_per_bank
    }
    /// Peak bytes per second of one bank.
    pub fn bank_peak(&self) -> f64 {
        self.bank_bytes_per_cycle * self.clock_hz
    }
}

impl FpgaFile {
    /// Resolve `[fpga]` (with `[internal_switch]`, default if absent) against
    /// the drive's own link `pcie`, reporting problems to `c`.
    pub(crate) fn resolve(
        &self,
        sw: Option<&SwitchFile>,
        pcie: &PcieConfig,
        c: &mut Collector,
    ) -> FpgaConfig {
        let f = self;
        let clock_hz = config_frequency(&f.clock).unwrap_or_else(|e| {
            c.push("fpga.clock", e.0);
            1.0
        });
        let power = |c: &mut Collector, k: &str, v: &str| {
            parse_power(v).unwrap_or_else(|e| {
                c.push(k, e.0);
                0.0
            })
        };
        for (k, v) in [
            ("fpga.banks", f.banks),
            ("fpga.interfaces_per_bank", f.interfaces_per_bank),
            ("fpga.axi_latency_cycles", f.axi_latency_cycles),
            ("fpga.burst_beats", f.burst_beats),
            ("fpga.local_latency_cycles", f.local_latency_cycles),
            ("fpga.dram_device_banks", f.dram_device_banks),
        ] {
            c.positive(k, v);
        }
        for (k, v, max, why) in [
            ("fpga.banks", f.banks, 64, "memory controllers"),
            (
                "fpga.interfaces_per_bank",
                f.interfaces_per_bank,
                64,
                "kernel interfaces on one bank's interconnect",
            ),
            (
                "fpga.dram_device_banks",
                f.dram_device_banks,
                64,
                "banks of one DRAM device; DDR5 has 32",
            ),
            (
                "fpga.axi_latency_cycles",
                f.axi_latency_cycles,
                65536,
                "cycles scheduled for one global-memory access",
            ),
            (
                "fpga.local_latency_cycles",
                f.local_latency_cycles,
                1024,
                "cycles of one on-chip memory read",
            ),
        ] {
            c.at_most(k, v as u64, max, why);
        }
        for (k, v) in [
            ("fpga.bank_width_bits", f.bank_width_bits),
            ("fpga.port_width_bits", f.port_width_bits),
        ] {
            if !(32..=1024).contains(&v) || !v.is_power_of_two() {
                c.push(
                    k,
                    format!("{v} is not an AXI data width (32 to 1024 bits, a power of two)"),
                );
            }
        }
        if f.port_width_bits > f.bank_width_bits {
            c.push(
                "fpga.port_width_bits",
                format!(
                    "a kernel port ({} bits) cannot be wider than the bank ({} bits)",
                    f.port_width_bits, f.bank_width_bits
                ),
            );
        }
        for (k, v) in [
            ("fpga.bank_read_efficiency", f.bank_read_efficiency),
            ("fpga.bank_write_efficiency", f.bank_write_efficiency),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                c.push(
                    k,
                    format!("{v} is not an efficiency (expected above 0, at most 1)"),
                );
            }
        }
        if f.burst_beats > 256 {
            c.push("fpga.burst_beats", "AXI4 bursts are at most 256 beats");
        }
        if let Some(m) = crate::config::pcie_generation_problem(f.link_generation) {
            c.push("fpga.link_generation", m);
        }
        if let Some(m) = crate::config::pcie_lanes_problem(f.link_lanes) {
            c.push("fpga.link_lanes", m);
        }
        let row_switch = c.time("fpga.row_switch", &f.row_switch);
        let dram_latency = c.time("fpga.dram_latency", &f.dram_latency);
        let dram = c.bytes("fpga.dram", &f.dram);
        if dram.0 == 0 && !c.has("fpga.dram") {
            c.push("fpga.dram", "must be above zero");
        }
        let energy = parse_energy(&f.dram_energy_per_byte).unwrap_or_else(|e| {
            c.push("fpga.dram_energy_per_byte", e.0);
            0.0
        });
        for (i, p) in f.programs.iter().enumerate() {
            if let Err(e) = super::kernel::kernel(p) {
                c.push(&format!("fpga.programs[{i}]"), e);
            }
        }
        let swf = sw.cloned().unwrap_or_default();
        let sw_latency = c.time("internal_switch.latency", &swf.latency);
        let ingress_buffer = c.bytes("internal_switch.ingress_buffer", &swf.ingress_buffer);
        // As a system file's switch: the buffer its credits cover must take
        // one whole TLP of the drive's link.
        if !c.has("internal_switch.ingress_buffer")
            && ingress_buffer.0 < pcie.max_payload.0 + pcie.tlp_overhead.0
        {
            c.push(
                "internal_switch.ingress_buffer",
                format!(
                    "'{}' cannot hold one full TLP ({} of payload and {} of overhead: pcie.max_payload and pcie.tlp_overhead)",
                    swf.ingress_buffer, pcie.max_payload, pcie.tlp_overhead
                ),
            );
        }
        let switch = InternalSwitch {
            latency: sw_latency,
            ingress_buffer,
            power_w: power(c, "internal_switch.power", &swf.power),
        };
        let mut link = pcie.clone();
        link.generation = f.link_generation;
        link.lanes = f.link_lanes;
        link.interface_bandwidth = None;
        FpgaConfig {
            part: f.part.clone(),
            clock_hz,
            dram,
            banks: f.banks,
            bank_bytes_per_cycle: f.bank_width_bits as f64 / 8.0,
            bank_read_efficiency: f.bank_read_efficiency,
            bank_write_efficiency: f.bank_write_efficiency,
            interfaces_per_bank: f.interfaces_per_bank,
            row_switch_cycles: row_switch.as_secs_f64() * clock_hz,
            dram_latency_cycles: dram_latency.as_secs_f64() * clock_hz,
            dram_device_banks: f.dram_device_banks,
            axi_latency_cycles: f.axi_latency_cycles,
            burst_beats: f.burst_beats,
            port_bytes: f.port_width_bits / 8,
            local_latency_cycles: f.local_latency_cycles,
            onchip_memory: c.bytes("fpga.onchip_memory", &f.onchip_memory),
            launch_overhead: c.time("fpga.launch_overhead", &f.launch_overhead),
            program_load: c.time("fpga.program_load", &f.program_load),
            programs: f.programs.clone(),
            max_program: c.bytes("fpga.max_program", &f.max_program),
            link,
            static_power_w: power(c, "fpga.static_power", &f.static_power),
            cu_power_w: power(c, "fpga.cu_power", &f.cu_power),
            dram_background_w: power(c, "fpga.dram_background", &f.dram_background),
            dram_energy_per_byte_j: energy,
            switch,
        }
    }
}
