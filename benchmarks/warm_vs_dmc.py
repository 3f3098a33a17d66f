"""The warm-started Dou Dizhu learner against self-play DMC (issue 25), paired on the same decks.

``make strong`` trains both: ``runs/strong/doudizhu`` (DouZero's Deep Monte-Carlo by self-play) and
``runs/strong/doudizhu-warm`` (the heuristic cloned, then PPO against it). Each final policy plays
DouZero's protocol against the heuristic on the same fresh decks (purpose ``deep``, seed 4242: not
the evaluation decks the strong report uses, nor the curve's), every deck in both seatings, and the
difference is paired deck by deck: A's wins out of the deck's two games and its net points, with
Student t intervals over the decks. One training of each: a difference between these two trained
policies, not between the methods over training seeds.

Run: ``.venv/bin/python benchmarks/warm_vs_dmc.py`` (about a minute on two cores, after
``make strong``). Writes ``benchmarks/results/warm_vs_dmc.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (environment defaults)

RUNS = {"warm": "runs/strong/doudizhu-warm/policy.pt", "dmc": "runs/strong/doudizhu/policy.pt"}
DECKS, SEED = 1000, 4242


def main() -> int:
    import numpy as np

    from climbrl.evaluate.duel import team_match
    from climbrl.evaluate.stats import mean_difference_test

    missing = [p for p in RUNS.values() if not (ROOT / p).exists()]
    if missing:
        print(f"error: {', '.join(missing)} missing: run make strong first", file=sys.stderr)
        return 2
    res = {name: team_match(f"checkpoint:{ROOT / path}", "heuristic", deals=DECKS, seed=SEED, workers=2,
                            purpose="deep") for name, path in RUNS.items()}
    out: dict = {"decks": DECKS, "seed": SEED, "purpose": "deep", "opponent": "heuristic",
                 "agents": {name: {"path": RUNS[name], **{role: r["A"][role] for role in r["A"]}}
                            for name, r in res.items()}}
    for key, scale in (("a_wins", 0.5), ("a_points", 1.0)):
        x = np.array(res["warm"]["per_deal"][key], float) * scale
        y = np.array(res["dmc"]["per_deal"][key], float) * scale
        out[f"warm_minus_dmc/{'win_rate' if key == 'a_wins' else 'points_per_deck'}"] = mean_difference_test(x - y)
    path = ROOT / "benchmarks" / "results" / "warm_vs_dmc.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    d = out["warm_minus_dmc/win_rate"]
    print(f"warm {out['agents']['warm']['both']['win_rate']:.3f}, dmc {out['agents']['dmc']['both']['win_rate']:.3f}"
          f" against the heuristic on {DECKS} decks; warm - dmc {d['mean']:+.3f} [{d['low']:+.3f}, {d['high']:+.3f}], "
          f"p {d['p']:.1e}; {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
