#!/usr/bin/env bash
# Coverage-guided fuzzing with AFL++ on the stable toolchain (cargo-afl).
#
#   scripts/fuzz.sh TARGET SECONDS     run one target for SECONDS (default 60)
#   scripts/fuzz.sh list               the targets
#
# Targets (fuzz/afl/src/bin/): device_file, fio_jobs, trace_parsers,
# system_file, csd_inputs, overrides (--set lines on a preset), simulate
# (device file + fio job -> a short run), nbd_requests (NBD requests served
# by a simulated drive, on the simulated clock or in real time).
# Seed corpora come from the shipped presets, tests/data and small samples
# written here; findings land in fuzz/afl/out/TARGET/default/crashes and
# hangs (kept out of git). The script prints executions, paths and crashes
# from AFL++'s fuzzer_stats. cargo-afl is installed with cargo if missing
# (it builds its own AFL++); docs/fuzzing.md has the long campaign.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
targets=(device_file fio_jobs trace_parsers system_file csd_inputs overrides simulate nbd_requests)
if [ "${1:-}" = "list" ] || [ $# -lt 1 ]; then
    printf '%s\n' "${targets[@]}"
    [ $# -ge 1 ] && exit 0
    echo "usage: scripts/fuzz.sh TARGET [SECONDS]" >&2
    exit 2
fi
target=$1
secs=${2:-60}
case " ${targets[*]} " in
    *" $target "*) ;;
    *) echo "error: unknown target '$target' (expected one of: ${targets[*]})" >&2; exit 2 ;;
esac
case "$secs" in
    ''|*[!0-9]*) echo "error: SECONDS must be a whole number, got '$secs'" >&2; exit 2 ;;
esac
if ! cargo afl --version >/dev/null 2>&1; then
    cargo install --locked cargo-afl
fi
(cd fuzz/afl && cargo afl build --release --bin "$target" 2>&1 | tail -n 2)
corpus=$root/fuzz/afl/corpus/$target
out=$root/fuzz/afl/out/$target
mkdir -p "$corpus" "$out"
if [ -z "$(ls -A "$corpus")" ]; then
    case "$target" in
        device_file)
            cp crates/ssdlab-core/presets/*.toml tests/data/*.toml "$corpus"/ ;;
        system_file)
            cp crates/ssdlab-core/presets/systems/*.toml "$corpus"/
            printf '[root_complex]\ngeneration = 3\nlanes = 4\nports = 1\n\n[[drive]]\nname = "nvme0"\ndevice = "pm9a3-960g"\nattach = "root"\n' > "$corpus/one.toml" ;;
        fio_jobs)
            cp tests/data/fio/*.fio "$corpus"/ ;;
        trace_parsers)
            printf '128166372003061629,hm,0,Read,7014609920,24576,41286\n128166372016382155,hm,0,Write,1317441536,8192,1963\n' > "$corpus/msr.csv"
            printf '0,20941264,8192,W,0.551706\n1,20939840,4096,R,0.554041\n' > "$corpus/spc.csv"
            printf '  8,0    3        1     0.000000000   697  Q   R 223490 + 8 [fio]\n  8,0    3        2     0.000001000   697  C   W 223498 + 16 [0]\n' > "$corpus/blkparse.txt"
            printf 'fio version 2 iolog\n/dev/nvme0n1 add\n/dev/nvme0n1 open\n/dev/nvme0n1 read 0 4096\n/dev/nvme0n1 write 8192 4096\n/dev/nvme0n1 trim 0 4096\n/dev/nvme0n1 close\n' > "$corpus/iolog2.log"
            printf '0.000000 0 1000 8 1\n0.100000 0 2000 16 0\n' > "$corpus/disksim.txt" ;;
        csd_inputs)
            for k in 0 1 2 3; do
                printf "\\x0$k\\x01\\x00\\x00\\x00\\x00\\x00\\x07\\x00\\x00\\x00\\x04\\x01\\x00\\x01\\x05\\x01\\x00\\x00\\x00\\x07\\x00\\x00\\x00\\x02\\x00\\x00\\x00\\x07\\x00\\x00\\x00\\x03\\x00\\x00\\x00\\x05\\x00\\x00\\x00" > "$corpus/k$k.bin"
            done ;;
        overrides)
            printf 'pm9a3-960g\nnand.channels=16\ncache.write_buffer=64MiB\n' > "$corpus/a.txt"
            printf 'smartssd-3.84t\nfpga.clock=250MHz\nfpga.programs=["count"]\n' > "$corpus/b.txt"
            printf '970evo-1t\nftl.slc_static=4GiB\nnand.t_read=["50us","60us","70us"]\n' > "$corpus/c.txt" ;;
        simulate)
            for j in tests/data/fio/hotspot.fio tests/data/fio/trim-phases.fio; do
                { cat tests/data/small-slc.toml; printf '\n----\n'; cat "$j"; } > "$corpus/$(basename "$j").txt"
            done
            { cat tests/data/small-slc.toml; printf '\n----\n[w]\nrw=randwrite\nbs=4k\niodepth=8\nnumber_ios=200\n'; } > "$corpus/randwrite.txt" ;;
        nbd_requests)
            # set-up byte, then 12-byte records: op conn offset(4) len(2) len/64KiB pattern 0 flags
            rec() { printf "\\x$1\\x$2\\x$3\\x$4\\x$5\\x$6\\x$7\\x$8\\x$9\\x${10}\\x00\\x${11}"; }
            { printf '\x00'; rec 01 00 00 10 00 00 00 10 00 5a 00; rec 00 00 00 10 00 00 00 10 00 00 00; rec 02 01 00 00 00 00 00 00 00 00 00; } > "$corpus/write-read.bin"
            { printf '\x13'; rec 01 02 00 00 01 00 00 00 02 11 01; rec 03 00 00 40 01 00 00 30 00 00 00; rec 00 03 ff 3f 01 00 00 30 00 00 00; rec 04 01 00 00 00 00 00 10 00 00 04; } > "$corpus/trim-zero.bin"
            { printf '\x2e'; rec 01 00 07 00 00 00 33 01 00 7f 00; rec 00 01 07 00 00 00 33 01 00 00 00; rec 00 02 ff ff ff ff ff ff 00 00 02; } > "$corpus/two-clients.bin" ;;
    esac
fi
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_QUIET=1
# Resume a finished campaign's queue when there is one.
resume=()
[ -f "$out/default/fuzzer_stats" ] && resume=(-i -) || resume=(-i "$corpus")
timeout=1000
[ "$target" = simulate ] && timeout=5000
[ "$target" = nbd_requests ] && timeout=5000
cargo afl fuzz -V "$secs" -t "$timeout" "${resume[@]}" -o "$out" -- "fuzz/afl/target/release/$target" >"$out/afl.log" 2>&1 || {
    echo "afl-fuzz failed; the last lines of $out/afl.log:" >&2
    tail -n 20 "$out/afl.log" >&2
    exit 1
}
stats=$out/default/fuzzer_stats
get() { awk -F' *: *' -v k="$1" '$1 == k { print $2 }' "$stats"; }
crashes=$(find "$out/default/crashes" -type f -name 'id:*' | wc -l)
hangs=$(find "$out/default/hangs" -type f -name 'id:*' | wc -l)
echo "$target: $(get execs_done) executions in $(get run_time) s ($(get execs_per_sec)/s), $(get corpus_count) inputs in the queue, $(get edges_found) edges, $crashes crashes, $hangs hangs"
[ "$crashes" -eq 0 ] && [ "$hangs" -eq 0 ]
