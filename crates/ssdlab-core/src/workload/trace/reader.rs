//! The streaming reader: [`TraceReader`] over text lines or binary blktrace records.

use super::blktrace::{blk_endian, blktrace_cpu_name, BlkFile, BlkMerge};
use super::detection::{compression, detect, sample_lines, DETECT_BYTES};
use super::{
    error, is_header, parse_line, FormatState, Parsed, TraceError, TraceFormat, TraceRecord,
    MAX_LINE_BYTES, MAX_REQUEST_BYTES,
};
use crate::units::Time;
use crate::workload::Op;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Cursor, ErrorKind, Read};
use std::path::{Path, PathBuf};

/// How far (in picoseconds) a blkparse record may go back in time: 1 ms.
const BLKPARSE_REORDER_PS: u128 = 1_000_000_000;

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

/// Where a reader reads from.
enum Source {
    Text(Lines),
    Blktrace(BlkMerge),
}

/// An item of the internal stream: a request, or an operation that is
/// counted but not simulated.
pub(super) enum Item {
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
    pub(super) recognized: u64,
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
    pub(super) fn next_item(&mut self) -> Option<Result<Item, TraceError>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::trace::testutil::{all, first_err, temp_file};

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
}
