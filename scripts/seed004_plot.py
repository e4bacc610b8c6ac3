#!/usr/bin/env python3
"""Regenerate docs/seed004.md's table and docs/img/seed004.png.

Runs the ten seed-004 controller presets on the PM9A3-class drive (random
4 KiB read, QD32, 200,000 I/Os, filled drive) through the `ssdlab` binary and
plots IOPS against core power.  Usage: python3 scripts/seed004_plot.py [path/to/ssdlab]
"""
import json
import subprocess
import sys
import tempfile

exe = sys.argv[1] if len(sys.argv) > 1 else "target/release/ssdlab"
job = tempfile.NamedTemporaryFile("w", suffix=".fio", delete=False)
job.write("[randread]\nrw=randread\nbs=4k\niodepth=32\nnumber_ios=200000\n")
job.close()
rows = []
for n in range(1, 11):
    out = subprocess.run([exe, "run", "--device", f"seed004-controller-{n}", "--job", job.name,
                          "--output-format", "json", "--quiet"], check=True, capture_output=True, text=True).stdout
    r = json.loads(out)
    p = r["power"]
    c = p["components"]
    rows.append({
        "n": n,
        "iops": r["read"]["iops"],
        "lat_us": r["read"]["lat_ns"]["mean"] / 1e3,
        "cores_mw": c["cores"]["avg_w"] * 1e3,
        "acc_mw": c["accelerators"]["avg_w"] * 1e3,
        "total_w": p["avg_w"],
        "uj_per_io": r["energy_per_io_j"] * 1e6,
        "cores_ok": p["budgets"]["cores"][2],
    })

print("| design | IOPS | mean latency (us) | core power (mW) | accelerator power (mW) | drive power (W) | energy per I/O (uJ) | core budget 192 mW |")
print("|---|---:|---:|---:|---:|---:|---:|---|")
for r in rows:
    print(f"| {r['n']} | {r['iops']:,.0f} | {r['lat_us']:.1f} | {r['cores_mw']:.1f} | {r['acc_mw']:.1f} | {r['total_w']:.2f} | {r['uj_per_io']:.2f} | {'met' if r['cores_ok'] else 'exceeded'} |")

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit("matplotlib not installed: table printed, plot skipped")
fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=120)
for r in rows:
    ax.scatter(r["cores_mw"], r["iops"] / 1e3, color="tab:green" if r["cores_ok"] else "tab:red", zorder=3)
    ax.annotate(str(r["n"]), (r["cores_mw"], r["iops"] / 1e3), textcoords="offset points", xytext=(5, 4))
ax.axvline(192, color="grey", linestyle="--", label="core power budget (192 mW)")
ax.set_xlabel("core power (mW)")
ax.set_ylabel("random 4 KiB read, QD32 (kIOPS)")
ax.set_title("Seed 004 controller designs on the PM9A3-class drive")
ax.legend(loc="center")
ax.grid(True, alpha=0.3)
fig.tight_layout()
fig.savefig("docs/img/seed004.png")
print("wrote docs/img/seed004.png", file=sys.stderr)
