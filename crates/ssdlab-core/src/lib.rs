//! ssdlab core: a deterministic discrete-event simulator of a whole NVMe SSD.
//!
//! One folder per part: [`workload`] (fio jobs, traces) → [`host`] (jobs,
//! NVMe queue pairs, driver costs, statistics) → [`fabric`] (PCIe) →
//! [`device`] (one drive: [`nvme`] controller → [`firmware`] stages or
//! [`compute`] cores → [`cache`] (DRAM) → [`ftl`] → [`flash`] scheduler →
//! [`nand`], and its [`power`] ledger). [`system`] wires them around the
//! event loop ([`engine`], messages in [`events`]); [`units`] are the typed
//! units, [`config`] and [`compose`] the device files, [`stats`] and
//! [`report`] the results. See docs/ARCHITECTURE.md.
#![warn(missing_docs)]

pub mod compose;
pub mod config;
pub mod csd;
pub mod device;
pub mod engine;
pub mod events;
pub mod fabric;
pub mod fio_output;
pub mod host;
pub mod overrides;
pub mod presets;
pub mod report;
pub mod serve;
pub mod stats;
pub mod system;
pub mod units;
pub mod validate;
pub mod workload;

pub use config::Device;
// The drive's stages and the fabric's link, by their short paths.
pub use device::{cache, compute, firmware, flash, ftl, nand, nvme, power};
pub use device::{Drive, Precondition};
pub use fabric::pcie;
pub use report::Report;
pub use system::{Progress, SimError, System};
pub use workload::Workload;

/// Default seed when none is given.
pub const DEFAULT_SEED: u64 = 42;

/// The shortest sampling interval (`--sample-interval`): one sample event
/// per interval, so a picosecond period would take 10^12 events per
/// simulated second.
pub const MIN_SAMPLE_INTERVAL: units::Time = units::Time::us(1);

/// A sampling interval is at least [`MIN_SAMPLE_INTERVAL`]; the error says
/// what was given and what is allowed.
pub fn check_sample_interval(t: units::Time) -> Result<(), String> {
    if t < MIN_SAMPLE_INTERVAL {
        return Err(format!(
            "{t}: expected a time of at least 1us (one sample per interval)"
        ));
    }
    Ok(())
}

/// Everything one simulation needs.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// The drive.
    pub device: Device,
    /// The workload.
    pub workload: Workload,
    /// Name of the workload (file name or "built-in ...").
    pub workload_name: String,
    /// Seed.
    pub seed: u64,
    /// Preconditioning.
    pub precondition: Precondition,
    /// Sample throughput and latency over simulated time at this interval.
    pub sample_interval: Option<units::Time>,
    /// Include the raw latency histograms in the report.
    pub latency_histogram: bool,
    /// Keep per-job statistics (for fio-compatible output).
    pub job_stats: bool,
    /// Keep what is written (a functional data store on every drive), and where.
    pub data_store: Option<device::store::StoreSpec>,
    /// Fail the power at this simulated time (the run ends there; each
    /// drive reports what it lost and its recovery).
    pub power_loss_at: Option<units::Time>,
    /// After the power loss, run on: the drives keep what recovery rebuilt
    /// and this workload (and its name) runs on them from a new host; its
    /// report is the first's `after_recovery`. Needs `power_loss_at`.
    pub after_recovery: Option<(Workload, String)>,
    /// Further power losses: each cuts the run before it (the
    /// `after_recovery` run, then the previous entry's) at its time from
    /// that run's start, and its workload (if any: all but the last need
    /// one) runs on after it, reported as that run's `after_recovery`.
    pub later_power_losses: Vec<(units::Time, Option<(Workload, String)>)>,
}

impl RunSpec {
    /// A run with the default seed, fill preconditioning, no time series and no histograms.
    pub fn new(device: Device, workload: Workload, workload_name: impl Into<String>) -> RunSpec {
        RunSpec {
            device,
            workload,
            workload_name: workload_name.into(),
            seed: DEFAULT_SEED,
            precondition: Precondition::Fill,
            sample_interval: None,
            latency_histogram: false,
            job_stats: false,
            data_store: None,
            power_loss_at: None,
            after_recovery: None,
            later_power_losses: Vec::new(),
        }
    }
}

/// Run one simulation to completion; also return per-job statistics when `spec.job_stats`.
pub fn simulate_with_jobs(
    spec: &RunSpec,
    progress: &mut dyn FnMut(Progress),
    stop: &dyn Fn() -> bool,
) -> Result<(Report, Option<Vec<fio_output::JobStats>>), SimError> {
    system::check_data_store(
        spec.data_store.as_ref(),
        &spec.workload,
        &spec.workload_name,
    )?;
    check_after_recovery(spec)?;
    let mut drive = System::new(
        spec.device.clone(),
        &spec.workload,
        &spec.workload_name,
        spec.seed,
        spec.precondition,
    )?;
    if spec.job_stats {
        drive.enable_job_stats(&spec.workload);
    }
    let mut r = run_drive(&mut drive, spec, progress, stop)?;
    let jobs = drive.host.job_stats.take();
    let cfg = || system::config::SystemConfig::single(spec.device.clone());
    run_on(drive, &cfg, spec, &mut r, progress, stop)?;
    Ok((r, jobs))
}

/// Run `spec`'s workload on the system `system` (several drives behind a
/// fabric; `spec.device` is not used); also per-job statistics when
/// `spec.job_stats`.
pub fn simulate_system(
    system: system::config::SystemConfig,
    spec: &RunSpec,
    progress: &mut dyn FnMut(Progress),
    stop: &dyn Fn() -> bool,
) -> Result<(Report, Option<Vec<fio_output::JobStats>>), SimError> {
    system::check_data_store(
        spec.data_store.as_ref(),
        &spec.workload,
        &spec.workload_name,
    )?;
    check_after_recovery(spec)?;
    let again = spec.after_recovery.as_ref().map(|_| system.clone());
    let mut sys = System::from_config(
        system,
        &spec.workload,
        &spec.workload_name,
        spec.seed,
        spec.precondition,
    )?;
    if spec.job_stats {
        sys.enable_job_stats(&spec.workload);
    }
    let mut r = run_drive(&mut sys, spec, progress, stop)?;
    let jobs = sys.host.job_stats.take();
    if let Some(cfg) = again {
        run_on(sys, &|| cfg.clone(), spec, &mut r, progress, stop)?;
    }
    Ok((r, jobs))
}

/// Run one simulation to completion.
pub fn simulate(
    spec: &RunSpec,
    progress: &mut dyn FnMut(Progress),
    stop: &dyn Fn() -> bool,
) -> Result<Report, SimError> {
    simulate_with_jobs(spec, progress, stop).map(|(r, _)| r)
}

/// `o.take()`, but reading `o` first and writing it only when it holds a
/// value: an unconditional `take` rewrites the whole option, which on the
/// hot path (an option tested per event or per I/O, nearly always empty)
/// cost up to about 19 instructions a test (docs/performance.md, hot-path
/// log).
#[inline(always)]
pub(crate) fn take_if_set<T>(o: &mut Option<T>) -> Option<T> {
    if o.is_some() {
        o.take()
    } else {
        None
    }
}

/// `spec.after_recovery` needs a power loss and a workload that can run
/// after it (checked before anything is built).
fn check_after_recovery(spec: &RunSpec) -> Result<(), SimError> {
    let Some((w, name)) = &spec.after_recovery else {
        if !spec.later_power_losses.is_empty() {
            return Err(SimError::Device(
                "a second power loss cuts the run after the first one's recovery: it needs --after-recovery JOB (Python: after_recovery=)".into(),
            ));
        }
        return Ok(());
    };
    if spec.power_loss_at.is_none() {
        return Err(SimError::Device(
            "--after-recovery runs a job after a power loss: it needs --power-loss-at TIME (Python: power_loss_at=)".into(),
        ));
    }
    system::check_data_store(spec.data_store.as_ref(), w, name)?;
    let n = spec.later_power_losses.len();
    for (k, (at, job)) in spec.later_power_losses.iter().enumerate() {
        if *at == units::Time::ZERO {
            return Err(SimError::Device(format!(
                "power loss {}: it must come after the start of the run it cuts (a time above 0 s)",
                k + 2
            )));
        }
        match job {
            Some((w, name)) => system::check_data_store(spec.data_store.as_ref(), w, name)?,
            None if k + 1 < n => {
                return Err(SimError::Device(format!(
                    "power loss {} has no job after it (--after-recovery), so power loss {} has no run to cut",
                    k + 2,
                    k + 3
                )))
            }
            None => {}
        }
    }
    Ok(())
}

/// After the first run's power loss, run `spec.after_recovery` (if any) on
/// the drives recovery rebuilt (the system `cfg()` describes), and put its
/// report in `first.after_recovery`.
fn run_on(
    lost: System,
    cfg: &dyn Fn() -> system::config::SystemConfig,
    spec: &RunSpec,
    first: &mut Report,
    progress: &mut dyn FnMut(Progress),
    stop: &dyn Fn() -> bool,
) -> Result<(), SimError> {
    let Some((w, name)) = &spec.after_recovery else {
        return Ok(());
    };
    let mut sys = lost.after_recovery(cfg(), w, name)?;
    // The next power loss (if any) cuts this run; its job runs on after it.
    let (power_loss_at, after_recovery, later_power_losses) =
        match spec.later_power_losses.split_first() {
            Some(((at, job), rest)) => (Some(*at), job.clone(), rest.to_vec()),
            None => (None, None, Vec::new()),
        };
    let then = RunSpec {
        workload: w.clone(),
        workload_name: name.clone(),
        power_loss_at,
        after_recovery,
        later_power_losses,
        ..spec.clone()
    };
    let mut r = run_drive(&mut sys, &then, progress, stop)?;
    run_on(sys, cfg, &then, &mut r, progress, stop)?;
    first.after_recovery = Some(Box::new(r));
    Ok(())
}

fn run_drive(
    drive: &mut System,
    spec: &RunSpec,
    progress: &mut dyn FnMut(Progress),
    stop: &dyn Fn() -> bool,
) -> Result<Report, SimError> {
    drive.set_data_store(
        spec.data_store.as_ref(),
        &spec.workload,
        &spec.workload_name,
    )?;
    if let Some(iv) = spec.sample_interval {
        check_sample_interval(iv).map_err(SimError::Device)?;
        drive.sample_every(iv);
    }
    if let Some(at) = spec.power_loss_at {
        drive.power_loss_at(at)?;
    }
    let t0 = std::time::Instant::now();
    drive.run(progress, stop)?;
    let wall = t0.elapsed().as_secs_f64();
    let mut r = Report::from_system(drive, &spec.workload_name, &spec.workload.ignored, wall);
    if spec.latency_histogram {
        let [read, write, ..] = drive.host.measured();
        r.read.lat_hist_ns = Some(read.histogram());
        r.write.lat_hist_ns = Some(write.histogram());
    }
    Ok(r)
}

/// Run with no progress reporting.
pub fn simulate_quiet(spec: &RunSpec) -> Result<Report, SimError> {
    simulate(spec, &mut |_| {}, &|| false)
}
