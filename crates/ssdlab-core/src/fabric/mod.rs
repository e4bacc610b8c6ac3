//! The PCIe fabric between the host and its drives: the root complex,
//! switches and links.
//!
//! Every attachment is one full-duplex [`Link`] (a drive to its root port or
//! switch port, a switch's upstream port to its parent). A drive addresses
//! the fabric by its port; a transfer is booked on each link of its path in
//! the direction it flows, cut-through: the next hop starts one link latency
//! plus the switch's port-to-port latency after this hop starts, and cannot
//! end before this hop's end plus those latencies (so a slow hop paces the
//! whole transfer). Every link of such a path books each direction on a
//! calendar ([`crate::engine::Calendar`]): work is booked ahead of when it
//! runs (cut-through hops; fetches for when the host will have rung;
//! completions for when the data will have arrived), and each transfer
//! takes idle time from when it reaches the link on, filling the holes
//! earlier bookings left, as a transmitter interleaves TLPs. A switch's
//! uplink carries several drives' transfers: one drive's backlog does not
//! push another's behind it. A control TLP (at most one TLP of
//! [`pcie::CONTROL_BYTES`]: doorbell, SQE, read request, CQE with its
//! MSI-X) passes every link of such a path at once, its wire time carried
//! by the next booking there (a switch arbitrates between its ports, and a
//! drive between its DMA engines, TLP by TLP), unless flow control stalls
//! the link.
//!
//! Each switch port has an ingress buffer (`ingress_buffer`, bytes) that its
//! flow-control credits advertise. Two things follow from it:
//! - *Credit-limited rate*: a link into a switch carries at most one
//!   buffer's worth of data per credit round trip (two link latencies plus
//!   the switch's latency, to receive a TLP and return its credit; PEX 8532
//!   data book, section 8.4.2), so a hop's service is
//!   `max(wire time, bytes x round trip / buffer)`.
//! - *Back-pressure*: a transfer whose next hop is busy waits in the switch's
//!   buffer; once the buffer is full the link it arrives on stalls. A
//!   drive's own link is therefore held until all but one buffer of
//!   the transfer has left over the next hop (the next hop drains at its
//!   average rate over its booked span). The drive's next transfers queue
//!   behind it on its link, so each downstream port has about one transfer
//!   competing for the uplink at a time, and a saturated uplink is shared
//!   about equally between its busy ports (round robin) instead of in
//!   proportion to queue depth. A stall is not counted as link busy time.
//!   A shared uplink is never held: switches of this class queue per egress
//!   port (virtual output queues, "non-blocking"), so a congested drive
//!   does not block traffic to the others.
//!
//! Drives behind a switch also keep read data in the controller while a
//! transfer on their own link would wait more than one transfer's time for
//! the work in its way ([`Fabric::up_backlog`]),
//! so a drive's transfers reach the uplink's calendar about when they reach
//! the switch, and the uplink serves busy ports in arrival order (about
//! round robin) even when their queue depths differ.
//!
//! The root complex's DMA port into host memory can limit too
//! (`root_complex.memory_bandwidth`): it is then one more shared hop at the
//! top of every path, a calendar per direction (writes into memory, reads
//! from it) at that rate with no latency of its own. Doorbells (the host's
//! own MMIO writes) and peer-to-peer transfers do not cross it.
//!
//! A path of one link (the one-drive system) is exactly [`Link`]'s own
//! arithmetic (a FIFO per direction that remembers its latest idle gap:
//! docs/models/pcie-nvme.md says what that costs and why it stays). A peer-to-peer transfer ([`Fabric::peer_write`]) goes up to
//! the lowest switch the two endpoints share and down again: it never
//! touches the links above that switch.

pub mod pcie;

use crate::config::PcieConfig;
use crate::units::{Bandwidth, Bytes, Time};
use pcie::{Dir, Link};
use serde::Serialize;
use std::cell::Cell;

/// What a link connects: `(upper, lower)` endpoint names.
#[derive(Debug, Clone, Serialize)]
pub struct LinkInfo {
    /// Name (the drive's name, or `<switch>-up` for a switch's uplink).
    pub name: String,
    /// Endpoint towards the root (`root` or a switch).
    pub upper: String,
    /// Endpoint away from the root (a switch or a drive).
    pub lower: String,
}

/// One hop of a path, from the drive towards the root.
#[derive(Debug, Clone, Copy)]
struct Hop {
    link: usize,
    /// Port-to-port latency of the switch at this link's upper end (zero at the root).
    upper_switch: Option<usize>,
}

/// The links of a system and each drive's path to the root.
pub struct Fabric {
    links: Vec<Link>,
    info: Vec<LinkInfo>,
    /// Per port (drive): hops from the drive up to the root.
    paths: Vec<Vec<Hop>>,
    /// Per port: the same hops as a transfer flows up, and down.
    up: Vec<Vec<Step>>,
    down: Vec<Vec<Step>>,
    switches: Vec<Credits>,
    /// The event loop's clock ([`Fabric::advance`]): calendars forget what
    /// ended before it.
    clock: Time,
    /// One root port and one drive: every transfer is `links[0]`'s own.
    single: bool,
    /// The root complex's memory port, if it limits: the last hop of every
    /// path (the first of every downward transfer).
    mem: Option<usize>,
    /// Per port: the last (bytes, time) of [`Fabric::device_write_time`]
    /// and of [`Fabric::device_read_time`] over a path of several hops
    /// (the same size recurs on every command).
    idle_memo: Vec<[Cell<(u64, Time)>; 2]>,
    /// Per port, per [`Kind`]: each hop's service for the last size (paths
    /// of several hops).
    costs: Vec<[HopCosts; KINDS]>,
    /// Per port, per [`Kind`]: the path of a control transfer that passes
    /// every hop, for the last size.
    passes: Vec<[PassPath; KINDS]>,
}

/// One hop of a transfer.
#[derive(Debug, Clone, Copy)]
struct Step {
    link: usize,
    dir: Dir,
    /// Switch crossed before this hop (its port-to-port latency).
    crossed: Option<usize>,
    /// The switch that receives this hop, if any: its ingress buffer
    /// holds the hop while the next one is busy.
    into: Option<usize>,
    /// (credit round trip, ingress buffer bytes) if the switch's credits
    /// can limit this hop below its link's rate (see [`credit_limited`]).
    credit: Option<(Time, u64)>,
    /// From this hop's start to when the next hop can start: this link's
    /// latency plus the port-to-port latency of the switch the next hop
    /// crosses (set by [`settle`]; unused on the last hop).
    cross: Time,
    /// This link's one-way latency.
    lat: Time,
    /// (ingress buffer bytes, this link's latency plus the receiving
    /// switch's) if the switch receiving this hop can hold it behind the
    /// next one (back-pressure, see [`hold_behind`]); `None` into a drive
    /// or the root, and on a shared link (never held).
    hold: Option<(u64, Time)>,
}

impl Step {
    fn new(link: usize, dir: Dir, crossed: Option<usize>, into: Option<usize>) -> Step {
        Step {
            link,
            dir,
            crossed,
            into,
            credit: None,
            cross: Time::ZERO,
            lat: Time::ZERO,
            hold: None,
        }
    }
}

/// Fill in the derived fields of a transfer's `hops` (in the order it
/// flows) from the links and switches: credits, latencies, hold-back.
fn settle(links: &[Link], switches: &[Credits], hops: &mut [Step]) {
    for i in 0..hops.len() {
        let link = &links[hops[i].link];
        let into = hops[i].into;
        hops[i].credit = credit_of(link, into, switches);
        hops[i].lat = link.latency();
        hops[i].hold = into
            .filter(|_| !link.is_shared())
            .map(|j| (switches[j].buffer, link.latency() + switches[j].latency));
        let next_crossed = hops.get(i + 1).and_then(|n| n.crossed);
        hops[i].cross = link.latency() + next_crossed.map_or(Time::ZERO, |j| switches[j].latency);
    }
}

/// Each hop's service ([`hop_service`]) for a transfer of `bytes` of
/// payload whose own wire time on a link is `dur`, into `out`.
fn services(
    links: &[Link],
    hops: &[Step],
    bytes: u64,
    dur: impl Fn(&Link) -> Time,
    out: &mut Vec<(Time, bool)>,
) {
    out.clear();
    out.extend(hops.iter().map(|st| {
        let link = &links[st.link];
        hop_service(link, st, bytes, dur(link))
    }));
}

/// The kinds of transfer a port makes, for [`Fabric::costs`].
#[derive(Clone, Copy)]
enum Kind {
    /// The host's doorbell write (down, the memory port left out).
    Doorbell = 0,
    /// A device read's requests (up).
    Request,
    /// A device read's data (down).
    Fetch,
    /// A device write (up).
    Write,
    /// A completion entry and its interrupt (up).
    Completion,
}

/// Kinds of [`Kind`].
const KINDS: usize = 5;

/// One kind of transfer's service on each hop of a port's path, for the
/// size it last carried (`key`; sizes recur on every command: the
/// doorbell, the SQE, the CQE, the block size).
#[derive(Default)]
struct HopCosts {
    key: Option<u64>,
    services: Vec<(Time, bool)>,
}

/// A control transfer's path when every hop passes ([`pass_chain`]), for
/// the size it last carried (`key`): per hop (link, upward?, wire time ps,
/// cut-through offset to the next hop ps), and the last hop's latency ps.
/// One cache line per port and kind, no pointer to follow (the fabric's
/// state of four drives did not fit the L1 cache: docs/performance.md).
/// `n == 0`: not every hop passes, or the path is longer than
/// [`PASS_HOPS`] or its times do not fit (then [`chain`]).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct PassPath {
    key: u64,
    lat: u32,
    n: u8,
    hops: [(u16, bool, u32, u32); PASS_HOPS],
}

/// Hops of a [`PassPath`]: a drive, two levels of switches and the root
/// complex's memory port.
const PASS_HOPS: usize = 4;

impl Default for PassPath {
    fn default() -> Self {
        PassPath {
            key: u64::MAX,
            lat: 0,
            n: 0,
            hops: [(0, false, 0, 0); PASS_HOPS],
        }
    }
}

impl PassPath {
    /// The path of `hops` with these `services` for size `key`: `n == 0`
    /// unless every hop passes.
    fn of(hops: &[Step], services: &[(Time, bool)], bytes: u64, key: u64) -> PassPath {
        let mut p = PassPath {
            key,
            ..PassPath::default()
        };
        let ps = |t: Time| u32::try_from(t.0).ok();
        let passes = services.iter().all(|&(_, pass)| pass)
            // (A buffer smaller than the TLP would hold the hop: `chain`.)
            && hops
                .iter()
                .all(|h| h.hold.is_none_or(|(buffer, _)| bytes <= buffer));
        if !passes || hops.is_empty() || hops.len() > PASS_HOPS {
            return p;
        }
        for (i, (st, &(d, _))) in hops.iter().zip(services).enumerate() {
            let (Ok(link), Some(d), Some(cross)) = (u16::try_from(st.link), ps(d), ps(st.cross))
            else {
                return p;
            };
            p.hops[i] = (link, st.dir == Dir::Up, d, cross);
        }
        let Some(lat) = ps(hops[hops.len() - 1].lat) else {
            return p;
        };
        p.lat = lat;
        p.n = hops.len() as u8;
        p
    }
}

/// A switch's flow control, as [`chain`] needs it.
#[derive(Debug, Clone, Copy)]
struct Credits {
    /// Ingress buffer per port, bytes.
    buffer: u64,
    /// Port-to-port latency.
    latency: Time,
}

/// Service of `wire` carrying `bytes` over a hop whose receiver's credits
/// are `credit` (round trip, buffer): at most one buffer per round trip.
#[inline(always)]
fn credit_limited(wire: Time, bytes: u64, credit: Option<(Time, u64)>) -> Time {
    match credit {
        Some((rtt, buffer)) => {
            let limit = Time((rtt.0 as u128 * bytes as u128 / buffer.max(1) as u128) as u64);
            wire.max(limit)
        }
        None => wire,
    }
}

/// The credits of switch `into` on `link`, if they can ever hold a transfer
/// below the link's own rate: one buffer per round trip (two link latencies
/// plus the switch's) against the link's payload rate. Otherwise the wire
/// time, which includes TLP overhead, is always the larger.
fn credit_of(link: &Link, into: Option<usize>, switches: &[Credits]) -> Option<(Time, u64)> {
    let c = switches.get(into?)?;
    let rtt = link.latency().times(2) + c.latency;
    let rate = link.payload_rate_bound().0; // bytes/s
    let credit_rate = c.buffer as f64 / rtt.as_secs_f64().max(1e-18);
    (credit_rate < rate * (1.0 + 1e-9)).then_some((rtt, c.buffer))
}

/// A hop's service for a transfer whose own wire time on `link` is `wire`,
/// and whether it is a control TLP passing a shared link
/// ([`Link::reserve`]): such a TLP fits its receiver's buffer whole, so its
/// credits never slow it.
#[inline(always)]
fn hop_service(link: &Link, st: &Step, bytes: u64, wire: Time) -> (Time, bool) {
    if link.is_control(wire) {
        (wire, true)
    } else {
        (credit_limited(wire, bytes, st.credit), false)
    }
}

/// Book a transfer over `hops` (in the order it flows), cut-through, the
/// event loop's clock being at `clock`; returns when the last byte arrives.
/// `costs` gives each hop's service ([`services`]).
#[inline]
fn chain(
    links: &mut [Link],
    hops: &[Step],
    costs: &[(Time, bool)],
    clock: Time,
    now: Time,
    bytes: u64,
) -> Time {
    debug_assert_eq!(hops.len(), costs.len());
    let Some((first, rest)) = hops.split_first() else {
        return now;
    };
    let (mut ps, mut pe) = book_hop(
        &mut links[first.link],
        first.dir,
        clock,
        now,
        costs[0],
        bytes,
    );
    let mut prev = first;
    for (st, &cost) in rest.iter().zip(&costs[1..]) {
        let cross = prev.cross;
        let (s, e) = book_hop(&mut links[st.link], st.dir, clock, ps + cross, cost, bytes);
        // Back-pressure on the hop before, now that this one is booked.
        if let Some((buffer, hold_cross)) = prev.hold {
            if bytes > buffer {
                hold_behind(
                    &mut links[prev.link],
                    prev.dir,
                    buffer,
                    hold_cross,
                    pe,
                    (s, e),
                    bytes,
                );
            }
        }
        ps = s;
        pe = e.max(pe + cross);
        prev = st;
    }
    pe + prev.lat
}

/// [`chain`] of a transfer that passes every hop of `path` (a control TLP
/// on links booked on calendars, [`Link::pass`]): the same arithmetic
/// without bookings or back-pressure (one TLP never fills a switch's
/// buffer).
#[inline(always)]
fn pass_chain(links: &mut [Link], path: &PassPath, now: Time, bytes: u64) -> Time {
    let (l0, up0, d0, cross0) = path.hops[0];
    let dir = |up| if up { Dir::Up } else { Dir::Down };
    let (mut ps, mut pe) = links[l0 as usize].pass(dir(up0), now, Time(d0 as u64), bytes);
    let mut cross = Time(cross0 as u64);
    for &(l, up, d, next_cross) in &path.hops[1..path.n as usize] {
        let (s, e) = links[l as usize].pass(dir(up), ps + cross, Time(d as u64), bytes);
        ps = s;
        pe = e.max(pe + cross);
        cross = Time(next_cross as u64);
    }
    pe + Time(path.lat as u64)
}

/// Book one hop of service `cost` ([`hop_service`]) on `link` at `at`.
#[inline(always)]
fn book_hop(
    link: &mut Link,
    dir: Dir,
    clock: Time,
    at: Time,
    cost: (Time, bool),
    bytes: u64,
) -> (Time, Time) {
    match cost {
        (d, true) => link.pass(dir, at, d, bytes),
        (d, false) => link.reserve(dir, clock, at, d, bytes),
    }
}

/// Back-pressure: a hop in direction `dir` on `link`, into a switch with an
/// ingress buffer of `buffer` bytes (`cross`: the link's latency plus the
/// switch's) and ending at `end`, cannot finish before all but one buffer
/// of the transfer has left over the next hop, booked over `next`.
#[inline(never)]
fn hold_behind(
    link: &mut Link,
    dir: Dir,
    buffer: u64,
    cross: Time,
    end: Time,
    next: (Time, Time),
    bytes: u64,
) {
    let (ns, ne) = next;
    let left = Time(((ne - ns).0 as u128 * (bytes - buffer) as u128 / bytes as u128) as u64);
    let until = (ns + left).saturating_sub(cross);
    if until > end {
        link.hold(dir, until);
    }
}

/// Something a switch or drive attaches to, for [`Fabric::build`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Upper {
    /// A root port.
    Root,
    /// A switch, by index.
    Switch(usize),
}

/// A switch, for [`Fabric::build`].
pub struct SwitchSpec<'a> {
    /// Name.
    pub name: &'a str,
    /// Where its upstream port attaches.
    pub upstream: Upper,
    /// Its upstream link.
    pub uplink: &'a PcieConfig,
    /// Port-to-port latency.
    pub latency: Time,
    /// Ingress buffer per port (covered by its flow-control credits).
    pub ingress_buffer: Bytes,
}

/// A drive's attachment, for [`Fabric::build`].
pub struct PortSpec<'a> {
    /// Drive name.
    pub name: &'a str,
    /// Where it attaches.
    pub attach: Upper,
    /// Its link.
    pub link: &'a PcieConfig,
}

impl Fabric {
    /// One root port with one drive behind it, over a link of `cfg`.
    pub fn single(cfg: &PcieConfig) -> Fabric {
        Fabric {
            links: vec![Link::new(cfg)],
            info: vec![LinkInfo {
                name: "nvme0".into(),
                upper: "root".into(),
                lower: "nvme0".into(),
            }],
            paths: vec![vec![Hop {
                link: 0,
                upper_switch: None,
            }]],
            up: vec![vec![Step::new(0, Dir::Up, None, None)]],
            down: vec![vec![Step::new(0, Dir::Down, None, None)]],
            switches: Vec::new(),
            clock: Time::ZERO,
            single: true,
            mem: None,
            idle_memo: Vec::new(),
            costs: Vec::new(),
            passes: Vec::new(),
        }
    }

    /// A tree of switches and drives under the root complex (a valid tree:
    /// see [`crate::system::config`]); port `i` is `ports[i]`. With
    /// `memory`, the root complex's port into host memory carries at most
    /// that rate per direction.
    pub fn build(
        switches: &[SwitchSpec<'_>],
        ports: &[PortSpec<'_>],
        memory: Option<Bandwidth>,
    ) -> Fabric {
        let mut links = Vec::new();
        let mut info = Vec::new();
        let name_of = |u: Upper| match u {
            Upper::Root => "root".to_string(),
            Upper::Switch(j) => switches[j].name.to_string(),
        };
        for s in switches {
            let mut l = Link::new(s.uplink);
            l.share();
            links.push(l);
            info.push(LinkInfo {
                name: format!("{}-up", s.name),
                upper: name_of(s.upstream),
                lower: s.name.to_string(),
            });
        }
        // The memory port takes its TLP sizes from any link (its own rate
        // replaces the PCIe arithmetic); with no link there is no path.
        let template = ports
            .first()
            .map(|p| p.link)
            .or(switches.first().map(|s| s.uplink));
        let mem = memory.zip(template).map(|(bw, template)| {
            // Generation and lanes 0: not a PCIe link (reports say "memory").
            let cfg = PcieConfig {
                generation: 0,
                lanes: 0,
                latency: Time::ZERO,
                interface_bandwidth: Some(bw),
                ..template.clone()
            };
            let mut l = Link::new(&cfg);
            l.share();
            links.push(l);
            info.push(LinkInfo {
                name: "root-memory".into(),
                upper: "host memory".into(),
                lower: "root".into(),
            });
            links.len() - 1
        });
        let mut paths = Vec::new();
        for p in ports {
            let mut path = vec![Hop {
                link: links.len(),
                upper_switch: match p.attach {
                    Upper::Root => None,
                    Upper::Switch(j) => Some(j),
                },
            }];
            let mut link = Link::new(p.link);
            if !matches!(p.attach, Upper::Root) || mem.is_some() {
                // Transfers over it are booked ahead, hop by hop.
                link.use_calendars();
            }
            links.push(link);
            info.push(LinkInfo {
                name: p.name.to_string(),
                upper: name_of(p.attach),
                lower: p.name.to_string(),
            });
            let mut cur = p.attach;
            let mut guard = 0;
            while let Upper::Switch(j) = cur {
                path.push(Hop {
                    link: j,
                    upper_switch: match switches[j].upstream {
                        Upper::Root => None,
                        Upper::Switch(k) => Some(k),
                    },
                });
                cur = switches[j].upstream;
                guard += 1;
                if guard > switches.len() {
                    break; // a cycle: refused by the system file's checks
                }
            }
            if let Some(m) = mem {
                path.push(Hop {
                    link: m,
                    upper_switch: None,
                });
            }
            paths.push(path);
        }
        let mut f = Fabric {
            links,
            info,
            paths,
            up: Vec::new(),
            down: Vec::new(),
            switches: switches
                .iter()
                .map(|s| Credits {
                    buffer: s.ingress_buffer.0,
                    latency: s.latency,
                })
                .collect(),
            clock: Time::ZERO,
            single: false,
            mem,
            idle_memo: Vec::new(),
            costs: Vec::new(),
            passes: Vec::new(),
        };
        f.idle_memo = (0..f.paths.len())
            .map(|_| std::array::from_fn(|_| Cell::new((u64::MAX, Time::ZERO))))
            .collect();
        f.up = (0..f.paths.len()).map(|p| f.up_hops(p)).collect();
        f.down = (0..f.paths.len()).map(|p| f.down_hops(p)).collect();
        f.costs = (0..f.paths.len()).map(|_| Default::default()).collect();
        f.passes = vec![[PassPath::default(); KINDS]; f.paths.len()];
        f
    }

    /// The event loop's clock has reached `now`: nothing is booked earlier
    /// from now on (calendars forget the past when next booked).
    #[inline(always)]
    pub fn advance(&mut self, now: Time) {
        self.clock = now;
    }

    /// A drive behind a switch whose own link has more than `slack` (the
    /// wire time of the transfer's `bytes` on that link) of device-to-host
    /// work booked or stalled ahead of `now`: returns when only `slack` is
    /// left. The drive keeps its next data transfer until
    /// then instead of booking it behind the backlog, so each port has at
    /// most about one transfer booked ahead, the switch sees each port's
    /// transfers about as they arrive and serves its ports in arrival order
    /// (about round robin) rather than in the order drives booked ahead.
    /// `None` at the root (a one-drive system books as before) and when the
    /// backlog is within `slack`.
    #[inline]
    pub fn up_backlog(&self, port: usize, now: Time, bytes: u64) -> Option<Time> {
        if self.single || self.pcie_hops(port) == 1 {
            return None;
        }
        let link = &self.links[self.paths[port][0].link];
        let slack = link.payload_time(bytes);
        let limit = now + slack.times(2);
        if link.up_end_bound(now, slack) <= limit {
            // Cannot end later than that: no backlog (no calendar walk).
            return None;
        }
        let end = link.up_end_for(self.clock, now, slack);
        (end > limit).then(|| end - slack.times(2))
    }

    /// The link a drive at `port` attaches with.
    #[inline]
    pub fn link(&self, port: usize) -> &Link {
        &self.links[self.paths[port][0].link]
    }

    /// Every link with what it connects.
    pub fn links(&self) -> impl Iterator<Item = (&LinkInfo, &Link)> {
        self.info.iter().zip(self.links.iter())
    }

    /// Number of ports.
    pub fn ports(&self) -> usize {
        self.paths.len()
    }

    /// Switches crossed between `port` and the root.
    pub fn switches_on_path(&self, port: usize) -> usize {
        self.pcie_hops(port) - 1
    }

    /// PCIe links between `port` and the root (the memory port left out).
    #[inline]
    fn pcie_hops(&self, port: usize) -> usize {
        self.paths[port].len() - self.mem.is_some() as usize
    }

    fn up_hops(&self, port: usize) -> Vec<Step> {
        // Going up, the switch crossed before hop i is hop i-1's upper
        // switch, and hop i flows into its own upper switch.
        let p = &self.paths[port];
        let mut hops: Vec<Step> = (0..p.len())
            .map(|i| {
                let crossed = if i == 0 { None } else { p[i - 1].upper_switch };
                Step::new(p[i].link, Dir::Up, crossed, p[i].upper_switch)
            })
            .collect();
        settle(&self.links, &self.switches, &mut hops);
        hops
    }

    fn down_hops(&self, port: usize) -> Vec<Step> {
        // Going down, the switch crossed before a hop is its own upper
        // switch, and a hop flows into the switch below it (the upper
        // switch of the hop after it), or into the drive.
        let p = &self.paths[port];
        let mut hops: Vec<Step> = (0..p.len())
            .rev()
            .map(|i| {
                let crossed = if i + 1 == p.len() {
                    None
                } else {
                    p[i].upper_switch
                };
                let into = if i == 0 { None } else { p[i - 1].upper_switch };
                Step::new(p[i].link, Dir::Down, crossed, into)
            })
            .collect();
        settle(&self.links, &self.switches, &mut hops);
        hops
    }

    /// Book a transfer of kind `kind` from `port` over `hops` (the port's
    /// path, or its tail from `skip`) at `now`, carrying `bytes` of
    /// payload; `key` names its size (equal keys, equal services) and
    /// `dur` gives its wire time on a link. Returns when the last byte
    /// arrives.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn book(
        &mut self,
        port: usize,
        kind: Kind,
        skip: usize,
        now: Time,
        bytes: u64,
        key: u64,
        dur: impl Fn(&Link) -> Time,
    ) -> Time {
        let path = &self.passes[port][kind as usize];
        if path.key == key && path.n > 0 {
            return pass_chain(&mut self.links, path, now, bytes);
        }
        let hops = match kind {
            Kind::Doorbell | Kind::Fetch => &self.down[port][skip..],
            Kind::Request | Kind::Write | Kind::Completion => &self.up[port][skip..],
        };
        let costs = &mut self.costs[port][kind as usize];
        if costs.key != Some(key) {
            services(&self.links, hops, bytes, dur, &mut costs.services);
            costs.key = Some(key);
            let path = PassPath::of(hops, &costs.services, bytes, key);
            self.passes[port][kind as usize] = path;
            if path.n > 0 {
                return pass_chain(&mut self.links, &path, now, bytes);
            }
        }
        chain(
            &mut self.links,
            hops,
            &costs.services,
            self.clock,
            now,
            bytes,
        )
    }

    /// The host writes `bytes` to the drive at `port` (a doorbell); returns
    /// when they arrive.
    #[inline]
    pub fn host_write(&mut self, port: usize, now: Time, bytes: u64) -> Time {
        if self.single {
            return self.links[0].host_write(self.clock, now, bytes);
        }
        self.host_write_path(port, now, bytes)
    }

    /// [`Fabric::host_write`] past a lone root link (kept out of line: the
    /// lone link's call stays small enough to inline).
    #[inline(never)]
    fn host_write_path(&mut self, port: usize, now: Time, bytes: u64) -> Time {
        if self.pcie_hops(port) == 1 {
            return self.links[self.paths[port][0].link].host_write(self.clock, now, bytes);
        }
        // The host's own MMIO writes do not cross its memory port.
        let skip = self.mem.is_some() as usize;
        self.book(port, Kind::Doorbell, skip, now, bytes, bytes, |l| {
            l.payload_time(bytes)
        })
    }

    /// The drive at `port` reads `bytes` of host memory (SQE fetch, write
    /// data): read requests go up, completions with the data come down;
    /// returns when all the data is in the drive.
    #[inline]
    pub fn device_read(&mut self, port: usize, now: Time, bytes: u64) -> Time {
        if self.single {
            return self.links[0].device_read(self.clock, now, bytes);
        }
        self.device_read_path(port, now, bytes)
    }

    /// [`Fabric::device_read`] past a lone root link.
    #[inline(never)]
    fn device_read_path(&mut self, port: usize, now: Time, bytes: u64) -> Time {
        if self.paths[port].len() == 1 {
            return self.links[self.paths[port][0].link].device_read(self.clock, now, bytes);
        }
        let at_host = self.book(port, Kind::Request, 0, now, 0, bytes, |l| {
            let reqs = l.config().read_requests(bytes);
            l.request_time(reqs)
        });
        self.book(port, Kind::Fetch, 0, at_host, bytes, bytes, |l| {
            l.payload_time(bytes)
        })
    }

    /// The drive at `port` writes `bytes` to host memory (read data, CQE,
    /// MSI-X); returns when the last byte is at the host.
    #[inline]
    pub fn device_write(&mut self, port: usize, now: Time, bytes: u64) -> Time {
        if self.single {
            return self.links[0].device_write(self.clock, now, bytes);
        }
        self.device_write_path(port, now, bytes)
    }

    /// [`Fabric::device_write`] past a lone root link.
    #[inline(never)]
    fn device_write_path(&mut self, port: usize, now: Time, bytes: u64) -> Time {
        if self.paths[port].len() == 1 {
            return self.links[self.paths[port][0].link].device_write(self.clock, now, bytes);
        }
        self.book(port, Kind::Write, 0, now, bytes, bytes, |l| {
            l.payload_time(bytes)
        })
    }

    /// The drive at `port` posts a completion entry of `cqe` bytes at
    /// `now` and, with `msix`, an interrupt message of that many bytes
    /// right behind it; returns when the host has both. At a root port
    /// they are two transfers on the link (FIFO: back to back). Over a
    /// path of several hops they travel as one transfer of two TLPs (its
    /// wire time is theirs together), booked once per hop.
    #[inline]
    pub fn completion(&mut self, port: usize, now: Time, cqe: u64, msix: Option<u64>) -> Time {
        if self.single || self.paths[port].len() == 1 {
            let at = self.device_write(port, now, cqe);
            return match msix {
                Some(m) => self.device_write(port, now, m).max(at),
                None => at,
            };
        }
        let bytes = cqe + msix.unwrap_or(0);
        // Sizes of at most 2^32 - 2 bytes: a CQE and an MSI-X message.
        let key = cqe | msix.map_or(0, |m| (m + 1) << 32);
        self.book(port, Kind::Completion, 0, now, bytes, key, |l| {
            l.payload_time(cqe) + msix.map_or(Time::ZERO, |m| l.payload_time(m))
        })
    }

    /// Time of a [`Fabric::device_read`] of `bytes` over an idle path.
    #[inline]
    pub fn device_read_time(&self, port: usize, bytes: u64) -> Time {
        if self.single {
            return self.links[0].device_read_time(bytes);
        }
        let p = &self.paths[port];
        if p.len() == 1 {
            return self.links[p[0].link].device_read_time(bytes);
        }
        let memo = &self.idle_memo[port][1];
        if memo.get().0 == bytes {
            return memo.get().1;
        }
        let req = self.idle(&self.up[port], 0, |l| {
            let reqs = l.config().read_requests(bytes);
            l.request_time(reqs)
        });
        let t = req + self.idle(&self.down[port], bytes, |l| l.payload_time(bytes));
        memo.set((bytes, t));
        t
    }

    /// Time of a [`Fabric::device_write`] of `bytes` over an idle path.
    #[inline]
    pub fn device_write_time(&self, port: usize, bytes: u64) -> Time {
        if self.single {
            return self.links[0].device_write_time(bytes);
        }
        let p = &self.paths[port];
        if p.len() == 1 {
            return self.links[p[0].link].device_write_time(bytes);
        }
        let memo = &self.idle_memo[port][0];
        if memo.get().0 == bytes {
            return memo.get().1;
        }
        let t = self.idle(&self.up[port], bytes, |l| l.payload_time(bytes));
        memo.set((bytes, t));
        t
    }

    /// [`chain`]'s arithmetic on idle links: when the last byte of a
    /// transfer carrying `bytes` of payload arrives.
    fn idle(&self, hops: &[Step], bytes: u64, dur: impl Fn(&Link) -> Time) -> Time {
        let mut prev: Option<(Time, Time, &Step)> = None;
        for st in hops {
            let link = &self.links[st.link];
            let (d, _) = hop_service(link, st, bytes, dur(link));
            let (s, e) = match prev {
                None => (Time::ZERO, d),
                Some((ps, pe, p)) => (ps + p.cross, (ps + p.cross + d).max(pe + p.cross)),
            };
            prev = Some((s, e, st));
        }
        prev.map_or(Time::ZERO, |(_, e, p)| e + p.lat)
    }

    /// A peer-to-peer write of `bytes` from the device at `from` to the
    /// device at `to` (e.g. flash to an accelerator's memory): up to the
    /// lowest switch both sit under, then down; links above it are not used.
    /// Returns when the last byte arrives.
    pub fn peer_write(&mut self, from: usize, to: usize, now: Time, bytes: u64) -> Time {
        let mut a: Vec<Step> = self.up[from].clone();
        let mut b: Vec<Step> = self.down[to].clone();
        // Drop the shared links near the root: a's tail and b's head.
        while let (Some(x), Some(y)) = (a.last(), b.first()) {
            if x.link == y.link {
                a.pop();
                b.remove(0);
            } else {
                break;
            }
        }
        // The switch where the two paths meet is crossed between them.
        let meet = a
            .len()
            .checked_sub(1)
            .and_then(|i| self.paths[from].get(i))
            .and_then(|h| h.upper_switch);
        if let Some(first) = b.first_mut() {
            first.crossed = meet;
        }
        let mut hops: Vec<Step> = a.into_iter().chain(b).collect();
        settle(&self.links, &self.switches, &mut hops);
        let mut costs = Vec::with_capacity(hops.len());
        services(
            &self.links,
            &hops,
            bytes,
            |l| l.payload_time(bytes),
            &mut costs,
        );
        chain(&mut self.links, &hops, &costs, self.clock, now, bytes)
    }
}
