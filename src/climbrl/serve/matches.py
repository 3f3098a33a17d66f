"""Games of the pipeline's recorded matches, replayed as the match played them.

A match record (``reports/**/matches/*.json``: the champion's matches) holds the agent and
opponent specs, the rules, the deal set, the number of deals, the seat seed and the agent's wins
deal by deal, not the moves. One of its games is replayed with :func:`climbrl.evaluate.match.match_game`
(the chunk of deals that held it, with the same seatings, seeds and batching), and checked against
the record: the agent's wins on every deal of the replayed chunk, from every seat, against the
record's. A
record played on other deals or by other code says so instead of passing for the recorded game.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from climbrl.agents.runner import load_deal_seeds
from climbrl.evaluate.match import match_game
from climbrl.serve.replay import frames

KEYS = ("agent", "opponent", "rules", "deal_set", "deals", "seat_seed", "deal_wins")


class MatchError(ValueError):
    """A match record that cannot be replayed (the message says why)."""


def _record(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(data, dict) or not all(k in data for k in KEYS) or not isinstance(data["deal_wins"], str):
        return None
    return data


def match_records(root: Path) -> list[dict[str, Any]]:
    """Every replayable match record under ``root/reports``."""
    reports = root / "reports"
    out = []
    for p in sorted(reports.rglob("*.json")) if reports.is_dir() else []:
        if p.stat().st_size > 1 << 20:
            continue
        r = _record(p)
        if r is not None:
            out.append({"file": str(p.relative_to(root)), "agent": r["agent"], "opponent": r["opponent"],
                        "rules": r["rules"], "game": r.get("game", "big2"), "deals": r["deals"]})
    return out


def replay_match(root: Path, file: str, deal: int, seat: int) -> dict[str, Any]:
    """The frames of one game of a match record, with its names and the check against the record."""
    root = root.resolve()
    path = (root / file).resolve()
    if not path.is_relative_to(root / "reports") or path.suffix != ".json" or not path.is_file():
        raise MatchError(f"no match record {file!r} under reports/")
    r = _record(path)
    if r is None:
        raise MatchError(f"{file} is not a match record")
    game = r.get("game", "big2")
    deal_set = (root / r["deal_set"]).resolve()
    if not deal_set.is_relative_to(root):
        raise MatchError(f"{file}: its deal set {r['deal_set']!r} lies outside the project")
    try:
        seeds = load_deal_seeds(deal_set)[:r["deals"]]
    except ValueError as e:
        raise MatchError(f"{file}: {e}") from None
    if len(seeds) < r["deals"]:
        raise MatchError(f"{file}: its deal set holds {len(seeds)} deals, the match played {r['deals']}")
    try:
        state, start, wins = match_game(r["agent"], [r["opponent"]], r["rules"], r["seat_seed"], seeds, deal, seat,
                                        game)
    except ValueError as e:  # a bad deal or seat, an agent that cannot be built here
        raise MatchError(str(e)) from None
    n = len(state.cards_left())
    names = [r["opponent"]] * n
    names[seat] = r["agent"]
    recorded = [int(c) for c in r["deal_wins"][start:start + len(wins)]]
    same = recorded == wins
    span = f"deals {start}..{start + len(wins) - 1}"
    check = {"recorded_wins": recorded, "replayed_wins": wins, "first_deal": start, "same": same,
             "text": (f"the agent's wins on {span} (the chunk replayed), deal by deal from every seat, are the "
                      "record's" if same else
                      f"the agent's wins on {span} replayed differ from the record's on "
                      f"{sum(a != b for a, b in zip(wins, recorded, strict=False))} of {len(wins)} deals: the record "
                      "was played on other deals or by other code, so this is not its game")}
    return {**frames(state.to_json()), "names": names, "check": check,
            "title": f"{r['agent']} against {r['opponent']} ({r['rules']}), deal {deal}, seat {seat}"}
