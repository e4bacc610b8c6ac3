//! The cached mapping table and its directory on flash in the report
//! (`mapping`, `mapping.directory`).

use serde::Serialize;

/// Cached mapping table (`ftl.mapping_cache` other than `"all"`), over the
/// measured window.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct MappingCache {
    /// Controller DRAM for translation pages (bytes).
    pub cache_bytes: u64,
    /// Translation pages the cache holds at most.
    pub cached_pages: u64,
    /// Translation pages of the whole table.
    pub translation_pages: u64,
    /// L2P entries per translation page.
    pub entries_per_page: u64,
    /// Mapping lookups (one per unit read from flash, programmed or trimmed).
    pub lookups: u64,
    /// Lookups whose translation page was in DRAM.
    pub hits: u64,
    /// hits / lookups (1 if none).
    pub hit_ratio: f64,
    /// Translation pages read from flash.
    pub translation_reads: u64,
    /// Translation pages programmed (dirty write-backs and GC moves, with padding).
    pub translation_writes: u64,
    /// Translation pages relocated by GC.
    pub translation_gc_moves: u64,
    /// Part of the WAF that is translation pages (programmed / host-written units).
    pub waf_mapping: f64,
    /// The directory stored on flash (`ftl.directory_cache`), if it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub directory: Option<DirectoryCache>,
}

/// The mapping directory on flash (seed 001's M-logs of M-logs): its pages
/// per level, the cache of them and its traffic in the measured window.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct DirectoryCache {
    /// Controller DRAM for directory pages (bytes).
    pub cache_bytes: u64,
    /// Directory pages the cache holds at most.
    pub cached_pages: u64,
    /// Directory pages on flash per level, level 1 (locating translation
    /// pages) first; the root above them is in DRAM.
    pub levels: Vec<u64>,
    /// Lookups of a directory page (each translation or directory page read
    /// from flash or moved needs its parent's entry).
    pub lookups: u64,
    /// Lookups whose directory page was in DRAM.
    pub hits: u64,
    /// hits / lookups (1 if none).
    pub hit_ratio: f64,
    /// Directory pages read from flash.
    pub reads: u64,
    /// Directory pages programmed (write-backs and GC moves, part of
    /// `translation_writes`).
    pub writes: u64,
}

/// A cache's hit ratio: `hits / lookups`, 1 with no lookups (nothing missed).
pub fn hit_ratio(hits: u64, lookups: u64) -> f64 {
    if lookups == 0 {
        1.0
    } else {
        hits as f64 / lookups as f64
    }
}

impl MappingCache {
    /// The sum of two drives' figures (systems).
    pub fn add(acc: Option<MappingCache>, m: &MappingCache) -> Option<MappingCache> {
        let mut a = acc.unwrap_or_default();
        // The WAF part weighted by each drive's host writes is not known
        // here: keep the mean of the parts over the drives that have one.
        let n = if a.cache_bytes == 0 { 0.0 } else { 1.0 };
        a.waf_mapping = (a.waf_mapping * n + m.waf_mapping) / (n + 1.0);
        a.cache_bytes += m.cache_bytes;
        a.cached_pages += m.cached_pages;
        a.translation_pages += m.translation_pages;
        a.entries_per_page = m.entries_per_page;
        a.lookups += m.lookups;
        a.hits += m.hits;
        a.hit_ratio = hit_ratio(a.hits, a.lookups);
        a.translation_reads += m.translation_reads;
        a.translation_writes += m.translation_writes;
        a.translation_gc_moves += m.translation_gc_moves;
        if let Some(d) = &m.directory {
            let x = a.directory.get_or_insert_with(DirectoryCache::default);
            x.cache_bytes += d.cache_bytes;
            x.cached_pages += d.cached_pages;
            if x.levels.len() < d.levels.len() {
                x.levels.resize(d.levels.len(), 0);
            }
            for (l, n) in x.levels.iter_mut().zip(&d.levels) {
                *l += n;
            }
            x.lookups += d.lookups;
            x.hits += d.hits;
            x.hit_ratio = hit_ratio(x.hits, x.lookups);
            x.reads += d.reads;
            x.writes += d.writes;
        }
        Some(a)
    }
}
