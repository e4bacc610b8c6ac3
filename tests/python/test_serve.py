"""ssdlab.serve: a drive served in real time to Python (LiveDrive), and over
NBD through `ssdlab serve` (nbd) with a real client."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

import ssdlab
from ssdlab.serve import LiveDrive, ServeError, Served, nbd


def test_live_drive_keeps_data_and_times_every_request(small_toml, tmp_path):
    backing = tmp_path / "d.img"
    with LiveDrive(small_toml, backing=backing, precondition="fresh") as d:
        assert d.capacity == ssdlab.Device.from_toml(small_toml).capacity_bytes
        data = bytes(range(256)) * 64  # 16 KiB
        w = d.write(8192, data)
        assert isinstance(w, Served) and w.served_us >= w.simulated_us > 0
        d.flush()
        assert d.read(8192, len(data)) == data
        assert d.last.served_us >= d.last.simulated_us > 0
        d.trim(8192, 4096)
        assert d.read(8192, 4096) == bytes(4096)
        assert d.read(12288, 4096) == data[4096:8192]
        runs = d.extents(0, 1 << 20)
        assert any(r[2] for r in runs) and any(not r[2] for r in runs)
        assert d.stats()["total_requests"] == 6
    r = d.report
    assert r["schema"] == "ssdlab.serve.v1"
    kinds = {k["kind"]: k for k in r["requests"]}
    assert set(kinds) == {"read", "write", "flush", "trim"}
    assert kinds["read"]["requests"] == 3
    assert r["simulated"]["schema"] == "ssdlab.report.v1"
    assert r["simulated"]["write"]["ios"] == 1
    # The data outlives the server: a new one on the same backing file reads it.
    with LiveDrive(small_toml, backing=backing, precondition="fresh") as d2:
        assert d2.read(12288, 4096) == data[4096:8192]


def test_threads_are_connections_and_every_write_reads_back(small_toml):
    with LiveDrive(small_toml, precondition="fresh", queues=4) as d:

        def worker(c: int) -> None:
            for i in range(50):
                d.write((i * 4 + c) * 4096, bytes([c * 50 + i]) * 4096, conn=c)

        ts = [threading.Thread(target=worker, args=(c,)) for c in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for c in range(4):
            for i in range(50):
                assert d.read((i * 4 + c) * 4096, 4096) == bytes([c * 50 + i]) * 4096
    assert d.report["simulated"]["write"]["ios"] == 200


def test_simulated_clock_releases_at_simulated_completion_and_repeats(small_toml):
    def stream() -> list:
        with LiveDrive(small_toml, precondition="fresh", clock="simulated") as d:
            out = []
            for i in range(200):
                off = (i * 7919 % 1000) * 4096
                if i % 3:
                    d.write(off, bytes([i % 251]) * 8192)
                else:
                    d.read(off, 4096)
                s = d.last
                assert s is not None and s.served_us == s.simulated_us > 0
                out.append(s.simulated_us)
            # The last write (i = 199) reads back.
            assert d.read(199 * 7919 % 1000 * 4096, 8192) == bytes([199]) * 8192
        assert d.report["clock"] == "simulated" and d.report["late"] == 0
        return out

    assert stream() == stream()


def test_bad_arguments_and_use_after_stop(small_toml):
    for kw, msg in [
        (dict(queues=0), "queues: expected a whole number from 1 to 65535"),
        (dict(precondition="warm"), "precondition: expected fresh, fill, steady or steady-exact"),
        (dict(lookahead="5s"), "lookahead: expected a time of at most 1s"),
        (dict(spin="10"), "spin:"),
        (dict(clock="fast"), "clock: expected wall or simulated"),
        (dict(max_transfer="1000B"), "max_transfer: 1000 B must be a whole number"),
        (dict(drive="nvme1"), "drive: picks a drive of a system"),
    ]:
        with pytest.raises(ValueError, match=msg):
            LiveDrive(small_toml, **kw)
    with pytest.raises(TypeError, match="device"):
        LiveDrive(42)  # type: ignore[arg-type]
    d = LiveDrive(small_toml, precondition="fresh")
    with pytest.raises(ValueError, match="beyond the export"):
        d.read(d.capacity, 4096)
    d.stop()
    with pytest.raises(RuntimeError, match="no longer served"):
        d.read(0, 4096)
    assert d.stop() is d.report  # a second stop returns the same report


def test_nbd_server_with_qemu_io(ssdlab_bin, small_toml, tmp_path):
    plugin = Path(ssdlab_bin).parent / "libssdlab_nbd.so"
    missing = [t for t in ("nbdkit", "qemu-io") if shutil.which(t) is None]
    if not plugin.exists():
        missing.append(str(plugin))
    if missing:
        if os.environ.get("SSDLAB_REQUIRE_NBD"):
            pytest.fail(f"SSDLAB_REQUIRE_NBD is set but these are missing: {missing}")
        pytest.skip(f"missing {missing}")
    with nbd(small_toml, precondition="fresh", backing=tmp_path / "n.img", binary=ssdlab_bin) as s:
        assert s.uri.startswith("nbd+unix:///?socket=")
        out = subprocess.run(
            ["qemu-io", "-f", "raw", "-c", "write -P 0x3c 0 64k", "-c", "flush", "-c", "read -P 0x3c 0 64k", s.uri],
            capture_output=True, text=True, check=True,
        ).stdout
        assert "read 65536/65536" in out and "fail" not in out
    kinds = {k["kind"]: k for k in s.report["requests"]}
    assert kinds["write"]["requests"] == 1 and kinds["read"]["requests"] == 1
    with pytest.raises(ServeError, match="--queues"):
        nbd(small_toml, queues=0, binary=ssdlab_bin)
