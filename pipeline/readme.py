"""The README's results block, generated from the committed results (issue 28).

``python -m pipeline.readme`` rewrites the block between the two markers of ``README.md``
(:data:`pipeline.docs.README_START` / ``README_END``) from ``reports/metrics.json`` of both studies and,
where their reports exist, the strong learners' and the champion's; ``--check`` exits 1 when the block
is stale (``tests/test_docs.py`` does the same). ``make docs`` runs it before building the site.
"""

from __future__ import annotations

import sys

from pipeline import params_io
from pipeline.docs import (
    BIG2,
    DDZ,
    README_END,
    README_START,
    ROOT,
    big2_table,
    ci,
    ddz_table,
    exists,
    load,
    m,
    selection,
    value,
)

README = ROOT / "README.md"
STRONG = "reports/strong/doudizhu/final.json"
WARM = "reports/strong/doudizhu-warm/final.json"
AUCTION = "reports/strong/auction.json"
BIG2_STRONG = "reports/strong/big2/final.json"
BIG2_PUBLIC = "reports/strong/big2-public/final.json"
BUDGET = "reports/strong/budget.json"
LONG = "reports/strong/long/big2-long/final.json"
LONG_CURVE = "reports/strong/long/big2-long/curve.json"
LONG_TEST = "reports/strong/long/line_test.json"
LONG_BUDGET = "reports/strong/long/budget.json"
WHOLE = "reports/doudizhu_auction/metrics.json"
CHAMPION = "reports/champion/matches/heuristic.json"
PUBLIC = "reports/champion/matches/public-base-own-model.json"


def block() -> str:
    """The results block's text (between the markers, without them)."""
    big2_best = value(BIG2, "best_learner")
    ddz_best = value(DDZ, "best_learner")
    sel, dsel = selection("big2"), selection("doudizhu")
    t = "doudizhu.rlcard_target"
    lines = [
        "",
        f"**Big 2** (`paper` rules; `reports/report.md`): each learner's greedy policy against three copies of "
        f"each baseline, {m(BIG2, f'learners.{big2_best}.games/heuristic', 'd')} games per baseline on the "
        "versioned evaluation deals, win rate with its 95% Wilson interval (a seat's parity is 0.25).",
        "",
        big2_table(times=False),
        "",
        f"Best learner, chosen on separate validation deals: **{big2_best}** (mean win rate over the baselines "
        f"{sel['best_valid']} against {sel['runner_up']}'s {sel['runner_valid']}, a margin of {sel['margin']}).",
        "",
        f"**Dou Dizhu** (`{m(DDZ, 'rules')}` rules, DouZero's protocol; `reports/doudizhu/report.md`): WP over "
        f"both roles, {m(DDZ, f'learners.{ddz_best}.games/heuristic', 'd')} games per opponent on the versioned "
        "decks.",
        "",
        ddz_table(times=False),
        "",
        f"Best learner on the validation decks: **{ddz_best}** (mean WP {dsel['best_valid']} against "
        f"{dsel['runner_up']}'s {dsel['runner_valid']}). Against RLCard's rule agent on "
        f"{m(BIG2, f'{t}.deals', ',d')} fresh decks it wins {ci(BIG2, f'{t}.landlord.win_rate')} as landlord "
        f"and {ci(BIG2, f'{t}.peasants.win_rate')} as the peasants.",
    ]
    if exists(WHOLE) and "auction" in load(WHOLE):
        b = value(WHOLE, "auction.learner")
        a = "auction."
        met = value(WHOLE, "auction.target_met")
        lines += ["", f"**Dou Dizhu, the whole game** (`{m(WHOLE, 'rules')}` rules: the call-score auction decides "
                      "the landlord and the stake; `reports/doudizhu_auction/report.md`): every learner trains a bid "
                      f"model beside its play model. Best learner on the validation decks: **{b}**. Against two "
                      f"heuristic players on {m(WHOLE, 'auction.decks', ',d')} fresh decks, each from every seat, "
                      f"ADP per game {ci(WHOLE, f'{a}adp/heuristic/{b}', '+.3f')} with its learned bid model, "
                      f"{ci(WHOLE, f'{a}adp/heuristic/{b}-rule-bid', '+.3f')} with the same play model bidding by "
                      "the heuristic's rule (paired difference "
                      f"{ci(WHOLE, f'{a}learned_minus_rule_bid/heuristic', '+.3f')}); the heuristic scores 0 "
                      f"against itself. Issue 26's target (the interval above 0): {'met' if met else 'not met'}."]
    if exists(STRONG):
        s = "matches.rlcard-rule"
        lines += ["", f"**Strong learner** (`make strong`, DouZero's Deep Monte-Carlo; `reports/strong/report.md`): "
                      f"on the study's decks against RLCard's rule agent WP {ci(STRONG, f'{s}.landlord.win_rate')} as "
                      f"landlord and {ci(STRONG, f'{s}.peasants.win_rate')} as peasants; against the heuristic "
                      f"{ci(STRONG, 'matches.heuristic.both.win_rate')} over both roles."]
    if exists(WARM):
        s = "matches.rlcard-rule"
        lines += ["", "**Warm-started learner** (`make strong`, run `doudizhu-warm`: the heuristic cloned, then PPO "
                      "against it; the network plays alone): on the same decks against the heuristic WP "
                      f"{ci(WARM, 'matches.heuristic.landlord.win_rate')} as landlord and "
                      f"{ci(WARM, 'matches.heuristic.peasants.win_rate')} as peasants; against RLCard's rule agent "
                      f"{ci(WARM, f'{s}.landlord.win_rate')} and {ci(WARM, f'{s}.peasants.win_rate')}."]
    if exists(AUCTION):
        lines += ["", "**The whole game with its auction** (`reports/strong/auction.md`): the strong play model "
                      f"with a learned bid model against two heuristic players, ADP per game "
                      f"{ci(AUCTION, 'agents.learned.adp.mean', '+.3f')} (the heuristic's own: 0)."]
    if exists(BIG2_STRONG):
        lines += ["", "**Big 2 strong learner** (`make strong`, self-play Deep Monte-Carlo; the network plays alone): "
                      f"{ci(BIG2_STRONG, 'matches.heuristic.all.win_rate')} against three heuristic players "
                      f"({m(BIG2_STRONG, 'matches.heuristic.all.games', ',d')} games, parity 0.25; issue 25's target "
                      "0.40)"
                  + (f"; under the public agent's rules (run `big2-public`), "
                     f"{ci(BIG2_PUBLIC, 'matches.charlesworth.all.mean_reward', '+.3f')} points per game and win rate "
                     f"{ci(BIG2_PUBLIC, 'matches.charlesworth.all.win_rate')} against three copies of the public "
                     "agent (the DMC anchor: +1.84 points)."
                     if exists(BIG2_PUBLIC) and "charlesworth" in value(BIG2_PUBLIC, "matches") else ".")]
    if exists(BUDGET):
        lines += ["", "**The budget the strong runs' curves show for their missed targets** (a least-squares line "
                      "against log10 CPU-hours over each curve, extrapolated, with a rough range; "
                      "`reports/strong/report.md`): " + "; ".join(
                          f"{run}, {b['what'].removeprefix('issue 25: ')} ({b['opponent']}, {b['role']}): "
                          + (f"about {b['cpu_hours']:,.1f} CPU-hours ({b['cpu_hours_low']:,.1f} to "
                             f"{b['cpu_hours_high']:,.1f}), {b['last_cpu_hours']:.2f} spent"
                             if b["verdict"] == "extrapolated" else b["verdict"])
                          for run, fits in value(BUDGET, "").items() for b in fits.values()) + "."]
    if exists(LONG) and exists(LONG_CURVE) and exists(LONG_TEST):
        t = "big2-long.heuristic/all."
        line = ci(LONG_TEST, t + "fitted", low=t + "low", high=t + "high")
        lines += ["", "**Big 2's strong run continued** (`make strong-long`, from the shipped policy; "
                      "`reports/strong/long/report.md`): at "
                      f"{m(LONG_CURVE, 'points.-1.cpu_hours', '.2f')} CPU-hours in all, "
                      f"{ci(LONG, 'matches.heuristic.all.win_rate')} against three heuristic players "
                      f"({m(LONG, 'matches.heuristic.all.games', ',d')} games); against the policy it started from, "
                      f"paired over the same deals, {ci(LONG, 'against_start.heuristic.difference.mean', '+.3f')}. "
                      f"The first run's line put the curve's last point at {line} "
                      f"(95% prediction interval); it measured "
                      f"{ci(LONG_TEST, t + 'measured', low=t + 'measured_low', high=t + 'measured_high')} "
                      f"({m(LONG_TEST, t + 'games', ',d')} games on the curve deals), but the continued points "
                      f"alone rise {m(LONG_TEST, t + 'slopes.continued.slope_per_decade', '+.3f')} per tenfold budget "
                      f"against the first run's {m(LONG_TEST, t + 'slopes.first.slope_per_decade', '+.3f')}."
                  + (f" The line over both runs' points reaches the 0.40 target at about "
                     f"{m(LONG_BUDGET, t + 'cpu_hours', '.1f')} CPU-hours "
                     f"({m(LONG_BUDGET, t + 'cpu_hours_low', '.1f')} to {m(LONG_BUDGET, t + 'cpu_hours_high', '.1f')}; "
                     "rough: one straight line through both runs)."
                     if exists(LONG_BUDGET) and value(LONG_BUDGET, "big2-long").get("heuristic/all", {}).get("verdict")
                     == "extrapolated" else "")]
    if exists(CHAMPION):
        lines += ["", f"**Big 2 champion** (`make champion`; `reports/champion/champion.md`): the rollout search "
                      f"`{m(CHAMPION, 'agent')}` wins {ci(CHAMPION, 'win_rate')} against three heuristic players "
                      f"({m(CHAMPION, 'games', ',d')} games)"
                  + ("; under the public agent's rules, the search over our own base policy (our own model of the "
                     f"opponents) wins "
                     f"{ci(PUBLIC, 'win_rate')} against three copies of the public agent (parity 0.25)."
                     if exists(PUBLIC) else ".")]
    lines.append("")
    return "\n".join(lines)


def render(text: str) -> str:
    """``text`` (the README) with its results block regenerated."""
    start, end = text.find(README_START), text.find(README_END)
    if start < 0 or end < start:
        raise SystemExit(f"README.md has no results block: the markers {README_START!r} ... {README_END!r}")
    return text[: start + len(README_START)] + "\n" + block() + text[end:]


@params_io.command("python -m pipeline.readme")
def main(argv: list[str] | None = None) -> int:
    ap = params_io.ArgumentParser(prog="python -m pipeline.readme", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when the README's block is stale, writing nothing")
    args = ap.parse_args(argv)
    text = README.read_text()
    new = render(text)
    if args.check:
        if new != text:
            print("README.md's results block is stale: run `python -m pipeline.readme`", file=sys.stderr)
            return 1
        return 0
    if new != text:
        README.write_text(new)
        print("README.md: results block rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
