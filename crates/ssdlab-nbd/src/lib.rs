//! ssdlab's nbdkit plugin: serves a simulated drive over NBD, each request
//! taking the time the simulated drive says it takes
//! ([`ssdlab_core::serve`]). nbdkit (Debian's `nbdkit` package) supplies the
//! protocol, Unix and TCP sockets, TLS, multi-conn and its filters; this
//! plugin supplies the data and the timing.
//!
//! `ssdlab serve` starts it; by hand:
//! `nbdkit -f -U /tmp/ssd.sock target/release/libssdlab_nbd.so device=pm9a3-960g backing=/tmp/ssd.img`
//! (`nbdkit target/release/libssdlab_nbd.so --help` lists the keys).
//! `report=PATH` writes the serving report (`ssdlab.serve.v1`, with the
//! simulated drive's `ssdlab.report.v1` inside) when nbdkit exits.

use nbdkit::*;
use ssdlab_core::serve::{ServeError, ServeSpec, Server as SimServer};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// `key=value` parameters given to nbdkit, in order.
static PARAMS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
/// Where to write the report when nbdkit exits.
static REPORT: Mutex<Option<PathBuf>> = Mutex::new(None);
/// The checked parameters, between `config_complete` and `after_fork`.
static SPEC: Mutex<Option<ServeSpec>> = Mutex::new(None);
/// The running server.
static SERVER: Mutex<Option<Arc<SimServer>>> = Mutex::new(None);
/// Connections opened so far (each gets the next NVMe queue pair).
static NEXT_CONN: AtomicU32 = AtomicU32::new(0);

/// One client connection.
struct Ssd {
    conn: u32,
    server: Arc<SimServer>,
}

fn err(e: ServeError) -> Error {
    let errno = match e {
        ServeError::Invalid(_) => libc::EINVAL,
        ServeError::Io(_) => libc::EIO,
        ServeError::Shutdown => libc::ESHUTDOWN,
    };
    Error::new(errno, e.to_string())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Server for Ssd {
    fn name() -> &'static str {
        "ssdlab"
    }

    fn description() -> Option<&'static str> {
        Some("a simulated SSD (ssdlab), served in real time")
    }

    fn config_help() -> Option<&'static str> {
        Some(
            "device=NAME|FILE     preset or device TOML file (default pm9a3-960g)\n\
             system=FILE          system TOML file; drive=NAME picks the served drive\n\
             set=KEY=VALUE        override a device/system value (repeatable)\n\
             backing=PATH         sparse file holding the data (kept; default: temporary)\n\
             precondition=fresh|fill|steady|steady-exact   (default fill)\n\
             clock=wall|simulated  wall (default): released in real time; simulated: as soon as simulated\n\
             seed=N queues=N max_transfer=SIZE lookahead=TIME spin=TIME late_threshold=TIME\n\
             report=PATH          write the serving report (JSON) when nbdkit exits",
        )
    }

    fn config(key: &str, value: &str) -> Result<()> {
        if key == "report" {
            *lock(&REPORT) = Some(PathBuf::from(value));
        } else {
            lock(&PARAMS).push((key.to_string(), value.to_string()));
        }
        Ok(())
    }

    fn config_complete() -> Result<()> {
        let spec =
            ServeSpec::from_params(&lock(&PARAMS)).map_err(|e| Error::new(libc::EINVAL, e))?;
        *lock(&SPEC) = Some(spec);
        Ok(())
    }

    fn thread_model() -> Result<ThreadModel> {
        Ok(ThreadModel::Parallel)
    }

    /// Threads start here: after nbdkit has forked into the background.
    fn after_fork() -> Result<()> {
        let Some(spec) = lock(&SPEC).take() else {
            return Err(Error::new(libc::EINVAL, "ssdlab: no configuration"));
        };
        let server = SimServer::start(spec).map_err(|e| Error::new(libc::EINVAL, e.to_string()))?;
        *lock(&SERVER) = Some(Arc::new(server));
        Ok(())
    }

    fn unload() {
        let Some(server) = lock(&SERVER).take() else {
            return;
        };
        match server.stop() {
            Ok((serve, sim)) => {
                eprint!("{}", serve.to_text());
                if let Some(p) = lock(&REPORT).as_ref() {
                    let json = serve.to_json(&sim);
                    let text = serde_json::to_string_pretty(&json).unwrap_or_default();
                    if let Err(e) = std::fs::write(p, text + "\n") {
                        eprintln!("ssdlab: report={}: cannot write: {e}", p.display());
                    }
                }
            }
            Err(e) => eprintln!("ssdlab: the simulation failed: {e}"),
        }
    }

    fn open(_readonly: bool) -> Result<Box<dyn Server>> {
        let Some(server) = lock(&SERVER).clone() else {
            return Err(Error::new(
                libc::ESHUTDOWN,
                "ssdlab: the server is not running",
            ));
        };
        let conn = NEXT_CONN.fetch_add(1, Ordering::Relaxed);
        Ok(Box::new(Ssd { conn, server }))
    }

    fn get_size(&self) -> Result<i64> {
        i64::try_from(self.server.capacity())
            .map_err(|_| Error::new(libc::EFBIG, "export too large"))
    }

    fn is_rotational(&self) -> Result<bool> {
        Ok(false)
    }

    fn can_flush(&self) -> Result<bool> {
        Ok(true)
    }

    fn can_trim(&self) -> Result<bool> {
        Ok(true)
    }

    fn can_zero(&self) -> Result<bool> {
        Ok(true)
    }

    fn can_fua(&self) -> Result<FuaFlags> {
        Ok(FuaFlags::Native)
    }

    /// Every connection shares one drive and one backing file: a flush on
    /// any makes every completed write durable.
    fn can_multi_conn(&self) -> Result<bool> {
        Ok(true)
    }

    /// Holes (never written or trimmed) are reported, so copies of a sparse
    /// drive (nbdcopy, qemu-img convert) skip them.
    fn can_extents(&self) -> Result<bool> {
        Ok(true)
    }

    fn extents(&self, count: u32, offset: u64, _flags: Flags, h: &mut ExtentHandle) -> Result<()> {
        for (at, len, data) in self.server.extents(offset, count as u64).map_err(err)? {
            let kind = if data {
                ExtentType::Allocated
            } else {
                ExtentType::HoleZero
            };
            h.add(at, len, kind)?;
        }
        Ok(())
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> Result<()> {
        self.server
            .read(self.conn, offset, buf)
            .map(drop)
            .map_err(err)
    }

    fn write_at(&self, buf: &[u8], offset: u64, flags: Flags) -> Result<()> {
        self.server
            .write(self.conn, offset, buf, flags.contains(Flags::FUA))
            .map(drop)
            .map_err(err)
    }

    fn flush(&self) -> Result<()> {
        self.server.flush(self.conn).map(drop).map_err(err)
    }

    fn trim(&self, count: u32, offset: u64, flags: Flags) -> Result<()> {
        self.server
            .trim(self.conn, offset, count as u64, flags.contains(Flags::FUA))
            .map(drop)
            .map_err(err)
    }

    fn zero(&self, count: u32, offset: u64, flags: Flags) -> Result<()> {
        if flags.contains(Flags::FAST_ZERO) && !flags.contains(Flags::MAY_TRIM) {
            // Writing zeros costs a write's time: not fast.
            return Err(Error::new(
                libc::ENOTSUP,
                "ssdlab: zeroing without trim is not fast",
            ));
        }
        self.server
            .zero(
                self.conn,
                offset,
                count as u64,
                flags.contains(Flags::MAY_TRIM),
                flags.contains(Flags::FUA),
            )
            .map(drop)
            .map_err(err)
    }
}

plugin!(Ssd {
    config,
    config_complete,
    thread_model,
    after_fork,
    unload,
    is_rotational,
    can_flush,
    can_trim,
    can_zero,
    can_fua,
    can_multi_conn,
    can_extents,
    extents,
    write_at,
    flush,
    trim,
    zero
});
