//! Helpers shared by the fio parser's unit tests.

use super::parse_str;
use crate::workload::{JobSpec, RwPattern, Workload, WorkloadError};

pub(super) const KIB: u64 = 1024;
pub(super) const MIB: u64 = 1024 * KIB;
pub(super) const GIB: u64 = 1024 * MIB;

pub(super) fn parse(text: &str) -> Workload {
    match parse_str(text, "t.fio") {
        Ok(w) => w,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// Parse a single job `[j]` with the given body.
pub(super) fn job(body: &str) -> JobSpec {
    let mut w = parse(&format!("[j]\n{body}\n"));
    assert_eq!(w.jobs.len(), 1);
    w.jobs.remove(0)
}

/// Assert that `text` fails at `line` on `option` with a message containing `needle`,
/// and that the displayed error names the file, the line and the option.
pub(super) fn assert_err(
    text: &str,
    line: usize,
    option: Option<&str>,
    needle: &str,
) -> WorkloadError {
    let e = match parse_str(text, "jobs/t.fio") {
        Ok(w) => panic!("expected an error containing {needle:?}, got {w:?}"),
        Err(e) => e,
    };
    assert_eq!(e.file, "jobs/t.fio", "{e}");
    assert_eq!(e.line, line, "{e}");
    assert_eq!(e.option.as_deref(), option, "{e}");
    assert!(
        e.message.contains(needle),
        "{e:?} should contain {needle:?}"
    );
    let shown = e.to_string();
    if line > 0 {
        assert!(
            shown.starts_with(&format!("jobs/t.fio:{line}: ")),
            "{shown}"
        );
    } else {
        assert!(shown.starts_with("jobs/t.fio: "), "{shown}");
    }
    if let Some(o) = option {
        assert!(shown.contains(&format!("option '{o}'")), "{shown}");
    }
    e
}

/// Error for `key=value` as the second line of a job section.
pub(super) fn assert_value_err(option_line: &str, option: &str, needle: &str) {
    assert_err(&format!("[j]\n{option_line}\n"), 2, Some(option), needle);
}

pub(super) fn pattern(random: bool, read_pct: u32) -> RwPattern {
    RwPattern { random, read_pct }
}

/// A fresh directory for file-based tests.
pub(super) fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ssdlab-fio-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    assert!(std::fs::create_dir_all(&dir).is_ok());
    dir
}

pub(super) fn write(path: &std::path::Path, text: &str) {
    assert!(std::fs::write(path, text).is_ok(), "{}", path.display());
}

pub(super) fn parse_at(text: &str, file: &std::path::Path) -> Result<Workload, WorkloadError> {
    parse_str(text, &file.display().to_string())
}

pub(super) fn ok<T>(r: Result<T, WorkloadError>) -> T {
    match r {
        Ok(x) => x,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

pub(super) fn err<T: std::fmt::Debug>(r: Result<T, WorkloadError>) -> WorkloadError {
    match r {
        Ok(x) => panic!("expected an error, got {x:?}"),
        Err(e) => e,
    }
}
