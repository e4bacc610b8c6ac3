//! Fuzz the fio job-file parser.
//!
//! Run with `cargo +nightly fuzz run fio_jobs` from `fuzz/`. The parser must
//! never panic: every input is either a workload or a `WorkloadError`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = ssdlab_core::workload::fio::parse_str(text, "fuzz.fio");
    }
});
