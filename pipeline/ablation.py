"""The study's two ablations, with error bars: PPO's entropy coefficient and the curriculum.

``dvc repro ablations/dvc.yaml`` runs them from the ``ablation`` section of ``params.yaml`` (not
part of ``make run``: at the study's budget the two take about 70 minutes on two cores). One
stage per ablation calls ``python -m pipeline.ablation entropy|curriculum``, which trains PPO
(``train.common`` + ``train.ppo``, with the ablated setting replaced) for every value and every
seed, ``workers`` runs at a time, one process each, then writes ``reports/ablations/<name>.json``
(final win rate against each baseline per run; mean and standard deviation over seeds per value)
and ``reports/ablations/<name>.png`` (mean learning curve per value with a band of one standard
deviation). ``python -m pipeline.ablation summary`` renders both into
``reports/ablations/ablations.md``.

Runs resume from their checkpoints when the command is repeated (a killed run loses at most an
epoch; a run with fewer epochs is extended); a checkpoint trained with any other setting is
discarded and that run starts over, so a result never mixes two configurations.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing as mp
import shutil
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

import pipeline  # noqa: F401  (environment defaults)
from climbrl.config import TrainConfig, train_config
from climbrl.params import Params, load_params

ABLATIONS = {"entropy": "ent_coef", "curriculum": "curriculum"}
"""Ablation name -> the PPO setting it varies (its values come from ``params.yaml``)."""

def ablation_configs(name: str, params: Params, **overrides: Any) -> list[tuple[Any, int, TrainConfig]]:
    """(value, seed index, config) of every run of ablation ``name``, values outer, seeds inner."""
    if name not in ABLATIONS:
        raise ValueError(f"unknown ablation {name!r} (ablations: {', '.join(ABLATIONS)})")
    a = dataclasses.replace(params.ablation, **overrides)
    base = params.train.get("ppo") or train_config("ppo", rules=params.rules)
    values = a.entropy if name == "entropy" else a.curriculum
    runs = []
    for v in values:
        for s in range(a.seeds):
            cfg = dataclasses.replace(base, **{ABLATIONS[name]: v}, seed=base.seed + s, epochs=a.epochs,
                                      games_per_epoch=a.games_per_epoch, eval_every=a.eval_every,
                                      eval_games=a.eval_games, keep_policy_every=0)
            runs.append((v, s, cfg))
    return runs


def _stale(cfg: TrainConfig, out: Path) -> str | None:
    """Why the checkpoint in ``out`` cannot be resumed by ``cfg`` (None: it can, or there is none);
    the same rule as ``climbrl train --resume`` (:func:`climbrl.learn.checkpoint.resume_conflicts`)."""
    from climbrl.learn import checkpoint as ckpt

    path = out / "checkpoint.pt"
    if not path.exists():
        return None
    try:
        state = ckpt.load(path)
    except ckpt.CheckpointError as e:
        return str(e)
    return "; ".join(ckpt.resume_conflicts(cfg, state)) or None


def _train_one(args: tuple[TrainConfig, str]) -> dict[str, Any]:
    from climbrl.learn.train import train

    cfg, out = args
    why = _stale(cfg, Path(out))
    if why:
        print(f"{out}: starting over ({why})", file=sys.stderr)
        shutil.rmtree(out)
    res = train(cfg, out, resume=True, progress=False)
    curve = [{k: v for k, v in r.items() if k == "epoch" or k.startswith("win_rate/")}
             for r in res["history"] if any(k.startswith("win_rate/") for k in r)]
    return {"final_eval": res["final_eval"], "curve": curve, "train_seconds": res["train_seconds"]}


def run_ablation(name: str, params: Params | None = None, out_root: str = "runs/ablation",
                 reports: str = "reports/ablations", **overrides: Any) -> dict[str, Any]:
    """Train every run of ablation ``name`` and write its JSON and figure; ``overrides`` replace
    fields of ``params.ablation`` (seeds, epochs, games_per_epoch, eval_every, eval_games, workers)."""
    params = params or load_params()
    a = dataclasses.replace(params.ablation, **overrides)
    runs = ablation_configs(name, params, **overrides)
    param = ABLATIONS[name]
    jobs = [(cfg, f"{out_root}/{name}/{param}={v}/seed{s}") for v, s, cfg in runs]
    with ProcessPoolExecutor(max_workers=a.workers, mp_context=mp.get_context("spawn")) as pool:
        results = list(pool.map(_train_one, jobs))
    opponents = sorted({k.split("/", 1)[1] for r in results for k in r["final_eval"] if k.startswith("win_rate/")})
    values = list(dict.fromkeys(v for v, _, _ in runs))
    summary: dict[str, Any] = {"ablation": name, "param": param, "seeds": a.seeds, "epochs": a.epochs,
                               "games_per_epoch": a.games_per_epoch, "eval_games": a.eval_games, "configs": []}
    for i, v in enumerate(values):
        group = results[i * a.seeds:(i + 1) * a.seeds]
        entry: dict[str, Any] = {"value": v, "runs": [r["final_eval"] for r in group],
                                 "train_seconds": [r["train_seconds"] for r in group]}
        for o in opponents:
            rates = np.array([r["final_eval"][f"win_rate/{o}"] for r in group])
            entry[f"mean/{o}"] = float(rates.mean())
            entry[f"std/{o}"] = float(rates.std(ddof=1)) if len(rates) > 1 else 0.0
        entry["curves"] = [r["curve"] for r in group]
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


def summary_markdown(reports: str | Path = "reports/ablations") -> Path:
    """``ablations.md``: one table and figure per ablation JSON present in ``reports``."""
    reports = Path(reports)
    lines = ["# Ablations", "",
             "The study's two ablations of PPO, rerun by `dvc repro ablations/dvc.yaml` from the `ablation` "
             "section of `params.yaml`. Final win rate of each run's greedy policy against three copies of each "
             "baseline (the in-training evaluation, same deals for every run); mean +- standard deviation over "
             "seeds. With n games a single run's win rate has a 95% interval of about +-1/sqrt(n).", ""]
    for path in sorted(reports.glob("*.json")):
        a = json.loads(path.read_text())
        opps = sorted(k.split("/", 1)[1] for k in a["configs"][0] if k.startswith("mean/"))
        lines += [f"## {a['ablation']} ({a['param']})", "",
                  f"PPO, {a['seeds']} seeds per value, {a['epochs']} epochs x {a['games_per_epoch']} self-play games, "
                  f"{a['eval_games']} evaluation games per baseline and run.", "",
                  f"| {a['param']} | " + " | ".join(f"vs 3x {o}" for o in opps) + " | training min/run |",
                  "|---|" + "---|" * (len(opps) + 1)]
        for c in a["configs"]:
            secs = c.get("train_seconds")
            mins = f"{np.mean(secs) / 60:.1f}" if secs else "-"
            lines.append(f"| {c['value']} | " + " | ".join(f"{c[f'mean/{o}']:.3f} +- {c[f'std/{o}']:.3f}"
                                                            for o in opps) + f" | {mins} |")
        if path.with_suffix(".png").exists():
            lines += ["", f"![{path.stem}]({path.stem}.png)"]
        lines.append("")
    out = reports / "ablations.md"
    reports.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pipeline.ablation", description=__doc__.split("\n\n")[0])
    p.add_argument("name", choices=[*ABLATIONS, "summary"])
    p.add_argument("--params", default="params.yaml")
    for flag in ("seeds", "epochs", "games-per-epoch", "eval-every", "eval-games", "workers"):
        p.add_argument(f"--{flag}", type=int, help="override ablation." + flag.replace("-", "_"))
    args = p.parse_args(argv)
    if args.name == "summary":
        print(summary_markdown())
        return 0
    overrides = {k: v for k, v in vars(args).items() if k not in ("name", "params") and v is not None}
    s = run_ablation(args.name, load_params(args.params), **overrides)
    for e in s["configs"]:
        print(f"{s['param']}={e['value']}: " + ", ".join(
            f"{k.split('/')[1]} {e[k]:.3f} +- {e['std/' + k.split('/')[1]]:.3f}" for k in e if k.startswith("mean/")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
