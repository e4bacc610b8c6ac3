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

// One file per format (its parse function and constants; `blktrace` the
// binary records and the per-CPU merge), then the reader, detection, the
// filter and remap, and the statistics. Shared here: the format, record and
// error types, the field helpers and the per-line dispatch.
mod alibaba;
mod blkparse;
mod blktrace;
mod detection;
mod disksim;
mod filter;
mod iolog;
mod msr;
mod reader;
mod spc;
mod summary;
mod tencent;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod testutil;

pub use detection::detect;
pub use filter::{Remap, TraceFilter};
pub use reader::TraceReader;
pub use summary::{stats, InterArrival, SizeBucket, TraceStats, FOOTPRINT_EXACT_LIMIT_BYTES};

use super::Op;
use crate::units::Time;
use std::fmt;
use std::str::FromStr;

/// Bytes per sector in the sector-addressed formats.
const SECTOR: u64 = 512;
/// Longest accepted line, in bytes (bounds the reader's memory).
pub const MAX_LINE_BYTES: usize = 64 * 1024;
/// Largest accepted request, in bytes (4 GiB).
pub const MAX_REQUEST_BYTES: u64 = 1 << 32;

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
        TraceFormat::Msr => msr::parse_msr(line),
        TraceFormat::Spc => spc::parse_spc(line),
        TraceFormat::Blkparse => blkparse::parse_blkparse(line),
        TraceFormat::DiskSim => disksim::parse_disksim(line, st.disksim_unit_ps),
        TraceFormat::Alibaba => alibaba::parse_alibaba(line),
        TraceFormat::Tencent => tencent::parse_tencent(line),
        TraceFormat::FioIolog => iolog::parse_iolog(line, st),
        // Never reached: a blktrace reader has a binary source, not lines.
        TraceFormat::Blktrace => Err("blktrace is a binary format, not text lines".to_string()),
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
