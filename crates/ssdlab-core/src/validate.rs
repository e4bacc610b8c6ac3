//! Validation scenarios: each runs a shipped device and job and compares a
//! simulated figure with a published one, within a stated tolerance.

use crate::config::Device;
use crate::drive::Precondition;
use crate::report::Report;
use crate::workload::fio;
use crate::{simulate_quiet, RunSpec};
use serde::Serialize;
use std::fmt::Write as _;

/// One compared figure.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Scenario name.
    pub scenario: String,
    /// Metric name (with unit).
    pub metric: String,
    /// Published figure.
    pub reference: f64,
    /// Simulated figure.
    pub simulated: f64,
    /// Signed error, percent of the reference.
    pub error_pct: f64,
    /// Allowed |error|, percent.
    pub tolerance_pct: f64,
    /// Where the reference comes from.
    pub source: String,
    /// Within tolerance?
    pub pass: bool,
}

struct Metric {
    name: &'static str,
    reference: f64,
    tolerance_pct: f64,
    source: &'static str,
    get: fn(&Report) -> f64,
}

struct Scenario {
    name: &'static str,
    device: &'static str,
    job: &'static str,
    precondition: Precondition,
    metrics: Vec<Metric>,
}

fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "pm9a3-seqwrite-1m-empty",
            device: "pm9a3-960g",
            job: "[seqwrite]\nrw=write\nbs=1m\niodepth=32\nio_size=16g\n",
            precondition: Precondition::Fresh,
            metrics: vec![
                Metric {
                    name: "write bandwidth (MB/s)",
                    reference: 1511.0,
                    tolerance_pct: 10.0,
                    source: "measured sustained 1 MiB sequential write on an empty PM9A3 960 GB (issue #2; vendor spec 1,500 MB/s)",
                    get: |r| r.write.bw_bytes_per_s / 1e6,
                },
                Metric {
                    name: "write amplification",
                    reference: 1.00,
                    tolerance_pct: 2.0,
                    source: "same measurement: WAF 1.00 on an empty drive",
                    get: |r| r.waf,
                },
            ],
        },
        Scenario {
            name: "pm9a3-seqread-128k",
            device: "pm9a3-960g",
            job: "[seqread]\nrw=read\nbs=128k\niodepth=32\nnumber_ios=200000\n",
            precondition: Precondition::Fill,
            metrics: vec![Metric {
                name: "read bandwidth (MB/s)",
                reference: 6500.0,
                tolerance_pct: 10.0,
                source: "Samsung PM9A3 data sheet: sequential read up to 6,500 MB/s (PCIe Gen4 x4 class)",
                get: |r| r.read.bw_bytes_per_s / 1e6,
            }],
        },
    ]
}

/// Names of all scenarios.
pub fn names() -> Vec<&'static str> {
    scenarios().iter().map(|s| s.name).collect()
}

/// Run every scenario whose name contains `filter`.
pub fn run_all(filter: Option<&str>, on_start: &mut dyn FnMut(&str)) -> Result<Vec<Check>, String> {
    let mut out = Vec::new();
    for s in scenarios() {
        if let Some(f) = filter {
            if !s.name.contains(f) {
                continue;
            }
        }
        on_start(s.name);
        let device = Device::preset(s.device).map_err(|e| e.to_string())?;
        let workload = fio::parse_str(s.job, s.name).map_err(|e| e.to_string())?;
        let spec = RunSpec {
            device,
            workload,
            workload_name: s.name.into(),
            seed: crate::DEFAULT_SEED,
            precondition: s.precondition,
            sample_interval: None,
            latency_histogram: false,
        };
        let r = simulate_quiet(&spec).map_err(|e| format!("{}: {e}", s.name))?;
        for m in &s.metrics {
            let sim = (m.get)(&r);
            let err = (sim - m.reference) / m.reference * 100.0;
            out.push(Check {
                scenario: s.name.into(),
                metric: m.name.into(),
                reference: m.reference,
                simulated: sim,
                error_pct: err,
                tolerance_pct: m.tolerance_pct,
                source: m.source.into(),
                pass: err.abs() <= m.tolerance_pct,
            });
        }
    }
    Ok(out)
}

/// Human-readable table.
pub fn to_text(checks: &[Check]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{:<28} {:<26} {:>12} {:>12} {:>8} {:>6}  result",
        "scenario", "metric", "reference", "simulated", "error", "tol"
    );
    for c in checks {
        let _ = writeln!(
            s,
            "{:<28} {:<26} {:>12.2} {:>12.2} {:>7.1}% {:>5.1}%  {}",
            c.scenario,
            c.metric,
            c.reference,
            c.simulated,
            c.error_pct,
            c.tolerance_pct,
            if c.pass { "PASS" } else { "FAIL" }
        );
        let _ = writeln!(s, "    source: {}", c.source);
    }
    let failed = checks.iter().filter(|c| !c.pass).count();
    let _ = writeln!(
        s,
        "{} checks, {} within tolerance, {} out of tolerance",
        checks.len(),
        checks.len() - failed,
        failed
    );
    s
}
