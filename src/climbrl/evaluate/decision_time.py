"""Seconds per decision of an agent at play time: CPU time of every decision it takes in real games.

The agent plays each deal from every seat against copies of an opponent (the match's seating and
seat seeds, :func:`climbrl.agents.runner.seat_seed`), one decision at a time, and every ``act``
is timed with the process's CPU clock (``time.process_time``: the agent's own computation, not
the time it waited for a core on a loaded machine). A rollout search (it has ``score``) also
reports the share of its decisions it searched (the others are forced or trivial) and its
rollouts per CPU second inside the compiled search. ``benchmarks/search.py`` and the champion
pipeline (``pipeline/champion.py``) measure with it.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Sequence
from typing import Any

from climbrl.agents.base import Decision
from climbrl.games.registry import make_game


def decision_seconds(agent_spec: str, opponent: str, rules: str, seeds: Sequence[int], match_seed: int = 0,
                     game: str = "big2") -> dict[str, Any]:
    """CPU seconds per decision of ``agent_spec`` over the games of ``seeds`` (each from every
    seat) against copies of ``opponent``: mean, median, 95th percentile and max, over all its
    decisions and over its searched ones. The games are the match's (:func:`run_match` with the
    same deal seeds and ``seed=match_seed``): same seatings, same seat streams."""
    from climbrl.evaluate.match import duplicate_seatings, game_name, opponent_list

    if not seeds:
        raise ValueError("decision_seconds needs at least one deal")
    name = game_name(game, rules)
    g = make_game(name)
    opponents = opponent_list([opponent], g.num_players)
    agent, seatings, deal_list, seat_seed_list = duplicate_seatings(agent_spec, opponents, match_seed, 0, seeds,
                                                                    name, g.num_players)
    stats = {"rollouts": 0, "search_cpu": 0.0}
    score = getattr(agent, "score", None)
    if score is not None:
        def timed_score(d, cand, deals):  # type: ignore[no-untyped-def]
            t0 = time.process_time()
            out = score(d, cand, deals)
            stats["search_cpu"] += time.process_time() - t0
            stats["rollouts"] += len(cand) * len(deals)
            return out

        agent.score = timed_score  # type: ignore[attr-defined]
    warm = g.new_game(seed=int(seeds[0]))  # compile (or load numba's cache) outside the clock
    agent.act(Decision.from_state(warm), random.Random(0))
    stats["rollouts"], stats["search_cpu"] = 0, 0.0
    cpu: list[float] = []
    searched: list[float] = []
    wins = 0
    for i, (seating, ds, ss) in enumerate(zip(seatings, deal_list, seat_seed_list, strict=True)):
        seat = i % g.num_players
        s = g.new_game(seed=int(ds))
        rngs = [random.Random(x) for x in ss]
        while not s.is_terminal():
            d = Decision.from_state(s)
            p = s.current_player
            if p == seat:
                before = stats["rollouts"]
                t0 = time.process_time()
                k = agent.act(d, rngs[p])
                cpu.append(time.process_time() - t0)
                if stats["rollouts"] > before:
                    searched.append(cpu[-1])
            else:
                k = seating[p].act(d, rngs[p])
            s.apply(d.moves[k])
        wins += seat in s.result().winners
    games = len(seatings)
    out: dict[str, Any] = {
        "agent": agent_spec, "opponent": opponent, "rules": rules, "deals": len(seeds), "games": games,
        "wins": wins, "decisions": len(cpu),
        "cpu_s_per_decision": statistics.fmean(cpu),
        "median_cpu_s_per_decision": statistics.median(cpu),
        "p95_cpu_s_per_decision": _quantile(cpu, 0.95),
        "max_cpu_s_per_decision": max(cpu),
    }
    if score is not None:
        out.update({
            "searched_share": len(searched) / len(cpu),
            "cpu_s_per_searched_decision": statistics.fmean(searched) if searched else 0.0,
            "p95_cpu_s_per_searched_decision": _quantile(searched, 0.95) if searched else 0.0,
            "rollouts": stats["rollouts"],
            "rollouts_per_cpu_s": stats["rollouts"] / max(stats["search_cpu"], 1e-9),
        })
    return out


def _quantile(xs: Sequence[float], q: float) -> float:
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int(q * len(ys)))]


__all__ = ["decision_seconds"]
