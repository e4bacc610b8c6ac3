//! Alibaba block traces, 2020 ([`TraceFormat::Alibaba`](super::TraceFormat::Alibaba)).

use super::{ident, int, show, split_csv, time_field, Parsed};
use crate::workload::Op;

pub(super) fn parse_alibaba(line: &str) -> Result<Parsed, String> {
    let mut f = [""; 5];
    let n = split_csv(line, &mut f);
    if n != 5 {
        return Err(format!(
            "alibaba: expected 5 comma-separated fields (device_id,opcode,offset,length,timestamp), found {n}"
        ));
    }
    let dev = ident(f[0], "device_id")?;
    let op = match f[1] {
        "W" | "w" => Op::Write,
        "R" | "r" => Op::Read,
        o => return Err(format!("opcode '{}' is not R or W", show(o))),
    };
    let offset = int(f[2], "offset")?;
    let len = int(f[3], "length")?;
    let raw = time_field(f[4], "timestamp", 6)?;
    Ok(Parsed::Io {
        raw,
        op,
        offset,
        len,
        device: dev.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use crate::units::Time;
    use crate::workload::trace::testutil::{all, rec, ALIBABA};
    use crate::workload::trace::TraceFormat;

    #[test]
    fn alibaba_parses_with_header() {
        let r = all(ALIBABA, TraceFormat::Alibaba);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0], rec(Time::ZERO, false, 126703644672, 4096, "0"));
        assert_eq!(r[1], rec(Time::us(94), true, 38654705664, 16384, "0"));
        assert_eq!(r[2].time, Time::us(1292));
        assert_eq!(r[2].device, "3");
    }
}
