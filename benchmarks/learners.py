"""Every learner at the study's budget (100 epochs x 200 self-play games, evaluation every 5
epochs: 400 games against three copies of each of random, greedy and heuristic).

Run: ``.venv/bin/python benchmarks/learners.py [--algos ppo,mcq,...] [--epochs 100]``. Writes
``benchmarks/results/learners.json`` (timings, decisions per second, final evaluation with 95%
intervals) and prints a Markdown table. Measurements, never assertions.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import time
from pathlib import Path

from climbrl.config import ALGOS, train_config
from climbrl.training import train


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--algos", default=",".join(ALGOS))
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--games-per-epoch", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "learners.json"))
    p.add_argument("--runs", default="runs/bench")
    args = p.parse_args()
    out = Path(args.out)
    results = json.loads(out.read_text()) if out.exists() else {}
    results["machine"] = f"{platform.machine()}, Python {platform.python_version()}"
    for algo in args.algos.split(","):
        cfg = train_config(algo, epochs=args.epochs, games_per_epoch=args.games_per_epoch, seed=args.seed)
        run_dir = Path(args.runs) / algo
        shutil.rmtree(run_dir, ignore_errors=True)
        start = time.perf_counter()
        res = train(cfg, run_dir, progress=False)
        wall = time.perf_counter() - start
        hist = res["history"]
        decisions = sum(r["decisions"] for r in hist)
        results[algo] = {
            "epochs": cfg.epochs, "games_per_epoch": cfg.games_per_epoch, "seed": cfg.seed,
            "wall_seconds": wall, "train_seconds": res["train_seconds"], "eval_seconds": res["eval_seconds"],
            "decisions": decisions, "decisions_per_s": decisions / sum(r["play_seconds"] for r in hist),
            "final_eval": res["final_eval"],
            "curve": [{k: v for k, v in r.items() if k == "epoch" or k.startswith("win_rate")}
                      for r in hist if any(k.startswith("win_rate/") for k in r)],
        }
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2) + "\n")
        fe = res["final_eval"]
        print(f"{algo}: {wall:.0f} s wall; " + ", ".join(
            f"{o} {fe[f'win_rate/{o}']:.3f} [{fe[f'win_rate_low/{o}']:.3f}, {fe[f'win_rate_high/{o}']:.3f}]"
            for o in cfg.eval_opponents), flush=True)


if __name__ == "__main__":
    main()
