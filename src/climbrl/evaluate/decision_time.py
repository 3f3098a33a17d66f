"""Seconds per decision of an agent at play time: CPU time of every decision it takes in real games.

The games are the match's (:func:`climbrl.evaluate.match.run_match` with the same deal seeds and
``seed``): the same seatings and seat streams, played by the same runner
(:func:`climbrl.agents.runner.play_games`), one game at a time, on one torch thread as the match
workers compute. The evaluated agent is wrapped so that each of its decisions is timed alone
with the process's CPU clock (``time.process_time``: its own computation, not the time it waited
for a core on a loaded machine). A rollout search (it has ``score``) also reports the share of
its decisions it searched (the others are forced or trivial) and its rollouts per CPU second
inside the compiled search. Before the clock starts, one whole game is played untimed, so that
compiling (or loading numba's cache of) every code path does not land in a timed decision.
``benchmarks/search.py`` and the champion pipeline (``pipeline/champion.py``) measure with it.
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Sequence
from typing import Any

from climbrl.agents.base import Agent, Decision
from climbrl.agents.runner import play_games
from climbrl.games.registry import make_game
from climbrl.threads import single_thread


class _Timed(Agent):
    """Delegates to ``inner`` one decision at a time and records each decision's CPU seconds
    (and whether it searched)."""

    def __init__(self, inner: Agent, stats: dict[str, float]) -> None:
        self.inner = inner
        self.name = inner.name
        self.stats = stats
        self.cpu: list[float] = []
        self.searched: list[float] = []

    def act(self, decision: Decision, rng: random.Random) -> int:
        before = self.stats["rollouts"]
        t0 = time.process_time()
        k = self.inner.act_batch([decision], [rng])[0]
        self.cpu.append(time.process_time() - t0)
        if self.stats["rollouts"] > before:
            self.searched.append(self.cpu[-1])
        return k


def decision_seconds(agent_spec: str, opponent: str | Sequence[str], rules: str, seeds: Sequence[int],
                     match_seed: int = 0, game: str = "big2") -> dict[str, Any]:
    """CPU seconds per decision of ``agent_spec`` over the games of ``seeds`` (each from every
    seat) against copies of ``opponent`` (or one opponent per other seat, as
    :func:`~climbrl.evaluate.match.run_match` takes them; a seat naming the agent's own spec
    plays a copy of it, untimed: a team match): mean, median, 95th percentile and max, over all
    its decisions and over its searched ones; ``wins`` is the agent's wins in those games (the
    match's, so a caller can check it against the match)."""
    from climbrl.evaluate.match import duplicate_seatings, game_name, opponent_list

    if not seeds:
        raise ValueError("decision_seconds needs at least one deal")
    name = game_name(game, rules)
    g = make_game(name)
    n = g.num_players
    opponents = opponent_list([opponent] if isinstance(opponent, str) else opponent, n)
    agent, seatings, deal_list, seat_seed_list = duplicate_seatings(agent_spec, opponents, match_seed, 0, seeds,
                                                                    name, n)
    stats = {"rollouts": 0, "search_cpu": 0.0}
    score = getattr(agent, "score", None)
    if score is not None:
        def timed_score(d, cand, deals, *seeds):  # type: ignore[no-untyped-def]
            t0 = time.process_time()
            out = score(d, cand, deals, *seeds)
            stats["search_cpu"] += time.process_time() - t0
            stats["rollouts"] += len(cand) * len(deals)
            return out

        agent.score = timed_score  # type: ignore[attr-defined]
    with single_thread():
        play_games(g, seatings[:1], deal_list[:1], seat_seed_list[:1])  # warm-up, untimed
        stats["rollouts"], stats["search_cpu"] = 0, 0.0
        timed = _Timed(agent, stats)
        states = []
        for seating, ds, ss in zip(seatings, deal_list, seat_seed_list, strict=True):
            states += play_games(g, [[timed if a is agent else a for a in seating]], [ds], [ss])
    cpu, searched = timed.cpu, timed.searched
    out: dict[str, Any] = {
        "agent": agent_spec, "opponent": opponent if isinstance(opponent, str) else list(opponent), "rules": rules,
        "deals": len(seeds), "games": len(states),
        "wins": sum(i % n in st.result().winners for i, st in enumerate(states)), "decisions": len(cpu),
        "cpu_s_per_decision": statistics.fmean(cpu),
        "median_cpu_s_per_decision": statistics.median(cpu),
        "p95_cpu_s_per_decision": _quantile(cpu, 0.95),
        "max_cpu_s_per_decision": max(cpu),
    }
    if score is not None:
        out.update({
            "searched_share": len(searched) / len(cpu),
            "cpu_s_per_searched_decision": statistics.fmean(searched) if searched else None,
            "p95_cpu_s_per_searched_decision": _quantile(searched, 0.95) if searched else None,
            "rollouts": stats["rollouts"],
            "rollouts_per_cpu_s": stats["rollouts"] / stats["search_cpu"] if stats["search_cpu"] else None,
        })
    return out


def _quantile(xs: Sequence[float], q: float) -> float:
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int(q * len(ys)))]


__all__ = ["decision_seconds"]
