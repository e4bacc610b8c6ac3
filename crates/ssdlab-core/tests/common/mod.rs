//! Devices shared by the integration tests.

use ssdlab_core::config::{Device, DeviceFile};

/// A small SLC drive (2 channels x 2 dies, 64 MiB raw, 25 % spare, 4 KiB
/// pages): a few passes of random writes keep garbage collection busy.
pub const SMALL_SLC: &str = r#"
name = "small"
[pcie]
generation = 3
lanes = 4
[cache]
write_buffer = "256KiB"
[ftl]
over_provisioning = "25%"
gc_threshold = 3
gc_hard_threshold = 2
[nand]
channels = 2
chips_per_channel = 2
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 64
pages_per_block = 64
page_size = "4KiB"
cell = "slc"
t_read = ["25us"]
t_prog = ["200us"]
t_erase = "2ms"
bus_bandwidth = "400MB/s"
"#;

/// The device described by `text` (a device file), resolved.
pub fn device(text: &str, name: &str) -> Device {
    DeviceFile::from_toml_str(text, name)
        .unwrap()
        .resolve(name)
        .unwrap()
}

/// [`SMALL_SLC`], resolved.
#[allow(dead_code)]
pub fn small_slc() -> Device {
    device(SMALL_SLC, "small")
}

/// A small SLC device with easy numbers: PCIe Gen1 x1 (250 MB/s = 4 ns/B),
/// 24 B per TLP, no DLLP overhead, 100 ns link latency; 400 MB/s NAND bus.
#[allow(dead_code)]
pub fn analytic_device(channels: u32, dies: u32, extra_nand: &str, extra: &str) -> Device {
    let text = format!(
        r#"
name = "analytic"
[host]
submit_overhead = "1us"
complete_overhead = "2us"
[pcie]
generation = 1
lanes = 1
max_payload = "256B"
max_read_request = "512B"
tlp_overhead = "24B"
dllp_overhead = "0%"
latency = "100ns"
[firmware]
fetch = "100ns"
parse = "200ns"
cache_lookup = "300ns"
translate = "400ns"
issue = "500ns"
complete = "600ns"
[cache]
write_buffer = "256KiB"
[ftl]
mapping_unit = "4KiB"
over_provisioning = "25%"
gc_threshold = 3
gc_hard_threshold = 2
[nand]
channels = {channels}
chips_per_channel = {dies}
dies_per_chip = 1
planes_per_die = 1
blocks_per_plane = 64
pages_per_block = 64
page_size = "4KiB"
cell = "slc"
t_read = ["25us"]
t_prog = ["200us"]
t_erase = "2ms"
bus_bandwidth = "400MB/s"
t_cmd = "100ns"
{extra_nand}
{extra}
"#
    );
    device(&text, "analytic")
}
