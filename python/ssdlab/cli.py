"""``python -m ssdlab``: run, sweep, search and report from the command line.

The Rust ``ssdlab`` binary hands its ``sweep``, ``search`` and ``report``
subcommands to this module.

Sweep spec (TOML)::

    device = "pm9a3-960g"        # preset name or device file (relative to this file)
    # system = "seed002-4x-gen3-switch"   # or a system: preset or file (sweeps only);
    #                                     # grid keys "system.switch[0].upstream_lanes", ...
    job = "mixed.fio"            # fio job file (relative to this file), or a [job] table
    seeds = [1, 2]               # or a count; default: the default seed
    precondition = "fill"        # fresh | fill | steady | steady-exact
    backend = "local"            # local (threads) | processes | ray | sequential
    output = "sweep.csv"         # .csv or .parquet (relative to this file)

    [device_overrides]           # optional edits of the base device
    "ftl.over_provisioning" = "12%"

    [grid]                       # every combination is run
    "job.iodepth" = [1, 8, 32]
    "nand.channels" = [4, 8]

Search spec: the same ``device``, ``job``, ``precondition``, ``backend`` and
``output`` keys, and::

    n_trials = 40
    seed = 0                     # sampler seed
    storage = "search.db"        # SQLite file (relative to this file) or an Optuna URL
    study_name = "my-study"      # optional; default derived from the spec
    population_size = 16
    constraints = ["read_lat_p99_ns <= 500000"]

    [space]
    "nand.channels" = [4, 8, 16]                  # choices
    "job.iodepth" = {int = [1, 64], log = true}
    "nand.t_read[0]" = {float = [30, 60], unit = "us"}

    [objectives]
    read_iops = "max"
    read_lat_p99_ns = "min"
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Dict, List, Optional

__all__ = ["main"]


def _toml(path: str) -> Dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    with open(path, "rb") as f:
        return tomllib.load(f)


def _rel(base: str, p: str) -> str:
    return p if os.path.isabs(p) else os.path.join(os.path.dirname(os.path.abspath(base)), p)


def _device_job(spec: Dict[str, Any], path: str) -> Any:
    from . import Device, Job

    d = spec.get("device")
    if d is None:
        dev = Device.default()
    else:
        from .device import presets

        dev = Device.preset(d) if d in presets() else Device.from_toml(_rel(path, d))
    if spec.get("device_overrides"):
        dev = dev.with_(spec["device_overrides"])
    j = spec.get("job")
    if j is None:
        job = Job.default()
    elif isinstance(j, dict):
        j = dict(j)
        name = str(j.pop("name", "job"))
        job = Job(name, **j)
    else:
        job = Job.from_fio(_rel(path, j))
    return dev, job


def _write(df: Any, out: str) -> None:
    if out.endswith((".parquet", ".pq")):
        df.to_parquet(out, index=False)
    else:
        df.to_csv(out, index=False)
    print(f"wrote {out} ({len(df)} rows)", file=sys.stderr)


def _known(spec: Dict[str, Any], allowed: List[str], path: str) -> None:
    unknown = sorted(set(spec) - set(allowed))
    if unknown:
        raise SystemExit(f"{path}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(allowed))}")


def cmd_sweep(a: argparse.Namespace) -> int:
    from . import sweep

    spec = _toml(a.spec)
    _known(spec, ["device", "system", "job", "seeds", "precondition", "backend", "workers", "output", "grid",
                  "device_overrides", "address"], a.spec)
    dev, job = _device_job(spec, a.spec)
    if "system" in spec:
        from .system import System, system_presets

        if "device" in spec:
            raise SystemExit(f"{a.spec}: give 'device' or 'system', not both")
        s = str(spec["system"])
        dev = System.preset(s) if s in system_presets() else System.from_toml(_rel(a.spec, s))
        if spec.get("device_overrides"):
            dev = dev.with_device(spec["device_overrides"])
    if not spec.get("grid"):
        raise SystemExit(f"{a.spec}: a sweep needs a [grid] table")
    out = a.output or (_rel(a.spec, spec["output"]) if "output" in spec else "sweep.csv")
    df = sweep(
        dev,
        job,
        spec["grid"],
        seeds=spec.get("seeds"),
        precondition=spec.get("precondition", "fill"),
        backend=a.backend or spec.get("backend", "local"),
        workers=a.workers or spec.get("workers"),
        address=spec.get("address"),
        progress=not a.no_progress,
    )
    _write(df, out)
    failed = int(df.attrs.get("failed", 0))
    if failed:
        print(f"{failed} of {len(df)} points failed (see the 'error' column)", file=sys.stderr)
    return 1 if failed == len(df) else 0


def cmd_search(a: argparse.Namespace) -> int:
    from ._search import _param, search

    spec = _toml(a.spec)
    _known(spec, ["device", "job", "precondition", "backend", "workers", "output", "space", "objectives",
                  "constraints", "n_trials", "seed", "sim_seed", "storage", "study_name", "population_size",
                  "device_overrides", "address"], a.spec)
    dev, job = _device_job(spec, a.spec)
    if not spec.get("space") or not spec.get("objectives"):
        raise SystemExit(f"{a.spec}: a search needs [space] and [objectives] tables")
    storage = a.storage or spec.get("storage")
    if storage and "://" not in storage and not a.storage:
        storage = _rel(a.spec, storage)
    out = a.output or (_rel(a.spec, spec["output"]) if "output" in spec else "pareto.csv")
    df = search(
        dev,
        job,
        {k: _param(k, v) for k, v in spec["space"].items()},
        spec["objectives"],
        constraints=spec.get("constraints", []),
        n_trials=a.trials or int(spec.get("n_trials", 50)),
        seed=int(spec.get("seed", 0)),
        sim_seed=int(spec.get("sim_seed", 42)),
        precondition=spec.get("precondition", "fill"),
        storage=storage,
        study_name=spec.get("study_name"),
        population_size=spec.get("population_size"),
        backend=a.backend or spec.get("backend", "local"),
        workers=a.workers or spec.get("workers"),
        address=spec.get("address"),
        progress=not a.no_progress,
    )
    _write(df, out)
    at = df.attrs
    print(f"study {at['study_name']} in {at['storage']}: {at['trials']} trials, {at['failed']} failed, "
          f"{at['feasible']} feasible, {len(df)} on the Pareto front", file=sys.stderr)
    return 0


def cmd_report(a: argparse.Namespace) -> int:
    from .report import write_report

    out = a.output or os.path.splitext(a.result)[0] + ".html"
    write_report(a.result, out, png_dir=a.png_dir, title=a.title)
    print(f"wrote {out}" + (f" and PNGs in {a.png_dir}" if a.png_dir else ""), file=sys.stderr)
    return 0


def cmd_run(a: argparse.Namespace) -> int:
    from . import Device, Job, run

    dev = Device.load(a.device) if a.device else Device.default()
    job = Job.from_fio(a.job) if a.job else Job.default()
    r = run(dev, job, seed=a.seed, precondition=a.precondition, sample_interval=a.sample_interval or None,
            progress=not a.no_progress and sys.stderr.isatty())
    print(r.summary())
    if a.output:
        r.save(a.output)
        print(f"wrote {a.output}", file=sys.stderr)
    if a.report:
        r.write_html(a.report)
        print(f"wrote {a.report}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ssdlab", description="ssdlab from Python: run, sweep, search, report")
    sub = p.add_subparsers(dest="cmd", required=True)

    r = sub.add_parser("run", help="one simulation, saving the full result (time series, histogram) as JSON")
    r.add_argument("--device", help="preset name or device TOML (default pm9a3-960g)")
    r.add_argument("--job", help="fio job file (default: 4 KiB random read QD32, 1M I/Os)")
    r.add_argument("--seed", type=int, default=42)
    r.add_argument("--precondition", default="fill", choices=["fresh", "fill", "steady", "steady-exact"])
    r.add_argument("--sample-interval", default="1ms", help="time-series interval, e.g. 1ms ('' for none)")
    r.add_argument("-o", "--output", help="write the result JSON here")
    r.add_argument("--report", help="also write an HTML report here")
    r.add_argument("--no-progress", action="store_true")
    r.set_defaults(fn=cmd_run)

    s = sub.add_parser("sweep", help="run every combination of a grid (SPEC.toml) and write CSV/Parquet")
    s.add_argument("spec")
    s.add_argument("-o", "--output", help="CSV or .parquet file (default: the spec's output, or sweep.csv)")
    s.add_argument("--backend", choices=["local", "processes", "ray", "sequential"])
    s.add_argument("--workers", type=int)
    s.add_argument("--no-progress", action="store_true")
    s.set_defaults(fn=cmd_sweep)

    q = sub.add_parser("search", help="multi-objective design search (Optuna NSGA-II), resumable")
    q.add_argument("spec")
    q.add_argument("-o", "--output", help="Pareto front as CSV or .parquet (default: the spec's output, or pareto.csv)")
    q.add_argument("--trials", type=int, help="total trials (overrides n_trials)")
    q.add_argument("--storage", help="Optuna storage URL or SQLite file")
    q.add_argument("--backend", choices=["local", "processes", "ray", "sequential"])
    q.add_argument("--workers", type=int)
    q.add_argument("--no-progress", action="store_true")
    q.set_defaults(fn=cmd_search)

    h = sub.add_parser("report", help="self-contained HTML report (and PNGs) of a result JSON")
    h.add_argument("result", help="result JSON (ssdlab run --output-format json, or Result.save)")
    h.add_argument("-o", "--output", help="HTML file (default: RESULT.html)")
    h.add_argument("--png-dir", help="also write the plots as PNG files here")
    h.add_argument("--title")
    h.set_defaults(fn=cmd_report)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    from .errors import SsdlabError

    a = build_parser().parse_args(argv)
    try:
        return int(a.fn(a))
    except SsdlabError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except (OSError, ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
