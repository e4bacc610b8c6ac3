//! Computational-storage inputs without a drive: a kernel name, a build
//! (compute units, local buffer, pipelining), Count's value and two int32
//! arrays from the bytes; the compute namespace's commands on them
//! (load, activate, memory ranges, execute) and the timing model. Every
//! input is a result or a clear error.
use ssdlab_core::config::Device;
use ssdlab_core::csd::program::ComputeNamespace;
use ssdlab_core::csd::timing::Variant;

fn main() {
    let dev = Device::preset("smartssd-3.84t").expect("preset");
    let fpga = dev.fpga.clone().expect("fpga");
    afl::fuzz!(|data: &[u8]| {
        if data.len() < 16 {
            return;
        }
        let names = ["count", "average", "vadd", "merge", "sort"];
        let name = names[data[0] as usize % names.len()];
        let variant = Variant {
            compute_units: data[1] as u32 % 20,
            local_buffer: (data[2] != 0)
                .then(|| u32::from_le_bytes([data[3], data[4], data[5], 0]) as u64),
            pipeline: data[6] & 1 == 1,
        };
        let value = i32::from_le_bytes([data[7], data[8], data[9], data[10]]);
        let split = 16 + (data[11] as usize * 4).min(data.len() - 16) / 4 * 4;
        let to_i32 = |b: &[u8]| -> Vec<i32> {
            b.chunks_exact(4)
                .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        };
        let mut a = to_i32(&data[16..split]);
        let mut b = to_i32(&data[split..]);
        if data[12] & 1 == 1 {
            a.sort_unstable();
            b.sort_unstable();
        }
        let mut ns = ComputeNamespace::new(&fpga);
        let slot = (data[13] % 10) as u16;
        if ns
            .load_program(slot, name, variant, data[14] as u64 * (1 << 20))
            .is_err()
        {
            return;
        }
        if data[15] & 1 == 1 {
            let _ = ns.activate(slot);
        }
        let bytes = |v: &[i32]| ssdlab_core::csd::kernel::to_bytes(v);
        let (ab, bb) = (bytes(&a), bytes(&b));
        let _ = ns.write(0, &ab);
        let off_b = (ab.len() as u64).div_ceil(4096) * 4096;
        let _ = ns.write(off_b, &bb);
        let out = off_b + (bb.len() as u64).div_ceil(4096) * 4096;
        let ranges = [
            (0, ab.len() as u64),
            (off_b, bb.len() as u64),
            (out, ab.len() as u64 + bb.len() as u64),
        ];
        let n = 1 + (data[15] as usize >> 1) % 3;
        if ns.set_ranges(0, &ranges[..n]).is_ok() {
            let _ = ns.execute(slot, 0, value);
        }
    });
}
