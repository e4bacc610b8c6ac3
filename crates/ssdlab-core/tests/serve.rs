//! Serving a simulated drive in real time (the engine behind the NBD
//! plugin), without nbdkit: data round trips, timing against the same
//! drive's batch simulation, request splitting and bad requests.
//! (tests/serve.rs of ssdlab-cli drives it with real NBD clients.)

use ssdlab_core::compose;
use ssdlab_core::config::Device;
use ssdlab_core::serve::{ServeError, ServeSpec, Server};
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

/// At QD1 every request is released no earlier than its simulated
/// completion, and the simulated latency is what the batch simulation of the
/// same drive gives for the same access pattern (4 KiB random reads at QD1).
#[test]
fn qd1_reads_take_the_batch_simulations_latency() {
    let dir = tempdir::Dir::new("qd1");
    let s = server(&dir, |_| {});
    let cap = s.capacity();
    let mut buf = vec![0u8; 4096];
    let mut x: u64 = 12345;
    let n = 2000;
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
    let served_mean = sum.as_ns_f64() / n as f64;
    let job = "[r]\nrw=randread\nbs=4k\niodepth=1\nnumber_ios=20000\n";
    let w = fio::parse_str(job, "qd1.fio").unwrap();
    let batch = simulate_quiet(&RunSpec::new(small(), w, "qd1")).unwrap();
    let batch_mean = batch.read.lat_ns.mean;
    let rel = (served_mean - batch_mean).abs() / batch_mean;
    assert!(
        rel < 0.03,
        "served simulated mean {served_mean:.0} ns vs batch {batch_mean:.0} ns"
    );
    let (rep, _) = s.stop().unwrap();
    assert_eq!(rep.total_requests, n);
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
            "'precondition': expected fresh, fill or steady",
        ),
        (
            &[("lookahead", "5s")],
            "'lookahead': expected a time of at most 1s",
        ),
        (&[("spin", "10")], "'spin': expected a time such as 20us"),
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
