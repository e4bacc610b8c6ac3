//! Record selection ([`TraceFilter`]) and address remapping ([`Remap`]).

use super::TraceRecord;
use crate::units::Time;

/// Selects records by device and time window. The default keeps everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceFilter {
    /// Keep only this device (compared with [`TraceRecord::device`] exactly).
    pub device: Option<String>,
    /// Keep records at or after this time (since the first record of the file).
    pub start: Option<Time>,
    /// Keep records strictly before this time.
    pub end: Option<Time>,
}

impl TraceFilter {
    /// Whether the filter keeps `r`.
    pub fn keep(&self, r: &TraceRecord) -> bool {
        self.keep_at(r.time, &r.device)
    }

    /// Whether the filter keeps an operation at `time` on `device`.
    pub fn keep_at(&self, time: Time, device: &str) -> bool {
        self.device.as_deref().is_none_or(|d| d == device)
            && self.start.is_none_or(|s| time >= s)
            && self.end.is_none_or(|e| time < e)
    }
}

/// How trace offsets are mapped onto a drive of a given capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remap {
    /// `offset % capacity`.
    Wrap,
    /// `offset * capacity / max_offset`: spreads the trace's address space
    /// (`max_offset`, for example [`TraceStats::max_end_bytes`]) over the
    /// drive; lengths are not scaled.
    ///
    /// [`TraceStats::max_end_bytes`]: super::TraceStats::max_end_bytes
    Scale {
        /// Size of the trace's address space in bytes.
        max_offset: u64,
    },
}

impl Remap {
    /// Map the request `[offset, offset + len)` onto a drive of
    /// `capacity_bytes`, returning `(offset, len)`.
    ///
    /// The mapped start is aligned down to `align` and the length rounded up
    /// to a multiple of `align` (an `align` of 0 is taken as 1), so request
    /// sizes are kept. The result always lies inside the capacity rounded
    /// down to `align`: a request that would cross the end is moved back to
    /// end there, and one longer than the capacity is cut to it. A capacity
    /// smaller than `align` gives `(0, 0)`. For `Scale`, a `max_offset` of 0
    /// maps everything to 0. A length of 0 stays 0: a flush
    /// ([`Op::Flush`]) has no range and needs no
    /// remapping (it maps to `(0, 0)`).
    ///
    /// [`Op::Flush`]: crate::workload::Op::Flush
    pub fn apply(&self, offset: u64, len: u64, capacity_bytes: u64, align: u64) -> (u64, u64) {
        let align = u128::from(align.max(1));
        let cap = u128::from(capacity_bytes) / align * align;
        if cap == 0 {
            return (0, 0);
        }
        let start = match *self {
            Remap::Wrap => u128::from(offset) % cap,
            Remap::Scale { max_offset } => {
                if max_offset == 0 {
                    0
                } else {
                    u128::from(offset) * cap / u128::from(max_offset)
                }
            }
        };
        let a_start = start / align * align;
        let l = (u128::from(len).div_ceil(align) * align).min(cap);
        let s = if a_start + l > cap { cap - l } else { a_start };
        // Both are at most `cap`, which fits in u64.
        (s as u64, l as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::trace::testutil::{all, reader, MSR};
    use crate::workload::trace::{stats, TraceFormat};

    #[test]
    fn filter_by_device_and_window() {
        let r = all(MSR, TraceFormat::Msr);
        let f = TraceFilter {
            device: Some("hm_1".into()),
            ..TraceFilter::default()
        };
        assert_eq!(r.iter().filter(|x| f.keep(x)).count(), 3);
        let f = TraceFilter {
            device: None,
            start: Some(Time::s(1)),
            end: Some(Time::ns(2_332_052_600)),
        };
        // Records at 0, 1.332 s (kept), 2.332 s and 3.332 s.
        let kept: Vec<_> = r.iter().filter(|x| f.keep(x)).collect();
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].offset, 3154059264);
        assert!(r.iter().all(|x| TraceFilter::default().keep(x)));
        let st = stats(
            reader(MSR, TraceFormat::Msr),
            &TraceFilter {
                device: Some("hm_1".into()),
                start: Some(Time::s(1)),
                end: None,
            },
        )
        .unwrap();
        assert_eq!((st.records, st.writes), (2, 2));
        assert_eq!(st.first, Time::ns(1_332_052_600));
        assert_eq!(st.duration, Time::ns(1_000_009_000));
    }

    #[test]
    fn remap_wrap_and_scale() {
        let cap = 1 << 30; // 1 GiB
        assert_eq!(Remap::Wrap.apply(4096, 4096, cap, 4096), (4096, 4096));
        assert_eq!(Remap::Wrap.apply(cap + 8192, 4096, cap, 4096), (8192, 4096));
        // An unaligned start is aligned down; the length is kept, rounded up.
        assert_eq!(Remap::Wrap.apply(512, 4096, cap, 4096), (0, 4096));
        assert_eq!(Remap::Wrap.apply(8192 + 512, 1024, cap, 4096), (8192, 4096));
        // A request crossing the end is moved back inside.
        assert_eq!(
            Remap::Wrap.apply(cap - 4096, 16384, cap, 4096),
            (cap - 16384, 16384)
        );
        // Longer than the drive: cut to it.
        assert_eq!(Remap::Wrap.apply(0, 2 * cap, cap, 4096), (0, cap));
        assert_eq!(Remap::Wrap.apply(5, 1, 100, 0), (5, 1));
        assert_eq!(Remap::Wrap.apply(5, 1, 100, 4096), (0, 0));
        let s = Remap::Scale {
            max_offset: 4 * cap,
        };
        assert_eq!(s.apply(2 * cap, 4096, cap, 4096), (cap / 2, 4096));
        assert_eq!(s.apply(4 * cap - 4096, 4096, cap, 4096), (cap - 4096, 4096));
        assert_eq!(s.apply(3 * cap + 1000, 4096, cap, 512), (cap / 4 * 3, 4096));
        assert_eq!(s.apply(u64::MAX, 4096, cap, 4096), (cap - 4096, 4096));
        assert_eq!(Remap::Scale { max_offset: 0 }.apply(77, 8, cap, 1), (0, 8));
        // A flush has no range: (0, 0) stays (0, 0).
        assert_eq!(Remap::Wrap.apply(0, 0, cap, 4096), (0, 0));
        assert_eq!(s.apply(0, 0, cap, 4096), (0, 0));
    }
}
