"""The Big 2 champion beside the study (issue 12): its matches, measured like the study's.

``make champion`` runs ``dvc repro champion/dvc.yaml`` (not part of ``make run``) from
``champion/params.yaml``:

- ``match@NAME`` (``python -m pipeline.champion match NAME``): one entry of ``matches``: the
  agent against three copies of the opponent on the first ``deals`` deals of ``deal_set`` (the
  study's versioned evaluation deals), every deal from every seat, seat streams from
  ``seat_seed`` (:func:`climbrl.evaluate.match.deal_wins`, ``workers`` processes). It writes
  ``reports/champion/matches/NAME.json``: the wins deal by deal, the win rate with its Wilson
  interval, and the agent's CPU seconds per decision in the match's first ``timing_deals``
  deals (:func:`climbrl.evaluate.decision_time.decision_seconds`: the same games, timed one
  decision at a time in one process).
- ``report`` (``python -m pipeline.champion report``, :mod:`pipeline.champion_report`, a module of
  its own so that a change to the report reruns no match): ``reports/champion/champion.md`` (every
  match; every other agent against the champion on the deals both played, with the same
  opponent and rules, as a paired difference; the issue's targets checked against the lower
  bounds) and ``champion.png`` (win rate against seconds per decision, the ``curve`` matches).

The champion's spec is chosen on the tuning matches (``run_match`` seed 12, disjoint deals),
never on the deals it is reported on. A match that needs the public agent's weights (outside
the repository, ``../shared/external``) records why it did not run instead of failing the
pipeline: a user without them still gets everything else.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

import pipeline  # noqa: F401  (environment defaults)
from climbrl.agents.runner import load_deal_seeds

PARAMS = Path("champion/params.yaml")
REPORTS = Path("reports/champion")


class ChampionParamsError(ValueError):
    pass


@dataclass(frozen=True)
class Match:
    name: str
    agent: str
    opponent: str
    deals: int
    rules: str
    team: bool = False


@dataclass(frozen=True)
class ChampionParams:
    champion: str
    rules: str
    deal_set: str
    seat_seed: int
    workers: int
    timing_deals: int
    matches: dict[str, Match]
    curve: tuple[str, ...]


def load_champion_params(path: str | Path = PARAMS) -> ChampionParams:
    """``champion/params.yaml``, checked: a clear error for every wrong field."""
    raw = yaml.safe_load(Path(path).read_text())
    if not isinstance(raw, dict):
        raise ChampionParamsError(f"{path}: not a mapping")
    keys = {"champion", "rules", "deal_set", "seat_seed", "workers", "timing_deals", "matches", "study_matches",
            "curve"}
    if set(raw) != keys:
        raise ChampionParamsError(f"{path}: fields {sorted(keys)} expected, missing {sorted(keys - set(raw))}, "
                                  f"unknown {sorted(set(raw) - keys)}")
    ints = {}
    for k, low in (("seat_seed", 0), ("workers", 1), ("timing_deals", 0)):
        v = raw[k]
        if not isinstance(v, int) or isinstance(v, bool) or v < low:
            raise ChampionParamsError(f"{path}: {k} must be an integer >= {low}, got {v!r}")
        ints[k] = v
    if not isinstance(raw["matches"], dict) or not raw["matches"] or not isinstance(raw["study_matches"], dict):
        raise ChampionParamsError(f"{path}: matches and study_matches must be mappings NAME: {{agent, opponent, "
                                  "deals}} (matches not empty)")
    twice = set(raw["matches"]) & set(raw["study_matches"])
    if twice:
        raise ChampionParamsError(f"{path}: {sorted(twice)} named in both matches and study_matches")
    matches = {}
    for name, m in {**raw["matches"], **raw["study_matches"]}.items():
        if not isinstance(name, str):
            raise ChampionParamsError(f"{path}: match name {name!r} is not a string (YAML reads on/off/yes/no as "
                                      "booleans: quote it)")
        if not isinstance(m, dict) or not {"agent", "opponent", "deals"} <= set(m) or \
                set(m) - {"agent", "opponent", "deals", "rules", "team"}:
            raise ChampionParamsError(f"{path}: match {name!r} needs agent, opponent, deals (and may name rules, "
                                      f"team), got {m!r}")
        if not isinstance(m.get("team", False), bool):
            raise ChampionParamsError(f"{path}: match {name!r}: team must be true or false, got {m['team']!r}")
        if not isinstance(m["deals"], int) or m["deals"] < 2:
            raise ChampionParamsError(f"{path}: match {name!r}: deals must be an integer >= 2, got {m['deals']!r}")
        matches[name] = Match(name, str(m["agent"]), str(m["opponent"]), m["deals"],
                              str(m.get("rules", raw["rules"])), m.get("team", False))
    curve = tuple(raw["curve"] or ())
    unknown = [c for c in curve if not isinstance(c, str) or c not in matches]
    if unknown:
        raise ChampionParamsError(f"{path}: curve names matches that do not exist: {unknown}")
    return ChampionParams(str(raw["champion"]), str(raw["rules"]), str(raw["deal_set"]), matches=matches,
                          curve=curve, **ints)


def _external_missing(spec: str) -> str | None:
    """Why an agent spec cannot be built here for want of outside data (the public agent's
    weights), or None."""
    from climbrl.paths import public_agent_missing

    if spec.partition(":")[0] != "charlesworth":
        return None
    return public_agent_missing()


def play_match(name: str, params: ChampionParams, reports: str | Path = REPORTS) -> dict[str, Any]:
    """One match of ``params.matches`` (see the module docstring); writes and returns its record."""
    from climbrl.evaluate.decision_time import decision_seconds
    from climbrl.evaluate.match import deal_wins, game_name
    from climbrl.evaluate.stats import wilson_interval
    from climbrl.games.registry import make_game

    if name not in params.matches:
        raise ChampionParamsError(f"no match {name!r} in the champion's params (matches: {', '.join(params.matches)})")
    m = params.matches[name]
    agent, opponent = m.agent, m.opponent
    seeds = load_deal_seeds(params.deal_set)
    if m.deals > len(seeds):
        raise ChampionParamsError(f"match {name!r}: {m.deals} deals, {params.deal_set} holds {len(seeds)}")
    seeds = seeds[:m.deals]
    players = make_game(game_name("big2", m.rules)).num_players
    record: dict[str, Any] = {"match": name, "agent": agent, "opponent": opponent, "rules": m.rules,
                              "deal_set": params.deal_set, "deals": m.deals, "seat_seed": params.seat_seed}
    missing = _external_missing(agent) or _external_missing(opponent)
    if missing:
        record["not_run"] = missing
    elif m.team:
        record.update(_team_match(agent, opponent, m, params, seeds, players))
    else:
        t0 = time.perf_counter()
        per_deal = deal_wins(agent, [opponent], rules=m.rules, games=players * m.deals, seed=params.seat_seed,
                             workers=params.workers, seeds=seeds)
        wins, games = sum(per_deal), players * m.deals
        lo, hi = wilson_interval(wins, games)
        record.update({"games": games, "wins": wins, "win_rate": wins / games, "win_rate_low": lo,
                       "win_rate_high": hi, "deal_wins": "".join(map(str, per_deal)),
                       "match_wall_s": time.perf_counter() - t0})
        if params.timing_deals:
            record["timing"] = decision_seconds(agent, opponent, m.rules, seeds[:params.timing_deals],
                                                params.seat_seed)
    path = Path(reports) / "matches" / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n")
    return record


def _team_match(agent: str, opponent: str, m: Match, params: ChampionParams, seeds: list[int],
                players: int) -> dict[str, Any]:
    """Two of the agent across the table from each other against two of the opponent (seats 0 and
    2 against 1 and 3, then swapped: every deal from every seat): the team's score per game (its
    two seats' returns summed; zero-sum rules: 0 is parity), with a 95% interval over the deals'
    means (a deal's games are not independent)."""
    from climbrl.evaluate.match import relative_returns
    from climbrl.evaluate.stats import mean_interval

    if players != 4:
        raise ChampionParamsError(f"match {m.name!r}: a team match needs four seats, {m.rules} has {players}")
    t0 = time.perf_counter()
    rows = relative_returns(agent, [opponent, agent, opponent], rules=m.rules, games=players * m.deals,
                            seed=params.seat_seed, workers=params.workers, seeds=seeds)
    team = [r[0] + r[2] for r in rows]
    per_deal = [sum(team[i:i + players]) / players for i in range(0, len(team), players)]
    mean, lo, hi = mean_interval(per_deal)
    return {"team": True, "games": len(rows), "team_score": mean, "team_score_low": lo, "team_score_high": hi,
            "team_wins": sum(t > 0 for t in team), "match_wall_s": time.perf_counter() - t0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.champion", description=__doc__.split("\n\n")[0])
    ap.add_argument("--params", default=str(PARAMS))
    ap.add_argument("--reports", default=str(REPORTS))
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("match").add_argument("name")
    sub.add_parser("report")
    args = ap.parse_args(argv)
    params = load_champion_params(args.params)
    if args.cmd == "match":
        r = play_match(args.name, params, args.reports)
        print(json.dumps({k: v for k, v in r.items() if k != "deal_wins"}, indent=2))
    else:
        from pipeline.champion_report import report

        print(report(params, args.reports))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

__all__ = ["load_champion_params", "play_match", "ChampionParams", "Match", "ChampionParamsError"]
