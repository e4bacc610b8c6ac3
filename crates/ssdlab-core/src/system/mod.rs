//! The system: one host, its PCIe fabric and its drives around one event
//! loop. The loop owns the event queue and the parts; it pops events in
//! (time, sequence) order and hands each to the part it is for: drive events
//! to the drive, host events to the host. A command crosses from the host to
//! a drive as a [`Submission`] and back as [`Event::HostDone`]; data moves
//! over the [`Fabric`].

pub mod config;
mod live;

use crate::config::Device;
use crate::device::firmware::Firmware;
use crate::device::{check_memory, Drive, Precondition, Snapshot};
use crate::engine::EventQueue;
use crate::events::Event;
use crate::fabric::pcie::Link;
use crate::fabric::Fabric;
use crate::fabric::{PortSpec, SwitchSpec, Upper};
use crate::host::DriveView;
use crate::host::{Host, Submission};
use crate::units::Time;
use crate::workload::{Workload, WorkloadError};
use config::{Parent, SystemConfig};
use std::fmt;

/// A simulation error.
#[derive(Debug, Clone)]
pub enum SimError {
    /// Bad workload for this device.
    Workload(WorkloadError),
    /// The device cannot be simulated (e.g. too large for this machine's memory).
    Device(String),
    /// Commands were outstanding but nothing could make progress (a model bug).
    Stalled(String),
    /// Stopped by the caller.
    Interrupted,
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::Workload(e) => write!(f, "{e}"),
            SimError::Device(s) => write!(f, "{s}"),
            SimError::Stalled(s) => write!(f, "simulation stalled: {s}"),
            SimError::Interrupted => write!(f, "interrupted"),
        }
    }
}

impl std::error::Error for SimError {}

/// Progress of a running simulation.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Simulated time.
    pub sim_time: Time,
    /// Host I/Os completed.
    pub ios_done: u64,
    /// Host I/Os expected in total, if known.
    pub ios_total: Option<u64>,
    /// Fraction done (0..1), if known.
    pub fraction: Option<f64>,
}

/// How a system's drives start.
enum Start {
    /// New drives, preconditioned as asked.
    New(Precondition),
    /// Drives whose power returns after a power loss: the FTLs recovery
    /// rebuilt, one per drive in order, and how each was preconditioned.
    Recovered(Vec<(crate::ftl::Ftl, crate::device::PreconditionInfo)>),
}

/// A host, its fabric and its drives, ready to run.
pub struct System {
    q: EventQueue<Event>,
    /// The host: jobs, queues, statistics.
    pub host: Host,
    /// The PCIe fabric.
    pub fabric: Fabric,
    /// The drives, in the order of the system file.
    pub drives: Vec<Drive>,
    /// Their names (`nvme0`, ...).
    pub names: Vec<String>,
    /// Other endpoints (an FPGA): fabric ports after the drives'.
    pub endpoints: Vec<String>,
    /// The system's name (the device's, for a one-drive system).
    pub name: String,
    /// Power of the switches (constant), watts.
    pub switch_power_w: f64,
    /// Idle power of the drives' FPGAs (static + DRAM background), watts.
    pub fpga_idle_w: f64,
    /// Built from a system file (reports then list drives and links).
    pub multi: bool,
    /// Events processed.
    pub events: u64,
    /// Seed.
    pub seed: u64,
    /// When the power fails, if a power loss is scheduled.
    power_loss: Option<Time>,
    /// The power failed: the run is over.
    powered_off: bool,
    /// The drives run on after a power loss ([`System::after_recovery`]).
    recovered: bool,
    /// The earliest time a drive's power ledger closes a window (the
    /// drives' `next_mark`; never without a ledger): one test per event.
    next_mark: Time,
}

impl System {
    /// One host and one drive `dev` behind a root port, for `workload`,
    /// the drive preconditioned as asked.
    pub fn new(
        dev: Device,
        workload: &Workload,
        workload_file: &str,
        seed: u64,
        pre: Precondition,
    ) -> Result<System, SimError> {
        System::build(
            SystemConfig::single(dev),
            workload,
            workload_file,
            seed,
            Start::New(pre),
            false,
        )
    }

    /// The system `cfg` for `workload`, every drive preconditioned as asked
    /// (drive `i` with seed `seed + i`).
    pub fn from_config(
        cfg: SystemConfig,
        workload: &Workload,
        workload_file: &str,
        seed: u64,
        pre: Precondition,
    ) -> Result<System, SimError> {
        System::build(cfg, workload, workload_file, seed, Start::New(pre), true)
    }

    /// The power returns after the power loss this system ran to
    /// ([`System::power_loss_at`]): the same system `cfg` (as it was built)
    /// whose drives keep what recovery rebuilt (mapping, blocks, wear,
    /// SLC cache contents) and start everything volatile empty, with a new
    /// host running `workload` from time 0 of a new clock (the recovery's
    /// own time is in the first run's report), with the same seed.
    pub fn after_recovery(
        self,
        cfg: SystemConfig,
        workload: &Workload,
        workload_file: &str,
    ) -> Result<System, SimError> {
        if !self.powered_off {
            return Err(SimError::Device(
                "the system has not lost its power: nothing to recover".into(),
            ));
        }
        if cfg.drives.len() != self.drives.len() {
            return Err(SimError::Device(format!(
                "system '{}' has {} drives, but {} lost their power",
                cfg.name,
                cfg.drives.len(),
                self.drives.len()
            )));
        }
        let (seed, multi) = (self.seed, self.multi);
        let mut ftls = Vec::with_capacity(self.drives.len());
        let mut stores = Vec::with_capacity(self.drives.len());
        for d in self.drives {
            let (_, ftl, info, store) = d.take_recovered()?;
            ftls.push((ftl, info));
            stores.push(store);
        }
        let mut s = System::build(
            cfg,
            workload,
            workload_file,
            seed,
            Start::Recovered(ftls),
            multi,
        )?;
        s.recovered = true;
        // Stored data stays with its drive.
        if stores.iter().any(Option::is_some) {
            for (d, st) in s.drives.iter_mut().zip(stores) {
                d.store = st;
            }
            s.host.data = true;
        }
        Ok(s)
    }

    /// `multi`: report per drive and per link (a system file), or as one
    /// drive (`--device`).
    fn build(
        cfg: SystemConfig,
        workload: &Workload,
        workload_file: &str,
        seed: u64,
        start: Start,
        multi: bool,
    ) -> Result<System, SimError> {
        if cfg.drives.is_empty() {
            return Err(SimError::Device(format!(
                "system '{}' has no drives",
                cfg.name
            )));
        }
        for d in &cfg.drives {
            check_memory(&d.device)?;
        }
        let total: u64 = cfg
            .drives
            .iter()
            .map(|d| crate::device::memory_estimate(&d.device))
            .sum();
        if cfg.drives.len() > 1 {
            if let Some(avail) = crate::device::available_memory() {
                if total > avail {
                    return Err(SimError::Device(format!(
                        "system '{}' needs about {:.1} GiB for its drives' mapping tables but only {:.1} GiB of memory is available",
                        cfg.name,
                        total as f64 / (1u64 << 30) as f64,
                        avail as f64 / (1u64 << 30) as f64
                    )));
                }
            }
        }
        let views: Vec<DriveView<'_>> = cfg
            .drives
            .iter()
            .map(|d| DriveView {
                name: &d.name,
                dev: &d.device,
            })
            .collect();
        let (host, classes) = Host::new(&cfg.host, &views, workload, workload_file, seed, multi)?;
        // Flushes wait for the buffer only if it is volatile; only workloads
        // that can flush (fsync, end_fsync, or a trace) need the counters.
        let may_flush = workload.trace.is_some()
            || workload
                .jobs
                .iter()
                .any(|j| j.fsync > 0 || j.end_fsync || j.read_iolog.is_some());
        let one = cfg.switches.is_empty()
            && cfg.drives.len() == 1
            && cfg.endpoints.is_empty()
            && cfg.root_memory_bandwidth.is_none();
        let fabric = if one {
            Fabric::single(&cfg.drives[0].link)
        } else {
            let up = |p: Parent| match p {
                Parent::Root => Upper::Root,
                Parent::Switch(j) => Upper::Switch(j),
            };
            let sw: Vec<SwitchSpec<'_>> = cfg
                .switches
                .iter()
                .map(|s| SwitchSpec {
                    name: &s.name,
                    upstream: up(s.upstream),
                    uplink: &s.uplink,
                    latency: s.latency,
                    ingress_buffer: s.ingress_buffer,
                })
                .collect();
            let ports: Vec<PortSpec<'_>> = cfg
                .drives
                .iter()
                .map(|d| PortSpec {
                    name: &d.name,
                    attach: up(d.attach),
                    link: &d.link,
                })
                .chain(cfg.endpoints.iter().map(|e| PortSpec {
                    name: &e.name,
                    attach: up(e.attach),
                    link: &e.link,
                }))
                .collect();
            Fabric::build(&sw, &ports, cfg.root_memory_bandwidth)
        };
        let names: Vec<String> = cfg.drives.iter().map(|d| d.name.clone()).collect();
        let endpoints: Vec<String> = cfg.endpoints.iter().map(|e| e.name.clone()).collect();
        let switch_power_w = cfg.switches.iter().map(|s| s.power_w).sum();
        let fpga_idle_w = cfg
            .drives
            .iter()
            .filter_map(|d| d.device.fpga.as_ref())
            .map(|f| f.static_power_w + f.dram_background_w)
            .sum();
        let mut drives = Vec::with_capacity(cfg.drives.len());
        match start {
            Start::New(pre) => {
                for (i, d) in cfg.drives.into_iter().enumerate() {
                    drives.push(Drive::new(
                        d.device,
                        seed.wrapping_add(i as u64),
                        pre,
                        &classes[i],
                        i,
                        may_flush,
                    )?);
                }
            }
            Start::Recovered(ftls) => {
                for (i, (d, (ftl, info))) in cfg.drives.into_iter().zip(ftls).enumerate() {
                    drives.push(Drive::assemble(
                        d.device,
                        ftl,
                        info,
                        &classes[i],
                        i,
                        may_flush,
                    ));
                }
            }
        }
        // Jobs whose data goes peer to peer: their queues' DMAs on each
        // drive go to the endpoint's port.
        for h in &host.queues {
            let Some(job) = workload.jobs.get(h.job) else {
                continue;
            };
            let Some(peer) = &job.peer else {
                continue;
            };
            let Some(k) = endpoints.iter().position(|e| e == peer) else {
                return Err(SimError::Workload(WorkloadError {
                    file: workload_file.into(),
                    line: 0,
                    option: None,
                    message: format!(
                        "job '{}' moves its data peer to peer with '{peer}', which is not an endpoint of system '{}' (endpoints: {})",
                        job.name,
                        cfg.name,
                        if endpoints.is_empty() { "none".to_string() } else { endpoints.join(", ") }
                    ),
                }));
            };
            for &(d, sq) in &h.targets {
                drives[d as usize].set_peer(sq, names.len() + k);
            }
        }
        let mut s = System {
            q: EventQueue::new(),
            host,
            fabric,
            drives,
            names,
            endpoints,
            name: cfg.name,
            switch_power_w,
            fpga_idle_w,
            multi,
            events: 0,
            seed,
            power_loss: None,
            powered_off: false,
            recovered: false,
            next_mark: Time::ZERO,
        };
        for d in &mut s.drives {
            d.ramp_snapshot = d.snapshot(Time::ZERO, &s.fabric);
        }
        s.host.schedule_delayed_starts(&mut s.q);
        Ok(s)
    }

    /// Keep what is written (`spec`: where), or not (`None`): a functional
    /// data store on every drive. Jobs that verify need one; without it
    /// they are refused here, with how to turn it on.
    pub fn set_data_store(
        &mut self,
        spec: Option<&crate::device::store::StoreSpec>,
        workload: &Workload,
        workload_file: &str,
    ) -> Result<(), SimError> {
        check_data_store(spec, workload, workload_file)?;
        let Some(spec) = spec else {
            return Ok(());
        };
        let several = self.drives.len() > 1;
        for (d, name) in self.drives.iter_mut().zip(&self.names) {
            if d.store.is_some() {
                // Kept from before a power loss (running on after it).
                continue;
            }
            let cap = d.dev.capacity_bytes();
            d.store = Some(
                crate::device::store::DataStore::open(spec, name, cap, several)
                    .map_err(|e| SimError::Device(e.0))?,
            );
        }
        self.host.data = true;
        if self.power_loss.is_some() {
            for d in &mut self.drives {
                d.keep_store_versions();
            }
        }
        Ok(())
    }

    /// Fail the power at `at` (simulated time from the start of the run):
    /// the run ends there, each drive loses what was not yet durable and
    /// recovers (its report gains a `recovery` section). A data store
    /// follows what recovery rebuilt (docs/models/data-store.md).
    pub fn power_loss_at(&mut self, at: Time) -> Result<(), SimError> {
        if at == Time::ZERO {
            return Err(SimError::Device(
                "--power-loss-at: the power loss must come after the start of the run (a time above 0 s)".into(),
            ));
        }
        if let Some(t) = self.power_loss {
            return Err(SimError::Device(format!(
                "--power-loss-at: a power loss is already scheduled at {:.6} s (one per run)",
                t.as_secs_f64()
            )));
        }
        if let Some(i) = self.drives.iter().position(|d| d.is_ramdisk()) {
            return Err(SimError::Device(format!(
                "--power-loss-at: drive {} is a RAM disk (backend.kind = \"ramdisk\"): it has no flash to recover from, and a power loss is modelled only for flash drives",
                self.names[i]
            )));
        }
        for d in &mut self.drives {
            d.track_durability();
            d.keep_store_versions();
        }
        self.power_loss = Some(at);
        self.q.at(at, Event::PowerLoss);
        Ok(())
    }

    /// The power loss and recovery, once it has happened (the drives'
    /// together).
    pub fn recovery(&self) -> Option<crate::device::recovery::RecoveryReport> {
        let parts: Vec<_> = self
            .drives
            .iter()
            .filter_map(|d| d.recovery.as_ref())
            .collect();
        crate::device::recovery::RecoveryReport::combine(&parts)
    }

    /// Keep fio-style statistics per job clone (one per host queue).
    pub fn enable_job_stats(&mut self, w: &Workload) {
        self.host.enable_job_stats(w);
    }

    /// Sample throughput and latency every `interval` of simulated time.
    pub fn sample_every(&mut self, interval: Time) {
        self.host.sample_every(interval);
        let from = self.host.ramp_end();
        for d in &mut self.drives {
            d.sample_slc(interval, from);
        }
    }

    /// Start of the measured window.
    pub fn ramp_end(&self) -> Time {
        self.host.ramp_end()
    }

    /// The first drive (the drive of a one-drive system).
    pub fn drive(&self) -> &Drive {
        &self.drives[0]
    }

    /// The first drive's firmware pipeline (stages, cores, accelerators).
    pub fn firmware(&self) -> &Firmware {
        self.drives[0].firmware()
    }

    /// The PCIe link drive `i` attaches with.
    pub fn link_of(&self, i: usize) -> &Link {
        self.fabric.link(self.drives[i].port)
    }

    /// The first drive's PCIe link.
    pub fn link(&self) -> &Link {
        self.link_of(0)
    }

    /// Drive `i`'s counters now.
    pub fn snapshot_of(&self, i: usize) -> Snapshot {
        self.drives[i].snapshot(self.q.now(), &self.fabric)
    }

    /// The first drive's counters now.
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot_of(0)
    }

    /// Drive `i`'s cumulative energy per component at `t` (zeros without a power model).
    pub fn energy_of(&self, i: usize, t: Time) -> [f64; 8] {
        self.drives[i].energy_at(t, &self.fabric)
    }

    /// The first drive's cumulative energy per component at `t`.
    pub fn energy_at(&self, t: Time) -> [f64; 8] {
        self.energy_of(0, t)
    }

    /// Host I/Os completed (all, including the ramp).
    pub fn ios_done(&self) -> u64 {
        self.host.ios_done
    }

    /// Run to completion, calling `progress` now and then; `stop` is polled
    /// at the same points and ends the run with [`SimError::Interrupted`].
    pub fn run(
        &mut self,
        progress: &mut dyn FnMut(Progress),
        stop: &dyn Fn() -> bool,
    ) -> Result<(), SimError> {
        for q in 0..self.host.queues.len() as u32 {
            self.start_queue(q, Time::ZERO)?;
        }
        for d in &mut self.drives {
            d.start_checkpoints(Time::ZERO, &mut self.q);
            if self.recovered {
                d.power_on_gc(Time::ZERO, &mut self.q);
            }
        }
        if self.host.ramp_end > Time::ZERO {
            self.q.at(self.host.ramp_end, Event::RampEnd);
        }
        let mut tick: u32 = 0;
        while (self.host.outstanding > 0 || self.host.active > 0) && !self.powered_off {
            let Some((now, ev)) = self.q.pop() else {
                return Err(SimError::Stalled(format!(
                    "{} commands outstanding, {} waiting for write-buffer space, {} flash transactions in flight, no events pending",
                    self.host.outstanding,
                    self.drives.iter().map(|d| d.waiting_for_buffer()).sum::<usize>(),
                    self.drives.iter().map(|d| d.flash.outstanding()).sum::<usize>()
                ) + &self
                    .drives
                    .iter()
                    .filter(|d| d.waiting_for_buffer() > 0)
                    .map(|d| format!("\n{}", d.stall_state()))
                    .collect::<String>()));
            };
            self.step(now, ev)?;
            tick = tick.wrapping_add(1);
            if tick & 0xffff == 0 {
                if stop() {
                    return Err(SimError::Interrupted);
                }
                progress(self.progress());
            }
        }
        // A failure raised while starting the queues (e.g. a trace whose
        // first record is bad) may leave nothing to run: report it.
        if let Some(e) = self.host.failure.take() {
            return Err(e);
        }
        if let (Some(at), false) = (self.power_loss, self.powered_off) {
            return Err(SimError::Device(format!(
                "--power-loss-at {:.6} s: the run ended before it, at {:.6} s simulated; choose a time inside the run",
                at.as_secs_f64(),
                self.q.now().as_secs_f64()
            )));
        }
        progress(self.progress());
        Ok(())
    }

    /// Process one event popped at `now`. Inlined into the event loop with
    /// `dispatch`; the queue's `pop` is always inlined there too (left to
    /// the compiler, whether the loop held it flipped with unrelated code
    /// changes and cost about 5 % on reads; see docs/performance.md).
    #[inline(always)]
    fn step(&mut self, now: Time, ev: Event) -> Result<(), SimError> {
        self.events += 1;
        self.fabric.advance(now);
        if now >= self.next_mark {
            self.power_marks(now);
        }
        self.dispatch(now, ev);
        if let Some(e) = crate::take_if_set(&mut self.host.failure) {
            return Err(e);
        }
        Ok(())
    }

    /// Close the power windows that end by `now`.
    #[cold]
    #[inline(never)]
    fn power_marks(&mut self, now: Time) {
        let mut next = Time(u64::MAX);
        for d in &mut self.drives {
            if d.ledger.is_some() {
                if now >= d.next_mark {
                    d.power_mark(now, &self.fabric);
                }
                next = next.min(d.next_mark);
            }
        }
        self.next_mark = next;
    }

    fn progress(&self) -> Progress {
        let now = self.q.now();
        let h = &self.host;
        let fraction = match (h.ios_total, h.deadline) {
            (Some(t), _) if t > 0 => Some((h.ios_done as f64 / t as f64).min(1.0)),
            (_, Some(d)) if d > Time::ZERO => Some((now.as_secs_f64() / d.as_secs_f64()).min(1.0)),
            _ => None,
        };
        Progress {
            sim_time: now,
            ios_done: h.ios_done,
            ios_total: h.ios_total,
            fraction,
        }
    }

    fn start_queue(&mut self, q: u32, at: Time) -> Result<(), SimError> {
        let mut submit = submitter(&mut self.drives, &mut self.fabric);
        self.host.start_queue(q, at, &mut self.q, &mut submit)
    }

    /// Handle one event. Inlined into the event loop (its one caller): as a
    /// call it saved and restored registers on every event, about 16
    /// instructions, 2.5 % of a simulated random read (docs/performance.md).
    #[inline(always)]
    fn dispatch(&mut self, now: Time, ev: Event) {
        match ev {
            Event::Doorbell { d, .. }
            | Event::FetchFree { d }
            | Event::Fetched { d, .. }
            | Event::FrontDone { d, .. }
            | Event::Flash { d, .. }
            | Event::ReadDma { d, .. }
            | Event::WriteIn { d, .. }
            | Event::SlcIdle { d, .. }
            | Event::DmaReady { d } => {
                self.drives[d as usize].on_event(now, ev, &mut self.q, &mut self.fabric)
            }
            Event::HostDone { d, cmd } => {
                self.drives[d as usize].completed(cmd);
                {
                    let mut submit = submitter(&mut self.drives, &mut self.fabric);
                    self.host.complete(now, cmd, &mut self.q, &mut submit);
                }
                self.drives[d as usize].after_completion(now, &mut self.q);
            }
            Event::WornOut { d } => {
                let why = self.drives[d as usize].worn_out().unwrap_or("worn out");
                self.host.failure = Some(SimError::Device(format!(
                    "drive {} at {:.6} s simulated: {why}",
                    self.names[d as usize],
                    now.as_secs_f64()
                )));
            }
            Event::TraceArrival { q } => {
                let mut submit = submitter(&mut self.drives, &mut self.fabric);
                if let Err(e) = self.host.trace_arrival(now, q, &mut self.q, &mut submit) {
                    self.host.failure = Some(e);
                }
            }
            Event::LiveArrival { q } => {
                let mut submit = submitter(&mut self.drives, &mut self.fabric);
                self.host.live_arrival(now, q, &mut self.q, &mut submit)
            }
            Event::FlusherWake => {
                let mut submit = submitter(&mut self.drives, &mut self.fabric);
                self.host.flusher_wake(now, &mut self.q, &mut submit)
            }
            Event::AppDone { app } => {
                let mut submit = submitter(&mut self.drives, &mut self.fabric);
                self.host.app_done(now, app, &mut self.q, &mut submit)
            }
            Event::HostWake { q } => {
                let mut submit = submitter(&mut self.drives, &mut self.fabric);
                self.host.wake(q, now, &mut self.q, &mut submit)
            }
            Event::ThinkEnd { q } => {
                let mut submit = submitter(&mut self.drives, &mut self.fabric);
                self.host.think_end(q, now, &mut self.q, &mut submit)
            }
            Event::SteadyTick { unit } => {
                let mut submit = submitter(&mut self.drives, &mut self.fabric);
                self.host.steady_tick(unit, now, &mut self.q, &mut submit)
            }
            Event::JobStart { job } => {
                let mut submit = submitter(&mut self.drives, &mut self.fabric);
                self.host
                    .start_job(job as usize, now, &mut self.q, &mut submit)
            }
            Event::RampEnd => {
                for d in &mut self.drives {
                    d.mark_ramp(now, &self.fabric);
                }
            }
            Event::Checkpoint { d, by_log } => {
                self.drives[d as usize].checkpoint(now, by_log, &mut self.q)
            }
            Event::PowerLoss => {
                let n = self.host.in_flight_per_drive(self.drives.len());
                for (d, k) in self.drives.iter_mut().zip(n) {
                    d.power_loss(now, k);
                }
                self.powered_off = true;
                if let Some(i) = self.drives.iter().position(|d| d.worn_out().is_some()) {
                    let why = self.drives[i].worn_out().unwrap_or("failed");
                    self.host.failure = Some(SimError::Device(format!(
                        "drive {} at the power loss ({:.6} s simulated): {why}",
                        self.names[i],
                        now.as_secs_f64()
                    )));
                }
            }
        }
    }
}

/// Jobs that verify need a data store: without one, an error that says how
/// to turn it on (checked before anything is built).
pub fn check_data_store(
    spec: Option<&crate::device::store::StoreSpec>,
    workload: &Workload,
    workload_file: &str,
) -> Result<(), SimError> {
    if spec.is_some() {
        return Ok(());
    }
    match workload.jobs.iter().find(|j| j.verify.is_some()) {
        Some(j) => Err(SimError::Workload(WorkloadError {
            file: workload_file.into(),
            line: 0,
            option: Some("verify".into()),
            message: format!("job '{}': verify checks the data the drive returns, so the run must keep data: add --data-store on (memory for drives up to 64 GiB, else a sparse temporary file), --data-store memory, or --data-store PATH (Python: data_store=\"on\")", j.name),
        })),
        None => Ok(()),
    }
}

/// How the host hands a command to the drive it names.
struct Submitter<'a> {
    drives: &'a mut [Drive],
    fabric: &'a mut Fabric,
}

impl crate::host::Drives for Submitter<'_> {
    #[inline]
    fn hint(&mut self, d: u16, lpn: u32) {
        self.drives[d as usize].prefetch(lpn);
    }
    #[inline]
    fn hints_pay(&self, d: u16) -> bool {
        self.drives[d as usize].prefetch_pays()
    }
    #[inline]
    fn submit(&mut self, eq: &mut EventQueue<Event>, sub: Submission) {
        self.drives[sub.d as usize].submit(sub, eq, self.fabric)
    }
    #[cold]
    #[inline(never)]
    fn write_data(&mut self, d: u16, offset: u64, data: &[u8]) -> Result<(), String> {
        let drive = &mut self.drives[d as usize];
        if drive.stage_write(offset, data) {
            return Ok(());
        }
        match drive.store.as_mut() {
            Some(s) => s.write(offset, data).map_err(|e| e.0),
            None => Ok(()),
        }
    }
    #[cold]
    #[inline(never)]
    fn read_data(&mut self, d: u16, offset: u64, buf: &mut [u8]) -> Result<(), String> {
        match self.drives[d as usize].store.as_mut() {
            Some(s) => s.read(offset, buf).map_err(|e| e.0),
            None => {
                buf.fill(0);
                Ok(())
            }
        }
    }
    #[cold]
    #[inline(never)]
    fn trim_data(&mut self, d: u16, offset: u64, len: u64) -> Result<(), String> {
        let drive = &mut self.drives[d as usize];
        if drive.stage_trim(offset, len) {
            return Ok(());
        }
        match drive.store.as_mut() {
            Some(s) => s.trim(offset, len).map_err(|e| e.0),
            None => Ok(()),
        }
    }
}

#[inline]
fn submitter<'a>(drives: &'a mut [Drive], fabric: &'a mut Fabric) -> Submitter<'a> {
    Submitter { drives, fabric }
}
