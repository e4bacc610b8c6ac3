#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit/integration/property tests,
# CLI tests, the validation scenarios and the Python package's pytest suite.
# README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --release -- -D warnings
# Debian's fio: the fio-json output is compared key by key with real fio's.
if ! command -v fio >/dev/null 2>&1; then
    echo "== installing fio (Debian package)"
    if command -v apt-get >/dev/null 2>&1; then
        { apt-get install -y -q fio >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q fio >/dev/null; }; } \
            || echo "warning: could not install fio" >&2
    fi
fi
export SSDLAB_REQUIRE_FIO=1
# Real NBD clients for `ssdlab serve` (Debian's nbdkit, qemu-utils for
# qemu-io/qemu-img, libnbd-bin for nbdinfo/nbdcopy).
nbd_tools=(nbdkit qemu-io nbdinfo nbdcopy)
nbd_missing=()
for t in "${nbd_tools[@]}"; do command -v "$t" >/dev/null 2>&1 || nbd_missing+=("$t"); done
if [ "${#nbd_missing[@]}" -gt 0 ]; then
    echo "== installing nbdkit, qemu-utils, libnbd-bin (Debian packages) for: ${nbd_missing[*]}"
    if command -v apt-get >/dev/null 2>&1; then
        pkgs=(nbdkit qemu-utils libnbd-bin)
        { apt-get install -y -q "${pkgs[@]}" >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q "${pkgs[@]}" >/dev/null; }; } \
            || echo "warning: could not install ${pkgs[*]}" >&2
    fi
fi
export SSDLAB_REQUIRE_NBD=1
echo "== cargo build (release): the CLI and the NBD plugin it serves with"
cargo build --release -p ssdlab-cli -p ssdlab-nbd
echo "== cargo test (release)"
# Property tests (the device-file fuzz among them) draw the same cases on
# every run, so a red suite means the change broke something, not that a
# fresh draw found an old gap; a campaign sets its own seed or
# PROPTEST_RNG_SEED= (random): docs/fuzzing.md.
export PROPTEST_RNG_SEED="${PROPTEST_RNG_SEED-20261128}"
cargo test --workspace --release

# Python package (crates/ssdlab-py + python/ssdlab): build it into .venv and
# run its pytest suite. Needs only python3 with venv and pip. The first run
# downloads the dependencies from PyPI (the deps stamp changes only when
# pyproject.toml does); every run rebuilds the extension (cargo is
# incremental) and reinstalls it without the network.
echo "== Python package (.venv) and pytest"
PYTHON_BOOT="${PYTHON:-python3}"
# SSDLAB_VENV: where the environment lives (.ci/run points it at a fresh one).
VENV="${SSDLAB_VENV:-.venv}"
if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON_BOOT" -m venv "$VENV" || {
        echo "error: '$PYTHON_BOOT -m venv $VENV' failed (on Debian: apt-get install python3-venv)" >&2
        exit 1
    }
fi
VPY="$VENV/bin/python"
deps_stamp="$VENV/.ssdlab-deps-$(sha256sum pyproject.toml | cut -c1-16)"
pip_q=(-q --disable-pip-version-check)
if [ ! -f "$deps_stamp" ]; then
    "$VPY" -m pip install "${pip_q[@]}" --upgrade pip
    # Third-party packages (the runtime dependencies and the `test` extra,
    # read from pyproject.toml) WITH build isolation: a package that comes as
    # an sdist (fio-plot does) is built with the backend it declares
    # (setuptools + wheel), never with whatever the venv happens to hold.
    mapfile -t py_deps < <("$VPY" scripts/pyproject_deps.py pyproject.toml test)
    "$VPY" -m pip install "${pip_q[@]}" "${py_deps[@]}"
    # The project's own build backend, for the step below.
    "$VPY" -m pip install "${pip_q[@]}" "maturin>=1.9.4,<2"
    rm -f "$VENV"/.ssdlab-deps-*
    touch "$deps_stamp"
fi
# The project's own extension WITHOUT build isolation, and only it: maturin
# from .venv builds it in the workspace's cargo target directory, so a rerun
# recompiles only what changed and needs no network (isolation would fetch
# maturin into a throw-away environment on every run). --no-deps: its
# dependencies were installed above.
"$VPY" -m pip install "${pip_q[@]}" --no-build-isolation --no-deps --force-reinstall .
# fio-plot (a test dependency) must load ssdlab's fio-json: no skipping here.
export SSDLAB_REQUIRE_FIO_PLOT=1
"$VPY" -m pytest tests/python -q -p no:cacheprovider
