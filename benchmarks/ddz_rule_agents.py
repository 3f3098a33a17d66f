"""Dou Dizhu's rule agents by role (the tables of docs/agents.md, "Dou Dizhu's rule agents" and
"RLCard's rule agent"): every row is one documented command,

    climbrl evaluate --game doudizhu --rules R --agent A --opponents B --games 3000 --seed 0 --json

(1000 deals, every deal from every seat: under `rlcard` the landlord is seat 0, so 1000 games in each
role; under `standard` the role is what the auction gave). Writes benchmarks/results/ddz_rule_agents.json,
``{"RULES/AGENT/OPPONENT": the command's JSON}``; the docs read their tables from it at build time.

Run: ``.venv/bin/python benchmarks/ddz_rule_agents.py`` (one core; about 15 s a row; the `rlcard-rule` rows
need the optional extra `rlcard`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "results" / "ddz_rule_agents.json"
RLCARD_ROWS = [("random", "random"), ("greedy", "greedy"), ("heuristic", "heuristic"), ("heuristic", "random"),
               ("heuristic", "greedy"), ("heuristic", "aggressive"), ("heuristic", "conservative"),
               ("greedy", "heuristic"), ("aggressive", "random"), ("conservative", "random"),
               ("aggressive", "greedy"), ("conservative", "greedy"), ("aggressive", "conservative"),
               ("rlcard-rule", "random"), ("random", "rlcard-rule")]
STANDARD_ROWS = [("heuristic", "random"), ("heuristic", "greedy"), ("heuristic", "aggressive"),
                 ("aggressive", "conservative"), ("heuristic", "heuristic")]


def row(rules: str, agent: str, opponent: str, games: int = 3000, seed: int = 0) -> dict:
    cmd = [sys.executable, "-m", "climbrl.cli", "evaluate", "--game", "doudizhu", "--rules", rules, "--agent", agent,
           "--opponents", opponent, "--games", str(games), "--seed", str(seed), "--workers", "1", "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    result = json.loads(out.stdout)
    result["command"] = " ".join(["climbrl"] + cmd[3:])
    return result


def main() -> None:
    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    for rules, rows in (("rlcard", RLCARD_ROWS), ("standard", STANDARD_ROWS)):
        for agent, opponent in rows:
            key = f"{rules}/{agent}/{opponent}"
            results[key] = row(rules, agent, opponent)
            print(key, results[key]["win_rate"], flush=True)
            OUT.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
