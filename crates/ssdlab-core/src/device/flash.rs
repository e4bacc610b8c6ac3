//! Flash scheduler and NAND dies.
//!
//! Per-die transaction queues (one per priority class), per-channel buses,
//! and the three execution models of seed 001 (after the Ozone controller):
//!
//! * `sequential`: a channel controller runs one transaction at a time,
//!   command, array operation and data transfer included.
//! * `interleaved`: dies on a channel overlap their array operations and
//!   share the bus for command and data cycles; completions are delivered
//!   in issue order per channel.
//! * `out-of-order`: as interleaved, but each transaction completes as soon
//!   as it is done; only operations on the same die keep their order.
//!
//! A read: command cycles on the bus (`t_cmd`), array read (`tR` of the page
//! type), data out on the bus (bytes / bus rate). A program: command and data
//! in on the bus, then `tPROG`. An erase: command, then `tBERS`. The bus is a
//! FIFO server; dies are independent (no chip-level lockstep). Optional
//! program/erase suspend lets a waiting read in.

pub(crate) mod config;
mod room;

pub use room::WriteRoom;

use crate::config::{ExecutionModel, FlashConfig, NandConfig, OpKind};
use crate::units::{FastDiv, Time, TransferTable};
use std::collections::VecDeque;

/// A flash transaction.
#[derive(Debug, Clone, Copy)]
pub struct Txn {
    /// Operation.
    pub kind: OpKind,
    /// Target die.
    pub die: u32,
    /// Array latency (tR of the page type, tPROG, tBERS).
    pub t_array: Time,
    /// Bytes moved on the bus (data out for reads, data in for programs).
    pub bytes: u64,
    /// Opaque owner token returned on completion.
    pub owner: u64,
    /// A program into an SLC-mode block (counted apart: it costs less
    /// array energy than a native program).
    pub slc: bool,
}

/// Events the scheduler schedules for itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlashEvent {
    /// The die's array operation finished.
    ArrayDone {
        /// Die.
        die: u32,
        /// Die generation (stale events after a suspend are ignored).
        gen: u32,
    },
    /// The die's data-out transfer finished.
    XferDone {
        /// Die.
        die: u32,
        /// Die generation.
        gen: u32,
    },
    /// A channel bus finished its current transfer: grant the next request.
    BusFree {
        /// Channel.
        ch: u32,
    },
}

/// What a bus request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BusUse {
    /// Command/address cycles (read or erase), then the array operation.
    Cmd,
    /// Command, address and data-in cycles of a program, then tPROG.
    ProgramIn,
    /// Data out of a read.
    DataOut,
}

#[derive(Debug, Clone, Copy)]
struct BusReq {
    die: u32,
    tid: u32,
    what: BusUse,
    /// Extra array time (suspend latency) added after the command.
    extra: Time,
}

/// No transaction (an empty [`TxnList`] end, an idle die's array).
const NIL: u32 = u32::MAX;

/// A FIFO of transactions threaded through their [`TxnLinks`]
/// (`FlashScheduler::links`): a transaction waits in at most one of its
/// die's lists at a time (a priority queue, then data out) and in at most
/// one channel queue, so two links per transaction serve them all and a
/// queue takes 8 bytes instead of a buffer of its own (with several drives
/// the queues' buffers did not fit the L1 cache: docs/performance.md).
#[derive(Debug, Clone, Copy)]
struct TxnList {
    head: u32,
    tail: u32,
}

impl TxnList {
    const EMPTY: TxnList = TxnList {
        head: NIL,
        tail: NIL,
    };

    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// Exactly one transaction waits.
    #[inline(always)]
    fn is_single(&self) -> bool {
        self.head != NIL && self.head == self.tail
    }

    /// Append `id`; `BUS`: the channel-queue links, else the die's.
    #[inline(always)]
    fn push_back<const BUS: bool>(&mut self, links: &mut [TxnLinks], id: u32) {
        *links[id as usize].next::<BUS>() = NIL;
        if self.head == NIL {
            self.head = id;
        } else {
            *links[self.tail as usize].next::<BUS>() = id;
        }
        self.tail = id;
    }

    #[inline(always)]
    fn pop_front<const BUS: bool>(&mut self, links: &mut [TxnLinks]) -> Option<u32> {
        let id = self.head;
        if id == NIL {
            return None;
        }
        self.head = *links[id as usize].next::<BUS>();
        if self.head == NIL {
            self.tail = NIL;
        }
        Some(id)
    }

    /// Length of a die's list (walks the die links).
    fn len(&self, links: &[TxnLinks]) -> usize {
        let (mut n, mut i) = (0, self.head);
        while i != NIL {
            n += 1;
            i = links[i as usize].die;
        }
        n
    }
}

/// A die: one cache line (`repr(C)`, aligned; size asserted by a test),
/// its queues threaded through the transactions ([`TxnList`]).
#[repr(C, align(64))]
struct Die {
    busy: Time,
    /// End of the array phase (`Time::MAX` until its bus cycles are
    /// granted); meaningful while `array != NIL`.
    array_end: Time,
    /// Transaction in the array phase (command/data-in on the bus, then
    /// tR/tPROG/tBERS), or [`NIL`].
    array: u32,
    gen: u32,
    /// A suspended program or erase, or [`NIL`] (its remaining array time
    /// is in [`FlashScheduler::suspended_left`]).
    suspended: u32,
    /// Reads whose data sits in the page/cache register, waiting for or doing data out (front).
    xfers: TxnList,
    queues: [TxnList; 3],
}

impl Die {
    const IDLE: Die = Die {
        busy: Time::ZERO,
        array_end: Time::ZERO,
        array: NIL,
        gen: 0,
        suspended: NIL,
        xfers: TxnList::EMPTY,
        queues: [TxnList::EMPTY; 3],
    };

    /// The transaction in the array phase and its end.
    #[inline(always)]
    fn array(&self) -> Option<(u32, Time)> {
        (self.array != NIL).then_some((self.array, self.array_end))
    }

    #[inline(always)]
    fn set_array(&mut self, tid: u32, end: Time) {
        self.array = tid;
        self.array_end = end;
    }

    /// Neither an array operation nor a data-out pending.
    #[inline(always)]
    fn is_idle(&self) -> bool {
        self.array == NIL && self.xfers.is_empty()
    }

    /// The first priority rank with a transaction queued.
    #[inline(always)]
    fn first_queued(&self) -> Option<usize> {
        (0..3).find(|&r| !self.queues[r].is_empty())
    }
}

/// A channel bus with priority arbitration: command cycles (short, they
/// start idle dies) go before queued data transfers, which are FIFO.
///
/// One cache line (`repr(C)`, aligned; size asserted by a test): its
/// queues are threaded through the transactions' bus links ([`TxnList`],
/// [`TxnLinks`]: a transaction waits for at most one bus use at a time).
#[repr(C, align(64))]
struct Channel {
    busy_until: Time,
    busy_total: Time,
    cmd_q: TxnList,
    data_q: TxnList,
    rr: u32,
    free_pending: bool,
    /// Sequential model: a transaction is running on this channel.
    running: bool,
}

/// A transaction's places in the lists it waits in ([`TxnList`]): its
/// die's (a priority queue, then data out) and a channel's queue for the
/// bus, with what it waits for there (a [`BusReq`] without its die, which
/// the transaction names; a suspend's extra time, rare, is kept apart in
/// [`FlashScheduler::bus_extra`]).
#[derive(Debug, Clone, Copy)]
struct TxnLinks {
    die: u32,
    bus: u32,
    what: BusUse,
    has_extra: bool,
}

impl TxnLinks {
    const NONE: TxnLinks = TxnLinks {
        die: NIL,
        bus: NIL,
        what: BusUse::Cmd,
        has_extra: false,
    };

    #[inline(always)]
    fn next<const BUS: bool>(&mut self) -> &mut u32 {
        if BUS {
            &mut self.bus
        } else {
            &mut self.die
        }
    }
}

/// Scheduler counters.
#[derive(Debug, Clone, Default)]
pub struct FlashStats {
    /// Read transactions completed.
    pub reads: u64,
    /// Program transactions completed.
    pub programs: u64,
    /// Of which into SLC-mode blocks.
    pub slc_programs: u64,
    /// Erase transactions completed.
    pub erases: u64,
    /// Program/erase suspensions.
    pub suspends: u64,
}

/// The flash scheduler with its dies and channels.
pub struct FlashScheduler {
    model: ExecutionModel,
    rank: [usize; 3],
    program_suspend: bool,
    erase_suspend: bool,
    cache_read: bool,
    dies_per_channel: u32,
    /// Division by `dies_per_channel` by multiplication: a die's channel
    /// is asked at every transaction's start and end (a division there
    /// was about 1 % of a random read's time: docs/performance.md).
    per_channel: FastDiv,
    /// Which dies can take another program, in the drive's views
    /// ([`FlashScheduler::track_write_room`]).
    room: Option<WriteRoom>,
    bus_bw: TransferTable,
    t_cmd: Time,
    t_suspend: Time,
    t_resume: Time,
    txns: Vec<Txn>,
    /// Per transaction: its places in the die's and a channel's lists.
    links: Vec<TxnLinks>,
    /// Per transaction (grown when first needed): the extra array time of
    /// its wait for the bus, when `TxnLinks::has_extra`.
    bus_extra: Vec<Time>,
    free: Vec<u32>,
    dies: Vec<Die>,
    /// Per die: the remaining array time of its suspended operation.
    suspended_left: Vec<Time>,
    /// Transactions per die and kind (read, write, erase) queued, running or
    /// suspended: kept apart from the dies' queues so that the back end's
    /// scan for a die with program room reads one short array.
    loads: Vec<[u32; 3]>,
    channels: Vec<Channel>,
    /// Interleaved model, per channel: issue order with done flags.
    orders: Vec<VecDeque<(u32, bool)>>,
    /// Counters.
    pub stats: FlashStats,
}

fn kind_idx(k: OpKind) -> usize {
    match k {
        OpKind::Read => 0,
        OpKind::Write => 1,
        OpKind::Erase => 2,
    }
}

impl FlashScheduler {
    /// Build from config.
    pub fn new(n: &NandConfig, f: &FlashConfig) -> FlashScheduler {
        let mut rank = [0usize; 3];
        for (r, k) in f.priority.iter().enumerate() {
            rank[kind_idx(*k)] = r;
        }
        FlashScheduler {
            model: f.execution,
            rank,
            program_suspend: f.program_suspend,
            erase_suspend: f.erase_suspend,
            cache_read: n.cache_read,
            dies_per_channel: n.dies_per_channel(),
            per_channel: FastDiv::new(n.dies_per_channel()),
            room: None,
            bus_bw: TransferTable::new(n.bus_bandwidth),
            t_cmd: n.t_cmd,
            t_suspend: n.t_suspend,
            t_resume: n.t_resume,
            txns: Vec::with_capacity(1024),
            links: Vec::with_capacity(1024),
            bus_extra: Vec::new(),
            free: Vec::new(),
            dies: (0..n.total_dies()).map(|_| Die::IDLE).collect(),
            suspended_left: vec![Time::ZERO; n.total_dies() as usize],
            loads: vec![[0; 3]; n.total_dies() as usize],
            channels: (0..n.channels)
                .map(|_| Channel {
                    busy_until: Time::ZERO,
                    busy_total: Time::ZERO,
                    free_pending: false,
                    cmd_q: TxnList::EMPTY,
                    data_q: TxnList::EMPTY,
                    running: false,
                    rr: 0,
                })
                .collect(),
            orders: (0..n.channels).map(|_| VecDeque::new()).collect(),
            stats: FlashStats::default(),
        }
    }

    /// Bus transfer time of `bytes`.
    #[inline]
    pub fn xfer_time(&self, bytes: u64) -> Time {
        self.bus_bw.time(bytes)
    }

    /// Transactions of `kind` queued on a die (not counting running ones).
    pub fn queued(&self, die: u32, kind: OpKind) -> usize {
        self.dies[die as usize].queues[self.rank[kind_idx(kind)]].len(&self.links)
    }

    /// Transactions of `kind` on a die that are queued, running or suspended.
    #[inline]
    pub fn die_load(&self, die: u32, kind: OpKind) -> usize {
        self.loads[die as usize][kind_idx(kind)] as usize
    }

    /// From now on keep [`WriteRoom`] marks of the dies with fewer than
    /// `limit` write transactions, over the index spaces `views` (each
    /// index naming a die). Call before any transaction is submitted.
    pub fn track_write_room(&mut self, limit: usize, views: &[&[u32]]) {
        debug_assert!(
            self.txns.len() == self.free.len(),
            "transactions submitted already"
        );
        self.room = Some(WriteRoom::new(limit as u32, self.dies.len(), views));
    }

    /// The marks of [`FlashScheduler::track_write_room`], if kept.
    #[inline]
    pub fn write_room(&self) -> Option<&WriteRoom> {
        self.room.as_ref()
    }

    #[inline(always)]
    fn write_load_changed(&mut self, die: usize) {
        if let Some(r) = self.room.as_mut() {
            r.load_changed(die, self.loads[die][kind_idx(OpKind::Write)]);
        }
    }

    /// Submit a transaction; `sched` receives (time, event) pairs to schedule.
    pub fn submit(&mut self, now: Time, t: Txn, sched: &mut impl FnMut(Time, FlashEvent)) {
        let id = if let Some(i) = self.free.pop() {
            self.txns[i as usize] = t;
            i
        } else {
            self.txns.push(t);
            self.links.push(TxnLinks::NONE);
            (self.txns.len() - 1) as u32
        };
        let die = t.die as usize;
        self.dies[die].queues[self.rank[kind_idx(t.kind)]].push_back::<false>(&mut self.links, id);
        self.loads[die][kind_idx(t.kind)] += 1;
        if t.kind == OpKind::Write {
            self.write_load_changed(die);
        }
        if t.kind == OpKind::Read && self.model != ExecutionModel::Sequential {
            self.try_suspend(now, t.die, sched);
        }
        self.kick(now, t.die, sched);
    }

    fn try_suspend(&mut self, now: Time, die: u32, sched: &mut impl FnMut(Time, FlashEvent)) {
        let d = &self.dies[die as usize];
        if d.suspended != NIL {
            return;
        }
        if let Some((tid, end)) = d.array() {
            let k = self.txns[tid as usize].kind;
            let allowed = (k == OpKind::Write && self.program_suspend)
                || (k == OpKind::Erase && self.erase_suspend);
            // Only suspend during the array phase (after data in) and if it saves time.
            if allowed && end != Time::MAX && end > now + self.t_suspend {
                let remaining = end - now;
                let d = &mut self.dies[die as usize];
                d.gen = d.gen.wrapping_add(1);
                d.suspended = tid;
                self.suspended_left[die as usize] = remaining;
                d.array = NIL;
                d.busy = d.busy.saturating_sub(remaining);
                self.stats.suspends += 1;
                // Suspend cost: the read's array operation starts t_suspend later.
                self.start_next_with(now, die, self.t_suspend, sched);
            }
        }
    }

    /// The channel of `die`.
    #[inline(always)]
    fn channel_of(&self, die: u32) -> usize {
        self.per_channel.quotient(die) as usize
    }

    fn kick(&mut self, now: Time, die: u32, sched: &mut impl FnMut(Time, FlashEvent)) {
        match self.model {
            ExecutionModel::Sequential => {
                let ch = self.channel_of(die);
                if self.channels[ch].running {
                    return;
                }
                // Pick the highest-priority transaction among the channel's dies, round robin.
                let base = ch as u32 * self.dies_per_channel;
                let mut best: Option<(usize, u32)> = None;
                for i in 0..self.dies_per_channel {
                    let d = base + (self.channels[ch].rr + i) % self.dies_per_channel;
                    let dd = &self.dies[d as usize];
                    if !dd.is_idle() {
                        continue;
                    }
                    if let Some(r) = dd.first_queued() {
                        if best.is_none_or(|(br, _)| r < br) {
                            best = Some((r, d));
                        }
                    }
                }
                if let Some((_, d)) = best {
                    self.channels[ch].rr = (d - base + 1) % self.dies_per_channel;
                    self.channels[ch].running = true;
                    self.start_next(now, d, sched);
                }
            }
            _ => {
                if self.dies[die as usize].is_idle() {
                    self.start_next(now, die, sched);
                }
            }
        }
    }

    /// Start the highest-priority queued transaction on an idle die at `at`
    /// (or resume a suspended one when no read waits).
    fn start_next(&mut self, at: Time, die: u32, sched: &mut impl FnMut(Time, FlashEvent)) {
        self.start_next_with(at, die, Time::ZERO, sched)
    }

    fn start_next_with(
        &mut self,
        at: Time,
        die: u32,
        extra: Time,
        sched: &mut impl FnMut(Time, FlashEvent),
    ) {
        let di = die as usize;
        let read_rank = self.rank[0];
        let d = &mut self.dies[di];
        if d.suspended != NIL {
            let tid = d.suspended;
            if d.queues[read_rank].is_empty() {
                let remaining = self.suspended_left[di];
                d.suspended = NIL;
                let end = at + self.t_resume + remaining;
                d.set_array(tid, end);
                d.busy += self.t_resume + remaining;
                sched(end, FlashEvent::ArrayDone { die, gen: d.gen });
                return;
            }
            // Only reads may run while an operation is suspended.
            let tid = d.queues[read_rank]
                .pop_front::<false>(&mut self.links)
                .unwrap_or(NIL);
            self.begin(at, die, tid, extra, sched);
            return;
        }
        let Some(r) = d.first_queued() else {
            if self.model == ExecutionModel::Sequential {
                let ch = self.channel_of(die);
                self.channels[ch].running = false;
            }
            return;
        };
        let tid = d.queues[r]
            .pop_front::<false>(&mut self.links)
            .unwrap_or(NIL);
        self.begin(at, die, tid, extra, sched);
    }

    fn begin(
        &mut self,
        now: Time,
        die: u32,
        tid: u32,
        extra: Time,
        sched: &mut impl FnMut(Time, FlashEvent),
    ) {
        let t = self.txns[tid as usize];
        let ch = self.channel_of(die);
        self.dies[die as usize].set_array(tid, Time::MAX);
        if self.model == ExecutionModel::Interleaved {
            self.orders[ch].push_back((tid, false));
        }
        let what = if t.kind == OpKind::Write {
            BusUse::ProgramIn
        } else {
            BusUse::Cmd
        };
        self.bus_request(
            now,
            ch,
            BusReq {
                die,
                tid,
                what,
                extra,
            },
            sched,
        );
    }

    fn bus_duration(&self, r: &BusReq) -> Time {
        let t = &self.txns[r.tid as usize];
        match r.what {
            BusUse::Cmd => self.t_cmd,
            BusUse::ProgramIn => self.t_cmd + self.xfer_time(t.bytes),
            BusUse::DataOut => self.xfer_time(t.bytes),
        }
    }

    fn bus_request(
        &mut self,
        now: Time,
        ch: usize,
        r: BusReq,
        sched: &mut impl FnMut(Time, FlashEvent),
    ) {
        let c = &mut self.channels[ch];
        if c.busy_until <= now && c.cmd_q.is_empty() && c.data_q.is_empty() {
            self.bus_grant(now, ch, r, sched);
            return;
        }
        let w = &mut self.links[r.tid as usize];
        w.what = r.what;
        w.has_extra = r.extra > Time::ZERO;
        if w.has_extra {
            let i = r.tid as usize;
            if self.bus_extra.len() <= i {
                self.bus_extra.resize(i + 1, Time::ZERO);
            }
            self.bus_extra[i] = r.extra;
        }
        let q = if r.what == BusUse::Cmd {
            &mut c.cmd_q
        } else {
            &mut c.data_q
        };
        q.push_back::<true>(&mut self.links, r.tid);
        if !c.free_pending {
            c.free_pending = true;
            sched(c.busy_until.max(now), FlashEvent::BusFree { ch: ch as u32 });
        }
    }

    fn bus_grant(
        &mut self,
        now: Time,
        ch: usize,
        r: BusReq,
        sched: &mut impl FnMut(Time, FlashEvent),
    ) {
        let dur = self.bus_duration(&r);
        let end = now + dur;
        let c = &mut self.channels[ch];
        c.busy_until = end;
        c.busy_total += dur;
        let t = self.txns[r.tid as usize];
        let d = &mut self.dies[r.die as usize];
        d.busy += dur;
        match r.what {
            BusUse::Cmd | BusUse::ProgramIn => {
                let done = end + r.extra + t.t_array;
                d.busy += r.extra + t.t_array;
                d.set_array(r.tid, done);
                sched(
                    done,
                    FlashEvent::ArrayDone {
                        die: r.die,
                        gen: d.gen,
                    },
                );
            }
            BusUse::DataOut => sched(
                end,
                FlashEvent::XferDone {
                    die: r.die,
                    gen: d.gen,
                },
            ),
        }
    }

    fn bus_free(&mut self, now: Time, ch: usize, sched: &mut impl FnMut(Time, FlashEvent)) {
        let c = &mut self.channels[ch];
        c.free_pending = false;
        if c.busy_until > now {
            c.free_pending = true;
            sched(c.busy_until, FlashEvent::BusFree { ch: ch as u32 });
            return;
        }
        let next = c
            .cmd_q
            .pop_front::<true>(&mut self.links)
            .or_else(|| c.data_q.pop_front::<true>(&mut self.links));
        if let Some(tid) = next {
            let w = self.links[tid as usize];
            let r = BusReq {
                die: self.txns[tid as usize].die,
                tid,
                what: w.what,
                extra: if w.has_extra {
                    self.bus_extra[tid as usize]
                } else {
                    Time::ZERO
                },
            };
            self.bus_grant(now, ch, r, sched);
            let c = &mut self.channels[ch];
            if !c.cmd_q.is_empty() || !c.data_q.is_empty() {
                c.free_pending = true;
                sched(c.busy_until, FlashEvent::BusFree { ch: ch as u32 });
            }
        }
    }

    /// Handle a scheduler event; completed transactions' owner tokens (and kinds) go to `done`.
    #[inline]
    pub fn on_event(
        &mut self,
        now: Time,
        ev: FlashEvent,
        done: &mut Vec<(u64, OpKind)>,
        sched: &mut impl FnMut(Time, FlashEvent),
    ) {
        match ev {
            FlashEvent::ArrayDone { die, gen } => {
                let d = &self.dies[die as usize];
                if d.gen != gen {
                    return;
                }
                let Some((tid, _)) = d.array() else { return };
                let t = self.txns[tid as usize];
                let ch = self.channel_of(die);
                if t.kind == OpKind::Read {
                    let d = &mut self.dies[die as usize];
                    d.array = NIL;
                    d.xfers.push_back::<false>(&mut self.links, tid);
                    self.bus_request(
                        now,
                        ch,
                        BusReq {
                            die,
                            tid,
                            what: BusUse::DataOut,
                            extra: Time::ZERO,
                        },
                        sched,
                    );
                    // Cache read: the array reads the next queued page while this one streams out.
                    let d = &mut self.dies[die as usize];
                    if self.cache_read
                        && self.model != ExecutionModel::Sequential
                        && d.xfers.is_single()
                        && d.suspended == NIL
                    {
                        let rr = self.rank[0];
                        if d.first_queued() == Some(rr) {
                            if let Some(n) = d.queues[rr].pop_front::<false>(&mut self.links) {
                                let tn = self.txns[n as usize];
                                let end = now + self.t_cmd + tn.t_array;
                                d.set_array(n, end);
                                d.busy += self.t_cmd + tn.t_array;
                                if self.model == ExecutionModel::Interleaved {
                                    self.orders[ch].push_back((n, false));
                                }
                                sched(end, FlashEvent::ArrayDone { die, gen: d.gen });
                            }
                        }
                    }
                } else {
                    self.dies[die as usize].array = NIL;
                    self.finish(now, die, tid, done, sched);
                }
            }
            FlashEvent::XferDone { die, gen } => {
                let d = &mut self.dies[die as usize];
                if d.gen != gen {
                    return;
                }
                let Some(tid) = d.xfers.pop_front::<false>(&mut self.links) else {
                    return;
                };
                self.finish(now, die, tid, done, sched);
            }
            FlashEvent::BusFree { ch } => self.bus_free(now, ch as usize, sched),
        }
    }

    fn finish(
        &mut self,
        now: Time,
        die: u32,
        tid: u32,
        done: &mut Vec<(u64, OpKind)>,
        sched: &mut impl FnMut(Time, FlashEvent),
    ) {
        let t = self.txns[tid as usize];
        self.loads[die as usize][kind_idx(t.kind)] -= 1;
        if t.kind == OpKind::Write {
            self.write_load_changed(die as usize);
        }
        match t.kind {
            OpKind::Read => self.stats.reads += 1,
            OpKind::Write => {
                self.stats.programs += 1;
                self.stats.slc_programs += t.slc as u64;
            }
            OpKind::Erase => self.stats.erases += 1,
        }
        let ch = self.channel_of(die);
        if self.model == ExecutionModel::Interleaved {
            if let Some(e) = self.orders[ch].iter_mut().find(|(i, _)| *i == tid) {
                e.1 = true;
            }
            while let Some(&(i, true)) = self.orders[ch].front() {
                self.orders[ch].pop_front();
                let ti = self.txns[i as usize];
                done.push((ti.owner, ti.kind));
                self.free.push(i);
            }
        } else {
            done.push((t.owner, t.kind));
            self.free.push(tid);
        }
        match self.model {
            ExecutionModel::Sequential => {
                self.channels[ch].running = false;
                // Next transaction on this channel, any die.
                let base = ch as u32 * self.dies_per_channel;
                self.kick(now, base, sched);
            }
            _ => {
                if self.dies[die as usize].is_idle() {
                    self.start_next(now, die, sched);
                }
            }
        }
    }

    /// Programs and erases in their array phase at `t`, each counted by the
    /// fraction of its array time done (1 once its end has passed; counted
    /// in `stats` once completed): (programs, erases, of the programs those
    /// into SLC-mode blocks). A kind that may be suspended counts 0 until it
    /// completes (a suspended operation's progress is not tracked), so the
    /// sum never decreases as `t` grows.
    pub fn array_progress(&self, t: Time) -> (f64, f64, f64) {
        let mut p = (0.0, 0.0, 0.0);
        for d in &self.dies {
            let Some((tid, end)) = d.array() else {
                continue;
            };
            if end == Time::MAX {
                continue;
            }
            let tx = &self.txns[tid as usize];
            let spread = match tx.kind {
                OpKind::Write => !self.program_suspend,
                OpKind::Erase => !self.erase_suspend,
                _ => false,
            };
            if !spread {
                continue;
            }
            let start = end.saturating_sub(tx.t_array);
            let f = if t >= end || tx.t_array == Time::ZERO {
                1.0
            } else if t <= start {
                0.0
            } else {
                (t - start).as_secs_f64() / tx.t_array.as_secs_f64()
            };
            match tx.kind {
                OpKind::Write => {
                    p.0 += f;
                    if tx.slc {
                        p.2 += f;
                    }
                }
                _ => p.1 += f,
            }
        }
        p
    }

    /// Busy time of each die (array + transfers).
    pub fn die_busy(&self) -> Vec<Time> {
        self.dies.iter().map(|d| d.busy).collect()
    }

    /// Busy time of each channel bus.
    pub fn channel_busy(&self) -> Vec<Time> {
        self.channels.iter().map(|c| c.busy_total).collect()
    }

    /// Transactions in flight or queued.
    pub fn outstanding(&self) -> usize {
        self.txns.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_die_and_a_channel_fill_one_cache_line_each() {
        assert_eq!(std::mem::size_of::<Die>(), 64);
        assert_eq!(std::mem::size_of::<Channel>(), 64);
    }

    #[test]
    fn threaded_lists_keep_fifo_order_per_list() {
        let mut next = vec![TxnLinks::NONE; 8];
        let (mut a, mut b) = (TxnList::EMPTY, TxnList::EMPTY);
        for i in [3, 1, 5] {
            a.push_back::<false>(&mut next, i);
        }
        b.push_back::<false>(&mut next, 0);
        assert_eq!(a.len(&next), 3);
        assert!(b.is_single() && !a.is_single());
        assert_eq!(a.pop_front::<false>(&mut next), Some(3));
        // A transaction moves from one list to another.
        b.push_back::<false>(&mut next, 3);
        assert_eq!(a.pop_front::<false>(&mut next), Some(1));
        assert_eq!(a.pop_front::<false>(&mut next), Some(5));
        assert_eq!(a.pop_front::<false>(&mut next), None);
        assert!(a.is_empty());
        a.push_back::<false>(&mut next, 7);
        assert!(a.is_single());
        assert_eq!(b.pop_front::<false>(&mut next), Some(0));
        assert_eq!(b.pop_front::<false>(&mut next), Some(3));
        assert!(b.is_empty());
    }
}
