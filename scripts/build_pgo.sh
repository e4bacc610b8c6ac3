#!/usr/bin/env bash
# Build the ssdlab CLI (and its NBD plugin) with profile-guided optimisation:
# an instrumented build runs a fixed training set (the `ssdlab bench` cases
# and a few runs of other paths), LLVM merges the counts, and a second build
# lays out and inlines the code by them. The simulator's speed then rises
# by about a sixth on its own benchmark with identical results
# (docs/performance.md, "Profile-guided build"). This script checks the
# identity itself: it runs a set of scenarios with the plain release build
# and with the new one and stops with an error if any JSON report differs
# (wall-time fields removed).
#
# usage: bash scripts/build_pgo.sh
#   -> target/pgo/release/ssdlab (and libssdlab_nbd.so beside it)
#   SSDLAB_PGO_IOS=N   I/Os per bench case of the training (default 500000)
#
# Needs the Rust toolchain's `llvm-tools` component (the llvm-profdata that
# matches rustc's LLVM); it is added with rustup when missing. Takes about
# four minutes on two cores (two release builds and the training), and
# python3 for the check.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
export CARGO_TERM_COLOR=never

host="$(rustc -vV | sed -n 's/^host: //p')"
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
    echo "== adding the llvm-tools component (llvm-profdata)"
    command -v rustup >/dev/null 2>&1 || {
        echo "error: $profdata is missing and rustup is not installed to add the llvm-tools component" >&2
        exit 1
    }
    rustup component add llvm-tools
    [ -x "$profdata" ] || {
        echo "error: rustup added llvm-tools but $profdata is still missing" >&2
        exit 1
    }
fi

data="$root/target/pgo-data"
rm -rf "$data" && mkdir -p "$data/raw" "$data/work"
base_flags="${RUSTFLAGS:-}"

echo "== instrumented build (target/pgo-gen)"
RUSTFLAGS="$base_flags -Cprofile-generate=$data/raw" \
    cargo build --release -p ssdlab-cli --target-dir target/pgo-gen
gen="target/pgo-gen/release/ssdlab"
# Build scripts and proc macros of the instrumented build wrote profiles of
# their own: only the training's count.
rm -f "$data"/raw/*.profraw

echo "== training"
ios="${SSDLAB_PGO_IOS:-500000}"
"$gen" bench --ios "$ios" >"$data/work/bench.txt"
cat >"$data/work/seq.fio" <<'JOB'
[seqwrite]
rw=write
bs=128k
iodepth=8
size=2g
[seqread]
stonewall
rw=read
bs=128k
iodepth=8
size=2g
JOB
cat >"$data/work/rand.fio" <<'JOB'
[randwrite]
rw=randwrite
bs=4k
iodepth=32
number_ios=200000
JOB
cat >"$data/work/four.fio" <<'JOB'
[four]
filename=nvme0:nvme1:nvme2:nvme3
rw=read
bs=128k
iodepth=32
size=4g
JOB
cat >"$data/work/buffered.fio" <<'JOB'
[dd]
rw=write
bs=1m
iodepth=1
direct=0
size=512m
JOB
# An SLC-cached consumer drive filling its cache, dd through the page
# cache, the seed 002 board, a cached mapping table.
"$gen" run --quiet --device 970evo-1t --job "$data/work/seq.fio" --precondition fresh >/dev/null
"$gen" run --quiet --device seed002-gen3-value --job "$data/work/buffered.fio" --precondition fresh >/dev/null
"$gen" run --quiet --system seed002-4x-gen3-switch --job "$data/work/four.fio" >/dev/null
"$gen" run --quiet --device tests/data/small-slc.toml --set ftl.mapping_cache=16KiB \
    --job "$data/work/rand.fio" --precondition steady >/dev/null

echo "== merging $(ls "$data"/raw/*.profraw | wc -l) profiles"
"$profdata" merge -o "$data/merged.profdata" "$data"/raw/*.profraw

echo "== optimised build (target/pgo)"
RUSTFLAGS="$base_flags -Cprofile-use=$data/merged.profdata" SSDLAB_BUILD_PGO=1 \
    cargo build --release -p ssdlab-cli -p ssdlab-nbd --target-dir target/pgo
pgo="target/pgo/release/ssdlab"

echo "== the plain release build, to compare results"
RUSTFLAGS="$base_flags" cargo build --release -p ssdlab-cli
plain="target/release/ssdlab"

echo "== same results as the plain build"
strip() {
    python3 scripts/report_hash.py
}
check() {
    local name="$1"; shift
    local a b
    a="$("$plain" run --quiet --output-format json "$@" | strip)"
    b="$("$pgo" run --quiet --output-format json "$@" | strip)"
    if [ "$a" != "$b" ]; then
        echo "error: $name: the profile-guided build's report differs from the plain build's" >&2
        exit 1
    fi
    echo "   $name: identical"
}
check "randread, pm9a3-960g" --device pm9a3-960g
check "seq write+read, 970evo-1t" --device 970evo-1t --job "$data/work/seq.fio" --precondition fresh
check "dd through the page cache, seed002-gen3-value" --device seed002-gen3-value --job "$data/work/buffered.fio" --precondition fresh
check "seed002-4x-gen3-switch" --system seed002-4x-gen3-switch --job "$data/work/four.fio"
check "cached mapping at steady state, small-slc" --device tests/data/small-slc.toml \
    --set ftl.mapping_cache=16KiB --job "$data/work/rand.fio" --precondition steady

echo "built $pgo (profile-guided); compare: $pgo bench"
