//! What serving measured: per request kind, the latency the client saw
//! (arrival to release, wall clock) next to the simulated latency (arrival
//! to simulated completion), and how late releases were.

use crate::stats::DirStats;
use crate::units::Time;
use serde::Serialize;

/// Request kinds, in [`super::Request::kind`] order.
const KINDS: [&str; 5] = ["read", "write", "flush", "trim", "write_zeroes"];

/// Counters and histograms, updated by every served request.
#[derive(Default)]
pub struct ServeStats {
    /// Per kind: served (wall) latency, and bytes.
    served: [DirStats; 5],
    /// Per kind: simulated latency.
    simulated: [DirStats; 5],
    /// How much later than its simulated completion each request was released.
    lag: DirStats,
    late: u64,
}

impl ServeStats {
    pub(super) fn record(
        &mut self,
        kind: usize,
        bytes: u64,
        served: Time,
        simulated: Time,
        lag: Time,
        late: bool,
    ) {
        self.served[kind].record(served, bytes);
        self.simulated[kind].record(simulated, bytes);
        self.lag.record(lag, 0);
        self.late += late as u64;
    }

    /// Late releases so far.
    pub(super) fn late(&self) -> u64 {
        self.late
    }

    /// Requests served so far.
    pub(super) fn requests(&self) -> u64 {
        self.lag.ios
    }

    pub(super) fn report(&self) -> ServeReport {
        let mut r = ServeReport {
            schema: "ssdlab.serve.v1".into(),
            ..ServeReport::default()
        };
        for (k, name) in KINDS.iter().enumerate() {
            if self.served[k].ios == 0 {
                continue;
            }
            r.requests.push(KindReport {
                kind: (*name).into(),
                requests: self.served[k].ios,
                bytes: self.served[k].bytes,
                served: LatencySummary::of(&self.served[k]),
                simulated: LatencySummary::of(&self.simulated[k]),
            });
        }
        r.total_requests = self.lag.ios;
        r.late = self.late;
        r.lag = LatencySummary::of(&self.lag);
        r
    }
}

/// Latency of a set of requests, microseconds.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct LatencySummary {
    /// Mean.
    pub mean_us: f64,
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Largest.
    pub max_us: f64,
}

impl LatencySummary {
    fn of(s: &DirStats) -> LatencySummary {
        if s.ios == 0 {
            return LatencySummary::default();
        }
        LatencySummary {
            mean_us: s.mean_ns() / 1e3,
            p50_us: s.pct_ns(50.0) as f64 / 1e3,
            p99_us: s.pct_ns(99.0) as f64 / 1e3,
            max_us: s.max.as_ns_f64() / 1e3,
        }
    }
}

/// One request kind's figures.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct KindReport {
    /// `read`, `write`, `flush`, `trim` or `write_zeroes`.
    pub kind: String,
    /// Requests served.
    pub requests: u64,
    /// Bytes they moved.
    pub bytes: u64,
    /// Arrival to release, as the client saw it (wall clock).
    pub served: LatencySummary,
    /// Arrival to completion in the simulated drive.
    pub simulated: LatencySummary,
}

/// The serving report (`ssdlab.serve.v1`).
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct ServeReport {
    /// Schema name.
    pub schema: String,
    /// The served system.
    pub device: String,
    /// The backing file.
    pub backing: String,
    /// What paced serving: `wall` or `simulated` (then served times are the
    /// simulated ones and there is no lag).
    pub clock: String,
    /// Wall time served, seconds.
    pub wall_s: f64,
    /// Requests served.
    pub total_requests: u64,
    /// Per request kind.
    pub requests: Vec<KindReport>,
    /// Released more than the late threshold after their simulated completion.
    pub late: u64,
    /// Release time minus simulated completion, over all requests.
    pub lag: LatencySummary,
    /// Arrived after the simulation had passed their arrival (look-ahead only).
    pub late_arrivals: u64,
    /// Bytes of disk the backing file occupies.
    pub resident_bytes: u64,
}

impl ServeReport {
    /// This report as JSON, with the simulated system's own report
    /// (`ssdlab.report.v1`) under `simulated`.
    pub fn to_json(&self, simulated: &crate::report::Report) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_default();
        if let serde_json::Value::Object(m) = &mut v {
            m.insert(
                "simulated".into(),
                serde_json::to_value(simulated).unwrap_or_default(),
            );
        }
        v
    }

    /// A few lines for a terminal.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "served {} requests in {:.1} s ({} clock) from {} ({:.1} MiB held)",
            self.total_requests,
            self.wall_s,
            self.clock,
            self.backing,
            self.resident_bytes as f64 / (1u64 << 20) as f64
        );
        for k in &self.requests {
            let _ = writeln!(
                s,
                "{:>12}: {:>9} req  served mean {:.1} us p50 {:.1} p99 {:.1} | simulated mean {:.1} us p50 {:.1} p99 {:.1}",
                k.kind,
                k.requests,
                k.served.mean_us,
                k.served.p50_us,
                k.served.p99_us,
                k.simulated.mean_us,
                k.simulated.p50_us,
                k.simulated.p99_us
            );
        }
        let _ = writeln!(
            s,
            "release lag: p50 {:.1} us p99 {:.1} us max {:.1} us; {} late, {} late arrivals",
            self.lag.p50_us, self.lag.p99_us, self.lag.max_us, self.late, self.late_arrivals
        );
        s
    }
}
