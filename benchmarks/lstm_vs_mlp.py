"""DouZero's history LSTM against the MLP encoders (issue 25: "an LSTM over the recent moves as DouZero's
encoder does, as an option beside today's MLP encoders; measure both"), over training seeds, paired on
the same decks.

Three arms of Dou Dizhu's self-play DMC (``douzero`` rules), each the ``make strong`` run's settings
(``strong/params.yaml`` ``games.doudizhu.train``: role networks, 2 x 512, 1,000 games an epoch) at a
shorter budget, one actor process per training (the numbers of a fixed actor count), seeds 0-2:

- ``mlp``: today's encoder (``doudizhu``, 542 state columns: the last two plays);
- ``history-mlp``: ``doudizhu+history`` (the last 15 plays appended, 810 columns) read by the MLP;
- ``lstm``: the same columns read by DouZero's LSTM (``lstm=128``, 5 steps of 3 plays).

``history-mlp`` separates what the longer history adds from what the LSTM adds. Each final policy
plays DouZero's protocol against RLCard's rule agent and the heuristic on the same fresh decks
(purpose ``deep``, seed 2525: not the study's evaluation decks nor the strong curve's), every deck
in both seatings. Contrasts (``lstm - mlp``, ``history-mlp - mlp``, ``lstm - history-mlp``) on the
win rate: :func:`climbrl.evaluate.stats.contrast_interval` over seeds x decks (seed noise and deck
noise both in the interval, paired on the decks), Holm's correction over the three contrasts and
two opponents. The training cost is recorded beside: CPU seconds per million learner decisions.

The budget and the arms are fixed before the run (the command line's), not chosen on these decks.
Trainings are kept under ``runs/bench/lstm_vs_mlp`` and resumed when the script is run again.

Run: ``.venv/bin/python benchmarks/lstm_vs_mlp.py [--epochs 30] [--seeds 0,1,2] [--decks 300]
[--workers 2]`` (about 45 minutes on two idle cores at the defaults). Writes
``benchmarks/results/lstm_vs_mlp.json`` and prints a table. Without RLCard installed its rule agent
is left out, and said so.
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (environment defaults)

ARMS = {"mlp": {"encoder": ""}, "history-mlp": {"encoder": "doudizhu+history"},
        "lstm": {"encoder": "doudizhu+history", "lstm": 128}}
CONTRASTS = (("lstm", "mlp"), ("history-mlp", "mlp"), ("lstm", "history-mlp"))
DECK_SEED = 2525


def run_dir(arm: str, seed: int) -> Path:
    return ROOT / "runs" / "bench" / "lstm_vs_mlp" / f"{arm}-s{seed}"


def train_one(job: tuple[str, int, int]) -> dict:
    """Train one (arm, seed) to ``epochs`` (resumed from its checkpoint when there is one)."""
    import yaml

    from climbrl.config import train_config
    from climbrl.training import train

    arm, seed, epochs = job
    base = yaml.safe_load((ROOT / "strong" / "params.yaml").read_text())["games"]["doudizhu"]["train"]
    kw = {k: v for k, v in base.items() if k not in ("algo", "epochs", "seed", "actors", "keep_policy_every")}
    cfg = train_config(base["algo"], game="doudizhu", **kw, **ARMS[arm], epochs=epochs, seed=seed, actors=1,
                       keep_policy_every=0)
    out = run_dir(arm, seed)
    hist = train(cfg, out, resume=True, progress=False)["history"]  # from its checkpoint when there is one
    return {"arm": arm, "seed": seed, "epochs": len(hist), "decisions": sum(r["decisions"] for r in hist),
            "cpu_seconds": sum(r["cpu_seconds"] for r in hist),
            "policy": str((out / "policy.pt").relative_to(ROOT))}


def paired_comparison(runs: list[dict], arm_names, contrast_pairs, decks: int, workers: int,
                      deck_seed: int = DECK_SEED) -> dict:
    """Every trained policy of ``runs`` (``arm``, ``seed``, ``policy`` relative to the repository,
    ``decisions``, ``cpu_seconds``) against RLCard's rule agent (when installed) and the heuristic
    on the same ``decks`` fresh decks (purpose ``deep``), each in both seatings; the ``contrast_pairs``
    ``(a, b)`` of arms on the win rate over seeds x decks, Holm-corrected together. Returns
    ``opponents``, ``left_out``, ``results`` (per run), ``arms`` (win rate by seed, mean and sd, cost)
    and ``contrasts`` (a list). Other benchmarks that compare arms over seeds reuse it."""
    import numpy as np

    from climbrl.evaluate.duel import team_match
    from climbrl.evaluate.stats import contrast_interval, holm

    opponents = ["rlcard-rule", "heuristic"]
    left_out = []
    if importlib.util.find_spec("rlcard") is None:
        opponents.remove("rlcard-rule")
        left_out.append("rlcard-rule (RLCard not installed)")
    tables: dict[str, dict[str, list]] = {o: {a: [] for a in arm_names} for o in opponents}
    results: dict[str, dict] = {}
    for r, opp in itertools.product(runs, opponents):
        m = team_match(f"checkpoint:{ROOT / r['policy']}", opp, deals=decks, seed=deck_seed, workers=workers,
                       purpose="deep")
        tables[opp][r["arm"]].append(np.array(m["per_deal"]["a_wins"], float) / 2)
        results.setdefault(f"{r['arm']}-s{r['seed']}", {})[opp] = {role: m["A"][role] for role in m["A"]}
    contrasts = []
    for opp, (a, b) in itertools.product(opponents, contrast_pairs):
        c = contrast_interval([np.stack(tables[opp][a]), np.stack(tables[opp][b])], [1, -1], bounds=(-1, 1))
        contrasts.append({"opponent": opp, "contrast": f"{a} - {b}", **c})
    for c, rejected in zip(contrasts, holm([c["p_value"] for c in contrasts]), strict=True):
        c["holm_significant"] = rejected
    arms = {}
    for arm in arm_names:
        mine = [r for r in runs if r["arm"] == arm]
        by_seed = {o: [float(t.mean()) for t in tables[o][arm]] for o in opponents}
        arms[arm] = {"cpu_seconds_per_million_decisions": 1e6 * sum(r["cpu_seconds"] for r in mine)
                     / sum(r["decisions"] for r in mine),
                     "win_rate": {o: {"by_seed": x, "mean": float(np.mean(x)),
                                      "sd": float(np.std(x, ddof=1)) if len(x) > 1 else None}
                                  for o, x in by_seed.items()}}
    return {"opponents": opponents, "left_out": left_out, "results": results, "arms": arms, "contrasts": contrasts}


def train_all(train_one, jobs: list, workers: int) -> list[dict]:
    """Every job's training (``train_one(job)``) in ``workers`` processes, each printed when done."""
    from climbrl.threads import process_pool

    with process_pool(workers) as pool:
        runs = list(pool.map(train_one, jobs))
    for r in runs:
        print(f"trained {r['arm']} seed {r['seed']}: {r['decisions']:,} decisions, {r['cpu_seconds'] / 60:.1f} CPU-min",
              flush=True)
    return runs


def write_comparison(out: dict, cmp: dict, path: str) -> int:
    """Write the result ``out`` to ``path`` as JSON and print the comparison ``cmp``; status 0."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(out, indent=2) + "\n")
    print_comparison(cmp)
    print(f"wrote {path}")
    return 0


def print_comparison(cmp: dict) -> None:
    """The table of :func:`paired_comparison`: each arm's mean win rates and cost, each contrast."""
    opponents = cmp["opponents"]
    for arm, a in cmp["arms"].items():
        wr = ", ".join(f"{o} {a['win_rate'][o]['mean']:.3f} (sd {a['win_rate'][o]['sd'] or 0:.3f})" for o in opponents)
        print(f"{arm}: {wr}; {a['cpu_seconds_per_million_decisions']:.0f} CPU-s per million decisions")
    for c in cmp["contrasts"]:
        print(f"{c['opponent']}: {c['contrast']} {c['estimate']:+.3f} [{c['low']:+.3f}, {c['high']:+.3f}], "
              f"p {c['p_value']:.3f}{' (Holm: significant)' if c['holm_significant'] else ''}")


def main() -> int:

    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--decks", type=int, default=300)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "lstm_vs_mlp.json"))
    args = p.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    jobs = [(arm, s, args.epochs) for s in seeds for arm in ARMS]
    load_before = os.getloadavg()  # other work on the machine inflates the CPU seconds: recorded beside
    runs = train_all(train_one, jobs, args.workers)
    cmp = paired_comparison(runs, ARMS, CONTRASTS, args.decks, args.workers)
    opponents, contrasts = cmp["opponents"], cmp["contrasts"]
    arms = {arm: {"config": ARMS[arm], **a} for arm, a in cmp["arms"].items()}
    out = {"measured": datetime.now(UTC).isoformat(timespec="seconds"),
           "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
           "rules": "douzero", "epochs": args.epochs, "games_per_epoch": 1000, "seeds": seeds, "decks": args.decks,
           "deck_seed": DECK_SEED, "purpose": "deep", "opponents": opponents, "left_out": cmp["left_out"],
           "load_before": load_before, "load_after": os.getloadavg(),
           "arms": arms, "runs": runs, "results": cmp["results"],
           "contrasts": {o: {c["contrast"]: c for c in contrasts if c["opponent"] == o} for o in opponents}}
    return write_comparison(out, cmp, args.out)


if __name__ == "__main__":
    sys.exit(main())
