//! Buffered I/O through the host page cache (fio `direct=0`): cached data
//! is served without the drive, writes are acknowledged before the drive
//! sees them and `fsync` waits for them, readahead turns small sequential
//! reads into larger drive reads, writers are throttled at `dirty_ratio`,
//! and a host without memory refuses buffered jobs by key.

use ssdlab_core::config::{Device, DeviceFile};
use ssdlab_core::host::buffered::PageCacheReport;
use ssdlab_core::workload::fio;
use ssdlab_core::{simulate_with_jobs, Precondition, Report, RunSpec};

/// A small drive (4 dies) with a host of `memory`.
fn drive(memory: &str, extra_host: &str) -> Device {
    let text = drive_text(memory, extra_host);
    DeviceFile::from_toml_str(&text, "small")
        .unwrap()
        .resolve("small")
        .unwrap()
}

fn drive_text(memory: &str, extra_host: &str) -> String {
    format!(
        r#"
name = "small"
[host]
submit_overhead = "1us"
complete_overhead = "2us"
memory = "{memory}"
{extra_host}
[pcie]
generation = 3
lanes = 4
[cache]
write_buffer = "1MiB"
[ftl]
over_provisioning = "25%"
[nand]
channels = 2
chips_per_channel = 2
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 128
pages_per_block = 64
page_size = "16KiB"
cell = "slc"
t_read = ["50us"]
t_prog = ["500us"]
t_erase = "3ms"
bus_bandwidth = "800MB/s"
"#
    )
}

fn run_on(dev: Device, job: &str) -> Result<Report, String> {
    let workload = fio::parse_str(job, "pc.fio").map_err(|e| e.to_string())?;
    let spec = RunSpec {
        device: dev,
        workload,
        workload_name: "pc.fio".into(),
        seed: 1,
        precondition: Precondition::Fresh,
        sample_interval: None,
        latency_histogram: false,
        job_stats: false,
        data_store: None,
    };
    simulate_with_jobs(&spec, &mut |_| {}, &|| false)
        .map(|(r, _)| r)
        .map_err(|e| e.to_string())
}

fn run(job: &str) -> (Report, PageCacheReport) {
    let r = run_on(drive("256MiB", ""), job).unwrap();
    let pc = r.page_cache.clone().expect("a page_cache section");
    (r, pc)
}

#[test]
fn a_cached_re_read_never_reaches_the_drive() {
    let once = "[a]\nrw=read\nbs=128k\ndirect=0\nsize=8m\n";
    let twice = format!("{once}[b]\nstonewall\nrw=read\nbs=4k\ndirect=0\nsize=8m\n");
    let (r1, p1) = run(once);
    let (r2, p2) = run(&twice);
    // Readahead may run up to two windows past the last page read.
    assert!(p1.read_from_drive_bytes >= 8 << 20, "{p1:?}");
    assert!(
        p1.read_from_drive_bytes <= (8 << 20) + (256 << 10),
        "{p1:?}"
    );
    assert_eq!(p2.read_from_drive_bytes, p1.read_from_drive_bytes, "{p2:?}");
    assert_eq!(p2.drive_read_requests, p1.drive_read_requests);
    assert_eq!(r2.flash.reads, r1.flash.reads);
    // The second pass: every page a hit; a 4 KiB hit costs the syscall and
    // a 4 KiB copy, far below a flash read.
    assert_eq!(p2.hit_pages - p1.hit_pages, 2048);
    assert!(r2.read.lat_ns.p50 < 5_000, "{}", r2.read.lat_ns.p50);
}

#[test]
fn buffered_writes_are_acknowledged_before_the_drive_sees_them_and_fsync_waits() {
    // 4 MiB into a 192 MiB cache: under the background threshold, so
    // nothing is written back until the fsync.
    let (r, pc) = run("[w]\nrw=write\nbs=64k\ndirect=0\nsize=4m\n");
    assert_eq!(pc.written_back_bytes, 0);
    assert_eq!(pc.dirty_at_end_bytes, 4 << 20);
    assert_eq!(r.flash.programs, 0, "the drive saw no data");
    assert!(r.write.lat_ns.max < 50_000, "{}", r.write.lat_ns.max);
    let (r, pc) = run("[w]\nrw=write\nbs=64k\ndirect=0\nsize=4m\nend_fsync=1\n");
    assert_eq!(pc.written_back_bytes, 4 << 20);
    assert_eq!(pc.dirty_at_end_bytes, 0);
    assert!(r.flash.programs > 0);
    // The fsync waits for 4 MiB to reach four dies at 16 KiB per 500 us
    // program: at least 4 MiB / (4 x 16 KiB / 500 us) = 32 ms.
    assert_eq!(r.flush.ios, 1);
    assert!(r.flush.lat_ns.min > 30_000_000, "{}", r.flush.lat_ns.min);
}

#[test]
fn readahead_turns_small_sequential_reads_into_larger_drive_reads() {
    let (_, seq) = run("[r]\nrw=read\nbs=4k\niodepth=1\ndirect=0\nsize=4m\n");
    // 1024 pages in windows that grow to 128 KiB (32 pages).
    assert!(seq.drive_read_requests < 1024 / 16, "{seq:?}");
    // Every page once; readahead runs past the job's end as it would past
    // a file's on a block device: at most the window being read and the
    // next one (2 x 128 KiB).
    assert!(seq.read_from_drive_bytes >= 4 << 20, "{seq:?}");
    assert!(
        seq.read_from_drive_bytes <= (4 << 20) + (256 << 10),
        "{seq:?}"
    );
    assert!(seq.miss_pages < 16, "readahead keeps ahead: {seq:?}");
    let (_, rnd) = run("[r]\nrw=randread\nbs=4k\niodepth=1\ndirect=0\nsize=4m\nnumber_ios=200\n");
    // Random reads read just themselves (a read that happens to land at
    // page 0 or right after the previous one starts a window, as in Linux).
    assert!(
        rnd.drive_read_requests * 10 >= rnd.miss_pages * 9,
        "{rnd:?}"
    );
    assert!(
        rnd.read_from_drive_bytes * 10 <= rnd.miss_pages * 4096 * 12,
        "{rnd:?}"
    );
}

#[test]
fn writers_wait_under_dirty_ratio() {
    let dev = drive(
        "64MiB",
        "dirty_ratio = \"10%\"\ndirty_background_ratio = \"5%\"",
    );
    let r = run_on(dev, "[w]\nrw=write\nbs=256k\ndirect=0\nsize=32m\n").unwrap();
    let pc = r.page_cache.unwrap();
    assert!(pc.throttled_writes > 0, "{pc:?}");
    // Dirty data never exceeds the limit by more than one write.
    assert!(
        pc.dirty_at_end_bytes <= (64 << 20) / 10 + (256 << 10),
        "{pc:?}"
    );
    assert!(pc.written_back_bytes > 16 << 20, "{pc:?}");
}

#[test]
fn buffered_io_without_host_memory_is_refused_by_key() {
    let e = run_on(drive("0B", ""), "[w]\nrw=write\ndirect=0\nsize=1m\n").unwrap_err();
    assert!(e.contains("direct") && e.contains("host.memory"), "{e}");
    let e = run_on(drive("0B", ""), "[w]\nrw=write\nbuffered=1\nsize=1m\n").unwrap_err();
    assert!(e.contains("host.memory"), "{e}");
    // Direct I/O (the default) needs none.
    assert!(run_on(drive("0B", ""), "[w]\nrw=write\nsize=1m\n").is_ok());
    // A bad host key is named.
    let text = "name = \"x\"\n[host]\nmemory = \"12\"\n";
    let e = DeviceFile::from_toml_str(text, "x")
        .and_then(|f| f.resolve("x"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("host.memory"), "{e}");
}

#[test]
fn dirty_data_older_than_dirty_expire_is_written_back() {
    // 4 MiB dirtied (under the background threshold), then a reader runs
    // on for 1 s of simulated time. With a 200 ms expiry and a 50 ms
    // flusher period the drive is written back during the reader's run;
    // with the default 30 s it stays dirty.
    let job = "[w]\nrw=write\nbs=64k\ndirect=0\nsize=4m\n[r]\nstonewall\nrw=randread\nbs=4k\nrate_iops=2000\ntime_based\nruntime=1s\n";
    let dev = drive(
        "256MiB",
        "dirty_expire = \"200ms\"\ndirty_writeback_interval = \"50ms\"",
    );
    let r = run_on(dev, job).unwrap();
    let pc = r.page_cache.unwrap();
    assert_eq!(pc.written_back_bytes, 4 << 20, "{pc:?}");
    assert_eq!(pc.dirty_at_end_bytes, 0, "{pc:?}");
    let (_, pc) = run(job);
    assert_eq!(pc.written_back_bytes, 0, "{pc:?}");
    assert_eq!(pc.dirty_at_end_bytes, 4 << 20, "{pc:?}");
    // A flusher period of zero is refused by key.
    let text = drive_text("64MiB", "dirty_writeback_interval = \"0s\"");
    let e = DeviceFile::from_toml_str(&text, "small")
        .and_then(|f| f.resolve("small"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("host.dirty_writeback_interval"), "{e}");
}
