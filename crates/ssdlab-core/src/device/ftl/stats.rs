//! The FTL's counters (mapping-unit slots), cumulative since the drive
//! was built; reports take differences over the measured window.

/// FTL counters (mapping-unit slots).
#[derive(Debug, Clone, Default)]
pub struct FtlStats {
    /// Slots written by the host.
    pub host_slots: u64,
    /// Slots programmed on flash (host data, GC copies and padding).
    pub programmed_slots: u64,
    /// GC victims collected.
    pub gc_runs: u64,
    /// Valid slots relocated by GC.
    pub gc_slots_moved: u64,
    /// Blocks erased.
    pub blocks_erased: u64,
    /// Slots trimmed.
    pub trimmed_slots: u64,
    /// Slots programmed into SLC-mode blocks (host data, with padding).
    pub slc_slots: u64,
    /// SLC blocks folded (collected into native blocks).
    pub fold_runs: u64,
    /// Valid slots folded from SLC into native blocks.
    pub fold_slots_moved: u64,
    /// Host slots programmed into native blocks on a drive with an SLC cache.
    pub direct_slots: u64,
    /// Host writes that covered part of a mapping unit (read-modify-write),
    /// counted per partial unit.
    pub rmw_units: u64,
    /// Of those, units whose old data was read from flash to merge (the
    /// rest were merged in DRAM or had no old data).
    pub rmw_flash_reads: u64,
    /// Bytes the host wrote (sub-unit writes count their own size).
    pub host_bytes: u64,
    /// Native blocks opened for writing.
    pub blocks_opened: u64,
    /// Sum over those openings of the unit's free blocks left just after:
    /// the erased reserve GC keeps, sampled once per block written.
    pub free_at_open: u64,
    /// Slots programmed with translation pages (cached mapping; with
    /// padding), GC moves of translation pages included.
    pub map_slots: u64,
    /// Of `map_slots`: validity pages (the L-log) programmed, GC moves
    /// included.
    pub validity_slots: u64,
    /// Translation pages relocated by GC.
    pub map_pages_moved: u64,
    /// Of `map_slots`: directory pages (the M-log's own log) programmed,
    /// GC moves included.
    pub directory_slots: u64,
    /// Of `map_slots`: units checkpoints queued for programming (their
    /// translation pages and records).
    pub checkpoint_slots: u64,
    /// Victims chosen by static wear levelling (cold blocks collected).
    pub static_wl_runs: u64,
    /// GC and folding copies programmed (those a host write superseded
    /// while they waited in the buffer are not).
    pub relocated_programmed: u64,
    /// Block and hybrid mapping: switch merges (a log became the data block).
    pub merges_switch: u64,
    /// Partial merges (a log took the rest of its block's data).
    pub merges_partial: u64,
    /// Full merges (a logical block copied into a new block; block
    /// mapping's copies of a rewritten block included).
    pub merges_full: u64,
    /// Valid units merges copied.
    pub merge_slots_copied: u64,
    /// Units merges programmed other than host data (copies and padding).
    pub merge_slots_programmed: u64,
    /// Blocks merges erased.
    pub merge_erases: u64,
    /// Merges the drive timed (each from its first flash operation issued
    /// to its last done), and their summed time (ps).
    pub merges_timed: u64,
    /// See `merges_timed`.
    pub merge_ps: u64,
}

impl FtlStats {
    /// Write amplification: programmed / host-written slots (1.0 if none written).
    pub fn waf(&self) -> f64 {
        if self.host_slots == 0 {
            if self.programmed_slots == 0 {
                1.0
            } else {
                f64::INFINITY
            }
        } else {
            self.programmed_slots as f64 / self.host_slots as f64
        }
    }
}
