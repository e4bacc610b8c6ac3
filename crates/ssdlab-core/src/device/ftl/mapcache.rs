//! The cached mapping table (seed 001's M-log, in the manner of DFTL:
//! Gupta, Kim and Urgaonkar, ASPLOS 2009): the L2P lives on flash in
//! translation pages, a directory (the FTL's GTD) says where each one is,
//! and controller DRAM holds only `ftl.mapping_cache` bytes of them.
//!
//! This is the *residency* model, which decides the flash traffic and the
//! waits; the simulator's own L2P stays complete and exact (the truth the
//! translation pages would hold). A translation page is one mapping unit
//! holding `mapping_unit / 4 B` entries; the cache keeps whole translation
//! pages in LRU order (TPFTL-style page granularity rather than DFTL's
//! single entries: a miss loads the page, a dirty eviction writes that one
//! page back, so write-backs are batched per translation page by
//! construction). A lookup of an absent page loads it (one flash read of
//! one unit); an update of an absent page loads it and then marks it dirty;
//! a page never written to flash loads for free (all its entries are
//! unmapped). Counting is per mapping-unit lookup: each LPN a read
//! translates, each LPN a program or trim updates.

use std::collections::HashMap;

const RESIDENT: u8 = 1;
const DIRTY: u8 = 2;
const LOADING: u8 = 4;
/// Loading on behalf of an update: dirty once it arrives.
const DIRTY_ON_LOAD: u8 = 8;
/// Commands wait for it (it has an entry in `waiters`): a load with no
/// waiters (every update's) does not look the map up.
const WAITED: u8 = 16;
const NIL: u32 = u32::MAX;

/// Counters (mapping-unit lookups and translation pages).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MapStats {
    /// Lookups that found their translation page in DRAM.
    pub hits: u64,
    /// Lookups that had to wait for (or start) a load.
    pub misses: u64,
    /// Translation pages read from flash.
    pub loads: u64,
    /// Dirty translation pages evicted (each one is written back).
    pub evictions: u64,
}

/// What a lookup needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// In DRAM.
    Hit,
    /// Absent: start a load (read the page from flash, or nothing if it
    /// was never written) and call [`MapCache::loaded`] when it is in.
    Load,
    /// Already being loaded.
    Pending,
}

/// A cache slot's LRU links (slots, not pages: the list lives in an array
/// of the cache's size, a few KiB for a few MiB of cache, where a list
/// threaded through every translation page's entry touched lines of a
/// 1.8 MB array at random on the 960 GB preset).
#[derive(Debug, Clone, Copy)]
struct Links {
    prev: u32,
    next: u32,
}

/// The resident set of translation pages.
pub struct MapCache {
    capacity: u32,
    resident: u32,
    flags: Vec<u8>,
    /// Each page's slot while it is resident (`NIL` otherwise).
    slot_of: Vec<u32>,
    /// Each slot's page and LRU links (slots `0..resident` are in use: a
    /// page leaves only when a load evicts it and takes its slot).
    page: Vec<u32>,
    links: Vec<Links>,
    /// LRU list of slots: head is the most recently used.
    head: u32,
    tail: u32,
    /// Commands waiting for a page being loaded.
    waiters: HashMap<u32, Vec<u32>>,
    /// FIFO replacement (a hit does not move the page); else LRU.
    fifo: bool,
    /// Counters.
    pub stats: MapStats,
}

impl MapCache {
    /// A cache of `capacity` (≥ 1) translation pages over `pages` of them, empty.
    pub fn new(pages: u32, capacity: u32) -> MapCache {
        MapCache {
            capacity: capacity.max(1),
            resident: 0,
            flags: vec![0; pages as usize],
            slot_of: vec![NIL; pages as usize],
            page: Vec::new(),
            links: Vec::new(),
            head: NIL,
            tail: NIL,
            waiters: HashMap::new(),
            fifo: false,
            stats: MapStats::default(),
        }
    }

    /// The same, evicting in load order (FIFO) rather than LRU.
    pub fn with_fifo(mut self, fifo: bool) -> MapCache {
        self.fifo = fifo;
        self
    }

    /// Capacity in translation pages.
    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Translation pages in DRAM now.
    pub fn resident(&self) -> u32 {
        self.resident
    }

    /// The page the next load into a full cache would evict (the LRU tail),
    /// if the cache is full.
    #[inline]
    pub fn next_victim(&self) -> Option<u32> {
        (self.resident >= self.capacity && self.tail != NIL).then(|| self.page[self.tail as usize])
    }

    /// Is page `t` in DRAM?
    #[inline]
    pub fn is_resident(&self, t: u32) -> bool {
        self.flags[t as usize] & RESIDENT != 0
    }

    /// Is page `t` dirty in DRAM?
    pub fn is_dirty(&self, t: u32) -> bool {
        self.flags[t as usize] & DIRTY != 0
    }

    /// Look up (or, with `update`, change) an entry of page `t`.
    #[inline]
    pub fn access(&mut self, t: u32, update: bool) -> Access {
        let f = self.flags[t as usize];
        if f & RESIDENT != 0 {
            self.stats.hits += 1;
            if !self.fifo {
                self.touch(t);
            }
            if update {
                self.flags[t as usize] |= DIRTY;
            }
            return Access::Hit;
        }
        self.stats.misses += 1;
        if update {
            self.flags[t as usize] |= DIRTY_ON_LOAD;
        }
        if f & LOADING != 0 {
            return Access::Pending;
        }
        self.flags[t as usize] |= LOADING;
        Access::Load
    }

    /// Command `cmd` waits for page `t` (being loaded).
    pub fn wait(&mut self, t: u32, cmd: u32) {
        self.flags[t as usize] |= WAITED;
        self.waiters.entry(t).or_default().push(cmd);
    }

    /// Does command `cmd` already wait for page `t`?
    pub fn is_waiting(&self, t: u32, cmd: u32) -> bool {
        self.flags[t as usize] & WAITED != 0
            && self.waiters.get(&t).is_some_and(|w| w.contains(&cmd))
    }

    /// Page `t` is in (`from_flash`: it was read). Returns the commands that
    /// waited for it and, when the cache was full, the page it evicted if
    /// that page was dirty (to be written back).
    pub fn loaded(&mut self, t: u32, from_flash: bool) -> (Vec<u32>, Option<u32>) {
        let f = self.flags[t as usize];
        debug_assert!(f & LOADING != 0 && f & RESIDENT == 0);
        self.stats.loads += from_flash as u64;
        let mut evicted = None;
        let slot = if self.resident >= self.capacity {
            let s = self.tail;
            let v = self.page[s as usize];
            self.unlink(s);
            self.resident -= 1;
            if self.flags[v as usize] & DIRTY != 0 {
                self.stats.evictions += 1;
                evicted = Some(v);
            }
            self.flags[v as usize] = 0;
            self.slot_of[v as usize] = NIL;
            s
        } else {
            // Slots fill in order until the cache is full.
            let s = self.resident;
            if s as usize == self.page.len() {
                self.page.push(NIL);
                self.links.push(Links {
                    prev: NIL,
                    next: NIL,
                });
            }
            s
        };
        let dirty = if f & DIRTY_ON_LOAD != 0 { DIRTY } else { 0 };
        self.flags[t as usize] = RESIDENT | dirty;
        self.page[slot as usize] = t;
        self.slot_of[t as usize] = slot;
        self.push_front(slot);
        self.resident += 1;
        let waiters = if f & WAITED != 0 {
            self.waiters.remove(&t).unwrap_or_default()
        } else {
            Vec::new()
        };
        (waiters, evicted)
    }

    fn touch(&mut self, t: u32) {
        let s = self.slot_of[t as usize];
        if self.head != s {
            self.unlink(s);
            self.push_front(s);
        }
    }

    /// Take slot `s` out of the LRU list.
    fn unlink(&mut self, s: u32) {
        let Links { prev: p, next: n } = self.links[s as usize];
        if p == NIL {
            self.head = n;
        } else {
            self.links[p as usize].next = n;
        }
        if n == NIL {
            self.tail = p;
        } else {
            self.links[n as usize].prev = p;
        }
        self.links[s as usize] = Links {
            prev: NIL,
            next: NIL,
        };
    }

    /// Put slot `s` at the head of the LRU list.
    fn push_front(&mut self, s: u32) {
        self.links[s as usize] = Links {
            prev: NIL,
            next: self.head,
        };
        if self.head != NIL {
            self.links[self.head as usize].prev = s;
        }
        self.head = s;
        if self.tail == NIL {
            self.tail = s;
        }
    }

    /// A checkpoint writes the resident dirty pages: they are clean from
    /// now on (returned in page order).
    pub fn take_dirty(&mut self) -> Vec<u32> {
        let mut out = Vec::new();
        for (t, f) in self.flags.iter_mut().enumerate() {
            if *f & RESIDENT != 0 && *f & DIRTY != 0 {
                *f &= !DIRTY;
                out.push(t as u32);
            }
        }
        out
    }

    /// Translation pages in LRU order, most recent first (tests).
    pub fn lru_order(&self) -> Vec<u32> {
        let mut v = Vec::new();
        let mut s = self.head;
        while s != NIL {
            v.push(self.page[s as usize]);
            s = self.links[s as usize].next;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_keeps_the_capacity_and_evicts_the_least_recent_dirty_page() {
        let mut c = MapCache::new(10, 2);
        assert_eq!(c.access(1, true), Access::Load);
        assert_eq!(c.access(1, false), Access::Pending);
        c.wait(1, 7);
        assert_eq!(c.loaded(1, true), (vec![7], None));
        assert!(c.is_dirty(1));
        assert_eq!(c.access(2, false), Access::Load);
        c.loaded(2, false);
        assert_eq!(c.access(1, false), Access::Hit);
        assert_eq!(c.lru_order(), vec![1, 2]);
        // 2 is least recent and clean: evicted without a write-back.
        assert_eq!(c.access(3, false), Access::Load);
        assert_eq!(c.loaded(3, true), (vec![], None));
        assert!(!c.is_resident(2));
        // 1 is now least recent and dirty.
        assert_eq!(c.access(4, false), Access::Load);
        assert_eq!(c.loaded(4, true), (vec![], Some(1)));
        assert_eq!(c.resident(), 2);
        assert_eq!(c.lru_order(), vec![4, 3]);
        assert_eq!(
            c.stats,
            MapStats {
                hits: 1,
                misses: 5,
                loads: 3,
                evictions: 1
            }
        );
    }

    /// Random lookups and updates against a plain list model (most recent
    /// first): the same hits, next victims, evictions, dirty write-backs
    /// and order, also with a cache larger than the pages and with FIFO.
    #[test]
    fn the_cache_matches_a_list_model_under_random_use() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
        for (pages, capacity, fifo) in
            [(40, 7, false), (40, 7, true), (5, 9, false), (64, 1, false)]
        {
            let mut c = MapCache::new(pages, capacity).with_fifo(fifo);
            // (page, dirty), most recently used (LRU) or loaded (FIFO) first.
            let mut model: Vec<(u32, bool)> = Vec::new();
            for _ in 0..5_000 {
                let (t, update) = (rng.gen_range(0..pages), rng.gen_bool(0.5));
                match model.iter().position(|&(p, _)| p == t) {
                    Some(i) => {
                        assert_eq!(c.access(t, update), Access::Hit);
                        let (p, d) = model.remove(i);
                        model.insert(if fifo { i } else { 0 }, (p, d || update));
                    }
                    None => {
                        assert_eq!(c.access(t, update), Access::Load);
                        let full = model.len() as u32 >= capacity;
                        let victim = model.last().filter(|_| full).map(|&(p, _)| p);
                        assert_eq!(c.next_victim(), victim);
                        let expect = if full {
                            model.pop().and_then(|(p, d)| d.then_some(p))
                        } else {
                            None
                        };
                        assert_eq!(c.loaded(t, true), (vec![], expect));
                        model.insert(0, (t, update));
                    }
                }
                let order: Vec<u32> = model.iter().map(|&(p, _)| p).collect();
                assert_eq!(c.lru_order(), order);
                assert_eq!(c.resident() as usize, model.len());
            }
        }
    }

    #[test]
    fn fifo_evicts_in_load_order_whatever_was_hit() {
        for (fifo, evicted) in [(false, 2), (true, 1)] {
            let mut c = MapCache::new(10, 2).with_fifo(fifo);
            for t in [1, 2] {
                assert_eq!(c.access(t, true), Access::Load);
                c.loaded(t, true);
            }
            // 1 is hit: most recent under LRU, still first in under FIFO.
            assert_eq!(c.access(1, false), Access::Hit);
            assert_eq!(c.access(3, false), Access::Load);
            assert_eq!(c.loaded(3, true), (vec![], Some(evicted)), "fifo {fifo}");
        }
    }
}
