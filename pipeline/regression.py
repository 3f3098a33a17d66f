"""CI's win-rate regression gate: a short PPO training and evaluation on fixed seeds, compared
with the floors committed in ``ci/regression_floors.yaml``.

A result fails when the upper bound of its 95% interval falls below the floor: sampling error
alone then cannot explain it. ``python -m pipeline.regression`` runs it (exit 1 on failure).

The gate is Big 2's, whatever ``params.yaml`` says about the game: its floors were measured on
Big 2 (three opponents per game, the paper rules), so it trains and plays Big 2 explicitly.
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
GAME = "big2"


def load_floors(path: Path = FLOORS) -> dict[str, Any]:
    data = yaml.safe_load(Path(path).read_text())
    if not isinstance(data, dict) or "train" not in data or "floors" not in data:
        raise ValueError(f"{path}: expected 'train', 'evaluate' and 'floors' sections")
    return data


def evaluate_agent(agent: str, spec: dict[str, Any]) -> dict[str, dict[str, float]]:
    from climbrl.evaluate.match import run_match

    ev = spec["evaluate"]
    return {opp: run_match(agent, [opp], rules=spec["train"].get("rules", "paper"), games=ev["games"],
                           seed=ev["seed"], workers=ev.get("workers", 1), game=GAME)
            for opp in spec["floors"]}


def train_and_evaluate(spec: dict[str, Any], out_dir: Path) -> dict[str, dict[str, float]]:
    import shutil

    from climbrl.config import train_config
    from climbrl.training import train

    values = dict(spec["train"])
    if values.pop("game", GAME) != GAME:
        raise ValueError(f"the regression gate's floors are {GAME}'s: its train section must not name another game")
    cfg = train_config(values.pop("algo"), game=GAME, eval_every=0, **values)
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
    for opp, r in results.items():
        print(f"regression: vs 3x {opp}: {r['win_rate']:.3f} [{r['win_rate_low']:.3f}, {r['win_rate_high']:.3f}] "
              f"(n={r['games']}), floor {spec['floors'][opp]:.3f}")
    print(json.dumps({"seconds": round(time.perf_counter() - start, 1), "failures": failures}))
    if failures:
        print("REGRESSION GATE FAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    print("regression gate passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
