#!/usr/bin/env python3
"""Seed 000 sensitivity: async vs blocking host DMA in the firmware.

The OpenSSD Cosmos+ reference firmware (same lab and host-controller family
as seed 000) issues one auto-DMA per 4 KiB and then spins in
check_auto_{tx,rx}_dma_done until the command's transfers end.  This script
re-calibrates the per-command instruction count from the one calibration
figure (EISC random 4 KiB read = 4,356 IOPS) with `host_dma = "async"` (the
shipped presets) and with `host_dma = "blocking"`, then predicts the other
seven seed-000 figures with each.  Usage:
    python3 scripts/seed000_host_dma.py [path/to/ssdlab]
"""
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

EXE = sys.argv[1] if len(sys.argv) > 1 else "target/release/ssdlab"
PRESETS = Path(__file__).resolve().parent.parent / "crates/ssdlab-core/presets"
TMP = Path(tempfile.mkdtemp(prefix="seed000-dma-"))
SPLIT = {"fetch": 0.25, "parse": 0.45, "complete": 0.30}  # as in the presets
REF = {("eisc", "randread"): 4356, ("eisc", "randwrite"): 4395,
       ("eisc", "read"): 106.5, ("eisc", "write"): 106.1,
       ("a9", "randread"): 300e3, ("a9", "randwrite"): 300e3,
       ("a9", "read"): 1700, ("a9", "write"): 1700}


def job(rw, bs, n):
    # Iometer taken as 4 workers x QD8, as in `ssdlab validate`.
    f = TMP / f"{rw}{bs}.fio"
    f.write_text(f"[{rw}]\nrw={rw}\nbs={bs}\niodepth=8\nnumjobs=4\nnumber_ios={n}\n")
    return str(f)


def device(kind, per_cmd, blocking):
    text = (PRESETS / f"seed000-{kind}-ramdisk.toml").read_text()
    parts = [round(per_cmd * SPLIT["fetch"]), round(per_cmd * SPLIT["parse"])]
    parts.append(per_cmd - sum(parts))
    for stage, n in zip(("fetch", "parse", "complete"), parts):
        mem = n if kind == "eisc" else 0
        text = re.sub(rf"^{stage} = .*$", f"{stage} = {{ cycles = {n}, mem_accesses = {mem} }}",
                      text, flags=re.M)
    if blocking:
        text = text.replace("[controller]\n", '[controller]\nhost_dma = "blocking"\n')
    f = TMP / f"{kind}-{per_cmd}-{blocking}.toml"
    f.write_text(text)
    return str(f)


def run(dev, jobfile):
    out = subprocess.run([EXE, "run", "--device", dev, "--job", jobfile, "--output-format", "json",
                          "--quiet"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def eisc_read_iops(per_cmd, blocking):
    return run(device("eisc", per_cmd, blocking), job("randread", "4k", 3000))["read"]["iops"]


for blocking in (False, True):
    lo, hi = 1000, 4000  # IOPS falls as the per-command count grows
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if eisc_read_iops(mid, blocking) > 4356:
            lo = mid
        else:
            hi = mid
    per_cmd = min((lo, hi), key=lambda n: abs(eisc_read_iops(n, blocking) - 4356))
    print(f'host_dma = "{"blocking" if blocking else "async"}": per-command instructions {per_cmd}')
    print("| core | workload | simulated | seed 000 | error |")
    print("|---|---|---:|---:|---:|")
    for kind in ("eisc", "a9"):
        n4, n128 = (3000, 1000) if kind == "eisc" else (60000, 20000)
        for rw, bs, n in (("randread", "4k", n4), ("randwrite", "4k", n4),
                          ("read", "128k", n128), ("write", "128k", n128)):
            r = run(device(kind, per_cmd, blocking), job(rw, bs, n))
            d = r["read"] if "read" in rw else r["write"]
            v = d["iops"] if bs == "4k" else d["bw_bytes_per_s"] / 1e6
            unit = "IOPS" if bs == "4k" else "MB/s"
            ref = REF[(kind, rw)]
            print(f"| {kind} | {rw} {bs} | {v:,.1f} {unit} | {ref:,.1f} | {100 * (v / ref - 1):+.1f} % |")
    print()
