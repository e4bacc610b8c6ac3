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
    resolve(&drive_text(memory, extra_host))
}

/// The device described by `text`.
fn resolve(text: &str) -> Device {
    DeviceFile::from_toml_str(text, "small")
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
        power_loss_at: None,
        after_recovery: None,
        later_power_losses: Vec::new(),
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
fn a_read_copies_its_pages_while_the_rest_are_still_being_read() {
    // One 1 MiB buffered read of written data on a one-die drive (its
    // pages read one after another), copied at 100 MB/s (10.49 ms for
    // 1 MiB, slower than the drive). Sent as eight 128 KiB requests, its
    // pages are copied as each request brings them (Linux's `filemap_read`
    // copies every batch as soon as it is up to date), so the read ends
    // about one request's drive time after the copy of the whole MiB could
    // start; sent as one 1 MiB request (`max_request`), the copy waits for
    // the whole drive read.
    let job = "[w]\nrw=write\nbs=128k\nsize=1m\niodepth=1\nend_fsync=1\n\
        [r]\nstonewall\nrw=read\nbs=1m\nsize=1m\niodepth=1\ndirect=0\n";
    let copy_all = 1048576.0 / 100e6 * 1e9;
    let lat = |extra: &str| {
        let host = format!("copy_bandwidth = \"100MB/s\"\n{extra}");
        let text = drive_text("256MiB", &host)
            .replace("channels = 2", "channels = 1")
            .replace("chips_per_channel = 2", "chips_per_channel = 1");
        let r = run_on(resolve(&text), job).unwrap();
        assert_eq!(r.read.ios, 1);
        r.read.lat_ns.mean
    };
    let (split, whole) = (lat(""), lat("max_request = \"1MiB\""));
    assert!(split > copy_all && whole > copy_all, "{split} {whole}");
    // The drive time the read waits for beyond its copy: one 128 KiB
    // request's (and the page set-up) against the whole MiB's.
    assert!(
        (split - copy_all) * 3.0 < whole - copy_all,
        "split {split} ns, one request {whole} ns, copy {copy_all} ns"
    );
}

#[test]
fn writers_wait_under_dirty_ratio() {
    // With `dirty_throttle = "hard"` (the writer runs free until the limit)
    // a writer faster than the drive fills the cache to the limit and waits
    // there.
    let dev = drive(
        "64MiB",
        "dirty_ratio = \"10%\"\ndirty_background_ratio = \"5%\"\ndirty_throttle = \"hard\"",
    );
    let r = run_on(dev, "[w]\nrw=write\nbs=256k\ndirect=0\nsize=32m\n").unwrap();
    let pc = r.page_cache.unwrap();
    assert!(pc.throttled_writes > 0, "{pc:?}");
    assert_eq!(pc.paused_writes, 0, "{pc:?}");
    // Dirty data never exceeds the limit by more than one write.
    let limit = pc.capacity_bytes / 10;
    assert!(pc.dirty_peak_bytes <= limit + (256 << 10), "{pc:?}");
    assert!(pc.dirty_peak_bytes > limit, "{pc:?}");
    assert!(pc.written_back_bytes > 16 << 20, "{pc:?}");
}

#[test]
fn proportional_throttling_paces_writers_to_the_drive_below_the_limit() {
    // Linux's balance_dirty_pages (the default): a sequential writer much
    // faster than the drive is paused from the freerun ceiling (halfway
    // between the background threshold and the limit) on, at a rate that
    // follows the drive's measured writeback bandwidth, so dirty data
    // settles between freerun and the limit and the writer never has to
    // wait at the limit once the estimate has converged.
    let host = "dirty_ratio = \"20%\"\ndirty_background_ratio = \"10%\"";
    let job = "[w]\nrw=write\nbs=64k\ndirect=0\nsize=96m\n";
    let r = run_on(drive("64MiB", host), job).unwrap();
    let pc = r.page_cache.clone().unwrap();
    let cache = pc.capacity_bytes as f64;
    let (bg, limit) = (0.10 * cache, 0.20 * cache);
    let freerun = (bg + limit) / 2.0;
    assert!(pc.paused_writes > 100, "{pc:?}");
    assert!(pc.dirty_peak_bytes as f64 > freerun, "{pc:?}");
    assert!(pc.dirty_peak_bytes as f64 <= limit, "{pc:?}");
    assert_eq!(pc.throttled_writes, 0, "{pc:?}");
    // The writer ends up at the drive's pace: the application's bandwidth
    // is what the same job gets with direct I/O at the writeback depth
    // (the drive's sequential-write rate), a little more (up to 15 %):
    // about 5 of the 96 MiB are still in the cache when the last write
    // returns, and the writer ran free up to the freerun ceiling at first.
    let direct = run_on(
        drive("64MiB", host),
        "[w]\nrw=write\nbs=128k\niodepth=32\nsize=96m\n",
    )
    .unwrap();
    let ratio = r.write.bw_bytes_per_s / direct.write.bw_bytes_per_s;
    assert!((1.0..=1.15).contains(&ratio), "buffered/direct {ratio}");
    // A drive 4x slower than the initial 100 MiB/s estimate: the estimate
    // follows the writeback completions and the writer still settles
    // below the limit.
    let slow = |extra: &str| {
        let text = drive_text("64MiB", extra).replace("t_prog = [\"500us\"]", "t_prog = [\"2ms\"]");
        DeviceFile::from_toml_str(&text, "slow")
            .unwrap()
            .resolve("slow")
            .unwrap()
    };
    let s = run_on(slow(host), job).unwrap();
    let spc = s.page_cache.clone().unwrap();
    let sd = run_on(slow(host), "[w]\nrw=write\nbs=128k\niodepth=32\nsize=96m\n").unwrap();
    assert!(
        spc.dirty_peak_bytes as f64 <= limit && spc.throttled_writes == 0,
        "{spc:?}"
    );
    let ratio = s.write.bw_bytes_per_s / sd.write.bw_bytes_per_s;
    assert!(
        (1.0..=1.15).contains(&ratio),
        "slow drive: buffered/direct {ratio}"
    );
    // The hard model lets the same writer run free until the limit.
    let hard = format!("{host}\ndirty_throttle = \"hard\"");
    let h = run_on(drive("64MiB", &hard), job).unwrap();
    let hpc = h.page_cache.unwrap();
    assert!(
        hpc.throttled_writes > 0 && hpc.dirty_peak_bytes as f64 > limit,
        "{hpc:?}"
    );
    // A bad value is named by key.
    let text = drive_text("64MiB", "dirty_throttle = \"smooth\"");
    let e = DeviceFile::from_toml_str(&text, "small")
        .and_then(|f| f.resolve("small"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("host.dirty_throttle") && e.contains("proportional"),
        "{e}"
    );
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
