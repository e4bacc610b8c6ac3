//! Typed units: simulated time, byte counts, addresses and rates.
//!
//! Time is an integer count of picoseconds (`u64` holds ~213 days), so bus
//! and TLP transfer times stay exact. Config strings always carry units:
//! `"16KiB"`, `"45us"`, `"1200MT/s"`, `"7.88GB/s"`, `"7%"`; a bare number
//! where a unit is needed is an error.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// Simulated time or duration, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

impl Time {
    /// Zero time.
    pub const ZERO: Time = Time(0);
    /// Largest representable time (used as "never").
    pub const MAX: Time = Time(u64::MAX);
    /// `n` picoseconds.
    pub const fn ps(n: u64) -> Time {
        Time(n)
    }
    /// `n` nanoseconds.
    pub const fn ns(n: u64) -> Time {
        Time(n * 1_000)
    }
    /// `n` microseconds.
    pub const fn us(n: u64) -> Time {
        Time(n * 1_000_000)
    }
    /// `n` milliseconds.
    pub const fn ms(n: u64) -> Time {
        Time(n * 1_000_000_000)
    }
    /// Whole seconds, as picoseconds.
    pub const fn s(n: u64) -> Time {
        Time(n * 1_000_000_000_000)
    }
    /// Picoseconds.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Nanoseconds (floating point).
    pub fn as_ns_f64(self) -> f64 {
        self.0 as f64 / 1e3
    }
    /// Nanoseconds, truncated.
    pub const fn as_ns(self) -> u64 {
        self.0 / 1_000
    }
    /// Seconds (floating point).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e12
    }
    /// From floating-point seconds (rounded to the nearest picosecond).
    pub fn from_secs_f64(s: f64) -> Time {
        Time((s * 1e12).round().max(0.0) as u64)
    }
    /// Saturating subtraction.
    pub fn saturating_sub(self, o: Time) -> Time {
        Time(self.0.saturating_sub(o.0))
    }
    /// Multiply a duration by an integer count.
    pub fn times(self, n: u64) -> Time {
        Time(self.0.saturating_mul(n))
    }
}

impl Add for Time {
    type Output = Time;
    fn add(self, o: Time) -> Time {
        Time(self.0 + o.0)
    }
}
impl AddAssign for Time {
    fn add_assign(&mut self, o: Time) {
        self.0 += o.0
    }
}
impl Sub for Time {
    type Output = Time;
    fn sub(self, o: Time) -> Time {
        Time(self.0 - o.0)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ps = self.0;
        if ps == 0 {
            write!(f, "0ns")
        } else if ps.is_multiple_of(1_000_000_000_000) {
            write!(f, "{}s", ps / 1_000_000_000_000)
        } else if ps.is_multiple_of(1_000_000_000) {
            write!(f, "{}ms", ps / 1_000_000_000)
        } else if ps.is_multiple_of(1_000_000) {
            write!(f, "{}us", ps / 1_000_000)
        } else if ps.is_multiple_of(1_000) {
            write!(f, "{}ns", ps / 1_000)
        } else {
            write!(f, "{}ps", ps)
        }
    }
}

/// A byte count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Bytes(pub u64);

impl Bytes {
    /// Kibibytes.
    pub const fn kib(n: u64) -> Bytes {
        Bytes(n * 1024)
    }
    /// Mebibytes.
    pub const fn mib(n: u64) -> Bytes {
        Bytes(n * 1024 * 1024)
    }
    /// Gibibytes.
    pub const fn gib(n: u64) -> Bytes {
        Bytes(n * 1024 * 1024 * 1024)
    }
    /// Raw count.
    pub const fn get(self) -> u64 {
        self.0
    }
}

impl Add for Bytes {
    type Output = Bytes;
    fn add(self, o: Bytes) -> Bytes {
        Bytes(self.0 + o.0)
    }
}

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        const UNITS: [(u64, &str); 5] = [
            (1 << 50, "PiB"),
            (1 << 40, "TiB"),
            (1 << 30, "GiB"),
            (1 << 20, "MiB"),
            (1 << 10, "KiB"),
        ];
        for (m, u) in UNITS {
            if b >= m && b.is_multiple_of(m) {
                return write!(f, "{}{}", b / m, u);
            }
        }
        if b >= 1_000_000_000 && b.is_multiple_of(1_000_000_000) {
            return write!(f, "{}GB", b / 1_000_000_000);
        }
        write!(f, "{}B", b)
    }
}

/// A data rate in bytes per second (wide type: no overflow above 2 GB/s).
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Bandwidth(pub f64);

impl Bandwidth {
    /// Bytes per second.
    pub fn bytes_per_s(self) -> f64 {
        self.0
    }
    /// Time to move `bytes` at this rate, rounded up to a whole picosecond.
    pub fn transfer_time(self, bytes: u64) -> Time {
        if bytes == 0 {
            return Time::ZERO;
        }
        // Manual ceil: f64::ceil is a libm call without SSE4.1, and this is on the hot path.
        // Past u64::MAX picoseconds (213 days) the cast saturates, and so
        // does the rounding up (it wrapped to zero before).
        let v = bytes as f64 * 1e12 / self.0;
        let t = v as u64;
        Time(if (t as f64) < v {
            t.saturating_add(1)
        } else {
            t
        })
    }
}

/// Division of a `u32` by a divisor fixed at set-up, as a multiply and a
/// shift instead of a hardware division (20-40 cycles): with
/// `m = floor(2^64 / d) + 1`, `floor(n / d)` is the high 64 bits of `m * n`
/// for every 32-bit `n` and `d >= 2` (Lemire, Kaser and Kurz, "Faster
/// remainder by direct computation", Software: Practice and Experience
/// 49(6), 2019); `d = 1` is handled apart, and `d = 0` (which callers
/// refuse before) gives a quotient of 0. Used by [`crate::nand::Geometry`]
/// (slot, row, block, unit and die numbers) and the FTL's closed-form fill.
#[derive(Clone, Copy, Debug, Default)]
pub struct FastDiv {
    d: u32,
    m: u64,
}

impl FastDiv {
    /// Dividing by `d`.
    pub fn new(d: u32) -> FastDiv {
        FastDiv {
            d,
            m: if d == 0 {
                0
            } else {
                (u64::MAX / d as u64).wrapping_add(1)
            },
        }
    }

    /// The divisor.
    #[inline(always)]
    pub fn divisor(self) -> u32 {
        self.d
    }

    /// `n / d`.
    #[inline(always)]
    pub fn quotient(self, n: u32) -> u32 {
        if self.d == 1 {
            n
        } else {
            ((self.m as u128 * n as u128) >> 64) as u32
        }
    }

    /// `(n / d, n % d)`.
    #[inline(always)]
    pub fn divmod(self, n: u32) -> (u32, u32) {
        let q = self.quotient(n);
        (q, n - q * self.d)
    }
}

/// [`Bandwidth::transfer_time`] of every multiple of 4 KiB up to 2 MiB,
/// worked out once: the hot path's transfers (flash pages, program units,
/// mapping units through DRAM) are such multiples, and a table read
/// replaces a floating-point division per transfer. Other sizes are
/// computed; every value is the one `transfer_time` gives.
#[derive(Clone, Debug)]
pub struct TransferTable {
    bw: Bandwidth,
    times: Box<[Time]>,
}

impl TransferTable {
    const SHIFT: u32 = 12;
    const ENTRIES: u64 = 512;

    /// The table for `bw`.
    pub fn new(bw: Bandwidth) -> TransferTable {
        TransferTable {
            bw,
            times: (0..=Self::ENTRIES)
                .map(|i| bw.transfer_time(i << Self::SHIFT))
                .collect(),
        }
    }

    /// Time to move `bytes`, rounded up to a whole picosecond.
    #[inline]
    pub fn time(&self, bytes: u64) -> Time {
        let i = bytes >> Self::SHIFT;
        if bytes & ((1 << Self::SHIFT) - 1) == 0 && i <= Self::ENTRIES {
            self.times[i as usize]
        } else {
            self.bw.transfer_time(bytes)
        }
    }
}

impl fmt::Display for Bandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        if v >= 1e9 {
            write!(f, "{:.3}GB/s", v / 1e9)
        } else if v >= 1e6 {
            write!(f, "{:.3}MB/s", v / 1e6)
        } else {
            write!(f, "{:.0}B/s", v)
        }
    }
}

/// Logical block address in units of the host sector (512 B or 4 KiB, per namespace format).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lba(pub u64);

/// Logical page number: index of a mapping unit in the logical space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lpn(pub u32);

/// Physical slot address: index of a mapping-unit-sized slot on the NAND,
/// `(unit * blocks_per_unit + block) * slots_per_block + offset`; see
/// `nand::Geometry` for the layout inside a block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ppa(pub u32);

impl Ppa {
    /// Sentinel meaning "unmapped".
    pub const NONE: Ppa = Ppa(u32::MAX);
}

impl Lpn {
    /// Sentinel meaning "no logical page" (free or invalid slot).
    pub const NONE: Lpn = Lpn(u32::MAX);
}

/// Energy in joules.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Energy(pub f64);

impl fmt::Display for Energy {
    /// In the largest of J, mJ, uJ, nJ, pJ that keeps the value at least 1,
    /// to 6 decimals with trailing zeros trimmed (`"40mJ"`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let j = self.0;
        let (v, u) = [(1.0, "J"), (1e-3, "mJ"), (1e-6, "uJ"), (1e-9, "nJ")]
            .into_iter()
            .find(|&(m, _)| j.abs() >= m)
            .map_or((j / 1e-12, "pJ"), |(m, u)| (j / m, u));
        let t = format!("{v:.6}");
        let t = t.trim_end_matches('0').trim_end_matches('.');
        write!(f, "{t}{u}")
    }
}

/// Error from parsing a unit string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitError(pub String);

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn split_num(s: &str) -> Result<(f64, &str), UnitError> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '_' || *c == '-' || *c == '+'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let num: String = num.chars().filter(|c| *c != '_').collect();
    if num.is_empty() {
        return Err(UnitError(format!("'{s}' does not start with a number")));
    }
    let v: f64 = num
        .parse()
        .map_err(|_| UnitError(format!("'{num}' is not a number")))?;
    if !v.is_finite() || v < 0.0 {
        return Err(UnitError(format!("'{s}' must be a non-negative number")));
    }
    Ok((v, unit.trim()))
}

/// Parse a duration such as `"45us"`, `"3.5ms"`, `"120ns"`, `"2s"`, `"500ps"`.
pub fn parse_time(s: &str) -> Result<Time, UnitError> {
    let (v, u) = split_num(s)?;
    let mult = match u {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        "" => {
            return Err(UnitError(format!(
                "'{s}' has no unit; expected a duration such as \"45us\" (ps, ns, us, ms, s)"
            )))
        }
        _ => {
            return Err(UnitError(format!(
                "'{s}': unknown time unit '{u}' (expected ps, ns, us, ms or s)"
            )))
        }
    };
    Ok(Time((v * mult).round() as u64))
}

/// Parse a size such as `"16KiB"`, `"960GB"`, `"64B"`, `"1TiB"` (binary and decimal prefixes).
pub fn parse_bytes(s: &str) -> Result<Bytes, UnitError> {
    let (v, u) = split_num(s)?;
    let mult: f64 = match u {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0f64.powi(4),
        "PiB" => 1024.0f64.powi(5),
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "PB" => 1e15,
        "" => {
            return Err(UnitError(format!(
                "'{s}' has no unit; expected a size such as \"16KiB\" (B, KiB, MiB, GiB, TiB, kB, MB, GB, TB)"
            )))
        }
        _ => {
            return Err(UnitError(format!(
                "'{s}': unknown size unit '{u}' (expected B, KiB, MiB, GiB, TiB, kB, MB, GB or TB)"
            )))
        }
    };
    let b = v * mult;
    if b.fract() != 0.0 {
        return Err(UnitError(format!("'{s}' is not a whole number of bytes")));
    }
    Ok(Bytes(b as u64))
}

/// Parse a rate: `"1200MT/s"` (transfers per second; multiply by bus width
/// for bytes) is returned as transfers/s by [`parse_transfer_rate`]; this
/// parses byte rates such as `"7.88GB/s"`, `"133MB/s"`, `"512MiB/s"`.
pub fn parse_bandwidth(s: &str) -> Result<Bandwidth, UnitError> {
    let t = s.trim();
    let Some(base) = t.strip_suffix("/s") else {
        return Err(UnitError(format!(
            "'{s}' is not a rate; expected bytes per second such as \"7.88GB/s\" or \"133MB/s\""
        )));
    };
    let b = split_num(base).and_then(|(v, u)| {
        let m = match u {
            "B" => 1.0,
            "kB" | "KB" => 1e3,
            "MB" => 1e6,
            "GB" => 1e9,
            "TB" => 1e12,
            "KiB" => 1024.0,
            "MiB" => 1024.0 * 1024.0,
            "GiB" => 1024.0f64.powi(3),
            _ => {
                return Err(UnitError(format!(
                    "'{s}': unknown rate unit '{u}/s' (expected B/s, kB/s, MB/s, GB/s, KiB/s, MiB/s, GiB/s)"
                )))
            }
        };
        Ok(v * m)
    })?;
    if b <= 0.0 {
        return Err(UnitError(format!("'{s}': a rate must be positive")));
    }
    Ok(Bandwidth(b))
}

/// Parse a transfer rate such as `"1200MT/s"` or `"1.6GT/s"`, returned in transfers per second.
pub fn parse_transfer_rate(s: &str) -> Result<f64, UnitError> {
    let (v, u) = split_num(s)?;
    let m = match u {
        "T/s" => 1.0,
        "kT/s" => 1e3,
        "MT/s" => 1e6,
        "GT/s" => 1e9,
        _ => {
            return Err(UnitError(format!(
                "'{s}': expected a transfer rate such as \"1200MT/s\" (T/s, kT/s, MT/s, GT/s)"
            )))
        }
    };
    if v <= 0.0 {
        return Err(UnitError(format!(
            "'{s}': a transfer rate must be positive"
        )));
    }
    Ok(v * m)
}

/// Parse a percentage such as `"7%"` into a fraction (0.07).
pub fn parse_percent(s: &str) -> Result<f64, UnitError> {
    let (v, u) = split_num(s)?;
    if u != "%" {
        return Err(UnitError(format!(
            "'{s}': expected a percentage such as \"7%\""
        )));
    }
    Ok(v / 100.0)
}

/// Parse a power such as `"35mW"`, `"8W"`, `"120uW"` into watts.
pub fn parse_power(s: &str) -> Result<f64, UnitError> {
    let (v, u) = split_num(s)?;
    let m = match u {
        "W" => 1.0,
        "mW" => 1e-3,
        "uW" | "µW" => 1e-6,
        "nW" => 1e-9,
        _ => {
            return Err(UnitError(format!(
                "'{s}': expected a power such as \"35mW\" (W, mW, uW, nW)"
            )))
        }
    };
    Ok(v * m)
}

/// Parse an energy such as `"2.5uJ"`, `"20pJ"` into joules.
pub fn parse_energy(s: &str) -> Result<f64, UnitError> {
    let (v, u) = split_num(s)?;
    let m = match u {
        "J" => 1.0,
        "mJ" => 1e-3,
        "uJ" | "µJ" => 1e-6,
        "nJ" => 1e-9,
        "pJ" => 1e-12,
        _ => {
            return Err(UnitError(format!(
                "'{s}': expected an energy such as \"2.5uJ\" (J, mJ, uJ, nJ, pJ)"
            )))
        }
    };
    Ok(v * m)
}

/// Parse an operation rate such as `"50Mop/s"` into operations per second.
pub fn parse_op_rate(s: &str) -> Result<f64, UnitError> {
    let (v, u) = split_num(s)?;
    let m = match u {
        "op/s" => 1.0,
        "kop/s" => 1e3,
        "Mop/s" => 1e6,
        "Gop/s" => 1e9,
        _ => {
            return Err(UnitError(format!(
                "'{s}': expected an operation rate such as \"50Mop/s\" (op/s, kop/s, Mop/s, Gop/s)"
            )))
        }
    };
    if v <= 0.0 {
        return Err(UnitError(format!("'{s}': a rate must be positive")));
    }
    Ok(v * m)
}

/// Parse a frequency such as `"100MHz"` or `"1GHz"` into hertz.
pub fn parse_frequency(s: &str) -> Result<f64, UnitError> {
    let (v, u) = split_num(s)?;
    let m = match u {
        "Hz" => 1.0,
        "kHz" => 1e3,
        "MHz" => 1e6,
        "GHz" => 1e9,
        _ => {
            return Err(UnitError(format!(
                "'{s}': expected a frequency such as \"100MHz\" (Hz, kHz, MHz, GHz)"
            )))
        }
    };
    if v <= 0.0 {
        return Err(UnitError(format!("'{s}': a frequency must be positive")));
    }
    Ok(v * m)
}

macro_rules! serialize_as_display {
    ($($t:ty),*) => {$(
        impl serde::Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
    )*};
}
serialize_as_display!(Time, Bytes, Bandwidth, Energy);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_division_is_exact_at_the_edges() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let extremes = [u32::MAX - 3, u32::MAX - 1, u32::MAX, (1 << 31) - 1, 1 << 31];
        let ds = [
            1u32,
            2,
            3,
            5,
            7,
            24,
            96,
            100,
            384,
            1152,
            1536,
            4096,
            5102,
            65_535,
            65_537,
            1 << 20,
        ];
        for d in ds.into_iter().chain(extremes) {
            let f = FastDiv::new(d);
            let near = |k: u32| [k.wrapping_sub(1), k, k.wrapping_add(1)];
            let ns = [0u32, 1, d - 1, d, u32::MAX, u32::MAX - 1]
                .into_iter()
                .chain((1..64u32).flat_map(|q| near(d.wrapping_mul(q))))
                .chain(extremes.into_iter().flat_map(near));
            for n in ns {
                assert_eq!(f.divmod(n), (n / d, n % d), "{n} / {d}");
            }
            for _ in 0..10_000 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let n = (x >> 32) as u32;
                assert_eq!(f.quotient(n), n / d, "{n} / {d}");
            }
        }
        assert_eq!(FastDiv::new(0).divmod(7), (0, 7));
    }

    proptest::proptest! {
        #[test]
        fn fast_division_is_exact(n in proptest::prelude::any::<u32>(), d in 1u32..) {
            proptest::prop_assert_eq!(FastDiv::new(d).divmod(n), (n / d, n % d));
        }
    }

    #[test]
    fn a_transfer_table_gives_what_transfer_time_gives() {
        // Rates that do and do not divide a picosecond grid evenly.
        for bw in [3.2e9, 1.2e9 / 7.0, 800e6, 25.6e9, 1.0] {
            let bw = Bandwidth(bw);
            let t = TransferTable::new(bw);
            for bytes in (0..600u64).map(|i| i * 4096).chain([
                1,
                512,
                4095,
                4097,
                12_000,
                2 << 20,
                (2 << 20) + 4096,
                1 << 30,
            ]) {
                assert_eq!(t.time(bytes), bw.transfer_time(bytes), "{bw:?} {bytes}");
            }
        }
        // 1 GiB at 1 B/s is past the picosecond clock's range: it saturates.
        assert_eq!(Bandwidth(1.0).transfer_time(1 << 30), Time(u64::MAX));
    }

    #[test]
    fn times_parse_exactly() {
        assert_eq!(parse_time("45us").unwrap(), Time::us(45));
        assert_eq!(parse_time("3.5ms").unwrap(), Time::us(3500));
        assert_eq!(parse_time("120ns").unwrap(), Time::ns(120));
        assert_eq!(parse_time("7ps").unwrap(), Time(7));
        assert!(parse_time("45").unwrap_err().0.contains("no unit"));
        assert!(parse_time("45 parsecs").is_err());
        assert!(parse_time("-1us").is_err());
    }

    #[test]
    fn sizes_parse_binary_and_decimal() {
        assert_eq!(parse_bytes("16KiB").unwrap(), Bytes(16384));
        assert_eq!(parse_bytes("960GB").unwrap(), Bytes(960_000_000_000));
        assert_eq!(parse_bytes("1TiB").unwrap(), Bytes(1 << 40));
        assert!(parse_bytes("4096").is_err());
        assert!(parse_bytes("0.3B").is_err());
    }

    #[test]
    fn rates_parse() {
        assert_eq!(parse_bandwidth("133MB/s").unwrap().0, 133e6);
        assert_eq!(parse_transfer_rate("1200MT/s").unwrap(), 1.2e9);
        assert!(parse_bandwidth("133MB").is_err());
        assert!((parse_percent("7%").unwrap() - 0.07).abs() < 1e-12);
        assert_eq!(parse_frequency("100MHz").unwrap(), 1e8);
    }

    #[test]
    fn transfer_time_rounds_up() {
        let bw = Bandwidth(1e9);
        assert_eq!(bw.transfer_time(1), Time(1000));
        assert_eq!(bw.transfer_time(4096), Time::ns(4096));
        assert_eq!(Bandwidth(3e9).transfer_time(1), Time(334));
    }

    #[test]
    fn display_round_trips() {
        for s in ["45us", "3ms", "120ns", "7ps", "2s"] {
            assert_eq!(parse_time(s).unwrap().to_string(), s);
        }
        assert_eq!(Bytes::kib(16).to_string(), "16KiB");
    }
}
