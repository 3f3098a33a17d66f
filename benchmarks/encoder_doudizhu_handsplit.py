"""Encoding speed of Dou Dizhu's encoders with and without the search columns: decisions/s of
``doudizhu`` and ``doudizhu+handsplit`` on the decisions of heuristic self-play games (auction
included), batches of 64 as the lockstep runner gives them, best and median of repeats.

Run: ``nice -n 10 .venv/bin/python benchmarks/encoder_doudizhu_handsplit.py [--games N] [--repeats K]``.
Prints JSON (not written to results/: the machine is shared, numbers are lower bounds).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from climbrl.agents.base import Decision
from climbrl.agents.registry import make_agent
from climbrl.agents.runner import deal_seeds, play_games, seat_seed
from climbrl.encoders import make_encoder
from climbrl.games.registry import make_game


class _Recorder:
    def __init__(self) -> None:
        self.decisions: list[Decision] = []

    def __call__(self, agent, gis, decisions, picks) -> None:
        self.decisions += decisions


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--games", type=int, default=200)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--rules", default="standard")
    args = p.parse_args()
    game = make_game(f"doudizhu:{args.rules}")
    agent = make_agent("heuristic", "doudizhu")
    rec = _Recorder()
    play_games(game, [[agent] * 3] * args.games, deal_seeds(0, args.games),
               [[seat_seed(0, g, 0, s) for s in range(3)] for g in range(args.games)], on_step=rec)
    decs = rec.decisions
    out = {"decisions": len(decs), "rules": args.rules}
    for name in ("doudizhu", "doudizhu+handsplit"):
        enc = make_encoder("doudizhu", name)
        enc.encode(decs[:64])  # compile
        rates = []
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            for i in range(0, len(decs), 64):
                enc.encode(decs[i:i + 64])
            rates.append(len(decs) / (time.perf_counter() - t0))
        out[name] = {"best_per_s": max(rates), "median_per_s": statistics.median(rates)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
