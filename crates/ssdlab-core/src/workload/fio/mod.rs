//! fio job-file parser (core subset).
//!
//! Reads the INI-style job files of [fio](https://github.com/axboe/fio) and
//! turns them into a [`Workload`]. The syntax follows fio's own parser:
//!
//! * `[name]` starts a job; a section whose name begins with `global` (as in
//!   fio) sets defaults for the jobs *below* it. Several global sections
//!   accumulate; a section name may repeat (each is a separate job).
//! * `key=value` (spaces around `=` allowed) or a bare `key` for flags such as
//!   `time_based`. A line whose first non-blank character is `;` or `#` is a
//!   comment, and, as in fio, everything from a `;` or `#` to the end of a
//!   line is dropped.
//! * `include FILE` inside a section reads FILE's options as if they were
//!   pasted in place of the line. A relative FILE is relative to the
//!   directory of the including file (for [`parse_str`], of its `file`
//!   name). Includes nest; as in fio an included file may not contain
//!   `[section]` headers. A missing file or an include cycle is an error
//!   naming the including file and line; errors inside an included file
//!   name that file and its own line.
//! * `${VAR}` in an option value or a section name is replaced by the
//!   environment variable `VAR` (once, no recursion). Unlike fio, which
//!   substitutes an empty string, an unset variable is an error naming it
//!   (an empty but set variable expands to nothing). Values of ignored
//!   options (`filename=${DEV}`) are not expanded, as they are not used.
//! * Sizes: plain integers are bytes; `0x` hexadecimal is accepted; unit
//!   prefixes (any case, optionally followed by `b`) depend on `kb_base`:
//!   - `kb_base=1024` (fio's default "compatibility" mode): `k`, `m`, `g`,
//!     `t`, `p` are powers of 1024. IEC forms such as `4KiB` are rejected:
//!     in this mode fio reads them as *decimal* (`4KiB` = 4000 bytes), and
//!     accepting them either way would silently disagree with fio or with
//!     the author.
//!   - `kb_base=1000` (fio's IEC 80000-13 mode): `k`, `m`, ... (and `kB`,
//!     `MB`, ...) are powers of 1000; `Ki`, `Mi`, `Gi`, `Ti`, `Pi` (and
//!     `KiB`, ...) are powers of 1024.
//!
//!   As in fio, `kb_base` takes effect for the whole section it is in,
//!   wherever it appears there, and a `[global]` `kb_base` is inherited by
//!   the jobs below it. Any other value is an error.
//! * Times: a bare integer is seconds (microseconds for `thinktime`);
//!   suffixes `us`/`usec`, `ms`/`msec`, `s`/`sec`, `m`/`min`, `h`/`hour`,
//!   `d`/`day` (any case).
//! * Per-direction values (`bs`, `bsrange`, `bssplit`, `blockalign`,
//!   `percentage_random`, `random_distribution`, `rate`, `rate_iops`)
//!   follow fio: `r,w[,t]` gives reads, writes (and trims); a value not
//!   followed by a comma also applies to the directions after it
//!   (`bs=8k,32k`: 8k reads, 32k writes and trims); an empty field keeps the
//!   direction's current value (`bs=,8k`).
//! * Block sizes: `bssplit` takes precedence over `bsrange`, which takes
//!   precedence over `bs`, whatever their order (as in fio). `bssplit`
//!   entries without a percentage share the remainder equally.
//! * Trims: `rw=trim` / `rw=randtrim` ([`TrimMode::Only`]) trim blocks of
//!   the trim size of `bs` (its third field, [`JobSpec::trim_bs`]) at
//!   sequential / uniformly random offsets: the job's write direction
//!   describes the trims (`rw.read_pct` is 0, `bs` is `trim_bs`, and the
//!   write direction's `blockalign`, `percentage_random` and
//!   `random_distribution` are reset to their defaults unless their trim
//!   fields say otherwise, which is an error). `rw=trimwrite`
//!   ([`TrimMode::TrimWrite`], sequential) trims each block, then writes it,
//!   with the write sizes. Only `bs` sets trim sizes: on a job that trims, a
//!   trim value of `bsrange`/`bssplit` (or, for `randtrim`, a non-default
//!   trim value of `blockalign`, `percentage_random` or
//!   `random_distribution`; for `trimwrite` one that differs from the write
//!   value) is an error rather than silently ignored. On jobs that do not
//!   trim, trim fields have no effect (as in fio). `rw=randtrimwrite` is not
//!   supported.
//! * Flushes: `fsync=N` / `fdatasync=N` issue an NVMe Flush after every N
//!   writes; `end_fsync` / `fsync_on_close` one when the job's I/O is done.
//! * Rates: `rate=` (bytes/s, size syntax) and `rate_iops=` per direction
//!   (0 = no cap, as in fio); `rate_process=linear|poisson`.
//! * Think time: `thinktime=` (bare numbers are microseconds, as in fio),
//!   `thinktime_blocks=`, `thinktime_blocks_type=complete|issue`,
//!   `thinktime_iotime=` (bare numbers are seconds, as in fio).
//! * Job ordering: `stonewall` / `wait_for_previous` (wait for every
//!   earlier job) and `new_group`; in a `[global]` section they apply to
//!   every job below it. Reporting groups are numbered from 0; a job with
//!   `stonewall` or `new_group` starts a new group unless it is the first
//!   job (fio's rule). `wait_for=NAME` must name an *earlier* job whose name
//!   is unique in the file, and not the job itself.
//! * `read_iolog=FILE` (relative to the directory of the file containing
//!   the line; it must exist) replays a fio iolog (v3) as the job's I/O:
//!   with its timing ([`Replay::Open`], speed-up `replay_time_scale` / 100,
//!   since fio divides the gaps by `replay_time_scale`/100), or, with
//!   `replay_no_stall=1`, as fast as the job's final `iodepth` allows
//!   ([`Replay::Closed`]). Offsets beyond the drive wrap around
//!   ([`Remap::Wrap`]); no record filter is applied. `replay_redirect` is
//!   ignored (the drive is the target); `replay_align`, `replay_scale`,
//!   `write_iolog`, several `:`-separated files and stdin (`-`) are errors.
//!
//! Options without meaning in a simulator (`ioengine`, `direct`,
//! `filename`, `rate_min`, `thinktime_spin`, ...) are accepted and listed
//! once each in [`Workload::ignored`] with the reason; every other option
//! outside the supported subset is an error naming the file, the line and
//! the option. So are fio features not modelled yet: percentage sizes,
//! arithmetic expressions, the `$pagesize`/`$ncpus`/`$mb_memory` keywords,
//! `sync`, `write_barrier`, `rate_ignore_thinktime=1`.
//!
//! [`TrimMode::Only`]: super::TrimMode::Only
//! [`TrimMode::TrimWrite`]: super::TrimMode::TrimWrite
//! [`JobSpec::trim_bs`]: super::JobSpec::trim_bs
//! [`Replay::Open`]: super::Replay::Open
//! [`Replay::Closed`]: super::Replay::Closed
//! [`Remap::Wrap`]: super::trace::Remap::Wrap

// The parser, by concern: `grammar` reads lines, sections, `include`s and
// `${VAR}`s; `values` lexes option values (sizes, times, percentages, ...);
// `options` gives each option its meaning; `jobs` builds the `JobSpec`s from
// finished sections.
mod grammar;
mod ignored;
mod jobs;
mod options;
#[cfg(test)]
mod test_util;
mod values;
mod verify_opts;

use super::{Workload, WorkloadError};
use grammar::Parser;
use std::path::Path;

/// Parse a fio job file from disk.
///
/// The file name used in errors is `path` as displayed; `include` and
/// `read_iolog` paths are relative to its directory. A read failure is
/// reported as a [`WorkloadError`] with line 0.
pub fn parse_file(path: &Path) -> Result<Workload, WorkloadError> {
    parse_file_with(path, None)
}

/// The simulated host's values of fio's reserved keywords: `$pagesize`
/// (the host's page: the drive's mapping unit, which the page cache uses),
/// `$ncpus` (`host.cores`; `None` when it is 0, one CPU per thread) and
/// `$mb_memory` (`host.memory` in MiB; `None` when it is 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostKeywords {
    /// `$pagesize`, bytes.
    pub pagesize: u64,
    /// `$ncpus`.
    pub ncpus: Option<u32>,
    /// `$mb_memory`, MiB.
    pub mb_memory: Option<u64>,
}

/// [`parse_file`] with the simulated host's keyword values (`None`: a job
/// file using `$pagesize`, `$ncpus` or `$mb_memory` is an error saying so).
pub fn parse_file_with(
    path: &Path,
    keywords: Option<HostKeywords>,
) -> Result<Workload, WorkloadError> {
    let file = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => parse_str_with(&text, &file, keywords),
        Err(e) => Err(WorkloadError {
            file,
            line: 0,
            option: None,
            message: format!("cannot read job file: {e}"),
        }),
    }
}

/// Parse the text of a fio job file; `file` names it in error messages, and
/// its directory (`Path::new(file).parent()`) is where relative `include`
/// and `read_iolog` paths are looked up.
///
/// Returns the jobs in file order (with `[global]` defaults applied, before
/// `numjobs` expansion) and the accepted-but-ignored options, each listed
/// once. Fails on the first unsupported option, invalid value, malformed
/// line, or if the file defines no job.
pub fn parse_str(text: &str, file: &str) -> Result<Workload, WorkloadError> {
    parse_str_with(text, file, None)
}

/// [`parse_str`] with the simulated host's keyword values.
pub fn parse_str_with(
    text: &str,
    file: &str,
    keywords: Option<HostKeywords>,
) -> Result<Workload, WorkloadError> {
    let mut parser = Parser::new(file);
    parser.keywords = keywords;
    parser.read_text(text, file, false)?;
    parser.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::Time;
    use crate::workload::fio::test_util::*;
    use crate::workload::{Distribution, RateProcess, RwPattern, TrimMode};

    #[test]
    fn parse_file_reads_and_reports() {
        let dir = std::env::temp_dir().join(format!("ssdlab-fio-test-{}", std::process::id()));
        assert!(std::fs::create_dir_all(&dir).is_ok());
        let path = dir.join("randread.fio");
        assert!(std::fs::write(&path, "[randread]\nrw=randread\nbs=4k\niodepth=32\n").is_ok());
        let w = match parse_file(&path) {
            Ok(w) => w,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(w.jobs[0].name, "randread");
        assert_eq!(w.jobs[0].iodepth, 32);

        assert!(std::fs::write(&path, "[j]\nbs=4x\n").is_ok());
        let e = parse_file(&path).err();
        let shown = path.display().to_string();
        assert_eq!(
            e.as_ref().map(|e| (e.file.as_str(), e.line)),
            Some((shown.as_str(), 2))
        );

        let missing = dir.join("missing.fio");
        let e = parse_file(&missing).err();
        assert_eq!(e.as_ref().map(|e| e.line), Some(0));
        let e = e.map(|e| e.to_string()).unwrap_or_default();
        assert!(e.starts_with(&missing.display().to_string()), "{e}");
        assert!(e.contains("cannot read job file"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// A job file of tests/data/fio.
    fn data_file(name: &str) -> Workload {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/fio")
            .join(name);
        ok(parse_file(&path))
    }

    #[test]
    fn data_ssd_test_four_corners() {
        let w = data_file("ssd-test.fio");
        let got: Vec<(&str, RwPattern, bool, u32)> = w
            .jobs
            .iter()
            .map(|j| (j.name.as_str(), j.rw, j.stonewall, j.group))
            .collect();
        assert_eq!(
            got,
            [
                ("seq-read", pattern(false, 100), true, 0),
                ("rand-read", pattern(true, 100), true, 1),
                ("seq-write", pattern(false, 0), true, 2),
                ("rand-write", pattern(true, 0), true, 3),
            ]
        );
        for j in &w.jobs {
            assert_eq!((j.bs, j.block_sizes.clone(), j.iodepth), (4096, None, 4));
            assert_eq!(
                (j.size, j.runtime, j.time_based),
                (Some(10 * GIB), Some(Time::s(60)), true)
            );
            assert_eq!(
                (j.trim, j.fsync, j.wait_for.clone()),
                (TrimMode::None, 0, None)
            );
            assert_eq!(
                (j.rate, j.rate_iops, j.thinktime),
                ([None; 3], [None; 3], Time::ZERO)
            );
        }
        // ioengine and filename come from the included nvme-common.inc
        // (and direct=1, which is applied).
        let ignored: Vec<&str> = w.ignored.iter().map(|i| i.option.as_str()).collect();
        assert_eq!(ignored, ["ioengine", "filename"]);
    }

    #[test]
    fn data_mixed_oltp_with_rate_and_thinktime() {
        let w = data_file("mixed-oltp.fio");
        assert_eq!(w.jobs.len(), 1);
        let j = &w.jobs[0];
        assert_eq!(j.name, "oltp-70-30");
        assert_eq!(j.rw, pattern(true, 70));
        assert_eq!((j.bs, j.numjobs, j.iodepth), (8 * KIB, 4, 32));
        assert_eq!(j.rate_iops, [Some(20_000), Some(8_000), Some(8_000)]);
        assert_eq!(j.rate, [None; 3]);
        assert_eq!(j.rate_process, RateProcess::Poisson);
        assert_eq!(
            (j.thinktime, j.thinktime_blocks, j.thinktime_blocks_issue),
            (Time::us(250), 64, true)
        );
        assert_eq!(j.thinktime_iotime, Time::ZERO);
        assert_eq!(
            (j.runtime, j.ramp_time, j.time_based),
            (Some(Time::s(120)), Time::s(10), true)
        );
        assert_eq!((j.group, j.stonewall), (0, false));
        let ignored: Vec<&str> = w.ignored.iter().map(|i| i.option.as_str()).collect();
        assert_eq!(
            ignored,
            ["ioengine", "thread", "group_reporting", "rate_min"]
        );
    }

    #[test]
    fn data_hotspot_zoned_and_zipf() {
        let w = data_file("hotspot.fio");
        let names: Vec<&str> = w.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["zoned-reads", "zipf-writes", "zipf-mixed"]);
        let groups: Vec<u32> = w.jobs.iter().map(|j| j.group).collect();
        assert_eq!(groups, [0, 1, 1]);
        let zoned = Distribution::Zoned(vec![(60.0, 10.0), (30.0, 20.0), (10.0, 70.0)]);
        assert_eq!(w.jobs[0].rw, pattern(true, 100));
        assert_eq!(w.jobs[0].random_distribution, [zoned.clone(), zoned]);
        let zipf = Distribution::Zipf {
            theta: 1.2,
            center: None,
        };
        assert_eq!(w.jobs[1].rw, pattern(true, 0));
        assert_eq!(w.jobs[1].random_distribution, [zipf.clone(), zipf]);
        assert_eq!(w.jobs[1].randseed, Some(1234));
        let centred = Distribution::Zipf {
            theta: 1.2,
            center: Some(0.5),
        };
        assert_eq!(w.jobs[2].rw, pattern(true, 50));
        assert_eq!(w.jobs[2].random_distribution, [centred.clone(), centred]);
        for j in &w.jobs {
            assert_eq!((j.bs, j.iodepth, j.size), (4096, 16, Some(64 * GIB)));
            assert_eq!((j.runtime, j.time_based), (Some(Time::s(300)), true));
            assert!(j.norandommap && !j.randrepeat && !j.stonewall);
            assert_eq!(j.randseed.is_some(), j.name == "zipf-writes");
        }
    }

    #[test]
    fn data_trim_phases_with_ordering_and_fsync() {
        let w = data_file("trim-phases.fio");
        let got: Vec<(&str, bool, Option<&str>, u32)> = w
            .jobs
            .iter()
            .map(|j| (j.name.as_str(), j.stonewall, j.wait_for.as_deref(), j.group))
            .collect();
        assert_eq!(
            got,
            [
                ("precondition", false, None, 0),
                ("trim-phase", true, None, 1),
                ("post-trim-write", false, Some("trim-phase"), 1),
                ("reader", false, Some("precondition"), 2),
            ]
        );
        let [pre, trim, post, reader] = &w.jobs[..] else {
            panic!("expected 4 jobs, got {}", w.jobs.len());
        };
        assert_eq!(
            (pre.rw, pre.bs, pre.iodepth, pre.trim),
            (pattern(false, 0), 128 * KIB, 16, TrimMode::None)
        );
        assert_eq!(
            (
                trim.rw,
                trim.trim,
                trim.bs,
                trim.trim_bs,
                trim.block_sizes.clone()
            ),
            (pattern(true, 0), TrimMode::Only, 256 * KIB, 256 * KIB, None)
        );
        assert_eq!((trim.iodepth, trim.io_size), (8, Some(16 * GIB)));
        assert_eq!(
            (post.rw, post.bs, post.iodepth, post.fsync, post.end_fsync),
            (pattern(true, 0), 4096, 32, 32, true)
        );
        assert_eq!((post.runtime, post.time_based), (Some(Time::s(60)), true));
        assert_eq!(
            (reader.rw, reader.iodepth, reader.rate),
            (pattern(true, 100), 4, [Some(200 * MIB); 3])
        );
        for j in &w.jobs {
            assert_eq!(j.size, Some(32 * GIB));
            assert_eq!(j.read_iolog, None);
            assert_eq!(j.end_fsync, j.name == "post-trim-write");
        }
    }
}
