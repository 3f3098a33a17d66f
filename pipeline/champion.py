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
- ``report`` (``python -m pipeline.champion report``): ``reports/champion/champion.md`` (every
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
CHAMPION = "champion"
"""The name a match uses for the champion's spec."""


class ChampionParamsError(ValueError):
    pass


@dataclass(frozen=True)
class Match:
    name: str
    agent: str
    opponent: str
    deals: int
    rules: str


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

    def spec(self, agent: str) -> str:
        return self.champion if agent == CHAMPION else agent


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
                set(m) - {"agent", "opponent", "deals", "rules"}:
            raise ChampionParamsError(f"{path}: match {name!r} needs agent, opponent, deals (and may name rules), "
                                      f"got {m!r}")
        if not isinstance(m["deals"], int) or m["deals"] < 2:
            raise ChampionParamsError(f"{path}: match {name!r}: deals must be an integer >= 2, got {m['deals']!r}")
        matches[name] = Match(name, str(m["agent"]), str(m["opponent"]), m["deals"],
                                   str(m.get("rules", raw["rules"])))
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
    agent = params.spec(m.agent)
    opponent = params.spec(m.opponent)
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


def paired_difference(a: str, b: str) -> dict[str, float]:
    """Win rate of ``a`` minus ``b`` on the deals both played (each a string of per-deal wins,
    the first ``min`` deals), with a normal 95% interval over the deals' differences."""
    from climbrl.evaluate.stats import mean_interval

    n = min(len(a), len(b))
    diffs = [(int(x) - int(y)) / 4 for x, y in zip(a[:n], b[:n], strict=True)]
    mean, lo, hi = mean_interval(diffs)
    return {"deals": n, "difference": mean, "low": lo, "high": hi}


def _fmt_rate(r: dict[str, Any]) -> str:
    return f"{r['win_rate']:.3f} [{r['win_rate_low']:.3f}, {r['win_rate_high']:.3f}]"


def _fmt_s(t: dict[str, Any] | None, key: str) -> str:
    return f"{t[key]:.4f}" if t and key in t else ""


TARGETS = (  # (match, what the issue asks of its lower bound or point, threshold)
    ("heuristic", "win rate", 0.50),
    ("heuristic", "lower bound", 0.47),
    ("greedy-model", "win rate", 0.45),
    ("public", "lower bound", 0.25),
    ("public", "win rate", 0.35),
)


def report(params: ChampionParams, reports: str | Path = REPORTS) -> Path:
    """``champion.md`` and ``champion.png`` from the match records."""
    reports = Path(reports)
    missing = [name for name in params.matches if not (reports / "matches" / f"{name}.json").exists()]
    if missing:
        raise FileNotFoundError(f"no record under {reports / 'matches'} of the matches {', '.join(missing)} (run "
                                f"python -m pipeline.champion match NAME for each, or make champion)")
    records = {name: json.loads((reports / "matches" / f"{name}.json").read_text()) for name in params.matches}
    played = {k: r for k, r in records.items() if "not_run" not in r}
    lines = ["# The Big 2 champion (issue 12)", "",
             f"Champion: `{params.champion}`. Every match: the agent against three copies of the opponent on the "
             f"first N deals of `{params.deal_set}` (the study's versioned evaluation deals), each deal from every "
             f"seat, seat seed {params.seat_seed}; 95% Wilson intervals. Seconds: the agent's CPU time per "
             f"decision on one core, every decision of the match's first {params.timing_deals} deals (searched: "
             "the decisions it searched; the rest are forced or trivial).", "",
             "| match | agent | opponent (x3) | rules | games | win rate [95% CI] | s/decision | s/searched "
             "decision | p95 | max |", "|---|---|---|---|---|---|---|---|---|---|"]
    for k, r in records.items():
        if "not_run" in r:
            lines.append(f"| {k} | `{r['agent']}` | {r['opponent']} | {r['rules']} | not run: {r['not_run']} "
                         "| | | | | |")
            continue
        t = r.get("timing")
        lines.append(f"| {k} | `{r['agent']}` | {r['opponent']} | {r['rules']} | {r['games']} | {_fmt_rate(r)} | "
                     f"{_fmt_s(t, 'cpu_s_per_decision')} | {_fmt_s(t, 'cpu_s_per_searched_decision')} | "
                     f"{_fmt_s(t, 'p95_cpu_s_per_decision')} | {_fmt_s(t, 'max_cpu_s_per_decision')} |")
    champ = {k: r for k, r in played.items() if r["agent"] == params.champion}
    pairs = []
    for ck, c in champ.items():
        for k, r in played.items():
            if k != ck and r["opponent"] == c["opponent"] and r["rules"] == c["rules"]:
                pairs.append((ck, k, paired_difference(c["deal_wins"], r["deal_wins"])))
    if pairs:
        lines += ["", "## The champion against every other agent on the same deals", "",
                  "Win rate of the champion minus the other agent's, on the deals both played (same opponents, "
                  "rules and seat streams), with a 95% interval over the deals' differences.", "",
                  "| champion's match | other match | other agent | deals | difference [95% CI] |",
                  "|---|---|---|---|---|"]
        for ck, k, d in pairs:
            lines.append(f"| {ck} | {k} | `{played[k]['agent']}` | {d['deals']} | {d['difference']:+.3f} "
                         f"[{d['low']:+.3f}, {d['high']:+.3f}] |")
    checks = []
    for k, what, threshold in TARGETS:
        if k not in played:
            continue
        r = played[k]
        value = r["win_rate"] if what == "win rate" else r["win_rate_low"]
        verdict = "met" if value >= threshold else "missed"
        checks.append(f"| {k} | {what} >= {threshold:.2f} | {value:.3f} | {verdict} |")
    if checks:
        lines += ["", "## The issue's targets", "", "| match | target | measured | |", "|---|---|---|---|", *checks]
    timed = [r["timing"]["max_cpu_s_per_decision"] for r in champ.values() if "timing" in r]
    if timed:
        lines += ["", f"The champion's slowest timed decision: {max(timed):.3f} s."]
    if params.curve:
        _plot([played[k] for k in params.curve if k in played and "timing" in played[k]], reports / "champion.png")
        lines += ["", "![win rate against seconds per decision](champion.png)"]
    out = reports / "champion.md"
    out.write_text("\n".join(lines) + "\n")
    return out


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    if rows:
        xs = [max(r["timing"]["cpu_s_per_decision"], 1e-5) for r in rows]
        ys = [r["win_rate"] for r in rows]
        err = [[y - r["win_rate_low"] for y, r in zip(ys, rows, strict=True)],
               [r["win_rate_high"] - y for y, r in zip(ys, rows, strict=True)]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3)
        for x, y, r in zip(xs, ys, rows, strict=True):
            ax.annotate(r["match"], (x, y), textcoords="offset points", xytext=(4, -10), fontsize=8)
        ax.set_xscale("log")
        ax.set_title(f"against three {rows[0]['opponent']} players ({rows[0]['rules']} rules)")
    ax.set_xlabel("CPU seconds per decision (one core, mean)")
    ax.set_ylabel("win rate (95% CI)")
    ax.axhline(0.25, color="grey", lw=0.8, ls=":")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


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
        print(report(params, args.reports))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

__all__ = ["load_champion_params", "play_match", "paired_difference", "report", "ChampionParams", "Match",
           "ChampionParamsError"]
