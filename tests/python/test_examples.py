"""The shipped example scripts run and show what their docs say."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import ssdlab

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(mod)
    return mod


def test_seed002_dd_sweep_grows_with_transfer_size():
    dd = _load("seed002_dd_sweep")
    # The value drive shrunk to 1/14 of its blocks (a quick fill), 1 GB of
    # static SLC and no dynamic region; 32 MiB per point stays inside it.
    dev = ssdlab.Device.preset("seed002-gen3-value").with_(
        nand__blocks_per_plane=128, ftl__slc_static="1GB", ftl__slc_dynamic="0B", ftl__over_provisioning="25%"
    )
    df = dd.sweep(dev, 32)
    direct = df[df["mode"] == "direct"]
    read = direct[direct.rw == "read"].set_index("transfer_kib").mb_s
    write = direct[direct.rw == "write"].set_index("transfer_kib").mb_s
    assert list(read.index) == dd.SIZES_KIB
    # One request at a time: reads grow with the transfer size up to the
    # Gen3 x4 link (3.46 GB/s of payload).
    assert all(b >= a * 0.99 for a, b in zip(read, read.iloc[1:])), read
    assert read[4] < 100 and 2500 < read[8192] < 3460
    # Writes land in the SLC cache: the drive's SLC rate (1.0 GB/s; the
    # 8 MiB write buffer's first fill adds to short points), above the
    # small-transfer rate that the per-command round trip sets.
    assert 950 < write[8192] < 1150, write
    assert write[4] < 0.8 * write[8192], write
    # Through the page cache on the preset's Cortex-A53 host: readahead makes
    # small reads far faster than direct ones, and the host's per-page work
    # (allocate, copy) caps large transfers well below what the drive moves.
    buf = df[df["mode"] == "buffered"]
    bread = buf[buf.rw == "read"].set_index("transfer_kib").mb_s
    bwrite = buf[buf.rw == "write"].set_index("transfer_kib").mb_s
    assert list(bread.index) == dd.SIZES_KIB and list(bwrite.index) == dd.SIZES_KIB
    assert bread[4] > 5 * read[4], (bread, read)
    assert bread[8192] < 0.5 * read[8192], (bread, read)
    assert bwrite[8192] < write[8192], (bwrite, write)


def test_desnoyers_waf_point_matches_the_analytic_model():
    dw = _load("desnoyers_waf")
    # The model itself: the paper's figures for large blocks.
    assert abs(dw.lru_waf(1.07) - 7.8) < 0.1 and abs(dw.lru_waf(1.28) - 2.48) < 0.01
    op, alpha, sim, ref, err = dw.measure("28%")
    assert 1.26 < alpha < 1.28
    assert abs(err) < 5.0, (sim, ref)

