"""Acceptance: ssdlab's ``--output-format fio-json`` loads in fio-plot.

The ``ssdlab`` binary runs a small random-read job at two queue depths; the
outputs are saved the way fio-plot's ``bench-fio`` lays out a benchmark
(``<target>/<bs>/<rw>-<iodepth>-<numjobs>.json``) and read back with
fio-plot's own JSON import and parsing (``fio_plot.fiolib``). The values
fio-plot loads must be the ones ssdlab reported; then fio-plot draws its
queue-depth bar chart (matplotlib Agg) from the same directory.

Needs the PyPI package ``fio-plot`` (in the ``test`` extra). Without it the
test is skipped, unless ``SSDLAB_REQUIRE_FIO_PLOT`` is set (scripts/test.sh
sets it), in which case it fails. The binary is ``$SSDLAB_BIN``, else
``$CARGO_TARGET_DIR/release/ssdlab`` or ``target/release/ssdlab`` (built by
``cargo test --release``; built here with cargo if missing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEVICE = REPO / "tests" / "data" / "small-slc.toml"
REQUIRED = "SSDLAB_REQUIRE_FIO_PLOT" in os.environ
IODEPTHS = [1, 8]
# One job, as a user would write it; the queue depth is the swept parameter.
JOB = "[randread-4k]\nrw=randread\nbs=4k\niodepth={iodepth}\nnumber_ios=3000\n"


@pytest.fixture(scope="module")
def fiolib():
    """fio-plot's JSON loading modules."""
    try:
        from fio_plot.fiolib import defaultsettings, getdata, jsonimport
    except ImportError as e:
        if REQUIRED:
            pytest.fail(f"SSDLAB_REQUIRE_FIO_PLOT is set but fio-plot cannot be imported: {e!r}")
        pytest.skip(
            f"fio-plot is not installed ({e}); `pip install fio-plot` or "
            "`pip install .[test]` (scripts/test.sh installs it and sets SSDLAB_REQUIRE_FIO_PLOT=1)"
        )
    return defaultsettings, getdata, jsonimport


def _ssdlab(exe: Path, *args: str) -> None:
    p = subprocess.run([str(exe), *args, "--quiet"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr


@pytest.fixture(scope="module")
def bench(tmp_path_factory, ssdlab_bin):
    """Runs the job at each queue depth; returns (benchmark dir, fio-json
    outputs and ssdlab.report.v1 reports, by iodepth)."""
    root = tmp_path_factory.mktemp("fio-plot")
    bench_dir = root / "small-slc" / "4k"  # bench-fio: <output>/<target>/<bs>/
    bench_dir.mkdir(parents=True)
    fio_json, reports = {}, {}
    for qd in IODEPTHS:
        job = root / f"randread-qd{qd}.fio"
        job.write_text(JOB.format(iodepth=qd))
        out = bench_dir / f"randread-{qd}-1.json"  # bench-fio: <rw>-<iodepth>-<numjobs>.json
        common = ["run", "--job", str(job), "--device", str(DEVICE)]
        _ssdlab(ssdlab_bin, *common, "--output-format", "fio-json", "--output", str(out))
        report = root / f"report-qd{qd}.json"
        _ssdlab(ssdlab_bin, *common, "--output-format", "json", "--output", str(report))
        fio_json[qd] = json.loads(out.read_text())
        reports[qd] = json.loads(report.read_text())
    return bench_dir, fio_json, reports


def _settings(defaultsettings, getdata, bench_dir: Path) -> dict:
    """What fio-plot's command line builds for `-i DIR -l -r randread -d 1 8 -n 1`."""
    s = defaultsettings.get_default_settings()
    s.update(input_directory=[str(bench_dir)], rw="randread", iodepth=list(IODEPTHS), numjobs=[1],
             graphtype="bargraph2d_qd", compare_graph=False)
    return getdata.configure_default_settings(s, getdata.get_routing_dict(), "bargraph2d_qd")


def test_fio_plot_loads_ssdlab_fio_json(fiolib, bench):
    defaultsettings, getdata, jsonimport = fiolib
    bench_dir, fio_json, reports = bench
    settings = _settings(defaultsettings, getdata, bench_dir)
    # fio-plot picks the files by their job options (rw, iodepth, numjobs).
    listed = jsonimport.list_json_files(settings, fail=False)
    assert [Path(f).name for f in listed[0]["files"]] == [f"randread-{qd}-1.json" for qd in IODEPTHS]
    data = getdata.get_json_data(settings)
    assert len(data) == 1
    rows = data[0]["data"]
    assert [int(r["iodepth"]) for r in rows] == IODEPTHS
    for qd, row in zip(IODEPTHS, rows):
        job = fio_json[qd]["jobs"][0]
        read = job["read"]
        assert read["total_ios"] == 3000
        # Exactly what ssdlab wrote.
        assert (row["type"], row["rw"], row["bs"], int(row["numjobs"])) == ("read", "randread", "4096", 1)
        assert row["iops"] == read["iops"]
        assert row["bw"] == read["bw"]
        assert row["lat"] == read["lat_ns"]["mean"]
        assert row["iops_stddev"] == read["iops_stddev"]
        assert row["latency_us"] == [job["latency_us"]]
        assert row["fio_version"] == fio_json[qd]["fio version"]
        # And what the simulator measured (ssdlab.report.v1): fio's bw is in
        # KiB/s; fio-json's latency moments are over whole nanoseconds.
        rep = reports[qd]["read"]
        assert row["iops"] == pytest.approx(rep["iops"], rel=1e-9)
        assert row["bw"] == round(rep["bw_bytes_per_s"] / 1024)
        assert row["lat"] == pytest.approx(rep["lat_ns"]["mean"], abs=1.0)
    assert rows[1]["iops"] > rows[0]["iops"]


def test_fio_plot_draws_the_queue_depth_chart(fiolib, bench, tmp_path):
    bench_dir = bench[0]
    png = tmp_path / "ssdlab-qd.png"
    p = subprocess.run(
        [sys.executable, "-m", "fio_plot", "-i", str(bench_dir), "-T", "ssdlab small-slc", "-l",
         "-r", "randread", "-d", *map(str, IODEPTHS), "-n", "1", "-o", str(png)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 10_000
