"""Flat views of a report dict (no pandas here: sweep workers import this)."""

from __future__ import annotations

from typing import Any, Dict, List

# Fields that are not metrics of one run, or not scalars.
_SKIP_TOP = {"schema", "version", "ignored_options", "timeseries", "read", "write", "trim", "flush", "inputs",
             "drives", "links"}
# Of a system's per-drive reports, these columns of flatten() go in a sweep row
# (as drive_<name>_<column>); the full reports stay in Result.drives.
_DRIVE_COLS = ["iops", "bw_bytes_per_s", "read_ios", "read_iops", "read_bw_bytes_per_s", "read_lat_mean_ns",
               "read_lat_p99_ns", "write_ios", "write_iops", "write_bw_bytes_per_s", "write_lat_mean_ns",
               "write_lat_p99_ns", "waf", "util_pcie_up", "util_pcie_down", "util_die_mean"]
_LINK_COLS = ["generation", "lanes", "payload_bw_bytes_per_s", "util_up", "util_down", "bytes_up", "bytes_down"]
_LAT_KEYS = ["min", "mean", "p50", "p90", "p99", "p99.9", "p99.99", "max"]


def _lat_name(k: str) -> str:
    return k.replace(".", "_")


def direction_metrics(d: Dict[str, Any]) -> Dict[str, Any]:
    """One direction's metrics: ios, bytes, iops, bw_bytes_per_s, lat_<p>_ns."""
    out: Dict[str, Any] = {
        "ios": d.get("ios", 0),
        "bytes": d.get("bytes", 0),
        "iops": d.get("iops", 0.0),
        "bw_bytes_per_s": d.get("bw_bytes_per_s", 0.0),
    }
    lat = d.get("lat_ns", {}) or {}
    for k in _LAT_KEYS:
        out[f"lat_{_lat_name(k)}_ns"] = lat.get(k, 0)
    for k, v in lat.items():  # percentiles added to the report later
        name = f"lat_{_lat_name(k)}_ns"
        if name not in out:
            out[name] = v
    return out


def _walk(prefix: str, v: Any, out: Dict[str, Any]) -> None:
    if isinstance(v, dict):
        for k, x in v.items():
            _walk(f"{prefix}_{_lat_name(k)}" if prefix else _lat_name(k), x, out)
    elif isinstance(v, (int, float, str, bool)) or v is None:
        out[prefix] = v
    # lists (histograms, series) are not run metrics


def run_metrics(report: Dict[str, Any]) -> Dict[str, Any]:
    """Run-level metrics (everything but the per-direction figures):
    ``waf``, ``gc_*``, ``flash_*``, ``util_*``, ``device_*``, ``precondition_*``,
    ``sim_time_ns``, ``wall_time_s``, ``events``, ``seed``, ``workload`` and
    any scalar the report gains later (e.g. power), flattened with ``_``."""
    out: Dict[str, Any] = {}
    for k, v in report.items():
        if k in _SKIP_TOP:
            continue
        name = "util" if k == "utilisation" else k
        _walk(name, v, out)
    return out


def flatten(report: Dict[str, Any]) -> Dict[str, Any]:
    """One flat row: ``read_*``, ``write_*``, ``trim_*`` and ``flush_*``
    direction metrics, totals of reads and writes (``iops``,
    ``bw_bytes_per_s``) and :func:`run_metrics`. A system's report (several
    drives) also gives ``drive_<name>_<metric>`` for each drive (``iops``,
    ``bw_bytes_per_s``, ``read_iops``, ``read_lat_p99_ns``, ``waf``,
    ``util_pcie_up``, ...: see ``_DRIVE_COLS``) and
    ``link_<name>_<field>`` for each PCIe link (``util_up``, ``util_down``,
    ``bytes_up``, ``bytes_down``, ``payload_bw_bytes_per_s``, ``lanes``,
    ``generation``)."""
    row: Dict[str, Any] = {}
    tot_iops = 0.0
    tot_bw = 0.0
    for d in ("read", "write", "trim", "flush"):
        m = direction_metrics(report.get(d, {}) or {})
        if d in ("read", "write"):
            tot_iops += float(m["iops"] or 0.0)
            tot_bw += float(m["bw_bytes_per_s"] or 0.0)
        for k, v in m.items():
            row[f"{d}_{k}"] = v
    row["iops"] = tot_iops
    row["bw_bytes_per_s"] = tot_bw
    row.update(run_metrics(report))
    # A system of several drives: a few columns per drive and per link.
    for name, sub in (report.get("drives") or {}).items():
        f = flatten(sub)
        for k in _DRIVE_COLS:
            row[f"drive_{name}_{k}"] = f.get(k)
    for link in report.get("links") or []:
        for k in _LINK_COLS:
            row[f"link_{link.get('name', '')}_{k}"] = link.get(k)
    return row


def metric_names(report: Dict[str, Any]) -> List[str]:
    """Column names :func:`flatten` gives for this report."""
    return list(flatten(report).keys())
