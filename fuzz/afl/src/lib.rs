//! Shared pieces of the AFL++ targets (see `scripts/fuzz.sh`): every target
//! feeds one input to ssdlab and asserts it never panics (AFL++ reports a
//! panic as a crash), never hangs (AFL++'s per-run timeout), and that
//! errors are errors, not partial results.

use ssdlab_core::config::Device;

/// Split `data` at the first line `----` into (first, rest); all of it is
/// the first part when there is no separator.
pub fn split(data: &str) -> (&str, &str) {
    match data.find("\n----\n") {
        Some(i) => (&data[..i], &data[i + 6..]),
        None => (data, ""),
    }
}

/// Devices small enough to simulate many times a second: mapping tables
/// under 64 MiB.
pub fn small_enough(dev: &Device) -> bool {
    ssdlab_core::device::memory_estimate(dev) < 64 << 20
}
