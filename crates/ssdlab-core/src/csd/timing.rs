//! How long a kernel runs on the FPGA: its loops on each compute unit, and
//! the DRAM bank they all share.
//!
//! The rules are Vitis HLS's (UG1399) and the memory's:
//! - A loop that reads one global array in order gets AXI bursts
//!   (`burst_beats` beats of the kernel's port width) and, pipelined at
//!   II = 1, takes one element per cycle once the first burst is in
//!   (`axi_latency_cycles`).
//! - A loop that touches several global arrays through the kernel's one port
//!   (seed 003: "global memory has only one port") gets no bursts: every
//!   element access is its own single-beat transaction, and an iteration's
//!   reads are ordered behind the previous iteration's write on that port,
//!   so each iteration waits one DRAM round trip (`dram_latency`).
//! - A loop whose next address depends on the value just read (a merge)
//!   cannot overlap iterations either: each waits for its read (a DRAM round
//!   trip from global memory, `local_latency_cycles` from an on-chip buffer).
//! - The bank moves one transaction at a time: its data beats at the bank's
//!   long-burst efficiency, plus a row switch (`row_switch`, tRP + tRCD) when
//!   the transaction's DRAM bank holds another stream's row. With S streams
//!   (arrays times CUs) spread over B DRAM banks (`dram_device_banks`) that
//!   happens with probability 1 - (1 - 1/B)^(S-1).
//! - With a local buffer of M bytes the kernel copies blocks of M/4
//!   elements between global memory and on-chip memory with burst loops,
//!   computes on chip, and pays the first-access latency of each copy loop
//!   once per block.
//! - Vitis HLS pipelines loops of 64 or more iterations by itself
//!   (`config_compile -pipeline_loops`, default 64): the pipeline pragma only
//!   changes loops shorter than that.
//! - Compute units share the bank. A CU alternates between work of its own
//!   and work at the bank; the bank serves one transaction at a time. Their
//!   throughput is that of a closed queueing network (exact mean-value
//!   analysis, one queue, N customers), so N CUs never beat N times one, per
//!   CU never falls below one CU's share, and the bank bounds the total.
//!   Several CUs' streams interleave at the bank, so their transactions pay
//!   row switches more often.
//!
//! The model counts cycles of the kernel clock; sources and what it leaves
//! out are in docs/models/computational-storage.md.

use super::config::FpgaConfig;
use super::kernel::{KernelSpec, Operation, Work};
use crate::units::Time;
use serde::Serialize;

/// Loops of at least this many iterations are pipelined without a pragma
/// (Vitis HLS `config_compile -pipeline_loops`, default 64; UG1399).
pub const AUTO_PIPELINE_TRIPS: u64 = 64;
/// Bytes of one int32 element.
const ELEM: f64 = 4.0;

/// How a kernel is built and run (seed 003's optimisations).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Variant {
    /// Compute units (each one kernel interface of the bank).
    pub compute_units: u32,
    /// Local (on-chip) buffer size per buffer, bytes.
    pub local_buffer: Option<u64>,
    /// `#pragma HLS pipeline II=1` on the loops.
    pub pipeline: bool,
}

impl Default for Variant {
    fn default() -> Self {
        Variant {
            compute_units: 1,
            local_buffer: None,
            pipeline: false,
        }
    }
}

/// A kernel run's timing.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Timing {
    /// Launch overhead (XRT enqueue), one per compute unit (seconds in JSON).
    #[serde(serialize_with = "super::secs")]
    pub launch: Time,
    /// The compute units' run, from the first start to the last end (seconds in JSON).
    #[serde(serialize_with = "super::secs")]
    pub run: Time,
    /// Kernel clock cycles of the run.
    pub cycles: f64,
    /// Cycles one CU spends per element when alone (its own work and its bank time).
    pub cycles_per_element: f64,
    /// Share of the run the bank is busy.
    pub bank_utilisation: f64,
    /// Throughput of each CU relative to one CU alone on the same share of work.
    pub per_cu_throughput: f64,
    /// What bounds the run: `compute` (the CUs' own loops), `bank` (the
    /// shared DRAM bank) or `latency` (dependent global reads).
    pub bound: &'static str,
    /// Bytes read from FPGA DRAM.
    pub dram_read: u64,
    /// Bytes written to FPGA DRAM.
    pub dram_written: u64,
}

/// One loop of a CU's work: iterations, the CU's own cycles per
/// iteration, the bank transactions per iteration (reads, writes) and their
/// data beats, and how many arrays it streams through the port at once.
struct Loop {
    iters: f64,
    cu: f64,
    rd_tx: f64,
    rd_beats: f64,
    wr_tx: f64,
    wr_beats: f64,
    arrays: f64,
}

/// A CU's loops and the cycles that do not overlap anything (pipeline
/// fill, the first access of each loop run).
#[derive(Default)]
struct Cost {
    loops: Vec<Loop>,
    fixed: f64,
    latency_bound: bool,
}

impl Cost {
    /// The CU's own cycles.
    fn cu(&self) -> f64 {
        self.loops.iter().map(|l| l.iters * l.cu).sum()
    }
    /// Bank cycles with `n` CUs streaming at once: each transaction's data
    /// beats, plus a row switch when another stream opened another row of
    /// its DRAM bank since its last access.
    fn bank(&self, n: u32, row: f64, banks: f64) -> f64 {
        self.loops
            .iter()
            .map(|l| {
                let p = row_conflict(n as f64 * l.arrays, banks);
                l.iters * (l.rd_tx * (l.rd_beats + row * p) + l.wr_tx * (l.wr_beats + row * p))
            })
            .sum()
    }
}

/// Probability that the next transaction of one of `streams` sequential
/// streams, each in one of `banks` DRAM banks at random, finds another row
/// open in its bank (another stream used that bank since its own last
/// access, round robin).
pub fn row_conflict(streams: f64, banks: f64) -> f64 {
    if streams <= 1.0 {
        return 0.0;
    }
    1.0 - (1.0 - 1.0 / banks).powf(streams - 1.0)
}

/// Time `k` doing `work` on the FPGA `f` built as `v`. Errors: more compute
/// units than the bank has interfaces, local buffers that do not fit on
/// chip, or a buffer that is not a whole number of elements.
pub fn kernel_time(
    f: &FpgaConfig,
    k: &KernelSpec,
    work: &Work,
    v: &Variant,
) -> Result<Timing, String> {
    let n_cu = v.compute_units;
    if n_cu == 0 {
        return Err("compute units must be at least 1".into());
    }
    if n_cu > f.max_compute_units() {
        return Err(format!(
            "{n_cu} compute units need {n_cu} kernel interfaces but the FPGA's {} bank(s) offer {} ({} per bank)",
            f.banks,
            f.max_compute_units(),
            f.interfaces_per_bank
        ));
    }
    if let Some(m) = v.local_buffer {
        if m < ELEM as u64 || m % ELEM as u64 != 0 {
            return Err(format!(
                "a local buffer of {m} B is not a whole number of int32 elements (a multiple of 4 B)"
            ));
        }
        let need = m * k.buffers as u64 * n_cu as u64;
        if need > f.onchip_memory.0 {
            return Err(format!(
                "{} local buffer(s) of {m} B on each of {n_cu} compute unit(s) need {need} B of on-chip memory; the FPGA has {} B",
                k.buffers, f.onchip_memory.0
            ));
        }
    }
    // Each CU takes an equal share of the work.
    let share = |x: u64| x.div_ceil(n_cu as u64) as f64;
    let steps = share(work.steps);
    let n_in = share(work.elements_in);
    let n_out = share(work.elements_out);
    let sched = f.axi_latency_cycles as f64;
    let dram = f.dram_latency_cycles;
    let local = f.local_latency_cycles as f64;
    let op = k.op_cycles as f64;
    let burst_bytes = f.burst_beats as f64 * f.port_bytes as f64;
    let burst_beats = (burst_bytes / f.bank_bytes_per_cycle).max(1.0);
    let per_burst = 1.0 / (burst_bytes / ELEM);
    let (rd1, wr1) = (1.0 / f.bank_read_efficiency, 1.0 / f.bank_write_efficiency);
    let (rdb, wrb) = (burst_beats * rd1, burst_beats * wr1);
    // A loop of `trips` iterations: pipelined (its II) or not (one
    // iteration's latency per iteration).
    let pipelined = |trips: f64| v.pipeline || trips >= AUTO_PIPELINE_TRIPS as f64;
    let writes_per_step = if k.array_output && steps > 0.0 {
        n_out / steps
    } else {
        0.0
    };
    let stream = |iters: f64, cu: f64, read: bool| Loop {
        iters,
        cu,
        rd_tx: if read { per_burst } else { 0.0 },
        rd_beats: rdb,
        wr_tx: if read { 0.0 } else { per_burst },
        wr_beats: wrb,
        arrays: 1.0,
    };
    let mut c = Cost::default();
    match v.local_buffer {
        None if k.args > 1 || k.dependent => {
            // Several arrays through one port (or a dependent read): no
            // bursts; each iteration's reads wait for their data (a DRAM
            // round trip) before the next can be ordered behind this
            // iteration's write on the same port.
            c.loops.push(Loop {
                iters: steps,
                cu: dram + op,
                rd_tx: k.reads_per_step as f64,
                rd_beats: rd1,
                wr_tx: writes_per_step,
                wr_beats: wr1,
                arrays: k.args as f64,
            });
            c.fixed += sched;
            c.latency_bound = true;
        }
        None => {
            // One array, read in order: bursts, one element per cycle when pipelined.
            let ii = if pipelined(steps) {
                op.max(1.0)
            } else {
                op + 2.0
            };
            c.loops.push(stream(steps, ii, true));
            c.fixed += sched + op + 2.0;
        }
        Some(m) => {
            let block = m as f64 / ELEM;
            let copy_ii = if pipelined(block) { 1.0 } else { local + 2.0 };
            match k.op {
                Operation::Merge => {
                    // Copy blocks of both inputs in, merge on chip (each
                    // step waits for its on-chip reads), copy the output out.
                    c.loops.push(stream(n_in, copy_ii, true));
                    c.loops.push(Loop {
                        iters: steps,
                        cu: local + op,
                        rd_tx: 0.0,
                        rd_beats: 0.0,
                        wr_tx: 0.0,
                        wr_beats: 0.0,
                        arrays: 0.0,
                    });
                    c.loops.push(stream(n_out, copy_ii, false));
                    let runs = (n_in / block).ceil() + (n_out / block).ceil();
                    c.fixed += runs * (sched + 2.0);
                }
                _ => {
                    // Per block: copy the first input in, compute on chip
                    // (reading the second input, if any, in order), copy the
                    // output out.
                    let blocks = (steps / block).ceil();
                    c.loops.push(stream(steps, copy_ii, true));
                    let compute_ii = if pipelined(block) {
                        op
                    } else {
                        local + op + 1.0
                    };
                    if k.inputs > 1 {
                        c.loops.push(stream(steps, compute_ii.max(1.0), true));
                    } else {
                        c.loops.push(Loop {
                            iters: steps,
                            cu: compute_ii,
                            rd_tx: 0.0,
                            rd_beats: 0.0,
                            wr_tx: 0.0,
                            wr_beats: 0.0,
                            arrays: 0.0,
                        });
                    }
                    if k.array_output {
                        c.loops.push(stream(n_out, copy_ii, false));
                    }
                    let loops = 1.0 + (k.inputs > 1) as u32 as f64 + k.array_output as u32 as f64;
                    c.fixed += blocks * (loops * (sched + 2.0) + local + op);
                }
            }
        }
    }
    let banks = f.dram_device_banks as f64;
    let row = f.row_switch_cycles;
    let own = c.cu();
    // One CU alone: its own cycles, or its bank time if that is longer.
    let alone = own.max(c.bank(1, row, banks));
    let d = c.bank(n_cu, row, banks);
    let z = (own - d).max(0.0);
    let (x, _) = mva(n_cu, d, z);
    // N CUs each finishing one share: N / X cycles (X in shares per cycle).
    let flow = if x > 0.0 { n_cu as f64 / x } else { 0.0 };
    let cycles = flow + c.fixed;
    let run = Time::from_secs_f64(cycles / f.clock_hz);
    let launch = f.launch_overhead.times(n_cu as u64);
    let bank_busy = n_cu as f64 * d;
    let bank_utilisation = if cycles > 0.0 {
        (bank_busy / cycles).min(1.0)
    } else {
        0.0
    };
    let per_cu = if cycles > 0.0 {
        (alone + c.fixed) / cycles
    } else {
        1.0
    };
    let bound = if bank_utilisation > 0.9 {
        "bank"
    } else if c.latency_bound {
        "latency"
    } else {
        "compute"
    };
    Ok(Timing {
        launch,
        run,
        cycles,
        cycles_per_element: if steps > 0.0 { alone / steps } else { 0.0 },
        bank_utilisation,
        per_cu_throughput: per_cu,
        bound,
        dram_read: work.elements_in * ELEM as u64,
        dram_written: work.elements_out * ELEM as u64,
    })
}

/// Exact mean-value analysis of a closed network: `n` customers, one FIFO
/// queue with service demand `d`, a delay (think) of `z`. Returns the
/// throughput (customers per unit time) and the queue's residence time.
pub fn mva(n: u32, d: f64, z: f64) -> (f64, f64) {
    let (mut q, mut x, mut r) = (0.0f64, 0.0f64, 0.0f64);
    for k in 1..=n {
        r = d * (1.0 + q);
        let cycle = z + r;
        x = if cycle > 0.0 { k as f64 / cycle } else { 0.0 };
        q = x * r;
    }
    (x, r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mva_bounds() {
        // One customer: the sum of its parts.
        let (x, _) = mva(1, 2.0, 8.0);
        assert!((x - 0.1).abs() < 1e-12);
        // Never above N alone, never above the queue's rate, never below one alone.
        for n in 1..=15 {
            let (x, _) = mva(n, 2.0, 8.0);
            assert!(x <= n as f64 * 0.1 + 1e-12 && (0.1 - 1e-12..=0.5 + 1e-12).contains(&x));
        }
        // No think time: the queue's rate whatever the population.
        assert!((mva(7, 4.0, 0.0).0 - 0.25).abs() < 1e-12);
    }
}
