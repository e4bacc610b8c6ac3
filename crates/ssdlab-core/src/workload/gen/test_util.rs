//! Helpers shared by the generator's unit tests.

use super::{Io, JobGen};
use crate::units::Time;
use crate::workload::WorkloadError;

pub(super) const U: u64 = 4096;

/// The generator for the single job of a fio file body, on a drive of `cap` units of 4 KiB.
pub(super) fn gen_seeded(body: &str, cap: u64, seed: u64) -> Result<JobGen, WorkloadError> {
    let w = match crate::workload::fio::parse_str(&format!("[j]\n{body}\n"), "t.fio") {
        Ok(w) => w,
        Err(e) => panic!("{e}"),
    };
    JobGen::new(&w.jobs[0], 0, seed, cap, U, "t.fio")
}

pub(super) fn gen(body: &str, cap: u64) -> JobGen {
    match gen_seeded(body, cap, 7) {
        Ok(g) => g,
        Err(e) => panic!("{e}"),
    }
}

pub(super) fn all(mut g: JobGen) -> Vec<Io> {
    let mut v = Vec::new();
    while let Some(io) = g.next_io(Time::ZERO) {
        v.push(io);
    }
    v
}

pub(super) fn gen_err(body: &str, cap: u64) -> WorkloadError {
    match gen_seeded(body, cap, 7) {
        Ok(_) => panic!("expected an error for {body:?}"),
        Err(e) => e,
    }
}

pub(super) fn frac(n: usize, total: usize) -> f64 {
    n as f64 / total as f64
}
