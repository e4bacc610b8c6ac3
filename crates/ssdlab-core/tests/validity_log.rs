//! The L-log (issue 14, part 2; `ftl.validity_log`): validity bitmaps on
//! flash with their own DRAM cache, updated by programs and invalidations,
//! read by GC before it copies a victim's data.

mod common;

use ssdlab_core::config::{Device, DeviceFile};
use ssdlab_core::report::Report;
use ssdlab_core::workload::fio;
use ssdlab_core::{Precondition, System};

/// [`common::SMALL_SLC`] with 16x the blocks (1 GiB raw: 262,144 units of
/// 4 KiB, 8 validity pages) and `[ftl]` extras.
fn mid(extra_ftl: &str) -> Device {
    let text = common::SMALL_SLC
        .replace("blocks_per_plane = 64", "blocks_per_plane = 1024")
        .replace(
            "gc_hard_threshold = 2\n",
            &format!("gc_hard_threshold = 2\n{extra_ftl}\n"),
        );
    common::device(&text, "mid")
}

const RANDWRITE: &str = "[w]\nrw=randwrite\nbs=4k\niodepth=16\nnumber_ios=100000\n";

fn run(dev: Device) -> Report {
    let w = fio::parse_str(RANDWRITE, "w.fio").unwrap();
    let mut s = System::new(dev, &w, "w.fio", 5, Precondition::Steady).unwrap();
    s.run(&mut |_| {}, &|| false).unwrap();
    s.drives[0].ftl.check_invariants().unwrap();
    Report::from_system(&s, "w.fio", &[], 1.0)
}

#[test]
fn a_small_validity_cache_costs_reads_writes_and_gc_waits() {
    let plain = run(mid(""));
    let r = run(mid("validity_log = \"8KiB\""));
    assert!(plain.validity_log.is_none() && plain.waf_split.validity == 0.0);
    let v = r.validity_log.as_ref().expect("a validity_log section");
    assert_eq!((v.pages, v.cache_bytes), (8, 8192));
    // Random overwrites invalidate units on all eight pages; two fit.
    assert!(
        v.hit_ratio < 0.8 && v.loads > 1000 && v.writebacks > 1000,
        "{v:?}"
    );
    assert!(v.gc_waits > 0, "{v:?}");
    // Its write-backs are its own part of the WAF; the parts add up.
    let w = &r.waf_split;
    assert!(w.validity > 0.1, "{w:?}");
    let sum = w.user + w.gc + w.slc_fold + w.mapping + w.checkpoint + w.validity + w.merge;
    assert!((sum - r.waf).abs() < 1e-9, "{w:?} vs {}", r.waf);
    assert!(r.waf > plain.waf && r.write.iops < plain.write.iops);
}

#[test]
fn a_validity_cache_holding_every_page_only_loads_each_once() {
    let r = run(mid("validity_log = \"32KiB\""));
    let v = r.validity_log.as_ref().unwrap();
    // Each page is read once (the fill left them all on flash), never evicted.
    assert!(v.loads <= 8 && v.writebacks == 0, "{v:?}");
    assert_eq!(r.waf_split.validity, 0.0);
}

#[test]
fn each_metadata_cache_takes_its_own_policy() {
    let lru = run(mid("validity_log = \"8KiB\""));
    let fifo = run(mid(
        "validity_log = \"8KiB\"\nvalidity_log_policy = \"fifo\"",
    ));
    let (a, b) = (lru.validity_log.unwrap(), fifo.validity_log.unwrap());
    // Programs fill the active block's page in order: LRU keeps it, FIFO
    // evicts it on schedule whatever its hits.
    assert!(b.hit_ratio < a.hit_ratio, "lru {a:?} fifo {b:?}");
    // The mapping cache's policy is its own key.
    let m = run(mid(
        "mapping_cache = \"16KiB\"\nmapping_cache_policy = \"fifo\"",
    ));
    assert!(m.mapping.is_some() && m.validity_log.is_none());
}

#[test]
fn bad_validity_log_settings_are_refused_by_key() {
    let with = |extra: &str| {
        common::SMALL_SLC.replace(
            "gc_hard_threshold = 2\n",
            &format!("gc_hard_threshold = 2\n{extra}\n"),
        )
    };
    let refused = |text: String| match DeviceFile::from_toml_str(&text, "bad.toml")
        .and_then(|f| f.resolve("bad.toml"))
    {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    };
    let e = refused(with("validity_log = \"1KiB\""));
    assert!(
        e.contains("ftl.validity_log") && e.contains("smaller than one validity page"),
        "{e}"
    );
    let e = refused(with(
        "validity_log = \"8KiB\"\nmapping = \"bast\"\nlog_blocks = 2",
    ));
    assert!(
        e.contains("ftl.validity_log") && e.contains("bast mapping"),
        "{e}"
    );
    let e = refused(with("validity_log = \"lots\""));
    assert!(e.contains("ftl.validity_log"), "{e}");
    let e = refused(with("validity_log_policy = \"random\""));
    assert!(
        e.contains("ftl.validity_log_policy") && e.contains("lru"),
        "{e}"
    );
    let e = refused(with("mapping_cache_policy = \"mru\""));
    assert!(e.contains("ftl.mapping_cache_policy"), "{e}");
}
