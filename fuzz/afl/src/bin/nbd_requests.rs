//! A stream of NBD requests (what nbdkit hands the plugin: read, write,
//! flush, trim, write-zeroes with their flags, offsets and lengths, from
//! several connections) served by a simulated drive
//! (`ssdlab_core::serve::Server`, the code under `ssdlab serve`), on the
//! simulated clock (each request released as soon as it is simulated) or,
//! for a quarter of the set-ups, in real time.
//!
//! Every request inside the export must be served; one that is not
//! (past the end, or `offset + len` overflowing) must be refused as invalid,
//! never an I/O error, a shutdown, a panic or a hang. In the sequential mode
//! every read must return what the requests before it wrote (trimmed and
//! zeroed ranges read as zeros). Servers are kept across inputs (see
//! [`Pool`]) and must stop cleanly with a report.
//!
//! Input: one byte of set-up (bit 0: fill-preconditioned rather than fresh;
//! bits 1-2: NVMe queue pairs 1-4; bits 3-4: largest command 4 KiB, 8 KiB,
//! 64 KiB or 1 MiB; bit 5: two client threads at once, no data check;
//! bits 6 and 7 both set: served on the wall clock), then
//! records of 12 bytes: op, connection, offset (4 bytes), length (2 bytes),
//! length in 64 KiB steps (0-7), pattern, flags (bit 0: FUA; bit 1: the offset's
//! high 32 bits are all ones; bit 2: may trim).
use ssdlab_core::serve::{ServeClock, ServeError, ServeSpec, Server};
use std::collections::HashMap;

/// The test drive: SLC, 4 channels x 2 dies, 107 MB (tests/data), with
/// array times of a few microseconds, so that serving in real time (each
/// request released at its simulated completion) costs little wall time
/// per input: the target is about the request paths, not the timing.
fn device_text() -> String {
    include_str!("../../../../tests/data/small-slc.toml")
        .replace("t_read = [\"25us\"]", "t_read = [\"2us\"]")
        .replace("t_prog = [\"200us\"]", "t_prog = [\"4us\"]")
        .replace("t_erase = \"2ms\"", "t_erase = \"20us\"")
        .replace("bus_bandwidth = \"400MB/s\"", "bus_bandwidth = \"4GB/s\"")
}
const PAGE: u64 = 4096;
const MAX_REQUESTS: usize = 48;

#[derive(Clone, Copy)]
enum Op {
    Read,
    Write,
    Flush,
    Trim,
    Zero,
}

#[derive(Clone, Copy)]
struct Req {
    op: Op,
    conn: u32,
    offset: u64,
    len: u64,
    pattern: u8,
    fua: bool,
    may_trim: bool,
}

fn decode(data: &[u8], capacity: u64) -> Vec<Req> {
    data.chunks_exact(12)
        .take(MAX_REQUESTS)
        .map(|r| {
            let op = match r[0] % 5 {
                0 => Op::Read,
                1 => Op::Write,
                2 => Op::Flush,
                3 => Op::Trim,
                _ => Op::Zero,
            };
            let raw = u32::from_le_bytes([r[2], r[3], r[4], r[5]]) as u64;
            let flags = r[11];
            // Mostly inside the export (and a little past its end), with
            // any alignment; sometimes near the top of the u64 range.
            let offset = if flags & 2 != 0 {
                raw | 0xffff_ffff_0000_0000
            } else {
                raw % (capacity + 2 * PAGE)
            };
            // Up to 64 KiB, sometimes up to 512 KiB (several commands).
            let len = u16::from_le_bytes([r[6], r[7]]) as u64 + (r[8] as u64 % 8) * 65_536;
            Req {
                op,
                conn: r[1] as u32 % 4,
                offset,
                len,
                pattern: r[9],
                fua: flags & 1 != 0,
                may_trim: flags & 4 != 0,
            }
        })
        .collect()
}

/// The bytes a write of `req` carries: a distinct 8-byte word at every
/// position (so data placed at a wrong offset reads back wrong), made word
/// by word (the fuzzer's instrumentation makes byte loops costly).
fn payload(req: &Req) -> Vec<u8> {
    let mut out = vec![0u8; req.len.div_ceil(8) as usize * 8];
    for (k, w) in out.chunks_exact_mut(8).enumerate() {
        let mut z = (k as u64) ^ ((req.pattern as u64) << 40);
        // splitmix64's finaliser.
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        w.copy_from_slice(&(z ^ (z >> 31)).to_le_bytes());
    }
    out.truncate(req.len as usize);
    out
}

/// What the export should hold: 4 KiB pages written so far (absent: zeros).
#[derive(Default)]
struct Shadow {
    pages: HashMap<u64, Box<[u8; PAGE as usize]>>,
}

impl Shadow {
    /// The pieces of `[offset, offset + len)` within one page each:
    /// (page, offset in the page, offset in the range, length).
    fn pieces(offset: u64, len: u64) -> impl Iterator<Item = (u64, usize, usize, usize)> {
        let end = offset + len;
        let mut at = offset;
        std::iter::from_fn(move || {
            if at >= end {
                return None;
            }
            let in_page = at % PAGE;
            let n = (PAGE - in_page).min(end - at);
            let piece = (
                at / PAGE,
                in_page as usize,
                (at - offset) as usize,
                n as usize,
            );
            at += n;
            Some(piece)
        })
    }

    /// `bytes` (or zeros) now lie at `offset`.
    fn put(&mut self, offset: u64, bytes: Option<&[u8]>, len: u64) {
        for (page, at, from, n) in Shadow::pieces(offset, len) {
            match bytes {
                None if n == PAGE as usize => {
                    self.pages.remove(&page);
                }
                None => {
                    if let Some(p) = self.pages.get_mut(&page) {
                        p[at..at + n].fill(0);
                    }
                }
                Some(d) => {
                    let p = self
                        .pages
                        .entry(page)
                        .or_insert_with(|| Box::new([0; PAGE as usize]));
                    p[at..at + n].copy_from_slice(&d[from..from + n]);
                }
            }
        }
    }

    fn get(&self, offset: u64, len: u64) -> Vec<u8> {
        let mut out = vec![0u8; len as usize];
        for (page, at, from, n) in Shadow::pieces(offset, len) {
            if let Some(p) = self.pages.get(&page) {
                out[from..from + n].copy_from_slice(&p[at..at + n]);
            }
        }
        out
    }
}

/// Serve `req`; check the answer against the export's bounds (and, with a
/// shadow, the data). Whether it was served.
fn serve(server: &Server, req: &Req, shadow: Option<&mut Shadow>) -> bool {
    let capacity = server.capacity();
    let inside = req
        .offset
        .checked_add(req.len)
        .is_some_and(|e| e <= capacity);
    let result = match req.op {
        Op::Read => {
            let mut buf = vec![0u8; req.len as usize];
            let r = server.read(req.conn, req.offset, &mut buf);
            if r.is_ok() {
                if let Some(s) = &shadow {
                    let want = s.get(req.offset, req.len);
                    if buf != want {
                        let at = buf.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(0);
                        panic!(
                            "read of {} B at {} returned wrong data at byte {at}",
                            req.len, req.offset
                        );
                    }
                }
            }
            r
        }
        Op::Write => {
            let data = payload(req);
            let r = server.write(req.conn, req.offset, &data, req.fua);
            if let (Ok(_), Some(s)) = (&r, shadow) {
                s.put(req.offset, Some(&data), req.len);
            }
            r
        }
        Op::Flush => server.flush(req.conn),
        Op::Trim => {
            let r = server.trim(req.conn, req.offset, req.len, req.fua);
            if let (Ok(_), Some(s)) = (&r, shadow) {
                s.put(req.offset, None, req.len);
            }
            r
        }
        Op::Zero => {
            let r = server.zero(req.conn, req.offset, req.len, req.may_trim, req.fua);
            if let (Ok(_), Some(s)) = (&r, shadow) {
                s.put(req.offset, None, req.len);
            }
            r
        }
    };
    let flush = matches!(req.op, Op::Flush);
    match result {
        Ok(_) => {
            assert!(inside || flush, "a request past the end was served");
            true
        }
        Err(ServeError::Invalid(e)) => {
            assert!(
                !inside && !flush,
                "a request inside the export refused: {e}"
            );
            false
        }
        Err(e) => panic!("request failed: {e}"),
    }
}

/// A server per set-up (preconditioning, queue pairs, largest command, clock),
/// started on first use and kept across inputs (starting one per input
/// would spend nearly all the time on start-up); every input begins by
/// trimming the span the previous input on that server could have written,
/// so the export reads as zeros (trimming all of it, 26,000 mapping units,
/// cost more than the rest of an input), and every 256th input
/// on a server stops it (checking its report) to start afresh. The key:
/// set-up bits 0-4, and bit 5 for the wall clock.
struct Pool {
    device: ssdlab_core::config::Device,
    servers: HashMap<u8, Slot>,
}

/// A server, the inputs it has served, and the byte span `[from, to)` its
/// last input could have written.
struct Slot {
    server: Server,
    uses: u32,
    dirty: (u64, u64),
}

impl Pool {
    fn key(setup: u8) -> u8 {
        let wall = setup & 0xc0 == 0xc0;
        (setup & 0x1f) | (u8::from(wall) << 5)
    }

    fn server(&mut self, setup: u8) -> &mut Slot {
        let key = Pool::key(setup);
        self.servers.entry(key).or_insert_with(|| {
            let mut spec = ServeSpec::new(self.device.clone());
            spec.precondition = if key & 1 != 0 {
                ssdlab_core::Precondition::Fill
            } else {
                ssdlab_core::Precondition::Fresh
            };
            spec.queues = 1 + ((key >> 1) & 3) as u32;
            spec.max_transfer = [4096, 8192, 65_536, 1 << 20][((key >> 3) & 3) as usize];
            spec.warn = false;
            spec.clock = if key & 0x20 != 0 {
                ServeClock::Wall
            } else {
                ServeClock::Simulated
            };
            // One name per set-up (the fork server runs one target process
            // at a time): at most 64 sparse files are left behind. In
            // memory when the machine has /dev/shm: flushes and FUA writes
            // make the file durable (fdatasync), about 1 ms each on a disk.
            let shm = std::path::Path::new("/dev/shm");
            let dir = if shm.is_dir() {
                shm.to_path_buf()
            } else {
                std::env::temp_dir()
            };
            let path = dir.join(format!("ssdlab-afl-nbd-{key}.img"));
            let _ = std::fs::remove_file(&path);
            spec.backing = Some(path);
            Slot {
                server: Server::start(spec).expect("the server starts"),
                uses: 0,
                dirty: (0, 0),
            }
        })
    }
}

fn main() {
    let (_, device) = ssdlab_core::compose::load(&device_text(), "small-slc.toml", &[])
        .expect("the test drive resolves");
    let mut pool = Pool {
        device,
        servers: HashMap::new(),
    };
    afl::fuzz!(|data: &[u8]| {
        let Some((&setup, rest)) = data.split_first() else {
            return;
        };
        let slot = pool.server(setup);
        slot.uses += 1;
        let server = &slot.server;
        let capacity = server.capacity();
        let before = server.total_requests();
        let (from, to) = slot.dirty;
        server
            .trim(0, from, to - from, false)
            .expect("trimming what the last input wrote is served");
        let reqs = decode(rest, capacity);
        slot.dirty = reqs
            .iter()
            .filter(|r| matches!(r.op, Op::Write | Op::Zero) && r.offset < capacity)
            .map(|r| (r.offset, r.offset.saturating_add(r.len).min(capacity)))
            .fold((capacity, 0), |(a, b), (f, t)| (a.min(f), b.max(t)));
        if slot.dirty.0 >= slot.dirty.1 {
            slot.dirty = (0, 0);
        }
        let served = if setup & 32 != 0 {
            // Two clients at once (NBD multi-conn): no data check, the
            // order between them is the scheduler's.
            let (a, b) = reqs.split_at(reqs.len() / 2);
            let count = |rs: &[Req]| rs.iter().filter(|r| serve(server, r, None)).count();
            std::thread::scope(|s| {
                let other = s.spawn(|| count(a));
                count(b) + other.join().expect("the second client ends")
            })
        } else {
            let mut shadow = Shadow::default();
            reqs.iter()
                .filter(|r| serve(server, r, Some(&mut shadow)))
                .count()
        };
        assert_eq!(
            server.total_requests() - before,
            served as u64 + 1,
            "the statistics count the requests served"
        );
        if slot.uses >= 256 {
            let key = Pool::key(setup);
            if let Some(Slot { server, .. }) = pool.servers.remove(&key) {
                let backing = server.backing();
                let (report, _) = server.stop().expect("the server stops with a report");
                assert!(report.total_requests >= 256, "{}", report.total_requests);
                let _ = std::fs::remove_file(backing.trim_start_matches("file "));
            }
        }
    });
}
