"""The baseline table: every rule agent that plays the game against a copy of each study baseline
in every other seat (Big 2: three copies; Dou Dizhu: two), and, in Big 2, the public agent under
its own rules. Writes JSON and Markdown (reports/baselines.*).

The agents come from :data:`climbrl.config.GAME_SETUP` (Big 2: the five rule agents against
random, greedy and heuristic; Dou Dizhu: random and greedy against each other). A free-for-all
game's table has the normalized win rate (win rate / chance, 1 / players); a team game's has each
role's win rate instead (the ``by_role`` of the match summaries). The JSON of a Big 2 table keeps
the layout it had before the second game; another game's names the game (``"game"``).

The public agent's weights are outside data that a fresh clone lacks: without them its rows are
left out and the report says so (``public_agent_note``), instead of the stage failing."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from climbrl.config import GAME_SETUP
from climbrl.evaluate.match import run_match
from climbrl.evaluate.stats import format_interval
from climbrl.games.registry import DEFAULT_PRESETS, num_players
from climbrl.paths import public_agent_missing

STUDY_BASELINES = GAME_SETUP["big2"].baselines
RULE_AGENTS = GAME_SETUP["big2"].rule_agents
"""Big 2's (the names this module has always exported); other games: :data:`GAME_SETUP`."""

_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


def baselines_report(games: int = 1000, seed: int = 0, workers: int = 2, public_agent: bool = True,
                     game: str = "big2", rules: str = "") -> dict[str, Any]:
    """Every rule agent of ``game`` against each of its baselines, ``games`` games per match under
    ``rules`` (default: the game's default preset); the public agent (Big 2 only) unless
    ``public_agent`` is false. The deals are the table's own: ``deal_seeds(seed, n, "baselines")``
    (:func:`climbrl.agents.runner.deal_seeds`), shared with no other purpose."""
    if game not in GAME_SETUP:
        raise ValueError(f"unknown game {game!r} (games: {', '.join(GAME_SETUP)})")
    setup = GAME_SETUP[game]
    rules = rules or DEFAULT_PRESETS[game]
    public_agent = public_agent and game == "big2"  # the public agent plays Big 2 only
    rows = []
    start = time.perf_counter()
    missing = public_agent_missing() if public_agent else None
    if duel_rules(game, rules):
        return _duel_table(game, rules, games, seed, workers)
    for agent in setup.rule_agents:
        for opp in setup.baselines:
            rows.append(run_match(agent, [opp], rules=rules, games=games, seed=seed, workers=workers, game=game,
                                  purpose="baselines"))
    if public_agent and not missing:
        for opp in setup.baselines:
            rows.append(run_match("charlesworth:sample", [opp], rules="charlesworth", games=games,
                                  seed=seed, workers=workers, purpose="baselines"))
    report: dict[str, Any] = {"games_per_match": games, "seed": seed, "seconds": time.perf_counter() - start,
                              "matches": rows}
    if game != "big2":
        report = {"game": game, **report}
    if missing:
        report["public_agent_note"] = f"The public agent (charlesworth) is left out: {missing}."
    return report


def duel_rules(game: str, rules: str) -> bool:
    """Whether ``game`` under ``rules`` is judged by DouZero's protocol (a team game with a fixed
    landlord seat: :mod:`climbrl.evaluate.duel`)."""
    from climbrl.games.registry import make_game

    g = make_game(f"{game}:{rules}")
    return len(g.roles) > 1 and getattr(getattr(g, "rules", None), "landlord", None) is not None


def games_per_deal(game: str, rules: str) -> int:
    """The games one deal gives in a match of ``game`` under ``rules``: one per seat, or two under
    DouZero's protocol (:func:`duel_rules`: A as landlord, then B). A match's ``games`` (the
    study's ``evaluate.games``, ``baselines.games``, a CI gate's ``evaluate.games``) counts games
    played, so it plays ``games // games_per_deal`` deals."""
    return 2 if duel_rules(game, rules) else num_players(game)


def _duel_table(game: str, rules: str, games: int, seed: int, workers: int) -> dict[str, Any]:
    """A fixed-landlord team game's table: every rule agent (and RLCard's rule agent, when its
    optional package is installed) in a duel against each baseline and RLCard's, ``games // 2``
    deals each (``games`` games), every deal once with the agent as landlord and once as the peasants.
    RLCard's rule agent against itself is the reference its own README measures (rule vs rule)."""
    from climbrl.agents.external.rlcard_rule import SPEC, rlcard_missing
    from climbrl.evaluate.duel import team_match

    setup = GAME_SETUP[game]
    missing = rlcard_missing()
    outside = [] if missing else [SPEC]
    start = time.perf_counter()
    if games < 2 or games % 2:
        raise ValueError(f"games must be a positive multiple of 2 (every deal played twice: A as landlord, "
                         f"then B), got {games}")
    deals = games // 2
    rows = [team_match(agent, opp, game=game, rules=rules, deals=deals, seed=seed, workers=workers,
                       per_deal=False, purpose="baselines") | {"agent": agent, "opponents": [opp]}
            for agent in [*setup.rule_agents, *outside] for opp in [*setup.baselines, *outside]]
    report: dict[str, Any] = {"game": game, "protocol": "duel", "rules": rules, "deals_per_match": deals,
                              "games_per_match": 2 * deals, "seed": seed, "seconds": time.perf_counter() - start,
                              "matches": rows}
    if missing:
        report["outside_agent_note"] = f"RLCard's rule agent is left out: {missing}."
    return report


def _duel_markdown(report: dict[str, Any]) -> str:
    lines = ["| agent | opponent | landlord WP | peasants WP | WP (both) | ADP (both) |", "|---|---|---|---|---|---|"]
    for r in report["matches"]:
        a = r["A"]
        cells = [f"{a[x]['win_rate']:.3f} [{a[x]['win_rate_low']:.3f}, {a[x]['win_rate_high']:.3f}]"
                 for x in ("landlord", "peasants", "both")]
        adp = f"{a['both']['adp']:+.3f} {format_interval(a['both']['adp_low'], a['both']['adp_high'], '+.3f')}"
        lines.append(f"| {r['agent']} | {r['opponents'][0]} | " + " | ".join(cells) + f" | {adp} |")
    if report.get("outside_agent_note"):
        lines += ["", report["outside_agent_note"]]
    return "\n".join(lines) + "\n"


def _roles(report: dict[str, Any]) -> list[str]:
    """The roles of a team game's table, in the order of the first match that holds them."""
    return list(dict.fromkeys(role for r in report["matches"] for role in r.get("by_role", {})))


def to_markdown(report: dict[str, Any]) -> str:
    if report.get("protocol") == "duel":
        return _duel_markdown(report)
    opponents = num_players(report.get("game", "big2")) - 1
    roles = _roles(report)
    lines = [
        f"| agent | rules | opponents (x{opponents}) | games | wins | win rate | 95% CI | "
        + ("".join(f"{role} | " for role in roles) if roles else "normalized | ") + "mean reward |",
        "|---|---|---|---|---|---|---|" + "---|" * max(1, len(roles)) + "---|",
    ]
    for r in report["matches"]:
        if roles:
            by_role = r.get("by_role", {})
            extra = "".join(f"{by_role[x]['win_rate']:.3f} (n={by_role[x]['games']}) | " if x in by_role else "- | "
                            for x in roles)
        else:
            extra = f"{r['normalized_win_rate']:.2f} | "
        lines.append(
            f"| {r['agent']} | {r['rules']} | {r['opponents'][0]} | {r['games']} | {r['wins']} | "
            f"{r['win_rate']:.3f} | [{r['win_rate_low']:.3f}, {r['win_rate_high']:.3f}] | "
            f"{extra}{r['mean_reward']:.3f} |"
        )
    if report.get("public_agent_note"):
        lines += ["", report["public_agent_note"]]
    return "\n".join(lines) + "\n"


def write_report(report: dict[str, Any], out_dir: str | Path) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "baselines.json").write_text(json.dumps(report, indent=2, allow_nan=False) + "\n")
    game = report.get("game", "big2")
    if report.get("protocol") == "duel":
        head = (f"# Baselines\n\nEach row: a duel on {report['deals_per_match']} deals (seed {report['seed']}) of "
                f"{GAME_SETUP[game].title}, rules `{report['rules']}` (DouZero's protocol): the agent as landlord "
                "against two copies of the opponent, then as both peasants against it, on the same cards. WP with "
                "its 95% interval (Wilson by role; over both roles, Student t on the per-deal values); ADP, DouZero's "
                "average difference in points (+/-2 x 2^bombs per game).\n\n")
        (out / "baselines.md").write_text(head + to_markdown(report))
        return
    n = num_players(game)
    g = report["games_per_match"]
    scale = ("by role: the agent's win rate in that role and its number of games" if _roles(report)
             else f"normalized = win rate / {1 / n:g} (random play = 1.0)")
    where = "" if game == "big2" else f"{GAME_SETUP[game].title}, "
    head = (f"# Baselines\n\nEach row: the agent against {_WORDS.get(n - 1, str(n - 1))} copies of the opponent, "
            f"{where}{g} games = {g // n} deals x {n} seats "
            f"(duplicate deals), seed {report['seed']}. Win rate with a 95% Wilson interval; "
            f"{scale}.\n\n")
    (out / "baselines.md").write_text(head + to_markdown(report))
