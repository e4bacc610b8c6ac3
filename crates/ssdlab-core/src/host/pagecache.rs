//! The host page cache: which pages of each drive the host holds, in what
//! state, in LRU order, and the readahead window of a reader.
//!
//! Pages are the host's addressing unit (the drive's mapping unit, 4 KiB
//! on every shipped preset). A page is being read from the drive, clean,
//! dirty, or under writeback (and possibly dirtied again meanwhile).
//! Only clean pages are evicted, least recently used first. Dirty pages
//! are kept per drive in index order, so writeback sends contiguous runs
//! from a cursor that sweeps the drive, as Linux's writeback does over a
//! file (docs/models/page-cache.md).
//!
//! The timing (CPU costs, when requests go to the drive, who waits) is
//! the host's, in `host/buffered.rs`; this module holds state only.

use std::collections::{BTreeSet, HashMap, VecDeque};

/// A cached page's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PageState {
    /// Being read from the drive by block request `.0`.
    Reading(u32),
    /// Up to date, same as the drive.
    Clean,
    /// Newer than the drive.
    Dirty,
    /// Being written back; `redirty`: written again meanwhile.
    Writeback { redirty: bool },
}

#[derive(Debug, Clone, Copy)]
struct Page {
    state: PageState,
    /// LRU stamp of its latest use.
    stamp: u64,
}

/// Counters for the report.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CacheCounters {
    /// Pages a read found up to date in the cache.
    pub hits: u64,
    /// Pages a read waited for (being read from the drive).
    pub misses: u64,
    /// Pages read from the drive (readahead included).
    pub read_pages: u64,
    /// Pages written back to the drive.
    pub written_pages: u64,
    /// Clean pages evicted.
    pub evicted: u64,
    /// Largest number of pages held.
    pub peak_pages: u64,
}

/// The host's page cache over all drives.
pub(crate) struct PageCache {
    /// Pages the cache may hold.
    pub capacity: u64,
    pages: HashMap<u64, Page>,
    lru: VecDeque<(u64, u64)>,
    stamp: u64,
    /// Per drive: dirty pages (state `Dirty`) in index order.
    dirty: Vec<BTreeSet<u64>>,
    /// Per drive: pages under writeback dirtied again.
    redirty: Vec<u64>,
    /// Per drive: pages under writeback.
    writeback: Vec<u64>,
    /// Per drive: where writeback goes on from.
    cursor: Vec<u64>,
    /// Counters.
    pub counters: CacheCounters,
}

#[inline]
fn key(d: u16, page: u64) -> u64 {
    ((d as u64) << 48) | page
}

impl PageCache {
    /// An empty cache of `capacity` pages over `drives` drives.
    pub(crate) fn new(capacity: u64, drives: usize) -> PageCache {
        PageCache {
            capacity: capacity.max(1),
            pages: HashMap::new(),
            lru: VecDeque::new(),
            stamp: 0,
            dirty: vec![BTreeSet::new(); drives],
            redirty: vec![0; drives],
            writeback: vec![0; drives],
            cursor: vec![0; drives],
            counters: CacheCounters::default(),
        }
    }

    /// Pages held.
    pub(crate) fn len(&self) -> u64 {
        self.pages.len() as u64
    }

    /// Dirty pages (not yet under writeback, or dirtied again under it) of all drives.
    pub(crate) fn dirty_pages(&self) -> u64 {
        self.dirty.iter().map(|s| s.len() as u64).sum::<u64>() + self.redirty.iter().sum::<u64>()
    }

    /// Dirty pages of drive `d` (not under writeback, or dirtied again under it).
    pub(crate) fn dirty_pages_of(&self, d: u16) -> u64 {
        self.dirty[d as usize].len() as u64 + self.redirty[d as usize]
    }

    /// Pages under writeback on all drives.
    pub(crate) fn writeback_pages(&self) -> u64 {
        self.writeback.iter().sum()
    }

    /// Drive `d` has dirty pages not yet under writeback.
    pub(crate) fn has_dirty(&self, d: u16) -> bool {
        !self.dirty[d as usize].is_empty()
    }

    /// Drive `d` has nothing dirty and nothing under writeback.
    pub(crate) fn is_clean(&self, d: u16) -> bool {
        self.dirty[d as usize].is_empty()
            && self.redirty[d as usize] == 0
            && self.writeback[d as usize] == 0
    }

    /// State of a page, if cached; a use (LRU).
    pub(crate) fn touch(&mut self, d: u16, page: u64) -> Option<PageState> {
        let k = key(d, page);
        let p = self.pages.get_mut(&k)?;
        self.stamp += 1;
        p.stamp = self.stamp;
        self.lru.push_back((self.stamp, k));
        let s = p.state;
        self.compact_lru();
        Some(s)
    }

    /// State of a page, if cached (no use).
    pub(crate) fn state(&self, d: u16, page: u64) -> Option<PageState> {
        self.pages.get(&key(d, page)).map(|p| p.state)
    }

    /// Add a page in `state`; returns how many clean pages were evicted to
    /// make room. The cache may exceed its capacity while nothing is clean.
    fn insert(&mut self, d: u16, page: u64, state: PageState) -> u64 {
        let mut evicted = 0;
        while self.pages.len() as u64 >= self.capacity {
            if !self.evict_one() {
                break;
            }
            evicted += 1;
        }
        self.stamp += 1;
        let k = key(d, page);
        self.pages.insert(
            k,
            Page {
                state,
                stamp: self.stamp,
            },
        );
        self.lru.push_back((self.stamp, k));
        self.counters.peak_pages = self.counters.peak_pages.max(self.pages.len() as u64);
        evicted
    }

    /// Evict the least recently used clean page; false if none is found.
    fn evict_one(&mut self) -> bool {
        // Pages that are not clean go to the back (still in use); give up
        // after one pass over what the LRU holds.
        let mut budget = self.lru.len();
        while let Some((stamp, k)) = self.lru.pop_front() {
            if budget == 0 {
                self.lru.push_front((stamp, k));
                return false;
            }
            budget -= 1;
            let Some(p) = self.pages.get(&k) else {
                continue;
            };
            if p.stamp != stamp {
                continue; // a stale entry: the page was used again later
            }
            if p.state == PageState::Clean {
                self.pages.remove(&k);
                self.counters.evicted += 1;
                return true;
            }
            self.lru.push_back((stamp, k));
        }
        false
    }

    fn compact_lru(&mut self) {
        if self.lru.len() > 64 && self.lru.len() > 4 * self.pages.len() {
            let pages = &self.pages;
            self.lru
                .retain(|&(s, k)| pages.get(&k).is_some_and(|p| p.stamp == s));
        }
    }

    /// A drive read `block` starts for a page not cached; returns evictions.
    pub(crate) fn start_read(&mut self, d: u16, page: u64, block: u32) -> u64 {
        self.counters.read_pages += 1;
        self.insert(d, page, PageState::Reading(block))
    }

    /// Drive read `block` of pages `first..first + n` is done: they are clean
    /// (unless written meanwhile).
    pub(crate) fn read_done(&mut self, d: u16, first: u64, n: u64, block: u32) {
        for p in first..first + n {
            if let Some(pg) = self.pages.get_mut(&key(d, p)) {
                if pg.state == PageState::Reading(block) {
                    pg.state = PageState::Clean;
                }
            }
        }
    }

    /// A write to a page: it becomes dirty. Returns (newly cached, evicted,
    /// newly dirtied: it was not dirty already, as Linux counts pages a
    /// task dirties for `balance_dirty_pages`).
    pub(crate) fn write(&mut self, d: u16, page: u64) -> (bool, u64, bool) {
        let di = d as usize;
        match self.touch(d, page) {
            Some(PageState::Dirty) | Some(PageState::Writeback { redirty: true }) => {
                (false, 0, false)
            }
            Some(PageState::Writeback { redirty: false }) => {
                if let Some(p) = self.pages.get_mut(&key(d, page)) {
                    p.state = PageState::Writeback { redirty: true };
                }
                self.redirty[di] += 1;
                (false, 0, true)
            }
            Some(PageState::Clean) | Some(PageState::Reading(_)) => {
                if let Some(p) = self.pages.get_mut(&key(d, page)) {
                    p.state = PageState::Dirty;
                }
                self.dirty[di].insert(page);
                (false, 0, true)
            }
            None => {
                let ev = self.insert(d, page, PageState::Dirty);
                self.dirty[di].insert(page);
                (true, ev, true)
            }
        }
    }

    /// Drop pages `first..first + n` of drive `d` (a trim): their data is gone.
    pub(crate) fn discard(&mut self, d: u16, first: u64, n: u64) {
        let di = d as usize;
        for p in first..first + n {
            match self.state(d, p) {
                Some(PageState::Dirty) => {
                    self.dirty[di].remove(&p);
                    self.pages.remove(&key(d, p));
                }
                Some(PageState::Clean) => {
                    self.pages.remove(&key(d, p));
                }
                // Pages in flight stay until their request ends.
                _ => {}
            }
        }
    }

    /// The next run of dirty pages of drive `d` to write back, at most
    /// `max` pages, contiguous, from the writeback cursor on (wrapping):
    /// they go under writeback. `None` if nothing is dirty.
    pub(crate) fn take_writeback(&mut self, d: u16, max: u64) -> Option<(u64, u64)> {
        let di = d as usize;
        let set = &mut self.dirty[di];
        let first = set
            .range(self.cursor[di]..)
            .next()
            .or_else(|| set.iter().next())
            .copied()?;
        let mut n = 0;
        while n < max && set.remove(&(first + n)) {
            n += 1;
        }
        for p in first..first + n {
            if let Some(pg) = self.pages.get_mut(&key(d, p)) {
                pg.state = PageState::Writeback { redirty: false };
            }
        }
        self.writeback[di] += n;
        self.cursor[di] = first + n;
        self.counters.written_pages += n;
        Some((first, n))
    }

    /// Writeback of pages `first..first + n` of drive `d` is done: they are
    /// clean, or dirty again if written meanwhile.
    pub(crate) fn writeback_done(&mut self, d: u16, first: u64, n: u64) {
        let di = d as usize;
        self.writeback[di] -= n;
        for p in first..first + n {
            if let Some(pg) = self.pages.get_mut(&key(d, p)) {
                if pg.state == (PageState::Writeback { redirty: true }) {
                    pg.state = PageState::Dirty;
                    self.redirty[di] -= 1;
                    self.dirty[di].insert(p);
                } else {
                    pg.state = PageState::Clean;
                }
            }
        }
    }
}

/// A reader's readahead state on one drive (Linux `file_ra_state`), in pages.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Readahead {
    /// First page of the current window.
    pub start: u64,
    /// Window size.
    pub size: u64,
    /// Pages before the window's end at which the next window starts
    /// (the marker page is `start + size - async_size`).
    pub async_size: u64,
    /// Last page read, plus one (0: none yet).
    pub prev_end: u64,
}

/// Linux `get_init_ra_size`: the first window for a request of `req`
/// pages, at most `max`.
pub(crate) fn init_ra_size(req: u64, max: u64) -> u64 {
    let n = req.max(1).next_power_of_two();
    if n <= max / 32 {
        n * 4
    } else if n <= max / 4 {
        n * 2
    } else {
        max
    }
}

/// Linux `get_next_ra_size`: the window after one of `cur` pages.
pub(crate) fn next_ra_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

impl Readahead {
    /// The marker page, if the window has one.
    pub(crate) fn marker(&self) -> Option<u64> {
        (self.async_size > 0 && self.size > 0).then(|| self.start + self.size - self.async_size)
    }

    /// Move to the next window (asynchronous readahead, or a sequential
    /// reader that caught up with the window's end); returns it.
    pub(crate) fn advance(&mut self, max: u64) -> (u64, u64) {
        self.start += self.size;
        self.size = next_ra_size(self.size, max).max(1);
        self.async_size = self.size;
        (self.start, self.size)
    }

    /// A read of `req` pages at `index` missed the cache: the window to
    /// read (Linux `ondemand_readahead`, synchronous case). A read at the
    /// start of the drive, right after the previous one, or at the current
    /// window's end starts or grows a window; any other read is random and
    /// reads just its own pages.
    pub(crate) fn on_miss(&mut self, index: u64, req: u64, max: u64) -> (u64, u64) {
        if max == 0 {
            return (index, req);
        }
        if self.size > 0 && (index == self.start + self.size || Some(index) == self.marker()) {
            return self.advance(max);
        }
        if index == 0 || (self.prev_end > 0 && index == self.prev_end) {
            let size = init_ra_size(req, max).max(req);
            self.start = index;
            self.size = size;
            self.async_size = if size > req { size - req } else { size };
            return (index, size);
        }
        (index, req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readahead_windows_grow_as_linux_does() {
        // 128 KiB max = 32 pages; QD1 4 KiB sequential reads.
        let mut ra = Readahead::default();
        assert_eq!(ra.on_miss(0, 1, 32), (0, 4));
        assert_eq!(ra.marker(), Some(1));
        assert_eq!(ra.advance(32), (4, 8));
        assert_eq!(ra.advance(32), (12, 16));
        assert_eq!(ra.advance(32), (28, 32));
        assert_eq!(ra.advance(32), (60, 32));
        // A random read elsewhere reads only itself.
        let mut r = Readahead {
            prev_end: 100,
            ..Default::default()
        };
        assert_eq!(r.on_miss(5000, 2, 32), (5000, 2));
        // A request above the window is read whole.
        let mut big = Readahead::default();
        assert_eq!(big.on_miss(0, 256, 32), (0, 256));
    }

    #[test]
    fn only_clean_pages_are_evicted_least_recent_first() {
        let mut c = PageCache::new(3, 1);
        c.start_read(0, 1, 7);
        c.read_done(0, 1, 1, 7);
        assert_eq!(c.write(0, 2), (true, 0, true));
        c.start_read(0, 3, 8);
        c.read_done(0, 3, 1, 8);
        c.touch(0, 1); // 3 is now the least recent clean page
        assert_eq!(c.write(0, 4), (true, 1, true));
        assert_eq!(c.state(0, 3), None);
        assert_eq!(c.state(0, 1), Some(PageState::Clean));
        assert_eq!(c.state(0, 2), Some(PageState::Dirty));
        // Rewriting a dirty page dirties nothing new; a clean one, it does.
        assert_eq!(c.write(0, 4), (false, 0, false));
        assert_eq!(c.write(0, 1), (false, 0, true));
    }

    #[test]
    fn writeback_takes_contiguous_runs_and_redirties() {
        let mut c = PageCache::new(100, 1);
        for p in [5, 6, 7, 9] {
            c.write(0, p);
        }
        assert_eq!(c.take_writeback(0, 2), Some((5, 2)));
        assert_eq!(c.take_writeback(0, 8), Some((7, 1)));
        // Written again under writeback: newly dirty (once).
        assert_eq!(c.write(0, 6), (false, 0, true));
        assert_eq!(c.write(0, 6), (false, 0, false));
        assert_eq!(c.dirty_pages(), 2);
        c.writeback_done(0, 5, 2);
        assert_eq!(c.state(0, 5), Some(PageState::Clean));
        assert_eq!(c.state(0, 6), Some(PageState::Dirty));
        assert_eq!(c.take_writeback(0, 8), Some((9, 1)));
        assert_eq!(c.take_writeback(0, 8), Some((6, 1)));
        assert_eq!(c.take_writeback(0, 8), None);
        assert!(!c.is_clean(0));
        c.writeback_done(0, 7, 1);
        c.writeback_done(0, 9, 1);
        c.writeback_done(0, 6, 1);
        assert!(c.is_clean(0));
    }
}
