//! Running on after a power loss (issue 14, part 5): the power returns,
//! the drive keeps what recovery rebuilt, and a second workload runs on it
//! (`--after-recovery JOB`, `RunSpec::after_recovery`).

mod common;

use ssdlab_core::config::Device;
use ssdlab_core::device::store::StoreSpec;
use ssdlab_core::system::config::SystemConfig;
use ssdlab_core::units::Time;
use ssdlab_core::workload::fio;
use ssdlab_core::{simulate_quiet, Precondition, Report, RunSpec, System};

/// [`common::SMALL_SLC`] with 16 KiB pages: a program unit holds four
/// mapping units, so up to three written units wait in DRAM for company.
fn small_16k(extra_cache: &str) -> Device {
    let text = common::SMALL_SLC
        .replace("page_size = \"4KiB\"", "page_size = \"16KiB\"")
        .replace("[cache]\n", &format!("[cache]\n{extra_cache}"));
    common::device(&text, "small-16k")
}

/// 67 units written sequentially (16 whole program units and three units
/// left in DRAM), then reads of other data until the power fails at 20 ms.
const WRITE_67: &str = "[w]\nrw=write\nbs=4k\niodepth=1\nsize=268k\n\
    [r]\nstonewall\nrw=read\nbs=4k\noffset=1m\nsize=4k\niodepth=1\nloops=5000\nthinktime=10\n";

/// Read those 67 units once.
const READ_67: &str = "[r]\nrw=read\nbs=4k\niodepth=1\nsize=268k\n";

/// `first` until the power fails at `at`, then `then` on the recovered drive.
fn run_on(dev: Device, first: &str, at: f64, then: &str) -> Report {
    let mut spec = RunSpec::new(
        dev,
        fio::parse_str(first, "first.fio").unwrap(),
        "first.fio",
    );
    spec.precondition = Precondition::Fresh;
    spec.power_loss_at = Some(Time::from_secs_f64(at));
    spec.after_recovery = Some((fio::parse_str(then, "then.fio").unwrap(), "then.fio".into()));
    simulate_quiet(&spec).unwrap()
}

#[test]
fn the_run_after_recovery_reads_what_recovery_kept() {
    // Without protection the three units in DRAM are lost (never written
    // before: unmapped), so reading all 67 back takes 64 flash reads; the
    // lost ones read as zeros without one.
    let r = run_on(small_16k(""), WRITE_67, 0.02, READ_67);
    let rec = r.recovery.as_ref().expect("a recovery section");
    assert_eq!((rec.units_lost, rec.units_unmapped), (3, 3), "{rec:?}");
    let after = r.after_recovery.as_ref().expect("the run after recovery");
    assert_eq!(after.read.ios, 67);
    assert_eq!(after.flash.reads, 64, "{:?}", after.flash);
    assert!(after.recovery.is_none());
    // With power-loss protection the capacitors program them: all 67 are
    // on flash after recovery.
    let r = run_on(
        small_16k("power_loss_protection = true\n"),
        WRITE_67,
        0.02,
        READ_67,
    );
    assert_eq!(r.recovery.as_ref().unwrap().units_lost, 0);
    assert_eq!(r.after_recovery.as_ref().unwrap().flash.reads, 67);
    // A flush (end_fsync) before the power loss makes them durable too.
    let flushed = WRITE_67.replace("size=268k\n", "size=268k\nend_fsync=1\n");
    let r = run_on(small_16k(""), &flushed, 0.02, READ_67);
    assert_eq!(r.recovery.as_ref().unwrap().units_lost, 0);
    assert_eq!(r.after_recovery.as_ref().unwrap().flash.reads, 67);
}

const RANDWRITE: &str = "[w]\nrw=randwrite\nbs=4k\niodepth=16\nnumber_ios=60000\n";

#[test]
fn the_drive_runs_on_at_steady_state_consistent_and_deterministic() {
    // Random writes at steady state, power lost mid-GC, then more random
    // writes on the recovered drive: GC goes on from the recovered blocks
    // and the FTL's tables stay consistent.
    let dev = small_16k("");
    let w = fio::parse_str(RANDWRITE, "w.fio").unwrap();
    let mut s = System::new(dev.clone(), &w, "w.fio", 7, Precondition::Steady).unwrap();
    s.power_loss_at(Time::from_secs_f64(0.0123)).unwrap();
    s.run(&mut |_| {}, &|| false).unwrap();
    let lost = s.recovery().unwrap();
    assert!(lost.units_lost > 0, "{lost:?}");
    let mut s = s
        .after_recovery(SystemConfig::single(dev.clone()), &w, "w.fio")
        .unwrap();
    s.run(&mut |_| {}, &|| false).unwrap();
    s.drives[0].ftl.check_invariants().unwrap();
    // fio's random map: one pass over the drive (fewer than number_ios).
    let units = s.drives[0].logical_units();
    assert_eq!(s.ios_done(), units);
    assert!(s.drives[0].ftl.stats.gc_runs > 0);
    assert!(s.recovery().is_none());
    // The whole two-part run twice: identical reports (wall time aside).
    let mut spec = RunSpec::new(dev, w.clone(), "w.fio");
    spec.seed = 7;
    spec.precondition = Precondition::Steady;
    spec.power_loss_at = Some(Time::from_secs_f64(0.0123));
    spec.after_recovery = Some((w, "w.fio".into()));
    let a = run_twice_identical(&spec);
    let after = a.after_recovery.as_ref().unwrap();
    assert_eq!(after.write.ios, units);
    assert!(after.waf > 1.0, "GC after recovery: WAF {}", after.waf);
}

/// `spec` (with a run after recovery) twice: the reports must be identical
/// (wall time aside); returns one.
fn run_twice_identical(spec: &RunSpec) -> Report {
    let strip = |mut r: Report| {
        r.wall_time_s = 0.0;
        r.sim_ios_per_wall_s = 0.0;
        let a = r.after_recovery.as_mut().unwrap();
        a.wall_time_s = 0.0;
        a.sim_ios_per_wall_s = 0.0;
        r
    };
    let a = strip(simulate_quiet(spec).unwrap());
    let b = strip(simulate_quiet(spec).unwrap());
    assert_eq!(a, b, "{}", spec.device.name);
    a
}

fn refused(spec: &RunSpec) -> String {
    match simulate_quiet(spec) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn running_on_that_cannot_happen_is_refused_before_the_run() {
    let w = fio::parse_str(RANDWRITE, "w.fio").unwrap();
    let mut spec = RunSpec::new(small_16k(""), w.clone(), "w.fio");
    spec.precondition = Precondition::Fresh;
    spec.after_recovery = Some((w.clone(), "then.fio".into()));
    let e = refused(&spec);
    assert!(
        e.contains("--after-recovery") && e.contains("--power-loss-at"),
        "{e}"
    );
    // A later power loss needs a run to cut: a job after each earlier one.
    spec.power_loss_at = Some(Time::from_secs_f64(0.01));
    spec.after_recovery = None;
    spec.later_power_losses = vec![(Time::from_secs_f64(0.005), None)];
    let e = refused(&spec);
    assert!(e.contains("--after-recovery"), "{e}");
    spec.after_recovery = Some((w.clone(), "then.fio".into()));
    spec.later_power_losses = vec![
        (Time::from_secs_f64(0.005), None),
        (Time::from_secs_f64(0.005), None),
    ];
    let e = refused(&spec);
    assert!(
        e.contains("power loss 2 has no job after it") && e.contains("power loss 3"),
        "{e}"
    );
    spec.later_power_losses.clear();
    // A job after recovery that verifies needs a data store.
    let verify = "[v]\nrw=read\nbs=4k\nsize=64k\nverify=crc32c\n";
    spec.after_recovery = Some((
        fio::parse_str(verify, "then.fio").unwrap(),
        "then.fio".into(),
    ));
    let e = refused(&spec);
    assert!(e.contains("then.fio") && e.contains("--data-store"), "{e}");
}

#[test]
fn a_system_of_several_drives_runs_on_after_recovery() {
    // Seed 002's board (four drives behind a switch): every drive loses
    // power at once, each keeps its own recovered state, and the job after
    // reads all four.
    let cfg = SystemConfig::load("seed002-4x-gen3-switch").unwrap();
    let stripe = "filename=nvme0:nvme1:nvme2:nvme3\n";
    let w = format!("[w]\nrw=randwrite\nbs=4k\niodepth=32\nnumber_ios=40000\n{stripe}");
    let r = format!("[r]\nrw=randread\nbs=4k\niodepth=32\nnumber_ios=8000\n{stripe}");
    let dev = cfg.drives[0].device.clone();
    let mut spec = RunSpec::new(dev, fio::parse_str(&w, "w.fio").unwrap(), "w.fio");
    spec.precondition = Precondition::Fresh;
    spec.power_loss_at = Some(Time::from_secs_f64(0.01));
    spec.after_recovery = Some((fio::parse_str(&r, "r.fio").unwrap(), "r.fio".into()));
    let (rep, _) = ssdlab_core::simulate_system(cfg, &spec, &mut |_| {}, &|| false).unwrap();
    assert_eq!(rep.drives.len(), 4);
    assert!(rep.drives.values().all(|d| d.recovery.is_some()));
    let after = rep.after_recovery.as_ref().unwrap();
    assert_eq!(after.read.ios, 8000);
    assert_eq!(after.drives.len(), 4);
    for d in after.drives.values() {
        assert_eq!(d.read.ios, 2000);
        assert!(d.recovery.is_none());
    }
}

/// What `job` leaves in the store of [`small_16k`] (no power loss): units
/// `0..n`.
fn stored(job: &str, at: Option<f64>, n: u32) -> (Vec<Vec<u8>>, Option<u64>) {
    let w = fio::parse_str(job, "s.fio").unwrap();
    let mut s = System::new(small_16k(""), &w, "s.fio", 3, Precondition::Fresh).unwrap();
    s.set_data_store(Some(&StoreSpec::Memory), &w, "s.fio")
        .unwrap();
    if let Some(at) = at {
        s.power_loss_at(Time::from_secs_f64(at)).unwrap();
    }
    s.run(&mut |_| {}, &|| false).unwrap();
    let lost = s.recovery().map(|r| r.units_lost);
    let d = &mut s.drives[0];
    let units = (0..n)
        .map(|l| {
            let mut b = vec![0u8; 4096];
            d.store
                .as_mut()
                .unwrap()
                .read(l as u64 * 4096, &mut b)
                .unwrap();
            b
        })
        .collect();
    (units, lost)
}

#[test]
fn the_data_store_holds_what_recovery_rebuilt() {
    // 67 units written and flushed (A), then written again (B) without a
    // flush: B's last three stay in DRAM and are lost at the power loss,
    // so those units hold A's data again; the rest hold B's.
    let a = "[a]\nrw=write\nbs=4k\niodepth=1\nsize=268k\nend_fsync=1\n";
    let b = "[b]\nstonewall\nrw=write\nbs=4k\niodepth=1\nsize=268k\n";
    let keep_on =
        "[r]\nstonewall\nrw=read\nbs=4k\noffset=1m\nsize=4k\niodepth=1\nloops=5000\nthinktime=10\n";
    let (only_a, _) = stored(a, None, 67);
    let (a_then_b, _) = stored(&format!("{a}{b}{keep_on}"), None, 67);
    assert!(only_a.iter().all(|u| u.iter().any(|&x| x != 0)));
    assert!((0..67).all(|i| only_a[i] != a_then_b[i]), "A and B differ");
    let (after, lost) = stored(&format!("{a}{b}{keep_on}"), Some(0.05), 67);
    assert_eq!(lost, Some(3));
    for i in 0..64 {
        assert!(after[i] == a_then_b[i], "unit {i}: B's data (durable)");
    }
    for i in 64..67 {
        assert!(after[i] == only_a[i], "unit {i}: back to A's data");
    }
    // Never flushed: a first write lost entirely reads as zeros.
    let (after, lost) = stored(
        &format!("{b}{keep_on}").replace("stonewall\n", ""),
        Some(0.05),
        67,
    );
    assert_eq!(lost, Some(3));
    assert!(after[66].iter().all(|&x| x == 0) && after[63].iter().any(|&x| x != 0));
}

#[test]
fn fio_verify_after_recovery_finds_every_flushed_write() {
    // Phase one writes 64 units with verify headers and flushes them, then
    // writes elsewhere without flushing until the power fails; after
    // recovery the same job with verify_only reads them back and checks.
    let [(lost, v), (lost2, v2)] =
        verify_after_power_loss(small_16k(""), Precondition::Fresh, "256k", 0.05);
    assert!(lost > 0, "B lost some writes");
    assert_eq!((v.blocks, v.failures), (64, 0), "{v:?}");
    // Without the flush, verify finds what was lost.
    assert!(lost2 > 0 && v2.failures > 0, "lost {lost2}, {v2:?}");
}

/// Phase A writes 64 units with crc32c verify headers and flushes them;
/// phase B writes `b_size` at 1 MiB at random, 500 times over, until the
/// power fails at `at` s; after recovery A's job with `verify_only` checks
/// them (a memory data store). Returns (units lost, verify report) for that
/// run, and for the same without A's flush, the power failing at 0.3 ms.
fn verify_after_power_loss(
    dev: Device,
    pre: Precondition,
    b_size: &str,
    at: f64,
) -> [(u64, ssdlab_core::host::verify::VerifyReport); 2] {
    let a =
        "[a]\nrw=randwrite\nbs=4k\niodepth=4\nsize=256k\nverify=crc32c\ndo_verify=0\nend_fsync=1\n";
    let b = format!(
        "[b]\nstonewall\nrw=randwrite\nbs=4k\niodepth=4\noffset=1m\nsize={b_size}\nloops=500\n"
    );
    let then = a.replace("do_verify=0\n", "verify_only=1\n");
    let mut spec = RunSpec::new(
        dev,
        fio::parse_str(&format!("{a}{b}"), "first.fio").unwrap(),
        "first.fio",
    );
    spec.precondition = pre;
    spec.data_store = Some(StoreSpec::Memory);
    spec.after_recovery = Some((
        fio::parse_str(&then, "then.fio").unwrap(),
        "then.fio".into(),
    ));
    let mut out = Vec::new();
    for (first, loss) in [
        (format!("{a}{b}"), at),
        (format!("{}{b}", a.replace("end_fsync=1\n", "")), 0.0003),
    ] {
        spec.workload = fio::parse_str(&first, "first.fio").unwrap();
        spec.power_loss_at = Some(Time::from_secs_f64(loss));
        let r = simulate_quiet(&spec).unwrap();
        let lost = r.recovery.as_ref().expect("a recovery section").units_lost;
        let v = r
            .after_recovery
            .as_ref()
            .unwrap()
            .verify
            .clone()
            .expect("verified");
        out.push((lost, v));
    }
    [out[0].clone(), out[1].clone()]
}

/// [`common::SMALL_SLC`] (4 KiB pages: one mapping unit a page) with block
/// or hybrid mapping.
fn small_mapped(scheme: &str, log_blocks: u32) -> Device {
    let text = common::SMALL_SLC.replace(
        "[ftl]\n",
        &format!("[ftl]\nmapping = \"{scheme}\"\nlog_blocks = {log_blocks}\n"),
    );
    common::device(&text, &format!("small-{scheme}"))
}

/// 6,000 random 4 KiB writes at QD16, and random reads of the whole drive.
fn writes_and_reads() -> (
    ssdlab_core::workload::Workload,
    ssdlab_core::workload::Workload,
) {
    let w = "[w]\nrw=randwrite\nbs=4k\niodepth=16\nnumber_ios=6000\n";
    let r = "[r]\nrw=randread\nbs=4k\niodepth=16\n";
    (
        fio::parse_str(w, "w.fio").unwrap(),
        fio::parse_str(r, "r.fio").unwrap(),
    )
}

/// Logical units that hold data (mapped) on the first drive.
fn mapped_units(s: &System) -> u64 {
    let f = &s.drives[0].ftl;
    (0..f.logical_units() as u32)
        .filter(|&l| f.lookup(ssdlab_core::units::Lpn(l)) != ssdlab_core::ftl::Mapping::Unmapped)
        .count() as u64
}

/// Erases so far, over the whole drive.
fn erases(s: &System) -> u64 {
    let f = &s.drives[0].ftl;
    let (_, _, mean, _) = f.erase_distribution();
    let blocks = 256 - f.bad_blocks();
    (mean * blocks as f64).round() as u64
}

#[test]
fn block_and_hybrid_mapping_rebuild_their_block_map_at_power_on() {
    // A filled drive, one unit of logical block 0 rewritten and flushed,
    // then reads until the power fails. Block mapping copied the block at
    // the write (one erase); BAST and FAST put the rewrite in a log, which
    // the rebuilt map cannot keep (the logs start empty): a full merge of
    // that logical block, the data block and the log erased. Every other
    // logical block keeps its data block (no erase).
    let first = "[w]\nrw=write\nbs=4k\nsize=4k\nend_fsync=1\n\
        [r]\nstonewall\nrw=read\nbs=4k\noffset=1m\nsize=4k\nloops=5000\nthinktime=10\n";
    let w = fio::parse_str(first, "first.fio").unwrap();
    let then = fio::parse_str("[r]\nrw=randread\nbs=4k\niodepth=8\n", "then.fio").unwrap();
    for (scheme, logs, before, after) in [("block", 0, 1, 1), ("bast", 2, 0, 2), ("fast", 3, 0, 2)]
    {
        let dev = small_mapped(scheme, logs);
        let mut s = System::new(dev.clone(), &w, "first.fio", 1, Precondition::Fill).unwrap();
        s.power_loss_at(Time::from_secs_f64(0.02)).unwrap();
        s.run(&mut |_| {}, &|| false).unwrap();
        assert_eq!(s.recovery().unwrap().units_lost, 0, "{scheme}");
        assert_eq!(erases(&s), before, "{scheme}: erases before the power loss");
        let units = s.drives[0].logical_units();
        let mut q = s
            .after_recovery(SystemConfig::single(dev), &then, "then.fio")
            .unwrap();
        q.drives[0].ftl.check_invariants().unwrap();
        assert_eq!(erases(&q), after, "{scheme}: erases after the rebuild");
        // Every unit is still there: one flash read each.
        q.run(&mut |_| {}, &|| false).unwrap();
        assert_eq!(q.ios_done(), units, "{scheme}");
        assert_eq!(q.drives[0].ftl.stats.host_slots, 0);
        let r = q.drives[0].flash.stats.clone();
        assert_eq!(r.reads, units, "{scheme}: {r:?}");
    }
}

#[test]
fn block_and_hybrid_mapping_run_on_after_a_power_loss_mid_merge() {
    // Random writes on a filled drive (merges under way when the power
    // fails), then random reads of the whole drive: every unit recovery
    // kept reads from flash; then random writes: merges go on from the
    // rebuilt map, the tables stay consistent, and the two-part run is
    // bit-identical twice.
    let (w, reads) = writes_and_reads();
    for (scheme, logs) in [("block", 0), ("bast", 2), ("fast", 3)] {
        let dev = small_mapped(scheme, logs);
        let mut s = System::new(dev.clone(), &w, "w.fio", 5, Precondition::Fill).unwrap();
        s.power_loss_at(Time::from_secs_f64(0.05)).unwrap();
        s.run(&mut |_| {}, &|| false).unwrap();
        let rec = s
            .recovery()
            .expect("the power failed during the writes")
            .clone();
        assert!(rec.units_lost > 0, "{scheme}: {rec:?}");
        // The blocks' wear counts the erases the flash ran or had under
        // way at the loss, not those a plan had counted but not issued
        // (their data is still on flash).
        let flash = &s.drives[0].flash;
        let issued = flash.stats.erases
            + (0..4)
                .map(|die| flash.die_load(die, ssdlab_core::config::OpKind::Erase) as u64)
                .sum::<u64>();
        assert_eq!(erases(&s), issued, "{scheme}");
        let units = s.drives[0].logical_units();
        let mapped = mapped_units(&s);
        assert_eq!(
            mapped,
            units - rec.units_unmapped - rec.relocated_units_lost,
            "{scheme}"
        );
        let mut q = s
            .after_recovery(SystemConfig::single(dev.clone()), &reads, "r.fio")
            .unwrap();
        q.run(&mut |_| {}, &|| false).unwrap();
        q.drives[0].ftl.check_invariants().unwrap();
        assert_eq!(q.ios_done(), units);
        assert_eq!(q.drives[0].flash.stats.reads, mapped, "{scheme}");
        // Writes after recovery: twice, identical.
        let mut spec = RunSpec::new(dev, w.clone(), "w.fio");
        spec.seed = 5;
        spec.precondition = Precondition::Fill;
        spec.power_loss_at = Some(Time::from_secs_f64(0.05));
        spec.after_recovery = Some((w.clone(), "w.fio".into()));
        let a = run_twice_identical(&spec);
        let after = a.after_recovery.as_ref().unwrap();
        assert_eq!(after.write.ios, 6000, "{scheme}");
        assert!(
            after.waf > 1.0,
            "{scheme}: merges after recovery: WAF {}",
            after.waf
        );
    }
}

#[test]
fn block_and_hybrid_mapping_keep_the_data_store_through_a_power_loss() {
    // As `fio_verify_after_recovery_finds_every_flushed_write`, with block,
    // BAST and FAST mapping on a filled drive: 64 flushed units with verify
    // headers, then random writes elsewhere (merges under way) until the
    // power fails; after recovery (the block map rebuilt) verify_only finds
    // every flushed unit. Without the flush, it finds what was lost.
    for (scheme, logs) in [("block", 0), ("bast", 2), ("fast", 3)] {
        let dev = small_mapped(scheme, logs);
        let [(lost, v), (lost2, v2)] = verify_after_power_loss(dev, Precondition::Fill, "1m", 0.2);
        assert!(lost > 0, "{scheme}: B lost some writes");
        assert_eq!((v.blocks, v.failures), (64, 0), "{scheme}: {v:?}");
        assert!(
            lost2 > 0 && v2.failures > 0,
            "{scheme}: lost {lost2}, {v2:?}"
        );
    }
}

#[test]
fn a_recovered_drive_can_lose_its_power_again() {
    // Random writes, a power loss, random writes on the recovered drive
    // with a second power loss, and a third run: each recovery keeps the
    // tables consistent, and every unit the second recovery kept is read
    // from flash in the third run. Page mapping, BAST, and FAST with a
    // checkpoint every 2 ms (each recovery after the first reads one the
    // recovered drive wrote).
    let (w, reads) = writes_and_reads();
    let mut fast = small_mapped("fast", 3);
    fast.ftl.checkpoint_interval = Some(Time::from_secs_f64(0.002));
    for dev in [small_16k(""), small_mapped("bast", 2), fast] {
        let mut s = System::new(dev.clone(), &w, "w.fio", 9, Precondition::Fill).unwrap();
        s.power_loss_at(Time::from_secs_f64(0.03)).unwrap();
        s.run(&mut |_| {}, &|| false).unwrap();
        assert!(s.recovery().unwrap().units_lost > 0);
        let mut q = s
            .after_recovery(SystemConfig::single(dev.clone()), &w, "w.fio")
            .unwrap();
        q.power_loss_at(Time::from_secs_f64(0.02)).unwrap();
        q.run(&mut |_| {}, &|| false).unwrap();
        let second = q.recovery().expect("the second power loss");
        assert!(second.units_lost > 0, "{second:?}");
        if dev.ftl.checkpoint_interval.is_some() {
            let last = second
                .last_checkpoint_s
                .expect("a checkpoint after recovery");
            assert!(last > 0.0 && last < 0.02, "{second:?}");
            assert!(second.checkpoint_pages_read > 0, "{second:?}");
        }
        q.drives[0].ftl.check_invariants().unwrap();
        let units = q.drives[0].logical_units();
        let mapped = mapped_units(&q);
        let mut r = q
            .after_recovery(SystemConfig::single(dev.clone()), &reads, "r.fio")
            .unwrap();
        r.run(&mut |_| {}, &|| false).unwrap();
        r.drives[0].ftl.check_invariants().unwrap();
        assert_eq!(r.ios_done(), units);
        assert_eq!(r.drives[0].flash.stats.reads, mapped, "{}", dev.name);
    }
}
