//! The cached mapping table (`ftl.mapping_cache`, issue 14 part 1): a miss
//! costs exactly one translation-page read, no write is lost while
//! translation pages are evicted, written back and garbage-collected, the
//! counters add up, and bad sizes are refused by key.

mod common;
use common::analytic_device;
use ssdlab_core::config::{Device, DeviceFile};
use ssdlab_core::ftl::Mapping;
use ssdlab_core::units::{Bytes, Lpn};
use ssdlab_core::workload::fio;
use ssdlab_core::{simulate_quiet, Precondition, Report, RunSpec, System};

/// The analytic drive of tests/sim.rs with `cache` bytes of mapping cache
/// (`None`: the whole table in DRAM).
fn cached(channels: u32, dies: u32, cache: Option<u64>) -> Device {
    let mut d = analytic_device(channels, dies, "", "");
    d.ftl.mapping_cache = cache.map(Bytes);
    d
}

fn run(dev: Device, job: &str, pre: Precondition) -> Report {
    let workload = fio::parse_str(job, "test.fio").unwrap();
    let mut spec = RunSpec::new(dev, workload, "test");
    spec.seed = 7;
    spec.precondition = pre;
    simulate_quiet(&spec).unwrap()
}

#[test]
fn a_miss_adds_exactly_one_translation_page_read_at_qd1() {
    // The analytic drive (one SLC die, tR 25 us, 4 KiB at 400 MB/s, t_cmd
    // 100 ns; QD1 read latency 59,792 ns, see tests/sim.rs) holds 3,276
    // units: 4 translation pages of 1,024 entries, of which one fits the
    // cache. A read whose page is absent first reads that page: t_cmd +
    // tR + 4 KiB over the bus = 35,340 ns more, nothing else.
    let plain = 59_692;
    let miss = 100 + 25_000 + 10_240;
    let dev = cached(1, 1, Some(4096));
    let r = run(
        dev,
        "[r]\nrw=randread\nbs=4k\niodepth=1\nnumber_ios=400\n",
        Precondition::Fill,
    );
    let m = r.mapping.as_ref().expect("a mapping section");
    assert_eq!(
        (m.translation_pages, m.cached_pages, m.entries_per_page),
        (4, 1, 1024)
    );
    assert_eq!(m.lookups, 400);
    assert!(
        m.translation_reads > 100 && m.translation_reads < 400,
        "{m:?}"
    );
    assert_eq!(m.translation_reads, m.lookups - m.hits);
    assert_eq!(r.read.lat_ns.min, plain);
    assert_eq!(r.read.lat_ns.max, plain + miss);
    // Two latencies only: the mean says how many missed.
    let mean = plain as f64 + miss as f64 * m.translation_reads as f64 / 400.0;
    assert!(
        (r.read.lat_ns.mean - mean).abs() < 1e-6,
        "{} vs {mean}",
        r.read.lat_ns.mean
    );
    assert_eq!(r.flash.reads, 400 + m.translation_reads);
    // Nothing written: no translation page was written back.
    assert_eq!(m.translation_writes, 0);
}

#[test]
fn a_partial_write_looks_up_its_old_data_before_reading_it() {
    // 2 KiB writes into filled 4 KiB units, one at a time and 2 ms apart
    // (each alone on the die): the old data is read from flash and merged.
    // With one cached translation page of four, the old data's location is
    // looked up first: a miss adds exactly one translation-page read
    // (t_cmd + tR + 4 KiB over the bus) before the old-data read; with the
    // whole table in DRAM no write waits for one.
    let job = "[w]\nrw=randwrite\nbs=2k\niodepth=1\nnumber_ios=200\nthinktime=2ms\nnorandommap\n";
    let miss = 100 + 25_000 + 10_240;
    let all = run(cached(1, 1, None), job, Precondition::Fill);
    let one = run(cached(1, 1, Some(4096)), job, Precondition::Fill);
    let plain = all.write.lat_ns.max;
    assert_eq!(one.write.lat_ns.max, plain + miss, "{:?}", one.write.lat_ns);
    let rmw = all.rmw.as_ref().expect("a rmw section");
    let m = one.mapping.as_ref().expect("a mapping section");
    // Every old-data read was looked up; the misses are translation reads.
    assert_eq!(one.rmw.as_ref().unwrap().flash_reads, rmw.flash_reads);
    assert!(m.lookups >= rmw.flash_reads, "{m:?} {rmw:?}");
    assert!(m.translation_reads > 50, "{m:?}");
    assert_eq!(one.flash.reads, all.flash.reads + m.translation_reads);
    // The writes that missed are exactly one translation read slower.
    let extra = one.write.lat_ns.mean - all.write.lat_ns.mean;
    let expect = miss as f64 * m.translation_reads as f64 / 200.0;
    assert!((extra - expect).abs() < 1e-6, "{extra} vs {expect}");
}

#[test]
fn partial_writes_with_a_tiny_mapping_cache_lose_nothing() {
    // Partial writes (512 B - 7.5 KiB: one unit in part, or two) among whole-unit reads, writes and
    // trims, at depth, with 2 cached translation pages of 13: read-modify-
    // writes wait for translation pages that whole-unit writes, trims and
    // GC also load and dirty. The run ends (no write is left waiting) and
    // every table agrees.
    let dev = cached(2, 2, Some(8192));
    let w = fio::parse_str(
        "[w]\nrw=randrw\nrwmixread=30\nbs=4k\niodepth=16\nnumber_ios=30000\nnorandommap\n\
         [p]\nrw=randwrite\nbsrange=512-7680\nblockalign=512\niodepth=16\nnumber_ios=20000\nnorandommap\n\
         [t]\nrw=randtrim\nbs=4k\niodepth=2\nnumber_ios=500\n",
        "t",
    )
    .unwrap();
    let mut d = System::new(dev, &w, "t", 5, Precondition::Steady).unwrap();
    d.run(&mut |_| {}, &|| false).unwrap();
    let r = Report::from_system(&d, "t", &[], 1.0);
    let m = r.mapping.clone().unwrap();
    let rmw = r.rmw.clone().unwrap();
    assert!(
        rmw.flash_reads > 1000 && m.translation_reads > 1000,
        "{rmw:?} {m:?}"
    );
    // Every trim completed, and every write of the partial job (20,000)
    // besides the mixed job's.
    assert_eq!(r.trim.ios, 500);
    assert!(r.write.ios > 20000, "{}", r.write.ios);
    let drive = &d.drives[0];
    drive.ftl.check_invariants().unwrap();
    for l in 0..drive.ftl.logical_units() as u32 {
        if drive.ftl.lookup(Lpn(l)) == Mapping::InBuffer {
            assert!(drive.cache.holds(l), "lpn {l}");
        }
    }
}

#[test]
fn the_whole_table_in_dram_has_no_mapping_section_and_no_extra_reads() {
    let all = cached(1, 1, None);
    let job = "[r]\nrw=randread\nbs=4k\niodepth=4\nnumber_ios=2000\n";
    let r = run(all, job, Precondition::Fill);
    assert!(r.mapping.is_none());
    assert_eq!(r.flash.reads, 2000);
    // A cache that holds every translation page: only its first loads read flash.
    let big = cached(1, 1, Some(16384));
    let r = run(big, job, Precondition::Fill);
    let m = r.mapping.unwrap();
    assert_eq!(m.translation_reads, 4);
    assert_eq!(r.flash.reads, 2004);
}

#[test]
fn random_writes_with_a_tiny_mapping_cache_lose_nothing() {
    // 2 x 2 dies, 2 cached translation pages of 13: every update misses
    // often, dirty pages are written back into translation blocks, and GC
    // collects data and translation blocks alike.
    let dev = cached(2, 2, Some(8192));
    let w = fio::parse_str(
        "[w]\nrw=randrw\nrwmixread=30\nbs=4k\niodepth=32\nnumber_ios=60000\nnorandommap\n\
         [t]\nrw=randtrim\nbs=4k\niodepth=2\nnumber_ios=500\n",
        "t",
    )
    .unwrap();
    let mut d = System::new(dev, &w, "t", 3, Precondition::Steady).unwrap();
    d.run(&mut |_| {}, &|| false).unwrap();
    let r = Report::from_system(&d, "t", &[], 1.0);
    let m = r.mapping.clone().unwrap();
    assert!(
        r.gc.runs > 0 && m.translation_writes > 0 && m.translation_reads > 0,
        "{m:?}"
    );
    assert!(
        m.translation_gc_moves > 0,
        "translation blocks were collected: {m:?}"
    );
    assert!(m.hit_ratio > 0.0 && m.hit_ratio < 0.5, "{m:?}");
    let drive = &d.drives[0];
    drive.ftl.check_invariants().unwrap();
    // Every translation page is on flash, or waiting in DRAM to be written.
    for t in 0..drive.ftl.translation_pages() {
        assert_ne!(
            drive.ftl.translation_location(t),
            Mapping::Unmapped,
            "page {t}"
        );
    }
    // Every unit is where its mapping says: trimmed, in the buffer or on flash.
    let mut held = 0;
    for l in 0..drive.ftl.logical_units() as u32 {
        match drive.ftl.lookup(Lpn(l)) {
            Mapping::InBuffer => assert!(drive.cache.holds(l), "lpn {l}"),
            Mapping::Flash(_) => held += 1,
            Mapping::Unmapped => {}
        }
    }
    assert!(held > 0);
    // The mapping's share of the WAF is its programmed slots over host writes.
    assert!((m.waf_mapping - m.translation_writes as f64 / r.write.ios as f64).abs() < 1e-9);
    assert!(r.waf > 1.0 + m.waf_mapping);
    // The report's split by writer has the same mapping part, and the
    // parts add up to the WAF.
    let w = &r.waf_split;
    assert!((w.mapping - m.waf_mapping).abs() < 1e-12, "{w:?} vs {m:?}");
    assert!((w.user + w.gc + w.slc_fold + w.mapping - r.waf).abs() < 1e-9);
}

#[test]
fn a_mapping_cache_smaller_than_a_translation_page_is_refused() {
    let text = format!(
        "{}\n",
        common::SMALL_SLC.replace("[ftl]\n", "[ftl]\nmapping_cache = \"2KiB\"\n")
    );
    let e = DeviceFile::from_toml_str(&text, "small.toml")
        .unwrap()
        .resolve("small.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ftl.mapping_cache") && e.contains("smaller than one translation page"),
        "{e}"
    );
    for bad in ["\"lots\"", "\"-1MiB\"", "16"] {
        let text = common::SMALL_SLC.replace("[ftl]\n", &format!("[ftl]\nmapping_cache = {bad}\n"));
        let e = DeviceFile::from_toml_str(&text, "small.toml")
            .map_err(|e| e.to_string())
            .and_then(|f| f.resolve("small.toml").map_err(|e| e.to_string()))
            .unwrap_err();
        assert!(e.contains("mapping_cache"), "{bad}: {e}");
    }
}

#[test]
fn dftls_finding_holds_in_validate() {
    let checks =
        ssdlab_core::validate::run_all(Some(ssdlab_core::validate::dftl::DFTL), &mut |_| {})
            .unwrap();
    assert_eq!(checks.len(), 5);
    for c in &checks {
        assert!(c.pass, "{}: {} vs {}", c.metric, c.simulated, c.reference);
    }
}

/// The analytic drive with 512 B mapping units (128 entries per translation
/// page: 205 of them, located by 2 directory pages under the root),
/// `cache` bytes of translation pages and `dir` bytes of directory pages.
fn with_directory(channels: u32, dies: u32, cache: u64, dir: u64) -> Device {
    let mut d = analytic_device(channels, dies, "", "");
    d.ftl.mapping_unit = Bytes(512);
    d.ftl.mapping_cache = Some(Bytes(cache));
    d.ftl.directory_cache = Some(Bytes(dir));
    d
}

#[test]
fn a_directory_miss_adds_exactly_one_directory_page_read_at_qd1() {
    // At QD1 a read whose translation page is absent reads it first
    // (t_cmd + tR + 512 B over the bus = 26,380 ns), and if the directory
    // page holding that page's location is absent too, reads that before
    // (the same again): every read's latency is the plain one plus one
    // such read per page missed, nothing else.
    let per_read = 100 + 25_000 + 1_280;
    let r = run(
        with_directory(1, 1, 64 * 512, 512),
        "[r]\nrw=randread\nbs=512\niodepth=1\nnumber_ios=2000\n",
        Precondition::Fill,
    );
    let m = r.mapping.as_ref().expect("a mapping section");
    let d = m.directory.as_ref().expect("a directory section");
    assert_eq!((m.translation_pages, m.entries_per_page), (205, 128));
    assert_eq!((d.levels.clone(), d.cached_pages), (vec![2], 1));
    // A directory lookup for each translation page read.
    assert_eq!(d.lookups, m.translation_reads, "{m:?}");
    assert!(d.reads > 100 && d.reads < d.lookups, "{d:?}");
    assert_eq!(d.reads, d.lookups - d.hits);
    assert_eq!(r.flash.reads, 2000 + m.translation_reads + d.reads);
    let plain = r.read.lat_ns.min;
    assert_eq!(r.read.lat_ns.max, plain + 2 * per_read);
    let mean = plain as f64 + per_read as f64 * (m.translation_reads + d.reads) as f64 / 2000.0;
    assert!(
        (r.read.lat_ns.mean - mean).abs() < 1e-6,
        "{} vs {mean}",
        r.read.lat_ns.mean
    );
    assert_eq!((m.translation_writes, d.writes), (0, 0));
    // The whole directory in DRAM (the default): no directory section,
    // and reads only miss translation pages.
    let mut dev = with_directory(1, 1, 64 * 512, 512);
    dev.ftl.directory_cache = None;
    let r = run(
        dev,
        "[r]\nrw=randread\nbs=512\niodepth=1\nnumber_ios=2000\n",
        Precondition::Fill,
    );
    let m = r.mapping.as_ref().unwrap();
    assert!(m.directory.is_none());
    assert_eq!(r.flash.reads, 2000 + m.translation_reads);
}

#[test]
fn random_writes_with_the_directory_on_flash_lose_nothing() {
    // 2 x 2 dies, 4 cached translation pages and 1 cached directory page:
    // dirty translation pages written back dirty their directory pages,
    // which are written back in turn; GC moves both.
    let dev = with_directory(2, 2, 4 * 512, 512);
    let w = fio::parse_str(
        "[w]\nrw=randrw\nrwmixread=30\nbs=4k\niodepth=32\nnumber_ios=40000\nnorandommap\n\
         [t]\nrw=randtrim\nbs=4k\niodepth=2\nnumber_ios=300\n",
        "t",
    )
    .unwrap();
    let mut s = System::new(dev, &w, "t", 3, Precondition::Steady).unwrap();
    s.run(&mut |_| {}, &|| false).unwrap();
    let r = Report::from_system(&s, "t", &[], 1.0);
    let m = r.mapping.clone().unwrap();
    let d = m.directory.clone().unwrap();
    assert!(d.writes > 0 && d.reads > 0, "{d:?}");
    assert!(d.writes < m.translation_writes, "{d:?} {m:?}");
    let drive = &s.drives[0];
    drive.ftl.check_invariants().unwrap();
    // Every translation and directory page is on flash or waiting in DRAM.
    let ftl = &drive.ftl;
    for t in 0..ftl.translation_pages() {
        assert_ne!(ftl.translation_location(t), Mapping::Unmapped, "page {t}");
    }
    for i in 0..ftl.directory_pages() {
        let p = ftl.directory_page(i);
        assert_ne!(
            ftl.translation_location(p),
            Mapping::Unmapped,
            "directory page {i}"
        );
    }
    for l in 0..ftl.logical_units() as u32 {
        if let Mapping::InBuffer = ftl.lookup(Lpn(l)) {
            assert!(drive.cache.holds(l), "lpn {l}");
        }
    }
}

#[test]
fn a_directory_cache_without_a_cached_mapping_is_refused() {
    let text = common::SMALL_SLC.replace("[ftl]\n", "[ftl]\ndirectory_cache = \"4KiB\"\n");
    let e = DeviceFile::from_toml_str(&text, "d.toml")
        .and_then(|f| f.resolve("d.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ftl.directory_cache") && e.contains("ftl.mapping_cache"),
        "{e}"
    );
    let text = common::SMALL_SLC.replace(
        "[ftl]\n",
        "[ftl]\nmapping_cache = \"8KiB\"\ndirectory_cache = \"1KiB\"\n",
    );
    let e = DeviceFile::from_toml_str(&text, "d.toml")
        .and_then(|f| f.resolve("d.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ftl.directory_cache") && e.contains("smaller than one directory page"),
        "{e}"
    );
}

#[test]
fn the_steady_state_of_a_cached_mapping_includes_its_translation_traffic() {
    // 4 dies of 400 blocks of 256 units: 320 translation pages, 2 of them
    // cached. The steady state goes on until the WAF with translation
    // pages written back and collected settles, so the WAF it reports is
    // the one a long run then measures (it used to report the data
    // blocks' alone: 2.8 here, against the run's 5.6).
    let mut dev = cached(2, 2, Some(8192));
    dev.nand.blocks_per_plane = 400;
    dev.nand.pages_per_block = 256;
    let job =
        |n: u32| format!("[w]\nrw=randwrite\nbs=4k\niodepth=8\nnumber_ios={n}\nnorandommap\n");
    let long = run(dev.clone(), &job(30_000), Precondition::Steady);
    let m = long.mapping.clone().unwrap();
    let pre = long.precondition.clone();
    assert!(
        (pre.waf / long.waf - 1.0).abs() < 0.1,
        "steady state WAF {} against the run's {} (mapping {})",
        pre.waf,
        long.waf,
        m.waf_mapping
    );
    // A short run starts there: translation blocks are collected from its
    // first writes on, at about the long run's mapping WAF.
    let short = run(dev, &job(1_500), Precondition::Steady).mapping.unwrap();
    assert!(short.translation_gc_moves > 0, "{short:?}");
    assert!(
        (short.waf_mapping / m.waf_mapping - 1.0).abs() < 0.15,
        "mapping WAF: {} in the first 1,500 writes, {} over 30,000",
        short.waf_mapping,
        m.waf_mapping
    );
    // The state it leaves is consistent, with the directory on flash and
    // an L-log too (they are written once, as after a fill).
    for (dir, vlog) in [(None, None), (Some(4096), Some(8192))] {
        let mut dev = dev_for_steady();
        dev.ftl.directory_cache = dir.map(Bytes);
        dev.ftl.validity_log = vlog.map(Bytes);
        let w = fio::parse_str(&job(10), "t").unwrap();
        let s = System::new(dev, &w, "t", 5, Precondition::Steady).unwrap();
        let drive = &s.drives[0];
        drive.ftl.check_invariants().unwrap();
        for t in 0..drive.ftl.translation_pages() {
            assert!(
                matches!(drive.ftl.translation_location(t), Mapping::Flash(_)),
                "page {t}"
            );
        }
    }
}

/// [`the_steady_state_of_a_cached_mapping_includes_its_translation_traffic`]'s drive.
fn dev_for_steady() -> Device {
    let mut dev = cached(2, 2, Some(8192));
    dev.nand.blocks_per_plane = 400;
    dev.nand.pages_per_block = 256;
    dev
}
