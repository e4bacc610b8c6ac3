//! Fixtures shared by the trace tests: a sample of each text format,
//! reader helpers, a small random generator and the fuzz drain.

use super::{detect, stats, TraceError, TraceFilter, TraceFormat, TraceReader, TraceRecord};
use crate::units::Time;
use crate::workload::Op;
use std::fs::File;
use std::io::{Cursor, Write as _};

pub(super) const MSR: &str = "\
128166372003061629,hm,1,Read,9175040,4096,2125
128166372016382155,hm,1,Write,3154059264,4096,3260
128166372026382245,hm,1,Write,3154063360,8192,3104
128166372036382323,hm,0,Read,524288,65536,15110
";

pub(super) const SPC: &str = "\
0,303567,3584,w,0.000000
1,55590,3072,W,0.000000
0,303574,3584,r,0.026214
2,240840,512,R,0.026214,extra
";

pub(super) const BLKPARSE: &str = "\
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

pub(super) const DISKSIM: &str = "\
0.000000 0 1024 8 1
0.512500 0 2048 16 0
1.000000 1 4096 8 1
";

pub(super) const ALIBABA: &str = "\
device_id,opcode,offset,length,timestamp
0,R,126703644672,4096,1577808000000008
0,W,38654705664,16384,1577808000000102
3,R,103079215104,4096,1577808000001300
";

pub(super) const TENCENT: &str = "\
1538323200,2154820608,8,1,1283
1538323200,2154820616,8,1,1283
1538323201,61440,256,0,77
";

pub(super) const IOLOG: &str = "\
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

pub(super) fn reader(text: &str, fmt: TraceFormat) -> TraceReader {
    TraceReader::from_reader(
        Box::new(Cursor::new(text.as_bytes().to_vec())),
        "t.trace",
        fmt,
    )
}

pub(super) fn all(text: &str, fmt: TraceFormat) -> Vec<TraceRecord> {
    reader(text, fmt)
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| panic!("{e}"))
}

pub(super) fn first_err(text: &str, fmt: TraceFormat) -> TraceError {
    first_err_of(reader(text, fmt))
}

pub(super) fn first_err_of(mut r: TraceReader) -> TraceError {
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

pub(super) fn op_rec(time: Time, op: Op, offset: u64, len: u64, dev: &str) -> TraceRecord {
    TraceRecord {
        time,
        op,
        offset,
        len,
        device: dev.to_string(),
    }
}

pub(super) fn rec(time: Time, write: bool, offset: u64, len: u64, dev: &str) -> TraceRecord {
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

pub(super) fn sample(fmt: TraceFormat) -> &'static str {
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

/// A v2 log: no timestamps, `wait` advances the replay clock.
pub(super) const IOLOG_V2: &str = "\
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

/// xorshift64* (tests only; no rand dependency).
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        let mut x = self.0 ^ 0x2545_f491_4f6c_dd1d;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

pub(super) fn drain(bytes: &[u8]) {
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

pub(super) fn temp_file(tag: &str, content: &[u8]) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("ssdlab-trace-{}-{tag}.txt", std::process::id()));
    let mut f = File::create(&path).unwrap();
    f.write_all(content).unwrap();
    path
}
