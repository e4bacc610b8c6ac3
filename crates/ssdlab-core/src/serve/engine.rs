//! The serving engine: one thread that owns the simulated system, keeps
//! simulated time in step with the wall clock, and answers each request with
//! its simulated completion time.

use super::{Msg, Request, ServeClock};
use crate::report::Report;
use crate::system::{SimError, System};
use crate::units::Time;
use crate::workload::gen::Io;
use crate::workload::Op;
use std::collections::HashMap;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The engine polls for requests instead of sleeping across gaps shorter than this.
const SPIN_WAIT: Duration = Duration::from_micros(30);

/// Trims are split at this size (a driver's discard limit), bytes.
const MAX_TRIM: u64 = 1 << 30;

pub(super) struct EngineCfg {
    /// Simulated time zero.
    pub(super) start: Instant,
    pub(super) lookahead: Time,
    /// What paces serving.
    pub(super) clock: ServeClock,
    /// The drive's mapping unit, bytes.
    pub(super) unit: u64,
    /// Largest read or write command, bytes (a multiple of `unit`).
    pub(super) max_transfer: u64,
}

pub(super) struct EngineOut {
    /// The simulated system's report over the time served.
    pub(super) report: Report,
    /// Requests that arrived when the simulation had already passed their
    /// arrival time (possible only with a look-ahead): placed later.
    pub(super) late_arrivals: u64,
}

/// A request in the simulation.
struct Pending {
    q: u32,
    /// Commands not yet completed.
    left: u32,
    /// A flush follows the write (FUA).
    then_flush: bool,
    reply: mpsc::SyncSender<Result<(Time, Time), String>>,
    /// Simulated arrival.
    arrival: Time,
}

/// Simulated time now: wall time since `start`.
#[inline]
fn sim_now(start: Instant) -> Time {
    Time::ns(start.elapsed().as_nanos() as u64)
}

/// The commands a request becomes (sector-aligned, split at `max` bytes).
fn commands(op: Op, offset: u64, len: u64, unit: u64, max: u64, out: &mut Vec<Io>) {
    let s = Io::SECTOR;
    let mut at = offset / s * s;
    let end = (offset + len).div_ceil(s) * s;
    while at < end {
        // Cut at multiples of `max` so a command never spans two.
        let next = ((at / max + 1) * max).min(end);
        out.push(Io::from_bytes(op, at, next - at, unit));
        at = next;
    }
}

pub(super) fn run(
    mut sys: System,
    rx: mpsc::Receiver<Msg>,
    cfg: EngineCfg,
) -> Result<EngineOut, SimError> {
    let wall = cfg.clock == ServeClock::Wall;
    if wall {
        tight_timer_slack();
    }
    let mut pending: HashMap<u64, Pending> = HashMap::new();
    let mut next_tag: u64 = 0;
    let mut late_arrivals = 0u64;
    // On the simulated clock: the latest completion released (a completion
    // can lie a driver cost past the event that reported it).
    let mut released = Time::ZERO;
    let mut done: Vec<(u64, Time)> = Vec::new();
    let mut cmds: Vec<Io> = Vec::new();
    let mut inbox: Option<Msg> = None;
    let mut open = true;
    let result = loop {
        // Take what has arrived.
        let mut failed = None;
        while let Some(m) = inbox.take().or_else(|| rx.try_recv().ok()) {
            let Msg::Io {
                q,
                req,
                arrival,
                reply,
            } = m;
            // On the wall clock a request enters at its arrival; on the
            // simulated clock, at the present: the simulation's time, or the
            // latest completion a client has seen if that is later.
            let at = if wall {
                Time::ns(arrival.saturating_duration_since(cfg.start).as_nanos() as u64)
            } else {
                sys.now().max(released)
            };
            if at < sys.now() {
                late_arrivals += 1;
            }
            cmds.clear();
            let (unit, max) = (cfg.unit, cfg.max_transfer);
            let then_flush = match req {
                Request::Read { offset, len } => {
                    commands(Op::Read, offset, len, unit, max, &mut cmds);
                    false
                }
                Request::Write { offset, len, fua } => {
                    commands(Op::Write, offset, len, unit, max, &mut cmds);
                    fua
                }
                Request::Flush => {
                    cmds.push(Io::FLUSH);
                    false
                }
                Request::Trim { offset, len, fua }
                | Request::Zero {
                    offset,
                    len,
                    may_trim: true,
                    fua,
                } => {
                    commands(Op::Trim, offset, len, unit, MAX_TRIM, &mut cmds);
                    fua
                }
                Request::Zero {
                    offset,
                    len,
                    may_trim: false,
                    fua,
                } => {
                    commands(Op::Write, offset, len, unit, max, &mut cmds);
                    fua
                }
            };
            if cmds.is_empty() {
                // Nothing to move (a zero-length request): done now.
                let _ = reply.send(Ok((at, at.max(sys.now()))));
                continue;
            }
            let tag = next_tag;
            next_tag += 1;
            let mut refused = None;
            for io in &cmds {
                if let Err(e) = sys.live_submit(q, at, *io, tag) {
                    refused = Some(e);
                    break;
                }
            }
            if let Some(e) = refused {
                // Bounds are checked before the request gets here: a refusal is a bug.
                failed = Some(e.to_string());
                let _ = reply.send(Err(e.to_string()));
                break;
            }
            pending.insert(
                tag,
                Pending {
                    q,
                    left: cmds.len() as u32,
                    then_flush,
                    reply,
                    arrival: at,
                },
            );
        }
        if let Some(e) = failed {
            break Err(SimError::Device(e));
        }
        // Simulate up to now (on the simulated clock: to the next instant
        // with events, while a request is in flight).
        let until = if wall {
            Some(sim_now(cfg.start) + cfg.lookahead)
        } else if pending.is_empty() {
            None
        } else {
            sys.next_event_time()
        };
        if let Some(until) = until {
            if let Err(e) = sys.advance_to(until) {
                break Err(e);
            }
        }
        sys.take_live_done(&mut done);
        for (tag, end) in done.drain(..) {
            let Some(p) = pending.get_mut(&tag) else {
                continue;
            };
            p.left -= 1;
            if p.left > 0 {
                continue;
            }
            if p.then_flush {
                // FUA: durable before it completes.
                p.then_flush = false;
                p.left = 1;
                let q = p.q;
                if let Err(e) = sys.live_submit(q, end, Io::FLUSH, tag) {
                    if let Some(p) = pending.remove(&tag) {
                        let _ = p.reply.send(Err(e.to_string()));
                    }
                }
                continue;
            }
            if let Some(p) = pending.remove(&tag) {
                released = released.max(end);
                let _ = p.reply.send(Ok((p.arrival, end)));
            }
        }
        if !open && pending.is_empty() {
            break Ok(());
        }
        if !wall {
            match (pending.is_empty(), sys.next_event_time()) {
                // In flight: simulate on (new requests are taken between instants).
                (false, Some(_)) => continue,
                (false, None) => {
                    break Err(SimError::Stalled(format!(
                        "{} served requests outstanding and no events pending",
                        pending.len()
                    )))
                }
                // Idle: simulated time stands still until the next request.
                (true, _) => match rx.recv() {
                    Ok(m) => inbox = Some(m),
                    Err(_) => open = false,
                },
            }
            continue;
        }
        // Wait for the next event or the next request, whichever comes first.
        let now = sim_now(cfg.start);
        match sys.next_event_time() {
            Some(t) if t <= now + cfg.lookahead => continue,
            Some(t) if open => {
                let wait = Duration::from_nanos((t - cfg.lookahead - now).as_ns());
                if wait < SPIN_WAIT {
                    // A short gap: poll rather than sleep (a timed sleep
                    // costs a futex round trip and wakes late anyway).
                    let until = Instant::now() + wait;
                    while Instant::now() < until {
                        if let Ok(m) = rx.try_recv() {
                            inbox = Some(m);
                            break;
                        }
                        std::hint::spin_loop();
                    }
                    continue;
                }
                match rx.recv_timeout(wait) {
                    Ok(m) => inbox = Some(m),
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => open = false,
                }
            }
            Some(t) => {
                // Stopping: finish what is in flight in real time.
                std::thread::sleep(Duration::from_nanos((t - cfg.lookahead - now).as_ns()));
            }
            None if open => match rx.recv() {
                Ok(m) => inbox = Some(m),
                Err(_) => open = false,
            },
            None => {
                if !pending.is_empty() {
                    break Err(SimError::Stalled(format!(
                        "{} served requests outstanding and no events pending",
                        pending.len()
                    )));
                }
                break Ok(());
            }
        }
    };
    // Whatever is left is refused (the engine has stopped).
    for (_, p) in pending.drain() {
        let _ = p.reply.send(Err("the simulation stopped".into()));
    }
    result?;
    let wall = cfg.start.elapsed().as_secs_f64();
    let report = Report::from_system(&sys, "served (NBD)", &[], wall);
    Ok(EngineOut {
        report,
        late_arrivals,
    })
}

/// Sleep until `due` (to within the timer's resolution: this thread's timer
/// slack is made tight first).
pub(super) fn sleep_until(due: Instant, spin: Duration) {
    tight_timer_slack();
    let now = Instant::now();
    if due <= now {
        return;
    }
    let left = due - now;
    if left > spin {
        std::thread::sleep(left - spin);
    }
    while Instant::now() < due {
        std::hint::spin_loop();
    }
}

/// Linux lets a sleeping thread wake up to 50 us late by default (timer
/// slack); a served request's release time needs better: 1 us.
fn tight_timer_slack() {
    #[cfg(target_os = "linux")]
    {
        thread_local! {
            static SET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
        }
        SET.with(|s| {
            if !s.get() {
                // SAFETY: prctl(PR_SET_TIMERSLACK) takes a plain integer and
                // changes only this thread's timer slack.
                unsafe {
                    libc::prctl(libc::PR_SET_TIMERSLACK, 1_000 as libc::c_ulong);
                }
                s.set(true);
            }
        });
    }
}
