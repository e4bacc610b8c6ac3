//! fio I/O logs, versions 2 and 3 ([`TraceFormat::FioIolog`](super::TraceFormat::FioIolog)).

use super::{int, show, split_ws, time_field, FormatState, Parsed};
use crate::workload::Op;

/// The actions of fio's iolog v2 and v3.
const IOLOG_ACTIONS: [&str; 9] = [
    "add", "open", "close", "read", "write", "trim", "sync", "datasync", "wait",
];

pub(super) fn parse_iolog(line: &str, st: &mut FormatState) -> Result<Parsed, String> {
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

#[cfg(test)]
mod tests {
    use crate::units::Time;
    use crate::workload::trace::testutil::{
        all, first_err, op_rec, reader, rec, temp_file, IOLOG, IOLOG_V2,
    };
    use crate::workload::trace::{
        detect, stats, TraceFilter, TraceFormat, TraceReader, TraceRecord,
    };
    use crate::workload::Op;

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
}
