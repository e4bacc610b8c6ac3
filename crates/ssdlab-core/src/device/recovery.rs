//! Power loss and recovery (issue 14, part 5): what a drive loses when its
//! power fails at an instant of the run, and what rebuilding its mapping
//! costs when the power returns. docs/models/recovery.md states the model.
//!
//! - *Power-loss protection* (`cache.power_loss_protection`): capacitors
//!   hold the drive up while it programs what its DRAM holds; nothing
//!   acknowledged is lost.
//! - *Volatile DRAM*: every unit whose latest version was not yet durable
//!   goes back to its newest version on flash, or is left unmapped if it
//!   has none ([`crate::ftl::durability`]); the report counts them.
//! - *Recovery*: the firmware reads the last complete checkpoint
//!   (`ftl.checkpoint_interval`, seed 001's C-log: its record, and with the
//!   whole mapping in DRAM every translation page on flash), the summary
//!   pages of every block closed since that checkpoint began (of every
//!   closed block without one) and the out-of-band area of every written
//!   page row of the open blocks, on all dies at once. Its time is the busiest channel's: the larger of its
//!   busiest die's command and array time plus one transfer, and the sum of
//!   the transfers its dies make (reads pipeline across dies; a bound a
//!   schedule reaches when the reads are many).

use super::Drive;
use crate::device::ftl::Mapping;
use crate::engine::EventQueue;
use crate::events::Event;
use crate::ftl::durability::{UnitScan, SUMMARY_BYTES_PER_SLOT};
use crate::units::{Lpn, Ppa, Time};
use serde::Serialize;

/// The power loss and the recovery that followed, for one drive.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct RecoveryReport {
    /// When the power failed (simulated s from the start of the run).
    pub power_loss_at_s: f64,
    /// The drive had power-loss protection (its DRAM was saved).
    pub power_loss_protection: bool,
    /// Host write commands accepted but not completed, and all other
    /// commands in flight, at the power loss (never acknowledged).
    pub commands_in_flight: u64,
    /// Mapping units of acknowledged host writes lost (not yet durable).
    pub units_lost: u64,
    /// Bytes of those units.
    pub bytes_lost: u64,
    /// Of the units lost: back to an older version found on flash.
    pub units_reverted: u64,
    /// Of the units lost: no older version left (never written before, or
    /// its block was erased since): they read as zeros.
    pub units_unmapped: u64,
    /// Units only GC had moved whose copy on flash was gone (must be 0:
    /// GC erases a victim only once its copies are programmed).
    pub relocated_units_lost: u64,
    /// Mapping units the capacitors programmed (power-loss protection).
    pub units_saved_by_capacitors: u64,
    /// How long the capacitors held the drive up to program them (s; 0
    /// without power-loss protection): whole program units spread over
    /// every parallel unit, the busiest channel's time.
    pub capacitor_flush_s: f64,
    /// Energy that flush drew from the capacitors (J: NAND programs and
    /// channel transfers, DRAM reads, and every component's idle power over
    /// the flush, the PCIe link excluded); `None` without a `[power]` model.
    pub capacitor_flush_energy_j: Option<f64>,
    /// Energy the capacitors held (`cache.capacitor_energy`, J); `None`:
    /// enough for any flush.
    pub capacitor_energy_j: Option<f64>,
    /// Mapping units the flush needed to program but the capacitors' energy
    /// did not cover (their acknowledged host writes are among `units_lost`).
    pub units_beyond_capacitors: u64,
    /// Energy a flush of a full write buffer draws (J; with a `[power]`
    /// model and power-loss protection): what the capacitors must hold for
    /// any power loss to lose nothing (GC copies staged beside it aside).
    pub full_buffer_flush_energy_j: Option<f64>,
    /// GC victims erased, over the whole run, before the copies moved out
    /// of them were programmed, because their unit had no room left for
    /// the copies (a power loss in that window loses them).
    pub gc_victims_erased_early: u64,
    /// Open blocks closed (their unwritten pages stay unused until GC).
    pub open_blocks_closed: u64,
    /// Pages of block summaries read (a closed block's summary lists each
    /// slot's LPN and sequence number: 8 B a slot, in as many pages as that takes).
    pub summary_pages_read: u64,
    /// Out-of-band areas read (one per written page row of an open block).
    pub oob_reads: u64,
    /// Mapping units of the last complete checkpoint read (its record, and
    /// with the whole mapping in DRAM the translation pages on flash); 0
    /// without one.
    pub checkpoint_pages_read: u64,
    /// When the checkpoint recovery started from began (s), if there was one.
    pub last_checkpoint_s: Option<f64>,
    /// Bytes moved over the channels by those reads.
    pub bytes_read: u64,
    /// Time to rebuild the mapping (s).
    pub recovery_time_s: f64,
}

/// Two drives' energies (J) together; one alone when the other has none.
fn add_energy(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a + b),
        (a, b) => a.or(b),
    }
}

impl RecoveryReport {
    /// Several drives lose power at once: counts add up, recovery takes as
    /// long as the slowest drive's.
    pub fn combine(parts: &[&RecoveryReport]) -> Option<RecoveryReport> {
        let first = parts.first()?;
        let mut r = RecoveryReport {
            power_loss_at_s: first.power_loss_at_s,
            power_loss_protection: parts.iter().all(|p| p.power_loss_protection),
            last_checkpoint_s: first.last_checkpoint_s,
            ..Default::default()
        };
        for p in parts {
            r.commands_in_flight += p.commands_in_flight;
            r.units_lost += p.units_lost;
            r.bytes_lost += p.bytes_lost;
            r.units_reverted += p.units_reverted;
            r.units_unmapped += p.units_unmapped;
            r.relocated_units_lost += p.relocated_units_lost;
            r.units_saved_by_capacitors += p.units_saved_by_capacitors;
            r.capacitor_flush_s = r.capacitor_flush_s.max(p.capacitor_flush_s);
            r.capacitor_flush_energy_j =
                add_energy(r.capacitor_flush_energy_j, p.capacitor_flush_energy_j);
            r.capacitor_energy_j = add_energy(r.capacitor_energy_j, p.capacitor_energy_j);
            r.units_beyond_capacitors += p.units_beyond_capacitors;
            r.full_buffer_flush_energy_j =
                add_energy(r.full_buffer_flush_energy_j, p.full_buffer_flush_energy_j);
            r.open_blocks_closed += p.open_blocks_closed;
            r.gc_victims_erased_early += p.gc_victims_erased_early;
            r.summary_pages_read += p.summary_pages_read;
            r.oob_reads += p.oob_reads;
            r.checkpoint_pages_read += p.checkpoint_pages_read;
            r.bytes_read += p.bytes_read;
            r.recovery_time_s = r.recovery_time_s.max(p.recovery_time_s);
        }
        Some(r)
    }

    /// What was lost, for the text report.
    fn losses(&self) -> String {
        format!(
            "{} acknowledged units lost ({} bytes: {} back to an older version, {} unmapped), {} GC copies lost\n",
            self.units_lost,
            self.bytes_lost,
            self.units_reverted,
            self.units_unmapped,
            self.relocated_units_lost
        )
    }

    /// Text lines for the report.
    pub fn text(&self) -> String {
        let mut s = format!(
            "  Power loss at {:.6} s: {} commands in flight; ",
            self.power_loss_at_s, self.commands_in_flight
        );
        if self.power_loss_protection {
            let mut energy = match (self.capacitor_flush_energy_j, self.capacitor_energy_j) {
                (Some(j), Some(b)) => format!(", {:.3} of {:.3} mJ held", j * 1e3, b * 1e3),
                (Some(j), None) => format!(", {:.3} mJ", j * 1e3),
                _ => String::new(),
            };
            if let Some(full) = self.full_buffer_flush_energy_j {
                energy += &format!("; a full buffer needs {:.3} mJ", full * 1e3);
            }
            s += &format!(
                "power-loss protection saved {} units in DRAM (capacitor flush {:.3} ms{energy}), ",
                self.units_saved_by_capacitors,
                self.capacitor_flush_s * 1e3
            );
            if self.units_beyond_capacitors == 0 {
                s += "nothing lost\n";
            } else {
                s += &format!(
                    "{} units beyond the capacitors' energy: {}",
                    self.units_beyond_capacitors,
                    self.losses()
                );
            }
        } else {
            s += &self.losses();
        }
        s += &format!(
            "  Recovery: {:.6} s, {} block summary pages + {} OOB reads + {} checkpoint units ({} bytes), {} open blocks closed\n",
            self.recovery_time_s,
            self.summary_pages_read,
            self.oob_reads,
            self.checkpoint_pages_read,
            self.bytes_read,
            self.open_blocks_closed
        );
        s
    }
}

impl Drive {
    /// A power loss is scheduled: keep what it needs (the FTL's durability
    /// journal, for a volatile buffer).
    pub(crate) fn track_durability(&mut self) {
        // With limited capacitor energy, part of the DRAM may be lost too.
        // Block or hybrid mapping keeps it with protection too: merges the
        // power cuts are abandoned, and their copies go back.
        if !self.dev.cache.power_loss_protection
            || self.dev.cache.capacitor_energy.is_some()
            || self.ftl.is_hybrid()
        {
            self.ftl.track_durability();
        }
    }

    /// The power returned (a drive running on after a power loss): GC
    /// looks at every unit at once, as firmware does after recovery (the
    /// power loss closed the open blocks, so a unit may be at its GC
    /// threshold with nothing else to start GC before host writes stall).
    pub(crate) fn power_on_gc(&mut self, now: Time, eq: &mut EventQueue<Event>) {
        for u in 0..self.geo.units {
            self.maybe_gc(now, u, 0, eq);
        }
    }

    /// A RAM-disk backend (no flash: a power loss would lose everything,
    /// which is not modelled).
    pub(crate) fn is_ramdisk(&self) -> bool {
        self.ramdisk
    }

    /// The power fails at `now` with `in_flight` host commands not yet
    /// completed: apply what is lost and record the recovery.
    pub(crate) fn power_loss(&mut self, now: Time, in_flight: u64) {
        let g = self.geo.clone();
        let last = self.last_checkpoint();
        let mut scan = {
            let t = &self.timings;
            self.ftl.recovery_scan(last.map(|(s, _)| s), |slc, page| {
                t.read_in(slc, g.page_type(page))
            })
        };
        if last.is_some() {
            let t = &self.timings;
            let reads = self
                .ftl
                .checkpoint_reads(|slc, page| t.read_in(slc, g.page_type(page)));
            for (s, (n, units, time)) in scan.iter_mut().zip(reads) {
                s.checkpoint_reads += n;
                s.checkpoint_units += units;
                s.array_time += time;
            }
        }
        let plp = self.dev.cache.power_loss_protection;
        // Block or hybrid mapping: what its groups had not done.
        let hybrid = self.ftl.is_hybrid();
        let (unerased, hybrid_erasing) = if hybrid {
            self.hybrid_power_loss()
        } else {
            Default::default()
        };
        let mut r = RecoveryReport {
            power_loss_at_s: now.as_secs_f64(),
            power_loss_protection: plp,
            commands_in_flight: in_flight,
            last_checkpoint_s: last.map(|(_, at)| at.as_secs_f64()),
            ..Default::default()
        };
        // Programs left unfinished: with protection, those the capacitors'
        // energy did not cover (the mapping keeps what they saved).
        let in_flight: Vec<(Ppa, u32)> = if plp {
            let in_groups = if hybrid {
                self.ftl.hybrid_host_in_groups()
            } else {
                0
            };
            let (lost, groups_saved) = self.capacitors_save(&mut r, in_groups);
            if hybrid {
                self.ftl.hybrid_save_host_versions(groups_saved);
            }
            lost
        } else {
            self.prog_at
                .iter()
                .enumerate()
                .filter_map(|(pid, a)| a.map(|(first, _)| (first, self.progs[pid].0.len() as u32)))
                .collect()
        };
        if !plp || r.units_beyond_capacitors > 0 || hybrid {
            let mut erasing: Vec<u32> = self
                .gc
                .iter()
                .flatten()
                .filter(|j| j.erasing)
                .map(|j| j.victim)
                .collect();
            erasing.extend_from_slice(&hybrid_erasing);
            let fx = self.ftl.power_loss(&in_flight, &erasing, &unerased);
            r.units_lost = fx.host_units_lost;
            r.bytes_lost = fx.host_units_lost * self.unit_bytes;
            r.units_reverted = fx.reverted;
            r.units_unmapped = fx.unmapped;
            r.relocated_units_lost = fx.relocated_lost;
            r.open_blocks_closed = fx.open_blocks_closed;
            r.gc_victims_erased_early = self.gc_early_erases;
        }
        // A data store follows what the FTL kept.
        if self.versions.is_some() {
            let outcomes = self.ftl.take_power_loss_outcomes();
            if let Err(e) = self.store_power_loss(&outcomes) {
                self.store_error = Some(e);
            }
        }
        // DRAM is gone (saved or not). What the capacitors programmed from
        // it is in the tables as "in DRAM" still: listed for running on.
        if plp {
            self.saved_by_capacitors = self.cache.buffered_in_flush_order();
        }
        self.cache.lose_contents();
        // Nothing the drive was doing goes on.
        for j in self.gc.iter_mut() {
            *j = None;
        }
        for a in self.prog_at.iter_mut() {
            *a = None;
        }
        let (bytes, time) = self.scan_cost(&scan);
        r.summary_pages_read = scan.iter().map(|s| s.summary_reads).sum();
        r.oob_reads = scan.iter().map(|s| s.oob_reads).sum();
        r.checkpoint_pages_read = scan.iter().map(|s| s.checkpoint_units).sum();
        r.bytes_read = bytes;
        r.recovery_time_s = time.as_secs_f64();
        self.recovery = Some(r);
    }

    /// The power-loss flush with power-loss protection: the programs
    /// running finish, then the GC copies and dirty host data in DRAM
    /// (with block or hybrid mapping first the `hybrid_units` of host data
    /// in the groups under way, whose merges are abandoned; how many of
    /// them the energy covered is returned with the unfinished programs) are
    /// programmed (in [`crate::device::cache::DataCache::buffered_in_flush_order`]).
    /// With `cache.capacitor_energy`, the flush stops at the largest number
    /// of units whose energy the capacitors hold: what comes after (whole
    /// running programs, then buffered units) is not made durable, and the
    /// programs it leaves unfinished are returned (as first slot and
    /// length) for [`crate::ftl::Ftl::power_loss`]. Fills the flush's part
    /// of `r`.
    fn capacitors_save(
        &mut self,
        r: &mut RecoveryReport,
        hybrid_units: u64,
    ) -> (Vec<(Ppa, u32)>, u64) {
        let running: Vec<(u32, Ppa, u64)> = self
            .prog_at
            .iter()
            .enumerate()
            .filter_map(|(pid, a)| a.map(|(first, seq)| (pid as u32, first, seq)))
            .collect();
        // Block or hybrid mapping: the host data of the groups under way
        // (in DRAM until their programs finish).
        let running_units: u64 = running
            .iter()
            .map(|&(pid, _, _)| self.progs[pid as usize].0.len() as u64)
            .sum::<u64>()
            + hybrid_units;
        let mut seen = std::collections::HashSet::new();
        let buffered: Vec<u32> = self
            .cache
            .buffered_in_flush_order()
            .into_iter()
            .filter(|&l| self.ftl.lookup(Lpn(l)) == Mapping::InBuffer && seen.insert(l))
            .collect();
        let units = running_units + buffered.len() as u64;
        let (mut time, mut energy) = self.capacitor_flush(units);
        let budget = self.dev.cache.capacitor_energy.map(|e| e.0);
        r.capacitor_energy_j = budget;
        r.full_buffer_flush_energy_j = self.capacitor_flush(self.cache.write_buffer_units()).1;
        let mut saved = units;
        if let (Some(b), Some(e)) = (budget, energy) {
            if e > b {
                // The flush's energy grows with the units it programs: the
                // most it can program is found by bisection.
                let (mut lo, mut hi) = (0, units);
                while lo < hi {
                    let mid = lo + (hi - lo).div_ceil(2);
                    if self.capacitor_flush(mid).1.is_some_and(|e| e <= b) {
                        lo = mid;
                    } else {
                        hi = mid - 1;
                    }
                }
                saved = lo;
                (time, energy) = self.capacitor_flush(saved);
            }
        }
        // Block or hybrid mapping: the groups' host data goes first (in
        // plan order), then the buffer.
        let groups_saved = hybrid_units.min(saved);
        let (mut left, mut done) = (saved - groups_saved, groups_saved);
        let mut lost = Vec::new();
        for (pid, first, seq) in running {
            let n = self.progs[pid as usize].0.len() as u64;
            if n <= left {
                left -= n;
                done += n;
                for i in 0..n as usize {
                    let l = self.progs[pid as usize].0[i];
                    self.ftl
                        .programmed(Lpn(l), Ppa(first.0 + i as u32), seq + 1 + i as u64);
                }
            } else {
                // A running program finishes whole or not at all, and the
                // firmware goes in order: nothing after this one.
                left = 0;
                lost.push((first, n as u32));
            }
        }
        let from_dram = left.min(buffered.len() as u64);
        for &l in &buffered[..from_dram as usize] {
            self.ftl.saved_by_capacitors(l);
        }
        done += from_dram;
        if done < saved {
            // Whole programs: fewer units than the energy would cover.
            saved = done;
            (time, energy) = self.capacitor_flush(saved);
        }
        r.units_saved_by_capacitors = saved;
        r.units_beyond_capacitors = units - saved;
        r.capacitor_flush_s = time.as_secs_f64();
        r.capacitor_flush_energy_j = energy;
        (lost, groups_saved)
    }

    /// Time and energy (with a power model) for the capacitors to program
    /// `units` mapping units held in DRAM. They are packed into whole
    /// program units (the last one padded), dealt to the parallel units in
    /// turn, in SLC mode when the drive has it (the fastest way
    /// to make them durable), else natively (the mean of the program times
    /// of its page types). Per channel: the larger of its busiest die's
    /// commands and programs plus one transfer, and the sum of its dies'
    /// transfers, as for the recovery reads. Programs that were running at
    /// the power loss are counted among these (an upper bound of one
    /// program time per die).
    fn capacitor_flush(&self, units: u64) -> (Time, Option<f64>) {
        let g = &self.geo;
        if units == 0 {
            return (Time::ZERO, self.ledger.as_ref().map(|_| 0.0));
        }
        let t = &self.timings;
        let t_prog = if t.t_prog_slc_unit > Time::ZERO {
            t.t_prog_slc_unit
        } else {
            let types = (g.bits / g.pages_per_program).max(1);
            let sum = (0..types).fold(Time::ZERO, |acc, pt| {
                acc + t.program(pt * g.pages_per_program)
            });
            Time::ns(sum.as_ns() / types as u64)
        };
        let per_prog = g.slots_per_program as u64;
        let prog_bytes = per_prog * self.unit_bytes;
        let xfer = self.flash.xfer_time(prog_bytes);
        let step = self.dev.nand.t_cmd + t_prog;
        let progs = units.div_ceil(per_prog);
        let (base, extra) = (progs / g.units as u64, progs % g.units as u64);
        let mut die_progs = vec![0u64; g.dies as usize];
        for u in 0..g.units {
            die_progs[g.die_of_unit(u) as usize] += base + u64::from((u as u64) < extra);
        }
        let mut worst = Time::ZERO;
        for ch in 0..g.channels {
            let (mut arrays, mut bus) = (Time::ZERO, Time::ZERO);
            for d in (0..g.dies).filter(|&d| g.channel_of_die(d) == ch) {
                let n = die_progs[d as usize];
                if n > 0 {
                    arrays = arrays.max(xfer + step.times(n));
                }
                bus += xfer.times(n);
            }
            worst = worst.max(arrays.max(bus));
        }
        let energy = self.ledger.as_ref().map(|l| {
            let progs: u64 = die_progs.iter().sum();
            let groups = self.fw.compute.as_ref().map_or(0, |c| c.cfg.groups.len());
            let accels = self
                .fw
                .compute
                .as_ref()
                .map_or(0, |c| c.cfg.accelerators.len());
            let a = crate::power::Activity {
                group_busy: vec![Time::ZERO; groups],
                accel_busy: vec![Time::ZERO; accels],
                dram_bytes: units * self.unit_bytes,
                nand_program_pages: progs * (g.planes_per_unit * g.pages_per_program) as u64,
                nand_bus_bytes: progs * prog_bytes,
                ..Default::default()
            };
            let e = l.energy(&a, worst);
            // The PCIe link is down: its idle power is not drawn.
            e[7] - e[5]
        });
        (worst, energy)
    }

    /// Bytes and time of the recovery reads: per channel, the larger of
    /// its busiest die's command and array time plus one transfer, and its
    /// dies' transfers in sequence; the drive takes its slowest channel's.
    fn scan_cost(&self, scan: &[UnitScan]) -> (u64, Time) {
        let g = &self.geo;
        // A summary page read moves a whole (multi-plane) page.
        let summary = (g.planes_per_unit * g.slots_per_page) as u64 * g.mapping_unit.0;
        let oob = (g.planes_per_unit * g.slots_per_page) as u64 * SUMMARY_BYTES_PER_SLOT;
        let unit = g.mapping_unit.0;
        let t_cmd = self.dev.nand.t_cmd;
        let mut die_time = vec![Time::ZERO; g.dies as usize];
        let mut die_xfer = vec![Time::ZERO; g.dies as usize];
        let mut last_xfer = vec![Time::ZERO; g.dies as usize];
        let mut bytes = 0;
        for (u, s) in scan.iter().enumerate() {
            let die = g.die_of_unit(u as u32) as usize;
            let reads = s.summary_reads + s.oob_reads + s.checkpoint_reads;
            die_time[die] += t_cmd.times(reads) + s.array_time;
            let xs = self.flash.xfer_time(summary);
            let xo = self.flash.xfer_time(oob);
            let xc = self.flash.xfer_time(unit);
            die_xfer[die] +=
                xs.times(s.summary_reads) + xo.times(s.oob_reads) + xc.times(s.checkpoint_units);
            if reads > 0 {
                // The reads run checkpoint first, then summaries, then OOB.
                last_xfer[die] = if s.oob_reads > 0 {
                    xo
                } else if s.summary_reads > 0 {
                    xs
                } else {
                    xc
                };
            }
            bytes += summary * s.summary_reads + oob * s.oob_reads + unit * s.checkpoint_units;
        }
        let mut worst = Time::ZERO;
        for ch in 0..g.channels {
            let dies = (0..g.dies).filter(|&d| g.channel_of_die(d) == ch);
            let (mut arrays, mut bus) = (Time::ZERO, Time::ZERO);
            for d in dies {
                let d = d as usize;
                arrays = arrays.max(die_time[d] + last_xfer[d]);
                bus += die_xfer[d];
            }
            worst = worst.max(arrays.max(bus));
        }
        (bytes, worst)
    }
}
