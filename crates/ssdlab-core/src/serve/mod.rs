//! Serving a simulated drive in real time: requests from outside (an NBD
//! server's connection threads, see crates/ssdlab-nbd) enter the simulated
//! system at their wall-clock arrival and are released when the wall clock
//! reaches their simulated completion.
//!
//! * **Timing.** One engine thread owns the [`System`]. Simulated time is
//!   wall time since the server started (after preconditioning). The engine
//!   takes each request as it arrives, schedules it on the host queue of
//!   its connection at its arrival time, and processes events only up to
//!   the wall clock plus an optional look-ahead, so a request that arrives
//!   later can still be placed in the past of no event already processed
//!   (with no look-ahead, never). A request is released at its simulated
//!   completion; one released later than that by more than
//!   [`ServeSpec::late_threshold`] is counted late, with its lag.
//! * **Data.** The drive's data lives in a sparse file (the functional data
//!   store, [`DataStore`]): a write's data is written into it when the
//!   request arrives, a read's data is read when the request is released,
//!   and a flush (or a FUA write) makes the file durable (`fdatasync`)
//!   before it is acknowledged. Writes reach the file before they are
//!   acknowledged, so a killed server loses nothing it acknowledged; only
//!   a crash of the machine can lose writes that were never flushed.
//! * **Requests.** Reads, writes, flushes, trims and write-zeroes map to
//!   NVMe Read, Write, Flush, Dataset Management (deallocate) and Write
//!   Zeroes (timed as a deallocate when the client allows holes, else as a
//!   write); a FUA write is a write followed by a flush on the same queue.
//!   Requests larger than [`ServeSpec::max_transfer`] are split into
//!   commands of that size (the driver's MDTS split) issued together.
//!
//! See docs/models/serving.md.

mod engine;
pub mod params;
mod stats;

use crate::config::Device;
use crate::device::store::DataStore;
use crate::device::Precondition;
use crate::report::Report;
use crate::system::config::SystemConfig;
use crate::system::{SimError, System};
use crate::units::Time;
use crate::workload::{JobSpec, Workload};
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::Mutex;
use std::time::Instant;

pub use stats::{LatencySummary, ServeReport, ServeStats};

/// How to serve a drive.
#[derive(Debug, Clone)]
pub struct ServeSpec {
    /// The system the drive is part of (one drive: [`SystemConfig::single`]).
    pub system: SystemConfig,
    /// Built from a system file (reports list drives and links).
    pub multi: bool,
    /// The served drive's name in the system.
    pub drive: String,
    /// The sparse file holding the drive's data (created if missing, kept);
    /// `None`: a temporary file, unlinked as soon as it is open.
    pub backing: Option<PathBuf>,
    /// Preconditioning of the simulated drive before serving.
    pub precondition: Precondition,
    /// Seed.
    pub seed: u64,
    /// NVMe queue pairs; connection `k` uses pair `k mod queues`.
    pub queues: u32,
    /// Largest command, bytes (a larger request is split).
    pub max_transfer: u64,
    /// How far the simulation may run ahead of the wall clock.
    pub lookahead: Time,
    /// A request released later than its simulated completion by more than
    /// this is counted late.
    pub late_threshold: Time,
    /// How much of the wait before each release is spent spinning on a core
    /// rather than sleeping (a sleeping thread wakes a few microseconds late).
    pub spin: Time,
    /// Print a line on stderr at the 1st, 10th, 100th, ... late release.
    pub warn: bool,
    /// What paces serving: the wall clock (the default) or the simulation alone.
    pub clock: ServeClock,
}

/// What paces serving.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServeClock {
    /// Simulated time is wall time since the server started; each request
    /// enters at its wall-clock arrival and is released at its simulated
    /// completion (the drive's real-time behaviour, as a client sees it).
    #[default]
    Wall,
    /// Simulated time advances only with the requests: each one enters at the
    /// simulation's present instant and is released as soon as it has been
    /// simulated, however long that takes on the wall clock. For filling an
    /// image quickly, functional tests and fuzzing; with one client the
    /// simulated latencies are deterministic (the same requests give the
    /// same times on any machine). Look-ahead, spin and lateness do not apply.
    Simulated,
}

impl ServeClock {
    /// `wall` or `simulated`.
    pub fn parse(s: &str) -> Option<ServeClock> {
        match s {
            "wall" => Some(ServeClock::Wall),
            "simulated" => Some(ServeClock::Simulated),
            _ => None,
        }
    }
}

impl ServeSpec {
    /// Serve `device` alone (one drive behind a root port), fill-preconditioned,
    /// on a temporary backing file.
    pub fn new(device: Device) -> ServeSpec {
        let mut spec = ServeSpec::new_system(SystemConfig::single(device));
        spec.multi = false;
        spec
    }

    /// Whether the spec can be served: the drive exists, the queue count
    /// and the transfer size fit it. Errors name the parameter key.
    pub fn check(&self) -> Result<(), String> {
        if !(1..=65_535).contains(&self.queues) {
            return Err(format!(
                "serve: key 'queues': expected a whole number from 1 to 65535, got '{}'",
                self.queues
            ));
        }
        let Some(d) = self.system.drives.iter().find(|d| d.name == self.drive) else {
            return Err(format!(
                "serve: key 'drive': system '{}' has no drive '{}' (drives: {})",
                self.system.name,
                self.drive,
                self.system
                    .drives
                    .iter()
                    .map(|d| d.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        };
        let unit = d.device.ftl.mapping_unit.0;
        if self.max_transfer < unit || !self.max_transfer.is_multiple_of(unit) {
            return Err(format!(
                "serve: key 'max_transfer': {} B must be a whole number of the drive's {unit} B mapping units",
                self.max_transfer
            ));
        }
        Ok(())
    }

    /// Serve the first drive of `system` (change [`ServeSpec::drive`] for another).
    pub fn new_system(system: SystemConfig) -> ServeSpec {
        let drive = system
            .drives
            .first()
            .map_or_else(|| "nvme0".to_string(), |d| d.name.clone());
        ServeSpec {
            system,
            multi: true,
            drive,
            backing: None,
            precondition: Precondition::Fill,
            seed: crate::DEFAULT_SEED,
            queues: 8,
            max_transfer: 1 << 20,
            lookahead: Time::us(20),
            late_threshold: Time::us(20),
            spin: Time::us(20),
            warn: true,
            clock: ServeClock::Wall,
        }
    }
}

/// One request, as the NBD protocol gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Request {
    /// Read `len` bytes at `offset`.
    Read {
        /// Byte offset.
        offset: u64,
        /// Bytes.
        len: u64,
    },
    /// Write at `offset` (the data is passed alongside); `fua`: durable
    /// before it completes.
    Write {
        /// Byte offset.
        offset: u64,
        /// Bytes.
        len: u64,
        /// Forced unit access.
        fua: bool,
    },
    /// Make every completed write durable.
    Flush,
    /// Deallocate `len` bytes at `offset` (they read as zeros).
    Trim {
        /// Byte offset.
        offset: u64,
        /// Bytes.
        len: u64,
        /// Forced unit access.
        fua: bool,
    },
    /// Write zeros; `may_trim`: the client allows deallocating instead.
    Zero {
        /// Byte offset.
        offset: u64,
        /// Bytes.
        len: u64,
        /// The client allows a hole (deallocate).
        may_trim: bool,
        /// Forced unit access.
        fua: bool,
    },
}

impl Request {
    fn kind(&self) -> usize {
        match self {
            Request::Read { .. } => 0,
            Request::Write { .. } => 1,
            Request::Flush => 2,
            Request::Trim { .. } => 3,
            Request::Zero { .. } => 4,
        }
    }

    fn range(&self) -> (u64, u64) {
        match *self {
            Request::Read { offset, len }
            | Request::Write { offset, len, .. }
            | Request::Trim { offset, len, .. }
            | Request::Zero { offset, len, .. } => (offset, len),
            Request::Flush => (0, 0),
        }
    }
}

/// How long a served request took.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Served {
    /// Arrival to completion in the simulated drive.
    pub simulated: Time,
    /// Arrival to release, wall clock (never less than `simulated`); with
    /// [`ServeClock::Simulated`], equal to `simulated`.
    pub served: Time,
}

/// The data a request carries or returns.
enum Payload<'a> {
    None,
    Read(&'a mut [u8]),
    Write(&'a [u8]),
}

/// A request refused or failed: what to tell the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServeError {
    /// Outside the export, or not allowed (EINVAL).
    Invalid(String),
    /// The data store or the simulation failed (EIO).
    Io(String),
    /// The server is stopping (ESHUTDOWN).
    Shutdown,
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Invalid(s) | ServeError::Io(s) => f.write_str(s),
            ServeError::Shutdown => f.write_str("the server is shutting down"),
        }
    }
}

/// A message to the engine thread.
enum Msg {
    Io {
        q: u32,
        req: Request,
        arrival: Instant,
        /// Simulated (arrival, completion), or why the request failed.
        reply: mpsc::SyncSender<Result<(Time, Time), String>>,
    },
}

/// A drive being served: the engine thread, the data store and the statistics.
pub struct Server {
    tx: Mutex<Option<mpsc::Sender<Msg>>>,
    engine: Mutex<Option<std::thread::JoinHandle<Result<engine::EngineOut, SimError>>>>,
    store: DataStore,
    capacity: u64,
    /// Simulated time zero.
    start: Instant,
    queues: u32,
    late_threshold: Time,
    /// The last part of a wait before a release is spent spinning, not sleeping.
    spin: std::time::Duration,
    /// Print a line when releases fall behind.
    warn: bool,
    clock: ServeClock,
    stats: Mutex<ServeStats>,
    name: String,
}

impl Server {
    /// Build and precondition the system, open the backing file, and start
    /// the engine thread (simulated time zero is now).
    pub fn start(spec: ServeSpec) -> Result<Server, SimError> {
        spec.check().map_err(SimError::Device)?;
        let di = spec
            .system
            .drives
            .iter()
            .position(|d| d.name == spec.drive)
            .unwrap_or(0);
        let dev = &spec.system.drives[di].device;
        let capacity = dev.capacity_bytes();
        let unit = dev.ftl.mapping_unit.0;
        let write_buffer = dev.cache.write_buffer.0;
        let max_qd = dev.nvme.max_queue_depth;
        let max_transfer = spec.max_transfer.min(write_buffer / unit * unit).max(unit);
        let store = match &spec.backing {
            Some(p) => DataStore::file(p, capacity, false),
            None => {
                let p = std::env::temp_dir().join(format!(
                    "ssdlab-serve-{}-{}.img",
                    std::process::id(),
                    spec.drive
                ));
                let _ = std::fs::remove_file(&p);
                DataStore::file(&p, capacity, true)
            }
        }
        .map_err(|e| SimError::Device(e.0))?;
        let job = JobSpec {
            name: "nbd".into(),
            numjobs: spec.queues,
            iodepth: max_qd.saturating_sub(1).max(1),
            live: true,
            filename: spec.multi.then(|| spec.drive.clone()),
            ..JobSpec::default()
        };
        let workload = Workload {
            jobs: vec![job],
            ..Workload::default()
        };
        let name = spec.system.name.clone();
        let mut sys = if spec.multi {
            System::from_config(
                spec.system.clone(),
                &workload,
                "serve",
                spec.seed,
                spec.precondition,
            )?
        } else {
            let dev = spec.system.drives[di].device.clone();
            System::new(dev, &workload, "serve", spec.seed, spec.precondition)?
        };
        sys.live_start()?;
        let (tx, rx) = mpsc::channel();
        let start = Instant::now();
        let cfg = engine::EngineCfg {
            start,
            lookahead: spec.lookahead,
            clock: spec.clock,
            unit,
            max_transfer,
        };
        let handle = std::thread::Builder::new()
            .name("ssdlab-serve".into())
            .spawn(move || engine::run(sys, rx, cfg))
            .map_err(|e| SimError::Device(format!("cannot start the serving thread: {e}")))?;
        Ok(Server {
            tx: Mutex::new(Some(tx)),
            engine: Mutex::new(Some(handle)),
            store,
            capacity,
            start,
            queues: spec.queues,
            late_threshold: spec.late_threshold,
            spin: std::time::Duration::from_nanos(spec.spin.as_ns()),
            warn: spec.warn,
            clock: spec.clock,
            stats: Mutex::new(ServeStats::default()),
            name,
        })
    }

    /// Bytes the export holds.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The backing file (`file PATH`).
    pub fn backing(&self) -> String {
        self.store.backing_name()
    }

    /// Read `buf.len()` bytes at `offset` for connection `conn`; returns
    /// when the wall clock reaches the read's simulated completion.
    pub fn read(&self, conn: u32, offset: u64, buf: &mut [u8]) -> Result<Served, ServeError> {
        let len = buf.len() as u64;
        self.serve(conn, Request::Read { offset, len }, Payload::Read(buf))
    }

    /// Write `data` at `offset` (`fua`: durable before it completes).
    pub fn write(
        &self,
        conn: u32,
        offset: u64,
        data: &[u8],
        fua: bool,
    ) -> Result<Served, ServeError> {
        let len = data.len() as u64;
        self.serve(
            conn,
            Request::Write { offset, len, fua },
            Payload::Write(data),
        )
    }

    /// `len` bytes at `offset` lie inside the export, or a refusal saying where.
    fn in_bounds(&self, offset: u64, len: u64) -> Result<(), ServeError> {
        if offset.checked_add(len).is_none_or(|e| e > self.capacity) {
            return Err(ServeError::Invalid(format!(
                "{len} B at byte {offset} lies beyond the export's {} B",
                self.capacity
            )));
        }
        Ok(())
    }

    /// Data and hole runs of `[offset, offset + len)` of the backing file, as
    /// (offset, length, data): a metadata query, with no simulated time.
    pub fn extents(&self, offset: u64, len: u64) -> Result<Vec<(u64, u64, bool)>, ServeError> {
        self.in_bounds(offset, len)?;
        self.store
            .extents_shared(offset, len)
            .map_err(|e| ServeError::Io(e.0))
    }

    /// Make every completed write durable.
    pub fn flush(&self, conn: u32) -> Result<Served, ServeError> {
        self.serve(conn, Request::Flush, Payload::None)
    }

    /// Deallocate `len` bytes at `offset`.
    pub fn trim(&self, conn: u32, offset: u64, len: u64, fua: bool) -> Result<Served, ServeError> {
        self.serve(conn, Request::Trim { offset, len, fua }, Payload::None)
    }

    /// Write zeros (`may_trim`: deallocating is allowed).
    pub fn zero(
        &self,
        conn: u32,
        offset: u64,
        len: u64,
        may_trim: bool,
        fua: bool,
    ) -> Result<Served, ServeError> {
        self.serve(
            conn,
            Request::Zero {
                offset,
                len,
                may_trim,
                fua,
            },
            Payload::None,
        )
    }

    fn serve(&self, conn: u32, req: Request, mut data: Payload<'_>) -> Result<Served, ServeError> {
        let arrival = Instant::now();
        let (offset, len) = req.range();
        self.in_bounds(offset, len)?;
        let q = conn % self.queues;
        let (reply, done) = mpsc::sync_channel(1);
        {
            let tx = self.tx.lock().map_err(|_| ServeError::Shutdown)?;
            let Some(tx) = tx.as_ref() else {
                return Err(ServeError::Shutdown);
            };
            tx.send(Msg::Io {
                q,
                req,
                arrival,
                reply,
            })
            .map_err(|_| ServeError::Shutdown)?;
        }
        // The data side, while the drive works on the request.
        let io =
            |r: Result<(), crate::device::store::StoreError>| r.map_err(|e| ServeError::Io(e.0));
        match req {
            Request::Write { offset, fua, .. } => {
                if let Payload::Write(d) = &data {
                    io(self.store.write_shared(offset, d))?;
                }
                if fua {
                    io(self.store.sync())?;
                }
            }
            Request::Flush => io(self.store.sync())?,
            Request::Trim { offset, len, fua } => {
                io(self.store.trim_shared(offset, len))?;
                if fua {
                    io(self.store.sync())?;
                }
            }
            Request::Zero {
                offset, len, fua, ..
            } => {
                io(self.store.trim_shared(offset, len))?;
                if fua {
                    io(self.store.sync())?;
                }
            }
            Request::Read { .. } => {}
        }
        let (arrival_sim, end) = match done.recv() {
            Ok(Ok(times)) => times,
            Ok(Err(e)) => return Err(ServeError::Io(e)),
            Err(_) => return Err(ServeError::Shutdown),
        };
        if let (Request::Read { offset, .. }, Payload::Read(buf)) = (req, &mut data) {
            io(self.store.read_shared(offset, buf))?;
        }
        let simulated = end.saturating_sub(arrival_sim);
        let (served, lag) = match self.clock {
            ServeClock::Wall => {
                let due = self.start + std::time::Duration::from_nanos(end.as_ns());
                engine::sleep_until(due, self.spin);
                let released = Instant::now();
                (
                    Time::ns(released.saturating_duration_since(arrival).as_nanos() as u64),
                    Time::ns(released.saturating_duration_since(due).as_nanos() as u64),
                )
            }
            // Released once simulated: the client sees the simulated latency.
            ServeClock::Simulated => (simulated, Time::ZERO),
        };
        let late = lag > self.late_threshold;
        if let Ok(mut st) = self.stats.lock() {
            st.record(req.kind(), len, served, simulated, lag, late);
            // Say so when the machine cannot keep up: at the 1st, 10th,
            // 100th, ... late release (not on every one).
            let n = st.late();
            if late && self.warn && power_of_ten(n) {
                eprintln!(
                    "ssdlab serve: {n} of {} requests released more than {:.0} us after their simulated completion (this one {:.0} us late): the machine cannot keep up",
                    st.requests(),
                    self.late_threshold.as_ns_f64() / 1e3,
                    lag.as_ns_f64() / 1e3
                );
            }
        }
        Ok(Served { simulated, served })
    }

    /// Requests served so far (cheap: [`Server::stats`] also works out
    /// latency percentiles).
    pub fn total_requests(&self) -> u64 {
        self.stats.lock().map(|s| s.requests()).unwrap_or(0)
    }

    /// The statistics so far.
    pub fn stats(&self) -> ServeReport {
        let st = self.stats.lock().map(|s| s.report()).unwrap_or_default();
        ServeReport {
            clock: match self.clock {
                ServeClock::Wall => "wall",
                ServeClock::Simulated => "simulated",
            }
            .into(),
            wall_s: self.start.elapsed().as_secs_f64(),
            resident_bytes: self.store.resident_bytes(),
            ..st
        }
    }

    /// Stop: no new requests; the engine finishes those in flight and
    /// returns the simulated system's report for the whole time served.
    pub fn stop(&self) -> Result<(ServeReport, Report), SimError> {
        if let Ok(mut tx) = self.tx.lock() {
            tx.take();
        }
        let handle = self.engine.lock().ok().and_then(|mut h| h.take());
        let Some(handle) = handle else {
            return Err(SimError::Device("the server was already stopped".into()));
        };
        let out = handle.join().map_err(|_| {
            SimError::Device("the serving thread failed (an internal error)".into())
        })??;
        let mut report = self.stats();
        report.late_arrivals = out.late_arrivals;
        report.device = self.name.clone();
        report.backing = self.backing();
        Ok((report, out.report))
    }
}

/// `n` is 1, 10, 100, ...
fn power_of_ten(mut n: u64) -> bool {
    while n >= 10 && n.is_multiple_of(10) {
        n /= 10;
    }
    n == 1
}
