//! Every block-trace parser, the statistics pass and format detection:
//! never a panic, nothing after the first error, always an end.
use ssdlab_core::workload::trace::{detect, stats, TraceFilter, TraceFormat, TraceReader};
use std::io::Cursor;

fn main() {
    afl::fuzz!(|data: &[u8]| {
        for format in TraceFormat::ALL {
            let mut reader =
                TraceReader::from_reader(Box::new(Cursor::new(data.to_vec())), "fuzz", format);
            while let Some(item) = reader.next() {
                if item.is_err() {
                    assert!(reader.next().is_none(), "reader yielded after an error");
                    break;
                }
            }
            let reader =
                TraceReader::from_reader(Box::new(Cursor::new(data.to_vec())), "fuzz", format);
            let _ = stats(reader, &TraceFilter::default());
        }
        let text = String::from_utf8_lossy(data);
        let lines: Vec<&str> = text.lines().collect();
        let _ = detect("fuzz", &lines);
    });
}
