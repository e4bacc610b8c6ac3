//! Buffered I/O (fio `direct=0` / `buffered=1`): a job's reads and writes
//! go through the host page cache (`host::pagecache`) instead of
//! straight to the drive.
//!
//! - A read copies cached pages to the user buffer (`copy_bandwidth`, on
//!   the job's thread). Pages not cached are read from the drive by
//!   readahead (Linux's on-demand windows, up to `readahead`, requests of
//!   at most `max_request`); the read waits for them. Each page added or
//!   evicted costs `page_cycles` at `clock`.
//! - A write copies into the cache and is acknowledged then: its pages are
//!   dirty. Above `dirty_background_ratio` of the cache, writeback sends
//!   contiguous dirty runs to the drive (`writeback_depth` requests in
//!   flight per drive, on a flusher thread). Above the midpoint of the two
//!   thresholds writers pause after each write (Linux's proportional
//!   `balance_dirty_pages`, `Throttle`); above `dirty_ratio` they wait
//!   until writeback brings the dirty share back under it.
//! - `fsync` / `end_fsync` waits until the drive's dirty pages are written,
//!   then sends an NVMe Flush.
//! - A trim drops the pages and goes to the drive.
//!
//! Latency and bandwidth are the application's (a syscall's start to its
//! end), as fio reports them; the drive's own requests are counted in the
//! report's `page_cache` section. Model and sources: docs/models/page-cache.md.

use super::config::DirtyThrottle;
use super::pagecache::{PageCache, PageState, Readahead};
use super::{Drives, Host, HostCmd, Submission};
use crate::engine::EventQueue;
use crate::events::Event;
use crate::units::Time;
use crate::workload::gen::Io;
use crate::workload::Op;

/// No block request (an application command).
pub(crate) const NO_BLOCK: u32 = u32::MAX;

/// An application I/O of a buffered queue.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AppIo {
    /// What the statistics see.
    pub(crate) c: HostCmd,
    /// Block requests it still waits for.
    pub(crate) pending: u32,
    /// Of a read: its pages copied to the user buffer so far (in order).
    pub(crate) copied: u32,
    /// Written pages it still waits to see written back under `dirty_ratio`.
    pub(crate) throttled: bool,
}

/// A request the page cache sends to a drive.
#[derive(Debug, Clone, Default)]
pub(crate) struct Block {
    pub(crate) d: u16,
    pub(crate) op: Op,
    pub(crate) first: u64,
    pub(crate) n: u64,
    /// CPU the completion runs on (the thread that sent it).
    pub(crate) cpu: usize,
    /// Application I/Os waiting for it.
    pub(crate) waiters: Vec<u32>,
}

impl Block {
    fn new(d: u16, op: Op, first: u64, n: u64, cpu: usize) -> Block {
        Block {
            d,
            op,
            first,
            n,
            cpu,
            waiters: Vec::new(),
        }
    }
}

/// The page cache and the state of buffered I/O on the host.
pub(crate) struct Buffered {
    pub(crate) cache: PageCache,
    pub(crate) apps: Vec<AppIo>,
    free_apps: Vec<u32>,
    pub(crate) blocks: Vec<Block>,
    free_blocks: Vec<u32>,
    /// Per host queue, per target drive: readahead state.
    pub(crate) ra: Vec<Vec<Readahead>>,
    /// Per drive: writeback requests in flight.
    wb_inflight: Vec<u32>,
    /// Per drive: which host queue's submission queue writeback uses.
    wb_queue: Vec<Option<u32>>,
    /// Application writes waiting under `dirty_ratio`.
    throttled: Vec<u32>,
    /// Per drive: `fsync`s waiting for writeback.
    fsync_wait: Vec<Vec<u32>>,
    /// Per drive: since when it has had dirty pages (Linux's inode
    /// `dirtied_when`), if it has.
    dirtied_when: Vec<Option<Time>>,
    /// Per drive: write back all its dirty pages (expired, like an fsync
    /// without the Flush).
    expired: Vec<bool>,
    dirty_expire: Time,
    pub(crate) wb_interval: Time,
    /// A flusher wake-up is scheduled.
    pub(crate) tick_pending: bool,
    /// The flusher thread's CPU (index into the host's CPUs).
    pub(crate) flusher_cpu: usize,
    /// Pages per request, readahead window, in pages.
    max_request: u64,
    max_ra: u64,
    dirty_limit: u64,
    dirty_bg: u64,
    /// Proportional throttling, if on.
    throttle: Option<Throttle>,
    wb_depth: u32,
    /// CPU time per page added or evicted.
    page_time: Time,
    /// Time writers spent throttled (measured or not).
    pub(crate) throttle_time: Time,
    pub(crate) throttled_writes: u64,
    /// Writes paused by proportional throttling, and for how long in all.
    pub(crate) paused_writes: u64,
    pub(crate) pause_time: Time,
    /// Most pages dirty or under writeback at once.
    pub(crate) dirty_peak: u64,
    /// Read requests sent to the drives (readahead windows split at `max_request`).
    pub(crate) read_requests: u64,
    /// Writeback requests sent to the drives.
    pub(crate) write_requests: u64,
}

impl Buffered {
    pub(crate) fn new(
        cfg: &crate::config::HostConfig,
        unit_bytes: u64,
        drives: usize,
        queues: usize,
        flusher_cpu: usize,
    ) -> Buffered {
        let capacity =
            ((cfg.memory.0 as f64 * cfg.page_cache_share) / unit_bytes as f64).floor() as u64;
        let capacity = capacity.max(1);
        let per_4k = unit_bytes as f64 / 4096.0;
        let dirty_limit = ((capacity as f64 * cfg.dirty_ratio) as u64).max(1);
        let dirty_bg = ((capacity as f64 * cfg.dirty_background_ratio) as u64).max(1);
        Buffered {
            cache: PageCache::new(capacity, drives),
            apps: Vec::new(),
            free_apps: Vec::new(),
            blocks: Vec::new(),
            free_blocks: Vec::new(),
            ra: vec![Vec::new(); queues],
            wb_inflight: vec![0; drives],
            wb_queue: vec![None; drives],
            throttled: Vec::new(),
            fsync_wait: vec![Vec::new(); drives],
            dirtied_when: vec![None; drives],
            expired: vec![false; drives],
            dirty_expire: cfg.dirty_expire,
            wb_interval: cfg.dirty_writeback_interval,
            tick_pending: false,
            flusher_cpu,
            max_request: (cfg.max_request.0 / unit_bytes).max(1),
            max_ra: cfg.readahead.0 / unit_bytes,
            dirty_limit,
            dirty_bg,
            throttle: (cfg.dirty_throttle == DirtyThrottle::Proportional)
                .then(|| Throttle::new(dirty_bg, dirty_limit, unit_bytes, drives)),
            wb_depth: cfg.writeback_depth.max(1),
            page_time: Time::from_secs_f64(cfg.page_cycles as f64 * per_4k / cfg.clock_hz.max(1.0)),
            throttle_time: Time::ZERO,
            throttled_writes: 0,
            paused_writes: 0,
            pause_time: Time::ZERO,
            dirty_peak: 0,
            read_requests: 0,
            write_requests: 0,
        }
    }

    fn new_app(&mut self, a: AppIo) -> u32 {
        match self.free_apps.pop() {
            Some(i) => {
                self.apps[i as usize] = a;
                i
            }
            None => {
                self.apps.push(a);
                (self.apps.len() - 1) as u32
            }
        }
    }

    fn new_block(&mut self, b: Block) -> u32 {
        match self.free_blocks.pop() {
            Some(i) => {
                self.blocks[i as usize] = b;
                i
            }
            None => {
                self.blocks.push(b);
                (self.blocks.len() - 1) as u32
            }
        }
    }
}

impl Host {
    /// One application I/O of buffered queue `q`, issued at `at`.
    pub(crate) fn buffered_io<S>(
        &mut self,
        q: u32,
        at: Time,
        io: Io,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) where
        S: Drives,
    {
        let h = &mut self.queues[q as usize];
        let ti = h.next_target;
        let (d, _) = h.targets[ti];
        if h.targets.len() > 1 {
            h.next_target = (h.next_target + 1) % h.targets.len();
        }
        let cpu = h.cpu;
        if self.data {
            // The page cache holds what the application wrote; the data
            // store keeps it from the write on (there is no power loss).
            self.data_issue(q, d, io, None, submit);
        }
        let h = &mut self.queues[q as usize];
        if let Some(js) = self.job_stats.as_mut() {
            js[q as usize].submitted(h.outstanding);
        }
        h.outstanding += 1;
        let measured = at >= h.measure_from;
        self.outstanding += 1;
        // The system call's entry and exit: the driver costs stand for them.
        let (_, t) = self.cpus[cpu].reserve(at, self.submit_overhead);
        let c = HostCmd {
            q,
            d,
            op: io.op,
            nlpn: io.nlpn,
            submit: at,
            issued: t,
            measured,
            block: NO_BLOCK,
            lpn: io.lpn,
            tag: super::verify::DataTag::None,
            head: 0,
            tail: 0,
        };
        let Some(b) = self.buffered.as_mut() else {
            return;
        };
        let app = b.new_app(AppIo {
            c,
            pending: 0,
            copied: 0,
            throttled: false,
        });
        let (first, n) = (io.lpn as u64, io.nlpn as u64);
        match io.op {
            Op::Read => self.buffered_read(app, ti, cpu, t, first, n, eq, submit),
            Op::Write => self.buffered_write(app, cpu, t, first, n, eq, submit),
            Op::Trim => {
                b.cache.discard(d, first, n);
                let blk = self.send_block(d, q, cpu, Op::Trim, first, n, t, eq, submit);
                self.wait_on(app, blk);
            }
            Op::Flush => {
                let b = self.buffered.as_mut().expect("buffered");
                b.fsync_wait[d as usize].push(app);
                self.writeback(d, t, eq, submit);
            }
        }
    }

    fn wait_on(&mut self, app: u32, blk: u32) {
        let b = self.buffered.as_mut().expect("buffered");
        b.blocks[blk as usize].waiters.push(app);
        b.apps[app as usize].pending += 1;
    }

    #[allow(clippy::too_many_arguments)]
    fn buffered_read<S>(
        &mut self,
        app: u32,
        ti: usize,
        cpu: usize,
        t: Time,
        first: u64,
        n: u64,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) where
        S: Drives,
    {
        let b = self.buffered.as_mut().expect("buffered");
        let c = b.apps[app as usize].c;
        let (d, q) = (c.d, c.q);
        let lpns = self.lpns[d as usize];
        let max_ra = b.max_ra;
        if b.ra[q as usize].len() <= ti {
            b.ra[q as usize].resize(ti + 1, Readahead::default());
        }
        // The marker page of the current window: read the next one ahead.
        let mut windows: Vec<(u64, u64)> = Vec::new();
        let ra = &mut b.ra[q as usize][ti];
        if let Some(m) = ra.marker() {
            if (first..first + n).contains(&m) && b.cache.state(d, m).is_some() {
                windows.push(ra.advance(max_ra));
            }
        }
        let miss = (first..first + n).find(|&p| b.cache.state(d, p).is_none());
        if let Some(m) = miss {
            let req = first + n - m;
            windows.push(ra.on_miss(m, req, max_ra));
            // A window as large as the read puts its marker on the read's
            // own pages: the read meets it at once and starts the next
            // window asynchronously (as Linux's PG_readahead page does).
            if ra
                .marker()
                .is_some_and(|mk| (first..first + n).contains(&mk))
            {
                windows.push(ra.advance(max_ra));
            }
        }
        ra.prev_end = first + n;
        // The request's own pages are read whatever the windows cover (a
        // request larger than the window, or one the window moved past).
        if miss.is_some() {
            windows.push((first, n));
        }
        // Send the windows' missing pages, in runs of at most max_request.
        let mut t = t;
        for (s, len) in windows {
            let end = (s + len).min(lpns);
            let mut p = s;
            while p < end {
                if self
                    .buffered
                    .as_ref()
                    .is_some_and(|b| b.cache.state(d, p).is_some())
                {
                    p += 1;
                    continue;
                }
                let max = self.buffered.as_ref().map_or(1, |b| b.max_request);
                let mut k = 1;
                while p + k < end
                    && k < max
                    && self
                        .buffered
                        .as_ref()
                        .is_some_and(|b| b.cache.state(d, p + k).is_none())
                {
                    k += 1;
                }
                t = self.read_pages(d, q, cpu, p, k, t, eq, submit);
                p += k;
            }
        }
        // Wait for the request's pages still being read.
        let b = self.buffered.as_mut().expect("buffered");
        let mut waits: Vec<u32> = Vec::new();
        let mut hits = 0;
        for p in first..first + n {
            match b.cache.touch(d, p) {
                Some(PageState::Reading(blk)) if !waits.contains(&blk) => waits.push(blk),
                Some(PageState::Reading(_)) => {}
                Some(_) => hits += 1,
                None => {}
            }
        }
        b.cache.counters.hits += hits;
        b.cache.counters.misses += n - hits;
        for blk in waits {
            self.wait_on(app, blk);
        }
        self.copy_ready(app, t, eq);
    }

    /// Add pages `first..first + n` to the cache as being read and send the
    /// drive read; returns when the sending thread is free again.
    #[allow(clippy::too_many_arguments)]
    fn read_pages<S>(
        &mut self,
        d: u16,
        q: u32,
        cpu: usize,
        first: u64,
        n: u64,
        t: Time,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) -> Time
    where
        S: Drives,
    {
        let b = self.buffered.as_mut().expect("buffered");
        let blk = b.new_block(Block::new(d, Op::Read, first, n, cpu));
        b.read_requests += 1;
        let mut pages = 0;
        for p in first..first + n {
            pages += 1 + b.cache.start_read(d, p, blk);
        }
        let cost = b.page_time.times(pages);
        let (_, t) = self.cpus[cpu].reserve(t, cost);
        self.submit_block(blk, q, t, eq, submit)
    }

    /// Copy to the user buffer the pages of read `app` that are up to
    /// date, in order from the first not yet copied, up to the first still
    /// being read (Linux's `filemap_read` copies each batch of pages as
    /// soon as it is up to date while the rest of the request is still
    /// being read); the read ends when its last page is copied.
    fn copy_ready(&mut self, app: u32, at: Time, eq: &mut EventQueue<Event>) {
        let b = self.buffered.as_mut().expect("buffered");
        let ap = b.apps[app as usize];
        let (d, first, n) = (ap.c.d, ap.c.lpn as u64, ap.c.nlpn as u64);
        let mut k = ap.copied as u64;
        while k < n && !matches!(b.cache.state(d, first + k), Some(PageState::Reading(_))) {
            k += 1;
        }
        let new = k - ap.copied as u64;
        if new == 0 {
            return;
        }
        b.apps[app as usize].copied = k as u32;
        let cpu = self.queues[ap.c.q as usize].cpu;
        let copy = self.copy_bw.transfer_time(new * self.unit_bytes);
        let (_, end) = self.cpus[cpu].reserve(at, copy);
        if k == n {
            eq.at(end, Event::AppDone { app });
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn buffered_write<S>(
        &mut self,
        app: u32,
        cpu: usize,
        t: Time,
        first: u64,
        n: u64,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) where
        S: Drives,
    {
        let b = self.buffered.as_mut().expect("buffered");
        let c = b.apps[app as usize].c;
        let d = c.d;
        if b.wb_queue[d as usize].is_none() {
            b.wb_queue[d as usize] = Some(c.q);
        }
        let mut pages = 0;
        let mut dirtied = 0;
        for p in first..first + n {
            let (new, ev, dirty) = b.cache.write(d, p);
            pages += new as u64 + ev;
            dirtied += dirty as u64;
        }
        if b.dirtied_when[d as usize].is_none() {
            b.dirtied_when[d as usize] = Some(t);
        }
        let wake = (!b.tick_pending).then(|| t + b.wb_interval);
        if let Some(w) = wake {
            b.tick_pending = true;
            eq.at(w, Event::FlusherWake);
        }
        let cost = b.page_time.times(pages) + self.copy_bw.transfer_time(n * self.unit_bytes);
        let (_, end) = self.cpus[cpu].reserve(t, cost);
        let dirty = b.cache.dirty_pages() + b.cache.writeback_pages();
        b.dirty_peak = b.dirty_peak.max(dirty);
        let pause = match b.throttle.as_mut() {
            Some(th) => th.pause(d, end, dirtied, dirty),
            None => Time::ZERO,
        };
        if dirty > b.dirty_limit {
            // Over the hard limit: the writer waits for writeback.
            b.apps[app as usize].throttled = true;
            b.apps[app as usize].c.issued = end;
            b.throttled.push(app);
            b.throttled_writes += 1;
        } else {
            if pause > Time::ZERO {
                b.paused_writes += 1;
                b.pause_time += pause;
            }
            eq.at(end + pause, Event::AppDone { app });
        }
        self.writeback(d, end, eq, submit);
    }

    /// Send writeback on drive `d` while it is due (dirty above the
    /// background threshold, or an `fsync` waits) and requests may go.
    pub(crate) fn writeback<S>(
        &mut self,
        d: u16,
        at: Time,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) where
        S: Drives,
    {
        loop {
            let b = self.buffered.as_mut().expect("buffered");
            let di = d as usize;
            let due =
                b.cache.dirty_pages() > b.dirty_bg || !b.fsync_wait[di].is_empty() || b.expired[di];
            if !due || b.wb_inflight[di] >= b.wb_depth || !b.cache.has_dirty(d) {
                break;
            }
            let Some((first, n)) = b.cache.take_writeback(d, b.max_request) else {
                break;
            };
            b.wb_inflight[di] += 1;
            b.write_requests += 1;
            let q = b.wb_queue[di].unwrap_or(0);
            let cpu = b.flusher_cpu;
            // The flusher's own work per page (mark under writeback, build
            // the request), as for a page added to the cache.
            let cost = b.page_time.times(n);
            let (_, at) = self.cpus[cpu].reserve(at, cost);
            self.send_block(d, q, cpu, Op::Write, first, n, at, eq, submit);
        }
        self.fsync_check(d, at, eq, submit);
    }

    /// `fsync`s on a drive with nothing left dirty: send the NVMe Flush.
    fn fsync_check<S>(&mut self, d: u16, at: Time, eq: &mut EventQueue<Event>, submit: &mut S)
    where
        S: Drives,
    {
        let b = self.buffered.as_mut().expect("buffered");
        if b.cache.dirty_pages_of(d) == 0 {
            b.expired[d as usize] = false;
            if b.cache.is_clean(d) {
                b.dirtied_when[d as usize] = None;
            }
        }
        if b.fsync_wait[d as usize].is_empty() || !b.cache.is_clean(d) {
            return;
        }
        let waiters = std::mem::take(&mut b.fsync_wait[d as usize]);
        let q = b.apps[waiters[0] as usize].c.q;
        let cpu = self.queues[q as usize].cpu;
        let blk = self.send_block(d, q, cpu, Op::Flush, 0, 0, at, eq, submit);
        for a in waiters {
            self.wait_on(a, blk);
        }
    }

    /// Make and send a block request.
    #[allow(clippy::too_many_arguments)]
    fn send_block<S>(
        &mut self,
        d: u16,
        q: u32,
        cpu: usize,
        op: Op,
        first: u64,
        n: u64,
        at: Time,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) -> u32
    where
        S: Drives,
    {
        let b = self.buffered.as_mut().expect("buffered");
        let blk = b.new_block(Block::new(d, op, first, n, cpu));
        self.submit_block(blk, q, at, eq, submit);
        blk
    }

    /// Put block request `blk` on drive's submission queue of host queue
    /// `q` (the driver's submit cost on the block's CPU); returns when the
    /// CPU is free again.
    fn submit_block<S>(
        &mut self,
        blk: u32,
        q: u32,
        at: Time,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) -> Time
    where
        S: Drives,
    {
        let b = self.buffered.as_ref().expect("buffered");
        let k = &b.blocks[blk as usize];
        let (d, op, first, n, cpu) = (k.d, k.op, k.first, k.n, k.cpu);
        let h = &self.queues[q as usize];
        let sq = h
            .targets
            .iter()
            .find(|&&(td, _)| td == d)
            .map_or(0, |&(_, s)| s);
        submit.hint(d, first as u32);
        let (_, ready) = self.cpus[cpu].reserve(at, self.submit_overhead);
        let c = HostCmd {
            q,
            d,
            op,
            nlpn: n as u32,
            submit: at,
            issued: ready,
            measured: false,
            block: blk,
            lpn: first as u32,
            tag: super::verify::DataTag::None,
            head: 0,
            tail: 0,
        };
        let id = self.new_cmd(c);
        self.outstanding += 1;
        submit.submit(
            eq,
            Submission {
                cmd: id,
                d,
                q: sq,
                op,
                lpn: first as u32,
                nlpn: n as u32,
                head: 0,
                tail: 0,
                ready,
            },
        );
        ready
    }

    /// Block request `c.block` (host command `cmd`) has completed at `now`.
    pub(crate) fn block_done<S>(
        &mut self,
        now: Time,
        cmd: u32,
        c: HostCmd,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) where
        S: Drives,
    {
        self.outstanding -= 1;
        self.free_cmds.push(cmd);
        let b = self.buffered.as_mut().expect("buffered");
        let blk = c.block;
        let k = std::mem::take(&mut b.blocks[blk as usize]);
        b.free_blocks.push(blk);
        let (_, t) = self.cpus[k.cpu].reserve(now, self.complete_overhead);
        let b = self.buffered.as_mut().expect("buffered");
        match k.op {
            Op::Read => b.cache.read_done(k.d, k.first, k.n, blk),
            Op::Write => {
                b.cache.writeback_done(k.d, k.first, k.n);
                b.wb_inflight[k.d as usize] -= 1;
                if let Some(th) = b.throttle.as_mut() {
                    th.written(k.d, k.n);
                }
            }
            Op::Trim | Op::Flush => {}
        }
        for a in k.waiters {
            let b = self.buffered.as_mut().expect("buffered");
            let ap = &mut b.apps[a as usize];
            ap.pending -= 1;
            if ap.c.op == Op::Read {
                // The pages this request brought may let the read copy on.
                self.copy_ready(a, t, eq);
            } else if ap.pending == 0 {
                eq.at(t, Event::AppDone { app: a });
            }
        }
        if k.op == Op::Write {
            // Writers under dirty_ratio go on once writeback has made room.
            let b = self.buffered.as_mut().expect("buffered");
            if b.cache.dirty_pages() + b.cache.writeback_pages() <= b.dirty_limit {
                for a in std::mem::take(&mut b.throttled) {
                    let ap = &mut b.apps[a as usize];
                    ap.throttled = false;
                    b.throttle_time += t.saturating_sub(ap.c.issued);
                    eq.at(t, Event::AppDone { app: a });
                }
            }
            // Writeback goes on for every drive with dirty pages.
            for d in 0..self.lpns.len() as u16 {
                self.writeback(d, t, eq, submit);
            }
        }
    }

    /// The flusher wakes (every `dirty_writeback_interval` while anything
    /// is dirty): drives dirty for longer than `dirty_expire` write back all
    /// their dirty pages.
    pub(crate) fn flusher_wake<S>(&mut self, now: Time, eq: &mut EventQueue<Event>, submit: &mut S)
    where
        S: Drives,
    {
        let Some(b) = self.buffered.as_mut() else {
            return;
        };
        b.tick_pending = false;
        let mut any = false;
        for d in 0..b.dirtied_when.len() {
            if let Some(since) = b.dirtied_when[d] {
                any = true;
                if now.saturating_sub(since) >= b.dirty_expire {
                    b.expired[d] = true;
                }
            }
        }
        for d in 0..self.lpns.len() as u16 {
            self.writeback(d, now, eq, submit);
        }
        let b = self.buffered.as_mut().expect("buffered");
        // Nothing dirty: the flusher sleeps until the next write.
        if any && (self.outstanding > 0 || self.active > 0) {
            b.tick_pending = true;
            eq.at(now + b.wb_interval, Event::FlusherWake);
        }
    }

    /// Application I/O `app` ends at `now`.
    pub(crate) fn app_done<S>(
        &mut self,
        now: Time,
        app: u32,
        eq: &mut EventQueue<Event>,
        submit: &mut S,
    ) where
        S: Drives,
    {
        let b = self.buffered.as_mut().expect("buffered");
        let c = b.apps[app as usize].c;
        b.free_apps.push(app);
        self.finish(c, None, now, eq, submit);
    }

    /// Page-cache figures for the report, if buffered I/O ran.
    pub fn page_cache_report(&self) -> Option<PageCacheReport> {
        let b = self.buffered.as_ref()?;
        let c = &b.cache.counters;
        let u = self.unit_bytes;
        Some(PageCacheReport {
            capacity_bytes: b.cache.capacity * u,
            peak_bytes: c.peak_pages * u,
            hit_pages: c.hits,
            miss_pages: c.misses,
            read_from_drive_bytes: c.read_pages * u,
            written_back_bytes: c.written_pages * u,
            evicted_pages: c.evicted,
            dirty_at_end_bytes: (b.cache.dirty_pages() + b.cache.writeback_pages()) * u,
            throttled_writes: b.throttled_writes,
            throttle_time_s: b.throttle_time.as_secs_f64(),
            paused_writes: b.paused_writes,
            pause_time_s: b.pause_time.as_secs_f64(),
            dirty_peak_bytes: b.dirty_peak * u,
            cached_at_end_bytes: b.cache.len() * u,
            drive_read_requests: b.read_requests,
            drive_write_requests: b.write_requests,
        })
    }
}

/// What the page cache did over the run.
#[derive(Debug, Clone, serde::Serialize, PartialEq)]
pub struct PageCacheReport {
    /// Pages the cache may hold, in bytes (`host.memory` x `page_cache_share`).
    pub capacity_bytes: u64,
    /// Most it held.
    pub peak_bytes: u64,
    /// Pages reads found up to date in the cache.
    pub hit_pages: u64,
    /// Pages reads waited for (being read from a drive: by readahead or by
    /// the read itself).
    pub miss_pages: u64,
    /// Bytes read from the drives (readahead included).
    pub read_from_drive_bytes: u64,
    /// Bytes written back to the drives.
    pub written_back_bytes: u64,
    /// Clean pages evicted.
    pub evicted_pages: u64,
    /// Dirty or under writeback when the run ended (not on the drive).
    pub dirty_at_end_bytes: u64,
    /// Cached when the run ended.
    pub cached_at_end_bytes: u64,
    /// Writes that waited for dirty data to fall under `dirty_ratio` (the
    /// hard limit).
    pub throttled_writes: u64,
    /// Time they waited, in total.
    pub throttle_time_s: f64,
    /// Writes paused by proportional throttling (`host.dirty_throttle`).
    pub paused_writes: u64,
    /// Time they were paused, in total.
    pub pause_time_s: f64,
    /// Most data dirty or under writeback at once.
    pub dirty_peak_bytes: u64,
    /// Read requests sent to the drives (readahead windows, split at `host.max_request`).
    pub drive_read_requests: u64,
    /// Writeback requests sent to the drives.
    pub drive_write_requests: u64,
}

/// Linux's proportional dirty throttling (`balance_dirty_pages` in
/// `mm/page-writeback.c`, the IO-less throttling of Linux 3.2), with one
/// write-back context per drive:
///
/// - Under the *freerun* ceiling, halfway between the background threshold
///   and the hard limit, writers are not held back.
/// - Above it a writer pauses after each write for the pages it newly
///   dirtied divided by `dirty_ratelimit × pos_ratio`, at most 200 ms
///   (`MAX_PAUSE`). `pos_ratio = 1 + ((setpoint − dirty) / (limit −
///   setpoint))³`, clamped to [0, 2], with the setpoint halfway between
///   freerun and the limit: 2 at freerun, 1 at the setpoint, 0 at the limit.
/// - Every 200 ms (`BANDWIDTH_INTERVAL`) the drive's write bandwidth is
///   re-estimated from the pages written back, averaged over a 4.096 s
///   window (`wb_update_write_bandwidth`, HZ = 1000), and `dirty_ratelimit`
///   moves halfway towards the balanced rate `task_ratelimit × write_bw /
///   dirty_rate` (`wb_update_dirty_ratelimit`, whose step rules are
///   simplified to this halving), which converges to the write bandwidth
///   shared among the writers. Both start at 100 MiB/s (`INIT_BW`).
///
/// Simplified: one global position (Linux multiplies in a per-device
/// one), no minimum pause or pause batching, no `strictlimit`.
#[derive(Debug, Clone)]
pub(crate) struct Throttle {
    freerun: u64,
    setpoint: f64,
    limit: f64,
    wb: Vec<WbRate>,
}

/// One drive's write-back rate estimate.
#[derive(Debug, Clone)]
struct WbRate {
    stamp: Time,
    written: u64,
    written_stamp: u64,
    dirtied: u64,
    dirtied_stamp: u64,
    /// Estimated write-back bandwidth, pages per second.
    write_bw: f64,
    /// Rate each writer may dirty at the setpoint, pages per second.
    ratelimit: f64,
}

/// Linux's `BANDWIDTH_INTERVAL` (200 ms).
const BW_INTERVAL: Time = Time::ms(200);
/// Window of the write-bandwidth average: `roundup_pow_of_two(3 * HZ)`
/// jiffies at HZ = 1000.
const BW_PERIOD_S: f64 = 4.096;
/// Linux's `MAX_PAUSE` (HZ / 5).
const MAX_PAUSE: Time = Time::ms(200);
/// Linux's `INIT_BW`: 100 MiB/s.
const INIT_BW_BYTES: f64 = 100.0 * 1024.0 * 1024.0;

impl Throttle {
    fn new(bg: u64, limit: u64, unit_bytes: u64, drives: usize) -> Throttle {
        let freerun = (bg + limit) / 2;
        let init = INIT_BW_BYTES / unit_bytes.max(1) as f64;
        Throttle {
            freerun,
            setpoint: (freerun + limit) as f64 / 2.0,
            limit: limit as f64,
            wb: vec![
                WbRate {
                    stamp: Time::ZERO,
                    written: 0,
                    written_stamp: 0,
                    dirtied: 0,
                    dirtied_stamp: 0,
                    write_bw: init,
                    ratelimit: init,
                };
                drives
            ],
        }
    }

    /// Position ratio at `dirty` pages: 2 at freerun, 1 at the setpoint,
    /// 0 at the limit.
    fn pos_ratio(&self, dirty: u64) -> f64 {
        let x = (self.setpoint - dirty as f64) / (self.limit - self.setpoint + 1.0);
        (1.0 + x * x * x).clamp(0.0, 2.0)
    }

    /// `n` pages of drive `d` were written back.
    fn written(&mut self, d: u16, n: u64) {
        self.wb[d as usize].written += n;
    }

    /// A writer on drive `d` newly dirtied `dirtied` pages and is done
    /// copying at `now`, with `dirty` pages dirty or under writeback: how
    /// long it pauses.
    fn pause(&mut self, d: u16, now: Time, dirtied: u64, dirty: u64) -> Time {
        let throttled = dirty > self.freerun;
        let pos = self.pos_ratio(dirty);
        let w = &mut self.wb[d as usize];
        w.dirtied += dirtied;
        let elapsed = now.saturating_sub(w.stamp);
        if elapsed >= BW_INTERVAL {
            let el = elapsed.as_secs_f64();
            let written = (w.written - w.written_stamp) as f64;
            // Quiet periods (nothing written back) keep the estimate.
            if written > 0.0 {
                let bw = written / el;
                w.write_bw = if el >= BW_PERIOD_S {
                    bw
                } else {
                    (bw * el + w.write_bw * (BW_PERIOD_S - el)) / BW_PERIOD_S
                };
            }
            let dirty_rate = (w.dirtied - w.dirtied_stamp) as f64 / el;
            if throttled && dirty_rate > 0.0 {
                let balanced = w.ratelimit * pos * w.write_bw / dirty_rate;
                w.ratelimit = ((w.ratelimit + balanced) / 2.0).max(1.0);
            }
            w.stamp = now;
            w.written_stamp = w.written;
            w.dirtied_stamp = w.dirtied;
        }
        if !throttled || dirtied == 0 {
            return Time::ZERO;
        }
        let rate = w.ratelimit * pos;
        if rate <= 0.0 {
            return MAX_PAUSE;
        }
        Time::from_secs_f64(dirtied as f64 / rate).min(MAX_PAUSE)
    }
}
