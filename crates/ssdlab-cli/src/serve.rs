//! `ssdlab serve`: a simulated drive served in real time over NBD, by
//! nbdkit (Debian's `nbdkit` package) with ssdlab's plugin
//! (crates/ssdlab-nbd). The options are checked here, then this process
//! becomes nbdkit (exec), so signals reach the server directly: Ctrl-C or
//! SIGTERM stops it and prints (or writes, with --report) the serving report.

use clap::Args;
use ssdlab_core::serve::ServeSpec;
use std::ffi::OsString;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Args)]
pub struct ServeArgs {
    /// Drive: preset name or device TOML file.
    #[arg(long)]
    device: Option<String>,
    /// Serve a drive of a system (host, PCIe fabric, several drives): system preset or file.
    #[arg(long, value_name = "NAME|PATH")]
    system: Option<String>,
    /// Which drive of --system to serve (default: its first).
    #[arg(long, value_name = "NAME")]
    drive: Option<String>,
    /// Change one value of the device or system: KEY=VALUE (repeatable), as for `ssdlab run`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Sparse file holding the drive's data (created if missing, kept): restart on it to get the data back. Default: a temporary file, unlinked as soon as it is open (nothing is left behind).
    #[arg(long, value_name = "PATH")]
    backing: Option<PathBuf>,
    /// Serve on this Unix socket (the default, at a temporary path).
    #[arg(long, value_name = "PATH", conflicts_with = "listen")]
    socket: Option<PathBuf>,
    /// Serve over TCP on ADDR:PORT. Anything but a loopback address needs --expose.
    #[arg(long, value_name = "ADDR:PORT")]
    listen: Option<String>,
    /// Allow --listen on a non-loopback address (anyone who reaches it can read and write the drive).
    #[arg(long)]
    expose: bool,
    /// Export read-only.
    #[arg(long)]
    readonly: bool,
    /// Precondition the simulated drive: fresh, fill, steady or steady-exact.
    #[arg(long, default_value = "fill")]
    precondition: String,
    /// Seed.
    #[arg(long, default_value_t = ssdlab_core::DEFAULT_SEED)]
    seed: u64,
    /// NVMe queue pairs; connection k uses pair k mod queues.
    #[arg(long, default_value_t = 8)]
    queues: u32,
    /// Largest NVMe command (larger requests are split), e.g. 1MiB.
    #[arg(long, value_name = "SIZE", default_value = "1MiB")]
    max_transfer: String,
    /// What paces serving: wall (requests released in real time) or simulated (released as soon as simulated; simulated time advances only with the requests).
    #[arg(long, value_name = "CLOCK", default_value = "wall")]
    clock: String,
    /// How far the simulation may run ahead of the wall clock (arrivals inside it are placed late and counted).
    #[arg(long, value_name = "TIME", default_value = "20us")]
    lookahead: String,
    /// Spin rather than sleep for the last part of each wait before a release.
    #[arg(long, value_name = "TIME", default_value = "20us")]
    spin: String,
    /// A release later than this after its simulated completion is counted late.
    #[arg(long, value_name = "TIME", default_value = "20us")]
    late_threshold: String,
    /// Write the serving report (JSON: served vs simulated latency, lag, and the drive's own report) here at exit.
    #[arg(long, value_name = "PATH")]
    report: Option<PathBuf>,
    /// Run COMMAND against the served drive ($uri, $unixsocket as nbdkit sets them), then stop (nbdkit's captive mode).
    #[arg(long, value_name = "COMMAND")]
    run: Option<String>,
    /// nbdkit binary.
    #[arg(long, value_name = "PATH", default_value = "nbdkit")]
    nbdkit: String,
    /// The plugin (default: libssdlab_nbd.so next to this binary, or $SSDLAB_NBD_PLUGIN).
    #[arg(long, value_name = "PATH")]
    plugin: Option<PathBuf>,
}

/// The plugin's shared object: --plugin, $SSDLAB_NBD_PLUGIN, or next to this executable.
fn plugin_path(given: &Option<PathBuf>) -> Result<PathBuf, String> {
    let p = match given {
        Some(p) => p.clone(),
        None => match std::env::var_os("SSDLAB_NBD_PLUGIN") {
            Some(p) => PathBuf::from(p),
            None => {
                let exe = std::env::current_exe()
                    .map_err(|e| format!("cannot locate this executable: {e}"))?;
                exe.parent()
                    .unwrap_or(Path::new("."))
                    .join("libssdlab_nbd.so")
            }
        },
    };
    if !p.is_file() {
        return Err(format!(
            "the NBD plugin '{}' does not exist: build it with `cargo build --release -p ssdlab-nbd` (or give --plugin PATH)",
            p.display()
        ));
    }
    Ok(p)
}

/// `nbdkit` on PATH (or the path given).
fn nbdkit_path(name: &str) -> Result<PathBuf, String> {
    let found = if name.contains('/') {
        Some(PathBuf::from(name)).filter(|p| p.is_file())
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
    };
    found.ok_or_else(|| {
        format!(
            "'{name}' not found: ssdlab serves through nbdkit; install Debian's package (apt-get install nbdkit; scripts/test.sh does) or give --nbdkit PATH"
        )
    })
}

/// A plugin-key error (`serve: key 'max_transfer': ...`) as one naming the
/// command-line option (`--max-transfer: ...`).
fn as_option(e: &str) -> String {
    let Some(rest) = e.strip_prefix("serve: key '") else {
        return e.strip_prefix("serve: ").unwrap_or(e).to_string();
    };
    match rest.split_once('\'') {
        Some((k, tail)) => format!("--{}{tail}", k.replace('_', "-")),
        None => e.to_string(),
    }
}

/// `ADDR:PORT` (IPv6 as `[::1]:PORT`), and whether ADDR is loopback.
fn parse_listen(s: &str) -> Result<(String, u16, bool), String> {
    let bad = || {
        format!("--listen: expected ADDR:PORT such as 127.0.0.1:10809 or [::1]:10809, got '{s}'")
    };
    let (addr, port) = s.rsplit_once(':').ok_or_else(bad)?;
    let port: u16 = port.parse().ok().filter(|&p| p > 0).ok_or_else(bad)?;
    let host = addr.trim_start_matches('[').trim_end_matches(']');
    let loopback = match host {
        "localhost" => true,
        _ => host.parse::<IpAddr>().map_err(|_| bad())?.is_loopback(),
    };
    Ok((host.to_string(), port, loopback))
}

pub fn run(a: ServeArgs) -> Result<ExitCode, String> {
    // The plugin's parameters, checked here first so mistakes are reported
    // by ssdlab, naming the option.
    let mut params: Vec<(String, String)> = Vec::new();
    let mut p = |k: &str, v: &str| params.push((k.to_string(), v.to_string()));
    if let Some(d) = &a.device {
        p("device", d);
    }
    if let Some(s) = &a.system {
        p("system", s);
    }
    if let Some(d) = &a.drive {
        p("drive", d);
    }
    for s in &a.set {
        p("set", s);
    }
    if let Some(b) = &a.backing {
        let b = std::path::absolute(b).map_err(|e| format!("--backing {}: {e}", b.display()))?;
        p("backing", &b.display().to_string());
    }
    p("precondition", &a.precondition);
    p("seed", &a.seed.to_string());
    p("queues", &a.queues.to_string());
    p("max_transfer", &a.max_transfer);
    p("clock", &a.clock);
    p("lookahead", &a.lookahead);
    p("spin", &a.spin);
    p("late_threshold", &a.late_threshold);
    let spec = ServeSpec::from_params(&params).map_err(|e| as_option(&e))?;
    let plugin = plugin_path(&a.plugin)?;
    let nbdkit = nbdkit_path(&a.nbdkit)?;

    let mut args: Vec<OsString> = vec!["-f".into()];
    let uri = match (&a.listen, &a.socket) {
        (Some(l), _) => {
            let (host, port, loopback) = parse_listen(l)?;
            if !loopback && !a.expose {
                return Err(format!(
                    "--listen {l}: not a loopback address; anyone who can reach it could read and write the drive. Add --expose to serve on it anyway"
                ));
            }
            if !loopback {
                eprintln!("warning: serving on {l}, a non-loopback address, without TLS: anyone who can reach it can read and write the drive");
            }
            args.extend([
                "-i".into(),
                host.clone().into(),
                "-p".into(),
                port.to_string().into(),
            ]);
            let h = if host.contains(':') {
                format!("[{host}]")
            } else {
                host
            };
            format!("nbd://{h}:{port}/")
        }
        (None, None) if a.run.is_some() => {
            // Captive: nbdkit makes a private socket and removes it after
            // (it leaves a named one behind: a later server whose process
            // id matched an old one's found its path taken).
            args.extend(["-U".into(), "-".into()]);
            String::new()
        }
        (None, s) => {
            let sock = match s {
                Some(s) => {
                    std::path::absolute(s).map_err(|e| format!("--socket {}: {e}", s.display()))?
                }
                None => {
                    let sock = std::env::temp_dir()
                        .join(format!("ssdlab-nbd-{}.sock", std::process::id()));
                    remove_if_stale(&sock);
                    sock
                }
            };
            if sock.exists() {
                return Err(format!(
                    "--socket {}: the path exists (another server? remove it first)",
                    sock.display()
                ));
            }
            args.extend(["-U".into(), sock.clone().into_os_string()]);
            format!("nbd+unix:///?socket={}", sock.display())
        }
    };
    if a.readonly {
        args.push("-r".into());
    }
    if let Some(cmd) = &a.run {
        args.extend(["--run".into(), cmd.into()]);
    }
    args.push(plugin.into_os_string());
    for (k, v) in &params {
        args.push(format!("{k}={v}").into());
    }
    if let Some(r) = &a.report {
        let r = std::path::absolute(r).map_err(|e| format!("--report {}: {e}", r.display()))?;
        args.push(format!("report={}", r.display()).into());
    }
    let dev = spec
        .system
        .drives
        .iter()
        .find(|d| d.name == spec.drive)
        .map(|d| {
            format!(
                "{} ({:.1} GB)",
                d.device.name,
                d.device.capacity_bytes() as f64 / 1e9
            )
        })
        .unwrap_or_default();
    eprintln!(
        "ssdlab serve: {} {dev}, preconditioned {}; backing {}",
        spec.drive,
        a.precondition,
        a.backing
            .as_ref()
            .map_or("a temporary file".to_string(), |b| b.display().to_string())
    );
    if a.run.is_none() {
        // The URI on stdout, alone on its line, for scripts.
        println!("{uri}");
        eprintln!(
            "connect with: nbdinfo '{uri}'   (Ctrl-C stops the server and prints its report)"
        );
    }
    exec(&nbdkit, &args)
}

/// Remove `sock` if it is a socket nothing listens on (nbdkit leaves its
/// socket behind when it exits; the default path, named after this
/// process's id, may be an old server's).
#[cfg(unix)]
fn remove_if_stale(sock: &Path) {
    use std::os::unix::fs::FileTypeExt;
    let is_socket = std::fs::symlink_metadata(sock).is_ok_and(|m| m.file_type().is_socket());
    if is_socket
        && std::os::unix::net::UnixStream::connect(sock)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::ConnectionRefused)
    {
        let _ = std::fs::remove_file(sock);
    }
}

#[cfg(not(unix))]
fn remove_if_stale(_: &Path) {}

#[cfg(unix)]
fn exec(nbdkit: &Path, args: &[OsString]) -> Result<ExitCode, String> {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    let _ = std::io::stdout().flush();
    let e = std::process::Command::new(nbdkit).args(args).exec();
    Err(format!("cannot start {}: {e}", nbdkit.display()))
}

#[cfg(not(unix))]
fn exec(_: &Path, _: &[OsString]) -> Result<ExitCode, String> {
    Err("ssdlab serve needs a Unix system (nbdkit)".into())
}

#[cfg(test)]
mod tests {
    use super::{as_option, parse_listen};

    #[cfg(unix)]
    #[test]
    fn a_stale_socket_is_removed_and_a_live_one_kept() {
        let dir = std::env::temp_dir().join(format!("ssdlab-stale-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let sock = dir.join("s.sock");
        drop(std::os::unix::net::UnixListener::bind(&sock).unwrap());
        assert!(sock.exists(), "a closed listener leaves its socket file");
        super::remove_if_stale(&sock);
        assert!(!sock.exists());
        let live = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        super::remove_if_stale(&sock);
        assert!(sock.exists(), "a socket something listens on stays");
        drop(live);
        // Not a socket: left alone.
        let file = dir.join("f");
        std::fs::write(&file, b"x").unwrap();
        super::remove_if_stale(&file);
        assert!(file.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn plugin_key_errors_name_the_option() {
        assert_eq!(
            as_option("serve: key 'max_transfer': expected a size, got 'x'"),
            "--max-transfer: expected a size, got 'x'"
        );
        assert_eq!(
            as_option("serve: key 'set' given twice"),
            "--set given twice"
        );
        assert_eq!(
            as_option("serve: keys 'system' and 'device' together"),
            "keys 'system' and 'device' together"
        );
    }

    #[test]
    fn listen_addresses_are_parsed_and_classified() {
        assert_eq!(
            parse_listen("127.0.0.1:10809").unwrap(),
            ("127.0.0.1".into(), 10809, true)
        );
        assert_eq!(parse_listen("[::1]:99").unwrap(), ("::1".into(), 99, true));
        assert_eq!(
            parse_listen("localhost:1").unwrap(),
            ("localhost".into(), 1, true)
        );
        assert!(!parse_listen("0.0.0.0:10809").unwrap().2);
        assert!(!parse_listen("192.168.1.5:10809").unwrap().2);
        for bad in [
            "10809",
            "127.0.0.1:",
            "127.0.0.1:0",
            "host:70000",
            "example.com:10809",
        ] {
            let e = parse_listen(bad).unwrap_err();
            assert!(e.contains("--listen") && e.contains(bad), "{e}");
        }
    }
}
