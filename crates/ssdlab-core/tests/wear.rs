//! Wear (issue 14, part 6): erase-count distribution and life in the
//! report, dynamic and static wear levelling, and bad input refused by key.

mod common;
use ssdlab_core::config::{Device, DeviceFile, WearLeveling};
use ssdlab_core::workload::fio;
use ssdlab_core::{simulate_quiet, Precondition, Report, RunSpec, System};

fn small(wl: WearLeveling) -> Device {
    let mut d = common::small_slc();
    d.ftl.wear_leveling = wl;
    d.ftl.static_wl_threshold = 8;
    d
}

/// Skewed random writes (90 % to 10 % of the space) for `drive_writes`
/// passes over the small drive (40 MiB exported), from a filled drive.
fn skewed(dev: Device, drive_writes: u64) -> (Report, System) {
    let bytes = dev.capacity_bytes() * drive_writes;
    let w = fio::parse_str(
        &format!(
            "[w]\nrw=randwrite\nbs=4k\niodepth=16\nio_size={bytes}\n\
             random_distribution=zoned:90/10:10/90\n"
        ),
        "w",
    )
    .unwrap();
    let mut s = System::new(dev, &w, "w", 5, Precondition::Fill).unwrap();
    s.run(&mut |_| {}, &|| false).unwrap();
    let r = Report::from_system(&s, "w", &[], 1.0);
    (r, s)
}

#[test]
fn the_report_gives_the_erase_counts_and_the_life_they_imply() {
    let (r, s) = skewed(small(WearLeveling::None), 4);
    let w = &r.wear;
    let (max, mean) = s.drives[0].ftl.wear();
    assert_eq!(w.erase_max, max);
    assert!((w.erase_mean - mean).abs() < 1e-9);
    assert!(w.erase_min <= w.erase_max && w.erase_max > 0 && w.erase_std > 0.0);
    assert!((w.wl_index - mean / max as f64).abs() < 1e-12);
    // SLC's default rated endurance, and the bytes it allows at this WAF.
    assert_eq!(w.endurance, 100_000);
    assert!((w.life_used - max as f64 / 1e5).abs() < 1e-12);
    let raw = s.drives[0].dev.nand.raw_bytes() as f64;
    assert!((w.tbw_bytes - 1e5 * raw / r.waf).abs() / w.tbw_bytes < 1e-12);
    // The WAF by writer: GC's part is the copies programmed per host unit
    // (at most those GC made: a host write may supersede one first), the
    // user part the host units programmed (all but those rewritten in the
    // buffer or still there at the end), and they add up.
    let split = &r.waf_split;
    assert_eq!(split.host_units, r.write.bytes / 4096);
    let moved = r.gc.pages_moved as f64 / split.host_units as f64;
    assert!(
        split.gc <= moved && split.gc > 0.98 * moved,
        "{split:?} vs {moved}"
    );
    // 90 % of the writes go to 1,024 units, 64 of them in the buffer at a
    // time: about 5 % of the writes find their unit still there.
    assert!(split.user <= 1.0 && split.user > 0.9, "{split:?}");
    assert_eq!((split.slc_fold, split.mapping), (0.0, 0.0));
    assert!(
        (split.user + split.gc - r.waf).abs() < 1e-9,
        "{split:?} vs {}",
        r.waf
    );
    // A window that writes nothing gives no estimate.
    let job = fio::parse_str("[r]\nrw=randread\nbs=4k\nnumber_ios=100\n", "r").unwrap();
    let r = simulate_quiet(&RunSpec::new(common::small_slc(), job, "r")).unwrap();
    assert_eq!(r.wear.tbw_bytes, 0.0);
    assert_eq!((r.wear.erase_max, r.wear.wl_index), (0, 1.0));
}

#[test]
fn wear_levelling_narrows_the_erase_spread_under_skewed_writes() {
    let (none, _) = skewed(small(WearLeveling::None), 12);
    let (dynamic, _) = skewed(small(WearLeveling::Dynamic), 12);
    let (stat, _) = skewed(small(WearLeveling::Static), 12);
    let spread = |r: &Report| r.wear.erase_max - r.wear.erase_min;
    eprintln!(
        "spread none {} dynamic {} static {}; std {:.2} {:.2} {:.2}; waf {:.3} {:.3} {:.3}; static runs {}",
        spread(&none),
        spread(&dynamic),
        spread(&stat),
        none.wear.erase_std,
        dynamic.wear.erase_std,
        stat.wear.erase_std,
        none.waf,
        dynamic.waf,
        stat.waf,
        stat.wear.static_wl_runs
    );
    assert_eq!(none.wear.static_wl_runs, 0);
    assert!(stat.wear.static_wl_runs > 0);
    assert!(dynamic.wear.erase_std <= none.wear.erase_std);
    assert!(stat.wear.erase_std < none.wear.erase_std);
    assert!(spread(&stat) < spread(&none));
    assert!(stat.wear.wl_index > none.wear.wl_index);
}

#[test]
fn static_wear_levelling_works_under_hybrid_mapping_too() {
    // BAST with two logs per unit, the same skewed writes: the hot logical
    // blocks' logs merge over and over while the cold data blocks are
    // never erased; static wear levelling moves cold blocks onto worn ones.
    let bast = |wl| {
        let mut d = small(wl);
        d.ftl.mapping = ssdlab_core::config::MappingScheme::Bast;
        d.ftl.log_blocks = 2;
        d
    };
    let (none, _) = skewed(bast(WearLeveling::Dynamic), 3);
    let (stat, s) = skewed(bast(WearLeveling::Static), 3);
    let spread = |r: &Report| r.wear.erase_max - r.wear.erase_min;
    eprintln!(
        "spread dynamic {} static {}; std {:.2} {:.2}; waf {:.3} {:.3}; static runs {}",
        spread(&none),
        spread(&stat),
        none.wear.erase_std,
        stat.wear.erase_std,
        none.waf,
        stat.waf,
        stat.wear.static_wl_runs
    );
    assert_eq!(none.wear.static_wl_runs, 0);
    assert!(stat.wear.static_wl_runs > 0);
    assert!(spread(&stat) < spread(&none));
    assert!(stat.wear.erase_std < none.wear.erase_std);
    // The moves are full merges into the unit's most worn free block.
    assert!(stat
        .merges
        .as_ref()
        .is_some_and(|m| m.full >= stat.wear.static_wl_runs));
    s.drives[0].ftl.check_invariants().unwrap();
}

#[test]
fn bad_wear_settings_are_refused_by_key() {
    for (section, line, key) in [
        (
            "[ftl]\n",
            "wear_leveling = \"sometimes\"\n",
            "ftl.wear_leveling",
        ),
        (
            "[ftl]\n",
            "static_wl_threshold = 0\n",
            "ftl.static_wl_threshold",
        ),
        ("[nand]\n", "endurance = 0\n", "nand.endurance"),
        (
            "[nand]\n",
            "grown_bad_rate = \"20%\"\n",
            "nand.grown_bad_rate",
        ),
        (
            "[nand]\n",
            "grown_bad_rate = \"often\"\n",
            "nand.grown_bad_rate",
        ),
        ("[ftl]\n", "spare_blocks = \"60%\"\n", "ftl.spare_blocks"),
        (
            "[ftl]\n",
            "retire_at_endurance = \"yes\"\n",
            "retire_at_endurance",
        ),
        // Replacement blocks come out of the spare: too many for it.
        (
            "[ftl]\n",
            "spare_blocks = \"20%\"\n",
            "replacement blocks (ftl.spare_blocks)",
        ),
    ] {
        let text = common::SMALL_SLC.replace(section, &format!("{section}{line}"));
        // Wrong types are refused when the file is read, wrong values when
        // it is resolved.
        let e = match DeviceFile::from_toml_str(&text, "small.toml") {
            Err(e) => e.to_string(),
            Ok(f) => f.resolve("small.toml").unwrap_err().to_string(),
        };
        assert!(e.contains(key), "{line}: {e}");
    }
}

#[test]
fn factory_bad_blocks_are_never_used_and_come_out_of_the_spare() {
    // 5 % of the small drive's 64 blocks per unit: 3 per unit, 12 in all,
    // never written; everything written still lands somewhere valid.
    let (r, s) = skewed(
        {
            let text =
                common::SMALL_SLC.replace("[nand]\n", "[nand]\nfactory_bad_blocks = \"5%\"\n");
            common::device(&text, "small")
        },
        3,
    );
    assert_eq!(r.wear.bad_blocks, 12);
    s.drives[0].ftl.check_invariants().unwrap();
    // The mean is over the 244 usable blocks (every erase of the run: a
    // filled drive had none before).
    let erases = r.wear.erase_mean * (256 - 12) as f64;
    assert!(
        (erases - r.gc.blocks_erased as f64).abs() < 1e-6,
        "{erases} vs {}",
        r.gc.blocks_erased
    );
    let geo = &s.drives[0].geo;
    assert_eq!(geo.bad_per_unit, 3);
    // The same drive without them has 12 more blocks of spare: lower WAF.
    let (clean, _) = skewed(common::small_slc(), 3);
    assert!(clean.waf < r.waf, "{} vs {}", clean.waf, r.waf);
    // Too many bad blocks for the spare is refused, naming the key.
    let text = common::SMALL_SLC.replace("[nand]\n", "[nand]\nfactory_bad_blocks = \"20%\"\n");
    let e = DeviceFile::from_toml_str(&text, "small.toml")
        .unwrap()
        .resolve("small.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("factory bad blocks"), "{e}");
    let text = common::SMALL_SLC.replace("[nand]\n", "[nand]\nfactory_bad_blocks = \"60%\"\n");
    let e = DeviceFile::from_toml_str(&text, "small.toml")
        .unwrap()
        .resolve("small.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("nand.factory_bad_blocks"), "{e}");
}

/// Uniform random writes of `drive_writes` passes from a filled drive;
/// the run's result (an error once the drive is worn out).
fn uniform(dev: Device, drive_writes: f64) -> Result<(Report, System), String> {
    let bytes = (dev.capacity_bytes() as f64 * drive_writes) as u64 / 4096 * 4096;
    let w = fio::parse_str(
        &format!("[w]\nrw=randwrite\nbs=4k\niodepth=16\nio_size={bytes}\n"),
        "w",
    )
    .unwrap();
    let mut s = System::new(dev, &w, "w", 5, Precondition::Fill).map_err(|e| e.to_string())?;
    s.run(&mut |_| {}, &|| false).map_err(|e| e.to_string())?;
    let r = Report::from_system(&s, "w", &[], 1.0);
    Ok((r, s))
}

#[test]
fn blocks_are_retired_at_the_rated_endurance_into_replacement_blocks() {
    // 2 replacement blocks per unit (3 % of 64); a rated endurance of 6 P/E
    // cycles, which the most worn blocks reach in 1.7 drive writes of
    // uniform random writes.
    let mut dev = common::small_slc();
    dev.nand.endurance = 6;
    dev.ftl.spare_blocks = 0.03;
    let (r, s) = uniform(dev.clone(), 1.7).unwrap();
    let w = &r.wear;
    assert_eq!(w.spare_blocks, 4 * 2);
    assert!(
        w.grown_bad_blocks > 0 && w.grown_bad_blocks <= w.spare_blocks,
        "{w:?}"
    );
    assert_eq!(w.spare_blocks_used, w.grown_bad_blocks);
    assert_eq!(w.grown_bad_blocks, w.retired_at_endurance);
    // Retired on the erase that reaches the rating: none is erased more.
    assert_eq!(w.erase_max, 6);
    s.drives[0].ftl.check_invariants().unwrap();
    // Without retirement the same run wears blocks past their rating.
    dev.ftl.retire_at_endurance = false;
    let (kept, _) = uniform(dev.clone(), 2.5).unwrap();
    assert_eq!(
        (kept.wear.grown_bad_blocks, kept.wear.spare_blocks_used),
        (0, 0)
    );
    assert!(kept.wear.erase_max > 6 && kept.wear.life_used > 1.0);
    // Worn blocks retired beyond the replacements shrink the spare until
    // the GC has no free block left: the run ends, saying why.
    dev.ftl.retire_at_endurance = true;
    let e = uniform(dev, 2.5).err().expect("the drive should wear out");
    assert!(
        e.contains("drive nvme0 at ") && e.contains("worn out: parallel unit"),
        "{e}"
    );
    assert!(
        e.contains("no replacement block left (ftl.spare_blocks)"),
        "{e}"
    );
    assert!(e.contains("rated endurance of 6 P/E cycles"), "{e}");
}

#[test]
fn a_unit_left_with_too_few_good_blocks_is_worn_out() {
    // 6 replacement blocks per unit: the GC keeps its free blocks through
    // six retirements, then two more leave 56 good blocks, fewer than the
    // 51 of data and 6 of GC reserve a unit needs.
    let mut dev = common::small_slc();
    dev.nand.endurance = 12;
    dev.ftl.spare_blocks = 0.1;
    let e = uniform(dev, 40.0).err().expect("the drive should wear out");
    assert!(e.contains("worn out: parallel unit"), "{e}");
    assert!(
        e.contains("has 56 good blocks left") && e.contains("fewer than the 57"),
        "{e}"
    );
}

#[test]
fn failed_erases_retire_blocks_at_the_configured_rate() {
    let mut dev = common::small_slc();
    dev.nand.grown_bad_rate = 0.005;
    dev.ftl.spare_blocks = 0.1;
    let (r, s) = uniform(dev, 1.0).unwrap();
    let erases = s.drives[0].ftl.stats.blocks_erased as f64;
    let g = r.wear.grown_bad_blocks as f64;
    eprintln!("{} grown bad of {erases} erases", g);
    assert_eq!(r.wear.retired_at_endurance, 0);
    // Binomial(erases, 0.5 %): within 4 standard deviations.
    let sd = (erases * 0.005 * 0.995).sqrt();
    assert!(
        g > 0.0 && (g - erases * 0.005).abs() < 4.0 * sd,
        "{g} of {erases}"
    );
    assert_eq!(r.wear.spare_blocks_used, r.wear.grown_bad_blocks);
    s.drives[0].ftl.check_invariants().unwrap();
}
