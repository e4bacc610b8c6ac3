//! One NVMe drive: controller front end, firmware (fixed stages or modelled
//! cores and accelerators), DRAM data cache, FTL, flash scheduler, NAND, and
//! its power ledger. A drive talks to the rest of the system only through
//! the event loop ([`Event`]) and its PCIe port on the [`Fabric`]; several
//! drives share nothing else.
//!
//! Command path (read): doorbell → arbitration and SQE fetch (PCIe round
//! trip) → firmware stages → cache lookup → L2P → flash read transactions
//! (grouped per physical page, multi-plane) → data DMA to host per
//! transaction (PCIe up) → completion stage → CQE and MSI-X (PCIe up).
//!
//! Write: ... → write-buffer space reservation → data DMA from host (PCIe
//! read requests up, completions down) → DRAM → acknowledged (write-back).
//! Full program units are flushed from the buffer to the next free parallel
//! unit in striping order; GC relocations go through the same buffer.
//! (`datapath.rs` holds the command path, `backend.rs` what lies behind the
//! buffer.)

pub(crate) mod backend;
pub mod cache;
pub mod checkpoint;
pub mod compute;
mod datapath;
pub mod firmware;
pub mod flash;
pub mod ftl;
pub mod hybrid;
pub mod nand;
pub mod nvme;
pub mod power;
pub mod recovery;
pub mod store;
mod store_versions;
mod translation;
pub mod validity;

use crate::config::{logical_units, Backend, Device, OpKind};
use crate::engine::{EventQueue, FifoServer};
use crate::events::Event;
use crate::fabric::Fabric;
use crate::host::Submission;
use crate::system::SimError;
use crate::units::{Lpn, Ppa, Time};
use crate::workload::Op;
use cache::DataCache;
use compute::Compute;
use firmware::{Firmware, StageId};
use flash::FlashScheduler;
use ftl::{Ftl, FtlStats, Mapping};
use nand::{Geometry, Timings};
use nvme::{Controller, QueueClass, DOORBELL_BYTES, SQE_BYTES};
use power::{Activity, Ledger};
use std::collections::VecDeque;

/// How the drive is prepared before the measured run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precondition {
    /// Factory fresh: everything erased and unmapped.
    Fresh,
    /// Every LBA written once, sequentially.
    Fill,
    /// Filled, then random overwrites until write amplification settles
    /// (built from a scaled-down drive where that applies:
    /// `device/ftl/steady.rs`).
    Steady,
    /// As `Steady`, always by random overwrites on the drive itself.
    SteadyExact,
}

/// How a drive was preconditioned: the mode, drive writes done, the final
/// WAF of the preconditioner and, where there was more than one way, which
/// (a steady state's; a fill's only when it could not take its closed
/// form).
pub type PreconditionInfo = (
    Precondition,
    f64,
    f64,
    Option<crate::ftl::PreconditionMethod>,
);

impl Precondition {
    /// Parse `fresh|fill|steady|steady-exact`.
    pub fn parse(s: &str) -> Option<Precondition> {
        match s {
            "fresh" => Some(Precondition::Fresh),
            "fill" => Some(Precondition::Fill),
            "steady" => Some(Precondition::Steady),
            "steady-exact" => Some(Precondition::SteadyExact),
            _ => None,
        }
    }
    /// Name.
    pub fn name(self) -> &'static str {
        match self {
            Precondition::Fresh => "fresh",
            Precondition::Fill => "fill",
            Precondition::Steady => "steady",
            Precondition::SteadyExact => "steady-exact",
        }
    }
}

/// What the drive keeps of a command it has fetched.
#[derive(Debug, Clone, Copy, Default)]
struct DevCmd {
    op: Op,
    lpn: u32,
    nlpn: u32,
    /// Parts (flash reads, DMAs; for a write, its data DMA and the flash
    /// reads of a read-modify-write) still to finish.
    pending: u32,
    /// Bytes of its units it does not move (sub-unit I/O: the sectors
    /// before and after its data), still to take off its DMAs.
    short: u32,
    /// The first / last unit is partial (sub-unit I/O).
    head: bool,
    tail: bool,
    /// Its data moves peer to peer with [`Drive::peer_port`], not host memory.
    peer: bool,
}

pub(crate) struct GcJob {
    pub(crate) victim: u32,
    pub(crate) slots: Vec<(Ppa, Lpn)>,
    pub(crate) next: usize,
    pub(crate) inflight: u32,
    pub(crate) erasing: bool,
    /// Erase before the copies are programmed (no room for them).
    pub(crate) early: bool,
    /// Validity pages (L-log) still being loaded before the copies are read.
    pub(crate) validity_wait: u32,
}

/// A memory-read request TLP with no data (its header), sent to a peer.
const PEER_READ_REQUEST_BYTES: u64 = 0;
pub(crate) const TAG_SHIFT: u32 = 56;
pub(crate) const TAG_HREAD: u64 = 1;
pub(crate) const TAG_GCREAD: u64 = 2;
pub(crate) const TAG_PROG: u64 = 3;
pub(crate) const TAG_ERASE: u64 = 4;
/// The flash read of a read-modify-write (a write of part of a unit).
pub(crate) const TAG_RMW: u64 = 5;
/// The flash read of a translation page (cached mapping).
pub(crate) const TAG_MAPREAD: u64 = 6;
/// The program of a unit of translation pages (cached mapping).
pub(crate) const TAG_MAPPROG: u64 = 7;
/// A flash operation of block or hybrid mapping (a host program or a
/// merge's read, program or erase; the unit in the low bits).
pub(crate) const TAG_HYB: u64 = 8;
/// A flash operation of a block or hybrid mapping checkpoint (a program of
/// it, or with [`HCKPT_ERASE`] an erase of a superseded one's block).
pub(crate) const TAG_HCKPT: u64 = 9;
pub(crate) const HCKPT_ERASE: u64 = 1 << 32;
pub(crate) const GC_READS_INFLIGHT: u32 = 4;
pub(crate) const PROGRAMS_PER_DIE: usize = 2;
/// The flash scheduler's [`flash::WriteRoom`] views: dies with room for
/// another program, by parallel unit and by stripe position.
pub(crate) const ROOM_BY_UNIT: usize = 0;
pub(crate) const ROOM_BY_STRIPE: usize = 1;

/// Activity the drive counts for the power ledger.
#[derive(Debug, Clone, Copy, Default)]
struct ActCounters {
    dram_bytes: u64,
    nand_read_pages: u64,
    nand_bus_bytes: u64,
}

/// Counter snapshot used to measure only the post-ramp window.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// Time of the snapshot.
    pub at: Time,
    /// FTL counters.
    pub ftl: FtlStats,
    /// Mapping-cache counters (cached mapping only).
    pub map: ftl::mapcache::MapStats,
    /// Directory-cache counters (directory on flash only).
    pub dir: ftl::mapcache::MapStats,
    /// L-log counters (with `ftl.validity_log` only).
    pub validity: validity::ValidityCounters,
    /// Flash reads, programs, erases, suspends.
    pub flash: [u64; 4],
    /// Channel bus busy time.
    pub channel_busy: Vec<Time>,
    /// Die busy time.
    pub die_busy: Vec<Time>,
    /// PCIe busy (up, down).
    pub link_busy: (Time, Time),
    /// Firmware stage busy times.
    pub stage_busy: Vec<Time>,
    /// DRAM busy.
    pub dram_busy: Time,
    /// Busy time of each compute core group (summed over its cores).
    pub core_busy: Vec<Time>,
    /// Busy time of each accelerator (summed over its instances).
    pub accel_busy: Vec<Time>,
}

/// Estimated bytes of simulator state for a device (mapping tables and block metadata).
pub fn memory_estimate(dev: &Device) -> u64 {
    let g = Geometry::new(&dev.nand, dev.ftl.mapping_unit);
    let lpns = logical_units(&dev.nand, &dev.ftl);
    let blocks = g.units as u64 * g.blocks_per_unit as u64;
    lpns * 4 + g.total_slots() * 4 + blocks * 18
}

pub(crate) fn available_memory() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Refuse a device whose mapping tables cannot fit this machine's memory.
pub fn check_memory(dev: &Device) -> Result<(), SimError> {
    let need = memory_estimate(dev);
    if let Some(avail) = available_memory() {
        if need > avail {
            return Err(SimError::Device(format!(
                "device '{}' needs about {:.1} GiB for its mapping tables but only {:.1} GiB of memory is available; use a larger ftl.mapping_unit or a smaller drive",
                dev.name,
                need as f64 / (1u64 << 30) as f64,
                avail as f64 / (1u64 << 30) as f64
            )));
        }
    }
    Ok(())
}

/// One simulated NVMe drive.
pub struct Drive {
    /// Device description.
    pub dev: Device,
    /// Geometry.
    pub geo: Geometry,
    timings: Timings,
    /// The drive's port on the fabric (its endpoint link).
    pub(crate) port: usize,
    /// Submission queues whose data moves peer to peer (by SQ; empty when none).
    peer_sq: Vec<bool>,
    /// The endpoint those queues' data goes to or comes from.
    peer_port: usize,
    /// The drive's index in its system (carried by its events).
    pub(crate) index: u16,
    ctl: Controller,
    fw: Firmware,
    fetch_wakeup: bool,
    /// Busy time charged at the last power mark (see [`Drive::power_mark`]).
    charged: Option<(Time, Activity)>,
    /// One submission queue and a fetch executor that serves nothing else:
    /// fetches are booked when the doorbell is rung (see [`Drive::submit`]).
    direct_fetch: bool,
    dram: FifoServer,
    /// Transfer times through the DRAM (`cache.dram_bandwidth`).
    dram_xfer: crate::units::TransferTable,
    /// DRAM cache.
    pub cache: DataCache,
    /// FTL.
    pub ftl: Ftl,
    /// Flash scheduler.
    pub flash: FlashScheduler,
    /// Commands by the host's command id.
    cmds: Vec<DevCmd>,
    /// NVMe Flush commands waiting for the write buffer: (barrier, command).
    flushes: VecDeque<(u32, u32)>,
    /// Program transactions the dies can still take (PROGRAMS_PER_DIE each,
    /// minus queued or running), counted modulo 2^32: the flash scheduler
    /// can finish several programs in one event, and frees their dies before
    /// the drive handles each completion, so the first completion's flush
    /// can start programs on dies whose completions are not yet counted.
    /// The count then wraps below zero for the rest of that event (found
    /// by the swarm in a debug build; release builds wrapped silently).
    program_room: u32,
    /// The die of each position in the FTL's striping order (the back
    /// end's scans for a unit to program test its die's load).
    stripe_dies: Vec<u32>,
    /// Program id -> (LPNs programmed, how many of the first are GC data).
    progs: Vec<(Vec<u32>, usize)>,
    /// Program id -> its first slot and the commit sequence before it,
    /// while the program is in flight.
    prog_at: Vec<Option<(Ppa, u64)>>,
    free_progs: Vec<u32>,
    /// Per unit: programs in flight that carry GC or folding copies.
    gc_progs: Vec<u32>,
    /// A volatile buffer: a GC victim is erased only once the data moved
    /// out of it is programmed (else a power loss in between loses it).
    hold_erase: bool,
    /// Victims erased before their copies were programmed, for lack of
    /// room (with `hold_erase`).
    gc_early_erases: u64,
    /// The power loss and recovery, once one has happened.
    pub recovery: Option<recovery::RecoveryReport>,
    /// With power-loss protection, the data units DRAM held at the power
    /// loss, in the capacitors' flush order (placed on flash if the drive
    /// runs on: [`Drive::take_recovered`]).
    saved_by_capacitors: Vec<u32>,
    /// Mapping checkpoints (`ftl.checkpoint_interval`).
    ckpt: Option<checkpoint::Checkpoints>,
    gc: Vec<Option<GcJob>>,
    /// Block or hybrid mapping: each unit's group in progress (empty with
    /// page mapping).
    hyb: Vec<hybrid::HybridUnit>,
    /// Block or hybrid mapping with a write buffer of whole logical blocks.
    gather: Option<hybrid::BlockBuffer>,
    /// L-log (`ftl.validity_log`): the validity pages cached in DRAM.
    lcache: Option<ftl::mapcache::MapCache>,
    /// Validity pages changed since the last look (reused buffer).
    vscratch: Vec<u32>,
    vcount: validity::ValidityCounters,
    wait_buffer: VecDeque<u32>,
    /// Read groups of one command: (multi-plane page key, first PPA, slots, planes touched mask).
    scratch_groups: Vec<(u32, u32, u32, u64)>,
    done_buf: Vec<(u64, OpKind)>,
    unit_bytes: u64,
    /// Snapshot at the start of the measured window.
    pub ramp_snapshot: Snapshot,
    /// What the drive holds, if the run keeps data (`--data-store`).
    pub store: Option<store::DataStore>,
    /// With a data store and a power loss: what the store needs to hold
    /// what recovery rebuilds ([`store_versions`]).
    versions: Option<Box<store_versions::StoreVersions>>,
    /// The data store failed (its error ends the run).
    store_error: Option<String>,
    ramdisk: bool,
    /// Power ledger, when the device has a `[power]` section.
    pub ledger: Option<Ledger>,
    pub(crate) next_mark: Time,
    /// Cumulative energy at the start of the measured window.
    pub ramp_energy: Option<(Time, [f64; 8])>,
    act: ActCounters,
    /// Precondition: drive writes done, final WAF of the preconditioner
    /// and how the steady state was reached (steady only).
    pub precondition_info: PreconditionInfo,
    /// Commands submitted and not yet completed (kept with an SLC cache only).
    busy_cmds: u32,
    /// When the drive last became idle (no command outstanding).
    idle_since: Time,
    /// An [`Event::SlcIdle`] is pending (at most one at a time).
    idle_check: bool,
    /// Idle for `ftl.slc_fold_idle`: fold the SLC cache.
    slc_idle: bool,
    /// Read-data transfers waiting for the drive's own link (behind a
    /// switch, see [`Fabric::up_backlog`]): (command, bytes, when the data
    /// is ready, whether its arrival completes the part at once rather
    /// than through a [`Event::ReadDma`]), in order.
    dma_wait: VecDeque<(u32, u64, Time, bool)>,
    /// The FTL found the drive worn out and [`Event::WornOut`] was sent.
    worn_out_raised: bool,
    /// A [`Event::DmaReady`] is pending.
    dma_wakeup: bool,
    /// SLC occupancy sampling: (interval, start of the measured window).
    slc_sampling: Option<(Time, Time)>,
    /// SLC occupancy (mapping units) at the end of each sampling window.
    slc_series: Vec<u64>,
    /// The cached mapping table's resident translation pages (`None`: the
    /// whole mapping is in DRAM).
    pub mcache: Option<ftl::mapcache::MapCache>,
    /// The mapping directory's pages cached in DRAM (`ftl.directory_cache`;
    /// `None`: the whole directory in DRAM), indexed by directory page.
    pub dcache: Option<ftl::mapcache::MapCache>,
    /// Translation pages waiting to be programmed (dirty evictions and GC
    /// relocations), in order.
    map_queue: VecDeque<u32>,
    /// Next position in striping order for a program of translation pages.
    map_cursor: usize,
    /// By command: a read that waited for its translation pages, now in
    /// DRAM (cached mapping only; kept out of [`DevCmd`], which stays 20 B).
    translated: Vec<bool>,
    /// Per write command: its partial units (bit 0 first, bit 1 last) whose
    /// old data waits for a translation page before it is read.
    rmw_waiting: Vec<u8>,
}

impl Drive {
    /// Build a drive preconditioned as asked, with `classes.len()`
    /// submission queues of those NVMe arbitration classes, on fabric port
    /// `port`. `may_flush`: the workload can send NVMe Flush commands.
    pub(crate) fn new(
        dev: Device,
        seed: u64,
        pre: Precondition,
        classes: &[QueueClass],
        port: usize,
        may_flush: bool,
    ) -> Result<Drive, SimError> {
        let (ftl, info) = Self::preconditioned(&dev, seed, pre)?;
        Ok(Self::assemble(dev, ftl, info, classes, port, may_flush))
    }

    /// After a power loss (and its recovery): the FTL as recovery rebuilt
    /// it, ready to run on, and how the drive was first preconditioned.
    /// Errors when there was no power loss or the FTL cannot run on.
    pub(crate) fn take_recovered(
        self,
    ) -> Result<(Device, Ftl, PreconditionInfo, Option<store::DataStore>), SimError> {
        if self.recovery.is_none() {
            return Err(SimError::Device(
                "the drive has not lost its power: nothing to recover".into(),
            ));
        }
        let mut ftl = self.ftl;
        ftl.power_on(&self.saved_by_capacitors)
            .map_err(SimError::Device)?;
        Ok((self.dev, ftl, self.precondition_info, self.store))
    }

    /// The FTL of a new drive `dev`, preconditioned as `pre` asks, and what
    /// the preconditioner did.
    fn preconditioned(
        dev: &Device,
        seed: u64,
        pre: Precondition,
    ) -> Result<(Ftl, PreconditionInfo), SimError> {
        check_memory(dev)?;
        let geo = Geometry::new(&dev.nand, dev.ftl.mapping_unit);
        let lpns = logical_units(&dev.nand, &dev.ftl);
        let mut ftl = Ftl::new(geo.clone(), dev.ftl.clone(), lpns, seed);
        let mut info = (pre, 0.0, 0.0, None);
        match pre {
            Precondition::Fresh => {}
            Precondition::Fill => {
                info.3 = ftl
                    .fill_sequential()
                    .map(|why| crate::ftl::PreconditionMethod::FillPerLpn { why });
                info.1 = 1.0;
                info.2 = ftl.stats.waf();
            }
            Precondition::Steady => {
                let (dw, waf, how) = ftl.precondition_steady_scaled(seed, 6.0);
                info.1 = dw;
                info.2 = waf;
                info.3 = Some(how);
            }
            Precondition::SteadyExact => {
                let (dw, waf) = ftl.precondition_steady(seed, 6.0);
                info.1 = dw;
                info.2 = waf;
                info.3 = Some(crate::ftl::PreconditionMethod::Exact { why: None });
            }
        }
        if let Some(w) = ftl.worn_out() {
            return Err(SimError::Device(format!("preconditioning: {w}")));
        }
        ftl.reset_stats();
        Ok((ftl, info))
    }

    /// The drive around `ftl` (its state already built: preconditioned,
    /// or as recovery rebuilt it after a power loss, [`Drive::take_recovered`]):
    /// everything volatile (DRAM, queues, the controller, the flash
    /// scheduler) new.
    pub(crate) fn assemble(
        dev: Device,
        ftl: Ftl,
        info: PreconditionInfo,
        classes: &[QueueClass],
        port: usize,
        may_flush: bool,
    ) -> Drive {
        let geo = ftl.geo.clone();
        let unit_bytes = dev.ftl.mapping_unit.0;
        let wb_slots = dev.cache.write_buffer.0 / unit_bytes;
        let mut d = Drive {
            timings: Timings::new(&dev.nand),
            port,
            peer_sq: Vec::new(),
            peer_port: usize::MAX,
            index: port as u16,
            ctl: Controller::new(&dev.nvme, classes),
            fw: Firmware::new(&dev.firmware).with_compute(dev.controller.clone().map(Compute::new)),
            ramdisk: matches!(dev.backend, Backend::RamDisk { .. }),
            ledger: dev
                .power
                .clone()
                .map(|p| Ledger::new(p, dev.controller.clone(), dev.nand.total_dies())),
            next_mark: Time::ZERO,
            ramp_energy: None,
            act: ActCounters::default(),
            fetch_wakeup: false,
            charged: None,
            direct_fetch: false,
            dram: FifoServer::default(),
            dram_xfer: crate::units::TransferTable::new(dev.cache.dram_bandwidth),
            cache: DataCache::new(
                wb_slots,
                dev.cache.read_cache.0 / unit_bytes,
                dev.cache.policy,
                geo.units,
            ),
            flash: FlashScheduler::new(&dev.nand, &dev.flash),
            gc: (0..geo.units).map(|_| None).collect(),
            gather: Self::block_buffer(&dev, ftl.is_hybrid()),
            hyb: if ftl.is_hybrid() {
                (0..geo.units).map(|_| Default::default()).collect()
            } else {
                Vec::new()
            },
            lcache: Self::validity_cache(
                ftl.validity_pages(),
                dev.ftl.validity_log.map_or(0, |b| b.0),
                unit_bytes,
            )
            .map(|c| c.with_fifo(dev.ftl.validity_log_fifo)),
            vscratch: Vec::new(),
            vcount: Default::default(),
            stripe_dies: ftl.stripe().iter().map(|&u| geo.die_of_unit(u)).collect(),
            ftl,
            geo,
            cmds: Vec::with_capacity(1024),
            program_room: dev.nand.total_dies() * PROGRAMS_PER_DIE as u32,
            flushes: VecDeque::new(),
            progs: Vec::new(),
            prog_at: Vec::new(),
            free_progs: Vec::new(),
            gc_progs: Vec::new(),
            hold_erase: !dev.cache.power_loss_protection
                && !matches!(dev.backend, Backend::RamDisk { .. }),
            recovery: None,
            saved_by_capacitors: Vec::new(),
            ckpt: dev.ftl.checkpoints().then(|| {
                checkpoint::Checkpoints::new(
                    dev.ftl.checkpoint_interval,
                    dev.ftl.checkpoint_log_size.map(|b| b.0),
                )
            }),
            gc_early_erases: 0,
            wait_buffer: VecDeque::new(),
            scratch_groups: Vec::new(),
            done_buf: Vec::new(),
            unit_bytes,
            ramp_snapshot: Snapshot::default(),
            store: None,
            versions: None,
            store_error: None,
            precondition_info: info,
            busy_cmds: 0,
            idle_since: Time::ZERO,
            idle_check: false,
            slc_idle: false,
            slc_sampling: None,
            slc_series: Vec::new(),
            dma_wait: VecDeque::new(),
            dma_wakeup: false,
            worn_out_raised: false,
            mcache: None,
            dcache: None,
            map_queue: VecDeque::new(),
            map_cursor: 0,
            translated: Vec::new(),
            rmw_waiting: Vec::new(),
            dev,
        };
        d.gc_progs = vec![0; d.geo.units as usize];
        if let Some(bytes) = d.dev.ftl.mapping_cache {
            let pages = d.ftl.translation_pages();
            let cap = (bytes.0 / unit_bytes).min(u32::MAX as u64) as u32;
            d.mcache = Some(
                ftl::mapcache::MapCache::new(pages, cap).with_fifo(d.dev.ftl.mapping_cache_fifo),
            );
        }
        if let Some(bytes) = d.dev.ftl.directory_cache {
            let pages = d.ftl.directory_pages();
            if pages > 0 {
                let cap = (bytes.0 / unit_bytes).min(u32::MAX as u64) as u32;
                d.dcache = Some(
                    ftl::mapcache::MapCache::new(pages, cap)
                        .with_fifo(d.dev.ftl.mapping_cache_fifo),
                );
            }
        }
        // The L-log follows validity changes from the run on.
        d.ftl.track_validity();
        // Flushes wait for the buffer only if it is volatile; only workloads
        // that can flush (fsync, end_fsync, or a trace) need the counters.
        if d.dev.cache.power_loss_protection || !may_flush {
            d.cache.disable_flush_tracking();
        }
        d.direct_fetch = classes.len() == 1 && d.fw.fetch_is_dedicated();
        let by_unit: Vec<u32> = (0..d.geo.units).map(|u| d.geo.die_of_unit(u)).collect();
        d.flash
            .track_write_room(PROGRAMS_PER_DIE, &[&by_unit, &d.stripe_dies]);
        d
    }

    /// Exported capacity in mapping units.
    pub fn logical_units(&self) -> u64 {
        logical_units(&self.dev.nand, &self.dev.ftl)
    }

    /// The firmware pipeline (stages, cores, accelerators).
    pub fn firmware(&self) -> &Firmware {
        &self.fw
    }

    /// Why the drive can no longer work, if it is worn out (or its data
    /// store failed).
    pub(crate) fn worn_out(&self) -> Option<&str> {
        self.store_error.as_deref().or(self.ftl.worn_out())
    }

    /// Commands waiting for write-buffer space (for the stall report).
    pub(crate) fn waiting_for_buffer(&self) -> usize {
        self.wait_buffer.len()
    }

    /// The write path's state, unit by unit, for a stall report.
    pub fn stall_state(&self) -> String {
        let mut s = format!(
            "drive {}: {}; first waiting write {} slots; {} dirty host slots, {} dirty GC slots, {} flushes pending, program room {}",
            self.index,
            self.cache.occupancy(),
            self.wait_buffer
                .front()
                .map_or(0, |&c| self.cmds[c as usize].nlpn),
            self.cache.dirty_host(),
            self.cache.dirty_gc_total(),
            self.flushes.len(),
            self.program_room
        );
        if self.mcache.is_some() || self.lcache.is_some() || self.ckpt.is_some() {
            s.push_str(&format!(
                "; {} metadata pages waiting to be programmed",
                self.map_queue.len()
            ));
        }
        for u in 0..self.geo.units {
            let gc = match &self.gc[u as usize] {
                Some(j) => format!(
                    "GC on block {} ({} of {} moved, {} in flight, erasing {}, waiting for {} validity pages)",
                    j.victim,
                    j.next,
                    j.slots.len(),
                    j.inflight,
                    j.erasing,
                    j.validity_wait
                ),
                None => "no GC".to_string(),
            };
            s.push_str(&format!(
                "\n  {}; {} dirty GC slots; {gc}",
                self.ftl.unit_summary(u),
                self.cache.dirty_gc(u)
            ));
        }
        s
    }

    /// Take the counters that open the measured window.
    pub(crate) fn mark_ramp(&mut self, now: Time, fabric: &Fabric) {
        self.ramp_snapshot = self.snapshot(now, fabric);
        if self.ledger.is_some() {
            let a = self.charged_activity(now, fabric);
            let e = self.ledger.as_ref().map(|l| l.energy(&a, now));
            self.ramp_energy = e.map(|e| (now, e));
        }
    }

    /// A command for `lpn` is coming: start bringing its mapping entry into
    /// the cache (no effect on timing or state).
    #[inline]
    pub(crate) fn prefetch(&mut self, lpn: u32) {
        self.ftl.prefetch(Lpn(lpn));
    }

    /// Does [`Drive::prefetch`] bring anything in (the L2P is a dense
    /// array, not the sparse map of a drive written little)?
    #[inline]
    pub(crate) fn prefetch_pays(&self) -> bool {
        self.ftl.prefetch_pays()
    }

    /// The host rings submission queue `sub.q`'s doorbell for command
    /// `sub.cmd` at `sub.ready`.
    #[inline]
    pub(crate) fn submit(
        &mut self,
        sub: Submission,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        let id = sub.cmd;
        if self.ftl.has_slc() {
            self.busy_cmds += 1;
            self.slc_idle = false;
        }
        let c = DevCmd {
            op: sub.op,
            lpn: sub.lpn,
            nlpn: sub.nlpn,
            pending: 0,
            short: (sub.head as u32 + sub.tail as u32) * crate::workload::gen::Io::SECTOR as u32,
            head: sub.head > 0,
            tail: sub.tail > 0,
            peer: !self.peer_sq.is_empty() && self.peer_sq.get(sub.q as usize) == Some(&true),
        };
        match self.cmds.get_mut(id as usize) {
            Some(slot) => *slot = c,
            None => {
                self.cmds.resize(id as usize, DevCmd::default());
                self.cmds.push(c);
            }
        }
        let arrive = fabric.host_write(self.port, sub.ready, DOORBELL_BYTES)
            + self.dev.nvme.doorbell_latency;
        if self.fw.fetch_is_free() {
            // A zero-cost fetch stage never queues: arbitration cannot reorder
            // anything, so the SQE fetch is issued when the doorbell arrives.
            let fetched = fabric.device_read(self.port, arrive, SQE_BYTES);
            // Without a compute model the front stages are dedicated FIFO servers
            // in tandem, so they are booked when the SQE arrives (one event per
            // command); issues of programs and GC operations, booked at event
            // time, fill the gaps left ahead or queue behind (see firmware.md).
            let (units, issue) = self.front_units(id);
            let ready = self.fw.front(fetched, units, issue);
            eq.at(
                ready.max(eq.now()),
                Event::FrontDone {
                    d: self.index,
                    cmd: id,
                },
            );
        } else if self.direct_fetch {
            // One submission queue, so arbitration takes commands in doorbell
            // order, and a fetch executor that only fetches, so no other
            // reservation can come between: booking the fetch now gives the
            // same start as booking it when the doorbell is seen (one event
            // fewer per command). As on the path above, the SQE read is then
            // reserved on the link ahead of transfers booked meanwhile.
            let seen = self.fw.notice_doorbell(arrive);
            let t = self.fw.fetch(seen);
            let fetched = fabric.device_read(self.port, t, SQE_BYTES);
            self.book_front(id, fetched.max(eq.now()), eq);
        } else {
            self.ctl.place(sub.q, id);
            let seen = self.fw.notice_doorbell(arrive);
            eq.at(
                seen.max(eq.now()),
                Event::Doorbell {
                    d: self.index,
                    q: sub.q,
                },
            );
        }
    }

    /// Handle one of the drive's own events.
    #[inline]
    pub(crate) fn on_event(
        &mut self,
        now: Time,
        ev: Event,
        eq: &mut EventQueue<Event>,
        fabric: &mut Fabric,
    ) {
        match ev {
            Event::Doorbell { q, .. } => {
                self.ctl.doorbell(q);
                self.try_fetch(now, eq, fabric);
            }
            Event::FetchFree { .. } => {
                self.fetch_wakeup = false;
                self.try_fetch(now, eq, fabric);
            }
            Event::Fetched { cmd, .. } => {
                let (units, issue) = self.front_units(cmd);
                let t = self.fw.front(now, units, issue);
                if t > now {
                    eq.at(t, Event::FrontDone { d: self.index, cmd });
                } else {
                    self.process(now, cmd, eq, fabric);
                }
            }
            Event::FrontDone { cmd, .. } => self.process(now, cmd, eq, fabric),
            Event::Flash { fe, .. } => {
                let d = self.index;
                self.flash
                    .on_event(now, fe, &mut self.done_buf, &mut |t, e| {
                        eq.at(t, Event::Flash { d, fe: e })
                    });
                // (By index: `txn_done` never adds to `done_buf`, which only
                // the flash scheduler's `on_event` above fills.)
                for i in 0..self.done_buf.len() {
                    let owner = self.done_buf[i].0;
                    self.txn_done(now, owner, eq, fabric);
                }
                self.done_buf.clear();
            }
            Event::ReadDma { cmd, .. } => self.part_done(now, cmd, eq, fabric),
            Event::WriteIn { cmd, .. } => self.write_in(now, cmd, eq, fabric),
            Event::DmaReady { .. } => {
                self.dma_wakeup = false;
                self.send_waiting_dma(now, true, eq, fabric);
            }
            Event::SlcIdle { .. } => {
                self.idle_check = false;
                if self.busy_cmds > 0 {
                    // Busy again: the next idle period schedules its own check.
                } else if now >= self.idle_since + self.dev.ftl.slc_fold_idle {
                    self.slc_idle = true;
                    for u in 0..self.geo.units {
                        self.maybe_gc(now, u, 0, eq);
                    }
                } else {
                    self.idle_check = true;
                    eq.at(
                        self.idle_since + self.dev.ftl.slc_fold_idle,
                        Event::SlcIdle { d: self.index },
                    );
                }
            }
            _ => debug_assert!(false, "not a drive event: {ev:?}"),
        }
        if self.lcache.is_some() {
            self.drain_validity(now, eq);
        }
    }

    /// Submission queue `sq`'s data moves peer to peer with the endpoint at
    /// fabric port `port` (a computational storage drive's FPGA memory).
    pub(crate) fn set_peer(&mut self, sq: u32, port: usize) {
        if self.peer_sq.len() <= sq as usize {
            self.peer_sq.resize(sq as usize + 1, false);
        }
        self.peer_sq[sq as usize] = true;
        self.peer_port = port;
    }

    /// Send `bytes` of command `cmd`'s read data from `t`: to host memory,
    /// or peer to peer. Returns when the last byte arrives.
    #[inline]
    pub(crate) fn data_out(&self, fabric: &mut Fabric, cmd: u32, t: Time, bytes: u64) -> Time {
        if self.cmds[cmd as usize].peer {
            fabric.peer_write(self.port, self.peer_port, t, bytes)
        } else {
            fabric.device_write(self.port, t, bytes)
        }
    }

    /// Fetch `bytes` of command `cmd`'s write data from `t`: from host
    /// memory, or from the peer (a read request there, its data back).
    /// Returns when the last byte is in.
    #[inline]
    pub(crate) fn data_in(&self, fabric: &mut Fabric, cmd: u32, t: Time, bytes: u64) -> Time {
        if self.cmds[cmd as usize].peer {
            let asked = fabric.peer_write(self.port, self.peer_port, t, PEER_READ_REQUEST_BYTES);
            fabric.peer_write(self.peer_port, self.port, asked, bytes)
        } else {
            fabric.device_read(self.port, t, bytes)
        }
    }

    /// The host has taken command `cmd`'s completion: a read's data stays
    /// in the read cache (clean), if there is one.
    #[inline]
    pub(crate) fn completed(&mut self, cmd: u32) {
        let c = self.cmds[cmd as usize];
        if c.op == Op::Read && self.dev.cache.read_cache.0 > 0 {
            for l in c.lpn..c.lpn + c.nlpn {
                if matches!(self.ftl.lookup(Lpn(l)), Mapping::Flash(_)) {
                    self.cache.insert_clean(l);
                }
            }
        }
    }

    /// After a host completion: background GC, if configured, collects ahead
    /// (down to threshold + margin) on units whose die has no host reads or
    /// programs waiting.
    #[inline]
    pub(crate) fn after_completion(&mut self, now: Time, eq: &mut EventQueue<Event>) {
        if self.ftl.has_slc() {
            self.note_slc(now);
            self.busy_cmds -= 1;
            if self.busy_cmds == 0 {
                self.idle_since = now;
                if !self.idle_check {
                    self.idle_check = true;
                    eq.at(
                        now + self.dev.ftl.slc_fold_idle,
                        Event::SlcIdle { d: self.index },
                    );
                }
            }
        }
        if self.dev.ftl.gc_background {
            for u in 0..self.geo.units {
                let die = self.geo.die_of_unit(u);
                if self.flash.die_load(die, OpKind::Read) == 0
                    && self.flash.die_load(die, OpKind::Write) == 0
                {
                    self.maybe_gc(now, u, self.dev.ftl.gc_background_margin, eq);
                }
            }
        }
    }

    /// Record the SLC cache's occupancy for the window `now` is in.
    #[inline]
    pub(super) fn note_slc(&mut self, now: Time) {
        if let Some((every, from)) = self.slc_sampling {
            // Once per window (a scan of the blocks): the value at the
            // window's first event stands for the previous window's end.
            let w = (now.saturating_sub(from).0 / every.0.max(1)) as usize;
            if w >= self.slc_series.len() {
                let v = self.ftl.slc_valid();
                if let Some(prev) = self.slc_series.last_mut() {
                    *prev = v;
                }
                let last = self.slc_series.last().copied().unwrap_or(v);
                self.slc_series.resize(w + 1, last);
            }
        }
    }

    /// Sample the SLC cache's occupancy every `interval` from `from` on.
    pub(crate) fn sample_slc(&mut self, interval: Time, from: Time) {
        if self.ftl.has_slc() {
            self.slc_sampling = Some((interval, from));
        }
    }

    /// The SLC cache's part of the report: counters since `base`.
    pub fn slc_report(&self, base: &Snapshot) -> Option<crate::report::Slc> {
        if !self.ftl.has_slc() {
            return None;
        }
        let (now, b) = (&self.ftl.stats, &base.ftl);
        let mu = self.unit_bytes;
        let held = self.ftl.slc_valid();
        let mut series = self.slc_series.clone();
        if let Some(last) = series.last_mut() {
            *last = held;
        }
        Some(crate::report::Slc {
            slc_written_bytes: (now.slc_slots - b.slc_slots) * mu,
            direct_written_bytes: (now.direct_slots - b.direct_slots) * mu,
            fold_runs: now.fold_runs - b.fold_runs,
            folded_bytes: (now.fold_slots_moved - b.fold_slots_moved) * mu,
            occupancy_bytes: held * mu,
            room_bytes: self.ftl.slc_room_slots() * mu,
            occupancy_series_bytes: series.iter().map(|&v| (v * mu) as f64).collect(),
        })
    }

    /// Current counters.
    pub fn snapshot(&self, now: Time, fabric: &Fabric) -> Snapshot {
        let f = &self.flash.stats;
        Snapshot {
            at: now,
            ftl: self.ftl.stats.clone(),
            map: self.mcache.as_ref().map(|m| m.stats).unwrap_or_default(),
            dir: self.dcache.as_ref().map(|m| m.stats).unwrap_or_default(),
            validity: self.validity_counters(),
            flash: [f.reads, f.programs, f.erases, f.suspends],
            channel_busy: self.flash.channel_busy(),
            die_busy: self.flash.die_busy(),
            link_busy: fabric.link(self.port).busy(),
            stage_busy: self.fw.stages.iter().map(|s| s.busy()).collect(),
            dram_busy: self.dram.busy(),
            // Busy time that has run by now (work booked ahead counts when it runs).
            core_busy: self.fw.compute.as_ref().map_or_else(Vec::new, |c| {
                c.groups.iter().map(|p| p.busy_by(now)).collect()
            }),
            accel_busy: self.fw.compute.as_ref().map_or_else(Vec::new, |c| {
                c.accels.iter().map(|p| p.busy_by(now)).collect()
            }),
        }
    }

    /// Energy of an SLC-mode program relative to a native program of the
    /// same unit: the ratio of their array times (the mean native time
    /// when it varies by page type). Zero without an SLC cache.
    fn slc_program_weight(&self) -> f64 {
        let tm = &self.timings;
        let native = match tm.t_prog_one_shot {
            Some(t) => t.as_secs_f64(),
            None => {
                tm.t_prog.iter().map(|t| t.as_secs_f64()).sum::<f64>()
                    / tm.t_prog.len().max(1) as f64
            }
        };
        if native > 0.0 {
            tm.t_prog_slc_unit.as_secs_f64() / native
        } else {
            1.0
        }
    }

    fn activity(&self, t: Time, fabric: &Fabric) -> Activity {
        let f = &self.flash.stats;
        let g = &self.geo;
        let running = self.flash.array_progress(t);
        // Program energy is charged per plane-page of a native program;
        // an SLC-mode program of the same unit costs that in proportion to
        // its array time (same array current, shorter busy time).
        let ppu = (g.planes_per_unit * g.pages_per_program) as f64;
        let slc_w = self.slc_program_weight();
        let mut a = Activity {
            dram_bytes: self.act.dram_bytes,
            nand_read_pages: self.act.nand_read_pages,
            nand_program_pages: (f.programs - f.slc_programs)
                * (g.planes_per_unit * g.pages_per_program) as u64,
            nand_erase_blocks: f.erases * g.planes_per_unit as u64,
            nand_program_pages_running: (running.0 - running.2) * ppu
                + (running.2 + f.slc_programs as f64) * ppu * slc_w,
            nand_erase_blocks_running: running.1 * g.planes_per_unit as f64,
            nand_bus_bytes: self.act.nand_bus_bytes
                + f.programs * g.slots_per_program as u64 * self.unit_bytes,
            // Busy time that has run by `t`: work booked ahead (stages booked
            // at fetch, a burst's backlog) is charged when it runs.
            pcie_busy: {
                let (up, down) = fabric.link(self.port).busy_by(t);
                up + down
            },
            ..Activity::default()
        };
        if let Some(c) = &self.fw.compute {
            for (gi, pool) in c.groups.iter().enumerate() {
                let grp = &c.cfg.groups[gi];
                // A core that polls doorbells never idles.
                let polling =
                    c.cfg.polling.is_some() && grp.stages.contains(&(StageId::Fetch as usize));
                a.group_busy.push(if polling {
                    t.times(grp.count as u64)
                } else {
                    pool.busy_by(t)
                });
            }
            a.accel_busy = c.accels.iter().map(|p| p.busy_by(t)).collect();
            a.host_controller_busy = c.host_controller.busy_by(t);
        }
        a
    }

    /// Cumulative energy per component at `t` (zeros without a power model).
    pub fn energy_at(&self, t: Time, fabric: &Fabric) -> [f64; 8] {
        match &self.ledger {
            Some(l) => l.energy(&self.activity(t, fabric), t),
            None => [0.0; 8],
        }
    }

    /// The activity at `now` with busy times limited to what the hardware
    /// can have run since the last mark (servers × elapsed time): work that
    /// counts as run when booked ([`FifoServer::busy_by`]: into an idle gap,
    /// or an older block still ahead) is carried into later windows instead
    /// of raising one window above the hardware's power. Busy time stays
    /// monotone and the end-of-run energy ([`Drive::energy_at`]) is exact.
    fn charged_activity(&mut self, now: Time, fabric: &Fabric) -> Activity {
        let mut a = self.activity(now, fabric);
        if let Some((at, last)) = &self.charged {
            let dt = now.saturating_sub(*at);
            let cap = |prev: Time, busy: Time, servers: u64| busy.min(prev + dt.times(servers));
            a.pcie_busy = cap(last.pcie_busy, a.pcie_busy, 2);
            if let Some(c) = &self.fw.compute {
                for (i, b) in a.group_busy.iter_mut().enumerate() {
                    *b = cap(last.group_busy[i], *b, c.cfg.groups[i].count as u64);
                }
                for (i, b) in a.accel_busy.iter_mut().enumerate() {
                    *b = cap(
                        last.accel_busy[i],
                        *b,
                        c.cfg.accelerators[i].instances as u64,
                    );
                }
                a.host_controller_busy = cap(last.host_controller_busy, a.host_controller_busy, 1);
            }
        }
        self.charged = Some((now, a.clone()));
        a
    }

    pub(crate) fn power_mark(&mut self, now: Time, fabric: &Fabric) {
        if self.ledger.is_none() {
            return;
        }
        let a = self.charged_activity(now, fabric);
        if let Some(l) = self.ledger.as_mut() {
            let e = l.energy(&a, now);
            l.mark(now, e);
            self.next_mark = now + l.window;
        }
    }
}
