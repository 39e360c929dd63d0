#!/usr/bin/env python3
"""Compare two JSON documents: the same keys, lists, strings, booleans and integers, and every
floating-point number within a relative tolerance (default 1e-9).

Why a tolerance: a stored document (a golden summary, a map) was written on another machine.
kvsim's seeded results are identical run to run on one machine, and across machines they can
differ in the last bits wherever a library function's rounding enters them (glibc picks its
exp/log/pow variants by CPU at run time; docs/architecture.md, "Identical, and within a
tolerance"). A relative 1e-9 is a million times the rounding of one operation and far below any
change of the model that matters.

Usage: json_close.py STORED FRESH [--rel 1e-9]; exit 0 when close, 1 with the differing paths.
"""
import json
import math
import sys


def differences(a, b, rel=1e-9, path="$"):
    """The paths at which a and b differ (an empty list: close)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return [] if a is b else [f"{path}: {a!r} vs {b!r}"]
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, int) and isinstance(b, int):
            return [] if a == b else [f"{path}: {a} vs {b}"]
        if a == b or (math.isnan(a) and math.isnan(b)):
            return []
        if abs(a - b) <= rel * max(abs(a), abs(b)):
            return []
        return [f"{path}: {a!r} vs {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a.keys() ^ b.keys())} in one only"]
        out = []
        for k in a:
            out += differences(a[k], b[k], rel, f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} vs {len(b)} items"]
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += differences(x, y, rel, f"{path}[{i}]")
        return out
    return [] if a == b else [f"{path}: {a!r} vs {b!r}"]


def main(argv):
    rel = 1e-9
    args = list(argv[1:])
    if "--rel" in args:
        i = args.index("--rel")
        rel = float(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(args[0]) as f:
        stored = json.load(f)
    with open(args[1]) as f:
        fresh = json.load(f)
    diff = differences(stored, fresh, rel)
    for line in diff[:20]:
        print(line)
    if len(diff) > 20:
        print(f"... {len(diff) - 20} more")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
