"""Seed 004 sensitivity: design 2's IOPS cut against design 1 as the NAND
gets more parallel (more dies behind the same 8 channels).

    .venv/bin/python scripts/seed004_sensitivity.py

Recorded in docs/seed004.md. Random 4 KiB reads, QD32, 200,000 I/Os,
drive filled first; `nand.dies_per_chip` 2, 4 (the preset: 32 dies) and 8
(capacity grows with the dies; the reads are uniform over it).
"""

import ssdlab

job = ssdlab.Job("r", rw="randread", bs="4k", iodepth=32, number_ios=200_000)
print("dies  design-1 IOPS  design-2 IOPS  cut")
for per_chip in (2, 4, 8):
    iops = []
    for n in (1, 2):
        dev = ssdlab.Device.preset(f"seed004-controller-{n}").with_(nand__dies_per_chip=per_chip)
        iops.append(ssdlab.run(dev, job, sample_interval=None, latency_histogram=False).read.iops)
    print(f"{8 * per_chip:>4}  {iops[0]:>13,.0f}  {iops[1]:>13,.0f}  {100 * (1 - iops[1] / iops[0]):.1f} %")
