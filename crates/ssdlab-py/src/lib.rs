//! `ssdlab._core`: the compiled core of the `ssdlab` Python package.
//!
//! A thin layer over `ssdlab-core`: device files (with dotted-path
//! overrides, checked by the core's own validator), fio job files, and one
//! simulation run. Everything else — the typed API, DataFrames, sweeps,
//! search, plots, reports — lives in the Python package (`python/ssdlab`).
//!
//! Errors are raised as the exception classes of `ssdlab.errors`
//! (`ConfigError` with every `(key, message)` problem, `WorkloadError` with
//! file, line and option, `SimulationError`), so Python code can catch them
//! by type and read their fields. A run releases the GIL; it polls Python's
//! signal handlers (Ctrl-C) and an optional `StopFlag` every 65,536
//! events and stops early, raising `KeyboardInterrupt` or
//! `ssdlab.errors.RunStopped`.

mod serve;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use ssdlab_core::config::{ConfigError, ConfigProblem, Device, DeviceFile};
use ssdlab_core::system::config::{SystemConfig, SystemFile};
use ssdlab_core::units::{parse_time, Time};
use ssdlab_core::workload::{fio, Workload, WorkloadError};
use ssdlab_core::{simulate, RunSpec};
use ssdlab_core::{Precondition, SimError};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Build an instance of `ssdlab.errors.<class>` (or `fallback` if the Python
/// package is not importable, e.g. when `_core` is used on its own).
fn py_error<'py, A>(
    py: Python<'py>,
    class: &str,
    args: A,
    fallback: impl FnOnce() -> PyErr,
) -> PyErr
where
    A: pyo3::call::PyCallArgs<'py>,
{
    let made = py
        .import("ssdlab.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1(args));
    match made {
        Ok(v) => PyErr::from_value(v),
        Err(_) => fallback(),
    }
}

fn config_error(py: Python<'_>, e: ConfigError) -> PyErr {
    let text = e.to_string();
    let problems: Vec<(String, String)> =
        e.problems.into_iter().map(|p| (p.key, p.message)).collect();
    py_error(py, "ConfigError", (e.source, problems), || {
        PyValueError::new_err(text)
    })
}

fn workload_error(py: Python<'_>, e: WorkloadError) -> PyErr {
    let text = e.to_string();
    py_error(
        py,
        "WorkloadError",
        (e.file, e.line, e.option, e.message),
        || PyValueError::new_err(text),
    )
}

fn simulation_error(py: Python<'_>, class: &str, msg: String) -> PyErr {
    let text = msg.clone();
    py_error(py, class, (msg,), || {
        pyo3::exceptions::PyRuntimeError::new_err(text)
    })
}

/// Convert a Python value into a TOML value (bool, int, float, str, and
/// lists / dicts of those).
fn to_toml(v: &Bound<'_, PyAny>) -> Result<toml::Value, String> {
    if v.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(
            v.extract::<bool>().map_err(|e| e.to_string())?,
        ));
    }
    if v.is_instance_of::<PyInt>() {
        return v
            .extract::<i64>()
            .map(toml::Value::Integer)
            .map_err(|_| "integer out of range for TOML (64-bit)".to_string());
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(
            v.extract::<f64>().map_err(|e| e.to_string())?,
        ));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(
            v.extract::<String>().map_err(|e| e.to_string())?,
        ));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        let mut t = toml::Table::new();
        for (k, x) in d.iter() {
            let k: String = k
                .extract()
                .map_err(|_| "table keys must be strings".to_string())?;
            t.insert(k, to_toml(&x)?);
        }
        return Ok(toml::Value::Table(t));
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let mut a = Vec::new();
        for x in v.try_iter().map_err(|e| e.to_string())? {
            a.push(to_toml(&x.map_err(|e| e.to_string())?)?);
        }
        return Ok(toml::Value::Array(a));
    }
    let tn = v
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    Err(format!(
        "a value of type {tn} cannot be written in a device file (use str, int, float, bool or a list of them)"
    ))
}

/// A validated device: the resolved configuration and the file it came from.
#[pyclass(frozen, module = "ssdlab._core", name = "DeviceHandle")]
struct DeviceHandle {
    dev: Device,
    file: DeviceFile,
    source: String,
}

#[pymethods]
impl DeviceHandle {
    /// Device name.
    #[getter]
    fn name(&self) -> String {
        self.dev.name.clone()
    }
    /// One-line description.
    #[getter]
    fn description(&self) -> String {
        self.dev.description.clone()
    }
    /// Where the description came from (file name or `preset NAME`).
    #[getter]
    fn source(&self) -> String {
        self.source.clone()
    }
    /// Exported capacity in bytes.
    #[getter]
    fn capacity_bytes(&self) -> u64 {
        self.dev.capacity_bytes()
    }
    /// Raw NAND capacity in bytes.
    #[getter]
    fn raw_bytes(&self) -> u64 {
        self.dev.nand.raw_bytes()
    }
    /// Estimated simulator memory for this device, bytes.
    #[getter]
    fn memory_bytes(&self) -> u64 {
        ssdlab_core::device::memory_estimate(&self.dev)
    }
    /// fio's `$pagesize`, `$ncpus`, `$mb_memory` on this device's host
    /// (`None` for a value the host leaves at 0).
    #[getter]
    fn host_keywords(&self) -> (u64, Option<u32>, Option<u64>) {
        keywords_of(&self.dev.host, &self.dev)
    }
    /// The resolved, typed configuration as JSON (times in ps, sizes in bytes).
    fn resolved_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.dev).map_err(|e| PyValueError::new_err(e.to_string()))
    }
    /// The device file as JSON, every default filled in (values as written in TOML).
    fn file_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.file).map_err(|e| PyValueError::new_err(e.to_string()))
    }
    /// The device file as TOML, every default filled in.
    fn to_toml(&self) -> PyResult<String> {
        toml::to_string_pretty(&self.file).map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// A parsed fio workload.
#[pyclass(frozen, module = "ssdlab._core", name = "WorkloadHandle")]
struct WorkloadHandle {
    wl: Workload,
    name: String,
}

#[pymethods]
impl WorkloadHandle {
    /// Workload name (file name or description).
    #[getter]
    fn name(&self) -> String {
        self.name.clone()
    }
    /// Options accepted without effect: (option, reason) pairs.
    #[getter]
    fn ignored(&self) -> Vec<(String, String)> {
        self.wl
            .ignored
            .iter()
            .map(|i| (i.option.clone(), i.reason.clone()))
            .collect()
    }
    /// The jobs after `[global]` defaults, as JSON (times in ns, sizes in bytes).
    fn jobs_json(&self) -> String {
        let jobs: Vec<serde_json::Value> = self
            .wl
            .jobs
            .iter()
            .map(|j| {
                serde_json::json!({
                    "name": j.name,
                    "random": j.rw.random,
                    "read_pct": j.rw.read_pct,
                    "bs": j.bs,
                    "iodepth": j.iodepth,
                    "numjobs": j.numjobs,
                    "size": j.size,
                    "offset": j.offset,
                    "io_size": j.io_size,
                    "number_ios": j.number_ios,
                    "runtime_ns": j.runtime.map(|t| t.as_ns()),
                    "time_based": j.time_based,
                    "ramp_time_ns": j.ramp_time.as_ns(),
                    "randseed": j.randseed,
                    "norandommap": j.norandommap,
                    "trim": format!("{:?}", j.trim).to_lowercase(),
                    "trim_bs": j.trim_bs,
                    "fsync": j.fsync,
                    "end_fsync": j.end_fsync,
                    "direct": j.direct,
                    "rate": j.rate,
                    "rate_iops": j.rate_iops,
                    "rate_process": format!("{:?}", j.rate_process).to_lowercase(),
                    "thinktime_ns": j.thinktime.as_ns(),
                    "thinktime_blocks": j.thinktime_blocks,
                    "stonewall": j.stonewall,
                    "wait_for": j.wait_for,
                    "group": j.group,
                    "replay": j.read_iolog.as_ref().map(|t| t.path.display().to_string()),
                })
            })
            .collect();
        serde_json::Value::Array(jobs).to_string()
    }
}

/// A validated system: host, PCIe fabric (root complex, switches) and drives.
#[pyclass(frozen, module = "ssdlab._core", name = "SystemHandle")]
struct SystemHandle {
    cfg: SystemConfig,
    file: SystemFile,
    source: String,
}

#[pymethods]
impl SystemHandle {
    /// fio's `$pagesize`, `$ncpus`, `$mb_memory` on this system's host.
    #[getter]
    fn host_keywords(&self) -> (u64, Option<u32>, Option<u64>) {
        keywords_of(&self.cfg.host, &self.cfg.drives[0].device)
    }
    /// System name.
    #[getter]
    fn name(&self) -> String {
        self.cfg.name.clone()
    }
    /// One-line description.
    #[getter]
    fn description(&self) -> String {
        self.cfg.description.clone()
    }
    /// Where the description came from (file name or `system preset NAME`).
    #[getter]
    fn source(&self) -> String {
        self.source.clone()
    }
    /// The drives' names, in file order.
    #[getter]
    fn drive_names(&self) -> Vec<String> {
        self.cfg.drives.iter().map(|d| d.name.clone()).collect()
    }
    /// The topology as resolved, as JSON: root complex, switches (with
    /// their uplinks as trained) and drives (device, attachment, link).
    fn info_json(&self) -> PyResult<String> {
        use ssdlab_core::system::config::Parent;
        let c = &self.cfg;
        let parent = |p: Parent| match p {
            Parent::Root => "root".to_string(),
            Parent::Switch(j) => c.switches[j].name.clone(),
        };
        let bw = |l: &ssdlab_core::config::PcieConfig| {
            ssdlab_core::pcie::Link::new(l).effective_bandwidth().0
        };
        let v = serde_json::json!({
            "name": c.name,
            "description": c.description,
            "root_complex": {
                "generation": c.root_generation,
                "lanes": c.root_lanes,
                "ports": c.root_ports,
            },
            "switches": c.switches.iter().map(|s| serde_json::json!({
                "name": s.name,
                "upstream": parent(s.upstream),
                "upstream_generation": s.uplink.generation,
                "upstream_lanes": s.uplink.lanes,
                "uplink_payload_bw_bytes_per_s": bw(&s.uplink),
                "downstream_generation": s.downstream_generation,
                "downstream_lanes": s.downstream_lanes,
                "ports": s.ports,
                "latency_ns": s.latency.as_ns_f64(),
                "power_w": s.power_w,
            })).collect::<Vec<_>>(),
            "drives": c.drives.iter().map(|d| serde_json::json!({
                "name": d.name,
                "device": d.device.name,
                "attach": parent(d.attach),
                "generation": d.link.generation,
                "lanes": d.link.lanes,
                "payload_bw_bytes_per_s": bw(&d.link),
                "capacity_bytes": d.device.capacity_bytes(),
                "memory_bytes": ssdlab_core::device::memory_estimate(&d.device),
            })).collect::<Vec<_>>(),
        });
        serde_json::to_string(&v).map_err(|e| PyValueError::new_err(e.to_string()))
    }
    /// The system file as JSON, every default filled in (values as written in TOML).
    fn file_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.file).map_err(|e| PyValueError::new_err(e.to_string()))
    }
    /// The system file as TOML, every default filled in and every override applied.
    fn to_toml(&self) -> PyResult<String> {
        toml::to_string_pretty(&self.file).map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

/// A flag another Python thread can set to stop a running simulation.
#[pyclass(frozen, module = "ssdlab._core", name = "StopFlag")]
#[derive(Default)]
struct StopFlag(Arc<AtomicBool>);

#[pymethods]
impl StopFlag {
    #[new]
    fn new() -> Self {
        StopFlag::default()
    }
    /// Ask the run to stop (at its next poll, within 65,536 events).
    fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
    /// Clear the flag.
    fn clear(&self) {
        self.0.store(false, Ordering::Relaxed);
    }
    /// Whether the flag is set.
    fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The presets (shipped files and generated variants): (name, description) pairs.
#[pyfunction]
fn presets() -> Vec<(String, String)> {
    ssdlab_core::config::preset_names()
        .into_iter()
        .map(|n| {
            let d = ssdlab_core::config::preset_text(&n)
                .and_then(|t| DeviceFile::from_toml_str(&t, &n).ok())
                .map(|f| f.description)
                .unwrap_or_default();
            (n, d)
        })
        .collect()
}

/// The TOML text of a preset, or None.
#[pyfunction]
fn preset_text(name: &str) -> Option<String> {
    ssdlab_core::config::preset_text(name).map(|t| t.to_string())
}

/// Name of the default device.
#[pyfunction]
fn default_device() -> &'static str {
    ssdlab_core::config::DEFAULT_DEVICE
}

/// (key path, Python value) pairs as TOML overrides; a value TOML cannot
/// hold is a `ConfigError` problem at its key.
fn toml_overrides(
    py: Python<'_>,
    source: &str,
    overrides: &[(String, Bound<'_, PyAny>)],
) -> PyResult<Vec<(String, toml::Value)>> {
    let mut ov = Vec::with_capacity(overrides.len());
    let mut bad = Vec::new();
    for (k, v) in overrides {
        match to_toml(v) {
            Ok(t) => ov.push((k.clone(), t)),
            Err(m) => bad.push(ConfigProblem {
                key: k.clone(),
                message: m,
            }),
        }
    }
    if !bad.is_empty() {
        return Err(config_error(
            py,
            ConfigError {
                source: source.to_string(),
                problems: bad,
            },
        ));
    }
    Ok(ov)
}

/// Parse a device file, apply `overrides` ((key path, value) pairs) and
/// validate; raises `ssdlab.ConfigError` with every problem.
#[pyfunction]
#[pyo3(signature = (text, source, overrides = Vec::new()))]
fn load_device(
    py: Python<'_>,
    text: &str,
    source: &str,
    overrides: Vec<(String, Bound<'_, PyAny>)>,
) -> PyResult<DeviceHandle> {
    let ov = toml_overrides(py, source, &overrides)?;
    // The same door as the CLI's device files and `--set`: extends chain,
    // shorthands, overrides, validation.
    let (file, dev) =
        ssdlab_core::compose::load(text, source, &ov).map_err(|e| config_error(py, e))?;
    Ok(DeviceHandle {
        dev,
        file,
        source: source.to_string(),
    })
}

/// The system presets: (name, description) pairs.
#[pyfunction]
fn system_presets() -> Vec<(String, String)> {
    use ssdlab_core::system::config::{system_preset_names, system_preset_text};
    system_preset_names()
        .into_iter()
        .map(|n| {
            let d = system_preset_text(&n)
                .and_then(|t| SystemFile::from_toml_str(t, &n).ok())
                .map(|f| f.description)
                .unwrap_or_default();
            (n, d)
        })
        .collect()
}

/// The TOML text of a system preset, or None.
#[pyfunction]
fn system_preset_text(name: &str) -> Option<String> {
    ssdlab_core::system::config::system_preset_text(name).map(str::to_string)
}

/// One drive device given as text: (reference as the system file writes it
/// in `device = "..."`, TOML text, source, overrides).
type DeviceText<'py> = (String, String, String, Vec<(String, Bound<'py, PyAny>)>);

/// Parse a system file, apply `overrides` of its keys ((key path, value)
/// pairs) and validate, with every drive's device loaded as the CLI does
/// (a preset, or a file relative to the system file) unless `devices`
/// gives its text; `device_overrides` ((drive name or "*", key path,
/// value)) change the drives' devices. Raises `ssdlab.ConfigError` with
/// every problem.
#[pyfunction]
#[pyo3(signature = (text, source, overrides = Vec::new(), devices = Vec::new(), device_overrides = Vec::new()))]
fn load_system(
    py: Python<'_>,
    text: &str,
    source: &str,
    overrides: Vec<(String, Bound<'_, PyAny>)>,
    devices: Vec<DeviceText<'_>>,
    device_overrides: Vec<(String, String, Bound<'_, PyAny>)>,
) -> PyResult<SystemHandle> {
    use ssdlab_core::system::config::{
        drive_overrides, load_drive_device, load_system_with, source_dir,
    };
    let ov = toml_overrides(py, source, &overrides)?;
    let mut given = Vec::with_capacity(devices.len());
    for (r, t, src, o) in &devices {
        given.push((
            r.clone(),
            t.clone(),
            src.clone(),
            toml_overrides(py, src, o)?,
        ));
    }
    let mut dov: Vec<(String, String, toml::Value)> = Vec::new();
    let mut bad = Vec::new();
    for (d, k, v) in &device_overrides {
        match to_toml(v) {
            Ok(t) => dov.push((d.clone(), k.clone(), t)),
            Err(m) => bad.push(ConfigProblem {
                key: k.clone(),
                message: m,
            }),
        }
    }
    if !bad.is_empty() {
        return Err(config_error(
            py,
            ConfigError {
                source: source.to_string(),
                problems: bad,
            },
        ));
    }
    let dir = source_dir(source);
    let (file, cfg) = load_system_with(text, source, &ov, |_, d| {
        let extra = drive_overrides(&dov, &d.name);
        match given.iter().find(|(r, ..)| *r == d.device) {
            Some((_, t, src, o)) => {
                let all: Vec<_> = o.iter().cloned().chain(extra).collect();
                Ok(ssdlab_core::compose::load(t, src, &all)?.1)
            }
            None => load_drive_device(&d.device, &dir, &extra),
        }
    })
    .map_err(|e| config_error(py, e))?;
    Ok(SystemHandle {
        cfg,
        file,
        source: source.to_string(),
    })
}

/// Parse a fio job file's text; `file` names it in errors. Raises
/// `ssdlab.WorkloadError` (file, line, option, message).
#[pyfunction]
#[pyo3(signature = (text, file, name = None, keywords = None))]
fn parse_fio(
    py: Python<'_>,
    text: &str,
    file: &str,
    name: Option<String>,
    keywords: Option<(u64, Option<u32>, Option<u64>)>,
) -> PyResult<WorkloadHandle> {
    let kw = keywords.map(|(pagesize, ncpus, mb_memory)| fio::HostKeywords {
        pagesize,
        ncpus,
        mb_memory,
    });
    let wl = fio::parse_str_with(text, file, kw).map_err(|e| workload_error(py, e))?;
    Ok(WorkloadHandle {
        wl,
        name: name.unwrap_or_else(|| file.to_string()),
    })
}

/// fio's keyword values of a host and its (first) drive.
fn keywords_of(
    host: &ssdlab_core::config::HostConfig,
    dev: &Device,
) -> (u64, Option<u32>, Option<u64>) {
    (
        dev.ftl.mapping_unit.0,
        (host.cores > 0).then_some(host.cores),
        (host.memory.0 > 0).then_some(host.memory.0 >> 20),
    )
}

/// The built-in default workload (4 KiB random read, QD32, 1M I/Os).
#[pyfunction]
fn default_workload() -> WorkloadHandle {
    WorkloadHandle {
        wl: Workload::default_job(),
        name: "built-in randread-4k-qd32 (1M I/Os)".into(),
    }
}

/// Parse a duration such as "1ms" into nanoseconds (float).
#[pyfunction]
fn parse_time_ns(text: &str) -> PyResult<f64> {
    parse_time(text)
        .map(|t| t.as_ns_f64())
        .map_err(|e| PyValueError::new_err(e.0))
}

/// Why a run ended early.
enum Stop {
    Python(PyErr),
    Flag,
}

/// Run one simulation of a device or a system. Returns (report JSON, seconds spent in this call
/// outside the interpreter: validation of the run, preconditioning, the
/// simulation and the report).
///
/// `progress`, if given, is called as `progress(fraction_or_None,
/// ios_done, simulated_seconds)` every 65,536 events; an exception it
/// raises stops the run and propagates.
#[pyfunction]
#[pyo3(signature = (device, workload, seed = ssdlab_core::DEFAULT_SEED, precondition = "fill",
    sample_interval = None, latency_histogram = false, progress = None, stop = None,
    data_store = None, power_loss_at = None, after_recovery = None, later_power_losses = None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    device: &Bound<'_, PyAny>,
    workload: &Bound<'_, WorkloadHandle>,
    seed: u64,
    precondition: &str,
    sample_interval: Option<&str>,
    latency_histogram: bool,
    progress: Option<Py<PyAny>>,
    stop: Option<Bound<'_, StopFlag>>,
    data_store: Option<&str>,
    power_loss_at: Option<&str>,
    after_recovery: Option<Bound<'_, WorkloadHandle>>,
    later_power_losses: Option<Vec<(String, Option<Bound<'_, WorkloadHandle>>)>>,
) -> PyResult<(String, f64)> {
    let mut later = Vec::new();
    for (k, (t, h)) in later_power_losses
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        let at = parse_time(&t)
            .map_err(|e| PyValueError::new_err(format!("power_loss_at[{}]: {}", k + 1, e.0)))?;
        let job = h.map(|h| {
            let h = h.get();
            (h.wl.clone(), h.name.clone())
        });
        later.push((at, job));
    }
    let after_recovery: Option<(Workload, String)> = after_recovery.map(|h| {
        let h = h.get();
        (h.wl.clone(), h.name.clone())
    });
    let power_loss_at: Option<Time> = power_loss_at
        .map(|s| {
            parse_time(s).map_err(|e| PyValueError::new_err(format!("power_loss_at: {}", e.0)))
        })
        .transpose()?;
    let store = data_store
        .map(|s| {
            ssdlab_core::device::store::StoreSpec::parse(s)
                .map_err(|e| PyValueError::new_err(format!("data_store: {e}")))
        })
        .transpose()?;
    let pre = Precondition::parse(precondition).ok_or_else(|| {
        PyValueError::new_err(format!(
            "precondition '{precondition}': expected 'fresh', 'fill', 'steady' or 'steady-exact'"
        ))
    })?;
    let interval: Option<Time> = match sample_interval {
        None => None,
        Some(s) => {
            let t = parse_time(s)
                .map_err(|e| PyValueError::new_err(format!("sample_interval: {}", e.0)))?;
            ssdlab_core::check_sample_interval(t)
                .map_err(|e| PyValueError::new_err(format!("sample_interval: {e}")))?;
            Some(t)
        }
    };
    // A device, or a system of several (the spec's device is then the
    // first drive's, as simulate_system wants one set).
    let (dev, sys): (&Device, Option<&SystemConfig>) = if let Ok(d) = device.cast::<DeviceHandle>()
    {
        (&d.get().dev, None)
    } else if let Ok(h) = device.cast::<SystemHandle>() {
        let c = &h.get().cfg;
        (&c.drives[0].device, Some(c))
    } else {
        return Err(PyTypeError::new_err(
            "device: expected a DeviceHandle or a SystemHandle",
        ));
    };
    let wl: &WorkloadHandle = workload.get();
    let flag: Option<Arc<AtomicBool>> = stop.map(|s| s.get().0.clone());
    let outcome: Result<(String, f64), Result<SimError, Stop>> = py.detach(move || {
        let t0 = Instant::now();
        let mut spec = RunSpec::new(dev.clone(), wl.wl.clone(), wl.name.clone());
        spec.seed = seed;
        spec.precondition = pre;
        spec.sample_interval = interval;
        spec.latency_histogram = latency_histogram;
        spec.data_store = store;
        spec.power_loss_at = power_loss_at;
        spec.after_recovery = after_recovery;
        spec.later_power_losses = later;
        let stopped: RefCell<Option<Stop>> = RefCell::new(None);
        let stop_cb = || {
            if flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed)) {
                *stopped.borrow_mut() = Some(Stop::Flag);
                return true;
            }
            if let Err(e) = Python::attach(|py| py.check_signals()) {
                *stopped.borrow_mut() = Some(Stop::Python(e));
                return true;
            }
            false
        };
        let mut progress_cb = |p: ssdlab_core::Progress| {
            let Some(cb) = progress.as_ref() else {
                return;
            };
            if stopped.borrow().is_some() {
                return;
            }
            let r = Python::attach(|py| {
                cb.call1(py, (p.fraction, p.ios_done, p.sim_time.as_secs_f64()))
                    .map(|_| ())
            });
            if let Err(e) = r {
                *stopped.borrow_mut() = Some(Stop::Python(e));
            }
        };
        // A progress callback that raised stops the run at the next poll.
        let stop_all = || stopped.borrow().is_some() || stop_cb();
        // The drive (mapping tables included) is freed inside simulate, so
        // that time is counted as core time too.
        let ran = match sys {
            Some(c) => ssdlab_core::simulate_system(c.clone(), &spec, &mut progress_cb, &stop_all)
                .map(|(r, _)| r),
            None => simulate(&spec, &mut progress_cb, &stop_all),
        };
        if let Some(s) = stopped.into_inner() {
            return Err(Err(s));
        }
        let rep = ran.map_err(Ok)?;
        let json = serde_json::to_string(&rep).map_err(|e| Ok(SimError::Device(e.to_string())))?;
        Ok((json, t0.elapsed().as_secs_f64()))
    });
    match outcome {
        Ok(v) => Ok(v),
        Err(Err(Stop::Python(e))) => Err(e),
        Err(Err(Stop::Flag)) => Err(simulation_error(
            py,
            "RunStopped",
            "the run was stopped by its StopFlag".into(),
        )),
        Err(Ok(SimError::Workload(e))) => Err(workload_error(py, e)),
        Err(Ok(SimError::Interrupted)) => Err(simulation_error(
            py,
            "RunStopped",
            "the run was interrupted".into(),
        )),
        Err(Ok(e)) => Err(simulation_error(py, "SimulationError", e.to_string())),
    }
}

/// Statistics of a block trace (one streaming pass) as JSON: read/write/
/// trim/flush mix, size histogram, footprint, inter-arrival percentiles.
/// Raises `ssdlab.WorkloadError` naming the file and line of a malformed record.
#[pyfunction]
#[pyo3(signature = (path, format = None, device = None, start = None, end = None))]
fn trace_stats(
    py: Python<'_>,
    path: &str,
    format: Option<&str>,
    device: Option<String>,
    start: Option<&str>,
    end: Option<&str>,
) -> PyResult<String> {
    use ssdlab_core::workload::trace::{stats, TraceFilter, TraceFormat, TraceReader};
    let fmt = format
        .map(|f| f.parse::<TraceFormat>())
        .transpose()
        .map_err(|e| PyValueError::new_err(format!("format: {e}")))?;
    let time = |k: &str, v: Option<&str>| -> PyResult<Option<Time>> {
        v.map(|s| parse_time(s).map_err(|e| PyValueError::new_err(format!("{k}: {}", e.0))))
            .transpose()
    };
    let filter = TraceFilter {
        device,
        start: time("start", start)?,
        end: time("end", end)?,
    };
    let werr = WorkloadError::from;
    let path = path.to_string();
    let out: Result<String, WorkloadError> = py.detach(move || {
        let r = TraceReader::open(std::path::Path::new(&path), fmt).map_err(werr)?;
        let st = stats(r, &filter).map_err(werr)?;
        serde_json::to_string(&st).map_err(|e| WorkloadError {
            file: path.clone(),
            line: 0,
            option: None,
            message: e.to_string(),
        })
    });
    out.map_err(|e| workload_error(py, e))
}

/// Check a Python value can be written in a device file (for early errors).
#[pyfunction]
fn check_value(v: &Bound<'_, PyAny>) -> PyResult<()> {
    to_toml(v).map(|_| ()).map_err(PyTypeError::new_err)
}

/// The compiled core of the ssdlab Python package.
/// Parse the knobs shared by `csd_run` and `csd_kernel_time`.
fn csd_variant(
    cus: u32,
    local_buffer: Option<&str>,
    pipeline: bool,
) -> PyResult<ssdlab_core::csd::timing::Variant> {
    let local_buffer = match local_buffer {
        Some(s) => Some(
            ssdlab_core::units::parse_bytes(s)
                .map_err(|e| PyValueError::new_err(format!("local_buffer: {}", e.0)))?
                .0,
        ),
        None => None,
    };
    Ok(ssdlab_core::csd::timing::Variant {
        compute_units: cus,
        local_buffer,
        pipeline,
    })
}

/// Computational storage (seed 003): write inputs, P2P them flash -> FPGA,
/// run the kernel, write the result back; and the host baseline. Returns
/// the ssdlab.csd.v1 report as JSON and the output array read back from
/// the drive (vadd, merge).
#[pyfunction]
#[pyo3(signature = (device, kernel, elements, inputs = None, value = 7, cus = 1,
    local_buffer = None, pipeline = false, seed = ssdlab_core::DEFAULT_SEED,
    host_clock = "3.7GHz", io_block = "128KiB", io_depth = 32))]
#[allow(clippy::too_many_arguments)]
fn csd_run(
    py: Python<'_>,
    device: &Bound<'_, DeviceHandle>,
    kernel: &str,
    elements: u64,
    inputs: Option<Vec<Vec<i32>>>,
    value: i32,
    cus: u32,
    local_buffer: Option<&str>,
    pipeline: bool,
    seed: u64,
    host_clock: &str,
    io_block: &str,
    io_depth: u32,
) -> PyResult<(String, Option<Vec<i32>>)> {
    let mut spec = ssdlab_core::csd::CsdSpec::new(device.get().dev.clone(), kernel, elements);
    spec.inputs = inputs;
    spec.value = value;
    spec.variant = csd_variant(cus, local_buffer, pipeline)?;
    spec.seed = seed;
    spec.host_clock_hz = ssdlab_core::units::parse_frequency(host_clock)
        .map_err(|e| PyValueError::new_err(format!("host_clock: {}", e.0)))?;
    spec.io_block = ssdlab_core::units::parse_bytes(io_block)
        .map_err(|e| PyValueError::new_err(format!("io_block: {}", e.0)))?
        .0;
    spec.io_depth = io_depth;
    let r = py
        .detach(move || ssdlab_core::csd::run(&spec))
        .map_err(PyValueError::new_err)?;
    let json =
        serde_json::to_string(&r.report).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((json, r.output))
}

/// The FPGA timing model alone (no drive simulated): kernel `kernel` on
/// generated inputs of `elements` per array, as JSON (the result, the work,
/// the timing, and the host core's time at `host_clock`).
#[pyfunction]
#[pyo3(signature = (device, kernel, elements, cus = 1, local_buffer = None, pipeline = false,
    seed = ssdlab_core::DEFAULT_SEED, host_clock = "3.7GHz", value = 7))]
#[allow(clippy::too_many_arguments)]
fn csd_kernel_time(
    device: &Bound<'_, DeviceHandle>,
    kernel: &str,
    elements: u64,
    cus: u32,
    local_buffer: Option<&str>,
    pipeline: bool,
    seed: u64,
    host_clock: &str,
    value: i32,
) -> PyResult<String> {
    use ssdlab_core::csd;
    let dev = &device.get().dev;
    let f = dev.fpga.as_ref().ok_or_else(|| {
        PyValueError::new_err(format!(
            "device '{}' has no [fpga] section: it is not a computational storage drive",
            dev.name
        ))
    })?;
    let k = csd::kernel::kernel(kernel).map_err(PyValueError::new_err)?;
    let v = csd_variant(cus, local_buffer, pipeline)?;
    csd::timing::kernel_time(f, k, &csd::kernel::Work::default(), &v)
        .map_err(PyValueError::new_err)?;
    let inputs = csd::generate_inputs(k, elements, seed);
    let (output, _, work) =
        csd::kernel::compute(k, &inputs, value).map_err(PyValueError::new_err)?;
    let t = csd::timing::kernel_time(f, k, &work, &v).map_err(PyValueError::new_err)?;
    let hz = ssdlab_core::units::parse_frequency(host_clock)
        .map_err(|e| PyValueError::new_err(format!("host_clock: {}", e.0)))?;
    let cpu = csd::host_cpu::HostCpu::i7_8700k(hz);
    cpu.check().map_err(PyValueError::new_err)?;
    let host_s = cpu.kernel_time(k, &work).as_secs_f64();
    let v = serde_json::json!({
        "kernel": k.name,
        "result": output,
        "work": work,
        "variant": v,
        "timing": t,
        "fpga_s": (t.launch + t.run).as_secs_f64(),
        "host_s": host_s,
    });
    Ok(v.to_string())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("DEFAULT_SEED", ssdlab_core::DEFAULT_SEED)?;
    m.add_class::<DeviceHandle>()?;
    m.add_class::<WorkloadHandle>()?;
    m.add_class::<SystemHandle>()?;
    m.add_class::<StopFlag>()?;
    serve::register(m)?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(preset_text, m)?)?;
    m.add_function(wrap_pyfunction!(default_device, m)?)?;
    m.add_function(wrap_pyfunction!(load_device, m)?)?;
    m.add_function(wrap_pyfunction!(system_presets, m)?)?;
    m.add_function(wrap_pyfunction!(system_preset_text, m)?)?;
    m.add_function(wrap_pyfunction!(load_system, m)?)?;
    m.add_function(wrap_pyfunction!(parse_fio, m)?)?;
    m.add_function(wrap_pyfunction!(default_workload, m)?)?;
    m.add_function(wrap_pyfunction!(parse_time_ns, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(csd_run, m)?)?;
    m.add_function(wrap_pyfunction!(csd_kernel_time, m)?)?;
    m.add_function(wrap_pyfunction!(check_value, m)?)?;
    m.add_function(wrap_pyfunction!(trace_stats, m)?)?;
    Ok(())
}
