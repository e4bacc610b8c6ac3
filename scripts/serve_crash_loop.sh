#!/usr/bin/env bash
# The long crash loop of `ssdlab serve` (the test suite runs a short one):
# CYCLES times (default 100): start the server on one backing file, check
# that every write acknowledged before a completed flush in earlier cycles
# reads back, then write and flush in a loop while the server is killed
# with SIGKILL at a random moment. Prints the writes checked and the
# flushed writes lost (must be 0).
#
#   scripts/serve_crash_loop.sh [CYCLES]
#
# Needs target/release/ssdlab and libssdlab_nbd.so (cargo build --release
# -p ssdlab-cli -p ssdlab-nbd), nbdkit, qemu-io and nbdinfo.
set -euo pipefail
cd "$(dirname "$0")/.."
cycles="${1:-100}"
bin="${SSDLAB:-target/release/ssdlab}"
small=(--set nand.blocks_per_plane=64 --set ftl.over_provisioning=28%)
dir="$(mktemp -d "${TMPDIR:-/tmp}/ssdlab-crash.XXXXXX")"
pid=""
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
backing="$dir/drive.img"
per_cycle=200
slot=65536
declare -a exp_off=() exp_pat=()
lost=0
checked=0
RANDOM=7
for c in $(seq 1 "$cycles"); do
    sock="$dir/s$c.sock"
    "$bin" serve "${small[@]}" --precondition fresh --socket "$sock" --backing "$backing" >/dev/null 2>"$dir/serve.log" &
    pid=$!
    uri="nbd+unix:///?socket=$sock"
    for _ in $(seq 1 600); do
        nbdinfo --size "$uri" >/dev/null 2>&1 && break
        sleep 0.05
    done
    # Every flushed write of earlier cycles reads back.
    if [ "${#exp_off[@]}" -gt 0 ]; then
        args=()
        for i in "${!exp_off[@]}"; do
            args+=(-c "read -P ${exp_pat[$i]} ${exp_off[$i]} 64k")
        done
        out="$(qemu-io -f raw "${args[@]}" "$uri" 2>&1 || true)"
        bad=$(grep -c "Pattern verification failed" <<<"$out" || true)
        lost=$((lost + bad))
        checked=$((checked + ${#exp_off[@]}))
    fi
    # Writes on slots of their own, each followed by a flush; killed at a random moment.
    args=()
    for i in $(seq 0 $((per_cycle - 1))); do
        off=$(((c * per_cycle + i) * slot))
        pat=$(((c * 7 + i) % 255 + 1))
        args+=(-c "write -P $pat $off 64k" -c "flush")
    done
    qemu-io -f raw "${args[@]}" "$uri" >"$dir/w.log" 2>&1 &
    qpid=$!
    sleep "$(printf "0.%03d" $((RANDOM % 80)))"
    kill -9 "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
    wait "$qpid" 2>/dev/null || true
    # A write printed and followed by another printed one had its flush
    # completed (qemu-io runs the commands in order): it must survive.
    mapfile -t done_offs < <(sed -n 's/^wrote 65536\/65536 bytes at offset \([0-9]*\)$/\1/p' "$dir/w.log")
    n=${#done_offs[@]}
    for ((k = 0; k + 1 < n; k++)); do
        off=${done_offs[$k]}
        i=$((off / slot - c * per_cycle))
        exp_off+=("$off")
        exp_pat+=("$(((c * 7 + i) % 255 + 1))")
    done
    rm -f "$sock"
done
echo "crash loop: $cycles cycles, ${#exp_off[@]} flushed writes kept, $checked read-back checks, $lost flushed writes lost"
[ "$lost" -eq 0 ]
