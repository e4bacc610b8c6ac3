"""Block traces from Python: Job.from_trace and Job.trace_stats."""

from __future__ import annotations

import pytest

import ssdlab


def _msr(path, n=300):
    lines = []
    for i in range(n):
        op = "Write" if i % 4 == 0 else "Read"
        lines.append(f"{128166372003061629 + i * 50_000},hm,{i % 2},{op},{(i * 7919 % 2048) * 4096},{4096 * (1 + i % 2)},100")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_trace_stats_counts_requests(tmp_path):
    st = ssdlab.Job.trace_stats(_msr(tmp_path / "t.csv"))
    assert st["reads"] + st["writes"] == 300
    assert st["writes"] == 75
    one = ssdlab.Job.trace_stats(tmp_path / "t.csv", device="hm_1")
    assert one["reads"] + one["writes"] == 150


def test_trace_job_runs_open_and_closed_and_sweeps(tmp_path, small):
    t = _msr(tmp_path / "t.csv")
    closed = ssdlab.Job.from_trace(t, replay="closed", iodepth=4, remap="scale")
    r = ssdlab.run(small, closed, sample_interval=None)
    assert r.read.ios + r.write.ios == 300
    assert r.write.ios == 75
    # Open loop at the trace's pace: 300 requests 5 ms apart (FILETIME is 100 ns).
    opened = ssdlab.Job.from_trace(t, remap="scale")
    ro = ssdlab.run(small, opened, sample_interval=None)
    assert ro.read.ios + ro.write.ios == 300
    assert ro.sim_time_ns == pytest.approx(299 * 5e6, rel=0.01)
    # Twice as fast.
    fast = ssdlab.run(small, ssdlab.Job.from_trace(t, speed=2, remap="scale"), sample_interval=None)
    assert fast.sim_time_ns == pytest.approx(299 * 2.5e6, rel=0.01)
    # A sweep over the replay queue depth, like any job option.
    df = ssdlab.sweep(small, closed, grid={"job.iodepth": [1, 8]}, backend="sequential", progress=False)
    assert list(df["read_ios"] + df["write_ios"]) == [300, 300]
    assert df["read_iops"].iloc[1] > df["read_iops"].iloc[0]


def test_trace_errors_name_file_and_line(tmp_path, small):
    bad = tmp_path / "bad.csv"
    bad.write_text("128166372003061629,hm,1,Read,9175040,4096,2125\n128166372003061630,hm,1,Sideways,0,4096,1\n")
    with pytest.raises(ssdlab.WorkloadError) as e:
        ssdlab.Job.trace_stats(bad, format="msr")
    assert e.value.line == 2 and "bad.csv" in str(e.value)
    with pytest.raises(ssdlab.WorkloadError) as e:
        ssdlab.run(small, ssdlab.Job.from_trace(bad, format="msr"), sample_interval=None)
    assert e.value.line == 2
    with pytest.raises(ssdlab.WorkloadError):
        ssdlab.Job.from_trace(tmp_path / "missing.csv")
    with pytest.raises(ValueError):
        ssdlab.Job.from_trace(bad, replay="sideways")


def test_trims_and_flushes_reach_python(small):
    job = ssdlab.Job.from_fio_text(
        "[w]\nrw=randwrite\nbs=4k\niodepth=4\nnumber_ios=400\nfsync=8\n"
        "[t]\nstonewall\nrw=randtrim\nbs=4k,4k,16k\niodepth=2\nnumber_ios=100\n"
    )
    r = ssdlab.run(small, job, sample_interval=None)
    assert r.write.ios == 400 and r.flush.ios == 50 and r.trim.ios == 100
    assert r.trim.bytes == 100 * 16384
    assert set(r.to_pandas()["direction"]) == {"write", "trim", "flush"}
    row = ssdlab.sweep(small, job, grid={"job.iodepth": [2]}, backend="sequential", progress=False).iloc[0]
    assert row["flush_ios"] == 50 and row["trim_ios"] == 100
    assert row["flush_lat_p99_ns"] > 0
    # the parsed jobs show the new options
    w, t = job.jobs
    assert (w["fsync"], w["group"], w["stonewall"]) == (8, 0, False)
    assert (t["trim"], t["trim_bs"], t["group"], t["stonewall"]) == ("only", 16384, 1, True)
