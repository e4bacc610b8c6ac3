"""Sweeps: every combination, identical to sequential runs, failures kept, Ray."""

from __future__ import annotations

import os

import pandas as pd
import pytest

import ssdlab

VOLATILE = {"wall_time_s", "sim_ios_per_wall_s", "core_s"}


def sequential(device, job, points, seed=ssdlab.DEFAULT_SEED):
    rows = []
    for p in points:
        dev = device.with_({k: v for k, v in p.items() if not k.startswith("job.")})
        j = job.with_({k[4:]: v for k, v in p.items() if k.startswith("job.")})
        r = ssdlab.run(dev, j, seed=seed, sample_interval=None, latency_histogram=False)
        rows.append({**p, **r.metrics()})
    return rows


def same_metrics(row, ref):
    for k, v in ref.items():
        if k in VOLATILE:
            continue
        assert row[k] == v, (k, row[k], v)


def test_grid_runs_every_combination_like_sequential_runs(small, randread):
    grid = {"job.iodepth": [1, 8, 32], "nand.channels": [2, 4]}
    with _no_warning():
        df = ssdlab.sweep(small, randread, grid=grid, progress=False)
    assert len(df) == 6 and df.attrs["failed"] == 0
    assert list(df.columns[:3]) == ["job.iodepth", "nand.channels", "seed"]
    assert df["error"].isna().all()
    points = [{"job.iodepth": q, "nand.channels": c} for q in (1, 8, 32) for c in (2, 4)]
    assert df[["job.iodepth", "nand.channels"]].to_dict("records") == points
    ref = sequential(small, randread, points)
    for (_, row), r in zip(df.iterrows(), ref):
        same_metrics(row, r)
    # more queue depth, more IOPS; more channels, more IOPS at QD32
    assert df.loc[(df["job.iodepth"] == 32) & (df["nand.channels"] == 4), "read_iops"].item() > df.loc[
        (df["job.iodepth"] == 1) & (df["nand.channels"] == 4), "read_iops"
    ].item()


class _no_warning:
    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("error", RuntimeWarning)

    def __exit__(self, *a):
        return self._w.__exit__(*a)


def test_local_pool_equals_sequential_backend_with_seeds(small, mixed):
    grid = {"job.iodepth": [4, 16], "ftl.gc_policy": ["greedy", "fifo"]}
    a = ssdlab.sweep(small, mixed, grid=grid, seeds=[1, 2], backend="local", workers=2, progress=False)
    b = ssdlab.sweep(small, mixed, grid=grid, seeds=[1, 2], backend="sequential", progress=False)
    assert len(a) == 8 and list(a["seed"]) == [1, 2] * 4
    cols = [c for c in a.columns if c not in VOLATILE]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    # the process pool gives the same rows as the (default) thread pool
    p = ssdlab.sweep(small, mixed, grid=grid, seeds=[1, 2], backend="processes", workers=2, progress=False)
    pd.testing.assert_frame_equal(p[cols], b[cols])
    # a count of seeds starts at the default seed
    c = ssdlab.sweep(small, mixed, grid={"job.iodepth": [4]}, seeds=2, backend="sequential", progress=False)
    assert list(c["seed"]) == [42, 43]


def test_failed_points_are_reported_with_their_parameters(small, randread):
    grid = {"nand.channels": [0, 2, 4], "job.rw": ["randread", "sideways"]}
    with pytest.warns(RuntimeWarning, match="4 of 6 sweep points failed"):
        df = ssdlab.sweep(small, randread, grid=grid, progress=False)
    assert len(df) == 6 and df.attrs["failed"] == 4
    bad = df[df["error"].notna()]
    assert set(map(tuple, bad[["nand.channels", "job.rw"]].values)) == {
        (0, "randread"), (0, "sideways"), (2, "sideways"), (4, "sideways")
    }
    cfg = bad[bad["job.rw"] == "randread"].iloc[0]
    assert cfg["error_type"] == "ConfigError" and "nand.channels" in cfg["error"]
    wl = bad[(bad["job.rw"] == "sideways") & (bad["nand.channels"] == 2)].iloc[0]
    assert wl["error_type"] == "WorkloadError" and "rw" in wl["error"]
    good = df[df["error"].isna()]
    assert (good["read_iops"] > 0).all()
    # unknown keys fail every point, with the key in the message
    with pytest.warns(RuntimeWarning):
        df = ssdlab.sweep(small, randread, grid={"nand.chanels": [1, 2]}, progress=False)
    assert df["error"].str.contains("nand.chanels").all()


def test_special_keys_device_precondition(small, randread):
    other = small.with_(nand__t_read=["50us"])
    df = ssdlab.sweep(
        small, randread, grid={"device": [small, other], "precondition": ["fresh", "fill"]},
        backend="sequential", progress=False,
    )
    assert list(df["device"]) == ["small"] * 4
    assert list(df["precondition_mode"]) == ["fresh", "fill", "fresh", "fill"]
    fill = df[df["precondition"] == "fill"]
    assert fill["read_lat_p50_ns"].iloc[1] > fill["read_lat_p50_ns"].iloc[0]


def test_ray_backend_equals_local(ray_local, small, randread):
    grid = {"job.iodepth": [1, 8], "nand.channels": [2, 4, 0]}
    with pytest.warns(RuntimeWarning, match="2 of 6"):
        a = ssdlab.sweep(small, randread, grid=grid, backend="ray", progress=False)
    with pytest.warns(RuntimeWarning):
        b = ssdlab.sweep(small, randread, grid=grid, backend="sequential", progress=False)
    cols = [c for c in a.columns if c not in VOLATILE]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert a.attrs["backend"] == "ray"


def test_pool_sweep_from_a_script_without_main_guard(small_toml, tmp_path):
    """Workers never import the caller's __main__: no guard needed, stdin works."""
    import subprocess
    import sys

    code = (
        "import ssdlab\n"
        f"d = ssdlab.Device.from_toml({small_toml!r})\n"
        "j = ssdlab.Job(rw='randread', number_ios=2000)\n"
        "df = ssdlab.sweep(d, j, grid={'job.iodepth': [1, 2, 4]}, workers=2, progress=False)\n"
        "print('rows', len(df), int(df['error'].isna().sum()))\n"
    )
    script = tmp_path / "noguard.py"
    script.write_text(code)
    for args, stdin in (([str(script)], None), (["-"], code)):
        p = subprocess.run([sys.executable, *args], input=stdin, capture_output=True, text=True, timeout=120,
                           cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert p.stdout.count("rows 3 3") == 1, (p.stdout, p.stderr)


def test_ctrl_c_stops_a_threaded_sweep(small, sigint_raises):
    """Ctrl-C in the caller stops every running simulation of a local
    (thread) sweep at once and raises KeyboardInterrupt."""
    import _thread
    import threading
    import time

    long = ssdlab.Job("long", rw="randread", bs="4k", iodepth=8, io_size="1t", number_ios=50_000_000)
    threading.Timer(0.5, _thread.interrupt_main).start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        ssdlab.sweep(small, long, grid={"job.iodepth": [1, 2, 4, 8]}, backend="local", workers=2, progress=False)
    assert time.perf_counter() - t0 < 10
