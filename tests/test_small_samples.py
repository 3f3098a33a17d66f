"""Statistics at small samples (issue 31, section 7): every win rate's interval lies within [0, 1]
and is never zero-width; means of points use Student t on the right degrees of freedom and give no
interval rather than a zero-width one when the sample shows no spread; and every ``--json``
output is strict JSON (no NaN, no Infinity) at tiny budgets."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from climbrl.cli import _write_json, main
from climbrl.evaluate.duel import DuelGame, summarize_duel
from climbrl.evaluate.match import RoleStats, team_scores
from climbrl.evaluate.stats import t_quantile


def _strict(text: str) -> object:
    def refuse(name: str) -> object:
        raise ValueError(f"not strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def _records(a_wins: list[tuple[bool, bool]], pays: list[tuple[int, int]] | None = None) -> list[DuelGame]:
    """Duel records: on deal ``k``, whether A won as landlord and as peasants, and the two pays."""
    out = []
    for k, (as_lord, as_peasants) in enumerate(a_wins):
        p0, p1 = pays[k] if pays else (1, 1)
        out.append(DuelGame(k, 0, as_lord, p0, 0, False, 30))  # A landlord: the landlord won iff A won
        out.append(DuelGame(k, 1, not as_peasants, p1, 0, False, 30))  # B landlord: B won iff A lost
    return out


def _rate_intervals(res: dict) -> list[tuple[float, float, float]]:
    return [(x["win_rate_low"], x["win_rate"], x["win_rate_high"]) for s in ("A", "B") for x in res[s].values()]


def test_the_both_interval_of_four_deals_stays_within_0_and_1() -> None:
    """Issue 31: A won one game of 8 (4 deals): the normal interval on the per-deal values was
    [-0.12, 0.37], below 0."""
    res = summarize_duel(_records([(True, False), (False, False), (False, False), (False, False)]))
    both = res["A"]["both"]
    assert both["win_rate"] == 0.125
    assert 0.0 <= both["win_rate_low"] < both["win_rate"] < both["win_rate_high"] <= 1.0
    # clustered on the 4 deals: t with 3 degrees of freedom, not the normal 1.96
    se = np.std([0.5, 0, 0, 0], ddof=1) / 2
    assert both["win_rate_high"] >= 0.125 + t_quantile(0.95, 3) * se - 1e-12


def test_a_duel_won_on_every_deal_has_no_zero_width_interval() -> None:
    """Issue 31: three deals won both ways printed [1.000, 1.000]."""
    res = summarize_duel(_records([(True, True)] * 3))
    for lo, rate, hi in _rate_intervals(res):
        assert 0.0 <= lo <= rate <= hi <= 1.0 and lo < hi
    assert res["A"]["both"]["win_rate_high"] == 1.0 and res["A"]["both"]["win_rate_low"] < 0.7
    # every game +2 points: ADP without spread has no interval (null), not [+2, +2]
    assert res["A"]["landlord"]["adp"] == 2.0
    assert res["A"]["landlord"]["adp_low"] is None and res["A"]["landlord"]["adp_high"] is None
    assert res["paired"]["net_points_low"] is None
    _strict(json.dumps(res, allow_nan=False))


def test_adp_uses_student_t_on_the_deals() -> None:
    records = _records([(True, False), (True, True), (False, False), (True, False)],
                       pays=[(1, 1), (2, 1), (1, 4), (1, 1)])
    res = summarize_duel(records)
    per_deal = [(records[2 * k].points(0) + records[2 * k + 1].points(0)) / 2 for k in range(4)]
    x = res["A"]["both"]
    half = t_quantile(0.95, 3) * np.std(per_deal, ddof=1) / 2
    assert x["adp"] == pytest.approx(np.mean(per_deal))
    assert (x["adp_low"], x["adp_high"]) == pytest.approx((x["adp"] - half, x["adp"] + half))


_deal = st.tuples(st.booleans(), st.booleans())
_pay = st.tuples(st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4, 8]))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(_deal, _pay), min_size=1, max_size=12))
def test_every_duel_interval_is_within_bounds_and_strict_json(deals) -> None:
    res = summarize_duel(_records([d for d, _ in deals], [p for _, p in deals]))
    for lo, rate, hi in _rate_intervals(res):
        assert 0.0 <= lo <= rate <= hi <= 1.0 and lo < hi
    for s in ("A", "B"):
        for x in res[s].values():
            assert (x["adp_low"] is None) == (x["adp_high"] is None)
            if x["adp_low"] is not None:
                assert x["adp_low"] <= x["adp"] <= x["adp_high"] and x["adp_low"] < x["adp_high"]
    _strict(json.dumps(res, allow_nan=False))


def test_a_role_played_once_has_no_score_interval_and_no_nan() -> None:
    one = RoleStats(games=1, wins=1, reward_sum=2.0, reward_sq=4.0).summary()
    assert one["mean_reward_low"] is None and one["mean_reward_high"] is None
    assert 0.0 < one["win_rate_low"] < 1.0 == one["win_rate_high"]
    few = RoleStats(games=4, wins=2, reward_sum=0.0, reward_sq=16.0).summary()  # +-2, twice each
    half = t_quantile(0.95, 3) * math.sqrt(16 / 3 / 4)
    assert (few["mean_reward_low"], few["mean_reward_high"]) == pytest.approx((-half, half))
    _strict(json.dumps([one, few], allow_nan=False))


def test_a_team_score_without_spread_has_no_interval() -> None:
    rows = [[1.0, -1.0, -1.0, 1.0]] * 8  # every game a tie between the teams: score 0 on both deals
    r = team_scores(rows, 4)
    assert r["team_score"] == 0.0 and r["team_score_low"] is None and r["team_score_high"] is None
    rows = [[2.0, -1.0, 0.0, -1.0]] * 4 + [[-1.0, 0.0, -1.0, 2.0]] * 4
    r = team_scores(rows, 4)
    half = t_quantile(0.95, 1) * np.std([2.0, -2.0], ddof=1) / math.sqrt(2)
    assert (r["team_score_low"], r["team_score_high"]) == pytest.approx((-half, half))


def test_deep_intervals_over_the_repeats_use_t_on_repeats_minus_1() -> None:
    from climbrl.evaluate.deep import deep_duel, deep_evaluate

    res = deep_duel("greedy", "random", deals=2, repeats=3, seed=7)
    t2 = t_quantile(0.95, 2)
    for side in ("A", "B"):
        for x in res["spread"][side].values():
            lo, hi = x["win_rate_mean_low"], x["win_rate_mean_high"]
            assert 0.0 <= lo <= x["win_rate_mean"] <= hi <= 1.0 and lo < hi
            if len(set(x["win_rates"])) > 1:  # the repeats differ: t on 2 degrees of freedom, clipped
                half = t2 * np.std(x["win_rates"], ddof=1) / math.sqrt(3)
                assert (lo, hi) == pytest.approx((max(0.0, x["win_rate_mean"] - half),
                                                  min(1.0, x["win_rate_mean"] + half)))
            if len(set(x["adps"])) > 1:
                half = t2 * np.std(x["adps"], ddof=1) / math.sqrt(3)
                assert (x["adp_mean_low"], x["adp_mean_high"]) == pytest.approx((x["adp_mean"] - half,
                                                                                 x["adp_mean"] + half))
            else:
                assert x["adp_mean_low"] is None and x["adp_mean_high"] is None
    r = deep_evaluate("greedy", ["random"], games=4, repeats=3, seed=2)
    lo, hi = r["win_rate_mean_low"], r["win_rate_mean_high"]
    assert 0.0 <= lo <= r["win_rate_mean"] <= hi <= 1.0 and lo < hi
    if len(set(r["win_rates"])) > 1:
        half = t2 * r["win_rate_std"] / math.sqrt(3)
        assert (lo, hi) == pytest.approx((max(0.0, r["win_rate_mean"] - half), min(1.0, r["win_rate_mean"] + half)))
    _strict(json.dumps([res, r], allow_nan=False))


def test_the_cli_json_writer_refuses_nan(capsys) -> None:
    with pytest.raises(ValueError):
        _write_json({"x": float("nan")}, None, True, "")
    _write_json({"x": None}, None, True, "")
    assert _strict(capsys.readouterr().out) == {"x": None}


TINY = [
    ("evaluate", "--game", "doudizhu", "--agent", "random", "--opponents", "random", "--games", "3"),
    ("evaluate", "--game", "doudizhu", "--agent", "greedy", "--opponents", "random", "--games", "3", "--repeats",
     "2"),
    ("evaluate", "--agent", "greedy", "--opponents", "random", "--games", "4"),
    ("evaluate", "--agent", "greedy", "--opponents", "random", "--games", "4", "--repeats", "2"),
    ("duel", "--agent", "random", "--opponent", "greedy", "--deals", "1"),
    ("duel", "--agent", "random", "--opponent", "greedy", "--deals", "4"),
    ("duel", "--agent", "random", "--opponent", "greedy", "--deals", "3", "--repeats", "2"),
    ("duel", "--agent", "greedy", "--opponent", "greedy", "--deals", "2", "--repeats", "2"),
    ("tournament", "--participants", "random,greedy,heuristic,aggressive", "--deals", "1", "--resamples", "3"),
    ("tournament", "--game", "doudizhu", "--participants", "random,greedy,heuristic", "--deals", "1",
     "--resamples", "3"),
    ("roundrobin", "--participants", "random,greedy", "--deals", "1", "--resamples", "3"),
]


@pytest.mark.parametrize("argv", TINY, ids=lambda a: " ".join(a))
def test_every_json_output_is_strict_json_at_tiny_budgets(argv: tuple[str, ...], capsys) -> None:
    rc = main([*argv, "--workers", "1", "--json"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    res = _strict(out)
    if argv[0] == "duel":  # the commands: every win rate's interval within [0, 1], never a point
        for lo, rate, hi in _rate_intervals(res.get("pooled", res)):
            assert 0.0 <= lo <= rate <= hi <= 1.0 and lo < hi


def test_ablation_intervals_are_rates_and_never_points() -> None:
    """The ablations' per-value intervals lie within [0, 1] and a difference within [-1, 1]; a
    value that never won on 3 deals, or a difference the same on every deal, is no point."""
    from pipeline.ablation import ablation_statistics

    def run(seed: int, digits: str) -> dict:
        return {"seed": seed, "vs": {"random": {"deal_wins": digits}}}

    values = {"never": [run(0, "000"), run(1, "000")], "always": [run(0, "444"), run(1, "444")],
              "some": [run(0, "012"), run(1, "400")]}
    out = ablation_statistics(values, ["random"])
    for c in out["configs"]:
        v = c["vs"]["random"]
        assert 0.0 <= v["low"] <= v["mean"] <= v["high"] <= 1.0 and v["low"] < v["high"]
    never = out["configs"][0]["vs"]["random"]
    assert never["mean"] == 0.0 and never["high"] > 0.1  # Wilson's on 24 games lost: up to 0.14
    for pair in out["comparisons"]["random"]:
        assert -1.0 <= pair["low"] <= pair["difference"] <= pair["high"] <= 1.0 and pair["low"] < pair["high"]
    never_always = out["comparisons"]["random"][0]
    assert never_always["difference"] == -1.0 and never_always["p_value"] == 0.25  # sign test on 3 deals
    assert not never_always["significant"]
