"""Python overhead of sweeps: how much of a sweep's time is spent outside the
compiled core. Recorded in docs/performance.md ("Python").

    .venv/bin/python scripts/bench_python.py [--points 200] [--ios 20000]

A sweep of --points small runs (a 107 MB SLC test drive, 4 KiB random
reads, --ios I/Os per run, fill preconditioning) is timed three ways:

* sequential: one process, `backend="sequential"`;
* local: the process pool over all cores (`backend="local"`);
* plain loop: `ssdlab.run` in a Python loop (Device/Job edits, Result objects).

Wall-clock view: "core" is the time the compiled core reports for each run
(preconditioning, simulation, report, freeing the drive), summed; "outside"
is the rest of the wall time times the number of workers. On a machine
where other processes compete for the cores this charges their time to
Python, so the CPU-time view is printed too: CPU seconds of the sweep's
processes (the caller, and each worker up to its last run) against the CPU
seconds of the threads while inside the core.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import ssdlab

# The Python tests' small drive, without host driver costs (as measured in docs/performance.md).
SMALL = (Path(__file__).resolve().parents[1] / "tests" / "data" / "small-slc.toml").read_text()


def line(name: str, wall: float, core: float, workers: int, n: int) -> str:
    outside = max(0.0, wall * workers - core)
    share = outside / (wall * workers)
    return (f"{name:<11} {n:>6} {workers:>7} {wall:>9.2f} {core:>9.2f} {outside:>9.2f} {share * 100:>8.1f}% "
            f"{outside / n * 1e3:>9.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=200)
    ap.add_argument("--ios", type=int, default=20000)
    a = ap.parse_args()
    dev = ssdlab.Device.from_toml_str(SMALL, "small").with_(host__submit_overhead="0ns", host__complete_overhead="0ns")
    job = ssdlab.Job("rr", rw="randread", bs="4k", iodepth=8, io_size="1t", number_ios=a.ios)
    qds = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
    grid = {"job.iodepth": qds, "nand.channels": [1, 2, 4, 8]}
    seeds = max(1, a.points // (len(qds) * 4))
    import pandas  # noqa: F401  (imported up front, as in any notebook)

    print(f"{a.points} points: {len(qds)} queue depths x 4 channel counts x {seeds} seeds, {a.ios} I/Os each; "
          f"{os.cpu_count()} CPUs")
    print(f"{'mode':<11} {'runs':>6} {'workers':>7} {'wall s':>9} {'core s':>9} {'outside s':>9} {'outside':>9} "
          f"{'ms/run':>9}")
    cpu_rows = []
    import ssdlab._sweep as sw

    captured: list = []
    orig = sw.run_tasks

    def spy(*args, **kw):
        out = orig(*args, **kw)
        captured.append(out)
        return out

    sw.run_tasks = spy
    t = time.perf_counter()
    p0 = time.process_time()
    df = ssdlab.sweep(dev, job, grid, seeds=seeds, backend="sequential", progress=False)
    w = time.perf_counter() - t
    cpu_rows.append(("sequential", time.process_time() - p0, captured.pop(), True))
    print(line("sequential", w, df["core_s"].sum(), 1, len(df)))
    workers = os.cpu_count() or 1
    t = time.perf_counter()
    p0 = time.process_time()
    df2 = ssdlab.sweep(dev, job, grid, seeds=seeds, backend="local", progress=True)
    w = time.perf_counter() - t
    # the default local backend runs threads in this process: its CPU time covers them
    cpu_rows.append(("local", time.process_time() - p0, captured.pop(), True))
    print(line("local", w, df2["core_s"].sum(), workers, len(df2)))
    sw.run_tasks = orig
    t = time.perf_counter()
    core = 0.0
    n = 0
    for s in range(seeds):
        for q in qds:
            for c in (1, 2, 4, 8):
                r = ssdlab.run(dev.with_(nand__channels=c), job.with_(iodepth=q), seed=42 + s,
                               sample_interval=None, latency_histogram=False)
                core += r.core_seconds or 0.0
                n += 1
    w = time.perf_counter() - t
    print(line("plain loop", w, core, 1, n))
    print()
    print(f"{'CPU time':<11} {'total s':>9} {'core s':>9} {'outside s':>9} {'outside':>9}")
    for name, parent_cpu, res, same_process in cpu_rows:
        core_cpu = sum(r.get("core_cpu_s", 0.0) for r in res)
        if same_process:
            total = parent_cpu
        else:
            last = {}
            for r in res:
                last[r["pid"]] = max(last.get(r["pid"], 0.0), r["proc_cpu_s"])
            total = parent_cpu + sum(last.values())
        out = total - core_cpu
        print(f"{name:<11} {total:>9.2f} {core_cpu:>9.2f} {out:>9.2f} {out / total * 100:>8.1f}%")


if __name__ == "__main__":
    main()
