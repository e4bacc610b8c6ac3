"""Self-contained HTML reports of a run (no network needed; plots inlined as PNG)."""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import os
from typing import Dict, List, Optional, Tuple, Union

from . import plot as _plot
from .result import Result

__all__ = ["html_report", "write_report", "SECTIONS"]

# Section ids, in order (tests and readers can rely on them).
SECTIONS = ["configuration", "summary", "latency", "timeseries", "utilisation", "notes"]

_CSS = """
body{font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:980px;color:#222;padding:0 1em}
h1{font-size:1.6em;margin-bottom:.2em} h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}
.meta{color:#666} table{border-collapse:collapse;margin:.6em 0} td,th{border:1px solid #ddd;padding:.25em .6em;text-align:right}
th{background:#f3f3f3} td.l,th.l{text-align:left} pre{background:#f7f7f7;padding:.8em;overflow:auto;font-size:.85em;max-height:30em}
img{max-width:100%;height:auto;display:block;margin:.6em 0} details summary{cursor:pointer;color:#245}
"""


def _png(fig: object, dpi: int = 100) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)  # type: ignore[attr-defined]
    return buf.getvalue()


def _img(data: bytes, alt: str, name: str) -> str:
    b64 = base64.b64encode(data).decode("ascii")
    return f'<img class="plot" id="plot-{name}" alt="{html.escape(alt)}" src="data:image/png;base64,{b64}">'


def _table(head: List[str], rows: List[List[str]]) -> str:
    h = "".join(f'<th class="{"l" if i == 0 else ""}">{html.escape(c)}</th>' for i, c in enumerate(head))
    body = "".join(
        "<tr>" + "".join(f'<td class="{"l" if i == 0 else ""}">{html.escape(c)}</td>' for i, c in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{h}</tr></thead><tbody>{body}</tbody></table>"


def _us(ns: float) -> str:
    return f"{ns / 1e3:,.1f}"


def _summary(r: Result) -> str:
    head = ["direction", "I/Os", "IOPS", "MB/s", "min µs", "mean µs", "p50 µs", "p90 µs", "p99 µs", "p99.9 µs",
            "p99.99 µs", "max µs"]
    rows = []
    for name in ("read", "write"):
        d = getattr(r, name)
        if not d.ios:
            continue
        lt = d.lat_ns
        rows.append([name, f"{d.ios:,}", f"{d.iops:,.0f}", f"{d.bw_mb_per_s:,.1f}", _us(lt.min), _us(lt.mean),
                     _us(lt.p50), _us(lt.p90), _us(lt.p99), _us(lt.p99_9), _us(lt.p99_99), _us(lt.max)])
    if not rows:
        rows.append(["(no I/O completed)"] + [""] * (len(head) - 1))
    run_rows = [
        ["measured simulated time", f"{r.sim_time_ns / 1e6:,.3f} ms"],
        ["wall time of the simulation", f"{r.wall_time_s:,.2f} s"],
        ["events", f"{r.events:,}"],
        ["write amplification (WAF)", f"{r.waf:.3f}"],
        ["GC", f"{r.gc.runs:,} runs, {r.gc.pages_moved:,} pages moved, {r.gc.blocks_erased:,} blocks erased"],
        ["flash operations", f"{r.flash.reads:,} reads, {r.flash.programs:,} programs, {r.flash.erases:,} erases, "
                             f"{r.flash.suspends:,} suspends"],
    ]
    if r.mapping is not None:
        m = r.mapping
        run_rows.append(["mapping cache", f"{m.cache_bytes / 2**20:,.1f} MiB ({m.cached_pages:,} of "
                                          f"{m.translation_pages:,} translation pages), hit ratio "
                                          f"{m.hit_ratio * 100:.2f} %, {m.translation_reads:,} translation reads, "
                                          f"{m.translation_writes:,} writes; WAF from mapping {m.waf_mapping:.3f}"])
    return _table(head, rows) + _table(["run", "value"], run_rows)


def _config(r: Result) -> str:
    inp = r.inputs
    rows = [
        ["device", r.device_name],
        ["exported capacity", f"{r.capacity_bytes / 1e9:,.1f} GB"],
        ["raw NAND", f"{r.raw_bytes / 1e9:,.1f} GB"],
        ["PCIe payload bandwidth", f"{r.pcie_bw_bytes_per_s / 1e6:,.0f} MB/s"],
        ["workload", r.workload],
        ["seed", str(r.seed)],
        ["precondition", r.precondition],
        ["ssdlab version", r.version],
    ]
    if inp.get("device_source"):
        rows.insert(1, ["device source", str(inp["device_source"])])
    if inp.get("device_overrides"):
        rows.insert(2, ["overrides", ", ".join(f"{k} = {v!r}" for k, v in inp["device_overrides"].items())])
    out = _table(["input", "value"], rows)
    if inp.get("device_toml"):
        out += ("<details open><summary>device file (every default filled in)</summary><pre>"
                + html.escape(inp["device_toml"]) + "</pre></details>")
    if inp.get("system_toml"):
        out += ("<details open><summary>system file (every default filled in)</summary><pre>"
                + html.escape(inp["system_toml"]) + "</pre></details>")
    if r.links:
        out += _table(["link", "upper", "lower", "trained", "payload MB/s", "busy up", "busy down"],
                      [[str(x.get("name")), str(x.get("upper")), str(x.get("lower")),
                        f"Gen{x.get('generation')} x{x.get('lanes')}", f"{x.get('payload_bw_bytes_per_s', 0) / 1e6:,.0f}",
                        f"{x.get('util_up', 0):.1%}", f"{x.get('util_down', 0):.1%}"] for x in r.links])
    if inp.get("job_fio"):
        out += "<details open><summary>fio job</summary><pre>" + html.escape(inp["job_fio"]) + "</pre></details>"
    if not inp:
        out += ('<p class="meta">This report was read from a core report without its inputs; '
                "<code>ssdlab.run(...).save(path)</code> records the device file and job too.</p>")
    return out


def _figures(r: Result) -> Dict[str, Tuple[Optional[object], str]]:
    figs: Dict[str, Tuple[Optional[object], str]] = {
        "latency": (_plot.latency_cdf(r), "latency CDF with log tail"),
        "utilisation": (_plot.utilisation(r), "resource utilisation"),
    }
    if r.has_timeseries:
        figs["timeseries"] = (_plot.timeseries(r), "throughput and latency over simulated time")
    else:
        figs["timeseries"] = (None, "")
    return figs


def html_report(result: Union[Result, str, "os.PathLike[str]"], *, title: Optional[str] = None,
                png_dir: Union[str, "os.PathLike[str]", None] = None, dpi: int = 100) -> str:
    """The HTML text of a self-contained report of one run.

    ``result``: a :class:`Result` or the path of a saved result / core JSON
    report. Sections (``<section id=...>``): configuration, summary,
    latency, timeseries, utilisation, notes. Plots are inlined as base64
    PNG; with ``png_dir`` they are also written there as PNG files.
    """
    r = result if isinstance(result, Result) else Result.load(result)
    title = title or f"ssdlab report: {r.device_name} / {r.workload}"
    figs = _figures(r)
    pngs: Dict[str, bytes] = {}
    for name, (fig, _) in figs.items():
        if fig is not None:
            pngs[name] = _png(fig, dpi)
    if png_dir is not None:
        os.makedirs(png_dir, exist_ok=True)
        for name, data in pngs.items():
            with open(os.path.join(os.fspath(png_dir), f"{name}.png"), "wb") as f:
                f.write(data)

    def fig_html(name: str) -> str:
        if name not in pngs:
            return ('<p class="meta">Not recorded: run with <code>sample_interval</code> '
                    "(e.g. <code>ssdlab.run(..., sample_interval=\"1ms\")</code>) to sample it.</p>")
        return _img(pngs[name], figs[name][1], name)

    notes = ""
    if r.ignored_options:
        notes = "<p>fio options accepted without effect in a simulator:</p>" + _table(
            ["option", "reason"], [[o, why] for o, why in r.ignored_options])
    else:
        notes = '<p class="meta">No ignored options.</p>'
    now = _dt.datetime.now().strftime("%Y-%m-%d %H:%M")
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f'<p class="meta">ssdlab {html.escape(r.version)} · report {html.escape(r.schema)} · generated {now}</p>',
        '<section id="configuration"><h2>Configuration</h2>' + _config(r) + "</section>",
        '<section id="summary"><h2>Summary</h2>' + _summary(r) + "</section>",
        '<section id="latency"><h2>Latency distribution</h2>' + fig_html("latency") + "</section>",
        '<section id="timeseries"><h2>Throughput and latency over time</h2>' + fig_html("timeseries") + "</section>",
        '<section id="utilisation"><h2>Resource utilisation</h2>' + fig_html("utilisation") + "</section>",
        '<section id="notes"><h2>Notes</h2>' + notes + "</section>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def write_report(result: Union[Result, str, "os.PathLike[str]"], out: Union[str, "os.PathLike[str]"], *,
                 title: Optional[str] = None, png_dir: Union[str, "os.PathLike[str]", None] = None,
                 dpi: int = 100) -> str:
    """Write :func:`html_report` to ``out``; returns the path."""
    text = html_report(result, title=title, png_dir=png_dir, dpi=dpi)
    with open(os.fspath(out), "w", encoding="utf-8") as f:
        f.write(text)
    return os.fspath(out)
