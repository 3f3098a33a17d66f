"""The whole game of Dou Dizhu with its auction, on top of the strongest play model (issue 26,
part 1): two stages of ``strong/dvc.yaml`` (``make strong``), from the ``auction`` section of
``strong/params.yaml``.

- ``train`` (``python -m pipeline.auction train``): a bid model for the strong learner's play
  policy (:mod:`climbrl.learn.bidder_training`) into ``runs/strong/bid``: ``policy.pt`` (the play
  policy with the learned bid model), ``rule-bid.pt`` (the same play policy bidding as the
  heuristic does: the control), ``history.csv``. A killed run continues from its last epoch.
- ``evaluate``: each agent of ``evaluate.agents`` against two copies of ``evaluate.opponent``
  on ``evaluate.decks`` fresh decks (purpose ``deep``, ``evaluate.seed``), every deck from every
  seat (:mod:`climbrl.evaluate.auction`): ADP and WP by role, the auction's rates and stakes, bids by
  hand strength; and the paired per-deck ADP contrasts between the agents (Holm's correction).
  ``reports/strong/auction.json`` and ``auction.md``. The issue's target: the learned bidder with
  the best play model beats the heuristic's bidder with the heuristic player (the opponent) in ADP
  per game, the interval above 0.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pipeline  # noqa: F401  (environment defaults)
from pipeline import params_io
from pipeline.params_io import ParamsError

PARAMS = Path(__file__).resolve().parents[1] / "strong" / "params.yaml"
RUNS = Path("runs/strong/bid")
REPORTS = Path("reports/strong")
TRAIN_KEYS = ("play", "rules", "epochs", "games_per_epoch", "seed", "bid_epsilon", "bid_lr", "pool")


def load_auction_params(path: Path = PARAMS) -> dict[str, Any]:
    """The ``auction`` section: ``train`` (:class:`~climbrl.learn.bidder_training.BidTraining`'s
    fields) and ``evaluate`` (``agents``: name -> spec, ``opponent``, ``decks``, ``seed``)."""
    data = params_io.read(path)
    sec = data.get("auction") if isinstance(data, dict) else None
    if not isinstance(sec, dict) or set(sec) != {"train", "evaluate"}:
        raise ParamsError(f"{path}: expected an 'auction' mapping with exactly 'train' and 'evaluate'")
    params_io.mapping(sec["train"], path, "auction.train", "a mapping of " + ", ".join(TRAIN_KEYS))
    unknown = set(sec["train"]) - set(TRAIN_KEYS)
    if unknown:
        raise ParamsError(f"{path}: auction.train: unknown {', '.join(sorted(map(str, unknown)))} "
                          f"(known: {', '.join(TRAIN_KEYS)})")
    ev = params_io.mapping(sec["evaluate"], path, "auction.evaluate", "a mapping of agents, opponent, decks, seed")
    for k in ("agents", "opponent", "decks", "seed"):
        if k not in ev:
            raise ParamsError(f"{path}: auction.evaluate needs {k}")
    if not isinstance(ev["agents"], dict) or not ev["agents"] or not all(
            isinstance(a, str) and a for a in (*ev["agents"], *ev["agents"].values(), ev["opponent"])):
        raise ParamsError(f"{path}: auction.evaluate.agents must map names to agent specs (and opponent be one)")
    params_io.integer(ev["decks"], path, "auction.evaluate.decks", 1, params_io.DEALS_MAX)
    params_io.integer(ev["seed"], path, "auction.evaluate.seed", 0, params_io.SEED_MAX)
    try:
        spec(sec).check()
    except (TypeError, ValueError) as e:
        raise ParamsError(params_io.one_line(e), path, "auction.train") from None
    return sec


def spec(sec: dict[str, Any]) -> Any:
    from climbrl.learn.bidder_training import BidTraining

    t = dict(sec["train"])
    t["pool"] = tuple(t.get("pool") or ())
    return BidTraining(**t)


def train(sec: dict[str, Any], runs: Path = RUNS) -> list[dict[str, Any]]:
    """Train the bid model into ``runs``, continuing its checkpoint; one of other settings is
    moved aside (:func:`pipeline.previous.move_aside`) and the training starts over."""
    from climbrl.learn.bidder_training import train_bidder, write_rule_bidder
    from climbrl.learn.checkpoint import CheckpointError
    from pipeline.previous import move_aside

    s = spec(sec)
    try:
        history = train_bidder(s, runs, on_epoch=lambda r: print(json.dumps(r), flush=True))
    except CheckpointError as e:
        if "other settings" not in str(e):
            raise
        move_aside(runs, params_io.one_line(e))
        history = train_bidder(s, runs, on_epoch=lambda r: print(json.dumps(r), flush=True))
    write_rule_bidder(s.play, runs / "rule-bid.pt")
    return history


def evaluate(sec: dict[str, Any], reports: Path = REPORTS, workers: int = 2) -> dict[str, Any]:
    from climbrl.evaluate.auction_report import compare, plot_calibration

    ev, rules = sec["evaluate"], sec["train"].get("rules", "standard")
    out = compare(ev["agents"], ev["opponent"], rules, ev["decks"], ev["seed"], workers=workers)
    reports.mkdir(parents=True, exist_ok=True)
    plot_calibration({ev["opponent"]: out}, reports / "auction_calibration.png")
    (reports / "auction.json").write_text(json.dumps(out, indent=2))
    (reports / "auction.md").write_text(render(out))
    return out


def render(out: dict[str, Any]) -> str:
    from climbrl.evaluate import auction_report

    return "\n".join(["# The whole game of Dou Dizhu, auction included (issue 26)", "",
                      *auction_report.render(out)]) + "\n"


@params_io.command("python -m pipeline.auction")
def main(argv: list[str] | None = None) -> int:
    p = params_io.ArgumentParser(prog="python -m pipeline.auction")
    p.add_argument("step", choices=("train", "evaluate"))
    p.add_argument("--params", default=str(PARAMS))
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    params_io.workers(args.workers)
    sec = load_auction_params(Path(args.params))
    start = time.perf_counter()
    if args.step == "train":
        train(sec)
    else:
        print(render(evaluate(sec, workers=args.workers)))
    print(f"auction {args.step}: {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
