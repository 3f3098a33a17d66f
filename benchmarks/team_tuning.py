"""The tuning matches that chose the team champion's ``value=`` (issue 12; results in
``benchmarks/results/public_tuning.json``, ``team_matches``).

Two of the public champion's search (with ``value=VALUE``) in seats 0 and 2 against two copies of
the public agent in seats 1 and 3, under its ``charlesworth`` rules, every rotation of every deal
(so each side plays each deal from both pairs of seats); the deals are ``deal_seeds(12, N)``, the
tuning deals, checked disjoint from the versioned evaluation deals. Prints the team's score per
game (its two seats' returns summed; zero-sum rules, 0 is parity) with a 95% interval over the
deals' means, and writes it as JSON with ``--out``.

    python benchmarks/team_tuning.py team --deals 100
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from climbrl.agents.runner import deal_seeds
from climbrl.evaluate.match import relative_returns
from climbrl.evaluate.stats import mean_interval

BASE = "search:checkpoint:runs/champion/base/policy.pt,S=128,K=20,own=base,rollout=charlesworth"
TUNING_SEED = 12


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("value", choices=["win", "score", "team"])
    ap.add_argument("--deals", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--eval-seeds", default="data/eval_seeds.json")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    seeds = deal_seeds(TUNING_SEED, args.deals)
    if Path(args.eval_seeds).exists() and set(seeds) & set(json.loads(Path(args.eval_seeds).read_text())["deals"]):
        raise SystemExit("the tuning deals overlap the evaluation deals")
    spec = BASE + ("" if args.value == "win" else f",value={args.value}")
    t0 = time.perf_counter()
    rows = relative_returns(spec, ["charlesworth", spec, "charlesworth"], rules="charlesworth",
                            games=4 * args.deals, seed=0, workers=args.workers, seeds=seeds)
    team = [r[0] + r[2] for r in rows]
    per_deal = [sum(team[i:i + 4]) / 4 for i in range(0, len(team), 4)]
    mean, lo, hi = mean_interval(per_deal)
    out = {"value": args.value, "spec": spec, "deals": args.deals, "games": len(rows), "team_score": mean,
           "low": lo, "high": hi, "team_first_out": sum(t > 0 for t in team),
           "seat_mean_return": sum(r[0] for r in rows) / len(rows), "seconds": time.perf_counter() - t0}
    print(json.dumps(out, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
