"""Plots of results, sweeps and searches (matplotlib, units on every axis).

Every function returns a :class:`matplotlib.figure.Figure` built without
pyplot, so it renders without a display (Agg) and does not touch global
state; in Jupyter a returned figure is shown as usual. Save one with
``fig.savefig("x.png")``.
"""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from .result import Result

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes

__all__ = [
    "latency_cdf",
    "timeseries",
    "iops_vs_qd",
    "utilisation",
    "pareto",
    "metric_axis",
    "save_all",
]

ResultsLike = Union[Result, Sequence[Result], Mapping[str, Result]]

_TAIL_TICKS = [0.0, 0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999, 0.999999]


def _new(ax: Optional["Axes"], size: Tuple[float, float] = (7.0, 4.2)) -> Tuple[Figure, "Axes"]:
    if ax is not None:
        return ax.figure, ax  # type: ignore[return-value]
    fig = Figure(figsize=size, dpi=100, layout="constrained")
    return fig, fig.add_subplot(1, 1, 1)


def metric_axis(name: str) -> Tuple[float, str]:
    """(scale, axis label with unit) for a metric column name: latencies
    (``*_ns``) in µs, IOPS in kIOPS, bandwidths in MB/s, utilisation in %."""
    n = name
    pretty = n.replace("_", " ")
    if n.endswith("_ns"):
        return 1e-3, f"{pretty[:-3]} (µs)"
    if n.endswith("_s") and not n.endswith("_per_s"):
        return 1.0, f"{pretty[:-2]} (s)"
    if n.endswith("iops"):
        return 1e-3, f"{pretty} (kIOPS)"
    if n.endswith("bytes_per_s"):
        return 1e-6, f"{pretty[: -len('bytes per s')]}(MB/s)"
    if n.endswith("_bytes"):
        return 1e-9, f"{pretty[:-6]} (GB)"
    if n.startswith("util_"):
        return 100.0, f"{pretty} (%)"
    if n in ("waf",) or n.endswith("_waf"):
        return 1.0, f"{pretty} (flash writes / host writes)"
    if n.startswith("job.iodepth") or n.endswith("iodepth"):
        return 1.0, "queue depth (commands)"
    return 1.0, pretty


def _named(results: ResultsLike) -> List[Tuple[str, Result]]:
    if isinstance(results, Result):
        return [(f"{results.device_name}", results)]
    if isinstance(results, Mapping):
        return [(str(k), v) for k, v in results.items()]
    return [(f"{r.device_name} #{i}", r) for i, r in enumerate(results)]


def _tail(p: float) -> float:
    return -math.log10(max(1.0 - p, 1e-7))


def _cdf_points(r: Result, direction: str) -> Optional[Tuple[List[float], List[float]]]:
    """(latency µs, cumulative fraction) from the histogram, else from the percentiles."""
    d = getattr(r, direction)
    if not d.ios:
        return None
    if r.has_histogram:
        h = r.histogram
        h = h[h["direction"] == direction]
        if len(h):
            return list(h["latency_ns"] / 1e3), list(h["cum_fraction"])
    lt = d.lat_ns
    ps = [(0.0, lt.min), (0.5, lt.p50), (0.9, lt.p90), (0.99, lt.p99), (0.999, lt.p99_9), (0.9999, lt.p99_99),
          (1.0 - 1e-7, lt.max)]
    return [v / 1e3 for _, v in ps], [p for p, _ in ps]


def latency_cdf(results: ResultsLike, direction: str = "both", ax: Optional["Axes"] = None,
                log_x: bool = False) -> Figure:
    """Latency CDF with a log tail: the y axis is stretched as
    −log10(1 − p) so that p90, p99, p99.9, ... are evenly spaced.

    ``results``: a :class:`Result`, a list, or a dict label -> Result.
    ``direction``: ``"read"``, ``"write"`` or ``"both"``. Uses the raw
    histogram when the run kept it, else the reported percentiles.
    """
    fig, ax = _new(ax)
    dirs = ["read", "write"] if direction == "both" else [direction]
    top = 0.99
    drawn = 0
    for label, r in _named(results):
        for d in dirs:
            pts = _cdf_points(r, d)
            if pts is None:
                continue
            xs, ps = pts
            ys = [_tail(min(p, 1.0 - 1e-7)) for p in ps]
            top = max(top, max(ps))
            ax.step(xs, ys, where="post", label=f"{label} {d}" if len(dirs) > 1 or len(_named(results)) > 1 else d)
            drawn += 1
    ticks = [t for t in _TAIL_TICKS if t <= max(top, 0.999)]
    ax.set_yticks([_tail(t) for t in ticks])
    ax.set_yticklabels([f"{t * 100:g}" for t in ticks])
    ax.set_ylabel("percentile (%), log tail")
    ax.set_xlabel("latency (µs)")
    if log_x:
        ax.set_xscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title("Latency distribution")
    if drawn:
        ax.legend(loc="lower right", fontsize="small")
    else:
        ax.text(0.5, 0.5, "no completed I/O", transform=ax.transAxes, ha="center")
    return fig


def timeseries(result: Result, direction: str = "both") -> Figure:
    """Throughput (kIOPS and MB/s) and latency (mean and max, µs) over
    simulated time (ms), one panel each. Needs a run with ``sample_interval``."""
    df = result.timeseries
    fig = Figure(figsize=(8.0, 6.0), dpi=100, layout="constrained")
    ax1, ax2 = fig.subplots(2, 1, sharex=True)
    t_ms = df["t_s"] * 1e3
    dirs = ["read", "write"] if direction == "both" else [direction]
    dirs = [d for d in dirs if getattr(result, d).ios] or dirs[:1]
    bw = ax1.twinx()
    colours = {"read": "C0", "write": "C1"}
    for d in dirs:
        c = colours.get(d, "C2")
        ax1.plot(t_ms, df[f"{d}_iops"] / 1e3, color=c, label=f"{d} kIOPS", drawstyle="steps-post")
        bw.plot(t_ms, df[f"{d}_bw_bytes_per_s"] / 1e6, color=c, linestyle=":", alpha=0.5, label=f"{d} MB/s",
                drawstyle="steps-post")
        ax2.plot(t_ms, df[f"{d}_lat_mean_ns"] / 1e3, color=c, label=f"{d} mean", drawstyle="steps-post")
        ax2.plot(t_ms, df[f"{d}_lat_max_ns"] / 1e3, color=c, linestyle="--", alpha=0.45, label=f"{d} max",
                 drawstyle="steps-post")
    ax1.set_ylabel("throughput (kIOPS)")
    bw.set_ylabel("bandwidth (MB/s)")
    ax2.set_ylabel("latency (µs)")
    ax2.set_xlabel(f"simulated time (ms), {df.attrs.get('interval_s', 0) * 1e3:g} ms windows")
    h1, l1 = ax1.get_legend_handles_labels()
    h2, l2 = bw.get_legend_handles_labels()
    ax1.legend(h1 + h2, l1 + l2, loc="best", fontsize="small", framealpha=0.8)
    ax2.legend(loc="best", fontsize="small", framealpha=0.8)
    for a in (ax1, ax2):
        a.grid(True, alpha=0.3)
    ax1.set_title("Throughput and latency over time")
    return fig


def iops_vs_qd(df: "pd.DataFrame", qd: str = "job.iodepth", iops: str = "read_iops", by: Optional[str] = None,
               ax: Optional["Axes"] = None) -> Figure:
    """IOPS against queue depth from a sweep DataFrame, one line per value of ``by``
    (e.g. ``"nand.channels"``); the mean over seeds when there are several."""
    fig, ax = _new(ax)
    ok = df[df["error"].isna()] if "error" in df.columns else df
    groups: Iterable[Tuple[Any, "pd.DataFrame"]] = ok.groupby(by) if by else [(None, ok)]
    scale, ylabel = metric_axis(iops)
    for key, g in groups:
        m = g.groupby(qd)[iops].mean().sort_index()
        ax.plot(m.index, m.values * scale, marker="o", label=f"{by} = {key}" if by else iops)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel("queue depth (outstanding commands)")
    ax.set_ylabel(ylabel)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title("IOPS vs queue depth")
    ax.legend(fontsize="small")
    return fig


def utilisation(result: Result, ax: Optional["Axes"] = None) -> Figure:
    """Busy fraction of each resource over the measured window (%)."""
    u = result.utilisation
    items = [
        ("channel bus (mean)", u.channel_mean),
        ("channel bus (busiest)", u.channel_max),
        ("die (mean)", u.die_mean),
        ("die (busiest)", u.die_max),
        ("PCIe device→host", u.pcie_up),
        ("PCIe host→device", u.pcie_down),
        ("controller DRAM", u.dram),
    ] + [(f"firmware: {k}", v) for k, v in sorted(u.firmware.items())]
    cores = (result.report.get("utilisation", {}) or {}).get("cores") or {}
    if isinstance(cores, dict):
        items += [(f"core {k}", float(v)) for k, v in cores.items() if isinstance(v, (int, float))]
    fig, ax = _new(ax, (7.0, 0.35 * len(items) + 1.2))
    names = [n for n, _ in items][::-1]
    vals = [v * 100 for _, v in items][::-1]
    ax.barh(names, vals, color="#4878a8")
    for i, v in enumerate(vals):
        ax.text(min(v, 100) + 1, i, f"{v:.1f}%", va="center", fontsize="small")
    ax.set_xlim(0, 110)
    ax.set_xlabel("utilisation (% of the measured window busy)")
    ax.set_title("Resource utilisation")
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def pareto(df: "pd.DataFrame", x: str, y: str, front: Optional["pd.DataFrame"] = None,
           ax: Optional["Axes"] = None, label: Optional[str] = None) -> Figure:
    """Trials (``df``) and their Pareto front (``front``, e.g. the result of
    :func:`ssdlab.search`) in the plane of two metrics, in display units."""
    fig, ax = _new(ax)
    sx, lx = metric_axis(x)
    sy, ly = metric_axis(y)
    ok = df
    if "feasible" in ok.columns:
        infeasible = ok[~ok["feasible"].astype(bool)]
        if len(infeasible):
            ax.scatter(infeasible[x] * sx, infeasible[y] * sy, marker="x", color="0.6", label="infeasible")
        ok = ok[ok["feasible"].astype(bool)]
    ax.scatter(ok[x] * sx, ok[y] * sy, alpha=0.5, label=label or "trials")
    if front is not None and len(front):
        f = front.sort_values(x)
        ax.plot(f[x] * sx, f[y] * sy, marker="o", color="C3", drawstyle="steps-post", label="Pareto front")
    ax.set_xlabel(lx)
    ax.set_ylabel(ly)
    ax.grid(True, alpha=0.3)
    ax.set_title("Pareto front")
    ax.legend(fontsize="small")
    return fig


def save_all(result: Result, outdir: Union[str, "os.PathLike[str]"], dpi: int = 100) -> Dict[str, str]:
    """Save the standard plots of one result as PNGs in ``outdir``:
    ``latency_cdf.png``, ``utilisation.png`` and, if sampled,
    ``timeseries.png``. Returns name -> path."""
    os.makedirs(outdir, exist_ok=True)
    figs = {"latency_cdf": latency_cdf(result), "utilisation": utilisation(result)}
    if result.has_timeseries:
        figs["timeseries"] = timeseries(result)
    out = {}
    for name, fig in figs.items():
        p = os.path.join(os.fspath(outdir), f"{name}.png")
        fig.savefig(p, dpi=dpi)
        out[name] = p
    return out
