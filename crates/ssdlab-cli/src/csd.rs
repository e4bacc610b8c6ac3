//! `ssdlab csd run`: a kernel inside a computational storage drive (seed 003).

use clap::{Args, Subcommand, ValueEnum};
use ssdlab_core::compose;
use ssdlab_core::csd::{self, timing::Variant, CsdSpec};
use ssdlab_core::units::{parse_bytes, parse_frequency};
use ssdlab_core::DEFAULT_SEED;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum CsdCmd {
    /// Write inputs to the drive, move them flash -> FPGA peer to peer, run the kernel, write the result back; and the same work on a host core.
    Run(RunArgs),
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
pub enum Fmt {
    Text,
    Json,
}

#[derive(Args)]
pub struct RunArgs {
    /// Computational storage drive: preset name or device TOML file with an [fpga] section.
    #[arg(long, default_value = "smartssd-3.84t")]
    device: String,
    /// Change one value of the device: KEY=VALUE (repeatable), e.g. --set fpga.clock=250MHz.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Kernel: count, average, vadd or merge.
    #[arg(long)]
    kernel: String,
    /// Elements per generated input array (int32).
    #[arg(long, default_value_t = 1 << 20)]
    elements: u64,
    /// Input arrays as raw little-endian int32 files instead of generated ones (one per kernel input, in order).
    #[arg(long, num_args = 1.., value_name = "FILE")]
    input: Vec<PathBuf>,
    /// The value Count counts.
    #[arg(long, default_value_t = 7, allow_hyphen_values = true)]
    value: i32,
    /// Compute units (at most the FPGA's kernel interfaces).
    #[arg(long, default_value_t = 1)]
    cus: u32,
    /// Local (on-chip) buffer per buffer, e.g. 256KiB.
    #[arg(long, value_name = "SIZE")]
    local_buffer: Option<String>,
    /// Pipeline the kernel's loops (#pragma HLS pipeline II=1).
    #[arg(long)]
    pipeline: bool,
    /// Seed (generated inputs, the drive).
    #[arg(long, default_value_t = DEFAULT_SEED)]
    seed: u64,
    /// Host core clock for the CPU baseline (0.8GHz to 4.7GHz).
    #[arg(long, default_value = "3.7GHz")]
    host_clock: String,
    /// Size of each NVMe transfer of the flow.
    #[arg(long, default_value = "128KiB")]
    io_block: String,
    /// NVMe transfers in flight.
    #[arg(long, default_value_t = 32)]
    io_depth: u32,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Fmt::Text)]
    output_format: Fmt,
    /// Write the report to this file instead of stdout.
    #[arg(long)]
    output: Option<PathBuf>,
}

fn read_input(p: &PathBuf) -> Result<Vec<i32>, String> {
    let b = std::fs::read(p).map_err(|e| format!("--input {}: {e}", p.display()))?;
    if b.len() % 4 != 0 {
        return Err(format!(
            "--input {}: {} bytes is not a whole number of little-endian int32 elements (a multiple of 4)",
            p.display(),
            b.len()
        ));
    }
    Ok(csd::kernel::from_bytes(&b))
}

pub fn run(cmd: CsdCmd) -> Result<ExitCode, String> {
    let CsdCmd::Run(a) = cmd;
    let overrides = compose::parse_sets(&a.set).map_err(|e| e.to_string())?;
    let (_, dev) = compose::load_named(&a.device, &overrides).map_err(|e| e.to_string())?;
    let local_buffer = match &a.local_buffer {
        Some(s) => Some(
            parse_bytes(s)
                .map_err(|e| format!("--local-buffer: {}", e.0))?
                .0,
        ),
        None => None,
    };
    let host_clock_hz =
        parse_frequency(&a.host_clock).map_err(|e| format!("--host-clock: {}", e.0))?;
    let io_block = parse_bytes(&a.io_block)
        .map_err(|e| format!("--io-block: {}", e.0))?
        .0;
    let mut spec = CsdSpec::new(dev, &a.kernel, a.elements);
    if !a.input.is_empty() {
        spec.inputs = Some(a.input.iter().map(read_input).collect::<Result<_, _>>()?);
    }
    spec.value = a.value;
    spec.variant = Variant {
        compute_units: a.cus,
        local_buffer,
        pipeline: a.pipeline,
    };
    spec.seed = a.seed;
    spec.host_clock_hz = host_clock_hz;
    spec.io_block = io_block;
    spec.io_depth = a.io_depth;
    let r = csd::run(&spec)?;
    let text = match a.output_format {
        Fmt::Text => csd::to_text(&r.report),
        Fmt::Json => serde_json::to_string_pretty(&r.report).map_err(|e| e.to_string())? + "\n",
    };
    match &a.output {
        Some(p) => std::fs::write(p, text).map_err(|e| format!("--output {}: {e}", p.display()))?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
