"""One agent against copies of one opponent, judged as the game is judged: under DouZero's
protocol (a team game with a fixed landlord: :func:`~climbrl.evaluate.baselines_report.duel_rules`)
by role, else every deal from every seat. The CI regression gates and the strong learners'
curves (``pipeline/strong.py``) read their numbers from here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def versus(agent: str, opponent: str, game: str, rules: str, deals: int, seed: int = 0, workers: int = 1,
           purpose: str | None = None, seeds: Sequence[int] | None = None) -> dict[str, dict[str, Any]]:
    """``agent`` against copies of ``opponent`` on ``deals`` deals: the first of ``seeds`` when
    given (a versioned deal set), else drawn from ``seed`` for ``purpose``. Under DouZero's
    protocol: ``landlord``, ``peasants`` and ``both`` (the duel's summary of each: win rate with
    its 95% interval, games, wins, ADP with its interval: each deal with the agent as landlord,
    then as both peasants); else ``all`` (win rate with its interval, games and the mean reward,
    the rules' points, with its interval: each deal from every seat)."""
    from climbrl.evaluate.baselines_report import duel_rules
    from climbrl.evaluate.duel import team_match
    from climbrl.evaluate.match import run_match
    from climbrl.games.registry import num_players

    if duel_rules(game, rules):
        res = team_match(agent, opponent, game=game, rules=rules, deals=deals, seed=seed, workers=workers,
                         seeds=seeds, per_deal=False, purpose=purpose)["A"]
        return {role: res[role] for role in ("landlord", "peasants", "both")}
    return {"all": run_match(agent, [opponent], rules=rules, games=deals * num_players(game), seed=seed,
                             workers=workers, seeds=None if seeds is None else list(seeds)[:deals], game=game,
                             purpose=purpose)}


__all__ = ["versus"]
