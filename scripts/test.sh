#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit/integration/property tests,
# CLI tests and the validation scenarios. README's test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy -D warnings"
cargo clippy --workspace --all-targets --release -- -D warnings
echo "== cargo test (release)"
cargo test --workspace --release
