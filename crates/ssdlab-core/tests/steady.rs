//! fio's steady-state detection (`ss=`, `ss_dur=`, `ss_ramp=`): jobs end
//! when the criterion holds, the reported window satisfies it by fio's own
//! arithmetic, fio-json carries fio's `steadystate` object, and bad options
//! are refused by file, line and key.

mod common;

use ssdlab_core::config::Device;
use ssdlab_core::workload::fio;
use ssdlab_core::{fio_output, simulate_with_jobs, Precondition, RunSpec};

/// The small SLC drive, whose random-write rate falls once garbage
/// collection starts: a fresh drive is not steady at first, then settles.
fn small() -> Device {
    common::small_slc()
}

fn run(job: &str) -> (ssdlab_core::Report, serde_json::Value) {
    let workload = fio::parse_str(job, "ss.fio").unwrap();
    let group = fio_output::group_reporting(&workload);
    let spec = RunSpec {
        device: small(),
        workload,
        workload_name: "ss.fio".into(),
        seed: 3,
        precondition: Precondition::Fresh,
        sample_interval: None,
        latency_histogram: false,
        job_stats: true,
        data_store: None,
        power_loss_at: None,
        after_recovery: None,
        later_power_losses: Vec::new(),
    };
    let (r, jobs) = simulate_with_jobs(&spec, &mut |_| {}, &|| false).unwrap();
    let v = fio_output::to_json(&r, &jobs.unwrap_or_default(), group, 0);
    (r, v)
}

/// fio's least-squares slope of equally spaced samples.
fn slope(y: &[u64]) -> f64 {
    let n = y.len() as f64;
    let mx = (n - 1.0) / 2.0;
    let my = y.iter().sum::<u64>() as f64 / n;
    let num: f64 = y
        .iter()
        .enumerate()
        .map(|(i, &v)| (i as f64 - mx) * (v as f64 - my))
        .sum();
    let den: f64 = (0..y.len()).map(|i| (i as f64 - mx).powi(2)).sum();
    num / den
}

#[test]
fn a_job_ends_when_its_iops_slope_settles() {
    let (r, v) = run(
        "[w]\nrw=randwrite\nbs=4k\niodepth=16\nsize=48m\nnorandommap\ntime_based\nruntime=120s\n\
         ss=iops_slope:2%\nss_dur=5s\nss_ramp=2s\n",
    );
    assert_eq!(r.steadystate.len(), 1);
    let s = &r.steadystate[0];
    assert_eq!(s.attained, 1, "{s:?}");
    let at = s.attained_at_s.unwrap();
    // Samples start one second after ss_ramp; the window needs 5 of them.
    assert!(at >= 2.0 + 1.0 + 4.0 - 1e-9, "{at}");
    assert!(at < 120.0);
    // The run ended there, not at its runtime.
    assert!(r.sim_time_ns / 1e9 < at + 1.0, "{} s", r.sim_time_ns / 1e9);
    // The window satisfies the criterion by fio's arithmetic.
    let d = &s.data;
    assert_eq!(d.iops.len(), 5);
    let mean = d.iops.iter().sum::<u64>() as f64 / 5.0;
    let pct = 100.0 * slope(&d.iops) / mean;
    assert!(pct.abs() < 2.0, "{pct} {:?}", d.iops);
    assert!((s.slope - slope(&d.iops)).abs() < 1e-6);
    assert_eq!(s.ss, "iops_slope:2.000000%");
    // Bandwidth samples are the IOPS samples times 4 KiB.
    assert!(d.iops.iter().zip(&d.bw).all(|(i, b)| i * 4096 == *b));
    // fio-json: the job entry carries fio's steadystate object.
    let o = &v["jobs"][0]["steadystate"];
    assert_eq!(o["ss"], "iops_slope:2.000000%");
    assert_eq!(o["attained"], 1);
    assert_eq!(o["duration"], 5);
    assert_eq!(o["data"]["iops"].as_array().unwrap().len(), 5);
    assert!(o["criterion"].as_str().unwrap().ends_with('%'));
}

#[test]
fn an_unreachable_criterion_runs_to_the_runtime() {
    // No window of a GC-bound random write holds every second within 0 IOPS
    // of its mean.
    let (r, v) = run(
        "[w]\nrw=randwrite\nbs=4k\niodepth=16\nsize=48m\nnorandommap\ntime_based\nruntime=8s\n\
         ss=iops:0\nss_dur=3s\n",
    );
    let s = &r.steadystate[0];
    assert_eq!(s.attained, 0);
    assert!(s.attained_at_s.is_none());
    assert!(r.sim_time_ns / 1e9 >= 7.9, "{}", r.sim_time_ns / 1e9);
    assert_eq!(v["jobs"][0]["steadystate"]["attained"], 0);
    assert!(s.max_deviation > 0.0);
}

#[test]
fn with_group_reporting_a_group_is_judged_and_ended_together() {
    let (r, v) = run(
        "[global]\ngroup_reporting\nrw=randwrite\nbs=4k\niodepth=8\nsize=24m\nnorandommap\n\
         time_based\nruntime=120s\nss=iops_slope:2%\nss_dur=5s\n[a]\nnumjobs=2\n[b]\n",
    );
    assert_eq!(r.steadystate.len(), 1, "one unit for the group");
    assert_eq!(r.steadystate[0].attained, 1);
    assert!(r.sim_time_ns / 1e9 < 120.0);
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(v["jobs"][0]["steadystate"]["attained"], 1);
}

#[test]
fn bad_steady_state_options_are_refused_with_file_line_and_key() {
    let err = |job: &str| fio::parse_str(job, "ss.fio").unwrap_err().to_string();
    let e = err("[w]\nrw=randwrite\nss_dur=10s\n");
    assert!(
        e.contains("ss.fio:3") && e.contains("ss=CRITERION:LIMIT"),
        "{e}"
    );
    let e = err("[w]\nss=latency:1%\nss_dur=10s\n");
    assert!(
        e.contains("ss.fio:2") && e.contains("unknown criterion 'latency'"),
        "{e}"
    );
    let e = err("[w]\nss=iops\nss_dur=10s\n");
    assert!(e.contains("CRITERION:LIMIT"), "{e}");
    let e = err("[w]\nss=iops:10%\nss_dur=1500ms\n");
    assert!(e.contains("ss.fio:3") && e.contains("whole seconds"), "{e}");
    let e = err("[w]\nss=iops:-1\nss_dur=5\n");
    assert!(e.contains("non-negative"), "{e}");
    // ss without ss_dur is off, as in fio, and says so.
    let w = fio::parse_str("[w]\nss=iops:10%\n", "ss.fio").unwrap();
    assert!(w.jobs[0].steadystate.is_none());
    assert!(w.ignored.iter().any(|i| i.option == "steadystate"));
    // Inconsistent options within a reporting group (group_reporting).
    let workload = fio::parse_str(
        "[global]\ngroup_reporting\nrw=randwrite\nss_dur=5s\n[a]\nss=iops:10%\n[b]\nss=iops:20%\n",
        "ss.fio",
    )
    .unwrap();
    let e = ssdlab_core::System::new(small(), &workload, "ss.fio", 1, Precondition::Fresh)
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("steadystate") && e.contains("reporting group"),
        "{e}"
    );
}

#[test]
fn ss_interval_samples_every_interval_as_a_per_second_rate() {
    // ss_interval=2s, ss_dur=10s: a window of 5 samples, each the IOPS of
    // its two seconds; sampling starts one interval after ss_ramp.
    let (r, v) = run(
        "[w]\nrw=randwrite\nbs=4k\niodepth=16\nsize=48m\nnorandommap\ntime_based\nruntime=200s\n\
         ss=iops_slope:2%\nss_dur=10s\nss_interval=2s\nss_ramp=2s\n",
    );
    let s = &r.steadystate[0];
    assert_eq!(s.attained, 1, "{s:?}");
    assert_eq!(s.data.iops.len(), 5);
    let at = s.attained_at_s.unwrap();
    assert!(at >= 2.0 + 2.0 + 8.0 - 1e-9, "{at}");
    assert!(
        (at.round() as u64).is_multiple_of(2),
        "ticks every 2 s: {at}"
    );
    // Per-second rates: the window's mean IOPS times the window's seconds
    // is about the I/Os done in it (the drive settles near tens of K IOPS).
    assert!(s.data.iops_mean > 1000, "{:?}", s.data);
    assert_eq!(v["jobs"][0]["steadystate"]["duration"], 10);
    // ss_dur must hold whole intervals; the interval whole seconds.
    for (job, needle) in [
        (
            "[w]\nrw=write\nss=iops:5%\nss_dur=5s\nss_interval=2s\n",
            "whole number of ss_interval",
        ),
        (
            "[w]\nrw=write\nss=iops:5%\nss_dur=5s\nss_interval=500ms\n",
            "whole seconds",
        ),
    ] {
        let e = ssdlab_core::workload::fio::parse_str(job, "ss.fio").unwrap_err();
        assert_eq!(e.option.as_deref(), Some("ss_interval"), "{job}: {e}");
        assert!(e.message.contains(needle), "{job}: {e}");
    }
}
