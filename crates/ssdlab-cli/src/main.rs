//! `ssdlab`: the command-line door to the simulator.
// The argument structs' doc comments are clap's `--help` text, where
// `switch[0].latency` and `[fpga]` are literal, not links.
#![allow(rustdoc::broken_intra_doc_links)]

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use ssdlab_core::compose;
use ssdlab_core::config::{preset_names, Device};
use ssdlab_core::workload::{fio, Workload};
use ssdlab_core::{simulate_with_jobs, Precondition, RunSpec, DEFAULT_SEED};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

mod bench;
mod csd;
mod pydoor;
mod serve;

#[derive(Parser)]
#[command(
    name = "ssdlab",
    version,
    about = "Full-system SSD simulator: NVMe/PCIe host, firmware, DRAM cache, FTL, flash scheduler, NAND"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum RunFormat {
    /// Human summary.
    Text,
    /// The ssdlab.report.v1 JSON report.
    Json,
    /// fio --output-format=json layout.
    FioJson,
    /// fio's normal text summary.
    Fio,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum Pre {
    Fresh,
    Fill,
    Steady,
    SteadyExact,
}

#[derive(Subcommand)]
// One command is parsed per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
enum Cmd {
    /// Design-space sweep from SPEC.toml, written as CSV/Parquet (Python package).
    #[command(disable_help_flag = true, display_order = 100)]
    Sweep(pydoor::Args),
    /// Multi-objective design search (Optuna NSGA-II) from SPEC.toml (Python package).
    #[command(disable_help_flag = true, display_order = 100)]
    Search(pydoor::Args),
    /// Self-contained HTML report (and PNGs) of a result JSON (Python package).
    #[command(disable_help_flag = true, display_order = 100)]
    Report(pydoor::Args),
    /// Simulate a workload on a device (default: pm9a3-960g, 4 KiB random read QD32).
    Run {
        /// Preset name or path to a device TOML file.
        #[arg(long, default_value = ssdlab_core::config::DEFAULT_DEVICE)]
        device: String,
        /// Change one value of the device, as in its TOML file: KEY=VALUE (repeatable), e.g. --set nand.channels=16 --set cache.write_buffer=64MiB. With --system (or a system file): a system-file key (switch[0].ingress_buffer=16KiB), drives.KEY for every drive's device, DRIVE.KEY for one drive's (nvme0.nand.channels=16).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Simulate a whole system instead: host, PCIe switches and several drives (system preset or file; see `ssdlab systems`).
        #[arg(long, value_name = "NAME|PATH")]
        system: Option<String>,
        /// fio job file (default: built-in 4 KiB random read, QD32, 1M I/Os).
        #[arg(long)]
        job: Option<PathBuf>,
        /// Seed for every random stream.
        #[arg(long, default_value_t = DEFAULT_SEED)]
        seed: u64,
        /// Drive state before the run.
        #[arg(long, value_enum, default_value_t = Pre::Fill)]
        precondition: Pre,
        /// Output format.
        #[arg(long, value_enum, default_value_t = RunFormat::Text)]
        output_format: RunFormat,
        /// Write the report to this file instead of stdout.
        #[arg(long)]
        output: Option<PathBuf>,
        /// Never show a progress bar.
        #[arg(long)]
        quiet: bool,
        /// Block-trace replay options.
        #[command(flatten)]
        trace: TraceArgs,
        /// Add throughput/latency time series sampled at this interval (e.g. "10ms") to the JSON report.
        #[arg(long)]
        sample_interval: Option<String>,
        /// Keep what is written, so reads return it (fio's verify needs this): `on` (memory for drives up to 64 GiB, else a sparse temporary file), `memory`, or a file PATH (a sparse file kept after the run; a directory on a system of several drives).
        #[arg(long, value_name = "on|memory|PATH")]
        data_store: Option<String>,
        /// Fail the power at this simulated time (e.g. "20ms"): the run ends there, and the report's recovery section says what the drive lost (acknowledged writes not yet durable) and how long rebuilding its mapping takes. Repeat it, each after an --after-recovery, to cut the runs after recovery too (each time from that run's start).
        #[arg(long, value_name = "TIME")]
        power_loss_at: Vec<String>,
        /// After the power loss (--power-loss-at), run this fio job file on the drives as recovery rebuilt them (a new host, its own clock): the report's after-recovery section. Repeatable: the k-th runs after the k-th power loss.
        #[arg(long, value_name = "JOB")]
        after_recovery: Vec<PathBuf>,
    },
    /// Computational storage: run a kernel inside a drive with an FPGA (seed 003's SmartSSD).
    Csd {
        #[command(subcommand)]
        sub: csd::CsdCmd,
    },
    /// Serve a simulated drive in real time over NBD (through nbdkit) to real tools: fio, qemu-io, nbdcopy, a file system.
    Serve(serve::ServeArgs),
    /// Block traces: statistics.
    Trace {
        #[command(subcommand)]
        sub: TraceCmd,
    },
    /// List device presets, or show one resolved.
    Devices {
        #[command(subcommand)]
        sub: Option<DevicesCmd>,
    },
    /// List system presets (host, PCIe fabric, drives), or show one resolved.
    Systems {
        #[command(subcommand)]
        sub: Option<SystemsCmd>,
    },
    /// Check a device or system TOML file and report every problem.
    Check {
        /// Device TOML file.
        path: PathBuf,
        /// Change one value of the device, as in its TOML file: KEY=VALUE (repeatable), e.g. --set nand.channels=16 --set cache.write_buffer=64MiB. With --system (or a system file): a system-file key (switch[0].ingress_buffer=16KiB), drives.KEY for every drive's device, DRIVE.KEY for one drive's (nvme0.nand.channels=16).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
    /// Run the shipped validation scenarios against published figures.
    Validate {
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        output_format: Format,
        /// Only scenarios whose name contains this.
        #[arg(long)]
        filter: Option<String>,
    },
    /// Measure the simulator's own speed and memory.
    Bench {
        /// Simulated I/Os per case.
        #[arg(long, default_value_t = 2_000_000)]
        ios: u64,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        output_format: Format,
        /// Only cases whose name contains this.
        #[arg(long)]
        filter: Option<String>,
        /// Device preset or file.
        #[arg(long, default_value = ssdlab_core::config::DEFAULT_DEVICE)]
        device: String,
        /// Change one value of the device, as in its TOML file: KEY=VALUE (repeatable), e.g. --set nand.channels=16 --set cache.write_buffer=64MiB.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
}

#[derive(clap::Args)]
struct TraceArgs {
    /// Replay this block trace (MSR, SPC, blkparse text, blktrace binary (per-CPU files merged), DiskSim/MQSim, Alibaba, Tencent, fio iolog v2/v3).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Trace format (default: detect): msr, spc, blkparse, blktrace, disksim, alibaba, tencent, iolog.
    #[arg(long, requires = "trace")]
    trace_format: Option<String>,
    /// Open loop (trace timestamps) or closed loop (fixed queue depth).
    #[arg(long, value_enum, default_value_t = ReplayMode::Open, requires = "trace")]
    replay: ReplayMode,
    /// Queue depth for closed-loop replay.
    #[arg(long, default_value_t = 32, requires = "trace")]
    iodepth: u32,
    /// Speed factor for open-loop replay (2 = twice as fast).
    #[arg(long, default_value_t = 1.0, requires = "trace")]
    speed: f64,
    /// Replay only this device/volume (as written in the trace).
    #[arg(long, requires = "trace")]
    trace_device: Option<String>,
    /// On a system of several drives: which trace device replays on which drive, as TRACE_DEVICE=DRIVE pairs joined by ',' (e.g. "hm_0=nvme0,hm_1=nvme1" for MSR), or by ';' when devices contain ',' (blkparse "8,16=nvme0;8,32=nvme1").
    #[arg(long, requires = "trace", value_name = "DEV=DRIVE,...")]
    trace_drives: Option<String>,
    /// Start of the time window (e.g. "10s", "500ms"), from the first record.
    #[arg(long, requires = "trace")]
    trace_start: Option<String>,
    /// End of the time window.
    #[arg(long, requires = "trace")]
    trace_end: Option<String>,
    /// Map trace offsets onto the drive: wrap (offset mod capacity) or scale (spread the trace's address space).
    #[arg(long, value_enum, default_value_t = RemapMode::Wrap, requires = "trace")]
    remap: RemapMode,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum ReplayMode {
    Open,
    Closed,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum RemapMode {
    Wrap,
    Scale,
}

#[derive(Subcommand)]
enum TraceCmd {
    /// Read/write mix, size histogram, footprint and inter-arrival percentiles.
    Stats {
        /// Trace file.
        file: PathBuf,
        /// Format (default: detect).
        #[arg(long)]
        trace_format: Option<String>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Text)]
        output_format: Format,
    },
}

fn trace_format(
    s: &Option<String>,
) -> Result<Option<ssdlab_core::workload::trace::TraceFormat>, String> {
    s.as_deref()
        .map(|f| {
            f.parse()
                .map_err(|e: String| format!("--trace-format: {e}"))
        })
        .transpose()
}

fn trace_spec(a: &TraceArgs) -> Result<Option<(ssdlab_core::workload::TraceSpec, String)>, String> {
    use ssdlab_core::workload::trace::{stats, Remap, TraceFilter, TraceReader};
    use ssdlab_core::workload::{Replay, TraceSpec};
    let Some(path) = &a.trace else {
        return Ok(None);
    };
    let format = trace_format(&a.trace_format)?;
    let time = |k: &str, v: &Option<String>| -> Result<Option<ssdlab_core::units::Time>, String> {
        v.as_deref()
            .map(|s| ssdlab_core::units::parse_time(s).map_err(|e| format!("--{k}: {e}")))
            .transpose()
    };
    let filter = TraceFilter {
        device: a.trace_device.clone(),
        start: time("trace-start", &a.trace_start)?,
        end: time("trace-end", &a.trace_end)?,
    };
    let remap = match a.remap {
        RemapMode::Wrap => Remap::Wrap,
        RemapMode::Scale => {
            // One streaming pass to learn the trace's address space.
            let r = TraceReader::open(path, format).map_err(|e| e.to_string())?;
            let st = stats(r, &filter).map_err(|e| e.to_string())?;
            Remap::Scale {
                max_offset: st.max_end_bytes,
            }
        }
    };
    if a.iodepth == 0 {
        return Err("--iodepth must be at least 1".into());
    }
    let replay = match a.replay {
        ReplayMode::Open => Replay::Open { speed: a.speed },
        ReplayMode::Closed => Replay::Closed { iodepth: a.iodepth },
    };
    let desc = format!(
        "trace {} ({}, {}, remap {})",
        path.display(),
        format.map_or("format detected".to_string(), |f| f.name().to_string()),
        match replay {
            Replay::Open { speed } => format!("open loop x{speed}"),
            Replay::Closed { iodepth } => format!("closed loop QD{iodepth}"),
        },
        match remap {
            Remap::Wrap => "wrap".to_string(),
            Remap::Scale { max_offset } => format!("scale from {max_offset} B"),
        }
    );
    Ok(Some((
        TraceSpec {
            path: path.clone(),
            format,
            replay,
            filter,
            remap,
        },
        desc,
    )))
}

#[derive(Subcommand)]
enum SystemsCmd {
    /// Print one system: its topology, every link as trained, and its drives.
    Show {
        /// System preset name or TOML path.
        name: String,
        /// Change one value: a system-file key (switch[0].latency=100ns), drives.KEY for every drive's device, DRIVE.KEY for one drive's (KEY=VALUE, repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
}

#[derive(Subcommand)]
enum DevicesCmd {
    /// Print one device with every default filled in, plus derived figures.
    Show {
        /// Preset name or TOML path.
        name: String,
        /// Change one value of the device, as in its TOML file: KEY=VALUE (repeatable), e.g. --set nand.channels=16 --set cache.write_buffer=64MiB.
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match real_main(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// A time option's value (`"20ms"`), or an error naming the option.
fn time_flag(flag: &str, v: &Option<String>) -> Result<Option<ssdlab_core::units::Time>, String> {
    v.as_deref()
        .map(|v| ssdlab_core::units::parse_time(v).map_err(|e| format!("{flag}: {e}")))
        .transpose()
}

fn load_workload(
    job: &Option<PathBuf>,
    keywords: Option<fio::HostKeywords>,
) -> Result<(Workload, String), String> {
    match job {
        Some(p) => Ok((
            fio::parse_file_with(p, keywords).map_err(|e| e.to_string())?,
            p.display().to_string(),
        )),
        None => Ok((
            Workload::default_job(),
            "built-in randread-4k-qd32 (1M I/Os)".into(),
        )),
    }
}

fn progress_bar(quiet: bool) -> (ProgressBar, Instant) {
    let pb = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(1000)
    };
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:40} {percent}% {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    (pb, Instant::now())
}

fn real_main(cli: Cli) -> Result<ExitCode, String> {
    match cli.cmd {
        Cmd::Sweep(a) => Ok(pydoor::run("sweep", &a.args)),
        Cmd::Search(a) => Ok(pydoor::run("search", &a.args)),
        Cmd::Report(a) => Ok(pydoor::run("report", &a.args)),
        Cmd::Run {
            device,
            set,
            system,
            job,
            seed,
            precondition,
            output_format,
            output,
            quiet,
            trace,
            sample_interval,
            data_store,
            power_loss_at,
            after_recovery,
        } => {
            let data_store = data_store
                .as_deref()
                .map(|s| {
                    ssdlab_core::device::store::StoreSpec::parse(s)
                        .map_err(|e| format!("--data-store: {e}"))
                })
                .transpose()?;
            let system = match &system {
                None => None,
                Some(s) => {
                    let overrides = compose::parse_sets(&set).map_err(|e| e.to_string())?;
                    Some(
                        ssdlab_core::system::config::SystemConfig::load_with(s, &overrides)
                            .map_err(|e| e.to_string())?,
                    )
                }
            };
            let dev = match &system {
                Some(s) => s.drives[0].device.clone(),
                None => load_device(&device, &set)?,
            };
            // fio's $pagesize, $ncpus, $mb_memory: the simulated host's.
            let host = match &system {
                Some(s) => &s.host,
                None => &dev.host,
            };
            let keywords = Some(fio::HostKeywords {
                pagesize: dev.ftl.mapping_unit.0,
                ncpus: (host.cores > 0).then_some(host.cores),
                mb_memory: (host.memory.0 > 0).then_some(host.memory.0 >> 20),
            });
            let (workload, name) = match (trace_spec(&trace)?, &job) {
                (Some((ts, desc)), None) => (
                    Workload {
                        trace: Some(ts),
                        ..Workload::default()
                    },
                    desc,
                ),
                (Some((ts, desc)), Some(_)) => {
                    let (mut w, n) = load_workload(&job, keywords)?;
                    w.trace = Some(ts);
                    (w, format!("{n} + {desc}"))
                }
                (None, _) => load_workload(&job, keywords)?,
            };
            let mut workload = workload;
            if let Some(map) = &trace.trace_drives {
                workload.trace_drives = parse_trace_drives(map)?;
            }
            if !after_recovery.is_empty()
                && !matches!(output_format, RunFormat::Text | RunFormat::Json)
            {
                return Err(
                    "--after-recovery: the report holds two runs (before the power loss and after the recovery); use --output-format text or json".into(),
                );
            }
            let losses = power_loss_at.len();
            if losses > 1 && after_recovery.len() + 1 < losses {
                return Err(format!(
                    "--power-loss-at given {losses} times but --after-recovery {} times: each power loss after the first cuts the run of the --after-recovery job before it",
                    after_recovery.len()
                ));
            }
            let mut jobs = Vec::with_capacity(after_recovery.len());
            for p in &after_recovery {
                let (mut w, n) = load_workload(&Some(p.clone()), keywords)
                    .map_err(|e| format!("--after-recovery: {e}"))?;
                w.trace_drives = workload.trace_drives.clone();
                jobs.push(Some((w, n)));
            }
            let mut times = Vec::with_capacity(losses);
            for t in &power_loss_at {
                times.push(time_flag("--power-loss-at", &Some(t.clone()))?);
            }
            if jobs.len() > losses.max(1) {
                return Err(format!(
                    "--after-recovery given {} times but --power-loss-at {losses} times: each job runs after a power loss",
                    jobs.len()
                ));
            }
            let mut jobs = jobs.into_iter();
            let after_recovery = jobs.next().flatten();
            let later_power_losses: Vec<_> = times
                .iter()
                .skip(1)
                .map(|t| (t.unwrap_or_default(), jobs.next().flatten()))
                .collect();
            let pre = match precondition {
                Pre::Fresh => Precondition::Fresh,
                Pre::Fill => Precondition::Fill,
                Pre::Steady => Precondition::Steady,
                Pre::SteadyExact => Precondition::SteadyExact,
            };
            let spec = RunSpec {
                device: dev,
                workload,
                workload_name: name,
                seed,
                precondition: pre,
                sample_interval: match time_flag("--sample-interval", &sample_interval)? {
                    Some(t) => {
                        ssdlab_core::check_sample_interval(t)
                            .map_err(|e| format!("--sample-interval: {e}"))?;
                        Some(t)
                    }
                    None => None,
                },
                latency_histogram: false,
                job_stats: matches!(output_format, RunFormat::FioJson | RunFormat::Fio),
                data_store,
                power_loss_at: times.first().copied().flatten(),
                after_recovery,
                later_power_losses,
            };
            let group = ssdlab_core::fio_output::group_reporting(&spec.workload);
            let (pb, t0) =
                progress_bar(quiet || !std::io::IsTerminal::is_terminal(&std::io::stderr()));
            let mut shown = false;
            let mut on_progress = |p: ssdlab_core::Progress| {
                if !shown && t0.elapsed() > Duration::from_secs(2) {
                    shown = true;
                    pb.enable_steady_tick(Duration::from_millis(200));
                }
                if shown {
                    if let Some(f) = p.fraction {
                        pb.set_position((f * 1000.0) as u64);
                    }
                    pb.set_message(format!(
                        "{} I/Os, {:.3} ms simulated",
                        p.ios_done,
                        p.sim_time.as_secs_f64() * 1e3
                    ));
                }
            };
            let (report, jobs) = match system {
                Some(sys) => ssdlab_core::simulate_system(sys, &spec, &mut on_progress, &|| false),
                None => simulate_with_jobs(&spec, &mut on_progress, &|| false),
            }
            .map_err(|e| e.to_string())?;
            pb.finish_and_clear();
            let jobs = jobs.unwrap_or_default();
            let text = match output_format {
                RunFormat::Text => report.to_text(),
                RunFormat::Json => report.to_json() + "\n",
                RunFormat::FioJson => {
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs());
                    let v = ssdlab_core::fio_output::to_json(&report, &jobs, group, now);
                    serde_json::to_string_pretty(&v).map_err(|e| e.to_string())? + "\n"
                }
                RunFormat::Fio => ssdlab_core::fio_output::to_text(&report, &jobs, group),
            };
            emit(&text, &output)?;
            if let Some(v) = report.verify.as_ref().filter(|v| v.failures > 0) {
                // As fio: a failed verify is the run's failure.
                eprintln!(
                    "error: verify: {} of {} blocks failed (first: {})",
                    v.failures,
                    v.blocks,
                    v.first_failures.first().map_or("", String::as_str)
                );
                return Ok(ExitCode::FAILURE);
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Trace {
            sub:
                TraceCmd::Stats {
                    file,
                    trace_format: f,
                    output_format,
                },
        } => {
            use ssdlab_core::workload::trace::{stats, TraceFilter, TraceReader};
            let r = TraceReader::open(&file, trace_format(&f)?).map_err(|e| e.to_string())?;
            let st = stats(r, &TraceFilter::default()).map_err(|e| e.to_string())?;
            match output_format {
                Format::Text => print!("{}", st.to_text()),
                Format::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&st).map_err(|e| e.to_string())?
                ),
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Devices { sub: None } => {
            for name in preset_names() {
                let d = Device::preset(&name).map_err(|e| e.to_string())?;
                println!("{name:<28} {}", d.description);
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Devices {
            sub: Some(DevicesCmd::Show { name, set }),
        } => {
            let overrides = compose::parse_sets(&set).map_err(|e| e.to_string())?;
            let (file, dev) = compose::load_named(&name, &overrides).map_err(|e| e.to_string())?;
            if !dev.origin.extends.is_empty() {
                println!("# extends: {}", dev.origin.extends.join(" -> "));
            }
            for o in &dev.origin.overrides {
                println!("# override: {} = {}", o.key, o.value);
            }
            let toml = toml::to_string_pretty(&file).map_err(|e| e.to_string())?;
            println!("{toml}");
            let link = ssdlab_core::pcie::Link::new(&dev.pcie);
            println!("# derived");
            println!(
                "# exported capacity: {} bytes ({:.1} GB)",
                dev.capacity_bytes(),
                dev.capacity_bytes() as f64 / 1e9
            );
            println!(
                "# raw NAND:          {} bytes ({:.1} GB)",
                dev.nand.raw_bytes(),
                dev.nand.raw_bytes() as f64 / 1e9
            );
            println!("# dies:              {}", dev.nand.total_dies());
            println!("# channel bus:       {}", dev.nand.bus_bandwidth);
            println!("# PCIe payload bw:   {}", link.effective_bandwidth());
            println!(
                "# mapping memory:    {:.2} GiB",
                ssdlab_core::device::memory_estimate(&dev) as f64 / (1u64 << 30) as f64
            );
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Systems { sub: None } => {
            for name in ssdlab_core::system::config::system_preset_names() {
                let s = ssdlab_core::system::config::SystemConfig::load(&name)
                    .map_err(|e| e.to_string())?;
                println!("{name:<28} {}", s.description);
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Systems {
            sub: Some(SystemsCmd::Show { name, set }),
        } => {
            let overrides = compose::parse_sets(&set).map_err(|e| e.to_string())?;
            let s = ssdlab_core::system::config::SystemConfig::load_with(&name, &overrides)
                .map_err(|e| e.to_string())?;
            print!("{}", show_system(&s));
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Check { path, set } if is_system_file(&path) => {
            let overrides = compose::parse_sets(&set).map_err(|e| e.to_string())?;
            let s = ssdlab_core::system::config::SystemConfig::load_with(
                &path.display().to_string(),
                &overrides,
            )
            .map_err(|e| e.to_string())?;
            println!(
                "{}: ok (system {}, {} drive{}, {} switch{})",
                path.display(),
                s.name,
                s.drives.len(),
                if s.drives.len() == 1 { "" } else { "s" },
                s.switches.len(),
                if s.switches.len() == 1 { "" } else { "es" }
            );
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Check { path, set } => {
            let overrides = compose::parse_sets(&set).map_err(|e| e.to_string())?;
            let (text, src) =
                compose::read(&path.display().to_string()).map_err(|e| e.to_string())?;
            let d = compose::load(&text, &src, &overrides)
                .map_err(|e| e.to_string())?
                .1;
            println!(
                "{}: ok ({}, {:.1} GB exported)",
                path.display(),
                d.name,
                d.capacity_bytes() as f64 / 1e9
            );
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Csd { sub } => csd::run(sub),
        Cmd::Serve(a) => serve::run(a),
        Cmd::Validate {
            output_format,
            filter,
        } => {
            let results = ssdlab_core::validate::run_all(filter.as_deref(), &mut |name| {
                eprintln!("running {name} ...");
            })
            .map_err(|e| e.to_string())?;
            let all_pass = results.iter().all(|r| r.pass);
            match output_format {
                Format::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&results).map_err(|e| e.to_string())?
                ),
                Format::Text => print!("{}", ssdlab_core::validate::to_text(&results)),
            }
            Ok(if all_pass {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            })
        }
        Cmd::Bench {
            ios,
            output_format,
            filter,
            device,
            set,
        } => {
            let dev = load_device(&device, &set)?;
            let res = bench::run(&dev, ios, filter.as_deref())?;
            match output_format {
                Format::Json => println!(
                    "{}",
                    serde_json::to_string_pretty(&res).map_err(|e| e.to_string())?
                ),
                Format::Text => print!("{}", bench::to_text(&res)),
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// `--trace-drives`: TRACE_DEVICE=DRIVE pairs joined by ',' (or ';').
fn parse_trace_drives(map: &str) -> Result<Vec<(String, String)>, String> {
    let sep = if map.contains(';') { ';' } else { ',' };
    let mut out = Vec::new();
    for pair in map.split(sep).map(str::trim).filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some((d, n)) if !d.trim().is_empty() && !n.trim().is_empty() => {
                out.push((d.trim().to_string(), n.trim().to_string()))
            }
            _ => {
                return Err(format!(
                    "--trace-drives: '{pair}' is not TRACE_DEVICE=DRIVE (pairs joined by ',', or by ';' when devices contain ',')"
                ))
            }
        }
    }
    if out.is_empty() {
        return Err("--trace-drives: no TRACE_DEVICE=DRIVE pair".into());
    }
    Ok(out)
}

/// A TOML file with `[[drive]]` tables is a system file.
fn is_system_file(path: &std::path::Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| toml::from_str::<toml::Table>(&t).ok())
        .is_some_and(|t| t.contains_key("drive") || t.contains_key("root_complex"))
}

/// `ssdlab systems show`: the topology as trained.
fn show_system(s: &ssdlab_core::system::config::SystemConfig) -> String {
    use ssdlab_core::pcie::Link;
    use ssdlab_core::system::config::Parent;
    use std::fmt::Write as _;
    let mut o = String::new();
    let name = |p: Parent| match p {
        Parent::Root => "root".to_string(),
        Parent::Switch(j) => s.switches[j].name.clone(),
    };
    let _ = writeln!(o, "system {}: {}", s.name, s.description);
    let _ = writeln!(
        o,
        "root complex: Gen{} x{} per port, {} port{}",
        s.root_generation,
        s.root_lanes,
        s.root_ports,
        if s.root_ports == 1 { "" } else { "s" }
    );
    let h = &s.host;
    let memory = if h.memory.0 == 0 {
        "no memory modelled (direct I/O only)".to_string()
    } else {
        format!(
            "{} memory ({:.0}% page cache), {} at {:.2} GHz, copy {}, {} cycles per page",
            h.memory,
            h.page_cache_share * 100.0,
            match h.cores {
                0 => "a core per thread".to_string(),
                1 => "1 core".to_string(),
                n => format!("{n} cores"),
            },
            h.clock_hz / 1e9,
            h.copy_bandwidth,
            h.page_cycles
        )
    };
    let _ = writeln!(
        o,
        "host: submit {} / complete {} per I/O; {memory}",
        h.submit_overhead, h.complete_overhead
    );
    for sw in &s.switches {
        let l = Link::new(&sw.uplink);
        let _ = writeln!(
            o,
            "switch {}: upstream {} over Gen{} x{} ({:.2} GB/s payload per direction); {} downstream ports Gen{} up to x{}; {} port to port; {} ingress buffer per port; {} W",
            sw.name,
            name(sw.upstream),
            sw.uplink.generation,
            sw.uplink.lanes,
            l.effective_bandwidth().0 / 1e9,
            sw.ports,
            sw.downstream_generation,
            sw.downstream_lanes,
            sw.latency,
            sw.ingress_buffer,
            sw.power_w
        );
    }
    for d in &s.drives {
        let l = Link::new(&d.link);
        let _ = writeln!(
            o,
            "drive {}: {} ({:.1} GB exported) on {} over Gen{} x{} ({:.2} GB/s payload per direction)",
            d.name,
            d.device.name,
            d.device.capacity_bytes() as f64 / 1e9,
            name(d.attach),
            d.link.generation,
            d.link.lanes,
            l.effective_bandwidth().0 / 1e9
        );
    }
    o
}

/// A preset or device file with `--set` overrides applied.
fn load_device(name_or_path: &str, set: &[String]) -> Result<Device, String> {
    let overrides = compose::parse_sets(set).map_err(|e| e.to_string())?;
    Device::load_with(name_or_path, &overrides).map_err(|e| e.to_string())
}

fn emit(text: &str, output: &Option<PathBuf>) -> Result<(), String> {
    match output {
        Some(p) => std::fs::write(p, text)
            .map_err(|e| format!("{}: cannot write report: {e}", p.display())),
        None => {
            let mut o = std::io::stdout().lock();
            o.write_all(text.as_bytes()).map_err(|e| e.to_string())
        }
    }
}
