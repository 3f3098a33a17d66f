"""Which bid model goes into ``make strong``'s auction stages: self-play, or self-play with a pool
of the rule agents? (issue 26). Chosen on the Dou Dizhu study's 250 validation decks, never on the
fresh decks the auction stage reports on.

Run: ``.venv/bin/python benchmarks/bidder_choice.py`` (about 25 min on two cores: two bid trainings
over the strong play model, 20 x 2,000 games each, then 750 whole games each against two
heuristic players). Writes ``benchmarks/results/bidder_choice.json``; trainings resume from
``runs/bidder_choice/*``. The README quotes its numbers (the choice: self-play, ``pool: []`` in
``strong/params.yaml``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pipeline  # noqa: E402,F401  (environment defaults)

PLAY = "runs/strong/doudizhu/policy.pt"
CHOICES = {"self-play": (), "pool": ("heuristic", "aggressive", "conservative")}


def main() -> int:
    from climbrl.agents.runner import load_deal_seeds
    from climbrl.evaluate.auction import paired, whole_game
    from climbrl.learn.bidder_training import BidTraining, train_bidder

    seeds = load_deal_seeds(ROOT / "data" / "doudizhu" / "valid_seeds.json")
    results = {}
    for name, pool in CHOICES.items():
        out = ROOT / "runs" / "bidder_choice" / name
        train_bidder(BidTraining(play=PLAY, epochs=20, games_per_epoch=2000, pool=pool), out)
        r = whole_game(f"checkpoint:{out / 'policy.pt'}", "heuristic", "standard", len(seeds), 0, seeds=seeds,
                       workers=2)
        results[name] = r
        print(name, r["adp"], flush=True)
    res = {"decks": len(seeds), "deal_set": "data/doudizhu/valid_seeds.json",
           "adp": {n: r["adp"] for n, r in results.items()}, "self-play minus pool": paired(*results.values())}
    (ROOT / "benchmarks" / "results" / "bidder_choice.json").write_text(json.dumps(res, indent=2))
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
