//! The `[backend]` section of a device file: [`BackendFile`] as written,
//! [`Backend`] resolved, and its checks.

use crate::config::Collector;
use crate::device::nand::config::NandFile;
use crate::units::Bytes;
use serde::{Deserialize, Serialize};

/// `[backend]`: what stores the data.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackendFile {
    /// `"flash"` (default) or `"ramdisk"` (seed 000: data lives in controller DRAM, no FTL or NAND).
    pub kind: String,
    /// RAM-disk capacity (required for `ramdisk`).
    #[serde(default)]
    pub capacity: Option<String>,
}

/// Largest RAM disk accepted (14 TiB): its logical space is laid out as
/// one plane of 1 MiB blocks (see [`ramdisk_nand`]), at most
/// `nand::MAX_BLOCKS_PER_PLANE` of them and 32-bit mapping slots.
pub const MAX_RAMDISK: u64 = 14 << 40;

/// Storage behind the controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Backend {
    /// NAND flash through the FTL and flash scheduler.
    Flash,
    /// A RAM disk: reads and writes are served by controller DRAM at its bandwidth and latency.
    RamDisk {
        /// Capacity.
        capacity: Bytes,
    },
}

/// Resolve and check `[backend]` (`None`: the section is absent, a flash
/// drive), reporting problems to `c`.
pub(crate) fn resolve(file: Option<&BackendFile>, c: &mut Collector) -> Backend {
    match file.map(|b| b.kind.as_str()) {
        None | Some("flash") => {
            if file.is_some_and(|b| b.capacity.is_some()) {
                c.push("backend.capacity", "applies only to kind = \"ramdisk\"; a flash drive's capacity follows from [nand] and ftl.over_provisioning");
            }
            Backend::Flash
        }
        Some("ramdisk") => match file.and_then(|b| b.capacity.as_deref()) {
            Some(cap) => {
                let capacity = c.bytes("backend.capacity", cap);
                if capacity.0 > MAX_RAMDISK {
                    c.push(
                        "backend.capacity",
                        format!(
                            "{capacity} is larger than the largest RAM disk accepted ({})",
                            Bytes(MAX_RAMDISK)
                        ),
                    );
                }
                // (Clamped: the refused size is not laid out as well.)
                Backend::RamDisk {
                    capacity: Bytes(capacity.0.min(MAX_RAMDISK)),
                }
            }
            None => {
                c.push(
                    "backend.capacity",
                    "required for a RAM disk (e.g. \"1GiB\")",
                );
                Backend::RamDisk { capacity: Bytes(0) }
            }
        },
        Some(o) => {
            c.push(
                "backend.kind",
                format!("'{o}' is not a backend (expected \"flash\" or \"ramdisk\")"),
            );
            Backend::Flash
        }
    }
}

/// The NAND description a RAM-disk device carries internally (never accessed
/// by the data path; it only gives the logical space its size).
pub(crate) fn ramdisk_nand(capacity: Bytes) -> NandFile {
    let block = 256u64 * 4096;
    let blocks = (capacity.0 as f64 * 1.07 / block as f64).ceil() as u32 + 16;
    NandFile {
        channels: 1,
        chips_per_channel: 1,
        dies_per_chip: 1,
        planes_per_die: 1,
        blocks_per_plane: blocks.max(32),
        pages_per_block: 256,
        page_size: "4KiB".into(),
        cell: "slc".into(),
        t_read: vec!["1us".into()],
        t_prog: vec!["1us".into()],
        t_prog_one_shot: None,
        one_shot_program: false,
        t_erase: "1us".into(),
        multi_plane: true,
        cache_read: false,
        bus_rate: None,
        bus_width_bits: None,
        bus_bandwidth: Some("1GB/s".into()),
        t_cmd: "0ns".into(),
        t_suspend: "20us".into(),
        t_resume: "20us".into(),
        t_read_slc: None,
        t_prog_slc: None,
        endurance: None,
        factory_bad_blocks: None,
        grown_bad_rate: None,
    }
}
