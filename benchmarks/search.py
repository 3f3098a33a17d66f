"""Speed of the rollout search agent (:mod:`climbrl.agents.search`) on one core.

For each setting, the agent plays ``--deals`` deals from every seat against three heuristic
players (paper rules, deal seeds from ``--seed``, disjoint from the match seeds used for win
rates), pinned to one core; every ``act`` call is timed (CPU time of the process).
Reported per setting: seconds per decision over all of the agent's decisions (forced ones
included, as a match sees them) and over searched decisions only, the share of decisions
searched, and rollouts per second inside the compiled search (``S x candidates`` rollouts per
searched decision, timed around :func:`~climbrl.agents.search.search_scores`).

Run: ``python benchmarks/search.py [--deals 8] [--settings 16,6 48,10 128,20] [--belief 0]``;
writes ``benchmarks/results/search.json`` (merged with earlier settings) and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from climbrl.agents.runner import deal_seeds
from climbrl.evaluate.decision_time import decision_seconds


def measure(spec: str, rules: str, deals: int, seed: int) -> dict:
    """The agent's CPU time per decision on ``deals`` deals from every seat against three heuristic
    players (:func:`climbrl.evaluate.decision_time.decision_seconds`)."""
    r = decision_seconds(spec, "heuristic", rules, deal_seeds(seed, deals))
    r["spec"] = r.pop("agent")
    # entries written before 2026-12-01 were timed by an earlier loop (seat streams Random(4k + seat))
    r["protocol"] = "climbrl.evaluate.decision_time (the match's seat streams, one torch thread)"
    return r


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--deals", type=int, default=8)
    ap.add_argument("--seed", type=int, default=990)
    ap.add_argument("--rules", default="paper")
    ap.add_argument("--settings", nargs="+", default=["16,6", "48,10", "128,20"])
    ap.add_argument("--belief", type=int, default=0)
    ap.add_argument("--rollout", default="heuristic")
    args = ap.parse_args()
    full = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(full)})
    out = Path(__file__).parent / "results" / "search.json"
    results = json.loads(out.read_text()) if out.exists() else {}
    for setting in args.settings:
        s, k = setting.split(",")
        spec = f"search:S={s},K={k},rollout={args.rollout}" + (f",belief={args.belief}" if args.belief else "")
        r = measure(spec, args.rules, args.deals, args.seed)
        r["load_average_1min"] = os.getloadavg()[0]
        r["measured"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        results[f"{spec}/{args.rules}"] = r
        print(json.dumps(r), flush=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
