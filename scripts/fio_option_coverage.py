#!/usr/bin/env python3
"""Count how ssdlab treats each of fio's own options (docs/features.md).

usage: scripts/fio_option_coverage.py FIO_OPTIONS_C [--markdown]

FIO_OPTIONS_C is fio's options.c (from a checkout of fio's repository); its
option table gives each option's name, type and category. Each option is
put to ssdlab's fio parser (the installed Python package) in a one-job
file with a plain value for its type, and classed as:

* supported     - applied (a value error for the plain value still means
                  the option is understood);
* ignored       - accepted and listed with a reason (no effect on a
                  simulated drive);
* refused: ...  - an error that names the reason (file system, not yet
                  modelled, or the generic "not supported by ssdlab yet").

Engine-specific options (in fio's engines/*.c) are not in the table: every
ioengine is accepted as ignored, and non-block engines are refused.
"""
import re
import sys
from collections import Counter, defaultdict

import ssdlab

VALUE = {
    "FIO_OPT_STR_SET": None, "FIO_OPT_BOOL": "1", "FIO_OPT_INT": "1", "FIO_OPT_ULL": "1",
    "FIO_OPT_STR_VAL": "4k", "FIO_OPT_STR_VAL_TIME": "1s", "FIO_OPT_RANGE": "4k-8k",
}
CATEGORY = {
    "FIO_OPT_C_GENERAL": "general (job, time, ordering)", "FIO_OPT_C_IO": "I/O (pattern, sizes, depth, rate, verify)",
    "FIO_OPT_C_FILE": "files and devices", "FIO_OPT_C_STAT": "statistics", "FIO_OPT_C_LOG": "logs",
    "FIO_OPT_C_PROFILE": "profiles", "FIO_OPT_C_ENGINE": "engine", "": "other",
}


def options(path):
    src = open(path).read()
    for name, body in re.findall(r'\{\s*\n\s*\.name\s*=\s*"([^"]+)",(.*?)\n\t\},', src, re.S):
        typ = re.search(r"\.type\s*=\s*(FIO_OPT_\w+)", body)
        cat = re.search(r"\.category\s*=\s*(FIO_OPT_C_\w+)", body)
        yield name, typ.group(1) if typ else "", cat.group(1) if cat else ""


def classify(name, typ):
    v = VALUE.get(typ, "x")
    line = name if v is None else f"{name}={v}"
    try:
        job = ssdlab.Job.from_fio_text(f"[j]\nrw=randwrite\nsize=1m\n{line}\n")
    except Exception as e:  # noqa: BLE001 - any refusal is a class
        m = str(e)
        if "not supported by ssdlab yet" in m:
            return "refused: not yet (generic)"
        if "file system" in m or "does not drive a block device" in m:
            return "refused: needs a file system / not a block device"
        if "not supported" in m or "not modelled" in m:
            return "refused: not yet modelled (named)"
        return "supported"
    ignored = {o for o, _ in job.ignored}
    return "ignored" if name in ignored else "supported"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = defaultdict(Counter)
    for name, typ, cat in options(sys.argv[1]):
        rows[CATEGORY.get(cat, cat)][classify(name, typ)] += 1
    classes = ["supported", "ignored", "refused: needs a file system / not a block device",
               "refused: not yet modelled (named)", "refused: not yet (generic)"]
    print("| fio option category | " + " | ".join(classes) + " | total |")
    print("|---" * (len(classes) + 2) + "|")
    total = Counter()
    for cat in sorted(rows):
        c = rows[cat]
        total.update(c)
        print(f"| {cat} | " + " | ".join(str(c[k]) for k in classes) + f" | {sum(c.values())} |")
    print("| **all** | " + " | ".join(str(total[k]) for k in classes) + f" | {sum(total.values())} |")


if __name__ == "__main__":
    main()
