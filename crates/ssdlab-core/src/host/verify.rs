//! fio's verify, on the data the simulated drive really returns (needs the
//! functional data store, `device::store`).
//!
//! What a write carries (fio's layout, verify.c): each `verify_interval`
//! bytes of the block (default: the whole block) start with a header —
//! magic 0xacca, version, method, interval length, the interval's random
//! seed, its byte offset on the drive, the job's write number (`numberio`),
//! the writing job, and a CRC32C of the header itself — followed by the
//! method's digest of the rest of the interval, then the data: pseudo-random
//! bytes from the seed, or `verify_pattern` repeated. `verify=pattern` is
//! the pattern alone, with no header.
//!
//! What a read checks: the header's magic, its own CRC, that it names the
//! offset that was read (a block returned from the wrong address fails
//! here) and, for a block this job wrote, its write number (a stale copy
//! fails here); then the digest of the data. As fio, a write job logs each
//! write and, when its writes are done (or every `verify_backlog` writes),
//! reads them back; a read-only job checks every read it makes.
//!
//! The host's CPU time for checksums is not charged (docs/models/data-store.md).

use super::queue::{HostQueue, Source};
use crate::units::Time;
use crate::workload::gen::Io;
use crate::workload::{BufferFill, Op, VerifyMethod, VerifySpec};
use std::collections::{BTreeMap, VecDeque};

/// fio's header magic.
const MAGIC: u16 = 0xacca;
/// Header layout version (fio's is 3).
const VERSION: u8 = 3;
/// Header bytes: magic 2, version 1, method 1, len 4, seed 8, offset 8,
/// time 8, numberio 8, thread 2, crc32c 4.
pub(crate) const HEADER: usize = 46;

/// Digest bytes of `m` (stored right after the header).
pub(crate) fn digest_len(m: VerifyMethod) -> usize {
    use VerifyMethod::*;
    match m {
        Md5 => 16,
        Crc64 => 8,
        Crc32 | Crc32c | Xxhash => 4,
        Crc16 => 2,
        Crc7 => 1,
        Sha1 => 20,
        Sha256 => 32,
        Sha512 => 64,
        Sha3_224 => 28,
        Sha3_256 => 32,
        Sha3_384 => 48,
        Sha3_512 => 64,
        Meta | Pattern | PatternHdr | Null => 0,
    }
}

/// The smallest interval a method's header and digest fit in.
pub(crate) fn min_interval(m: VerifyMethod) -> usize {
    match m {
        VerifyMethod::Pattern | VerifyMethod::Null => 1,
        _ => HEADER + digest_len(m),
    }
}

// CRC tables built at compile time (slice-by-16: about 4-8 GB/s a core).
type Crc<W> = crc::Crc<W, crc::Table<16>>;
static CRC64: Crc<u64> = Crc::<u64>::new(&crc::CRC_64_ECMA_182);
static CRC32: Crc<u32> = Crc::<u32>::new(&crc::CRC_32_ISO_HDLC);
static CRC32C: Crc<u32> = Crc::<u32>::new(&crc::CRC_32_ISCSI);
static CRC16: Crc<u16> = Crc::<u16>::new(&crc::CRC_16_ARC);
static CRC7: crc::Crc<u8> = crc::Crc::<u8>::new(&crc::CRC_7_MMC);

fn digest(m: VerifyMethod, data: &[u8], out: &mut [u8]) {
    use md5::Digest as _;
    use VerifyMethod::*;
    match m {
        Md5 => out.copy_from_slice(&md5::Md5::digest(data)),
        Crc64 => out.copy_from_slice(&CRC64.checksum(data).to_le_bytes()),
        Crc32 => out.copy_from_slice(&CRC32.checksum(data).to_le_bytes()),
        Crc32c => out.copy_from_slice(&crc32c(data).to_le_bytes()),
        Crc16 => out.copy_from_slice(&CRC16.checksum(data).to_le_bytes()),
        Crc7 => out[0] = CRC7.checksum(data),
        Xxhash => out.copy_from_slice(&xxhash_rust::xxh32::xxh32(data, 1).to_le_bytes()),
        Sha1 => out.copy_from_slice(&sha1::Sha1::digest(data)),
        Sha256 => out.copy_from_slice(&sha2::Sha256::digest(data)),
        Sha512 => out.copy_from_slice(&sha2::Sha512::digest(data)),
        Sha3_224 => out.copy_from_slice(&sha3::Sha3_224::digest(data)),
        Sha3_256 => out.copy_from_slice(&sha3::Sha3_256::digest(data)),
        Sha3_384 => out.copy_from_slice(&sha3::Sha3_384::digest(data)),
        Sha3_512 => out.copy_from_slice(&sha3::Sha3_512::digest(data)),
        Meta | Pattern | PatternHdr | Null => {}
    }
}

fn crc32c(data: &[u8]) -> u32 {
    CRC32C.checksum(data)
}

/// splitmix64: the seed of interval `i` of write `numberio` of a job.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Pseudo-random bytes from `seed` (xorshift64*; fio's default buffer
/// content is random too).
fn fill_random(seed: u64, out: &mut [u8]) {
    let mut x = seed | 1;
    let mut chunks = out.chunks_exact_mut(8);
    for c in &mut chunks {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        c.copy_from_slice(&x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes());
    }
    let rest = chunks.into_remainder();
    if !rest.is_empty() {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        let b = x.wrapping_mul(0x2545_f491_4f6c_dd1d).to_le_bytes();
        let n = rest.len();
        rest.copy_from_slice(&b[..n]);
    }
}

/// `pattern` repeated over `out`, starting `phase` bytes into it.
fn fill_pattern(pattern: &[u8], phase: usize, out: &mut [u8]) {
    for (i, b) in out.iter_mut().enumerate() {
        *b = pattern[(phase + i) % pattern.len()];
    }
}

/// The bytes a write of `len` bytes at byte `offset` carries: a verify
/// block (see the module documentation) when the job verifies, else the
/// job's buffer content.
pub(crate) fn write_content(
    verify: Option<&VerifySpec>,
    buffer: &BufferFill,
    job_seed: u64,
    thread: u16,
    offset: u64,
    numberio: u64,
    out: &mut [u8],
) {
    let Some(v) = verify else {
        match buffer {
            BufferFill::Zero => out.fill(0),
            BufferFill::Pattern(p) => fill_pattern(p, 0, out),
            BufferFill::Random => fill_random(mix(job_seed ^ mix(numberio ^ offset)), out),
            BufferFill::Image { base, data } => {
                out.fill(0);
                let start = offset.saturating_sub(*base) as usize;
                let skip = base.saturating_sub(offset) as usize;
                if offset + out.len() as u64 > *base && start < data.len() && skip < out.len() {
                    let n = (data.len() - start).min(out.len() - skip);
                    out[skip..skip + n].copy_from_slice(&data[start..start + n]);
                }
            }
        }
        return;
    };
    if v.method == VerifyMethod::Pattern {
        fill_pattern(v.pattern.as_deref().unwrap_or(&[0]), 0, out);
        return;
    }
    let total = out.len();
    let iv = interval(v, total);
    let dl = digest_len(v.method);
    for (i, chunk) in out.chunks_mut(iv).enumerate() {
        let seed = mix(job_seed ^ mix(numberio.wrapping_mul(0x1_0000_0001) ^ i as u64));
        let at = offset + (i * iv) as u64;
        let data_from = (HEADER + dl).min(chunk.len());
        {
            let data = &mut chunk[data_from..];
            match &v.pattern {
                Some(p) => fill_pattern(p, 0, data),
                None => fill_random(seed, data),
            }
        }
        let (head, data) = chunk.split_at_mut(data_from);
        let mut d = [0u8; 64];
        digest(v.method, data, &mut d[..dl]);
        if head.len() < HEADER + dl {
            // Cannot happen: intervals are checked against `min_interval`.
            continue;
        }
        put_header(
            head,
            v.method,
            chunk_len(iv, total, i),
            seed,
            at,
            numberio,
            thread,
        );
        head[HEADER..HEADER + dl].copy_from_slice(&d[..dl]);
    }
}

fn chunk_len(iv: usize, len: usize, i: usize) -> u32 {
    (len - i * iv).min(iv) as u32
}

/// Bytes per header for a block of `len` bytes (fio: `verify_interval` if
/// it is no larger than the block, else the block).
pub(crate) fn interval(v: &VerifySpec, len: usize) -> usize {
    match v.interval {
        Some(i) if (i as usize) <= len && i > 0 => i as usize,
        _ => len,
    }
}

/// The method's code in the header (its position in `VerifyMethod`, from 1).
fn method_code(m: VerifyMethod) -> u8 {
    m as u8 + 1
}

fn put_header(
    h: &mut [u8],
    m: VerifyMethod,
    len: u32,
    seed: u64,
    offset: u64,
    numberio: u64,
    thread: u16,
) {
    h[0..2].copy_from_slice(&MAGIC.to_le_bytes());
    h[2] = VERSION;
    h[3] = method_code(m);
    h[4..8].copy_from_slice(&len.to_le_bytes());
    h[8..16].copy_from_slice(&seed.to_le_bytes());
    h[16..24].copy_from_slice(&offset.to_le_bytes());
    h[24..32].fill(0); // time: not recorded
    h[32..40].copy_from_slice(&numberio.to_le_bytes());
    h[40..42].copy_from_slice(&thread.to_le_bytes());
    let c = crc32c(&h[..42]);
    h[42..46].copy_from_slice(&c.to_le_bytes());
}

fn le64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

/// Check `data`, read from byte `offset`, as a block written by a verifying
/// job; `numberio`: the write number it must carry (a block this job wrote),
/// or `None` (a read-only job's read). The error says what failed, as fio
/// would.
pub(crate) fn check(
    v: &VerifySpec,
    offset: u64,
    numberio: Option<u64>,
    data: &[u8],
) -> Result<(), String> {
    let len = data.len();
    let where_ = |at: u64, n: usize| {
        format!("offset {at}, length {n} (requested block: offset={offset}, length={len})")
    };
    match v.method {
        VerifyMethod::Null => return Ok(()),
        VerifyMethod::Pattern => {
            let p = v.pattern.as_deref().unwrap_or(&[0]);
            if let Some(i) = pattern_mismatch(p, data) {
                return Err(format!(
                    "pattern: verify failed at {}: byte {i} is 0x{:02x}, wanted 0x{:02x}",
                    where_(offset, len),
                    data[i],
                    p[i % p.len()]
                ));
            }
            return Ok(());
        }
        _ => {}
    }
    let iv = interval(v, len);
    let dl = digest_len(v.method);
    for (i, chunk) in data.chunks(iv).enumerate() {
        let at = offset + (i * iv) as u64;
        if chunk.len() < HEADER + dl {
            return Err(format!(
                "verify: interval too short for its header at {}",
                where_(at, chunk.len())
            ));
        }
        let magic = u16::from_le_bytes([chunk[0], chunk[1]]);
        if magic != MAGIC {
            return Err(format!(
                "verify: bad magic header {magic:x}, wanted {MAGIC:x} at {}",
                where_(at, chunk.len())
            ));
        }
        let hcrc = u32::from_le_bytes([chunk[42], chunk[43], chunk[44], chunk[45]]);
        if crc32c(&chunk[..42]) != hcrc {
            return Err(format!(
                "verify: bad header crc at {}",
                where_(at, chunk.len())
            ));
        }
        let hlen = u32::from_le_bytes([chunk[4], chunk[5], chunk[6], chunk[7]]) as usize;
        if hlen != chunk.len() {
            return Err(format!(
                "verify: bad header length {hlen}, wanted {} at {}",
                chunk.len(),
                where_(at, chunk.len())
            ));
        }
        let hoff = le64(&chunk[16..24]);
        if hoff != at {
            return Err(format!(
                "verify: bad header offset {hoff}, wanted {at} at {}",
                where_(at, chunk.len())
            ));
        }
        if let Some(n) = numberio {
            let hn = le64(&chunk[32..40]);
            if hn != n {
                return Err(format!(
                    "verify: bad header numberio {hn}, wanted {n} at {}",
                    where_(at, chunk.len())
                ));
            }
        }
        let body = &chunk[HEADER + dl..];
        if v.method == VerifyMethod::PatternHdr {
            let p = v.pattern.as_deref().unwrap_or(&[0]);
            if let Some(k) = pattern_mismatch(p, body) {
                return Err(format!(
                    "pattern: verify failed at {}: data byte {k} after the header differs",
                    where_(at, chunk.len())
                ));
            }
            continue;
        }
        let mut d = [0u8; 64];
        digest(v.method, body, &mut d[..dl]);
        if d[..dl] != chunk[HEADER..HEADER + dl] {
            return Err(format!(
                "{}: verify failed at {}\n       Expected: {}\n       Received: {}",
                v.method.name(),
                where_(at, chunk.len()),
                hex(&chunk[HEADER..HEADER + dl]),
                hex(&d[..dl])
            ));
        }
    }
    Ok(())
}

/// The first byte of `data` that is not `pattern` repeated from its start.
fn pattern_mismatch(pattern: &[u8], data: &[u8]) -> Option<usize> {
    data.iter()
        .enumerate()
        .position(|(i, &b)| b != pattern[i % pattern.len()])
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// A write a verifying job logged (fio's io_piece).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Piece {
    /// Drive.
    pub d: u16,
    /// Byte offset and length.
    pub off: u64,
    pub len: u32,
    /// The job's write number.
    pub numberio: u64,
    /// The write has completed.
    pub done: bool,
}

/// The log of a verifying job's writes, in write order when its offsets
/// cannot overlap (fio's list), else by offset with older overlapping
/// writes dropped (fio's tree).
#[derive(Debug)]
pub(crate) enum Log {
    List(VecDeque<Piece>),
    Tree(BTreeMap<(u16, u64), Piece>),
}

impl Log {
    pub(crate) fn len(&self) -> usize {
        match self {
            Log::List(l) => l.len(),
            Log::Tree(t) => t.len(),
        }
    }

    pub(crate) fn push(&mut self, p: Piece) {
        match self {
            Log::List(l) => l.push_back(p),
            Log::Tree(t) => {
                // Drop older pieces this one overlaps (pieces in the
                // tree never overlap each other).
                let end = p.off + p.len as u64;
                let over: Vec<(u16, u64)> = t
                    .range((p.d, 0)..(p.d, end))
                    .rev()
                    .take_while(|(_, q)| q.off + q.len as u64 > p.off || q.off >= p.off)
                    .filter(|(_, q)| q.off + q.len as u64 > p.off)
                    .map(|(k, _)| *k)
                    .collect();
                for k in over {
                    t.remove(&k);
                }
                t.insert((p.d, p.off), p);
            }
        }
    }

    /// The write `numberio` at byte `off` of drive `d` completed.
    pub(crate) fn done(&mut self, d: u16, off: u64, numberio: u64) {
        match self {
            Log::List(l) => {
                // Every write of the job is logged, in write-number order,
                // and only the front is taken: the piece is found by index.
                let first = l.front().map_or(0, |p| p.numberio);
                if let Some(p) = numberio
                    .checked_sub(first)
                    .and_then(|i| l.get_mut(i as usize))
                    .filter(|p| p.numberio == numberio)
                {
                    p.done = true;
                }
            }
            Log::Tree(t) => {
                if let Some(p) = t.get_mut(&(d, off)) {
                    if p.numberio == numberio {
                        p.done = true;
                    }
                }
            }
        }
    }

    /// The next completed write to read back, if the first in line has completed.
    pub(crate) fn pop(&mut self) -> Option<Piece> {
        match self {
            Log::List(l) => {
                if l.front().is_some_and(|p| p.done) {
                    l.pop_front()
                } else {
                    None
                }
            }
            Log::Tree(t) => {
                let k = t.iter().find(|(_, p)| p.done).map(|(k, _)| *k)?;
                t.remove(&k)
            }
        }
    }
}

/// Where a verifying queue is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Running the job's own I/O.
    Run,
    /// Reading back what it wrote.
    Verify,
}

/// A verifying job clone's state.
#[derive(Debug)]
pub(crate) struct QueueVerify {
    pub spec: VerifySpec,
    pub log: Log,
    pub phase: Phase,
    /// Writes logged so far (fio's io_hist_len counter for the backlog).
    pub logged: u64,
    /// Backlog reads still to issue in the current batch.
    pub batch_left: u64,
    /// The job only reads: check every read (no write numbers known).
    pub inline: bool,
    /// Stop at the next chance (`verify_fatal` after a failure).
    pub stop: bool,
}

impl QueueVerify {
    pub(crate) fn new(spec: VerifySpec, overlap_risk: bool, read_only: bool) -> QueueVerify {
        QueueVerify {
            spec,
            log: if overlap_risk {
                Log::Tree(BTreeMap::new())
            } else {
                Log::List(VecDeque::new())
            },
            phase: Phase::Run,
            logged: 0,
            batch_left: 0,
            inline: read_only,
            stop: false,
        }
    }

    /// Log write `numberio` of `io` to drive `d` (fio's `log_io_piece`),
    /// and start a backlog batch every `verify_backlog` writes.
    pub(crate) fn log_write(&mut self, d: u16, off: u64, len: u64, numberio: u64, done: bool) {
        self.log.push(Piece {
            d,
            off,
            len: len as u32,
            numberio,
            done,
        });
        self.logged += 1;
        let b = self.spec.backlog;
        if b > 0 && self.logged.is_multiple_of(b) {
            self.batch_left = if self.spec.batch > 0 {
                self.spec.batch
            } else {
                b
            };
        }
    }
}

/// The job's own I/O of queue `h` is done: start reading back what it
/// wrote, if it verifies (`do_verify`), wrote something, and did not end at
/// its runtime (fio skips verifying a job its runtime cut short).
#[cold]
#[inline(never)]
pub(crate) fn begin(h: &mut HostQueue, at: Time) -> bool {
    let past = matches!(&h.gen, Source::Job(g) if g.past_deadline(at));
    let Some(v) = h.verify.as_mut() else {
        return false;
    };
    if v.phase != Phase::Run || v.inline || v.stop || !v.spec.do_verify || past {
        return false;
    }
    if v.log.len() == 0 {
        return false;
    }
    v.phase = Phase::Verify;
    v.batch_left = 0;
    true
}

/// `verify_only`: a write job's write is logged as if it had been done (an
/// earlier run wrote it) and not issued; flushes are skipped. True if `io`
/// was consumed so.
#[cold]
#[inline(never)]
pub(crate) fn dry_run(h: &mut HostQueue, io: Io, unit: u64) -> bool {
    let Some(v) = h.verify.as_mut() else {
        return false;
    };
    if !v.spec.verify_only || io.op == Op::Read {
        return false;
    }
    if io.op == Op::Write {
        let (d, _) = h.targets[h.next_target];
        if h.targets.len() > 1 {
            h.next_target = (h.next_target + 1) % h.targets.len();
        }
        let n = h.numberio;
        h.numberio += 1;
        v.log_write(d, io.offset(unit), io.bytes(unit), n, true);
    }
    true
}

/// What a command carries for the data store.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum DataTag {
    /// Nothing to check.
    #[default]
    None,
    /// A logged write (mark its piece done when it completes).
    Logged,
    /// Read back a logged write: check with its write number.
    ReadBack,
    /// A read-only job's read: check without a write number.
    Inline,
}

/// Verify results of a run.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct VerifyReport {
    /// Blocks (I/Os) checked.
    pub blocks: u64,
    /// Bytes checked.
    pub bytes: u64,
    /// Blocks that failed.
    pub failures: u64,
    /// The first failures (at most 10), as fio prints them.
    pub first_failures: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(m: VerifyMethod) -> VerifySpec {
        VerifySpec {
            method: m,
            interval: None,
            pattern: None,
            do_verify: true,
            verify_only: false,
            backlog: 0,
            batch: 0,
            fatal: false,
        }
    }

    const ALL: [VerifyMethod; 17] = {
        use VerifyMethod::*;
        [
            Md5, Crc64, Crc32, Crc32c, Crc16, Crc7, Sha1, Sha256, Sha512, Sha3_224, Sha3_256,
            Sha3_384, Sha3_512, Xxhash, Meta, Null, PatternHdr,
        ]
    };

    #[test]
    fn every_method_accepts_what_it_wrote_and_catches_a_flipped_bit() {
        for m in ALL.iter().copied().chain([VerifyMethod::Pattern]) {
            let mut v = spec(m);
            if matches!(m, VerifyMethod::Pattern | VerifyMethod::PatternHdr) {
                v.pattern = Some(vec![0xde, 0xad, 0xbe, 0xef]);
            }
            for iv in [None, Some(512)] {
                v.interval = iv;
                let mut b = vec![0u8; 4096];
                write_content(Some(&v), &BufferFill::Random, 7, 0, 8192, 3, &mut b);
                check(&v, 8192, Some(3), &b).unwrap_or_else(|e| panic!("{m:?}: {e}"));
                if m == VerifyMethod::Null {
                    continue;
                }
                // A flipped data bit (past any header and digest).
                let mut bad = b.clone();
                bad[4000] ^= 1;
                let detects_data = !matches!(m, VerifyMethod::Meta);
                assert_eq!(
                    check(&v, 8192, Some(3), &bad).is_err(),
                    detects_data,
                    "{m:?}"
                );
                if m == VerifyMethod::Pattern {
                    continue;
                }
                // The block read from another address, or an older write.
                let e = check(&v, 4096, Some(3), &b).unwrap_err();
                assert!(e.contains("bad header offset"), "{m:?}: {e}");
                let e = check(&v, 8192, Some(2), &b).unwrap_err();
                assert!(e.contains("numberio"), "{m:?}: {e}");
                // Zeros (never written) fail on the magic.
                let e = check(&v, 8192, None, &[0u8; 4096]).unwrap_err();
                assert!(e.contains("bad magic header 0"), "{m:?}: {e}");
            }
        }
    }

    #[test]
    fn a_tree_log_keeps_only_the_newest_of_overlapping_writes() {
        let mut l = Log::Tree(BTreeMap::new());
        let p = |lpn: u64, nlpn: u32, n| Piece {
            d: 0,
            off: lpn * 512,
            len: nlpn * 512,
            numberio: n,
            done: true,
        };
        l.push(p(10, 4, 0));
        l.push(p(20, 2, 1));
        l.push(p(12, 1, 2)); // overlaps the first
        l.push(p(0, 2, 3));
        assert_eq!(l.len(), 3);
        assert_eq!(l.pop().map(|x| x.numberio), Some(3));
        assert_eq!(l.pop().map(|x| x.numberio), Some(2));
        assert_eq!(l.pop().map(|x| x.numberio), Some(1));
        assert_eq!(l.pop(), None);
    }

    #[test]
    fn a_list_log_waits_for_its_first_write() {
        let mut l = Log::List(VecDeque::new());
        for n in 0..3 {
            l.push(Piece {
                d: 0,
                off: n * 4096,
                len: 4096,
                numberio: n,
                done: false,
            });
        }
        l.done(0, 4096, 1);
        assert_eq!(l.pop(), None, "write 0 is still in flight");
        l.done(0, 0, 0);
        assert_eq!(l.pop().map(|p| p.numberio), Some(0));
        assert_eq!(l.pop().map(|p| p.numberio), Some(1));
        assert_eq!(l.pop(), None);
    }
}
