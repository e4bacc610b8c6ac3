#!/usr/bin/env python3
"""Compare two ssdlab binaries' speed, side by side in time.

    python3 scripts/ab_bench.py BIN_A BIN_B [--filter CASE] [--ios N] [--rounds R]

On a shared machine the wall-clock rate of one binary moves by more than
1.5x between a busy and a quiet hour, so sequential A-then-B runs mostly
measure the machine. Here each round runs `BIN bench --filter CASE` for A
and B *at the same time*, one per core (the bench is single-threaded), so
both see the same neighbours; rounds alternate which starts first. It
prints each round's simulated I/Os per wall second of every matching case
and, per case, the median of B/A over the rounds. Needs two free cores;
the two runs still share the last-level cache and memory bandwidth,
which slows both a little and equally.
"""

import argparse
import json
import shutil
import statistics
import subprocess
import sys


def start(binary, args):
    cmd = [binary, "bench", "--output-format", "json", *args]
    try:
        return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        sys.exit(f"{binary}: cannot run it ({e.strerror})")


def finish(proc, binary):
    out, err = proc.communicate()
    if proc.returncode != 0:
        sys.exit(f"{binary}: bench failed ({proc.returncode}): {err.strip()[-400:]}")
    try:
        report = json.loads(out)
    except json.JSONDecodeError as e:
        sys.exit(f"{binary}: bench printed no JSON report ({e})")
    rates = {c["name"]: c["sim_ios_per_wall_s"] for c in report["cases"]}
    # Older binaries' reports carry no build flavour.
    return rates, report.get("build", "unknown")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("a", help="baseline ssdlab binary")
    p.add_argument("b", help="candidate ssdlab binary")
    p.add_argument("--filter", default="randwrite-4k-qd32-steady", help="bench cases whose name contains this")
    p.add_argument("--ios", type=int, default=1_000_000, help="simulated I/Os per case")
    p.add_argument("--rounds", type=int, default=3, help="rounds (each runs A and B together)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="device override, passed to both")
    o = p.parse_args()
    if o.rounds < 1 or o.ios < 1:
        sys.exit("--rounds and --ios must be at least 1")
    for binary in (o.a, o.b):
        if shutil.which(binary) is None:
            sys.exit(f"{binary}: not an executable file")
    args = ["--filter", o.filter, "--ios", str(o.ios)]
    for s in o.set:
        args += ["--set", s]
    ratios = {}
    for r in range(o.rounds):
        order = [(o.a, "A"), (o.b, "B")] if r % 2 == 0 else [(o.b, "B"), (o.a, "A")]
        procs = [(start(binary, args), binary, tag) for binary, tag in order]
        done = {tag: finish(proc, binary) for proc, binary, tag in procs}
        rates = {tag: rb[0] for tag, rb in done.items()}
        if r == 0:
            print(f"A {o.a} (build: {done['A'][1]})")
            print(f"B {o.b} (build: {done['B'][1]})")
        if not rates["A"]:
            sys.exit(f"no bench case matches --filter {o.filter!r}")
        for case, a in rates["A"].items():
            b = rates["B"].get(case)
            if b is None:
                sys.exit(f"{o.b}: no case {case!r} (the two binaries' bench cases differ)")
            ratios.setdefault(case, []).append(b / a)
            print(f"round {r + 1}  {case:40s}  A {a / 1e6:6.3f} M/s  B {b / 1e6:6.3f} M/s  B/A {b / a:6.3f}")
    print()
    for case, rs in ratios.items():
        print(f"{case:40s}  median B/A {statistics.median(rs):6.3f}  (min {min(rs):.3f}, max {max(rs):.3f}, {len(rs)} rounds)")


if __name__ == "__main__":
    main()
