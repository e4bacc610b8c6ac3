//! Power and energy ledger.
//!
//! Every component has an idle power drawn for the whole simulated time and
//! dynamic energy charged from its actual activity: busy time at its active
//! power (cores, accelerators, host controller, PCIe link), energy per byte
//! (DRAM, NAND channel bus) and energy per array operation (NAND read,
//! program, erase). Energy is integrated over the measured window; average
//! power is energy / window; peak power is the highest total over fixed
//! windows of simulated time (`[power] window`).

use crate::compute::ControllerConfig;
use crate::config::ConfigProblem;
use crate::units::{parse_energy, parse_power, Time};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `[power]` in a device file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PowerFile {
    /// DRAM background power (refresh, PHY, leakage).
    #[serde(default = "zw")]
    pub dram_background: String,
    /// DRAM energy per byte read or written.
    #[serde(default = "ze")]
    pub dram_energy_per_byte: String,
    /// NAND energy per page read, per plane.
    #[serde(default = "ze")]
    pub nand_read_energy: String,
    /// NAND energy per page programmed, per plane.
    #[serde(default = "ze")]
    pub nand_program_energy: String,
    /// NAND energy per block erased, per plane.
    #[serde(default = "ze")]
    pub nand_erase_energy: String,
    /// NAND channel I/O energy per byte transferred.
    #[serde(default = "ze")]
    pub nand_bus_energy_per_byte: String,
    /// NAND idle power per die.
    #[serde(default = "zw")]
    pub nand_idle_power: String,
    /// PCIe link (PHY + controller) power while transferring.
    #[serde(default = "zw")]
    pub pcie_active_power: String,
    /// PCIe link power while idle.
    #[serde(default = "zw")]
    pub pcie_idle_power: String,
    /// Other fixed drive power (PMIC losses, misc. logic).
    #[serde(default = "zw")]
    pub other_power: String,
    /// Budget for the whole drive.
    #[serde(default)]
    pub budget_total: Option<String>,
    /// Budget for the controller cores.
    #[serde(default)]
    pub budget_cores: Option<String>,
    /// Budget for the controller DRAM.
    #[serde(default)]
    pub budget_dram: Option<String>,
    /// Window for power over time and peak power.
    #[serde(default = "d_window")]
    pub window: String,
}

fn zw() -> String {
    "0mW".into()
}
fn ze() -> String {
    "0pJ".into()
}
fn d_window() -> String {
    "1ms".into()
}

/// Resolved power parameters (W, J).
#[derive(Debug, Clone, Serialize, Default)]
pub struct PowerConfig {
    /// DRAM background (W).
    pub dram_background: f64,
    /// DRAM J/byte.
    pub dram_per_byte: f64,
    /// NAND J per page read per plane.
    pub nand_read: f64,
    /// NAND J per page program per plane.
    pub nand_program: f64,
    /// NAND J per erase per plane.
    pub nand_erase: f64,
    /// NAND bus J/byte.
    pub nand_bus_per_byte: f64,
    /// NAND idle W per die.
    pub nand_idle: f64,
    /// PCIe active W.
    pub pcie_active: f64,
    /// PCIe idle W.
    pub pcie_idle: f64,
    /// Other fixed W.
    pub other: f64,
    /// Budgets (W): total, cores, dram.
    pub budget: [Option<f64>; 3],
    /// Window.
    pub window: Time,
}

impl PowerFile {
    /// Resolve, pushing problems into `out`.
    pub fn resolve(&self, out: &mut Vec<ConfigProblem>) -> PowerConfig {
        crate::compute::check_idle_le_active(
            out,
            "power.pcie_idle_power",
            &self.pcie_active_power,
            &self.pcie_idle_power,
        );
        let mut w = |k: &str, v: &str| {
            parse_power(v).unwrap_or_else(|e| {
                out.push(ConfigProblem {
                    key: format!("power.{k}"),
                    message: e.0,
                });
                0.0
            })
        };
        let dram_background = w("dram_background", &self.dram_background);
        let nand_idle = w("nand_idle_power", &self.nand_idle_power);
        let pcie_active = w("pcie_active_power", &self.pcie_active_power);
        let pcie_idle = w("pcie_idle_power", &self.pcie_idle_power);
        let other = w("other_power", &self.other_power);
        let budget = [
            self.budget_total.as_deref().map(|v| w("budget_total", v)),
            self.budget_cores.as_deref().map(|v| w("budget_cores", v)),
            self.budget_dram.as_deref().map(|v| w("budget_dram", v)),
        ];
        let mut e = |k: &str, v: &str| {
            parse_energy(v).unwrap_or_else(|err| {
                out.push(ConfigProblem {
                    key: format!("power.{k}"),
                    message: err.0,
                });
                0.0
            })
        };
        let cfg = PowerConfig {
            dram_background,
            dram_per_byte: e("dram_energy_per_byte", &self.dram_energy_per_byte),
            nand_read: e("nand_read_energy", &self.nand_read_energy),
            nand_program: e("nand_program_energy", &self.nand_program_energy),
            nand_erase: e("nand_erase_energy", &self.nand_erase_energy),
            nand_bus_per_byte: e("nand_bus_energy_per_byte", &self.nand_bus_energy_per_byte),
            nand_idle,
            pcie_active,
            pcie_idle,
            other,
            budget,
            window: crate::config::config_time(&self.window).unwrap_or_else(|err| {
                out.push(ConfigProblem {
                    key: "power.window".into(),
                    message: err.0,
                });
                Time::ms(1)
            }),
        };
        if cfg.window == Time::ZERO {
            out.push(ConfigProblem {
                key: "power.window".into(),
                message: "must be positive".into(),
            });
        }
        cfg
    }
}

/// Activity counters the ledger turns into energy (cumulative since time zero).
#[derive(Debug, Clone, Default)]
pub struct Activity {
    /// Busy time per core group (sum over its cores), or whole time for polling groups.
    pub group_busy: Vec<Time>,
    /// Busy time per accelerator (sum over instances).
    pub accel_busy: Vec<Time>,
    /// Host controller busy.
    pub host_controller_busy: Time,
    /// DRAM bytes moved.
    pub dram_bytes: u64,
    /// NAND page reads (plane-pages).
    pub nand_read_pages: u64,
    /// NAND page programs (plane-pages of native programs).
    pub nand_program_pages: u64,
    /// NAND block erases (plane-blocks).
    pub nand_erase_blocks: u64,
    /// Plane-pages of programs in progress, by the fraction of their array
    /// time done (their energy is spread over tPROG), plus the plane-pages
    /// of SLC-mode programs (done or running) weighted by their array time
    /// against a native program's: native plane-page equivalents.
    pub nand_program_pages_running: f64,
    /// Plane-blocks of erases in progress, likewise.
    pub nand_erase_blocks_running: f64,
    /// Bytes on the NAND channel buses.
    pub nand_bus_bytes: u64,
    /// PCIe busy (up + down).
    pub pcie_busy: Time,
}

/// Component names, in report order.
pub const COMPONENTS: [&str; 8] = [
    "cores",
    "accelerators",
    "host_controller",
    "dram",
    "nand",
    "pcie",
    "other",
    "total",
];

/// Turns activity into energy.
#[derive(Debug, Clone)]
pub struct Ledger {
    /// Power parameters.
    pub cfg: PowerConfig,
    /// Controller (for core/accelerator powers), if modelled.
    pub ctl: Option<ControllerConfig>,
    /// NAND dies.
    pub dies: u32,
    /// Snapshots of cumulative energy per component at window boundaries.
    pub windows: Vec<(Time, [f64; 8])>,
    /// Current window length (doubles when too many windows accumulate).
    pub window: Time,
}

/// Most power windows kept; beyond this, adjacent windows are merged.
const MAX_WINDOWS: usize = 1 << 16;

impl Ledger {
    /// New ledger.
    pub fn new(cfg: PowerConfig, ctl: Option<ControllerConfig>, dies: u32) -> Ledger {
        let window = cfg.window;
        Ledger {
            cfg,
            ctl,
            dies,
            windows: Vec::new(),
            window,
        }
    }

    /// Cumulative energy per component (J) at time `t` for activity `a`.
    pub fn energy(&self, a: &Activity, t: Time) -> [f64; 8] {
        let secs = t.as_secs_f64();
        let mut e = [0.0; 8];
        if let Some(ctl) = &self.ctl {
            for (g, busy) in ctl.groups.iter().zip(&a.group_busy) {
                let b = busy.as_secs_f64().min(secs * g.count as f64);
                e[0] +=
                    g.spec.idle_w * g.count as f64 * secs + (g.spec.active_w - g.spec.idle_w) * b;
            }
            for (x, busy) in ctl.accelerators.iter().zip(&a.accel_busy) {
                let b = busy.as_secs_f64().min(secs * x.instances as f64);
                e[1] += x.idle_w * x.instances as f64 * secs + (x.active_w - x.idle_w) * b;
            }
            let (act, idle) = ctl.host_controller_w;
            e[2] = idle * secs + (act - idle) * a.host_controller_busy.as_secs_f64().min(secs);
        }
        let c = &self.cfg;
        e[3] = c.dram_background * secs + c.dram_per_byte * a.dram_bytes as f64;
        e[4] = c.nand_idle * self.dies as f64 * secs
            + c.nand_read * a.nand_read_pages as f64
            + c.nand_program * (a.nand_program_pages as f64 + a.nand_program_pages_running)
            + c.nand_erase * (a.nand_erase_blocks as f64 + a.nand_erase_blocks_running)
            + c.nand_bus_per_byte * a.nand_bus_bytes as f64;
        // Two directions: the link is "active" in proportion to their mean utilisation.
        e[5] = c.pcie_idle * secs
            + (c.pcie_active - c.pcie_idle) * (a.pcie_busy.as_secs_f64() / 2.0).min(secs);
        e[6] = c.other * secs;
        e[7] = e[..7].iter().sum();
        e
    }

    /// Record the cumulative energy at a window boundary.
    pub fn mark(&mut self, t: Time, e: [f64; 8]) {
        self.windows.push((t, e));
        if self.windows.len() > MAX_WINDOWS {
            // Keep every other boundary: windows twice as long.
            let kept: Vec<_> = self.windows.iter().step_by(2).cloned().collect();
            self.windows = kept;
            self.window = self.window.times(2);
        }
    }
}

/// Per-component result.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct ComponentPower {
    /// Average power over the measured window (W).
    pub avg_w: f64,
    /// Energy over the measured window (J).
    pub energy_j: f64,
    /// Highest power over one `window_ns` window (W); equals avg when the
    /// run is shorter than two windows.
    pub peak_w: f64,
}

/// The report's `power` section.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct PowerReport {
    /// Average total power (W).
    pub avg_w: f64,
    /// Peak total power over `window_ns` windows (W); equals avg when the run is shorter than two windows.
    pub peak_w: f64,
    /// Window used for peak power and the series (ns).
    pub window_ns: f64,
    /// Every configured budget met (by average power).
    pub budget_ok: bool,
    /// Budget checks: name -> (limit W, average W, ok).
    pub budgets: BTreeMap<String, (f64, f64, bool)>,
    /// Per component.
    pub components: BTreeMap<String, ComponentPower>,
    /// Total power per window over the measured interval: (window start ns, W).
    pub series: Vec<(f64, f64)>,
}

impl PowerReport {
    /// Build from the energy at the start and end of the measured window.
    pub fn build(ledger: &Ledger, start: (Time, [f64; 8]), end: (Time, [f64; 8])) -> PowerReport {
        let secs = (end.0 - start.0).as_secs_f64();
        let mut components = BTreeMap::new();
        for (i, name) in COMPONENTS.iter().enumerate().take(7) {
            let energy_j = end.1[i] - start.1[i];
            components.insert(
                name.to_string(),
                ComponentPower {
                    avg_w: if secs > 0.0 { energy_j / secs } else { 0.0 },
                    energy_j,
                    peak_w: 0.0,
                },
            );
        }
        let total = end.1[7] - start.1[7];
        let avg_w = if secs > 0.0 { total / secs } else { 0.0 };
        let mut budgets = BTreeMap::new();
        let c = &ledger.cfg;
        for (i, (name, comp)) in [
            ("total", None),
            ("cores", Some("cores")),
            ("dram", Some("dram")),
        ]
        .iter()
        .enumerate()
        {
            // Without a compute model there are no cores to hold to a budget:
            // the check is left out rather than reported as met.
            if comp == &Some("cores") && ledger.ctl.is_none() {
                continue;
            }
            if let Some(limit) = c.budget[i] {
                let avg = match comp {
                    None => avg_w,
                    Some(k) => components[*k].avg_w,
                };
                budgets.insert(name.to_string(), (limit, avg, avg <= limit));
            }
        }
        let mut series = Vec::new();
        let pts: Vec<_> = ledger
            .windows
            .iter()
            .filter(|(t, _)| *t >= start.0 && *t <= end.0)
            .collect();
        for p in pts.windows(2) {
            let dt = (p[1].0 - p[0].0).as_secs_f64();
            if dt > 0.0 {
                series.push(((p[0].0 - start.0).as_ns_f64(), (p[1].1[7] - p[0].1[7]) / dt));
                for (i, name) in COMPONENTS.iter().enumerate().take(7) {
                    if let Some(c) = components.get_mut(*name) {
                        c.peak_w = c.peak_w.max((p[1].1[i] - p[0].1[i]) / dt);
                    }
                }
            }
        }
        for c in components.values_mut() {
            c.peak_w = c.peak_w.max(c.avg_w);
        }
        let peak_w = series.iter().map(|s| s.1).fold(avg_w, f64::max);
        PowerReport {
            avg_w,
            peak_w,
            window_ns: ledger.window.as_ns_f64(),
            budget_ok: budgets.values().all(|b| b.2),
            budgets,
            components,
            series,
        }
    }
}
