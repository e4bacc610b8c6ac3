//! The drive's compute namespace, shaped like the NVMe Computational
//! Programs and Subsystem Local Memory command sets (NVMe 2.1): programs
//! are loaded into slots and activated, the FPGA's DRAM is the subsystem
//! local memory (SLM), memory range sets name the arrays a program works
//! on, and Execute Program runs an activated program on a range set. The
//! SLM holds real bytes (a sparse store), so a program computes on what was
//! copied there from the drive.
//!
//! Errors are the command sets' own cases: a program slot that is empty or
//! out of range, a program not activated, an invalid memory range,
//! insufficient resources (compute units, on-chip memory, program size).

use super::config::FpgaConfig;
use super::kernel::{self, KernelSpec, Output, Work};
use super::timing::{self, Timing, Variant};
use crate::device::store::DataStore;
use crate::units::Time;
use std::fmt;

/// Program slots the namespace offers (an assumption: XRT loads one xclbin
/// at a time; slots let several kernels stay loaded).
pub const PROGRAM_SLOTS: u16 = 8;
/// Memory range sets it keeps.
pub const RANGE_SETS: u16 = 16;

/// A compute-namespace command that cannot be carried out.
#[derive(Debug, Clone, PartialEq)]
pub enum CsError {
    /// No such program slot.
    InvalidSlot(u16),
    /// The slot holds no program.
    NoProgram(u16),
    /// The program is loaded but not activated.
    NotActivated(u16),
    /// The program cannot be loaded as asked (unknown kernel).
    InvalidProgram(String),
    /// A memory range outside the SLM, empty, or not whole int32 elements.
    InvalidMemoryRange(String),
    /// No such range set, or it does not fit the program's arguments.
    InvalidRangeSet(String),
    /// More than the FPGA has (compute units, on-chip memory, program size).
    InsufficientResources(String),
    /// The kernel refused its input (e.g. merge of unsorted arrays).
    Kernel(String),
}

impl fmt::Display for CsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CsError::InvalidSlot(s) => write!(
                f,
                "program slot {s} does not exist (slots 0 to {})",
                PROGRAM_SLOTS - 1
            ),
            CsError::NoProgram(s) => write!(f, "program slot {s} holds no program: load one first"),
            CsError::NotActivated(s) => {
                write!(
                    f,
                    "the program in slot {s} is not activated: activate it before executing"
                )
            }
            CsError::InvalidProgram(m) => write!(f, "invalid program: {m}"),
            CsError::InvalidMemoryRange(m) => write!(f, "invalid memory range: {m}"),
            CsError::InvalidRangeSet(m) => write!(f, "invalid memory range set: {m}"),
            CsError::InsufficientResources(m) => write!(f, "insufficient resources: {m}"),
            CsError::Kernel(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for CsError {}

struct Loaded {
    kernel: &'static KernelSpec,
    variant: Variant,
    active: bool,
}

/// What one Execute Program did.
#[derive(Debug, Clone)]
pub struct Execution {
    /// The result (a scalar, or the output array's length and checksum).
    pub output: Output,
    /// The output array, if the kernel writes one (also in the SLM).
    pub array: Option<Vec<i32>>,
    /// The loop work on this data.
    pub work: Work,
    /// Its timing on the FPGA.
    pub timing: Timing,
}

/// The compute namespace of one computational storage drive.
pub struct ComputeNamespace {
    fpga: FpgaConfig,
    slm: DataStore,
    slots: Vec<Option<Loaded>>,
    sets: Vec<Option<Vec<(u64, u64)>>>,
}

impl ComputeNamespace {
    /// The namespace of `fpga`, its SLM empty (reads as zeros).
    pub fn new(fpga: &FpgaConfig) -> ComputeNamespace {
        ComputeNamespace {
            fpga: fpga.clone(),
            slm: DataStore::memory(fpga.dram.0),
            slots: (0..PROGRAM_SLOTS).map(|_| None).collect(),
            sets: (0..RANGE_SETS).map(|_| None).collect(),
        }
    }

    /// Bytes of subsystem local memory (the FPGA's DRAM).
    pub fn slm_bytes(&self) -> u64 {
        self.fpga.dram.0
    }

    fn slot(&mut self, slot: u16) -> Result<&mut Option<Loaded>, CsError> {
        self.slots
            .get_mut(slot as usize)
            .ok_or(CsError::InvalidSlot(slot))
    }

    /// Load Program: kernel `name` built as `variant`, an image of
    /// `image_bytes`, into `slot` (inactive). Returns the load time.
    pub fn load_program(
        &mut self,
        slot: u16,
        name: &str,
        variant: Variant,
        image_bytes: u64,
    ) -> Result<Time, CsError> {
        let k = kernel::kernel(name).map_err(CsError::InvalidProgram)?;
        if !self.fpga.programs.iter().any(|p| p == name) {
            return Err(CsError::InvalidProgram(format!(
                "program type '{name}' is not offered by this drive (it offers: {})",
                self.fpga.programs.join(", ")
            )));
        }
        if image_bytes > self.fpga.max_program.0 {
            return Err(CsError::InsufficientResources(format!(
                "a program of {image_bytes} B is larger than the {} B the FPGA takes",
                self.fpga.max_program.0
            )));
        }
        // Resource checks (compute units, on-chip buffers) with no work.
        timing::kernel_time(&self.fpga, k, &Work::default(), &variant)
            .map_err(CsError::InsufficientResources)?;
        let load = self.fpga.program_load;
        *self.slot(slot)? = Some(Loaded {
            kernel: k,
            variant,
            active: false,
        });
        Ok(load)
    }

    /// Program Activation Management: activate the program in `slot`.
    pub fn activate(&mut self, slot: u16) -> Result<(), CsError> {
        match self.slot(slot)? {
            Some(p) => {
                p.active = true;
                Ok(())
            }
            None => Err(CsError::NoProgram(slot)),
        }
    }

    /// Memory Range Set Management: set `id` to `ranges` (SLM byte offset,
    /// length), each within the SLM and whole int32 elements.
    pub fn set_ranges(&mut self, id: u16, ranges: &[(u64, u64)]) -> Result<(), CsError> {
        let cap = self.fpga.dram.0;
        if ranges.is_empty() {
            return Err(CsError::InvalidMemoryRange(
                "a range set needs at least one range".into(),
            ));
        }
        for (i, &(off, len)) in ranges.iter().enumerate() {
            if off % 4 != 0 || len % 4 != 0 {
                return Err(CsError::InvalidMemoryRange(format!(
                    "range {i} (offset {off}, length {len}) is not aligned to whole int32 elements (multiples of 4 B)"
                )));
            }
            if off.checked_add(len).is_none_or(|end| end > cap) {
                return Err(CsError::InvalidMemoryRange(format!(
                    "range {i} (offset {off}, length {len}) ends beyond the {cap} B of FPGA memory"
                )));
            }
        }
        let n = self.sets.len();
        *self.sets.get_mut(id as usize).ok_or_else(|| {
            CsError::InvalidRangeSet(format!("range set {id} does not exist (0 to {})", n - 1))
        })? = Some(ranges.to_vec());
        Ok(())
    }

    /// Memory Write: `data` into the SLM at `offset` (from the host, or
    /// copied peer to peer from the drive).
    pub fn write(&mut self, offset: u64, data: &[u8]) -> Result<(), CsError> {
        self.slm
            .write(offset, data)
            .map_err(|e| CsError::InvalidMemoryRange(e.0))
    }

    /// Memory Read: the SLM at `offset` into `buf`.
    pub fn read(&mut self, offset: u64, buf: &mut [u8]) -> Result<(), CsError> {
        self.slm
            .read(offset, buf)
            .map_err(|e| CsError::InvalidMemoryRange(e.0))
    }

    /// Execute Program: run the activated program in `slot` on range set
    /// `set` (its inputs, then its output range for an array-writing
    /// kernel); `value` is Count's value. The output array is written to
    /// the output range.
    pub fn execute(&mut self, slot: u16, set: u16, value: i32) -> Result<Execution, CsError> {
        let (k, variant) = match self.slots.get(slot as usize) {
            None => return Err(CsError::InvalidSlot(slot)),
            Some(None) => return Err(CsError::NoProgram(slot)),
            Some(Some(p)) if !p.active => return Err(CsError::NotActivated(slot)),
            Some(Some(p)) => (p.kernel, p.variant),
        };
        let ranges = self
            .sets
            .get(set as usize)
            .cloned()
            .flatten()
            .ok_or_else(|| CsError::InvalidRangeSet(format!("range set {set} is not set")))?;
        let want = k.inputs as usize + k.array_output as usize;
        if ranges.len() != want {
            return Err(CsError::InvalidRangeSet(format!(
                "kernel '{}' takes {} range(s) ({} input(s){}), range set {set} has {}",
                k.name,
                want,
                k.inputs,
                if k.array_output {
                    " and the output"
                } else {
                    ""
                },
                ranges.len()
            )));
        }
        let mut inputs = Vec::with_capacity(k.inputs as usize);
        for &(off, len) in &ranges[..k.inputs as usize] {
            let mut b = vec![0u8; len as usize];
            self.read(off, &mut b)?;
            inputs.push(kernel::from_bytes(&b));
        }
        let (output, array, work) = kernel::compute(k, &inputs, value).map_err(CsError::Kernel)?;
        if let Some(out) = &array {
            let (off, len) = ranges[k.inputs as usize];
            let need = out.len() as u64 * 4;
            if need > len {
                return Err(CsError::InsufficientResources(format!(
                    "the output ({need} B) does not fit its range ({len} B)"
                )));
            }
            self.write(off, &kernel::to_bytes(out))?;
        }
        let timing = timing::kernel_time(&self.fpga, k, &work, &variant)
            .map_err(CsError::InsufficientResources)?;
        Ok(Execution {
            output,
            array,
            work,
            timing,
        })
    }
}
