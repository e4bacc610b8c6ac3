"""Computational storage (seed 003): kernels that run inside a drive with an
FPGA, on the data the drive really holds.

::

    import ssdlab
    r = ssdlab.csd.run(kernel="vadd", elements=1 << 20, cus=5, local_buffer="256KiB")
    r.output                 # numpy int32 array, as read back from the drive
    r.fpga["total_s"], r.host["total_s"], r.speedup, r.energy["fpga_j"]

    t = ssdlab.csd.kernel_time(kernel="merge", elements=1 << 20, cus=15)   # timing model only
    df = ssdlab.csd.sweep({"cus": range(1, 16), "kernel": ["count", "vadd"]}, elements=1 << 20)

:func:`run` simulates the whole flow (the host writes the inputs, the SSD
moves them peer to peer to the FPGA's memory through the drive's own PCIe
switch, the kernel runs, the result is written back) and the host-CPU
baseline in one simulation; :func:`kernel_time` evaluates the FPGA and host
timing models alone (no drive), cheap enough for large sweeps. Models and
sources: docs/models/computational-storage.md; seed 003's findings:
docs/seed003.md.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _core
from .device import Device
from .errors import SsdlabError

__all__ = ["CsdResult", "run", "kernel_time", "sweep", "KERNELS", "DEFAULT_DEVICE"]

KERNELS = ("count", "average", "vadd", "merge")
"""The built-in kernels."""
DEFAULT_DEVICE = "smartssd-3.84t"
"""The computational storage preset (seed 003's SmartSSD)."""


class CsdError(SsdlabError, ValueError):
    """A computational-storage run was refused (bad kernel, sizes, resources)."""


def _device(device: Union[str, Device, None]) -> Device:
    if device is None:
        return Device.preset(DEFAULT_DEVICE)
    if isinstance(device, str):
        return Device.preset(device)
    return device


def _counts(**kw: Any) -> None:
    """Whole, non-negative counts, or a CsdError naming the keyword."""
    for k, v in kw.items():
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise CsdError(f"{k}: expected a whole number, got {v!r}")
        if int(v) < 0:
            raise CsdError(f"{k}: must not be negative, got {v}")


def _int32(a: Iterable[int], i: int) -> List[int]:
    """Input array ``i`` as int32 values, or a CsdError naming it."""
    import numpy as np

    arr = np.asarray(a if not isinstance(a, (str, bytes)) else [a])
    if arr.ndim != 1:
        raise CsdError(f"inputs[{i}]: expected a one-dimensional array, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise CsdError(f"inputs[{i}]: expected integers, got {arr.dtype}")
    if arr.size and (int(arr.min()) < -(2**31) or int(arr.max()) > 2**31 - 1):
        raise CsdError(f"inputs[{i}]: values must fit int32 (-2^31 to 2^31-1)")
    return arr.astype(np.int32).tolist()


@dataclass
class CsdResult:
    """One computational-storage run."""

    report: Dict[str, Any]
    """The whole ``ssdlab.csd.v1`` report (as ``ssdlab csd run --output-format json``)."""
    output: Any = None
    """The output array (numpy int32) as read back from the drive, for vadd and merge; else None."""
    result: Dict[str, Any] = field(default_factory=dict)
    """The kernel's result: ``{"kind": "count", "count": ...}``, ``{"kind": "average", "mean": ...}``
    or ``{"kind": "array", "len": ..., "crc32c": ...}``."""
    fpga: Dict[str, float] = field(default_factory=dict)
    """FPGA flow phases, seconds: p2p_in_s, launch_s, compute_s, write_back_s, total_s (and program_load_s, input_write_s)."""
    host: Dict[str, float] = field(default_factory=dict)
    """Host baseline phases, seconds: read_s, compute_s, write_back_s, total_s (and clock_ghz)."""
    energy: Dict[str, float] = field(default_factory=dict)
    """Energy of one run, joules: fpga_j (static, compute, DRAM) and host_cpu_j."""

    @property
    def speedup(self) -> float:
        """Host total / FPGA total (above 1: the FPGA flow is faster)."""
        return float(self.report["speedup"])

    @property
    def compute_speedup(self) -> float:
        """Host compute / FPGA launch + compute."""
        return float(self.report["compute_speedup"])

    def flat(self) -> Dict[str, Any]:
        """One flat row (for a DataFrame)."""
        row: Dict[str, Any] = {"kernel": self.report["kernel"]["name"]}
        row.update({f"fpga_{k}": v for k, v in self.fpga.items()})
        row.update({f"host_{k}": v for k, v in self.host.items()})
        row.update(self.energy)
        row["speedup"] = self.speedup
        row["compute_speedup"] = self.compute_speedup
        row["p2p_bandwidth"] = self.report["p2p_bandwidth"]
        t = self.report["kernel_timing"]
        row.update({"cycles": t["cycles"], "bound": t["bound"], "bank_utilisation": t["bank_utilisation"]})
        return row


def run(
    device: Union[str, Device, None] = None,
    kernel: str = "count",
    elements: int = 1 << 20,
    inputs: Optional[Sequence[Iterable[int]]] = None,
    value: int = 7,
    cus: int = 1,
    local_buffer: Optional[str] = None,
    pipeline: bool = False,
    seed: int = 42,
    host_clock: str = "3.7GHz",
    io_block: str = "128KiB",
    io_depth: int = 32,
) -> CsdResult:
    """Run ``kernel`` inside the computational storage drive ``device``
    (default ``smartssd-3.84t``) on generated inputs of ``elements`` int32
    each, or on ``inputs`` (sequences or numpy arrays of int32), built with
    ``cus`` compute units, a ``local_buffer`` (e.g. ``"256KiB"``) and loop
    ``pipeline`` pragmas; the host baseline runs at ``host_clock``."""
    dev = _device(device)
    _counts(elements=elements, cus=cus, io_depth=io_depth, seed=seed)
    ins = None if inputs is None else [_int32(a, i) for i, a in enumerate(inputs)]
    try:
        text, out = _core.csd_run(
            dev._handle(), kernel, int(elements), ins, int(value), int(cus), local_buffer,
            bool(pipeline), int(seed), host_clock, io_block, int(io_depth),
        )
    except ValueError as e:
        raise CsdError(str(e)) from None
    rep = json.loads(text)
    arr = None
    if out is not None:
        import numpy as np

        arr = np.asarray(out, dtype=np.int32)
    return CsdResult(
        report=rep, output=arr, result=rep["result"], fpga=rep["fpga_flow"], host=rep["host_flow"],
        energy=rep["energy"],
    )


def kernel_time(
    device: Union[str, Device, None] = None,
    kernel: str = "count",
    elements: int = 1 << 20,
    cus: int = 1,
    local_buffer: Optional[str] = None,
    pipeline: bool = False,
    seed: int = 42,
    host_clock: str = "3.7GHz",
    value: int = 7,
) -> Dict[str, Any]:
    """The FPGA and host timing models alone (no drive simulated): a dict with
    ``fpga_s`` (launch + run), ``host_s``, the ``timing`` details, the
    ``work`` and the ``result`` on generated inputs."""
    dev = _device(device)
    _counts(elements=elements, cus=cus, seed=seed)
    try:
        return json.loads(_core.csd_kernel_time(
            dev._handle(), kernel, int(elements), int(cus), local_buffer, bool(pipeline), int(seed),
            host_clock, int(value),
        ))
    except ValueError as e:
        raise CsdError(str(e)) from None


def sweep(grid: Mapping[str, Iterable[Any]], full: bool = False, **fixed: Any):
    """Every combination of ``grid`` (parameter -> values, any of
    :func:`run`'s keywords) with ``fixed`` keywords: a pandas DataFrame, one
    row per point (the grid's values, then the figures). ``full=False`` uses
    :func:`kernel_time` (timing models only, fast); ``full=True`` simulates
    each flow with :func:`run`. A point the models refuse (e.g. more compute
    units than the FPGA offers) gets its error in an ``error`` column."""
    import pandas as pd

    keys = list(grid)
    rows: List[Dict[str, Any]] = []
    for values in itertools.product(*(list(grid[k]) for k in keys)):
        point = dict(zip(keys, values))
        kw = {**fixed, **point}
        row: Dict[str, Any] = dict(point)
        try:
            if full:
                row.update(run(**kw).flat())
            else:
                kw.pop("inputs", None)
                for k in ("io_block", "io_depth"):
                    kw.pop(k, None)
                t = kernel_time(**kw)
                row.update({"fpga_s": t["fpga_s"], "host_s": t["host_s"], "cycles": t["timing"]["cycles"],
                            "bound": t["timing"]["bound"], "bank_utilisation": t["timing"]["bank_utilisation"],
                            "per_cu_throughput": t["timing"]["per_cu_throughput"]})
        except CsdError as e:
            row["error"] = str(e)
        rows.append(row)
    return pd.DataFrame(rows)
