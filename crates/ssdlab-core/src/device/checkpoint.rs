//! The drive's side of mapping checkpoints (`ftl.checkpoint_interval`;
//! seed 001's C-log; what is written: [`crate::ftl`]'s `checkpoint`
//! module). Every interval the drive queues the translation pages changed
//! since the last checkpoint and the checkpoint record for programming
//! (the translation write queue, programmed into translation blocks like
//! a cached mapping's write-backs, a partial program unit padded); the
//! checkpoint is complete when the programs carrying them have finished.
//! A checkpoint that comes while the previous one is still being written
//! is skipped. A drive the host did not write to or trim since the last
//! checkpoint stops checkpointing until it programs host data again (no
//! event keeps a stalled run alive).

use super::{Drive, TAG_MAPPROG, TAG_SHIFT};
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
    interval: Time,
    /// A [`Event::Checkpoint`] is pending.
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
    pages: u64,
}

/// Checkpoints in the report (`ftl.checkpoint_interval`).
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct CheckpointReport {
    /// The interval (s).
    pub interval_s: f64,
    /// Checkpoints begun and completed or still being written.
    pub taken: u64,
    /// Checkpoints skipped because the previous one was still being written.
    pub skipped: u64,
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
        format!(
            "  Checkpoints: every {:.3} ms, {} taken ({} skipped), {} units ({:.1} MiB) written{}\n",
            self.interval_s * 1e3,
            self.taken,
            self.skipped,
            self.units_written,
            self.bytes_written as f64 / (1u64 << 20) as f64,
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
            r.skipped += p.skipped;
            r.units_written += p.units_written;
            r.bytes_written += p.bytes_written;
        }
        Some(r)
    }
}

impl Checkpoints {
    pub(crate) fn new(interval: Time) -> Checkpoints {
        Checkpoints {
            interval,
            ..Default::default()
        }
    }
}

impl Drive {
    /// Schedule the next checkpoint if none is pending (from the start of
    /// the run, and again when an idle drive programs).
    pub(crate) fn arm_checkpoint(&mut self, now: Time, eq: &mut EventQueue<Event>) {
        if let Some(c) = self.ckpt.as_mut() {
            if !c.armed {
                c.armed = true;
                eq.at(now + c.interval, Event::Checkpoint { d: self.index });
            }
        }
    }

    /// The checkpoint interval is over: start one.
    pub(crate) fn checkpoint(&mut self, now: Time, eq: &mut EventQueue<Event>) {
        // Host writes or trims since the last checkpoint (a stalled drive
        // takes none, and then no checkpoint keeps the run alive; GC alone
        // does not re-arm it either, or checkpoints and the GC their
        // writes cause would feed each other).
        let st = &self.ftl.stats;
        let host = st.host_slots + st.trimmed_slots;
        let Some(c) = self.ckpt.as_mut() else {
            return;
        };
        c.armed = false;
        if c.writing.is_some() {
            c.skipped += 1;
            self.arm_checkpoint(now, eq);
            return;
        }
        let active = host != c.host_at_last;
        c.host_at_last = host;
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
        if active {
            self.arm_checkpoint(now, eq);
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
            interval_s: c.interval.as_secs_f64(),
            taken: c.taken,
            skipped: c.skipped,
            units_written: c.pages,
            bytes_written: c.pages * self.unit_bytes,
            last_complete_s: c.last.map(|(_, at, _)| at.as_secs_f64()),
        })
    }
}
