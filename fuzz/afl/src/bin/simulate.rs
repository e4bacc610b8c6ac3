//! The whole path: a device file and a fio job (separated by a line
//! `----`) resolved and simulated for a few hundred I/Os on a fresh drive.
//! A report or an error; never a panic, a stall or a hang (AFL++'s timeout).
use ssdlab_afl::{small_enough, split};
use ssdlab_core::{simulate_quiet, Precondition, RunSpec};

fn main() {
    afl::fuzz!(|data: &[u8]| {
        let Ok(text) = std::str::from_utf8(data) else {
            return;
        };
        let (dev_text, job_text) = split(text);
        let Ok((_, dev)) = ssdlab_core::compose::load(dev_text, "fuzz.toml", &[]) else {
            return;
        };
        if !small_enough(&dev) {
            return;
        }
        let Ok(mut w) = ssdlab_core::workload::fio::parse_str(job_text, "fuzz.fio") else {
            return;
        };
        if w.trace.is_some() || w.jobs.iter().any(|j| j.read_iolog.is_some()) {
            return;
        }
        // A short run: a few hundred I/Os, no time-based jobs, no long waits.
        for j in &mut w.jobs {
            j.number_ios = Some(j.number_ios.unwrap_or(300).min(300));
            j.time_based = false;
            j.runtime = None;
            j.loops = j.loops.min(2);
            j.numjobs = j.numjobs.min(4);
            j.iodepth = j.iodepth.min(64);
            let cap = ssdlab_core::units::Time::ms(1);
            j.thinktime = j.thinktime.min(cap);
            j.startdelay = j.startdelay.min(cap);
            j.ramp_time = j.ramp_time.min(cap);
            j.rate = [None; 3];
            j.rate_iops = [None; 3];
            j.steadystate = None;
        }
        let mut spec = RunSpec::new(dev, w, "fuzz.fio");
        spec.precondition = Precondition::Fresh;
        match simulate_quiet(&spec) {
            Ok(_) => {}
            Err(ssdlab_core::SimError::Stalled(s)) => panic!("stalled: {s}"),
            Err(_) => {}
        }
    });
}
