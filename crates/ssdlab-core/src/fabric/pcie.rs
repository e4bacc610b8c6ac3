//! PCIe link: generation, lanes, line encoding, max payload size, per-TLP
//! and DLLP overhead, one-way latency. Each direction is a FIFO server, so
//! data transfer time follows from these parameters (no fixed bandwidth).
//!
//! Sources: PCI Express Base Specification (rates 2.5/5/8/16/32 GT/s;
//! 8b/10b for Gen1-2, 128b/130b for Gen3-5); per-TLP overhead of 24 B
//! (4DW header 16 B + framing/sequence 4 B + LCRC 4 B) is the usual figure.

pub(crate) mod config;

use crate::config::PcieConfig;
use crate::engine::{Calendar, FifoServer};
use crate::units::{Bandwidth, Time};
use std::cell::Cell;

/// Transfer direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dir {
    /// Host to device (doorbells, SQEs, write data).
    Down,
    /// Device to host (read data, CQEs, interrupts, read requests).
    Up,
}

/// One full-duplex link.
pub struct Link {
    cfg: PcieConfig,
    /// Wire rate per direction after line encoding and DLLP overhead, bytes/s.
    wire: Bandwidth,
    up: FifoServer,
    down: FifoServer,
    /// Payload bytes carried (up, down).
    bytes: (u64, u64),
    /// A link whose transfers are booked ahead of when they run (any link
    /// of a path of several hops) books its two directions (up, down) on
    /// calendars (see [`Calendar`]) instead of the FIFO servers.
    cal: Option<Box<[Calendar; 2]>>,
    /// Several drives share this link (a switch's uplink): never held by
    /// flow control (switches queue per egress port).
    shared: bool,
    /// On a link booked on calendars, work of at most this wire time (one
    /// TLP of at most [`CONTROL_BYTES`] of payload: doorbells, SQEs, CQEs,
    /// MSI-X, a read request) passes without queueing behind the data
    /// booked there ([`Calendar::pass`]); zero on a FIFO link (nothing
    /// passes).
    control: Time,
    /// [`Link::payload_time`] of recent sizes (bytes, time), direct mapped:
    /// a drive moves a handful of sizes (data, SQE, CQE, MSI-X) over and
    /// over, and the float arithmetic is the fabric's largest cost.
    memo: [Cell<(u64, Time)>; MEMO],
    /// The last [`Link::request_time`] (requests, time).
    request_memo: Cell<(u64, Time)>,
}

/// The largest payload of a control TLP (an SQE), bytes: on a shared link
/// such a TLP is interleaved with other ports' data without queueing
/// behind it (see `Link::reserve`).
pub const CONTROL_BYTES: u64 = 64;

/// Entries of [`Link::memo`] (a power of two).
const MEMO: usize = 16;

/// [`Link::memo`]'s slot for `bytes`. Transfer sizes are mostly powers of
/// two (4 B MSI-X, 16 B CQE, 64 B SQE, the block size), so the slot comes
/// from the power of two and the odd part: those get distinct slots (a
/// multiplicative hash put 4 B and 4 KiB in one slot, recomputing both on
/// every read).
#[inline(always)]
fn memo_slot(bytes: u64) -> usize {
    let tz = bytes.trailing_zeros() & 63;
    ((tz as u64 + (bytes >> tz).wrapping_mul(7)) as usize) & (MEMO - 1)
}

impl Link {
    /// Build from config.
    pub fn new(cfg: &PcieConfig) -> Link {
        let (gts, enc) = match cfg.generation {
            1 => (2.5e9, 8.0 / 10.0),
            2 => (5.0e9, 8.0 / 10.0),
            3 => (8.0e9, 128.0 / 130.0),
            4 => (16.0e9, 128.0 / 130.0),
            _ => (32.0e9, 128.0 / 130.0),
        };
        let wire = Bandwidth(gts * cfg.lanes as f64 * enc / 8.0 * (1.0 - cfg.dllp_overhead));
        Link {
            cfg: cfg.clone(),
            wire,
            up: FifoServer::default(),
            down: FifoServer::default(),
            bytes: (0, 0),
            cal: None,
            shared: false,
            control: Time::ZERO,
            memo: std::array::from_fn(|_| Cell::new((u64::MAX, Time::ZERO))),
            request_memo: Cell::new((u64::MAX, Time::ZERO)),
        }
    }

    /// Wire time of a memory-write style payload of `bytes` (split into MPS TLPs).
    #[inline]
    pub fn payload_time(&self, bytes: u64) -> Time {
        let slot = &self.memo[memo_slot(bytes)];
        let (b, t) = slot.get();
        if b == bytes {
            return t;
        }
        let t = self.payload_time_uncached(bytes);
        slot.set((bytes, t));
        t
    }

    fn payload_time_uncached(&self, bytes: u64) -> Time {
        if let Some(bw) = self.cfg.interface_bandwidth {
            return bw.transfer_time(bytes);
        }
        let mps = self.cfg.max_payload.0;
        let tlps = bytes.div_ceil(mps).max(1);
        self.wire
            .transfer_time(bytes + tlps * self.cfg.tlp_overhead.0)
    }

    /// The rate no payload transfer beats (its time before TLP overhead).
    pub(crate) fn payload_rate_bound(&self) -> Bandwidth {
        self.cfg.interface_bandwidth.unwrap_or(self.wire)
    }

    /// Wire time of `n` header-only TLPs (read requests).
    #[inline]
    pub(crate) fn request_time(&self, n: u64) -> Time {
        let (m, t) = self.request_memo.get();
        if m == n {
            return t;
        }
        let t = if self.cfg.interface_bandwidth.is_some() {
            Time::ZERO
        } else {
            self.wire.transfer_time(n * self.cfg.tlp_overhead.0)
        };
        self.request_memo.set((n, t));
        t
    }

    /// Effective payload bandwidth for large transfers (for reports and docs).
    pub fn effective_bandwidth(&self) -> Bandwidth {
        let b = 1u64 << 20;
        Bandwidth(b as f64 / self.payload_time(b).as_secs_f64())
    }

    /// One-way latency.
    pub fn latency(&self) -> Time {
        self.cfg.latency
    }

    /// Device writes `bytes` to host memory (read data, CQE, MSI-X) starting
    /// at `now`, the event loop's clock being at `clock`; returns when the
    /// last byte has arrived at the host.
    #[inline]
    pub fn device_write(&mut self, clock: Time, now: Time, bytes: u64) -> Time {
        let t = self.payload_time(bytes);
        let (_, end) = self.reserve(Dir::Up, clock, now, t, bytes);
        end + self.cfg.latency
    }

    /// Time of a [`Link::device_write`] of `bytes` on an idle link.
    #[inline]
    pub fn device_write_time(&self, bytes: u64) -> Time {
        self.payload_time(bytes) + self.cfg.latency
    }

    /// Time of a [`Link::device_read`] of `bytes` on an idle link.
    #[inline]
    pub fn device_read_time(&self, bytes: u64) -> Time {
        let reqs = self.cfg.read_requests(bytes);
        self.request_time(reqs) + self.payload_time(bytes) + self.cfg.latency.times(2)
    }

    /// Host writes `bytes` to the device (doorbell) at `now`, the clock
    /// being at `clock`; returns arrival time.
    #[inline]
    pub fn host_write(&mut self, clock: Time, now: Time, bytes: u64) -> Time {
        let t = self.payload_time(bytes);
        let (_, end) = self.reserve(Dir::Down, clock, now, t, bytes);
        end + self.cfg.latency
    }

    /// Device reads `bytes` from host memory (SQE fetch, write data) at
    /// `now`, the clock being at `clock`: read requests go up, completions
    /// with data come down. Returns when all data is in the device.
    #[inline]
    pub fn device_read(&mut self, clock: Time, now: Time, bytes: u64) -> Time {
        let reqs = self.cfg.read_requests(bytes);
        let (_, req_end) = self.reserve(Dir::Up, clock, now, self.request_time(reqs), 0);
        // The host's completions start one latency after the first request reaches it.
        let first_at_host = req_end + self.cfg.latency;
        let t = self.payload_time(bytes);
        let (_, end) = self.reserve(Dir::Down, clock, first_at_host, t, bytes);
        end + self.cfg.latency
    }

    /// Is work of wire time `wire` a control TLP on this link: at most one
    /// TLP of [`CONTROL_BYTES`] on a link booked on calendars?
    #[inline(always)]
    pub(crate) fn is_control(&self, wire: Time) -> bool {
        wire <= self.control && self.control > Time::ZERO
    }

    /// Book `service` on one direction at or after `now`, carrying
    /// `bytes` of payload, the event loop's clock being at `clock`: (start,
    /// end) on this link alone. (A control TLP on a shared link passes
    /// instead: [`Link::pass`].)
    #[inline]
    pub(crate) fn reserve(
        &mut self,
        dir: Dir,
        clock: Time,
        now: Time,
        service: Time,
        bytes: u64,
    ) -> (Time, Time) {
        let k = self.carry(dir, bytes);
        if let Some(c) = self.cal.as_mut() {
            return book_on_calendar(&mut c[k], clock, now, service);
        }
        match dir {
            Dir::Up => self.up.reserve(now, service),
            Dir::Down => self.down.reserve(now, service),
        }
    }

    /// A control TLP ([`Link::is_control`]) of wire time `service` carrying
    /// `bytes` passes a link booked on calendars at `now` (or when a
    /// flow-control stall ends) without queueing behind the data booked
    /// there: a transmitter (a switch's arbiter between its ports, a
    /// drive's between its DMA engines) interleaves TLP by TLP, so it waits
    /// at most one TLP of data; the next booking carries its wire time, so
    /// the link's capacity is kept ([`Calendar::pass`]). (start, end).
    #[inline]
    pub(crate) fn pass(&mut self, dir: Dir, now: Time, service: Time, bytes: u64) -> (Time, Time) {
        let k = self.carry(dir, bytes);
        match self.cal.as_mut() {
            Some(c) => c[k].pass(now, service),
            None => (now, now + service),
        }
    }

    /// Count `bytes` of payload carried in direction `dir`; returns the
    /// direction's index (0 up, 1 down) into the calendars.
    #[inline(always)]
    fn carry(&mut self, dir: Dir, bytes: u64) -> usize {
        match dir {
            Dir::Up => {
                self.bytes.0 += bytes;
                0
            }
            Dir::Down => {
                self.bytes.1 += bytes;
                1
            }
        }
    }

    /// Stall one direction until `until` (flow control: the receiver has
    /// no buffer left); nothing else starts on it earlier. Not busy time.
    /// A shared link is never held.
    pub(crate) fn hold(&mut self, dir: Dir, until: Time) {
        if self.shared {
            return;
        }
        if let Some(c) = self.cal.as_mut() {
            c[(dir == Dir::Down) as usize].hold_until(until);
            return;
        }
        match dir {
            Dir::Up => self.up.hold_until(until),
            Dir::Down => self.down.hold_until(until),
        }
    }

    /// When a device-to-host transfer of `service` ready at `now` would
    /// end on this link if booked now, the clock being at `clock` (after
    /// the work booked in its way and any flow-control stall).
    #[inline]
    pub(crate) fn up_end_for(&self, clock: Time, now: Time, service: Time) -> Time {
        match &self.cal {
            Some(c) => c[0].end_for(clock, now, service),
            None => self.up.start_for(now, service) + service,
        }
    }

    /// An upper bound of [`Link::up_end_for`] (`now` at or after the
    /// clock): what is booked ahead, if it all came first.
    #[inline]
    pub(crate) fn up_end_bound(&self, now: Time, service: Time) -> Time {
        match &self.cal {
            Some(c) => c[0].end_bound(now, service),
            None => self.up.start_for(now, service) + service,
        }
    }

    /// Is this link shared by several drives (a switch's uplink)?
    #[inline]
    pub(crate) fn is_shared(&self) -> bool {
        self.shared
    }

    /// Payload bytes carried (up, down).
    pub fn bytes(&self) -> (u64, u64) {
        self.bytes
    }

    /// The link's parameters.
    pub fn config(&self) -> &PcieConfig {
        &self.cfg
    }

    /// Book this link on calendars: its transfers are booked ahead of
    /// when they run (a link of a path of several hops). Only
    /// [`Link::reserve`] books it then.
    pub(crate) fn use_calendars(&mut self) {
        self.cal = Some(Box::default());
        self.control = self.payload_time_uncached(CONTROL_BYTES);
    }

    /// This link carries several drives' transfers (a switch uplink): on
    /// calendars, and never held.
    pub(crate) fn share(&mut self) {
        self.use_calendars();
        self.shared = true;
    }

    /// Busy time per direction (up, down).
    pub fn busy(&self) -> (Time, Time) {
        match &self.cal {
            Some(c) => (c[0].busy(), c[1].busy()),
            None => (self.up.busy(), self.down.busy()),
        }
    }

    /// Busy time (up, down) that has run by `t` ([`FifoServer::busy_by`]).
    pub fn busy_by(&self, t: Time) -> (Time, Time) {
        match &self.cal {
            Some(c) => (c[0].busy_by(t), c[1].busy_by(t)),
            None => (self.up.busy_by(t), self.down.busy_by(t)),
        }
    }
}

/// [`Link::reserve`] on one direction's calendar (out of line: the FIFO
/// path of a drive at a root port stays small enough to inline).
#[inline(never)]
fn book_on_calendar(cal: &mut Calendar, clock: Time, now: Time, service: Time) -> (Time, Time) {
    cal.reserve(clock, now, service)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Device;

    #[test]
    fn gen4_x4_effective_bandwidth_is_realistic() {
        let d = Device::preset("pm9a3-960g").unwrap();
        let l = Link::new(&d.pcie);
        let bw = l.effective_bandwidth().0;
        // 7.877 GB/s raw after 128b/130b; 256 B MPS, 24 B/TLP, 4% DLLP -> ~6.9 GB/s
        assert!(bw > 6.7e9 && bw < 7.1e9, "{bw}");
    }

    #[test]
    fn gen1_x1_is_250mb_raw() {
        let mut d = Device::preset("pm9a3-960g").unwrap();
        d.pcie.generation = 1;
        d.pcie.lanes = 1;
        d.pcie.dllp_overhead = 0.0;
        d.pcie.tlp_overhead = crate::units::Bytes(0);
        let l = Link::new(&d.pcie);
        assert_eq!(l.payload_time(250), Time::ns(1000));
    }

    /// Read requests by shift count what a division counts, for every
    /// request size the configuration accepts (and one it does not).
    #[test]
    fn read_requests_match_division() {
        let mut d = Device::preset("pm9a3-960g").unwrap();
        for m in [128u64, 256, 512, 1024, 2048, 4096, 384] {
            d.pcie.max_read_request = crate::units::Bytes(m);
            for bytes in (0u64..20_000).chain([1 << 20, (2 << 20) + 1]) {
                let want = bytes.div_ceil(m).max(1);
                assert_eq!(
                    d.pcie.read_requests(bytes),
                    want,
                    "{m} B requests, {bytes} B"
                );
            }
        }
    }
}
