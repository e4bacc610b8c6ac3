//! The functional data store and fio's verify on it: what is read equals
//! what was written across overwrites, garbage collection, trims and
//! flushes; a block from the wrong address or an unwritten one is caught
//! and reported as fio reports it; `verify_only` reads what an earlier run
//! kept in a file; and verify without a store is refused with how to turn
//! it on.

mod common;

use ssdlab_core::config::Device;
use ssdlab_core::device::store::StoreSpec;
use ssdlab_core::workload::fio;
use ssdlab_core::{fio_output, simulate_with_jobs, Precondition, RunSpec};

/// A small SLC drive: a few passes of random overwrites keep garbage
/// collection busy.
fn small() -> Device {
    common::small_slc()
}

fn spec(job: &str, store: Option<StoreSpec>, pre: Precondition) -> RunSpec {
    RunSpec {
        device: small(),
        workload: fio::parse_str(job, "v.fio").unwrap(),
        workload_name: "v.fio".into(),
        seed: 5,
        precondition: pre,
        sample_interval: None,
        latency_histogram: false,
        job_stats: true,
        data_store: store,
        power_loss_at: None,
        after_recovery: None,
        later_power_losses: Vec::new(),
    }
}

fn run(job: &str, store: Option<StoreSpec>) -> (ssdlab_core::Report, serde_json::Value) {
    run_on(job, store, Precondition::Fresh)
}

fn run_on(
    job: &str,
    store: Option<StoreSpec>,
    pre: Precondition,
) -> (ssdlab_core::Report, serde_json::Value) {
    let s = spec(job, store, pre);
    let group = fio_output::group_reporting(&s.workload);
    let (r, jobs) = simulate_with_jobs(&s, &mut |_| {}, &|| false).unwrap();
    let v = fio_output::to_json(&r, &jobs.unwrap_or_default(), group, 0);
    (r, v)
}

#[test]
fn reads_return_what_was_written_across_overwrites_gc_trims_and_flushes() {
    // 8 MiB region: a sequential fill, three passes of random overwrites
    // (offsets repeat: fio's sorted log, older overlapping writes dropped),
    // with flushes; then a read-only job checks every block's header and
    // checksum; then the first half is trimmed and must read as zeros.
    let job = "[global]\nbs=4k\niodepth=8\nsize=8m\n\
               [fill]\nrw=write\nverify=md5\n\
               [over]\nstonewall\nrw=randwrite\nnorandommap\nio_size=24m\nfsync=64\nverify=md5\n\
               [check]\nstonewall\nrw=read\nverify=md5\n\
               [trim]\nstonewall\nrw=trim\nsize=4m\n\
               [zeros]\nstonewall\nrw=read\nsize=4m\nverify=pattern\nverify_pattern=0x00\n";
    // On a full drive (fill precondition), so overwrites need GC.
    let (r, v) = run_on(job, Some(StoreSpec::Memory), Precondition::Fill);
    let vr = r.verify.as_ref().expect("verify results");
    assert_eq!(vr.failures, 0, "{:?}", vr.first_failures);
    // fill: 2048 blocks read back; over: every distinct block it wrote (at
    // most 2048); check: 2048 reads; zeros: 1024 reads.
    assert!(vr.blocks > 2048 + 1500 + 2048 + 1024, "{}", vr.blocks);
    assert!(
        r.gc.runs > 0 && r.waf > 1.0,
        "GC ran: {} runs, WAF {}",
        r.gc.runs,
        r.waf
    );
    assert!(r.flush.ios > 0, "flushes issued");
    let ds = r.data_store.as_ref().expect("data store report");
    assert_eq!(ds.backing, "memory");
    assert_eq!(ds.bytes_written, (8 + 24) << 20);
    assert_eq!(ds.bytes_trimmed, 4 << 20);
    assert_eq!(ds.resident_bytes, 4 << 20, "trimmed chunks are freed");
    for j in v["jobs"].as_array().unwrap() {
        assert_eq!(j["error"], 0, "{}", j["jobname"]);
    }
}

#[test]
fn a_block_from_the_wrong_address_a_stale_or_unwritten_one_fails_as_in_fio() {
    // A drive that returns another block's data: two blocks of a kept
    // store file are swapped between a run that writes and one that only
    // verifies (verify_only).
    let dir = std::env::temp_dir().join(format!("ssdlab-verify-swap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("drive.img");
    let _ = std::fs::remove_file(&path);
    let job = "[w]\nbs=4k\niodepth=4\nrw=write\nsize=256k\nverify=crc32c\n";
    let (r1, _) = run(job, Some(StoreSpec::File(path.clone())));
    assert_eq!(r1.verify.unwrap().failures, 0);
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let (mut a, mut b) = (vec![0u8; 4096], vec![0u8; 4096]);
        f.read_exact_at(&mut a, 8192).unwrap();
        f.read_exact_at(&mut b, 12288).unwrap();
        f.write_all_at(&b, 8192).unwrap();
        f.write_all_at(&a, 12288).unwrap();
    }
    let (r, v) = run(
        &format!("{job}verify_only=1\n"),
        Some(StoreSpec::File(path.clone())),
    );
    let vr = r.verify.as_ref().unwrap();
    assert_eq!((vr.blocks, vr.failures), (64, 2), "{:?}", vr.first_failures);
    assert!(
        vr.first_failures[0].contains("bad header offset 12288, wanted 8192"),
        "{}",
        vr.first_failures[0]
    );
    assert_eq!(v["jobs"][0]["error"], 84, "fio's EILSEQ");
    let _ = std::fs::remove_dir_all(&dir);

    // A read-only job reading blocks never written: zeros, bad magic.
    let job = "[global]\nbs=4k\niodepth=4\n\
               [w]\nrw=write\nsize=1m\nverify=crc32c\ndo_verify=0\n\
               [ok]\nstonewall\nrw=read\noffset=4k\nsize=64k\nverify=crc32c\n\
               [unwritten]\nstonewall\nrw=read\noffset=2m\nsize=64k\nverify=crc32c\n";
    let (r, v) = run(job, Some(StoreSpec::Memory));
    let vr = r.verify.as_ref().unwrap();
    assert_eq!(
        (vr.blocks, vr.failures),
        (32, 16),
        "{:?}",
        vr.first_failures
    );
    assert!(
        vr.first_failures[0].contains("bad magic header 0, wanted acca at offset 2097152"),
        "{}",
        vr.first_failures[0]
    );
    let errs: Vec<i64> = v["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["error"].as_i64().unwrap())
        .collect();
    assert_eq!(errs, [0, 0, 84]);

    // verify_fatal: the job stops at its first failure.
    let fatal = job.replace("offset=2m\n", "offset=2m\nverify_fatal=1\niodepth=1\n");
    let (r, _) = run(&fatal, Some(StoreSpec::Memory));
    assert_eq!(r.verify.unwrap().failures, 1);
}

#[test]
fn verify_only_reads_what_an_earlier_run_kept_in_its_file() {
    let dir = std::env::temp_dir().join(format!("ssdlab-verify-only-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("drive.img");
    let _ = std::fs::remove_file(&path);
    let job = "[w]\nbs=8k\niodepth=4\nrw=randwrite\nsize=2m\nverify=sha256\nverify_interval=1k\n";
    let (r1, _) = run(job, Some(StoreSpec::File(path.clone())));
    assert_eq!(r1.verify.as_ref().unwrap().blocks, 256);
    assert_eq!(r1.write.ios, 256);
    let again = format!("{job}verify_only=1\n");
    let (r2, _) = run(&again, Some(StoreSpec::File(path.clone())));
    let vr = r2.verify.unwrap();
    assert_eq!(
        (vr.blocks, vr.failures),
        (256, 0),
        "{:?}",
        vr.first_failures
    );
    assert_eq!(r2.write.ios, 0, "verify_only writes nothing");
    // A fresh memory store holds nothing: the same check fails everywhere.
    let (r3, _) = run(&again, Some(StoreSpec::Memory));
    assert_eq!(r3.verify.unwrap().failures, 256);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verify_backlog_reads_back_while_writing() {
    let job = "[w]\nbs=4k\niodepth=8\nrw=randwrite\nsize=4m\nverify=xxhash\nverify_backlog=32\nverify_backlog_batch=16\n";
    let (r, _) = run(job, Some(StoreSpec::Memory));
    let vr = r.verify.unwrap();
    assert_eq!((vr.blocks, vr.failures), (1024, 0));
    assert_eq!(
        r.read.ios, 1024,
        "each write read back once (during the run or at its end)"
    );
}

#[test]
fn a_store_keeps_data_of_jobs_that_do_not_verify_at_no_change_in_timing() {
    let job = "[w]\nbs=16k\niodepth=8\nrw=randwrite\nsize=4m\nbuffer_pattern=0xabcd\n";
    let (with, _) = run(job, Some(StoreSpec::Memory));
    let (without, _) = run(job, None);
    assert_eq!(with.data_store.as_ref().unwrap().bytes_written, 4 << 20);
    assert!(with.verify.is_none() && without.data_store.is_none());
    assert_eq!(with.write.lat_ns.p99, without.write.lat_ns.p99);
    assert_eq!(
        with.sim_time_ns, without.sim_time_ns,
        "the store changes no timing"
    );
}

#[test]
fn bad_verify_input_is_refused_with_its_reason() {
    let s = spec(
        "[w]\nrw=write\nsize=1m\nverify=md5\n",
        None,
        Precondition::Fresh,
    );
    let e = simulate_with_jobs(&s, &mut |_| {}, &|| false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("--data-store on") && e.contains("job 'w'"),
        "{e}"
    );
    for (job, key, needle) in [
        (
            "[w]\nrw=write\nverify=pattern\n",
            "verify",
            "verify_pattern=",
        ),
        (
            "[w]\nrw=write\nverify=sha999\n",
            "verify",
            "not a verify method",
        ),
        (
            "[w]\nrw=write\nverify=md5\nverify_pattern=12\n",
            "verify_pattern",
            "hex",
        ),
        (
            "[w]\nrw=write\nverify=md5\nverify_state_save=1\n",
            "verify_state_save",
            "not supported yet",
        ),
    ] {
        let e = fio::parse_str(job, "b.fio").unwrap_err();
        assert_eq!(e.option.as_deref(), Some(key), "{job}: {e}");
        assert!(e.message.contains(needle), "{job}: {e}");
    }
    for (job, key, needle) in [
        (
            "[w]\nrw=write\nsize=1m\nverify=sha512\nverify_interval=64\n",
            "verify_interval",
            "at least 110 B",
        ),
        (
            "[w]\nrw=write\nsize=1m\nruntime=1\ntime_based\nverify=md5\n",
            "time_based",
            "not supported yet",
        ),
        ("[w]\nrw=trimwrite\nsize=1m\nverify=md5\n", "rw", "trims"),
    ] {
        let s = spec(job, Some(StoreSpec::Memory), Precondition::Fresh);
        let e = match simulate_with_jobs(&s, &mut |_| {}, &|| false) {
            Err(ssdlab_core::SimError::Workload(e)) => e,
            other => panic!("{job}: {:?}", other.map(|_| ())),
        };
        assert_eq!(e.option.as_deref(), Some(key), "{job}: {e}");
        assert!(e.message.contains(needle), "{job}: {e}");
    }
    // Sub-options without verify are listed as ignored, as fio ignores them.
    let w = fio::parse_str("[w]\nrw=write\nverify_backlog=8\n", "b.fio").unwrap();
    assert!(w.ignored.iter().any(|i| i.option == "verify_backlog"));
}
