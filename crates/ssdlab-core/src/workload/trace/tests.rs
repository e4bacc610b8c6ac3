//! Tests of the shared parsing helpers and of every format at once
//! (error locations, streaming, fuzzing).

use super::testutil::{drain, first_err, sample, Rng, IOLOG_V2};
use super::*;
use std::io::{BufReader, Read, Write as _};

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
