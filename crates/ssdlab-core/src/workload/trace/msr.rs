//! MSR Cambridge CSV traces ([`TraceFormat::Msr`](super::TraceFormat::Msr)).

use super::{ident, int, show, split_csv, Parsed};
use crate::workload::Op;

pub(super) fn parse_msr(line: &str) -> Result<Parsed, String> {
    let mut f = [""; 7];
    let n = split_csv(line, &mut f);
    if n != 7 {
        return Err(format!(
            "msr: expected 7 comma-separated fields \
             (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime), found {n}"
        ));
    }
    let ticks = int(f[0], "Timestamp")?;
    let host = ident(f[1], "Hostname")?;
    let disk = ident(f[2], "DiskNumber")?;
    let op = if f[3].eq_ignore_ascii_case("write") {
        Op::Write
    } else if f[3].eq_ignore_ascii_case("read") {
        Op::Read
    } else {
        return Err(format!("Type '{}' is not Read or Write", show(f[3])));
    };
    let offset = int(f[4], "Offset")?;
    let len = int(f[5], "Size")?;
    int(f[6], "ResponseTime")?;
    Ok(Parsed::Io {
        raw: u128::from(ticks) * 100_000,
        op,
        offset,
        len,
        device: format!("{host}_{disk}"),
    })
}

#[cfg(test)]
mod tests {
    use crate::units::Time;
    use crate::workload::trace::testutil::{all, rec, MSR};
    use crate::workload::trace::TraceFormat;

    #[test]
    fn msr_parses() {
        let r = all(MSR, TraceFormat::Msr);
        assert_eq!(r.len(), 4);
        assert_eq!(r[0], rec(Time::ZERO, false, 9175040, 4096, "hm_1"));
        // 13320526 ticks of 100 ns.
        assert_eq!(
            r[1],
            rec(Time::ns(1_332_052_600), true, 3154059264, 4096, "hm_1")
        );
        assert_eq!(r[3].device, "hm_0");
        assert_eq!(r[3].len, 65536);
    }
}
