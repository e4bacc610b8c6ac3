//! Tencent CBS traces ([`TraceFormat::Tencent`](super::TraceFormat::Tencent)).

use super::{ident, sectors, show, split_csv, time_field, Parsed};
use crate::workload::Op;

pub(super) fn parse_tencent(line: &str) -> Result<Parsed, String> {
    let mut f = [""; 5];
    let n = split_csv(line, &mut f);
    if n != 5 {
        return Err(format!(
            "tencent: expected 5 comma-separated fields (Timestamp,Offset,Size,IOType,VolumeID), found {n}"
        ));
    }
    let raw = time_field(f[0], "Timestamp", 12)?;
    let offset = sectors(f[1], "Offset")?;
    let len = sectors(f[2], "Size")?;
    let op = match f[3] {
        "1" => Op::Write,
        "0" => Op::Read,
        o => {
            return Err(format!(
                "IOType '{}' must be 0 (read) or 1 (write)",
                show(o)
            ))
        }
    };
    let vol = ident(f[4], "VolumeID")?;
    Ok(Parsed::Io {
        raw,
        op,
        offset,
        len,
        device: vol.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use crate::units::Time;
    use crate::workload::trace::testutil::{all, first_err, rec, TENCENT};
    use crate::workload::trace::TraceFormat;

    #[test]
    fn tencent_parses_with_and_without_header() {
        let r = all(TENCENT, TraceFormat::Tencent);
        assert_eq!(r[0], rec(Time::ZERO, true, 2154820608 * 512, 4096, "1283"));
        assert_eq!(r[1].time, Time::ZERO);
        assert_eq!(r[2], rec(Time::s(1), false, 61440 * 512, 256 * 512, "77"));
        let with_header = format!("Timestamp,Offset,Size,IOType,VolumeID\n{TENCENT}");
        assert_eq!(all(&with_header, TraceFormat::Tencent), r);
        // Only the first data line may be a header.
        let e = first_err(
            &format!("{TENCENT}Timestamp,Offset,Size,IOType,VolumeID\n"),
            TraceFormat::Tencent,
        );
        assert_eq!(e.line, 4);
    }
}
