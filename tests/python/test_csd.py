"""Computational storage from Python: real results (checked against numpy),
timings, the CLI door, sweeps and errors."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

import ssdlab
from ssdlab.csd import CsdError


@pytest.fixture(scope="module")
def smartssd() -> ssdlab.Device:
    # The preset with fewer blocks per plane: same channels, dies, timings and FPGA.
    return ssdlab.Device.preset("smartssd-3.84t").with_(nand__blocks_per_plane=80)


def test_kernels_match_numpy(smartssd: ssdlab.Device) -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(-100, 100, 50_000, dtype=np.int32)
    b = rng.integers(-(2**31), 2**31 - 1, 50_000, dtype=np.int64).astype(np.int32)
    c = rng.integers(-(2**31), 2**31 - 1, 50_000, dtype=np.int64).astype(np.int32)
    r = ssdlab.csd.run(smartssd, kernel="count", inputs=[a], value=-7)
    assert r.result["count"] == int((a == -7).sum())
    r = ssdlab.csd.run(smartssd, kernel="average", inputs=[a])
    assert r.result["mean"] == pytest.approx(float(a.astype(np.int64).mean()), rel=1e-12)
    r = ssdlab.csd.run(smartssd, kernel="vadd", inputs=[b, c])
    np.testing.assert_array_equal(r.output, (b.astype(np.int64) + c).astype(np.int32))  # wraps as int32
    x = np.sort(rng.integers(0, 30_000, 40_000)).astype(np.int32)
    y = np.sort(rng.integers(0, 30_000, 25_000)).astype(np.int32)
    for p, q in [(x, y), (x[:0], y), (x, y[:0]), (x[:0], y[:0])]:
        r = ssdlab.csd.run(smartssd, kernel="merge", inputs=[p, q])
        np.testing.assert_array_equal(r.output, np.union1d(p, q).astype(np.int32))
        assert r.result["len"] == len(np.union1d(p, q))


def test_flow_timings_and_energy(smartssd: ssdlab.Device) -> None:
    r = ssdlab.csd.run(smartssd, kernel="vadd", elements=1 << 18, cus=4, local_buffer="64KiB", host_clock="0.8GHz")
    f, h = r.fpga, r.host
    assert f["total_s"] == pytest.approx(f["p2p_in_s"] + f["launch_s"] + f["compute_s"] + f["write_back_s"])
    assert h["total_s"] == pytest.approx(h["read_s"] + h["compute_s"] + h["write_back_s"])
    assert h["clock_ghz"] == pytest.approx(0.8)
    assert r.speedup == pytest.approx(h["total_s"] / f["total_s"])
    assert r.energy["fpga_j"] == pytest.approx(r.energy["fpga_static_j"] + r.energy["fpga_compute_j"] + r.energy["fpga_dram_j"])
    assert 1e9 < r.report["p2p_bandwidth"] < 3.6e9
    # The host link carries no P2P data: its bytes stay below what the host moved itself.
    host = next(x for x in r.report["links"] if x["name"] == "csd-switch-up")
    moved = r.report["layout"]["in_bytes"]
    assert host["up_bytes"] < moved + (1 << 20)
    # A faster host core computes faster.
    fast = ssdlab.csd.run(smartssd, kernel="vadd", elements=1 << 18, cus=4, local_buffer="64KiB", host_clock="4.7GHz")
    assert fast.host["compute_s"] < h["compute_s"]


def test_timing_model_sweep() -> None:
    df = ssdlab.csd.sweep({"cus": [1, 2, 5, 15, 16], "kernel": ["count", "merge"]}, elements=1 << 16)
    ok = df[df["error"].isna()] if "error" in df else df
    assert len(ok) == 8
    assert df[df["cus"] == 16]["error"].str.contains("offer 15").all()
    for k in ("count", "merge"):
        t = ok[ok["kernel"] == k].set_index("cus")["fpga_s"]
        # More CUs never slower than N x, never more than N times faster.
        for n in (2, 5, 15):
            assert t[1] / t[n] <= n + 1e-9
    t = ssdlab.csd.kernel_time(kernel="vadd", elements=1 << 16, local_buffer="256KiB")
    assert t["timing"]["cycles"] > 0 and t["result"]["kind"] == "array"


def test_errors_are_clear(smartssd: ssdlab.Device) -> None:
    with pytest.raises(CsdError, match="unknown kernel 'sort'"):
        ssdlab.csd.run(smartssd, kernel="sort")
    with pytest.raises(CsdError, match="not sorted"):
        ssdlab.csd.run(smartssd, kernel="merge", inputs=[[3, 1], [2]])
    with pytest.raises(CsdError, match="FPGA memory"):
        ssdlab.csd.run(smartssd, kernel="vadd", elements=1 << 30)
    with pytest.raises(CsdError, match="no \\[fpga\\] section"):
        ssdlab.csd.run(ssdlab.Device.preset("pm9a3-960g"), kernel="count", elements=10)
    with pytest.raises(CsdError, match="inputs\\[0\\]: values must fit int32"):
        ssdlab.csd.run(smartssd, kernel="count", inputs=[[2**31]])
    with pytest.raises(CsdError, match="inputs\\[1\\]: expected integers"):
        ssdlab.csd.run(smartssd, kernel="vadd", inputs=[[1], [1.5]])
    with pytest.raises(CsdError, match="cus: must not be negative"):
        ssdlab.csd.run(smartssd, kernel="count", cus=-1)
    with pytest.raises(CsdError, match="local_buffer"):
        ssdlab.csd.kernel_time(kernel="count", local_buffer="lots")


def test_cli_json(tmp_path, ssdlab_bin) -> None:
    inp = tmp_path / "a.bin"
    np.array([7, 1, 7, 7], dtype="<i4").tofile(inp)
    out = subprocess.run(
        [str(ssdlab_bin), "csd", "run", "--kernel", "count", "--input", str(inp), "--set", "nand.blocks_per_plane=80",
         "--output-format", "json"],
        capture_output=True, text=True, check=True,
    ).stdout
    rep = json.loads(out)
    assert rep["schema"] == "ssdlab.csd.v1" and rep["result"] == {"kind": "count", "value": 7, "count": 3}
    bad = tmp_path / "b.bin"
    bad.write_bytes(b"\x01\x02\x03")
    p = subprocess.run([str(ssdlab_bin), "csd", "run", "--kernel", "count", "--input", str(bad)], capture_output=True, text=True)
    assert p.returncode != 0 and "b.bin" in p.stderr and "multiple of 4" in p.stderr
    missing = tmp_path / "nope.bin"
    p = subprocess.run([str(ssdlab_bin), "csd", "run", "--kernel", "count", "--input", str(missing)],
                       capture_output=True, text=True)
    assert p.returncode != 0 and "nope.bin" in p.stderr
    p = subprocess.run([str(ssdlab_bin), "csd", "run", "--kernel", "vadd", "--cus", "16"], capture_output=True, text=True)
    assert p.returncode != 0 and "16 compute units" in p.stderr and "offer 15" in p.stderr
