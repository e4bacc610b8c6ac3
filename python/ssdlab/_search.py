"""Multi-objective design search (Optuna NSGA-II) over device and job parameters.

A search samples points of a declared space (device-file key paths and
``job.<fio option>``, as in :func:`ssdlab.sweep`), simulates each, and keeps
the trials in Optuna storage — a SQLite file by default, or any URL Optuna
accepts — so an interrupted search resumes where it stopped when called
again with the same arguments.
"""

from __future__ import annotations

import hashlib
import json
import math
import operator
import os
import re
import sys
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core, _worker
from .device import Device
from .job import Job
from .runner import DEFAULT_SEED, DeviceLike, JobLike

if TYPE_CHECKING:  # pragma: no cover
    import optuna
    import pandas as pd

__all__ = ["search", "Int", "Float", "Choice", "load_trials", "pareto_front", "default_storage"]


@dataclass(frozen=True)
class Int:
    """An integer parameter in ``[low, high]`` (inclusive), optionally on a log scale."""

    low: int
    high: int
    step: int = 1
    log: bool = False


@dataclass(frozen=True)
class Float:
    """A real parameter in ``[low, high]``; with ``unit`` the value is written
    as text with that unit (``Float(30, 60, unit="us")`` -> ``"42.5us"``)."""

    low: float
    high: float
    step: Optional[float] = None
    log: bool = False
    unit: Optional[str] = None


@dataclass(frozen=True)
class Choice:
    """One of ``values`` (str, int, float or bool)."""

    values: Tuple[Any, ...]

    def __init__(self, values: Iterable[Any]) -> None:
        object.__setattr__(self, "values", tuple(values))


Param = Union[Int, Float, Choice, Sequence[Any], Mapping[str, Any]]
Objective = Union[str, Tuple[str, str]]
Constraint = Union[str, Callable[[Dict[str, Any]], float]]


def _param(key: str, spec: Param) -> Union[Int, Float, Choice]:
    if isinstance(spec, (Int, Float, Choice)):
        return spec
    if isinstance(spec, Mapping):  # from a TOML spec: {int = [1, 64], log = true} etc.
        s = dict(spec)
        if "int" in s:
            lo, hi = s.pop("int")
            return Int(int(lo), int(hi), int(s.pop("step", 1)), bool(s.pop("log", False)))
        if "float" in s:
            lo, hi = s.pop("float")
            return Float(float(lo), float(hi), s.pop("step", None), bool(s.pop("log", False)), s.pop("unit", None))
        if "choice" in s:
            return Choice(s.pop("choice"))
        raise ValueError(f"space[{key!r}]: expected {{int = [lo, hi]}}, {{float = [lo, hi]}} or {{choice = [...]}}")
    if isinstance(spec, (list, tuple)):
        return Choice(spec)
    raise TypeError(f"space[{key!r}]: expected Int, Float, Choice or a list of values")


def _suggest(trial: "optuna.Trial", key: str, p: Union[Int, Float, Choice]) -> Tuple[Any, Any]:
    """(value for the simulator, value recorded in the trial)."""
    if isinstance(p, Int):
        v = trial.suggest_int(key, p.low, p.high, step=p.step, log=p.log)
        return v, v
    if isinstance(p, Float):
        v = trial.suggest_float(key, p.low, p.high, step=p.step, log=p.log)
        return (f"{v:.6g}{p.unit}" if p.unit else v), v
    v = trial.suggest_categorical(key, list(p.values))
    return v, v


_DIRS = {"max": "maximize", "maximize": "maximize", "min": "minimize", "minimize": "minimize"}


def _objectives(objectives: Union[Mapping[str, str], Sequence[Objective]]) -> List[Tuple[str, str]]:
    items = objectives.items() if isinstance(objectives, Mapping) else objectives
    out = []
    for it in items:
        if isinstance(it, str):
            raise ValueError(f"objective {it!r}: give a direction, e.g. {{'{it}': 'max'}}")
        name, d = it
        if str(d).lower() not in _DIRS:
            raise ValueError(f"objective {name!r}: direction {d!r} is not max/min")
        out.append((str(name), _DIRS[str(d).lower()]))
    if not out:
        raise ValueError("at least one objective is needed")
    return out


_OPS = {"<=": operator.le, "<": operator.lt, ">=": operator.ge, ">": operator.gt}
_CRE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_.]*)\s*(<=|>=|<|>)\s*([-+0-9.eE]+)\s*$")


def _constraint(c: Constraint) -> Tuple[str, Callable[[Dict[str, Any]], float]]:
    """(label, f(metrics) -> value, feasible when <= 0)."""
    if callable(c):
        return getattr(c, "__name__", "constraint"), c
    m = _CRE.match(c)
    if not m:
        raise ValueError(f"constraint {c!r}: expected 'metric <= number' (or <, >=, >), or a callable")
    name, op, num = m.group(1), m.group(2), float(m.group(3))

    def f(row: Dict[str, Any]) -> float:
        if name not in row:
            raise KeyError(f"constraint {c!r}: no metric {name!r}")
        v = float(row[name])
        return v - num if op in ("<=", "<") else num - v

    return c, f


def default_storage() -> str:
    """``sqlite:///ssdlab-search.db`` in the current directory."""
    return "sqlite:///" + os.path.abspath("ssdlab-search.db")


def _storage_url(storage: Optional[str]) -> str:
    if storage is None:
        return default_storage()
    if "://" in storage:
        return storage
    return "sqlite:///" + os.path.abspath(storage)


def _study_key(base: Any, job: Job, space: Mapping[str, Any], objectives: List[Tuple[str, str]],
               constraints: Sequence[Constraint], sim_seed: int, precondition: str) -> str:
    from .system import System

    spec = {
        "device": base._key() if isinstance(base, System) else base.to_toml(),
        "job": job.text,
        "space": {k: repr(_param(k, v)) for k, v in space.items()},
        "objectives": objectives,
        "constraints": [c if isinstance(c, str) else getattr(c, "__name__", "f") for c in constraints],
        "sim_seed": sim_seed,
        "precondition": precondition,
    }
    return "ssdlab-" + hashlib.sha1(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def _dominates(a: Sequence[float], b: Sequence[float], dirs: Sequence[str]) -> bool:
    better = False
    for x, y, d in zip(a, b, dirs):
        if d == "minimize":
            x, y = -x, -y
        if x < y:
            return False
        if x > y:
            better = True
    return better


def pareto_front(df: "pd.DataFrame", objectives: Union[Mapping[str, str], Sequence[Tuple[str, str]]]) -> "pd.DataFrame":
    """The non-dominated rows of ``df`` for ``objectives`` (metric -> max/min),
    sorted by the first objective (best first)."""
    obj = _objectives(objectives)
    names = [n for n, _ in obj]
    dirs = [d for _, d in obj]
    vals = df[names].to_numpy(dtype=float).tolist()
    keep = [i for i, a in enumerate(vals) if not any(_dominates(b, a, dirs) for j, b in enumerate(vals) if j != i)]
    out = df.iloc[keep]
    # drop exact duplicates of objective values (same design found twice)
    out = out.drop_duplicates(subset=names)
    return out.sort_values(names[0], ascending=(dirs[0] == "minimize")).reset_index(drop=True)


def load_trials(study_name: str, storage: Optional[str] = None) -> "pd.DataFrame":
    """Every finished trial of a stored study: ``trial``, ``state``, the
    parameters, every metric, the constraint values and ``feasible``."""
    import optuna
    import pandas as pd

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(study_name=study_name, storage=_storage_url(storage))
    rows = []
    for t in study.get_trials(deepcopy=False):
        if t.state not in (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.FAIL):
            continue
        row: Dict[str, Any] = {"trial": t.number, "state": t.state.name}
        row.update(t.params)
        row.update(t.user_attrs.get("metrics", {}))
        cons = t.user_attrs.get("constraints")
        row["feasible"] = bool(cons is not None and all(c <= 0 for c in cons)) if t.state.name == "COMPLETE" else False
        if "error" in t.user_attrs:
            row["error"] = t.user_attrs["error"]
        rows.append(row)
    return pd.DataFrame(rows)


class _Runner:
    """Evaluates batches of tasks on one backend, keeping workers alive between batches."""

    def __init__(self, backend: str, workers: Optional[int], address: Optional[str]) -> None:
        self.backend = backend
        self.ex: Any = None
        self.remote: Any = None
        self.stop: Any = None
        if backend == "local":
            # Threads: the compiled core runs without the GIL.
            from concurrent.futures import ThreadPoolExecutor

            self.width = max(1, workers or os.cpu_count() or 1)
            if self.width > 1:
                self.ex = ThreadPoolExecutor(max_workers=self.width, thread_name_prefix="ssdlab-search")
                self.stop = _core.StopFlag()
        elif backend == "processes":
            self.width = max(1, workers or os.cpu_count() or 1)
            if self.width > 1:
                from ._sweep import process_pool

                self.ex = process_pool(self.width)
        elif backend == "sequential":
            self.width = 1
        elif backend == "ray":
            import ray

            from ._sweep import ray_init

            ray_init(address)
            self.remote = ray.remote(num_cpus=1, max_retries=0)(_worker.run_task)
            self.width = max(1, workers or int(ray.cluster_resources().get("CPU", 1)))
        else:
            raise ValueError(f"backend {backend!r}: expected 'local', 'processes', 'ray' or 'sequential'")

    def map(self, tasks: List[_worker.Task]) -> List[Dict[str, Any]]:
        if self.ex is not None:
            from ._sweep import _main_hidden

            with _main_hidden():
                if self.stop is not None:
                    futs = [self.ex.submit(_worker.run_task, t, self.stop) for t in tasks]
                else:
                    futs = [self.ex.submit(_worker.run_task, t) for t in tasks]
            out = []
            for f in futs:
                try:
                    out.append(f.result())
                except KeyboardInterrupt:
                    if self.stop is not None:
                        self.stop.set()
                    raise
                except BaseException as e:
                    r = _worker._fail(e, [], time.perf_counter())
                    r["error"] = f"worker failed: {type(e).__name__}: {e}"
                    out.append(r)
            return out
        if self.remote is not None:
            import ray

            refs = [self.remote.remote(t) for t in tasks]
            out = []
            for r in refs:
                try:
                    out.append(ray.get(r))
                except Exception as e:
                    res = _worker._fail(e, [], time.perf_counter())
                    res["error"] = f"ray task failed: {type(e).__name__}: {e}"
                    out.append(res)
            return out
        return [_worker.run_task(t) for t in tasks]

    def close(self) -> None:
        if self.ex is not None:
            self.ex.shutdown(wait=True, cancel_futures=True)
            self.ex = None


def search(
    device: DeviceLike = None,
    workload: JobLike = None,
    space: Optional[Mapping[str, Param]] = None,
    objectives: Union[Mapping[str, str], Sequence[Tuple[str, str]], None] = None,
    *,
    constraints: Sequence[Constraint] = (),
    n_trials: int = 50,
    seed: int = 0,
    sim_seed: int = DEFAULT_SEED,
    precondition: str = "fill",
    storage: Optional[str] = None,
    study_name: Optional[str] = None,
    population_size: Optional[int] = None,
    backend: str = "local",
    workers: Optional[int] = None,
    address: Optional[str] = None,
    progress: bool = True,
) -> "pd.DataFrame":
    """Search the design space with NSGA-II and return the Pareto front.

    :param device: base device (:class:`ssdlab.Device`, preset name or TOML
        path) or system (:class:`ssdlab.System`: ``system.<key>`` keys change
        the system file, device keys every drive's device, as in sweeps).
    :param workload: base workload (:class:`ssdlab.Job` or fio path).
    :param space: key -> parameter. Keys as in :func:`ssdlab.sweep`
        (``"nand.channels"``, ``"job.iodepth"``, ...). Parameters:
        :class:`Int`, :class:`Float` (with ``unit=`` for values such as
        ``"45us"``), :class:`Choice` or a plain list of choices.
    :param objectives: metric -> ``"max"`` / ``"min"``, metrics as named in
        sweep rows (``read_iops``, ``read_lat_p99_ns``, ``waf``, ``iops``, ...).
    :param constraints: ``"metric <= number"`` strings (also ``<``, ``>=``,
        ``>``) or callables ``f(metrics) -> float`` feasible when ``<= 0``;
        passed to NSGA-II as its ``constraints_func``.
    :param n_trials: total finished trials wanted in the study: a resumed
        study only runs the ones still missing.
    :param seed: sampler seed; ``sim_seed``: simulator seed of every trial.
    :param storage: Optuna storage URL or a SQLite file path (default
        ``sqlite:///ssdlab-search.db`` in the current directory).
    :param study_name: default: derived from the device, job, space,
        objectives and constraints, so the same call resumes the same study.
    :param backend: ``"local"`` (threads, all cores or ``workers``; the core
        runs without the GIL), ``"processes"`` (process pool),
        ``"ray"`` (cluster at ``address`` / ``RAY_ADDRESS`` or a local one),
        or ``"sequential"``. Trials are evaluated in batches of the pool width.

    Returns the feasible non-dominated trials as a DataFrame: ``trial``, the
    parameters, the objectives and every other metric, best first by the
    first objective. ``df.attrs`` holds ``study_name``, ``storage``,
    ``trials`` (finished), ``failed`` and ``feasible`` counts.
    """
    import optuna

    if not space:
        raise ValueError("search needs a non-empty space")
    obj = _objectives(objectives or {})
    params = {k: _param(k, v) for k, v in space.items()}
    cons = [_constraint(c) for c in constraints]
    from .system import System

    base: Union[Device, System]
    if isinstance(device, System):
        base = device
    else:
        base = Device.load(device) if device is not None else Device.default()
    job = Job.load(workload)
    url = _storage_url(storage)
    name = study_name or _study_key(base, job, space, obj, constraints, sim_seed, precondition)
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def constraints_func(t: "optuna.trial.FrozenTrial") -> Sequence[float]:
        return t.user_attrs.get("constraints", [])

    # Optuna >= 5 takes constraints from the trial (Trial.set_constraint) and
    # deprecates constraints_func; older versions need constraints_func.
    per_trial = hasattr(optuna.trial.Trial, "set_constraint")
    sampler = optuna.samplers.NSGAIISampler(
        population_size=population_size or 50,
        seed=seed,
        constraints_func=constraints_func if cons and not per_trial else None,
    )
    study = optuna.create_study(
        storage=url,
        study_name=name,
        directions=[d for _, d in obj],
        sampler=sampler,
        load_if_exists=True,
    )
    stored = [d.name.lower() for d in study.directions]
    if stored != [d for _, d in obj]:
        raise ValueError(f"study {name!r} in {url} has directions {stored}, not {[d for _, d in obj]}")
    from ._sweep import _bar, point_task

    F = optuna.trial.TrialState

    def finished() -> int:
        return len(study.get_trials(deepcopy=False, states=(F.COMPLETE, F.FAIL)))

    done0 = finished()
    runner = _Runner(backend, workers, address)
    bar = _bar(max(0, n_trials - done0), "search", progress)
    try:
        while True:
            left = n_trials - finished()
            if left <= 0:
                break
            batch = [study.ask() for _ in range(min(runner.width, left))]
            tasks = []
            try:
                for t in batch:
                    point: Dict[str, Any] = {}
                    for k, p in params.items():
                        point[k] = _suggest(t, k, p)[0]
                    tasks.append(point_task(base, job, point, sim_seed, precondition))
                results = runner.map(tasks)
            except BaseException:
                for t in batch:
                    study.tell(t, state=F.FAIL)
                raise
            bad_metric = None
            for t, res in zip(batch, results):
                if not res["ok"]:
                    t.set_user_attr("error", f"{res['error_type']}: {res['error']}")
                    study.tell(t, state=F.FAIL)
                    continue
                m = res["metrics"]
                missing = [n for n, _ in obj if n not in m]
                if missing:
                    bad_metric = f"objective metric(s) {missing} not in the results; metrics: {sorted(m)}"
                    t.set_user_attr("error", bad_metric)
                    study.tell(t, state=F.FAIL)
                    continue
                vals = [float(m[n]) for n, _ in obj]
                t.set_user_attr("metrics", m)
                cvals = [float(f(m)) for _, f in cons]
                t.set_user_attr("constraints", cvals)
                if per_trial:
                    for i, ((label, _), v) in enumerate(zip(cons, cvals)):
                        t.set_constraint(f"c{i}: {label}", v)
                if any(math.isnan(v) for v in vals):
                    t.set_user_attr("error", "objective is NaN")
                    study.tell(t, state=F.FAIL)
                else:
                    study.tell(t, vals)
            bar.update(len(batch))
            if bad_metric:
                raise KeyError(bad_metric)
    finally:
        bar.close()
        runner.close()
    return _front(study, name, url, obj, params)


def _front(study: "optuna.Study", name: str, url: str, obj: List[Tuple[str, str]],
           params: Mapping[str, Any]) -> "pd.DataFrame":
    import pandas as pd

    all_t = load_trials(name, url)
    attrs = {
        "study_name": name,
        "storage": url,
        "trials": int(len(all_t)),
        "failed": int((all_t["state"] == "FAIL").sum()) if len(all_t) else 0,
        "feasible": int(all_t["feasible"].sum()) if len(all_t) else 0,
        "objectives": dict(obj),
        "params": list(params),
    }
    ok = all_t[all_t["feasible"]] if len(all_t) else all_t
    if len(ok) == 0:
        df = pd.DataFrame(columns=["trial", *params, *[n for n, _ in obj]])
    else:
        df = pareto_front(ok, obj)
        first = ["trial", *params, *[n for n, _ in obj]]
        df = df[first + [c for c in df.columns if c not in first and c not in ("state", "error")]]
    df.attrs.update(attrs)
    if attrs["failed"]:
        print(f"search: {attrs['failed']} of {attrs['trials']} trials failed (see load_trials(...)['error'])",
              file=sys.stderr)
    return df
