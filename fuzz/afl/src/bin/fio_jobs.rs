//! A fio job file: every input is a workload or a `WorkloadError`.
fn main() {
    afl::fuzz!(|data: &[u8]| {
        if let Ok(text) = std::str::from_utf8(data) {
            let _ = ssdlab_core::workload::fio::parse_str(text, "fuzz.fio");
        }
    });
}
