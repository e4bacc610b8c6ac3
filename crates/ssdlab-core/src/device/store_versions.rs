//! The data store through a power loss (issue 14, part 5): a drive that
//! keeps data (`--data-store`) and will lose its power keeps, next to the
//! store, what it needs for the store to hold afterwards exactly what
//! recovery rebuilt (docs/models/data-store.md, docs/models/recovery.md).
//!
//! - The store takes a write's data when the drive takes the command's data
//!   into its buffer (when the FTL makes its new version), not when the
//!   host submits it: a write still in flight at the power loss never
//!   reached the drive. Trims likewise when the drive deallocates. Until
//!   then the data waits here, by the command's first mapping unit, in
//!   submission order.
//! - For every unit whose latest version is not durable (the FTL's journal,
//!   [`crate::ftl::durability`]), the content of its newest durable version;
//!   and for every program in flight carrying such a unit, the content it
//!   carries (it becomes the durable content if that program finishes while
//!   a newer version waits in DRAM).
//! - At the power loss every unit the FTL sent back to an older version
//!   gets that version's content back, every unit left unmapped reads as
//!   zeros, and the data still waiting is dropped.
//!
//! Kept only when a run has both a data store and a power loss; nothing
//! else pays for it. Block and hybrid mapping note what a program carries
//! when the FTL plans it (every slot a group's plan commits, host data and
//! merge copies: `Ftl::take_planned`), and what it made durable when its
//! program step finishes.

use super::Drive;
use crate::engine::EventQueue;
use crate::events::Event;
use crate::units::{Ppa, Time};
use std::collections::{HashMap, VecDeque};

/// What the store needs to follow the FTL through a power loss.
#[derive(Debug, Default)]
pub(crate) struct StoreVersions {
    /// Host writes (byte offset, data) not yet taken in, by first unit.
    writes: HashMap<u32, VecDeque<(u64, Vec<u8>)>>,
    /// Host trims (byte offset, length) not yet applied, by first unit.
    trims: HashMap<u32, VecDeque<(u64, u64)>>,
    /// By unit whose latest version is not durable: its newest durable
    /// version's content.
    durable: HashMap<u32, Vec<u8>>,
    /// By slot of a program in flight: the content it carries for such a unit.
    in_flight: HashMap<u32, Vec<u8>>,
}

impl Drive {
    /// Keep the store in step with what the drive has taken in and what is
    /// durable (a data store and a power loss: see the module docs).
    pub(crate) fn keep_store_versions(&mut self) {
        if self.store.is_some() {
            self.versions = Some(Box::default());
            if self.ftl.is_hybrid() {
                self.ftl.list_planned();
            }
        }
    }

    /// The host sends write data for bytes at `offset`: kept until the
    /// drive takes the command in. `false` when the store takes it now.
    pub(crate) fn stage_write(&mut self, offset: u64, data: &[u8]) -> bool {
        let first = (offset / self.unit_bytes) as u32;
        match self.versions.as_mut() {
            Some(v) => {
                v.writes
                    .entry(first)
                    .or_default()
                    .push_back((offset, data.to_vec()));
                true
            }
            None => false,
        }
    }

    /// The host trims `len` bytes at `offset`: applied when the drive
    /// deallocates them. `false` when the store trims now.
    pub(crate) fn stage_trim(&mut self, offset: u64, len: u64) -> bool {
        let first = (offset / self.unit_bytes) as u32;
        match self.versions.as_mut() {
            Some(v) => {
                v.trims.entry(first).or_default().push_back((offset, len));
                true
            }
            None => false,
        }
    }

    /// The store failed (a file store's I/O error): the run ends with it.
    pub(super) fn store_failed(&mut self, e: String, now: Time, eq: &mut EventQueue<Event>) {
        if self.store_error.is_none() {
            self.store_error = Some(e);
            eq.at(now, Event::WornOut { d: self.index });
        }
    }

    /// The content of unit `lpn` in the store.
    fn unit_content(&self, lpn: u32) -> Vec<u8> {
        let mut buf = vec![0u8; self.unit_bytes as usize];
        if let Some(s) = self.store.as_ref() {
            // A failed read leaves zeros; the store reports its own errors
            // on the host's reads.
            let _ = s.read_raw(lpn as u64 * self.unit_bytes, &mut buf);
        }
        buf
    }

    /// The write whose units start at `first` (`n` units) is taken into
    /// the buffer (before the FTL makes the new versions): note the durable
    /// content of units that had none noted, then store the data.
    pub(super) fn store_takes_write(&mut self, first: u32, n: u32) -> Result<(), String> {
        let Some(mut v) = self.versions.take() else {
            return Ok(());
        };
        if self.ftl.tracks_durability() {
            for l in first..first + n {
                v.durable.entry(l).or_insert_with(|| self.unit_content(l));
            }
        }
        let data = v.writes.get_mut(&first).and_then(VecDeque::pop_front);
        self.versions = Some(v);
        if let (Some((offset, bytes)), Some(s)) = (data, self.store.as_mut()) {
            s.write(offset, &bytes).map_err(|e| e.0)?;
        }
        Ok(())
    }

    /// The trim whose units start at `first` (`n` units) is applied: trims
    /// are durable when the drive takes them.
    pub(super) fn store_takes_trim(&mut self, first: u32, n: u32) -> Result<(), String> {
        let Some(v) = self.versions.as_mut() else {
            return Ok(());
        };
        for l in first..first + n {
            v.durable.remove(&l);
        }
        let t = v.trims.get_mut(&first).and_then(VecDeque::pop_front);
        if let (Some((offset, len)), Some(s)) = (t, self.store.as_mut()) {
            s.trim(offset, len).map_err(|e| e.0)?;
        }
        Ok(())
    }

    /// A program of `lpns` from slot `first` is issued: the content it
    /// carries for units whose latest version is not durable.
    pub(super) fn store_program_issued(&mut self, first: Ppa, lpns: &[u32]) {
        let Some(mut v) = self.versions.take() else {
            return;
        };
        for (i, &l) in lpns.iter().enumerate() {
            if v.durable.contains_key(&l) {
                let c = self.unit_content(l);
                v.in_flight.insert(first.0 + i as u32, c);
            }
        }
        self.versions = Some(v);
    }

    /// That program finished (after the FTL noted it): a unit whose latest
    /// version it holds is durable; one whose newer version waits has this
    /// content as its newest durable one.
    pub(super) fn store_program_done(&mut self, first: Ppa, lpns: &[u32]) {
        let Some(v) = self.versions.as_mut() else {
            return;
        };
        for (i, &l) in lpns.iter().enumerate() {
            let slot = first.0 + i as u32;
            let carried = v.in_flight.remove(&slot);
            match self.ftl.journal_slot(l) {
                None => {
                    v.durable.remove(&l);
                }
                Some(s) if s == slot => {
                    if let Some(c) = carried {
                        v.durable.insert(l, c);
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// The power failed and the FTL went back (`outcomes`: each unit that
    /// lost its latest version, and whether an older one was left): the
    /// store follows, and what had not reached the drive is dropped.
    pub(super) fn store_power_loss(&mut self, outcomes: &[(u32, bool)]) -> Result<(), String> {
        let Some(mut v) = self.versions.take() else {
            return Ok(());
        };
        let unit = self.unit_bytes;
        if let Some(s) = self.store.as_mut() {
            for &(l, older) in outcomes {
                let at = l as u64 * unit;
                match (older, v.durable.remove(&l)) {
                    (true, Some(c)) => s.write_raw(at, &c).map_err(|e| e.0)?,
                    (true, None) => {} // only GC had moved it: same content
                    (false, _) => s.trim_raw(at, unit).map_err(|e| e.0)?,
                }
            }
        }
        v.writes.clear();
        v.trims.clear();
        v.durable.clear();
        v.in_flight.clear();
        Ok(())
    }
}
