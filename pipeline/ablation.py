"""The study's two ablations, with error bars: PPO's entropy coefficient and the curriculum.

``python -m pipeline.ablation entropy|curriculum [--seeds 3] [--epochs 100] [--games-per-epoch 200]``
trains every configuration with every seed (two at a time, one process each), then writes
``reports/ablations/<name>.json`` (final win rate against each baseline per run, and the mean and
standard deviation over seeds per configuration) and ``reports/ablations/<name>.png`` (mean
learning curve per configuration with a band of one standard deviation). Runs resume from
their checkpoints when the command is repeated.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

import pipeline  # noqa: F401  (environment defaults)

ABLATIONS: dict[str, tuple[str, list[Any]]] = {
    "entropy": ("ent_coef", [0.0, 0.001, 0.01, 0.05, 0.1]),
    "curriculum": ("curriculum", ["self_play", "checkpoint_self_play", "fixed_opponents", "opponent_pool"]),
}


def _train_one(args: tuple[dict[str, Any], str]) -> dict[str, Any]:
    import torch

    from climbrl.config import train_config
    from climbrl.learn.train import train

    values, out = args
    torch.set_num_threads(1)
    values = dict(values)
    cfg = train_config(values.pop("algo"), **values)
    res = train(cfg, out, resume=True, progress=False)
    curve = [{k: v for k, v in r.items() if k == "epoch" or k.startswith("win_rate/")}
             for r in res["history"] if any(k.startswith("win_rate/") for k in r)]
    return {"final_eval": res["final_eval"], "curve": curve}


def run_ablation(name: str, seeds: int = 3, epochs: int = 100, games_per_epoch: int = 200, eval_every: int = 5,
                 eval_games: int = 400, workers: int = 2, out_root: str = "runs/ablation",
                 reports: str = "reports/ablations") -> dict[str, Any]:
    if name not in ABLATIONS:
        raise ValueError(f"unknown ablation {name!r} (ablations: {', '.join(ABLATIONS)})")
    param, values = ABLATIONS[name]
    jobs = []
    for v in values:
        for s in range(seeds):
            cfg = {"algo": "ppo", param: v, "seed": s, "epochs": epochs, "games_per_epoch": games_per_epoch,
                   "eval_every": eval_every, "eval_games": eval_games}
            jobs.append((cfg, f"{out_root}/{name}/{param}={v}/seed{s}"))
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn")) as pool:
        results = list(pool.map(_train_one, jobs))
    opponents = sorted({k.split("/", 1)[1] for r in results for k in r["final_eval"] if k.startswith("win_rate/")})
    summary: dict[str, Any] = {"ablation": name, "param": param, "seeds": seeds, "epochs": epochs,
                               "games_per_epoch": games_per_epoch, "eval_games": eval_games, "configs": []}
    for i, v in enumerate(values):
        runs = results[i * seeds:(i + 1) * seeds]
        entry: dict[str, Any] = {"value": v, "runs": [r["final_eval"] for r in runs]}
        for o in opponents:
            rates = np.array([r["final_eval"][f"win_rate/{o}"] for r in runs])
            entry[f"mean/{o}"] = float(rates.mean())
            entry[f"std/{o}"] = float(rates.std(ddof=1)) if len(rates) > 1 else 0.0
        entry["curves"] = [r["curve"] for r in runs]
        summary["configs"].append(entry)
    out = Path(reports)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(summary, indent=2) + "\n")
    _plot(summary, opponents, out / f"{name}.png")
    return summary


def _plot(summary: dict[str, Any], opponents: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(opponents), figsize=(4.2 * len(opponents), 3.6), squeeze=False)
    for ax, o in zip(axes[0], opponents, strict=True):
        for entry in summary["configs"]:
            curves = entry["curves"]
            epochs = [p["epoch"] for p in curves[0]]
            rates = np.array([[p[f"win_rate/{o}"] for p in c] for c in curves])
            mean, std = rates.mean(axis=0), rates.std(axis=0)
            ax.plot(epochs, mean, label=f"{summary['param']}={entry['value']}")
            ax.fill_between(epochs, mean - std, mean + std, alpha=0.15)
        ax.axhline(0.25, color="grey", linestyle=":", linewidth=1)
        ax.set_title(f"vs three {o} ({summary['seeds']} seeds)")
        ax.set_xlabel("epoch")
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("win rate (mean +- sd over seeds)")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pipeline.ablation")
    p.add_argument("name", choices=list(ABLATIONS))
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--games-per-epoch", type=int, default=200)
    p.add_argument("--eval-every", type=int, default=5)
    p.add_argument("--eval-games", type=int, default=400)
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    s = run_ablation(args.name, seeds=args.seeds, epochs=args.epochs, games_per_epoch=args.games_per_epoch,
                     eval_every=args.eval_every, eval_games=args.eval_games, workers=args.workers)
    for e in s["configs"]:
        print(f"{s['param']}={e['value']}: " + ", ".join(
            f"{k.split('/')[1]} {e[k]:.3f} +- {e['std/' + k.split('/')[1]]:.3f}" for k in e if k.startswith("mean/")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
