//! Serving a simulated drive in real time (the engine behind the NBD
//! plugin), without nbdkit: data round trips, timing against the same
//! drive's batch simulation, request splitting and bad requests.
//! (tests/serve.rs of ssdlab-cli drives it with real NBD clients.)

use ssdlab_core::compose;
use ssdlab_core::config::Device;
use ssdlab_core::serve::{ServeClock, ServeError, ServeSpec, Server};
use ssdlab_core::units::Time;
use ssdlab_core::workload::fio;
use ssdlab_core::{simulate_quiet, RunSpec};

/// The default drive, small (about 10 GB exported) so tests start fast.
fn small() -> Device {
    let o = compose::parse_sets(&[
        "nand.blocks_per_plane=64".to_string(),
        "ftl.over_provisioning=28%".to_string(),
    ])
    .unwrap();
    Device::load_with(ssdlab_core::config::DEFAULT_DEVICE, &o).unwrap()
}

fn server(dir: &tempdir::Dir, spec_fn: impl FnOnce(&mut ServeSpec)) -> Server {
    let mut spec = ServeSpec::new(small());
    spec.backing = Some(dir.path().join("drive.img"));
    spec_fn(&mut spec);
    Server::start(spec).unwrap()
}

/// A private scratch directory, removed at the end.
mod tempdir {
    pub struct Dir(std::path::PathBuf);
    impl Dir {
        pub fn new(tag: &str) -> Dir {
            let p = std::env::temp_dir()
                .join(format!("ssdlab-serve-test-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
        pub fn path(&self) -> &std::path::Path {
            &self.0
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

#[test]
fn data_round_trips_and_trimmed_bytes_read_as_zeros() {
    let dir = tempdir::Dir::new("data");
    let s = server(&dir, |sp| sp.max_transfer = 65536);
    let data: Vec<u8> = (0..3 * 65536 + 1000).map(|i| (i * 7 + 3) as u8).collect();
    // Unaligned offset and length, larger than one command (split).
    s.write(0, 12_345, &data, false).unwrap();
    let mut back = vec![0u8; data.len()];
    s.read(1, 12_345, &mut back).unwrap();
    assert_eq!(back, data);
    s.trim(0, 12_345 + 4096, 8192, false).unwrap();
    s.zero(0, 12_345 + 65536, 100, false, true).unwrap();
    s.flush(2).unwrap();
    s.read(0, 12_345, &mut back).unwrap();
    let mut want = data.clone();
    want[4096..4096 + 8192].fill(0);
    want[65536..65536 + 100].fill(0);
    assert_eq!(back, want);
    let (rep, sim) = s.stop().unwrap();
    assert_eq!(rep.total_requests, 6);
    let kinds: Vec<&str> = rep.requests.iter().map(|k| k.kind.as_str()).collect();
    assert_eq!(kinds, ["read", "write", "flush", "trim", "write_zeroes"]);
    // The drive saw every command: 197,608 B from byte 12,345 spans four
    // 64 KiB-aligned pieces (max_transfer), so each read and the write are
    // 4 commands; the zeroing without trim is a write, and its FUA a flush.
    assert_eq!(sim.read.ios, 8);
    assert_eq!(sim.write.ios, 5);
    assert_eq!(sim.trim.ios, 1);
    assert_eq!(sim.flush.ios, 2);
}

#[test]
fn data_survives_a_restart_on_the_same_backing_file() {
    let dir = tempdir::Dir::new("restart");
    let data = vec![0x5au8; 65536];
    {
        let s = server(&dir, |_| {});
        s.write(0, 1 << 20, &data, true).unwrap();
        s.stop().unwrap();
    }
    let s = server(&dir, |_| {});
    let mut back = vec![0u8; 65536];
    s.read(0, 1 << 20, &mut back).unwrap();
    assert_eq!(back, data);
    let ext = s.extents(0, 4 << 20).unwrap();
    assert!(ext.contains(&(1 << 20, 65536, true)), "{ext:?}");
    assert!(ext.iter().any(|e| !e.2), "holes reported: {ext:?}");
    s.stop().unwrap();
}

#[test]
fn requests_beyond_the_export_are_refused_and_nothing_is_served_after_stop() {
    let dir = tempdir::Dir::new("bounds");
    let s = server(&dir, |_| {});
    let cap = s.capacity();
    let mut buf = vec![0u8; 4096];
    for off in [cap, cap - 100, u64::MAX - 10] {
        match s.read(0, off, &mut buf) {
            Err(ServeError::Invalid(m)) => assert!(m.contains("beyond the export"), "{m}"),
            other => panic!("read at {off}: {other:?}"),
        }
    }
    assert!(matches!(
        s.trim(0, cap - 4096, 8192, false),
        Err(ServeError::Invalid(_))
    ));
    assert!(matches!(s.extents(0, cap + 1), Err(ServeError::Invalid(_))));
    s.read(0, cap - 4096, &mut buf).unwrap();
    s.stop().unwrap();
    assert_eq!(s.read(0, 0, &mut buf), Err(ServeError::Shutdown));
    assert!(s.stop().is_err(), "a second stop says it was stopped");
}

/// `n` 4 KiB random reads at QD1 served by `s` (each released no earlier
/// than its simulated completion): their mean simulated latency, and the
/// batch simulation's mean for the same pattern on the same drive (ns).
fn qd1_means(s: &Server, n: u64) -> (f64, f64) {
    let cap = s.capacity();
    let mut buf = vec![0u8; 4096];
    let mut x: u64 = 12345;
    let mut sum = Time::ZERO;
    for _ in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let off = (x >> 11) % (cap / 4096) * 4096;
        let r = s.read(0, off, &mut buf).unwrap();
        assert!(r.served >= r.simulated - Time::ns(1), "{r:?}");
        sum += r.simulated;
    }
    let job = "[r]\nrw=randread\nbs=4k\niodepth=1\nnumber_ios=20000\n";
    let w = fio::parse_str(job, "qd1.fio").unwrap();
    let batch = simulate_quiet(&RunSpec::new(small(), w, "qd1")).unwrap();
    (sum.as_ns_f64() / n as f64, batch.read.lat_ns.mean)
}

/// At QD1 every request is released no earlier than its simulated
/// completion, and the simulated latency is what the batch simulation of the
/// same drive gives for the same access pattern (4 KiB random reads at QD1).
#[test]
fn qd1_reads_take_the_batch_simulations_latency() {
    let dir = tempdir::Dir::new("qd1");
    let s = server(&dir, |_| {});
    let n = 2000;
    let (served_mean, batch_mean) = qd1_means(&s, n);
    let rel = (served_mean - batch_mean).abs() / batch_mean;
    assert!(
        rel < 0.03,
        "served simulated mean {served_mean:.0} ns vs batch {batch_mean:.0} ns"
    );
    let (rep, _) = s.stop().unwrap();
    assert_eq!(rep.total_requests, n);
}

/// A fixed stream of requests (4 KiB random reads and writes, some FUA,
/// some 256 KiB, a flush and a trim every so often) served by one client;
/// the simulated latency of each.
fn simulated_stream(s: &Server, n: u64) -> Vec<Time> {
    let cap = s.capacity();
    let mut x: u64 = 777;
    let mut lat = Vec::new();
    let mut buf = vec![0u8; 256 << 10];
    for i in 0..n {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let len = if x & 0xf0 == 0 { 256 << 10 } else { 4096 };
        let off = (x >> 13) % ((cap - len) / 4096) * 4096;
        let r = match i % 16 {
            7 => s.flush(0),
            11 => s.trim(0, off, len, false),
            k if k % 2 == 0 => s.read(0, off, &mut buf[..len as usize]),
            k => s.write(0, off, &buf[..len as usize], k == 3),
        }
        .unwrap();
        assert_eq!(r.served, r.simulated, "{r:?}");
        lat.push(r.simulated);
    }
    lat
}

/// On the simulated clock a request is released as soon as it is
/// simulated: one client's stream gets the same simulated latencies on
/// every run (no wall-clock arrival in them), nothing is late, and QD1
/// reads take the batch simulation's latency as on the wall clock.
#[test]
fn the_simulated_clock_repeats_exactly_and_keeps_the_drives_timing() {
    let dir = tempdir::Dir::new("simclock");
    let mut runs = Vec::new();
    for k in 0..2 {
        let s = server(&dir, |sp| {
            sp.clock = ServeClock::Simulated;
            sp.backing = Some(dir.path().join(format!("drive{k}.img")));
        });
        let lat = simulated_stream(&s, 3000);
        let (rep, sim) = s.stop().unwrap();
        assert_eq!(rep.total_requests, 3000);
        assert_eq!(rep.late, 0);
        assert!(sim.write.ios > 0 && sim.read.ios > 0);
        runs.push(lat);
    }
    assert_eq!(runs[0], runs[1], "the same stream, the same latencies");
    // Writes keep the drive busy after they complete (buffer flushes): the
    // times are not all equal.
    assert!(runs[0].iter().any(|&t| t != runs[0][0]));

    let s = server(&dir, |sp| sp.clock = ServeClock::Simulated);
    let (served_mean, batch_mean) = qd1_means(&s, 2000);
    let rel = (served_mean - batch_mean).abs() / batch_mean;
    assert!(
        rel < 0.01,
        "served simulated mean {served_mean:.0} ns vs batch {batch_mean:.0} ns"
    );
    s.stop().unwrap();
}

/// Several connections at once, each on its own queue pair: every write
/// reads back, from any connection.
#[test]
fn concurrent_connections_keep_every_write() {
    let dir = tempdir::Dir::new("conc");
    let s = std::sync::Arc::new(server(&dir, |sp| sp.queues = 4));
    let threads: Vec<_> = (0..6u32)
        .map(|c| {
            let s = s.clone();
            std::thread::spawn(move || {
                for i in 0..200u64 {
                    let off = (i * 6 + c as u64) * 8192;
                    let data = vec![(c as u8) ^ (i as u8); 8192];
                    s.write(c, off, &data, false).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut buf = vec![0u8; 8192];
    for c in 0..6u64 {
        for i in 0..200u64 {
            s.read(9, (i * 6 + c) * 8192, &mut buf).unwrap();
            assert!(
                buf.iter().all(|&b| b == (c as u8) ^ (i as u8)),
                "conn {c} write {i}"
            );
        }
    }
    let (rep, sim) = s.stop().unwrap();
    assert_eq!(rep.total_requests, 2400);
    assert_eq!(sim.write.ios, 1200);
}

#[test]
fn bad_parameters_are_refused_by_key() {
    let p = |kv: &[(&str, &str)]| {
        let v: Vec<(String, String)> = kv
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        ServeSpec::from_params(&v).unwrap_err()
    };
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[("queues", "0")],
            "'queues': expected a whole number from 1 to 65535, got '0'",
        ),
        (
            &[("precondition", "warm")],
            "'precondition': expected fresh, fill, steady or steady-exact",
        ),
        (
            &[("lookahead", "5s")],
            "'lookahead': expected a time of at most 1s",
        ),
        (&[("spin", "10")], "'spin': expected a time such as 20us"),
        (
            &[("clock", "fast")],
            "'clock': expected wall or simulated, got 'fast'",
        ),
        (
            &[("max_transfer", "big")],
            "'max_transfer': expected a size",
        ),
        (&[("bogus", "1")], "unknown key 'bogus'"),
        (&[("seed", "1"), ("seed", "2")], "'seed' given twice"),
        (&[("drive", "nvme1")], "'drive' picks a drive of a system"),
        (&[("device", "no-such-drive")], "key 'device'"),
        (&[("set", "nand.channels=zero")], "nand.channels"),
    ];
    for (kv, want) in cases {
        let e = p(kv);
        assert!(e.contains(want), "{kv:?}: {e}");
    }
    let mut spec = ServeSpec::new(small());
    spec.max_transfer = 1000;
    let e = Server::start(spec).err().unwrap().to_string();
    assert!(
        e.contains("'max_transfer': 1000 B must be a whole number"),
        "{e}"
    );
}

/// One drive of a system (host, switch, four drives) served: its requests
/// reach that drive only, through the fabric.
#[test]
fn a_drive_of_a_system_is_served() {
    let dir = tempdir::Dir::new("system");
    let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
    let mut spec = ServeSpec::from_params(&[
        kv("system", "seed002-4x-gen3-switch"),
        kv("drive", "nvme2"),
        kv("set", "drives.nand.blocks_per_plane=128"),
        kv("set", "drives.ftl.over_provisioning=28%"),
        kv("set", "drives.ftl.slc_static=256MB"),
        kv("set", "drives.ftl.slc_dynamic=1GB"),
        kv("precondition", "fresh"),
        kv(
            "backing",
            &dir.path().join("nvme2.img").display().to_string(),
        ),
    ])
    .unwrap();
    spec.queues = 2;
    let s = Server::start(spec).unwrap();
    let data = vec![0xc3u8; 65536];
    s.write(0, 0, &data, false).unwrap();
    let mut back = vec![0u8; 65536];
    s.read(1, 0, &mut back).unwrap();
    assert_eq!(back, data);
    let (_, sim) = s.stop().unwrap();
    assert_eq!(sim.drives.len(), 4, "a system report lists its drives");
    for (name, d) in &sim.drives {
        let (w, r) = (d.write.ios, d.read.ios);
        if name == "nvme2" {
            assert_eq!((w, r), (1, 1), "{name}");
        } else {
            assert_eq!((w, r), (0, 0), "{name}");
        }
    }
    let e = ServeSpec::from_params(&[kv("system", "seed002-4x-gen3-switch"), kv("drive", "nvme9")])
        .unwrap_err();
    assert!(
        e.contains("no drive 'nvme9'") && e.contains("nvme0, nvme1"),
        "{e}"
    );
}

mod any_request_sequence {
    use super::*;
    use proptest::prelude::*;

    /// Requests of any kind, offset and length (in bounds or not, empty or
    /// not) against a shadow copy of the first MiB: no panic, every refusal
    /// is a clean `Invalid`, and reads return what the shadow holds.
    fn check(ops: &[(u8, u64, u64, u8)], s: &Server, shadow: &mut [u8]) {
        let cap = s.capacity();
        for &(kind, off, len, val) in ops {
            // Mostly inside the shadowed first MiB; now and then at or past the end.
            let (off, len) = match val % 8 {
                0 => (cap - (off % 8192), len),
                1 => (u64::MAX - off % 4096, len),
                _ => (off % (1 << 20), len % ((1 << 20) - off % (1 << 20) + 1)),
            };
            let inside = off.checked_add(len).is_some_and(|e| e <= cap);
            let shadowed = inside && off + len <= 1 << 20;
            let r = match kind % 5 {
                0 => {
                    let mut buf = vec![0u8; len.min(1 << 20) as usize];
                    let r = s.read(0, off, &mut buf);
                    if r.is_ok() && shadowed {
                        assert_eq!(buf, &shadow[off as usize..(off + len) as usize]);
                    }
                    r
                }
                1 => {
                    let data = vec![val; len.min(1 << 20) as usize];
                    let r = s.write(1, off, &data, val % 3 == 0);
                    if r.is_ok() && shadowed {
                        shadow[off as usize..(off + len) as usize].fill(val);
                    }
                    r
                }
                2 => s.flush(2),
                3 => {
                    let r = s.trim(0, off, len, false);
                    if r.is_ok() && shadowed {
                        shadow[off as usize..(off + len) as usize].fill(0);
                    }
                    r
                }
                _ => {
                    let r = s.zero(1, off, len, val % 2 == 0, false);
                    if r.is_ok() && shadowed {
                        shadow[off as usize..(off + len) as usize].fill(0);
                    }
                    r
                }
            };
            match r {
                Ok(x) => assert!(x.served + Time::ns(1) >= x.simulated),
                Err(ServeError::Invalid(m)) => assert!(!inside, "refused in bounds: {m}"),
                Err(e) => panic!("{e}"),
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn is_served_or_refused_cleanly(ops in prop::collection::vec((0u8..5, 0u64..(1 << 20), 0u64..70_000, any::<u8>()), 1..40)) {
            let dir = tempdir::Dir::new("prop");
            let s = server(&dir, |sp| sp.precondition = ssdlab_core::Precondition::Fresh);
            let mut shadow = vec![0u8; 1 << 20];
            check(&ops, &s, &mut shadow);
            let mut all = vec![0u8; 1 << 20];
            s.read(0, 0, &mut all).unwrap();
            prop_assert!(all == shadow);
            s.stop().unwrap();
        }
    }
}
