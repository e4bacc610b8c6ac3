//! fio-compatible output: per-job statistics and the JSON layout of
//! `fio --output-format=json` (and a short normal-text summary), so fio's
//! ecosystem of tools reads ssdlab's results.
//!
//! Latencies follow fio's definitions: `slat` from I/O generation to the
//! doorbell write (the host driver's submit cost, including waiting for the
//! job's CPU), `clat` from there to the completion being reaped, `lat` =
//! `slat + clat`. Bandwidth and IOPS samples are taken over 500 ms windows of
//! simulated time (fio's default `bw_avg_time`/`iops_avg_time`).

use crate::report::Report;
use crate::units::Time;
use crate::workload::{JobSpec, Op, Workload};
use hdrhistogram::Histogram;
use serde_json::{json, Map, Value};

/// Sample window for bandwidth and IOPS statistics (fio's default 500 ms).
pub const SAMPLE_WINDOW: Time = Time::ms(500);

/// fio's default completion-latency percentiles.
pub const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

#[derive(Debug, Clone)]
struct Moments {
    n: u64,
    min: u64,
    max: u64,
    sum: f64,
    sumsq: f64,
}

impl Default for Moments {
    fn default() -> Self {
        Moments {
            n: 0,
            min: u64::MAX,
            max: 0,
            sum: 0.0,
            sumsq: 0.0,
        }
    }
}

impl Moments {
    #[inline]
    fn add(&mut self, v: u64) {
        self.n += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        let f = v as f64;
        self.sum += f;
        self.sumsq += f * f;
    }
    fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }
    fn stddev(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let m = self.mean();
        ((self.sumsq / self.n as f64 - m * m).max(0.0) * self.n as f64 / (self.n - 1) as f64).sqrt()
    }
    fn json(&self) -> Value {
        json!({
            "min": if self.n == 0 { 0 } else { self.min },
            "max": self.max,
            "mean": self.mean(),
            "stddev": self.stddev(),
            "N": self.n,
        })
    }
}

/// One direction of one job.
#[derive(Debug, Clone)]
pub struct JobDir {
    ios: u64,
    bytes: u64,
    slat: Moments,
    clat: Moments,
    lat: Moments,
    clat_hist: Histogram<u32>,
    lat_hist: Histogram<u32>,
    /// (ios, bytes) per 500 ms window of the measured interval.
    windows: Vec<(u64, u64)>,
}

impl Default for JobDir {
    fn default() -> Self {
        let h = || {
            Histogram::new_with_bounds(1, 3_600_000_000_000, 2)
                .expect("static histogram bounds are valid")
        };
        JobDir {
            ios: 0,
            bytes: 0,
            slat: Moments::default(),
            clat: Moments::default(),
            lat: Moments::default(),
            clat_hist: h(),
            lat_hist: h(),
            windows: Vec::new(),
        }
    }
}

/// Statistics of one fio job (one clone, or a whole group with `group_reporting`).
#[derive(Debug, Clone)]
pub struct JobStats {
    /// Job name (section).
    pub name: String,
    /// The job's options as fio would list them.
    pub spec: Option<JobSpec>,
    /// Read, write, trim, sync (flush).
    dirs: [JobDir; 4],
    /// Submissions at each queue depth bucket 1, 2, 4, 8, 16, 32, >=64.
    depth: [u64; 7],
    /// First measured submission and last measured completion (the job's runtime).
    span: Option<(Time, Time)>,
    /// Blocks whose verify failed (fio then reports the job's error as EILSEQ).
    pub verify_errors: u64,
}

impl JobStats {
    /// Empty statistics for a job.
    pub fn new(name: &str, spec: Option<JobSpec>) -> JobStats {
        JobStats {
            name: name.into(),
            spec,
            dirs: Default::default(),
            depth: [0; 7],
            span: None,
            verify_errors: 0,
        }
    }

    /// Record a submission made with `outstanding` I/Os already in flight on the queue.
    #[inline]
    pub fn submitted(&mut self, outstanding: u32) {
        let d = outstanding + 1;
        let i = match d {
            1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        };
        self.depth[i] += 1;
    }

    /// Record a measured completion of an I/O submitted at `submit` and
    /// completed at `end`, `since` after the job's measured window started.
    #[inline]
    pub fn completed(
        &mut self,
        op: Op,
        bytes: u64,
        slat: Time,
        clat: Time,
        (submit, end, since): (Time, Time, Time),
    ) {
        self.span = Some(match self.span {
            None => (submit, end),
            Some((a, b)) => (a.min(submit), b.max(end)),
        });
        let d = &mut self.dirs[op as usize];
        d.ios += 1;
        d.bytes += bytes;
        let (s, c) = (slat.as_ns(), clat.as_ns());
        d.slat.add(s);
        d.clat.add(c);
        d.lat.add(s + c);
        let _ = d.clat_hist.record(c.max(1));
        let _ = d.lat_hist.record((s + c).max(1));
        let w = (since.0 / SAMPLE_WINDOW.0) as usize;
        if d.windows.len() <= w {
            d.windows.resize(w + 1, (0, 0));
        }
        d.windows[w].0 += 1;
        d.windows[w].1 += bytes;
    }

    /// Fold another job's statistics into this one (`group_reporting`).
    pub fn merge(&mut self, o: &JobStats) {
        self.verify_errors += o.verify_errors;
        self.span = match (self.span, o.span) {
            (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
            (x, y) => x.or(y),
        };
        for k in 0..4 {
            let (a, b) = (&mut self.dirs[k], &o.dirs[k]);
            a.ios += b.ios;
            a.bytes += b.bytes;
            for (x, y) in [
                (&mut a.slat, &b.slat),
                (&mut a.clat, &b.clat),
                (&mut a.lat, &b.lat),
            ] {
                x.n += y.n;
                x.min = x.min.min(y.min);
                x.max = x.max.max(y.max);
                x.sum += y.sum;
                x.sumsq += y.sumsq;
            }
            let _ = a.clat_hist.add(&b.clat_hist);
            let _ = a.lat_hist.add(&b.lat_hist);
            if a.windows.len() < b.windows.len() {
                a.windows.resize(b.windows.len(), (0, 0));
            }
            for (i, w) in b.windows.iter().enumerate() {
                a.windows[i].0 += w.0;
                a.windows[i].1 += w.1;
            }
        }
        for i in 0..7 {
            self.depth[i] += o.depth[i];
        }
    }
}

fn dir_json(d: &JobDir, runtime_s: f64, full_windows: usize) -> Value {
    let runtime_ms = (runtime_s * 1e3).round() as u64;
    let bw_bytes = if runtime_s > 0.0 {
        d.bytes as f64 / runtime_s
    } else {
        0.0
    };
    let iops = if runtime_s > 0.0 {
        d.ios as f64 / runtime_s
    } else {
        0.0
    };
    let mut pct = Map::new();
    for p in PERCENTILES {
        let v = if d.ios == 0 {
            0
        } else {
            d.clat_hist.value_at_quantile(p / 100.0)
        };
        pct.insert(format!("{p:.6}"), json!(v));
    }
    let mut clat = d.clat.json();
    if let Value::Object(m) = &mut clat {
        m.insert("percentile".into(), Value::Object(pct));
    }
    // Samples over complete 500 ms windows (fio's log averaging).
    let secs = SAMPLE_WINDOW.as_secs_f64();
    let ws: Vec<(f64, f64)> = d
        .windows
        .iter()
        .take(full_windows)
        .map(|w| (w.1 as f64 / secs / 1024.0, w.0 as f64 / secs))
        .collect();
    let stat = |f: &dyn Fn(&(f64, f64)) -> f64| -> (f64, f64, f64, f64) {
        if ws.is_empty() {
            return (0.0, 0.0, 0.0, 0.0);
        }
        let v: Vec<f64> = ws.iter().map(f).collect();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let var = if v.len() > 1 {
            v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64
        } else {
            0.0
        };
        (
            v.iter().cloned().fold(f64::INFINITY, f64::min),
            v.iter().cloned().fold(0.0, f64::max),
            mean,
            var.sqrt(),
        )
    };
    let (bmin, bmax, bmean, bdev) = stat(&|w| w.0);
    let (imin, imax, imean, idev) = stat(&|w| w.1);
    json!({
        "io_bytes": d.bytes,
        "io_kbytes": d.bytes / 1024,
        "bw_bytes": bw_bytes.round() as u64,
        "bw": (bw_bytes / 1024.0).round() as u64,
        "iops": iops,
        "runtime": runtime_ms,
        "total_ios": d.ios,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": d.slat.json(),
        "clat_ns": clat,
        "lat_ns": d.lat.json(),
        "bw_min": bmin.round() as u64,
        "bw_max": bmax.round() as u64,
        "bw_agg": 100.0,
        "bw_mean": bmean,
        "bw_dev": bdev,
        "bw_samples": ws.len(),
        "iops_min": imin.round() as u64,
        "iops_max": imax.round() as u64,
        "iops_mean": imean,
        "iops_stddev": idev,
        "iops_samples": ws.len(),
    })
}

fn bucket_map(
    h: &Histogram<u32>,
    total: u64,
    edges: &[(&str, u64)],
    unit: u64,
    ge_last: Option<&str>,
) -> Value {
    let mut m = Map::new();
    let mut lo = edges.first().map_or(0, |_| 0u64);
    for (k, hi) in edges {
        let hi_ns = hi * unit;
        let c = if total == 0 {
            0
        } else {
            h.count_between(lo.max(1), hi_ns.saturating_sub(1).max(1))
        };
        let pct = if total == 0 {
            0.0
        } else {
            c as f64 * 100.0 / total as f64
        };
        m.insert(k.to_string(), json!(if c == 0 { 0.0 } else { pct }));
        lo = hi_ns;
    }
    if let Some(k) = ge_last {
        let c = if total == 0 {
            0
        } else {
            h.count_between(lo.max(1), h.max().max(lo))
        };
        m.insert(
            k.to_string(),
            json!(if total == 0 {
                0.0
            } else {
                c as f64 * 100.0 / total as f64
            }),
        );
    }
    Value::Object(m)
}

fn job_options(s: &JobSpec) -> Value {
    use crate::workload::TrimMode;
    let rw = match (s.trim, s.rw.random, s.rw.read_pct) {
        (TrimMode::Only, false, _) => "trim",
        (TrimMode::Only, true, _) => "randtrim",
        (TrimMode::TrimWrite, _, _) => "trimwrite",
        (_, false, 100) => "read",
        (_, false, 0) => "write",
        (_, false, _) => "rw",
        (_, true, 100) => "randread",
        (_, true, 0) => "randwrite",
        (_, true, _) => "randrw",
    };
    let mut m = Map::new();
    m.insert("rw".into(), json!(rw));
    m.insert("bs".into(), json!(s.bs.to_string()));
    m.insert("iodepth".into(), json!(s.iodepth.to_string()));
    m.insert("numjobs".into(), json!(s.numjobs.to_string()));
    if s.rw.read_pct != 0 && s.rw.read_pct != 100 {
        m.insert("rwmixread".into(), json!(s.rw.read_pct.to_string()));
    }
    if let Some(v) = s.size {
        m.insert("size".into(), json!(v.to_string()));
    }
    if s.offset != 0 {
        m.insert("offset".into(), json!(s.offset.to_string()));
    }
    if let Some(v) = s.io_size {
        m.insert("io_size".into(), json!(v.to_string()));
    }
    if let Some(v) = s.number_ios {
        m.insert("number_ios".into(), json!(v.to_string()));
    }
    if let Some(r) = s.runtime {
        m.insert("runtime".into(), json!(format!("{}", r.as_secs_f64())));
    }
    if s.time_based {
        m.insert("time_based".into(), json!(""));
    }
    if s.ramp_time > Time::ZERO {
        m.insert(
            "ramp_time".into(),
            json!(format!("{}", s.ramp_time.as_secs_f64())),
        );
    }
    if let Some(v) = s.randseed {
        m.insert("randseed".into(), json!(v.to_string()));
    }
    if s.norandommap {
        m.insert("norandommap".into(), json!(""));
    }
    // Per-direction values as fio lists them: "r,w,t" with empty fields unset.
    let dirs = |v: &[Option<u64>; 3]| -> Option<String> {
        v.iter().any(Option::is_some).then(|| {
            v.iter()
                .map(|x| x.map_or(String::new(), |n| n.to_string()))
                .collect::<Vec<_>>()
                .join(",")
        })
    };
    if let Some(r) = dirs(&s.rate) {
        m.insert("rate".into(), json!(r));
    }
    if let Some(r) = dirs(&s.rate_iops) {
        m.insert("rate_iops".into(), json!(r));
    }
    if s.rate_process == crate::workload::RateProcess::Poisson {
        m.insert("rate_process".into(), json!("poisson"));
    }
    if s.thinktime > Time::ZERO {
        m.insert(
            "thinktime".into(),
            json!(format!("{}", s.thinktime.as_ns() / 1000)),
        );
        m.insert(
            "thinktime_blocks".into(),
            json!(s.thinktime_blocks.to_string()),
        );
    }
    if s.fsync > 0 {
        m.insert("fsync".into(), json!(s.fsync.to_string()));
    }
    if s.end_fsync {
        m.insert("end_fsync".into(), json!("1"));
    }
    if s.stonewall {
        m.insert("stonewall".into(), json!(""));
    }
    if let Some(w) = &s.wait_for {
        m.insert("wait_for".into(), json!(w));
    }
    if let Some(t) = &s.read_iolog {
        m.insert("read_iolog".into(), json!(t.path.display().to_string()));
    }
    Value::Object(m)
}

/// Whether the job file asked for `group_reporting`.
pub fn group_reporting(w: &Workload) -> bool {
    w.ignored.iter().any(|i| i.option == "group_reporting")
}

impl JobStats {
    /// First measured submission and last measured completion, if any.
    pub fn span(&self) -> Option<(Time, Time)> {
        self.span
    }

    /// Measured I/Os of one kind.
    pub fn ios(&self, op: Op) -> u64 {
        self.dirs[op as usize].ios
    }

    /// Mean completion latency (submission to completion) of one kind, in ns.
    pub fn mean_lat_ns(&self, op: Op) -> f64 {
        self.dirs[op as usize].lat.mean()
    }

    /// Reporting group (`new_group`, `stonewall`).
    pub fn group(&self) -> u32 {
        self.spec.as_ref().map_or(0, |s| s.group)
    }

    /// The job's runtime: first measured submission to last measured
    /// completion, or `whole` (the run's) if it measured nothing.
    pub fn runtime_s(&self, whole: f64) -> f64 {
        self.span.map_or(whole, |(a, b)| (b - a).as_secs_f64())
    }
}

/// The jobs as fio reports them: one entry per clone, or, with
/// `group_reporting`, one per reporting group (named after its first job).
pub fn reported_jobs(jobs: &[JobStats], group: bool) -> Vec<JobStats> {
    if !group || jobs.is_empty() {
        return jobs.to_vec();
    }
    let mut out: Vec<JobStats> = Vec::new();
    for j in jobs {
        match out.iter_mut().find(|o| o.group() == j.group()) {
            Some(o) => o.merge(j),
            None => out.push(j.clone()),
        }
    }
    out
}

/// `fio --output-format=json` layout.
pub fn to_json(report: &Report, jobs: &[JobStats], group: bool, wall_clock_unix_s: u64) -> Value {
    let mut out = Vec::new();
    for (i, j) in reported_jobs(jobs, group).into_iter().enumerate() {
        let runtime_s = j.runtime_s(report.sim_time_ns / 1e9);
        let full_windows = (runtime_s / SAMPLE_WINDOW.as_secs_f64()).floor() as usize;
        let total: u64 = j.dirs[..3].iter().map(|d| d.ios).sum();
        let mut lat_all = j.dirs[0].lat_hist.clone();
        let _ = lat_all.add(&j.dirs[1].lat_hist);
        let _ = lat_all.add(&j.dirs[2].lat_hist);
        let sync = &j.dirs[3];
        let depth_total: u64 = j.depth.iter().sum();
        let dp = |i: usize| {
            if depth_total == 0 {
                0.0
            } else {
                j.depth[i] as f64 * 100.0 / depth_total as f64
            }
        };
        out.push(json!({
            "jobname": j.name,
            "groupid": j.group(),
            // fio: a failed verify ends the job with EILSEQ (84).
            "error": if j.verify_errors > 0 { 84 } else { 0 },
            "eta": 0,
            "elapsed": runtime_s.ceil() as u64,
            "job options": j.spec.as_ref().map(job_options).unwrap_or_else(|| json!({})),
            "read": dir_json(&j.dirs[0], runtime_s, full_windows),
            "write": dir_json(&j.dirs[1], runtime_s, full_windows),
            "trim": dir_json(&j.dirs[2], runtime_s, full_windows),
            "sync": {"total_ios": sync.ios, "lat_ns": sync.lat.json()},
            "job_runtime": (runtime_s * 1e3).round() as u64,
            "usr_cpu": 0.0,
            "sys_cpu": 0.0,
            "ctx": 0,
            "majf": 0,
            "minf": 0,
            "iodepth_level": {"1": dp(0), "2": dp(1), "4": dp(2), "8": dp(3), "16": dp(4), "32": dp(5), ">=64": dp(6)},
            "iodepth_submit": {"0": 0.0, "4": 100.0, "8": 0.0, "16": 0.0, "32": 0.0, "64": 0.0, ">=64": 0.0},
            "iodepth_complete": {"0": 0.0, "4": 100.0, "8": 0.0, "16": 0.0, "32": 0.0, "64": 0.0, ">=64": 0.0},
            "latency_ns": bucket_map(&lat_all, total, &[("2", 2), ("4", 4), ("10", 10), ("20", 20), ("50", 50), ("100", 100), ("250", 250), ("500", 500), ("750", 750), ("1000", 1000)], 1, None),
            "latency_us": bucket_map(&lat_all, total, &[("2", 2), ("4", 4), ("10", 10), ("20", 20), ("50", 50), ("100", 100), ("250", 250), ("500", 500), ("750", 750), ("1000", 1000)], 1_000, None),
            "latency_ms": bucket_map(&lat_all, total, &[("2", 2), ("4", 4), ("10", 10), ("20", 20), ("50", 50), ("100", 100), ("250", 250), ("500", 500), ("750", 750), ("1000", 1000), ("2000", 2000)], 1_000_000, Some(">=2000")),
            "latency_depth": j.spec.as_ref().map_or(1, |s| s.iodepth),
            "latency_target": 0,
            "latency_percentile": 100.0,
            "latency_window": 0,
        }));
        // fio's steady-state object, for the clone (or group) it judged.
        let ss = report.steadystate.iter().find(|s| {
            if group {
                s.group == j.group()
            } else {
                s.queues == [i as u32]
            }
        });
        if let (Some(s), Some(Value::Object(o))) = (ss, out.last_mut()) {
            o.insert(
                "steadystate".into(),
                json!({
                    "ss": s.ss,
                    "duration": s.duration,
                    "attained": s.attained,
                    "criterion": s.criterion,
                    "max_deviation": s.max_deviation,
                    "slope": s.slope,
                    "data": {
                        "bw_mean": s.data.bw_mean,
                        "iops_mean": s.data.iops_mean,
                        "iops": s.data.iops,
                        "bw": s.data.bw,
                    },
                }),
            );
        }
    }
    json!({
        "fio version": format!("ssdlab-{} (fio-compatible JSON)", report.version),
        "timestamp": wall_clock_unix_s,
        "timestamp_ms": wall_clock_unix_s * 1000,
        "time": format!("simulated drive {} (seed {})", report.device.name, report.seed),
        "global options": {},
        "jobs": out,
        "disk_util": [],
    })
}

/// fio's normal text output, abridged: one block per job.
pub fn to_text(report: &Report, jobs: &[JobStats], group: bool) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    for j in reported_jobs(jobs, group) {
        let runtime_s = j.runtime_s(report.sim_time_ns / 1e9);
        let _ = writeln!(
            s,
            "{}: (groupid={}, jobs={}): err= 0: pid=0",
            j.name,
            j.group(),
            if group {
                jobs.iter().filter(|o| o.group() == j.group()).count()
            } else {
                1
            }
        );
        for (k, name) in [(0, "read"), (1, "write"), (2, "trim")] {
            let d = &j.dirs[k];
            if d.ios == 0 {
                continue;
            }
            let bw = d.bytes as f64 / runtime_s.max(1e-12);
            let _ = writeln!(
                s,
                "  {name}: IOPS={:.0}, BW={:.0}KiB/s ({:.1}MB/s)({:.1}MiB/{:.0}msec)",
                d.ios as f64 / runtime_s.max(1e-12),
                bw / 1024.0,
                bw / 1e6,
                d.bytes as f64 / (1 << 20) as f64,
                runtime_s * 1e3
            );
            let us = |m: &Moments| {
                (
                    m.min as f64 / 1e3,
                    m.max as f64 / 1e3,
                    m.mean() / 1e3,
                    m.stddev() / 1e3,
                )
            };
            let (a, b, c, e) = us(&d.slat);
            let _ = writeln!(
                s,
                "    slat (usec): min={a:.2}, max={b:.2}, avg={c:.2}, stdev={e:.2}"
            );
            let (a, b, c, e) = us(&d.clat);
            let _ = writeln!(
                s,
                "    clat (usec): min={a:.2}, max={b:.2}, avg={c:.2}, stdev={e:.2}"
            );
            let (a, b, c, e) = us(&d.lat);
            let _ = writeln!(
                s,
                "     lat (usec): min={a:.2}, max={b:.2}, avg={c:.2}, stdev={e:.2}"
            );
            let _ = writeln!(s, "    clat percentiles (usec):");
            let row: Vec<String> = PERCENTILES
                .iter()
                .map(|p| {
                    format!(
                        "{:>6.2}th=[{}]",
                        p,
                        d.clat_hist.value_at_quantile(p / 100.0) / 1000
                    )
                })
                .collect();
            for chunk in row.chunks(4) {
                let _ = writeln!(s, "     | {}", chunk.join(", "));
            }
        }
    }
    s
}
