//! SNIA SPC / UMass CSV traces ([`TraceFormat::Spc`](super::TraceFormat::Spc)).

use super::{ident, int, sectors, show, split_csv, time_field, Parsed};
use crate::workload::Op;

pub(super) fn parse_spc(line: &str) -> Result<Parsed, String> {
    let mut f = [""; 5];
    let n = split_csv(line, &mut f);
    if n < 5 {
        return Err(format!(
            "spc: expected at least 5 comma-separated fields (ASU,LBA,Size,Opcode,Timestamp), found {n}"
        ));
    }
    let asu = ident(f[0], "ASU")?;
    let offset = sectors(f[1], "LBA")?;
    let len = int(f[2], "Size")?;
    let op = match f[3] {
        "w" | "W" => Op::Write,
        "r" | "R" => Op::Read,
        o => return Err(format!("Opcode '{}' is not r or w", show(o))),
    };
    let raw = time_field(f[4], "Timestamp", 12)?;
    Ok(Parsed::Io {
        raw,
        op,
        offset,
        len,
        device: asu.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use crate::units::Time;
    use crate::workload::trace::testutil::{all, rec, SPC};
    use crate::workload::trace::TraceFormat;

    #[test]
    fn spc_parses() {
        let r = all(SPC, TraceFormat::Spc);
        assert_eq!(r.len(), 4);
        assert_eq!(r[0], rec(Time::ZERO, true, 303567 * 512, 3584, "0"));
        assert_eq!(r[1].device, "1");
        assert_eq!(r[1].op, crate::workload::Op::Write);
        assert_eq!(r[2], rec(Time::us(26214), false, 303574 * 512, 3584, "0"));
        assert_eq!(r[3].device, "2");
    }
}
