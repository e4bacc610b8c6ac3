//! DFTL's qualitative result with a cached mapping table (Gupta, Kim and
//! Urgaonkar, "DFTL: a flash translation layer employing demand-based
//! selective caching of page-level address mappings", ASPLOS 2009): with a
//! small mapping cache a random workload sees a low hit ratio and extra
//! translation reads and writes, while a skewed workload sees a high hit
//! ratio and near page-mapping performance.
//!
//! On the PM9A3 preset with a 16 MiB mapping cache (4,096 of its 228,875
//! translation pages of 1,024 entries: 1.8 % of the table). The references
//! are what an LRU cache of C of N pages gives under independent
//! references: uniform lookups hit with probability C/N; with 95 % of the
//! reads to 1 % of the space (2,289 pages, which fit), about 95 % hit; and
//! under uniform random writes nearly every update dirties a page that is
//! evicted before its next update, so about 1 − C/N translation pages are
//! written per host write.

use super::{finding, Check};
use crate::device::Precondition;
use crate::report::Report;
use crate::workload::fio;
use crate::{simulate_quiet, RunSpec};

/// Scenario name in `ssdlab validate`.
pub const DFTL: &str = "dftl-mapping-cache";

const SOURCE: &str = "DFTL (Gupta et al., ASPLOS'09): small cache + random = low hit ratio and \
     translation traffic; skewed = high hit ratio, near page mapping. References: LRU of C of N pages";

fn run(cache: &str, job: &str) -> Result<Report, String> {
    let device = super::preset_with("pm9a3-960g", &[("ftl.mapping_cache", cache)])?;
    let w = fio::parse_str(job, DFTL).map_err(|e| e.to_string())?;
    let mut spec = RunSpec::new(device, w, DFTL);
    spec.precondition = Precondition::Fill;
    simulate_quiet(&spec).map_err(|e| format!("{DFTL}: {e}"))
}

/// The checks.
pub fn checks(out: &mut Vec<Check>) -> Result<(), String> {
    let read =
        |dist: &str| format!("[r]\nrw=randread\nbs=4k\niodepth=32\nnumber_ios=300000\n{dist}");
    let skew = "random_distribution=zoned:95/1:5/99\n";
    let mapping = |r: &Report| r.mapping.clone().unwrap_or_default();
    let uniform_all = run("all", &read(""))?;
    let uniform = run("16MiB", &read(""))?;
    let skewed_all = run("all", &read(skew))?;
    let skewed = run("16MiB", &read(skew))?;
    let m = mapping(&uniform);
    let c_over_n = m.cached_pages as f64 / m.translation_pages.max(1) as f64;
    finding(
        out,
        DFTL,
        format!(
            "uniform reads: hit ratio ({} of {} pages cached)",
            m.cached_pages, m.translation_pages
        ),
        c_over_n,
        m.hit_ratio,
        10.0,
        SOURCE,
    );
    let ratio = uniform.read.iops / uniform_all.read.iops.max(1.0);
    finding(
        out,
        DFTL,
        format!(
            "uniform reads lose to page mapping (1=yes; {:.0} vs {:.0} IOPS, {:.2} translation reads per read)",
            uniform.read.iops,
            uniform_all.read.iops,
            m.translation_reads as f64 / uniform.read.ios.max(1) as f64
        ),
        1.0,
        if ratio < 0.8 { 1.0 } else { 0.0 },
        0.0,
        SOURCE,
    );
    let ms = mapping(&skewed);
    finding(
        out,
        DFTL,
        "95% of reads to 1% of the space: hit ratio".into(),
        0.95,
        ms.hit_ratio,
        3.0,
        SOURCE,
    );
    finding(
        out,
        DFTL,
        format!(
            "skewed reads: IOPS / page mapping's ({:.0} vs {:.0})",
            skewed.read.iops, skewed_all.read.iops
        ),
        1.0,
        skewed.read.iops / skewed_all.read.iops.max(1.0),
        10.0,
        SOURCE,
    );
    let w = run(
        "16MiB",
        "[w]\nrw=randwrite\nbs=4k\niodepth=32\nnumber_ios=300000\nnorandommap\n",
    )?;
    let mw = mapping(&w);
    finding(
        out,
        DFTL,
        "uniform writes: translation pages written per host write".into(),
        1.0 - c_over_n,
        mw.waf_mapping,
        5.0,
        SOURCE,
    );
    Ok(())
}
