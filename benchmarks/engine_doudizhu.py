"""Dou Dizhu engine throughput per preset (auction included), one core, best and median of
repeats: writes benchmarks/results/engine_doudizhu.json.

Run: ``taskset -c 1 nice -n 0 .venv/bin/python benchmarks/engine_doudizhu.py [--games N]
[--repeats K] [--note TEXT]``. Besides games/s (wall time) it records the CPU time per game
(user + sys of the process), which depends much less on other jobs sharing the core; the load
average at the time is recorded too: on a shared machine the games/s are lower bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
from datetime import UTC, datetime
from pathlib import Path

from climbrl.bench import bench_engine
from climbrl.games.doudizhu.rules import PRESETS


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--games", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--note", default="", help="conditions of the run (recorded as is)")
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "engine_doudizhu.json"))
    args = p.parse_args()
    presets = {}
    for name in PRESETS:
        runs = [bench_engine(name, games=args.games, game_name="doudizhu") for _ in range(args.repeats)]
        gps = [r["games_per_s"] for r in runs]
        dps = [r["decisions_per_s"] for r in runs]
        cpu = [r["cpu_us_per_game"] for r in runs]
        presets[name] = {
            "games": args.games, "repeats": args.repeats,
            "games_per_s": {"best": max(gps), "median": statistics.median(gps)},
            "decisions_per_s": {"best": max(dps), "median": statistics.median(dps)},
            "decisions_per_game": runs[0]["decisions_per_game"],
            "cpu_us_per_game": {"best": min(cpu), "median": statistics.median(cpu)},
        }
        print(f"{name:10s} best {max(gps):6.0f} games/s, median {statistics.median(gps):6.0f}; "
              f"best {max(dps):7.0f} decisions/s; CPU {min(cpu):.0f} us/game (best)")
    results = {
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "load_average": os.getloadavg() if hasattr(os, "getloadavg") else None,
        "cpus": os.cpu_count(),
        "note": args.note,
        "presets": presets,
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
