"""Compare two report trees number by number, timings aside (issue 32): does a rerun reproduce?

    python benchmarks/compare_reports.py OLD_REPORTS NEW_REPORTS [--rtol 0] [--list 20]

Every ``*.json`` under either folder is read; each numeric leaf (a number anywhere in the
document, addressed by its path of keys and indices) of one tree is compared with the same leaf
of the other. Leaves whose key names a timing (seconds, per second, wall, CPU, a date) are left
out: they measure the machine, not the study. Prints how many numeric fields were compared, how
many differ (beyond ``--rtol``), the first ``--list`` of them, and the files on one side only;
exits 1 when anything differs, so that a script or CI can gate on it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

TIMING_WORDS = ("second", "time", "wall", "elapsed", "date", "duration", "minute", "hour", "cpu", "per_s")


def is_timing(key: Any) -> bool:
    """A key that names a time or a speed (``train_seconds``, ``decisions_per_s``, ``cpu_s``, ``sps``)."""
    k = str(key).lower()
    return any(w in k for w in TIMING_WORDS) or k.endswith("_s") or k == "sps"


def numbers(doc: Any, path: tuple = ()) -> Iterator[tuple[tuple, float]]:
    """Every numeric leaf of ``doc`` with its path, timing keys left out (booleans are not numbers)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            if not is_timing(k):
                yield from numbers(v, (*path, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from numbers(v, (*path, i))
    elif isinstance(doc, (int, float)) and not isinstance(doc, bool):
        yield path, float(doc)


def compare(old: Path, new: Path, rtol: float = 0.0) -> dict[str, Any]:
    a = {p.relative_to(old) for p in old.rglob("*.json")}
    b = {p.relative_to(new) for p in new.rglob("*.json")}
    compared, differ = 0, []
    for rel in sorted(a & b):
        x = dict(numbers(json.loads((old / rel).read_text())))
        y = dict(numbers(json.loads((new / rel).read_text())))
        for key in sorted(set(x) | set(y), key=str):
            compared += 1
            u, v = x.get(key), y.get(key)
            same = u is not None and v is not None and (u == v or (math.isnan(u) and math.isnan(v))
                                                         or math.isclose(u, v, rel_tol=rtol, abs_tol=0.0))
            if not same:
                differ.append(f"{rel} {'/'.join(map(str, key))}: {u} -> {v}")
    return {"files": len(a & b), "compared": compared, "differ": differ,
            "only_old": sorted(map(str, a - b)), "only_new": sorted(map(str, b - a))}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("old", type=Path)
    p.add_argument("new", type=Path)
    p.add_argument("--rtol", type=float, default=0.0, help="relative tolerance (default 0: equal)")
    p.add_argument("--list", type=int, default=20, help="differences to print")
    a = p.parse_args()
    for folder in (a.old, a.new):
        if not folder.is_dir():
            p.error(f"{folder} is not a folder")
    r = compare(a.old, a.new, a.rtol)
    print(f"{r['files']} JSON files, {r['compared']} numeric fields compared (timings aside): "
          f"{len(r['differ'])} differ")
    for line in r["differ"][:a.list]:
        print("  " + line)
    for side in ("only_old", "only_new"):
        if r[side]:
            print(f"{side.replace('_', ' in ')}: {', '.join(r[side])}")
    return 1 if r["differ"] or r["only_old"] or r["only_new"] else 0


if __name__ == "__main__":
    sys.exit(main())
