#!/usr/bin/env bash
# Hash the JSON reports (wall-time fields removed) of the shipped presets
# under the built-in job, a 70/30 mix at steady state, a trace replay and a
# multi-job fio file: run before and after a refactor that must not change
# results, and diff the two outputs.
#
# usage: scripts/report_hashes.sh [SSDLAB_BIN] > hashes.txt
#   SSDLAB_QUICK=1 skips the 960 GB steady-state case (about a minute).
#   SSDLAB_HASH_IGNORE="key ..." also drops these keys (at any depth): to
#   compare across a change that only adds report fields.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN="${1:-target/release/ssdlab}"
# A fixed folder: job and trace paths appear in the reports (workload name).
work="${TMPDIR:-/tmp}/ssdlab-report-hashes"
rm -rf "$work" && mkdir -p "$work"
strip() {
    python3 scripts/report_hash.py
}
run() {
    local name="$1"; shift
    printf '%-48s %s\n' "$name" "$("$BIN" run --quiet --output-format json "$@" | strip)"
}
cat > "$work/mix.fio" <<'JOB'
[mix]
rw=randrw
rwmixread=70
bs=4k
iodepth=32
number_ios=200000
JOB
# A small MSR-format trace: reads and writes, 4-64 KiB, over 2 GiB.
awk 'BEGIN { srand(7); t = 128166372000000000;
  for (i = 0; i < 20000; i++) { t += int(rand() * 2000);
    op = (rand() < 0.6) ? "Read" : "Write"; sz = 4096 * (1 + int(rand() * 16));
    off = 4096 * int(rand() * 500000);
    printf "%d,hm,0,%s,%d,%d,100\n", t, op, off, sz } }' > "$work/t.csv"
for p in $("$BIN" devices | awk '{print $1}'); do
    run "builtin/$p" --device "$p"
done
run "mix-steady/seed001-slc-onfi" --device seed001-slc-onfi --job "$work/mix.fio" --precondition steady
run "mix-steady/small-slc" --device tests/data/small-slc.toml --job "$work/mix.fio" --precondition steady
if [ -z "${SSDLAB_QUICK:-}" ]; then
    run "mix-steady/pm9a3-960g" --device pm9a3-960g --job "$work/mix.fio" --precondition steady
fi
run "trace-closed/pm9a3-960g" --device pm9a3-960g --trace "$work/t.csv" --replay closed --iodepth 16
run "trace-open/seed001-mlc-onfi" --device seed001-mlc-onfi --trace "$work/t.csv" --replay open --remap wrap
cat > "$work/jobs.fio" <<'JOB'
; ordering, groups, pacing, trims and flushes in one file
[global]
bs=4k
size=4g
[seq-fill]
rw=write
bs=128k
iodepth=8
number_ios=4000
fsync=64
[reads]
stonewall
new_group
rw=randread
iodepth=16
numjobs=2
number_ios=20000
rate_iops=40000
[trims]
rw=randtrim
iodepth=4
number_ios=2000
thinktime=50us
thinktime_blocks=16
[mix]
wait_for=trims
rw=randrw
rwmixread=50
iodepth=8
number_ios=20000
end_fsync=1
JOB
run "fio/jobs/pm9a3-960g" --device pm9a3-960g --job "$work/jobs.fio"
run "fio/jobs/seed004-controller-2" --device seed004-controller-2 --job "$work/jobs.fio"
run "fio/mixed-oltp/pm9a3-960g" --device pm9a3-960g --job tests/data/fio/mixed-oltp.fio
# Systems: seed 002's board (switch credits and back-pressure on the x8
# uplink) under mixed per-drive jobs, and a saturated uplink.
cat > "$work/sys.fio" <<'JOB'
[global]
bs=4k
number_ios=30000
[r0]
filename=nvme0
rw=randread
iodepth=32
[w1]
filename=nvme1
rw=randwrite
iodepth=8
[rw23]
filename=nvme2:nvme3
rw=randrw
rwmixread=70
iodepth=16
[seq]
filename=nvme0:nvme1:nvme2:nvme3
rw=read
bs=128k
iodepth=16
number_ios=8000
JOB
run "system/seed002-4x-gen3-switch" --system seed002-4x-gen3-switch --job "$work/sys.fio"
run "system/seed002-4x-gen3-switch/steady" --system seed002-4x-gen3-switch --job "$work/sys.fio" --precondition steady --set drives.nand.blocks_per_plane=128 --set drives.ftl.over_provisioning=25% --set drives.ftl.slc_static=512MB --set drives.ftl.slc_dynamic=2GB
