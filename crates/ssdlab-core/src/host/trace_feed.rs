//! Block-trace replay on a host queue: the trace is read, parsed, filtered
//! and remapped on its own thread, a few batches ahead of the simulation, in
//! trace order (so replay stays deterministic), in constant memory.

use super::queue::Source;
use crate::system::SimError;
use crate::units::Time;
use crate::workload::gen::Io;
use crate::workload::trace::{Remap, TraceReader};
use crate::workload::{Op, Replay, TraceSpec, WorkloadError};
use std::collections::VecDeque;

/// Records per batch handed from the trace reader thread to the simulation.
const TRACE_BATCH: usize = 4096;
/// Batches in flight between them (memory: 4 x 4,096 records).
const TRACE_BATCHES: usize = 4;

/// One batch of replayable requests, or the trace's first error.
type TraceBatch = Result<Vec<(Time, Io)>, WorkloadError>;

/// Streaming trace replay state (constant memory). The trace is read,
/// parsed, filtered and remapped on its own thread, a few batches ahead of
/// the simulation, in trace order (so replay stays deterministic).
pub(crate) struct TraceSource {
    pub(crate) rx: std::sync::mpsc::Receiver<TraceBatch>,
    /// The reader thread, joined when its channel closes (to report a panic
    /// rather than end the replay early without a word).
    pub(crate) reader: Option<std::thread::JoinHandle<()>>,
    pub(crate) batch: std::vec::IntoIter<(Time, Io)>,
    /// The reader has ended (end of trace or error).
    pub(crate) ended: bool,
    pub(crate) spec: TraceSpec,
    /// Open loop: requests that arrived while the queue was full (arrival time, I/O).
    pub(crate) overflow: VecDeque<(Time, Io)>,
    /// Open loop: the next record, not yet arrived.
    pub(crate) next: Option<(Time, Io)>,
    /// Replay start (a `read_iolog` job that waited for others starts later).
    pub(crate) base: Time,
    /// A replay job's `ramp_time + runtime`, counted from its start.
    pub(crate) limit: Option<Time>,
    /// Absolute end of the replay (`base + limit`), once started.
    pub(crate) deadline: Option<Time>,
}

impl TraceSource {
    /// Next kept record as an I/O in mapping units, with its (scaled) arrival time.
    #[inline]
    pub(crate) fn pull(&mut self) -> Result<Option<(Time, Io)>, WorkloadError> {
        loop {
            if let Some(x) = self.batch.next() {
                return Ok(Some(x));
            }
            if self.ended {
                return Ok(None);
            }
            match self.rx.recv() {
                Ok(Ok(b)) => self.batch = b.into_iter(),
                Ok(Err(e)) => {
                    self.ended = true;
                    return Err(e);
                }
                Err(_) => {
                    self.ended = true;
                    if let Some(h) = self.reader.take() {
                        if h.join().is_err() {
                            return Err(WorkloadError {
                                file: self.spec.path.display().to_string(),
                                line: 0,
                                option: None,
                                message: "the trace reader failed (an internal error); the \
                                          replay stopped before the end of the trace"
                                    .into(),
                            });
                        }
                    }
                    return Ok(None);
                }
            }
        }
    }
}

/// The reading side of a trace replay (runs on the reader thread).
struct TraceFeed {
    reader: TraceReader,
    spec: TraceSpec,
    capacity: u64,
    unit: u64,
    /// The write buffer's size in bytes: a larger write could never be admitted.
    max_write: u64,
}

impl TraceFeed {
    /// When a record stamped `time` (since the trace's first record) is
    /// submitted: open loop, its time from the window start divided by the
    /// speed-up; closed loop, as soon as the queue has room (zero).
    fn arrival(&self, time: Time) -> Time {
        match self.spec.replay {
            Replay::Open { speed } => Time::from_secs_f64(
                time.saturating_sub(self.spec.filter.start.unwrap_or(Time::ZERO))
                    .as_secs_f64()
                    / speed,
            ),
            Replay::Closed { .. } => Time::ZERO,
        }
    }

    /// Send batches until the trace ends, an error (sent as the last
    /// message) or the simulation drops its end of the channel.
    fn run(mut self, tx: std::sync::mpsc::SyncSender<TraceBatch>) {
        let mut batch = Vec::with_capacity(TRACE_BATCH);
        loop {
            match self.pull() {
                Ok(Some(x)) => {
                    batch.push(x);
                    if batch.len() == TRACE_BATCH {
                        let full = std::mem::replace(&mut batch, Vec::with_capacity(TRACE_BATCH));
                        if tx.send(Ok(full)).is_err() {
                            return;
                        }
                    }
                }
                Ok(None) => {
                    if !batch.is_empty() {
                        let _ = tx.send(Ok(batch));
                    }
                    return;
                }
                Err(e) => {
                    if !batch.is_empty() && tx.send(Ok(std::mem::take(&mut batch))).is_err() {
                        return;
                    }
                    let _ = tx.send(Err(e));
                    return;
                }
            }
        }
    }

    /// Next kept record as an I/O in mapping units, with its (scaled) arrival time.
    fn pull(&mut self) -> Result<Option<(Time, Io)>, WorkloadError> {
        loop {
            let Some(r) = self.reader.next() else {
                return Ok(None);
            };
            let r = r.map_err(WorkloadError::from)?;
            if r.op == Op::Flush {
                if !self.spec.filter.keep(&r) {
                    continue;
                }
                return Ok(Some((self.arrival(r.time), Io::FLUSH)));
            }
            if !self.spec.filter.keep(&r) {
                if self.spec.filter.end.is_some_and(|e| r.time >= e) {
                    return Ok(None);
                }
                continue;
            }
            let (off, len) = self
                .spec
                .remap
                .apply(r.offset, r.len, self.capacity, self.unit);
            if len == 0 {
                continue;
            }
            if r.op == Op::Write && len > self.max_write {
                return Err(WorkloadError {
                    file: self.reader.file().to_string(),
                    line: self.reader.line(),
                    option: None,
                    message: format!(
                        "a write of {len} B cannot fit the device's {} B write buffer",
                        self.max_write
                    ),
                });
            }
            let t = self.arrival(r.time);
            return Ok(Some((
                t,
                Io::units(r.op, (off / self.unit) as u32, (len / self.unit) as u32),
            )));
        }
    }
}
/// A streaming trace reader for `ts` on a drive of `capacity` bytes.
///
/// `Remap::Scale { max_offset: 0 }` means "scale from the trace's own
/// address space": one streaming pass over the trace learns it first.
pub(crate) fn trace_source(
    ts: &TraceSpec,
    capacity: u64,
    unit: u64,
    max_write: u64,
) -> Result<Source, SimError> {
    let err = |e: crate::workload::trace::TraceError| SimError::Workload(e.into());
    let mut spec = ts.clone();
    if spec.remap == (Remap::Scale { max_offset: 0 }) {
        let r = TraceReader::open(&ts.path, ts.format).map_err(err)?;
        let st = crate::workload::trace::stats(r, &ts.filter).map_err(err)?;
        spec.remap = Remap::Scale {
            max_offset: st.max_end_bytes,
        };
    }
    let reader = TraceReader::open(&ts.path, ts.format).map_err(err)?;
    let feed = TraceFeed {
        reader,
        spec: spec.clone(),
        capacity,
        unit,
        max_write,
    };
    let (tx, rx) = std::sync::mpsc::sync_channel(TRACE_BATCHES);
    let handle = std::thread::Builder::new()
        .name("ssdlab-trace".into())
        .spawn(move || feed.run(tx))
        .map_err(|e| SimError::Device(format!("cannot start the trace reader thread: {e}")))?;
    Ok(Source::Trace(Box::new(TraceSource {
        rx,
        reader: Some(handle),
        batch: Vec::new().into_iter(),
        ended: false,
        spec,
        overflow: VecDeque::new(),
        next: None,
        base: Time::ZERO,
        limit: None,
        deadline: None,
    })))
}
