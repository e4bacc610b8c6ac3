"""Workloads: fio job files and keyword-built jobs."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

from . import _core

__all__ = ["Job"]

# Options that set the same thing: setting one removes the others.
_ALIASES = [
    {"rw", "readwrite"},
    {"bs", "blocksize"},
    {"offset", "fileoffset"},
    {"io_size", "io_limit"},
    {"runtime", "timeout"},
    {"rwmixread", "rwmixwrite"},
]

Value = Union[str, int, float, bool, None]


def _fmt(v: Value) -> Optional[str]:
    if v is None:
        return None
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _sections(text: str) -> List[Tuple[str, Dict[str, Optional[str]]]]:
    """Split fio job text into (section, {option: value}) in file order,
    with comments removed as fio's parser does. Only used to edit a job;
    the text itself is checked by the core's parser."""
    out: List[Tuple[str, Dict[str, Optional[str]]]] = []
    for i, raw in enumerate(text.splitlines()):
        if i == 0:
            raw = raw.lstrip("\ufeff")
        cut = min([p for p in (raw.find(";"), raw.find("#")) if p >= 0], default=-1)
        line = (raw[:cut] if cut >= 0 else raw).strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            out.append((line[1:-1].strip(), {}))
            continue
        if not out:
            continue  # the core parser has already rejected this
        k, eq, v = line.partition("=")
        out[-1][1][k.strip()] = v.strip() if eq else None
    return out


def _render(sections: List[Tuple[str, Dict[str, Optional[str]]]]) -> str:
    lines: List[str] = []
    for name, opts in sections:
        lines.append(f"[{name}]")
        for k, v in opts.items():
            lines.append(k if v is None else f"{k}={v}")
    return "\n".join(lines) + "\n"


class Job:
    """A workload: one or more fio jobs, as in a fio job file.

    Build one from keyword options (``Job(rw="randread", bs="4k",
    iodepth=32, number_ios=200_000)``), from a fio job file
    (:meth:`from_fio`) or fio text (:meth:`from_fio_text`); derive variants
    with :meth:`with_`. Options are fio's own (see the core's fio parser for
    the supported subset); every construction is checked by the core's
    parser and raises :class:`ssdlab.WorkloadError` naming the file, line
    and option.

    Immutable and picklable (it keeps the fio text).
    """

    __slots__ = ("_text", "_source", "_name", "_h")

    def __init__(self, name: str = "job", **options: Value) -> None:
        """One job section called ``name`` with ``options`` (fio option = value;
        ``True``/``False`` for flags such as ``time_based``)."""
        opts = {k: _fmt(v) for k, v in options.items()}
        text = _render([(name, opts)])
        desc = " ".join(f"{k}={v}" for k, v in opts.items() if v is not None)
        self._init(text, "<keyword job>", f"{name}: {desc}" if desc else name)

    def _init(self, text: str, source: str, name: str) -> None:
        self._text = text
        self._source = source
        self._name = name
        self._h: Optional[_core.WorkloadHandle] = None
        if self._uses_keywords():
            # $pagesize/$ncpus/$mb_memory take the values of the host it runs
            # on; check everything else now, with stand-in values.
            _core.parse_fio(self._text, self._source, self._name, (4096, 1, 1024))
        else:
            self._handle()

    def _uses_keywords(self) -> bool:
        return any(k in self._text for k in ("$pagesize", "$ncpus", "$mb_memory"))

    @classmethod
    def _make(cls, text: str, source: str, name: Optional[str] = None) -> "Job":
        j = cls.__new__(cls)
        j._init(text, source, name or source)
        return j

    @classmethod
    def from_fio(cls, path: Union[str, "os.PathLike[str]"]) -> "Job":
        """Read a fio job file."""
        p = os.fspath(path)
        try:
            with open(p, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            from .errors import WorkloadError

            raise WorkloadError(p, 0, None, f"cannot read job file: {e}") from None
        return cls._make(text, p)

    @classmethod
    def from_fio_text(cls, text: str, source: str = "<fio text>", name: Optional[str] = None) -> "Job":
        """Parse fio job text; ``source`` names it in errors."""
        return cls._make(text, source, name)

    @classmethod
    def from_trace(
        cls,
        path: Union[str, "os.PathLike[str]"],
        *,
        format: Optional[str] = None,
        replay: str = "open",
        iodepth: int = 32,
        speed: Optional[float] = None,
        device: Optional[str] = None,
        start: Optional[str] = None,
        end: Optional[str] = None,
        remap: str = "wrap",
        name: str = "trace",
    ) -> "Job":
        """Replay a block trace (MSR, SPC/UMass, blkparse, DiskSim/MQSim,
        Alibaba, Tencent, fio iolog v2/v3, blktrace binary), as ``ssdlab run --trace`` does.

        :param format: the format name (default: detected from the first lines).
        :param replay: ``"open"`` (requests at their trace times, divided by
            ``speed``) or ``"closed"`` (as fast as ``iodepth`` outstanding
            requests allow, in trace order).
        :param device: replay only this device/volume (as written in the trace).
        :param start: ``end``: time window of the trace to replay (``"10s"``).
        :param remap: ``"wrap"`` (offset modulo capacity) or ``"scale"``
            (spread the trace's address space over the drive).

        The job is fio text with ssdlab's ``ssdlab_trace*`` options, so it
        works wherever a :class:`Job` does (sweeps over ``job.iodepth`` or
        ``job.ssdlab_trace_speed``, searches, pickling to workers).
        """
        p = os.path.abspath(os.fspath(path))
        if ";" in p or "#" in p:
            raise ValueError(f"trace path {p!r}: ';' and '#' start comments in fio job text; rename the file")
        if replay not in ("open", "closed"):
            raise ValueError(f"replay {replay!r}: expected 'open' or 'closed'")
        opts: Dict[str, Optional[str]] = {"ssdlab_trace": p, "ssdlab_replay": replay}
        if format is not None:
            opts["ssdlab_trace_format"] = format
        if replay == "closed":
            opts["iodepth"] = str(int(iodepth))
        if speed is not None:
            opts["ssdlab_trace_speed"] = _fmt(speed)
        if device is not None:
            opts["ssdlab_trace_device"] = device
        if start is not None:
            opts["ssdlab_trace_start"] = start
        if end is not None:
            opts["ssdlab_trace_end"] = end
        if remap != "wrap":
            opts["ssdlab_trace_remap"] = remap
        desc = f"trace {os.path.basename(p)} ({replay} loop" + (f" QD{iodepth}" if replay == "closed" else "") + ")"
        return cls._make(_render([(name, opts)]), p, desc)

    @staticmethod
    def trace_stats(
        path: Union[str, "os.PathLike[str]"],
        *,
        format: Optional[str] = None,
        device: Optional[str] = None,
        start: Optional[str] = None,
        end: Optional[str] = None,
    ) -> Dict[str, Any]:
        """Statistics of a block trace (as ``ssdlab trace stats``): request
        counts per kind, bytes, size histogram, footprint, inter-arrival
        percentiles. One streaming pass; constant memory."""
        return json.loads(_core.trace_stats(os.fspath(path), format, device, start, end))

    @classmethod
    def default(cls) -> "Job":
        """The built-in default workload: 4 KiB random read, QD32, 1M I/Os
        (the same as ``ssdlab run`` with no ``--job``)."""
        return cls._make(
            "[randread-4k-qd32]\nrw=randread\nbs=4k\niodepth=32\nnumber_ios=1000000\n",
            "<built-in>",
            "built-in randread-4k-qd32 (1M I/Os)",
        )

    @classmethod
    def load(cls, job: Union[str, "os.PathLike[str]", "Job", None]) -> "Job":
        """A ``Job``, a path to a fio file, or ``None`` for :meth:`default`."""
        if job is None:
            return cls.default()
        if isinstance(job, Job):
            return job
        return cls.from_fio(job)

    def with_(self, options: Optional[Mapping[str, Value]] = None, **kw: Value) -> "Job":
        """A copy with fio options set in every job section (replacing the
        option and its aliases wherever they were set, ``[global]`` included).
        ``None`` removes an option."""
        changes: Dict[str, Value] = dict(options or {})
        changes.update(kw)
        secs = _sections(self._text)
        jobs = [s for s in secs if not s[0].startswith("global")]
        for k, v in changes.items():
            group = next((g for g in _ALIASES if k in g), {k})
            for _, opts in secs:
                for alias in group:
                    opts.pop(alias, None)
            if v is not None:
                for _, opts in jobs:
                    opts[k] = _fmt(v)
        desc = " ".join(f"{k}={_fmt(v)}" for k, v in changes.items())
        return Job._make(_render(secs), f"{self._source} with {desc}", f"{self._name} with {desc}")

    # -- internals ----------------------------------------------------------

    def _handle(self, host: Optional[Tuple[int, Optional[int], Optional[int]]] = None) -> "_core.WorkloadHandle":
        """The parsed job; ``host``: the ``host_keywords`` of the device or
        system it runs on, for fio's ``$pagesize``, ``$ncpus``, ``$mb_memory``."""
        if self._uses_keywords():
            return _core.parse_fio(self._text, self._source, self._name, host)
        if self._h is None:
            self._h = _core.parse_fio(self._text, self._source, self._name)
        return self._h

    def __getstate__(self) -> Tuple[str, str, str]:
        return (self._text, self._source, self._name)

    def __setstate__(self, st: Tuple[str, str, str]) -> None:
        self._text, self._source, self._name = st
        self._h = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Job):
            return NotImplemented
        return self.jobs == other.jobs

    def __hash__(self) -> int:
        return hash(json.dumps(self.jobs, sort_keys=True))

    def __repr__(self) -> str:
        return f"Job({self._name!r})"

    # -- views --------------------------------------------------------------

    @property
    def name(self) -> str:
        """Workload name, shown in reports."""
        return self._name

    @property
    def source(self) -> str:
        """Where the job came from (file name, ``<keyword job>``, ...)."""
        return self._source

    @property
    def text(self) -> str:
        """The fio job text."""
        return self._text

    @property
    def jobs(self) -> List[Dict[str, Any]]:
        """The jobs as the simulator reads them (``[global]`` applied; sizes
        in bytes, times in ns)."""
        return json.loads(self._handle().jobs_json())

    @property
    def ignored(self) -> List[Tuple[str, str]]:
        """Options accepted without effect, with the reason: (option, reason)."""
        return list(self._handle().ignored)

    def get(self, option: str, job: int = 0) -> Optional[str]:
        """The text value of ``option`` as written for job number ``job``
        (its own section first, then the ``[global]`` sections above it)."""
        secs = _sections(self._text)
        seen = -1
        glob: Dict[str, Optional[str]] = {}
        for name, opts in secs:
            if name.startswith("global"):
                glob.update(opts)
                continue
            seen += 1
            if seen == job:
                merged = dict(glob)
                merged.update(opts)
                if option not in merged:
                    raise KeyError(option)
                return merged[option]
        raise IndexError(f"job {job}: the workload has {seen + 1} job(s)")

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the fio job text to ``path``."""
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(self._text)
