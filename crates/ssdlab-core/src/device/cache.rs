//! DRAM data cache: the write buffer (write-back, sub-page writes packed
//! into program units) and an optional read cache, with LRU or FIFO
//! replacement. Capacities are in mapping units.
//!
//! Host entries are slab-allocated and threaded on intrusive doubly-linked
//! lists (dirty host data, clean read-cache data); an LPN index finds them.
//! Write-buffer space counts host data that is dirty or being programmed.
//!
//! GC relocation data is staged per parallel unit in plain FIFOs without an
//! index entry (the FTL's L2P marks those LPNs as "in buffer", which is how a
//! read finds them). An entry is still the latest version when it is
//! programmed only if the L2P still says "in buffer" and no newer host write
//! is buffered; stale entries are dropped then. GC data is bounded by the GC
//! read throttle, not by the write-buffer size.
//!
//! Flush barriers: every host entry holding data not yet on flash (dirty or
//! being programmed) is counted in the flush epoch of its oldest such write.
//! An NVMe Flush opens a new epoch and is satisfied when no entry of an
//! earlier epoch is left. An overwrite keeps the entry's epoch (the flushed
//! version is replaced in the buffer, so the newer one must reach flash for
//! the flush to hold); a trim drops the entry.

pub(crate) mod config;

use crate::config::CachePolicy;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Multiplicative hash for u32 keys (hot path; keys are LPNs).
#[derive(Default, Clone, Copy)]
pub struct LpnHasher(u64);
impl Hasher for LpnHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    fn write_u32(&mut self, i: u32) {
        self.0 = (i as u64 ^ 0x9e37_79b9).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

const NIL: u32 = u32::MAX;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    DirtyHost,
    /// Being programmed by program id.
    Flushing(u32, bool),
    Clean,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    lpn: u32,
    state: State,
    /// Flush epoch of the version held (host data not yet on flash).
    epoch: u32,
    prev: u32,
    next: u32,
}

#[derive(Debug, Clone, Copy, Default)]
struct List {
    head: u32,
    tail: u32,
    len: u32,
}

impl List {
    fn new() -> List {
        List {
            head: NIL,
            tail: NIL,
            len: 0,
        }
    }
}

const L_HOST: usize = 0;
const L_CLEAN: usize = 1;

/// Counters.
#[derive(Debug, Clone, Default)]
pub struct CacheStats {
    /// Read lookups that hit DRAM.
    pub read_hits: u64,
    /// Read lookups that missed.
    pub read_misses: u64,
    /// Writes that overwrote data still in the buffer.
    pub write_hits: u64,
}

/// The DRAM buffer.
pub struct DataCache {
    entries: Vec<Entry>,
    free: Vec<u32>,
    index: HashMap<u32, u32, BuildHasherDefault<LpnHasher>>,
    lists: [List; 2],
    gc_stage: Vec<std::collections::VecDeque<u32>>,
    gc_total: u32,
    policy: CachePolicy,
    wb_capacity: u64,
    rc_capacity: u64,
    host_used: u64,
    reserved: u64,
    /// Current flush epoch.
    epoch: u32,
    /// Oldest epoch still tracked.
    epoch_base: u32,
    /// Host versions not yet on flash, per epoch `epoch_base..=epoch`.
    unflushed: std::collections::VecDeque<u64>,
    /// Of those, the ones still dirty (not yet in a program), per epoch.
    dirty_epoch: std::collections::VecDeque<u64>,
    /// Keep the flush-epoch counters (only when flushes must wait: a
    /// volatile buffer and a workload that can flush).
    track_flush: bool,
    /// Counters.
    pub stats: CacheStats,
}

impl DataCache {
    /// Capacities in mapping units.
    pub fn new(
        write_buffer_slots: u64,
        read_cache_slots: u64,
        policy: CachePolicy,
        units: u32,
    ) -> DataCache {
        DataCache {
            entries: Vec::new(),
            free: Vec::new(),
            index: HashMap::default(),
            lists: [List::new(); 2],
            gc_stage: vec![std::collections::VecDeque::new(); units as usize],
            gc_total: 0,
            policy,
            wb_capacity: write_buffer_slots,
            rc_capacity: read_cache_slots,
            host_used: 0,
            reserved: 0,
            epoch: 0,
            epoch_base: 0,
            unflushed: std::collections::VecDeque::from([0]),
            dirty_epoch: std::collections::VecDeque::from([0]),
            track_flush: true,
            stats: CacheStats::default(),
        }
    }

    /// The power fails: DRAM loses everything (host data dirty or being
    /// programmed, GC copies, clean read-cache data). Returns the host
    /// units that were not on flash yet and the GC copies staged.
    pub fn lose_contents(&mut self) -> (u64, u64) {
        let lost = (self.host_used, self.gc_total as u64);
        let fresh = DataCache::new(
            self.wb_capacity,
            self.rc_capacity,
            self.policy,
            self.gc_stage.len() as u32,
        );
        let stats = std::mem::take(&mut self.stats);
        let track = self.track_flush;
        *self = fresh;
        self.stats = stats;
        self.track_flush = track;
        lost
    }

    fn unlink(&mut self, i: u32, l: usize) {
        let e = self.entries[i as usize];
        if e.prev != NIL {
            self.entries[e.prev as usize].next = e.next;
        } else {
            self.lists[l].head = e.next;
        }
        if e.next != NIL {
            self.entries[e.next as usize].prev = e.prev;
        } else {
            self.lists[l].tail = e.prev;
        }
        self.lists[l].len -= 1;
    }

    fn push_tail(&mut self, i: u32, l: usize) {
        let t = self.lists[l].tail;
        self.entries[i as usize].prev = t;
        self.entries[i as usize].next = NIL;
        if t != NIL {
            self.entries[t as usize].next = i;
        } else {
            self.lists[l].head = i;
        }
        self.lists[l].tail = i;
        self.lists[l].len += 1;
    }

    fn list_of(s: State) -> Option<usize> {
        match s {
            State::DirtyHost => Some(L_HOST),
            State::Clean => Some(L_CLEAN),
            State::Flushing(..) => None,
        }
    }

    fn alloc(&mut self, lpn: u32, state: State) -> u32 {
        let e = Entry {
            lpn,
            state,
            epoch: self.epoch,
            prev: NIL,
            next: NIL,
        };
        let i = if let Some(i) = self.free.pop() {
            self.entries[i as usize] = e;
            i
        } else {
            self.entries.push(e);
            (self.entries.len() - 1) as u32
        };
        self.index.insert(lpn, i);
        i
    }

    fn release(&mut self, i: u32) {
        let lpn = self.entries[i as usize].lpn;
        self.index.remove(&lpn);
        self.free.push(i);
    }

    /// Is `lpn`'s data in DRAM? Counts a read hit/miss and refreshes LRU.
    pub fn read_lookup(&mut self, lpn: u32) -> bool {
        if self.index.is_empty() {
            self.stats.read_misses += 1;
            return false;
        }
        match self.index.get(&lpn).copied() {
            Some(i) => {
                self.stats.read_hits += 1;
                if self.policy == CachePolicy::Lru && self.entries[i as usize].state == State::Clean
                {
                    self.unlink(i, L_CLEAN);
                    self.push_tail(i, L_CLEAN);
                }
                true
            }
            None => {
                self.stats.read_misses += 1;
                false
            }
        }
    }

    /// Contains `lpn` (no side effects).
    pub fn contains(&self, lpn: u32) -> bool {
        self.index.contains_key(&lpn)
    }

    /// Write-buffer capacity in mapping units.
    pub fn write_buffer_units(&self) -> u64 {
        self.wb_capacity
    }

    /// Write-buffer slots free for new host data.
    pub fn space(&self) -> u64 {
        self.wb_capacity
            .saturating_sub(self.host_used + self.reserved)
    }

    /// Reserve `n` slots for an incoming write (false if not enough space).
    pub fn reserve(&mut self, n: u64) -> bool {
        if n <= self.space() {
            self.reserved += n;
            true
        } else {
            false
        }
    }

    /// Write-buffer occupancy for a stall report.
    pub fn occupancy(&self) -> String {
        format!(
            "write buffer {} slots: {} host data, {} reserved",
            self.wb_capacity, self.host_used, self.reserved
        )
    }

    /// Whether a write of `n` slots can ever fit.
    pub fn fits(&self, n: u64) -> bool {
        n <= self.wb_capacity
    }

    /// Insert host write data for `lpn` (one reserved slot is consumed).
    /// Returns true if an older version was still in the buffer.
    pub fn insert_host(&mut self, lpn: u32) -> bool {
        self.reserved = self.reserved.saturating_sub(1);
        match self.index.get(&lpn).copied() {
            Some(i) => {
                let s = self.entries[i as usize].state;
                match s {
                    // The entry already holds a version not yet on flash: it
                    // keeps that version's (older) epoch, so a flush issued
                    // between the two writes waits for the newer version
                    // (the older one is gone from the buffer).
                    State::DirtyHost => {}
                    State::Flushing(_, true) => {
                        // Dirty again; still counted as not on flash.
                        self.dirty_add_at(self.entries[i as usize].epoch);
                    }
                    State::Clean | State::Flushing(_, false) => {
                        self.entries[i as usize].epoch = self.epoch;
                        self.unflushed_add();
                        self.dirty_add();
                    }
                }
                match s {
                    State::DirtyHost => {
                        if self.policy == CachePolicy::Lru {
                            self.unlink(i, L_HOST);
                            self.push_tail(i, L_HOST);
                        }
                    }
                    State::Clean => {
                        self.unlink(i, L_CLEAN);
                        self.entries[i as usize].state = State::DirtyHost;
                        self.push_tail(i, L_HOST);
                        self.host_used += 1;
                    }
                    State::Flushing(_, host) => {
                        self.entries[i as usize].state = State::DirtyHost;
                        self.push_tail(i, L_HOST);
                        if !host {
                            self.host_used += 1;
                        }
                    }
                }
                self.stats.write_hits += 1;
                s != State::Clean
            }
            None => {
                let i = self.alloc(lpn, State::DirtyHost);
                self.push_tail(i, L_HOST);
                self.host_used += 1;
                self.unflushed_add();
                self.dirty_add();
                false
            }
        }
    }

    /// Turn the flush-epoch counters off (no flush will ever wait for the
    /// buffer): saves their cost on every buffered write. Call before any write.
    pub fn disable_flush_tracking(&mut self) {
        self.track_flush = false;
    }

    #[inline]
    fn unflushed_add(&mut self) {
        if !self.track_flush {
            return;
        }
        let k = (self.epoch - self.epoch_base) as usize;
        self.unflushed[k] += 1;
    }

    #[inline]
    fn unflushed_sub(&mut self, epoch: u32) {
        if !self.track_flush {
            return;
        }
        let k = (epoch - self.epoch_base) as usize;
        self.unflushed[k] -= 1;
    }

    #[inline]
    fn dirty_add(&mut self) {
        self.dirty_add_at(self.epoch);
    }

    #[inline]
    fn dirty_add_at(&mut self, epoch: u32) {
        if !self.track_flush {
            return;
        }
        let k = (epoch - self.epoch_base) as usize;
        self.dirty_epoch[k] += 1;
    }

    #[inline]
    fn dirty_sub(&mut self, epoch: u32) {
        if !self.track_flush {
            return;
        }
        let k = (epoch - self.epoch_base) as usize;
        self.dirty_epoch[k] -= 1;
    }

    /// Is host data written before `barrier` still dirty (not yet in a
    /// program)? While it is, a pending flush makes the buffer write out
    /// partial program units.
    pub fn dirty_before(&self, barrier: u32) -> bool {
        let n = barrier.saturating_sub(self.epoch_base) as usize;
        self.dirty_epoch.iter().take(n).any(|&d| d > 0)
    }

    /// An NVMe Flush arrives: `None` if no host data is waiting for flash,
    /// else the barrier to pass to [`DataCache::flushed`].
    pub fn flush_barrier(&mut self) -> Option<u32> {
        if self.flushed(self.epoch + 1) {
            return None;
        }
        self.epoch += 1;
        self.unflushed.push_back(0);
        self.dirty_epoch.push_back(0);
        Some(self.epoch)
    }

    /// Host versions not yet on flash, by the flush-epoch counters and by the
    /// write-buffer occupancy; the two must agree (an invariant for tests).
    pub fn unflushed_check(&self) -> (u64, u64) {
        (self.unflushed.iter().sum(), self.host_used)
    }

    /// Dirty host entries, by the per-epoch counters and by the dirty list;
    /// the two must agree (an invariant for tests).
    pub fn dirty_check(&self) -> (u64, u64) {
        (self.dirty_epoch.iter().sum(), self.lists[L_HOST].len as u64)
    }

    /// Has every host version written before `barrier` reached flash (or been
    /// overwritten or trimmed)?
    pub fn flushed(&mut self, barrier: u32) -> bool {
        while self.epoch_base < self.epoch && self.unflushed.front() == Some(&0) {
            self.unflushed.pop_front();
            self.dirty_epoch.pop_front();
            self.epoch_base += 1;
        }
        self.epoch_base >= barrier || (self.epoch_base + 1 == barrier && self.unflushed[0] == 0)
    }

    /// Stage GC relocation data for `lpn`, to be programmed back into `unit`.
    #[inline]
    pub fn insert_gc(&mut self, lpn: u32, unit: u32) {
        self.gc_stage[unit as usize].push_back(lpn);
        self.gc_total += 1;
    }

    /// Dirty host slots waiting to be programmed.
    #[inline]
    pub fn dirty_host(&self) -> u32 {
        self.lists[L_HOST].len
    }

    /// GC slots staged for `unit` (an upper bound: some may have gone stale).
    #[inline]
    pub fn dirty_gc(&self, unit: u32) -> u32 {
        self.gc_stage[unit as usize].len() as u32
    }

    /// The first `n` LPNs staged for `unit` (for prefetching their mapping entries).
    pub fn gc_staged(&self, unit: u32, n: usize) -> impl Iterator<Item = u32> + '_ {
        self.gc_stage[unit as usize].iter().take(n).copied()
    }

    /// GC slots staged for all units.
    #[inline]
    pub fn dirty_gc_total(&self) -> u32 {
        self.gc_total
    }

    /// What a power-loss flush programs, in the order the firmware takes
    /// it: the GC copies staged per unit (unit by unit; a copy whose unit
    /// has a newer dirty host version is left out, as a program would),
    /// then the dirty host data, oldest first. Units already in a program
    /// are not listed.
    pub fn buffered_in_flush_order(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.gc_total as usize + self.dirty_host() as usize);
        for q in &self.gc_stage {
            out.extend(q.iter().copied().filter(|&l| !self.has_dirty_host(l)));
        }
        let mut i = self.lists[L_HOST].head;
        while i != NIL {
            out.push(self.entries[i as usize].lpn);
            i = self.entries[i as usize].next;
        }
        out
    }

    /// Is a host version of `lpn` dirty in the buffer (not yet being programmed)?
    #[inline]
    pub(crate) fn has_dirty_host(&self, lpn: u32) -> bool {
        !self.index.is_empty()
            && self
                .index
                .get(&lpn)
                .is_some_and(|&i| self.entries[i as usize].state == State::DirtyHost)
    }

    /// Take up to `n` entries for a program on `unit`: that unit's staged GC
    /// data first (dropping copies that are no longer the latest version:
    /// `latest(lpn)` is the FTL's view, false once a host write or a trim
    /// of the LPN came after the copy), then, if `host`, the oldest host
    /// data. Appends LPNs to `out` and returns how many came from GC.
    pub fn take_for_program(
        &mut self,
        unit: u32,
        n: usize,
        host: bool,
        prog: u32,
        latest: impl Fn(u32) -> bool,
        out: &mut Vec<u32>,
    ) -> usize {
        while out.len() < n {
            let Some(l) = self.gc_stage[unit as usize].pop_front() else {
                break;
            };
            self.gc_total -= 1;
            // The same LPN can be staged twice (a stale copy, overwritten
            // and moved again, still queued before the newer one): both
            // read as the latest, so only the first is kept.
            if latest(l) && !holds(out, l) {
                out.push(l);
            }
        }
        let gc = out.len();
        if host {
            while out.len() < n {
                let i = self.lists[L_HOST].head;
                if i == NIL {
                    break;
                }
                self.take_host_entry(i, prog, out);
            }
        }
        gc
    }

    /// Take `lpn` for program `prog` if its host data is dirty (block and
    /// hybrid mapping gathering a logical block). Returns whether it was.
    pub fn take_host_if_dirty(&mut self, lpn: u32, prog: u32, out: &mut Vec<u32>) -> bool {
        match self.index.get(&lpn).copied() {
            Some(i) if self.entries[i as usize].state == State::DirtyHost => {
                self.take_host_entry(i, prog, out);
                true
            }
            _ => false,
        }
    }

    /// Write-buffer slots free for new host data once every program
    /// under way has finished.
    pub fn room_after_programs(&self) -> u64 {
        self.wb_capacity
            .saturating_sub(self.dirty_host() as u64 + self.reserved)
    }

    /// Move dirty host entry `i` into program `prog` (its LPN to `out`).
    fn take_host_entry(&mut self, i: u32, prog: u32, out: &mut Vec<u32>) {
        self.unlink(i, L_HOST);
        self.entries[i as usize].state = State::Flushing(prog, true);
        self.dirty_sub(self.entries[i as usize].epoch);
        out.push(self.entries[i as usize].lpn);
    }

    /// The oldest dirty host data among the first `window` entries for which
    /// `key` gives a key with `ready`: its LPN and key.
    pub fn host_head<K: Copy>(
        &self,
        window: usize,
        key: impl Fn(u32) -> K,
        ready: impl Fn(K) -> bool,
    ) -> Option<(u32, K)> {
        let mut i = self.lists[L_HOST].head;
        let mut seen = 0;
        while i != NIL && seen < window {
            let l = self.entries[i as usize].lpn;
            let k = key(l);
            if ready(k) {
                return Some((l, k));
            }
            i = self.entries[i as usize].next;
            seen += 1;
        }
        None
    }

    /// Take for program `prog` up to `n` dirty host entries among the first
    /// `window`, oldest first, whose LPN has `key(lpn) == k` (block and
    /// hybrid mapping: a group shares one logical block or unit).
    pub fn take_host_matching<K: PartialEq + Copy>(
        &mut self,
        n: usize,
        window: usize,
        prog: u32,
        k: K,
        key: impl Fn(u32) -> K,
        out: &mut Vec<u32>,
    ) {
        let mut i = self.lists[L_HOST].head;
        let mut seen = 0;
        while i != NIL && seen < window && out.len() < n {
            let next = self.entries[i as usize].next;
            let l = self.entries[i as usize].lpn;
            if key(l) == k {
                self.take_host_entry(i, prog, out);
            }
            i = next;
            seen += 1;
        }
    }

    /// Program `prog` holding `lpn` finished. Returns true if the entry was
    /// released (it may have been overwritten meanwhile and still be dirty).
    pub fn program_done(&mut self, lpn: u32, prog: u32) -> bool {
        let Some(&i) = self.index.get(&lpn) else {
            return false;
        };
        match self.entries[i as usize].state {
            State::Flushing(p, host) if p == prog => {
                if host {
                    self.host_used -= 1;
                    self.unflushed_sub(self.entries[i as usize].epoch);
                }
                if self.rc_capacity > 0 {
                    self.entries[i as usize].state = State::Clean;
                    self.push_tail(i, L_CLEAN);
                    self.evict_clean();
                } else {
                    self.release(i);
                }
                true
            }
            _ => false,
        }
    }

    fn evict_clean(&mut self) {
        while self.lists[L_CLEAN].len as u64 > self.rc_capacity {
            let i = self.lists[L_CLEAN].head;
            self.unlink(i, L_CLEAN);
            self.release(i);
        }
    }

    /// Fill the read cache with `lpn` after a flash read.
    pub fn insert_clean(&mut self, lpn: u32) {
        if self.rc_capacity == 0 || self.index.contains_key(&lpn) {
            return;
        }
        let i = self.alloc(lpn, State::Clean);
        self.push_tail(i, L_CLEAN);
        self.evict_clean();
    }

    /// Drop `lpn` (TRIM).
    pub fn drop_lpn(&mut self, lpn: u32) {
        let Some(&i) = self.index.get(&lpn) else {
            return;
        };
        let s = self.entries[i as usize].state;
        match s {
            State::Flushing(_, host) => {
                // The program still completes; its slot is invalidated by the FTL.
                // Turn the entry into a clean-less orphan: release it now.
                if host {
                    self.host_used -= 1;
                    self.unflushed_sub(self.entries[i as usize].epoch);
                }
                self.release(i);
            }
            _ => {
                if s == State::DirtyHost {
                    self.host_used -= 1;
                    self.unflushed_sub(self.entries[i as usize].epoch);
                    self.dirty_sub(self.entries[i as usize].epoch);
                }
                self.unlink(i, Self::list_of(s).unwrap_or(L_CLEAN));
                self.release(i);
            }
        }
    }

    /// Does the DRAM hold `lpn` (indexed entry or staged GC data)? O(staged GC data); for checks.
    pub fn holds(&self, lpn: u32) -> bool {
        self.index.contains_key(&lpn) || self.gc_stage.iter().any(|q| q.contains(&lpn))
    }

    /// Entries held (all states).
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// No entries.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

/// Does `out` hold `l`? A scan without early exit, which the compiler
/// turns into vector compares (a program unit's few dozen LPNs, where a
/// hit is rare): `contains` compared one LPN at a time, about 870
/// instructions per program at steady state (docs/performance.md).
#[inline]
fn holds(out: &[u32], l: u32) -> bool {
    out.iter().fold(false, |a, &x| a | (x == l))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flush_waits_for_data_overwritten_after_it() {
        let mut c = DataCache::new(64, 0, CachePolicy::Lru, 1);
        let mut out = Vec::new();
        // Dirty, then overwritten after a flush: the newer version must reach flash.
        assert!(c.reserve(1));
        c.insert_host(5);
        let b = c.flush_barrier().expect("data is buffered");
        assert!(c.reserve(1));
        c.insert_host(5);
        assert!(!c.flushed(b));
        c.take_for_program(0, 1, true, 7, |_| false, &mut out);
        assert!(!c.flushed(b));
        assert!(c.program_done(5, 7));
        assert!(c.flushed(b));
        // Being programmed, then overwritten after a flush: the program of the
        // older version does not satisfy it; the newer version's does.
        out.clear();
        assert!(c.reserve(1));
        c.insert_host(6);
        c.take_for_program(0, 1, true, 8, |_| false, &mut out);
        let b = c.flush_barrier().expect("data in flight");
        assert!(c.reserve(1));
        c.insert_host(6);
        assert!(!c.program_done(6, 8));
        assert!(!c.flushed(b));
        out.clear();
        c.take_for_program(0, 1, true, 9, |_| false, &mut out);
        assert!(c.program_done(6, 9));
        assert!(c.flushed(b));
        assert_eq!(c.unflushed_check(), (0, 0));
        assert_eq!(c.dirty_check(), (0, 0));
    }

    #[test]
    fn write_buffer_space_and_program_cycle() {
        let mut c = DataCache::new(4, 0, CachePolicy::Lru, 1);
        assert!(c.reserve(3));
        assert!(!c.reserve(2));
        for l in [10, 11, 10] {
            c.insert_host(l);
        }
        // 10 overwritten in place: 2 slots used, reservation consumed.
        assert_eq!(c.space(), 2);
        let mut out = Vec::new();
        c.take_for_program(0, 8, true, 1, |_| true, &mut out);
        assert_eq!(out, vec![11, 10]);
        // overwrite 11 while it is being programmed: it becomes dirty again
        assert!(c.reserve(1));
        c.insert_host(11);
        assert!(!c.program_done(11, 1));
        assert!(c.program_done(10, 1));
        assert_eq!((c.dirty_host(), c.dirty_gc_total()), (1, 0));
        assert!(c.read_lookup(11));
        assert!(!c.read_lookup(10));
    }

    #[test]
    fn read_cache_is_lru() {
        let mut c = DataCache::new(0, 2, CachePolicy::Lru, 1);
        c.insert_clean(1);
        c.insert_clean(2);
        assert!(c.read_lookup(1));
        c.insert_clean(3); // evicts 2 (least recently used)
        assert!(c.read_lookup(1));
        assert!(!c.read_lookup(2));
        assert!(c.read_lookup(3));
    }

    #[test]
    fn gc_data_is_programmed_first() {
        let mut c = DataCache::new(8, 0, CachePolicy::Fifo, 2);
        c.reserve(1);
        c.insert_host(5);
        c.insert_gc(9, 1);
        c.insert_gc(8, 0);
        c.insert_gc(5, 0); // stale: a newer host version of 5 is dirty
        c.insert_gc(4, 0); // stale: trimmed
        let mut out = Vec::new();
        assert_eq!(c.take_for_program(1, 1, true, 7, |_| true, &mut out), 1);
        assert_eq!(out, vec![9]);
        out.clear();
        c.take_for_program(1, 2, false, 7, |_| true, &mut out);
        assert!(
            out.is_empty(),
            "GC data of unit 0 never goes to unit 1; host data not asked for"
        );
        // The FTL's view: the copies of 4 and 5 are not the latest.
        assert_eq!(c.take_for_program(0, 3, true, 7, |l| l == 8, &mut out), 1);
        assert_eq!(out, vec![8, 5]);
        assert_eq!(c.dirty_gc_total(), 0);
    }

    /// An LPN staged twice (a stale copy still queued before a newer one;
    /// the FTL reads both as the latest) goes into a program once, wherever
    /// the two stand in the unit's queue.
    #[test]
    fn an_lpn_staged_twice_is_programmed_once() {
        let mut c = DataCache::new(8, 0, CachePolicy::Fifo, 1);
        for l in [
            3, 7, 1, 2, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 7, 18,
        ] {
            c.insert_gc(l, 0);
        }
        let mut out = Vec::new();
        assert_eq!(c.take_for_program(0, 24, false, 1, |_| true, &mut out), 18);
        let want: Vec<u32> = [3, 7, 1, 2, 4, 5, 6].into_iter().chain(8..=18).collect();
        assert_eq!(out, want);
        assert_eq!(c.dirty_gc_total(), 0);
    }
}
