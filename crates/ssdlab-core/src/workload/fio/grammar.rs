//! The job-file grammar: lines and comments, `[section]` headers (global or
//! job), `key[=value]` entries located by file and line, `include` (paths
//! relative to the including file, nesting, cycle checks), `${VAR}`
//! expansion, and `kb_base`, which covers the whole section it is in. Each
//! finished section goes to [`Jobs`], which gives the options their meaning.

use super::jobs::Jobs;
use super::options::ignored_reason;
use super::values::KbBase;
use crate::workload::{Workload, WorkloadError};
use std::path::{Path, PathBuf};

/// Where an option was given: file, line and option name.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Loc {
    pub(super) file: String,
    pub(super) line: usize,
    pub(super) key: String,
}

impl Loc {
    pub(super) fn err(&self, message: impl Into<String>) -> WorkloadError {
        error(&self.file, self.line, Some(&self.key), message)
    }

    /// `line N` if `other` is in the same file as `self`, else `FILE:N`.
    pub(super) fn refer(&self, other: &Loc) -> String {
        if other.file == self.file {
            format!("line {}", other.line)
        } else {
            format!("{}:{}", other.file, other.line)
        }
    }
}

/// One `key[=value]` line of a section (after `${VAR}` expansion).
pub(super) struct Entry {
    pub(super) at: Loc,
    pub(super) value: Option<String>,
}

/// A section being read: its options are applied when it ends, `kb_base` first.
pub(super) struct Pending {
    /// `None` for a global section.
    pub(super) job_name: Option<String>,
    /// Where the header is (`key` is the section name).
    pub(super) header: Loc,
    pub(super) entries: Vec<Entry>,
}

impl Pending {
    /// The section's `kb_base` (`None` if not given): as in fio, it applies
    /// to the whole section, wherever it is; several must agree.
    fn kb_base(&self) -> Result<Option<KbBase>, WorkloadError> {
        let mut kb_set: Option<(KbBase, &Loc)> = None;
        for e in self.entries.iter().filter(|e| e.at.key == "kb_base") {
            let kb = parse_kb_base(e.value.as_deref()).map_err(|m| e.at.err(m))?;
            if let Some((prev, at)) = kb_set {
                if prev != kb {
                    return Err(e.at.err(format!(
                        "contradicts kb_base on {} of the same section",
                        e.at.refer(at)
                    )));
                }
            }
            kb_set = Some((kb, &e.at));
        }
        Ok(kb_set.map(|(kb, _)| kb))
    }
}

/// Reads a job file and the files it includes, line by line.
pub(super) struct Parser {
    current: Option<Pending>,
    /// The sections finished so far, as jobs and `[global]` defaults.
    jobs: Jobs,
    /// Files being read (canonical paths), outermost first.
    include_stack: Vec<PathBuf>,
    /// The file name given to [`parse_str`](super::parse_str).
    top_file: String,
    /// The simulated host's `$pagesize`, `$ncpus`, `$mb_memory`, if known.
    pub(super) keywords: Option<super::HostKeywords>,
}

impl Parser {
    /// A parser for the top file named `file`.
    pub(super) fn new(file: &str) -> Self {
        // The top file's own path, to detect it including itself.
        let top = std::fs::canonicalize(file).unwrap_or_else(|_| PathBuf::from(file));
        Parser {
            current: None,
            jobs: Jobs::default(),
            include_stack: vec![top],
            top_file: file.to_string(),
            keywords: None,
        }
    }

    /// Read the lines of `file` (`nested` for an included file).
    pub(super) fn read_text(
        &mut self,
        text: &str,
        file: &str,
        nested: bool,
    ) -> Result<(), WorkloadError> {
        for (idx, raw) in text.lines().enumerate() {
            let lineno = idx + 1;
            let raw = if idx == 0 {
                raw.trim_start_matches('\u{feff}')
            } else {
                raw
            };
            // As in fio, a `;` or `#` starts a comment wherever it appears.
            let line = match raw.find([';', '#']) {
                Some(i) => &raw[..i],
                None => raw,
            }
            .trim();
            if line.is_empty() {
                continue;
            }
            if line.starts_with('[') {
                if nested {
                    return Err(error(
                        file,
                        lineno,
                        None,
                        format!(
                            "section header '{line}' in an included file; as in fio, included \
                             files may only hold options (put the section in the including file)"
                        ),
                    ));
                }
                self.section_header(line, file, lineno)?;
                continue;
            }
            let mut words = line.splitn(2, char::is_whitespace);
            if words.next() == Some("include") {
                self.include(words.next().unwrap_or("").trim(), file, lineno)?;
                continue;
            }
            let (key, value) = match line.split_once('=') {
                Some((k, v)) => (k.trim(), Some(v.trim())),
                None => (line, None),
            };
            if key.is_empty() {
                return Err(error(
                    file,
                    lineno,
                    None,
                    format!("'{line}' has no option name before '='"),
                ));
            }
            self.option(key, value, file, lineno)?;
        }
        Ok(())
    }

    /// An `include FILE` line of `file`.
    fn include(&mut self, name: &str, file: &str, lineno: usize) -> Result<(), WorkloadError> {
        let fail = |m: String| error(file, lineno, None, m);
        if name.is_empty() {
            return Err(fail(
                "include needs a file name ('include common.fio')".into(),
            ));
        }
        if self.current.is_none() {
            return Err(fail(format!(
                "'include {name}' appears before any [section]; as in fio, include options \
                 under [global] or a job section"
            )));
        }
        let path = relative_to(file, name);
        let shown = path.display().to_string();
        let canonical = std::fs::canonicalize(&path)
            .map_err(|e| fail(format!("cannot read include file '{shown}': {e}")))?;
        if let Some(i) = self.include_stack.iter().position(|p| *p == canonical) {
            let chain: Vec<String> = self.include_stack[i..]
                .iter()
                .map(|p| p.display().to_string())
                .chain([canonical.display().to_string()])
                .collect();
            return Err(fail(format!(
                "include cycle: '{shown}' is already being read ({})",
                chain.join(" -> ")
            )));
        }
        let text = std::fs::read_to_string(&path)
            .map_err(|e| fail(format!("cannot read include file '{shown}': {e}")))?;
        self.include_stack.push(canonical);
        let result = self.read_text(&text, &shown, true);
        self.include_stack.pop();
        result
    }

    fn section_header(
        &mut self,
        line: &str,
        file: &str,
        lineno: usize,
    ) -> Result<(), WorkloadError> {
        self.finish_section()?;
        let Some(inner) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) else {
            return Err(error(
                file,
                lineno,
                None,
                format!("malformed section header '{line}'; expected '[name]'"),
            ));
        };
        let name = expand_env(inner.trim())
            .map_err(|m| error(file, lineno, None, format!("section name: {m}")))?;
        let name = name.trim();
        if name.is_empty() {
            return Err(error(file, lineno, None, "empty section name '[]'"));
        }
        // fio treats every section whose name starts with "global" as global.
        let is_global = name.starts_with("global");
        self.current = Some(Pending {
            job_name: (!is_global).then(|| name.to_string()),
            header: Loc {
                file: file.to_string(),
                line: lineno,
                key: name.to_string(),
            },
            entries: Vec::new(),
        });
        Ok(())
    }

    fn option(
        &mut self,
        key: &str,
        value: Option<&str>,
        file: &str,
        lineno: usize,
    ) -> Result<(), WorkloadError> {
        let Some(section) = self.current.as_mut() else {
            return Err(error(
                file,
                lineno,
                Some(key),
                "appears before any [section]; put options under [global] or a job section",
            ));
        };
        // The values of ignored options are never used: they are not expanded
        // (so `filename=${DEV}` needs no DEV).
        let value = match value {
            Some(v) if ignored_reason(key).is_none() => {
                let v = expand_env(v).map_err(|m| error(file, lineno, Some(key), m))?;
                Some(
                    substitute_keywords(&v, self.keywords.as_ref())
                        .map_err(|m| error(file, lineno, Some(key), m))?,
                )
            }
            v => v.map(str::to_string),
        };
        section.entries.push(Entry {
            at: Loc {
                file: file.to_string(),
                line: lineno,
                key: key.to_string(),
            },
            value,
        });
        Ok(())
    }

    /// Hand the section read so far (with its `kb_base`) to the jobs: a
    /// global section updates the defaults, a job is emitted.
    fn finish_section(&mut self) -> Result<(), WorkloadError> {
        let Some(pending) = self.current.take() else {
            return Ok(());
        };
        let kb = pending.kb_base()?;
        self.jobs.section(pending, kb)
    }

    /// End of input: emit the last section and check the job references.
    pub(super) fn finish(mut self) -> Result<Workload, WorkloadError> {
        self.finish_section()?;
        self.jobs.finish(&self.top_file)
    }
}

/// Build an error located in `file` at `line` (0 = whole file).
pub(super) fn error(
    file: &str,
    line: usize,
    option: Option<&str>,
    message: impl Into<String>,
) -> WorkloadError {
    WorkloadError {
        file: file.to_string(),
        line,
        option: option.map(str::to_string),
        message: message.into(),
    }
}

/// Resolve `name` against the directory of `file` (unless it is absolute).
pub(super) fn relative_to(file: &str, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    match Path::new(file).parent() {
        Some(dir) => dir.join(p),
        None => p.to_path_buf(),
    }
}

/// fio's reserved keywords `$pagesize`, `$ncpus`, `$mb_memory` in `v`,
/// replaced by the simulated host's values; as fio (which hands the result
/// to `bc`), a value that then is integer arithmetic (`8*$mb_memory`,
/// `($ncpus/2)`) is evaluated. Values without keywords are returned as they are.
fn substitute_keywords(v: &str, kw: Option<&super::HostKeywords>) -> Result<String, String> {
    const WORDS: [&str; 3] = ["$pagesize", "$ncpus", "$mb_memory"];
    if !WORDS.iter().any(|w| v.contains(w)) {
        return Ok(v.to_string());
    }
    let Some(kw) = kw else {
        return Err(format!("'{v}': fio's $pagesize, $ncpus and $mb_memory stand for the simulated host's values, which are known only with a device: `ssdlab run` substitutes them from its [host] section"));
    };
    let mut out = v.to_string();
    for w in WORDS {
        if !out.contains(w) {
            continue;
        }
        let value = match w {
            "$pagesize" => kw.pagesize,
            "$ncpus" => kw.ncpus.map(u64::from).ok_or_else(|| {
                format!("'{v}': $ncpus is the simulated host's CPU count, but host.cores is 0 (one CPU per thread); set host.cores")
            })?,
            _ => kw.mb_memory.ok_or_else(|| {
                format!("'{v}': $mb_memory is the simulated host's memory, but host.memory is 0; set host.memory")
            })?,
        };
        out = out.replace(w, &value.to_string());
    }
    if out.contains(['*', '+', '/', '%', '^', '(']) || out.trim_start_matches('-').contains('-') {
        if !out
            .chars()
            .all(|c| c.is_ascii_digit() || "+-*/%^() ".contains(c))
        {
            return Err(format!("'{v}' (= '{out}'): arithmetic mixed with units or other text is not supported yet; write the product in bytes (e.g. 8*$mb_memory*1048576)"));
        }
        return eval_int(&out)
            .map(|n| n.to_string())
            .map_err(|m| format!("'{v}' (= '{out}'): {m}"));
    }
    Ok(out)
}

/// Integer arithmetic with `+ - * / % ^` and parentheses (fio's operators),
/// usual precedence, `^` right-associative; the result must be non-negative.
fn eval_int(s: &str) -> Result<u64, String> {
    fn expr(t: &[u8], i: &mut usize) -> Result<i128, String> {
        let mut v = term(t, i)?;
        while *i < t.len() && (t[*i] == b'+' || t[*i] == b'-') {
            let op = t[*i];
            *i += 1;
            let r = term(t, i)?;
            v = if op == b'+' { v + r } else { v - r };
        }
        Ok(v)
    }
    fn term(t: &[u8], i: &mut usize) -> Result<i128, String> {
        let mut v = power(t, i)?;
        while *i < t.len() && matches!(t[*i], b'*' | b'/' | b'%') {
            let op = t[*i];
            *i += 1;
            let r = power(t, i)?;
            v = match op {
                b'*' => v.checked_mul(r).ok_or("overflow")?,
                _ if r == 0 => return Err("division by zero".into()),
                b'/' => v / r,
                _ => v % r,
            };
        }
        Ok(v)
    }
    fn power(t: &[u8], i: &mut usize) -> Result<i128, String> {
        let b = atom(t, i)?;
        if *i < t.len() && t[*i] == b'^' {
            *i += 1;
            let e = power(t, i)?;
            let e = u32::try_from(e).map_err(|_| "bad exponent".to_string())?;
            return b.checked_pow(e).ok_or_else(|| "overflow".into());
        }
        Ok(b)
    }
    fn atom(t: &[u8], i: &mut usize) -> Result<i128, String> {
        match t.get(*i) {
            Some(b'(') => {
                *i += 1;
                let v = expr(t, i)?;
                if t.get(*i) != Some(&b')') {
                    return Err("unbalanced parentheses".into());
                }
                *i += 1;
                Ok(v)
            }
            Some(b'-') => {
                *i += 1;
                Ok(-atom(t, i)?)
            }
            Some(c) if c.is_ascii_digit() => {
                let start = *i;
                while *i < t.len() && t[*i].is_ascii_digit() {
                    *i += 1;
                }
                std::str::from_utf8(&t[start..*i])
                    .ok()
                    .and_then(|d| d.parse::<i128>().ok())
                    .ok_or_else(|| "number too large".into())
            }
            _ => Err("expected a number or '('".into()),
        }
    }
    let t: Vec<u8> = s.bytes().filter(|c| *c != b' ').collect();
    let mut i = 0;
    let v = expr(&t, &mut i)?;
    if i != t.len() {
        return Err("unexpected text after the expression".into());
    }
    u64::try_from(v).map_err(|_| "the result is negative or too large".into())
}

/// Replace each `${VAR}` of `v` by the value of the environment variable `VAR`.
fn expand_env(v: &str) -> Result<String, String> {
    let mut out = String::with_capacity(v.len());
    let mut rest = v;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!(
                "'{v}': '${{' without a closing '}}'; expected ${{NAME}}"
            ));
        };
        let name = &after[..end];
        if name.is_empty() {
            return Err(format!("'{v}': empty variable name in '${{}}'"));
        }
        match std::env::var(name) {
            Ok(x) => out.push_str(&x),
            Err(std::env::VarError::NotPresent) => {
                return Err(format!(
                    "environment variable '{name}' (in '{v}') is not set; set it (fio would \
                     silently use an empty string)"
                ))
            }
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(format!(
                    "environment variable '{name}' (in '{v}') is not valid UTF-8"
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `kb_base=` value.
fn parse_kb_base(value: Option<&str>) -> Result<KbBase, String> {
    match value {
        Some("1024") => Ok(KbBase::K1024),
        Some("1000") => Ok(KbBase::K1000),
        None | Some("") => Err("needs a value: 'kb_base=1024' or 'kb_base=1000'".into()),
        Some(v) => Err(format!(
            "'{v}' is not a kb_base; expected 1024 (fio's default: k, m, g, t, p are powers of \
             1024) or 1000 (k, m, g, t, p are powers of 1000, Ki, Mi, Gi, Ti, Pi of 1024)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_file;
    use crate::units::Time;
    use crate::workload::fio::test_util::*;
    use crate::workload::{BlockSize, Distribution, RwPattern};

    #[test]
    fn comments_blank_lines_and_whitespace() {
        let w = parse(
            "\u{feff}# a comment
; another comment
   # indented comment

[global]   ; trailing comment on a header
  bs = 8k        # trailing comment
\tiodepth\t=\t16\t; tab-separated
size=1g;no space before the comment, as fio allows
   ;

[ spaced name ]\r
rw = randwrite\r
time_based # flag with a comment
runtime=10
",
        );
        let j = &w.jobs[0];
        assert_eq!(j.name, "spaced name");
        assert_eq!(j.bs, 8 * KIB);
        assert_eq!(j.iodepth, 16);
        assert_eq!(j.size, Some(GIB));
        assert_eq!(j.rw, pattern(true, 0));
        assert!(j.time_based);
        assert_eq!(j.runtime, Some(Time::s(10)));
    }

    #[test]
    fn structural_errors() {
        assert_err("bs=4k\n[j]\n", 1, Some("bs"), "before any [section]");
        assert_err(
            "\n; c\ntime_based\n[j]\n",
            3,
            Some("time_based"),
            "before any [section]",
        );
        assert_err("[j]\n[job\n", 2, None, "malformed section header");
        assert_err("[j]\n[]\n", 2, None, "empty section name");
        assert_err("[j]\n= 4k\n", 2, None, "no option name");
        assert_err("[global]\nbs=4k\n", 0, None, "no jobs");
        assert_err("", 0, None, "no jobs");
        assert_err("; only comments\n", 0, None, "no jobs");
        assert_err("include common.fio\n[j]\n", 1, None, "before any [section]");
        assert_err("[j]\ninclude\n", 2, None, "include needs a file name");
        assert_err(
            "[j]\ninclude common.fio\n",
            2,
            None,
            "cannot read include file 'jobs/common.fio'",
        );
    }

    #[test]
    fn global_sections_apply_to_jobs_below_them() {
        let w = parse(
            "[global]
bs=4k
iodepth=8
rw=randread

[a]

[global]
bs=128k
rw=write

[b]
[c]
bs=8k
iodepth=1
[b]
",
        );
        let got: Vec<(&str, u64, u32, RwPattern)> = w
            .jobs
            .iter()
            .map(|j| (j.name.as_str(), j.bs, j.iodepth, j.rw))
            .collect();
        assert_eq!(
            got,
            [
                ("a", 4096, 8, pattern(true, 100)),
                ("b", 128 * KIB, 8, pattern(false, 0)),
                ("c", 8 * KIB, 1, pattern(false, 0)),
                // Same section name twice: two separate jobs.
                ("b", 128 * KIB, 8, pattern(false, 0)),
            ]
        );
    }

    #[test]
    fn job_settings_do_not_leak_into_later_jobs() {
        let w = parse("[a]\nbs=64k\nrw=write\ntime_based\nruntime=5\n[b]\n");
        assert_eq!(w.jobs[1].bs, 4096);
        assert_eq!(w.jobs[1].rw, pattern(false, 100));
        assert!(!w.jobs[1].time_based);
        assert_eq!(w.jobs[1].runtime, None);
    }

    #[test]
    fn fio_treats_sections_named_global_prefix_as_global() {
        let w = parse("[global-defaults]\nbs=16k\n[j]\n");
        assert_eq!(w.jobs.len(), 1);
        assert_eq!(w.jobs[0].bs, 16 * KIB);
    }

    #[test]
    fn errors_in_global_sections_are_located() {
        assert_err(
            "; header\n[global]\nbs=4k\niodepth=zero\n[j]\n",
            4,
            Some("iodepth"),
            "'zero' is not a number",
        );
    }

    #[test]
    fn kb_base_applies_to_the_whole_section_in_any_order() {
        // kb_base after the options it affects, as fio allows.
        let j = job("bs=4k\nsize=1g\nrate=1m,2MiB\nkb_base=1000\nrw=randwrite:8k");
        assert_eq!(j.bs, 4000);
        assert_eq!(j.size, Some(1_000_000_000));
        assert_eq!(j.rate, [Some(1_000_000), Some(2 * MIB), Some(2 * MIB)]);
        assert_eq!(j.offset_repeat, 8000);
        let j = job("kb_base=1000\nbsrange=4KiB-64KiB\nrandom_distribution=zoned_abs:100/1g");
        assert_eq!(
            j.block_sizes.map(|b| b[0].clone()),
            Some(BlockSize::Range {
                min: 4 * KIB,
                max: 64 * KIB
            })
        );
        assert_eq!(
            j.random_distribution[0],
            Distribution::ZonedAbs(vec![(100.0, 1_000_000_000)])
        );
        assert_eq!(job("kb_base=1024\nbs=4k").bs, 4 * KIB);
        // A [global] kb_base is inherited (even when given after its sizes);
        // a job can switch back.
        let w = parse(
            "[global]\nsize=1g\nkb_base=1000\n[a]\nbs=4k\n[b]\nkb_base=1024\nbs=4k\n[c]\nbs=4KiB\n",
        );
        let got: Vec<(u64, Option<u64>)> = w.jobs.iter().map(|j| (j.bs, j.size)).collect();
        assert_eq!(
            got,
            [
                (4000, Some(1_000_000_000)),
                (4 * KIB, Some(1_000_000_000)),
                (4 * KIB, Some(1_000_000_000))
            ]
        );
        // A job's kb_base does not change values inherited from [global].
        let w = parse("[global]\nbs=4k\n[a]\nkb_base=1000\n");
        assert_eq!(w.jobs[0].bs, 4 * KIB);
        // Errors, located.
        assert_value_err("kb_base=512", "kb_base", "expected 1024");
        assert_value_err("kb_base", "kb_base", "needs a value");
        assert_err(
            "[j]\nkb_base=1000\nbs=4k\nkb_base=1024\n",
            4,
            Some("kb_base"),
            "contradicts kb_base on line 2",
        );
        // The kb_base error comes first, wherever it is in the section.
        assert_err(
            "[j]\nbs=4KiB\nkb_base=1001\n",
            3,
            Some("kb_base"),
            "not a kb_base",
        );
        assert_err("[j]\nbs=4KiB\nkb_base=1024\n", 2, Some("bs"), "ambiguous");
        assert_eq!(job("kb_base=1000\nkb_base=1000\nbs=8k").bs, 8000);
    }

    #[test]
    fn host_keywords_are_the_simulated_hosts_values() {
        let kw = super::super::HostKeywords {
            pagesize: 4096,
            ncpus: Some(8),
            mb_memory: Some(16384),
        };
        let parse = |t: &str, k: Option<super::super::HostKeywords>| {
            super::super::parse_str_with(t, "k.fio", k)
        };
        let w = parse(
            "[j]\nbs=$pagesize\nnumjobs=$ncpus\nsize=8*$mb_memory\nio_size=($mb_memory/2)\noffset=$mb_memorym\n",
            Some(kw),
        )
        .unwrap();
        let j = &w.jobs[0];
        assert_eq!((j.bs, j.numjobs), (4096, 8));
        assert_eq!(j.size, Some(8 * 16384), "bytes, as fio: 8*16384");
        assert_eq!(j.io_size, Some(8192));
        assert_eq!(j.offset, 16384 << 20, "a unit after the keyword applies");
        for (t, k, needle) in [
            ("[j]\nsize=$mb_memory\n", None, "known only with a device"),
            (
                "[j]\nnumjobs=$ncpus\n",
                Some(super::super::HostKeywords { ncpus: None, ..kw }),
                "host.cores is 0",
            ),
            (
                "[j]\nsize=2*$mb_memorym\n",
                Some(kw),
                "arithmetic mixed with units",
            ),
            ("[j]\nsize=$mb_memory/0\n", Some(kw), "division by zero"),
            ("[j]\nsize=($mb_memory\n", Some(kw), "unbalanced"),
        ] {
            let e = parse(t, k).unwrap_err();
            assert_eq!(e.line, 2, "{t}");
            assert!(e.message.contains(needle), "{t}: {e}");
        }
    }

    #[test]
    fn include_pastes_options_in_place() {
        let dir = temp_dir("include");
        assert!(std::fs::create_dir_all(dir.join("inc/deeper")).is_ok());
        write(
            &dir.join("inc/common.fio"),
            "; shared\nbs=16k\ninclude deeper/qd.fio\nrw=randread\n",
        );
        write(&dir.join("inc/deeper/qd.fio"), "iodepth=8\n");
        write(&dir.join("global.fio"), "size=1g\n");
        let main = dir.join("main.fio");
        let w = ok(parse_at(
            "[global]\ninclude global.fio\n[a]\nbs=4k\ninclude inc/common.fio\n[b]\ninclude inc/common.fio\nbs=64k\niodepth=2\n",
            &main,
        ));
        let got: Vec<(u64, u32, Option<u64>, RwPattern)> = w
            .jobs
            .iter()
            .map(|j| (j.bs, j.iodepth, j.size, j.rw))
            .collect();
        assert_eq!(
            got,
            [
                (16 * KIB, 8, Some(GIB), pattern(true, 100)),
                (64 * KIB, 2, Some(GIB), pattern(true, 100))
            ]
        );
        // An absolute path, and kb_base from an included file covering the section.
        write(&dir.join("kb.fio"), "kb_base=1000\n");
        let kb = dir.join("kb.fio").display().to_string();
        let w = ok(parse_at(&format!("[a]\nbs=4k\ninclude {kb}\n"), &main));
        assert_eq!(w.jobs[0].bs, 4000);
        // parse_file resolves against the job file's directory too.
        write(&main, "[a]\ninclude inc/common.fio\n");
        assert_eq!(ok(parse_file(&main)).jobs[0].iodepth, 8);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn include_errors_are_located() {
        let dir = temp_dir("include-err");
        let main = dir.join("main.fio");
        let shown = main.display().to_string();
        // Missing file: the including file and line.
        let e = err(parse_at("[a]\nbs=4k\ninclude nope.fio\n", &main));
        assert_eq!((e.file.as_str(), e.line), (shown.as_str(), 3), "{e}");
        assert!(e.message.contains("cannot read include file"), "{e}");
        assert!(e.message.contains("nope.fio"), "{e}");
        // An error inside an included file names that file and its line.
        let bad = dir.join("bad.fio");
        write(&bad, "bs=4k\n\niodepth=zero\n");
        write(&dir.join("mid.fio"), "; one level more\ninclude bad.fio\n");
        let e = err(parse_at("[a]\ninclude mid.fio\n", &main));
        assert_eq!(
            (e.file.as_str(), e.line, e.option.as_deref()),
            (bad.display().to_string().as_str(), 3, Some("iodepth")),
            "{e}"
        );
        assert!(e.to_string().contains("bad.fio:3: option 'iodepth'"), "{e}");
        // Sections are not allowed in included files.
        write(&dir.join("sect.fio"), "bs=4k\n[other]\n");
        let e = err(parse_at("[a]\ninclude sect.fio\n", &main));
        assert!(e.file.ends_with("sect.fio") && e.line == 2, "{e}");
        assert!(
            e.message.contains("included files may only hold options"),
            "{e}"
        );
        // Cycles: a -> b -> a, and a file including itself.
        write(&dir.join("a.fio"), "bs=4k\ninclude b.fio\n");
        write(&dir.join("b.fio"), "iodepth=2\ninclude a.fio\n");
        let e = err(parse_at("[j]\ninclude a.fio\n", &main));
        assert!(e.file.ends_with("b.fio") && e.line == 2, "{e}");
        assert!(e.message.contains("include cycle"), "{e}");
        write(&main, "[j]\ninclude main.fio\n");
        let e = err(parse_file(&main));
        assert_eq!((e.file.as_str(), e.line), (shown.as_str(), 2), "{e}");
        assert!(e.message.contains("include cycle"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn environment_variables_expand() {
        std::env::set_var("SSDLAB_FIO_T1_BS", "16k");
        std::env::set_var("SSDLAB_FIO_T1_NAME", "dev0");
        std::env::set_var("SSDLAB_FIO_T1_EMPTY", "");
        std::env::remove_var("SSDLAB_FIO_T1_UNSET");
        let w = parse(
            "[global]\nbs=${SSDLAB_FIO_T1_BS}\n[job-${SSDLAB_FIO_T1_NAME}]\n\
             size=${SSDLAB_FIO_T1_EMPTY}2g\nrandom_distribution=zipf:1.${SSDLAB_FIO_T1_EMPTY}5\n",
        );
        let j = &w.jobs[0];
        assert_eq!(j.name, "job-dev0");
        assert_eq!(j.bs, 16 * KIB);
        assert_eq!(j.size, Some(2 * GIB));
        assert_eq!(
            j.random_distribution[0],
            Distribution::Zipf {
                theta: 1.5,
                center: None
            }
        );
        let e = assert_err(
            "[j]\nbs=4k\nsize=${SSDLAB_FIO_T1_UNSET}\n",
            3,
            Some("size"),
            "environment variable 'SSDLAB_FIO_T1_UNSET'",
        );
        assert!(e.message.contains("is not set"), "{e}");
        assert_err(
            "[job-${SSDLAB_FIO_T1_UNSET}]\n",
            1,
            None,
            "'SSDLAB_FIO_T1_UNSET' (in 'job-${SSDLAB_FIO_T1_UNSET}') is not set",
        );
        assert_value_err("bs=${SSDLAB_FIO_T1_BS", "bs", "without a closing");
        // Ignored options are not expanded: their values are not used.
        let w = parse("[j]\nfilename=${SSDLAB_FIO_T1_UNSET}\n");
        assert_eq!(w.ignored[0].option, "filename");
        assert_value_err("bs=${}", "bs", "empty variable name");
        // fio's keywords are still unsupported (and not taken for variables).
        assert_value_err("size=$mb_memory", "size", "simulated host");
    }
}
