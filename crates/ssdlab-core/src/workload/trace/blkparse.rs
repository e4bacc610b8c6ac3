//! `blkparse` text output ([`TraceFormat::Blkparse`](super::TraceFormat::Blkparse)).

use super::{int, sectors, show, split_ws, time_field, Parsed};
use crate::workload::Op;

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

pub(super) fn parse_blkparse(line: &str) -> Result<Parsed, String> {
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

#[cfg(test)]
mod tests {
    use crate::units::Time;
    use crate::workload::trace::testutil::{first_err, op_rec, reader, rec, BLKPARSE};
    use crate::workload::trace::{stats, TraceFilter, TraceFormat, TraceRecord};
    use crate::workload::Op;

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
}
