"""Run one sweep or search point; imported by pool and Ray workers.

Kept free of pandas and matplotlib so that a worker process starts fast.
"""

from __future__ import annotations

import json
import os
import time
import traceback
from typing import Any, Dict, List, Optional, Tuple

from . import _core
from ._flat import flatten
from .errors import ConfigError, SimulationError, WorkloadError

# A task: everything a worker needs, as plain picklable data.
#   device: (text, source, [(key, value), ...])
#   job:    (text, source, name, {option: value})
#   seed, precondition
#   system (optional, replaces device): (text, source, [(key, value), ...],
#           [(device ref, text, source, [(key, value), ...]), ...],
#           [(drive name or "*", key, value), ...])
Task = Dict[str, Any]


def make_task(
    device: Tuple[str, str, List[Tuple[str, Any]]],
    job: Tuple[str, str, str],
    job_options: Dict[str, Any],
    seed: int,
    precondition: str,
) -> Task:
    return {
        "device": device,
        "job": job,
        "job_options": job_options,
        "seed": seed,
        "precondition": precondition,
    }


# Validated handles of recent points, so that a sweep builds each distinct
# device and job once per process (both are immutable; a failure is not cached).
_HANDLES: "Dict[str, Any]" = {}
_HANDLES_MAX = 256


def _cached(key: str, make: Any) -> Any:
    h = _HANDLES.get(key)
    if h is None:
        h = make()
        if len(_HANDLES) >= _HANDLES_MAX:
            _HANDLES.clear()
        _HANDLES[key] = h
    return h


def _handles(task: Task) -> Tuple[Any, Any]:
    from .device import Device
    from .job import Job

    text, source, overrides = task["device"]
    jtext, jsource, jname = task["job"]
    opts = task.get("job_options") or {}
    sys_data = task.get("system")
    drives: List[str] = []

    def dev() -> Any:
        return Device(text, source, overrides)._handle()

    def system() -> Any:
        from .system import System

        return System._from_task(sys_data)._handle()

    if sys_data is not None:
        skey = "s" + json.dumps(list(sys_data), sort_keys=True, default=repr)
        target = _cached(skey, system)
        drives = list(target.drive_names)
    else:
        dkey = "d" + json.dumps([text, source, overrides], sort_keys=True, default=repr)
        target = _cached(dkey, dev)

    def job() -> Any:
        j = Job.from_fio_text(jtext, jsource, jname)
        j = j.with_(opts) if opts else j
        if sys_data is not None:
            from .system import job_for_system

            j = job_for_system(j, drives)
        return j._handle(target.host_keywords)

    # A job using fio's host keywords depends on the host it runs on.
    host = list(target.host_keywords) if "$" in jtext else None
    jkey = "j" + json.dumps([jtext, jsource, jname, opts, drives, host], sort_keys=True, default=repr)
    return target, _cached(jkey, job)


def run_task(task: Task, stop: Optional["_core.StopFlag"] = None) -> Dict[str, Any]:
    """Run one point; never raises for a bad point.

    Returns ``{"ok": True, "metrics": {...}, "core_s": float, "worker_s": float}``
    or ``{"ok": False, "error": str, "error_type": str, "problems": [...]}``.
    """
    t0 = time.perf_counter()
    try:
        dev, job = _handles(task)
        c0 = time.thread_time()
        out, core_s = _core.run(
            dev,
            job,
            seed=int(task["seed"]),
            precondition=task["precondition"],
            stop=stop,
        )
        core_cpu = time.thread_time() - c0
        metrics = flatten(json.loads(out))
        return {
            "ok": True,
            "metrics": metrics,
            "core_s": core_s,
            "worker_s": time.perf_counter() - t0,
            # CPU time (immune to other load on the machine), for overhead accounting
            "core_cpu_s": core_cpu,
            "pid": os.getpid(),
            "proc_cpu_s": time.process_time(),
        }
    except KeyboardInterrupt:
        raise
    except ConfigError as e:
        return _fail(e, [list(p) for p in e.problems], t0)
    except (WorkloadError, SimulationError) as e:
        return _fail(e, [], t0)
    except Exception as e:  # a bug: report it with its traceback, keep the sweep going
        return _fail(e, [], t0, traceback.format_exc())


def _fail(e: BaseException, problems: List[Any], t0: float, tb: Optional[str] = None) -> Dict[str, Any]:
    msg = str(e).strip()
    return {
        "ok": False,
        "error": msg,
        "error_type": type(e).__name__,
        "problems": problems,
        "traceback": tb,
        "core_s": 0.0,
        "worker_s": time.perf_counter() - t0,
    }


def run_tasks(tasks: List[Task]) -> List[Dict[str, Any]]:
    """Run a batch of tasks in order (one pool or Ray call for several points)."""
    return [run_task(t) for t in tasks]
