"""Drive descriptions: presets, TOML files and validated edits."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _core

__all__ = ["Device", "presets"]

Overrides = Union[Mapping[str, Any], Iterable[Tuple[str, Any]]]


def presets() -> List[str]:
    """Names of the shipped device presets (the first is not necessarily the default)."""
    return [n for n, _ in _core.presets()]


def _norm_key(k: str) -> str:
    # Keyword form: nand__t_read -> nand.t_read.
    return k.replace("__", ".")


def _override_list(overrides: Optional[Overrides]) -> List[Tuple[str, Any]]:
    if overrides is None:
        return []
    items = overrides.items() if isinstance(overrides, Mapping) else overrides
    out: List[Tuple[str, Any]] = []
    for k, v in items:
        if not isinstance(k, str):
            raise TypeError(f"override keys are dotted key paths (str), not {type(k).__name__}")
        out.append((k, v))
    return out


def _merge(base: Sequence[Tuple[str, Any]], new: Sequence[Tuple[str, Any]]) -> List[Tuple[str, Any]]:
    """Later values win; a key keeps the position of its first appearance."""
    d: Dict[str, Any] = dict(base)
    for k, v in new:
        if k in d:
            del d[k]  # move to the end so it is applied after the values it overrides
        d[k] = v
    return list(d.items())


class Device:
    """A validated drive description.

    Build one from a preset (:meth:`preset`), a TOML device file
    (:meth:`from_toml`) or TOML text (:meth:`from_toml_str`), and derive
    variants with :meth:`with_`. Every construction runs the simulator's own
    validator and raises :class:`ssdlab.ConfigError` carrying *every*
    problem with its key path.

    A ``Device`` is immutable, hashable, and cheap to pickle (it keeps the
    TOML text and the overrides, not the resolved tables), so it can be sent
    to sweep workers.

    >>> dev = Device.preset("pm9a3-960g").with_(nand__channels=16, nand__t_read=["50us"] * 3)
    >>> dev.get("nand.channels")
    16
    """

    __slots__ = ("_text", "_source", "_overrides", "_h")

    def __init__(self, text: str, source: str = "<string>", overrides: Optional[Overrides] = None) -> None:
        """Parse and validate TOML ``text`` (``source`` names it in errors),
        with ``overrides`` (dotted key path -> value) applied."""
        self._text = text
        self._source = source
        self._overrides: List[Tuple[str, Any]] = _override_list(overrides)
        self._h: Optional[_core.DeviceHandle] = None
        self._handle()

    # -- construction -------------------------------------------------------

    @classmethod
    def preset(cls, name: str) -> "Device":
        """A shipped preset by name (see :func:`ssdlab.presets`)."""
        text = _core.preset_text(name)
        if text is None:
            from .errors import ConfigError

            raise ConfigError(
                f"preset {name}",
                [("(device)", f"no preset named '{name}'; presets: {', '.join(presets())}")],
            )
        return cls(text, f"preset {name}")

    @classmethod
    def default(cls) -> "Device":
        """The default drive (``pm9a3-960g``)."""
        return cls.preset(_core.default_device())

    @classmethod
    def from_toml(cls, path: Union[str, "os.PathLike[str]"]) -> "Device":
        """Read a TOML device file."""
        p = os.fspath(path)
        try:
            with open(p, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            from .errors import ConfigError

            raise ConfigError(p, [("(file)", f"cannot read: {e}")]) from None
        return cls(text, p)

    @classmethod
    def from_toml_str(cls, text: str, source: str = "<string>") -> "Device":
        """Parse TOML text."""
        return cls(text, source)

    @classmethod
    def load(cls, name_or_path: Union[str, "os.PathLike[str]", "Device"]) -> "Device":
        """A preset name, a path to a TOML file, or a ``Device`` (returned as is)."""
        if isinstance(name_or_path, Device):
            return name_or_path
        s = os.fspath(name_or_path)
        if s in presets():
            return cls.preset(s)
        if s.endswith(".toml") or os.path.exists(s):
            return cls.from_toml(s)
        return cls.preset(s)

    def with_(self, overrides: Optional[Overrides] = None, **kw: Any) -> "Device":
        """A copy with values changed at dotted key paths, validated.

        Keys are the paths of the TOML file (``"nand.channels"``,
        ``"nand.t_read[1]"``, ``"ftl.gc_policy"``); as keyword arguments use
        ``__`` for the dots (``nand__channels=16``). A key found in only one
        section may omit it (``channels=16``), and one value given for a
        list such as ``nand.t_read`` fills every element. Values are written
        as in the TOML file: units in strings (``"50us"``, ``"16KiB"``,
        ``"7%"``). Raises :class:`ssdlab.ConfigError` listing every problem.
        """
        new = _override_list(overrides) + [(_norm_key(k), v) for k, v in kw.items()]
        # The shorthands and every check are the core's (ssdlab_core::compose),
        # the same door as device files' `extends` and `ssdlab run --set`.
        return Device(self._text, self._source, _merge(self._overrides, new))

    # -- internals ----------------------------------------------------------

    def _handle(self) -> "_core.DeviceHandle":
        if self._h is None:
            self._h = _core.load_device(self._text, self._source, list(self._overrides))
        return self._h

    def __getstate__(self) -> Tuple[str, str, List[Tuple[str, Any]]]:
        return (self._text, self._source, self._overrides)

    def __setstate__(self, st: Tuple[str, str, List[Tuple[str, Any]]]) -> None:
        self._text, self._source, self._overrides = st
        self._h = None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Device):
            return NotImplemented
        return self.to_toml() == other.to_toml()

    def __hash__(self) -> int:
        return hash(self.to_toml())

    def __repr__(self) -> str:
        ov = ", ".join(f"{k}={v!r}" for k, v in self._overrides)
        return f"Device({self.name!r}, source={self._source!r}{', ' + ov if ov else ''})"

    # -- views --------------------------------------------------------------

    @property
    def name(self) -> str:
        """Device name (shown in reports)."""
        return self._handle().name

    @property
    def description(self) -> str:
        """One-line description."""
        return self._handle().description

    @property
    def source(self) -> str:
        """File name or ``preset NAME`` the description came from."""
        return self._source

    @property
    def text(self) -> str:
        """The TOML text this device was built from (before overrides)."""
        return self._text

    @property
    def overrides(self) -> Dict[str, Any]:
        """The overrides applied on top of :attr:`text`, in order."""
        return dict(self._overrides)

    @property
    def capacity_bytes(self) -> int:
        """Exported (logical) capacity in bytes."""
        return self._handle().capacity_bytes

    @property
    def raw_bytes(self) -> int:
        """Raw NAND capacity in bytes."""
        return self._handle().raw_bytes

    @property
    def memory_bytes(self) -> int:
        """Estimated simulator memory (mapping tables) for this device, in bytes."""
        return self._handle().memory_bytes

    def config(self) -> Dict[str, Any]:
        """The device file as a nested dict, every default filled in (values as written in TOML)."""
        return json.loads(self._handle().file_json())

    def resolved(self) -> Dict[str, Any]:
        """The resolved, typed configuration (times in ps, sizes in bytes, bandwidths in B/s)."""
        return json.loads(self._handle().resolved_json())

    def to_toml(self) -> str:
        """The device file as TOML text, every default filled in and every override applied."""
        return self._handle().to_toml()

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write :meth:`to_toml` to ``path``."""
        with open(os.fspath(path), "w", encoding="utf-8") as f:
            f.write(self.to_toml())

    def get(self, path: str) -> Any:
        """The value at a dotted key path of :meth:`config` (``"nand.t_read[1]"``)."""
        import re

        cur: Any = self.config()
        for part in path.split("."):
            m = re.fullmatch(r"([A-Za-z0-9_-]+)((?:\[\d+\])*)", part)
            if not m:
                raise KeyError(path)
            cur = cur[m.group(1)]
            for ix in re.findall(r"\[(\d+)\]", m.group(2)):
                cur = cur[int(ix)]
        return cur
