"""The baseline table: every rule agent against three copies of each study baseline, and the
public agent under its own rules. Writes JSON and Markdown (reports/baselines.*).

The public agent's weights are outside data that a fresh clone lacks: without them its rows are
left out and the report says so (``public_agent_note``), instead of the stage failing."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from climbrl.evaluate.match import run_match
from climbrl.paths import public_agent_missing

STUDY_BASELINES = ("random", "greedy", "heuristic")
RULE_AGENTS = ("random", "greedy", "heuristic", "aggressive", "conservative")


def baselines_report(games: int = 1000, seed: int = 0, workers: int = 2,
                     public_agent: bool = True) -> dict[str, Any]:
    rows = []
    start = time.perf_counter()
    missing = public_agent_missing() if public_agent else None
    for agent in RULE_AGENTS:
        for opp in STUDY_BASELINES:
            rows.append(run_match(agent, [opp], rules="paper", games=games, seed=seed, workers=workers))
    if public_agent and not missing:
        for opp in STUDY_BASELINES:
            rows.append(run_match("charlesworth:sample", [opp], rules="charlesworth", games=games,
                                  seed=seed, workers=workers))
    report = {"games_per_match": games, "seed": seed, "seconds": time.perf_counter() - start, "matches": rows}
    if missing:
        report["public_agent_note"] = f"The public agent (charlesworth) is left out: {missing}."
    return report


def to_markdown(report: dict[str, Any]) -> str:
    lines = [
        "| agent | rules | opponents (x3) | games | wins | win rate | 95% CI | normalized | mean reward |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["matches"]:
        lines.append(
            f"| {r['agent']} | {r['rules']} | {r['opponents'][0]} | {r['games']} | {r['wins']} | "
            f"{r['win_rate']:.3f} | [{r['win_rate_low']:.3f}, {r['win_rate_high']:.3f}] | "
            f"{r['normalized_win_rate']:.2f} | {r['mean_reward']:.3f} |"
        )
    if report.get("public_agent_note"):
        lines += ["", report["public_agent_note"]]
    return "\n".join(lines) + "\n"


def write_report(report: dict[str, Any], out_dir: str | Path) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "baselines.json").write_text(json.dumps(report, indent=2) + "\n")
    head = (f"# Baselines\n\nEach row: the agent against three copies of the opponent, "
            f"{report['games_per_match']} games = {report['games_per_match'] // 4} deals x 4 seats "
            f"(duplicate deals), seed {report['seed']}. Win rate with a 95% Wilson interval; "
            f"normalized = win rate / 0.25 (random play = 1.0).\n\n")
    (out / "baselines.md").write_text(head + to_markdown(report))
