"""Speed of the rollout search agent (:mod:`climbrl.agents.search`) on one core.

For each setting, the agent plays ``--deals`` deals from every seat against three heuristic
players (paper rules, deal seeds from ``--seed``, disjoint from the match seeds used for win
rates), pinned to one core; every ``act`` call is timed (CPU time of the process and wall time).
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
import random
import time
from pathlib import Path

from climbrl.agents import Decision
from climbrl.agents.runner import deal_seeds
from climbrl.agents.search import SearchAgent
from climbrl.games.big2 import Big2Game
from climbrl.learn.specs import make_agent


def measure(spec: str, rules: str, deals: int, seed: int) -> dict:
    game = Big2Game(rules)
    agent = make_agent(spec, f"big2:{rules}")
    assert isinstance(agent, SearchAgent)
    heuristic = make_agent("heuristic")
    stats = {"rollouts": 0, "search_cpu": 0.0}
    score = agent.score

    def timed_score(d, cand, deals_):  # type: ignore[no-untyped-def]
        t0 = time.process_time()
        out = score(d, cand, deals_)
        stats["search_cpu"] += time.process_time() - t0
        stats["rollouts"] += len(cand) * len(deals_)
        return out

    agent.score = timed_score  # type: ignore[method-assign]
    cpu, wall, searched_cpu = [], [], []
    wins = games = 0
    for k, ds in enumerate(deal_seeds(seed, deals)):
        for seat in range(4):
            s = game.new_game(seed=ds)
            rng = random.Random(k * 4 + seat)
            while not s.is_terminal():
                d = Decision.from_state(s)
                if s.current_player == seat:
                    before = stats["rollouts"]
                    c0, w0 = time.process_time(), time.perf_counter()
                    i = agent.act(d, rng)
                    cpu.append(time.process_time() - c0)
                    wall.append(time.perf_counter() - w0)
                    if stats["rollouts"] > before:
                        searched_cpu.append(cpu[-1])
                else:
                    i = heuristic.act(d, rng)
                s.apply(d.moves[i])
            games += 1
            wins += s.winner == seat
    return {
        "spec": spec, "rules": rules, "games": games, "wins": wins, "decisions": len(cpu),
        "searched_share": len(searched_cpu) / len(cpu),
        "cpu_s_per_decision": sum(cpu) / len(cpu),
        "wall_s_per_decision": sum(wall) / len(wall),
        "cpu_s_per_searched_decision": sum(searched_cpu) / max(len(searched_cpu), 1),
        "max_cpu_s_per_decision": max(cpu),
        "rollouts": stats["rollouts"],
        "rollouts_per_cpu_s": stats["rollouts"] / max(stats["search_cpu"], 1e-9),
    }


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
    measure("search:S=2,K=2", args.rules, 1, 0)  # warm-up (compilation, or loading numba's cache)
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
