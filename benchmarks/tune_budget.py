"""Does a reduced-budget tuning objective rank configurations as the full budget does? (issue 14, section 1)

Run: ``.venv/bin/python benchmarks/tune_budget.py [--algos ppo,dqn] [--configs 8] [--workers 2]``
(about an hour on two idle cores with the defaults); writes ``benchmarks/results/tune_budget.json``
after every finished training, and a rerun skips what is already there (``--fresh`` starts over).

For each learner, ``--configs`` configurations are drawn from ``climbrl tune``'s own search space
(:func:`climbrl.tune.suggest`, an Optuna ``RandomSampler`` seeded with ``--seed``: a random search
spreads the configurations over the whole space, where a sampler that exploits would cluster
them). Each configuration is trained, from the same seed, at

- the full budget: the study's (100 epochs x 200 games), every other setting the study's;
- each reduced budget of ``--budgets`` (epochs x games per epoch; default ``10x100``, the old
  default of ``climbrl tune``, and ``25x200``).

Every trained policy is scored by its win rate against three heuristic players, the tuning
objective: a reduced run by ``--objective-games`` games (as ``climbrl tune`` scores a trial: the
old default 200, on the objective's deals) and by ``--eval-games`` games (1000) on fixed deals,
to tell the noise of a small evaluation from what the budget itself cannot see; a full run by
``--full-games`` games (2000) on other fixed deals (the "truth"). Deals are seeded, disjoint from
the study's evaluation and validation deals.

Per learner and reduced objective the summary gives Spearman's rank correlation with the full
budget's scores, its exact permutation p-value (all 8! orders), and where the reduced objective's
best configuration ranks at the full budget. Measurements, never assertions; the README quotes
them.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

FULL = "100x200"  # the study's budget (epochs x games per epoch); --full changes it (a smoke run)
OUT = Path(__file__).parent / "results" / "tune_budget.json"
# deal seeds of the scoring matches: distinct from the study's (20260, 20261) and tune's
OBJECTIVE_SEED, EVAL_SEED, FULL_SEED = 91_001, 91_002, 91_003


def draw_configs(algo: str, n: int, seed: int) -> list[dict]:
    import optuna

    from climbrl.tune import suggest

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=seed))
    out = []
    for _ in range(n):
        trial = study.ask()
        out.append(suggest(trial, algo))
        study.tell(trial, 0.0)
    return out


def job(algo: str, index: int, values: dict, budget: tuple[int, int], games: dict[str, int]) -> dict:
    """Train one configuration at one budget, then score the final policy (one thread)."""
    from climbrl.config import train_config
    from climbrl.evaluate.match import run_match
    from climbrl.learn.train import train
    from climbrl.threads import single_thread

    epochs, per_epoch = budget
    cfg = train_config(algo, epochs=epochs, games_per_epoch=per_epoch, eval_every=0, keep_policy_every=0,
                       seed=0, **values)
    out = Path(tempfile.mkdtemp(prefix=f"tune-budget-{algo}-{index}-"))
    try:
        with single_thread():
            t0 = time.perf_counter()
            res = train(cfg, out, progress=False)
            train_s = time.perf_counter() - t0
            spec = f"checkpoint:{out / 'policy.pt'}"
            scores = {}
            for name, (n, seed) in games.items():
                m = run_match(spec, ["heuristic"], rules="paper", games=n, seed=seed, workers=1)
                scores[name] = {"games": m["games"], "wins": m["wins"], "win_rate": m["win_rate"],
                                "low": m["win_rate_low"], "high": m["win_rate_high"]}
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return {"algo": algo, "config": index, "values": values, "budget": f"{epochs}x{per_epoch}",
            "train_seconds": round(train_s, 1), "decisions": sum(r["decisions"] for r in res["history"]),
            "scores": scores}


def ranks(v: list[float]) -> np.ndarray:
    """Ranks with ties averaged (Spearman's convention)."""
    import pandas as pd

    return pd.Series(v).rank(method="average").to_numpy()


def spearman(x: list[float], y: list[float]) -> float:
    return float(np.corrcoef(ranks(x), ranks(y))[0, 1])


def permutation_p(x: list[float], y: list[float]) -> float:
    """One-sided exact p-value of rho >= observed under every ordering of y (n <= 9)."""
    rx, ry = ranks(x), ranks(y)
    perms = ry[np.array(list(itertools.permutations(range(len(ry)))))]  # every ordering, one per row
    rx, perms = rx - rx.mean(), perms - perms.mean(axis=1, keepdims=True)
    rhos = perms @ rx / (np.linalg.norm(perms, axis=1) * np.linalg.norm(rx))
    return float(np.mean(rhos >= spearman(x, y) - 1e-12))


def summarize(rows: list[dict], budgets: list[str], full: str = FULL) -> dict:
    """Per learner: the full budget's scores, then per reduced budget (every one measured, in
    ``budgets`` first) and objective the rank correlation with them."""
    budgets = list(dict.fromkeys([*budgets, *sorted({r["budget"] for r in rows} - {full})]))
    out = {}
    for algo in sorted({r["algo"] for r in rows}):
        scores = {r["config"]: r["scores"]["full"]["win_rate"] for r in rows
                  if r["algo"] == algo and r["budget"] == full}
        res = {"full": scores}
        for b in budgets:
            for kind in ("objective", "eval"):
                red = {r["config"]: r["scores"][kind]["win_rate"] for r in rows
                       if r["algo"] == algo and r["budget"] == b}
                common = sorted(set(scores) & set(red))
                if len(common) < 3:
                    continue
                x, y = [red[c] for c in common], [scores[c] for c in common]
                best = max(common, key=lambda c: (red[c], -c))
                full_rank = 1 + sorted(common, key=lambda c: -scores[c]).index(best)
                res[f"{b}/{kind}"] = {
                    "configs": len(common), "spearman": spearman(x, y),
                    "p_value": permutation_p(x, y) if len(common) <= 9 else None,
                    "best_reduced": best, "its_full_rank": full_rank,
                    "full_of_best_reduced": scores[best], "full_best": max(y)}
        out[algo] = res
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--algos", default="ppo,dqn")
    p.add_argument("--configs", type=int, default=8)
    p.add_argument("--budgets", default="10x100,25x200")
    p.add_argument("--objective-games", type=int, default=200)
    p.add_argument("--eval-games", type=int, default=1000)
    p.add_argument("--full-games", type=int, default=2000)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(OUT))
    p.add_argument("--fresh", action="store_true")
    p.add_argument("--full", default=FULL, help="the full budget, EPOCHSxGAMES (default: the study's)")
    args = p.parse_args()
    out = Path(args.out)
    budgets = args.budgets.split(",")
    data = json.loads(out.read_text()) if out.exists() and not args.fresh else {}
    rows: list[dict] = data.get("rows", [])
    done = {(r["algo"], r["config"], r["budget"]) for r in rows}
    jobs = []
    configs = dict(data.get("setup", {}).get("configs", {}))  # other learners' from earlier runs
    for algo in args.algos.split(","):
        configs[algo] = draw_configs(algo, args.configs, args.seed)
        for i, values in enumerate(configs[algo]):
            # the full runs first: they are the long ones
            for b in [args.full, *budgets]:
                if (algo, i, b) in done:
                    continue
                e, g = (int(v) for v in b.split("x"))
                games = ({"full": (args.full_games, FULL_SEED)} if b == args.full else
                         {"objective": (args.objective_games, OBJECTIVE_SEED), "eval": (args.eval_games, EVAL_SEED)})
                jobs.append((algo, i, values, (e, g), games))
    jobs.sort(key=lambda j: -j[3][0] * j[3][1])

    def save() -> None:
        result = {"measured": datetime.now(UTC).isoformat(timespec="seconds"),
                  "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
                  "setup": {"game": "big2:paper", "opponent": "heuristic x3", "full_budget": args.full,
                            "budgets": budgets, "objective_games": args.objective_games,
                            "eval_games": args.eval_games, "full_games": args.full_games,
                            "sampler": f"RandomSampler(seed={args.seed})", "configs": configs},
                  "rows": sorted(rows, key=lambda r: (r["algo"], r["config"], r["budget"])),
                  "summary": summarize(rows, budgets, args.full)}
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"{len(jobs)} trainings to run ({len(done)} already done)", flush=True)
    with ProcessPoolExecutor(args.workers) as pool:
        futures = [pool.submit(job, *j) for j in jobs]
        for f in as_completed(futures):
            r = f.result()
            rows.append(r)
            save()
            s = ", ".join(f"{k} {v['win_rate']:.3f}" for k, v in r["scores"].items())
            print(f"{r['algo']} config {r['config']} {r['budget']}: {r['train_seconds']:.0f} s, {s}", flush=True)
    save()
    print(json.dumps(summarize(rows, budgets, args.full), indent=1))


if __name__ == "__main__":
    main()
