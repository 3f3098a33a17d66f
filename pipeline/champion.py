"""The Big 2 champion beside the study (issue 12): its matches, measured like the study's.

``make champion`` runs ``dvc repro champion/dvc.yaml`` (not part of ``make run``) from
``champion/params.yaml``:

- ``match@NAME`` (``python -m pipeline.champion match NAME``; ``study-match@NAME`` for the
  matches of the study's PPO, which also depend on its checkpoint): one entry of ``matches``:
  the agent against three copies of the opponent on the first ``deals`` deals of ``deal_set``
  (the study's versioned evaluation deals), every deal from every seat, seat streams from
  ``seat_seed`` (:func:`climbrl.evaluate.match.deal_wins`, ``workers`` processes: the numbers do
  not depend on how many). It writes ``reports/champion/matches/NAME.json``: the wins deal by
  deal and the win rate with its Wilson interval. A team match (``team: true``) seats two of
  the agent across the table from two of the opponent instead and records the team's score.
- ``timing@NAME`` (``python -m pipeline.champion timing NAME``): the agent's CPU seconds per
  decision in the match's first ``timing_deals`` deals
  (:func:`climbrl.evaluate.decision_time.decision_seconds`: the same games, one decision at a
  time, one process), checked against the match (same wins in those games), in
  ``reports/champion/timing/NAME.json``. A stage of its own: changing ``timing_deals`` reruns
  no match.
- ``base`` (``python -m pipeline.champion base``): the base policy that the charlesworth-rule
  champion's search plays in its own seat (``own=base``), trained within the issue's budget (1
  CPU-hour) by behaviour cloning of a cheap search (:mod:`climbrl.learn.imitation`, the ``base``
  params) into ``runs/champion/base/policy.pt``; its settings, accuracy and CPU seconds in
  ``reports/champion/base.json``. The ``base_matches`` (``base-match@NAME``) depend on it.
- ``strong-match@NAME`` / ``strong-timing@NAME``: the ``strong_matches``, which play the shipped
  strong policy (``models/big2/policy.pt``, ``make strong``'s Deep Monte-Carlo network) alone and
  as the search's own and rollout model (issue 25), and depend on it.
- ``report`` (``python -m pipeline.champion report``, :mod:`pipeline.champion_report`):
  ``reports/champion/champion.md`` and ``champion.png``.

The champion's spec is chosen on the tuning matches (``run_match`` seed 12, disjoint deals;
``benchmarks/results/search_matches.json``), never on the deals it is reported on. A match that
needs the public agent's weights (outside the repository, ``../shared/external``) records why it
did not run instead of failing the pipeline, so a user without them still gets everything else;
once the weights are in place, ``dvc repro -f champion/dvc.yaml:match@NAME`` plays it (DVC does
not track files outside the repository).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pipeline  # noqa: F401  (environment defaults)
from climbrl.agents.runner import load_deal_seeds
from pipeline import params_io
from pipeline.external import external_missing
from pipeline.params_io import ParamsError

PARAMS = Path("champion/params.yaml")
REPORTS = Path("reports/champion")
BASE = Path("runs/champion/base")
"""Where the base stage writes the base policy (``policy.pt``) and its training record."""
STRONG = Path("models/big2/policy.pt")
"""The shipped Big 2 strong policy: the ``strong_matches`` play it."""
BASE_RULES = "charlesworth"
"""The base policy's rules: its network has the public agent's observation and action space."""
TRAINING_BUDGET_S = 3600.0
"""The issue's training budget: 1 CPU-hour."""


class ChampionParamsError(ParamsError):
    """A champion params file or match that cannot be played (``main``: status 2, one line)."""


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
    public_champion: str = ""
    """The champion under the public agent's rules (``charlesworth``), a search over the base policy."""
    team_champion: str = ""
    """Two of it against two of the public agent (a team match): the public champion choosing by its
    team's return (``value=team``)."""
    base: dict[str, Any] | None = None
    """The base policy's imitation settings (:class:`climbrl.learn.imitation.ImitationConfig` fields)."""

    @property
    def champions(self) -> tuple[str, ...]:
        return tuple(c for c in (self.champion, self.public_champion, self.team_champion) if c)


def load_champion_params(path: str | Path = PARAMS) -> ChampionParams:
    """``champion/params.yaml``, checked: a clear error for every wrong field."""
    raw = params_io.read(path)
    if not isinstance(raw, dict):
        raise ChampionParamsError(f"{path}: not a mapping")
    keys = {"champion", "public_champion", "rules", "deal_set", "seat_seed", "workers", "timing_deals", "base",
            "matches", "study_matches", "base_matches", "curve"}
    optional = {"team_champion", "strong_matches"}
    if not keys <= set(raw) <= keys | optional:
        raise ChampionParamsError(f"{path}: fields {sorted(keys)} expected (and optionally {sorted(optional)}), "
                                  f"missing {sorted(keys - set(raw))}, unknown {sorted(set(raw) - keys - optional)}")
    raw.setdefault("team_champion", "")
    raw["strong_matches"] = raw.get("strong_matches") or {}
    ints = {}
    for k, low, high in (("seat_seed", 0, params_io.SEED_MAX), ("workers", 1, params_io.WORKERS_MAX),
                         ("timing_deals", 0, params_io.DEALS_MAX)):
        v = raw[k]
        if not isinstance(v, int) or isinstance(v, bool) or v < low or (high is not None and v > high):
            raise ChampionParamsError(f"{path}: {k} must be an integer >= {low}"
                                      + (f" and <= {high:,}" if high is not None else "") + f", got {v!r}")
        ints[k] = v
    groups = ("matches", "study_matches", "base_matches", "strong_matches")
    if not all(isinstance(raw[g], dict) for g in groups) or not raw["matches"]:
        raise ChampionParamsError(f"{path}: matches, study_matches, base_matches and strong_matches must be mappings "
                                  "NAME: {agent, opponent, deals} (matches not empty)")
    seen: dict[str, str] = {}
    for g in groups:
        for name in raw[g]:
            if name in seen:
                raise ChampionParamsError(f"{path}: {name!r} named in both {seen[name]} and {g}")
            seen[name] = g
    base = _base_params(raw["base"], raw["workers"], path)
    matches = {}
    for name, m in {**raw["matches"], **raw["study_matches"], **raw["base_matches"], **raw["strong_matches"]}.items():
        if not isinstance(name, str):
            raise ChampionParamsError(f"{path}: match name {name!r} is not a string (YAML reads on/off/yes/no as "
                                      "booleans: quote it)")
        params_io.name(name, path, f"{seen[name]}")  # reports/champion/matches/NAME.json
        if not isinstance(m, dict) or not {"agent", "opponent", "deals"} <= set(m) or \
                set(m) - {"agent", "opponent", "deals", "rules", "team"}:
            raise ChampionParamsError(f"{path}: match {name!r} needs agent, opponent, deals (and may name rules, "
                                      f"team), got {m!r}")
        if not all(isinstance(m[k], str) and m[k] for k in ("agent", "opponent")) or \
                not isinstance(m.get("rules", ""), str):
            raise ChampionParamsError(f"{path}: match {name!r}: agent, opponent and rules must be strings, got {m!r}")
        if not isinstance(m.get("team", False), bool):
            raise ChampionParamsError(f"{path}: match {name!r}: team must be true or false, got {m['team']!r}")
        deals = m["deals"]
        if isinstance(deals, bool) or not isinstance(deals, int) or not 2 <= deals <= params_io.DEALS_MAX:
            raise ChampionParamsError(f"{path}: match {name!r}: deals must be an integer >= 2 (at most "
                                      f"{params_io.DEALS_MAX:,}), got {m['deals']!r}")
        matches[name] = Match(name, str(m["agent"]), str(m["opponent"]), m["deals"],
                              str(m.get("rules", raw["rules"])), m.get("team", False))
    if not isinstance(raw["curve"] or [], list):
        raise ChampionParamsError(f"{path}: curve must be a list of match names, got {raw['curve']!r}")
    curve = tuple(raw["curve"] or ())
    unknown = [c for c in curve if not isinstance(c, str) or c not in matches]
    if unknown or not curve:
        raise ChampionParamsError(f"{path}: curve must name matches (the figure's points), got unknown {unknown}"
                                  if unknown else f"{path}: curve must name at least one match (the figure's points)")
    if any(matches[c].team for c in curve) or len({(matches[c].opponent, matches[c].rules) for c in curve}) > 1:
        raise ChampionParamsError(f"{path}: curve: matches of one opponent under one rule set, none a team match "
                                  f"(the figure's y axis is one win rate), got {list(curve)}")
    for key in ("champion", "public_champion", "team_champion"):
        if (key == "champion" or raw[key]) and not any(m.agent == raw[key] and m.team == (key == "team_champion")
                                                       for m in matches.values()):
            raise ChampionParamsError(f"{path}: no {'team' if key == 'team_champion' else 'non-team'} match plays the "
                                      f"{key.replace('_', ' ')} {raw[key]!r} (write its spec, or the alias *{key}, "
                                      "as a match's agent)")
    for policy, group, what in ((BASE / "policy.pt", "base_matches", "the base policy"),
                                (STRONG, "strong_matches", "the strong policy")):
        uses = [n for n, m in matches.items()
                if any(os.path.normpath(p) == os.path.normpath(policy) for p in _checkpoints(m.agent))]
        misplaced = [n for n in uses if seen[n] != group]
        if misplaced:
            raise ChampionParamsError(f"{path}: {misplaced} play {what} ({policy}): list them under {group} (their "
                                      "stages depend on it)")
    return ChampionParams(str(raw["champion"]), str(raw["rules"]), str(raw["deal_set"]), matches=matches,
                          curve=curve, public_champion=str(raw["public_champion"] or ""),
                          team_champion=str(raw["team_champion"] or ""), base=base, **ints)


def _base_params(raw: Any, workers: Any, path: str | Path) -> dict[str, Any]:
    """The ``base`` section, checked by :class:`~climbrl.learn.imitation.ImitationConfig`."""
    from climbrl.learn.imitation import ImitationConfig

    allowed = {"teacher", "games", "seed", "holdout", "hidden", "epochs", "lr", "batch", "value_coef"}
    if not isinstance(raw, dict) or set(raw) - allowed:
        raise ChampionParamsError(f"{path}: base must be a mapping of {sorted(allowed)}, got {raw!r}")
    try:
        ImitationConfig(**raw, rules=BASE_RULES, workers=workers if isinstance(workers, int) else 1)
    except (TypeError, ValueError) as e:
        raise ChampionParamsError(f"{path}: base: {e}") from None
    return dict(raw)


def _checkpoints(spec: str) -> list[Path]:
    """The checkpoint paths an agent spec plays (``checkpoint:P`` or a search over one)."""
    return [Path(part.strip()[len("checkpoint:"):].partition("#")[0]) for part in
            spec.partition(":")[2].split(",") + [spec] if part.strip().startswith("checkpoint:")]


def train_base(params: ChampionParams, out: str | Path = BASE, reports: str | Path = REPORTS) -> dict[str, Any]:
    """The base policy (see the module docstring): ``out/policy.pt`` and ``reports/base.json``."""
    from climbrl.learn.imitation import ImitationConfig, imitate

    cfg = ImitationConfig(**(params.base or {}), rules=BASE_RULES, workers=params.workers)
    t0 = time.perf_counter()
    summary = imitate(cfg, out)
    record = {"policy": str(Path(out) / "policy.pt"), **summary, "wall_s": time.perf_counter() - t0,
              "budget_cpu_s": TRAINING_BUDGET_S, "within_budget": summary["cpu_s"] <= TRAINING_BUDGET_S}
    return _write(record, Path(reports) / "base.json")


def _match_setup(name: str, params: ChampionParams) -> tuple[Match, list[int], Any]:
    """The match, its deal seeds and its game (``big2`` under the match's rules)."""
    from climbrl.evaluate.match import game_name
    from climbrl.games.registry import make_game

    if name not in params.matches:
        raise ChampionParamsError(f"no match {name!r} in the champion's params (matches: {', '.join(params.matches)})")
    m = params.matches[name]
    try:
        seeds = load_deal_seeds(params.deal_set)
    except ValueError as e:
        raise ChampionParamsError(f"deal_set: {e}") from None
    if m.deals > len(seeds):
        raise ChampionParamsError(f"match {name!r}: {m.deals} deals, {params.deal_set} holds {len(seeds)}")
    return m, seeds[:m.deals], make_game(game_name("big2", m.rules))


def _write(record: dict[str, Any], path: Path) -> dict[str, Any]:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2) + "\n")
    return record


def play_match(name: str, params: ChampionParams, reports: str | Path = REPORTS) -> dict[str, Any]:
    """One match of ``params.matches`` (see the module docstring); writes and returns its record."""
    from climbrl.evaluate.match import deal_wins
    from climbrl.evaluate.stats import deal_record
    from pipeline.champion_report import deals_digest

    m, seeds, game = _match_setup(name, params)
    players = game.num_players
    record: dict[str, Any] = {"match": name, "agent": m.agent, "opponent": m.opponent, "rules": m.rules,
                              "deal_set": params.deal_set, "deals": m.deals, "seat_seed": params.seat_seed,
                              "deals_sha256": deals_digest(seeds)}
    missing = external_missing(m.agent) or external_missing(m.opponent)
    if missing:
        record["not_run"] = missing
    elif m.team:
        record.update(_team_match(m, params, seeds, game))
    else:
        t0 = time.perf_counter()
        per_deal = deal_wins(m.agent, [m.opponent], rules=m.rules, games=players * m.deals, seed=params.seat_seed,
                             workers=params.workers, seeds=seeds)
        record.update({**deal_record(per_deal, players), "match_wall_s": time.perf_counter() - t0})
    return _write(record, Path(reports) / "matches" / f"{name}.json")


def time_match(name: str, params: ChampionParams, reports: str | Path = REPORTS) -> dict[str, Any]:
    """The agent's seconds per decision in the first ``timing_deals`` deals of match ``name``,
    checked against the match's record (the same games: the same wins)."""
    from climbrl.evaluate.decision_time import decision_seconds

    m, seeds, game = _match_setup(name, params)
    players = game.num_players
    match_path = Path(reports) / "matches" / f"{name}.json"
    if not match_path.exists():
        raise FileNotFoundError(f"no record of match {name!r} at {match_path} (python -m pipeline.champion match "
                                f"{name} first)")
    played = json.loads(match_path.read_text())
    record: dict[str, Any] = {"match": name, "agent": m.agent, "opponent": m.opponent, "rules": m.rules}
    deals = min(params.timing_deals, m.deals)
    if "not_run" in played:
        record["not_timed"] = f"the match did not run: {played['not_run']}"
    elif not deals:
        record["not_timed"] = "timing_deals is 0"
    elif m.team:  # the agent's seat timed, its partner a copy of it; no per-deal record to check the games against
        t = decision_seconds(m.agent, [m.opponent, m.agent, m.opponent], m.rules, seeds[:deals], params.seat_seed)
        record.update({**t, "opponent": m.opponent, "team": True})
    else:
        t = decision_seconds(m.agent, m.opponent, m.rules, seeds[:deals], params.seat_seed)
        expected = sum(int(c) for c in played["deal_wins"][:deals])
        if t["wins"] != expected:
            raise RuntimeError(f"match {name!r}: the timed games won {t['wins']}, the match won {expected} of the same "
                               f"{players * deals} games: the timing did not replay the match")
        record.update(t)
    return _write(record, Path(reports) / "timing" / f"{name}.json")


def _team_match(m: Match, params: ChampionParams, seeds: list[int], game: Any) -> dict[str, Any]:
    """Two of the agent across the table from each other against two of the opponent (seats 0 and
    2 against 1 and 3, then swapped: every deal from every seat): the team's score per game (its
    two seats' returns summed; the rules are zero-sum, so 0 is parity), with a 95% interval over
    the deals' means (a deal's games are not independent)."""
    from climbrl.evaluate.match import relative_returns, team_scores

    players = game.num_players
    if players != 4 or abs(game.rules.returns_sum) > 1e-9:  # paper's rank rewards sum to 1e-16
        raise ChampionParamsError(f"match {m.name!r}: a team match needs four seats and zero-sum scores (parity at "
                                  f"0); rules {m.rules!r} have {players} seats, returns summing to "
                                  f"{game.rules.returns_sum}")
    t0 = time.perf_counter()
    rows = relative_returns(m.agent, [m.opponent, m.agent, m.opponent], rules=m.rules, games=players * m.deals,
                            seed=params.seat_seed, workers=params.workers, seeds=seeds)
    return {"team": True, **team_scores(rows, players), "match_wall_s": time.perf_counter() - t0}


@params_io.command("python -m pipeline.champion")
def main(argv: list[str] | None = None) -> int:
    ap = params_io.ArgumentParser(prog="python -m pipeline.champion", description=__doc__.split("\n\n")[0])
    ap.add_argument("--params", default=str(PARAMS))
    ap.add_argument("--reports", default=str(REPORTS))
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("match", help="play one match").add_argument("name")
    sub.add_parser("timing", help="time the agent's decisions in one match's first deals").add_argument("name")
    sub.add_parser("base", help="train the base policy (runs/champion/base, reports/champion/base.json)")
    sub.add_parser("report", help="reports/champion/champion.md and champion.png")
    args = ap.parse_args(argv)
    params = load_champion_params(args.params)
    if args.cmd == "base":
        r = train_base(params, reports=args.reports)
        print(json.dumps({k: v for k, v in r.items() if k != "config"}, indent=2))
    elif args.cmd in ("match", "timing"):
        r = (play_match if args.cmd == "match" else time_match)(args.name, params, args.reports)
        print(json.dumps({k: v for k, v in r.items() if k != "deal_wins"}, indent=2))
    else:
        from pipeline.champion_report import report

        print(report(params, args.reports))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

__all__ = ["load_champion_params", "play_match", "time_match", "train_base", "ChampionParams", "Match",
           "ChampionParamsError"]
