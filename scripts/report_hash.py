#!/usr/bin/env python3
"""Hash an ssdlab JSON report read on stdin, wall-time fields removed.

    ssdlab run --output-format json ... | python3 scripts/report_hash.py

Prints the SHA-256 of the report with `wall_time_s` and `sim_ios_per_wall_s`
dropped at any depth (and the keys in SSDLAB_HASH_IGNORE, space-separated:
to compare across a change that only adds report fields), keys sorted. Two
runs that simulate the same thing print the same hash whatever the machine's
speed (scripts/report_hashes.sh, scripts/build_pgo.sh).
"""

import hashlib
import json
import os
import sys

WALL = {"wall_time_s", "sim_ios_per_wall_s"} | set(os.environ.get("SSDLAB_HASH_IGNORE", "").split())


def clean(v):
    if isinstance(v, dict):
        return {k: clean(x) for k, x in v.items() if k not in WALL}
    if isinstance(v, list):
        return [clean(x) for x in v]
    return v


def main():
    try:
        report = json.load(sys.stdin)
    except json.JSONDecodeError as e:
        sys.exit(f"report_hash.py: standard input is not a JSON report ({e})")
    print(hashlib.sha256(json.dumps(clean(report), sort_keys=True).encode()).hexdigest())


if __name__ == "__main__":
    main()
