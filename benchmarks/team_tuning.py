"""The tuning matches that chose the team champion's ``value=`` (issue 12; results in
``benchmarks/results/public_tuning.json``, ``team_matches``).

Two of the public champion's search (``public_champion`` of ``champion/params.yaml``, with
``value=VALUE``) in seats 0 and 2 against two copies of the public agent in seats 1 and 3, under
its ``charlesworth`` rules, every rotation of every deal (so each side plays each deal from both
pairs of seats); the deals are ``deal_seeds(12, N)``, the tuning deals, checked disjoint from
the versioned evaluation deals. Prints the team's score per game (its two seats' returns summed;
zero-sum rules, 0 is parity) with a 95% interval over the deals' means
(:func:`~climbrl.evaluate.match.team_scores`, as the champion pipeline's team matches), and
writes it as JSON with ``--out``.

    python benchmarks/team_tuning.py team --deals 100
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import yaml

from climbrl.agents.runner import deal_seeds
from climbrl.evaluate.match import relative_returns, team_scores

TUNING_SEED = 12


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("value", choices=["win", "score", "team"])
    ap.add_argument("--deals", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--eval-seeds", default="data/eval_seeds.json")
    ap.add_argument("--params", default="champion/params.yaml",
                    help="the champion pipeline's params (its public_champion)")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    seeds = deal_seeds(TUNING_SEED, args.deals)
    if Path(args.eval_seeds).exists() and set(seeds) & set(json.loads(Path(args.eval_seeds).read_text())["deals"]):
        raise SystemExit("the tuning deals overlap the evaluation deals")
    base = yaml.safe_load(Path(args.params).read_text())["public_champion"]
    spec = base + ("" if args.value == "win" else f",value={args.value}")
    t0 = time.perf_counter()
    rows = relative_returns(spec, ["charlesworth", spec, "charlesworth"], rules="charlesworth",
                            games=4 * args.deals, seed=0, workers=args.workers, seeds=seeds)
    out = {"value": args.value, "spec": spec, "deals": args.deals, **team_scores(rows, 4),
           "seat_mean_return": sum(r[0] for r in rows) / len(rows), "seconds": time.perf_counter() - t0}
    print(json.dumps(out, indent=1))
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
