"""Serving a simulated drive in real time: every request takes the time the
simulated drive says it takes (docs/models/serving.md).

Two ways in:

* :class:`LiveDrive`: the drive in this process. Python code reads and writes
  it; each call returns when the wall clock reaches the request's simulated
  completion (the GIL is released meanwhile, so threads run requests at
  once; ``conn`` picks the NVMe queue pair)::

      import ssdlab
      with ssdlab.serve.LiveDrive("pm9a3-960g", backing="/var/tmp/ssd.img") as d:
          d.write(0, b"x" * 4096)
          d.flush()
          data = d.read(0, 4096)
          print(d.last)            # Served(simulated_us=..., served_us=...)
      d.report["requests"]         # served vs simulated latency per kind

* :func:`nbd`: the drive served over NBD by ``ssdlab serve`` (nbdkit with
  ssdlab's plugin) for real tools; returns its URI::

      with ssdlab.serve.nbd("pm9a3-960g") as s:
          subprocess.run(["qemu-io", "-f", "raw", "-c", "read 0 4k", s.uri])
      s.report
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _core
from .device import Device
from .errors import SsdlabError
from .system import System

__all__ = ["LiveDrive", "NbdServer", "Served", "ServeError", "nbd"]


class ServeError(SsdlabError, RuntimeError):
    """Serving could not start or stopped (the message says why)."""


@dataclass(frozen=True)
class Served:
    """How long one request took, in microseconds."""

    simulated_us: float
    """Arrival to completion in the simulated drive."""
    served_us: float
    """Arrival to release (wall clock); never less than ``simulated_us``."""


def _handle(device: Union[str, Device, System, None]) -> Any:
    if device is None:
        return Device.preset(_core.default_device())._handle()
    if isinstance(device, (str, os.PathLike)):
        if os.path.isfile(device):
            return Device.from_toml(os.fspath(device))._handle()
        return Device.preset(os.fspath(device))._handle()
    if isinstance(device, (Device, System)):
        return device._handle()
    raise TypeError(f"device: expected a preset name, a Device or a System, got {type(device).__name__}")


class LiveDrive:
    """A simulated drive served in real time to this process.

    ``device``: a preset name, :class:`~ssdlab.Device` or :class:`~ssdlab.System`
    (then ``drive`` names the served drive). ``backing``: the sparse file
    holding the data (kept; default: a temporary file). The other keywords are
    ``ssdlab serve``'s options (times and sizes as strings with units);
    ``clock="simulated"`` releases each request as soon as it is simulated
    (simulated time then advances only with the requests) instead of in real
    time.
    """

    def __init__(
        self,
        device: Union[str, Device, System, None] = None,
        *,
        drive: Optional[str] = None,
        backing: Union[str, os.PathLike, None] = None,
        precondition: str = "fill",
        seed: int = 42,
        queues: int = 8,
        max_transfer: str = "1MiB",
        clock: str = "wall",
        lookahead: str = "20us",
        spin: str = "20us",
        late_threshold: str = "20us",
    ) -> None:
        if isinstance(queues, bool) or not isinstance(queues, int):
            raise ValueError(f"queues: expected a whole number, got {queues!r}")
        if not 1 <= queues <= 65535:
            raise ValueError(f"queues: expected a whole number from 1 to 65535, got {queues}")
        self._s = _core.LiveServer(
            _handle(device),
            drive=drive,
            backing=None if backing is None else os.fspath(backing),
            precondition=precondition,
            seed=seed,
            queues=queues,
            max_transfer=max_transfer,
            clock=clock,
            lookahead=lookahead,
            spin=spin,
            late_threshold=late_threshold,
        )
        self.last: Optional[Served] = None
        """The latest request's latencies."""
        self.report: Optional[Dict[str, Any]] = None
        """After :meth:`stop`: the serving report (``ssdlab.serve.v1``)."""

    @property
    def capacity(self) -> int:
        """Bytes the drive exports."""
        return self._s.capacity

    def _done(self, t: Tuple[float, float]) -> Served:
        self.last = Served(*t)
        return self.last

    def read(self, offset: int, length: int, *, conn: int = 0) -> bytes:
        data, sim, served = self._s.read(conn, offset, length)
        self._done((sim, served))
        return data

    def write(self, offset: int, data: bytes, *, fua: bool = False, conn: int = 0) -> Served:
        return self._done(self._s.write(conn, offset, bytes(data), fua))

    def flush(self, *, conn: int = 0) -> Served:
        return self._done(self._s.flush(conn))

    def trim(self, offset: int, length: int, *, fua: bool = False, conn: int = 0) -> Served:
        return self._done(self._s.trim(conn, offset, length, fua))

    def zero(self, offset: int, length: int, *, may_trim: bool = True, fua: bool = False, conn: int = 0) -> Served:
        return self._done(self._s.zero(conn, offset, length, may_trim, fua))

    def extents(self, offset: int = 0, length: Optional[int] = None) -> List[Tuple[int, int, bool]]:
        """(offset, length, data) runs: holes were never written or were trimmed."""
        if length is None:
            length = self.capacity - offset
        return self._s.extents(offset, length)

    def stats(self) -> Dict[str, Any]:
        """The serving report so far."""
        return json.loads(self._s.stats_json())

    def stop(self) -> Dict[str, Any]:
        """Stop serving; returns the serving report, with the simulated
        drive's own report (``ssdlab.report.v1``) under ``simulated``."""
        if self.report is None:
            self.report = json.loads(self._s.stop_json())
        return self.report

    def __enter__(self) -> "LiveDrive":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _binary(binary: Union[str, os.PathLike, None]) -> str:
    b = binary or os.environ.get("SSDLAB_BIN") or shutil.which("ssdlab")
    if not b or not Path(b).exists():
        raise ServeError(
            "the ssdlab binary was not found: build it (cargo build --release -p ssdlab-cli -p ssdlab-nbd) "
            "and put it on PATH, set SSDLAB_BIN, or pass binary="
        )
    return os.fspath(b)


class NbdServer:
    """A running ``ssdlab serve``: :attr:`uri` to connect to; :meth:`stop`
    (or leaving the ``with`` block) stops it and fills :attr:`report`."""

    def __init__(self, proc: subprocess.Popen, uri: str, report_path: Path, tmp: tempfile.TemporaryDirectory) -> None:
        self.proc = proc
        self.uri = uri
        self._report_path = report_path
        self._tmp = tmp
        self.report: Optional[Dict[str, Any]] = None

    def stop(self, timeout: float = 120.0) -> Dict[str, Any]:
        if self.report is not None:
            return self.report
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise ServeError(f"ssdlab serve did not stop within {timeout} s (killed)")
        try:
            self.report = json.loads(self._report_path.read_text())
        except (OSError, ValueError) as e:
            err = self.proc.stderr.read() if self.proc.stderr else ""
            raise ServeError(f"ssdlab serve left no report ({e}): {err[-2000:]}") from None
        finally:
            self._tmp.cleanup()
        return self.report

    def __enter__(self) -> "NbdServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def nbd(
    device: Optional[str] = None,
    *,
    system: Optional[str] = None,
    drive: Optional[str] = None,
    set: Sequence[str] = (),
    backing: Union[str, os.PathLike, None] = None,
    listen: Optional[str] = None,
    readonly: bool = False,
    precondition: str = "fill",
    queues: int = 8,
    extra: Sequence[str] = (),
    binary: Union[str, os.PathLike, None] = None,
    timeout: float = 300.0,
) -> NbdServer:
    """Start ``ssdlab serve`` (a preset name or device file for ``device``, or
    ``system`` and ``drive``; ``set``: ``KEY=VALUE`` overrides) and wait until
    it accepts connections. A Unix socket unless ``listen="127.0.0.1:PORT"``."""
    tmp = tempfile.TemporaryDirectory(prefix="ssdlab-nbd-")
    d = Path(tmp.name)
    report = d / "report.json"
    args = [_binary(binary), "serve", "--report", str(report), "--precondition", precondition,
            "--queues", str(queues)]
    for k, v in (("--device", device), ("--system", system), ("--drive", drive)):
        if v is not None:
            args += [k, os.fspath(v)]
    for s in set:
        args += ["--set", s]
    if backing is not None:
        args += ["--backing", os.fspath(backing)]
    if readonly:
        args.append("--readonly")
    if listen is not None:
        args += ["--listen", listen]
    else:
        args += ["--socket", str(d / "nbd.sock")]
    args += list(extra)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    uri = proc.stdout.readline().strip()
    if not uri:
        err = proc.stderr.read() if proc.stderr else ""
        proc.wait()
        tmp.cleanup()
        raise ServeError(f"ssdlab serve failed: {err.strip()}")
    # Ready when a client can connect (the drive is preconditioned first).
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if proc.poll() is not None:
            err = proc.stderr.read() if proc.stderr else ""
            tmp.cleanup()
            raise ServeError(f"ssdlab serve stopped: {err.strip()}")
        if _connects(uri):
            return NbdServer(proc, uri, report, tmp)
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    tmp.cleanup()
    raise ServeError(f"ssdlab serve did not accept connections within {timeout} s")


def _connects(uri: str) -> bool:
    """Whether the server behind ``uri`` accepts a connection (a plain socket
    connect: nbdkit accepts only once the drive is ready)."""
    import socket

    try:
        if uri.startswith("nbd+unix://"):
            path = uri.split("socket=", 1)[1]
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(1.0)
                s.connect(path)
                return len(s.recv(8)) == 8  # nbdkit's greeting: "NBDMAGIC"
        host_port = uri.split("://", 1)[1].rstrip("/")
        host, port = host_port.rsplit(":", 1)
        with socket.create_connection((host.strip("[]"), int(port)), timeout=1.0) as s:
            s.settimeout(1.0)
            return len(s.recv(8)) == 8
    except (OSError, ValueError, IndexError):
        return False
