//! fio's verify options as a section gives them, and the value syntax of
//! `verify=` and `verify_pattern=` / `buffer_pattern=`.

use super::grammar::Loc;
use crate::workload::VerifyMethod;

/// fio's verify options as given (built into a [`crate::workload::VerifySpec`]
/// when the job is finished).
#[derive(Debug, Clone)]
pub(super) struct VerifyOptions {
    /// `verify=`: a method, or `Some(None)` for `verify=0`; and where.
    pub(super) method: Option<(Option<VerifyMethod>, Loc)>,
    pub(super) pattern: Option<Vec<u8>>,
    pub(super) interval: Option<u64>,
    pub(super) do_verify: bool,
    pub(super) verify_only: bool,
    pub(super) backlog: u64,
    pub(super) batch: u64,
    pub(super) fatal: bool,
    /// The verify sub-options given (listed as ignored without `verify`).
    pub(super) given: Vec<String>,
}

impl Default for VerifyOptions {
    fn default() -> Self {
        VerifyOptions {
            method: None,
            pattern: None,
            interval: None,
            do_verify: true,
            verify_only: false,
            backlog: 0,
            batch: 0,
            fatal: false,
            given: Vec::new(),
        }
    }
}

/// fio's pattern syntax for `verify_pattern` / `buffer_pattern`: hex
/// (`0xdeadbeef`, bytes in the order written) and quoted strings
/// (`"abc"`, `'abc'`), concatenated.
pub(super) fn parse_pattern(v: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut rest = v.trim();
    while !rest.is_empty() {
        if let Some(h) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
            let n = h.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(h.len());
            let digits = &h[..n];
            if digits.is_empty() {
                return Err(format!("'{v}': '0x' needs hex digits"));
            }
            let padded = if digits.len() % 2 == 1 {
                format!("0{digits}")
            } else {
                digits.to_string()
            };
            for i in (0..padded.len()).step_by(2) {
                out.push(u8::from_str_radix(&padded[i..i + 2], 16).map_err(|e| e.to_string())?);
            }
            rest = h[n..].trim_start();
        } else if let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
            let body = &rest[1..];
            let end = body
                .find(q)
                .ok_or_else(|| format!("'{v}': a quoted string is not closed"))?;
            out.extend_from_slice(&body.as_bytes()[..end]);
            rest = body[end + 1..].trim_start();
        } else {
            return Err(format!(
                "'{v}': give the pattern as hex (0xdeadbeef) or quoted strings (\"abc\"), \
                 concatenated; decimal numbers and %o formats are not supported yet"
            ));
        }
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    if out.is_empty() {
        return Err(format!("'{v}': the pattern is empty"));
    }
    Ok(out)
}

/// `verify=`: fio's method names.
pub(super) fn parse_verify_method(v: &str) -> Result<Option<VerifyMethod>, String> {
    use VerifyMethod::*;
    Ok(Some(match v {
        "0" | "none" => return Ok(None),
        "md5" => Md5,
        "crc64" => Crc64,
        "crc32" => Crc32,
        "crc32c" | "crc32c-intel" => Crc32c,
        "crc16" => Crc16,
        "crc7" => Crc7,
        "sha1" => Sha1,
        "sha256" => Sha256,
        "sha512" => Sha512,
        "sha3-224" => Sha3_224,
        "sha3-256" => Sha3_256,
        "sha3-384" => Sha3_384,
        "sha3-512" => Sha3_512,
        "xxhash" => Xxhash,
        "meta" => Meta,
        "pattern" => Pattern,
        "pattern_hdr" => PatternHdr,
        "null" => Null,
        o => return Err(format!("'{o}' is not a verify method (expected md5, crc64, crc32, crc32c, crc32c-intel, crc16, crc7, sha1, sha256, sha512, sha3-224, sha3-256, sha3-384, sha3-512, xxhash, meta, pattern, pattern_hdr, null or 0)")),
    }))
}
