//! The PCIe fabric between the host and its drives: the root complex,
//! switches and links.
//!
//! Every attachment is one full-duplex [`Link`] (a drive to its root port or
//! switch port, a switch's upstream port to its parent). A drive addresses
//! the fabric by its port; a transfer is booked on each link of its path in
//! the direction it flows, cut-through: the next hop starts one link latency
//! plus the switch's port-to-port latency after this hop starts, and cannot
//! end before this hop's end plus those latencies (so a slow hop paces the
//! whole transfer). A drive's own link serves in booking order (FIFO per
//! direction). A switch's uplink carries several drives' transfers, booked
//! ahead of when they run (cut-through): it keeps a calendar per direction
//! ([`crate::engine::Calendar`]), so each transfer takes idle time from when
//! it reaches the switch on, filling the holes earlier bookings left, as the
//! switch's arbiter interleaves TLPs of its downstream ports; one drive's
//! backlog does not push another's behind it. Ingress
//! buffers and flow-control credits are not modelled.
//!
//! A path of one link (the one-drive system) is exactly [`Link`]'s own
//! arithmetic. A peer-to-peer transfer ([`Fabric::peer_write`]) goes up to
//! the lowest switch the two endpoints share and down again: it never
//! touches the links above that switch.

pub mod pcie;

use crate::config::PcieConfig;
use crate::units::Time;
use pcie::{Dir, Link};
use serde::Serialize;

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
    switch_latency: Vec<Time>,
    /// Some links are shared (a switch): they need [`Fabric::advance`].
    shared_links: bool,
    /// One root port and one drive: every transfer is `links[0]`'s own.
    single: bool,
}

/// One hop of a transfer: link, direction, switch crossed before it.
type Step = (usize, Dir, Option<usize>);

/// Book a transfer over `hops` (in the order it flows), cut-through;
/// returns when the last byte arrives. `dur` gives each link's own time.
fn chain(
    links: &mut [Link],
    switch_latency: &[Time],
    hops: &[Step],
    now: Time,
    bytes: u64,
    dur: impl Fn(&Link) -> Time,
) -> Time {
    let mut prev: Option<(Time, Time, Time)> = None; // (start, end, latency) of the hop before
    for &(l, dir, sw) in hops {
        let link = &mut links[l];
        let d = dur(link);
        let lat = link.latency();
        let (s, e) = match prev {
            None => link.reserve(dir, now, d, bytes),
            Some((ps, pe, plat)) => {
                let cross = plat + sw.map_or(Time::ZERO, |j| switch_latency[j]);
                let (s, e) = link.reserve(dir, ps + cross, d, bytes);
                (s, e.max(pe + cross))
            }
        };
        prev = Some((s, e, lat));
    }
    prev.map_or(now, |(_, e, lat)| e + lat)
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
            up: vec![vec![(0, Dir::Up, None)]],
            down: vec![vec![(0, Dir::Down, None)]],
            switch_latency: Vec::new(),
            shared_links: false,
            single: true,
        }
    }

    /// A tree of switches and drives under the root complex (a valid tree:
    /// see [`crate::system::config`]); port `i` is `ports[i]`.
    pub fn build(switches: &[SwitchSpec<'_>], ports: &[PortSpec<'_>]) -> Fabric {
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
        let mut paths = Vec::new();
        for p in ports {
            let mut path = vec![Hop {
                link: links.len(),
                upper_switch: match p.attach {
                    Upper::Root => None,
                    Upper::Switch(j) => Some(j),
                },
            }];
            links.push(Link::new(p.link));
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
            paths.push(path);
        }
        let mut f = Fabric {
            links,
            info,
            paths,
            up: Vec::new(),
            down: Vec::new(),
            switch_latency: switches.iter().map(|s| s.latency).collect(),
            shared_links: !switches.is_empty(),
            single: false,
        };
        f.up = (0..f.paths.len()).map(|p| f.up_hops(p)).collect();
        f.down = (0..f.paths.len()).map(|p| f.down_hops(p)).collect();
        f
    }

    /// The event loop's clock has reached `now`: nothing is booked earlier
    /// from now on (shared links forget the past).
    #[inline(always)]
    pub fn advance(&mut self, now: Time) {
        if self.shared_links {
            for l in &mut self.links {
                l.forget_before(now);
            }
        }
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
        self.paths[port].len() - 1
    }

    fn up_hops(&self, port: usize) -> Vec<Step> {
        // Going up, the switch crossed before hop i is hop i-1's upper switch.
        let p = &self.paths[port];
        (0..p.len())
            .map(|i| {
                (
                    p[i].link,
                    Dir::Up,
                    if i == 0 { None } else { p[i - 1].upper_switch },
                )
            })
            .collect()
    }

    fn down_hops(&self, port: usize) -> Vec<Step> {
        // Going down, the switch crossed before a hop is its own upper switch.
        let p = &self.paths[port];
        (0..p.len())
            .rev()
            .map(|i| {
                (
                    p[i].link,
                    Dir::Down,
                    if i + 1 == p.len() {
                        None
                    } else {
                        p[i].upper_switch
                    },
                )
            })
            .collect()
    }

    /// The host writes `bytes` to the drive at `port` (a doorbell); returns
    /// when they arrive.
    #[inline]
    pub fn host_write(&mut self, port: usize, now: Time, bytes: u64) -> Time {
        if self.single {
            return self.links[0].host_write(now, bytes);
        }
        if self.paths[port].len() == 1 {
            return self.links[self.paths[port][0].link].host_write(now, bytes);
        }
        chain(
            &mut self.links,
            &self.switch_latency,
            &self.down[port],
            now,
            bytes,
            |l| l.payload_time(bytes),
        )
    }

    /// The drive at `port` reads `bytes` of host memory (SQE fetch, write
    /// data): read requests go up, completions with the data come down;
    /// returns when all the data is in the drive.
    #[inline]
    pub fn device_read(&mut self, port: usize, now: Time, bytes: u64) -> Time {
        if self.single {
            return self.links[0].device_read(now, bytes);
        }
        if self.paths[port].len() == 1 {
            return self.links[self.paths[port][0].link].device_read(now, bytes);
        }
        let at_host = chain(
            &mut self.links,
            &self.switch_latency,
            &self.up[port],
            now,
            0,
            |l| {
                let reqs = bytes.div_ceil(l.config().max_read_request.0).max(1);
                l.request_time(reqs)
            },
        );
        chain(
            &mut self.links,
            &self.switch_latency,
            &self.down[port],
            at_host,
            bytes,
            |l| l.payload_time(bytes),
        )
    }

    /// The drive at `port` writes `bytes` to host memory (read data, CQE,
    /// MSI-X); returns when the last byte is at the host.
    #[inline]
    pub fn device_write(&mut self, port: usize, now: Time, bytes: u64) -> Time {
        if self.single {
            return self.links[0].device_write(now, bytes);
        }
        if self.paths[port].len() == 1 {
            return self.links[self.paths[port][0].link].device_write(now, bytes);
        }
        chain(
            &mut self.links,
            &self.switch_latency,
            &self.up[port],
            now,
            bytes,
            |l| l.payload_time(bytes),
        )
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
        let req = self.idle(&self.up[port], |l| {
            let reqs = bytes.div_ceil(l.config().max_read_request.0).max(1);
            l.request_time(reqs)
        });
        req + self.idle(&self.down[port], |l| l.payload_time(bytes))
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
        self.idle(&self.up[port], |l| l.payload_time(bytes))
    }

    /// [`chain`]'s arithmetic on idle links: when the last byte arrives.
    fn idle(&self, hops: &[Step], dur: impl Fn(&Link) -> Time) -> Time {
        let mut prev: Option<(Time, Time, Time)> = None;
        for &(l, _, sw) in hops {
            let link = &self.links[l];
            let d = dur(link);
            let (s, e) = match prev {
                None => (Time::ZERO, d),
                Some((ps, pe, plat)) => {
                    let cross = plat + sw.map_or(Time::ZERO, |j| self.switch_latency[j]);
                    (ps + cross, (ps + cross + d).max(pe + cross))
                }
            };
            prev = Some((s, e, link.latency()));
        }
        prev.map_or(Time::ZERO, |(_, e, lat)| e + lat)
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
            if x.0 == y.0 {
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
            first.2 = meet;
        }
        let hops: Vec<Step> = a.into_iter().chain(b).collect();
        chain(
            &mut self.links,
            &self.switch_latency,
            &hops,
            now,
            bytes,
            |l| l.payload_time(bytes),
        )
    }
}
