//! Controller compute: firmware stages on modelled cores or hardware
//! accelerators (seed 004, PowerSim; seed 000, an NVMe device on a 100 MHz
//! EISC core).
//!
//! A stage's cost on a core is `cycles / clock + memory_accesses ×
//! memory_latency` per operation (per command for fetch, parse and
//! completion; per mapping unit for cache lookup, translation and issue).
//! The cores that list a stage form a pool: a multi-server FIFO queue shared
//! by every stage the pool runs, in arrival order. An accelerator stage runs
//! on N pipelined instances, each accepting one operation per
//! `1 / throughput` and finishing it `latency` later. Off-critical-path
//! firmware (GC victim selection, cache eviction decisions, active-block
//! allocation) always runs in software, on the pool that lists `ftl`.
//!
//! Without a `[controller]` section the stages are the fixed-service-time
//! skeleton of `[firmware]` (zero by default).

use crate::config::config_frequency;
use crate::config::ConfigProblem;
use crate::engine::FifoServer;
use crate::units::{parse_op_rate, parse_power, Time};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Critical-path stage names, in pipeline order (index = stage id).
pub const STAGES: [&str; 6] = [
    "fetch",
    "parse",
    "cache_lookup",
    "translate",
    "issue",
    "complete",
];
/// Index of the issue stage in [`STAGES`].
const ISSUE: usize = 4;
/// Off-critical-path software work.
pub const BACKGROUND: [&str; 3] = ["gc", "cache_evict", "block_alloc"];

/// Largest cycle count of one operation accepted (`controller.costs.*.cycles`,
/// `controller.host_controller_cycles`): a second at 1 GHz, 1000 s at the
/// slowest accepted clock.
pub const MAX_OP_CYCLES: u64 = 1_000_000_000;
/// Largest memory accesses of one operation accepted (`controller.costs.*.mem_accesses`).
pub const MAX_OP_MEM_ACCESSES: u64 = 1_000_000;
/// Longest memory access of a core accepted (`memory_latency`): with at most
/// [`MAX_OP_MEM_ACCESSES`] of them an operation stays under 1000 s.
pub const MAX_MEMORY_LATENCY: Time = Time::ms(1);
/// Most cores in a group, or instances of an accelerator.
pub const MAX_SERVERS: u32 = 1024;
/// Highest accelerator throughput accepted, operations per second (one
/// every picosecond, the simulator's time step).
pub const MAX_OP_RATE: f64 = 1e12;
/// Lowest accelerator throughput accepted, operations per second.
pub const MIN_OP_RATE: f64 = 1.0;

/// Software cost of one operation of a stage.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct OpCost {
    /// Core cycles of computation.
    #[serde(default)]
    pub cycles: u64,
    /// Memory accesses that miss the core's local memory (each costs the spec's memory latency).
    #[serde(default)]
    pub mem_accesses: u64,
}

/// `[controller.core_specs.NAME]`: a core type.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreSpecFile {
    /// Clock, e.g. `"1GHz"`.
    pub clock: String,
    /// Latency of one memory access that leaves the core.
    pub memory_latency: String,
    /// Power while executing.
    pub active_power: String,
    /// Power while idle (leakage).
    pub idle_power: String,
}

/// `[[controller.cores]]`: identical cores running a set of stages.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreGroupFile {
    /// Core spec name (built in or from `core_specs`).
    pub spec: String,
    /// Number of cores in the group.
    #[serde(default = "one")]
    pub count: u32,
    /// Stages the group runs (critical-path names, or `ftl` for background work).
    pub stages: Vec<String>,
}

fn one() -> u32 {
    1
}

/// `[[controller.accelerators]]`: hardware instances of one stage.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcceleratorFile {
    /// Stage accelerated.
    pub stage: String,
    /// Instances.
    #[serde(default = "one")]
    pub instances: u32,
    /// Latency of one operation.
    pub latency: String,
    /// Operations accepted per second by one instance.
    pub throughput: String,
    /// Power of one busy instance.
    pub active_power: String,
    /// Power of one idle instance.
    pub idle_power: String,
}

/// `[controller]`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControllerFile {
    /// How firmware learns of a doorbell: `"interrupt"` or `"polling"`.
    #[serde(default = "d_doorbell")]
    pub doorbell: String,
    /// How the firmware learns that a host data transfer it started has
    /// ended: `"async"` (the host controller reports it; the core goes on
    /// with other work) or `"blocking"` (the core that ran the issue stage
    /// spins on the DMA status until the transfer ends, as the OpenSSD
    /// Cosmos+ reference firmware does with `check_auto_tx_dma_done`).
    #[serde(default = "d_host_dma")]
    pub host_dma: String,
    /// Polling period (with `doorbell = "polling"`).
    #[serde(default)]
    pub polling_interval: Option<String>,
    /// NVMe host controller clock.
    #[serde(default)]
    pub host_controller_clock: Option<String>,
    /// Host controller cycles per command (SQE fetch handling and CQE posting).
    #[serde(default)]
    pub host_controller_cycles: u64,
    /// Host controller power while busy.
    #[serde(default = "d_zero_w")]
    pub host_controller_active_power: String,
    /// Host controller power while idle.
    #[serde(default = "d_zero_w")]
    pub host_controller_idle_power: String,
    /// Extra core specs by name.
    #[serde(default)]
    pub core_specs: BTreeMap<String, CoreSpecFile>,
    /// Core groups.
    #[serde(default)]
    pub cores: Vec<CoreGroupFile>,
    /// Accelerators.
    #[serde(default)]
    pub accelerators: Vec<AcceleratorFile>,
    /// Software cost per operation of each stage (and of `gc`, `cache_evict`, `block_alloc`).
    #[serde(default)]
    pub costs: BTreeMap<String, OpCost>,
}

fn d_doorbell() -> String {
    "interrupt".into()
}
fn d_host_dma() -> String {
    "async".into()
}
fn d_zero_w() -> String {
    "0mW".into()
}

/// A resolved core type.
#[derive(Debug, Clone, Serialize)]
pub struct CoreSpec {
    /// Name.
    pub name: String,
    /// Clock (Hz).
    pub clock_hz: f64,
    /// Memory access latency.
    pub memory_latency: Time,
    /// Active power (W).
    pub active_w: f64,
    /// Idle power (W).
    pub idle_w: f64,
}

impl CoreSpec {
    /// Time of one operation of cost `c` on this core.
    pub fn op_time(&self, c: OpCost) -> Time {
        Time::from_secs_f64(c.cycles as f64 / self.clock_hz)
            + self.memory_latency.times(c.mem_accesses)
    }
}

/// Built-in core specs (see docs/models/controller-and-power.md for sources and assumptions).
pub fn builtin_specs() -> Vec<CoreSpec> {
    let s = |name: &str, hz: f64, mem_ns: u64, act_mw: f64, idle_mw: f64| CoreSpec {
        name: name.into(),
        clock_hz: hz,
        memory_latency: Time::ns(mem_ns),
        active_w: act_mw / 1e3,
        idle_w: idle_mw / 1e3,
    };
    vec![
        // The values the seed presets define for these names (assumptions
        // with their reasons in docs/models/controller-and-power.md).
        s("arm-1ghz", 1e9, 80, 120.0, 30.0),
        s("arm-100mhz", 1e8, 80, 12.0, 3.0),
        s("cortex-a9-1ghz", 1e9, 80, 400.0, 80.0),
        s("eisc-100mhz", 1e8, 80, 6.0, 1.5),
    ]
}

/// A resolved core group.
#[derive(Debug, Clone, Serialize)]
pub struct CoreGroup {
    /// Spec.
    pub spec: CoreSpec,
    /// Cores.
    pub count: u32,
    /// Critical-path stage ids run by this group.
    pub stages: Vec<usize>,
    /// Runs background FTL work.
    pub ftl: bool,
}

/// A resolved accelerator.
#[derive(Debug, Clone, Serialize)]
pub struct Accelerator {
    /// Stage id.
    pub stage: usize,
    /// Instances.
    pub instances: u32,
    /// Latency per operation.
    pub latency: Time,
    /// Initiation interval per instance (1 / throughput).
    pub interval: Time,
    /// Active power per instance (W).
    pub active_w: f64,
    /// Idle power per instance (W).
    pub idle_w: f64,
}

/// Resolved controller compute configuration.
#[derive(Debug, Clone, Serialize)]
pub struct ControllerConfig {
    /// Firmware polls doorbells every this often (None: interrupt, immediate).
    pub polling: Option<Time>,
    /// The issue stage's executor is held until each host data transfer it
    /// started ends (`host_dma = "blocking"`).
    pub dma_blocking: bool,
    /// Host controller time per command.
    pub host_controller_time: Time,
    /// Host controller active / idle power (W).
    pub host_controller_w: (f64, f64),
    /// Core groups.
    pub groups: Vec<CoreGroup>,
    /// Accelerators.
    pub accelerators: Vec<Accelerator>,
    /// Costs of stages (index = stage id).
    pub costs: [OpCost; 6],
    /// Costs of background work (gc, cache_evict, block_alloc).
    pub background: [OpCost; 3],
}

/// Idle power above active power would make busy time lower the energy.
/// Compared only when both values parse (a bad value is reported by itself).
pub(crate) fn check_idle_le_active(
    out: &mut Vec<ConfigProblem>,
    key: &str,
    active: &str,
    idle: &str,
) {
    if let (Ok(a), Ok(i)) = (parse_power(active), parse_power(idle)) {
        if i > a {
            problem(
                out,
                key,
                format!(
                    "idle power ({:.3} mW) is above active power ({:.3} mW)",
                    i * 1e3,
                    a * 1e3
                ),
            );
        }
    }
}

fn problem(out: &mut Vec<ConfigProblem>, key: &str, msg: impl Into<String>) {
    out.push(ConfigProblem {
        key: key.into(),
        message: msg.into(),
    });
}

impl ControllerFile {
    /// Resolve, pushing every problem into `out`.
    pub fn resolve(&self, out: &mut Vec<ConfigProblem>) -> Option<ControllerConfig> {
        let n0 = out.len();
        let polling = match self.doorbell.as_str() {
            "interrupt" => {
                if self.polling_interval.is_some() {
                    problem(
                        out,
                        "controller.polling_interval",
                        "given but doorbell = \"interrupt\"",
                    );
                }
                None
            }
            "polling" => match self
                .polling_interval
                .as_deref()
                .map(crate::config::config_time)
            {
                Some(Ok(t)) if t > Time::ZERO => Some(t),
                Some(Ok(_)) => {
                    problem(out, "controller.polling_interval", "must be positive");
                    None
                }
                Some(Err(e)) => {
                    problem(out, "controller.polling_interval", e.0);
                    None
                }
                None => {
                    problem(
                        out,
                        "controller.polling_interval",
                        "required with doorbell = \"polling\" (e.g. \"1us\")",
                    );
                    None
                }
            },
            o => {
                problem(
                    out,
                    "controller.doorbell",
                    format!("'{o}' is not a doorbell mode (expected \"interrupt\" or \"polling\")"),
                );
                None
            }
        };
        let dma_blocking = match self.host_dma.as_str() {
            "async" => false,
            "blocking" => true,
            o => {
                problem(
                    out,
                    "controller.host_dma",
                    format!("'{o}' is not a host DMA mode (expected \"async\" or \"blocking\")"),
                );
                false
            }
        };
        let hc_clock = match self.host_controller_clock.as_deref().map(config_frequency) {
            None => None,
            Some(Ok(f)) => Some(f),
            Some(Err(e)) => {
                problem(out, "controller.host_controller_clock", e.0);
                None
            }
        };
        if self.host_controller_cycles > 0
            && hc_clock.is_none()
            && self.host_controller_clock.is_none()
        {
            problem(
                out,
                "controller.host_controller_clock",
                "required when host_controller_cycles > 0",
            );
        }
        if self.host_controller_cycles > MAX_OP_CYCLES {
            problem(
                out,
                "controller.host_controller_cycles",
                format!(
                    "{} is above the largest accepted ({MAX_OP_CYCLES} cycles per command)",
                    self.host_controller_cycles
                ),
            );
        }
        let host_controller_time = hc_clock.map_or(Time::ZERO, |f| {
            Time::from_secs_f64(self.host_controller_cycles as f64 / f)
        });
        let pw = |out: &mut Vec<ConfigProblem>, k: &str, v: &str| {
            parse_power(v).unwrap_or_else(|e| {
                problem(out, k, e.0);
                0.0
            })
        };
        let host_controller_w = (
            pw(
                out,
                "controller.host_controller_active_power",
                &self.host_controller_active_power,
            ),
            pw(
                out,
                "controller.host_controller_idle_power",
                &self.host_controller_idle_power,
            ),
        );
        check_idle_le_active(
            out,
            "controller.host_controller_idle_power",
            &self.host_controller_active_power,
            &self.host_controller_idle_power,
        );
        let mut specs = builtin_specs();
        for (name, f) in &self.core_specs {
            let k = format!("controller.core_specs.{name}");
            let clock_hz = config_frequency(&f.clock).unwrap_or_else(|e| {
                problem(out, &format!("{k}.clock"), e.0);
                1.0
            });
            let memory_latency =
                crate::config::config_time(&f.memory_latency).unwrap_or_else(|e| {
                    problem(out, &format!("{k}.memory_latency"), e.0);
                    Time::ZERO
                });
            if memory_latency > MAX_MEMORY_LATENCY {
                problem(
                    out,
                    &format!("{k}.memory_latency"),
                    format!(
                        "{} is longer than the longest accepted ({MAX_MEMORY_LATENCY} per memory access)",
                        f.memory_latency
                    ),
                );
            }
            let spec = CoreSpec {
                name: name.clone(),
                clock_hz,
                memory_latency,
                active_w: pw(out, &format!("{k}.active_power"), &f.active_power),
                idle_w: pw(out, &format!("{k}.idle_power"), &f.idle_power),
            };
            check_idle_le_active(
                out,
                &format!("{k}.idle_power"),
                &f.active_power,
                &f.idle_power,
            );
            specs.retain(|s| &s.name != name);
            specs.push(spec);
        }
        let mut costs = [OpCost::default(); 6];
        let mut background = [OpCost::default(); 3];
        for (name, c) in &self.costs {
            for (field, v, max) in [
                ("cycles", c.cycles, MAX_OP_CYCLES),
                ("mem_accesses", c.mem_accesses, MAX_OP_MEM_ACCESSES),
            ] {
                if v > max {
                    problem(
                        out,
                        &format!("controller.costs.{name}.{field}"),
                        format!("{v} is above the largest accepted ({max} per operation)"),
                    );
                }
            }
            if let Some(i) = STAGES.iter().position(|s| s == name) {
                costs[i] = *c;
            } else if let Some(i) = BACKGROUND.iter().position(|s| s == name) {
                background[i] = *c;
            } else {
                problem(
                    out,
                    &format!("controller.costs.{name}"),
                    format!(
                        "unknown stage '{name}' (expected one of {}, {})",
                        STAGES.join(", "),
                        BACKGROUND.join(", ")
                    ),
                );
            }
        }
        let mut owner: [Option<String>; 6] = Default::default();
        let mut groups = Vec::new();
        let mut ftl_groups = 0;
        for (gi, g) in self.cores.iter().enumerate() {
            let k = format!("controller.cores[{gi}]");
            let Some(spec) = specs.iter().find(|s| s.name == g.spec).cloned() else {
                problem(out, &format!("{k}.spec"), format!("unknown core spec '{}' (built in: {}; or define it under [controller.core_specs.NAME])", g.spec, builtin_specs().iter().map(|s| s.name.clone()).collect::<Vec<_>>().join(", ")));
                continue;
            };
            if g.count == 0 {
                problem(out, &format!("{k}.count"), "must be at least 1");
            }
            if g.count > MAX_SERVERS {
                problem(
                    out,
                    &format!("{k}.count"),
                    format!(
                        "{} is above the largest accepted ({MAX_SERVERS} cores in a group)",
                        g.count
                    ),
                );
            }
            let mut stages = Vec::new();
            let mut ftl = false;
            for (si, st) in g.stages.iter().enumerate() {
                if st == "ftl" {
                    ftl = true;
                    continue;
                }
                match STAGES.iter().position(|s| s == st) {
                    Some(i) => {
                        if let Some(o) = &owner[i] {
                            problem(
                                out,
                                &format!("{k}.stages[{si}]"),
                                format!("stage '{st}' is already run by {o}"),
                            );
                        }
                        owner[i] = Some(k.clone());
                        stages.push(i);
                    }
                    None => problem(
                        out,
                        &format!("{k}.stages[{si}]"),
                        format!(
                            "unknown stage '{st}' (expected {} or ftl)",
                            STAGES.join(", ")
                        ),
                    ),
                }
            }
            ftl_groups += ftl as u32;
            groups.push(CoreGroup {
                spec,
                count: g.count,
                stages,
                ftl,
            });
        }
        let mut accelerators = Vec::new();
        for (ai, a) in self.accelerators.iter().enumerate() {
            let k = format!("controller.accelerators[{ai}]");
            let stage = STAGES.iter().position(|s| *s == a.stage);
            match stage {
                None => problem(
                    out,
                    &format!("{k}.stage"),
                    format!(
                        "unknown stage '{}' (expected {}); background work stays in software",
                        a.stage,
                        STAGES.join(", ")
                    ),
                ),
                Some(st) => {
                    if let Some(o) = &owner[st] {
                        problem(
                            out,
                            &format!("{k}.stage"),
                            format!("stage '{}' is already run by {o}", a.stage),
                        );
                    }
                    owner[st] = Some(k.clone());
                }
            }
            if a.instances == 0 {
                problem(out, &format!("{k}.instances"), "must be at least 1");
            }
            if a.instances > MAX_SERVERS {
                problem(
                    out,
                    &format!("{k}.instances"),
                    format!(
                        "{} is above the largest accepted ({MAX_SERVERS} instances)",
                        a.instances
                    ),
                );
            }
            let latency = crate::config::config_time(&a.latency).unwrap_or_else(|e| {
                problem(out, &format!("{k}.latency"), e.0);
                Time::ZERO
            });
            let interval = match parse_op_rate(&a.throughput) {
                Ok(r) if !(MIN_OP_RATE..=MAX_OP_RATE).contains(&r) => {
                    problem(
                        out,
                        &format!("{k}.throughput"),
                        format!(
                            "'{}' is not an accepted rate (1op/s to 1000Gop/s per instance)",
                            a.throughput
                        ),
                    );
                    Time::ZERO
                }
                Ok(r) => Time::from_secs_f64(1.0 / r),
                Err(e) => {
                    problem(out, &format!("{k}.throughput"), e.0);
                    Time::ZERO
                }
            };
            let active_w = pw(out, &format!("{k}.active_power"), &a.active_power);
            let idle_w = pw(out, &format!("{k}.idle_power"), &a.idle_power);
            check_idle_le_active(
                out,
                &format!("{k}.idle_power"),
                &a.active_power,
                &a.idle_power,
            );
            // The other fields are checked even when the stage is unknown.
            let Some(stage) = stage else { continue };
            accelerators.push(Accelerator {
                stage,
                instances: a.instances,
                latency,
                interval,
                active_w,
                idle_w,
            });
        }
        for (i, o) in owner.iter().enumerate() {
            if o.is_none() {
                problem(
                    out,
                    "controller",
                    format!(
                        "stage '{}' is run by no core group and no accelerator (list it in a `controller.cores` group's `stages` or add a `controller.accelerators` entry)",
                        STAGES[i]
                    ),
                );
            }
        }
        if ftl_groups != 1 {
            problem(out, "controller.cores", format!("exactly one core group must list 'ftl' (background GC, eviction and allocation work always runs in software); {ftl_groups} do"));
        }
        if out.len() > n0 {
            return None;
        }
        Some(ControllerConfig {
            polling,
            dma_blocking,
            host_controller_time,
            host_controller_w,
            groups,
            accelerators,
            costs,
            background,
        })
    }
}

// ---------------------------------------------------------------------------
// Runtime
// ---------------------------------------------------------------------------

/// A pool of identical servers (cores or accelerator instances).
#[derive(Debug, Clone)]
pub struct Pool {
    servers: Vec<FifoServer>,
}

impl Pool {
    fn new(n: u32) -> Pool {
        Pool {
            servers: vec![FifoServer::default(); n.max(1) as usize],
        }
    }
    /// Serve one job of `service` arriving at `at` on the server that starts it earliest.
    #[inline]
    fn serve(&mut self, at: Time, service: Time) -> (Time, Time) {
        if let [only] = self.servers.as_mut_slice() {
            return only.reserve(at, service);
        }
        let mut best = 0;
        let mut best_free = Time::MAX;
        for (i, s) in self.servers.iter().enumerate() {
            let f = s.free_at();
            if f <= at {
                best = i;
                break;
            }
            if f < best_free {
                best_free = f;
                best = i;
            }
        }
        self.servers[best].reserve(at, service)
    }
    /// Busy time summed over the servers that has run by `t` ([`FifoServer::busy_by`]).
    pub fn busy_by(&self, t: Time) -> Time {
        self.servers
            .iter()
            .fold(Time::ZERO, |a, s| a + s.busy_by(t))
    }
    /// Number of servers.
    pub fn servers(&self) -> usize {
        self.servers.len()
    }
    /// Time the earliest server is free.
    fn free_at(&self) -> Time {
        if let [only] = self.servers.as_slice() {
            return only.free_at();
        }
        self.servers
            .iter()
            .map(|s| s.free_at())
            .min()
            .unwrap_or(Time::ZERO)
    }
}

#[derive(Debug, Clone, Copy)]
enum Exec {
    Group(usize),
    Accel(usize),
}

/// The controller's compute resources at run time.
pub struct Compute {
    /// Configuration.
    pub cfg: ControllerConfig,
    exec: [Exec; 6],
    op_time: [Time; 6],
    bg_time: [Time; 3],
    ftl_group: usize,
    /// Core group pools.
    pub groups: Vec<Pool>,
    /// Accelerator pools.
    pub accels: Vec<Pool>,
    /// Host controller.
    pub host_controller: FifoServer,
    /// Operations per stage.
    pub ops: [u64; 6],
    /// See [`Compute::front_is_dedicated`] (fixed by the configuration).
    front_dedicated: bool,
    /// See [`Compute::fetch_is_dedicated`] (fixed by the configuration).
    fetch_dedicated: bool,
}

impl Compute {
    /// Build from a resolved configuration (validated: every stage has an executor).
    pub fn new(cfg: ControllerConfig) -> Compute {
        let mut exec = [Exec::Group(0); 6];
        let mut op_time = [Time::ZERO; 6];
        let mut ftl_group = 0;
        for (gi, g) in cfg.groups.iter().enumerate() {
            for &s in &g.stages {
                exec[s] = Exec::Group(gi);
                op_time[s] = g.spec.op_time(cfg.costs[s]);
            }
            if g.ftl {
                ftl_group = gi;
            }
        }
        for (ai, a) in cfg.accelerators.iter().enumerate() {
            exec[a.stage] = Exec::Accel(ai);
            op_time[a.stage] = a.interval;
        }
        let ftl_spec = &cfg.groups[ftl_group].spec;
        let bg_time = [
            ftl_spec.op_time(cfg.background[0]),
            ftl_spec.op_time(cfg.background[1]),
            ftl_spec.op_time(cfg.background[2]),
        ];
        let key = |s: usize| match exec[s] {
            Exec::Group(g) => (0, g),
            Exec::Accel(a) => (1, a),
        };
        let others = [key(0), key(5), (0, ftl_group)];
        let front_dedicated = (1..=4).all(|s| !others.contains(&key(s)));
        let fetch_dedicated = (1..=5).all(|s| key(s) != key(0)) && key(0) != (0, ftl_group);
        Compute {
            front_dedicated,
            fetch_dedicated,
            groups: cfg.groups.iter().map(|g| Pool::new(g.count)).collect(),
            accels: cfg
                .accelerators
                .iter()
                .map(|a| Pool::new(a.instances))
                .collect(),
            exec,
            op_time,
            bg_time,
            ftl_group,
            host_controller: FifoServer::default(),
            ops: [0; 6],
            cfg,
        }
    }

    /// Serve `n` operations of stage `s` arriving at `at`; returns when they are done.
    #[inline]
    pub fn serve(&mut self, s: usize, at: Time, n: u64) -> Time {
        if n == 0 {
            return at;
        }
        self.ops[s] += n;
        match self.exec[s] {
            Exec::Group(g) => self.groups[g].serve(at, self.op_time[s].times(n)).1,
            Exec::Accel(a) => {
                // Pipelined: each instance accepts one operation per interval.
                let acc = &self.cfg.accelerators[a];
                let pool = &mut self.accels[a];
                let mut last = at;
                for _ in 0..n {
                    let (st, _) = pool.serve(at, acc.interval);
                    let done = st + acc.latency.max(acc.interval);
                    if done > last {
                        last = done;
                    }
                }
                last
            }
        }
    }

    /// The front stages (parse, lookup, translate, issue) run on executors
    /// that serve neither fetch, completion nor background FTL work, so a
    /// command's front requests may be booked when it enters the pipeline.
    /// Not exact when the issue executor also gets work at event time
    /// (programs, GC reads and erases, blocking-DMA spins): that work fills
    /// the gaps left ahead or queues behind the bookings; occupancy is kept.
    #[inline]
    pub fn front_is_dedicated(&self) -> bool {
        self.front_dedicated
    }

    /// The fetch stage runs on an executor that serves no other stage and no
    /// background work: its reservations come only from fetches, so with a
    /// single submission queue they may be booked when the doorbell is rung.
    #[inline]
    pub fn fetch_is_dedicated(&self) -> bool {
        self.fetch_dedicated
    }

    /// Time the executor of stage `s` can next start work.
    pub fn free_at(&self, s: usize) -> Time {
        match self.exec[s] {
            Exec::Group(g) => self.groups[g].free_at(),
            Exec::Accel(a) => self.accels[a].free_at(),
        }
    }

    /// Background software work (0 gc victim selection, 1 cache eviction decision, 2 block allocation) on the FTL core.
    #[inline]
    pub fn background(&mut self, kind: usize, at: Time) -> Time {
        let t = self.bg_time[kind];
        if t == Time::ZERO {
            return at;
        }
        self.groups[self.ftl_group].serve(at, t).1
    }

    /// Host controller work for one command arriving at `at`.
    #[inline]
    pub fn host_controller(&mut self, at: Time) -> Time {
        if self.cfg.host_controller_time == Time::ZERO {
            return at;
        }
        self.host_controller
            .reserve(at, self.cfg.host_controller_time)
            .1
    }

    /// With `host_dma = "blocking"`: a host data transfer the issue stage
    /// started at `from` takes `span` on an idle link (and DRAM); the firmware
    /// spins on the DMA status for that long, so the issue stage's executor
    /// is busy for `span` from `from` (FIFO after the work already booked).
    /// The spin is the transfer's own time, not its wait behind other
    /// commands' transfers: a blocking firmware has one transfer at a time.
    #[inline]
    pub fn hold_for_dma(&mut self, from: Time, span: Time) {
        if !self.cfg.dma_blocking || span == Time::ZERO {
            return;
        }
        match self.exec[ISSUE] {
            Exec::Group(g) => {
                self.groups[g].serve(from, span);
            }
            Exec::Accel(a) => {
                self.accels[a].serve(from, span);
            }
        }
    }

    /// When firmware notices a doorbell written at `at`.
    #[inline]
    pub fn notice_doorbell(&self, at: Time) -> Time {
        match self.cfg.polling {
            None => at,
            Some(p) => Time(at.0.div_ceil(p.0) * p.0),
        }
    }
}
