//! The host's part of the functional data store (`--data-store`): what a
//! write carries into the drive's store, what a verifying read checks, and
//! how a verifying job clone draws its read-backs (fio's verify; the
//! layouts and checks themselves are in `verify.rs`).

use super::queue::Source;
use super::verify;
use super::{werr, Drives, Host, HostCmd};
use crate::system::SimError;
use crate::units::Time;
use crate::workload::gen::Io;
use crate::workload::Op;

/// fio keeps a verifying job's writes in write order unless its offsets may
/// repeat or overlap (`fio_offset_overlap_risk`), when it sorts them by
/// offset and drops older overlapping ones. ssdlab's generator repeats or
/// overlaps offsets without the random map, with several block sizes, and
/// over several passes.
pub(super) fn verify_overlap_risk(job: &crate::workload::JobSpec) -> bool {
    use crate::workload::Distribution;
    let map = !job.rw.random
        || (!job.norandommap
            && job.blockalign.iter().all(Option::is_none)
            && job
                .random_distribution
                .iter()
                .all(|d| matches!(d, Distribution::Uniform)));
    !map || job.block_sizes.is_some()
        || job.loops > 1
        || job.seq_skip != 0
        || job.offset_repeat > 1
        || job.locality.is_some()
        || (job.rw.read_pct > 0 && job.rw.read_pct < 100)
        || matches!((job.io_size, job.size), (Some(i), Some(s)) if i > s)
        || (job.io_size.is_some() && job.size.is_none())
}

/// What ssdlab's verify does not cover yet, and intervals too short for
/// their header.
pub(super) fn check_verify(
    job: &crate::workload::JobSpec,
    v: &crate::workload::VerifySpec,
    file: &str,
) -> Result<(), SimError> {
    let no = |opt: &str, why: &str| {
        Err(werr(
            file,
            Some(opt),
            format!("job '{}': verify {why} is not supported yet", job.name),
        ))
    };
    if job.time_based {
        return no(
            "time_based",
            "with time_based (fio writes size bytes, verifies them, and repeats until the runtime)",
        );
    }
    if job.trim != crate::workload::TrimMode::None {
        return no("rw", "of a job that trims");
    }
    if job.read_iolog.is_some() {
        return no("read_iolog", "of an iolog replay");
    }
    if !job.direct {
        return no("direct", "with buffered I/O (direct=0: fio drops the page cache before verifying, which ssdlab does not model)");
    }
    let min = verify::min_interval(v.method) as u64;
    let smallest = match &job.block_sizes {
        Some(b) => b.iter().map(|x| x.min()).min().unwrap_or(job.bs),
        None => job.bs,
    };
    let iv = v.interval.filter(|&i| i <= smallest).unwrap_or(smallest);
    if iv < min {
        return Err(werr(
            file,
            Some(if v.interval.is_some() { "verify_interval" } else { "bs" }),
            format!(
                "job '{}': verify={} needs at least {min} B per header (header and digest), but intervals are {iv} B",
                job.name,
                v.method.name()
            ),
        ));
    }
    Ok(())
}

impl Host {
    /// The data store's part of issuing `io` on queue `q` to drive `d`: a
    /// write's data is generated and kept (and logged, if the job
    /// verifies), a trim deallocates; returns the command's tag and write
    /// number.
    #[cold]
    #[inline(never)]
    pub(super) fn data_issue<S>(
        &mut self,
        q: u32,
        d: u16,
        io: Io,
        read_back: Option<(u16, u64)>,
        submit: &mut S,
    ) -> (verify::DataTag, u64)
    where
        S: Drives,
    {
        let unit = self.unit_bytes;
        let (off, len) = (io.offset(unit), io.bytes(unit));
        let h = &mut self.queues[q as usize];
        let r = match io.op {
            Op::Write => {
                let n = h.numberio;
                h.numberio += 1;
                let tag = match h.verify.as_mut() {
                    Some(v) => {
                        v.log_write(d, off, len, n, false);
                        verify::DataTag::Logged
                    }
                    None => verify::DataTag::None,
                };
                let mut buf = std::mem::take(&mut self.data_buf);
                buf.resize(len as usize, 0);
                let h = &self.queues[q as usize];
                verify::write_content(
                    h.verify.as_ref().map(|v| &v.spec),
                    &h.buffer,
                    h.data_seed,
                    q as u16,
                    off,
                    n,
                    &mut buf,
                );
                let w = submit.write_data(d, off, &buf);
                self.data_buf = buf;
                if let Err(e) = w {
                    self.failure = Some(SimError::Device(e));
                }
                return (tag, n);
            }
            Op::Trim => submit.trim_data(d, off, len),
            Op::Read => {
                return match read_back {
                    Some((_, n)) => (verify::DataTag::ReadBack, n),
                    None if h.verify.as_ref().is_some_and(|v| v.inline) => {
                        (verify::DataTag::Inline, 0)
                    }
                    None => (verify::DataTag::None, 0),
                }
            }
            Op::Flush => Ok(()),
        };
        if let Err(e) = r {
            self.failure = Some(SimError::Device(e));
        }
        (verify::DataTag::None, 0)
    }

    /// The data store's part of command `c` completing: a logged write is
    /// done; a verifying read checks what the drive returned.
    #[cold]
    #[inline(never)]
    pub(super) fn data_complete<S>(&mut self, c: &HostCmd, cmd: Option<u32>, submit: &mut S)
    where
        S: Drives,
    {
        let numberio = cmd.map_or(0, |i| self.numberio[i as usize]);
        let h = &mut self.queues[c.q as usize];
        let Some(v) = h.verify.as_mut() else {
            return;
        };
        let unit = self.unit_bytes;
        let (off, len) = (
            c.lpn as u64 * unit + c.head as u64 * Io::SECTOR,
            c.bytes(unit),
        );
        if c.tag == verify::DataTag::Logged {
            v.log.done(c.d, off, numberio);
            return;
        }
        let mut buf = std::mem::take(&mut self.data_buf);
        buf.resize(len as usize, 0);
        if let Err(e) = submit.read_data(c.d, off, &mut buf) {
            self.failure = Some(SimError::Device(e));
        }
        let expect = (c.tag == verify::DataTag::ReadBack).then_some(numberio);
        let r = verify::check(&v.spec, off, expect, &buf);
        self.data_buf = buf;
        self.verify.blocks += 1;
        self.verify.bytes += len;
        if let Err(e) = r {
            self.verify.failures += 1;
            if let Some(js) = self.job_stats.as_mut() {
                js[c.q as usize].verify_errors += 1;
            }
            if v.spec.fatal {
                v.stop = true;
            }
            if self.verify.first_failures.len() < 10 {
                self.verify.first_failures.push(e);
            }
        }
    }

    /// What a verifying queue does next (see [`VerifyNext`]).
    #[cold]
    #[inline(never)]
    pub(super) fn verify_next(&mut self, q: u32, at: Time) -> VerifyNext {
        let h = &mut self.queues[q as usize];
        let past = matches!(&h.gen, Source::Job(g) if g.past_deadline(at));
        let Some(v) = h.verify.as_mut() else {
            return VerifyNext::Gen;
        };
        if v.stop {
            return VerifyNext::End;
        }
        let take = match v.phase {
            verify::Phase::Verify => {
                if past {
                    // fio ends the verify phase at the job's runtime too.
                    return VerifyNext::End;
                }
                match v.log.pop() {
                    Some(p) => p,
                    None if v.log.len() == 0 => return VerifyNext::End,
                    None => return VerifyNext::Wait,
                }
            }
            verify::Phase::Run => {
                if v.batch_left == 0 {
                    return VerifyNext::Gen;
                }
                match v.log.pop() {
                    Some(p) => {
                        v.batch_left -= 1;
                        p
                    }
                    // Nothing completed to verify yet: go on writing.
                    None => return VerifyNext::Gen,
                }
            }
        };
        h.read_back = Some((take.d, take.numberio));
        VerifyNext::Io(Io::from_bytes(
            Op::Read,
            take.off,
            take.len as u64,
            self.unit_bytes,
        ))
    }
}

/// What a verifying queue does next.
pub(super) enum VerifyNext {
    /// The job's own next I/O.
    Gen,
    /// Read back a logged write.
    Io(Io),
    /// Wait for a write in flight to complete.
    Wait,
    /// The queue is done (verify phase over, or `verify_fatal`).
    End,
}
