"""Dou Dizhu's decision-time search over the shipped learned policy (issue 25, part 4), paired on
the same decks.

The base policy is the one a fresh clone holds, ``models/doudizhu-warm/policy.pt`` (``douzero``
rules). Each arm plays DouZero's protocol against each opponent on the same fresh decks (purpose
``deep``, seed 4343: neither the evaluation decks of the reports nor the strong curve's), every
deck in both seatings:

- ``policy``: the network alone (greedy);
- ``search``: :mod:`climbrl.agents.ddz_search` over it, ``S`` sampled deals and the network's top
  ``K`` moves, rolled out with the network in every seat (``rollout=base``), chosen by the mean
  score (ADP's points).

``S`` and ``K`` are fixed before the run (the command line's), not chosen on these decks. Per
opponent, search minus policy is paired deck by deck (the deck's two games): the win rate (wins
out of 2, halved) and the net points, Student t over the decks, Holm's correction over the
opponents on the win rate. Wall time per game of each arm is recorded beside (the machine's load
too): the search's cost is its point.

Run: ``.venv/bin/python benchmarks/ddz_search.py [--decks 300] [--samples 16] [--candidates 6]``
(about 20 minutes on two cores at the defaults). Writes ``benchmarks/results/ddz_search.json``
and prints a table. Without RLCard installed its rule agent is left out, and said so.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (environment defaults)

MODEL = "models/doudizhu-warm/policy.pt"
SEED = 4343


def main() -> int:
    import numpy as np

    from climbrl.evaluate.duel import team_match
    from climbrl.evaluate.stats import format_interval, holm, mean_difference_test

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--decks", type=int, default=300)
    p.add_argument("--samples", type=int, default=16)
    p.add_argument("--candidates", type=int, default=6)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "ddz_search.json"))
    args = p.parse_args()
    model = ROOT / MODEL
    if not model.exists():
        print(f"error: {MODEL} missing", file=sys.stderr)
        return 2
    opponents = ["heuristic"]
    if importlib.util.find_spec("rlcard") is not None:
        opponents.append("rlcard-rule")
    else:
        print("rlcard is not installed: its rule agent is left out (pip install -e '.[rlcard]')", file=sys.stderr)
    arms = {"policy": f"checkpoint:{model}",
            "search": f"search:checkpoint:{model},S={args.samples},K={args.candidates},rollout=base"}
    out: dict = {"machine": f"{platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores",
                 "load_before": os.getloadavg()[0], "model": MODEL, "rules": "douzero", "decks": args.decks,
                 "seed": SEED, "purpose": "deep", "workers": args.workers,
                 "arms": {k: v.replace(str(model), MODEL) for k, v in arms.items()}, "opponents": {}}
    for opp in opponents:
        res, seconds = {}, {}
        for arm, spec in arms.items():
            t0 = time.perf_counter()
            res[arm] = team_match(spec, opp, deals=args.decks, seed=SEED, workers=args.workers, purpose="deep")
            seconds[arm] = time.perf_counter() - t0
            print(f"{opp}: {arm} done in {seconds[arm]:.0f} s", file=sys.stderr, flush=True)
        entry: dict = {arm: {"seconds_per_game": seconds[arm] / res[arm]["games"],
                             **{role: res[arm]["A"][role] for role in ("landlord", "peasants", "both")}}
                       for arm in arms}
        entry["search_minus_policy"] = {}
        for key, scale, name in (("a_wins", 0.5, "win_rate"), ("a_points", 1.0, "points_per_deck")):
            x = np.array(res["search"]["per_deal"][key], float) * scale
            y = np.array(res["policy"]["per_deal"][key], float) * scale
            entry["search_minus_policy"][name] = mean_difference_test(x - y)
        out["opponents"][opp] = entry
    keys = list(out["opponents"])
    for opp, keep in zip(keys, holm([out["opponents"][o]["search_minus_policy"]["win_rate"]["p"] for o in keys]),
                         strict=True):
        out["opponents"][opp]["search_minus_policy"]["win_rate"]["holm_significant"] = bool(keep)
    out["load_after"] = os.getloadavg()[0]
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")
    print(f"{'opponent':<12} {'arm':<7} {'WP landlord':>12} {'WP peasants':>12} {'ADP':>7} {'s/game':>7}")
    for opp, entry in out["opponents"].items():
        for arm in arms:
            a = entry[arm]
            print(f"{opp:<12} {arm:<7} {a['landlord']['win_rate']:12.3f} {a['peasants']['win_rate']:12.3f} "
                  f"{a['both']['adp']:+7.3f} {a['seconds_per_game']:7.2f}")
        d = entry["search_minus_policy"]["win_rate"]
        pts = entry["search_minus_policy"]["points_per_deck"]
        print(f"{'':<12} search - policy: WP {d['mean']:+.3f} {format_interval(d.get('low'), d.get('high'), '+.3f')} "
              f"p {d['p']:.2g}; points per deck {pts['mean']:+.3f} "
              f"{format_interval(pts.get('low'), pts.get('high'), '+.3f')}")
    print(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
