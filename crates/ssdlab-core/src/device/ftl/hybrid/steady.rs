//! The steady state under block and hybrid mapping (`--precondition
//! steady`): random single-unit overwrites of the filled drive, each its own
//! group (as random writes over a large drive reach the FTL in the run),
//! merged functionally as the run would merge them, until the write
//! amplification of a window settles.
//!
//! A window is long enough for the scheme's logs to turn over on every
//! unit: block mapping merges at every rewrite (16 writes a unit), BAST
//! once its logs are all taken (8 writes a unit per log block), FAST when
//! its random logs are full (their slots, a unit's `log_blocks - 1`
//! blocks). It stops when two windows in a row are within 1 % of the one
//! before, or when the flash has programmed `max_drive_writes` times the
//! drive's units (merges make each host write cost up to a block: this
//! bounds the work, not the host writes). Its groups are single units, so
//! its WAF is the no-coalescing bound: in the run the buffer gathers
//! writes to one logical block into a group.

use crate::config::MappingScheme;
use crate::device::ftl::Ftl;
use crate::units::Lpn;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

impl Ftl {
    /// Random overwrites of the filled drive until the window WAF settles
    /// (module docs). Returns (drive writes of host data, last window WAF).
    pub(in crate::device::ftl) fn hybrid_steady_after_fill(
        &mut self,
        seed: u64,
        max_drive_writes: f64,
    ) -> (f64, f64) {
        let n = self.lpns;
        let units = self.geo.units as u64;
        let logs = self.cfg.log_blocks.max(1) as u64;
        let per_unit = match self.cfg.mapping {
            MappingScheme::Block => 16,
            MappingScheme::Bast => 8 * logs,
            _ => (logs.saturating_sub(1).max(1)) * self.geo.slots_per_block as u64 + 1,
        };
        let window = (units * per_unit).clamp(1, n.max(1));
        let budget = (max_drive_writes * n as f64) as u64;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ 0x4859_4252_4944);
        let mut steps = Vec::new();
        let (mut written, mut windows, mut stable) = (0u64, 0u32, 0u32);
        let mut last_waf = 0.0;
        let programmed0 = self.stats.programmed_slots;
        'run: loop {
            let start = self.stats.clone();
            for _ in 0..window {
                let l = rng.gen_range(0..n) as u32;
                self.write_to_buffer(Lpn(l));
                let unit = self.hybrid_locate(l).0;
                if !self.hybrid_write(unit, &[l], &mut steps) {
                    // Worn out: the caller reports it.
                    break 'run;
                }
                steps.clear();
                written += 1;
            }
            windows += 1;
            let host = (self.stats.host_slots - start.host_slots) as f64;
            let prog = (self.stats.programmed_slots - start.programmed_slots) as f64;
            let waf = prog / host.max(1.0);
            if windows >= 2 && (waf - last_waf).abs() / waf.max(1e-9) < 0.01 {
                stable += 1;
            } else {
                stable = 0;
            }
            last_waf = waf;
            if stable >= 2 || self.stats.programmed_slots - programmed0 >= budget {
                break;
            }
        }
        (written as f64 / n.max(1) as f64, last_waf)
    }
}
