//! The page-mapped FTL's steady-state write amplification against
//! Desnoyers' analytic model (uniform random writes at 7, 12 and 28 % OP,
//! and 80 % of the writes to 20 % of the space), as `ssdlab validate`
//! checks it: each within ±5 % (see `validate::desnoyers` and
//! docs/validation.md).

use ssdlab_core::validate::{self, desnoyers};

#[test]
fn greedy_gc_matches_desnoyers_within_five_percent() {
    let checks = validate::run_all(Some(desnoyers::DESNOYERS), &mut |_| {}).unwrap();
    assert_eq!(checks.len(), 4, "{checks:?}");
    for c in &checks {
        assert!(
            c.pass && c.error_pct.abs() <= 5.0,
            "{}: simulated {:.3}, analytic {:.3} ({:+.1} %)",
            c.metric,
            c.simulated,
            c.reference,
            c.error_pct
        );
        // The figures are real write amplifications, not a degenerate run.
        assert!(c.simulated > 2.0 && c.simulated < 10.0, "{c:?}");
    }
}

#[test]
fn the_gc_reserve_is_reported_between_the_thresholds() {
    // Under saturating random writes the erased reserve settles between
    // the hard threshold's neighbourhood and the GC start threshold.
    use ssdlab_core::config::Device;
    use ssdlab_core::workload::fio;
    use ssdlab_core::{simulate_quiet, Precondition, RunSpec};
    let d = Device::load_with(
        "pm9a3-960g",
        &ssdlab_core::compose::parse_sets(
            &[
                "nand.channels=1",
                "nand.dies_per_chip=1",
                "nand.blocks_per_plane=256",
                "nand.pages_per_block=48",
            ]
            .map(String::from),
        )
        .unwrap(),
    )
    .unwrap();
    let w = fio::parse_str(
        "[w]\nrw=randwrite\nbs=4k\niodepth=32\nnorandommap\nio_size=400m\n",
        "w.fio",
    )
    .unwrap();
    let mut spec = RunSpec::new(d.clone(), w, "w.fio");
    spec.precondition = Precondition::Steady;
    let r = simulate_quiet(&spec).unwrap();
    assert!(r.gc.runs > 0);
    let free = r.gc.mean_free_blocks;
    assert!(
        free >= 1.0 && free <= d.ftl.gc_threshold as f64,
        "mean free blocks {free}"
    );
}
