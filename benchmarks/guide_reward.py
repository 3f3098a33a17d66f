"""The practice guide's reward as written, trained and compared with plain PPO (issue 26, part 2).

Run: ``.venv/bin/python benchmarks/guide_reward.py [--seeds 0,1,2] [--workers 2]`` (about 25 min
on two idle cores); writes ``benchmarks/results/guide_reward.json`` and ``.md``. Trainings resume
from their checkpoints (``runs/guide_reward/VARIANT-sSEED``), so a rerun continues what was killed.

Variants, each the Dou Dizhu study's PPO (``params.yaml#doudizhu``, ``train.ppo``: the ``douzero``
rules, 60 epochs x 200 self-play games, every other setting the study's) with one change:

- ``ppo``: as in the study (the rules' score as the reward);
- ``guide``: ``reward_guide`` (0.1 x the score with its multipliers, and the guide's per-decision
  terms by role, scaled to its 1:20 rule);
- ``guide+pass``: ``reward_guide`` and the pass penalty of the guide's 5.1 (0.1).

Each is trained with every seed, and its greedy policy plays DouZero's duel against the heuristic
on the study's 500 evaluation decks (each deck as landlord against two heuristic peasants, then as
both peasants against a heuristic landlord). A variant minus ``ppo`` is the paired contrast over
seeds and decks (:func:`climbrl.evaluate.stats.contrast_interval`: the seeds' spread and the
decks' both in the interval), Holm-corrected over the variants. Every variant sees the same
number of learner decisions per game budget (the same games), so the contrast is of the reward
alone. Measurements, never assertions.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (environment defaults)

VARIANTS = {"ppo": {}, "guide": {"reward_guide": True},
            "guide+pass": {"reward_guide": True, "reward_pass_penalty": 0.1}}
OUT = ROOT / "benchmarks" / "results" / "guide_reward"
RUNS = ROOT / "runs" / "guide_reward"


def _config(variant: str, seed: int):
    import dataclasses

    from climbrl.config import train_config
    from climbrl.params import load_params

    base = load_params(f"{ROOT / 'params.yaml'}#doudizhu").train["ppo"]
    fields = {**{f.name: getattr(base, f.name) for f in dataclasses.fields(base)}, "seed": seed, "eval_every": 0,
              **VARIANTS[variant]}
    return train_config(fields.pop("algo"), **fields)


def _train(args: tuple[str, int]) -> dict:
    from climbrl.learn.train import CHECKPOINT, POLICY
    from climbrl.threads import single_thread
    from climbrl.training import train

    variant, seed = args
    cfg = _config(variant, seed)
    out = RUNS / f"{variant}-s{seed}"
    if (out / POLICY).exists() and not (out / CHECKPOINT).exists():
        return {"variant": variant, "seed": seed, "skipped": True}
    start = time.process_time()
    with single_thread():
        train(cfg, out, resume=(out / CHECKPOINT).exists(), progress=False)
    return {"variant": variant, "seed": seed, "cpu_seconds": time.process_time() - start}


def _evaluate(variant: str, seed: int, decks: list[int], workers: int) -> dict:
    from climbrl.evaluate.duel import team_match

    r = team_match(f"checkpoint:{RUNS / f'{variant}-s{seed}' / 'policy.pt'}", "heuristic", rules="douzero",
                   deals=len(decks), seeds=decks, workers=workers, per_deal=True)
    return {"win_rate": r["A"]["both"]["win_rate"], "landlord": r["A"]["landlord"]["win_rate"],
            "peasants": r["A"]["peasants"]["win_rate"], "a_wins": r["per_deal"]["a_wins"]}


def main(argv: list[str] | None = None) -> int:
    from climbrl.agents.runner import load_deal_seeds
    from climbrl.evaluate.stats import contrast_interval, holm

    p = argparse.ArgumentParser()
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    jobs = [(v, s) for s in seeds for v in VARIANTS]
    started = time.perf_counter()
    with ProcessPoolExecutor(args.workers, mp_context=mp.get_context("spawn")) as pool:
        trained = list(pool.map(_train, jobs))
    decks = load_deal_seeds(ROOT / "data" / "doudizhu" / "eval_seeds.json")
    evals = {v: [_evaluate(v, s, decks, args.workers) for s in seeds] for v in VARIANTS}
    tables = {v: np.array([e["a_wins"] for e in evals[v]], dtype=float) / 2 for v in VARIANTS}
    contrasts = {v: contrast_interval([tables[v], tables["ppo"]], [1, -1], bounds=(-1, 1))
                 for v in VARIANTS if v != "ppo"}
    for v, sig in zip(contrasts, holm([c["p_value"] for c in contrasts.values()]), strict=True):
        contrasts[v]["holm_significant"] = sig
    res = {"rules": "douzero", "budget": "the study's PPO (60 epochs x 200 games)", "seeds": seeds,
           "decks": len(decks), "opponent": "heuristic", "trained": trained,
           "win_rates": {v: {"per_seed": [e["win_rate"] for e in evals[v]],
                             "landlord": [e["landlord"] for e in evals[v]],
                             "peasants": [e["peasants"] for e in evals[v]],
                             "mean": float(np.mean([e["win_rate"] for e in evals[v]])),
                             "sd": float(np.std([e["win_rate"] for e in evals[v]], ddof=1)) if len(seeds) > 1 else None,
                             "interval": contrast_interval([tables[v]], [1], bounds=(0, 1))} for v in VARIANTS},
           "contrasts": contrasts, "wall_seconds": time.perf_counter() - started}
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.with_suffix(".json").write_text(json.dumps(res, indent=2))
    lines = ["# The guide's reward against plain PPO (benchmarks/guide_reward.py)", "",
             f"Dou Dizhu, `douzero` rules, the study's PPO budget; seeds {seeds}; DouZero's duel against the "
             f"heuristic on the {len(decks)} evaluation decks (both roles, {2 * len(decks)} games a run). Win rate: "
             "mean +- sd over "
             "the seeds, and the 95% interval with the seeds' and decks' noise.", "",
             "| variant | win rate per seed | mean +- sd | interval | minus ppo | p | Holm |",
             "|---|---|---|---|---|---|---|"]
    for v, w in res["win_rates"].items():
        c = contrasts.get(v)
        diff = f"{c['estimate']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}]" if c else "-"
        lines.append(f"| {v} | {', '.join(f'{x:.3f}' for x in w['per_seed'])} | {w['mean']:.3f} +- "
                     f"{(w['sd'] or 0):.3f} | [{w['interval']['low']:.3f}, {w['interval']['high']:.3f}] | {diff} | "
                     f"{c['p_value']:.2g} | {'differs' if c['holm_significant'] else 'no difference shown'} |"
                     if c else f"| {v} | {', '.join(f'{x:.3f}' for x in w['per_seed'])} | {w['mean']:.3f} +- "
                     f"{(w['sd'] or 0):.3f} | [{w['interval']['low']:.3f}, {w['interval']['high']:.3f}] | - | - | - |")
    OUT.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
