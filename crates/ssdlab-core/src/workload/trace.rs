//! Block-trace input: streaming parsers for public block I/O trace formats.
//!
//! A [`TraceReader`] turns a text trace into [`TraceRecord`]s one line at a
//! time, in constant memory (one line buffer of at most 64 KiB, a few
//! counters): a 100-million-line trace streams. Binary `blktrace` files
//! stream too, one record at a time (with one pending record per merged
//! per-CPU file). Every malformed line stops
//! the reader with a [`TraceError`] naming the file and the 1-based line
//! (for blktrace: the 1-based record index, with the record's byte offset
//! in the message); after an error the reader yields nothing more. Nothing
//! panics on any input.
//!
//! # Formats
//!
//! | [`TraceFormat`] | name | line layout | units |
//! | --- | --- | --- | --- |
//! | [`Msr`](TraceFormat::Msr) | `msr` | `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime` | Windows FILETIME (100 ns ticks), `Read`/`Write`, bytes; device `Hostname_DiskNumber` |
//! | [`Spc`](TraceFormat::Spc) | `spc` | `ASU,LBA,Size,Opcode,Timestamp[,...]` | 512 B sectors, bytes, `r`/`w`, seconds; device = ASU |
//! | [`Blkparse`](TraceFormat::Blkparse) | `blkparse` | `MAJ,MIN CPU SEQ TIME PID ACTION RWBS SECTOR + COUNT [COMM]` | seconds, 512 B sectors; device `MAJ,MIN` |
//! | [`Blktrace`](TraceFormat::Blktrace) | `blktrace` | binary: 48-byte `blk_io_trace` records, each followed by `pdu_len` payload bytes | ns, 512 B sectors, bytes; device `MAJ,MIN` |
//! | [`DiskSim`](TraceFormat::DiskSim) | `disksim` | `TIME DEVICE LBA SECTORS TYPE` | ms (see [`TraceReader::with_disksim_time_unit`]), 512 B sectors, `0` write / `1` read |
//! | [`Alibaba`](TraceFormat::Alibaba) | `alibaba` | `device_id,opcode,offset,length,timestamp` | `R`/`W`, bytes, µs |
//! | [`Tencent`](TraceFormat::Tencent) | `tencent` | `Timestamp,Offset,Size,IOType,VolumeID` | seconds, 512 B sectors, `0` read / `1` write |
//! | [`FioIolog`](TraceFormat::FioIolog) | `iolog` | v3: `fio version 3 iolog`, then `TIME FILENAME ACTION [OFFSET LENGTH]`; v2: `fio version 2 iolog`, then `FILENAME ACTION [OFFSET LENGTH]` | ms (v3), bytes; device = file name |
//!
//! Common rules:
//!
//! * Text formats: blank lines and lines whose first non-blank character
//!   is `#` are skipped. A UTF-8 byte-order mark and `\r\n` line ends are
//!   accepted.
//! * For the column formats (`msr`, `spc`, `disksim`, `alibaba`,
//!   `tencent`) the first data line is skipped if it is a header: the
//!   format's number of fields, each a name starting with a letter.
//! * Every format has reads and writes; `blkparse`, `blktrace` and `iolog`
//!   also have trims ([`Op::Trim`], with a range) and flushes
//!   ([`Op::Flush`], offset and length 0), which are yielded as records
//!   too. None of the other formats documents a discard or flush type.
//! * Times are made relative to the first record of the file (or the
//!   first operation counted as "other", see below). Records must be
//!   in non-decreasing time order; a record earlier than its predecessor is
//!   an error naming its line. The exception is `blkparse` and `blktrace`,
//!   whose events are logged per CPU and can be slightly out of order: a
//!   record up to 1 ms earlier than its predecessor is accepted and clamped
//!   to the predecessor's time; more than 1 ms is an error.
//! * A zero-length read, write or trim is an error, and so is one longer
//!   than 4 GiB (blktrace itself records at most 4 GiB - 1) or one whose
//!   end overflows 64 bits. Flushes have no range.
//! * Numbers are parsed exactly (decimal fractions are converted to whole
//!   picoseconds, rounded to nearest, without going through `f64`); an
//!   exponent such as `1.5e-3` is accepted in time fields.
//!
//! Format-specific rules:
//!
//! * `blkparse`: only `D` (issue to driver) events are used. Lines that do
//!   not start with a digit are text (the per-CPU and total summaries) and
//!   are skipped; a line that starts with a digit must be a well-formed event
//!   (`MAJ,MIN CPU SEQ TIME PID ACTION RWBS ...`). Other actions (`Q`, `G`,
//!   `I`, `C`, `m`, ...) are checked and skipped. The RWBS field is read
//!   as blkparse writes it: an optional `F` (flush before the request),
//!   one of `D` (discard), `W`, `R` or `N` (no data), then modifiers
//!   (`F` for FUA, `A`, `S`, `M`). A `D` event with `R` or `W` must be
//!   followed by `SECTOR + COUNT`, which gives a read or a write; a discard
//!   (`D`) with `SECTOR + COUNT` gives a trim of that range. A flush (`F`
//!   in RWBS) without data gives an [`Op::Flush`] record: `FN`, or `FWS`
//!   with no sector or a count of 0 (blkparse prints the range only when
//!   there are sectors). A write with a flush flag and data (`FWS 8 + 8`,
//!   `WFS`) is a write. Operations with nothing to replay are skipped and
//!   counted as "other" ([`TraceReader::other_ops`], [`TraceStats::other`]):
//!   SCSI pass-through requests (`BYTES (CDB) [COMM]`) and discards without
//!   a sector range; `N` events without `F` are skipped.
//! * `blktrace`: the binary files `blktrace` writes (`NAME.blktrace.CPU`,
//!   one per CPU), read without `blkparse`. Each record is a 48-byte
//!   header (`struct blk_io_trace`: `magic u32, sequence u32, time u64
//!   (ns), sector u64, bytes u32, action u32, pid u32, device u32, cpu
//!   u32, error u16, pdu_len u16`) followed by `pdu_len` payload bytes,
//!   which are skipped. The magic is `0x65617400 | version`; version 7 is
//!   read (another version is an error). The file is in the byte order of
//!   the machine that wrote it: it is taken from the first record's magic
//!   (little- or big-endian), and every record must have the same magic.
//!   The low 16 bits of `action` are the action code, the upper 16 the
//!   categories (`BLK_TC_*`). As for `blkparse`, only issue events
//!   (`__BLK_TA_ISSUE` = 7, the `D` event) are used; other actions and
//!   notify records (category `BLK_TC_NOTIFY`: process names, timestamps,
//!   messages) are skipped. The operation follows blkparse's RWBS rules:
//!   discard category (`BLK_TC_DISCARD`) gives a trim, else write
//!   (`BLK_TC_WRITE`) a write, else a read if `bytes` > 0; an event with
//!   no bytes and a flush flag (`BLK_TC_FLUSH` or `BLK_TC_FUA`) is a
//!   flush, one without a flag is skipped if it is neither a write nor a
//!   discard and counted as "other" otherwise; a write with data and a
//!   flush/FUA flag stays a write. SCSI pass-through (`BLK_TC_PC`) issues
//!   are "other". The device is `MAJ,MIN` from the kernel's 32-bit `dev_t`
//!   (major = `device >> 20`, minor = `device & 0xfffff`), as blkparse
//!   prints it, so device filters match both forms. Given a file named
//!   `NAME.blktrace.CPU`, [`TraceReader::open`] also opens every regular
//!   file `NAME.blktrace.<digits>` in the same directory and merges them by
//!   time (a streaming k-way merge holding one record per file; ties by
//!   the records' `cpu`, then `sequence`). Any other name is read as a
//!   single file; so is the stream of [`TraceReader::from_reader`]. A
//!   single stream of interleaved CPUs (`blktrace -o -`) is not re-sorted:
//!   it fails if it goes back in time by more than 1 ms. Errors give the
//!   per-CPU file, the record index (as the line) and the byte offset:
//!   truncated record or payload, bad magic, unsupported version, time
//!   going backwards.
//! * `iolog`: versions 2 and 3, as fio's HOWTO ("Trace file format")
//!   describes them. Version 3 lines start with a timestamp in
//!   milliseconds. `add`/`open`/`close` lines (`FILENAME ACTION`) are
//!   checked and skipped; `read`/`write`/`trim` take `OFFSET LENGTH`;
//!   `sync`/`datasync` give a flush, with or without the `OFFSET LENGTH`
//!   fields fio writes for them (which are then checked and ignored).
//!   Version 2 has no timestamps: records are timed by a replay clock
//!   that starts at 0 and that `FILENAME wait USEC [LENGTH]` advances by
//!   `USEC` microseconds (fio: the wait is relative to the previous wait,
//!   and one below 100 us is discarded, so it does not move the clock).
//!   A v2 log without `wait` lines has every record at time 0 (replay it
//!   closed loop, or open loop as a burst). As for every format, times are
//!   relative to the first record, so a `wait` before it is not kept.
//!   `wait` in a v3 log and unknown actions are errors.
//! * `disksim`: the DiskSim ASCII format has times in milliseconds. MQSim
//!   reads the same layout with a configurable time unit (usually
//!   nanoseconds, as integers); use
//!   [`TraceReader::with_disksim_time_unit`] for such files.
//!
//! [`TraceReader::open`] detects the format when none is given: a binary
//! blktrace file from its magic number, a text format from the first data
//! lines ([`detect`]); compressed files (gzip, xz, zstd, bzip2) are
//! rejected with a hint to decompress them first.
//!
//! [`stats`] summarises a trace (mix, sizes, footprint, inter-arrival times)
//! in bounded memory; [`TraceFilter`] selects a device and a time window, and
//! [`Remap`] maps trace offsets onto a smaller simulated drive.

use super::Op;
use crate::units::Time;
use hdrhistogram::Histogram;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Bytes per sector in the sector-addressed formats.
const SECTOR: u64 = 512;
/// Longest accepted line, in bytes (bounds the reader's memory).
pub const MAX_LINE_BYTES: usize = 64 * 1024;
/// Largest accepted request, in bytes (4 GiB).
pub const MAX_REQUEST_BYTES: u64 = 1 << 32;
/// How far (in picoseconds) a blkparse record may go back in time: 1 ms.
const BLKPARSE_REORDER_PS: u128 = 1_000_000_000;
/// Data lines [`TraceReader::open`] gives to [`detect`].
const DETECT_LINES: usize = 16;
/// Bytes [`TraceReader::open`] reads ahead to detect the format.
const DETECT_BYTES: usize = 64 * 1024;
/// Block size used by the footprint count.
const FOOTPRINT_BLOCK: u64 = 4096;
/// Address range (bytes) up to which the footprint is counted exactly: 1 TiB,
/// that is a bitmap of at most 2^28 bits = 32 MiB.
pub const FOOTPRINT_EXACT_LIMIT_BYTES: u64 = 1 << 40;

// ---------------------------------------------------------------------------
// Formats

/// A block-trace format (text, or binary for [`Blktrace`](TraceFormat::Blktrace)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceFormat {
    /// Raw binary `blktrace` output (`NAME.blktrace.CPU` files, before
    /// `blkparse`): `struct blk_io_trace` records, version 7, in either
    /// byte order. [`TraceReader::open`] on `NAME.blktrace.N` reads every
    /// sibling `NAME.blktrace.<digits>` file of the directory too and merges
    /// them by time (streaming; ties by cpu, then sequence number).
    Blktrace,
    /// MSR Cambridge CSV: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// SNIA SPC / UMass CSV (Financial, WebSearch): `ASU,LBA,Size,Opcode,Timestamp[,...]`.
    Spc,
    /// Default text output of `blkparse` (blktrace).
    Blkparse,
    /// DiskSim / MQSim ASCII: `TIME DEVICE LBA SECTORS TYPE`.
    DiskSim,
    /// Alibaba block traces (2020) CSV: `device_id,opcode,offset,length,timestamp`.
    Alibaba,
    /// Tencent CBS CSV: `Timestamp,Offset,Size,IOType,VolumeID`.
    Tencent,
    /// fio I/O log, version 2 or 3 (`fio version 2 iolog`, `fio version 3 iolog`).
    FioIolog,
}

impl TraceFormat {
    /// Every format, in the order [`TraceReader::open`] tries them: the
    /// binary `blktrace` (by its magic number) first, then the text formats
    /// in the order [`detect`] tries them.
    pub const ALL: [TraceFormat; 8] = [
        TraceFormat::Blktrace,
        TraceFormat::Msr,
        TraceFormat::Alibaba,
        TraceFormat::Tencent,
        TraceFormat::Spc,
        TraceFormat::DiskSim,
        TraceFormat::Blkparse,
        TraceFormat::FioIolog,
    ];

    /// The short name accepted by [`FromStr`]: `blktrace`, `msr`, `spc`,
    /// `blkparse`, `disksim`, `alibaba`, `tencent` or `iolog`.
    pub fn name(self) -> &'static str {
        match self {
            TraceFormat::Blktrace => "blktrace",
            TraceFormat::Msr => "msr",
            TraceFormat::Spc => "spc",
            TraceFormat::Blkparse => "blkparse",
            TraceFormat::DiskSim => "disksim",
            TraceFormat::Alibaba => "alibaba",
            TraceFormat::Tencent => "tencent",
            TraceFormat::FioIolog => "iolog",
        }
    }

    /// A one-line description with the expected line layout.
    pub fn description(self) -> &'static str {
        match self {
            TraceFormat::Blktrace => {
                "blktrace binary (NAME.blktrace.CPU, before blkparse): 48-byte blk_io_trace \
                 records, version 7, either byte order; per-CPU files merged by time"
            }
            TraceFormat::Msr => {
                "MSR Cambridge CSV: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"
            }
            TraceFormat::Spc => "SNIA SPC/UMass CSV: ASU,LBA,Size,Opcode,Timestamp[,...]",
            TraceFormat::Blkparse => {
                "blkparse text: MAJ,MIN CPU SEQ TIME PID ACTION RWBS SECTOR + COUNT [COMM]"
            }
            TraceFormat::DiskSim => "DiskSim/MQSim ASCII: TIME DEVICE LBA SECTORS TYPE",
            TraceFormat::Alibaba => "Alibaba 2020 CSV: device_id,opcode,offset,length,timestamp",
            TraceFormat::Tencent => "Tencent CBS CSV: Timestamp,Offset,Size,IOType,VolumeID",
            TraceFormat::FioIolog => {
                "fio iolog: 'fio version 3 iolog', then TIME FILENAME ACTION [OFFSET LENGTH] \
                 (v2: 'fio version 2 iolog', then FILENAME ACTION [OFFSET LENGTH])"
            }
        }
    }

    /// Whether the format is a table whose first line may be a header.
    fn has_columns(self) -> bool {
        !matches!(
            self,
            TraceFormat::Blkparse | TraceFormat::FioIolog | TraceFormat::Blktrace
        )
    }

    /// Whether records may be slightly out of time order (per-CPU logs).
    fn reorders(self) -> bool {
        matches!(self, TraceFormat::Blkparse | TraceFormat::Blktrace)
    }

    fn names_list() -> String {
        TraceFormat::ALL
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TraceFormat {
    type Err = String;

    /// Parse a format name (case-insensitive); `mqsim` is accepted for
    /// `disksim`, `umass` for `spc`, `fio-iolog`/`fio` for `iolog`.
    /// `blktrace` is the binary format ([`TraceFormat::Blktrace`]); the text
    /// that `blkparse` prints from it is `blkparse`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        Ok(match t.as_str() {
            "msr" => TraceFormat::Msr,
            "spc" | "umass" => TraceFormat::Spc,
            "blktrace" => TraceFormat::Blktrace,
            "blkparse" => TraceFormat::Blkparse,
            "disksim" | "mqsim" => TraceFormat::DiskSim,
            "alibaba" => TraceFormat::Alibaba,
            "tencent" => TraceFormat::Tencent,
            "iolog" | "fio-iolog" | "fio" => TraceFormat::FioIolog,
            _ => {
                return Err(format!(
                    "unknown trace format '{s}'; expected one of: {}",
                    TraceFormat::names_list()
                ))
            }
        })
    }
}

// ---------------------------------------------------------------------------
// Records and errors

/// One request of a trace: a read, write, trim or flush.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceRecord {
    /// Arrival time since the first record of the file.
    pub time: Time,
    /// What the request does (read, write; trim and flush where the format has them).
    pub op: super::Op,
    /// Start offset in bytes (0 for a flush).
    pub offset: u64,
    /// Length in bytes: never 0, except for [`Op::Flush`],
    /// which has no range (offset and length 0).
    pub len: u64,
    /// Volume or disk id as written in the trace (`Hostname_DiskNumber` for
    /// MSR, `MAJ,MIN` for blkparse and blktrace, the file name for iolog).
    pub device: String,
}

/// A trace input error naming the file and the 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceError {
    /// File name (as given to the reader).
    pub file: String,
    /// 1-based line number (0 if the error is not tied to a line); for a
    /// binary blktrace file, the 1-based record index in `file` (the
    /// message then starts with `record N at byte B:`).
    pub line: usize,
    /// What is wrong and what was expected.
    pub message: String,
}

impl From<TraceError> for super::WorkloadError {
    /// A trace problem as a workload error (file and line kept, no option).
    fn from(e: TraceError) -> Self {
        super::WorkloadError {
            file: e.file,
            line: e.line,
            option: None,
            message: e.message,
        }
    }
}

impl fmt::Display for TraceError {
    /// `file:line: message`, or `file: message` when `line` is 0.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        } else {
            write!(f, "{}: {}", self.file, self.message)
        }
    }
}

impl std::error::Error for TraceError {}

fn error(file: &str, line: usize, message: impl Into<String>) -> TraceError {
    TraceError {
        file: file.to_string(),
        line,
        message: message.into(),
    }
}

// ---------------------------------------------------------------------------
// Field parsing helpers

/// `s` for an error message: at most 40 characters.
fn show(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
}

/// A non-negative decimal integer.
fn int(s: &str, what: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Err(format!("{what} is empty"));
    }
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "{what} '{}' is not a non-negative integer",
            show(s)
        ));
    }
    s.parse::<u64>()
        .map_err(|_| format!("{what} '{}' is too large", show(s)))
}

/// A count of 512-byte sectors, in bytes.
fn sectors(s: &str, what: &str) -> Result<u64, String> {
    let v = int(s, what)?;
    v.checked_mul(SECTOR)
        .ok_or_else(|| format!("{what} {v} sectors does not fit in a 64-bit byte count"))
}

/// Parse a non-negative decimal number (`12`, `0.25`, `.5`, `1.5e-3`) and
/// return `value * 10^unit_exp`, rounded to the nearest integer, exactly
/// (no floating point). `None` if malformed or too large for `u128`.
fn parse_decimal(s: &str, unit_exp: i32) -> Option<u128> {
    const CAP: u128 = 1_000_000_000_000_000_000_000_000_000_000_000_000; // 1e36
    let b = s.as_bytes();
    let mut i = 0;
    let mut mant: u128 = 0;
    let mut exp: i64 = 0;
    let mut any = false;
    while i < b.len() && b[i].is_ascii_digit() {
        if mant < CAP {
            mant = mant * 10 + u128::from(b[i] - b'0');
        } else {
            exp += 1;
        }
        any = true;
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            if mant < CAP {
                mant = mant * 10 + u128::from(b[i] - b'0');
                exp -= 1;
            }
            any = true;
            i += 1;
        }
    }
    if !any {
        return None;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        let neg = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let start = i;
        let mut e: i64 = 0;
        while i < b.len() && b[i].is_ascii_digit() {
            e = (e * 10 + i64::from(b[i] - b'0')).min(100_000);
            i += 1;
        }
        if i == start {
            return None;
        }
        exp += if neg { -e } else { e };
    }
    if i != b.len() {
        return None;
    }
    let scale = exp + i64::from(unit_exp);
    if mant == 0 {
        return Some(0);
    }
    if scale >= 0 {
        if scale > 38 {
            return None;
        }
        mant.checked_mul(10u128.pow(scale as u32))
    } else {
        let d = -scale;
        if d > 38 {
            return Some(0);
        }
        let p = 10u128.pow(d as u32);
        Some((mant + p / 2) / p)
    }
}

/// A time field with unit `10^unit_exp` picoseconds, in picoseconds.
fn time_field(s: &str, what: &str, unit_exp: i32) -> Result<u128, String> {
    if s.is_empty() {
        return Err(format!("{what} is empty"));
    }
    parse_decimal(s, unit_exp).ok_or_else(|| {
        format!(
            "{what} '{}' is not a non-negative number (or is too large)",
            show(s)
        )
    })
}

/// Split on commas, trimming each field; fills `out` and returns the count
/// of fields (which may exceed `out.len()`).
fn split_csv<'a>(line: &'a str, out: &mut [&'a str]) -> usize {
    let mut n = 0;
    for f in line.split(',') {
        if let Some(slot) = out.get_mut(n) {
            *slot = f.trim();
        }
        n += 1;
    }
    n
}

/// Split on ASCII white space; as [`split_csv`].
fn split_ws<'a>(line: &'a str, out: &mut [&'a str]) -> usize {
    let mut n = 0;
    for f in line.split_ascii_whitespace() {
        if let Some(slot) = out.get_mut(n) {
            *slot = f;
        }
        n += 1;
    }
    n
}

/// A non-empty identifier field (device, host...).
fn ident<'a>(s: &'a str, what: &str) -> Result<&'a str, String> {
    if s.is_empty() {
        Err(format!("{what} is empty"))
    } else {
        Ok(s)
    }
}

// ---------------------------------------------------------------------------
// Per-line parsers

/// What one data line holds.
enum Parsed {
    /// A read, write, trim or flush (offset and len 0); `raw` is the
    /// absolute time in picoseconds.
    Io {
        raw: u128,
        op: Op,
        offset: u64,
        len: u64,
        device: String,
    },
    /// An operation with nothing to replay (SCSI pass-through, discard
    /// without a range): counted, not simulated.
    Other { raw: u128, device: String },
    /// A recognised line that carries no request (iolog header, `open`,
    /// blkparse events other than `D`...).
    Skip,
    /// Text that is not trace data (blkparse summaries).
    Ignore,
}

/// Parser state carried across lines.
struct FormatState {
    /// iolog: the version from the header line (2 or 3); 0 before it.
    iolog_version: u8,
    /// iolog v2: the replay clock in picoseconds, advanced by `wait`.
    iolog_clock_ps: u128,
    /// DiskSim: picoseconds per unit of the TIME column.
    disksim_unit_ps: u64,
}

fn parse_line(fmt: TraceFormat, line: &str, st: &mut FormatState) -> Result<Parsed, String> {
    match fmt {
        TraceFormat::Msr => parse_msr(line),
        TraceFormat::Spc => parse_spc(line),
        TraceFormat::Blkparse => parse_blkparse(line),
        TraceFormat::DiskSim => parse_disksim(line, st.disksim_unit_ps),
        TraceFormat::Alibaba => parse_alibaba(line),
        TraceFormat::Tencent => parse_tencent(line),
        TraceFormat::FioIolog => parse_iolog(line, st),
        // Never reached: a blktrace reader has a binary source, not lines.
        TraceFormat::Blktrace => Err("blktrace is a binary format, not text lines".to_string()),
    }
}

fn parse_msr(line: &str) -> Result<Parsed, String> {
    let mut f = [""; 7];
    let n = split_csv(line, &mut f);
    if n != 7 {
        return Err(format!(
            "msr: expected 7 comma-separated fields \
             (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found {n}"
        ));
    }
    let ticks = int(f[0], "Timestamp")?;
    let host = ident(f[1], "Hostname")?;
    let disk = ident(f[2], "DiskNumber")?;
    let op = if f[3].eq_ignore_ascii_case("write") {
        Op::Write
    } else if f[3].eq_ignore_ascii_case("read") {
        Op::Read
    } else {
        return Err(format!("Type '{}' is not Read or Write", show(f[3])));
    };
    let offset = int(f[4], "Offset")?;
    let len = int(f[5], "Size")?;
    int(f[6], "ResponseTime")?;
    Ok(Parsed::Io {
        raw: u128::from(ticks) * 100_000,
        op,
        offset,
        len,
        device: format!("{host}_{disk}"),
    })
}

fn parse_spc(line: &str) -> Result<Parsed, String> {
    let mut f = [""; 5];
    let n = split_csv(line, &mut f);
    if n < 5 {
        return Err(format!(
            "spc: expected at least 5 comma-separated fields (ASU,LBA,Size,Opcode,Timestamp), found {n}"
        ));
    }
    let asu = ident(f[0], "ASU")?;
    let offset = sectors(f[1], "LBA")?;
    let len = int(f[2], "Size")?;
    let op = match f[3] {
        "w" | "W" => Op::Write,
        "r" | "R" => Op::Read,
        o => return Err(format!("Opcode '{}' is not r or w", show(o))),
    };
    let raw = time_field(f[4], "Timestamp", 12)?;
    Ok(Parsed::Io {
        raw,
        op,
        offset,
        len,
        device: asu.to_string(),
    })
}

/// `MAJ,MIN` with both parts decimal.
fn is_dev(s: &str) -> bool {
    match s.split_once(',') {
        Some((a, b)) => {
            !a.is_empty()
                && !b.is_empty()
                && a.bytes().all(|c| c.is_ascii_digit())
                && b.bytes().all(|c| c.is_ascii_digit())
        }
        None => false,
    }
}

fn parse_blkparse(line: &str) -> Result<Parsed, String> {
    if !line.as_bytes().first().is_some_and(|b| b.is_ascii_digit()) {
        // Summary text ("CPU0 (8,0):", "Total (8,0):", " Reads Queued: ...").
        return Ok(Parsed::Ignore);
    }
    let mut t = [""; 10];
    let n = split_ws(line, &mut t);
    if !is_dev(t[0]) {
        return Err(format!(
            "blkparse: event lines start with the device 'MAJ,MIN', found '{}'",
            show(t[0])
        ));
    }
    if n < 7 {
        return Err(format!(
            "blkparse: event has {n} fields; expected 'MAJ,MIN CPU SEQ TIME PID ACTION RWBS ...'"
        ));
    }
    int(t[1], "CPU")?;
    int(t[2], "sequence number")?;
    let raw = time_field(t[3], "TIME", 12)?;
    int(t[4], "PID")?;
    let action = t[5];
    if action.is_empty() || action.len() > 2 || !action.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(format!(
            "blkparse: action '{}' is not an action letter (Q, G, I, D, C, ...)",
            show(action)
        ));
    }
    if action != "D" {
        return Ok(Parsed::Skip);
    }
    let rwbs = t[6];
    if !rwbs.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(format!(
            "blkparse: RWBS '{}' is not made of the letters R, W, D, F, N, A, S, M",
            show(rwbs)
        ));
    }
    // blkparse writes RWBS as [F] (D|W|R|N) [F] [A] [S] [M]: a leading F
    // is a flush before the request, a later one FUA.
    let flush = rwbs.contains('F');
    let device = t[0].to_string();
    let flush_io = |device: String| Parsed::Io {
        raw,
        op: Op::Flush,
        offset: 0,
        len: 0,
        device,
    };
    let op = match (rwbs.contains('R'), rwbs.contains('W'), rwbs.contains('D')) {
        (true, false, false) => Op::Read,
        (false, true, false) => Op::Write,
        (false, false, true) => Op::Trim,
        // 'N': no data; with 'F' a flush ("FN"), else nothing to replay.
        (false, false, false) => {
            return Ok(if flush {
                flush_io(device)
            } else {
                Parsed::Skip
            })
        }
        _ => {
            return Err(format!(
                "blkparse: RWBS '{rwbs}' has more than one of R (read), W (write) and D (discard)"
            ))
        }
    };
    let no_range = n < 8 || t[7].starts_with('[') || t[7].starts_with('(');
    if no_range {
        if flush {
            // A flush request carries no sectors ("FWS [kworker]").
            return Ok(flush_io(device));
        }
        if op == Op::Trim {
            // A discard without sectors: nothing to trim.
            return Ok(Parsed::Other { raw, device });
        }
        return Err(format!(
            "blkparse: D event with RWBS '{rwbs}' needs 'SECTOR + COUNT' after RWBS"
        ));
    }
    if n >= 9 && t[8].starts_with('(') {
        // SCSI pass-through request: `BYTES (CDB) [COMM]`; no block range.
        int(t[7], "pass-through byte count")?;
        return Ok(Parsed::Other { raw, device });
    }
    if n < 10 || t[8] != "+" {
        return Err(
            "blkparse: expected 'SECTOR + COUNT' after RWBS (for example '223490 + 8')".to_string(),
        );
    }
    let offset = sectors(t[7], "SECTOR")?;
    let len = sectors(t[9], "COUNT")?;
    if len == 0 && flush {
        return Ok(flush_io(device));
    }
    Ok(Parsed::Io {
        raw,
        op,
        offset,
        len,
        device,
    })
}

fn parse_disksim(line: &str, unit_ps: u64) -> Result<Parsed, String> {
    let mut f = [""; 5];
    let n = split_ws(line, &mut f);
    if n != 5 {
        return Err(format!(
            "disksim: expected 5 whitespace-separated fields (TIME DEVICE LBA SECTORS TYPE), found {n}"
        ));
    }
    // Parse in units of 1e-12 of the TIME unit, then scale exactly.
    let pico_units = time_field(f[0], "TIME", 12)?;
    let raw = pico_units
        .checked_mul(u128::from(unit_ps))
        .map(|v| v / 1_000_000_000_000)
        .ok_or_else(|| format!("TIME '{}' is too large", show(f[0])))?;
    let dev = ident(f[1], "DEVICE")?;
    let offset = sectors(f[2], "LBA")?;
    let len = sectors(f[3], "SECTORS")?;
    let op = match f[4] {
        "0" => Op::Write,
        "1" => Op::Read,
        o => return Err(format!("TYPE '{}' must be 0 (write) or 1 (read)", show(o))),
    };
    Ok(Parsed::Io {
        raw,
        op,
        offset,
        len,
        device: dev.to_string(),
    })
}

fn parse_alibaba(line: &str) -> Result<Parsed, String> {
    let mut f = [""; 5];
    let n = split_csv(line, &mut f);
    if n != 5 {
        return Err(format!(
            "alibaba: expected 5 comma-separated fields (device_id,opcode,offset,length,timestamp), found {n}"
        ));
    }
    let dev = ident(f[0], "device_id")?;
    let op = match f[1] {
        "W" | "w" => Op::Write,
        "R" | "r" => Op::Read,
        o => return Err(format!("opcode '{}' is not R or W", show(o))),
    };
    let offset = int(f[2], "offset")?;
    let len = int(f[3], "length")?;
    let raw = time_field(f[4], "timestamp", 6)?;
    Ok(Parsed::Io {
        raw,
        op,
        offset,
        len,
        device: dev.to_string(),
    })
}

fn parse_tencent(line: &str) -> Result<Parsed, String> {
    let mut f = [""; 5];
    let n = split_csv(line, &mut f);
    if n != 5 {
        return Err(format!(
            "tencent: expected 5 comma-separated fields (Timestamp,Offset,Size,IOType,VolumeID), found {n}"
        ));
    }
    let raw = time_field(f[0], "Timestamp", 12)?;
    let offset = sectors(f[1], "Offset")?;
    let len = sectors(f[2], "Size")?;
    let op = match f[3] {
        "1" => Op::Write,
        "0" => Op::Read,
        o => {
            return Err(format!(
                "IOType '{}' must be 0 (read) or 1 (write)",
                show(o)
            ))
        }
    };
    let vol = ident(f[4], "VolumeID")?;
    Ok(Parsed::Io {
        raw,
        op,
        offset,
        len,
        device: vol.to_string(),
    })
}

/// The actions of fio's iolog v2 and v3.
const IOLOG_ACTIONS: [&str; 9] = [
    "add", "open", "close", "read", "write", "trim", "sync", "datasync", "wait",
];

fn parse_iolog(line: &str, st: &mut FormatState) -> Result<Parsed, String> {
    if st.iolog_version == 0 {
        let words: Vec<&str> = line.split_ascii_whitespace().take(5).collect();
        return match words.as_slice() {
            ["fio", "version", v @ ("2" | "3"), "iolog"] => {
                st.iolog_version = if *v == "2" { 2 } else { 3 };
                Ok(Parsed::Skip)
            }
            ["fio", "version", v, "iolog"] => Err(format!(
                "fio iolog version '{}' is not supported; expected 'fio version 2 iolog' or 'fio version 3 iolog'",
                show(v)
            )),
            _ => Err(
                "not a fio iolog: the first line must be 'fio version 3 iolog' (or 'fio version 2 iolog')"
                    .to_string(),
            ),
        };
    }
    let v3 = st.iolog_version == 3;
    let mut f = [""; 6];
    let n = split_ws(line, &mut f);
    // `k`: fields after the v3 timestamp; `rest`: those fields.
    let (raw, rest, k) = if v3 {
        if n < 3 {
            return Err(format!(
                "iolog: expected 'TIME FILENAME ACTION [OFFSET LENGTH]', found {n} fields"
            ));
        }
        let raw = time_field(f[0], "TIME", 9).map_err(|m| {
            if IOLOG_ACTIONS.contains(&f[1]) {
                format!("{m}; this looks like a v2 line (FILENAME ACTION ...), but the header says version 3")
            } else {
                m
            }
        })?;
        (raw, &f[1..], n - 1)
    } else {
        if n < 2 {
            return Err(format!(
                "iolog v2: expected 'FILENAME ACTION [OFFSET LENGTH]', found {n} field{}",
                if n == 1 { "" } else { "s" }
            ));
        }
        (st.iolog_clock_ps, &f[..], n)
    };
    let (file, action) = (rest[0], rest[1]);
    let time = if v3 { "TIME " } else { "" };
    let layout = |k: usize| match k {
        2 => format!("{time}FILENAME ACTION"),
        4 => format!("{time}FILENAME ACTION OFFSET LENGTH"),
        _ => format!("{time}FILENAME ACTION [OFFSET LENGTH]"),
    };
    let takes = |what: &str, want: usize| {
        format!(
            "iolog: action '{action}' takes {what} fields ({}), found {n}",
            layout(want)
        )
    };
    let want = |w: usize| -> Result<(), String> {
        if k == w {
            Ok(())
        } else {
            Err(takes(&(w + usize::from(v3)).to_string(), w))
        }
    };
    let io = |op: Op, offset: u64, len: u64| Parsed::Io {
        raw,
        op,
        offset,
        len,
        device: file.to_string(),
    };
    match action {
        "add" | "open" | "close" => {
            want(2)?;
            Ok(Parsed::Skip)
        }
        "read" | "write" | "trim" => {
            want(4)?;
            let op = match action {
                "read" => Op::Read,
                "write" => Op::Write,
                _ => Op::Trim,
            };
            Ok(io(op, int(rest[2], "OFFSET")?, int(rest[3], "LENGTH")?))
        }
        "sync" | "datasync" => {
            // fio writes OFFSET LENGTH for syncs too; a flush has no range.
            match k {
                2 => {}
                4 => {
                    int(rest[2], "OFFSET")?;
                    int(rest[3], "LENGTH")?;
                }
                _ => {
                    return Err(takes(
                        &format!("{} or {}", 2 + usize::from(v3), 4 + usize::from(v3)),
                        0,
                    ))
                }
            }
            Ok(io(Op::Flush, 0, 0))
        }
        "wait" if v3 => {
            Err("iolog: 'wait' is not allowed in a v3 iolog (timestamps replace it)".into())
        }
        "wait" => {
            // `FILENAME wait USEC [LENGTH]`: advances the replay clock by USEC
            // microseconds; fio discards waits below 100 us.
            if k != 3 && k != 4 {
                return Err(format!(
                    "iolog: action 'wait' takes 3 or 4 fields (FILENAME wait MICROSECONDS [LENGTH]), found {n}"
                ));
            }
            let us = int(rest[2], "wait time (microseconds)")?;
            if k == 4 {
                int(rest[3], "LENGTH")?;
            }
            if us >= 100 {
                st.iolog_clock_ps = st
                    .iolog_clock_ps
                    .saturating_add(u128::from(us) * 1_000_000);
            }
            Ok(Parsed::Skip)
        }
        o => Err(format!(
            "iolog: unknown action '{}' (expected add, open, close, read, write, trim, sync, datasync{}){}",
            show(o),
            if v3 { "" } else { " or wait" },
            if !v3 && IOLOG_ACTIONS.contains(&f[2]) {
                "; this looks like a v3 line (TIME FILENAME ACTION ...), but the header says version 2"
            } else {
                ""
            }
        )),
    }
}

/// Whether `line` is a header of column names for `fmt`.
fn is_header(fmt: TraceFormat, line: &str) -> bool {
    let mut f = [""; 8];
    let n = if fmt == TraceFormat::DiskSim {
        split_ws(line, &mut f)
    } else {
        split_csv(line, &mut f)
    };
    let count_ok = match fmt {
        TraceFormat::Msr => n == 7,
        TraceFormat::Spc => n >= 5,
        TraceFormat::DiskSim | TraceFormat::Alibaba | TraceFormat::Tencent => n == 5,
        TraceFormat::Blkparse | TraceFormat::FioIolog | TraceFormat::Blktrace => false,
    };
    count_ok
        && f.iter().take(n.min(f.len())).all(|x| {
            x.as_bytes()
                .first()
                .is_some_and(|b| b.is_ascii_alphabetic())
                && parse_decimal(x, 0).is_none()
        })
}

// ---------------------------------------------------------------------------
// Line reader

/// Reads lines of at most [`MAX_LINE_BYTES`] into one reused buffer.
struct Lines {
    r: Box<dyn BufRead + Send>,
    buf: Vec<u8>,
    line: usize,
}

impl Lines {
    /// Next line into `buf` (without `\n`); `Ok(false)` at end of input.
    fn next_line(&mut self) -> Result<bool, String> {
        self.buf.clear();
        let mut got = false;
        loop {
            let avail = match self.r.fill_buf() {
                Ok(a) => a,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.line += 1;
                    return Err(format!("read error: {e}"));
                }
            };
            if avail.is_empty() {
                if got {
                    self.line += 1;
                }
                return Ok(got);
            }
            got = true;
            let (chunk, used, eol) = match avail.iter().position(|&b| b == b'\n') {
                Some(i) => (&avail[..i], i + 1, true),
                None => (avail, avail.len(), false),
            };
            if self.buf.len() + chunk.len() > MAX_LINE_BYTES {
                self.line += 1;
                return Err(format!(
                    "line is longer than {MAX_LINE_BYTES} bytes (is this a text trace?)"
                ));
            }
            self.buf.extend_from_slice(chunk);
            self.r.consume(used);
            if eol {
                self.line += 1;
                return Ok(true);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// blktrace binary records

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
enum Endian {
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
fn blk_endian(b: &[u8]) -> Option<Endian> {
    if b.len() < 4 {
        return None;
    }
    [Endian::Little, Endian::Big]
        .into_iter()
        .find(|e| e.u32(b) & 0xffff_ff00 == BLK_MAGIC)
}

/// `(stem, cpu)` of a per-CPU blktrace file name `STEM.blktrace.CPU`.
fn blktrace_cpu_name(name: &str) -> Option<(&str, u64)> {
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
struct BlkFile {
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
    fn new(name: String, r: Box<dyn BufRead + Send>) -> BlkFile {
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
struct BlkMerge {
    files: Vec<BlkFile>,
    heads: Vec<Option<BlkEvent>>,
    /// Merge keys of the pending events: time, cpu, sequence, file index.
    heap: BinaryHeap<Reverse<(u64, u32, u32, usize)>>,
    /// Files whose next event must be read before the next merge step.
    refill: Vec<usize>,
    /// File index, record index and byte offset of the last event yielded
    /// or of the error.
    at: (usize, usize, u64),
}

impl BlkMerge {
    fn new(files: Vec<BlkFile>) -> BlkMerge {
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
    fn next_event(&mut self) -> Result<Option<Parsed>, String> {
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

    fn name(&self, i: usize) -> &str {
        self.files.get(i).map_or("", |f| f.name.as_str())
    }
}

/// Where a reader reads from.
enum Source {
    Text(Lines),
    Blktrace(BlkMerge),
}

// ---------------------------------------------------------------------------
// Reader

/// An item of the internal stream: a request, or an operation that is
/// counted but not simulated.
enum Item {
    Record(TraceRecord),
    Other { time: Time, device: String },
}

/// Streaming trace reader: an iterator of [`TraceRecord`]s (reads, writes,
/// trims and flushes).
///
/// Yields `Err` once, for the first malformed line or record (or read
/// error), and `None` after it. Operations with nothing to replay (SCSI
/// pass-through requests, discards without a range) are not yielded;
/// [`TraceReader::other_ops`] counts them.
pub struct TraceReader {
    src: Source,
    file: String,
    format: TraceFormat,
    st: FormatState,
    /// A data line (possibly a header) was seen.
    seen_data: bool,
    /// Absolute time (ps) of the first record.
    base: Option<u128>,
    /// Absolute time (ps), file index (blktrace) and line or record index
    /// of the previous record.
    prev: Option<(u128, usize, usize)>,
    /// Lines recognised as belonging to the format (for [`detect`]).
    recognized: u64,
    others: u64,
    done: bool,
}

impl fmt::Debug for TraceReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TraceReader")
            .field("file", &self.file)
            .field("format", &self.format)
            .field("line", &self.line())
            .field("done", &self.done)
            .finish_non_exhaustive()
    }
}

impl TraceReader {
    /// Open a trace file; with `format` `None`, detect the format: a file
    /// that starts with the blktrace magic number (in either byte order) is
    /// [`TraceFormat::Blktrace`], and so is an empty file named
    /// `NAME.blktrace.CPU`; otherwise the format is detected from the first
    /// data lines (see [`detect`]).
    ///
    /// A blktrace file named `NAME.blktrace.CPU` is read together with its
    /// siblings: every regular file `NAME.blktrace.<digits>` in the same
    /// directory is opened and their records are merged by time (see
    /// [`TraceFormat::Blktrace`]).
    ///
    /// The first 64 KiB are read ahead for detection and replayed, so pipes
    /// and FIFOs work too. Errors (line 0): a file cannot be opened or
    /// read, it is compressed, or its format cannot be detected.
    pub fn open(path: &Path, format: Option<TraceFormat>) -> Result<TraceReader, TraceError> {
        let name = path.display().to_string();
        let mut f =
            File::open(path).map_err(|e| error(&name, 0, format!("cannot open trace: {e}")))?;
        let mut prefix = Vec::with_capacity(DETECT_BYTES);
        (&mut f)
            .take(DETECT_BYTES as u64)
            .read_to_end(&mut prefix)
            .map_err(|e| error(&name, 0, format!("cannot read trace: {e}")))?;
        if let Some((kind, tool)) = compression(&prefix) {
            return Err(error(
                &name,
                0,
                format!(
                    "the trace is {kind}-compressed; decompress it first (for example `{tool} -dc {name} > trace.txt`)"
                ),
            ));
        }
        let per_cpu_name = path
            .file_name()
            .and_then(|s| s.to_str())
            .and_then(blktrace_cpu_name)
            .is_some();
        let format = match format {
            Some(f) => f,
            None if blk_endian(&prefix).is_some() || (prefix.is_empty() && per_cpu_name) => {
                TraceFormat::Blktrace
            }
            None => {
                let sample = sample_lines(&prefix, prefix.len() == DETECT_BYTES);
                let refs: Vec<&str> = sample.iter().map(|s| s.as_str()).collect();
                detect(&name, &refs)?
            }
        };
        if format == TraceFormat::Blktrace {
            return TraceReader::open_blktrace(path, &name, Cursor::new(prefix).chain(f));
        }
        let r = BufReader::with_capacity(256 * 1024, Cursor::new(prefix).chain(f));
        Ok(TraceReader::from_reader(Box::new(r), &name, format))
    }

    /// Open a blktrace file and, if it is named `NAME.blktrace.CPU`, its
    /// sibling per-CPU files; `first` reads `path`.
    fn open_blktrace(
        path: &Path,
        name: &str,
        first: impl Read + Send + 'static,
    ) -> Result<TraceReader, TraceError> {
        // (cpu, path) of the siblings; `None` for `path` itself.
        let mut parts: Vec<(u64, Option<PathBuf>)> = Vec::new();
        let given = path.file_name().and_then(|s| s.to_str());
        if let Some((stem, cpu)) = given.and_then(blktrace_cpu_name) {
            parts.push((cpu, None));
            let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
            if let Ok(entries) = std::fs::read_dir(dir.unwrap_or(Path::new("."))) {
                for entry in entries.flatten() {
                    let os = entry.file_name();
                    let Some(s) = os.to_str() else { continue };
                    if Some(s) == given {
                        continue;
                    }
                    let Some((st, c)) = blktrace_cpu_name(s) else {
                        continue;
                    };
                    let p = dir.map_or_else(|| PathBuf::from(s), |d| d.join(s));
                    if st == stem && std::fs::metadata(&p).is_ok_and(|m| m.is_file()) {
                        parts.push((c, Some(p)));
                    }
                }
            }
            parts.sort();
        } else {
            parts.push((0, None));
        }
        // Bounded read-ahead in total: 4 MiB, 16..256 KiB per file.
        let cap = (4usize << 20)
            .checked_div(parts.len())
            .unwrap_or(0)
            .clamp(16 << 10, 256 << 10);
        let mut first: Option<Box<dyn Read + Send>> = Some(Box::new(first));
        let mut files = Vec::with_capacity(parts.len());
        for (_, p) in parts {
            let (file_name, r): (String, Box<dyn Read + Send>) = match p {
                None => match first.take() {
                    Some(r) => (name.to_string(), r),
                    None => continue,
                },
                Some(p) => {
                    let n = p.display().to_string();
                    let f = File::open(&p)
                        .map_err(|e| error(&n, 0, format!("cannot open trace: {e}")))?;
                    (n, Box::new(f))
                }
            };
            files.push(BlkFile::new(
                file_name,
                Box::new(BufReader::with_capacity(cap, r)),
            ));
        }
        Ok(TraceReader::with_source(
            Source::Blktrace(BlkMerge::new(files)),
            name,
            TraceFormat::Blktrace,
        ))
    }

    /// Read a trace of a known format from `r`; `file` names it in errors.
    /// For [`TraceFormat::Blktrace`], `r` is one binary file (no merge).
    pub fn from_reader(r: Box<dyn BufRead + Send>, file: &str, format: TraceFormat) -> TraceReader {
        let src = if format == TraceFormat::Blktrace {
            Source::Blktrace(BlkMerge::new(vec![BlkFile::new(file.to_string(), r)]))
        } else {
            Source::Text(Lines {
                r,
                buf: Vec::new(),
                line: 0,
            })
        };
        TraceReader::with_source(src, file, format)
    }

    fn with_source(src: Source, file: &str, format: TraceFormat) -> TraceReader {
        TraceReader {
            src,
            file: file.to_string(),
            format,
            st: FormatState {
                iolog_version: 0,
                iolog_clock_ps: 0,
                disksim_unit_ps: Time::ms(1).as_ps(),
            },
            seen_data: false,
            base: None,
            prev: None,
            recognized: 0,
            others: 0,
            done: false,
        }
    }

    /// Set the unit of the TIME column of a [`TraceFormat::DiskSim`] trace
    /// (default 1 ms, as in DiskSim; MQSim traces are usually in
    /// nanoseconds: `Time::ns(1)`). A zero unit is taken as 1 ps. No effect
    /// on other formats.
    pub fn with_disksim_time_unit(mut self, unit: Time) -> TraceReader {
        self.st.disksim_unit_ps = unit.as_ps().max(1);
        self
    }

    /// The trace format.
    pub fn format(&self) -> TraceFormat {
        self.format
    }

    /// The file name used in errors (for merged per-CPU blktrace files,
    /// the path given to [`TraceReader::open`]; errors name the per-CPU file).
    pub fn file(&self) -> &str {
        &self.file
    }

    /// Number of lines read so far (the line of the last record or error);
    /// for blktrace, the 1-based index of the last record yielded (or of
    /// the bad record) in its file.
    pub fn line(&self) -> usize {
        self.location().1
    }

    /// File index (blktrace: among the merged files; 0 for text) and line
    /// or record index of the last record or error.
    fn location(&self) -> (usize, usize) {
        match &self.src {
            Source::Text(l) => (0, l.line),
            Source::Blktrace(m) => (m.at.0, m.at.1),
        }
    }

    /// A location for messages: `line N`, or `record N of FILE`.
    fn describe(&self, file: usize, line: usize) -> String {
        match &self.src {
            Source::Text(_) => format!("line {line}"),
            Source::Blktrace(m) => format!("record {line} of {}", m.name(file)),
        }
    }

    /// Operations skipped so far because they have nothing to replay
    /// (SCSI pass-through requests, blkparse discards without a range).
    pub fn other_ops(&self) -> u64 {
        self.others
    }

    fn fail(&mut self, message: String) -> Option<Result<Item, TraceError>> {
        self.done = true;
        let e = match &self.src {
            Source::Text(l) => error(&self.file, l.line, message),
            Source::Blktrace(m) => {
                let (f, record, byte) = m.at;
                error(
                    m.name(f),
                    record,
                    format!("record {record} at byte {byte}: {message}"),
                )
            }
        };
        Some(Err(e))
    }

    /// Time of a record relative to the first one, enforcing the order rule.
    fn stamp(&mut self, raw: u128) -> Result<Time, String> {
        let (file, line) = self.location();
        let base = *self.base.get_or_insert(raw);
        let mut raw = raw;
        if let Some((prev, prev_file, prev_line)) = self.prev {
            if raw < prev {
                let back = prev - raw;
                if self.format.reorders() && back <= BLKPARSE_REORDER_PS {
                    raw = prev;
                } else {
                    return Err(format!(
                        "time goes backwards by {} (previous record at {}); \
                         records must be in time order{}",
                        fmt_ps(back),
                        self.describe(prev_file, prev_line),
                        if self.format.reorders() {
                            format!(
                                " ({}: up to 1 ms of reordering is accepted)",
                                self.format.name()
                            )
                        } else {
                            String::new()
                        }
                    ));
                }
            }
        }
        let rel = raw - base;
        if rel > u128::from(u64::MAX) {
            return Err(format!(
                "time is {} after the first record; at most ~213 days are supported",
                fmt_ps(rel)
            ));
        }
        self.prev = Some((raw, file, line));
        Ok(Time(rel as u64))
    }

    /// The next parsed data line; `Ok(None)` at the end of the input.
    fn next_text(&mut self) -> Result<Option<Parsed>, String> {
        let Source::Text(lines) = &mut self.src else {
            return Ok(None);
        };
        loop {
            if !lines.next_line()? {
                return Ok(None);
            }
            if lines.line == 1 && blk_endian(&lines.buf).is_some() {
                return Err(format!(
                    "this is a binary blktrace file, not {} text; read it as format 'blktrace'",
                    self.format.name()
                ));
            }
            let text = std::str::from_utf8(&lines.buf).map_err(|_| {
                "line is not valid UTF-8 text (is this a binary or compressed file?)".to_string()
            })?;
            let text = if lines.line == 1 {
                text.trim_start_matches('\u{feff}')
            } else {
                text
            };
            let t = text.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            if !self.seen_data {
                self.seen_data = true;
                if self.format.has_columns() && is_header(self.format, t) {
                    continue;
                }
            }
            return parse_line(self.format, t, &mut self.st).map(Some);
        }
    }

    /// The next request or counted operation.
    fn next_item(&mut self) -> Option<Result<Item, TraceError>> {
        if self.done {
            return None;
        }
        loop {
            let parsed = match &mut self.src {
                Source::Blktrace(m) => m.next_event(),
                Source::Text(_) => self.next_text(),
            };
            let parsed = match parsed {
                Ok(Some(p)) => p,
                Ok(None) => {
                    self.done = true;
                    return None;
                }
                Err(m) => return self.fail(m),
            };
            match parsed {
                Parsed::Ignore => continue,
                Parsed::Skip => {
                    self.recognized += 1;
                    continue;
                }
                Parsed::Other { raw, device } => {
                    let time = match self.stamp(raw) {
                        Ok(t) => t,
                        Err(m) => return self.fail(m),
                    };
                    self.recognized += 1;
                    self.others += 1;
                    return Some(Ok(Item::Other { time, device }));
                }
                Parsed::Io {
                    raw,
                    op,
                    offset,
                    len,
                    device,
                } => {
                    // A flush has no range (the parsers give offset and len 0).
                    if op != Op::Flush {
                        if len == 0 {
                            return self.fail("zero-length request".to_string());
                        }
                        if len > MAX_REQUEST_BYTES {
                            return self.fail(format!(
                                "request of {len} bytes is larger than 4 GiB; not a plausible block I/O"
                            ));
                        }
                        if offset.checked_add(len).is_none() {
                            return self.fail(format!(
                                "request end (offset {offset} + length {len}) overflows 64 bits"
                            ));
                        }
                    }
                    let time = match self.stamp(raw) {
                        Ok(t) => t,
                        Err(m) => return self.fail(m),
                    };
                    self.recognized += 1;
                    return Some(Ok(Item::Record(TraceRecord {
                        time,
                        op,
                        offset,
                        len,
                        device,
                    })));
                }
            }
        }
    }
}

impl Iterator for TraceReader {
    type Item = Result<TraceRecord, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            match self.next_item()? {
                Ok(Item::Record(r)) => return Some(Ok(r)),
                Ok(Item::Other { .. }) => continue,
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl std::iter::FusedIterator for TraceReader {}

/// Exact seconds, without trailing zeros: `1.3320526s`, `0.000001s`, `2s`.
fn fmt_ps(ps: u128) -> String {
    let whole = ps / 1_000_000_000_000;
    let frac = ps % 1_000_000_000_000;
    if frac == 0 {
        return format!("{whole}s");
    }
    let digits = format!("{frac:012}");
    format!("{whole}.{}s", digits.trim_end_matches('0'))
}

/// Compression format recognised by its magic bytes, with the tool to undo it.
fn compression(prefix: &[u8]) -> Option<(&'static str, &'static str)> {
    if prefix.starts_with(&[0x1f, 0x8b]) {
        Some(("gzip", "gzip"))
    } else if prefix.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Some(("xz", "xz"))
    } else if prefix.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some(("zstd", "zstd"))
    } else if prefix.starts_with(b"BZh") {
        Some(("bzip2", "bzip2"))
    } else {
        None
    }
}

/// The first lines of `prefix` up to [`DETECT_LINES`] data lines (blank and
/// comment lines included, so line numbers stay right). A final partial line
/// is dropped when the prefix was cut.
fn sample_lines(prefix: &[u8], cut: bool) -> Vec<String> {
    let mut pieces: Vec<&[u8]> = prefix.split(|&b| b == b'\n').collect();
    if cut && pieces.len() > 1 {
        pieces.pop();
    }
    let mut out = Vec::new();
    let mut data = 0;
    for p in pieces {
        let s = String::from_utf8_lossy(p);
        let s = s.strip_suffix('\r').unwrap_or(&s).to_string();
        let t = s.trim();
        if !t.is_empty() && !t.starts_with('#') {
            data += 1;
        }
        out.push(s);
        if data >= DETECT_LINES {
            break;
        }
    }
    out
}

/// Detect the format of a trace from its first lines (`sample_lines[0]` is
/// line 1 of `file`; blank and `#` lines are allowed).
///
/// Only the text formats are detected here: [`TraceReader::open`]
/// recognises a binary blktrace file by its magic number before calling
/// this.
///
/// Each format's parser reads the sample; the format whose parser accepts
/// every line and recognises at least one is chosen. The formats are
/// designed not to overlap: MSR has 7 fields with `Read`/`Write` 4th;
/// Alibaba 5 with `R`/`W` 2nd; Tencent 5 numeric fields; SPC 5 or more
/// with `r`/`w` 4th; DiskSim 5 space-separated numbers; blkparse starts
/// with `MAJ,MIN`; iolog with its `fio version` header. If no format or
/// several fit, the error lists the formats and why each was rejected.
pub fn detect(file: &str, sample_lines: &[&str]) -> Result<TraceFormat, TraceError> {
    let first_data = sample_lines.iter().enumerate().find(|(_, l)| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#')
    });
    let Some((first_idx, first)) = first_data else {
        return Err(error(
            file,
            0,
            format!(
                "cannot detect the trace format: no data lines in the sample (only blank or comment lines); \
                 give the format explicitly (one of: {})",
                TraceFormat::names_list()
            ),
        ));
    };
    let text = sample_lines.join("\n");
    let run = |fmt: TraceFormat| -> (Option<TraceError>, u64) {
        let mut r =
            TraceReader::from_reader(Box::new(Cursor::new(text.clone().into_bytes())), file, fmt);
        while let Some(item) = r.next_item() {
            if let Err(e) = item {
                return (Some(e), r.recognized);
            }
        }
        (None, r.recognized)
    };
    if first.trim_start().starts_with("fio version") {
        return match run(TraceFormat::FioIolog) {
            (None, _) => Ok(TraceFormat::FioIolog),
            (Some(e), _) => Err(e),
        };
    }
    let mut fits = Vec::new();
    let mut rejected = Vec::new();
    for fmt in TraceFormat::ALL {
        if fmt == TraceFormat::Blktrace {
            let why = "binary format, recognised by its magic number in the first 4 bytes \
                       (0x65617407, either byte order), not from text lines";
            rejected.push((fmt, Some(error(file, 0, why)), 0));
            continue;
        }
        match run(fmt) {
            (None, n) if n > 0 => fits.push(fmt),
            (None, _) => rejected.push((fmt, None, 0)),
            (Some(e), n) => rejected.push((fmt, Some(e), n)),
        }
    }
    match fits.as_slice() {
        [one] => return Ok(*one),
        [] => {}
        many => {
            return Err(error(
                file,
                0,
                format!(
                "the trace format is ambiguous: the first lines fit {}; give the format explicitly",
                many.iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
            ))
        }
    }
    // One format read some lines before failing: report its error.
    let partial: Vec<&(TraceFormat, Option<TraceError>, u64)> = rejected
        .iter()
        .filter(|(_, e, n)| e.is_some() && *n > 0)
        .collect();
    if let [(fmt, Some(e), _)] = partial.as_slice() {
        return Err(error(
            file,
            e.line,
            format!(
                "looks like {} ({}), but: {}",
                fmt.name(),
                fmt.description(),
                e.message
            ),
        ));
    }
    let mut msg =
        String::from("cannot detect the trace format; give it explicitly. Known formats:");
    for (fmt, e, _) in &rejected {
        let why = match e {
            Some(e) if e.line == 0 => e.message.clone(),
            Some(e) => format!("line {}: {}", e.line, e.message),
            None => "no data line recognised".to_string(),
        };
        msg.push_str(&format!(
            "\n  {:<9} {}\n            rejected: {}",
            fmt.name(),
            fmt.description(),
            why
        ));
    }
    Err(error(file, first_idx + 1, msg))
}

// ---------------------------------------------------------------------------
// Filter and remap

/// Selects records by device and time window. The default keeps everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceFilter {
    /// Keep only this device (compared with [`TraceRecord::device`] exactly).
    pub device: Option<String>,
    /// Keep records at or after this time (since the first record of the file).
    pub start: Option<Time>,
    /// Keep records strictly before this time.
    pub end: Option<Time>,
}

impl TraceFilter {
    /// Whether the filter keeps `r`.
    pub fn keep(&self, r: &TraceRecord) -> bool {
        self.keep_at(r.time, &r.device)
    }

    /// Whether the filter keeps an operation at `time` on `device`.
    pub fn keep_at(&self, time: Time, device: &str) -> bool {
        self.device.as_deref().is_none_or(|d| d == device)
            && self.start.is_none_or(|s| time >= s)
            && self.end.is_none_or(|e| time < e)
    }
}

/// How trace offsets are mapped onto a drive of a given capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remap {
    /// `offset % capacity`.
    Wrap,
    /// `offset * capacity / max_offset`: spreads the trace's address space
    /// (`max_offset`, for example [`TraceStats::max_end_bytes`]) over the
    /// drive; lengths are not scaled.
    Scale {
        /// Size of the trace's address space in bytes.
        max_offset: u64,
    },
}

impl Remap {
    /// Map the request `[offset, offset + len)` onto a drive of
    /// `capacity_bytes`, returning `(offset, len)`.
    ///
    /// The mapped start is aligned down to `align` and the length rounded up
    /// to a multiple of `align` (an `align` of 0 is taken as 1), so request
    /// sizes are kept. The result always lies inside the capacity rounded
    /// down to `align`: a request that would cross the end is moved back to
    /// end there, and one longer than the capacity is cut to it. A capacity
    /// smaller than `align` gives `(0, 0)`. For `Scale`, a `max_offset` of 0
    /// maps everything to 0. A length of 0 stays 0: a flush
    /// ([`Op::Flush`]) has no range and needs no
    /// remapping (it maps to `(0, 0)`).
    pub fn apply(&self, offset: u64, len: u64, capacity_bytes: u64, align: u64) -> (u64, u64) {
        let align = u128::from(align.max(1));
        let cap = u128::from(capacity_bytes) / align * align;
        if cap == 0 {
            return (0, 0);
        }
        let start = match *self {
            Remap::Wrap => u128::from(offset) % cap,
            Remap::Scale { max_offset } => {
                if max_offset == 0 {
                    0
                } else {
                    u128::from(offset) * cap / u128::from(max_offset)
                }
            }
        };
        let a_start = start / align * align;
        let l = (u128::from(len).div_ceil(align) * align).min(cap);
        let s = if a_start + l > cap { cap - l } else { a_start };
        // Both are at most `cap`, which fits in u64.
        (s as u64, l as u64)
    }
}

// ---------------------------------------------------------------------------
// Statistics

/// One power-of-two bucket of request sizes: `min_bytes..=max_bytes`
/// (`max_bytes = 2 * min_bytes - 1`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SizeBucket {
    /// Smallest size in the bucket (a power of two).
    pub min_bytes: u64,
    /// Largest size in the bucket.
    pub max_bytes: u64,
    /// Requests in the bucket.
    pub count: u64,
}

/// Inter-arrival times between consecutive kept requests, in nanoseconds
/// (HDR histogram, 3 significant digits).
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize)]
pub struct InterArrival {
    /// Number of intervals (requests - 1).
    pub samples: u64,
    /// Mean interval.
    pub mean_ns: f64,
    /// Median.
    pub p50_ns: u64,
    /// 90th percentile.
    pub p90_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// 99.9th percentile.
    pub p999_ns: u64,
    /// Largest interval.
    pub max_ns: u64,
}

/// Summary of a trace (after a [`TraceFilter`]), computed in bounded memory.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TraceStats {
    /// Format of the trace.
    pub format: TraceFormat,
    /// Requests: reads, writes, trims and flushes.
    pub records: u64,
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    /// Trims (discards, fio `trim`).
    pub trims: u64,
    /// Flushes (fio `sync`/`datasync`, blkparse flush requests).
    pub flushes: u64,
    /// Operations counted but not replayed: SCSI pass-through requests and
    /// discards without a sector range (blkparse).
    pub other: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Bytes trimmed (the sum of the trims' lengths).
    pub trim_bytes: u64,
    /// Read and write sizes in power-of-two buckets, smallest first; empty
    /// buckets are left out (trims and flushes are not counted).
    pub size_histogram: Vec<SizeBucket>,
    /// Bytes of distinct 4 KiB blocks touched by reads and writes.
    pub footprint_bytes: u64,
    /// Whether `footprint_bytes` is exact. It is while every touched block
    /// lies below [`FOOTPRINT_EXACT_LIMIT_BYTES`] (1 TiB; a bitmap of at
    /// most 32 MiB, grown as offsets are seen); above that it is a
    /// HyperLogLog estimate (2^16 registers, standard error about 0.4%).
    pub footprint_exact: bool,
    /// Largest request end (`offset + len`) of the reads, writes and trims
    /// seen: the trace's address space.
    pub max_end_bytes: u64,
    /// Time of the first kept request (since the first record of the file).
    pub first: Time,
    /// Time from the first to the last kept request.
    pub duration: Time,
    /// Inter-arrival times (between kept requests of any kind).
    pub interarrival: InterArrival,
}

impl TraceStats {
    /// Fraction of requests that are reads (0 when there are none).
    pub fn read_fraction(&self) -> f64 {
        if self.records == 0 {
            0.0
        } else {
            self.reads as f64 / self.records as f64
        }
    }

    /// A human-readable multi-line summary.
    pub fn to_text(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let share = |n: u64, of: u64| {
            if of == 0 {
                0.0
            } else {
                n as f64 * 100.0 / of as f64
            }
        };
        let pct = |n: u64| share(n, self.records);
        let _ = writeln!(s, "format         {}", self.format.description());
        let _ = write!(
            s,
            "requests       {} (reads {} = {:.1}%, writes {} = {:.1}%",
            self.records,
            self.reads,
            pct(self.reads),
            self.writes,
            pct(self.writes)
        );
        if self.trims > 0 {
            let _ = write!(s, ", trims {} = {:.1}%", self.trims, pct(self.trims));
        }
        if self.flushes > 0 {
            let _ = write!(s, ", flushes {} = {:.1}%", self.flushes, pct(self.flushes));
        }
        let _ = writeln!(s, ")");
        if self.other > 0 {
            let _ = writeln!(
                s,
                "other ops      {} (SCSI pass-through, discards without a range; counted, not simulated)",
                self.other
            );
        }
        let _ = write!(
            s,
            "bytes          read {}, written {}",
            human_bytes(self.read_bytes),
            human_bytes(self.write_bytes)
        );
        if self.trims > 0 {
            let _ = write!(s, ", trimmed {}", human_bytes(self.trim_bytes));
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "duration       {:.6} s (first request at {:.6} s)",
            self.duration.as_secs_f64(),
            self.first.as_secs_f64()
        );
        let _ = writeln!(
            s,
            "footprint      {} of distinct 4 KiB blocks ({})",
            human_bytes(self.footprint_bytes),
            if self.footprint_exact {
                "exact"
            } else {
                "HyperLogLog estimate, ~0.4% standard error"
            }
        );
        let _ = writeln!(s, "address space  {}", human_bytes(self.max_end_bytes));
        let ia = &self.interarrival;
        if ia.samples > 0 {
            let _ = writeln!(
                s,
                "inter-arrival  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  mean {} ({} intervals)",
                human_ns(ia.p50_ns as f64),
                human_ns(ia.p90_ns as f64),
                human_ns(ia.p99_ns as f64),
                human_ns(ia.p999_ns as f64),
                human_ns(ia.max_ns as f64),
                human_ns(ia.mean_ns),
                ia.samples
            );
        }
        if !self.size_histogram.is_empty() {
            let data = self.reads + self.writes;
            let _ = writeln!(s, "request sizes (reads and writes)");
            for b in &self.size_histogram {
                let _ = writeln!(
                    s,
                    "  {:>10} .. {:<10} {:>12}  {:5.1}%",
                    human_bytes(b.min_bytes),
                    human_bytes(b.max_bytes + 1),
                    b.count,
                    share(b.count, data)
                );
            }
        }
        s
    }
}

fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if v.fract() == 0.0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.2} {}", UNITS[u])
    }
}

fn human_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.3}s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.3}ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.3}us", ns / 1e3)
    } else {
        format!("{ns:.0}ns")
    }
}

/// 64-bit mixer (splitmix64 finaliser) for the HyperLogLog.
fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// HyperLogLog distinct counter with `2^P` one-byte registers and Ertl's
/// improved raw estimator (no bias tables needed).
struct Hll {
    regs: Vec<u8>,
}

impl Hll {
    const P: u32 = 16;
    const Q: u32 = 64 - Self::P;

    fn new() -> Hll {
        Hll {
            regs: vec![0; 1 << Self::P],
        }
    }

    fn insert(&mut self, x: u64) {
        let h = mix64(x);
        let idx = (h >> Self::Q) as usize;
        let w = h << Self::P;
        let rank = if w == 0 {
            Self::Q + 1
        } else {
            w.leading_zeros() + 1
        } as u8;
        if let Some(r) = self.regs.get_mut(idx) {
            if *r < rank {
                *r = rank;
            }
        }
    }

    fn estimate(&self) -> f64 {
        let m = self.regs.len() as f64;
        let q = Self::Q as usize;
        let mut c = vec![0u64; q + 2];
        for &r in &self.regs {
            c[(r as usize).min(q + 1)] += 1;
        }
        let mut z = m * hll_tau(1.0 - c[q + 1] as f64 / m);
        for k in (1..=q).rev() {
            z = 0.5 * (z + c[k] as f64);
        }
        z += m * hll_sigma(c[0] as f64 / m);
        if !z.is_finite() || z <= 0.0 {
            return 0.0;
        }
        let alpha_inf = 1.0 / (2.0 * std::f64::consts::LN_2);
        alpha_inf * m * m / z
    }
}

fn hll_sigma(mut x: f64) -> f64 {
    if x >= 1.0 {
        return f64::INFINITY;
    }
    let mut y = 1.0;
    let mut z = x;
    loop {
        x *= x;
        let old = z;
        z += x * y;
        y += y;
        if z == old {
            return z;
        }
    }
}

fn hll_tau(mut x: f64) -> f64 {
    if x <= 0.0 || x >= 1.0 {
        return 0.0;
    }
    let mut y = 1.0;
    let mut z = 1.0 - x;
    loop {
        x = x.sqrt();
        let old = z;
        y *= 0.5;
        z -= (1.0 - x) * (1.0 - x) * y;
        if z == old {
            return z / 3.0;
        }
    }
}

/// Distinct 4 KiB blocks touched: an exact, growable bitmap while every
/// block lies below `limit_blocks`, then a HyperLogLog.
struct Footprint {
    bits: Vec<u64>,
    limit_blocks: u64,
    hll: Option<Hll>,
}

impl Footprint {
    fn new(limit_bytes: u64) -> Footprint {
        Footprint {
            bits: Vec::new(),
            limit_blocks: limit_bytes / FOOTPRINT_BLOCK,
            hll: None,
        }
    }

    fn add(&mut self, offset: u64, len: u64) {
        if len == 0 {
            return;
        }
        let first = offset / FOOTPRINT_BLOCK;
        let last = offset.saturating_add(len - 1) / FOOTPRINT_BLOCK;
        if self.hll.is_none() && last >= self.limit_blocks {
            self.switch_to_hll();
        }
        match &mut self.hll {
            Some(h) => {
                for b in first..=last {
                    h.insert(b);
                }
            }
            None => self.set_range(first, last),
        }
    }

    fn set_range(&mut self, first: u64, last: u64) {
        let need = (last / 64 + 1) as usize;
        if self.bits.len() < need {
            let limit_words = self.limit_blocks.div_ceil(64) as usize;
            let new_len = need.max(self.bits.len() * 2).min(limit_words.max(need));
            self.bits.resize(new_len, 0);
        }
        let (fw, lw) = ((first / 64) as usize, (last / 64) as usize);
        for w in fw..=lw {
            let lo = if w == fw { first % 64 } else { 0 };
            let hi = if w == lw { last % 64 } else { 63 };
            let mask = (u64::MAX >> (63 - (hi - lo))) << lo;
            if let Some(word) = self.bits.get_mut(w) {
                *word |= mask;
            }
        }
    }

    fn switch_to_hll(&mut self) {
        let mut h = Hll::new();
        for (i, &w) in self.bits.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                let b = w.trailing_zeros() as u64;
                h.insert(i as u64 * 64 + b);
                w &= w - 1;
            }
        }
        self.bits = Vec::new();
        self.hll = Some(h);
    }

    /// (distinct blocks, exact?)
    fn count(&self) -> (u64, bool) {
        match &self.hll {
            Some(h) => (h.estimate().round() as u64, false),
            None => (
                self.bits.iter().map(|w| u64::from(w.count_ones())).sum(),
                true,
            ),
        }
    }
}

/// Running totals for [`stats`].
struct StatsAcc {
    reads: u64,
    writes: u64,
    trims: u64,
    flushes: u64,
    other: u64,
    read_bytes: u64,
    write_bytes: u64,
    trim_bytes: u64,
    sizes: [u64; 64],
    footprint: Footprint,
    max_end: u64,
    first: Option<Time>,
    last: Time,
    ia: Option<Histogram<u64>>,
    ia_sum_ns: u128,
    ia_n: u64,
}

impl StatsAcc {
    fn new(footprint_limit_bytes: u64) -> StatsAcc {
        StatsAcc {
            reads: 0,
            writes: 0,
            trims: 0,
            flushes: 0,
            other: 0,
            read_bytes: 0,
            write_bytes: 0,
            trim_bytes: 0,
            sizes: [0; 64],
            footprint: Footprint::new(footprint_limit_bytes),
            max_end: 0,
            first: None,
            last: Time::ZERO,
            ia: Histogram::new(3).ok(),
            ia_sum_ns: 0,
            ia_n: 0,
        }
    }

    fn add(&mut self, r: &TraceRecord) {
        let data = match r.op {
            Op::Read => {
                self.reads += 1;
                self.read_bytes = self.read_bytes.saturating_add(r.len);
                true
            }
            Op::Write => {
                self.writes += 1;
                self.write_bytes = self.write_bytes.saturating_add(r.len);
                true
            }
            Op::Trim => {
                self.trims += 1;
                self.trim_bytes = self.trim_bytes.saturating_add(r.len);
                false
            }
            Op::Flush => {
                self.flushes += 1;
                false
            }
        };
        if data {
            if r.len > 0 {
                self.sizes[63 - r.len.leading_zeros() as usize] += 1;
            }
            self.footprint.add(r.offset, r.len);
        }
        if r.op != Op::Flush {
            self.max_end = self.max_end.max(r.offset.saturating_add(r.len));
        }
        if self.first.is_none() {
            self.first = Some(r.time);
        } else {
            let d = r.time.saturating_sub(self.last).as_ns();
            if let Some(h) = &mut self.ia {
                // `record` grows the histogram; clamp only if it cannot.
                if h.record(d).is_err() {
                    h.saturating_record(d);
                }
            }
            self.ia_sum_ns += u128::from(d);
            self.ia_n += 1;
        }
        self.last = r.time;
    }

    fn finish(self, format: TraceFormat) -> TraceStats {
        let (blocks, exact) = self.footprint.count();
        let size_histogram = self
            .sizes
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(k, &c)| SizeBucket {
                min_bytes: 1u64 << k,
                max_bytes: (1u64 << k)
                    .saturating_mul(2)
                    .saturating_sub(1)
                    .max(1u64 << k),
                count: c,
            })
            .collect();
        let mut interarrival = InterArrival {
            samples: self.ia_n,
            ..InterArrival::default()
        };
        if self.ia_n > 0 {
            interarrival.mean_ns = self.ia_sum_ns as f64 / self.ia_n as f64;
            if let Some(h) = &self.ia {
                interarrival.p50_ns = h.value_at_quantile(0.5);
                interarrival.p90_ns = h.value_at_quantile(0.9);
                interarrival.p99_ns = h.value_at_quantile(0.99);
                interarrival.p999_ns = h.value_at_quantile(0.999);
                interarrival.max_ns = h.max();
            }
        }
        let first = self.first.unwrap_or(Time::ZERO);
        TraceStats {
            format,
            records: self.reads + self.writes + self.trims + self.flushes,
            reads: self.reads,
            writes: self.writes,
            trims: self.trims,
            flushes: self.flushes,
            other: self.other,
            read_bytes: self.read_bytes,
            write_bytes: self.write_bytes,
            trim_bytes: self.trim_bytes,
            size_histogram,
            footprint_bytes: blocks.saturating_mul(FOOTPRINT_BLOCK),
            footprint_exact: exact,
            max_end_bytes: self.max_end,
            first,
            duration: self.last.saturating_sub(first),
            interarrival,
        }
    }
}

/// Summarise a trace: request mix (reads, writes, trims, flushes), bytes,
/// size histogram, footprint, inter-arrival percentiles and duration of the
/// records `filter` keeps (operations with nothing to replay that it keeps
/// are counted in [`TraceStats::other`]).
///
/// Reads the whole trace (every line is validated, also outside the
/// window) in bounded memory: at most 32 MiB of footprint bitmap (see
/// [`TraceStats::footprint_exact`]), 64 KiB of HyperLogLog registers and a
/// small HDR histogram. Fails with the reader's first error.
pub fn stats(reader: TraceReader, filter: &TraceFilter) -> Result<TraceStats, TraceError> {
    stats_with_limit(reader, filter, FOOTPRINT_EXACT_LIMIT_BYTES)
}

fn stats_with_limit(
    mut reader: TraceReader,
    filter: &TraceFilter,
    footprint_limit_bytes: u64,
) -> Result<TraceStats, TraceError> {
    let mut acc = StatsAcc::new(footprint_limit_bytes);
    while let Some(item) = reader.next_item() {
        match item? {
            Item::Record(r) => {
                if filter.keep(&r) {
                    acc.add(&r);
                }
            }
            Item::Other { time, device } => {
                if filter.keep_at(time, &device) {
                    acc.other += 1;
                }
            }
        }
    }
    Ok(acc.finish(reader.format))
}

// ---------------------------------------------------------------------------
// Tests

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    const MSR: &str = "\
128166372003061629,hm,1,Read,9175040,4096,2125
128166372016382155,hm,1,Write,3154059264,4096,3260
128166372026382245,hm,1,Write,3154063360,8192,3104
128166372036382323,hm,0,Read,524288,65536,15110
";

    const SPC: &str = "\
0,303567,3584,w,0.000000
1,55590,3072,W,0.000000
0,303574,3584,r,0.026214
2,240840,512,R,0.026214,extra
";

    const BLKPARSE: &str = "\
  8,0    3        1     0.000000000   697  Q   W 223490 + 8 [kjournald]
  8,0    3        2     0.000001786   697  G   W 223490 + 8 [kjournald]
  8,0    3        3     0.000002718   697  P   N [kjournald]
  8,0    3        4     0.000005523   697  I   W 223490 + 8 [kjournald]
  8,0    3        5     0.000009012   697  D   W 223490 + 8 [kjournald]
  8,0    0        1     0.000012000  2145  D  FWS [kworker/0:1H]
  8,0    1        1     0.000011000  3301  D   R 1024 + 16 [cat]
  8,0    3        6     0.003495302     0  C   W 223490 + 8 [0]
  8,16   2        1     0.004000000  3301  D  RA 2048 + 256 [cat]
  8,0    2        2     0.005000000  3301  D   D 4096 + 2048 [fstrim]
  8,0    0        2     0.006000000     0  m   N cfq497 alloc
  8,0    0        3     0.006100000  4001  D   R 36 (12 00 00 00 24 00 ..) [sg_inq]
CPU0 (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB
Total (8,0):
Throughput (R/W): 0KiB/s / 1KiB/s
Events (8,0): 11 entries
";

    const DISKSIM: &str = "\
0.000000 0 1024 8 1
0.512500 0 2048 16 0
1.000000 1 4096 8 1
";

    const ALIBABA: &str = "\
device_id,opcode,offset,length,timestamp
0,R,126703644672,4096,1577808000000008
0,W,38654705664,16384,1577808000000102
3,R,103079215104,4096,1577808000001300
";

    const TENCENT: &str = "\
1538323200,2154820608,8,1,1283
1538323200,2154820616,8,1,1283
1538323201,61440,256,0,77
";

    const IOLOG: &str = "\
fio version 3 iolog
0 /dev/nvme0n1 add
0 /dev/nvme0n1 open
2 /dev/nvme0n1 write 0 4096
3 /dev/nvme0n1 read 8192 4096
5 /dev/nvme0n1 trim 0 4096
6 /dev/nvme0n1 sync
9 /dev/nvme0n1 write 4096 131072
10 /dev/nvme0n1 close
";

    fn reader(text: &str, fmt: TraceFormat) -> TraceReader {
        TraceReader::from_reader(
            Box::new(Cursor::new(text.as_bytes().to_vec())),
            "t.trace",
            fmt,
        )
    }

    fn all(text: &str, fmt: TraceFormat) -> Vec<TraceRecord> {
        reader(text, fmt)
            .collect::<Result<Vec<_>, _>>()
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn first_err(text: &str, fmt: TraceFormat) -> TraceError {
        first_err_of(reader(text, fmt))
    }

    fn first_err_of(mut r: TraceReader) -> TraceError {
        let fmt = r.format();
        let e = loop {
            match r.next() {
                Some(Ok(_)) => continue,
                Some(Err(e)) => break e,
                None => panic!("no error for {fmt}"),
            }
        };
        assert!(r.next().is_none(), "reader must stop after an error");
        assert!(r.next().is_none());
        e
    }

    fn op_rec(time: Time, op: Op, offset: u64, len: u64, dev: &str) -> TraceRecord {
        TraceRecord {
            time,
            op,
            offset,
            len,
            device: dev.to_string(),
        }
    }

    fn rec(time: Time, write: bool, offset: u64, len: u64, dev: &str) -> TraceRecord {
        TraceRecord {
            time,
            op: if write {
                crate::workload::Op::Write
            } else {
                crate::workload::Op::Read
            },
            offset,
            len,
            device: dev.to_string(),
        }
    }

    fn sample(fmt: TraceFormat) -> &'static str {
        match fmt {
            TraceFormat::Msr => MSR,
            TraceFormat::Spc => SPC,
            TraceFormat::Blkparse => BLKPARSE,
            TraceFormat::DiskSim => DISKSIM,
            TraceFormat::Alibaba => ALIBABA,
            TraceFormat::Tencent => TENCENT,
            TraceFormat::FioIolog => IOLOG,
            // Binary: see `blk_sample`.
            TraceFormat::Blktrace => "",
        }
    }

    #[test]
    fn msr_parses() {
        let r = all(MSR, TraceFormat::Msr);
        assert_eq!(r.len(), 4);
        assert_eq!(r[0], rec(Time::ZERO, false, 9175040, 4096, "hm_1"));
        // 13320526 ticks of 100 ns.
        assert_eq!(
            r[1],
            rec(Time::ns(1_332_052_600), true, 3154059264, 4096, "hm_1")
        );
        assert_eq!(r[3].device, "hm_0");
        assert_eq!(r[3].len, 65536);
    }

    #[test]
    fn spc_parses() {
        let r = all(SPC, TraceFormat::Spc);
        assert_eq!(r.len(), 4);
        assert_eq!(r[0], rec(Time::ZERO, true, 303567 * 512, 3584, "0"));
        assert_eq!(r[1].device, "1");
        assert_eq!(r[1].op, crate::workload::Op::Write);
        assert_eq!(r[2], rec(Time::us(26214), false, 303574 * 512, 3584, "0"));
        assert_eq!(r[3].device, "2");
    }

    #[test]
    fn blkparse_parses_issue_events_only() {
        let mut rd = reader(BLKPARSE, TraceFormat::Blkparse);
        let r: Vec<TraceRecord> = rd.by_ref().map(|x| x.unwrap()).collect();
        assert_eq!(r.len(), 5, "{r:?}");
        assert_eq!(r[0], rec(Time::ZERO, true, 223490 * 512, 4096, "8,0"));
        // Times relative to the first D event at 9.012 us. The FWS without
        // sectors is a flush.
        assert_eq!(
            r[1],
            op_rec(Time::ns(12_000 - 9_012), Op::Flush, 0, 0, "8,0")
        );
        // 11.000 us is 1 us before the flush at 12 us: clamped (within 1 ms).
        assert_eq!(
            r[2],
            rec(Time::ns(12_000 - 9_012), false, 1024 * 512, 8192, "8,0")
        );
        assert_eq!(
            r[3],
            rec(
                Time::ns(4_000_000 - 9_012),
                false,
                2048 * 512,
                131072,
                "8,16"
            )
        );
        // The discard is a trim of its range.
        assert_eq!(
            r[4],
            op_rec(
                Time::ns(5_000_000 - 9_012),
                Op::Trim,
                4096 * 512,
                2048 * 512,
                "8,0"
            )
        );
        // The SCSI pass-through is the only other operation.
        assert_eq!(rd.other_ops(), 1);
    }

    #[test]
    fn blkparse_discards_and_flushes() {
        let text = "\
  8,0 0 1 0.000100 1 D  FN [kworker]
  8,0 0 2 0.000200 1 D FWS [jbd2]
  8,0 0 3 0.000300 1 D FWS 64 + 0 [jbd2]
  8,0 0 4 0.000400 1 D FWS 64 + 8 [jbd2]
  8,0 0 5 0.000500 1 D WFS 72 + 8 [jbd2]
  8,0 0 6 0.000600 1 D   D 1000 + 2048 [fstrim]
  8,0 0 7 0.000700 1 D  DS [blkdiscard]
  8,0 0 8 0.000800 1 Q   D 5000 + 8 [fstrim]
  8,0 0 9 0.000900 1 D   N [x]
";
        let mut rd = reader(text, TraceFormat::Blkparse);
        let r: Vec<TraceRecord> = rd.by_ref().map(|x| x.unwrap()).collect();
        let ops: Vec<(Op, u64, u64)> = r.iter().map(|x| (x.op, x.offset, x.len)).collect();
        assert_eq!(
            ops,
            vec![
                (Op::Flush, 0, 0),
                (Op::Flush, 0, 0),
                (Op::Flush, 0, 0),
                // A preflush or FUA write with data is a write.
                (Op::Write, 64 * 512, 4096),
                (Op::Write, 72 * 512, 4096),
                (Op::Trim, 1000 * 512, 2048 * 512),
            ]
        );
        assert_eq!(r[5].time, Time::us(500));
        // The discard without sectors is counted, not replayed; the Q event
        // and the N event are skipped.
        assert_eq!(rd.other_ops(), 1);
        let st = stats(reader(text, TraceFormat::Blkparse), &TraceFilter::default()).unwrap();
        assert_eq!(
            (st.records, st.writes, st.trims, st.flushes, st.other),
            (6, 2, 1, 3, 1)
        );
        assert_eq!(st.trim_bytes, 2048 * 512);
        // The trim sets the address space; only the two writes are footprint.
        assert_eq!(st.max_end_bytes, (1000 + 2048) * 512);
        assert_eq!(st.footprint_bytes, 2 * 4096);
        // Errors: a zero-sector discard, a discard that is also a write, a
        // discard range that overflows, a read without a range.
        for (line, needle) in [
            ("  8,0 0 1 0.1 1 D D 8 + 0 [a]\n", "zero-length request"),
            ("  8,0 0 1 0.1 1 D WD 8 + 8 [a]\n", "more than one of R"),
            ("  8,0 0 1 0.1 1 D RW 8 + 8 [a]\n", "more than one of R"),
            (
                "  8,0 0 1 0.1 1 D D 36028797018963967 + 8 [a]\n",
                "overflows 64 bits",
            ),
            ("  8,0 0 1 0.1 1 D D 8 + 8388609 [a]\n", "larger than 4 GiB"),
            ("  8,0 0 1 0.1 1 D R [a]\n", "needs 'SECTOR + COUNT'"),
        ] {
            let e = first_err(line, TraceFormat::Blkparse);
            assert_eq!(e.line, 1, "{line}");
            assert!(e.message.contains(needle), "{line}: {e}");
        }
    }

    #[test]
    fn disksim_parses() {
        let r = all(DISKSIM, TraceFormat::DiskSim);
        assert_eq!(r[0], rec(Time::ZERO, false, 1024 * 512, 4096, "0"));
        assert_eq!(r[1], rec(Time::ns(512_500), true, 2048 * 512, 8192, "0"));
        assert_eq!(r[2], rec(Time::ms(1), false, 4096 * 512, 4096, "1"));
        // MQSim: same layout in nanoseconds.
        let mq = "4851300 1 524288 16 0\n4864300 1 524304 16 0\n";
        let r: Vec<_> = reader(mq, TraceFormat::DiskSim)
            .with_disksim_time_unit(Time::ns(1))
            .map(|x| x.unwrap())
            .collect();
        assert_eq!(r[1].time, Time::ns(13_000));
    }

    #[test]
    fn alibaba_parses_with_header() {
        let r = all(ALIBABA, TraceFormat::Alibaba);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0], rec(Time::ZERO, false, 126703644672, 4096, "0"));
        assert_eq!(r[1], rec(Time::us(94), true, 38654705664, 16384, "0"));
        assert_eq!(r[2].time, Time::us(1292));
        assert_eq!(r[2].device, "3");
    }

    #[test]
    fn tencent_parses_with_and_without_header() {
        let r = all(TENCENT, TraceFormat::Tencent);
        assert_eq!(r[0], rec(Time::ZERO, true, 2154820608 * 512, 4096, "1283"));
        assert_eq!(r[1].time, Time::ZERO);
        assert_eq!(r[2], rec(Time::s(1), false, 61440 * 512, 256 * 512, "77"));
        let with_header = format!("Timestamp,Offset,Size,IOType,VolumeID\n{TENCENT}");
        assert_eq!(all(&with_header, TraceFormat::Tencent), r);
        // Only the first data line may be a header.
        let e = first_err(
            &format!("{TENCENT}Timestamp,Offset,Size,IOType,VolumeID\n"),
            TraceFormat::Tencent,
        );
        assert_eq!(e.line, 4);
    }

    #[test]
    fn iolog_parses_trims_and_syncs_as_records() {
        let mut rd = reader(IOLOG, TraceFormat::FioIolog);
        let r: Vec<TraceRecord> = rd.by_ref().map(|x| x.unwrap()).collect();
        let dev = "/dev/nvme0n1";
        assert_eq!(
            r,
            vec![
                rec(Time::ZERO, true, 0, 4096, dev),
                rec(Time::ms(1), false, 8192, 4096, dev),
                op_rec(Time::ms(3), Op::Trim, 0, 4096, dev),
                op_rec(Time::ms(4), Op::Flush, 0, 0, dev),
                rec(Time::ms(7), true, 4096, 131072, dev),
            ]
        );
        assert_eq!(rd.other_ops(), 0);
        // fio writes OFFSET LENGTH for syncs too: checked, then dropped.
        let text = "fio version 3 iolog\n0 f datasync 0 0\n1 f sync 4096 512\n";
        let r = all(text, TraceFormat::FioIolog);
        assert_eq!(r.len(), 2);
        assert!(r
            .iter()
            .all(|x| (x.op, x.offset, x.len) == (Op::Flush, 0, 0)));
        assert_eq!(r[1].time, Time::ms(1));
    }

    /// A v2 log: no timestamps, `wait` advances the replay clock.
    const IOLOG_V2: &str = "\
fio version 2 iolog
/dev/sdb add
/dev/sdb open
/dev/sdb write 0 4096
/dev/sdb read 4096 8192
/dev/sdb wait 2500 0
/dev/sdb trim 8192 65536
/dev/sdb wait 99 0
/dev/sdb sync 0 0
/dev/sdb wait 1000
/dev/sdb datasync
/dev/sdb write 16384 4096
/dev/sdb close
";

    #[test]
    fn iolog_v2_parses_with_wait_clock() {
        let mut rd = reader(IOLOG_V2, TraceFormat::FioIolog);
        let r: Vec<TraceRecord> = rd.by_ref().map(|x| x.unwrap()).collect();
        let d = "/dev/sdb";
        assert_eq!(
            r,
            vec![
                rec(Time::ZERO, true, 0, 4096, d),
                rec(Time::ZERO, false, 4096, 8192, d),
                // wait 2500 us; the wait of 99 us is discarded (below 100).
                op_rec(Time::us(2500), Op::Trim, 8192, 65536, d),
                op_rec(Time::us(2500), Op::Flush, 0, 0, d),
                op_rec(Time::us(3500), Op::Flush, 0, 0, d),
                rec(Time::us(3500), true, 16384, 4096, d),
            ]
        );
        assert_eq!(rd.other_ops(), 0);
        // Without waits every record is at time 0; a wait before the first
        // record is not kept (times are relative to the first record).
        let r = all(
            "fio version 2 iolog\nf wait 5000 0\nf read 0 512\nf read 512 512\n",
            TraceFormat::FioIolog,
        );
        assert!(r.iter().all(|x| x.time == Time::ZERO), "{r:?}");
        let st = stats(
            reader(IOLOG_V2, TraceFormat::FioIolog),
            &TraceFilter::default(),
        )
        .unwrap();
        assert_eq!(
            (st.records, st.reads, st.writes, st.trims, st.flushes),
            (6, 1, 2, 1, 2)
        );
        assert_eq!(st.duration, Time::us(3500));
    }

    #[test]
    fn iolog_v2_and_v3_are_detected() {
        let lines: Vec<&str> = IOLOG_V2.lines().collect();
        assert_eq!(detect("v2.log", &lines).unwrap(), TraceFormat::FioIolog);
        let path = temp_file("iolog-v2", IOLOG_V2.as_bytes());
        let r = TraceReader::open(&path, None).unwrap();
        assert_eq!(r.format(), TraceFormat::FioIolog);
        let recs: Vec<TraceRecord> = r.map(|x| x.unwrap()).collect();
        assert_eq!(recs, all(IOLOG_V2, TraceFormat::FioIolog));
        assert_eq!(recs.len(), 6);
        let _ = std::fs::remove_file(path);
        assert_eq!(
            detect("v3.log", &["fio version 3 iolog", "0 f add"]).unwrap(),
            TraceFormat::FioIolog
        );
        // Other versions: an error naming both supported headers.
        let d = detect("x.log", &["fio version 1 iolog", "f add"]).unwrap_err();
        assert_eq!(d.line, 1);
        assert!(
            d.message
                .contains("'fio version 2 iolog' or 'fio version 3 iolog'"),
            "{d}"
        );
        // A broken v2 line is reported at its line by detection too.
        let d = detect("x.log", &["fio version 2 iolog", "f add", "f read 0"]).unwrap_err();
        assert_eq!(d.line, 3, "{d}");
    }

    #[test]
    fn iolog_malformed_lines_name_the_line() {
        let v2 = "fio version 2 iolog\nf add\nf open\nf read 0 4096\n";
        let cases: [(&str, usize, &str); 13] = [
            (
                "f read 0\n",
                5,
                "takes 4 fields (FILENAME ACTION OFFSET LENGTH), found 3",
            ),
            ("f open 0\n", 5, "takes 2 fields (FILENAME ACTION), found 3"),
            ("f trim 0 x\n", 5, "LENGTH 'x'"),
            ("f write -1 4096\n", 5, "OFFSET '-1'"),
            ("f sync 0\n", 5, "takes 2 or 4 fields"),
            ("f wait\n", 5, "'wait' takes 3 or 4 fields"),
            ("f wait 1.5 0\n", 5, "wait time (microseconds) '1.5'"),
            ("f munch 0 1\n", 5, "unknown action 'munch'"),
            ("\n# c\nlonely\n", 7, "expected 'FILENAME ACTION"),
            ("0 f read 0 4096\n", 5, "v3 line"),
            ("f trim 0 0\n", 5, "zero-length request"),
            ("f trim 18446744073709551615 4096\n", 5, "overflows 64 bits"),
            ("f write 0 4294967297\n", 5, "larger than 4 GiB"),
        ];
        for (tail, line, needle) in cases {
            let e = first_err(&format!("{v2}{tail}"), TraceFormat::FioIolog);
            assert_eq!(e.line, line, "{tail:?}: {e}");
            assert!(e.message.contains(needle), "{tail:?}: {e}");
        }
        // v3: wait is not allowed, syncs take 3 or 5 fields, v2 lines are flagged.
        for (tail, needle) in [
            ("1 f wait 10 0\n", "'wait' is not allowed in a v3 iolog"),
            ("1 f sync 0\n", "takes 3 or 5 fields"),
            ("f read 0 4096\n", "v2 line"),
            ("1 f trim 0 0\n", "zero-length request"),
        ] {
            let e = first_err(
                &format!("fio version 3 iolog\n{tail}"),
                TraceFormat::FioIolog,
            );
            assert_eq!(e.line, 2, "{tail:?}: {e}");
            assert!(e.message.contains(needle), "{tail:?}: {e}");
        }
        let e = first_err("fio version 4 iolog\n", TraceFormat::FioIolog);
        assert_eq!(e.line, 1);
        assert!(e.message.contains("version '4' is not supported"), "{e}");
    }

    #[test]
    fn comments_blank_lines_bom_and_crlf() {
        let text = "\u{feff}# recorded on host hm\n\n128166372003061629,hm,1,Read,0,4096,1\r\n   # another\r\n128166372003061630,hm,1,Write,4096,4096,1\r\n";
        let r = all(text, TraceFormat::Msr);
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].time, Time::ns(100));
        let e = first_err(
            "# c\n\n128166372003061629,hm,1,Read,0,4096,1\r\n128166372003061629,hm,1,Read,0,,1\r\n",
            TraceFormat::Msr,
        );
        assert_eq!((e.line, e.message.as_str()), (4, "Size is empty"));
    }

    #[test]
    fn detects_each_format() {
        for fmt in TraceFormat::ALL {
            if fmt == TraceFormat::Blktrace {
                continue; // binary: blktrace_is_detected_and_named
            }
            let lines: Vec<&str> = sample(fmt).lines().collect();
            assert_eq!(detect("s", &lines).unwrap(), fmt, "{fmt}");
            // From a file, too.
            let path = temp_file(&format!("detect-{}", fmt.name()), sample(fmt).as_bytes());
            let r = TraceReader::open(&path, None).unwrap();
            assert_eq!(r.format(), fmt);
            let recs: Vec<_> = r.map(|x| x.unwrap()).collect();
            assert_eq!(recs, all(sample(fmt), fmt));
            let _ = std::fs::remove_file(path);
        }
    }

    #[test]
    fn detect_unknown_lists_formats() {
        let e = detect(
            "weird.txt",
            &["# hello", "hello world, this is not a trace"],
        )
        .unwrap_err();
        assert_eq!(e.line, 2);
        for fmt in TraceFormat::ALL {
            assert!(e.message.contains(fmt.description()), "{e}");
        }
        assert!(detect("e", &["", "# only comments"])
            .unwrap_err()
            .message
            .contains("no data lines"));
        // A broken line in an otherwise clear MSR sample names MSR and the line.
        let e = detect(
            "m.csv",
            &[
                "128166372003061629,hm,1,Read,0,4096,1",
                "128166372003061630,hm,1,Raed,0,4096,1",
            ],
        )
        .unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.starts_with("looks like msr"), "{e}");
    }

    #[test]
    fn open_rejects_compressed_and_missing_files() {
        let path = temp_file("gz", &[0x1f, 0x8b, 8, 0, 0, 0, 0, 0]);
        let e = TraceReader::open(&path, None).unwrap_err();
        assert!(e.message.contains("gzip"), "{e}");
        let _ = std::fs::remove_file(path);
        let e = TraceReader::open(Path::new("/nonexistent/trace.csv"), None).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("/nonexistent/trace.csv: cannot open"),
            "{e}"
        );
    }

    #[test]
    fn malformed_line_in_each_format_names_file_and_line() {
        let cases: [(TraceFormat, &str, usize, &str); 14] = [
            (
                TraceFormat::Msr,
                "128166372003061629,hm,1,Read,0,4096,1\n128166372003061630,hm,1,Read,x,4096,1\n",
                2,
                "Offset 'x'",
            ),
            (
                TraceFormat::Msr,
                "128166372003061629,hm,1,Read,0,4096\n",
                1,
                "expected 7",
            ),
            (
                TraceFormat::Spc,
                "0,1,512,w,0.0\n0,1,512,q,0.1\n",
                2,
                "Opcode 'q'",
            ),
            (
                TraceFormat::Spc,
                "0,1,512,w,0.0\n\n0,1,512,w,-1\n",
                3,
                "Timestamp '-1'",
            ),
            (
                TraceFormat::Blkparse,
                "  8,0 0 1 0.000001 1 D W 8 + 8 [a]\n  8,0 0 2 0.000002 1 D W 16 - 8 [a]\n",
                2,
                "SECTOR + COUNT",
            ),
            (
                TraceFormat::Blkparse,
                "CPU0 (8,0):\n  8,0 0 1 zero 1 D W 8 + 8 [a]\n",
                2,
                "TIME 'zero'",
            ),
            (
                TraceFormat::Blkparse,
                "  8,0 0 1 0.1 1 D W 8 + 8 [a]\n8 0 1 0.2 1 D W 8 + 8 [a]\n",
                2,
                "MAJ,MIN",
            ),
            (
                TraceFormat::DiskSim,
                "0.0 0 1 8 1\n0.1 0 1 8 2\n",
                2,
                "TYPE '2'",
            ),
            (
                TraceFormat::DiskSim,
                "0.0 0 1 8 1\n0.1 0 1 8\n",
                2,
                "expected 5",
            ),
            (
                TraceFormat::Alibaba,
                "0,R,0,4096,1\n0,X,0,4096,2\n",
                2,
                "opcode 'X'",
            ),
            (
                TraceFormat::Tencent,
                "1,0,8,1,5\n2,0,8,3,5\n",
                2,
                "IOType '3'",
            ),
            (
                TraceFormat::FioIolog,
                "fio version 3 iolog\n0 f open\n1 f read 0\n",
                3,
                "takes 5 fields",
            ),
            (
                TraceFormat::FioIolog,
                "fio version 3 iolog\n1 f munch 0 1\n",
                2,
                "unknown action",
            ),
            (
                TraceFormat::FioIolog,
                "0 f read 0 4096\n",
                1,
                "fio version 3 iolog",
            ),
        ];
        for (fmt, text, line, needle) in cases {
            let e = first_err(text, fmt);
            assert_eq!(e.line, line, "{fmt}: {e}");
            assert_eq!(e.file, "t.trace");
            assert!(e.message.contains(needle), "{fmt}: {e}");
            assert!(
                e.to_string().starts_with(&format!("t.trace:{line}: ")),
                "{e}"
            );
        }
    }

    #[test]
    fn zero_length_and_huge_requests_are_errors() {
        let e = first_err("0,R,0,4096,1\n0,R,0,0,2\n", TraceFormat::Alibaba);
        assert_eq!((e.line, e.message.as_str()), (2, "zero-length request"));
        let e = first_err("0.0 0 1 0 1\n", TraceFormat::DiskSim);
        assert_eq!(e.line, 1);
        let e = first_err("0,R,0,8589934592,1\n", TraceFormat::Alibaba);
        assert!(e.message.contains("4 GiB"), "{e}");
        let e = first_err("0,R,18446744073709551615,4096,1\n", TraceFormat::Alibaba);
        assert!(e.message.contains("overflows"), "{e}");
        // A zero-count write without a flush flag is an error in blkparse too.
        let e = first_err("  8,0 0 1 0.1 1 D WS 8 + 0 [a]\n", TraceFormat::Blkparse);
        assert_eq!(e.message, "zero-length request");
    }

    #[test]
    fn out_of_order_is_rejected() {
        let e = first_err(
            "0,R,0,4096,1000\n0,R,0,4096,1000\n0,R,0,4096,999\n",
            TraceFormat::Alibaba,
        );
        assert_eq!(e.line, 3);
        assert!(
            e.message.contains("backwards") && e.message.contains("line 2"),
            "{e}"
        );
        let e = first_err("1.0 0 1 8 1\n0.5 0 1 8 1\n", TraceFormat::DiskSim);
        assert_eq!(e.line, 2);
        // blkparse: 0.5 ms back is clamped, 2 ms back is an error.
        let ok = "  8,0 0 1 0.010000 1 D W 8 + 8 [a]\n  8,0 1 1 0.009500 1 D W 16 + 8 [a]\n";
        let r = all(ok, TraceFormat::Blkparse);
        assert_eq!(r[1].time, Time::ZERO);
        let bad = "  8,0 0 1 0.010000 1 D W 8 + 8 [a]\n  8,0 1 1 0.008000 1 D W 16 + 8 [a]\n";
        let e = first_err(bad, TraceFormat::Blkparse);
        assert_eq!(e.line, 2);
        assert!(e.message.contains("1 ms"), "{e}");
        assert!(e.message.contains("backwards by 0.002s"), "{e}");
        assert_eq!(fmt_ps(1_332_052_600_000), "1.3320526s");
        assert_eq!(fmt_ps(3_000_000_000_000), "3s");
    }

    #[test]
    fn filter_by_device_and_window() {
        let r = all(MSR, TraceFormat::Msr);
        let f = TraceFilter {
            device: Some("hm_1".into()),
            ..TraceFilter::default()
        };
        assert_eq!(r.iter().filter(|x| f.keep(x)).count(), 3);
        let f = TraceFilter {
            device: None,
            start: Some(Time::s(1)),
            end: Some(Time::ns(2_332_052_600)),
        };
        // Records at 0, 1.332 s (kept), 2.332 s and 3.332 s.
        let kept: Vec<_> = r.iter().filter(|x| f.keep(x)).collect();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].offset, 3154059264);
        assert!(r.iter().all(|x| TraceFilter::default().keep(x)));
        let st = stats(
            reader(MSR, TraceFormat::Msr),
            &TraceFilter {
                device: Some("hm_1".into()),
                start: Some(Time::s(1)),
                end: None,
            },
        )
        .unwrap();
        assert_eq!((st.records, st.writes), (2, 2));
        assert_eq!(st.first, Time::ns(1_332_052_600));
        assert_eq!(st.duration, Time::ns(1_000_009_000));
    }

    #[test]
    fn remap_wrap_and_scale() {
        let cap = 1 << 30; // 1 GiB
        assert_eq!(Remap::Wrap.apply(4096, 4096, cap, 4096), (4096, 4096));
        assert_eq!(Remap::Wrap.apply(cap + 8192, 4096, cap, 4096), (8192, 4096));
        // An unaligned start is aligned down; the length is kept, rounded up.
        assert_eq!(Remap::Wrap.apply(512, 4096, cap, 4096), (0, 4096));
        assert_eq!(Remap::Wrap.apply(8192 + 512, 1024, cap, 4096), (8192, 4096));
        // A request crossing the end is moved back inside.
        assert_eq!(
            Remap::Wrap.apply(cap - 4096, 16384, cap, 4096),
            (cap - 16384, 16384)
        );
        // Longer than the drive: cut to it.
        assert_eq!(Remap::Wrap.apply(0, 2 * cap, cap, 4096), (0, cap));
        assert_eq!(Remap::Wrap.apply(5, 1, 100, 0), (5, 1));
        assert_eq!(Remap::Wrap.apply(5, 1, 100, 4096), (0, 0));
        let s = Remap::Scale {
            max_offset: 4 * cap,
        };
        assert_eq!(s.apply(2 * cap, 4096, cap, 4096), (cap / 2, 4096));
        assert_eq!(s.apply(4 * cap - 4096, 4096, cap, 4096), (cap - 4096, 4096));
        assert_eq!(s.apply(3 * cap + 1000, 4096, cap, 512), (cap / 4 * 3, 4096));
        assert_eq!(s.apply(u64::MAX, 4096, cap, 4096), (cap - 4096, 4096));
        assert_eq!(Remap::Scale { max_offset: 0 }.apply(77, 8, cap, 1), (0, 8));
        // A flush has no range: (0, 0) stays (0, 0).
        assert_eq!(Remap::Wrap.apply(0, 0, cap, 4096), (0, 0));
        assert_eq!(s.apply(0, 0, cap, 4096), (0, 0));
    }

    #[test]
    fn stats_on_a_sample() {
        let st = stats(reader(MSR, TraceFormat::Msr), &TraceFilter::default()).unwrap();
        assert_eq!(st.format, TraceFormat::Msr);
        assert_eq!((st.records, st.reads, st.writes, st.other), (4, 2, 2, 0));
        assert_eq!((st.read_bytes, st.write_bytes), (4096 + 65536, 4096 + 8192));
        assert!((st.read_fraction() - 0.5).abs() < 1e-12);
        let h: Vec<(u64, u64, u64)> = st
            .size_histogram
            .iter()
            .map(|b| (b.min_bytes, b.max_bytes, b.count))
            .collect();
        assert_eq!(
            h,
            vec![(4096, 8191, 2), (8192, 16383, 1), (65536, 131071, 1)]
        );
        // 3154059264/4096 = 770034; the 8 KiB write at 3154063360 covers
        // 770035..=770036, so 1 + 1 + 2 + 16 distinct blocks.
        assert_eq!(st.footprint_bytes, 20 * 4096);
        assert!(st.footprint_exact);
        assert_eq!(st.max_end_bytes, 3154063360 + 8192);
        assert_eq!(st.duration, Time::ns(3_332_069_400));
        let ia = &st.interarrival;
        assert_eq!(ia.samples, 3);
        // Intervals 1.3320526 s, 1.000009 s, 1.0000078 s.
        assert!(
            ia.p50_ns.abs_diff(1_000_009_000) < 1_000_009_000 / 500,
            "{ia:?}"
        );
        assert!(
            ia.max_ns.abs_diff(1_332_052_600) < 1_332_052_600 / 500,
            "{ia:?}"
        );
        assert!((ia.mean_ns - 3_332_069_400.0 / 3.0).abs() < 1.0);
        let text = st.to_text();
        assert!(text.contains("requests       4 (reads 2 = 50.0%"), "{text}");
        assert!(text.contains("footprint      80 KiB"), "{text}");
        assert!(text.contains("inter-arrival  p50 1.000s"), "{text}");
        // Blkparse: the flush and the discard are requests, the
        // pass-through is "other".
        let st = stats(
            reader(BLKPARSE, TraceFormat::Blkparse),
            &TraceFilter::default(),
        )
        .unwrap();
        assert_eq!((st.records, st.trims, st.flushes, st.other), (5, 1, 1, 1));
        // iolog: trims and flushes in the counts, the text and the JSON.
        let st = stats(
            reader(IOLOG, TraceFormat::FioIolog),
            &TraceFilter::default(),
        )
        .unwrap();
        assert_eq!(
            (st.records, st.reads, st.writes, st.trims, st.flushes, st.other),
            (5, 1, 2, 1, 1, 0)
        );
        assert_eq!((st.trim_bytes, st.read_bytes), (4096, 4096));
        // Trims extend the address space but not the footprint or the
        // read/write size histogram; all five requests are timed.
        assert_eq!(st.max_end_bytes, 4096 + 131072);
        assert_eq!(st.footprint_bytes, 33 * 4096);
        assert_eq!(st.size_histogram.iter().map(|b| b.count).sum::<u64>(), 3);
        assert_eq!(st.interarrival.samples, 4);
        let text = st.to_text();
        assert!(
            text.contains(
                "requests       5 (reads 1 = 20.0%, writes 2 = 40.0%, trims 1 = 20.0%, flushes 1 = 20.0%)"
            ),
            "{text}"
        );
        assert!(
            text.contains("bytes          read 4 KiB, written 132 KiB, trimmed 4 KiB"),
            "{text}"
        );
        assert!(!text.contains("other ops"), "{text}");
        let json = serde_json::to_value(&st).unwrap();
        assert_eq!(json["trims"], 1);
        assert_eq!(json["flushes"], 1);
        assert_eq!(json["trim_bytes"], 4096);
        let st = stats(
            reader(BLKPARSE, TraceFormat::Blkparse),
            &TraceFilter {
                device: Some("8,16".into()),
                ..TraceFilter::default()
            },
        )
        .unwrap();
        assert_eq!((st.records, st.other, st.interarrival.samples), (1, 0, 0));
    }

    #[test]
    fn footprint_bitmap_and_hll_fallback() {
        // Exact below the limit.
        let mut fp = Footprint::new(1 << 30);
        fp.add(0, 4096);
        fp.add(4095, 2); // blocks 0 and 1
        fp.add(1 << 20, 1 << 20); // 256 blocks
        assert_eq!(fp.count(), (258, true));
        // Crossing the limit switches to an estimate that keeps what was seen.
        fp.add(1 << 31, 4096);
        let (n, exact) = fp.count();
        assert!(!exact);
        assert!(n.abs_diff(259) <= 3, "{n}");
        // Estimate accuracy over a range of cardinalities.
        for &n in &[10u64, 1_000, 50_000, 200_000, 1_000_000] {
            let mut h = Hll::new();
            let mut x = Rng(n);
            for _ in 0..n {
                h.insert(x.next() >> 12);
            }
            let e = h.estimate();
            let err = (e - n as f64).abs() / n as f64;
            assert!(err < 0.015, "n={n} estimate={e} err={err}");
        }
        assert_eq!(Hll::new().estimate(), 0.0);
        // stats() with a small exact limit reports an estimate.
        let text = "0,R,0,4096,1\n0,R,1099511627776,4096,2\n0,W,8192,8192,3\n";
        let st = stats_with_limit(
            reader(text, TraceFormat::Alibaba),
            &TraceFilter::default(),
            1 << 20,
        )
        .unwrap();
        assert!(!st.footprint_exact);
        assert_eq!(st.footprint_bytes, 4 * 4096);
        let st = stats(reader(text, TraceFormat::Alibaba), &TraceFilter::default()).unwrap();
        assert!(
            !st.footprint_exact,
            "block at 1 TiB is beyond the exact bound"
        );
        assert_eq!(st.footprint_bytes, 4 * 4096);
    }

    #[test]
    fn decimal_parsing_is_exact() {
        assert_eq!(parse_decimal("0.026214", 12), Some(26_214_000_000));
        assert_eq!(parse_decimal("12", 9), Some(12_000_000_000));
        assert_eq!(parse_decimal(".5", 3), Some(500));
        assert_eq!(parse_decimal("1.", 3), Some(1000));
        assert_eq!(parse_decimal("1.5e-3", 12), Some(1_500_000_000));
        assert_eq!(parse_decimal("2E2", 0), Some(200));
        assert_eq!(parse_decimal("0.0000000000015", 12), Some(2));
        assert_eq!(parse_decimal("1e400", 0), None);
        assert_eq!(parse_decimal("0e400", 0), Some(0));
        for bad in [
            "", ".", "-1", "+1", "1e", "1.2.3", "nan", "inf", "1 ", "0x10",
        ] {
            assert_eq!(parse_decimal(bad, 0), None, "{bad}");
        }
    }

    #[test]
    fn format_names_round_trip() {
        for fmt in TraceFormat::ALL {
            assert_eq!(fmt.name().parse::<TraceFormat>().unwrap(), fmt);
            assert_eq!(fmt.to_string(), fmt.name());
        }
        assert_eq!(
            "MQSim".parse::<TraceFormat>().unwrap(),
            TraceFormat::DiskSim
        );
        let e = "csv".parse::<TraceFormat>().unwrap_err();
        assert!(
            e.contains("blktrace, msr, alibaba, tencent, spc, disksim, blkparse, iolog"),
            "{e}"
        );
    }

    #[test]
    fn long_and_binary_lines_are_errors() {
        let mut long = "0,R,0,4096,1\n".to_string();
        long.push_str(&"9".repeat(MAX_LINE_BYTES + 10));
        let e = first_err(&long, TraceFormat::Alibaba);
        assert_eq!(e.line, 2);
        assert!(e.message.contains("longer than"), "{e}");
        let mut r = TraceReader::from_reader(
            Box::new(Cursor::new(b"0,R,0,4096,1\n0,R,\xff\xfe,4096,1\n".to_vec())),
            "b",
            TraceFormat::Alibaba,
        );
        assert!(r.next().unwrap().is_ok());
        let e = r.next().unwrap().unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("UTF-8"));
        assert!(r.next().is_none());
    }

    /// xorshift64* (tests only; no rand dependency).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            let mut x = self.0 ^ 0x2545_f491_4f6c_dd1d;
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            self.0 = x;
            x.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
    }

    /// A generated Alibaba trace, produced on the fly (never held in memory).
    struct GenTrace {
        left: u64,
        ts: u64,
        rng: Rng,
        pending: Vec<u8>,
        pos: usize,
    }

    impl Read for GenTrace {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let mut n = 0;
            loop {
                if self.pos == self.pending.len() {
                    if self.left == 0 {
                        return Ok(n);
                    }
                    self.left -= 1;
                    self.pending.clear();
                    self.pos = 0;
                    self.ts += self.rng.below(200);
                    let op = if self.rng.below(10) < 7 { 'R' } else { 'W' };
                    let off = self.rng.below(16 << 20) * 4096; // 64 GiB
                    let len = 4096u64 << self.rng.below(6);
                    let dev = self.rng.below(4);
                    let _ = writeln!(self.pending, "{dev},{op},{off},{len},{}", self.ts);
                }
                let k = (self.pending.len() - self.pos).min(buf.len() - n);
                buf[n..n + k].copy_from_slice(&self.pending[self.pos..self.pos + k]);
                self.pos += k;
                n += k;
                if n == buf.len() {
                    return Ok(n);
                }
            }
        }
    }

    #[test]
    fn streams_two_million_lines() {
        let lines = 2_000_000;
        let gen = GenTrace {
            left: lines,
            ts: 1_577_808_000_000_000,
            rng: Rng(42),
            pending: Vec::new(),
            pos: 0,
        };
        let r = TraceReader::from_reader(
            Box::new(BufReader::with_capacity(1 << 16, gen)),
            "gen.csv",
            TraceFormat::Alibaba,
        );
        let t0 = std::time::Instant::now();
        let st = stats(r, &TraceFilter::default()).unwrap();
        let dt = t0.elapsed();
        eprintln!("2M-line trace: {dt:?}\n{}", st.to_text());
        assert_eq!(st.records, lines);
        assert!(st.reads > lines * 6 / 10 && st.writes > lines * 2 / 10);
        assert!(st.footprint_exact);
        assert!(st.footprint_bytes > 0 && st.footprint_bytes <= 64 << 30);
        assert_eq!(st.interarrival.samples, lines - 1);
        assert!(
            st.interarrival.p50_ns.abs_diff(100_000) < 2_000,
            "{:?}",
            st.interarrival
        );
        assert_eq!(st.size_histogram.len(), 6);
    }

    fn mutate(rng: &mut Rng, line: &str) -> Vec<u8> {
        const BYTES: &[u8] = b"0123456789,. +-eEeRWrwDNF[]()#\t\n\r\xff\x00x";
        const SNIPPETS: [&str; 6] = [
            "99999999999999999999999",
            "18446744073709551615",
            "1e999",
            "-",
            ",,",
            " + ",
        ];
        let mut b = line.as_bytes().to_vec();
        for _ in 0..=rng.below(3) {
            let at = rng.below(b.len() as u64 + 1) as usize;
            match rng.below(6) {
                0 if !b.is_empty() => {
                    let i = at.min(b.len() - 1);
                    b[i] = BYTES[rng.below(BYTES.len() as u64) as usize];
                }
                1 => b.insert(at, BYTES[rng.below(BYTES.len() as u64) as usize]),
                2 if at < b.len() => {
                    b.remove(at);
                }
                3 => b.truncate(at),
                4 => {
                    let s = SNIPPETS[rng.below(SNIPPETS.len() as u64) as usize];
                    b.splice(at..at, s.bytes());
                }
                _ => {
                    let copy = b.clone();
                    b.extend_from_slice(&copy);
                }
            }
        }
        b
    }

    fn drain(bytes: &[u8]) {
        for fmt in TraceFormat::ALL {
            let mut r = TraceReader::from_reader(Box::new(Cursor::new(bytes.to_vec())), "f", fmt);
            let mut n = 0;
            while let Some(x) = r.next() {
                n += 1;
                assert!(n < 1_000_000);
                if x.is_err() {
                    assert!(r.next().is_none());
                    break;
                }
            }
            let _ = stats(
                TraceReader::from_reader(Box::new(Cursor::new(bytes.to_vec())), "f", fmt),
                &TraceFilter::default(),
            );
        }
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.lines().collect();
        let _ = detect("f", &lines);
    }

    #[test]
    fn fuzz_smoke_never_panics() {
        let mut rng = Rng(0x5eed);
        for _ in 0..2000 {
            let len = rng.below(160) as usize;
            let bytes: Vec<u8> = (0..len)
                .map(|_| {
                    if rng.below(4) == 0 {
                        b"0123456789, \n.+"[rng.below(15) as usize]
                    } else {
                        rng.next() as u8
                    }
                })
                .collect();
            drain(&bytes);
        }
        let valid: Vec<&str> = TraceFormat::ALL
            .iter()
            .flat_map(|f| sample(*f).lines())
            .chain(IOLOG_V2.lines())
            .collect();
        for i in 0..2000 {
            let line = valid[i % valid.len()];
            let m = mutate(&mut rng, line);
            drain(&m);
            // After a valid line of each format (and the iolog header).
            let mut with_prefix = Vec::new();
            with_prefix.extend_from_slice(b"fio version 3 iolog\n");
            with_prefix.extend_from_slice(line.as_bytes());
            with_prefix.push(b'\n');
            with_prefix.extend_from_slice(&m);
            drain(&with_prefix);
            // After the v2 header.
            let mut v2 = b"fio version 2 iolog\n".to_vec();
            v2.extend_from_slice(&m);
            drain(&v2);
        }
    }

    // -----------------------------------------------------------------
    // blktrace binary

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

    fn temp_file(tag: &str, content: &[u8]) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("ssdlab-trace-{}-{tag}.txt", std::process::id()));
        let mut f = File::create(&path).unwrap();
        f.write_all(content).unwrap();
        path
    }
}
