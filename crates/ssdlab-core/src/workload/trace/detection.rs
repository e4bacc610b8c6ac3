//! Format detection: [`detect`] for the text formats, and the read-ahead
//! checks [`TraceReader::open`] makes (compression, sample lines).

use super::{error, TraceError, TraceFormat, TraceReader};
use std::io::Cursor;

/// Data lines [`TraceReader::open`] gives to [`detect`].
const DETECT_LINES: usize = 16;
/// Bytes [`TraceReader::open`] reads ahead to detect the format.
pub(super) const DETECT_BYTES: usize = 64 * 1024;

/// Compression format recognised by its magic bytes, with the tool to undo it.
pub(super) fn compression(prefix: &[u8]) -> Option<(&'static str, &'static str)> {
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
pub(super) fn sample_lines(prefix: &[u8], cut: bool) -> Vec<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::trace::testutil::{all, sample, temp_file};

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
}
