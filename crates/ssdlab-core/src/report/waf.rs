//! Write amplification by writer (the report's `waf_split`).

use serde::Serialize;

/// Write amplification by writer in the measured window: mapping units
/// programmed for each, per host mapping unit written. The parts add up
/// to the report's `waf`.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct WafSplit {
    /// Host mapping units written (the denominator).
    pub host_units: u64,
    /// Host data programmed (to SLC or native cells; padding of partial
    /// program units included, rewrites absorbed by the buffer excluded).
    pub user: f64,
    /// Valid data moved by garbage collection (static wear levelling's
    /// cold-block collection included).
    pub gc: f64,
    /// SLC-cache data folded into native blocks.
    pub slc_fold: f64,
    /// Translation pages of a cached mapping table (evictions, padding and
    /// their GC), checkpoints' units apart.
    pub mapping: f64,
    /// Mapping checkpoints (`ftl.checkpoint_interval`): the translation
    /// pages and records they queued.
    pub checkpoint: f64,
    /// The L-log (`ftl.validity_log`): validity pages written back, their
    /// GC moves included.
    pub validity: f64,
    /// Block and hybrid mapping's merges (copies, and their padding).
    pub merge: f64,
}

impl WafSplit {
    /// From the window's counters: host units, units programmed in all,
    /// GC and folding copies programmed, the copies GC and folding made
    /// (which apportion those programmed between them), and translation
    /// units programmed.
    pub(super) fn of(
        host: u64,
        programmed: u64,
        relocated: u64,
        (gc_moved, fold_moved): (u64, u64),
        (mapping, checkpoint, validity): (u64, u64, u64),
        merge: u64,
    ) -> WafSplit {
        let per = |n: u64| {
            if host == 0 {
                0.0
            } else {
                n as f64 / host as f64
            }
        };
        let fold_share = if gc_moved + fold_moved == 0 {
            0.0
        } else {
            fold_moved as f64 / (gc_moved + fold_moved) as f64
        };
        WafSplit {
            host_units: host,
            user: per(programmed.saturating_sub(relocated + mapping + merge)),
            gc: per(relocated) * (1.0 - fold_share),
            slc_fold: per(relocated) * fold_share,
            mapping: per(mapping.saturating_sub(checkpoint + validity)),
            checkpoint: per(checkpoint.min(mapping)),
            validity: per(validity.min(mapping)),
            merge: per(merge),
        }
    }

    /// Over drives: the parts weighted by each drive's host units.
    pub(super) fn sum(parts: &[&WafSplit]) -> WafSplit {
        let host: u64 = parts.iter().map(|p| p.host_units).sum();
        let w = |f: &dyn Fn(&WafSplit) -> f64| {
            if host == 0 {
                0.0
            } else {
                parts
                    .iter()
                    .map(|p| f(p) * p.host_units as f64)
                    .sum::<f64>()
                    / host as f64
            }
        };
        WafSplit {
            host_units: host,
            user: w(&|p| p.user),
            gc: w(&|p| p.gc),
            slc_fold: w(&|p| p.slc_fold),
            mapping: w(&|p| p.mapping),
            checkpoint: w(&|p| p.checkpoint),
            validity: w(&|p| p.validity),
            merge: w(&|p| p.merge),
        }
    }
}
