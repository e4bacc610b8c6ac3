"""Ray backend against an existing cluster (address= and RAY_ADDRESS).

A head node is started as its own process (`ray start --head --block`),
as a cluster would be; a separate Python process connects to it through
ssdlab's sweep, so nothing is shared with the in-process Ray of other tests.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

CLIENT = r"""
import json, os, sys
import ssdlab, ray
dev = ssdlab.Device.from_toml(sys.argv[1])
job = ssdlab.Job("rr", rw="randread", bs="4k", iodepth=4, number_ios=2000)
grid = {"job.iodepth": [1, 8], "nand.channels": [2, 4]}
kw = {} if sys.argv[2] == "env" else {"address": sys.argv[2]}
a = ssdlab.sweep(dev, job, grid=grid, backend="ray", progress=False, **kw)
gcs = ray.get_runtime_context().gcs_address
ray.shutdown()
b = ssdlab.sweep(dev, job, grid=grid, backend="sequential", progress=False)
print(json.dumps({"gcs": gcs, "ray": a["read_iops"].tolist(), "seq": b["read_iops"].tolist()}))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory):
    pytest.importorskip("ray")
    ray_bin = os.path.join(os.path.dirname(sys.executable), "ray")
    if not os.path.exists(ray_bin):
        pytest.skip("the ray command is not installed in this environment")
    port = _free_port()
    tmp = tmp_path_factory.mktemp("ray")
    # Ray >= 2.5x enables token authentication for `ray start`; a test
    # cluster on localhost opts out (a real cluster passes its token to the
    # client, e.g. RAY_AUTH_TOKEN, which ssdlab leaves to Ray).
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")
    env.pop("RAY_ADDRESS", None)
    head = subprocess.Popen(
        [ray_bin, "start", "--head", "--block", f"--port={port}", "--num-cpus=2",
         "--include-dashboard=false", f"--temp-dir={tmp}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True,
    )
    addr = f"127.0.0.1:{port}"
    deadline = time.time() + 90
    while time.time() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        if head.poll() is not None:
            pytest.fail(f"ray head exited with {head.returncode}")
        time.sleep(0.5)
    else:
        os.killpg(head.pid, signal.SIGTERM)
        pytest.fail("ray head did not start within 90 s")
    yield addr
    os.killpg(head.pid, signal.SIGTERM)
    try:
        head.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(head.pid, signal.SIGKILL)


@pytest.mark.parametrize("how", ["address", "env"])
def test_sweep_uses_an_existing_cluster(ray_head, small_toml, how):
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_AUTH_MODE="disabled")
    if how == "env":
        env["RAY_ADDRESS"] = ray_head
        arg = "env"
    else:
        env.pop("RAY_ADDRESS", None)
        arg = ray_head
    out = subprocess.run([sys.executable, "-c", CLIENT, small_toml, arg], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    res = json.loads(out.stdout.strip().splitlines()[-1])
    # connected to the cluster that was started (its GCS port; the head
    # advertises the machine's address), not a new local instance
    assert res["gcs"].rsplit(":", 1)[1] == ray_head.rsplit(":", 1)[1]
    assert res["ray"] == res["seq"]
