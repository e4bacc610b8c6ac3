//! `ssdlab serve` with real NBD clients (Debian's nbdkit, qemu-utils,
//! libnbd-bin and fio, installed by scripts/test.sh): data written through
//! one client reads back through another, several connections at once,
//! read-only exports, TCP on loopback, the serving report, a crash loop
//! (writes, flush, kill -9, restart, verify), and bad options.
//!
//! Without the tools these tests say so and pass, unless
//! SSDLAB_REQUIRE_NBD=1 (scripts/test.sh sets it), when they fail.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A small drive (about 10 GB) so tests start fast.
const SMALL: [&str; 4] = [
    "--set",
    "nand.blocks_per_plane=64",
    "--set",
    "ftl.over_provisioning=28%",
];

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
}

fn plugin() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_ssdlab"))
        .parent()
        .unwrap()
        .join("libssdlab_nbd.so")
}

/// Whether the NBD tools and the plugin are here (else skip, or fail when required).
fn ready(tools: &[&str]) -> bool {
    let mut missing: Vec<String> = tools
        .iter()
        .filter(|t| !on_path(t))
        .map(|t| t.to_string())
        .collect();
    if !plugin().is_file() {
        missing.push(format!(
            "{} (cargo build --release -p ssdlab-nbd)",
            plugin().display()
        ));
    }
    if missing.is_empty() {
        return true;
    }
    if std::env::var_os("SSDLAB_REQUIRE_NBD").is_some() {
        panic!(
            "SSDLAB_REQUIRE_NBD is set but these are missing: {}",
            missing.join(", ")
        );
    }
    eprintln!("skipped: missing {}", missing.join(", "));
    false
}

/// A private scratch directory, removed at the end.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let p = std::env::temp_dir().join(format!("ssdlab-cli-serve-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }
    fn join(&self, f: &str) -> PathBuf {
        self.0.join(f)
    }
    fn s(&self, f: &str) -> String {
        self.join(f).display().to_string()
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `ssdlab serve ARGS` (small drive), run to its end: (status, stdout, stderr).
fn serve(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ssdlab"))
        .arg("serve")
        .args(SMALL)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn report(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// The report's figures for one request kind.
fn kind<'a>(r: &'a serde_json::Value, k: &str) -> &'a serde_json::Value {
    r["requests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kind"] == k)
        .unwrap_or_else(|| panic!("no {k} in {r}"))
}

#[test]
fn a_captive_server_leaves_nothing_behind() {
    // nbdkit leaves a named socket behind when it exits; a later server
    // whose process id matched found the path taken and failed (a flaky
    // CI run). Captive servers now use nbdkit's private socket.
    if !ready(&["nbdkit", "nbdinfo"]) {
        return;
    }
    let tmp = Dir::new("captive");
    // Several runs: the temporary backing file was once left behind by a
    // run whose connection thread held the store at exit.
    for _ in 0..3 {
        let out = Command::new(env!("CARGO_BIN_EXE_ssdlab"))
            .arg("serve")
            .args(SMALL)
            .args(["--run", "nbdinfo --can connect \"$uri\""])
            .env("TMPDIR", &tmp.0)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Nothing at all: no socket (nbdkit's private one sits in a directory
    // of its own) and no temporary backing file (unlinked when opened).
    let left: Vec<_> = std::fs::read_dir(&tmp.0)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

#[test]
fn qemu_io_patterns_round_trip_and_the_report_shows_served_next_to_simulated() {
    if !ready(&["nbdkit", "qemu-io"]) {
        return;
    }
    let d = Dir::new("qemu");
    let script = r#"qemu-io -f raw -c "write -P 0xab 0 1M" -c "write -P 0xcd 1M 4k" -c "flush" -c "read -P 0xab 0 1M" -c "read -P 0xcd 1M 4k" -c "discard 0 64k" -c "read -P 0 0 64k" -c "write -z 2M 64k" -c "read -P 0 2M 64k" "$uri""#;
    let (code, out, err) = serve(&[
        "--backing",
        &d.s("d.img"),
        "--report",
        &d.s("r.json"),
        "--run",
        script,
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        !out.contains("fail") && !err.contains("fail"),
        "{out}\n{err}"
    );
    assert_eq!(out.matches("read ").count(), 4, "{out}");
    let r = report(&d.join("r.json"));
    assert_eq!(r["schema"], "ssdlab.serve.v1");
    assert_eq!(kind(&r, "read")["requests"], 4);
    assert_eq!(kind(&r, "trim")["requests"], 1);
    for k in ["read", "write", "flush"] {
        let x = kind(&r, k);
        let (served, sim) = (&x["served"], &x["simulated"]);
        assert!(
            served["p50_us"].as_f64().unwrap() >= sim["p50_us"].as_f64().unwrap() * 0.999,
            "{k}: released before its simulated completion: {x}"
        );
    }
    // Falling behind is said while serving, not only in the report: with a
    // zero threshold every release counts late.
    let (code, _, err) = serve(&[
        "--late-threshold",
        "0us",
        "--run",
        r#"qemu-io -f raw -c "read 0 4k" -c "read 4k 4k" -c "read 8k 4k" "$uri""#,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("requests released more than 0 us after their simulated completion"),
        "{err}"
    );
    assert!(err.contains("the machine cannot keep up"), "{err}");
    // The simulated drive's own report rides along.
    assert_eq!(r["simulated"]["schema"], "ssdlab.report.v1");
    // Two writes, and `write -z` without -u (no unmap: the client forbids a
    // hole), timed as a write; `discard` is the one deallocate.
    assert_eq!(kind(&r, "write_zeroes")["requests"], 1);
    assert_eq!(r["simulated"]["write"]["ios"], 3);
    assert_eq!(r["simulated"]["trim"]["ios"], 1);
    assert_eq!(r["simulated"]["read"]["ios"], 4);
}

#[test]
fn nbdinfo_sees_the_drive_and_a_readonly_export_refuses_writes() {
    if !ready(&["nbdkit", "nbdinfo", "qemu-io"]) {
        return;
    }
    let (code, out, err) = serve(&["--run", "nbdinfo --json \"$uri\""]);
    assert_eq!(code, 0, "{err}");
    let info: serde_json::Value =
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let e = &info["exports"][0];
    let o = ssdlab_core::compose::parse_sets(
        &SMALL[1..]
            .iter()
            .step_by(2)
            .map(|s| s.to_string())
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let dev = ssdlab_core::Device::load_with(ssdlab_core::config::DEFAULT_DEVICE, &o).unwrap();
    assert_eq!(e["export-size"].as_u64(), Some(dev.capacity_bytes()));
    for flag in [
        "can_flush",
        "can_fua",
        "can_trim",
        "can_zero",
        "can_multi_conn",
    ] {
        assert_eq!(e[flag], true, "{flag}: {e}");
    }
    assert_eq!(e["is_read_only"], false);
    assert_eq!(e["is_rotational"], false);

    let (code, out, err) = serve(&[
        "--readonly",
        "--run",
        "nbdinfo --json \"$uri\" && qemu-io -f raw -c 'write 0 4k' \"$uri\"",
    ]);
    assert!(out.contains("\"is_read_only\": true"), "{out}");
    assert!(
        code != 0
            || err.to_lowercase().contains("read-only")
            || out.to_lowercase().contains("read-only"),
        "a write to a read-only export: code {code}\n{out}\n{err}"
    );
}

#[test]
fn fio_nbd_engine_verifies_crc32c_over_several_connections() {
    if !ready(&["nbdkit", "fio"]) {
        return;
    }
    let d = Dir::new("fio");
    let job = "[global]\nioengine=nbd\nuri=${uri}\nrw=randwrite\nbs=4k\nsize=8m\niodepth=8\nverify=crc32c\ndo_verify=1\nverify_state_save=0\n\n[a]\noffset=0\n\n[b]\noffset=64m\n\n[c]\noffset=128m\nrw=randrw\nverify=0\nnumber_ios=2000\n";
    std::fs::write(d.join("v.fio"), job).unwrap();
    let cmd = format!(
        "env uri=\"$uri\" fio {} --output-format=json --output={}",
        d.s("v.fio"),
        d.s("fio.json")
    );
    let (code, out, err) = serve(&["--queues", "4", "--report", &d.s("r.json"), "--run", &cmd]);
    assert_eq!(code, 0, "fio failed (a verify error?)\n{out}\n{err}");
    let fio: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("fio.json")).unwrap()).unwrap();
    for j in fio["jobs"].as_array().unwrap() {
        assert_eq!(j["error"], 0, "{j}");
    }
    // Jobs a and b each wrote 8 MiB and read it all back to verify.
    let a = &fio["jobs"][0];
    assert_eq!(a["write"]["io_bytes"], 8 << 20);
    assert_eq!(a["read"]["io_bytes"], 8 << 20);
    let r = report(&d.join("r.json"));
    assert!(kind(&r, "read")["requests"].as_u64().unwrap() >= 4096);
    assert!(kind(&r, "write")["requests"].as_u64().unwrap() >= 4096);
}

/// nbdcopy in and out on the simulated clock (each request released as soon
/// as it is simulated): the data round trips and the report says so.
#[test]
fn nbdcopy_in_and_out_over_tcp_on_loopback() {
    if !ready(&["nbdkit", "nbdcopy"]) {
        return;
    }
    let d = Dir::new("copy");
    let data: Vec<u8> = (0..8u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(d.join("in.bin"), &data).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    let cmd = format!(
        "nbdcopy --connections=4 {inp} \"$uri\" && nbdcopy --connections=4 \"$uri\" {out}",
        inp = d.s("in.bin"),
        out = d.s("out.bin")
    );
    let rep = d.join("report.json");
    let (code, out, err) = serve(&[
        "--listen",
        &listen,
        "--clock",
        "simulated",
        "--report",
        &d.s("report.json"),
        "--run",
        &cmd,
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let r = report(&rep);
    assert_eq!(r["clock"], "simulated", "{r}");
    assert_eq!(r["lag"]["max_us"], 0.0, "{r}");
    let w = kind(&r, "write");
    assert_eq!(w["served"]["mean_us"], w["simulated"]["mean_us"], "{r}");
    // The copy is the whole (sparse) export: read only its head.
    let out_len = std::fs::metadata(d.join("out.bin")).unwrap().len();
    assert!(out_len > data.len() as u64 + (1 << 20), "{out_len}");
    let mut back = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(
            std::fs::File::open(d.join("out.bin")).unwrap(),
            data.len() as u64 + (1 << 20),
        ),
        &mut back,
    )
    .unwrap();
    assert!(back[..data.len()] == data[..], "the copied data differs");
    assert!(back[data.len()..data.len() + (1 << 20)]
        .iter()
        .all(|&b| b == 0));
}

/// Start a server on `sock` over `backing` (it becomes nbdkit: same pid),
/// ready when nbdinfo can connect.
fn start(sock: &Path, backing: &Path) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ssdlab"))
        .arg("serve")
        .args(SMALL)
        .args(["--precondition", "fresh", "--socket"])
        .arg(sock)
        .arg("--backing")
        .arg(backing)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let uri = format!("nbd+unix:///?socket={}", sock.display());
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(60) {
        if sock.exists()
            && Command::new("nbdinfo")
                .args(["--size", &uri])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        {
            return child;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the server on {} did not come up", sock.display());
}

fn qemu_io(sock: &Path, cmds: &[String]) -> String {
    let uri = format!("nbd+unix:///?socket={}", sock.display());
    let mut c = Command::new("qemu-io");
    c.args(["-f", "raw"]);
    for x in cmds {
        c.args(["-c", x]);
    }
    let out = c.arg(&uri).output().unwrap();
    let s =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "qemu-io {cmds:?}: {s}");
    s
}

/// Writes acknowledged and flushed survive `kill -9` of the server and a
/// restart on the same backing file (scripts/serve_crash_loop.sh runs 100
/// cycles).
#[test]
fn flushed_writes_survive_kill_9_and_restart() {
    if !ready(&["nbdkit", "nbdinfo", "qemu-io"]) {
        return;
    }
    let d = Dir::new("crash");
    let backing = d.join("d.img");
    let cycles = 4;
    for c in 0..cycles {
        let sock = d.join(&format!("s{c}.sock"));
        let mut child = start(&sock, &backing);
        // Every earlier cycle's flushed data is there.
        let checks: Vec<String> = (0..c)
            .map(|k| format!("read -P {} {} 64k", 0x10 + k, k * 1_048_576))
            .collect();
        if !checks.is_empty() {
            let out = qemu_io(&sock, &checks);
            assert!(!out.contains("fail"), "cycle {c}: {out}");
        }
        qemu_io(
            &sock,
            &[
                format!("write -P {} {} 64k", 0x10 + c, c * 1_048_576),
                "flush".into(),
            ],
        );
        child.kill().unwrap();
        let _ = child.wait();
    }
}

#[test]
fn bad_options_are_named() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["--queues", "0"],
            "--queues: expected a whole number from 1 to 65535, got '0'",
        ),
        (
            &["--precondition", "warm"],
            "--precondition: expected fresh, fill, steady or steady-exact",
        ),
        (
            &["--max-transfer", "1000"],
            "--max-transfer: expected a size",
        ),
        (
            &["--max-transfer", "1000B"],
            "--max-transfer: 1000 B must be a whole number",
        ),
        (
            &["--clock", "fast"],
            "--clock: expected wall or simulated, got 'fast'",
        ),
        (
            &["--lookahead", "2s"],
            "--lookahead: expected a time of at most 1s",
        ),
        (&["--listen", "0.0.0.0:10809"], "--expose"),
        (&["--listen", "10809"], "--listen: expected ADDR:PORT"),
        (&["--drive", "nvme3"], "--drive picks a drive of a system"),
        (&["--device", "no-such-drive"], "--device"),
        (
            &["--plugin", "/nonexistent/p.so"],
            "cargo build --release -p ssdlab-nbd",
        ),
        (
            &["--nbdkit", "/nonexistent/nbdkit"],
            "apt-get install nbdkit",
        ),
    ];
    for (args, want) in cases {
        let (code, out, err) = serve(args);
        assert_ne!(code, 0, "{args:?}: {out}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let d = Dir::new("bad");
    std::fs::write(d.join("taken.sock"), b"").unwrap();
    let (code, _, err) = serve(&["--socket", &d.s("taken.sock")]);
    assert_ne!(code, 0);
    assert!(err.contains("the path exists"), "{err}");
    // nbdkit started by hand with a bad key: the plugin names it.
    if ready(&["nbdkit"]) {
        let out = Command::new("nbdkit")
            .args(["-f", "-U", "-"])
            .arg(plugin())
            .args(["bogus=1", "--run", "true"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success());
        assert!(err.contains("unknown key 'bogus'"), "{err}");
    }
}
