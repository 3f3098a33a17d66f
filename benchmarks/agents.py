"""Agent and evaluation speed: heuristic-only games per second on one core, and the time of
the study's evaluation protocol for the heuristic agent (400 duplicate-dealt games against
three copies of each of random, greedy and heuristic) on all cores.

Run: ``.venv/bin/python benchmarks/agents.py``; writes benchmarks/results/agents.json.
"""

from __future__ import annotations

import json
import os
import random
import time
from pathlib import Path

from climbrl.agents import Decision
from climbrl.evaluate.match import run_match
from climbrl.games.big2 import Big2Game
from climbrl.learn.specs import make_agent


def agent_only_games_per_s(name: str, rules: str, games: int) -> float:
    game = Big2Game(rules)
    agent, rng = make_agent(name), random.Random(0)
    start = time.perf_counter()
    for g in range(games):
        s = game.new_game(seed=g)
        while not s.is_terminal():
            d = Decision.from_state(s)
            s.apply(d.moves[agent.act(d, rng)])
    return games / (time.perf_counter() - start)


def main() -> None:
    results: dict = {"one_core_games_per_s": {}, "evaluation_seconds": {}}
    full = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(full)})
    for rules in ("paper", "charlesworth"):
        for name in ("heuristic", "greedy", "aggressive", "conservative", "random"):
            agent_only_games_per_s(name, rules, 20)  # warm-up (compilation)
            results["one_core_games_per_s"][f"{name}/{rules}"] = agent_only_games_per_s(name, rules, 1000)
    os.sched_setaffinity(0, full)
    run_match("heuristic", ["random"], games=8, workers=len(full))  # warm-up
    start = time.perf_counter()
    for opp in ("random", "greedy", "heuristic"):
        run_match("heuristic", [opp], games=400, workers=len(full))
    results["evaluation_seconds"]["heuristic_3x400_games"] = time.perf_counter() - start
    results["evaluation_seconds"]["workers"] = len(full)
    out = Path(__file__).parent / "results" / "agents.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
