"""How a policy bids by hand strength: the share of its auction decisions that bid (any action
but pass) per bucket of the heuristic's strength ``S`` (:func:`climbrl.agents.doudizhu_rules.hand_strength`),
over greedy self-play of the policy in every seat on ``standard`` deals (call score). The
heuristic itself bids 1 from ``S >= 7``, 2 from 9, 3 from 11.

Run: ``nice -n 10 .venv/bin/python benchmarks/bid_rate_by_strength.py RUN/policy.pt [--games N]``
(any agent spec works in place of the path with ``--spec``). Prints JSON.
"""

from __future__ import annotations

import argparse
import json

from climbrl.agents.doudizhu_rules import hand_strength
from climbrl.agents.runner import deal_seeds, play_games, seat_seed
from climbrl.games.registry import make_game
from climbrl.learn.specs import make_agent

BUCKETS = ((-99, 5), (5, 7), (7, 9), (9, 11), (11, 13), (13, 99))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("policy", nargs="?", default="")
    p.add_argument("--spec", default="")
    p.add_argument("--games", type=int, default=600)
    p.add_argument("--seed", type=int, default=99)
    args = p.parse_args()
    spec = args.spec or f"checkpoint:{args.policy}"
    game = make_game("doudizhu:standard")
    agent = make_agent(spec, "doudizhu:standard")
    rows: list[tuple[int, int]] = []

    def on_step(a, gis, decisions, picks) -> None:
        for d, k in zip(decisions, picks, strict=True):
            if d.observation.phase == "bid":
                rows.append((hand_strength(d.hand), d.moves[k]))

    play_games(game, [[agent] * 3] * args.games, deal_seeds(args.seed, args.games),
               [[seat_seed(args.seed, g, 0, s) for s in range(3)] for g in range(args.games)], on_step=on_step)
    out = {"spec": spec, "games": args.games, "bid_decisions": len(rows),
           "bid_rate": sum(a != 0 for _, a in rows) / max(len(rows), 1), "by_strength": {}}
    for lo, hi in BUCKETS:
        sel = [a for s, a in rows if lo <= s < hi]
        key = f"S<{hi}" if lo < -9 else f"S>={lo}" if hi > 90 else f"{lo}<=S<{hi}"
        out["by_strength"][key] = {"n": len(sel), "bid_rate": round(sum(a != 0 for a in sel) / max(len(sel), 1), 3),
                                   "mean_bid": round(sum(sel) / max(len(sel), 1), 3)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
