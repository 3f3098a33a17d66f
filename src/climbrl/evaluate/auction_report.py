"""The whole game's comparison (:mod:`climbrl.evaluate.auction`) written out: several agents
against the same rule bidder on the same decks and seat streams, their paired ADP contrasts
(Holm's correction), the markdown tables (ADP and WP by role, the auction's rates and stakes, the
bid model's calibration, bids by hand strength) and the calibration figure. Used by the study's
``auction`` stage (:func:`pipeline.stages.auction`, an auction study of ``make run``) and by
``make strong``'s bid model on the strongest play model (:mod:`pipeline.auction`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from climbrl.evaluate.auction import estimate_text as _iv
from climbrl.evaluate.auction import paired, per_deck, whole_game

TARGET = ("the learned bidder with the best play model beats the heuristic's bidder with the heuristic player "
          "in ADP per game, the interval above 0")
"""Issue 26's target: met when the ``target`` agent's ADP against two ``heuristic`` has its 95%
interval above 0."""


def compare(agents: Mapping[str, str], opponent: str, rules: str, decks: int, seed: int,
            workers: int = 1) -> dict[str, Any]:
    """Each of ``agents`` (name -> agent spec) against two ``opponent`` on ``decks`` fresh decks
    (purpose ``deep`` from ``seed``), every deck from every seat: the summary of
    :func:`~climbrl.evaluate.auction.whole_game` per agent (with its per-deck ADP instead of the
    game records) and every pair's paired per-deck ADP contrast, Holm-corrected over the pairs."""
    import time

    from climbrl.agents.runner import deal_seeds
    from climbrl.evaluate.stats import holm

    seeds = deal_seeds(seed, decks, "deep")
    results = {}
    for name, agent in agents.items():
        t = time.process_time()
        r = whole_game(agent, opponent, rules, decks, seed, seeds=seeds, workers=workers)
        r["cpu_seconds_here"] = time.process_time() - t
        results[name] = r
    names = list(results)
    contrasts = [paired(results[a], results[b]) | {"a_name": a, "b_name": b}
                 for i, a in enumerate(names) for b in names[i + 1:]]
    for c, sig in zip(contrasts, holm([c["p"] for c in contrasts]), strict=True):
        c["holm_significant"] = sig
    return {"rules": rules, "opponent": opponent, "decks": decks, "seed": seed, "purpose": "deep",
            "agents": {n: {k: v for k, v in r.items() if k != "games"} | {"per_deck_adp": per_deck(r["games"])}
                       for n, r in results.items()},
            "contrasts": contrasts}


def target_met(out: Mapping[str, Any], target: str) -> bool | None:
    """Whether ``out``'s agent ``target`` meets :data:`TARGET` (None: not judged there, another
    opponent than the heuristic, or no such agent)."""
    r = out["agents"].get(target)
    if r is None or out["opponent"] != "heuristic":
        return None
    lo = r["adp"]["low"]
    return lo is not None and lo > 0


def plot_calibration(outs: Mapping[str, Mapping[str, Any]], path: Path) -> None:
    """Predicted against realized return of each learned bid model's bids (one point per bin,
    the realized mean with its 95% interval), the diagonal for a calibrated model; ``outs``:
    :func:`compare` results by opponent (one line per agent and opponent)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    lims = [0.0, 0.0]
    lines = [(f"{name} vs {opp}" if len(outs) > 1 else name, cal) for opp, out in outs.items()
             for name, r in out["agents"].items() if (cal := r.get("bid_calibration"))]
    for label, cal in lines:
        x = [b["predicted"] for b in cal]
        y = [b["realized"]["mean"] for b in cal]
        low = [b["realized"]["low"] if b["realized"]["low"] is not None else m for m, b in zip(y, cal, strict=True)]
        high = [b["realized"]["high"] if b["realized"]["high"] is not None else m for m, b in zip(y, cal, strict=True)]
        err = [[m - lo for m, lo in zip(y, low, strict=True)], [hi - m for m, hi in zip(y, high, strict=True)]]
        ax.errorbar(x, y, yerr=err, marker="o", capsize=3, label=label)
        lims = [min(lims[0], *x, *y), max(lims[1], *x, *y)]
    ax.plot(lims, lims, color="grey", linestyle="--", linewidth=1, label="calibrated")
    ax.set_xlabel("predicted return of the bid (the model's Q)")
    ax.set_ylabel("realized return of the game")
    ax.set_title("Bid model calibration, against the evaluation's opponents")
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def render(out: Mapping[str, Any], level: int = 2, target: str | None = "learned", learned_in: str = "self-play",
           figure: str = "auction_calibration.png") -> list[str]:
    """The markdown of one :func:`compare` result, its headings at ``level`` (``##``): the table of
    every agent, the paired contrasts, the verdict on :data:`TARGET` for the agent ``target``
    (against the heuristic only), each learned bid model's calibration and the bids by hand
    strength."""
    h = "#" * level
    n = out["decks"]
    lines = [f"Rules `{out['rules']}` (call-score auction 1-3, bombs, rocket and spring double). Each agent against "
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
              f"{h} Paired contrasts (same decks, same seat streams)", "",
              "| a - b | decks | ADP difference | p | Holm (5%) |", "|---|---|---|---|---|"]
    for c in out["contrasts"]:
        lines.append(f"| {c['a_name']} - {c['b_name']} | {c['decks']} | {_iv({'mean': c['difference'], **c})} | "
                     f"{c['p']:.2g} | {'differs' if c['holm_significant'] else 'no difference shown'} |")
    met = target_met(out, target) if target else None
    if met is not None:
        lines += ["", f"**Target** ({TARGET}; here `{target}`): {'met' if met else 'not met'}, ADP "
                      f"{_iv(out['agents'][target]['adp'])} over {3 * n:,} games."]
    for name, r in out["agents"].items():
        cal = r.get("bid_calibration")
        if cal:
            lines += ["", f"{h} Calibration of the bid model ({name})", "",
                      "Each bid's predicted return (the model's Q of the bid it made) against the return of the game "
                      f"that followed, in bins of equal count by prediction (`{figure}`). The model learned in "
                      f"{learned_in}; here it meets `{out['opponent']}`.", "",
                      "| bids | predicted | realized (95% interval) |", "|---|---|---|"]
            lines += [f"| {b['n']} | {b['predicted']:+.2f} | {_iv(b['realized'], 'mean', '+.2f')} |" for b in cal]
    lines += ["", f"{h} Bids by hand strength (the interpretability window of the auction)", "",
              "Hand strength: the rule agents' bidding score S of the dealt hand (the heuristic bids 1 from 7, "
              "2 from 9, 3 from 11).", ""]
    for name, r in out["agents"].items():
        lines += [f"**{name}**", "", "| S | games | bid | landlord | WP as landlord | ADP |",
                  "|---|---|---|---|---|---|"]
        for b in r["by_strength"]:
            rng = f"{'' if b['from'] is None else b['from']}..{'' if b['to'] is None else b['to'] - 1}"
            lines.append(f"| {rng} | {b['games']} | {_opt(b['bid_rate'])} | {_opt(b['landlord_rate'])} | "
                         f"{_opt(b['landlord_wp'])} | {_opt(b['adp'], '+.2f')} |")
        lines.append("")
    return lines


def _opt(x: float | None, fmt: str = ".2f") -> str:
    return "-" if x is None else f"{x:{fmt}}"
