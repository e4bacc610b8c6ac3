"""Queue-depth and channel-count sweep on the default drive (pm9a3-960g).

    python examples/qd_channel_sweep.py [--ios N] [--out DIR]

Runs 4 KiB random reads at queue depths 1..128 on 4, 8 and 16 channels
(every combination, on all cores), writes the table as CSV and the IOPS vs
queue depth plot as PNG. Each point fills the drive first (a second or two;
more channels here means more dies, so a larger drive) and then simulates
--ios I/Os.
"""

from __future__ import annotations

import argparse
import os

import ssdlab
from ssdlab import plot


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ios", type=int, default=200_000, help="I/Os per point (default 200000)")
    ap.add_argument("--out", default="qd_channel_sweep", help="output directory")
    ap.add_argument("--backend", default="local", choices=["local", "ray", "sequential"])
    a = ap.parse_args()

    device = ssdlab.Device.default()
    job = ssdlab.Job("randread-4k", rw="randread", bs="4k", iodepth=1, number_ios=a.ios)
    grid = {"job.iodepth": [1, 2, 4, 8, 16, 32, 64, 128], "nand.channels": [4, 8, 16]}
    df = ssdlab.sweep(device, job, grid=grid, backend=a.backend)

    os.makedirs(a.out, exist_ok=True)
    df.to_csv(os.path.join(a.out, "sweep.csv"), index=False)
    plot.iops_vs_qd(df, by="nand.channels").savefig(os.path.join(a.out, "iops_vs_qd.png"), dpi=120)
    cols = ["job.iodepth", "nand.channels", "read_iops", "read_lat_mean_ns", "read_lat_p99_ns", "util_die_mean"]
    print(df[cols].to_string(index=False))
    print(f"wrote {a.out}/sweep.csv and {a.out}/iops_vs_qd.png")


if __name__ == "__main__":
    main()
