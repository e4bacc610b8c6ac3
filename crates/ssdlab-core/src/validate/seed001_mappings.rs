//! Seed 001's experiment through block and hybrid mapping. The seed
//! expresses page, block and hybrid mapping by the D-log's buffer unit
//! ("page, block, or with a W-log"); its stated findings are for page
//! mapping and reads. Here the same drive (16 GB, SLC, 2 buses x 2 chips at
//! 40 MB/s, 150 MB/s host) takes the seed's three workloads as random
//! 4 KiB writes (QD8, 20,000 writes after a sequential fill, `end_fsync`:
//! what the buffer still holds at the end is written back inside the
//! measurement), and the checks are the published findings on these
//! schemes:
//!
//! - Page mapping writes randomly at least 10x faster than any block or
//!   hybrid scheme: a random write that cannot go in place costs a merge
//!   (a block's copy) in block mapping (Kim et al. 2002) and, once the log
//!   blocks are taken, in BAST and FAST (Lee et al. 2007; Gupta et al.,
//!   DFTL, ASPLOS'09: full merges make hybrid FTLs slow under random writes).
//! - FAST writes random data at least as fast as BAST (Lee et al. 2007:
//!   its shared random logs avoid BAST's log-block thrashing).
//! - With a write buffer of whole logical blocks on block mapping (the
//!   seed's block-mapped D-log), the seed's buffer finding carried to
//!   writes: Uniform gains nothing from a bigger buffer, LRU and
//!   hot/cold+LRU gain at every step from 512 KiB to 4 MiB, with
//!   diminishing returns.

use super::{finding, Check};
use crate::device::Precondition;
use crate::workload::fio;
use crate::{simulate_quiet, RunSpec};

/// Scenario name in `ssdlab validate`.
pub const SEED001_MAPPINGS: &str = "seed001-mappings";

const PRESET: &str = "seed001-slc-conventional";

const SOURCE: &str = "seed 001 (mapping expressed by the D-log's buffer unit; buffer finding) with \
     BAST (Kim et al. 2002), FAST (Lee et al. 2007), DFTL (Gupta et al. 2009) on merges under random writes";

/// Seed 001's workloads as random writes (the read scenarios' locality).
fn job(pattern: &str) -> String {
    format!(
        "[{pattern}]\nrw=randwrite\nbs=4k\niodepth=8\nnumber_ios=20000\nend_fsync=1\n{}",
        super::seed001_locality(pattern)
    )
}

/// Write bandwidth (MB/s) of the seed 001 drive with `mapping` and a
/// write buffer of `buffer`, under `pattern`.
fn run(mapping: &str, buffer: &str, pattern: &str) -> Result<f64, String> {
    let mut ov = vec![("ftl.mapping", mapping), ("cache.write_buffer", buffer)];
    if mapping != "page" {
        ov.push(("cache.write_buffer_unit", "block"));
    }
    match mapping {
        "bast" => ov.push(("ftl.log_blocks", "2")),
        "fast" => ov.push(("ftl.log_blocks", "3")),
        _ => {}
    }
    let device = super::preset_with(PRESET, &ov)?;
    let w = fio::parse_str(&job(pattern), pattern).map_err(|e| e.to_string())?;
    let mut spec = RunSpec::new(device, w, SEED001_MAPPINGS);
    spec.precondition = Precondition::Fill;
    let r = simulate_quiet(&spec)
        .map_err(|e| format!("{SEED001_MAPPINGS} {mapping} {pattern}: {e}"))?;
    Ok(r.write.bw_bytes_per_s / 1e6)
}

/// The checks.
pub fn checks(out: &mut Vec<Check>) -> Result<(), String> {
    let b = |x: bool| if x { 1.0 } else { 0.0 };
    let sizes = ["512KiB", "1MiB", "2MiB", "4MiB"];
    for pattern in ["uniform", "lru", "hotcold_lru"] {
        let page = run("page", "1MiB", pattern)?;
        let bast = run("bast", "1MiB", pattern)?;
        let fast = run("fast", "1MiB", pattern)?;
        let mut block = Vec::new();
        for size in sizes {
            block.push(run("block", size, pattern)?);
        }
        let best = block[1].max(bast).max(fast);
        finding(
            out,
            SEED001_MAPPINGS,
            format!(
                "{pattern} writes, 1 MiB: page mapping at least 10x block/BAST/FAST (1=yes; {page:.2} vs {:.3} / {bast:.3} / {fast:.3} MB/s)",
                block[1]
            ),
            1.0,
            b(page >= 10.0 * best),
            0.0,
            SOURCE,
        );
        finding(
            out,
            SEED001_MAPPINGS,
            format!("{pattern} writes, 1 MiB: FAST at least as fast as BAST (1=yes; {fast:.3} vs {bast:.3} MB/s)"),
            1.0,
            b(fast >= bast),
            0.0,
            SOURCE,
        );
        let curve = block
            .iter()
            .map(|x| format!("{x:.3}"))
            .collect::<Vec<_>>()
            .join(" / ");
        if pattern == "uniform" {
            finding(
                out,
                SEED001_MAPPINGS,
                format!("uniform writes, block mapping, block buffer: 4 MiB / 512 KiB bandwidth ratio ({curve} MB/s)"),
                1.0,
                block[3] / block[0],
                3.0,
                SOURCE,
            );
            continue;
        }
        finding(
            out,
            SEED001_MAPPINGS,
            format!("{pattern} writes, block mapping, block buffer: gains at every step (1=yes; {curve} MB/s)"),
            1.0,
            b(block.windows(2).all(|w| w[1] > w[0])),
            0.0,
            SOURCE,
        );
        finding(
            out,
            SEED001_MAPPINGS,
            format!("{pattern} writes, block mapping, block buffer: 2->4 MiB gain below 512K->1M gain (1=yes)"),
            1.0,
            b(block[3] - block[2] < block[1] - block[0]),
            0.0,
            SOURCE,
        );
    }
    Ok(())
}
