"""The champion's report (``python -m pipeline.champion report``): ``reports/champion/champion.md``
and ``champion.png`` from the match records that ``pipeline/champion.py`` wrote.

- Every match: win rate with its Wilson interval and the agent's CPU seconds per decision (a
  team match: the team's score per game).
- Every other agent against the champion on the deals both played, with the same opponent and
  rules (the same seat streams): a paired difference per deal, with a Student t 95% interval over
  the deals' differences (deals - 1 degrees of freedom).
- The issue's targets (issue 12), each checked against the measured point or lower bound, and the
  base policy's training (``base.json``) against the 1 CPU-hour budget.
- The figure: win rate against seconds per decision of the ``curve`` matches.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def paired_difference(a: str, b: str, players: int = 4) -> dict[str, float | None]:
    """Win rate of ``a`` minus ``b`` on the deals both played (each a string of per-deal wins out
    of ``players`` games, the first ``min`` deals), with a Student t 95% interval over the deals'
    differences (deals - 1 degrees of freedom) and its two-sided p-value. Differences without
    spread (the same on every deal) have no interval (``None``,
    :func:`climbrl.evaluate.stats.mean_summary`) and the sign test's p-value: 1 for a difference
    of 0, else ``2^(1 - deals)``."""
    from scipy import stats

    from climbrl.evaluate.stats import mean_summary

    n = min(len(a), len(b))
    diffs = [(int(x) - int(y)) / players for x, y in zip(a[:n], b[:n], strict=True)]
    m = mean_summary(diffs)
    mean = m["mean"]
    if m["se"] is None:
        p = 1.0 if mean == 0 else min(1.0, 2.0 ** (1 - n))
    else:
        p = float(2 * stats.t.sf(abs(mean) / m["se"], m["df"]))
    return {"deals": n, "difference": mean, "low": m["low"], "high": m["high"], "p": p}


def _fmt_rate(r: dict[str, Any]) -> str:
    return f"{r['win_rate']:.3f} [{r['win_rate_low']:.3f}, {r['win_rate_high']:.3f}]"


def _fmt_s(t: dict[str, Any] | None, key: str) -> str:
    return f"{t[key]:.4f}" if t and t.get(key) is not None else ""


TARGETS = (  # (match, what the issue asks: of the point or of the interval's lower bound, comparison, threshold,
             # a note)
    ("heuristic", "win rate", ">=", 0.50, ""),
    ("heuristic", "lower bound", ">=", 0.47, ""),
    ("greedy-model", "win rate", ">=", 0.45, ""),
    # against the public agent, the search that models the opponents with our own base policy: what
    # a rival without the public agent's network could run (issue 29); the search that models them
    # with the public agent's own network ("public-base") is a reference only
    ("public-base-own-model", "lower bound", ">", 0.25, ""),
    ("public-base-own-model", "win rate", ">=", 0.35, ""),
    ("public-base", "lower bound", ">", 0.25, " (reference: the public agent's network as the opponent model)"),
)
WITH_SEARCH = ("dmc-search", "dmc-alone")
"""The shipped strong policy as the search's own and rollout model, and the policy alone (issue 25)."""
HEADLINE = "public-base-own-model"
"""The match that leads the report: the search over our base policy against three public agents,
modelling them with our own policy."""
REFERENCE = "public-base"
SECONDS_TARGET = 0.2
"""The issue's budget at play time: CPU seconds per decision on one core (the mean)."""


def _load(reports: Path, folder: str, names: list[str], command: str) -> dict[str, dict[str, Any]]:
    missing = [k for k in names if not (reports / folder / f"{k}.json").exists()]
    if missing:
        raise FileNotFoundError(f"no record under {reports / folder} of the matches {', '.join(missing)} (run "
                                f"python -m pipeline.champion {command} NAME for each, or make champion)")
    return {k: json.loads((reports / folder / f"{k}.json").read_text()) for k in names}


def report(params: Any, reports: str | Path) -> Path:
    """``champion.md`` and ``champion.png`` under ``reports`` from the match and timing records
    there; ``params``: a :class:`pipeline.champion.ChampionParams` (not imported: that module's
    command line imports this one)."""
    from climbrl.evaluate.stats import format_interval, holm

    reports = Path(reports)
    records = _load(reports, "matches", list(params.matches), "match")
    timing = _load(reports, "timing", list(params.matches), "timing")
    played = {k: r for k, r in records.items() if "not_run" not in r and not r.get("team")}
    teams = {k: r for k, r in records.items() if r.get("team")}
    lines = ["# The Big 2 champion (issue 12)", "",
             f"Champion: `{params.champion}`. Every match: the agent against three copies of the opponent (a team "
             "match: two of the agent across the table against two of the opponent) on the first N deals of "
             f"`{params.deal_set}` (the study's versioned evaluation deals), each deal from every seat, seat seed "
             f"{params.seat_seed}; win rates with 95% Wilson intervals. Seconds: the agent's CPU time per decision "
             f"on one core, every decision of the match's first {params.timing_deals} deals (searched: the "
             "decisions it searched; the rest are forced or trivial).", "",
             *_stale_lines(params, records),
             *_headline_lines(records),
             "## Every match", "",
             "| match | agent | opponents | rules | games | win rate [95% CI] | s/decision | s/searched "
             "decision | p95 | max |", "|---|---|---|---|---|---|---|---|---|---|"]
    for k, r in records.items():
        t = timing[k] if "not_timed" not in timing[k] else None
        if "not_run" in r:
            lines.append(f"| {k} | `{r['agent']}` | {r['opponent']} | {r['rules']} | not run: {r['not_run']} "
                         "| | | | | |")
        else:
            seconds = (f"{_fmt_s(t, 'cpu_s_per_decision')} | {_fmt_s(t, 'cpu_s_per_searched_decision')} | "
                       f"{_fmt_s(t, 'p95_cpu_s_per_decision')} | {_fmt_s(t, 'max_cpu_s_per_decision')} |")
            if r.get("team"):
                lines.append(f"| {k} | `{r['agent']}` x2 | {r['opponent']} x2 | {r['rules']} | {r['games']} | team "
                             f"score {r['team_score']:+.3f} "
                             f"{format_interval(r['team_score_low'], r['team_score_high'], '+.3f')} "
                             f"per game | {seconds}")
            else:
                lines.append(f"| {k} | `{r['agent']}` | {r['opponent']} x3 | {r['rules']} | {r['games']} | "
                             f"{_fmt_rate(r)} | {seconds}")
    champions = tuple(getattr(params, "champions", (params.champion,)))
    public = getattr(params, "public_champion", "")
    # a match of a champion under its own rules: the paper champion under the params' rules, the
    # public champion under the public agent's (the paper champion's search against the public
    # agent is one more agent the public champion is compared with), and the headline's search
    champ = {k: r for k, r in played.items()
             if (r["agent"] == params.champion and r["rules"] == params.rules) or (public and r["agent"] == public)
             or k == HEADLINE}
    pairs = []
    for ck, c in champ.items():
        for k, r in played.items():
            if k != ck and not any((k, ck) == p[:2] for p in pairs) and \
                    _pairing_key(r) == _pairing_key(c):
                # each pair once, on the same deals (a record without the digest pairs with its like only)
                pairs.append((ck, k, paired_difference(c["deal_wins"], r["deal_wins"], c["games"] // c["deals"])))
    if pairs:
        significant = holm([d["p"] for _, _, d in pairs])
        lines += ["", "## The champion against every other agent on the same deals", "",
                  "Win rate of the champion minus the other agent's, on the deals both played (same opponents, "
                  "rules and seat streams), with a 95% interval over the deals' differences; significant: Holm's "
                  f"correction over these {len(pairs)} comparisons (family-wise 5%).", "",
                  "| champion's match | other match | other agent | deals | difference [95% CI] | significant |",
                  "|---|---|---|---|---|---|"]
        for (ck, k, d), sig in zip(pairs, significant, strict=True):
            lines.append(f"| {ck} | {k} | `{played[k]['agent']}` | {d['deals']} | {d['difference']:+.3f} "
                         f"{format_interval(d['low'], d['high'], '+.3f')} | {'yes' if sig else 'no'} |")
    lines += _with_search_lines(played)
    checks = []
    for k, what, op, threshold, note in TARGETS:
        if k not in records:
            continue
        r = records[k]
        if "not_run" in r:
            checks.append(f"| {k} | {what} {op} {threshold:.2f}{note} | not run | |")
            continue
        value = r["win_rate"] if what == "win rate" else r["win_rate_low"]  # else: a lower bound
        verdict = "met" if (value > threshold if op == ">" else value >= threshold) else "missed"
        checks.append(f"| {k} | {what} {op} {threshold:.2f}{note} | {_fmt_rate(r)} | {verdict} |")
    for k, r in teams.items():
        verdict = "met" if r["team_score_low"] is not None and r["team_score_low"] > 0 else "missed"
        checks.append(f"| {k} | team score per game: lower bound > 0 | {r['team_score']:+.3f} "
                      f"{format_interval(r['team_score_low'], r['team_score_high'], '+.3f')} | {verdict} |")
    timed = [k for k in [*champ, *(k for k, r in teams.items() if r["agent"] in champions)]
             if "not_timed" not in timing[k]]
    if timed:
        worst = max(timing[k]["cpu_s_per_decision"] for k in timed)
        checks.append(f"| {', '.join(timed)} | CPU s per decision <= "
                      f"{SECONDS_TARGET} (mean) | {worst:.3f} (the largest of the matches' means) | "
                      f"{'met' if worst <= SECONDS_TARGET else 'missed'} |")
    base = _base_section(reports, checks)
    if checks:
        lines += ["", "## The issue's targets", "", "| match | target | measured | |", "|---|---|---|---|", *checks]
    lines += base
    for c in champions:
        times = [(k, timing[k]) for k in timed if records[k]["agent"] == c]
        if times:
            k, t = max(times, key=lambda kt: kt[1]["max_cpu_s_per_decision"])
            lines += ["", f"`{c}`: its slowest timed decision took {t['max_cpu_s_per_decision']:.3f} s (match {k})."]
    _plot([{**played[k], "timing": timing[k],
             "match": f"{k} (champion)" if played[k]["agent"] in champions else k}
            for k in params.curve if k in played and "not_timed" not in timing[k]], reports / "champion.png")
    lines += ["", "![win rate against seconds per decision](champion.png)"]
    out = reports / "champion.md"
    out.write_text("\n".join(lines) + "\n")
    return out


def _pairing_key(r: dict[str, Any]) -> tuple:
    """What two match records must share to be paired deal by deal: the opponent, the rules, the deal
    set and its digest (a record without one pairs with its like only), and the seat streams."""
    return r["opponent"], r["rules"], r["deal_set"], r.get("deals_sha256"), r["seat_seed"]


def _with_search_lines(played: dict[str, dict[str, Any]]) -> list[str]:
    """The strong policy with search against alone (:data:`WITH_SEARCH`), paired on the deals both
    played, when both matches were played on the same deals."""
    from climbrl.evaluate.stats import format_interval

    a, b = WITH_SEARCH
    if a not in played or b not in played:
        return []
    x, y = played[a], played[b]
    if _pairing_key(x) != _pairing_key(y):
        return []
    d = paired_difference(x["deal_wins"], y["deal_wins"], x["games"] // x["deals"])
    return ["", "## The strong policy with and without search (issue 25)", "",
            f"`{x['agent']}` against `{y['agent']}` (the shipped `make strong` policy alone), both against three "
            f"{x['opponent']} players on the same {d['deals']} deals from every seat: {_fmt_rate(x)} against "
            f"{_fmt_rate(y)}, a difference of {d['difference']:+.3f} {format_interval(d['low'], d['high'], '+.3f')} "
            f"(paired over the deals, p = {d['p']:.2g}). One training of the policy: a difference over training "
            "seeds is not measured here."]


def deals_digest(seeds: list[int]) -> str:
    """The SHA-256 of the deal seeds a match played (the report checks its records against the
    deal set as it is now: the file's name alone does not say which deals it held then)."""
    import hashlib

    return hashlib.sha256(",".join(map(str, seeds)).encode()).hexdigest()


def _stale_lines(params: Any, records: dict[str, dict[str, Any]]) -> list[str]:
    """A warning naming the records played on other deals than the deal set holds now (a record
    without the deals' digest predates it)."""
    from climbrl.agents.runner import load_deal_seeds

    seeds = load_deal_seeds(params.deal_set)
    stale = [k for k, r in records.items()
             if "not_run" not in r and r.get("deals_sha256") != deals_digest(seeds[:r["deals"]])]
    if not stale:
        return []
    return ["## Records of other deals", "",
            f"**{len(stale)} of {len(records)} records were played on other deals than the first N of "
            f"`{params.deal_set}` as it is now** ({', '.join(stale)}): their numbers hold for the deals they were "
            "played on (a record without the deals' SHA-256 predates it; the evaluation deal set was redrawn for its "
            "own purpose in issue 29), and `make champion` replays them on the current deals.", ""]


def _headline_lines(records: dict[str, dict[str, Any]]) -> list[str]:
    """The headline against the public agent: the search with our own opponent model, and beside it
    (a reference) the same search modelling the opponents with the public agent's network, which
    only a player holding that network can use."""
    head, ref = records.get(HEADLINE), records.get(REFERENCE)
    if head is None or "not_run" in head:
        why = "not played" if head is None else f"not run: {head['not_run']}"
        return ["## Headline", "", f"Against three copies of the public agent: {why}.", ""]
    lines = ["## Headline", "",
             f"Against three copies of the public agent, under its rules ({head['games']} games, every deal from "
             f"every seat): the search over our base policy, modelling the opponents with that same policy of "
             f"ours, wins **{_fmt_rate(head)}** (`{head['agent']}`; 0.25 is an equal share)."]
    if ref is not None and "not_run" not in ref:
        lines.append(f"For reference only: modelling them with the public agent's own network, which a rival "
                     f"does not hand out, the same search wins {_fmt_rate(ref)} (`{ref['agent']}`, "
                     f"{ref['games']} games).")
    return lines + [""]


def _base_section(reports: Path, checks: list[str]) -> list[str]:
    """The base policy's training (``base.json``, when the base stage ran): its lines, and its
    budget row appended to ``checks``."""
    path = reports / "base.json"
    if not path.exists():
        return []
    b = json.loads(path.read_text())
    cfg = b["config"]
    checks.append(f"| base | training CPU s <= {b['budget_cpu_s']:.0f} (1 CPU-hour) | {b['cpu_s']:.0f} "
                  f"(teacher's games {b['collect_cpu_s']:.0f}, fit {b['fit_cpu_s']:.0f}) | "
                  f"{'met' if b['within_budget'] else 'missed'} |")
    curve = ", ".join(f"{a:.3f}" for a in b.get("epoch_holdout_accuracy", []) if a is not None)
    held = (f"picks the teacher's move in {b['holdout_accuracy']:.3f} of {b['holdout_decisions']} held-out decisions "
            f"after {cfg['epochs']} epochs (after each epoch: {curve})" if b["holdout_accuracy"] is not None
            else "was measured on no held-out game (holdout 0)")
    return ["", "## The base policy", "",
            f"`{b['policy']}`: behaviour cloning of `{cfg['teacher']}` ({cfg['rules']} rules), which played every seat "
            f"of {cfg['games']} games (seed {cfg['seed']}): {b['decisions']} decisions with a choice, the last "
            f"{cfg['holdout']:.0%} of the games held out. The student, a network of the public agent's shape (412 "
            f"inputs, {cfg['hidden']} and {cfg['hidden'] // 2} units, 1695 actions; `big2-charlesworth` encoder), "
            f"{held}. CPU time: {b['cpu_s']:.0f} s "
            f"({b['wall_s']:.0f} s of wall time)."]


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
    else:
        ax.text(0.5, 0.5, "no timed match of the curve has run", ha="center", transform=ax.transAxes)
    ax.set_xlabel("CPU seconds per decision (one core, mean)")
    ax.set_ylabel("win rate (95% CI)")
    ax.axhline(0.25, color="grey", lw=0.8, ls=":")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


__all__ = ["paired_difference", "report", "TARGETS"]
