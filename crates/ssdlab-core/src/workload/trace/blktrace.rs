//! Binary `blktrace` files ([`TraceFormat::Blktrace`](super::TraceFormat::Blktrace)):
//! `struct blk_io_trace` records, the per-CPU files and their merge by time.

use super::{Parsed, SECTOR};
use crate::workload::Op;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::{BufRead, ErrorKind};

/// Size of the fixed part of a record (`struct blk_io_trace`).
const BLK_HEADER_BYTES: usize = 48;
/// `BLK_IO_TRACE_MAGIC`: the upper 24 bits of `magic`; the low 8 bits are
/// the version.
const BLK_MAGIC: u32 = 0x6561_7400;
/// The record layout read here (`BLK_IO_TRACE_VERSION`).
const BLK_VERSION: u32 = 0x07;
/// Category bits sit above the 16-bit action code (`BLK_TC_SHIFT`).
const BLK_TC_SHIFT: u32 = 16;
/// Categories (`enum blktrace_cat`, before the shift).
const BLK_TC_WRITE: u32 = 1 << 1;
const BLK_TC_FLUSH: u32 = 1 << 2;
const BLK_TC_PC: u32 = 1 << 9;
const BLK_TC_NOTIFY: u32 = 1 << 10;
const BLK_TC_DISCARD: u32 = 1 << 13;
const BLK_TC_FUA: u32 = 1 << 15;
/// Action code of the issue (`D`) event (`__BLK_TA_ISSUE`).
const BLK_TA_ISSUE: u32 = 7;

/// Byte order of a blktrace file (the writer's native order).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Endian {
    Little,
    Big,
}

impl Endian {
    fn u16(self, b: &[u8]) -> u16 {
        let a = [b[0], b[1]];
        match self {
            Endian::Little => u16::from_le_bytes(a),
            Endian::Big => u16::from_be_bytes(a),
        }
    }

    fn u32(self, b: &[u8]) -> u32 {
        let a = [b[0], b[1], b[2], b[3]];
        match self {
            Endian::Little => u32::from_le_bytes(a),
            Endian::Big => u32::from_be_bytes(a),
        }
    }

    fn u64(self, b: &[u8]) -> u64 {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[..8]);
        match self {
            Endian::Little => u64::from_le_bytes(a),
            Endian::Big => u64::from_be_bytes(a),
        }
    }
}

/// The byte order in which `b` starts with the blktrace magic (any version).
pub(super) fn blk_endian(b: &[u8]) -> Option<Endian> {
    if b.len() < 4 {
        return None;
    }
    [Endian::Little, Endian::Big]
        .into_iter()
        .find(|e| e.u32(b) & 0xffff_ff00 == BLK_MAGIC)
}

/// `(stem, cpu)` of a per-CPU blktrace file name `STEM.blktrace.CPU`.
pub(super) fn blktrace_cpu_name(name: &str) -> Option<(&str, u64)> {
    let (stem, cpu) = name.rsplit_once(".blktrace.")?;
    if cpu.is_empty() || !cpu.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((stem, cpu.parse().ok()?))
}

/// Fill `buf` from `r`; fewer bytes only at the end of the input.
fn read_full<R: BufRead + ?Sized>(r: &mut R, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Skip up to `n` bytes of `r`; returns how many were there.
fn skip_bytes<R: BufRead + ?Sized>(r: &mut R, n: u64) -> std::io::Result<u64> {
    let mut left = n;
    while left > 0 {
        let avail = match r.fill_buf() {
            Ok(a) => a.len(),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if avail == 0 {
            break;
        }
        let k = avail.min(usize::try_from(left).unwrap_or(usize::MAX));
        r.consume(k);
        left -= k as u64;
    }
    Ok(n - left)
}

/// A kept event of one blktrace file, with its merge key.
struct BlkEvent {
    time_ns: u64,
    cpu: u32,
    sequence: u32,
    /// 1-based record index in its file, and the record's byte offset.
    record: usize,
    byte: u64,
    parsed: Parsed,
}

/// One blktrace file (one CPU's records).
pub(super) struct BlkFile {
    name: String,
    r: Box<dyn BufRead + Send>,
    /// From the first record's magic.
    endian: Option<Endian>,
    /// Records read so far: the 1-based index of the last one.
    record: usize,
    /// Byte offset of the last record read, and of the next one.
    start: u64,
    offset: u64,
}

impl BlkFile {
    pub(super) fn new(name: String, r: Box<dyn BufRead + Send>) -> BlkFile {
        BlkFile {
            name,
            r,
            endian: None,
            record: 0,
            start: 0,
            offset: 0,
        }
    }

    /// The next issue event that gives a request or an "other" operation;
    /// `Ok(None)` at the end of the file. On `Err`, `record` and `start`
    /// locate the bad record.
    fn next_event(&mut self) -> Result<Option<BlkEvent>, String> {
        let mut h = [0u8; BLK_HEADER_BYTES];
        loop {
            self.start = self.offset;
            let n = read_full(&mut *self.r, &mut h).map_err(|e| {
                self.record += 1;
                format!("read error: {e}")
            })?;
            if n == 0 {
                return Ok(None);
            }
            self.record += 1;
            if n < BLK_HEADER_BYTES {
                return Err(format!(
                    "truncated record: the file ends after {n} of its {BLK_HEADER_BYTES} header bytes"
                ));
            }
            self.offset += BLK_HEADER_BYTES as u64;
            let e = match self.endian {
                Some(e) => e,
                None => {
                    let e = blk_endian(&h).ok_or_else(|| not_blktrace(&h))?;
                    self.endian = Some(e);
                    e
                }
            };
            let magic = e.u32(&h[0..4]);
            if magic & 0xffff_ff00 != BLK_MAGIC {
                return Err(format!(
                    "bad magic 0x{magic:08x} (expected 0x{:08x}, {}-endian as in record 1); \
                     the file is corrupt or not a blktrace file",
                    BLK_MAGIC | BLK_VERSION,
                    if e == Endian::Little { "little" } else { "big" }
                ));
            }
            let version = magic & 0xff;
            if version != BLK_VERSION {
                return Err(format!(
                    "unsupported blktrace version {version} (only version {BLK_VERSION}, \
                     the 48-byte blk_io_trace record, is supported{})",
                    if version == 8 {
                        "; version 8 is the newer blk_io_trace2 layout"
                    } else {
                        ""
                    }
                ));
            }
            let sequence = e.u32(&h[4..8]);
            let time_ns = e.u64(&h[8..16]);
            let sector = e.u64(&h[16..24]);
            let bytes = e.u32(&h[24..28]);
            let action = e.u32(&h[28..32]);
            // pid at 32..36 is not used.
            let device = e.u32(&h[36..40]);
            let cpu = e.u32(&h[40..44]);
            // error at 44..46 is not used.
            let pdu_len = e.u16(&h[46..48]);
            let skipped = skip_bytes(&mut *self.r, u64::from(pdu_len))
                .map_err(|e| format!("read error in the payload: {e}"))?;
            if skipped < u64::from(pdu_len) {
                return Err(format!(
                    "the payload (pdu_len {pdu_len} bytes) runs past the end of the file \
                     ({skipped} bytes left)"
                ));
            }
            self.offset += u64::from(pdu_len);
            let Some(parsed) = blk_classify(time_ns, sector, bytes, action, device)? else {
                continue;
            };
            return Ok(Some(BlkEvent {
                time_ns,
                cpu,
                sequence,
                record: self.record,
                byte: self.start,
                parsed,
            }));
        }
    }
}

/// The error for a first record without the blktrace magic.
fn not_blktrace(h: &[u8]) -> String {
    let text = h[..4]
        .iter()
        .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace());
    format!(
        "not a blktrace file: it starts with {:02x} {:02x} {:02x} {:02x}, not the blktrace \
         magic 0x{:08x} in either byte order{}",
        h[0],
        h[1],
        h[2],
        h[3],
        BLK_MAGIC | BLK_VERSION,
        if text {
            " (this looks like text: blkparse output is the format 'blkparse')"
        } else {
            ""
        }
    )
}

/// What an event gives: `None` for events other than issue (`D`) events
/// and for notify/message records; like the blkparse text parser otherwise.
fn blk_classify(
    time_ns: u64,
    sector: u64,
    bytes: u32,
    action: u32,
    dev: u32,
) -> Result<Option<Parsed>, String> {
    let cat = action >> BLK_TC_SHIFT;
    if cat & BLK_TC_NOTIFY != 0 || action & 0xffff != BLK_TA_ISSUE {
        return Ok(None);
    }
    let raw = u128::from(time_ns) * 1000;
    // The kernel's dev_t: 12-bit major above a 20-bit minor.
    let device = format!("{},{}", dev >> 20, dev & 0xf_ffff);
    if cat & BLK_TC_PC != 0 {
        // SCSI pass-through: no block range.
        return Ok(Some(Parsed::Other { raw, device }));
    }
    // As blkparse's RWBS: a flush flag before (preflush) or after (FUA) the
    // operation; D (discard), else W (write), else R if there are bytes,
    // else N (no data).
    let flush = cat & (BLK_TC_FLUSH | BLK_TC_FUA) != 0;
    let discard = cat & BLK_TC_DISCARD != 0;
    let write = cat & BLK_TC_WRITE != 0;
    if bytes == 0 {
        if flush {
            return Ok(Some(Parsed::Io {
                raw,
                op: Op::Flush,
                offset: 0,
                len: 0,
                device,
            }));
        }
        if discard || write {
            // A discard or write without data (a zone reset, say): nothing
            // to replay.
            return Ok(Some(Parsed::Other { raw, device }));
        }
        // N: no data, no flush.
        return Ok(None);
    }
    let op = if discard {
        Op::Trim
    } else if write {
        Op::Write
    } else {
        Op::Read
    };
    let offset = sector.checked_mul(SECTOR).ok_or_else(|| {
        format!("sector {sector} is beyond the 64-bit byte range (sector * 512 overflows)")
    })?;
    Ok(Some(Parsed::Io {
        raw,
        op,
        offset,
        len: u64::from(bytes),
        device,
    }))
}

/// The per-CPU files of a blktrace, merged by time: a k-way merge that
/// holds one pending event per file.
pub(super) struct BlkMerge {
    files: Vec<BlkFile>,
    heads: Vec<Option<BlkEvent>>,
    /// Merge keys of the pending events: time, cpu, sequence, file index.
    heap: BinaryHeap<Reverse<(u64, u32, u32, usize)>>,
    /// Files whose next event must be read before the next merge step.
    refill: Vec<usize>,
    /// File index, record index and byte offset of the last event yielded
    /// or of the error.
    pub(super) at: (usize, usize, u64),
}

impl BlkMerge {
    pub(super) fn new(files: Vec<BlkFile>) -> BlkMerge {
        let n = files.len();
        BlkMerge {
            heads: (0..n).map(|_| None).collect(),
            heap: BinaryHeap::with_capacity(n),
            // Popped from the back: file 0 is read first.
            refill: (0..n).rev().collect(),
            files,
            at: (0, 0, 0),
        }
    }

    /// The next event in time order (ties by cpu, then sequence).
    pub(super) fn next_event(&mut self) -> Result<Option<Parsed>, String> {
        while let Some(i) = self.refill.pop() {
            let f = &mut self.files[i];
            match f.next_event() {
                Ok(Some(ev)) => {
                    self.heap
                        .push(Reverse((ev.time_ns, ev.cpu, ev.sequence, i)));
                    self.heads[i] = Some(ev);
                }
                Ok(None) => {}
                Err(m) => {
                    self.at = (i, f.record, f.start);
                    return Err(m);
                }
            }
        }
        let Some(Reverse((_, _, _, i))) = self.heap.pop() else {
            return Ok(None);
        };
        self.refill.push(i);
        let Some(ev) = self.heads[i].take() else {
            return Ok(None);
        };
        self.at = (i, ev.record, ev.byte);
        Ok(Some(ev.parsed))
    }

    pub(super) fn name(&self, i: usize) -> &str {
        self.files.get(i).map_or("", |f| f.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;
    use crate::workload::trace::testutil::{
        all, drain, first_err, first_err_of, reader, rec, temp_file, Rng, BLKPARSE,
    };
    use crate::workload::trace::{
        detect, stats, TraceFilter, TraceFormat, TraceReader, TraceRecord,
    };
    use std::io::Cursor;

    /// Categories and action codes used only by the tests (the reader's
    /// own constants are reused where they exist).
    const TC_READ: u32 = 1 << 0;
    const TC_SYNC: u32 = 1 << 3;
    const TC_QUEUE: u32 = 1 << 4;
    const TC_ISSUE: u32 = 1 << 6;
    const TC_COMPLETE: u32 = 1 << 7;
    const TC_AHEAD: u32 = 1 << 11;
    const TA_QUEUE: u32 = 1;
    const TA_GETRQ: u32 = 4;
    const TA_COMPLETE: u32 = 8;
    const TA_PLUG: u32 = 9;
    const TA_INSERT: u32 = 12;
    const TN_PROCESS: u32 = 0;
    const TN_MESSAGE: u32 = 2;

    /// `action` from an action code and categories.
    fn act(code: u32, cats: u32) -> u32 {
        code | (cats << BLK_TC_SHIFT)
    }

    /// The kernel's dev_t.
    fn dev(major: u32, minor: u32) -> u32 {
        (major << 20) | minor
    }

    /// One `struct blk_io_trace` with its payload.
    #[derive(Clone, Default)]
    struct Ev {
        magic: Option<u32>,
        seq: u32,
        time_ns: u64,
        sector: u64,
        bytes: u32,
        action: u32,
        pid: u32,
        dev: u32,
        cpu: u32,
        /// Overrides `pdu.len()` in the header when set.
        pdu_len: Option<u16>,
        pdu: Vec<u8>,
    }

    impl Ev {
        fn put(&self, out: &mut Vec<u8>, big: bool) {
            let w32 = |out: &mut Vec<u8>, v: u32| {
                out.extend_from_slice(&if big {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                })
            };
            let w64 = |out: &mut Vec<u8>, v: u64| {
                out.extend_from_slice(&if big {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                })
            };
            let w16 = |out: &mut Vec<u8>, v: u16| {
                out.extend_from_slice(&if big {
                    v.to_be_bytes()
                } else {
                    v.to_le_bytes()
                })
            };
            let start = out.len();
            w32(out, self.magic.unwrap_or(BLK_MAGIC | BLK_VERSION));
            w32(out, self.seq);
            w64(out, self.time_ns);
            w64(out, self.sector);
            w32(out, self.bytes);
            w32(out, self.action);
            w32(out, self.pid);
            w32(out, self.dev);
            w32(out, self.cpu);
            w16(out, 0);
            w16(out, self.pdu_len.unwrap_or(self.pdu.len() as u16));
            assert_eq!(out.len() - start, BLK_HEADER_BYTES);
            out.extend_from_slice(&self.pdu);
        }
    }

    /// An event on 8,0 with `sectors` 512-byte sectors.
    fn ev(cpu: u32, seq: u32, time_ns: u64, action: u32, sector: u64, sectors: u32) -> Ev {
        Ev {
            seq,
            time_ns,
            sector,
            bytes: sectors * 512,
            action,
            pid: 697,
            dev: dev(8, 0),
            cpu,
            ..Ev::default()
        }
    }

    fn blk_bytes(evs: &[Ev], big: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for e in evs {
            e.put(&mut out, big);
        }
        out
    }

    fn blk_reader(bytes: &[u8]) -> TraceReader {
        TraceReader::from_reader(
            Box::new(Cursor::new(bytes.to_vec())),
            "t.trace",
            TraceFormat::Blktrace,
        )
    }

    fn blk_all(bytes: &[u8]) -> Vec<TraceRecord> {
        blk_reader(bytes)
            .collect::<Result<Vec<_>, _>>()
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// The events of `BLKPARSE` as blktrace records, with the process-name
    /// and message records blkparse turns into text.
    fn blk_sample() -> Vec<Ev> {
        let issue = |cats| act(BLK_TA_ISSUE, cats | TC_ISSUE);
        vec![
            Ev {
                pdu: b"kjournald\0\0\0\0\0\0\0".to_vec(),
                ..ev(3, 0, 0, act(TN_PROCESS, BLK_TC_NOTIFY), 0, 0)
            },
            ev(3, 1, 0, act(TA_QUEUE, BLK_TC_WRITE | TC_QUEUE), 223490, 8),
            ev(
                3,
                2,
                1786,
                act(TA_GETRQ, BLK_TC_WRITE | TC_QUEUE),
                223490,
                8,
            ),
            ev(3, 3, 2718, act(TA_PLUG, TC_QUEUE), 0, 0),
            ev(
                3,
                4,
                5523,
                act(TA_INSERT, BLK_TC_WRITE | TC_QUEUE),
                223490,
                8,
            ),
            ev(3, 5, 9012, issue(BLK_TC_WRITE), 223490, 8),
            ev(
                0,
                1,
                12000,
                issue(BLK_TC_FLUSH | BLK_TC_WRITE | TC_SYNC),
                0,
                0,
            ),
            ev(1, 1, 11000, issue(TC_READ), 1024, 16),
            ev(
                3,
                6,
                3495302,
                act(TA_COMPLETE, BLK_TC_WRITE | TC_COMPLETE),
                223490,
                8,
            ),
            Ev {
                dev: dev(8, 16),
                ..ev(2, 1, 4_000_000, issue(TC_READ | TC_AHEAD), 2048, 256)
            },
            ev(
                2,
                2,
                5_000_000,
                issue(BLK_TC_DISCARD | BLK_TC_WRITE),
                4096,
                2048,
            ),
            Ev {
                pdu: b"cfq497 alloc\0".to_vec(),
                ..ev(0, 2, 6_000_000, act(TN_MESSAGE, BLK_TC_NOTIFY), 0, 0)
            },
            Ev {
                bytes: 36,
                pdu: vec![0x12, 0, 0, 0, 0x24, 0],
                ..ev(0, 3, 6_100_000, issue(TC_READ | BLK_TC_PC), 0, 0)
            },
        ]
    }

    #[test]
    fn blktrace_matches_blkparse_text() {
        let text = all(BLKPARSE, TraceFormat::Blkparse);
        let text_stats = stats(
            reader(BLKPARSE, TraceFormat::Blkparse),
            &TraceFilter::default(),
        )
        .unwrap();
        for big in [false, true] {
            let bytes = blk_bytes(&blk_sample(), big);
            let mut rd = blk_reader(&bytes);
            let r: Vec<TraceRecord> = rd.by_ref().map(|x| x.unwrap()).collect();
            assert_eq!(r, text, "big-endian {big}");
            // Spot checks: relative to the first D event (9.012 us); the
            // read 1 us before the flush is clamped; devices as MAJ,MIN.
            assert_eq!(r[0], rec(Time::ZERO, true, 223490 * 512, 4096, "8,0"));
            assert_eq!(r[1].op, Op::Flush);
            assert_eq!(r[2].time, Time::ns(12_000 - 9_012));
            assert_eq!(r[3].device, "8,16");
            assert_eq!(r[3].time, Time::ns(4_000_000 - 9_012));
            assert_eq!(
                (r[4].op, r[4].offset, r[4].len),
                (Op::Trim, 4096 * 512, 2048 * 512)
            );
            // The pass-through is "other"; Q/G/P/I/C and notify records are skipped.
            assert_eq!(rd.other_ops(), 1);
            assert_eq!(rd.line(), 13, "last record index");
            let st = stats(blk_reader(&bytes), &TraceFilter::default()).unwrap();
            assert_eq!(st.format, TraceFormat::Blktrace);
            assert_eq!(
                (st.records, st.reads, st.writes, st.trims, st.flushes, st.other),
                (5, 2, 1, 1, 1, 1)
            );
            let mut a = serde_json::to_value(&st).unwrap();
            let mut b = serde_json::to_value(&text_stats).unwrap();
            assert_eq!(a["format"], "blktrace");
            a["format"] = serde_json::Value::Null;
            b["format"] = serde_json::Value::Null;
            assert_eq!(a, b, "same statistics as the blkparse text");
            let st = stats(
                blk_reader(&bytes),
                &TraceFilter {
                    device: Some("8,16".into()),
                    ..TraceFilter::default()
                },
            )
            .unwrap();
            assert_eq!((st.records, st.reads, st.other), (1, 1, 0));
        }
    }

    #[test]
    fn blktrace_discards_flushes_and_devices() {
        let issue = |cats| act(BLK_TA_ISSUE, cats | TC_ISSUE);
        let evs = vec![
            ev(0, 1, 100_000, issue(BLK_TC_FLUSH), 0, 0), // FN
            ev(
                0,
                2,
                200_000,
                issue(BLK_TC_FLUSH | BLK_TC_WRITE | TC_SYNC),
                64,
                0,
            ), // FWS 64 + 0
            ev(
                0,
                3,
                300_000,
                issue(BLK_TC_FLUSH | BLK_TC_WRITE | TC_SYNC),
                64,
                8,
            ), // FWS 64 + 8
            ev(
                0,
                4,
                400_000,
                issue(BLK_TC_WRITE | BLK_TC_FUA | TC_SYNC),
                72,
                8,
            ), // WFS 72 + 8
            ev(
                0,
                5,
                500_000,
                issue(BLK_TC_DISCARD | BLK_TC_WRITE),
                1000,
                2048,
            ), // D
            ev(0, 6, 600_000, issue(BLK_TC_DISCARD | TC_SYNC), 0, 0), // DS, no range
            ev(
                0,
                7,
                700_000,
                act(TA_QUEUE, BLK_TC_DISCARD | TC_QUEUE),
                5000,
                8,
            ), // Q D
            ev(0, 8, 800_000, issue(0), 0, 0),            // N
            ev(0, 9, 900_000, issue(BLK_TC_WRITE), 9000, 0), // write without data
            Ev {
                dev: dev(259, 3),
                ..ev(0, 10, 1_000_000, issue(TC_READ), 8, 1)
            },
            Ev {
                dev: dev(4095, 0xf_ffff),
                ..ev(0, 11, 1_100_000, issue(0), 16, 1)
            },
        ];
        for big in [false, true] {
            let bytes = blk_bytes(&evs, big);
            let mut rd = blk_reader(&bytes);
            let r: Vec<TraceRecord> = rd.by_ref().map(|x| x.unwrap()).collect();
            let ops: Vec<(Op, u64, u64)> = r.iter().map(|x| (x.op, x.offset, x.len)).collect();
            assert_eq!(
                ops,
                vec![
                    (Op::Flush, 0, 0),
                    (Op::Flush, 0, 0),
                    // A preflush or FUA write with data is a write.
                    (Op::Write, 64 * 512, 4096),
                    (Op::Write, 72 * 512, 4096),
                    (Op::Trim, 1000 * 512, 2048 * 512),
                    // Neither write nor discard, with bytes: a read.
                    (Op::Read, 8 * 512, 512),
                    (Op::Read, 16 * 512, 512),
                ]
            );
            assert_eq!(r[4].time, Time::us(400));
            assert_eq!(r[5].device, "259,3");
            assert_eq!(r[6].device, "4095,1048575");
            // The discard and the write without data are counted, not
            // replayed; the Q event and the N event are skipped.
            assert_eq!(rd.other_ops(), 2);
        }
    }

    /// A fresh directory under the temp dir.
    fn temp_dir(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("ssdlab-blk-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn blktrace_per_cpu_files_are_merged_by_time() {
        let d = temp_dir("merge");
        let issue = |cats| act(BLK_TA_ISSUE, cats | TC_ISSUE);
        let cpu = |c: u32, evs: Vec<Ev>| -> Vec<Ev> {
            evs.into_iter().map(|e| Ev { cpu: c, ..e }).collect()
        };
        let cpu0 = cpu(
            0,
            vec![
                Ev {
                    pdu: b"fio\0\0\0\0\0\0\0\0\0\0\0\0\0".to_vec(),
                    ..ev(0, 0, 0, act(TN_PROCESS, BLK_TC_NOTIFY), 0, 0)
                },
                ev(0, 1, 1000, issue(BLK_TC_WRITE), 10, 8),
                ev(0, 2, 3000, issue(TC_READ), 30, 8),
                ev(0, 3, 5000, issue(BLK_TC_WRITE), 50, 8),
            ],
        );
        let cpu1 = cpu(
            1,
            vec![
                ev(0, 1, 500, act(TA_QUEUE, TC_READ | TC_QUEUE), 20, 8),
                ev(0, 2, 2000, issue(TC_READ), 20, 8),
                // Same time as cpu 0's record: after it (cpu order).
                ev(0, 3, 5000, issue(BLK_TC_WRITE), 51, 8),
                ev(0, 4, 7000, issue(BLK_TC_DISCARD | BLK_TC_WRITE), 70, 8),
                ev(
                    0,
                    5,
                    7500,
                    act(TA_COMPLETE, BLK_TC_WRITE | TC_COMPLETE),
                    51,
                    8,
                ),
            ],
        );
        let cpu10 = cpu(10, vec![ev(0, 1, 4000, issue(BLK_TC_FLUSH), 0, 0)]);
        let write = |name: &str, bytes: &[u8]| std::fs::write(d.join(name), bytes).unwrap();
        // Each file in its own byte order (detected per file).
        write("sda.blktrace.0", &blk_bytes(&cpu0, false));
        write("sda.blktrace.1", &blk_bytes(&cpu1, true));
        write("sda.blktrace.2", b"");
        write("sda.blktrace.10", &blk_bytes(&cpu10, false));
        // Not siblings: another device, other suffixes, a directory.
        write("sdb.blktrace.0", &blk_bytes(&cpu0, false));
        write("sda.blktrace.0.bak", b"garbage");
        write("sda.blktrace.x", b"garbage");
        std::fs::create_dir_all(d.join("sda.blktrace.3")).unwrap();
        let expect: Vec<(u64, Op, u64)> = vec![
            (0, Op::Write, 10),
            (1000, Op::Read, 20),
            (2000, Op::Read, 30),
            (3000, Op::Flush, 0),
            (4000, Op::Write, 50),
            (4000, Op::Write, 51),
            (6000, Op::Trim, 70),
        ];
        let got = |r: TraceReader| -> Vec<(u64, Op, u64)> {
            r.map(|x| x.unwrap())
                .map(|x| {
                    assert_eq!(x.device, "8,0");
                    (x.time.as_ns(), x.op, x.offset / 512)
                })
                .collect()
        };
        for (name, fmt) in [
            ("sda.blktrace.1", None),
            ("sda.blktrace.0", Some(TraceFormat::Blktrace)),
            // Empty, detected by its name.
            ("sda.blktrace.2", None),
        ] {
            let r = TraceReader::open(&d.join(name), fmt).unwrap();
            assert_eq!(r.format(), TraceFormat::Blktrace);
            assert_eq!(got(r), expect, "{name}");
        }
        let st = stats(
            TraceReader::open(&d.join("sda.blktrace.0"), None).unwrap(),
            &TraceFilter::default(),
        )
        .unwrap();
        assert_eq!(
            (st.records, st.reads, st.writes, st.trims, st.flushes),
            (7, 2, 3, 1, 1)
        );
        assert_eq!(st.duration, Time::ns(6000));
        // Any other name: one file.
        write("one.bin", &blk_bytes(&cpu1, true));
        let r = TraceReader::open(&d.join("one.bin"), None).unwrap();
        assert_eq!(got(r).len(), 3);
        // A bad record in a sibling names that file, the record and its offset.
        let mut bad = blk_bytes(&cpu1, true);
        bad.truncate(2 * BLK_HEADER_BYTES + 10);
        write("sda.blktrace.1", &bad);
        let mut r = TraceReader::open(&d.join("sda.blktrace.0"), None).unwrap();
        let e = loop {
            match r.next() {
                Some(Ok(_)) => continue,
                Some(Err(e)) => break e,
                None => panic!("no error"),
            }
        };
        assert!(e.file.ends_with("sda.blktrace.1"), "{e}");
        assert_eq!(e.line, 3);
        assert!(
            e.message
                .starts_with("record 3 at byte 96: truncated record: the file ends after 10"),
            "{e}"
        );
        assert!(r.next().is_none());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn blktrace_errors_name_record_and_byte() {
        let issue = |cats| act(BLK_TA_ISSUE, cats | TC_ISSUE);
        let name = Ev {
            pdu: vec![b'x'; 16],
            ..ev(0, 0, 0, act(TN_PROCESS, BLK_TC_NOTIFY), 0, 0)
        };
        let w = |t: u64, s: u64| ev(0, 1, t, issue(BLK_TC_WRITE), s, 8);
        // Truncated header: the third record has 28 of its 48 bytes.
        let mut b = blk_bytes(&[w(1000, 8), w(2000, 16), w(3000, 24)], false);
        b.truncate(b.len() - 20);
        let mut r = blk_reader(&b);
        assert!(r.next().unwrap().is_ok());
        assert!(r.next().unwrap().is_ok());
        let e = first_err_of(r);
        assert_eq!(
            e.to_string(),
            "t.trace:3: record 3 at byte 96: truncated record: the file ends after 28 of \
             its 48 header bytes"
        );
        // Bad magic in the middle (after a record with a 16-byte payload).
        let mut b = blk_bytes(&[name.clone(), w(1000, 8)], false);
        b[64..68].copy_from_slice(&0xdead_beef_u32.to_le_bytes());
        let e = first_err_of(blk_reader(&b));
        assert_eq!(e.line, 2);
        assert!(
            e.message
                .starts_with("record 2 at byte 64: bad magic 0xdeadbeef (expected 0x65617407"),
            "{e}"
        );
        // A record in the other byte order is a bad magic too.
        let mut b = blk_bytes(&[w(1000, 8)], false);
        w(2000, 16).put(&mut b, true);
        let e = first_err_of(blk_reader(&b));
        assert!(e.message.contains("record 2 at byte 48: bad magic"), "{e}");
        // A payload running past the end of the file.
        let mut b = blk_bytes(&[w(1000, 8)], true);
        Ev {
            pdu_len: Some(100),
            pdu: vec![0; 10],
            ..name.clone()
        }
        .put(&mut b, true);
        let e = first_err_of(blk_reader(&b));
        assert_eq!(e.line, 2);
        assert!(
            e.message
                .starts_with("record 2 at byte 48: the payload (pdu_len 100 bytes)")
                && e.message
                    .contains("runs past the end of the file (10 bytes left)"),
            "{e}"
        );
        // Time going backwards: 0.5 ms is clamped, 2 ms is an error.
        let b = blk_bytes(&[w(10_000_000, 8), w(9_500_000, 16)], false);
        assert_eq!(blk_all(&b)[1].time, Time::ZERO);
        let b = blk_bytes(&[name.clone(), w(10_000_000, 8), w(8_000_000, 16)], false);
        let e = first_err_of(blk_reader(&b));
        assert_eq!(e.line, 3);
        assert!(
            e.message.starts_with(
                "record 3 at byte 112: time goes backwards by 0.002s (previous record at \
                 record 2 of t.trace)"
            ) && e.message.contains("blktrace: up to 1 ms"),
            "{e}"
        );
        // Another version; not a blktrace file; a sector beyond 64 bits.
        let b = blk_bytes(
            &[Ev {
                magic: Some(BLK_MAGIC | 8),
                ..w(0, 8)
            }],
            false,
        );
        let e = first_err_of(blk_reader(&b));
        assert!(
            e.message
                .starts_with("record 1 at byte 0: unsupported blktrace version 8")
                && e.message.contains("blk_io_trace2"),
            "{e}"
        );
        let e = first_err_of(blk_reader(BLKPARSE.as_bytes()));
        assert_eq!(e.line, 1);
        assert!(
            e.message
                .starts_with("record 1 at byte 0: not a blktrace file")
                && e.message.contains("format 'blkparse'"),
            "{e}"
        );
        let e = first_err_of(blk_reader(&blk_bytes(&[w(0, u64::MAX / 256)], false)));
        assert!(e.message.contains("sector * 512 overflows"), "{e}");
        // A binary file read as blkparse text says what it is.
        let e = first_err(
            &String::from_utf8_lossy(&blk_bytes(&[w(0, 8)], false)),
            TraceFormat::Blkparse,
        );
        assert_eq!(e.line, 1);
        // (lossy conversion keeps the ASCII magic bytes 07 74 61 65.)
        assert!(e.message.contains("binary blktrace file"), "{e}");
        // Empty input: no records, no error.
        assert!(blk_all(b"").is_empty());
    }

    #[test]
    fn blktrace_is_detected_and_named() {
        assert_eq!(
            "blktrace".parse::<TraceFormat>().unwrap(),
            TraceFormat::Blktrace
        );
        assert_eq!(
            " BlkTrace ".parse::<TraceFormat>().unwrap(),
            TraceFormat::Blktrace
        );
        assert_eq!(
            "blkparse".parse::<TraceFormat>().unwrap(),
            TraceFormat::Blkparse
        );
        assert_eq!(TraceFormat::Blktrace.to_string(), "blktrace");
        for big in [false, true] {
            let bytes = blk_bytes(&blk_sample(), big);
            let path = temp_file(&format!("blk-{big}"), &bytes);
            let r = TraceReader::open(&path, None).unwrap();
            assert_eq!(r.format(), TraceFormat::Blktrace);
            let recs: Vec<_> = r.map(|x| x.unwrap()).collect();
            assert_eq!(recs, all(BLKPARSE, TraceFormat::Blkparse));
            // Forcing a text format on it gives a pointed error.
            let e = TraceReader::open(&path, Some(TraceFormat::Blkparse))
                .unwrap()
                .find_map(|x| x.err())
                .unwrap();
            assert!(e.message.contains("read it as format 'blktrace'"), "{e}");
            let _ = std::fs::remove_file(path);
        }
        // Text detection never picks the binary format, but lists it.
        let e = detect("x", &["hello"]).unwrap_err();
        assert!(
            e.message
                .contains("rejected: binary format, recognised by its magic"),
            "{e}"
        );
        fn send<T: Send>() {}
        send::<TraceReader>();
    }

    /// Read `bytes` as blktrace to the end (or the first error).
    fn drain_blk(bytes: &[u8]) {
        let mut r = blk_reader(bytes);
        let mut n = 0;
        while let Some(x) = r.next() {
            n += 1;
            assert!(n < 100_000);
            if x.is_err() {
                assert!(r.next().is_none());
                break;
            }
        }
        let _ = stats(blk_reader(bytes), &TraceFilter::default());
    }

    #[test]
    fn fuzz_blktrace_never_panics() {
        let mut rng = Rng(0xb10c);
        let bases = [
            blk_bytes(&blk_sample(), false),
            blk_bytes(&blk_sample(), true),
        ];
        for i in 0..3000 {
            let mut b = bases[i % 2].clone();
            for _ in 0..=rng.below(4) {
                let at = rng.below(b.len() as u64 + 1) as usize;
                match rng.below(6) {
                    0 if at < b.len() => b[at] = rng.next() as u8,
                    1 => b.truncate(at),
                    2 => {
                        let k = rng.below(64) as usize;
                        let junk: Vec<u8> = (0..k).map(|_| rng.next() as u8).collect();
                        b.splice(at..at, junk);
                    }
                    3 if at < b.len() => {
                        // Set a pdu_len or action field of some record.
                        let rec = at / BLK_HEADER_BYTES * BLK_HEADER_BYTES;
                        let field = if rng.below(2) == 0 { 46 } else { 28 };
                        if rec + field + 2 <= b.len() {
                            b[rec + field] = rng.next() as u8;
                            b[rec + field + 1] = rng.next() as u8;
                        }
                    }
                    4 if at < b.len() => {
                        let copy = b[at..].to_vec();
                        b.extend_from_slice(&copy);
                    }
                    _ => b.clear(),
                }
            }
            drain_blk(&b);
        }
        // Well-formed headers with random contents.
        for _ in 0..2000 {
            let big = rng.below(2) == 0;
            let mut b = Vec::new();
            for _ in 0..=rng.below(8) {
                let pdu = rng.below(40) as usize;
                Ev {
                    seq: rng.next() as u32,
                    time_ns: if rng.below(2) == 0 {
                        rng.next()
                    } else {
                        rng.below(10_000_000)
                    },
                    sector: if rng.below(4) == 0 {
                        rng.next()
                    } else {
                        rng.below(1 << 30)
                    },
                    bytes: rng.next() as u32 >> rng.below(32),
                    action: act(
                        rng.below(20) as u32,
                        rng.next() as u32 & 0xffff & !(rng.next() as u32),
                    ),
                    pid: rng.next() as u32,
                    dev: rng.next() as u32,
                    cpu: rng.below(4) as u32,
                    pdu_len: None,
                    pdu: (0..pdu).map(|_| rng.next() as u8).collect(),
                    magic: None,
                }
                .put(&mut b, big);
            }
            drain_blk(&b);
            drain(&b);
        }
    }
}
