"""``python -m ssdlab``: sweep and search specs, report, run."""

from __future__ import annotations

import os
import subprocess
import sys

import pandas as pd
import pytest

SPEC_SWEEP = """
device = "small.toml"
job = "rr.fio"
seeds = [1, 2]
precondition = "fill"
output = "sweep.csv"
[device_overrides]
"ftl.over_provisioning" = "20%"
[grid]
"job.iodepth" = [1, 8]
"nand.channels" = [2, 4]
"""

SPEC_SEARCH = """
device = "small.toml"
job = "rr.fio"
n_trials = 8
population_size = 4
storage = "search.db"
backend = "sequential"
constraints = ["read_lat_p99_ns <= 1000000"]
[space]
"nand.channels" = [1, 2, 4]
"job.iodepth" = {int = [1, 16], log = true}
[objectives]
read_iops = "max"
read_lat_mean_ns = "min"
"""


def ssdlab_py(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ssdlab", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture()
def specdir(tmp_path, small_toml):
    (tmp_path / "small.toml").write_text(open(small_toml).read())
    (tmp_path / "rr.fio").write_text("[rr]\nrw=randread\nbs=4k\niodepth=4\nnumber_ios=3000\n")
    (tmp_path / "sweep.toml").write_text(SPEC_SWEEP)
    (tmp_path / "search.toml").write_text(SPEC_SEARCH)
    return tmp_path


def test_sweep_spec_writes_csv_and_parquet(specdir):
    p = ssdlab_py("sweep", "sweep.toml", "--no-progress", cwd=specdir)
    assert p.returncode == 0, p.stderr
    df = pd.read_csv(specdir / "sweep.csv")
    assert len(df) == 8 and {"job.iodepth", "nand.channels", "seed", "read_iops"} <= set(df.columns)
    p = ssdlab_py("sweep", "sweep.toml", "-o", "out.parquet", "--workers", "1", cwd=specdir)
    assert p.returncode == 0, p.stderr
    dq = pd.read_parquet(specdir / "out.parquet")
    assert list(dq["read_iops"]) == list(df["read_iops"])


def test_search_spec_writes_the_front_and_resumes(specdir):
    p = ssdlab_py("search", "search.toml", "--no-progress", cwd=specdir)
    assert p.returncode == 0, p.stderr
    front = pd.read_csv(specdir / "pareto.csv")
    assert len(front) >= 1 and "read_iops" in front.columns
    assert "8 trials" in p.stderr
    p = ssdlab_py("search", "search.toml", "--trials", "10", "--no-progress", cwd=specdir)
    assert p.returncode == 0 and "10 trials" in p.stderr, p.stderr


def test_run_then_report(specdir):
    p = ssdlab_py("run", "--device", "small.toml", "--job", "rr.fio", "-o", "r.json", "--no-progress", cwd=specdir)
    assert p.returncode == 0, p.stderr
    assert "IOPS" in p.stdout
    p = ssdlab_py("report", "r.json", "-o", "r.html", "--png-dir", "png", cwd=specdir)
    assert p.returncode == 0, p.stderr
    assert (specdir / "r.html").stat().st_size > 10_000
    assert sorted(os.listdir(specdir / "png")) == ["latency.png", "timeseries.png", "utilisation.png"]


def test_errors_exit_2_with_message(specdir):
    (specdir / "bad.toml").write_text(SPEC_SWEEP.replace('"nand.channels"', '"nand.chanels"').replace(
        "[grid]", "[grid]\n").replace("device_overrides", "device_overrides").replace(
        '"ftl.over_provisioning" = "20%"', '"ftl.over_provisioning" = 20'))
    p = ssdlab_py("sweep", "bad.toml", "--no-progress", cwd=specdir)
    assert p.returncode == 2
    assert "ftl.over_provisioning" in p.stderr
    p = ssdlab_py("report", "missing.json", cwd=specdir)
    assert p.returncode == 2 and "missing.json" in p.stderr


def test_sweep_spec_with_a_job_table(specdir):
    spec = SPEC_SWEEP.replace('job = "rr.fio"\n', "").replace(
        "[device_overrides]", '[job]\nname = "t"\nrw = "randwrite"\nbs = "4k"\nnumber_ios = 2000\n\n[device_overrides]'
    )
    (specdir / "t.toml").write_text(spec)
    p = ssdlab_py("sweep", "t.toml", "-o", "t.csv", "--backend", "sequential", "--no-progress", cwd=specdir)
    assert p.returncode == 0, p.stderr
    df = pd.read_csv(specdir / "t.csv")
    assert len(df) == 8 and (df["write_ios"] == 2000).all() and (df["read_ios"] == 0).all()
