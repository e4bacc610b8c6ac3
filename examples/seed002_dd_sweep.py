"""Seed 002's dd measurement: sequential read and write throughput against
transfer size, with direct I/O and through the host page cache, one request
at a time, on a Gen3 x4 drive.

    python examples/seed002_dd_sweep.py [--device seed002-gen3-value] [--mib 512] [--out DIR]

Seed 002 ran `dd` with O_DIRECT on M.2 NVMe drives behind a PCIe switch and
found throughput growing with transfer size to a read peak of 3.3 GB/s;
writes peak at 1.0-1.5 GB/s per drive while they land in the SLC cache; the
cost-optimised drive reaches its rated 3,100 MB/s read and 1,000 MB/s write.

Each point is one fio job: `rw=read` (drive filled first) or `rw=write`
(fresh drive, so the data lands in the SLC cache), `bs` = the transfer
size, one request at a time. dd's requests above the block layer's limit
are split by the kernel into parallel commands: this script assumes
`max_sectors_kb` = 2 MiB (the 970 EVO's MDTS of 512 pages, as smartctl
reports it; assumed the same for the value drive) and runs a transfer of
N x 2 MiB as `bs=2m iodepth=N` (the parts of one dd request in flight
together; dd's lockstep between requests is not modelled). Through the
page cache (`direct=0`) each point is `bs` = the transfer size at QD1, over
the host of the device file's `[host]` (seed002-gen3-value: the seed's
Cortex-A53 board, docs/models/page-cache.md); the seed found about
850 MB/s read and 550 MB/s write that way.

Writes the table as CSV and the curves as PNG into --out.
"""

from __future__ import annotations

import argparse
import os

import pandas as pd

import ssdlab

SIZES_KIB = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
SPLIT_KIB = 2048


def job_for(rw: str, kib: int, total_mib: int, mode: str) -> ssdlab.Job:
    if mode == "buffered":
        # One read(2)/write(2) of the transfer size at a time; the page
        # cache makes the drive requests (readahead, writeback).
        ios = max(64, total_mib * 1024 // kib)
        return ssdlab.Job(f"dd-{rw}-{kib}k-buffered", rw=rw, bs=f"{kib}k", iodepth=1, direct=0, number_ios=ios)
    bs = min(kib, SPLIT_KIB)
    depth = max(1, kib // SPLIT_KIB)
    ios = max(64, total_mib * 1024 // bs)
    return ssdlab.Job(f"dd-{rw}-{kib}k", rw=rw, bs=f"{bs}k", iodepth=depth, number_ios=ios)


def sweep(device: ssdlab.Device, total_mib: int) -> pd.DataFrame:
    rows = []
    for mode in ("direct", "buffered"):
        for rw, pre in (("read", "fill"), ("write", "fresh")):
            for kib in SIZES_KIB:
                r = ssdlab.run(device, job_for(rw, kib, total_mib, mode), precondition=pre, sample_interval=None)
                d = r.read if rw == "read" else r.write
                rows.append({"mode": mode, "rw": rw, "transfer_kib": kib, "mb_s": d.bw_bytes_per_s / 1e6,
                             "lat_mean_us": d.lat_ns.mean / 1e3})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="seed002-gen3-value", help="device preset or file")
    ap.add_argument("--mib", type=int, default=512, help="MiB moved per point (default 512)")
    ap.add_argument("--out", default="seed002_dd_sweep", help="output directory")
    a = ap.parse_args()

    device = ssdlab.Device.load(a.device)
    df = sweep(device, a.mib)
    os.makedirs(a.out, exist_ok=True)
    df.to_csv(os.path.join(a.out, "dd.csv"), index=False)
    table = df.pivot_table(index="transfer_kib", columns=["mode", "rw"], values="mb_s")
    print(table.round(1).to_string())

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for mode, rw, style in (
        ("direct", "read", "o-"),
        ("direct", "write", "s-"),
        ("buffered", "read", "o--"),
        ("buffered", "write", "s--"),
    ):
        t = df[(df["mode"] == mode) & (df.rw == rw)]
        ax.plot(t.transfer_kib, t.mb_s, style, label=f"{rw}, {'direct I/O' if mode == 'direct' else 'page cache'}")
    ax.axhline(850, color="grey", ls="--", lw=0.8)
    ax.text(4, 870, "seed 002: page cache read ~850 MB/s", fontsize=7, color="grey")
    ax.axhline(550, color="grey", ls="--", lw=0.8)
    ax.text(4, 570, "seed 002: page cache write ~550 MB/s", fontsize=7, color="grey")
    ax.axhline(3300, color="grey", ls=":", lw=1)
    ax.text(4, 3350, "seed 002: read peak 3.3 GB/s", fontsize=8, color="grey")
    ax.axhspan(1000, 1500, color="grey", alpha=0.12)
    ax.text(4, 1520, "seed 002: write peaks 1.0-1.5 GB/s", fontsize=8, color="grey")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("transfer size (KiB)")
    ax.set_ylabel("MB/s")
    ax.set_title(f"dd-like sequential I/O, one request at a time: {device.name}")
    ax.legend(loc="lower right", fontsize=7)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(a.out, "dd.png"), dpi=120)
    print(f"wrote {a.out}/dd.csv and {a.out}/dd.png")


if __name__ == "__main__":
    main()
