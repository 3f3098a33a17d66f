"""Issue 46's signals from the hidden cards, measured: does a network trained with them play better?

Three arms of Dou Dizhu self-play PPO (``douzero`` rules, one network per role), the same settings
but for the signal, seeds 0-2 by default:

- ``baseline``: no signal from the hidden cards;
- ``aux``: ``aux_hidden_coef`` (an auxiliary head predicts the other seats' hands from the state's
  first layer: DouZero+'s opponent modelling);
- ``oracle``: ``oracle_critic`` (the value head reads those hands: PerfectDou's
  perfect-training-imperfect-execution).

PPO is the learner of every arm because the oracle critic is a PPO critic; the policy that plays is
the network alone in every arm, which never reads a hidden card. Each final policy plays against
RLCard's rule agent (when installed) and the heuristic on the same fresh decks, every deck in both
seatings, and the contrasts ``aux - baseline`` and ``oracle - baseline`` on the win rate are paired
on the decks over seeds x decks, Holm-corrected: the evaluation and the table of
``benchmarks/lstm_vs_mlp.py`` (:func:`paired_comparison`), reused.

The budget is fixed before the run (the command line's). Trainings are kept under ``--runs``
(default ``runs/bench/hidden_signals``) and resumed when the script is run again with the same
settings.

Run: ``.venv/bin/python benchmarks/hidden_signals.py [--epochs 30] [--games 1000] [--seeds 0,1,2]
[--decks 300] [--workers 2] [--aux-coef 1.0]``. Writes ``benchmarks/results/hidden_signals.json``
(``--out``) and prints a table. A tiny run to check that it works: ``--epochs 2 --games 50
--decks 20 --hidden 64 --runs /tmp/hs_runs --out /tmp/hidden_signals.json``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (environment defaults)
from benchmarks.lstm_vs_mlp import DECK_SEED, paired_comparison, train_all, write_comparison  # noqa: E402

CONTRASTS = (("aux", "baseline"), ("oracle", "baseline"))


def arms(aux_coef: float) -> dict[str, dict]:
    """Each arm's settings on top of the shared ones."""
    return {"baseline": {}, "aux": {"aux_hidden_coef": aux_coef}, "oracle": {"oracle_critic": True}}


def train_one(job: tuple[str, dict, int, dict, str]) -> dict:
    """Train one (arm, seed) (resumed from its checkpoint when there is one); its record for
    :func:`paired_comparison`."""
    from climbrl.config import train_config
    from climbrl.training import train

    arm, settings, seed, shared, runs = job
    cfg = train_config("ppo", game="doudizhu", rules="douzero", role_networks=True, eval_every=0, keep_policy_every=0,
                       actors=1, seed=seed, **shared, **settings)
    out = Path(runs) / f"{arm}-s{seed}"
    hist = train(cfg, out, resume=True, progress=False)["history"]
    return {"arm": arm, "seed": seed, "epochs": len(hist), "decisions": sum(r["decisions"] for r in hist),
            "cpu_seconds": sum(r["cpu_seconds"] for r in hist), "policy": os.path.relpath(out / "policy.pt", ROOT),
            "aux_loss": [r["loss/aux_loss"] for r in hist if "loss/aux_loss" in r]}


def main() -> int:

    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--games", type=int, default=1000, help="games per epoch")
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--seeds", default="0,1,2")
    p.add_argument("--decks", type=int, default=300)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--aux-coef", type=float, default=1.0)
    p.add_argument("--runs", default=str(ROOT / "runs" / "bench" / "hidden_signals"))
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "hidden_signals.json"))
    args = p.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    shared = {"epochs": args.epochs, "games_per_epoch": args.games, "hidden": args.hidden}
    settings = arms(args.aux_coef)
    jobs = [(arm, kw, s, shared, args.runs) for s in seeds for arm, kw in settings.items()]
    load_before = os.getloadavg()  # other work on the machine inflates the CPU seconds: recorded beside
    runs = train_all(train_one, jobs, args.workers)
    cmp = paired_comparison(runs, settings, CONTRASTS, args.decks, args.workers)
    out = {"measured": datetime.now(UTC).isoformat(timespec="seconds"),
           "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
           "algo": "ppo", "rules": "douzero", **shared, "seeds": seeds, "decks": args.decks, "deck_seed": DECK_SEED,
           "purpose": "deep", "opponents": cmp["opponents"], "left_out": cmp["left_out"],
           "load_before": load_before, "load_after": os.getloadavg(),
           "arms": {arm: {"config": settings[arm], **a} for arm, a in cmp["arms"].items()},
           "runs": runs, "results": cmp["results"],
           "contrasts": {o: {c["contrast"]: c for c in cmp["contrasts"] if c["opponent"] == o}
                         for o in cmp["opponents"]}}
    return write_comparison(out, cmp, args.out)


if __name__ == "__main__":
    sys.exit(main())
