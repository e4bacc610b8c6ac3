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

use crate::nand::Geometry;

/// Unmapped, in both tables.
pub(super) const UNMAPPED: u32 = u32::MAX;

/// The one value neither table holds: slot indices and LPNs stay below it
/// (`config::MAX_SLOTS`), and the markers (`IN_BUFFER`, `UNMAPPED`) above.
const SPARE: u32 = u32::MAX - 2;

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
}

/// Where the sequential-fill preconditioner puts every LPN, in closed form.
///
/// The fill writes LPNs in order in batches of one program unit (`spp`
/// slots); batch `k` goes to unit `stripe[k mod U]`, which programs its
/// blocks in free-list order (block 0, 1, ... of a fresh unit) and each
/// block's program units in order. So LPN `l` (batch `k = l / spp`, slot
/// `r = l mod spp`) is at unit `stripe[k mod U]`, program `j = k / U` of
/// that unit: block `j / ppb`, slot `(j mod ppb) * spp + r`. This holds when
/// no unit runs out of blocks before the fill ends and nothing else (GC, an
/// SLC cache) takes part, which [`SeqFill::applies`] and the FTL check; the
/// FTL also checks each batch's slot against it as it allocates.
#[derive(Debug, Clone, Default)]
pub(super) struct SeqFill {
    /// LPNs filled (0: none, every default is "unmapped").
    pub(super) n: u64,
    spp: Div,
    ppb: Div,
    spb: Div,
    bpu: Div,
    /// Units in the stripe.
    units: Div,
    stripe: Vec<u32>,
    /// Per unit: its position in `stripe`.
    pos: Vec<u32>,
}

/// Division of a `u32` by a fixed divisor as a multiply and a shift
/// (Lemire, Kaser and Kurz, "Faster remainder by direct computation", 2019:
/// with `m = floor(2^64 / d) + 1`, `floor(n / d)` is the high 64 bits of
/// `m * n` for every 32-bit `n`). The fill's formula divides five times per
/// lookup; a hardware division costs 20-40 cycles.
#[derive(Debug, Clone, Copy, Default)]
struct Div {
    d: u32,
    m: u64,
}

impl Div {
    fn new(d: u32) -> Div {
        Div {
            d,
            m: if d == 0 {
                0
            } else {
                (u64::MAX / d as u64).wrapping_add(1)
            },
        }
    }

    /// (n / d, n % d).
    #[inline(always)]
    fn divmod(self, n: u32) -> (u32, u32) {
        let q = if self.d == 1 {
            n
        } else {
            ((self.m as u128 * n as u128) >> 64) as u32
        };
        (q, n - q * self.d)
    }
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
            spp: Div::new(spp),
            ppb: Div::new(geo.slots_per_block / spp.max(1)),
            spb: Div::new(geo.slots_per_block),
            bpu: Div::new(geo.blocks_per_unit),
            units: Div::new(stripe.len() as u32),
            stripe: stripe.to_vec(),
            pos,
        }
    }

    /// Does the closed form hold: whole program units per block, and every
    /// unit keeps more than `floor` free blocks (so neither GC nor the
    /// allocator's host floor interferes) until the fill ends?
    pub(super) fn applies(&self, floor: u32) -> bool {
        let u = self.stripe.len() as u64;
        let (spp, spb) = (self.spp.d as u64, self.spb.d as u64);
        if u == 0 || spp == 0 || !spb.is_multiple_of(spp) || self.ppb.d == 0 {
            return false;
        }
        let batches = self.n.div_ceil(spp);
        let programs_per_unit = batches.div_ceil(u);
        let blocks = programs_per_unit.div_ceil(self.ppb.d as u64);
        blocks < (self.bpu.d as u64).saturating_sub(floor as u64)
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
        let block = unit * self.bpu.d as u64 + blk as u64;
        (block * self.spb.d as u64 + (p * self.spp.d + r) as u64) as u32
    }

    /// LPN at `slot` (the P2L's default).
    #[inline]
    pub(super) fn lpn_at(&self, slot: u32) -> u32 {
        if self.n == 0 {
            return UNMAPPED;
        }
        let (block, off) = self.spb.divmod(slot);
        let (unit, blk) = self.bpu.divmod(block);
        let (p, r) = self.spp.divmod(off);
        let j = blk as u64 * self.ppb.d as u64 + p as u64;
        let k = j * self.stripe.len() as u64 + self.pos[unit as usize] as u64;
        let l = k * self.spp.d as u64 + r as u64;
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

#[inline]
fn prefetch_read<T>(v: &[T], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = v.get(i) {
        // SAFETY: a prefetch is a hint; it never faults and has no visible effect.
        unsafe {
            core::arch::x86_64::_mm_prefetch(
                x as *const T as *const i8,
                core::arch::x86_64::_MM_HINT_T0,
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
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
    fn division_by_multiplication_is_exact() {
        let mut x: u64 = 1;
        for d in [
            1u32,
            2,
            3,
            7,
            24,
            96,
            384,
            1536,
            5102,
            65_535,
            1 << 20,
            u32::MAX - 3,
        ] {
            let f = Div::new(d);
            for n in [0u32, 1, d - 1, d, d.wrapping_add(1), u32::MAX, u32::MAX - 1] {
                assert_eq!(f.divmod(n), (n / d, n % d), "{n} / {d}");
            }
            for _ in 0..10_000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let n = (x >> 32) as u32;
                assert_eq!(f.divmod(n), (n / d, n % d), "{n} / {d}");
            }
        }
    }
}
