//! A simulated drive served in real time to Python code
//! (`ssdlab.serve.LiveDrive`): the same engine `ssdlab serve` puts behind
//! NBD, called directly. Every call waits, with the GIL released, until the
//! wall clock reaches the request's simulated completion.

use crate::{DeviceHandle, SystemHandle};
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use ssdlab_core::serve::{ServeError, ServeSpec, Served, Server};

fn err(e: ServeError) -> PyErr {
    match e {
        ServeError::Invalid(m) => PyValueError::new_err(m),
        ServeError::Io(m) => PyOSError::new_err(m),
        ServeError::Shutdown => PyRuntimeError::new_err("the drive is no longer served (stopped)"),
    }
}

/// (simulated, served) latency in microseconds.
fn us(s: Served) -> (f64, f64) {
    (s.simulated.as_ns_f64() / 1e3, s.served.as_ns_f64() / 1e3)
}

/// A drive served in real time.
#[pyclass(frozen, module = "ssdlab._core", name = "LiveServer")]
pub(crate) struct LiveServer {
    server: Server,
}

#[pymethods]
impl LiveServer {
    /// Serve `device` (a DeviceHandle, or a SystemHandle with `drive`).
    #[new]
    #[pyo3(signature = (device, drive = None, backing = None, precondition = "fill", seed = ssdlab_core::DEFAULT_SEED,
        queues = 8, max_transfer = "1MiB", clock = "wall", lookahead = "20us", spin = "20us", late_threshold = "20us"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        device: &Bound<'_, PyAny>,
        drive: Option<String>,
        backing: Option<String>,
        precondition: &str,
        seed: u64,
        queues: u32,
        max_transfer: &str,
        clock: &str,
        lookahead: &str,
        spin: &str,
        late_threshold: &str,
    ) -> PyResult<LiveServer> {
        let mut spec = if let Ok(d) = device.cast::<DeviceHandle>() {
            if drive.is_some() {
                return Err(PyValueError::new_err(
                    "drive: picks a drive of a system; give a System",
                ));
            }
            ServeSpec::new(d.get().dev.clone())
        } else if let Ok(s) = device.cast::<SystemHandle>() {
            let mut spec = ServeSpec::new_system(s.get().cfg.clone());
            if let Some(d) = drive {
                spec.drive = d;
            }
            spec
        } else {
            return Err(PyTypeError::new_err(
                "device: expected a Device or a System",
            ));
        };
        // Python keywords are the plugin's keys: one parser for both.
        let sets = [
            ("precondition", precondition.to_string()),
            ("seed", seed.to_string()),
            ("queues", queues.to_string()),
            ("max_transfer", max_transfer.to_string()),
            ("clock", clock.to_string()),
            ("lookahead", lookahead.to_string()),
            ("spin", spin.to_string()),
            ("late_threshold", late_threshold.to_string()),
        ];
        let keyed = |e: String| {
            PyValueError::new_err(e.replacen("serve: key '", "", 1).replacen('\'', "", 1))
        };
        for (k, v) in backing.map(|b| ("backing", b)).into_iter().chain(sets) {
            spec.set(k, &v).map_err(keyed)?;
        }
        spec.check().map_err(keyed)?;
        let server = py
            .detach(move || Server::start(spec))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(LiveServer { server })
    }

    /// Bytes the drive exports.
    #[getter]
    fn capacity(&self) -> u64 {
        self.server.capacity()
    }

    /// Read `length` bytes at `offset` on connection (queue) `conn`:
    /// (data, simulated us, served us).
    fn read<'py>(
        &self,
        py: Python<'py>,
        conn: u32,
        offset: u64,
        length: usize,
    ) -> PyResult<(Bound<'py, PyBytes>, f64, f64)> {
        if length > 1 << 30 {
            return Err(PyValueError::new_err(format!(
                "length: at most 1 GiB per request, got {length}"
            )));
        }
        let mut buf = vec![0u8; length];
        let s = py
            .detach(|| self.server.read(conn, offset, &mut buf))
            .map_err(err)?;
        let (a, b) = us(s);
        Ok((PyBytes::new(py, &buf), a, b))
    }

    /// Write `data` at `offset`: (simulated us, served us).
    fn write(
        &self,
        py: Python<'_>,
        conn: u32,
        offset: u64,
        data: Vec<u8>,
        fua: bool,
    ) -> PyResult<(f64, f64)> {
        py.detach(|| self.server.write(conn, offset, &data, fua))
            .map(us)
            .map_err(err)
    }

    /// Flush: (simulated us, served us).
    fn flush(&self, py: Python<'_>, conn: u32) -> PyResult<(f64, f64)> {
        py.detach(|| self.server.flush(conn)).map(us).map_err(err)
    }

    /// Deallocate `length` bytes at `offset`.
    fn trim(
        &self,
        py: Python<'_>,
        conn: u32,
        offset: u64,
        length: u64,
        fua: bool,
    ) -> PyResult<(f64, f64)> {
        py.detach(|| self.server.trim(conn, offset, length, fua))
            .map(us)
            .map_err(err)
    }

    /// Write zeros (`may_trim`: a deallocate will do).
    fn zero(
        &self,
        py: Python<'_>,
        conn: u32,
        offset: u64,
        length: u64,
        may_trim: bool,
        fua: bool,
    ) -> PyResult<(f64, f64)> {
        py.detach(|| self.server.zero(conn, offset, length, may_trim, fua))
            .map(us)
            .map_err(err)
    }

    /// Data and hole runs of the backing file: [(offset, length, data)].
    fn extents(&self, offset: u64, length: u64) -> PyResult<Vec<(u64, u64, bool)>> {
        self.server.extents(offset, length).map_err(err)
    }

    /// The serving report so far, as JSON.
    fn stats_json(&self) -> PyResult<String> {
        serde_json::to_string(&self.server.stats())
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Stop serving: the serving report with the simulated drive's report
    /// under `simulated`, as JSON.
    fn stop_json(&self, py: Python<'_>) -> PyResult<String> {
        let (rep, sim) = py
            .detach(|| self.server.stop())
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        serde_json::to_string(&rep.to_json(&sim)).map_err(|e| PyValueError::new_err(e.to_string()))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<LiveServer>()
}
