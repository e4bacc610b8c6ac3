"""Systems: a host, its PCIe fabric (root complex, switches) and several drives."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core
from .device import Device, Overrides, _merge, _norm_key, _override_list
from .job import Job, _render, _sections

__all__ = ["System", "system_presets", "job_for_system"]

DeviceLike = Union[Device, str, "os.PathLike[str]"]
# A device override of some drives: (drive name, or "*" for every drive; key path; value).
DeviceOverride = Tuple[str, str, Any]


def system_presets() -> List[str]:
    """Names of the shipped system presets."""
    return [n for n, _ in _core.system_presets()]


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)  # a TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"a value of type {type(v).__name__} cannot be written in a system file")


def _table(header: str, d: Mapping[str, Any]) -> List[str]:
    out = [header]
    for k, v in d.items():
        if v is not None:
            out.append(f"{k} = {_toml_value(v)}")
    return out


class System:
    """A validated system: a host, its PCIe root complex, switches and drives.

    Build one from a system preset (:meth:`preset`), a system TOML file
    (:meth:`from_toml`, the format of ``ssdlab run --system``), TOML text
    (:meth:`from_toml_str`), or from :class:`Device` objects
    (:meth:`build`); derive variants with :meth:`with_` (keys of the system
    file: ``"switch[0].upstream_lanes"``, ``"root_complex.lanes"``) and
    :meth:`with_device` (device keys, on every drive or one). Every
    construction runs the simulator's own checks and raises
    :class:`ssdlab.ConfigError` with every problem and its key path.

    Run it with :func:`ssdlab.run` like a device; jobs name the drives they
    use with fio's ``filename=`` (``nvme0``, ``/dev/nvme0n1``, several
    joined by ``:``; ``*`` is every drive of the system, see
    :func:`job_for_system`).

    Immutable and picklable (the TOML text, its source, the overrides and the
    devices given as objects), so sweeps can send it to workers. Drive
    devices named by a relative path are read, relative to the system file,
    where the system is resolved.

    >>> sys = System.preset("seed002-4x-gen3-switch").with_({"switch[0].upstream_lanes": 16})
    >>> sys.drive_names
    ['nvme0', 'nvme1', 'nvme2', 'nvme3']
    """

    __slots__ = ("_text", "_source", "_overrides", "_devices", "_dev_overrides", "_h")

    def __init__(
        self,
        text: str,
        source: str = "<string>",
        overrides: Optional[Overrides] = None,
        *,
        devices: Optional[Mapping[str, Device]] = None,
        device_overrides: Optional[Iterable[DeviceOverride]] = None,
    ) -> None:
        """Parse and validate system TOML ``text`` (``source`` names it in
        errors; relative device paths resolve against its directory if it is
        a file), with ``overrides`` (dotted key path -> value) applied.
        ``devices`` maps a ``device = "..."`` reference of the file to the
        :class:`Device` to use for it; ``device_overrides`` are (drive name
        or ``"*"``, key path, value) applied to drives' devices."""
        self._text = text
        self._source = source
        self._overrides: List[Tuple[str, Any]] = _override_list(overrides)
        self._devices: Dict[str, Device] = dict(devices or {})
        for ref, d in self._devices.items():
            if not isinstance(d, Device):
                raise TypeError(f"devices[{ref!r}]: expected a Device, not {type(d).__name__}")
        self._dev_overrides: List[DeviceOverride] = [(str(w), str(k), v) for w, k, v in (device_overrides or [])]
        self._h: Optional[_core.SystemHandle] = None
        self._handle()

    # -- construction -------------------------------------------------------

    @classmethod
    def preset(cls, name: str) -> "System":
        """A shipped system preset by name (see :func:`ssdlab.system_presets`)."""
        text = _core.system_preset_text(name)
        if text is None:
            from .errors import ConfigError

            raise ConfigError(
                f"system preset {name}",
                [("(system)", f"no system preset named '{name}'; system presets: {', '.join(system_presets())}")],
                kind="system",
            )
        return cls(text, f"system preset {name}")

    @classmethod
    def from_toml(cls, path: Union[str, "os.PathLike[str]"]) -> "System":
        """Read a system TOML file (drive devices: presets, or files relative to it)."""
        p = os.fspath(path)
        try:
            with open(p, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            from .errors import ConfigError

            raise ConfigError(p, [("(file)", f"cannot read: {e}")], kind="system") from None
        return cls(text, p)

    @classmethod
    def from_toml_str(cls, text: str, source: str = "<string>") -> "System":
        """Parse system TOML text (relative device paths resolve against the
        current directory, or ``source``'s if it is a file)."""
        return cls(text, source)

    @classmethod
    def load(cls, name_or_path: Union[str, "os.PathLike[str]", "System"]) -> "System":
        """A system preset name, a path to a system TOML file, or a ``System`` (returned as is)."""
        if isinstance(name_or_path, System):
            return name_or_path
        s = os.fspath(name_or_path)
        if s in system_presets():
            return cls.preset(s)
        if s.endswith(".toml") or os.path.exists(s):
            return cls.from_toml(s)
        return cls.preset(s)

    @classmethod
    def build(
        cls,
        drives: Union[Mapping[str, DeviceLike], Sequence[DeviceLike]],
        *,
        switch: Optional[Mapping[str, Any]] = None,
        root: Optional[Mapping[str, Any]] = None,
        host: Optional[Mapping[str, Any]] = None,
        name: Optional[str] = None,
        description: str = "",
    ) -> "System":
        """A system assembled from devices.

        :param drives: drive name -> :class:`Device` (or a preset name or
            device file path); a list names them ``nvme0``, ``nvme1``, ...
        :param switch: ``None``: every drive on its own root port. A dict:
            one switch between the root complex and every drive, with the
            keys of a ``[[switch]]`` table (``upstream_lanes``,
            ``downstream_lanes``, ``upstream_generation``,
            ``downstream_generation``, ``ports``, ``latency``, ``power``,
            ``name``). Defaults: ``name="sw0"``, ``ports`` = the number of
            drives, ``downstream_lanes`` = the widest drive's lanes,
            ``upstream_lanes`` = the root port's lanes.
        :param root: keys of ``[root_complex]`` (``generation``, ``lanes``,
            ``ports``, ``max_payload``, ...). ``ports`` defaults to 1 with a
            switch and to the number of drives without.
        :param host: keys of ``[host]`` (``submit_overhead``,
            ``complete_overhead``; default: the first drive's).
        :param name: system name (default ``"<n>-drive"``, or
            ``"<n>-drive-x<lanes>"`` with a switch).

        The devices are kept as objects (their TOML text goes to the core
        with the system file); :meth:`save` writes them as files next to the
        system file so the CLI can run it too.
        """
        if isinstance(drives, Mapping):
            items = list(drives.items())
        else:
            items = [(f"nvme{i}", d) for i, d in enumerate(drives)]
        if not items:
            from .errors import ConfigError

            raise ConfigError("<built system>", [("drive", "a system needs at least one drive")], kind="system")
        devs: List[Tuple[str, Device]] = [(str(n), Device.load(d)) for n, d in items]
        root_d: Dict[str, Any] = dict(root or {})
        root_d.setdefault("ports", 1 if switch is not None else len(devs))
        lines: List[str] = []
        sw_name = None
        if switch is not None:
            sw: Dict[str, Any] = dict(switch)
            sw.setdefault("name", "sw0")
            sw.setdefault("upstream", "root")
            sw.setdefault("upstream_lanes", int(root_d.get("lanes", 16)))
            sw.setdefault("downstream_lanes", max(int(d.get("pcie.lanes")) for _, d in devs))
            sw.setdefault("ports", len(devs))
            sw_name = sw["name"]
        if name is None:
            name = f"{len(devs)}-drive" + (f"-x{sw['upstream_lanes']}" if switch is not None else "")
        lines += _table("", {"name": name, "description": description})[1:]
        if host:
            lines += [""] + _table("[host]", host)
        lines += [""] + _table("[root_complex]", root_d)
        if switch is not None:
            lines += [""] + _table("[[switch]]", sw)
        devices: Dict[str, Device] = {}
        for n, d in devs:
            ref = f"{n}.toml"
            devices[ref] = d
            lines += [""] + _table("[[drive]]", {"name": n, "device": ref, "attach": sw_name or "root"})
        return cls("\n".join(lines) + "\n", f"<built system {name}>", devices=devices)

    def with_(self, overrides: Optional[Overrides] = None, **kw: Any) -> "System":
        """A copy with values of the system file changed at dotted key paths,
        validated: ``{"switch[0].upstream_lanes": 16, "root_complex.lanes":
        8, "drive[1].attach": "root"}`` (keyword form: ``__`` for the dots,
        ``root_complex__lanes=8``). Values as in the file (units in strings:
        ``"150ns"``). Raises :class:`ssdlab.ConfigError` listing every problem
        with its key path. To change the drives' devices use :meth:`with_device`."""
        new = _override_list(overrides) + [(_norm_key(k), v) for k, v in kw.items()]
        return System(
            self._text,
            self._source,
            _merge(self._overrides, new),
            devices=self._devices,
            device_overrides=self._dev_overrides,
        )

    def with_device(self, overrides: Optional[Overrides] = None, *, drive: Optional[str] = None, **kw: Any) -> "System":
        """A copy whose drives' devices have values changed, as
        :meth:`Device.with_` does (``{"nand.channels": 16}``,
        ``cache__write_buffer="64MiB"``): on every drive, or only on
        ``drive`` (a drive name). A problem is reported under
        ``drive[i].device`` with the device's own key path in the message."""
        if drive is not None and drive not in self.drive_names:
            raise KeyError(f"no drive named {drive!r}; drives: {', '.join(self.drive_names)}")
        new = _override_list(overrides) + [(_norm_key(k), v) for k, v in kw.items()]
        who = "*" if drive is None else drive
        return System(
            self._text,
            self._source,
            self._overrides,
            devices=self._devices,
            device_overrides=self._dev_overrides + [(who, k, v) for k, v in new],
        )

    # -- internals ----------------------------------------------------------

    def _handle(self) -> "_core.SystemHandle":
        if self._h is None:
            from .errors import ConfigError

            try:
                self._h = _core.load_system(*self._task_data())
            except ConfigError as e:
                raise ConfigError(e.source, e.problems, kind="system") from None
        return self._h

    def _task_data(self) -> Tuple[Any, ...]:
        """Plain picklable data for a sweep worker (see :meth:`_from_task`)."""
        return (
            self._text,
            self._source,
            list(self._overrides),
            [(ref, d.text, d.source, list(d._overrides)) for ref, d in self._devices.items()],
            list(self._dev_overrides),
        )

    @classmethod
    def _from_task(cls, data: Sequence[Any]) -> "System":
        text, source, overrides, devices, dev_ov = data
        devs = {ref: Device(t, s, o) for ref, t, s, o in devices}
        return cls(text, source, overrides, devices=devs, device_overrides=[tuple(x) for x in dev_ov])

    def __getstate__(self) -> Tuple[Any, ...]:
        return (self._text, self._source, self._overrides, self._devices, self._dev_overrides)

    def __setstate__(self, st: Tuple[Any, ...]) -> None:
        self._text, self._source, self._overrides, self._devices, self._dev_overrides = st
        self._h = None

    def _key(self) -> str:
        return json.dumps(
            [self.to_toml(), {r: d.to_toml() for r, d in self._devices.items()}, self._dev_overrides],
            sort_keys=True,
            default=repr,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, System):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        ov = ", ".join(f"{k}={v!r}" for k, v in self._overrides)
        return f"System({self.name!r}, drives={self.drive_names!r}{', ' + ov if ov else ''})"

    # -- views --------------------------------------------------------------

    @property
    def name(self) -> str:
        """System name (the aggregate report's device name)."""
        return self._handle().name

    @property
    def description(self) -> str:
        """One-line description."""
        return self._handle().description

    @property
    def source(self) -> str:
        """File name or ``system preset NAME`` the description came from."""
        return self._source

    @property
    def text(self) -> str:
        """The TOML text this system was built from (before overrides)."""
        return self._text

    @property
    def overrides(self) -> Dict[str, Any]:
        """The overrides of the system file's keys, in order."""
        return dict(self._overrides)

    @property
    def device_overrides(self) -> List[DeviceOverride]:
        """The device overrides: (drive name or ``"*"``, key path, value), in order."""
        return list(self._dev_overrides)

    @property
    def drive_names(self) -> List[str]:
        """The drives' names, in file order (``filename=`` in jobs names them)."""
        return list(self._handle().drive_names)

    def info(self) -> Dict[str, Any]:
        """The topology as resolved: ``root_complex``, ``switches`` (uplink as
        trained, ``uplink_payload_bw_bytes_per_s``) and ``drives`` (device
        name, ``attach``, trained ``generation``/``lanes``,
        ``payload_bw_bytes_per_s``, ``capacity_bytes``)."""
        return json.loads(self._handle().info_json())

    def config(self) -> Dict[str, Any]:
        """The system file as a nested dict, every default filled in."""
        return json.loads(self._handle().file_json())

    def to_toml(self) -> str:
        """The system file as TOML text, every default filled in and every
        override applied (drives' devices are referenced, not inlined)."""
        return self._handle().to_toml()

    def device(self, drive: str) -> Device:
        """Drive ``drive``'s :class:`Device` (its device overrides applied)."""
        names = self.drive_names
        if drive not in names:
            raise KeyError(f"no drive named {drive!r}; drives: {', '.join(names)}")
        ref = self.config()["drive"][names.index(drive)]["device"]
        if ref in self._devices:
            dev = self._devices[ref]
        else:
            from .device import presets

            if ref in presets():
                dev = Device.preset(ref)
            else:
                base = os.path.dirname(self._source) if os.path.isfile(self._source) else "."
                dev = Device.from_toml(os.path.join(base, ref))
        ov = [(k, v) for who, k, v in self._dev_overrides if who in ("*", drive)]
        return dev.with_(ov) if ov else dev

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write :meth:`to_toml` to ``path``, and every device given as an
        object (:meth:`build`) as the file the system names, next to it, so
        ``ssdlab run --system PATH`` runs the same system. Device overrides
        (:meth:`with_device`) are written into those files; drives that name
        a preset or another file with device overrides are not supported here."""
        p = os.fspath(path)
        d = os.path.dirname(p) or "."
        refs = {dr["name"]: dr["device"] for dr in self.config()["drive"]}
        for drive, ref in refs.items():
            if ref in self._devices:
                with open(os.path.join(d, ref), "w", encoding="utf-8") as f:
                    f.write(self.device(drive).to_toml())
            elif any(who in ("*", drive) for who, _, _ in self._dev_overrides):
                raise ValueError(f"drive {drive!r}: device overrides of {ref!r} cannot be saved in the system file")
        with open(p, "w", encoding="utf-8") as f:
            f.write(self.to_toml())


def job_for_system(job: Job, drive_names: Sequence[str]) -> Job:
    """``job`` with ``filename=*`` (in a job section or ``[global]``)
    replaced by every drive of the system, joined by ``:`` (fio's stripe:
    the job's I/Os go to them round robin, its ``iodepth`` shared). A job
    without ``*`` is returned as is. This is the Python layer's own
    shorthand (the core and ``ssdlab run`` read ``filename=`` as fio does)."""
    secs = _sections(job.text)
    if not any((opts.get("filename") or "").strip() == "*" for _, opts in secs):
        return job
    all_ = ":".join(drive_names)
    for _, opts in secs:
        if (opts.get("filename") or "").strip() == "*":
            opts["filename"] = all_
    return Job._make(_render(secs), job.source, job.name)
