#!/usr/bin/env python3
"""Regenerate docs/img/seed003.png and the tables of docs/seed003.md.

Seed 003's findings, simulated (the FPGA and host timing models of the
`ssdlab.csd` module on 1 Mi int32 elements per array, seed 42) next to the
seed's published figures.  Usage: python3 scripts/seed003_plot.py
(needs the ssdlab Python package: `pip install .`).
"""
import ssdlab

N = 1 << 20
KS = ["count", "average", "vadd", "merge"]
SEED = {
    "buffer_vadd": {1 << 10: 8.8, 256 << 10: 11.2},
    "buffer_256k": {"count": None, "average": None, "vadd": 11.2, "merge": 5.2},
    "cu_best": {"count": 3.5, "average": 3.8, "vadd": 2.5},
    "cu15_merge": 1.7,
    "all": {"count": 3.5, "average": 3.8, "vadd": 28.6, "merge": 9.0},
}


def t(kernel, **kw):
    return ssdlab.csd.kernel_time(kernel=kernel, elements=N, **kw)


base = {k: t(k)["fpga_s"] for k in KS}
buffers = [1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20]
vadd_buf = [base["vadd"] / t("vadd", local_buffer=f"{b}B")["fpga_s"] for b in buffers]
buf256 = {k: base[k] / t(k, local_buffer="256KiB")["fpga_s"] for k in KS}
pipe = {k: (base[k] / t(k, pipeline=True)["fpga_s"] - 1) * 100 for k in KS}
cus = list(range(1, 16))
cu = {k: [base[k] / t(k, cus=n)["fpga_s"] for n in cus] for k in KS}
allopt = {}
best_s = {}
for k in KS:
    buf = "256KiB" if k in ("vadd", "merge") else None
    times = []
    for n in cus:
        try:
            times.append(t(k, cus=n, local_buffer=buf)["fpga_s"])
        except ssdlab.csd.CsdError:
            pass  # the buffers no longer fit on chip (merge: 3 x 256 KiB, at most 11 CUs)
    best_s[k] = min(times)
    allopt[k] = base[k] / best_s[k]
clocks = [0.8, 1.6, 2.4, 3.2, 4.0, 4.7]
host_vs = {k: [t(k, host_clock=f"{c}GHz")["host_s"] / best_s[k] for c in clocks] for k in KS}

print("| buffer | " + " | ".join(f"{b // 1024} KiB" for b in buffers) + " |")
print("|---|" + "---:|" * len(buffers))
print("| vadd speed-up, simulated | " + " | ".join(f"{x:.2f}" for x in vadd_buf) + " |")
print()
print("| kernel | 256 KiB buffer | pipelining gain % | best multi-CU (CUs) | 15 CUs | all optimisations | FPGA vs host 0.8 GHz | FPGA vs host 4.7 GHz |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for k in KS:
    c = cu[k]
    b = max(range(len(c)), key=lambda i: c[i])
    print(f"| {k} | {buf256[k]:.2f} | {pipe[k]:.2f} | {c[b]:.2f} ({b + 1}) | {c[14]:.2f} | {allopt[k]:.2f} | "
          f"{host_vs[k][0]:.2f} | {host_vs[k][-1]:.2f} |")

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    raise SystemExit(0)

fig, ax = plt.subplots(2, 3, figsize=(15, 8.5))
a = ax[0][0]
a.semilogx([b / 1024 for b in buffers], vadd_buf, "o-", label="ssdlab")
a.plot([1, 256], [8.8, 11.2], "s", color="C3", label="seed 003")
a.set(xlabel="local buffer (KiB)", ylabel="speed-up over no buffer (x)", title="Fig. 3: vadd, local buffer size")
a.legend()
a = ax[0][1]
x = range(len(KS))
a.bar([i - 0.2 for i in x], [buf256[k] for k in KS], 0.4, label="ssdlab")
a.bar([i + 0.2 for i in x], [SEED["buffer_256k"][k] or 0 for k in KS], 0.4, color="C3", label="seed 003 (count/average: 'slower', no value)")
a.axhline(1, color="k", lw=0.5)
a.set(xticks=list(x), xticklabels=KS, ylabel="speed-up (x)", title="Fig. 4a: 256 KiB local buffer")
a.legend(fontsize=8)
a = ax[0][2]
a.plot(list(x), [pipe[k] for k in KS], "o", ms=9, label="ssdlab")
for i, k in enumerate(KS):
    a.annotate(f"{pipe[k]:.2f} %", (i, pipe[k]), textcoords="offset points", xytext=(0, 8), ha="center")
a.axhline(1, color="C3", ls="--", label="seed 003: about 1 % at best")
a.set(xticks=list(x), xticklabels=KS, ylabel="gain (%)", title="Fig. 4b: loop pipelining", ylim=(-0.5, 2))
a.legend()
a = ax[1][0]
for i, k in enumerate(KS):
    a.plot(cus, cu[k], "o-", ms=3, color=f"C{i}", label=f"{k}")
a.plot([5, 5, 5], [3.5, 3.8, 2.5], "s", color="k", label="seed 003: count, average, vadd peaks (5 CUs)")
a.plot([15], [1.7], "^", color="k", label="seed 003: merge at 15 CUs")
a.set(xlabel="compute units", ylabel="speed-up over 1 CU (x)", title="Fig. 5a: multiple compute units")
a.legend(fontsize=7)
a = ax[1][1]
a.bar([i - 0.2 for i in x], [allopt[k] for k in KS], 0.4, label="ssdlab")
a.bar([i + 0.2 for i in x], [SEED["all"][k] for k in KS], 0.4, color="C3", label="seed 003")
a.set(xticks=list(x), xticklabels=KS, ylabel="speed-up (x)", title="Fig. 6a: all optimisations", yscale="log")
a.legend()
a = ax[1][2]
for i, k in enumerate(KS):
    a.plot(clocks, host_vs[k], "o-", color=f"C{i}", label=k)
a.plot([0.8], [10.1], "s", color="C1", label="seed 003: average, FPGA 10.1x")
a.plot([0.8, 4.7], [1 / 2.7, 1 / 16.6], "^", color="C3", label="seed 003: merge, host 2.7x-16.6x")
a.axhline(1, color="k", lw=0.5)
a.set(xlabel="host clock (GHz)", ylabel="host time / FPGA time (above 1: FPGA faster)", yscale="log",
      title="Fig. 6b: FPGA (all optimisations) vs one host core")
a.legend(fontsize=7)
fig.suptitle("Seed 003 (SmartSSD): ssdlab's FPGA model vs the seed's measurements, kernel alone, 1 Mi int32 per array")
fig.tight_layout()
fig.savefig("docs/img/seed003.png", dpi=90)
print("\nwrote docs/img/seed003.png")
