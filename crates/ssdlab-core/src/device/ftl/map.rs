//! The FTL's two mapping tables (L2P: LPN -> slot, P2L: slot -> LPN), stored
//! so that a drive costs only the entries written, and the closed form of a
//! sequential fill.
//!
//! A table is one zero-allocated array: the OS maps its pages on first
//! write, and an untouched page reads as zeros without being allocated, so
//! an untouched table costs address space, not memory or time. An entry is
//! stored *encoded* (`value - SPARE`, wrapping, where `SPARE` is the one
//! value no table ever holds), so a stored zero means "never written": the
//! entry is then the table's default, computed from its index. The default
//! is "unmapped" on a fresh drive, and [`SeqFill`]'s formula after the
//! sequential-fill preconditioner. A write is one store (no check, no
//! materialisation); a read is one load and one test. A filled drive that is
//! only read never touches its 1.9 GB of tables (960 GB preset); random
//! writes touch them page by page.
//!
//! Results are identical to flat arrays holding the defaults: tests in
//! `ftl.rs` compare a closed-form fill with the per-LPN fill, entry by entry,
//! and what follows them.

use crate::device::cache::LpnHasher;
use crate::nand::Geometry;
use crate::units::FastDiv;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// Unmapped, in both tables.
pub(super) const UNMAPPED: u32 = u32::MAX;

/// The one value neither table holds: slot indices and LPNs stay below it
/// (`config::MAX_SLOTS`), and the markers (`IN_GC`, `IN_BUFFER`,
/// `UNMAPPED`) above.
const SPARE: u32 = u32::MAX - 3;

/// Sets entries of a [`Table`] from several threads, each entry from at
/// most one (the scaled steady state writes both tables through a
/// bijection, a unit per thread). Holds the table's `&mut` borrow, so
/// nothing else reads or writes it meanwhile.
pub(super) struct DisjointWriter<'a> {
    ptr: *mut u32,
    len: usize,
    _table: std::marker::PhantomData<&'a mut Table>,
}

// SAFETY: the writer only stores through `ptr`, at indices its callers
// promise no other thread writes (`DisjointWriter::set`), into a table
// borrowed mutably for its lifetime.
unsafe impl Send for DisjointWriter<'_> {}
unsafe impl Sync for DisjointWriter<'_> {}

impl DisjointWriter<'_> {
    /// Set entry `i`.
    ///
    /// # Safety
    /// No other thread writes entry `i` while this writer lives.
    #[inline(always)]
    pub(super) unsafe fn set(&self, i: usize, value: u32) {
        assert!(i < self.len, "table index {i} out of {}", self.len);
        debug_assert_ne!(value, SPARE);
        // SAFETY: in bounds (checked); no other thread touches entry `i`
        // (the caller's promise) and no one else holds the table.
        unsafe { self.ptr.add(i).write(value.wrapping_sub(SPARE)) }
    }

    /// Bring entry `i` into cache ahead of a [`DisjointWriter::set`] (a
    /// hint: no effect on the table).
    #[inline(always)]
    pub(super) fn prefetch(&self, i: usize) {
        if i < self.len {
            // SAFETY: in bounds of the table the writer borrows.
            prefetch_at(unsafe { self.ptr.add(i) });
        }
    }
}

/// A `u32` table of explicit entries over a default (see the module docs).
pub(super) struct Table {
    /// Entries encoded as `value - SPARE`; 0: never written.
    v: Vec<u32>,
}

impl Table {
    /// `n` entries, all at their default (no memory touched).
    pub(super) fn new(n: usize) -> Table {
        Table { v: zeroed_huge(n) }
    }

    /// Number of entries.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.v.len()
    }

    /// Entry `i` if it was written.
    #[inline(always)]
    pub(super) fn explicit(&self, i: usize) -> Option<u32> {
        let r = self.v[i];
        (r != 0).then(|| r.wrapping_add(SPARE))
    }

    /// Set entry `i`.
    #[inline(always)]
    pub(super) fn set(&mut self, i: usize, value: u32) {
        debug_assert_ne!(value, SPARE);
        self.v[i] = value.wrapping_sub(SPARE);
    }

    /// Bring entry `i` into cache (a hint).
    #[inline]
    pub(super) fn prefetch(&self, i: usize) {
        prefetch_read(&self.v, i);
    }

    /// Entries written so far (O(n): tests and reports).
    pub(super) fn written(&self) -> usize {
        self.v.iter().filter(|&&r| r != 0).count()
    }

    /// A writer of disjoint entries from several threads at once.
    pub(super) fn disjoint_writer(&mut self) -> DisjointWriter<'_> {
        DisjointWriter {
            ptr: self.v.as_mut_ptr(),
            len: self.v.len(),
            _table: std::marker::PhantomData,
        }
    }

    /// The table's memory (address, bytes), for [`populate`].
    pub(super) fn memory(&self) -> (usize, usize) {
        (
            self.v.as_ptr() as usize,
            self.v.len() * std::mem::size_of::<u32>(),
        )
    }
}

/// A [`Table`] written at random (L2P) that holds its first explicit
/// entries in a hash map: random writes to a large table would touch a
/// page of it each (4 KiB mapped in per 4-byte entry: 936 MiB for a
/// million random writes to a 960 GB drive); the map holds them in about
/// 10 B each. They move into the table, for good, once they are one entry
/// in `DENSE_AT` of it, or outnumber the table's pages they would have
/// touched `DENSE_PER_PAGE` times (written in order, the table costs less).
/// Same entries either way (tested); a dense one costs one more test per
/// access.
pub(super) struct SparseTable {
    dense: Table,
    /// The explicit entries (not encoded) while sparse; `None` once dense.
    sparse: Option<HashMap<u32, u32, BuildHasherDefault<LpnHasher>>>,
    /// Explicit entries the map holds before the table turns dense.
    limit: usize,
    /// The 4 KiB pages of `dense` the map's entries would have touched (a
    /// bit each), and how many.
    touched: Vec<u64>,
    pages: usize,
}

/// A sparse table turns dense at one explicit entry in this many: the map
/// then holds about `10 / DENSE_AT` B per entry of the table, and the
/// table, touched at random, would have been mapped in nearly whole.
const DENSE_AT: usize = 64;

/// Entries of a table per 4 KiB page.
const PAGE_ENTRIES: usize = 1024;

/// A sparse table also turns dense once its entries outnumber the pages
/// they would have touched by this factor: written in order (a sequential
/// fill, a hot set), the table costs 4 B an entry and the map more.
const DENSE_PER_PAGE: usize = 256;

impl SparseTable {
    /// `n` entries, all at their default, sparse.
    pub(super) fn new(n: usize) -> SparseTable {
        SparseTable {
            dense: Table::new(n),
            sparse: Some(HashMap::default()),
            limit: n / DENSE_AT,
            touched: vec![0; n.div_ceil(PAGE_ENTRIES).div_ceil(64)],
            pages: 0,
        }
    }

    /// Number of entries.
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.dense.len()
    }

    /// Entry `i` if it was written.
    #[inline(always)]
    pub(super) fn explicit(&self, i: usize) -> Option<u32> {
        if let Some(m) = &self.sparse {
            // Nothing written yet (a drive read after the sequential fill):
            // no lookup.
            if m.is_empty() {
                return None;
            }
            return self.explicit_sparse(i);
        }
        self.dense.explicit(i)
    }

    /// [`Self::explicit`] while sparse (out of line: the dense path inlined
    /// at every access stays small).
    #[inline(never)]
    fn explicit_sparse(&self, i: usize) -> Option<u32> {
        debug_assert!(i < self.len());
        self.sparse.as_ref()?.get(&(i as u32)).copied()
    }

    /// Set entry `i`.
    #[inline(always)]
    pub(super) fn set(&mut self, i: usize, value: u32) {
        if self.sparse.is_some() {
            return self.set_sparse(i, value);
        }
        self.dense.set(i, value);
    }

    /// [`Self::set`] while sparse (out of line, as `explicit_sparse`).
    #[inline(never)]
    fn set_sparse(&mut self, i: usize, value: u32) {
        debug_assert_ne!(value, SPARE);
        assert!(i < self.len(), "table index {i} out of {}", self.len());
        let Some(m) = self.sparse.as_mut() else {
            return self.dense.set(i, value);
        };
        m.insert(i as u32, value);
        let page = i / PAGE_ENTRIES;
        let (w, b) = (page / 64, 1u64 << (page % 64));
        if self.touched[w] & b == 0 {
            self.touched[w] |= b;
            self.pages += 1;
        }
        if m.len() > self.limit || m.len() > self.pages * DENSE_PER_PAGE {
            self.densify();
        }
    }

    /// A writer of disjoint entries from several threads (the table made
    /// dense first).
    pub(super) fn disjoint_writer(&mut self) -> DisjointWriter<'_> {
        self.densify();
        self.dense.disjoint_writer()
    }

    /// Move the map's entries into the table, for good.
    #[cold]
    pub(super) fn densify(&mut self) {
        if let Some(m) = self.sparse.take() {
            for (i, value) in m {
                self.dense.set(i as usize, value);
            }
        }
        self.touched = Vec::new();
    }

    /// Are the entries held in the array (no longer in the map)?
    #[inline]
    pub(super) fn is_dense(&self) -> bool {
        self.sparse.is_none()
    }

    /// Bring entry `i` into cache (a hint; none while sparse).
    #[inline]
    pub(super) fn prefetch(&self, i: usize) {
        if self.sparse.is_none() {
            self.dense.prefetch(i);
        }
    }

    /// Entries written so far (O(n): tests and reports).
    pub(super) fn written(&self) -> usize {
        self.sparse.as_ref().map_or(0, |m| m.len()) + self.dense.written()
    }

    /// The table's memory (address, bytes), for [`populate`].
    pub(super) fn memory(&self) -> (usize, usize) {
        self.dense.memory()
    }
}

/// Where the sequential-fill preconditioner puts every LPN, in closed form.
///
/// The fill writes LPNs in order in batches of one program unit (`spp`
/// slots); batch `k` goes to unit `stripe[k mod U]`, which programs its
/// blocks in free-list order (block 0, 1, ... of a fresh unit) and each
/// block's program units in order. So LPN `l` (batch `k = l / spp`, slot
/// `r = l mod spp`) is at unit `stripe[k mod U]`, program `j = k / U` of
/// that unit: block `j / ppb`, slot `(j mod ppb) * spp + r`. This holds when
/// no unit runs out of blocks before the fill ends and nothing else (GC)
/// takes part, which [`SeqFill::applies`] and the FTL check; the FTL also
/// checks each batch's slot against it as it allocates. When factory bad
/// blocks leave gaps in a unit's free list, "block `b`" is the unit's `b`-th
/// free block ([`SeqFill::with_free_lists`]).
#[derive(Debug, Clone, Default)]
pub(super) struct SeqFill {
    /// LPNs filled (0: none, every default is "unmapped").
    pub(super) n: u64,
    spp: FastDiv,
    ppb: FastDiv,
    spb: FastDiv,
    bpu: FastDiv,
    /// Units in the stripe.
    units: FastDiv,
    stripe: Vec<u32>,
    /// Per unit: its position in `stripe`.
    pos: Vec<u32>,
    /// The units' free lists when they are not `0, 1, 2, ...`.
    blocks: Option<Box<FillBlocks>>,
}

/// Which block of its unit the fill's `b`-th block is, and back.
#[derive(Debug, Clone)]
struct FillBlocks {
    /// Per unit, `bpu` entries: the `b`-th block the fill opens (index in
    /// the unit); past the free list, `u32::MAX`.
    order: Vec<u32>,
    /// Per unit, `bpu` entries: block index in the unit to its place in
    /// `order`, `u32::MAX` for a block the fill never opens.
    rank: Vec<u32>,
}

impl SeqFill {
    /// The fill of `n` LPNs over `geo` in `stripe` order.
    pub(super) fn new(geo: &Geometry, stripe: &[u32], n: u64) -> SeqFill {
        let mut pos = vec![0; stripe.len()];
        for (i, &u) in stripe.iter().enumerate() {
            pos[u as usize] = i as u32;
        }
        let spp = geo.slots_per_program;
        SeqFill {
            n,
            spp: FastDiv::new(spp),
            ppb: FastDiv::new(geo.slots_per_block / spp.max(1)),
            spb: FastDiv::new(geo.slots_per_block),
            bpu: FastDiv::new(geo.blocks_per_unit),
            units: FastDiv::new(stripe.len() as u32),
            stripe: stripe.to_vec(),
            pos,
            blocks: None,
        }
    }

    /// The fill opens each unit's blocks in the order of its free list
    /// (`free[u]`: block indices within unit `u`), as the allocator does on
    /// a fresh drive. Free lists of `0, 1, 2, ...` keep the plain formula.
    pub(super) fn with_free_lists<'a>(
        mut self,
        free: impl ExactSizeIterator<Item = impl Iterator<Item = &'a u32>> + Clone,
    ) -> SeqFill {
        let bpu = self.bpu.divisor() as usize;
        let plain = free
            .clone()
            .all(|list| list.enumerate().all(|(i, &b)| b as usize == i));
        if plain {
            return self;
        }
        let units = free.len();
        let mut order = vec![u32::MAX; units * bpu];
        let mut rank = vec![u32::MAX; units * bpu];
        for (u, list) in free.enumerate() {
            for (i, &b) in list.take(bpu).enumerate() {
                order[u * bpu + i] = b;
                rank[u * bpu + b as usize] = i as u32;
            }
        }
        self.blocks = Some(Box::new(FillBlocks { order, rank }));
        self
    }

    /// The `ordinal`-th block the fill opens on `unit` (index in the unit).
    #[inline]
    pub(super) fn block(&self, unit: u32, ordinal: u32) -> u32 {
        match &self.blocks {
            Some(f) => f.order[(unit as u64 * self.bpu.divisor() as u64 + ordinal as u64) as usize],
            None => ordinal,
        }
    }

    /// Does the fill follow free lists with gaps ([`SeqFill::with_free_lists`])?
    #[cfg(test)]
    pub(super) fn follows_free_lists(&self) -> bool {
        self.blocks.is_some()
    }

    /// Does the closed form hold on a fresh drive ([`SeqFill::per_lpn_because`]
    /// gives no reason)?
    #[cfg(test)]
    pub(super) fn applies(&self, floor: u32) -> bool {
        self.per_lpn_because(true, floor, "").is_none()
    }

    /// Why a fill must run LPN by LPN rather than in this closed form (None:
    /// it need not), for the report. The closed form holds on a fresh drive
    /// (`fresh`) with whole program units per block where every unit keeps
    /// more than `floor` free blocks (so neither GC nor the allocator's
    /// host floor interferes) until the fill ends; `floor_why` is the
    /// reason given when it would not (naming the settings that set it).
    pub(super) fn per_lpn_because(
        &self,
        fresh: bool,
        floor: u32,
        floor_why: &'static str,
    ) -> Option<&'static str> {
        if !fresh {
            return Some("the drive already holds data");
        }
        let u = self.stripe.len() as u64;
        let (spp, spb) = (self.spp.divisor() as u64, self.spb.divisor() as u64);
        if u == 0 || spp == 0 || !spb.is_multiple_of(spp) || self.ppb.divisor() == 0 {
            return Some("program units that do not divide a block");
        }
        let batches = self.n.div_ceil(spp);
        let programs_per_unit = batches.div_ceil(u);
        let blocks = programs_per_unit.div_ceil(self.ppb.divisor() as u64);
        if blocks < (self.bpu.divisor() as u64).saturating_sub(floor as u64) {
            return None;
        }
        Some(floor_why)
    }

    /// Slot of `lpn` (the L2P's default).
    #[inline]
    pub(super) fn slot_of(&self, lpn: u32) -> u32 {
        if lpn as u64 >= self.n {
            return UNMAPPED;
        }
        let (k, r) = self.spp.divmod(lpn);
        let (j, i) = self.units.divmod(k);
        let unit = self.stripe[i as usize] as u64;
        let (blk, p) = self.ppb.divmod(j);
        let block = unit * self.bpu.divisor() as u64 + self.block(unit as u32, blk) as u64;
        (block * self.spb.divisor() as u64 + (p * self.spp.divisor() + r) as u64) as u32
    }

    /// LPN at `slot` (the P2L's default).
    #[inline]
    pub(super) fn lpn_at(&self, slot: u32) -> u32 {
        if self.n == 0 {
            return UNMAPPED;
        }
        let (block, off) = self.spb.divmod(slot);
        let (unit, mut blk) = self.bpu.divmod(block);
        if let Some(f) = &self.blocks {
            blk = f.rank[block as usize];
            if blk == u32::MAX {
                return UNMAPPED;
            }
        }
        let (p, r) = self.spp.divmod(off);
        let j = blk as u64 * self.ppb.divisor() as u64 + p as u64;
        let k = j * self.stripe.len() as u64 + self.pos[unit as usize] as u64;
        let l = k * self.spp.divisor() as u64 + r as u64;
        if l < self.n {
            l as u32
        } else {
            UNMAPPED
        }
    }
}

/// `n` zeros whose pages the OS maps on first write (a large zeroed `Vec`
/// is fresh anonymous memory: nothing is written here), backed by
/// transparent huge pages where Linux allows (`madvise(MADV_HUGEPAGE)`):
/// the tables are accessed at random and 2 MiB pages remove most TLB misses.
fn zeroed_huge(n: usize) -> Vec<u32> {
    let v: Vec<u32> = vec![0; n];
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let bytes = n * std::mem::size_of::<u32>();
        if bytes >= 4 * HUGE {
            let start = v.as_ptr() as usize;
            let aligned = start.div_ceil(HUGE) * HUGE;
            let end = (start + bytes) / HUGE * HUGE;
            if end > aligned {
                // SAFETY: the range lies inside this vector's own allocation;
                // madvise only changes how it is backed, not its contents.
                unsafe {
                    libc::madvise(
                        aligned as *mut libc::c_void,
                        end - aligned,
                        libc::MADV_HUGEPAGE,
                    );
                }
            }
        }
    }
    v
}

/// Map in the pages of a table's memory (`(address, bytes)`, from
/// `memory()`) that are not yet, as a first write would (the OS zeroes
/// them), without changing what any entry holds: `MADV_POPULATE_WRITE`
/// (Linux 5.14 on; elsewhere, or if refused, nothing: the first writes map
/// them). Meant for another thread, while the table's owner works on
/// something else or writes the table: the pages' contents never change,
/// so the owner sees its own writes and zeros (never written) elsewhere.
pub(super) fn populate(memory: (usize, usize)) {
    #[cfg(target_os = "linux")]
    {
        const PAGE: usize = 4096;
        const CHUNK: usize = 64 << 20;
        let (start, bytes) = memory;
        let end = start + bytes;
        let mut a = start.div_ceil(PAGE) * PAGE;
        while a < end {
            let n = CHUNK.min(end - a);
            // SAFETY: the range lies inside one live allocation whose
            // owner outlives this call (the caller joins the thread before
            // the table can be dropped); MADV_POPULATE_WRITE maps pages in
            // and never changes their contents.
            let r = unsafe { libc::madvise(a as *mut libc::c_void, n, libc::MADV_POPULATE_WRITE) };
            if r != 0 {
                return;
            }
            a += n;
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = memory;
}

#[inline]
pub(super) fn prefetch_read<T>(v: &[T], i: usize) {
    if let Some(x) = v.get(i) {
        prefetch_at(x as *const T);
    }
}

/// Ask the CPU to bring the line at `p` into its caches (a hint: it never
/// faults and has no visible effect).
#[inline(always)]
fn prefetch_at<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it never faults and has no visible effect.
    unsafe {
        core::arch::x86_64::_mm_prefetch(p as *const i8, core::arch::x86_64::_MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{logical_units, Device};

    /// The two formulas are inverses over the filled LPNs, and the table's
    /// encoding round-trips every value a table holds.
    #[test]
    fn the_fill_formulas_invert_and_entries_round_trip() {
        let d = Device::preset("pm9a3-960g").unwrap();
        let geo = Geometry::new(&d.nand, d.ftl.mapping_unit);
        let n = logical_units(&d.nand, &d.ftl);
        let stripe: Vec<u32> = (0..geo.units).rev().collect();
        let f = SeqFill::new(&geo, &stripe, n);
        assert!(f.applies(d.ftl.gc_hard_threshold));
        for l in (0..n as u32).step_by(9_973).chain([n as u32 - 1]) {
            assert_eq!(f.lpn_at(f.slot_of(l)), l);
        }
        assert_eq!(f.slot_of(n as u32), UNMAPPED);
        let mut t = Table::new(8);
        for (i, v) in [0, 1, UNMAPPED, UNMAPPED - 1, SPARE - 1, 12345, 7, 3]
            .into_iter()
            .enumerate()
        {
            assert_eq!(t.explicit(i), None);
            t.set(i, v);
            assert_eq!(t.explicit(i), Some(v));
        }
        assert_eq!(t.written(), 8);
    }

    #[test]
    fn a_sparse_table_reads_as_a_dense_one_before_and_after_it_turns_dense() {
        // 6,400 entries: sparse up to 100 explicit ones. Random writes (some
        // rewrites, every value class) to both, compared entry by entry.
        let n = 6_400;
        let (mut sp, mut de) = (SparseTable::new(n), Table::new(n));
        let mut x: u64 = 7;
        for k in 0..400 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let i = (x >> 33) as usize % (n / 8);
            let v = [
                0,
                1,
                (x >> 7) as u32 % SPARE,
                UNMAPPED,
                SPARE - 1,
                SPARE + 1,
            ][k % 6];
            sp.set(i, v);
            de.set(i, v);
            if sp.sparse.is_some() {
                assert!(de.written() <= n / DENSE_AT);
            }
            for j in 0..n / 8 {
                assert_eq!(sp.explicit(j), de.explicit(j), "entry {j} after {k} writes");
            }
            assert_eq!(sp.written(), de.written());
        }
        assert!(
            sp.sparse.is_none(),
            "turned dense past {} entries",
            n / DENSE_AT
        );
    }

    #[test]
    fn a_sparse_table_written_in_order_turns_dense_within_a_page() {
        let n = 1 << 20;
        let mut t = SparseTable::new(n);
        for i in 0..DENSE_PER_PAGE {
            t.set(i, i as u32);
        }
        assert!(t.sparse.is_some());
        t.set(DENSE_PER_PAGE, 7);
        assert!(
            t.sparse.is_none(),
            "{} entries on one page",
            DENSE_PER_PAGE + 1
        );
        assert_eq!(t.written(), DENSE_PER_PAGE + 1);
        assert_eq!(
            (t.explicit(3), t.explicit(DENSE_PER_PAGE)),
            (Some(3), Some(7))
        );
        // At random, one entry a page: sparse up to n / DENSE_AT entries.
        let mut r = SparseTable::new(n);
        for k in 0..n / DENSE_AT {
            r.set((k * 7919 * PAGE_ENTRIES) % n + k % 3, k as u32);
        }
        assert!(r.sparse.is_some());
    }
}
