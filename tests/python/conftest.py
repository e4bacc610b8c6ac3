"""Shared fixtures: a small drive and short jobs, so the suite runs in
minutes on two cores. Plots use Agg (no display)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

os.environ.setdefault("MPLBACKEND", "Agg")

from pathlib import Path

import pytest

import ssdlab

# 4 channels x 2 SLC dies, 4 KiB pages: 107 MB exported; a 5,000-I/O run
# takes a few milliseconds.
SMALL_TOML = (Path(__file__).resolve().parents[1] / "data" / "small-slc.toml").read_text()


@pytest.fixture
def sigint_raises():
    """SIGINT raises KeyboardInterrupt in the main thread for the test,
    however the suite was started: a shell starting it in the background
    (`cmd &` without job control) leaves SIGINT ignored, Python then keeps
    no handler, and `_thread.interrupt_main()` does nothing."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


@pytest.fixture(scope="session")
def small_toml(tmp_path_factory: pytest.TempPathFactory) -> str:
    p = tmp_path_factory.mktemp("dev") / "small.toml"
    p.write_text(SMALL_TOML)
    return str(p)


@pytest.fixture(scope="session")
def small(small_toml: str) -> ssdlab.Device:
    return ssdlab.Device.from_toml(small_toml)


@pytest.fixture(scope="session")
def randread() -> ssdlab.Job:
    return ssdlab.Job("rr", rw="randread", bs="4k", iodepth=8, number_ios=5000)


@pytest.fixture(scope="session")
def mixed() -> ssdlab.Job:
    return ssdlab.Job("mix", rw="randrw", rwmixread=70, bs="4k", iodepth=16, number_ios=20000)


@pytest.fixture(scope="session")
def ray_local():
    ray = pytest.importorskip("ray")
    os.environ.pop("RAY_ADDRESS", None)
    from ssdlab import ray_init

    # ssdlab's own start-up path: no address given, so a local instance
    # without the dashboard (sized to 2 CPUs here; to the machine by default)
    assert ray_init(num_cpus=2) is True
    assert ray.cluster_resources()["CPU"] == 2
    assert ray_init() is False  # already connected: reused
    yield ray
    ray.shutdown()


# The ssdlab command-line binary: $SSDLAB_BIN, else
# $CARGO_TARGET_DIR/release/ssdlab or target/release/ssdlab (built here with
# cargo when missing).
REPO = Path(__file__).resolve().parents[2]


def _binary() -> Path:
    if os.environ.get("SSDLAB_BIN"):
        return Path(os.environ["SSDLAB_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    if not target.is_absolute():
        target = REPO / target
    return target / "release" / ("ssdlab.exe" if os.name == "nt" else "ssdlab")


@pytest.fixture(scope="session")
def ssdlab_bin() -> Path:
    exe = _binary()
    if not exe.exists() and not os.environ.get("SSDLAB_BIN"):
        cargo = shutil.which("cargo")
        if cargo is None:
            pytest.fail(f"{exe} is missing and cargo is not on PATH: build the CLI or set SSDLAB_BIN")
        p = subprocess.run([cargo, "build", "--release", "-p", "ssdlab-cli"], cwd=REPO,
                           capture_output=True, text=True, timeout=1800)
        assert p.returncode == 0, f"cargo build --release -p ssdlab-cli failed:\n{p.stderr[-3000:]}"
    assert exe.exists(), f"ssdlab binary not found at {exe} (set SSDLAB_BIN)"
    return exe


