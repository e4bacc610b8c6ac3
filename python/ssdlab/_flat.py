"""Flat views of a report dict (no pandas here: sweep workers import this)."""

from __future__ import annotations

from typing import Any, Dict, List

# Fields that are not metrics of one run, or not scalars.
_SKIP_TOP = {"schema", "version", "ignored_options", "timeseries", "read", "write", "trim", "flush", "inputs"}
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
    ``bw_bytes_per_s``) and :func:`run_metrics`."""
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
    return row


def metric_names(report: Dict[str, Any]) -> List[str]:
    """Column names :func:`flatten` gives for this report."""
    return list(flatten(report).keys())
