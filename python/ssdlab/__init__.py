"""ssdlab: a deterministic full-system SSD simulator, from Python.

The engine is the same compiled Rust core as the ``ssdlab`` command::

    import ssdlab
    dev = ssdlab.Device.preset("pm9a3-960g").with_(nand__channels=16)
    job = ssdlab.Job(rw="randread", bs="4k", iodepth=32, number_ios=200_000)
    r = ssdlab.run(dev, job, seed=1, precondition="fill")
    r.read.iops, r.read.lat_ns.p99, r.to_pandas(), r.timeseries, r.histogram

    df = ssdlab.sweep(dev, job, grid={"job.iodepth": [1, 8, 32], "nand.channels": [4, 8]})

    sys = ssdlab.System.preset("seed002-4x-gen3-switch")     # host, PCIe switch, four drives
    r = ssdlab.run(sys, ssdlab.Job(rw="read", bs="128k", iodepth=32, filename="*", number_ios=20_000))
    r.read.bw_bytes_per_s, r.drives["nvme0"].read.iops, r.links_frame()
    front = ssdlab.search(dev, job, space={...}, objectives={"read_iops": "max", "read_lat_p99_ns": "min"})

Modules: :mod:`ssdlab.plot` (matplotlib figures) and :mod:`ssdlab.report`
(self-contained HTML reports); :func:`sweep` runs grids on local cores or Ray,
:func:`search` is the Optuna NSGA-II design search; ``python -m ssdlab`` is
the command-line door (run, sweep, search, report).
"""

from __future__ import annotations

from typing import Any, List, Tuple

from . import _core
from . import csd
from . import serve
from .device import Device, presets
from .errors import ConfigError, Problem, RunStopped, SimulationError, SsdlabError, WorkloadError
from .job import Job
from .result import (Checkpoints, DataStore, Direction, FlashOps, Gc, Latency, MappingCache, Merges, PageCache,
                     Recovery, Result, Slc, Utilisation, ValidityLog, Verify, WafSplit, Wear)
from .runner import DEFAULT_SEED, StopFlag, run
from .system import System, system_presets
from ._search import Choice, Float, Int, load_trials, pareto_front, search
from ._sweep import ray_init, sweep

__version__: str = _core.__version__

__all__ = [
    "csd",
    "serve",
    "Device",
    "System",
    "Job",
    "Result",
    "Direction",
    "Latency",
    "Gc",
    "MappingCache",
    "WafSplit",
    "Wear",
    "PageCache",
    "DataStore",
    "Recovery",
    "Checkpoints",
    "Merges",
    "ValidityLog",
    "Verify",
    "Slc",
    "FlashOps",
    "Utilisation",
    "run",
    "sweep",
    "ray_init",
    "search",
    "Int",
    "Float",
    "Choice",
    "pareto_front",
    "load_trials",
    "presets",
    "preset_descriptions",
    "system_presets",
    "StopFlag",
    "DEFAULT_SEED",
    "SsdlabError",
    "ConfigError",
    "Problem",
    "WorkloadError",
    "SimulationError",
    "RunStopped",
    "plot",
    "report",
    "__version__",
]


def preset_descriptions() -> List[Tuple[str, str]]:
    """(name, description) of every shipped preset."""
    return list(_core.presets())


def __getattr__(name: str) -> Any:
    # plot and report import matplotlib: load them on first use.
    if name in ("plot", "report"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'ssdlab' has no attribute {name!r}")
