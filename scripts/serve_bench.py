#!/usr/bin/env python3
"""Measure `ssdlab serve` (docs/performance.md, "Serving in real time").

For each case: start `ssdlab serve` on a Unix socket with its backing file in
/dev/shm (so the backing file's own I/O does not count), drive it with fio's
nbd engine, stop it with SIGTERM, and read the serving report. Prints, per
case, the IOPS fio saw, the served and simulated mean/p50/p99 latency (the
plugin's arrival to release, and the simulated drive's), fio's own
completion latency (what nbdkit and the NBD protocol add on top of the
served time), the late releases, and the server's peak memory.

    scripts/serve_bench.py [--quick] [--memory]

--memory also writes 10 GB into a 960 GB export and reports the server's
peak resident memory and the backing file's allocated size.
Needs target/release/ssdlab and libssdlab_nbd.so, nbdkit, nbdinfo and fio.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.environ.get("SSDLAB", os.path.join(ROOT, "target", "release", "ssdlab"))


def serve(tmp, name, extra):
    sock = os.path.join(tmp, f"{name}.sock")
    rep = os.path.join(tmp, f"{name}.json")
    backing = os.path.join("/dev/shm", f"ssdlab-bench-{os.getpid()}-{name}.img")
    args = [BIN, "serve", "--socket", sock, "--backing", backing, "--report", rep] + extra
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    uri = f"nbd+unix:///?socket={sock}"
    t0 = time.time()
    while time.time() - t0 < 300:
        if os.path.exists(sock) and subprocess.run(["nbdinfo", "--size", uri], capture_output=True).returncode == 0:
            return p, uri, rep, backing
        if p.poll() is not None:
            sys.exit(f"ssdlab serve failed: {p.stderr.read()}")
        time.sleep(0.05)
    p.kill()
    sys.exit("ssdlab serve did not come up")


def peak_rss_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def stop(p, rep, backing):
    rss = peak_rss_kib(p.pid)
    alloc = os.stat(backing).st_blocks * 512 if os.path.exists(backing) else 0
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=120)
    try:
        os.remove(backing)
    except OSError:
        pass
    with open(rep) as f:
        return json.load(f), rss, alloc


def fio(uri, tmp, rw, bs, qd, jobs, runtime, size="4g", extra=()):
    out = os.path.join(tmp, "fio.json")
    args = ["fio", "--name=b", "--ioengine=nbd", f"--uri={uri}", f"--rw={rw}", f"--bs={bs}",
            f"--iodepth={qd}", f"--numjobs={jobs}", f"--size={size}", "--group_reporting",
            "--output-format=json", f"--output={out}", *extra]
    if runtime:
        args += ["--time_based", f"--runtime={runtime}"]
    subprocess.run(args, check=True, capture_output=True)
    with open(out) as f:
        return json.load(f)["jobs"][0]


def kind(r, k):
    return next(x for x in r["requests"] if x["kind"] == k)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="2 s per case instead of 10 s")
    ap.add_argument("--serve-args", default="", help="extra ssdlab serve options, e.g. '--spin 0us'")
    ap.add_argument("--memory", action="store_true", help="also the 960 GB export after 10 GB written")
    a = ap.parse_args()
    runtime = 2 if a.quick else 10
    with tempfile.TemporaryDirectory() as tmp:
        print(f"{'case':<28}{'IOPS':>9}  {'served mean/p50/p99 us':>24}  {'simulated mean/p50/p99 us':>26}  {'mean gap':>8}  {'fio clat p50/p99 us':>20}  {'late':>6}  {'late arr':>8}")
        cases = [("randread 4k QD1", 1, 1), ("randread 4k QD2", 2, 1), ("randread 4k QD4", 4, 1), ("randread 4k QD8", 8, 1),
                 ("randread 4k QD16", 16, 1), ("randread 4k 4 conns x QD8", 8, 4)]
        for i, (name, qd, jobs) in enumerate(cases):
            p, uri, rep, backing = serve(tmp, f"c{i}", ["--queues", str(max(jobs, 1))] + a.serve_args.split())
            j = fio(uri, tmp, "randread", "4k", qd, jobs, runtime)
            r, rss, _ = stop(p, rep, backing)
            k = kind(r, "read")
            sv, sm = k["served"], k["simulated"]
            gap = (sv["mean_us"] - sm["mean_us"]) / sm["mean_us"] * 100
            clat = j["read"]["clat_ns"]["percentile"]
            print(f"{name:<28}{j['read']['iops']:>9.0f}  {sv['mean_us']:>8.1f}{sv['p50_us']:>8.1f}{sv['p99_us']:>8.1f}  "
                  f"{sm['mean_us']:>10.1f}{sm['p50_us']:>8.1f}{sm['p99_us']:>8.1f}  {gap:>7.1f}%  "
                  f"{clat['50.000000']/1e3:>10.1f}{clat['99.000000']/1e3:>10.1f}  {r['late']:>6}  {r['late_arrivals']:>8}")
        if a.memory:
            p, uri, rep, backing = serve(tmp, "m", a.serve_args.split())
            fio(uri, tmp, "write", "1m", 8, 1, 0, size="10g")
            r, rss, alloc = stop(p, rep, backing)
            w = kind(r, "write")
            print(f"960 GB export, 10 GB written ({w['requests']} x 1 MiB): server peak RSS {rss/1024/1024:.2f} GiB, "
                  f"backing file {alloc/1e9:.2f} GB allocated; {r['late']} late of {r['total_requests']}")


if __name__ == "__main__":
    main()
