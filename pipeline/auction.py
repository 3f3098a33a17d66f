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

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import yaml

import pipeline  # noqa: F401  (environment defaults)

PARAMS = Path(__file__).resolve().parents[1] / "strong" / "params.yaml"
RUNS = Path("runs/strong/bid")
REPORTS = Path("reports/strong")
TRAIN_KEYS = ("play", "rules", "epochs", "games_per_epoch", "seed", "bid_epsilon", "bid_lr", "pool")


def load_auction_params(path: Path = PARAMS) -> dict[str, Any]:
    """The ``auction`` section: ``train`` (:class:`~climbrl.learn.bidder_training.BidTraining`'s
    fields) and ``evaluate`` (``agents``: name -> spec, ``opponent``, ``decks``, ``seed``)."""
    try:
        data = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"cannot read {path}: {e}") from None
    sec = data.get("auction") if isinstance(data, dict) else None
    if not isinstance(sec, dict) or set(sec) != {"train", "evaluate"}:
        raise ValueError(f"{path}: expected an 'auction' mapping with exactly 'train' and 'evaluate'")
    unknown = set(sec["train"]) - set(TRAIN_KEYS)
    if unknown:
        raise ValueError(f"{path}: auction.train: unknown {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(TRAIN_KEYS)})")
    ev = sec["evaluate"]
    for k in ("agents", "opponent", "decks", "seed"):
        if k not in ev:
            raise ValueError(f"{path}: auction.evaluate needs {k}")
    if not isinstance(ev["agents"], dict) or not ev["agents"]:
        raise ValueError(f"{path}: auction.evaluate.agents must map names to agent specs")
    spec(sec).check()
    return sec


def spec(sec: dict[str, Any]) -> Any:
    from climbrl.learn.bidder_training import BidTraining

    t = dict(sec["train"])
    t["pool"] = tuple(t.get("pool") or ())
    return BidTraining(**t)


def train(sec: dict[str, Any], runs: Path = RUNS) -> list[dict[str, Any]]:
    import shutil

    from climbrl.learn.bidder_training import train_bidder, write_rule_bidder
    from climbrl.learn.checkpoint import CheckpointError

    s = spec(sec)
    try:
        history = train_bidder(s, runs, on_epoch=lambda r: print(json.dumps(r), flush=True))
    except CheckpointError as e:
        if "other settings" not in str(e):
            raise
        print(f"auction train: {e}: starting over", file=sys.stderr)
        shutil.rmtree(runs)
        history = train_bidder(s, runs, on_epoch=lambda r: print(json.dumps(r), flush=True))
    write_rule_bidder(s.play, runs / "rule-bid.pt")
    return history


def evaluate(sec: dict[str, Any], reports: Path = REPORTS, workers: int = 2) -> dict[str, Any]:
    from climbrl.agents.runner import deal_seeds
    from climbrl.evaluate.auction import paired, per_deck, whole_game
    from climbrl.evaluate.stats import holm

    ev, rules = sec["evaluate"], sec["train"].get("rules", "standard")
    seeds = deal_seeds(ev["seed"], ev["decks"], "deep")
    results = {}
    for name, agent in ev["agents"].items():
        t = time.process_time()
        r = whole_game(agent, ev["opponent"], rules, ev["decks"], ev["seed"], seeds=seeds, workers=workers)
        r["cpu_seconds_here"] = time.process_time() - t
        results[name] = r
    names = list(results)
    contrasts = [paired(results[a], results[b]) | {"a_name": a, "b_name": b}
                 for i, a in enumerate(names) for b in names[i + 1:]]
    for c, sig in zip(contrasts, holm([c["p"] for c in contrasts]), strict=True):
        c["holm_significant"] = sig
    out = {"rules": rules, "opponent": ev["opponent"], "decks": ev["decks"], "seed": ev["seed"], "purpose": "deep",
           "agents": {n: {k: v for k, v in r.items() if k != "games"} | {"per_deck_adp": per_deck(r["games"])}
                      for n, r in results.items()},
           "contrasts": contrasts}
    reports.mkdir(parents=True, exist_ok=True)
    _plot_calibration(out, reports / "auction_calibration.png")
    (reports / "auction.json").write_text(json.dumps(out, indent=2))
    (reports / "auction.md").write_text(render(out))
    return out


def _plot_calibration(out: dict[str, Any], path: Path) -> None:
    """Predicted against realized return of each learned bid model's bids (one point per bin,
    the realized mean with its 95% interval), the diagonal for a calibrated model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    lims = [0.0, 0.0]
    for name, r in out["agents"].items():
        cal = r.get("bid_calibration")
        if not cal:
            continue
        x = [b["predicted"] for b in cal]
        y = [b["realized"]["mean"] for b in cal]
        low = [b["realized"]["low"] if b["realized"]["low"] is not None else m for m, b in zip(y, cal, strict=True)]
        high = [b["realized"]["high"] if b["realized"]["high"] is not None else m for m, b in zip(y, cal, strict=True)]
        err = [[m - lo for m, lo in zip(y, low, strict=True)], [hi - m for m, hi in zip(y, high, strict=True)]]
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=name)
        lims = [min(lims[0], *x, *y), max(lims[1], *x, *y)]
    ax.plot(lims, lims, color="grey", linestyle="--", linewidth=1, label="calibrated")
    ax.set_xlabel("predicted return of the bid (the model's Q)")
    ax.set_ylabel("realized return of the game")
    ax.set_title("Bid model calibration, against the evaluation's opponents")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def render(out: dict[str, Any]) -> str:
    from climbrl.evaluate.auction import estimate_text as _iv

    n = out["decks"]
    lines = ["# The whole game of Dou Dizhu, auction included (issue 26)", "",
             f"Rules `{out['rules']}` (call-score auction 1-3, bombs, rocket and spring double). Each agent against "
             f"two `{out['opponent']}` (which bids with its hand-strength thresholds and plays its rules) on "
             f"{n:,} fresh decks (purpose `{out['purpose']}`, seed {out['seed']}), every deck from each of the 3 seats "
             f"({3 * n:,} games an agent). ADP: the agent's mean return per game (the stake x the multipliers; the "
             "landlord's counts twice), 95% Student t interval over the decks; WP with Wilson's interval.", "",
             "| agent | ADP per game | WP | landlord in | bid in | stake as landlord | WP as landlord "
             "| ADP as landlord | WP as peasant | ADP as peasant |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in out["agents"].items():
        ll, pe = r["by_role"]["landlord"], r["by_role"]["peasant"]
        lines.append(f"| {name} (`{r['agent']}`) | {_iv(r['adp'])} | {_iv(r['wp'], 'rate', '.3f')} | "
                     f"{_iv(r['landlord_rate'], 'rate', '.3f')} | {_iv(r['bid_rate'], 'rate', '.3f')} | "
                     f"{_iv(r['stake_as_landlord'], 'mean', '.2f')} | {_iv(ll['wp'], 'rate', '.3f')} | "
                     f"{_iv(ll['adp'])} | {_iv(pe['wp'], 'rate', '.3f')} | {_iv(pe['adp'])} |")
    lines += ["", "The opponent against two copies of itself scores 0 by symmetry: an ADP above 0 beats it.", "",
              "## Paired contrasts (same decks, same seat streams)", "",
              "| a - b | decks | ADP difference | p | Holm (5%) |", "|---|---|---|---|---|"]
    for c in out["contrasts"]:
        lines.append(f"| {c['a_name']} - {c['b_name']} | {c['decks']} | {_iv({'mean': c['difference'], **c})} | "
                     f"{c['p']:.2g} | {'differs' if c['holm_significant'] else 'no difference shown'} |")
    target = out["agents"].get("learned")
    if target:
        lo = target["adp"]["low"]
        met = lo is not None and lo > 0
        lines += ["", "**Target** (the learned bidder with the best play model beats the heuristic's bidder with "
                      "the heuristic player in ADP per game, the interval above 0): "
                      f"{'met' if met else 'not met'}, ADP {_iv(target['adp'])} over {3 * n:,} games."]
    for name, r in out["agents"].items():
        cal = r.get("bid_calibration")
        if cal:
            lines += ["", f"## Calibration of the bid model ({name})", "",
                      "Each bid's predicted return (the model's Q of the bid it made) against the return of the game "
                      "that followed, in bins of equal count by prediction (`auction_calibration.png`). The model "
                      "learned in self-play; here it meets the heuristic.", "",
                      "| bids | predicted | realized (95% interval) |", "|---|---|---|"]
            lines += [f"| {b['n']} | {b['predicted']:+.2f} | {_iv(b['realized'], 'mean', '+.2f')} |" for b in cal]
    lines += ["", "## Bids by hand strength (the interpretability window of the auction)", "",
              "Hand strength: the rule agents' bidding score S of the dealt hand (the heuristic bids 1 from 7, "
              "2 from 9, 3 from 11).", ""]
    for name, r in out["agents"].items():
        lines += [f"**{name}**", "", "| S | games | bid | landlord | WP as landlord | ADP |",
                  "|---|---|---|---|---|---|"]
        for b in r["by_strength"]:
            rng = f"{'' if b['from'] is None else b['from']}..{'' if b['to'] is None else b['to'] - 1}"

            def f(x, fmt=".2f"):
                return "-" if x is None else f"{x:{fmt}}"
            lines.append(f"| {rng} | {b['games']} | {f(b['bid_rate'])} | {f(b['landlord_rate'])} | "
                         f"{f(b['landlord_wp'])} | {f(b['adp'], '+.2f')} |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pipeline.auction")
    p.add_argument("step", choices=("train", "evaluate"))
    p.add_argument("--params", default=str(PARAMS))
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    try:
        sec = load_auction_params(Path(args.params))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    start = time.perf_counter()
    if args.step == "train":
        train(sec)
    else:
        print(render(evaluate(sec, workers=args.workers)))
    print(f"auction {args.step}: {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
