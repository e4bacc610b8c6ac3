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


def run_task(task: Task, stop: Optional["_core.StopFlag"] = None) -> Dict[str, Any]:
    """Run one point; never raises for a bad point.

    Returns ``{"ok": True, "metrics": {...}, "core_s": float, "worker_s": float}``
    or ``{"ok": False, "error": str, "error_type": str, "problems": [...]}``.
    """
    t0 = time.perf_counter()
    try:
        from .device import Device
        from .job import Job

        text, source, overrides = task["device"]
        dev = Device(text, source, overrides)
        jtext, jsource, jname = task["job"]
        job = Job.from_fio_text(jtext, jsource, jname)
        if task.get("job_options"):
            job = job.with_(task["job_options"])
        c0 = time.thread_time()
        out, core_s = _core.run(
            dev._handle(),
            job._handle(),
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
