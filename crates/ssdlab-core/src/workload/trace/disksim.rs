//! DiskSim / MQSim ASCII traces ([`TraceFormat::DiskSim`](super::TraceFormat::DiskSim)).

use super::{ident, sectors, show, split_ws, time_field, Parsed};
use crate::workload::Op;

pub(super) fn parse_disksim(line: &str, unit_ps: u64) -> Result<Parsed, String> {
    let mut f = [""; 5];
    let n = split_ws(line, &mut f);
    if n != 5 {
        return Err(format!(
            "disksim: expected 5 whitespace-separated fields (TIME DEVICE LBA SECTORS TYPE), found {n}"
        ));
    }
    // Parse in units of 1e-12 of the TIME unit, then scale exactly.
    let pico_units = time_field(f[0], "TIME", 12)?;
    let raw = pico_units
        .checked_mul(u128::from(unit_ps))
        .map(|v| v / 1_000_000_000_000)
        .ok_or_else(|| format!("TIME '{}' is too large", show(f[0])))?;
    let dev = ident(f[1], "DEVICE")?;
    let offset = sectors(f[2], "LBA")?;
    let len = sectors(f[3], "SECTORS")?;
    let op = match f[4] {
        "0" => Op::Write,
        "1" => Op::Read,
        o => return Err(format!("TYPE '{}' must be 0 (write) or 1 (read)", show(o))),
    };
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
    use crate::workload::trace::testutil::{all, reader, rec, DISKSIM};
    use crate::workload::trace::TraceFormat;

    #[test]
    fn disksim_parses() {
        let r = all(DISKSIM, TraceFormat::DiskSim);
        assert_eq!(r[0], rec(Time::ZERO, false, 1024 * 512, 4096, "0"));
        assert_eq!(r[1], rec(Time::ns(512_500), true, 2048 * 512, 8192, "0"));
        assert_eq!(r[2], rec(Time::ms(1), false, 4096 * 512, 4096, "1"));
        // MQSim: same layout in nanoseconds.
        let mq = "4851300 1 524288 16 0\n4864300 1 524304 16 0\n";
        let r: Vec<_> = reader(mq, TraceFormat::DiskSim)
            .with_disksim_time_unit(Time::ns(1))
            .map(|x| x.unwrap())
            .collect();
        assert_eq!(r[1].time, Time::ns(13_000));
    }
}
