"""Engine throughput for every rules preset, on one core: writes benchmarks/results/engine.json.

Run: ``.venv/bin/python benchmarks/engine.py [--games N]``. Numbers are measurements of this
machine at the time of the run, never assertions.
"""

from __future__ import annotations

import argparse
import json
import platform
from datetime import UTC, datetime
from pathlib import Path

from climbrl.bench import bench_engine
from climbrl.games.big2 import PRESETS


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--games", type=int, default=4000)
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "engine.json"))
    args = p.parse_args()
    results = {
        "measured": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
        "presets": {name: bench_engine(name, games=args.games) for name in PRESETS},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    for name, r in results["presets"].items():
        print(f"{name:13s} {r['games_per_s']:7.0f} games/s {r['decisions_per_s']:9.0f} decisions/s  "
              f"with observations {r['with_observations']['games_per_s']:7.0f} games/s")


if __name__ == "__main__":
    main()
