"""Design-space sweeps: every combination of a grid, on local cores or Ray."""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import time
import warnings
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core, _worker
from .device import Device
from .job import Job
from .runner import DEFAULT_SEED, DeviceLike, JobLike
from .system import System

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["sweep", "expand_grid", "resolve_seeds", "Backend"]

Backend = str  # "local" (threads) | "processes" | "ray" | "sequential"

# Grid keys that are not device paths or job options.
_SPECIAL = {"seed", "precondition", "device", "system"}


def resolve_seeds(seeds: Union[int, Iterable[int], None]) -> List[int]:
    """``None`` -> ``[DEFAULT_SEED]``; an int ``n`` -> ``n`` seeds starting at
    ``DEFAULT_SEED``; an iterable -> those seeds."""
    if seeds is None:
        return [DEFAULT_SEED]
    if isinstance(seeds, int):
        if seeds < 1:
            raise ValueError("seeds: a count must be at least 1")
        return [DEFAULT_SEED + i for i in range(seeds)]
    out = [int(s) for s in seeds]
    if not out:
        raise ValueError("seeds: empty list")
    return out


def expand_grid(grid: Mapping[str, Sequence[Any]]) -> List[Dict[str, Any]]:
    """Every combination of ``grid`` (key -> list of values), the last key
    varying fastest."""
    keys = list(grid)
    vals = []
    for k in keys:
        v = grid[k]
        if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
            raise TypeError(f"grid[{k!r}] must be a list of values, not {type(v).__name__}")
        v = list(v)
        if not v:
            raise ValueError(f"grid[{k!r}] is empty")
        vals.append(v)
    return [dict(zip(keys, combo)) for combo in itertools.product(*vals)]


def _split_point(
    point: Mapping[str, Any],
) -> Tuple[List[Tuple[str, Any]], Dict[str, Any], Dict[str, Any], List[Tuple[str, Any]]]:
    """(device overrides, job options, special values, system overrides) of one point."""
    dev_ov: List[Tuple[str, Any]] = []
    job_opts: Dict[str, Any] = {}
    special: Dict[str, Any] = {}
    sys_ov: List[Tuple[str, Any]] = []
    for k, v in point.items():
        if k in _SPECIAL:
            special[k] = v
        elif k.startswith("job."):
            job_opts[k[4:]] = v
        elif k.startswith("system."):
            sys_ov.append((k[7:], v))
        else:
            dev_ov.append((k[7:] if k.startswith("device.") else k, v))
    return dev_ov, job_opts, special, sys_ov


def _display(v: Any) -> Any:
    if isinstance(v, (Device, System)):
        return v.name
    if isinstance(v, Job):
        return v.name
    return v


def point_task(base: Union[Device, System], job: Job, point: Mapping[str, Any], seed: int,
               precondition: str) -> _worker.Task:
    """The worker task for one point (device or system overrides, job options, seed).

    On a :class:`System` (the base, or the point's ``"system"`` value),
    ``system.<key>`` keys change the system file and device keys
    (``device.<key>`` or bare) change every drive's device."""
    dev_ov, job_opts, special, sys_ov = _split_point(point)
    if "system" in special or isinstance(base, System):
        if "device" in special:
            raise ValueError("a sweep point has both a 'device' and a system; give a list of systems as 'system'")
        sys_ = System.load(special["system"]) if "system" in special else base
        assert isinstance(sys_, System)
        text, source, overrides, devices, sys_dev_ov = sys_._task_data()
        task = _worker.make_task(
            ("", "", []),
            (job.text, job.source, job.name),
            job_opts,
            int(special.get("seed", seed)),
            str(special.get("precondition", precondition)),
        )
        task["system"] = (text, source, overrides + sys_ov, devices, sys_dev_ov + [("*", k, v) for k, v in dev_ov])
        return task
    if sys_ov:
        raise ValueError(
            f"grid key 'system.{sys_ov[0][0]}' changes a system; sweep a ssdlab.System (or give 'system': [...])"
        )
    dev = Device.load(special["device"]) if "device" in special else base
    assert isinstance(dev, Device)
    overrides = list(dev._overrides) + dev_ov
    return _worker.make_task(
        (dev.text, dev.source, overrides),
        (job.text, job.source, job.name),
        job_opts,
        int(special.get("seed", seed)),
        str(special.get("precondition", precondition)),
    )


class _NullBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(total: int, desc: str, enabled: bool) -> Any:
    if not enabled:
        return _NullBar()  # even a disabled tqdm starts a monitor thread (which rules out fork)
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="run", file=sys.stderr)


def _mp_context() -> Any:
    import multiprocessing as mp
    import threading

    methods = mp.get_all_start_methods()
    # fork is the cheapest start, and safe while this process has one thread;
    # otherwise (a progress-bar monitor, Ray, the caller's threads) forkserver.
    if "fork" in methods and threading.active_count() == 1:
        return mp.get_context("fork")
    if "forkserver" in methods:
        ctx = mp.get_context("forkserver")
        ctx.set_forkserver_preload(["ssdlab._worker"])
        return ctx
    return mp.get_context("spawn")


@contextlib.contextmanager
def _main_hidden() -> Iterator[None]:
    """Start worker processes without re-importing ``__main__``.

    Workers only run :mod:`ssdlab._worker` on plain data, so they never need
    the caller's main module; hiding it while they start means a script
    needs no ``if __name__ == "__main__"`` guard, and code read from stdin
    or typed in a REPL works too."""
    main = sys.modules.get("__main__")
    saved = {k: getattr(main, k) for k in ("__file__", "__spec__") if main is not None and hasattr(main, k)}
    try:
        if main is not None:
            if "__file__" in saved:
                del main.__file__
            main.__spec__ = None
        yield
    finally:
        if main is not None:
            for k, v in saved.items():
                setattr(main, k, v)


def process_pool(workers: int) -> Any:
    """A process pool with all ``workers`` started (see :func:`_main_hidden`)."""
    from concurrent.futures import ProcessPoolExecutor

    with _main_hidden():
        ex = ProcessPoolExecutor(max_workers=workers, mp_context=_mp_context())
        # start every worker now, while __main__ is hidden
        futs = [ex.submit(os.getpid) for _ in range(workers)]
        for f in futs:
            f.result()
    return ex


def run_local(tasks: List[_worker.Task], workers: Optional[int], progress: bool, desc: str = "sweep",
              on_result: Optional[Callable[[int, Dict[str, Any]], None]] = None) -> List[Dict[str, Any]]:
    """Run tasks on a process pool (all cores by default); results in task order."""
    n = len(tasks)
    results: List[Optional[Dict[str, Any]]] = [None] * n
    workers = max(1, min(workers or os.cpu_count() or 1, n))
    ex = process_pool(workers) if workers > 1 else None
    bar = _bar(n, desc, progress)
    try:
        if workers == 1:
            for i, t in enumerate(tasks):
                results[i] = _worker.run_task(t)
                if on_result:
                    on_result(i, results[i])  # type: ignore[arg-type]
                bar.update(1)
        else:
            from concurrent.futures import FIRST_COMPLETED, wait

            # Small chunks: fewer round trips, still balanced and a live progress bar.
            chunk = max(1, min(4, n // (workers * 16)))
            starts = list(range(0, n, chunk))
            assert ex is not None
            try:
                with _main_hidden():
                    futs = {ex.submit(_worker.run_tasks, tasks[s : s + chunk]): s for s in starts}
                pending = set(futs)
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in done:
                        s0 = futs[f]
                        idx = range(s0, min(s0 + chunk, n))
                        try:
                            out = f.result()
                        except KeyboardInterrupt:
                            raise
                        except BaseException as e:  # worker died: report the points, keep going
                            out = []
                            for _ in idx:
                                r = _worker._fail(e, [], time.perf_counter())
                                r["error"] = f"worker failed: {type(e).__name__}: {e}"
                                out.append(r)
                        for i, r in zip(idx, out):
                            results[i] = r
                            if on_result:
                                on_result(i, r)
                        bar.update(len(idx))
            except BaseException:
                ex.shutdown(wait=False, cancel_futures=True)
                raise
            ex.shutdown(wait=True)
    finally:
        bar.close()
    return results  # type: ignore[return-value]


def run_threads(tasks: List[_worker.Task], workers: Optional[int], progress: bool, desc: str = "sweep",
                on_result: Optional[Callable[[int, Dict[str, Any]], None]] = None) -> List[Dict[str, Any]]:
    """Run tasks on threads of this process (all cores by default); results in task order.

    The compiled core releases the GIL for the whole run, so threads run
    simulations in parallel without the start-up, pickling and import
    costs of worker processes; only the few Python steps of each point
    (building the handles, flattening the report) take turns on the GIL.
    Ctrl-C sets a shared stop flag that ends every running simulation."""
    import queue
    from concurrent.futures import ThreadPoolExecutor

    n = len(tasks)
    results: List[Optional[Dict[str, Any]]] = [None] * n
    workers = max(1, min(workers or os.cpu_count() or 1, n))
    stop = _core.StopFlag()
    bar = _bar(n, desc, progress)
    done: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
    ex = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ssdlab-sweep")
    try:
        for i, t in enumerate(tasks):
            ex.submit(_worker.run_task, t, stop).add_done_callback(lambda f, i=i: done.put((i, f)))
        for _ in range(n):
            while True:
                try:
                    # A timeout keeps the main thread responsive to Ctrl-C.
                    i, f = done.get(timeout=0.2)
                    break
                except queue.Empty:
                    continue
            results[i] = f.result()
            if on_result:
                on_result(i, results[i])  # type: ignore[arg-type]
            bar.update(1)
    except BaseException:
        stop.set()
        ex.shutdown(wait=True, cancel_futures=True)
        raise
    finally:
        bar.close()
    ex.shutdown(wait=True)
    return results  # type: ignore[return-value]


def ray_init(address: Optional[str] = None, num_cpus: Optional[int] = None) -> bool:
    """Connect to Ray: ``address`` or ``RAY_ADDRESS`` if given, otherwise start
    a local instance sized to this machine, without the dashboard. Returns
    whether a local instance was started here."""
    import ray

    if ray.is_initialized():
        return False
    addr = address or os.environ.get("RAY_ADDRESS")
    if addr:
        ray.init(address=addr, log_to_driver=False)
        return False
    ray.init(
        num_cpus=num_cpus or os.cpu_count() or 1,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    return True


def run_ray(tasks: List[_worker.Task], address: Optional[str], progress: bool, desc: str = "sweep",
            on_result: Optional[Callable[[int, Dict[str, Any]], None]] = None) -> List[Dict[str, Any]]:
    """Run tasks as Ray tasks (one CPU each); results in task order."""
    import ray

    ray_init(address)
    remote = ray.remote(num_cpus=1, max_retries=0)(_worker.run_task)
    refs = [remote.remote(t) for t in tasks]
    index = {r: i for i, r in enumerate(refs)}
    results: List[Optional[Dict[str, Any]]] = [None] * len(tasks)
    bar = _bar(len(tasks), desc + " (ray)", progress)
    pending = list(refs)
    try:
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for r in done:
                i = index[r]
                try:
                    results[i] = ray.get(r)
                except Exception as e:  # task or worker failure: report the point
                    results[i] = _worker._fail(e, [], time.perf_counter())
                    results[i]["error"] = f"ray task failed: {type(e).__name__}: {e}"  # type: ignore[index]
                if on_result:
                    on_result(i, results[i])  # type: ignore[arg-type]
                bar.update(1)
    except KeyboardInterrupt:
        for r in pending:
            ray.cancel(r, force=True)
        raise
    finally:
        bar.close()
    return results  # type: ignore[return-value]


def run_tasks(tasks: List[_worker.Task], backend: Backend, workers: Optional[int], address: Optional[str],
              progress: bool, desc: str = "sweep") -> List[Dict[str, Any]]:
    if backend == "local":
        return run_threads(tasks, workers, progress, desc)
    if backend == "processes":
        return run_local(tasks, workers, progress, desc)
    if backend == "sequential":
        return run_local(tasks, 1, progress, desc)
    if backend == "ray":
        return run_ray(tasks, address, progress, desc)
    raise ValueError(f"backend {backend!r}: expected 'local', 'processes', 'ray' or 'sequential'")


def sweep(
    device: DeviceLike = None,
    workload: JobLike = None,
    grid: Optional[Mapping[str, Sequence[Any]]] = None,
    *,
    seeds: Union[int, Iterable[int], None] = None,
    precondition: str = "fill",
    backend: Backend = "local",
    workers: Optional[int] = None,
    address: Optional[str] = None,
    progress: bool = True,
) -> "pd.DataFrame":
    """Run every combination of ``grid`` and return one DataFrame, one row per point.

    :param device: base device (:class:`Device`, preset name or TOML path),
        or a :class:`System` of several drives.
    :param workload: base workload (:class:`Job` or fio file path).
    :param grid: key -> list of values. Keys are dotted device-file paths as in
        the TOML (``"nand.channels"``, ``"nand.t_read[0]"``, ``"ftl.gc_policy"``),
        ``"job.<fio option>"`` (``"job.iodepth"``, ``"job.rw"``), or
        ``"seed"``, ``"precondition"``, ``"device"`` (a list of devices).
        On a system: ``"system.<key>"`` for the system file's keys
        (``"system.switch[0].upstream_lanes"``, ``"system.root_complex.lanes"``),
        device keys change every drive's device, and ``"system"`` is a list of
        :class:`System` objects (e.g. 1, 2 and 4 drives, built with
        :meth:`System.build`; a job with ``filename=*`` uses every drive of
        each). A system's row also has ``drive_<name>_<metric>`` and
        ``link_<name>_<field>`` columns (see :meth:`Result.metrics`).
    :param seeds: seeds for every combination: a list, or a count ``n`` for
        ``n`` seeds from the default seed (42) on. Default: the default seed.
    :param precondition: ``fresh``, ``fill``, ``steady`` or ``steady-exact``.
    :param backend: ``"local"`` (threads of this process over all cores, or
        ``workers``: the core runs without the GIL), ``"processes"`` (a
        process pool, for isolation), ``"ray"`` (an existing cluster at
        ``address`` or ``RAY_ADDRESS``, else a local one sized to the
        machine), or ``"sequential"`` (one run at a time in this process).
    :param progress: show a tqdm progress bar.

    Columns: the grid keys, ``seed``, every metric of :meth:`Result.metrics`
    (``read_iops``, ``read_lat_p99_ns``, ``waf``, ``util_die_mean``, ...),
    ``core_s`` (seconds in the compiled core), and ``error`` / ``error_type``
    (empty for points that ran). A point that fails (invalid device,
    unsupported job, ...) keeps its row with the error; a warning tells how
    many failed. Results equal those of sequential :func:`ssdlab.run` calls
    with the same inputs (only wall-time columns differ).
    """
    import pandas as pd

    base: Union[Device, System]
    if isinstance(device, System):
        base = device
    else:
        base = Device.load(device) if device is not None else Device.default()
    job = Job.load(workload)
    points = expand_grid(grid or {})
    seed_list = resolve_seeds(seeds)
    keys = list((grid or {}).keys())
    if "seed" in keys and seeds is not None:
        raise ValueError("give seeds either as the 'seed' grid key or as seeds=, not both")
    rows_params: List[Dict[str, Any]] = []
    tasks: List[_worker.Task] = []
    for p in points:
        for s in seed_list if "seed" not in keys else [DEFAULT_SEED]:
            params = {k: _display(v) for k, v in p.items()}
            if "seed" not in keys:
                params["seed"] = s
            rows_params.append(params)
            tasks.append(point_task(base, job, p, s, precondition))
    t0 = time.perf_counter()
    results = run_tasks(tasks, backend, workers, address, progress)
    wall = time.perf_counter() - t0
    rows = []
    failed = 0
    for params, res in zip(rows_params, results):
        row: Dict[str, Any] = dict(params)
        if res["ok"]:
            row.update(res["metrics"])
            row["error"] = None
            row["error_type"] = None
        else:
            failed += 1
            row["error"] = res["error"]
            row["error_type"] = res["error_type"]
        row["core_s"] = res.get("core_s", 0.0)
        rows.append(row)
    df = pd.DataFrame(rows)
    # error columns last
    cols = [c for c in df.columns if c not in ("error", "error_type")] + ["error", "error_type"]
    df = df[cols]
    df.attrs.update(
        {
            "failed": failed,
            "points": len(rows),
            "wall_s": wall,
            "core_s": float(sum(r.get("core_s", 0.0) for r in results)),
            "worker_s": float(sum(r.get("worker_s", 0.0) for r in results)),
            "backend": backend,
            "device": base.name,
            "workload": job.name,
            "params": keys + ([] if "seed" in keys else ["seed"]),
        }
    )
    if failed:
        first = next(r for r in results if not r["ok"])
        warnings.warn(
            f"{failed} of {len(rows)} sweep points failed (rows kept, see the 'error' column); "
            f"first: {first['error_type']}: {' '.join(first['error'].split())[:300]}",
            RuntimeWarning,
            stacklevel=2,
        )
    return df
