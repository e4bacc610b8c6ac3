//! Power loss and recovery (issue 14, part 5): what a drive loses when its
//! power fails mid-run, what power-loss protection saves, what recovery
//! reads and how long it takes, and the errors for runs that cannot have
//! one.

mod common;

use ssdlab_core::config::Device;
use ssdlab_core::device::recovery::RecoveryReport;
use ssdlab_core::units::Time;
use ssdlab_core::workload::fio;
use ssdlab_core::{Precondition, System};

/// Run `job` on `dev` with the power failing at `at`; the recovery report
/// and the drive's FTL checked for consistency.
fn lose_power(dev: Device, job: &str, pre: Precondition, at: Time) -> RecoveryReport {
    lose_power_in(dev, job, pre, at).0
}

/// [`lose_power`], with the system after it (for its other reports).
fn lose_power_in(dev: Device, job: &str, pre: Precondition, at: Time) -> (RecoveryReport, System) {
    let w = fio::parse_str(job, "pl.fio").unwrap();
    let mut s = System::new(dev, &w, "pl.fio", 7, pre).unwrap();
    s.power_loss_at(at).unwrap();
    s.run(&mut |_| {}, &|| false).unwrap();
    s.drives[0].ftl.check_invariants().unwrap();
    (s.recovery().expect("a recovery section"), s)
}

/// [`common::SMALL_SLC`] with 16 KiB pages: a program unit holds four
/// mapping units, so GC copies wait in DRAM for company.
fn small_16k() -> Device {
    common::device(
        &common::SMALL_SLC.replace("page_size = \"4KiB\"", "page_size = \"16KiB\""),
        "small-16k",
    )
}

const RANDWRITE: &str = "[w]\nrw=randwrite\nbs=4k\niodepth=16\nnumber_ios=60000\n";

#[test]
fn gc_copies_survive_a_power_loss_at_any_instant() {
    // Steady state on a small volatile drive: GC runs all the time, so
    // some power losses fall between a victim's last read and the program
    // of its copies.
    let mut lost_host = 0;
    for k in 1..=40u64 {
        let r = lose_power(
            small_16k(),
            RANDWRITE,
            Precondition::Steady,
            Time::from_secs_f64(0.003 * k as f64 + 0.000_137 * k as f64),
        );
        assert_eq!(
            r.relocated_units_lost, 0,
            "at {} s: {r:?}",
            r.power_loss_at_s
        );
        assert!(!r.power_loss_protection);
        lost_host += r.units_lost;
    }
    assert!(lost_host > 0, "a volatile buffer under writes loses some");
}

#[test]
fn power_loss_protection_saves_what_dram_holds() {
    let dev = common::device(
        &common::SMALL_SLC.replace(
            "write_buffer = \"256KiB\"",
            "write_buffer = \"256KiB\"\npower_loss_protection = true",
        ),
        "small-plp",
    );
    let r = lose_power(
        dev,
        RANDWRITE,
        Precondition::Steady,
        Time::from_secs_f64(0.01),
    );
    assert!(r.power_loss_protection);
    assert_eq!((r.units_lost, r.relocated_units_lost), (0, 0), "{r:?}");
    assert!(r.units_saved_by_capacitors > 0, "{r:?}");
    assert!(r.recovery_time_s > 0.0);
}

#[test]
fn the_capacitor_flush_takes_its_programs_time_and_energy() {
    // Four dies, two per channel, one parallel unit each; SLC with one
    // 4 KiB mapping unit per program: the n units in DRAM are spread over
    // the four units, so the busiest die programs ceil(n / 4) of them,
    // each t_cmd + tPROG, after its first 10.24 us transfer (4 KiB at
    // 400 MB/s); the channel's transfers (2 x ceil(n/4) x 10.24 us) are
    // shorter. Energy: 50 uJ per program and 2 W of other power for that long.
    let text = common::SMALL_SLC
        .replace(
            "write_buffer = \"256KiB\"",
            "write_buffer = \"256KiB\"\npower_loss_protection = true",
        )
        .replace(
            "bus_bandwidth = \"400MB/s\"",
            "bus_bandwidth = \"400MB/s\"\nt_cmd = \"100ns\"",
        )
        + "[power]\nnand_program_energy = \"50uJ\"\nother_power = \"2W\"\n";
    let dev = common::device(&text, "small-plp-power");
    let r = lose_power(
        dev,
        RANDWRITE,
        Precondition::Fill,
        Time::from_secs_f64(0.002),
    );
    let n = r.units_saved_by_capacitors;
    assert!(n > 8, "{r:?}");
    let k = n.div_ceil(4) as f64;
    let want = 10.24e-6 + k * 200.1e-6;
    assert!(
        (r.capacitor_flush_s - want).abs() < 1e-12,
        "{n} units: flush {} s, expected {want} s",
        r.capacitor_flush_s
    );
    let joules = r.capacitor_flush_energy_j.expect("a power model");
    let want_j = 2.0 * want + 50e-6 * n as f64;
    assert!(
        (joules - want_j).abs() < 1e-12,
        "{joules} J, expected {want_j} J"
    );
    // Without power-loss protection there is no flush.
    let r = lose_power(
        small_16k(),
        RANDWRITE,
        Precondition::Fill,
        Time::from_secs_f64(0.002),
    );
    assert_eq!(
        (r.capacitor_flush_s, r.capacitor_flush_energy_j),
        (0.0, None)
    );
}

#[test]
fn a_flush_after_every_write_leaves_at_most_that_write_to_lose() {
    // QD1, each 4 KiB write followed by an NVMe Flush: whenever the power
    // fails, only the write whose flush has not completed can be lost.
    let job = "[w]\nrw=randwrite\nbs=4k\niodepth=1\nfsync=1\nnumber_ios=3000\n";
    let mut caught = 0;
    for k in 0..25u64 {
        let at = Time::from_secs_f64(0.0004 + 0.000_913 * k as f64);
        let r = lose_power(small_16k(), job, Precondition::Fill, at);
        assert!(r.units_lost <= 1, "at {at:?}: {r:?}");
        assert!(r.commands_in_flight <= 1);
        caught += r.units_lost;
    }
    // Each write waits in DRAM for its flush's program (200 us of about
    // 250 us per write): most instants catch one.
    assert!(caught >= 10, "{caught} of 25 instants caught a write");
}

/// [`small_16k`] with block or hybrid mapping (`scheme`, with
/// `log_blocks` logs per parallel unit).
fn small_hybrid(scheme: &str, log_blocks: u32) -> Device {
    let logs = if log_blocks > 0 {
        format!("\nlog_blocks = {log_blocks}")
    } else {
        String::new()
    };
    common::device(
        &common::SMALL_SLC
            .replace("page_size = \"4KiB\"", "page_size = \"16KiB\"")
            .replace("[ftl]\n", &format!("[ftl]\nmapping = \"{scheme}\"{logs}\n")),
        "small-hybrid",
    )
}

#[test]
fn block_and_hybrid_mapping_lose_at_most_the_unflushed_write_and_no_merge_copy() {
    // QD1 random writes with a flush after each, on a filled drive: every
    // write below a data block's write pointer merges (block mapping copies
    // the block; BAST and FAST append to logs and merge them when they
    // fill). Whenever the power fails (in a merge's reads, programs or
    // erases, or in a host program), only the write whose flush has not
    // completed can be lost, and no unit a merge was copying.
    let job = "[w]\nrw=randwrite\nbs=4k\niodepth=1\nfsync=1\nnumber_ios=3000\n";
    for (scheme, logs) in [("block", 0), ("bast", 2), ("fast", 3)] {
        let mut caught = 0;
        let mut merges_ran = 0;
        for k in 0..25u64 {
            let at = Time::from_secs_f64(0.0013 + 0.0231 * k as f64);
            let (r, s) = lose_power_in(small_hybrid(scheme, logs), job, Precondition::Fill, at);
            assert!(r.units_lost <= 1, "{scheme} at {at:?}: {r:?}");
            assert_eq!(r.relocated_units_lost, 0, "{scheme} at {at:?}: {r:?}");
            assert!(r.commands_in_flight <= 1);
            assert!(r.oob_reads > 0, "{scheme}: a filled drive is scanned");
            caught += r.units_lost;
            merges_ran += s.drives[0].ftl.stats.merge_slots_copied.min(1);
        }
        assert!(
            caught >= 5,
            "{scheme}: {caught} of 25 instants caught a write"
        );
        assert!(merges_ran > 0, "{scheme}: merges ran");
    }
}

#[test]
fn block_mapping_recovery_reads_logs_whole_and_data_blocks_by_search() {
    // BAST with one log per unit on a filled drive, writes that only
    // fill the logs' first program units and flush: recovery reads each
    // data block's first page row and binary-searches full blocks no
    // further (1 read each), and reads every written row of each log.
    let dev = small_hybrid("bast", 1);
    let job = "[w]\nrw=randwrite\nbs=4k\niodepth=1\nfsync=1\nnumber_ios=4\n\
               [r]\nstonewall\nrw=read\nbs=4k\nsize=4k\niodepth=1\nloops=8000\nthinktime=10\n";
    let (r, s) = lose_power_in(dev, job, Precondition::Fill, Time::from_secs_f64(0.15));
    assert_eq!(r.units_lost, 0, "all flushed: {r:?}");
    let ftl = &s.drives[0].ftl;
    let g = &ftl.geo;
    // Data blocks the fill wrote, full: one read each; the partly written
    // last one of each unit: 1 + log2(64) + 1 = 8 reads.
    let full_blocks = ftl.logical_units() / g.slots_per_block as u64;
    assert!(r.oob_reads >= full_blocks, "{r:?}");
    assert!(r.oob_reads <= full_blocks + 4 * 8 + 4 * 64, "{r:?}");
    assert_eq!(r.summary_pages_read, 0, "block mapping writes no summaries");
}

#[test]
fn without_flushes_the_buffered_writes_are_lost_and_counted() {
    // A fresh drive: three 4 KiB writes, less than a 16 KiB program unit,
    // stay in DRAM (nothing forces a program); reads keep the run going.
    // They are lost, with no older version to go back to, and with nothing
    // on flash recovery reads nothing.
    let job = "[w]\nrw=write\nbs=4k\niodepth=1\nsize=12k\n\
               [r]\nstonewall\nrw=read\nbs=4k\nsize=12k\niodepth=1\nloops=200\nthinktime=10\n";
    let r = lose_power(
        small_16k(),
        job,
        Precondition::Fresh,
        Time::from_secs_f64(0.002),
    );
    assert_eq!(r.units_lost, 3, "{r:?}");
    assert_eq!(r.units_unmapped, 3);
    assert_eq!(r.units_reverted, 0);
    assert_eq!(r.bytes_lost, 3 * 4096);
    assert_eq!((r.summary_pages_read, r.oob_reads, r.bytes_read), (0, 0, 0));
    assert_eq!(r.recovery_time_s, 0.0);
}

#[test]
fn recovery_time_on_one_die_is_the_sum_of_its_reads() {
    // One channel, one die, 4 KiB SLC pages of one mapping unit, 64 pages
    // a block: a block's summary (64 slots x 8 B) fits one page. Three
    // blocks and five pages written and flushed, then only reads: recovery
    // reads 3 summaries (page transfers) and 5 out-of-band areas (8 B
    // each), one after another on the die: 8 x (t_cmd + tR) + the last
    // transfer (the earlier ones overlap the next array reads).
    let dev = common::analytic_device(1, 1, "", "");
    let units = 3 * 64 + 5;
    let job = format!(
        "[w]\nrw=write\nbs=4k\niodepth=1\nsize={}k\nend_fsync=1\n\
         [r]\nstonewall\nrw=read\nbs=4k\nsize=4k\niodepth=1\nloops=2000\nthinktime=10\n",
        units * 4
    );
    let r = lose_power(dev, &job, Precondition::Fresh, Time::from_secs_f64(0.06));
    assert_eq!(r.units_lost, 0, "all flushed: {r:?}");
    assert_eq!((r.summary_pages_read, r.oob_reads), (3, 5), "{r:?}");
    assert_eq!(r.bytes_read, 3 * 4096 + 5 * 8);
    let per_read = 100e-9 + 25e-6;
    let last = 8.0 / 400e6;
    let want = 8.0 * per_read + last;
    assert!(
        (r.recovery_time_s - want).abs() < 1e-9,
        "{} vs {want}",
        r.recovery_time_s
    );
}

#[test]
fn power_losses_are_deterministic() {
    let a = lose_power(
        small_16k(),
        RANDWRITE,
        Precondition::Steady,
        Time::from_secs_f64(0.0123),
    );
    let b = lose_power(
        small_16k(),
        RANDWRITE,
        Precondition::Steady,
        Time::from_secs_f64(0.0123),
    );
    assert_eq!(a, b);
}

fn refused(dev: Device, job: &str, at: Time, store: bool) -> String {
    let w = fio::parse_str(job, "pl.fio").unwrap();
    let mut s = System::new(dev, &w, "pl.fio", 7, Precondition::Fresh).unwrap();
    if store {
        s.set_data_store(
            Some(&ssdlab_core::device::store::StoreSpec::Memory),
            &w,
            "pl.fio",
        )
        .unwrap();
    }
    match s.power_loss_at(at) {
        Err(e) => e.to_string(),
        Ok(()) => match s.run(&mut |_| {}, &|| false) {
            Err(e) => e.to_string(),
            Ok(()) => panic!("accepted"),
        },
    }
}

#[test]
fn power_losses_that_cannot_happen_are_refused_with_the_reason() {
    let short = "[w]\nrw=randwrite\nbs=4k\niodepth=4\nnumber_ios=100\n";
    let e = refused(small_16k(), short, Time::from_secs_f64(5.0), false);
    assert!(
        e.contains("--power-loss-at 5.000000 s") && e.contains("the run ended before it"),
        "{e}"
    );
    let e = refused(small_16k(), short, Time::ZERO, false);
    assert!(e.contains("after the start of the run"), "{e}");
    let ram = Device::preset("seed000-eisc-ramdisk").unwrap();
    let e = refused(ram, short, Time::from_secs_f64(0.001), false);
    assert!(e.contains("RAM disk") && e.contains("nvme0"), "{e}");
}

#[test]
fn capacitors_too_small_lose_the_rest_under_hybrid_mapping_too() {
    // BAST with protection and a power model: without a budget nothing is
    // lost; with half the energy that flush took, the capacitors save the
    // groups' host data first, then the buffer, and what they do not reach
    // is lost, unit for unit.
    let text = common::SMALL_SLC
        .replace("page_size = \"4KiB\"", "page_size = \"16KiB\"")
        .replace("[ftl]\n", "[ftl]\nmapping = \"bast\"\nlog_blocks = 2\n")
        .replace(
            "write_buffer = \"256KiB\"",
            "write_buffer = \"256KiB\"\npower_loss_protection = true",
        )
        + "[power]\nnand_program_energy = \"50uJ\"\nother_power = \"2W\"\n";
    let dev = common::device(&text, "small-bast-plp");
    // 16 KiB writes: each group under way holds a whole program unit.
    let job = "[w]\nrw=randwrite\nbs=16k\niodepth=16\nnumber_ios=20000\n";
    let at = Time::from_secs_f64(0.0173);
    let full = lose_power(dev.clone(), job, Precondition::Fill, at);
    assert_eq!(
        (full.units_lost, full.units_beyond_capacitors),
        (0, 0),
        "{full:?}"
    );
    let need = full.capacitor_flush_energy_j.expect("a power model");
    assert!(full.units_saved_by_capacitors > 4, "{full:?}");
    // Half the energy, and a quarter: less than the 16 units of host data
    // the groups under way hold at this instant need, so only the first
    // planned of them are saved (8) and nothing of the buffer (saving them
    // all instead fails the count below).
    for budget in [need / 2.0, need / 4.0] {
        let mut d = dev.clone();
        d.cache.capacitor_energy = Some(ssdlab_core::units::Energy(budget));
        let r = lose_power(d, job, Precondition::Fill, at);
        assert!(
            r.capacitor_flush_energy_j.is_some_and(|e| e <= budget),
            "{r:?}"
        );
        assert!(
            r.units_saved_by_capacitors > 0 && r.units_beyond_capacitors > 0,
            "{r:?}"
        );
        assert_eq!(
            r.units_saved_by_capacitors + r.units_beyond_capacitors,
            full.units_saved_by_capacitors
        );
        assert_eq!(r.units_lost, r.units_beyond_capacitors, "{budget} J: {r:?}");
        assert_eq!(r.relocated_units_lost, 0, "{r:?}");
    }
}

#[test]
fn with_protection_block_and_hybrid_mapping_lose_nothing_and_abandon_merges() {
    // Random writes at QD16 without flushes: merges are under way at most
    // instants. The capacitors save what DRAM holds (the buffer, and host
    // data of the groups under way); the merges stop and the units they
    // were copying stay where they were.
    for (scheme, logs) in [("block", 0), ("bast", 2), ("fast", 3)] {
        let mut saved = 0;
        for k in 0..8u64 {
            let mut dev = small_hybrid(scheme, logs);
            dev.cache.power_loss_protection = true;
            let at = Time::from_secs_f64(0.0021 + 0.0113 * k as f64);
            let r = lose_power(dev, RANDWRITE, Precondition::Fill, at);
            assert_eq!(
                (r.units_lost, r.relocated_units_lost),
                (0, 0),
                "{scheme} at {at:?}: {r:?}"
            );
            saved += r.units_saved_by_capacitors;
        }
        assert!(saved > 0, "{scheme}: the capacitors saved units");
    }
}

/// `dev` with mapping checkpoints every `interval`.
fn with_checkpoints(dev: Device, interval: &str) -> Device {
    let mut d = dev;
    d.ftl.checkpoint_interval = Some(ssdlab_core::units::parse_time(interval).unwrap());
    d
}

#[test]
fn recovery_of_an_empty_drive_costs_only_the_checkpoint_read() {
    // One die: 3,276 logical units, 4 translation pages of 1,024 entries
    // and 64 blocks: the record (4 x 4 B + 64 x 8 B) is one 4 KiB unit.
    // Nothing is written (reads of unmapped data keep the run going), so
    // the checkpoint at 1 ms writes only its record, and recovery reads
    // only that: t_cmd + tR + one 4 KiB transfer.
    let dev = with_checkpoints(common::analytic_device(1, 1, "", ""), "1ms");
    let job = "[r]\nrw=randread\nbs=4k\niodepth=1\nnumber_ios=20000\nthinktime=10\n";
    let r = lose_power(dev, job, Precondition::Fresh, Time::from_secs_f64(0.005));
    assert_eq!(r.last_checkpoint_s, Some(0.001), "{r:?}");
    assert_eq!(
        (r.checkpoint_pages_read, r.summary_pages_read, r.oob_reads),
        (1, 0, 0),
        "{r:?}"
    );
    let want = 100e-9 + 25e-6 + 4096.0 / 400e6;
    assert!(
        (r.recovery_time_s - want).abs() < 1e-9,
        "{} vs {want}",
        r.recovery_time_s
    );
}

#[test]
fn checkpoints_cost_writes_and_shorten_recovery() {
    let job = "[w]\nrw=randwrite\nbs=4k\niodepth=16\nnumber_ios=60000\n";
    let at = Time::from_secs_f64(0.05);
    let without = lose_power(small_16k(), job, Precondition::Steady, at);
    let (with, s) = lose_power_in(
        with_checkpoints(small_16k(), "5ms"),
        job,
        Precondition::Steady,
        at,
    );
    let c = s.drives[0].checkpoint_report().unwrap();
    // Ten intervals: a checkpoint in most (none after an interval in
    // which GC held every host write back: the next host program re-arms).
    assert!(c.taken >= 6 && c.skipped == 0, "{c:?}");
    let last = c.last_complete_s.unwrap();
    assert!(last > 0.025 && last < 0.05, "{c:?}");
    assert_eq!(with.last_checkpoint_s, Some(last));
    // Each checkpoint writes the translation pages random writes touched
    // (most of the 52) and the record.
    assert!(c.units_written > 6 * 20, "{c:?}");
    // Their own part of the write amplification: every unit they queued
    // (the whole mapping is in DRAM: nothing else writes translation pages).
    let r = ssdlab_core::report::Report::from_system(&s, "pl.fio", &[], 1.0);
    let ws = &r.waf_split;
    assert!(
        (ws.checkpoint * ws.host_units as f64 - c.units_written as f64).abs() < 0.5,
        "{ws:?} {c:?}"
    );
    assert!(ws.mapping < ws.checkpoint, "{ws:?}");
    // Recovery reads the checkpoint (record + translation pages) and only
    // the blocks closed since it began, not every closed block.
    assert!(with.checkpoint_pages_read > 20, "{with:?}");
    assert_eq!(without.checkpoint_pages_read, 0);
    assert!(
        with.summary_pages_read * 4 < without.summary_pages_read,
        "{with:?} vs {without:?}"
    );
    assert!(with.recovery_time_s < without.recovery_time_s);
    // The same writes are lost either way: checkpoints cover the mapping,
    // not the data in DRAM.
    assert_eq!(with.units_lost > 0, without.units_lost > 0);
}

#[test]
fn a_log_size_trigger_bounds_what_recovery_scans() {
    // Checkpoints only by log size: every 4 KiB of mapping log (512
    // updates of 8 B), on a small drive at steady state (GC copies count:
    // they move mappings too).
    let job = "[w]\nrw=randwrite\nbs=4k\niodepth=16\nnumber_ios=60000\n";
    let at = Time::from_secs_f64(0.05);
    let without = lose_power(small_16k(), job, Precondition::Steady, at);
    let mut dev = small_16k();
    dev.ftl.checkpoint_log_size = Some(ssdlab_core::units::Bytes(4 << 10));
    let w = fio::parse_str(job, "pl.fio").unwrap();
    let mut s = System::new(dev, &w, "pl.fio", 7, Precondition::Steady).unwrap();
    s.power_loss_at(at).unwrap();
    s.run(&mut |_| {}, &|| false).unwrap();
    s.drives[0].ftl.check_invariants().unwrap();
    let with = s.recovery().unwrap();
    let c = s.drives[0].checkpoint_report().unwrap();
    // Mapping updates in the run: host units and GC copies programmed
    // (translation pages and records are what checkpoints write).
    let updates = c.log_entries;
    let st = &s.drives[0].ftl.stats;
    assert!(
        updates > 0 && updates <= st.host_slots + st.gc_slots_moved,
        "{c:?} {st:?}"
    );
    assert_eq!((c.interval_s, c.log_size_bytes), (0.0, 4 << 10), "{c:?}");
    assert_eq!(c.by_log_size, c.taken, "{c:?}");
    // Each checkpoint began once 512 more updates were logged (none
    // earlier), and none waited long: at most one checkpoint's worth of
    // writing beyond the limit between two.
    assert!(c.taken * 512 <= updates, "{updates} updates: {c:?}");
    assert!((c.taken + 2) * 512 > updates, "{updates} updates: {c:?}");
    assert_eq!(c.skipped, 0);
    // Recovery scans only the blocks closed since the last one began.
    assert!(with.last_checkpoint_s.is_some(), "{with:?}");
    assert!(
        with.summary_pages_read * 4 < without.summary_pages_read,
        "{with:?} vs {without:?}"
    );
}

#[test]
fn a_bad_checkpoint_log_size_is_refused_by_key() {
    for (value, says) in [
        ("\"4B\"", "at least one 8 B log entry"),
        ("\"lots\"", "checkpoint_log_size"),
        ("64", "checkpoint_log_size"),
    ] {
        let text = common::SMALL_SLC.replace(
            "[ftl]\n",
            &format!("[ftl]\ncheckpoint_log_size = {value}\n"),
        );
        let e = ssdlab_core::config::DeviceFile::from_toml_str(&text, "ck.toml")
            .and_then(|f| f.resolve("ck.toml"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("ftl.checkpoint_log_size") && e.contains(says),
            "{value}: {e}"
        );
    }
}

#[test]
fn block_and_hybrid_checkpoints_cost_writes_and_shorten_recovery() {
    // Random writes on a filled drive, the power lost at 50 ms, with and
    // without a checkpoint every 5 ms. A checkpoint is each unit's block
    // table, block map and log table (8 B a block, 8 B a logical block,
    // 16 B a log) in blocks of its own: recovery reads the last complete
    // one and scans only the blocks the block map changed since it began,
    // not every data block.
    let job = "[w]\nrw=randwrite\nbs=4k\niodepth=16\nnumber_ios=60000\n";
    let at = Time::from_secs_f64(0.05);
    for (scheme, logs) in [("block", 0), ("bast", 2), ("fast", 3)] {
        let without = lose_power(small_hybrid(scheme, logs), job, Precondition::Fill, at);
        let (with, s) = lose_power_in(
            with_checkpoints(small_hybrid(scheme, logs), "5ms"),
            job,
            Precondition::Fill,
            at,
        );
        let ftl = &s.drives[0].ftl;
        let g = &ftl.geo;
        let c = s.drives[0].checkpoint_report().unwrap();
        // Block mapping copies a block per random write: few host programs,
        // and an interval without one takes no checkpoint; one that comes
        // while the last is still being written (behind merges) is skipped.
        assert!(c.taken >= 3 && c.skipped <= 2, "{scheme}: {c:?}");
        assert_eq!(c.skipped_no_room, 0, "{scheme}: {c:?}");
        // Each unit's part: (8 x blocks + 8 x logical blocks + 16 x logs)
        // bytes in 4 KiB units, padded to whole program units.
        let lbns = ssdlab_core::ftl::logical_blocks_per_unit(g, ftl.logical_units());
        let bytes = 8 * g.blocks_per_unit as u64 + 8 * lbns + 16 * logs as u64;
        let spp = g.slots_per_program as u64;
        let per = bytes.div_ceil(4096).div_ceil(spp) * spp * g.units as u64;
        assert_eq!(c.units_written, c.taken * per, "{scheme}: {c:?}");
        let r = ssdlab_core::report::Report::from_system(&s, "pl.fio", &[], 1.0);
        let ws = &r.waf_split;
        assert!(
            (ws.checkpoint * ws.host_units as f64 - c.units_written as f64).abs() < 0.5,
            "{scheme}: {ws:?} {c:?}"
        );
        let last = c.last_complete_s.unwrap();
        assert!(last > 0.025 && last < 0.05, "{scheme}: {c:?}");
        assert_eq!(with.last_checkpoint_s, Some(last));
        // The last complete checkpoint is read whole (its units, on every
        // parallel unit), and nothing else of it.
        assert_eq!(with.checkpoint_pages_read, per, "{scheme}: {with:?}");
        assert_eq!(without.checkpoint_pages_read, 0);
        assert!(
            with.oob_reads * 4 < without.oob_reads,
            "{scheme}: {with:?} vs {without:?}"
        );
        assert!(with.recovery_time_s < without.recovery_time_s, "{scheme}");
    }
}

#[test]
fn block_and_hybrid_checkpoints_need_room_for_their_log() {
    // A unit of 64 blocks with 52 logical blocks (25 % spare, its share
    // rounded up to whole blocks), 11 BAST logs and a merge target has no
    // block left: enough without checkpoints, not with the checkpoint
    // log's 3 (a checkpoint of one block here: the last complete one over
    // two blocks at most, and the next in a third).
    let resolve = |extra: &str| {
        let text = common::SMALL_SLC.replace(
            "[ftl]\n",
            &format!("[ftl]\nmapping = \"bast\"\nlog_blocks = 11\n{extra}"),
        );
        ssdlab_core::config::DeviceFile::from_toml_str(&text, "ck.toml")
            .and_then(|f| f.resolve("ck.toml"))
            .map_err(|e| e.to_string())
    };
    assert!(resolve("").is_ok(), "{:?}", resolve("").err());
    let e = resolve("checkpoint_log_size = \"1MiB\"\n").unwrap_err();
    assert!(
        e.contains("ftl.log_blocks")
            && e.contains("needs 67 blocks")
            && e.contains("3 for the checkpoint log"),
        "{e}"
    );
}

#[test]
fn a_bad_checkpoint_interval_is_refused_by_key() {
    let text = common::SMALL_SLC.replace("[ftl]\n", "[ftl]\ncheckpoint_interval = \"0s\"\n");
    let e = ssdlab_core::config::DeviceFile::from_toml_str(&text, "ck.toml")
        .and_then(|f| f.resolve("ck.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ftl.checkpoint_interval") && e.contains("at least 100us"),
        "{e}"
    );
    // A picosecond period would start a checkpoint per event (a hang found
    // by the structured fuzzer); 100 us is the shortest, and accepted.
    for (v, ok) in [("1ps", false), ("99us", false), ("100us", true)] {
        let text = common::SMALL_SLC.replace(
            "[ftl]\n",
            &format!("[ftl]\ncheckpoint_interval = \"{v}\"\n"),
        );
        let r = ssdlab_core::config::DeviceFile::from_toml_str(&text, "ck.toml")
            .and_then(|f| f.resolve("ck.toml"));
        assert_eq!(r.is_ok(), ok, "{v}: {:?}", r.err().map(|e| e.to_string()));
    }
    let text = common::SMALL_SLC.replace("[ftl]\n", "[ftl]\ncheckpoint_interval = \"often\"\n");
    let e = ssdlab_core::config::DeviceFile::from_toml_str(&text, "ck.toml")
        .and_then(|f| f.resolve("ck.toml"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("ftl.checkpoint_interval"), "{e}");
}

/// [`common::SMALL_SLC`] with power-loss protection, `t_cmd` and a power
/// model as in [`the_capacitor_flush_takes_its_programs_time_and_energy`],
/// and `extra` added to `[cache]`.
fn plp_with_power(extra: &str) -> String {
    common::SMALL_SLC
        .replace(
            "write_buffer = \"256KiB\"",
            &format!("write_buffer = \"256KiB\"\npower_loss_protection = true\n{extra}"),
        )
        .replace(
            "bus_bandwidth = \"400MB/s\"",
            "bus_bandwidth = \"400MB/s\"\nt_cmd = \"100ns\"",
        )
        + "[power]\nnand_program_energy = \"50uJ\"\nother_power = \"2W\"\n"
}

#[test]
fn capacitors_without_the_energy_for_the_whole_flush_save_what_it_covers() {
    // The flush of k units on this drive (see the test above) draws
    // E(k) = 2 W x (10.24 us + ceil(k/4) x 200.1 us) + 50 uJ x k.
    let e = |k: u64| 2.0 * (10.24e-6 + k.div_ceil(4) as f64 * 200.1e-6) + 50e-6 * k as f64;
    let at = Time::from_secs_f64(0.002);
    let full = lose_power(
        common::device(&plp_with_power(""), "plp"),
        RANDWRITE,
        Precondition::Fill,
        at,
    );
    let n = full.units_saved_by_capacitors;
    assert!(n > 8, "{full:?}");
    assert_eq!(full.units_beyond_capacitors, 0);
    // A full 256 KiB buffer is 64 units.
    let need = full.full_buffer_flush_energy_j.expect("a power model");
    assert!((need - e(64)).abs() < 1e-12, "{need} J, expected {}", e(64));
    // Enough energy: the same flush, nothing lost.
    let budget = format!("capacitor_energy = \"{}uJ\"", (e(n) * 1e6).ceil());
    let r = lose_power(
        common::device(&plp_with_power(&budget), "plp-enough"),
        RANDWRITE,
        Precondition::Fill,
        at,
    );
    assert_eq!(
        (
            r.units_saved_by_capacitors,
            r.units_lost,
            r.units_beyond_capacitors
        ),
        (n, 0, 0),
        "{r:?}"
    );
    assert_eq!(r.capacitor_flush_energy_j, full.capacitor_flush_energy_j);
    assert!(r.text().contains("nothing lost"), "{}", r.text());
    // Half of it: the flush stops at the most units the energy covers.
    let half = e(n) / 2.0;
    let r = lose_power(
        common::device(
            &plp_with_power(&format!("capacitor_energy = \"{}J\"", half)),
            "plp-half",
        ),
        RANDWRITE,
        Precondition::Fill,
        at,
    );
    let k = r.units_saved_by_capacitors;
    assert!(k > 0 && k < n, "{k} of {n}: {r:?}");
    assert!(
        e(k) <= half && e(k + 1) > half,
        "{k} units: {} J of {half} J",
        e(k)
    );
    assert_eq!(r.units_beyond_capacitors, n - k);
    assert_eq!(r.capacitor_energy_j, Some(half));
    let drawn = r.capacitor_flush_energy_j.expect("a power model");
    assert!((drawn - e(k)).abs() < 1e-12, "{drawn} J, expected {}", e(k));
    // What the flush did not reach is lost: acknowledged host writes (no
    // GC on a freshly filled drive), each back to its older version.
    assert!(r.units_lost > 0 && r.units_lost <= n - k, "{r:?}");
    assert_eq!(r.units_reverted + r.units_unmapped, r.units_lost);
    assert_eq!(r.relocated_units_lost, 0, "{r:?}");
    assert!(
        r.text().contains("beyond the capacitors' energy"),
        "{}",
        r.text()
    );
}

#[test]
fn a_bad_capacitor_energy_is_refused_by_key() {
    let refuse = |text: &str, want: &str| {
        let e = ssdlab_core::config::DeviceFile::from_toml_str(text, "cap.toml")
            .unwrap()
            .resolve("cap.toml")
            .expect_err("refused")
            .to_string();
        assert!(
            e.contains("cache.capacitor_energy") && e.contains(want),
            "{e}"
        );
    };
    refuse(&plp_with_power("capacitor_energy = \"0J\""), "above 0");
    refuse(&plp_with_power("capacitor_energy = \"-5mJ\""), "");
    refuse(
        &plp_with_power("capacitor_energy = \"40 parsecs\""),
        "energy",
    );
    // No power-loss protection: no capacitors.
    refuse(
        &plp_with_power("capacitor_energy = \"40mJ\"").replace(
            "power_loss_protection = true",
            "power_loss_protection = false",
        ),
        "power_loss_protection",
    );
    // No power model: the flush's energy is unknown.
    let no_power = plp_with_power("capacitor_energy = \"40mJ\"");
    let no_power = &no_power[..no_power.find("[power]").unwrap()];
    refuse(no_power, "[power]");
}
