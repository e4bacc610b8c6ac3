//! Fuzz every block-trace parser, the statistics pass and format detection.
//!
//! Run with `cargo +nightly fuzz run trace_parsers` from `fuzz/`. The
//! parsers must never panic, must stop after their first error, and must
//! always terminate.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ssdlab_core::workload::trace::{detect, stats, TraceFilter, TraceFormat, TraceReader};
use std::io::Cursor;

fuzz_target!(|data: &[u8]| {
    for format in TraceFormat::ALL {
        let mut reader =
            TraceReader::from_reader(Box::new(Cursor::new(data.to_vec())), "fuzz", format);
        while let Some(item) = reader.next() {
            if item.is_err() {
                assert!(reader.next().is_none(), "reader yielded after an error");
                break;
            }
        }
        let reader = TraceReader::from_reader(Box::new(Cursor::new(data.to_vec())), "fuzz", format);
        let _ = stats(reader, &TraceFilter::default());
    }
    let text = String::from_utf8_lossy(data);
    let lines: Vec<&str> = text.lines().collect();
    let _ = detect("fuzz", &lines);
});
