//! Value lexing: what an option's value says, before any option gives it a
//! meaning. Integers and sizes in fio syntax (unit suffixes read according to
//! `kb_base`, `0x` hexadecimal), times with units, flags, counts,
//! percentages and decimal numbers, per-direction `reads,writes,trims` lists,
//! and the structured values of `rw=`, `bsrange=`, `bssplit=` and
//! `random_distribution=`. Errors are messages only; the caller adds the
//! file, line and option.

use crate::units::Time;
use crate::workload::Distribution;

/// Picoseconds per second.
pub(super) const PS_PER_S: u64 = 1_000_000_000_000;
/// Picoseconds per microsecond.
pub(super) const PS_PER_US: u64 = 1_000_000;

/// `kb_base=`: how unit prefixes of sizes are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) enum KbBase {
    /// fio's default compatibility mode: `k`, `m`, ... are powers of 1024
    /// (IEC prefixes, which fio reads as powers of 1000, are rejected).
    #[default]
    K1024,
    /// IEC 80000-13: `k`, `m`, ... are powers of 1000, `Ki`, `Mi`, ... of 1024.
    K1000,
}

/// `rw=` value, before the mix percentage is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RwKind {
    Read,
    Write,
    Mixed,
    RandRead,
    RandWrite,
    RandMixed,
    Trim,
    RandTrim,
    TrimWrite,
}

impl RwKind {
    pub(super) fn is_random(self) -> bool {
        matches!(
            self,
            RwKind::RandRead | RwKind::RandWrite | RwKind::RandMixed | RwKind::RandTrim
        )
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            RwKind::Read => "read",
            RwKind::Write => "write",
            RwKind::Mixed => "rw",
            RwKind::RandRead => "randread",
            RwKind::RandWrite => "randwrite",
            RwKind::RandMixed => "randrw",
            RwKind::Trim => "trim",
            RwKind::RandTrim => "randtrim",
            RwKind::TrimWrite => "trimwrite",
        }
    }
}

/// The `:N` suffix of `rw=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RwModifier {
    None,
    /// Sequential patterns: bytes skipped after each I/O.
    Skip(i64),
    /// Random patterns: I/Os per new random offset.
    Repeat(u32),
}

/// Split a per-direction value `read[,write[,trim]]` as fio does and parse
/// each field: a field not followed by a comma also applies to the
/// directions after it; an empty field leaves its direction unset (`None`).
pub(super) fn per_dir<T: Clone>(
    v: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<[Option<T>; 3], String> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > 3 {
        return Err(format!(
            "'{v}' has {} comma-separated values; expected at most 3 (reads, writes, trims)",
            parts.len()
        ));
    }
    let field = |i: usize| -> Result<Option<T>, String> {
        let p = parts[i.min(parts.len() - 1)];
        if p.is_empty() {
            return Ok(None);
        }
        let which = ["reads", "writes", "trims"][i];
        parse(p).map(Some).map_err(|e| {
            if parts.len() > 1 {
                format!("{e} (value for {which})")
            } else {
                e
            }
        })
    };
    Ok([field(0)?, field(1)?, field(2)?])
}

/// A `bsrange` field: `min-max` (or `min:max`) sizes.
pub(super) fn parse_bsrange(v: &str, kb: KbBase) -> Result<(u64, u64), String> {
    let Some((a, b)) = v.split_once(['-', ':']) else {
        return Err(format!(
            "'{v}' is not a range; expected min-max, e.g. 4k-64k"
        ));
    };
    let (min, max) = (parse_int(a.trim(), kb)?, parse_int(b.trim(), kb)?);
    if min == 0 {
        return Err(format!(
            "'{v}': the smallest block size must be greater than 0"
        ));
    }
    if max < min {
        return Err(format!(
            "'{v}': the largest block size is below the smallest"
        ));
    }
    Ok((min, max))
}

/// A percentage such as `50` or `12.5`, 0..=100.
fn parse_pct(v: &str) -> Result<f64, String> {
    let p = parse_float(v)?;
    if p > 100.0 {
        return Err(format!(
            "'{v}' is out of range; expected a percentage 0..=100"
        ));
    }
    Ok(p)
}

/// A non-negative decimal number such as `1.2`, `.5` or `3`.
fn parse_float(v: &str) -> Result<f64, String> {
    if v.starts_with('-') {
        return Err(format!("'{v}' is negative; expected a non-negative number"));
    }
    let ok = !v.is_empty()
        && v.chars().all(|c| c.is_ascii_digit() || c == '.')
        && v.chars().filter(|&c| c == '.').count() <= 1
        && v.chars().any(|c| c.is_ascii_digit());
    match v.parse::<f64>() {
        Ok(x) if ok => Ok(x),
        _ => Err(format!("'{v}' is not a number")),
    }
}

/// Check that a list of percentages adds up to 100.
fn check_sum_100(what: &str, sum: f64, v: &str) -> Result<(), String> {
    if (sum - 100.0).abs() > 1e-6 {
        return Err(format!(
            "'{v}': the {what} add up to {sum}%; they must add up to 100%"
        ));
    }
    Ok(())
}

/// A `bssplit` field: `size/percent:size/percent...`; entries without a
/// percentage (`4k/` or `4k`) share what the others leave of 100% equally.
pub(super) fn parse_bssplit(v: &str, kb: KbBase) -> Result<Vec<(u64, f64)>, String> {
    let mut entries = Vec::new();
    for e in v.split(':') {
        let (size, pct) = match e.split_once('/') {
            Some((s, p)) => (s.trim(), Some(p.trim()).filter(|p| !p.is_empty())),
            None => (e.trim(), None),
        };
        if size.is_empty() {
            return Err(format!("'{v}': empty entry; expected size/percent entries separated by ':', e.g. 4k/50:64k/50"));
        }
        let bytes = parse_int(size, kb)?;
        if bytes == 0 {
            return Err(format!("'{v}': block size must be greater than 0"));
        }
        entries.push((bytes, pct.map(parse_pct).transpose()?));
    }
    if entries.len() > 64 {
        return Err(format!(
            "'{v}' has {} entries; fio allows at most 64",
            entries.len()
        ));
    }
    let given: f64 = entries.iter().filter_map(|e| e.1).sum();
    let missing = entries.iter().filter(|e| e.1.is_none()).count();
    if given > 100.0 + 1e-6 {
        return Err(format!(
            "'{v}': the percentages add up to {given}%, more than 100%"
        ));
    }
    let share = if missing > 0 {
        let left = 100.0 - given;
        if left <= 1e-6 {
            return Err(format!(
                "'{v}': the given percentages leave nothing for the entries without one"
            ));
        }
        left / missing as f64
    } else {
        check_sum_100("percentages", given, v)?;
        0.0
    };
    Ok(entries
        .into_iter()
        .map(|(b, p)| (b, p.unwrap_or(share)))
        .collect())
}

/// A `center` argument (0.0..=1.0) of zipf, pareto and normal.
fn parse_center(v: &str) -> Result<f64, String> {
    let c = parse_float(v)?;
    if c > 1.0 {
        return Err(format!("center '{v}' is out of range; expected 0.0..=1.0"));
    }
    Ok(c)
}

/// A `random_distribution` field.
pub(super) fn parse_distribution(v: &str, kb: KbBase) -> Result<Distribution, String> {
    let (name, rest) = match v.split_once(':') {
        Some((n, r)) => (n.trim(), Some(r.trim())),
        None => (v, None),
    };
    // zipf, pareto, normal: value[:center].
    let args = |what: &str| -> Result<(f64, Option<f64>), String> {
        let Some(rest) = rest.filter(|r| !r.is_empty()) else {
            return Err(format!(
                "{name} needs a {what}: '{name}:<{what}>[:<center>]'"
            ));
        };
        let mut it = rest.split(':');
        let x = parse_float(it.next().unwrap_or("").trim())?;
        let center = it.next().map(|c| parse_center(c.trim())).transpose()?;
        if it.next().is_some() {
            return Err(format!(
                "'{v}' has too many values; expected '{name}:<{what}>[:<center>]'"
            ));
        }
        Ok((x, center))
    };
    Ok(match name {
        "random" => {
            if rest.is_some() {
                return Err(format!(
                    "'{v}': the uniform distribution 'random' takes no value"
                ));
            }
            Distribution::Uniform
        }
        "zipf" => {
            let (theta, center) = args("theta")?;
            if theta <= 0.0 || theta == 1.0 {
                return Err(format!(
                    "'{v}': zipf theta must be greater than 0 and different from 1.0 (as in fio)"
                ));
            }
            Distribution::Zipf { theta, center }
        }
        "pareto" => {
            let (h, center) = args("power")?;
            if h <= 0.0 || h >= 1.0 {
                return Err(format!(
                    "'{v}': the pareto power must be between 0 and 1 (exclusive)"
                ));
            }
            Distribution::Pareto { h, center }
        }
        "normal" => {
            let (dev, center) = args("deviation")?;
            if dev <= 0.0 || dev > 100.0 {
                return Err(format!("'{v}': the normal deviation must be greater than 0 and at most 100 (percent of the region)"));
            }
            Distribution::Normal { dev, center }
        }
        "zoned" | "zoned_abs" => {
            let Some(rest) = rest.filter(|r| !r.is_empty()) else {
                return Err(format!(
                    "{name} needs zones: '{name}:<access%>/<{}>:...'",
                    if name == "zoned" { "range%" } else { "size" }
                ));
            };
            let mut zones = Vec::new();
            let mut rest_share: Option<f64> = None;
            let count = rest.split(':').count();
            for (i, z) in rest.split(':').enumerate() {
                // fio: an empty share of the last zone is the rest of the region.
                if let Some(a) = z.strip_suffix('/').filter(|_| i + 1 == count) {
                    if name == "zoned_abs" {
                        return Err(format!(
                            "zone '{z}' of '{v}': an empty size (the rest of the region) is \
                             not supported for zoned_abs; give the size"
                        ));
                    }
                    let taken: f64 = zones
                        .iter()
                        .map(|(_, r): &(f64, &str)| parse_pct(r).unwrap_or(0.0))
                        .sum();
                    if taken >= 100.0 {
                        return Err(format!(
                            "'{v}': the other zones take the whole range; the last has nothing left"
                        ));
                    }
                    zones.push((parse_pct(a.trim())?, ""));
                    rest_share = Some(100.0 - taken);
                    continue;
                }
                let Some((a, r)) = z.split_once('/') else {
                    return Err(format!(
                        "zone '{z}' of '{v}': expected <access%>/<{}>",
                        if name == "zoned" { "range%" } else { "size" }
                    ));
                };
                zones.push((parse_pct(a.trim())?, r.trim()));
            }
            if zones.len() > 256 {
                return Err(format!(
                    "'{v}' has {} zones; fio allows at most 256",
                    zones.len()
                ));
            }
            check_sum_100("access percentages", zones.iter().map(|z| z.0).sum(), v)?;
            if name == "zoned" {
                let zones: Vec<(f64, f64)> = zones
                    .into_iter()
                    .map(|(a, r)| match (r, rest_share) {
                        ("", Some(x)) => Ok((a, x)),
                        _ => Ok((a, parse_pct(r)?)),
                    })
                    .collect::<Result<_, String>>()?;
                check_sum_100("range percentages", zones.iter().map(|z| z.1).sum(), v)?;
                if let Some(z) = zones.iter().find(|z| z.0 > 0.0 && z.1 == 0.0) {
                    return Err(format!(
                        "'{v}': a zone of 0% of the range cannot take {}% of the accesses",
                        z.0
                    ));
                }
                Distribution::Zoned(zones)
            } else {
                let zones: Vec<(f64, u64)> = zones
                    .into_iter()
                    .map(|(a, r)| Ok((a, parse_int(r, kb)?)))
                    .collect::<Result<_, String>>()?;
                if let Some(z) = zones.iter().find(|z| z.0 > 0.0 && z.1 == 0) {
                    return Err(format!(
                        "'{v}': a zone of 0 bytes cannot take {}% of the accesses",
                        z.0
                    ));
                }
                Distribution::ZonedAbs(zones)
            }
        }
        _ => {
            return Err(format!(
                "unknown distribution '{name}'; expected random, zipf:θ, pareto:h, normal:dev, \
                 zoned:... or zoned_abs:..."
            ))
        }
    })
}

/// The `:N` suffix of `rw=` (`v` is the whole value): for random patterns a
/// count of I/Os per new random offset, for sequential ones a size to skip
/// after each I/O.
pub(super) fn parse_rw_modifier(
    rw: RwKind,
    modifier: Option<&str>,
    v: &str,
    kb: KbBase,
) -> Result<RwModifier, String> {
    let Some(m) = modifier else {
        return Ok(RwModifier::None);
    };
    if rw.is_random() {
        let n = parse_int(m, kb).map_err(|e| {
            format!(
                "the ':{m}' modifier of a random pattern is a count of I/Os per random offset: {e}"
            )
        })?;
        if n == 0 {
            return Err(format!("'{v}': the I/O count after ':' must be at least 1"));
        }
        let n =
            u32::try_from(n).map_err(|_| format!("'{v}': the I/O count after ':' is too large"))?;
        Ok(RwModifier::Repeat(n))
    } else {
        let (neg, mag) = match m.trim().strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, m),
        };
        let skip = parse_int(mag, kb).map_err(|e| {
            format!(
                "the ':{m}' modifier of a sequential pattern is a size to skip after each I/O \
                 (negative: step back): {e}"
            )
        })?;
        let skip = i64::try_from(skip).map_err(|_| format!("'{v}': the skip is too large"))?;
        Ok(RwModifier::Skip(if neg { -skip } else { skip }))
    }
}

/// `rw=` values, with the `:N` modifier if any.
pub(super) fn parse_rw(v: &str) -> Result<(RwKind, Option<&str>), String> {
    let (kind, modifier) = match v.split_once(':') {
        Some((k, m)) => (k.trim(), Some(m)),
        None => (v, None),
    };
    let rw = match kind {
        "read" => RwKind::Read,
        "write" => RwKind::Write,
        "rw" | "readwrite" => RwKind::Mixed,
        "randread" => RwKind::RandRead,
        "randwrite" => RwKind::RandWrite,
        "randrw" => RwKind::RandMixed,
        "trim" => RwKind::Trim,
        "randtrim" => RwKind::RandTrim,
        "trimwrite" => RwKind::TrimWrite,
        "randtrimwrite" => {
            return Err(format!(
                "rw={kind} is not supported yet (trim, randtrim and trimwrite are)"
            ))
        }
        _ => {
            return Err(format!(
                "unknown I/O pattern '{v}'; expected read, write, randread, randwrite, rw, \
                 readwrite, randrw, trim, randtrim or trimwrite"
            ))
        }
    };
    if modifier.is_some_and(|m| m.trim().is_empty()) {
        return Err(format!(
            "'{v}': nothing after ':'; expected e.g. '{kind}:8'"
        ));
    }
    Ok((rw, modifier.map(str::trim)))
}

/// A flag: bare (`time_based`) or `0`/`1`.
pub(super) fn parse_flag(value: Option<&str>) -> Result<bool, String> {
    match value {
        None | Some("1") => Ok(true),
        Some("0") => Ok(false),
        Some(v) => Err(format!(
            "'{v}' is not a flag value; expected 0, 1 or the bare option name"
        )),
    }
}

/// A count that must fit `u32` and be at least 1 (`iodepth`, `numjobs`).
pub(super) fn parse_count(v: &str, kb: KbBase) -> Result<u32, String> {
    let n = parse_int(v, kb)?;
    if n == 0 {
        return Err("must be at least 1".into());
    }
    u32::try_from(n).map_err(|_| format!("'{v}' is too large (at most {})", u32::MAX))
}

/// A byte count (`size`, `offset`, `io_size`): like [`parse_int`], with a
/// specific message for fio's percentage form.
pub(super) fn parse_size(v: &str, kb: KbBase) -> Result<u64, String> {
    if v.ends_with('%') {
        return Err(format!(
            "percentage values ('{v}') are not supported yet; give a size in bytes"
        ));
    }
    parse_int(v, kb)
}

/// Reject value syntax fio evaluates but ssdlab does not (arithmetic,
/// `$` keywords), and negative numbers.
fn check_unsupported_syntax(v: &str) -> Result<(), String> {
    if v.starts_with('(') {
        return Err(format!(
            "arithmetic expressions ('{v}') are not supported yet"
        ));
    }
    if v.contains('$') {
        return Err(format!(
            "'{v}': fio keyword substitution ($pagesize, $ncpus, $mb_memory) is not supported yet"
        ));
    }
    if v.starts_with('-') {
        return Err(format!(
            "'{v}' is negative; expected a non-negative integer"
        ));
    }
    Ok(())
}

/// The leading decimal digits of `v` as a number, and the rest.
fn split_digits(v: &str) -> Result<(u64, &str), String> {
    let end = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    if end == 0 {
        return Err(format!("'{v}' is not a number"));
    }
    let (digits, rest) = v.split_at(end);
    let n = digits
        .parse::<u64>()
        .map_err(|_| format!("'{v}' is too large"))?;
    Ok((n, rest))
}

/// An integer in fio size syntax: `4096`, `4096b`, `4k`, `4KB`, `1m`, `10g`,
/// `2t`, `1p` (case-insensitive), or hexadecimal `0x1000`. With
/// `kb_base=1024` the prefixes are powers of 1024 and IEC prefixes (`Ki`...)
/// are rejected; with `kb_base=1000` they are powers of 1000 and `Ki`, `Mi`,
/// `Gi`, `Ti`, `Pi` (optionally followed by `b`) powers of 1024.
pub(super) fn parse_int(v: &str, kb: KbBase) -> Result<u64, String> {
    check_unsupported_syntax(v)?;
    if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        if hex.is_empty() || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!("'{v}' is not a hexadecimal number"));
        }
        return u64::from_str_radix(hex, 16).map_err(|_| format!("'{v}' is too large"));
    }
    let (n, suffix) = split_digits(v)?;
    let lower = suffix.to_ascii_lowercase();
    let si: u64 = match kb {
        KbBase::K1024 => 1024,
        KbBase::K1000 => 1000,
    };
    let (base, pow) = match lower.as_str() {
        "" | "b" => (1, 0),
        "k" | "kb" => (si, 1),
        "m" | "mb" => (si, 2),
        "g" | "gb" => (si, 3),
        "t" | "tb" => (si, 4),
        "p" | "pb" => (si, 5),
        "ki" | "kib" | "mi" | "mib" | "gi" | "gib" | "ti" | "tib" | "pi" | "pib" => {
            if kb == KbBase::K1024 {
                let letter = &lower[..1];
                return Err(format!(
                    "'{v}' is ambiguous: with fio's default kb_base=1024, IEC prefixes such as \
                     'Ki' are powers of 1000 (fio reads '4KiB' as 4000 bytes); write '{n}{letter}' \
                     for powers of 1024, set kb_base=1000 (then 'Ki' is 1024 and 'k' 1000), or \
                     give the exact byte count"
                ));
            }
            let pow = match &lower[..1] {
                "k" => 1,
                "m" => 2,
                "g" => 3,
                "t" => 4,
                _ => 5,
            };
            (1024, pow)
        }
        _ if lower.starts_with('.') => {
            return Err(format!(
            "'{v}': fractional values are not supported; use a smaller unit (e.g. 1536m, not 1.5g)"
        ))
        }
        _ if lower.ends_with('%') => return Err(format!("'{v}': a percentage is not valid here")),
        _ => {
            return Err(match kb {
                KbBase::K1024 => format!(
                    "'{v}' has an unknown unit suffix '{suffix}'; expected none (bytes) or \
                     b, k, m, g, t, p (powers of 1024, optionally followed by 'b')"
                ),
                KbBase::K1000 => format!(
                    "'{v}' has an unknown unit suffix '{suffix}'; expected none (bytes) or \
                     b, k, m, g, t, p (powers of 1000 with kb_base=1000) or ki, mi, gi, ti, pi \
                     (powers of 1024), optionally followed by 'b'"
                ),
            })
        }
    };
    base.checked_pow(pow)
        .and_then(|m| n.checked_mul(m))
        .ok_or_else(|| format!("'{v}' is too large"))
}

/// A duration in fio time syntax: a bare integer is seconds; suffixes
/// `us`/`usec`, `ms`/`msec`, `s`/`sec`, `m`/`min`, `h`/`hour`, `d`/`day`
/// (case-insensitive).
pub(super) fn parse_time(v: &str) -> Result<Time, String> {
    parse_time_unit(v, PS_PER_S, "seconds")
}

/// Like [`parse_time`], with `bare` picoseconds per unit for a bare integer
/// (named `bare_name` in messages).
pub(super) fn parse_time_unit(v: &str, bare: u64, bare_name: &str) -> Result<Time, String> {
    check_unsupported_syntax(v)?;
    let (n, suffix) = split_digits(v)?;
    let lower = suffix.to_ascii_lowercase();
    const S: u64 = PS_PER_S;
    let ps_per_unit: u64 = match lower.as_str() {
        "" => bare,
        "s" | "sec" => S,
        "us" | "usec" => PS_PER_US,
        "ms" | "msec" => 1_000_000_000,
        "m" | "min" => 60 * S,
        "h" | "hour" => 3_600 * S,
        "d" | "day" => 86_400 * S,
        _ if lower.starts_with('.') => {
            return Err(format!(
                "'{v}': fractional values are not supported; use a smaller unit (e.g. 1500ms, not 1.5s)"
            ))
        }
        _ => {
            return Err(format!(
                "'{v}' has an unknown time unit '{suffix}'; expected none ({bare_name}) or \
                 us, ms, s, m, h, d (also usec, msec, sec, min, hour, day)"
            ))
        }
    };
    n.checked_mul(ps_per_unit)
        .map(Time)
        .ok_or_else(|| format!("'{v}' is too long (at most about 213 days)"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::fio::test_util::*;
    use crate::workload::BlockSize;

    #[test]
    fn every_size_unit() {
        let cases: &[(&str, u64)] = &[
            ("0", 0),
            ("4096", 4096),
            ("4096b", 4096),
            ("4096B", 4096),
            ("4k", 4 * KIB),
            ("4K", 4 * KIB),
            ("4kb", 4 * KIB),
            ("4kB", 4 * KIB),
            ("4KB", 4 * KIB),
            ("4Kb", 4 * KIB),
            ("1m", MIB),
            ("1M", MIB),
            ("1mb", MIB),
            ("1MB", MIB),
            ("1024k", MIB),
            ("10g", 10 * GIB),
            ("10G", 10 * GIB),
            ("10GB", 10 * GIB),
            ("2t", 2 << 40),
            ("2T", 2 << 40),
            ("2tb", 2 << 40),
            ("1p", 1 << 50),
            ("1P", 1 << 50),
            ("1PB", 1 << 50),
            ("0x1000", 4096),
            ("0X1f", 31),
            ("16383p", 16383 << 50),
        ];
        for &(text, bytes) in cases {
            assert_eq!(parse_int(text, KbBase::K1024), Ok(bytes), "{text}");
        }
        // And through a job file, on every size option and alias.
        let j = job("bs=64K\nsize=10G\noffset=1m\nio_size=512m");
        assert_eq!(
            (j.bs, j.size, j.offset, j.io_size),
            (64 * KIB, Some(10 * GIB), MIB, Some(512 * MIB))
        );
        let j = job("blocksize=128k\nfileoffset=0x100000\nio_limit=2g");
        assert_eq!((j.bs, j.offset, j.io_size), (128 * KIB, MIB, Some(2 * GIB)));
    }

    #[test]
    fn every_time_unit() {
        let cases: &[(&str, Time)] = &[
            ("60", Time::s(60)),
            ("500us", Time::us(500)),
            ("500usec", Time::us(500)),
            ("500US", Time::us(500)),
            ("250ms", Time::ms(250)),
            ("250msec", Time::ms(250)),
            ("250MS", Time::ms(250)),
            ("30s", Time::s(30)),
            ("30sec", Time::s(30)),
            ("30S", Time::s(30)),
            ("2m", Time::s(120)),
            ("2min", Time::s(120)),
            ("2M", Time::s(120)),
            ("1h", Time::s(3600)),
            ("1hour", Time::s(3600)),
            ("1H", Time::s(3600)),
            ("1d", Time::s(86_400)),
            ("1day", Time::s(86_400)),
            ("1D", Time::s(86_400)),
            ("0", Time::ZERO),
        ];
        for &(text, t) in cases {
            assert_eq!(parse_time(text), Ok(t), "{text}");
        }
        let j = job("runtime=2m\nramp_time=5");
        assert_eq!(j.runtime, Some(Time::s(120)));
        assert_eq!(j.ramp_time, Time::s(5));
        assert_eq!(job("timeout=1500ms").runtime, Some(Time::ms(1500)));
    }

    #[test]
    fn kb_base_1000_units() {
        let k = KbBase::K1000;
        let cases: &[(&str, u64)] = &[
            ("4096", 4096),
            ("4k", 4000),
            ("4K", 4000),
            ("4kB", 4000),
            ("1m", 1_000_000),
            ("1MB", 1_000_000),
            ("1000k", 1_000_000),
            ("1g", 1_000_000_000),
            ("1t", 1_000_000_000_000),
            ("1p", 1_000_000_000_000_000),
            ("4ki", 4096),
            ("4Ki", 4096),
            ("4KiB", 4096),
            ("4kib", 4096),
            ("1mi", MIB),
            ("1024ki", MIB),
            ("10GiB", 10 * GIB),
            ("1ti", 1 << 40),
            ("1Pi", 1 << 50),
            ("0x1000", 4096),
        ];
        for &(text, bytes) in cases {
            assert_eq!(parse_int(text, k), Ok(bytes), "{text}");
        }
        assert!(parse_int("4x", k).is_err_and(|e| e.contains("powers of 1000")));
        // Default 1024 mode: IEC prefixes stay ambiguous errors.
        let e = parse_int("4KiB", KbBase::K1024).err().unwrap_or_default();
        assert!(e.contains("set kb_base=1000"), "{e}");
    }

    #[test]
    fn value_errors_name_file_line_and_option() {
        // Missing or empty values.
        assert_value_err("bs", "bs", "needs a value");
        assert_value_err("rw=", "rw", "empty value");
        assert_value_err("runtime =  ", "runtime", "empty value");
        // Patterns.
        assert_value_err("rw=randomread", "rw", "unknown I/O pattern 'randomread'");
        assert_value_err("readwrite=Read", "readwrite", "unknown I/O pattern");
        assert_value_err(
            "rw=randtrimwrite",
            "rw",
            "rw=randtrimwrite is not supported yet",
        );
        assert_value_err("rw=randread:0", "rw", "at least 1");
        assert_value_err("rw=randread:x", "rw", "count of I/Os");
        assert_value_err("rw=write:4x", "rw", "size to skip");
        assert_value_err("rw=write:", "rw", "nothing after ':'");
        // Sizes.
        assert_value_err("bs=4x", "bs", "unknown unit suffix 'x'");
        assert_value_err("bs=0", "bs", "greater than 0");
        assert_value_err("bs=4k,0", "bs", "greater than 0 (value for writes)");
        assert_value_err("bs=4k,8k,4k,4k", "bs", "at most 3");
        assert_value_err("bs=4KiB", "bs", "write '4k' for powers of 1024");
        assert_value_err("size=10GiB", "size", "fio reads '4KiB' as 4000 bytes");
        assert_value_err("size=-1", "size", "negative");
        assert_value_err("size=-4k", "size", "negative");
        assert_value_err(
            "size=50%",
            "size",
            "percentage values ('50%') are not supported yet",
        );
        assert_value_err("offset=10%", "offset", "not supported yet");
        assert_value_err("io_size=10%", "io_size", "not supported yet");
        assert_value_err("size=1.5g", "size", "fractional values are not supported");
        assert_value_err("size=big", "size", "not a number");
        assert_value_err("size=4 k", "size", "unknown unit suffix");
        assert_value_err("size=16384p", "size", "too large");
        assert_value_err("size=99999999999999999999", "size", "too large");
        assert_value_err("offset=0xZZ", "offset", "not a hexadecimal number");
        assert_value_err("size=(1024*1024)", "size", "arithmetic expressions");
        assert_value_err("bs=$pagesize", "bs", "simulated host");
        assert_value_err("size=10z", "size", "unknown unit suffix 'z'");
        // Counts.
        assert_value_err("iodepth=0", "iodepth", "at least 1");
        assert_value_err("numjobs=0", "numjobs", "at least 1");
        assert_value_err("number_ios=0", "number_ios", "at least 1");
        assert_value_err("iodepth=4294967296", "iodepth", "too large");
        assert_value_err("iodepth=-1", "iodepth", "negative");
        assert_value_err("randseed=x", "randseed", "not a number");
        // Times.
        assert_value_err("runtime=10 minutes", "runtime", "unknown time unit");
        assert_value_err("runtime=10ns", "runtime", "unknown time unit 'ns'");
        assert_value_err("ramp_time=1.5s", "ramp_time", "fractional");
        assert_value_err("runtime=-5", "runtime", "negative");
        assert_value_err("runtime=300d", "runtime", "too long");
        // Flags.
        assert_value_err("time_based=2", "time_based", "expected 0, 1");
        assert_value_err("norandommap=yes", "norandommap", "expected 0, 1");
    }

    #[test]
    fn bsrange_and_bssplit() {
        let j = job("bsrange=4k-64k\nrw=randwrite");
        let r = BlockSize::Range {
            min: 4 * KIB,
            max: 64 * KIB,
        };
        assert_eq!(j.block_sizes, Some([r.clone(), r]));
        let j = job("blocksize_range=4k:8k,16k-1m\nrw=randrw");
        assert_eq!(
            j.block_sizes,
            Some([
                BlockSize::Range {
                    min: 4 * KIB,
                    max: 8 * KIB
                },
                BlockSize::Range {
                    min: 16 * KIB,
                    max: MIB
                }
            ])
        );
        assert_eq!(j.bs, MIB);
        let j = job("bssplit=4k/50:64k/50");
        let s = BlockSize::Split(vec![(4 * KIB, 50.0), (64 * KIB, 50.0)]);
        assert_eq!(j.block_sizes, Some([s.clone(), s]));
        // fio's example: blank percentages share the remainder equally.
        let j = job("bssplit=4k/50:1k/:32k/");
        let s = BlockSize::Split(vec![(4 * KIB, 50.0), (KIB, 25.0), (32 * KIB, 25.0)]);
        assert_eq!(j.block_sizes.map(|b| b[0].clone()), Some(s));
        let j = job("bssplit=2k/50:4k/50,4k/90:8k/10\nrw=rw");
        assert_eq!(
            j.block_sizes,
            Some([
                BlockSize::Split(vec![(2 * KIB, 50.0), (4 * KIB, 50.0)]),
                BlockSize::Split(vec![(4 * KIB, 90.0), (8 * KIB, 10.0)])
            ])
        );
        // Precedence whatever the order: bssplit > bsrange > bs.
        let j = job("bssplit=8k/100\nbsrange=4k-16k\nbs=32k");
        assert_eq!(
            j.block_sizes.map(|b| b[0].clone()),
            Some(BlockSize::Split(vec![(8 * KIB, 100.0)]))
        );
        let j = job("bs=32k\nbsrange=4k-16k,");
        assert_eq!(
            j.block_sizes,
            Some([
                BlockSize::Range {
                    min: 4 * KIB,
                    max: 16 * KIB
                },
                BlockSize::Fixed(32 * KIB)
            ])
        );
        assert_value_err("bsrange=4k", "bsrange", "not a range");
        assert_value_err("bsrange=64k-4k", "bsrange", "below the smallest");
        assert_value_err("bsrange=0-4k", "bsrange", "greater than 0");
        assert_value_err("bssplit=4k/60:8k/50", "bssplit", "more than 100%");
        assert_value_err("bssplit=4k/60:8k/30", "bssplit", "add up to 90%");
        assert_value_err("bssplit=4k/100:8k/", "bssplit", "leave nothing");
        assert_value_err("bssplit=4k/50::8k/50", "bssplit", "empty entry");
        assert_value_err("bssplit=4k/x", "bssplit", "'x' is not a number");
        assert_value_err(
            "bssplit=4k/50:8k/50,4k/150",
            "bssplit",
            "(value for writes)",
        );
    }

    #[test]
    fn random_distributions() {
        use Distribution as D;
        let d = |v: &str| job(&format!("random_distribution={v}")).random_distribution;
        let both = |x: D| [x.clone(), x];
        assert_eq!(d("random"), both(D::Uniform));
        assert_eq!(
            d("zipf:1.2"),
            both(D::Zipf {
                theta: 1.2,
                center: None
            })
        );
        assert_eq!(
            d("zipf:0.8:0.25"),
            both(D::Zipf {
                theta: 0.8,
                center: Some(0.25)
            })
        );
        assert_eq!(
            d("pareto:0.2"),
            both(D::Pareto {
                h: 0.2,
                center: None
            })
        );
        assert_eq!(
            d("normal:5:0.5"),
            both(D::Normal {
                dev: 5.0,
                center: Some(0.5)
            })
        );
        assert_eq!(
            d("zoned:60/10:30/20:8/30:2/40"),
            both(D::Zoned(vec![
                (60.0, 10.0),
                (30.0, 20.0),
                (8.0, 30.0),
                (2.0, 40.0)
            ]))
        );
        assert_eq!(
            d("zoned_abs:60/20g:30/100g:10/500g"),
            both(D::ZonedAbs(vec![
                (60.0, 20 * GIB),
                (30.0, 100 * GIB),
                (10.0, 500 * GIB)
            ]))
        );
        assert_eq!(
            d("zipf:1.1,random"),
            [
                D::Zipf {
                    theta: 1.1,
                    center: None
                },
                D::Uniform
            ]
        );
        assert_eq!(d(",pareto:0.3")[0], D::Uniform);
        let e = |v: &str, needle: &str| {
            assert_value_err(
                &format!("random_distribution={v}"),
                "random_distribution",
                needle,
            )
        };
        e("zipf", "needs a theta");
        e("zipf:1", "different from 1.0");
        e("zipf:0", "greater than 0");
        e("zipf:1.2:1.5", "center '1.5' is out of range");
        e("zipf:1.2:0.5:1", "too many values");
        e("pareto:1.5", "between 0 and 1");
        e("normal:0", "greater than 0");
        e("normal:150", "at most 100");
        e("random:1", "takes no value");
        e("gauss:1", "unknown distribution 'gauss'");
        e("zipf:abc", "'abc' is not a number");
        e("zoned:60/10:30/90", "access percentages add up to 90%");
        // fio: an empty share of the last zone is the rest of the range.
        assert_eq!(
            d("zoned:50/5:30/15:20/"),
            both(D::Zoned(vec![(50.0, 5.0), (30.0, 15.0), (20.0, 80.0)]))
        );
        e("zoned:50/5:30/95:20/", "nothing left");
        e("zoned_abs:50/1g:50/", "not supported for zoned_abs");
        e("zoned:60/10:40/80", "range percentages add up to 90%");
        e("zoned:60/0:40/100", "0% of the range");
        e("zoned:60-10", "expected <access%>/<range%>");
        e("zoned", "needs zones");
        e("zoned_abs:100/1x", "unknown unit suffix");
        e("zipf:1.2,zipf:1", "(value for writes)");
    }
}
