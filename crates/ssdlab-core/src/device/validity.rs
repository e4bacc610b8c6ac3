//! The L-log in the drive (`ftl.validity_log`; the FTL's side is
//! `ftl/validity.rs`): a DRAM cache of validity pages, LRU over whole
//! pages ([`MapCache`]). The validity pages a program or an invalidation
//! changed are taken from the FTL after each event: an absent one is
//! loaded (one flash read of one unit, or nothing if it was never written)
//! and then dirty; a dirty page evicted joins the translation write queue
//! and is programmed into the metadata blocks. A GC victim's pages must be
//! in DRAM before its copies are read: the job waits for their loads.

use super::Drive;
use crate::device::ftl::mapcache::{Access, MapCache};
use crate::engine::EventQueue;
use crate::events::Event;
use crate::units::Time;
use serde::Serialize;

/// The `validity_log` section of the report (over the measured window).
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct ValidityLogReport {
    /// DRAM for validity pages (bytes).
    pub cache_bytes: u64,
    /// Validity pages of the drive (a bit per physical mapping unit each).
    pub pages: u64,
    /// Updates and GC lookups that found their page in DRAM, over all.
    pub hit_ratio: f64,
    /// Validity pages read from flash.
    pub loads: u64,
    /// Dirty validity pages evicted (each one is written back).
    pub writebacks: u64,
    /// GC victims that waited for a validity page.
    pub gc_waits: u64,
}

impl ValidityLogReport {
    /// The report's text line.
    pub fn text(&self) -> String {
        format!(
            "  Validity log: {} pages, {:.1} KiB cached, hit ratio {:.3}, {} loads, {} write-backs, {} GC victims waited for theirs\n",
            self.pages,
            self.cache_bytes as f64 / 1024.0,
            self.hit_ratio,
            self.loads,
            self.writebacks,
            self.gc_waits
        )
    }

    /// Over drives: counts summed, the hit ratio weighted by pages.
    pub fn combine(parts: &[&ValidityLogReport]) -> Option<ValidityLogReport> {
        let first = parts.first()?;
        let mut r = (*first).clone();
        let mut w = first.hit_ratio * first.pages as f64;
        for p in &parts[1..] {
            r.cache_bytes += p.cache_bytes;
            r.pages += p.pages;
            r.loads += p.loads;
            r.writebacks += p.writebacks;
            r.gc_waits += p.gc_waits;
            w += p.hit_ratio * p.pages as f64;
        }
        r.hit_ratio = if r.pages > 0 { w / r.pages as f64 } else { 0.0 };
        Some(r)
    }
}

/// What the window's report needs of the L-log (kept in the snapshot).
#[derive(Debug, Clone, Copy, Default)]
pub struct ValidityCounters {
    /// Page lookups that hit, and all of them.
    pub hits: u64,
    /// See `hits`.
    pub lookups: u64,
    /// Pages read from flash.
    pub loads: u64,
    /// Dirty pages evicted.
    pub writebacks: u64,
    /// GC victims that waited.
    pub gc_waits: u64,
}

impl Drive {
    /// The L-log's cache of `pages` validity pages in `bytes` of DRAM.
    pub(super) fn validity_cache(pages: u32, bytes: u64, unit: u64) -> Option<MapCache> {
        (pages > 0).then(|| MapCache::new(pages, (bytes / unit.max(1)).min(u32::MAX as u64) as u32))
    }

    /// Bring in (and dirty) the validity pages the FTL changed since the
    /// last call.
    #[inline(never)]
    pub(super) fn drain_validity(&mut self, now: Time, eq: &mut EventQueue<Event>) {
        let mut pages = std::mem::take(&mut self.vscratch);
        self.ftl.take_validity_updates(&mut pages);
        let base = self.ftl.validity_base();
        for &t in &pages {
            let Some(lc) = self.lcache.as_mut() else {
                break;
            };
            if lc.access(t - base, true) == Access::Load {
                self.load_translation(now, t, eq);
            }
        }
        pages.clear();
        self.vscratch = pages;
    }

    /// GC chose `victim` on `unit`: its validity pages must be in DRAM
    /// before its copies are read. Returns how many it waits for.
    #[inline(never)]
    pub(super) fn gc_validity_wait(
        &mut self,
        now: Time,
        unit: u32,
        victim: u32,
        eq: &mut EventQueue<Event>,
    ) -> u32 {
        let base = self.ftl.validity_base();
        let mut waits = 0;
        for t in self.ftl.validity_pages_of_block(victim) {
            let Some(lc) = self.lcache.as_mut() else {
                return 0;
            };
            if lc.access(t - base, false) == Access::Load {
                self.load_translation(now, t, eq);
            }
            let Some(lc) = self.lcache.as_mut() else {
                return 0;
            };
            if !lc.is_resident(t - base) {
                lc.wait(t - base, unit);
                waits += 1;
            }
        }
        if waits > 0 {
            self.vcount.gc_waits += 1;
        }
        waits
    }

    /// Validity page `t` is in: returns the GC units that waited for it; a
    /// dirty page it evicted joins the write queue.
    pub(super) fn validity_in(&mut self, t: u32, from_flash: bool) -> Vec<u32> {
        let base = self.ftl.validity_base();
        let Some(lc) = self.lcache.as_mut() else {
            return Vec::new();
        };
        let (waiters, evicted) = lc.loaded(t - base, from_flash);
        if let Some(v) = evicted {
            if self.ftl.translation_to_buffer(base + v) {
                self.map_queue.push_back(base + v);
            }
        }
        waiters
    }

    /// A validity page GC `unit` waited for arrived.
    pub(super) fn validity_for_gc(&mut self, now: Time, unit: u32, eq: &mut EventQueue<Event>) {
        if let Some(j) = self.gc[unit as usize].as_mut() {
            j.validity_wait = j.validity_wait.saturating_sub(1);
        }
        self.gc_issue(now, unit, eq);
    }

    /// The L-log's counters now.
    pub(super) fn validity_counters(&self) -> ValidityCounters {
        let Some(lc) = self.lcache.as_ref() else {
            return ValidityCounters::default();
        };
        let s = lc.stats;
        ValidityCounters {
            hits: s.hits,
            lookups: s.hits + s.misses,
            loads: s.loads,
            writebacks: s.evictions,
            gc_waits: self.vcount.gc_waits,
        }
    }

    /// The `validity_log` section of the report since `base`.
    pub fn validity_report(&self, base: &ValidityCounters) -> Option<ValidityLogReport> {
        let lc = self.lcache.as_ref()?;
        let now = self.validity_counters();
        let lookups = now.lookups - base.lookups;
        Some(ValidityLogReport {
            cache_bytes: lc.capacity() as u64 * self.unit_bytes,
            pages: self.ftl.validity_pages() as u64,
            hit_ratio: crate::report::hit_ratio(now.hits - base.hits, lookups),
            loads: now.loads - base.loads,
            writebacks: now.writebacks - base.writebacks,
            gc_waits: now.gc_waits - base.gc_waits,
        })
    }
}
