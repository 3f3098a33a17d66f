"""CI's win-rate regression gates: a short training and evaluation on fixed seeds, compared with
the floors committed in ``ci/regression_floors.yaml`` (Big 2: PPO, the paper rules) and
``ci/regression_floors_doudizhu.yaml`` (Dou Dizhu: PPO, the ``douzero`` rules).

A result fails when the upper bound of its 95% interval falls below the floor: sampling error
alone then cannot explain it. ``python -m pipeline.regression [--floors FILE]`` runs one (exit 1
on failure).

The game is the floors file's (``train.game``, default big2), never ``params.yaml``'s: floors are
measured on one game and rule set. Under a fixed landlord (Dou Dizhu) the evaluation is
DouZero's duel (:mod:`climbrl.evaluate.duel`: each deal with the learner as landlord against two
copies of the opponent, then as both peasants), and the gated win rate is over both roles.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import yaml

FLOORS = Path(__file__).resolve().parents[1] / "ci" / "regression_floors.yaml"
DDZ_FLOORS = FLOORS.with_name("regression_floors_doudizhu.yaml")
GAME = "big2"
"""The game of a floors file that names none."""


def load_floors(path: Path = FLOORS) -> dict[str, Any]:
    data = yaml.safe_load(Path(path).read_text())
    if not isinstance(data, dict) or "train" not in data or "floors" not in data:
        raise ValueError(f"{path}: expected 'train', 'evaluate' and 'floors' sections")
    return data


def evaluate_agent(agent: str, spec: dict[str, Any]) -> dict[str, dict[str, float]]:
    from climbrl.evaluate.baselines_report import duel_rules
    from climbrl.evaluate.duel import team_match
    from climbrl.evaluate.match import run_match
    from climbrl.games.registry import DEFAULT_PRESETS, num_players

    ev = spec["evaluate"]
    game = spec["train"].get("game", GAME)
    rules = spec["train"].get("rules", DEFAULT_PRESETS[game])
    if duel_rules(game, rules):
        out = {}
        for opp in spec["floors"]:
            both = team_match(agent, opp, game=game, rules=rules, deals=ev["games"] // num_players(game),
                              seed=ev["seed"], workers=ev.get("workers", 1), per_deal=False)["A"]["both"]
            out[opp] = {k: both[k] for k in ("win_rate", "win_rate_low", "win_rate_high", "games")}
        return out
    return {opp: run_match(agent, [opp], rules=rules, games=ev["games"], seed=ev["seed"],
                           workers=ev.get("workers", 1), game=game)
            for opp in spec["floors"]}


def train_and_evaluate(spec: dict[str, Any], out_dir: Path) -> dict[str, dict[str, float]]:
    import shutil

    from climbrl.config import train_config
    from climbrl.training import train

    values = dict(spec["train"])
    cfg = train_config(values.pop("algo"), game=values.pop("game", GAME), eval_every=0, **values)
    shutil.rmtree(out_dir, ignore_errors=True)
    train(cfg, out_dir, progress=False)
    return evaluate_agent(f"checkpoint:{out_dir / 'policy.pt'}", spec)


def gate(results: dict[str, dict[str, float]], floors: dict[str, float]) -> list[str]:
    """The failures: opponents whose win-rate interval lies wholly below the floor."""
    return [f"vs {opp}: win rate {results[opp]['win_rate']:.3f} [{results[opp]['win_rate_low']:.3f}, "
            f"{results[opp]['win_rate_high']:.3f}] (n={results[opp]['games']}) is below the floor {floor:.3f}"
            for opp, floor in floors.items() if results[opp]["win_rate_high"] < floor]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pipeline.regression")
    p.add_argument("--floors", default=str(FLOORS))
    p.add_argument("--out", default="runs/regression")
    p.add_argument("--agent", help="evaluate this agent instead of training (e.g. random: must fail)")
    args = p.parse_args(argv)
    spec = load_floors(Path(args.floors))
    start = time.perf_counter()
    results = evaluate_agent(args.agent, spec) if args.agent else train_and_evaluate(spec, Path(args.out))
    failures = gate(results, spec["floors"])
    game = spec["train"].get("game", GAME)
    for opp, r in results.items():
        print(f"regression ({game}): vs {opp}: {r['win_rate']:.3f} [{r['win_rate_low']:.3f}, {r['win_rate_high']:.3f}] "
              f"(n={r['games']}), floor {spec['floors'][opp]:.3f}")
    print(json.dumps({"seconds": round(time.perf_counter() - start, 1), "failures": failures}))
    if failures:
        print("REGRESSION GATE FAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    print("regression gate passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
