"""The result of one run: the full report as attributes, dict and DataFrames."""

from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple, Union

from ._flat import direction_metrics, flatten, run_metrics

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Result", "Direction", "Latency", "Gc", "FlashOps", "Utilisation", "MappingCache", "Merges", "ValidityLog", "Wear"]


@dataclass(frozen=True)
class Latency:
    """Latency summary of one direction, in nanoseconds."""

    min: float = 0
    mean: float = 0.0
    p50: float = 0
    p90: float = 0
    p99: float = 0
    p99_9: float = 0
    p99_99: float = 0
    max: float = 0

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Latency":
        return cls(
            min=d.get("min", 0),
            mean=d.get("mean", 0.0),
            p50=d.get("p50", 0),
            p90=d.get("p90", 0),
            p99=d.get("p99", 0),
            p99_9=d.get("p99.9", 0),
            p99_99=d.get("p99.99", 0),
            max=d.get("max", 0),
        )


@dataclass(frozen=True)
class Direction:
    """Results of one direction (read or write) over the measured window."""

    ios: int = 0
    """I/Os completed in the measured window."""
    bytes: int = 0
    """Bytes transferred."""
    iops: float = 0.0
    """I/Os per second of simulated time."""
    bw_bytes_per_s: float = 0.0
    """Bandwidth in bytes per second."""
    lat_ns: Latency = field(default_factory=Latency)
    """Latency summary (ns)."""

    @property
    def bw_mb_per_s(self) -> float:
        """Bandwidth in MB/s (10^6 bytes per second)."""
        return self.bw_bytes_per_s / 1e6

    @classmethod
    def from_dict(cls, d: Dict[str, Any]) -> "Direction":
        return cls(
            ios=d.get("ios", 0),
            bytes=d.get("bytes", 0),
            iops=d.get("iops", 0.0),
            bw_bytes_per_s=d.get("bw_bytes_per_s", 0.0),
            lat_ns=Latency.from_dict(d.get("lat_ns", {}) or {}),
        )


@dataclass(frozen=True)
class Gc:
    """Garbage-collection counters in the measured window."""

    runs: int = 0
    pages_moved: int = 0
    blocks_erased: int = 0
    #: Erased blocks a parallel unit held, on average, when it opened a
    #: block for writing (the reserve GC keeps).
    mean_free_blocks: float = 0.0


@dataclass(frozen=True)
class Slc:
    """SLC write cache in the measured window (devices with one): bytes
    programmed into SLC and straight into native cells, folds, and what the
    cache holds and could still take at the end of the run."""

    slc_written_bytes: int = 0
    direct_written_bytes: int = 0
    fold_runs: int = 0
    folded_bytes: int = 0
    occupancy_bytes: int = 0
    room_bytes: int = 0
    #: Bytes held in SLC at the end of each ``sample_interval`` window.
    occupancy_series_bytes: List[float] = field(default_factory=list)


@dataclass(frozen=True)
class Wear:
    """Wear at the end of the run: the blocks' erase counts (preconditioning
    included), the wear-levelling index (mean / max), the rated endurance,
    the life the most worn block has used, and the host bytes the drive
    takes before its mean block reaches its endurance at this run's WAF."""

    erase_min: int = 0
    erase_max: int = 0
    erase_mean: float = 0.0
    erase_std: float = 0.0
    wl_index: float = 1.0
    endurance: int = 0
    life_used: float = 0.0
    tbw_bytes: float = 0.0
    static_wl_runs: int = 0
    #: Blocks found bad at the factory.
    bad_blocks: int = 0
    #: Blocks retired in service (failed erases and the endurance limit).
    grown_bad_blocks: int = 0
    #: Of those, retired at the rated endurance.
    retired_at_endurance: int = 0
    #: Replacement blocks set aside for grown bad blocks, and those used.
    spare_blocks: int = 0
    spare_blocks_used: int = 0


@dataclass(frozen=True)
class WafSplit:
    """The measured window's write amplification by writer: mapping units
    programmed for host data (``user``), GC copies (``gc``), SLC-cache
    folding (``slc_fold``), a cached mapping table's translation pages
    (``mapping``), mapping checkpoints (``checkpoint``), the validity log's
    write-backs (``validity``, seed 001's L-log) and block or hybrid
    mapping's merges (``merge``), each per host mapping unit written
    (``host_units``). The parts add up to :attr:`Result.waf`."""

    host_units: int = 0
    user: float = 0.0
    gc: float = 0.0
    slc_fold: float = 0.0
    mapping: float = 0.0
    checkpoint: float = 0.0
    validity: float = 0.0
    merge: float = 0.0


@dataclass(frozen=True)
class MappingCache:
    """The cached mapping table in the measured window (devices with
    ``ftl.mapping_cache`` other than ``"all"``): its size in bytes and
    translation pages, lookups and hits (per mapping unit translated,
    programmed or trimmed), translation pages read from and written to
    flash, those moved by GC, and the WAF part they make."""

    cache_bytes: int = 0
    cached_pages: int = 0
    translation_pages: int = 0
    entries_per_page: int = 0
    lookups: int = 0
    hits: int = 0
    hit_ratio: float = 1.0
    translation_reads: int = 0
    translation_writes: int = 0
    translation_gc_moves: int = 0
    waf_mapping: float = 0.0
    #: The directory on flash (``ftl.directory_cache`` a size): a dict with
    #: cache_bytes, cached_pages, levels (pages per level, level 1 first),
    #: lookups, hits, hit_ratio, reads and writes; None with the whole
    #: directory in DRAM.
    directory: Optional[dict] = None


@dataclass(frozen=True)
class PageCache:
    """The host page cache over the run (jobs with ``direct=0``): its
    size, hits and misses of reads (in pages), what went to and came from
    the drives, dirty data left at the end and at its peak, writes paused
    by proportional throttling (``host.dirty_throttle``) and writes that
    waited at ``host.dirty_ratio``."""

    capacity_bytes: int = 0
    peak_bytes: int = 0
    hit_pages: int = 0
    miss_pages: int = 0
    read_from_drive_bytes: int = 0
    written_back_bytes: int = 0
    evicted_pages: int = 0
    dirty_at_end_bytes: int = 0
    cached_at_end_bytes: int = 0
    throttled_writes: int = 0
    throttle_time_s: float = 0.0
    paused_writes: int = 0
    pause_time_s: float = 0.0
    dirty_peak_bytes: int = 0
    drive_read_requests: int = 0
    drive_write_requests: int = 0


@dataclass(frozen=True)
class DataStore:
    """The functional data store of a run with ``data_store=``: where it
    lives, bytes written, read (by verifying reads) and trimmed, and what it
    holds at the end."""

    backing: str = ""
    bytes_written: int = 0
    bytes_read: int = 0
    bytes_trimmed: int = 0
    resident_bytes: int = 0


@dataclass(frozen=True)
class Recovery:
    """A power loss (``power_loss_at=``) and the recovery after it: what
    the drive lost (acknowledged writes not yet durable, in mapping units
    and bytes; back to an older version or unmapped), what power-loss
    protection saved, and what rebuilding the mapping read and took
    (docs/models/recovery.md)."""

    power_loss_at_s: float = 0.0
    power_loss_protection: bool = False
    commands_in_flight: int = 0
    units_lost: int = 0
    bytes_lost: int = 0
    units_reverted: int = 0
    units_unmapped: int = 0
    relocated_units_lost: int = 0
    units_saved_by_capacitors: int = 0
    capacitor_flush_s: float = 0.0
    capacitor_flush_energy_j: Optional[float] = None
    capacitor_energy_j: Optional[float] = None
    units_beyond_capacitors: int = 0
    full_buffer_flush_energy_j: Optional[float] = None
    gc_victims_erased_early: int = 0
    open_blocks_closed: int = 0
    summary_pages_read: int = 0
    oob_reads: int = 0
    checkpoint_pages_read: int = 0
    last_checkpoint_s: Optional[float] = None
    bytes_read: int = 0
    recovery_time_s: float = 0.0


@dataclass(frozen=True)
class Checkpoints:
    """Mapping checkpoints (``ftl.checkpoint_interval`` and/or
    ``ftl.checkpoint_log_size``, seed 001's C-log): the interval (0 without
    one), the mapping-log size (0 without one), checkpoints taken (and how
    many the log size started) and skipped (the previous one still
    being written, or under block and hybrid mapping ``skipped_no_room``:
    no erased block to spare), what they wrote, and when the last complete
    one began."""

    interval_s: float = 0.0
    log_size_bytes: int = 0
    by_log_size: int = 0
    log_entries: int = 0
    taken: int = 0
    skipped: int = 0
    skipped_no_room: int = 0
    units_written: int = 0
    bytes_written: int = 0
    last_complete_s: Optional[float] = None


@dataclass(frozen=True)
class ValidityLog:
    """The validity log (``ftl.validity_log``, seed 001's L-log) in the
    measured window: DRAM for validity pages (bytes) and how many pages the
    drive has, the hit ratio of updates and GC lookups, pages read and
    written back, and GC victims that waited for theirs (docs/models/ftl.md)."""

    cache_bytes: int = 0
    pages: int = 0
    hit_ratio: float = 0.0
    loads: int = 0
    writebacks: int = 0
    gc_waits: int = 0


@dataclass(frozen=True)
class Merges:
    """Block and hybrid mapping's merges (``ftl.mapping`` = ``"block"``,
    ``"bast"`` or ``"fast"``) in the measured window: switch, partial and
    full merges, the mapping units they copied and blocks they erased, and
    a merge's mean time on its die in ms (docs/models/ftl.md)."""

    mapping: str = ""
    log_blocks: int = 0
    switch: int = 0
    partial: int = 0
    full: int = 0
    units_copied: int = 0
    blocks_erased: int = 0
    mean_ms: float = 0.0


@dataclass(frozen=True)
class Verify:
    """fio verify results: blocks and bytes checked, blocks that failed,
    and the first failures as fio prints them (a failure is a bug)."""

    blocks: int = 0
    bytes: int = 0
    failures: int = 0
    first_failures: Tuple[str, ...] = ()


@dataclass(frozen=True)
class FlashOps:
    """Flash operation counts in the measured window."""

    reads: int = 0
    programs: int = 0
    erases: int = 0
    suspends: int = 0


@dataclass(frozen=True)
class Utilisation:
    """Busy fractions (0..1) over the measured window."""

    channel_mean: float = 0.0
    channel_max: float = 0.0
    die_mean: float = 0.0
    die_max: float = 0.0
    pcie_up: float = 0.0
    pcie_down: float = 0.0
    dram: float = 0.0
    firmware: Dict[str, float] = field(default_factory=dict)


def _pick(cls: Any, d: Dict[str, Any]) -> Any:
    names = set(cls.__dataclass_fields__)
    return cls(**{k: v for k, v in (d or {}).items() if k in names})


class Result:
    """The result of :func:`ssdlab.run`.

    Every field of the core's ``ssdlab.report.v1`` report is available as an
    attribute (``r.read.iops``, ``r.read.lat_ns.p99``, ``r.waf``,
    ``r.gc.runs``, ``r.utilisation.die_mean``, ...) and as a dict
    (:attr:`report`). :meth:`to_pandas` gives one row per direction,
    :attr:`timeseries` the throughput and latency over simulated time, and
    :attr:`histogram` the raw latency histogram.
    """

    def __init__(self, report: Dict[str, Any], inputs: Optional[Dict[str, Any]] = None,
                 core_seconds: Optional[float] = None) -> None:
        """Wrap a report dict (as produced by the core); ``inputs`` records
        the device and job it came from, if known."""
        self._r = report
        self._inputs = inputs or report.get("inputs") or {}
        self.core_seconds = core_seconds
        """Seconds spent inside the compiled core for this run (validation,
        preconditioning, simulation, report), if known."""
        r = report
        self.schema: str = r.get("schema", "")
        self.version: str = r.get("version", "")
        self.seed: int = r.get("seed", 0)
        dev = r.get("device", {}) or {}
        self.device_name: str = dev.get("name", "")
        self.capacity_bytes: int = dev.get("capacity_bytes", 0)
        self.raw_bytes: int = dev.get("raw_bytes", 0)
        self.pcie_bw_bytes_per_s: float = dev.get("pcie_bw_bytes_per_s", 0.0)
        self.workload: str = r.get("workload", "")
        pre = r.get("precondition", {}) or {}
        self.precondition: str = pre.get("mode", "")
        self.precondition_drive_writes: float = pre.get("drive_writes", 0.0)
        #: How a steady state was reached: ``"exact"`` (asked for),
        #: ``"exact, not scaled: WHY"`` (``steady`` on a drive whose state
        #: cannot be built from a smaller one, WHY naming the setting) or
        #: ``"scaled: U of N units, K snapshots"``; for a fill, empty (in
        #: closed form) or ``"per LPN, not in closed form: WHY"``; empty for
        #: fresh.
        self.precondition_method: str = pre.get("method", "")
        self.sim_time_ns: float = r.get("sim_time_ns", 0.0)
        self.wall_time_s: float = r.get("wall_time_s", 0.0)
        self.sim_ios_per_wall_s: float = r.get("sim_ios_per_wall_s", 0.0)
        self.events: int = r.get("events", 0)
        self.read: Direction = Direction.from_dict(r.get("read", {}) or {})
        self.write: Direction = Direction.from_dict(r.get("write", {}) or {})
        #: Trims (NVMe Dataset Management, deallocate); bytes are the ranges trimmed.
        self.trim: Direction = Direction.from_dict(r.get("trim", {}) or {})
        #: NVMe Flush commands (no bytes).
        self.flush: Direction = Direction.from_dict(r.get("flush", {}) or {})
        self.waf: float = r.get("waf", 0.0)
        self.gc: Gc = _pick(Gc, r.get("gc", {}))
        #: The SLC write cache's counters (:class:`Slc`), or None for a
        #: device without one.
        self.slc: Optional[Slc] = _pick(Slc, r["slc"]) if r.get("slc") else None
        #: Wear (:class:`Wear`): erase counts and life.
        self.wear: Wear = _pick(Wear, r.get("wear", {}) or {})
        self.waf_split: WafSplit = _pick(WafSplit, r.get("waf_split", {}) or {})
        #: The cached mapping table (:class:`MappingCache`), or None when the
        #: whole mapping is in DRAM (``ftl.mapping_cache = "all"``).
        self.mapping: Optional[MappingCache] = _pick(MappingCache, r["mapping"]) if r.get("mapping") else None
        #: The host page cache (:class:`PageCache`) when a job did buffered
        #: I/O (``direct=0``), else None.
        self.page_cache: Optional[PageCache] = _pick(PageCache, r["page_cache"]) if r.get("page_cache") else None
        #: The functional data store (:class:`DataStore`) of a run with
        #: ``data_store=``, else None.
        self.data_store: Optional[DataStore] = _pick(DataStore, r["data_store"]) if r.get("data_store") else None
        #: The validity log (:class:`ValidityLog`) of a drive with
        #: ``ftl.validity_log``, else None.
        self.validity_log: Optional[ValidityLog] = (
            _pick(ValidityLog, r["validity_log"]) if r.get("validity_log") else None
        )
        #: Merges (:class:`Merges`) of a drive with block or hybrid
        #: mapping (``ftl.mapping``), else None.
        self.merges: Optional[Merges] = _pick(Merges, r["merges"]) if r.get("merges") else None
        #: Mapping checkpoints (:class:`Checkpoints`) of a drive with
        #: ``ftl.checkpoint_interval``, else None.
        self.checkpoint: Optional[Checkpoints] = _pick(Checkpoints, r["checkpoint"]) if r.get("checkpoint") else None
        #: The power loss and recovery (:class:`Recovery`) of a run with
        #: ``power_loss_at=``, else None.
        self.recovery: Optional[Recovery] = _pick(Recovery, r["recovery"]) if r.get("recovery") else None
        #: The run after the power returned (``after_recovery=``): a
        #: :class:`Result` of the drive as recovery rebuilt it, a new host
        #: and clock; else None.
        self.after_recovery: Optional["Result"] = (
            Result(r["after_recovery"]) if r.get("after_recovery") else None
        )
        #: fio verify results (:class:`Verify`) when a job verified, else None.
        self.verify: Optional[Verify] = (
            Verify(**{**r["verify"], "first_failures": tuple(r["verify"].get("first_failures", []))})
            if r.get("verify") else None
        )
        self.flash: FlashOps = _pick(FlashOps, r.get("flash", {}))
        self.utilisation: Utilisation = _pick(Utilisation, r.get("utilisation", {}))
        self.ignored_options: List[Tuple[str, str]] = [
            (i.get("option", ""), i.get("reason", "")) for i in r.get("ignored_options", [])
        ]
        #: A system's drives: drive name -> that drive's :class:`Result` (its
        #: share of the host statistics, its own device counters; no time
        #: series, which the core samples for the host as a whole); empty
        #: for a one-drive device run.
        self.drives: Dict[str, Result] = {
            name: Result(self._drive_report(r, sub), {"drive": name}) for name, sub in (r.get("drives") or {}).items()
        }
        #: A system's PCIe links: one dict per link with ``name`` (the drive's,
        #: or ``<switch>-up``), ``upper``, ``lower``, ``generation``, ``lanes``,
        #: ``payload_bw_bytes_per_s``, ``util_up``, ``util_down`` (busy share
        #: over the measured window), ``bytes_up``, ``bytes_down`` (payload,
        #: whole run); empty for a device run.
        self.links: List[Dict[str, Any]] = copy.deepcopy(r.get("links") or [])

    @staticmethod
    def _drive_report(system: Dict[str, Any], sub: Dict[str, Any]) -> Dict[str, Any]:
        # The core gives each drive's report the system's time series (it
        # samples the host once); a drive's own Result must not show the
        # system's throughput as its own, so such a copy is left out.
        if sub.get("timeseries") is not None and sub.get("timeseries") == system.get("timeseries"):
            sub = {k: v for k, v in sub.items() if k != "timeseries"}
        return sub

    def __getattr__(self, name: str) -> Any:
        # Report fields without a typed attribute (e.g. ``power``,
        # ``energy_per_io_j`` from the power model) as they are in the report.
        r = self.__dict__.get("_r")
        if r is not None and name in r:
            return copy.deepcopy(r[name])
        raise AttributeError(f"Result has no attribute {name!r}")

    # -- dict / JSON --------------------------------------------------------

    @property
    def report(self) -> Dict[str, Any]:
        """The core's report as a dict (a copy)."""
        return copy.deepcopy(self._r)

    @property
    def inputs(self) -> Dict[str, Any]:
        """What was run: ``device_toml`` (every default filled in),
        ``device_source``, ``device_overrides``, ``job_fio``, ``job_source``,
        ``seed``, ``precondition`` (empty for a report read from the CLI).
        A system's run records ``system_toml``, ``system_source``,
        ``system_overrides``, ``system_device_overrides`` and
        ``device_tomls`` (drive name -> device file) instead of the
        ``device_*`` entries."""
        return copy.deepcopy(self._inputs)

    @property
    def sim_time_s(self) -> float:
        """Measured simulated interval in seconds."""
        return self.sim_time_ns / 1e9

    @property
    def iops(self) -> float:
        """Read plus write I/Os per second."""
        return self.read.iops + self.write.iops

    def to_dict(self) -> Dict[str, Any]:
        """The report dict, with ``inputs`` when known."""
        d = self.report
        if self._inputs:
            d["inputs"] = copy.deepcopy(self._inputs)
        return d

    def to_json(self, indent: Optional[int] = 2) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write :meth:`to_json` to ``path`` (readable by :meth:`load` and ``ssdlab report``)."""
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(self.to_json())
            f.write("\n")

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "Result":
        """Read a result saved by :meth:`save` or a report written by
        ``ssdlab run --output-format json``."""
        with open(os.fspath(path), encoding="utf-8") as f:
            d = json.load(f)
        if not isinstance(d, dict) or "read" not in d or "write" not in d:
            raise ValueError(f"{os.fspath(path)}: not an ssdlab report (expected schema ssdlab.report.v1)")
        inputs = d.pop("inputs", None)
        return cls(d, inputs)

    def metrics(self) -> Dict[str, Any]:
        """All scalar metrics as one flat dict (the columns of a sweep row)."""
        return flatten(self._r)

    # -- DataFrames ---------------------------------------------------------

    @property
    def is_system(self) -> bool:
        """Whether this is the result of a :class:`ssdlab.System` run (with
        :attr:`drives` and :attr:`links`)."""
        return bool(self.drives)

    def links_frame(self) -> "pd.DataFrame":
        """:attr:`links` as a DataFrame, one row per link (empty for a device run)."""
        import pandas as pd

        cols = ["name", "upper", "lower", "generation", "lanes", "payload_bw_bytes_per_s", "util_up", "util_down",
                "bytes_up", "bytes_down"]
        return pd.DataFrame(self.links, columns=cols if not self.links else None)

    @staticmethod
    def _direction_rows(r: Dict[str, Any]) -> List[Dict[str, Any]]:
        common = run_metrics(r)
        rows = []
        for d in ("read", "write", "trim", "flush"):
            m = direction_metrics(r.get(d, {}) or {})
            if m["ios"] or (d == "read" and not (r.get("write", {}) or {}).get("ios")):
                rows.append({"direction": d, **m, **common})
        return rows

    def to_pandas(self) -> "pd.DataFrame":
        """One row per direction that completed I/Os (``direction`` = read /
        write / trim / flush), with that direction's metrics (``iops``, ``bw_bytes_per_s``,
        ``lat_<p>_ns``, ...) and every run-level metric (``waf``, ``gc_*``,
        ``util_*``, ``device_*``, ...).

        A system's result has a first column ``drive``: ``"all"`` for the
        aggregate's rows (every drive: the host's statistics over all of
        them, device counters summed), then the rows of each drive under its
        name (``"nvme0"``, ...). A device run's frame has no ``drive`` column."""
        import pandas as pd

        if not self.drives:
            return pd.DataFrame(self._direction_rows(self._r))
        rows = [{"drive": "all", **x} for x in self._direction_rows(self._r)]
        for name, sub in self.drives.items():
            rows += [{"drive": name, **x} for x in self._direction_rows(sub._r)]
        return pd.DataFrame(rows)

    @property
    def has_timeseries(self) -> bool:
        """Whether the run sampled throughput and latency over time."""
        return bool(self._r.get("timeseries"))

    @property
    def timeseries(self) -> "pd.DataFrame":
        """Throughput and latency per interval of simulated time.

        Columns: ``t_s`` (window start, seconds after the start of the
        measured window), ``t_ns``, and per direction ``<dir>_iops``,
        ``<dir>_bw_bytes_per_s``, ``<dir>_lat_mean_ns``, ``<dir>_lat_max_ns``.
        The interval is in ``df.attrs["interval_s"]``. Raises ``ValueError``
        if the run did not sample (``run(..., sample_interval=None)``).
        """
        import pandas as pd

        ts = self._r.get("timeseries")
        if not ts:
            raise ValueError("this result has no time series: run with sample_interval (e.g. '1ms')")
        cols = {k: v for k, v in ts.items() if isinstance(v, list)}
        df = pd.DataFrame(cols)
        df.insert(0, "t_s", df["t_ns"] / 1e9)
        df.attrs["interval_s"] = ts.get("interval_ns", 0.0) / 1e9
        return df

    @property
    def has_histogram(self) -> bool:
        """Whether the raw latency histograms were recorded."""
        return any((self._r.get(d, {}) or {}).get("lat_hist_ns") for d in ("read", "write"))

    @property
    def histogram(self) -> "pd.DataFrame":
        """The raw latency histogram: one row per recorded bucket with
        ``direction``, ``latency_ns`` (bucket value), ``count`` and
        ``cum_fraction`` (fraction of that direction's I/Os at or below).
        Raises ``ValueError`` if not recorded (``latency_histogram=False``)."""
        import pandas as pd

        frames = []
        for d in ("read", "write"):
            h = (self._r.get(d, {}) or {}).get("lat_hist_ns")
            if not h:
                continue
            df = pd.DataFrame(h, columns=["latency_ns", "count"])
            df.insert(0, "direction", d)
            total = df["count"].sum()
            df["cum_fraction"] = df["count"].cumsum() / total if total else 0.0
            frames.append(df)
        if not frames:
            raise ValueError("this result has no latency histogram: run with latency_histogram=True")
        return pd.concat(frames, ignore_index=True)

    def write_html(self, path: Union[str, "os.PathLike[str]"], png_dir: Union[str, "os.PathLike[str]", None] = None) -> str:
        """Write a self-contained HTML report (see :mod:`ssdlab.report`); returns the path."""
        from .report import write_report

        return write_report(self, path, png_dir=png_dir)

    # -- text ---------------------------------------------------------------

    def summary(self) -> str:
        """A human-readable summary, like ``ssdlab run``'s."""
        what = f"system {self.device_name}, {len(self.drives)} drives" if self.drives else f"device {self.device_name}"
        lines = [
            f"ssdlab {self.version} — {what} ({self.capacity_bytes / 1e9:.1f} GB exported, "
            f"{self.raw_bytes / 1e9:.1f} GB raw), seed {self.seed}",
            f"workload: {self.workload}   precondition: {self.precondition}",
            f"measured: {self.sim_time_ns / 1e6:.3f} ms simulated in {self.wall_time_s:.2f} s wall",
        ]
        for name, d in (("read", self.read), ("write", self.write)):
            if not d.ios:
                continue
            lt = d.lat_ns
            lines.append(f"{name:>5}: {d.iops:>10.0f} IOPS  {d.bw_mb_per_s:>9.1f} MB/s  {d.ios} I/Os")
            lines.append(
                f"       lat (us): min {lt.min / 1e3:.1f}  mean {lt.mean / 1e3:.1f}  p50 {lt.p50 / 1e3:.1f}  "
                f"p90 {lt.p90 / 1e3:.1f}  p99 {lt.p99 / 1e3:.1f}  p99.9 {lt.p99_9 / 1e3:.1f}  max {lt.max / 1e3:.1f}"
            )
        lines.append(
            f"  WAF: {self.waf:.3f}   GC: {self.gc.runs} runs, {self.gc.pages_moved} pages moved, "
            f"{self.gc.blocks_erased} blocks erased"
        )
        ws = self.waf_split
        if ws.host_units:
            lines.append(
                f"  WAF by writer: user {ws.user:.3f} + GC {ws.gc:.3f} + SLC fold {ws.slc_fold:.3f} "
                f"+ mapping {ws.mapping:.3f}"
                + (f" + validity log {ws.validity:.3f}" if self.validity_log else "")
                + (f" + checkpoints {ws.checkpoint:.3f}" if self.checkpoint else "")
                + (f" + merges {ws.merge:.3f}" if self.merges else "")
            )
        w = self.wear
        life = f"{w.tbw_bytes / 1e12:.1f} TB writable at this WAF" if w.tbw_bytes > 0 else "no writes to estimate life from"
        lines.append(
            f"  Wear: erases per block min {w.erase_min} / mean {w.erase_mean:.2f} / max {w.erase_max} "
            f"(std {w.erase_std:.2f}, WL index {w.wl_index:.2f}); {w.life_used * 100:.2f}% of {w.endurance} P/E used; {life}"
            + (f", {w.bad_blocks} factory bad blocks" if w.bad_blocks else "")
            + (
                f", {w.grown_bad_blocks} grown bad ({w.retired_at_endurance} at the endurance limit)"
                if w.grown_bad_blocks
                else ""
            )
            + (f", {w.spare_blocks_used} of {w.spare_blocks} replacement blocks used" if w.spare_blocks else "")
        )
        if self.mapping is not None:
            m = self.mapping
            lines.append(
                f"  Mapping cache: {m.cache_bytes / 2**20:.1f} MiB ({m.cached_pages} of {m.translation_pages} "
                f"translation pages), hit ratio {m.hit_ratio * 100:.2f}%, {m.translation_reads} translation reads, "
                f"{m.translation_writes} writes; WAF from mapping {m.waf_mapping:.3f}"
            )
        if self.validity_log is not None:
            v = self.validity_log
            lines.append(
                f"  Validity log: {v.pages} pages, {v.cache_bytes / 1024:.1f} KiB cached, hit ratio {v.hit_ratio:.3f}, "
                f"{v.loads} loads, {v.writebacks} write-backs, {v.gc_waits} GC victims waited for theirs"
            )
        if self.merges is not None:
            g = self.merges
            lines.append(
                f"  Merges ({g.mapping} mapping, {g.log_blocks} log blocks per unit): {g.switch} switch, "
                f"{g.partial} partial, {g.full} full; {g.units_copied} units copied, {g.blocks_erased} blocks erased, "
                f"{g.mean_ms:.3f} ms each on average"
            )
        for name, d in self.drives.items():
            lines.append(
                f"drive {name} ({d.device_name}): read {d.read.iops:,.0f} IOPS {d.read.bw_mb_per_s:,.1f} MB/s, "
                f"write {d.write.iops:,.0f} IOPS {d.write.bw_mb_per_s:,.1f} MB/s"
            )
        for link in self.links:
            lines.append(
                f"link {link.get('name')} ({link.get('upper')} - {link.get('lower')}, Gen{link.get('generation')} "
                f"x{link.get('lanes')}): up {link.get('util_up', 0):.0%}, down {link.get('util_down', 0):.0%} busy"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        parts = []
        for name, d in (("read", self.read), ("write", self.write)):
            if d.ios:
                parts.append(f"{name} {d.iops:,.0f} IOPS p99 {d.lat_ns.p99 / 1e3:.1f} us")
        return f"<Result {self.device_name} / {self.workload}: {'; '.join(parts) or 'no I/O'}>"
