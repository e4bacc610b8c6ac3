"""Exceptions raised by ssdlab.

Every exception is picklable, so an error raised in a sweep worker (another
process, or a Ray task) arrives in the caller with all its fields.
"""

from __future__ import annotations

from typing import Iterable, List, NamedTuple, Optional, Tuple

__all__ = [
    "SsdlabError",
    "Problem",
    "ConfigError",
    "WorkloadError",
    "SimulationError",
    "RunStopped",
]


class SsdlabError(Exception):
    """Base class of every ssdlab error."""


class Problem(NamedTuple):
    """One problem in a device description."""

    key: str
    """Dotted key path, as in the TOML file: ``nand.t_read[1]``."""
    message: str
    """What is wrong and what was expected."""


class ConfigError(SsdlabError, ValueError):
    """A device or system description (file, preset or overrides) is invalid.

    Raised by the core's own validator, with *every* problem found, each with
    its key path (``problems``), not only the first. ``kind`` is
    ``"device"`` or ``"system"`` (a :class:`ssdlab.System`; its drives'
    device problems are keyed ``drive[i].device``).
    """

    source: str
    problems: List[Problem]
    kind: str

    def __init__(self, source: str, problems: Iterable[Tuple[str, str]], kind: str = "device") -> None:
        self.source = source
        self.problems = [Problem(str(k), str(m)) for k, m in problems]
        self.kind = kind
        super().__init__(source, [tuple(p) for p in self.problems])

    @property
    def keys(self) -> List[str]:
        """The key paths of every problem, in order."""
        return [p.key for p in self.problems]

    def __str__(self) -> str:
        n = len(self.problems)
        lines = [f"{self.source}: {n} problem{'' if n == 1 else 's'} in {self.kind} description"]
        lines += [f"  {p.key}: {p.message}" for p in self.problems]
        return "\n".join(lines)

    def __reduce__(self):  # type: ignore[override]
        return (type(self), (self.source, [tuple(p) for p in self.problems], self.kind))


class WorkloadError(SsdlabError, ValueError):
    """A fio job file (or keyword job) is invalid or not supported.

    ``line`` is 1-based (0 when the problem concerns the whole file) and
    ``option`` names the option concerned, if any.
    """

    file: str
    line: int
    option: Optional[str]
    message: str

    def __init__(self, file: str, line: int, option: Optional[str], message: str) -> None:
        self.file = file
        self.line = int(line)
        self.option = option
        self.message = message
        super().__init__(file, self.line, option, message)

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}: " if self.line > 0 else f"{self.file}: "
        opt = f"option '{self.option}': " if self.option else ""
        return f"{where}{opt}{self.message}"

    def __reduce__(self):  # type: ignore[override]
        return (type(self), (self.file, self.line, self.option, self.message))


class SimulationError(SsdlabError, RuntimeError):
    """The simulation could not run or could not finish (e.g. the device
    needs more memory than the machine has)."""

    message: str

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):  # type: ignore[override]
        return (type(self), (self.message,))


class RunStopped(SimulationError):
    """A run was stopped early through its :class:`ssdlab.StopFlag`."""
