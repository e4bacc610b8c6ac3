#!/usr/bin/env bash
# A long seeded swarm (issue 14): N random drives and workloads checked
# against the data-store shadow (crates/ssdlab-core/tests/swarm.rs).
#
# usage: scripts/swarm.sh [N] [FIRST_SEED]     (default 1000 cases from seed 1)
# A failure prints each failing seed; rerun one with
#   SSDLAB_SWARM_SEED=S cargo test --release -p ssdlab-core --test swarm
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-1000}"
FIRST="${2:-1}"
SSDLAB_SWARM_CASES="$N" SSDLAB_SWARM_SEED="$FIRST" \
    cargo test --release -p ssdlab-core --test swarm -- --nocapture 2>&1 | grep -E "swarm:|seed [0-9]+:|test result|cases failed"
