//! Block and hybrid (BAST, FAST) mapping, timed in the drive (issue 14,
//! part 3): merges counted and timed on the die, the analytic cases, the
//! known ordering of the schemes, and the errors for what they refuse.

mod common;

use ssdlab_core::config::{Device, DeviceFile};
use ssdlab_core::device::hybrid::MergeReport;
use ssdlab_core::report::Report;
use ssdlab_core::workload::fio;
use ssdlab_core::{Precondition, System};

/// [`common::SMALL_SLC`] (4 units, 64 mapping units a block, one a page)
/// with `[ftl]` extras.
fn small(extra_ftl: &str, one_die: bool) -> Device {
    let mut text = common::SMALL_SLC.replace(
        "gc_hard_threshold = 2\n",
        &format!("gc_hard_threshold = 2\n{extra_ftl}\n"),
    );
    if one_die {
        text = text
            .replace("channels = 2", "channels = 1")
            .replace("chips_per_channel = 2", "chips_per_channel = 1");
    }
    common::device(&text, "small-hybrid")
}

fn run(dev: Device, job: &str, pre: Precondition) -> Report {
    let w = fio::parse_str(job, "h.fio").unwrap();
    let mut s = System::new(dev, &w, "h.fio", 3, pre).unwrap();
    s.run(&mut |_| {}, &|| false).unwrap();
    s.drives[0].ftl.check_invariants().unwrap();
    Report::from_system(&s, "h.fio", &[], 1.0)
}

fn merges(r: &Report) -> &MergeReport {
    r.merges.as_ref().expect("a merges section")
}

#[test]
fn a_bast_switch_merge_costs_one_erase_no_copies_and_the_erase_time() {
    let dev = small("mapping = \"bast\"\nlog_blocks = 2", false);
    let (t_cmd, t_erase) = (dev.nand.t_cmd, dev.nand.t_erase);
    // Rewrite logical block 0 of every unit in order (LPNs 0-255: 4 units
    // x 64), all of it on flash before the next job; then LPN 0 again:
    // unit 0's full, in-order log is switched in first.
    let job = "[a]\nrw=write\nbs=4k\nsize=1m\niodepth=1\nend_fsync=1\n\
               [b]\nstonewall\nrw=write\nbs=4k\nsize=4k\niodepth=1\nend_fsync=1\n";
    let r = run(dev, job, Precondition::Fill);
    let m = merges(&r);
    assert_eq!((m.switch, m.partial, m.full), (1, 0, 0), "{m:?}");
    assert_eq!((m.units_copied, m.blocks_erased), (0, 1));
    // The merge is its erase alone, on an idle die: command, then tBERS.
    let want = (t_cmd + t_erase).as_secs_f64() * 1e3;
    assert!(
        (m.mean_ms - want).abs() < 1e-9,
        "{} ms, want {want} ms",
        m.mean_ms
    );
    // 257 host units programmed, nothing else.
    assert!((r.waf - 1.0).abs() < 1e-12, "WAF {}", r.waf);
    assert_eq!(r.waf_split.merge, 0.0);
}

#[test]
fn a_full_merge_reads_programs_and_erases_within_its_bounds() {
    // One die: a merge's operations cannot overlap other dies' work.
    let dev = small("mapping = \"bast\"\nlog_blocks = 1", true);
    let n = &dev.nand;
    let (t_r, t_p, t_e, t_cmd) = (n.t_read[0], n.t_prog[0], n.t_erase, n.t_cmd);
    let xfer = n.bus_bandwidth.transfer_time(4096);
    // Place 1 of logical block 0 (LPN 1) out of order into the only log,
    // then a rewrite in block 1 (LPN 64) needs the log: full merge of
    // block 0, all 64 units copied, data block and log erased.
    let job = "[a]\nrw=write\nbs=4k\noffset=4k\nsize=4k\niodepth=1\nend_fsync=1\n\
               [b]\nstonewall\nrw=write\nbs=4k\noffset=256k\nsize=4k\niodepth=1\nend_fsync=1\n";
    let r = run(dev, job, Precondition::Fill);
    let m = merges(&r);
    assert_eq!((m.switch, m.partial, m.full), (0, 0, 1), "{m:?}");
    assert_eq!((m.units_copied, m.blocks_erased), (64, 2));
    // Each phase waits for the one before: at least the array time of 64
    // reads, 64 programs and 2 erases; at most that plus every command and
    // transfer one after another.
    let lo = (t_r.times(64) + t_p.times(64) + t_e.times(2)).as_secs_f64() * 1e3;
    let hi = lo + ((t_cmd + xfer).times(128) + t_cmd.times(2)).as_secs_f64() * 1e3;
    assert!(
        m.mean_ms >= lo && m.mean_ms <= hi,
        "{} ms not in [{lo}, {hi}]",
        m.mean_ms
    );
    // WAF: 2 host units, 64 copies.
    assert!((r.waf_split.merge - 32.0).abs() < 1e-9, "{:?}", r.waf_split);
    assert!((r.waf - 33.0).abs() < 1e-9, "WAF {}", r.waf);
}

#[test]
fn random_writes_order_the_schemes_page_fast_bast_block() {
    // Random 4 KiB rewrites of an eighth of a filled drive: FAST's shared
    // random logs absorb them better than BAST's per-block logs, and both
    // far better than copying a block per write; page mapping best.
    let job = "[w]\nrw=randwrite\nbs=4k\nsize=8m\niodepth=8\nnumber_ios=6000\n";
    let waf = |extra: &str| run(small(extra, false), job, Precondition::Fill).waf;
    let page = waf("");
    let fast = waf("mapping = \"fast\"\nlog_blocks = 4");
    let bast = waf("mapping = \"bast\"\nlog_blocks = 4");
    let block = waf("mapping = \"block\"");
    assert!(
        page < fast && fast < bast && bast < block,
        "page {page}, fast {fast}, bast {bast}, block {block}"
    );
}

#[test]
fn a_write_buffer_of_whole_blocks_gathers_writes_to_few_blocks() {
    // Random 4 KiB rewrites of 8 logical blocks (2 MiB) through a 1 MiB
    // buffer at 200 writes/s (a drive not saturated), written back at the
    // end: a buffer of mapping units sends each logical block's dirty
    // units as soon as a program unit's worth is dirty, so most go alone
    // and each costs a merge; a buffer of whole blocks holds a block until
    // it is the least recently written (seed 001's block-mapped D-log), so
    // its rewrites coalesce.
    let job = "[w]\nrw=randwrite\nbs=4k\nsize=2m\nio_size=4000k\nnorandommap=1\niodepth=8\nrate_iops=200\nend_fsync=1\n";
    for scheme in ["mapping = \"block\"", "mapping = \"bast\"\nlog_blocks = 2"] {
        let with = |unit: &str| {
            let text = common::SMALL_SLC
                .replace(
                    "write_buffer = \"256KiB\"",
                    &format!("write_buffer = \"1MiB\"\nwrite_buffer_unit = \"{unit}\""),
                )
                .replace(
                    "gc_hard_threshold = 2\n",
                    &format!("gc_hard_threshold = 2\n{scheme}\n"),
                );
            run(
                common::device(&text, "small-gather"),
                job,
                Precondition::Fill,
            )
        };
        let (units, blocks) = (with("unit"), with("block"));
        let (mu, mb) = (merges(&units), merges(&blocks));
        // Fewer merges and less written; with block mapping, where every
        // group not in place is a block copy, at most half.
        let (m_units, m_blocks) = (mu.full + mu.partial, mb.full + mb.partial);
        let half = if scheme == "mapping = \"block\"" {
            2
        } else {
            1
        };
        assert!(
            half * m_blocks <= m_units
                && m_blocks < m_units
                && half as f64 * blocks.waf <= units.waf,
            "{scheme}: unit buffer {mu:?} WAF {}, block buffer {mb:?} WAF {}",
            units.waf,
            blocks.waf
        );
        // Every write is on flash at the end (end_fsync waited for it).
        assert_eq!(blocks.write.ios, 1000, "{scheme}");
        assert!(blocks.waf > 0.0, "{scheme}");
    }
}

#[test]
fn sequential_rewrites_switch_logs_in_without_copies() {
    // A filled drive rewritten in order twice: every log fills in place
    // order and is switched in (one erase each), nothing copied.
    let job = "[w]\nrw=write\nbs=128k\nsize=16m\niodepth=8\nloops=2\nend_fsync=1\n";
    for extra in [
        "mapping = \"bast\"\nlog_blocks = 2",
        "mapping = \"fast\"\nlog_blocks = 2",
    ] {
        let r = run(small(extra, false), job, Precondition::Fill);
        let m = merges(&r);
        assert_eq!(
            (m.units_copied, m.partial, m.full),
            (0, 0, 0),
            "{extra}: {m:?}"
        );
        assert!(
            m.switch > 0 && m.blocks_erased == m.switch,
            "{extra}: {m:?}"
        );
        assert!((r.waf - 1.0).abs() < 1e-9, "{extra}: WAF {}", r.waf);
    }
    // Block mapping writes a fresh drive in place; rewriting it copies
    // each block's units the write buffer did not gather (it flushes as
    // soon as a program unit's worth is dirty).
    let fresh = "[w]\nrw=write\nbs=128k\nsize=16m\niodepth=8\nend_fsync=1\n";
    let r = run(
        small("mapping = \"block\"", false),
        fresh,
        Precondition::Fresh,
    );
    assert_eq!(merges(&r).full, 0, "{:?}", merges(&r));
    assert!((r.waf - 1.0).abs() < 1e-9, "WAF {}", r.waf);
    let r = run(
        small("mapping = \"block\"", false),
        fresh,
        Precondition::Fill,
    );
    assert!(merges(&r).full > 0 && r.waf > 1.0, "{:?}", merges(&r));
}

fn refused(text: &str) -> String {
    match DeviceFile::from_toml_str(text, "bad.toml").and_then(|f| f.resolve("bad.toml")) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_mapping_settings_are_refused_by_key() {
    let with = |extra: &str| {
        common::SMALL_SLC.replace(
            "gc_hard_threshold = 2\n",
            &format!("gc_hard_threshold = 2\n{extra}\n"),
        )
    };
    let e = refused(&with("mapping = \"bast\""));
    assert!(
        e.contains("ftl.log_blocks") && e.contains("without log blocks"),
        "{e}"
    );
    let e = refused(&with("mapping = \"fast\"\nlog_blocks = 1"));
    assert!(
        e.contains("ftl.log_blocks") && e.contains("at least 2"),
        "{e}"
    );
    let e = refused(&with("mapping = \"block\"\nlog_blocks = 3"));
    assert!(
        e.contains("ftl.log_blocks") && e.contains("no log blocks"),
        "{e}"
    );
    let e = refused(&common::SMALL_SLC.replace(
        "write_buffer = \"256KiB\"",
        "write_buffer = \"256KiB\"\nwrite_buffer_unit = \"block\"",
    ));
    assert!(
        e.contains("cache.write_buffer_unit") && e.contains("ftl.mapping = \"block\""),
        "{e}"
    );
    let e = refused(&with("mapping = \"block\"").replace(
        "write_buffer = \"256KiB\"",
        "write_buffer = \"256KiB\"\nwrite_buffer_unit = \"page\"",
    ));
    assert!(
        e.contains("cache.write_buffer_unit") && e.contains("expected \"unit\" or \"block\""),
        "{e}"
    );
    let e = refused(&with("mapping = \"hash\""));
    assert!(
        e.contains("ftl.mapping") && e.contains("page, block, bast or fast"),
        "{e}"
    );
    let e = refused(&with("mapping = \"bast\"\nlog_blocks = 40"));
    assert!(
        e.contains("ftl.log_blocks") && e.contains("good blocks"),
        "{e}"
    );
    let e = refused(&with(
        "mapping = \"fast\"\nlog_blocks = 2\nmapping_cache = \"64KiB\"",
    ));
    assert!(
        e.contains("ftl.mapping_cache") && e.contains("fast mapping"),
        "{e}"
    );
    let e = refused(&with(
        "mapping = \"bast\"\nlog_blocks = 2\nslc_dynamic = \"4MiB\"",
    ));
    assert!(
        e.contains("ftl.slc_dynamic") && e.contains("bast mapping") && e.contains("log blocks"),
        "{e}"
    );
    let e = refused(&with("mapping = \"block\"\nslc_static = \"4MiB\""));
    assert!(
        e.contains("ftl.slc_static") && e.contains("block mapping"),
        "{e}"
    );
}

#[test]
fn the_steady_state_is_where_random_writes_merge_from_the_first_write() {
    // FAST on a filled drive: its random logs (2 blocks of 64 slots on each
    // of 4 units) absorb the first 300 random writes without a merge. After
    // `steady` they are already full: merges from the first writes, at
    // about the WAF the preconditioner's last window settled at. Block and
    // BAST too; the preconditioned state is the same twice.
    let job = "[w]\nrw=randwrite\nbs=4k\niodepth=4\nnumber_ios=300\n";
    let fast = small("mapping = \"fast\"\nlog_blocks = 3", false);
    let fill = run(fast.clone(), job, Precondition::Fill);
    assert_eq!(merges(&fill).full, 0, "{:?}", fill.merges);
    for (extra, scheme) in [
        ("mapping = \"fast\"\nlog_blocks = 3", "fast"),
        ("mapping = \"bast\"\nlog_blocks = 2", "bast"),
        ("mapping = \"block\"", "block"),
    ] {
        let dev = small(extra, false);
        let steady = run(dev.clone(), job, Precondition::Steady);
        assert!(merges(&steady).full > 0, "{scheme}: {:?}", steady.merges);
        let pre = &steady.precondition;
        // The preconditioner's groups are single units; the run's buffer
        // gathers writes to one logical block (a small drive has 192 of
        // them) into one group, so its WAF is lower, never higher.
        assert!(
            steady.waf <= pre.waf * 1.05 && steady.waf >= pre.waf * 0.5,
            "{scheme}: run WAF {} vs the preconditioner's {}",
            steady.waf,
            pre.waf
        );
        let again = run(dev, job, Precondition::Steady);
        assert_eq!(again.waf, steady.waf, "{scheme}");
    }
}

#[test]
fn seed001s_experiment_through_block_and_hybrid_mapping_holds_in_validate() {
    let checks = ssdlab_core::validate::run_all(
        Some(ssdlab_core::validate::seed001_mappings::SEED001_MAPPINGS),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(checks.len(), 11);
    for c in &checks {
        assert!(c.pass, "{c:?}");
    }
}
