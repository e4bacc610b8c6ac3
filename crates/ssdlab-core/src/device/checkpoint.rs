//! The drive's side of mapping checkpoints (`ftl.checkpoint_interval`,
//! `ftl.checkpoint_log_size`; seed 001's C-log; what is written:
//! [`crate::ftl`]'s `checkpoint` module). Every interval, and whenever the
//! mapping log (8 B per mapping update: a unit programmed by the host or
//! moved by GC, a unit trimmed) since the last checkpoint began reaches the
//! log size, the drive queues the translation pages changed
//! since the last checkpoint and the checkpoint record for programming
//! (the translation write queue, programmed into translation blocks like
//! a cached mapping's write-backs, a partial program unit padded); the
//! checkpoint is complete when the programs carrying them have finished.
//! An interval checkpoint that comes while the previous one is still being
//! written is skipped; a log-size one waits for the next program after it. A drive the host did not write to or trim since the last
//! checkpoint stops checkpointing until it programs host data again (no
//! event keeps a stalled run alive).

use super::{Drive, HCKPT_ERASE, TAG_HCKPT, TAG_MAPPROG, TAG_SHIFT};
use crate::config::OpKind;
use crate::engine::EventQueue;
use crate::events::Event;
use crate::units::Time;
use serde::Serialize;

/// A checkpoint being written.
#[derive(Debug, Clone, Copy)]
struct Writing {
    /// Commit sequence when it began (what it covers).
    seq: u64,
    /// When it began.
    at: Time,
    /// Translation-queue pages issued once all of its pages are issued.
    target: u64,
    /// Programs carrying its pages (or earlier ones) still in flight.
    progs: u32,
    /// The first program issued since it began.
    first_serial: u64,
    /// The last such program's serial number.
    last_serial: u64,
}

/// Checkpoint state and counters of one drive.
#[derive(Debug, Clone, Default)]
pub(crate) struct Checkpoints {
    interval: Option<Time>,
    /// Mapping updates (8 B log entries) that start a checkpoint.
    log_limit: Option<u64>,
    /// Mapping updates when the last checkpoint began.
    log_base: u64,
    /// Mapping updates when the run began.
    run_base: u64,
    /// Data units programmed (host data and GC copies: each moves a
    /// mapping; translation pages and records do not count, the
    /// checkpoint covers them).
    programmed: u64,
    /// A log-size [`Event::Checkpoint`] is pending.
    log_pending: bool,
    /// Checkpoints the log size started.
    by_log: u64,
    /// An interval [`Event::Checkpoint`] is pending.
    armed: bool,
    writing: Option<Writing>,
    /// The last complete checkpoint: (commit sequence it covers, when it
    /// began, when it completed).
    last: Option<(u64, Time, Time)>,
    /// Translation-queue pages issued to programs, ever.
    issued: u64,
    /// Serial number of the last translation program.
    serial: u64,
    /// Units written, programmed, trimmed and blocks erased at the last
    /// checkpoint (activity test).
    host_at_last: u64,
    taken: u64,
    skipped: u64,
    /// Of those skipped, for want of erased blocks (block and hybrid mapping).
    no_room: u64,
    pages: u64,
}

/// Checkpoints in the report (`ftl.checkpoint_interval`).
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct CheckpointReport {
    /// The interval (s); 0 without one.
    pub interval_s: f64,
    /// The mapping-log size that also starts one (bytes); 0 without one.
    pub log_size_bytes: u64,
    /// Of those taken, started by the log size.
    pub by_log_size: u64,
    /// Mapping updates in the run (8 B log entries each: data units
    /// programmed by the host or moved by GC, units trimmed).
    pub log_entries: u64,
    /// Checkpoints begun and completed or still being written.
    pub taken: u64,
    /// Checkpoints skipped because the previous one was still being written
    /// or (block and hybrid mapping) a unit had no erased block to spare.
    pub skipped: u64,
    /// Of those, skipped for want of erased blocks: a unit needed a new
    /// block and its free ones were sources of merges under way or needed
    /// by its block map (block and hybrid mapping only).
    pub skipped_no_room: u64,
    /// Mapping units queued by checkpoints (translation pages and records).
    pub units_written: u64,
    /// Bytes of those.
    pub bytes_written: u64,
    /// When the last complete checkpoint began (s), if one completed.
    pub last_complete_s: Option<f64>,
}

impl CheckpointReport {
    /// The report's text line.
    pub fn text(&self) -> String {
        let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
        let when = match (self.interval_s > 0.0, self.log_size_bytes > 0) {
            (true, true) => format!(
                "every {:.3} ms or {:.1} MiB of mapping log ({} by log size)",
                self.interval_s * 1e3,
                mib(self.log_size_bytes),
                self.by_log_size
            ),
            (true, false) => format!("every {:.3} ms", self.interval_s * 1e3),
            _ => format!("every {:.1} MiB of mapping log", mib(self.log_size_bytes)),
        };
        format!(
            "  Checkpoints: {when}, {} taken ({} skipped{}), {} units ({:.1} MiB) written{}\n",
            self.taken,
            self.skipped,
            if self.skipped_no_room > 0 {
                format!(", {} for want of erased blocks", self.skipped_no_room)
            } else {
                String::new()
            },
            self.units_written,
            mib(self.bytes_written),
            self.last_complete_s
                .map(|t| format!(", last complete one began at {t:.6} s"))
                .unwrap_or_default()
        )
    }

    /// Several drives: counts add up, the interval and last checkpoint are
    /// the first drive's.
    pub fn combine(parts: &[&CheckpointReport]) -> Option<CheckpointReport> {
        let first = parts.first()?;
        let mut r = (*first).clone();
        for p in &parts[1..] {
            r.taken += p.taken;
            r.by_log_size += p.by_log_size;
            r.log_entries += p.log_entries;
            r.skipped += p.skipped;
            r.skipped_no_room += p.skipped_no_room;
            r.units_written += p.units_written;
            r.bytes_written += p.bytes_written;
        }
        Some(r)
    }
}

impl Checkpoints {
    /// Checkpoints every `interval` and/or every `log_bytes` of mapping log.
    pub(crate) fn new(interval: Option<Time>, log_bytes: Option<u64>) -> Checkpoints {
        Checkpoints {
            interval,
            log_limit: log_bytes.map(|b| (b / crate::ftl::config::CHECKPOINT_LOG_ENTRY).max(1)),
            ..Default::default()
        }
    }
}

impl Drive {
    /// Schedule the next checkpoint if none is pending (from the start of
    /// the run, and again when an idle drive programs).
    pub(crate) fn arm_checkpoint(&mut self, now: Time, eq: &mut EventQueue<Event>) {
        if let Some(c) = self.ckpt.as_mut() {
            if let (false, Some(every)) = (c.armed, c.interval) {
                c.armed = true;
                eq.at(
                    now + every,
                    Event::Checkpoint {
                        d: self.index,
                        by_log: false,
                    },
                );
            }
        }
    }

    /// The run starts: the mapping log is empty (preconditioning wrote
    /// the state the first checkpoint covers), arm the interval.
    pub(crate) fn start_checkpoints(&mut self, now: Time, eq: &mut EventQueue<Event>) {
        let entries = self.log_entries();
        if let Some(c) = self.ckpt.as_mut() {
            c.log_base = entries;
            c.run_base = entries;
        }
        self.arm_checkpoint(now, eq);
    }

    /// Mapping updates so far in the run (the mapping log's entries).
    fn log_entries(&self) -> u64 {
        self.ckpt.as_ref().map_or(0, |c| c.programmed) + self.ftl.stats.trimmed_slots
    }

    /// A program of `data` data units was issued (`host`: with host data):
    /// arm the interval, and start a checkpoint now if the mapping log has
    /// reached its size.
    pub(crate) fn checkpoint_after_program(
        &mut self,
        now: Time,
        host: bool,
        data: u64,
        eq: &mut EventQueue<Event>,
    ) {
        if host {
            self.arm_checkpoint(now, eq);
        }
        if let Some(c) = self.ckpt.as_mut() {
            c.programmed += data;
        }
        let entries = self.log_entries();
        let Some(c) = self.ckpt.as_mut() else {
            return;
        };
        if let Some(limit) = c.log_limit {
            if !c.log_pending && c.writing.is_none() && entries - c.log_base >= limit {
                c.log_pending = true;
                eq.at(
                    now,
                    Event::Checkpoint {
                        d: self.index,
                        by_log: true,
                    },
                );
            }
        }
    }

    /// The checkpoint interval is over (or, `by_log`, the mapping log has
    /// reached its size): start one.
    pub(crate) fn checkpoint(&mut self, now: Time, by_log: bool, eq: &mut EventQueue<Event>) {
        // Host writes or trims since the last checkpoint (a stalled drive
        // takes none, and then no checkpoint keeps the run alive; GC alone
        // does not re-arm it either, or checkpoints and the GC their
        // writes cause would feed each other).
        let st = &self.ftl.stats;
        let host = st.host_slots + st.trimmed_slots;
        let entries = self.log_entries();
        let Some(c) = self.ckpt.as_mut() else {
            return;
        };
        if by_log {
            c.log_pending = false;
            // One being written (the next program looks again), or one
            // the interval started since covers it.
            let due = c.log_limit.is_some_and(|l| entries - c.log_base >= l);
            if c.writing.is_some() || !due {
                return;
            }
            c.by_log += 1;
        } else {
            c.armed = false;
            if c.writing.is_some() {
                c.skipped += 1;
                self.arm_checkpoint(now, eq);
                return;
            }
        }
        let active = host != c.host_at_last;
        c.host_at_last = host;
        c.log_base = entries;
        if self.ftl.is_hybrid() {
            self.hybrid_checkpoint(now, eq);
            if active && !by_log {
                self.arm_checkpoint(now, eq);
            }
            return;
        }
        let dirty = self
            .mcache
            .as_mut()
            .map(|m| m.take_dirty())
            .unwrap_or_default();
        let pages = self.ftl.checkpoint_pages(dirty);
        let Some(c) = self.ckpt.as_mut() else {
            return;
        };
        c.taken += 1;
        c.pages += pages.len() as u64;
        self.map_queue.extend(pages);
        c.writing = Some(Writing {
            seq: self.ftl.commit_seq(),
            at: now,
            target: c.issued + self.map_queue.len() as u64,
            progs: 0,
            first_serial: c.serial + 1,
            last_serial: 0,
        });
        if let Some(c) = self.ckpt.as_mut() {
            if let Some(w) = c.writing {
                if c.issued >= w.target && w.progs == 0 {
                    // Nothing to write (every page already queued).
                    c.last = Some((w.seq, w.at, now));
                    c.writing = None;
                }
            }
        }
        self.try_flush(now, eq);
        if active && !by_log {
            self.arm_checkpoint(now, eq);
        }
    }

    /// Block or hybrid mapping: start a checkpoint, every unit programming
    /// its part of the block map into blocks of its own
    /// (`Ftl::hybrid_checkpoint_begin`); skipped when a unit has no erased
    /// block for it.
    fn hybrid_checkpoint(&mut self, now: Time, eq: &mut EventQueue<Event>) {
        let seq = self.ftl.commit_seq();
        let busy = self.hybrid_pending_erases();
        let bpu = self.geo.blocks_per_unit;
        let plan = self
            .ftl
            .hybrid_checkpoint_begin(|u, b| busy.binary_search(&(u * bpu + b)).is_ok());
        let slots = self.ftl.hybrid_checkpoint_slots();
        let Some(c) = self.ckpt.as_mut() else {
            return;
        };
        let Some(plan) = plan else {
            c.skipped += 1;
            c.no_room += 1;
            return;
        };
        let progs: usize = plan.iter().map(Vec::len).sum();
        c.taken += 1;
        c.pages += slots;
        // The translation queue's fields stay idle (`target` already
        // reached); `progs` counts the programs still to finish.
        c.writing = Some(Writing {
            seq,
            at: now,
            target: c.issued,
            progs: progs as u32,
            first_serial: 0,
            last_serial: 0,
        });
        for (unit, ppas) in plan.into_iter().enumerate() {
            let owner = (TAG_HCKPT << TAG_SHIFT) | unit as u64;
            for p in ppas {
                self.hybrid_program_for(now, unit as u32, p, owner, eq);
            }
        }
    }

    /// A flash operation of a block or hybrid mapping checkpoint finished
    /// (`owner`'s tag): when its last program is done the checkpoint is
    /// complete and the previous one's blocks are erased.
    pub(crate) fn hybrid_checkpoint_txn_done(
        &mut self,
        now: Time,
        owner: u64,
        eq: &mut EventQueue<Event>,
    ) {
        if owner & HCKPT_ERASE != 0 {
            self.ftl.hybrid_checkpoint_erased(owner as u32);
            return;
        }
        let Some(c) = self.ckpt.as_mut() else {
            return;
        };
        let Some(w) = c.writing.as_mut() else {
            return;
        };
        w.progs -= 1;
        if w.progs > 0 {
            return;
        }
        c.last = Some((w.seq, w.at, now));
        c.writing = None;
        for bid in self.ftl.hybrid_checkpoint_complete() {
            let unit = self.geo.unit_of_block(bid);
            let owner = (TAG_HCKPT << TAG_SHIFT) | HCKPT_ERASE | bid as u64;
            let t = self.timings.t_erase;
            self.hybrid_submit_for(now, unit, (OpKind::Erase, t, 0), owner, eq);
        }
    }

    /// Is a checkpoint waiting for its pages to be issued (the translation
    /// queue then programs partial units too)?
    pub(crate) fn checkpoint_pending(&self) -> bool {
        self.ckpt
            .as_ref()
            .is_some_and(|c| c.writing.is_some_and(|w| c.issued < w.target))
    }

    /// A program of `n` translation-queue pages is issued: its owner tag.
    pub(crate) fn checkpoint_program_issued(&mut self, n: u64) -> u64 {
        let Some(c) = self.ckpt.as_mut() else {
            return TAG_MAPPROG << TAG_SHIFT;
        };
        let before = c.issued;
        c.issued += n;
        c.serial += 1;
        if let Some(w) = c.writing.as_mut() {
            if before < w.target {
                w.progs += 1;
                w.last_serial = c.serial;
            }
        }
        (TAG_MAPPROG << TAG_SHIFT) | c.serial
    }

    /// A program of translation-queue pages with tag `owner` finished.
    pub(crate) fn checkpoint_program_done(&mut self, now: Time, owner: u64) {
        let serial = owner & ((1 << TAG_SHIFT) - 1);
        let Some(c) = self.ckpt.as_mut() else {
            return;
        };
        let Some(w) = c.writing.as_mut() else {
            return;
        };
        if serial >= w.first_serial && serial <= w.last_serial {
            w.progs -= 1;
        }
        if w.progs == 0 && c.issued >= w.target {
            c.last = Some((w.seq, w.at, now));
            c.writing = None;
        }
    }

    /// The last complete checkpoint: (commit sequence it covers, when it began).
    pub(crate) fn last_checkpoint(&self) -> Option<(u64, Time)> {
        self.ckpt.as_ref()?.last.map(|(s, at, _)| (s, at))
    }

    /// The `checkpoint` section of the report.
    pub fn checkpoint_report(&self) -> Option<CheckpointReport> {
        let c = self.ckpt.as_ref()?;
        Some(CheckpointReport {
            interval_s: c.interval.map_or(0.0, |t| t.as_secs_f64()),
            log_size_bytes: c
                .log_limit
                .map_or(0, |l| l * crate::ftl::config::CHECKPOINT_LOG_ENTRY),
            by_log_size: c.by_log,
            log_entries: self.log_entries() - c.run_base,
            taken: c.taken,
            skipped: c.skipped,
            skipped_no_room: c.no_room,
            units_written: c.pages,
            bytes_written: c.pages * self.unit_bytes,
            last_complete_s: c.last.map(|(_, at, _)| at.as_secs_f64()),
        })
    }
}
