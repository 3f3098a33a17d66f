"""The Big 2 tournament's evidence (issue 29, section 4): over 100 deals at the old cost, every
interval clustered on the deals, Holm's correction over the pairs, and a report sentence that
says only what the rating differences support."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import numpy as np
import pytest

from climbrl.evaluate.stats import clustered_rate_interval, clustered_rate_p_value
from climbrl.evaluate.tournament import group_verdict, schedule, summarize
from tests.test_rating import _records

ABCD = ["A", "B", "C", "D"]


def _game(order: list[int], deal: int) -> list:
    """A four-seat record in which seat s holds order[s] and the seats finish in seat order."""
    return order + [0, 1, 2, 3] + [1.0, -1 / 3, -1 / 3, -1 / 3] + order + [deal]


def test_the_study_schedule_plays_120_deals_balanced_at_the_old_cost() -> None:
    games = schedule(10, deals=120)
    assert len(games) == 210 * 120 == 25_200  # 4 deals x 24 seatings played 20,160
    assert {d for _, d in games} == set(range(120))
    seat, rel, blocks = Counter(), Counter(), Counter()
    for seats, d in games:
        group = tuple(sorted(seats))
        blocks[(group, d // 24, seats)] += 1
        for s, p in enumerate(seats):
            seat[(p, s)] += 1
            seat[(p, s, d)] += 1
            for k in (1, 2, 3):
                rel[(p, seats[(s + k) % 4], k)] += 1
    # every block of 24 deals plays every group in each of its 24 seatings exactly once
    assert len(blocks) == 210 * 5 * 24 and set(blocks.values()) == {1}
    assert len({seat[(p, s)] for p in range(10) for s in range(4)}) == 1  # every participant in every seat
    assert len(set(rel.values())) == 1  # every pair equally often next / across / before
    # within every deal, every participant holds every seat's cards equally often (84 groups: 21 each)
    assert {seat[(p, s, d)] for p in range(10) for s in range(4) for d in range(120)} == {21}


def test_the_params_and_the_cli_play_over_100_deals_in_whole_blocks() -> None:
    from climbrl.cli import build_parser
    from climbrl.config import TOURNAMENT_DEALS
    from climbrl.params import load_params

    deals = load_params("params.yaml").raw["tournament"]["deals"]
    assert deals >= 100 and deals % 24 == 0
    args = build_parser().parse_args(["tournament"])
    assert args.deals == TOURNAMENT_DEALS == deals


def test_win_rates_and_the_pairwise_matrix_are_clustered_on_the_deals() -> None:
    # A wins every game of the even deals and finishes last in every game of the odd ones
    rec = []
    for d in range(10):
        for perm in itertools.permutations([1, 2, 3]):
            order = [0, *perm] if d % 2 == 0 else [*perm, 0]
            rec.append(_game(order, d))
    res = summarize(ABCD, rec, resamples=20, rules="paper")
    a = next(r for r in res["leaderboard"] if r["participant"] == "A")
    per_deal = [6 if d % 2 == 0 else 0 for d in range(10)]
    assert (a["win_rate"], a["win_rate_low"], a["win_rate_high"]) == clustered_rate_interval(per_deal, 6)
    assert a["win_rate_high"] - a["win_rate_low"] > 0.5  # Wilson's, on 60 independent games, is 0.25 wide
    ab = res["pairwise"]["A>B"]
    assert (ab["rate"], ab["low"], ab["high"]) == clustered_rate_interval(per_deal, 6)
    assert res["deals"] == 10 and a["deals"] == 10
    # one deal shows no spread between deals: nothing is known about card luck
    one = summarize(ABCD, [r for r in rec if r[-1] == 0], resamples=5, rules="paper")
    assert all((r["win_rate_low"], r["win_rate_high"]) == (0.0, 1.0) for r in one["leaderboard"])


def _rock_paper_scissors(forward: int, backward: int) -> list[list]:
    """A ahead of B, B of C, C of A in 2 of 3 games on ``forward`` deals and 1 of 3 on
    ``backward`` deals; D always last."""
    cycle, reverse = ([0, 1, 2, 3], [1, 2, 0, 3], [2, 0, 1, 3]), ([0, 2, 1, 3], [2, 1, 0, 3], [1, 0, 2, 3])
    return [_game(list(o), d) for d in range(forward + backward) for o in (cycle if d < forward else reverse)]


def test_counter_chains_are_significant_only_after_holms_correction() -> None:
    res = summarize(ABCD, _rock_paper_scissors(14, 5), resamples=20, rules="paper")
    chain = next(c for c in res["counter_chains"] if set(c["cycle"]) == {"A", "B", "C"})
    p = clustered_rate_p_value([2] * 14 + [1] * 5, 3)
    assert 0.05 / 3 < p < 0.05  # each edge alone: significant, its clustered interval above one half
    assert chain["p_values"] == [p, p, p]
    assert all(res["pairwise"][k]["low"] > 0.5 for k in ("A>B", "B>C", "C>A"))
    assert res["pairwise"]["A>D"]["significant"]  # 19 deals of 19 won: 2^-18, below 0.05 / 6
    assert not chain["significant"]  # Holm over the six pairs: 0.035 > 0.05 / 3 after the three D pairs
    # three times the deals: significant after the correction too
    more = summarize(ABCD, _rock_paper_scissors(42, 15), resamples=20, rules="paper")
    assert next(c for c in more["counter_chains"] if set(c["cycle"]) == {"A", "B", "C"})["significant"]
    # on one deal nothing is significant, however many games it holds
    one = summarize(ABCD, [r[:-1] + [0] for r in _rock_paper_scissors(14, 0) * 10], resamples=5, rules="paper")
    assert one["counter_chains"] and not any(c["significant"] for c in one["counter_chains"])


@pytest.fixture(scope="module")
def learners_and_rule_agents() -> dict:
    """A tournament played by the model: mcq and the heuristic equally strong, ppo well above both,
    greedy between, random below all (600 games on 120 deals)."""
    names = ["ppo", "mcq", "heuristic", "random", "greedy"]
    theta = np.array([0.7, 0.0, 0.0, -1.5, 0.35])
    return summarize(names, _records(theta, deals=120, seed=5), resamples=100, rules="paper", game="big2")


def test_rating_differences_are_holm_adjusted_and_the_verdict_says_only_what_they_support(
        learners_and_rule_agents) -> None:
    res = learners_and_rule_agents
    diffs = {(d["higher"], d["lower"]): d for d in res["rating_differences"]}
    assert len(diffs) == 10
    assert all(d["low"] > 0 for d in diffs.values() if d["significant"])
    mcq_heuristic = diffs.get(("mcq", "heuristic")) or diffs[("heuristic", "mcq")]
    assert mcq_heuristic["low"] < 0 < mcq_heuristic["high"] and not mcq_heuristic["significant"]
    assert diffs[("ppo", "heuristic")]["significant"]
    text = group_verdict(res, ["ppo", "mcq"])
    assert "all are above random" in text and "all are above heuristic" not in text
    assert "ppo is also above greedy and heuristic" in text
    assert "mcq is not separated from heuristic and is below greedy" in text
    assert text.startswith("By the rating differences (paired bootstrap over the 120 deals, Holm-adjusted over all "
                           "10 pairs), of ppo and mcq:")
    with pytest.raises(ValueError, match="members of the group and others"):
        group_verdict(res, res["participants"])


def test_the_report_says_of_the_learners_only_what_the_rating_differences_support(
        learners_and_rule_agents, tmp_path, monkeypatch) -> None:
    from climbrl.params import parse_params
    from climbrl.report import build_report
    from tests.study_params import write_results
    from tests.test_selection import PARAMS  # the learners ppo and mcq

    monkeypatch.chdir(tmp_path)
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "tournament.json").write_text(json.dumps(learners_and_rule_agents))
    for kind in ("eval", "validation"):  # the report requires every learner's results
        for algo in ("ppo", "mcq"):
            write_results(tmp_path / "reports", kind, algo, {"random": 40, "greedy": 30}, 80)
    build_report(parse_params(PARAMS), tmp_path / "reports", tmp_path / "runs")
    md = (tmp_path / "reports" / "report.md").read_text()
    section = md[md.index("## Tournament"):]
    assert "every group of four plays each of the 120 deals once" in section
    assert group_verdict(learners_and_rule_agents, ["ppo", "mcq"]) in section
    assert "mcq: above random; not separated from" in section  # the leaderboard's own lines
