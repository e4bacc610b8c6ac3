"""One simulation run."""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from . import _core
from .device import Device, presets
from .job import Job
from .result import Result
from .system import System, job_for_system, system_presets

__all__ = ["run", "StopFlag", "interval_text", "DEFAULT_SEED"]

DEFAULT_SEED: int = _core.DEFAULT_SEED
StopFlag = _core.StopFlag

DeviceLike = Union[Device, System, str, "os.PathLike[str]", None]
JobLike = Union[Job, str, "os.PathLike[str]", None]
ProgressFn = Callable[[Optional[float], int, float], None]


def interval_text(v: Union[str, float, int, None]) -> Optional[str]:
    """A sampling interval as the core reads it: a duration string
    (``"1ms"``, ``"250us"``) as is, a number as seconds."""
    if v is None:
        return None
    if isinstance(v, str):
        return v
    ps = round(float(v) * 1e12)
    if ps <= 0:
        raise ValueError("sample_interval must be positive")
    return f"{ps}ps"


def _inputs(dev: Union[Device, System], job: Job, seed: int, precondition: str) -> Dict[str, Any]:
    if isinstance(dev, System):
        return {
            "system_toml": dev.to_toml(),
            "system_source": dev.source,
            "system_overrides": dev.overrides,
            "system_device_overrides": [list(x) for x in dev.device_overrides],
            "device_tomls": {n: dev.device(n).to_toml() for n in dev.drive_names},
            "job_fio": job.text,
            "job_source": job.source,
            "job_name": job.name,
            "seed": seed,
            "precondition": precondition,
        }
    return {
        "device_toml": dev.to_toml(),
        "device_source": dev.source,
        "device_overrides": dev.overrides,
        "job_fio": job.text,
        "job_source": job.source,
        "job_name": job.name,
        "seed": seed,
        "precondition": precondition,
    }


def run(
    device: DeviceLike = None,
    workload: JobLike = None,
    *,
    seed: int = DEFAULT_SEED,
    precondition: str = "fill",
    sample_interval: Union[str, float, None] = "1ms",
    latency_histogram: bool = True,
    progress: Union[bool, ProgressFn] = False,
    stop: Optional["_core.StopFlag"] = None,
    data_store: Optional[str] = None,
    power_loss_at: Union[str, float, Sequence[Union[str, float]], None] = None,
    after_recovery: Union[JobLike, Sequence[JobLike]] = None,
) -> Result:
    """Simulate ``workload`` on ``device`` (one drive, or a :class:`System`
    of several) and return the :class:`Result`.

    :param device: a :class:`Device`, a preset name or a TOML path (default
        ``pm9a3-960g``), or a :class:`System`. A system's result has the
        aggregate at the top level and one :class:`Result` per drive in
        ``result.drives``, its links in ``result.links``; a system preset's
        name is that system.
    :param workload: a :class:`Job` or a fio job file path (default: 4 KiB random read,
        QD32, 1M I/Os).
    :param seed: seed of every random stream; the same inputs and seed give
        bit-identical results.
    :param precondition: ``"fresh"`` (erased), ``"fill"`` (every LBA written
        once), ``"steady"`` (filled, then random overwrites until write
        amplification settles; built from a scaled-down drive where that
        applies, see ``Result.precondition``) or ``"steady-exact"`` (the
        same, always on the drive itself).
    :param sample_interval: record throughput and latency over simulated time
        at this interval (``"1ms"``, or seconds as a number); ``None`` for none.
    :param latency_histogram: keep the raw latency histograms (for CDFs).
    :param progress: ``True`` for a tqdm progress bar, or a callable
        ``f(fraction_or_None, ios_done, simulated_seconds)``.
    :param stop: a :class:`StopFlag`; setting it from another thread stops the
        run with :class:`ssdlab.RunStopped`.
    :param data_store: keep what is written so reads return it (fio's
        ``verify`` needs it): ``"on"`` (memory for drives up to 64 GiB, else a
        sparse temporary file), ``"memory"``, or a file path (a sparse file
        kept after the run). ``None`` (default): timing only. With
        ``power_loss_at`` the store holds what recovery rebuilt, and goes
        with the drive into ``after_recovery``.
    :param power_loss_at: fail the power at this simulated time (``"20ms"``,
        or seconds as a number): the run ends there and ``result.recovery``
        (:class:`Recovery`) says what the drive lost and how long rebuilding
        its mapping takes. A time after the run's end is a ``SimulationError``.
    :param after_recovery: after the power loss, run this :class:`Job` (or
        fio job file) on the drive as recovery rebuilt it, from a new host
        and clock: ``result.after_recovery`` is its :class:`Result`. Needs
        ``power_loss_at``. Block and hybrid mapping rebuild their block map
        first. Several power losses: lists for both (``power_loss_at=["5ms",
        "3ms"], after_recovery=[job2, job3]``): the second loss cuts
        ``job2``'s run (at 3 ms from its start), ``job3`` runs after it
        (``result.after_recovery.after_recovery``).

    The simulation runs with the GIL released; Ctrl-C interrupts it
    (``KeyboardInterrupt``) within a few milliseconds.
    """
    dev: Union[Device, System]
    if isinstance(device, System):
        dev = device
        job = job_for_system(Job.load(workload), device.drive_names)
    elif isinstance(device, str) and device in system_presets() and device not in presets():
        dev = System.preset(device)
        job = job_for_system(Job.load(workload), dev.drive_names)
    else:
        dev = Device.load(device) if device is not None else Device.default()
        job = Job.load(workload)
    # Several power losses: lists, the k-th job running after the k-th loss.
    losses = list(power_loss_at) if isinstance(power_loss_at, (list, tuple)) else (
        [] if power_loss_at is None else [power_loss_at])
    thens_in = list(after_recovery) if isinstance(after_recovery, (list, tuple)) else (
        [] if after_recovery is None else [after_recovery])
    if len(losses) > 1 and len(thens_in) + 1 < len(losses):
        raise ValueError(
            f"power_loss_at has {len(losses)} times but after_recovery {len(thens_in)} jobs: "
            "each power loss after the first cuts the run of the after_recovery job before it")
    if len(thens_in) > max(len(losses), 1):
        raise ValueError(
            f"after_recovery has {len(thens_in)} jobs but power_loss_at {len(losses)} times: "
            "each job runs after a power loss")
    thens: List[Job] = []
    for j in thens_in:
        t = Job.load(j)
        thens.append(job_for_system(t, dev.drive_names) if isinstance(dev, System) else t)
    then: Optional[Job] = thens[0] if thens else None

    def time_text(t: Union[str, float]) -> str:
        return t if isinstance(t, str) else f"{round(float(t) * 1e12)}ps"
    bar = None
    cb: Optional[ProgressFn] = None
    if progress is True:
        from tqdm.auto import tqdm

        bar = tqdm(total=1000, desc=f"{dev.name}", unit="‰", leave=False)

        def cb(frac: Optional[float], ios: int, sim_s: float) -> None:
            if frac is not None:
                bar.n = int(frac * 1000)
            bar.set_postfix_str(f"{ios} I/Os, {sim_s * 1e3:.1f} ms simulated", refresh=True)

    elif callable(progress):
        cb = progress
    try:
        handle = dev._handle()
        text, core_s = _core.run(
            handle,
            job._handle(handle.host_keywords),
            seed=seed,
            precondition=precondition,
            sample_interval=interval_text(sample_interval),
            latency_histogram=latency_histogram,
            progress=cb,
            stop=stop,
            data_store=data_store,
            power_loss_at=time_text(losses[0]) if losses else None,
            after_recovery=(then._handle(handle.host_keywords) if then is not None else None),
            later_power_losses=[
                (time_text(t), thens[k + 1]._handle(handle.host_keywords) if k + 1 < len(thens) else None)
                for k, t in enumerate(losses[1:])
            ],
        )
    finally:
        if bar is not None:
            bar.close()
    return Result(json.loads(text), _inputs(dev, job, seed, precondition), core_s)
