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
echo "== cargo test (release)"
cargo test --workspace --release

# Python package (crates/ssdlab-py + python/ssdlab): build it into .venv and
# run its pytest suite. Needs only python3 with venv and pip; the first run
# downloads the test dependencies from PyPI, later runs reuse them (the deps
# stamp changes only when pyproject.toml does) and rebuild the extension
# incrementally.
echo "== Python package (.venv) and pytest"
PYTHON_BOOT="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON_BOOT" -m venv .venv || {
        echo "error: '$PYTHON_BOOT -m venv .venv' failed (on Debian: apt-get install python3-venv)" >&2
        exit 1
    }
fi
VPY=.venv/bin/python
deps_stamp=".venv/.ssdlab-deps-$(sha256sum pyproject.toml | cut -c1-16)"
pip_q=(-q --disable-pip-version-check)
if [ ! -f "$deps_stamp" ]; then
    "$VPY" -m pip install "${pip_q[@]}" --upgrade pip
    "$VPY" -m pip install "${pip_q[@]}" "maturin>=1.9.4,<2"
    # builds the extension (maturin, release) and installs every dependency
    "$VPY" -m pip install "${pip_q[@]}" --no-build-isolation ".[test]"
    rm -f .venv/.ssdlab-deps-*
    touch "$deps_stamp"
else
    # dependencies already there: rebuild (cargo is incremental) and reinstall, no network
    "$VPY" -m pip install "${pip_q[@]}" --no-build-isolation --no-deps --force-reinstall .
fi
# fio-plot (a test dependency) must load ssdlab's fio-json: no skipping here.
export SSDLAB_REQUIRE_FIO_PLOT=1
"$VPY" -m pytest tests/python -q -p no:cacheprovider
