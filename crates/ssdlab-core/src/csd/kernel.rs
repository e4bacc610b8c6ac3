//! The kernels seed 003 runs, as data: what each reads and writes per
//! element and what its loop costs, plus the functional computation on
//! int32 arrays (the values the drive really holds).
//!
//! A kernel is a row of [`KERNELS`]: its operation (one of the functional
//! operations below), how many input arrays it takes, how many global-memory
//! arrays its loop touches (seed 003's "(n)"), the loop body's compute
//! cycles, whether its next access depends on loaded values (a merge's
//! data-dependent branch), and the host CPU's cycles per element. A new
//! kernel with an existing operation and different costs is a new row.

use serde::Serialize;

/// The functional operation a kernel computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Operation {
    /// Occurrences of a value in one array.
    Count,
    /// Mean of one array.
    Average,
    /// Element-wise sum of two arrays (int32, wrapping as the FPGA's adder).
    VecAdd,
    /// Union of two sorted arrays, sorted, without duplicates.
    Merge,
}

/// A kernel's description and per-element costs.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct KernelSpec {
    /// Name (`count`, `average`, `vadd`, `merge`).
    pub name: &'static str,
    /// What it computes.
    pub description: &'static str,
    /// Functional operation.
    pub op: Operation,
    /// Input arrays.
    pub inputs: u32,
    /// Global-memory arrays its loop touches (inputs and output): seed 003's "(n)".
    pub args: u32,
    /// Whether it writes an output array (else one scalar).
    pub array_output: bool,
    /// Compute cycles of one loop iteration once its operands are on chip.
    pub op_cycles: u32,
    /// Global reads per loop iteration.
    pub reads_per_step: u32,
    /// The address of the next iteration's read depends on the values just
    /// read (a data-dependent branch): iterations cannot overlap.
    pub dependent: bool,
    /// Local buffers the optimised kernel declares (each of the buffer size).
    pub buffers: u32,
    /// Host CPU cycles per element, branch mispredictions aside
    /// (scalar code, one thread; docs/models/computational-storage.md).
    pub host_cycles: f64,
    /// Mispredicted branches per element on random input (a merge's
    /// which-side-is-smaller branch is a coin toss).
    pub host_mispredicts: f64,
}

/// The built-in kernels (seed 003's four).
pub const KERNELS: [KernelSpec; 4] = [
    KernelSpec {
        name: "count",
        description: "occurrences of a value in one int32 array",
        op: Operation::Count,
        inputs: 1,
        args: 1,
        array_output: false,
        op_cycles: 1,
        reads_per_step: 1,
        dependent: false,
        buffers: 1,
        host_cycles: 1.0,
        host_mispredicts: 0.0,
    },
    KernelSpec {
        name: "average",
        description: "mean of one int32 array",
        op: Operation::Average,
        inputs: 1,
        args: 1,
        array_output: false,
        op_cycles: 1,
        reads_per_step: 1,
        dependent: false,
        buffers: 1,
        host_cycles: 1.0,
        host_mispredicts: 0.0,
    },
    KernelSpec {
        name: "vadd",
        description: "element-wise sum of two int32 arrays into a third",
        op: Operation::VecAdd,
        inputs: 2,
        args: 3,
        array_output: true,
        op_cycles: 1,
        reads_per_step: 2,
        dependent: false,
        buffers: 1,
        host_cycles: 1.5,
        host_mispredicts: 0.0,
    },
    KernelSpec {
        name: "merge",
        description: "merge two sorted int32 arrays into a third, dropping duplicates",
        op: Operation::Merge,
        inputs: 2,
        args: 3,
        array_output: true,
        op_cycles: 2,
        reads_per_step: 2,
        dependent: true,
        buffers: 3,
        host_cycles: 4.0,
        host_mispredicts: 0.5,
    },
];

/// The kernel called `name`, or an error listing the known ones.
pub fn kernel(name: &str) -> Result<&'static KernelSpec, String> {
    KERNELS.iter().find(|k| k.name == name).ok_or_else(|| {
        let names: Vec<&str> = KERNELS.iter().map(|k| k.name).collect();
        format!(
            "unknown kernel '{name}' (expected one of: {})",
            names.join(", ")
        )
    })
}

/// What a kernel run computed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Output {
    /// Count: occurrences.
    Count {
        /// The value counted.
        value: i32,
        /// Its occurrences.
        count: u64,
    },
    /// Average: the mean (sum / n).
    Average {
        /// Sum of the elements.
        sum: i64,
        /// Elements.
        n: u64,
        /// Mean.
        mean: f64,
    },
    /// An output array (vadd, merge): its length and a checksum; the
    /// array itself is read back from the drive.
    Array {
        /// Elements.
        len: u64,
        /// CRC-32C of its little-endian bytes.
        crc32c: u32,
    },
}

/// What the kernel's loop did on this data (the timing model's input).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Work {
    /// Elements read (all inputs).
    pub elements_in: u64,
    /// Loop iterations (for merge: one per element taken, two taken at once
    /// when both sides are equal).
    pub steps: u64,
    /// Elements written (the output array; zero for a scalar).
    pub elements_out: u64,
}

/// Run `k` on `inputs` (one or two int32 arrays): the scalar result or the
/// output array, and the work done. `value` is Count's value.
pub fn compute(
    k: &KernelSpec,
    inputs: &[Vec<i32>],
    value: i32,
) -> Result<(Output, Option<Vec<i32>>, Work), String> {
    if inputs.len() != k.inputs as usize {
        return Err(format!(
            "kernel '{}' takes {} input array(s), {} given",
            k.name,
            k.inputs,
            inputs.len()
        ));
    }
    let a = &inputs[0];
    let n_in: u64 = inputs.iter().map(|v| v.len() as u64).sum();
    match k.op {
        Operation::Count => {
            let count = a.iter().filter(|&&x| x == value).count() as u64;
            Ok((
                Output::Count { value, count },
                None,
                Work {
                    elements_in: n_in,
                    steps: n_in,
                    elements_out: 0,
                },
            ))
        }
        Operation::Average => {
            if a.is_empty() {
                return Err(
                    "the average of an empty array is undefined (give at least one element)".into(),
                );
            }
            let sum: i64 = a.iter().map(|&x| x as i64).sum();
            let n = a.len() as u64;
            Ok((
                Output::Average {
                    sum,
                    n,
                    mean: sum as f64 / n as f64,
                },
                None,
                Work {
                    elements_in: n_in,
                    steps: n_in,
                    elements_out: 0,
                },
            ))
        }
        Operation::VecAdd => {
            let b = &inputs[1];
            if a.len() != b.len() {
                return Err(format!(
                    "vadd adds arrays of equal length; input 1 has {} elements, input 2 has {}",
                    a.len(),
                    b.len()
                ));
            }
            let out: Vec<i32> = a.iter().zip(b).map(|(x, y)| x.wrapping_add(*y)).collect();
            let w = Work {
                elements_in: n_in,
                steps: a.len() as u64,
                elements_out: out.len() as u64,
            };
            Ok((array_output(&out), Some(out), w))
        }
        Operation::Merge => {
            let b = &inputs[1];
            for (i, v) in [a, b].iter().enumerate() {
                if let Some(p) = v.windows(2).position(|w| w[0] > w[1]) {
                    return Err(format!(
                        "merge needs sorted inputs; input {} is not sorted at element {} ({} > {})",
                        i + 1,
                        p + 1,
                        v[p],
                        v[p + 1]
                    ));
                }
            }
            let (out, steps) = merge_unique(a, b);
            let w = Work {
                elements_in: n_in,
                steps,
                elements_out: out.len() as u64,
            };
            Ok((array_output(&out), Some(out), w))
        }
    }
}

fn array_output(out: &[i32]) -> Output {
    Output::Array {
        len: out.len() as u64,
        crc32c: crc32c(&to_bytes(out)),
    }
}

/// The sorted union of sorted `a` and `b` without duplicates, and the loop
/// iterations the two-pointer merge takes.
pub fn merge_unique(a: &[i32], b: &[i32]) -> (Vec<i32>, u64) {
    let mut out: Vec<i32> = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j, mut steps) = (0usize, 0usize, 0u64);
    let push = |out: &mut Vec<i32>, x: i32| {
        if out.last() != Some(&x) {
            out.push(x);
        }
    };
    while i < a.len() && j < b.len() {
        steps += 1;
        let (x, y) = (a[i], b[j]);
        if x < y {
            push(&mut out, x);
            i += 1;
        } else if y < x {
            push(&mut out, y);
            j += 1;
        } else {
            push(&mut out, x);
            i += 1;
            j += 1;
        }
    }
    for &x in &a[i..] {
        steps += 1;
        push(&mut out, x);
    }
    for &y in &b[j..] {
        steps += 1;
        push(&mut out, y);
    }
    (out, steps)
}

/// Little-endian bytes of an int32 array.
pub fn to_bytes(v: &[i32]) -> Vec<u8> {
    let mut b = Vec::with_capacity(v.len() * 4);
    for x in v {
        b.extend_from_slice(&x.to_le_bytes());
    }
    b
}

/// An int32 array from little-endian bytes (a multiple of 4).
pub fn from_bytes(b: &[u8]) -> Vec<i32> {
    b.chunks_exact(4)
        .map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// CRC-32C (Castagnoli) of `b`.
pub fn crc32c(b: &[u8]) -> u32 {
    const C: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);
    C.checksum(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_drops_duplicates_within_and_across() {
        let (m, steps) = merge_unique(&[1, 1, 3, 5], &[1, 2, 5, 9]);
        assert_eq!(m, vec![1, 2, 3, 5, 9]);
        // 1=1 (both), 1<2, 2<3, 3<5, 5=5 (both), then 9 alone.
        assert_eq!(steps, 6);
        assert_eq!(merge_unique(&[], &[]).0, Vec::<i32>::new());
        assert_eq!(merge_unique(&[], &[4, 4]).0, vec![4]);
    }

    #[test]
    fn errors_name_the_problem() {
        let k = kernel("merge").unwrap();
        let e = compute(k, &[vec![1, 3, 2], vec![1]], 0).unwrap_err();
        assert!(e.contains("input 1 is not sorted at element 2"), "{e}");
        let e = compute(kernel("vadd").unwrap(), &[vec![1], vec![1, 2]], 0).unwrap_err();
        assert!(e.contains("equal length"), "{e}");
        assert!(kernel("sort")
            .unwrap_err()
            .contains("count, average, vadd, merge"));
        let e = compute(kernel("average").unwrap(), &[vec![]], 0).unwrap_err();
        assert!(e.contains("empty"), "{e}");
    }
}
