"""Dou Dizhu's landlord-versus-peasants protocol (DouZero's): the douzero preset, the duel and its
numbers, the deep version, the round robin and its rating, the CLI."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from climbrl.agents.external.rlcard_rule import rules_problem
from climbrl.agents.runner import deal_seeds
from climbrl.cli import main
from climbrl.evaluate import duel as duel_mod
from climbrl.evaluate.deep import deep_duel
from climbrl.evaluate.duel import DuelGame, duel_tasks, game_record, play_duel_chunk, summarize_duel, team_match
from climbrl.evaluate.roundrobin import format_round_robin, round_robin, summarize_round_robin
from climbrl.evaluate.stats import mean_summary
from climbrl.games.doudizhu.moves import allowed_mask
from climbrl.games.doudizhu.rules import get_rules
from climbrl.games.doudizhu.state import DdzGame
from tests.reference import require_rlcard

NAME = "doudizhu:douzero"


# --- the preset ---------------------------------------------------------------------------------
def test_the_douzero_preset_is_rlcards_game_with_zero_sum_bomb_doubled_points() -> None:
    r = get_rules("douzero")
    assert r.landlord == 0 and r.reward == "score" and r.zero_sum and r.base_stake == 1
    assert r.bomb_doubles and not r.spring_doubles  # DouZero's game doubles per bomb only
    assert np.array_equal(allowed_mask(r), allowed_mask(get_rules("rlcard")))
    assert rules_problem(r) is None  # RLCard's rule agent plays it


def test_rlcard_rule_agent_plays_the_douzero_preset() -> None:
    require_rlcard()
    res = team_match("rlcard-rule", "random", deals=3, seed=0)
    assert res["A"]["landlord"]["games"] == 3


def _two_bomb_spring(rules: str) -> object:
    """The landlord (seat 0) plays two bombs, a solo chain and a pair; the peasants always pass."""
    game = DdzGame(rules)
    state = game.new_game(hands=["3333444456789TJQ2", "555666777888999TT", "TJJJQQQKKKAAA22BR"], kitty="KA2")
    for lead in ("3333", "4444", "56789TJQKA", "22"):
        state.apply_text(lead)
        if not state.is_terminal():
            state.apply_text("pass")
            state.apply_text("pass")
    assert state.is_terminal()
    return state


def test_adp_is_the_signed_double_pay_of_state_score() -> None:
    state = _two_bomb_spring("douzero")
    s = state.score()
    assert (s["landlord_won"], s["bombs"], s["spring"], s["pay"]) == (True, 2, True, 4)  # 1 x 2^2, no spring x2
    assert state.returns() == [8.0, -4.0, -4.0]  # the landlord's return is DouZero's difference in points
    rec = game_record(state, deal=0, landlord_side=0)
    assert rec == DuelGame(0, 0, True, 4, 2, True, 10)
    assert (rec.winner(), rec.points(0), rec.points(1)) == (0, 8, -8)
    other = game_record(state, deal=0, landlord_side=1)  # B held the landlord seat: B won
    assert (other.winner(), other.points(0), other.points(1)) == (1, -8, 8)
    # RLCard's rules (win_loss rewards) still score the game, and double the spring
    assert game_record(_two_bomb_spring("rlcard"), 0, 0).points(0) == 16


# --- the duel -----------------------------------------------------------------------------------
def test_each_deal_is_played_both_ways_on_the_same_cards_and_streams(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = {}
    real = duel_mod.play_games

    def spy(game, seatings, seeds, seat_seeds):  # type: ignore[no-untyped-def]
        seen.update(seatings=seatings, seeds=seeds, streams=seat_seeds)
        states = real(game, seatings, seeds, seat_seeds)
        seen["states"] = states
        return states

    monkeypatch.setattr(duel_mod, "play_games", spy)
    seeds = deal_seeds(4, 5)
    records = play_duel_chunk(("heuristic", "greedy", NAME, 4, 10, tuple(seeds)))
    a, b = seen["seatings"][0][0], seen["seatings"][0][1]
    assert a.name != b.name
    for k in range(5):
        g0, g1 = 2 * k, 2 * k + 1
        assert seen["seatings"][g0] == [a, b, b] and seen["seatings"][g1] == [b, a, a]
        assert seen["seeds"][g0] == seen["seeds"][g1] == seeds[k]
        assert seen["streams"][g0] == seen["streams"][g1]
        first = [DdzGame("douzero").new_game(seed=seen["seeds"][g]).hands[0].tolist() for g in (g0, g1)]
        assert first[0] == first[1]  # the landlord seat holds the same 20 cards in both games
        assert (records[g0].deal, records[g0].landlord_side) == (10 + k, 0)
        assert (records[g1].deal, records[g1].landlord_side) == (10 + k, 1)
    for st, rec in zip(seen["states"], records, strict=True):
        assert rec == game_record(st, rec.deal, rec.landlord_side)


@pytest.mark.parametrize("agent", ["heuristic", "random"])
def test_an_agent_against_itself_plays_the_same_game_twice(agent: str) -> None:
    """Same agent on both sides and one seat stream per seat and deal: the two games of a deal are
    one game, so A wins exactly one of them (the landlord's result), and nets zero points."""
    res = team_match(agent, agent, deals=40, seed=3)
    a, b = res["A"], res["B"]
    assert a["landlord"]["wins"] + a["peasants"]["wins"] == 40
    assert a["landlord"] == b["landlord"] and a["peasants"] == b["peasants"]
    assert res["paired"]["split"] == 40 and res["paired"]["net_points"] == 0.0
    assert a["both"]["win_rate"] == 0.5 and a["both"]["adp"] == 0.0
    assert set(res["per_deal"]["a_wins"]) == {1} and set(res["per_deal"]["a_points"]) == {0}


def test_sides_mirror_each_other_and_adp_follows_the_records() -> None:
    res = team_match("greedy", "random", deals=30, seed=1)
    a, b = res["A"], res["B"]
    assert a["landlord"]["wins"] + b["peasants"]["wins"] == 30  # the same 30 games from both sides
    assert a["landlord"]["adp"] == -b["peasants"]["adp"] and a["both"]["adp"] == -b["both"]["adp"]
    assert a["both"]["adp"] == pytest.approx((a["landlord"]["adp"] + a["peasants"]["adp"]) / 2)
    assert res["paired"]["net_points"] == pytest.approx(sum(res["per_deal"]["a_points"]) / 30)
    assert a["landlord"]["win_rate_low"] < a["landlord"]["win_rate"] < a["landlord"]["win_rate_high"]
    assert a["both"]["win_rate"] > 0.5 and a["both"]["adp"] > 0  # greedy beats random


def test_numbers_do_not_depend_on_the_worker_count() -> None:
    one = team_match("greedy", "random", deals=30, seed=2, workers=1)  # 2 chunks: 25 + 5 deals
    two = team_match("greedy", "random", deals=30, seed=2, workers=2)
    assert one == two


def test_summaries_do_not_depend_on_the_record_order() -> None:
    records = play_duel_chunk(("greedy", "random", NAME, 0, 0, tuple(deal_seeds(0, 8))))
    shuffled = records[:]
    random.Random(1).shuffle(shuffled)
    assert summarize_duel(records) == summarize_duel(shuffled)
    with pytest.raises(ValueError, match="lack one of their two games"):
        summarize_duel(records[1:])


def test_clear_errors() -> None:
    with pytest.raises(ValueError, match="auction"):
        team_match("greedy", "random", rules="standard", deals=3)
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        team_match("greedy", "nobody", deals=3)
    with pytest.raises(ValueError, match="doudizhu"):
        team_match("greedy", "random", game="big2", rules="paper", deals=3)
    with pytest.raises(ValueError, match="deals must be >= 1"):
        team_match("greedy", "random", deals=0)
    with pytest.raises(ValueError, match="repeats"):
        deep_duel("greedy", "random", deals=3, repeats=1)


def test_deep_duel_repeats_are_independent_duels_and_pool_them() -> None:
    res = deep_duel("greedy", "random", deals=6, repeats=3, seed=5)
    singles = [team_match("greedy", "random", deals=6, seed=5 + r, purpose="deep") for r in range(3)]
    wp = [s["A"]["landlord"]["win_rate"] for s in singles]
    spread = res["spread"]["A"]["landlord"]
    assert spread["win_rates"] == wp and spread["win_rate_mean"] == pytest.approx(np.mean(wp))
    assert spread["win_rate_std"] == pytest.approx(np.std(wp, ddof=1))
    assert spread["adps"] == [s["A"]["landlord"]["adp"] for s in singles]
    pooled = res["pooled"]
    assert pooled["deals"] == 18 and pooled["games"] == 36
    assert pooled["A"]["both"]["wins"] == sum(s["A"]["both"]["wins"] for s in singles)


# --- the round robin ----------------------------------------------------------------------------
PARTS = {"rand": "random", "greedy": "greedy", "heur": "heuristic"}


def test_round_robin_matrices_are_consistent() -> None:
    res = round_robin(PARTS, deals=8, seed=0, resamples=20)
    n = len(PARTS)
    assert res["games"] == 3 * 8 * 2
    for key in ("win_rate", "adp"):
        for role in ("landlord", "peasants", "both"):
            m = res[key][role]
            assert len(m) == n and all(len(row) == n for row in m)
            assert all(m[i][i] is None for i in range(n))
    for i in range(n):
        for j in range(n):
            if i != j:
                assert res["adp"]["both"][i][j] == -res["adp"]["both"][j][i]
                assert res["win_rate"]["both"][i][j] + res["win_rate"]["both"][j][i] == pytest.approx(1.0)
                assert res["win_rate"]["landlord"][i][j] + res["win_rate"]["peasants"][j][i] == pytest.approx(1.0)
    board = {r["participant"]: r for r in res["leaderboard"]}
    assert board["rand"]["rating"] < 1500 and all(r["games"] == 2 * 2 * 8 for r in board.values())
    assert res == round_robin(PARTS, deals=8, seed=0, resamples=20, workers=2)


def test_round_robin_rating_ignores_the_order_of_the_games() -> None:
    seeds = deal_seeds(0, 6)
    records = [(i, j, *g) for i, j in ((0, 1), (0, 2), (1, 2))
               for t in duel_tasks(list(PARTS.values())[i], list(PARTS.values())[j], NAME, 0, seeds)
               for g in play_duel_chunk(t)]
    shuffled = records[:]
    random.Random(7).shuffle(shuffled)
    a = summarize_round_robin(list(PARTS), records, resamples=30)
    b = summarize_round_robin(list(PARTS), shuffled, resamples=30)
    assert a == b


def _sweep(a: int, b: int, deals: int, pay: int = 1) -> list[tuple]:
    """Records of a pair where ``a`` wins both its games (as landlord and as the peasants) of every deal."""
    return [(a, b, *g) if a < b else (b, a, *g) for d in range(deals)
            for g in ((DuelGame(d, 0 if a < b else 1, True, pay, 0, False, 10)),
                      DuelGame(d, 1 if a < b else 0, False, pay, 0, False, 10))]


def test_round_robin_finds_a_counter_chain_and_tests_it_with_holm() -> None:
    # A beats B, B beats C and C beats A on every deal: a cycle, significant after Holm with 12 deals
    res = summarize_round_robin(["A", "B", "C"], _sweep(0, 1, 12) + _sweep(1, 2, 12) + _sweep(2, 0, 12), resamples=10)
    assert [c["cycle"] for c in res["counter_chains"]] == [["A", "B", "C"]]
    assert res["counter_chains"][0]["significant"]
    assert res["pairwise"]["A>B"]["rate"] == 1.0 and res["pairwise"]["B>A"]["rate"] == 0.0
    assert res["pairwise"]["A>B"]["significant"] and not res["pairwise"]["B>A"]["significant"]
    assert "counter-chain: A > B > C > A" in format_round_robin(res)
    # on 2 deals no pair survives: the chain is there, not significant
    small = summarize_round_robin(["A", "B", "C"], _sweep(0, 1, 2) + _sweep(1, 2, 2) + _sweep(2, 0, 2), resamples=10)
    assert small["counter_chains"] and not small["counter_chains"][0]["significant"]
    # a transitive order has no chain
    order = summarize_round_robin(["A", "B", "C"], _sweep(0, 1, 12) + _sweep(1, 2, 12) + _sweep(0, 2, 12), resamples=10)
    assert order["counter_chains"] == [] and "no counter-chains" in format_round_robin(order)


def test_round_robin_ranks_by_total_score_with_an_interval_over_the_deals() -> None:
    # A sweeps B for 3 points a game (a bomb), B sweeps C for 1: totals follow the points, not the wins
    records = _sweep(0, 1, 6, pay=3) + _sweep(1, 2, 6) + _sweep(2, 0, 6)
    res = summarize_round_robin(["A", "B", "C"], records, resamples=10)
    rank = res["score_ranking"]
    total = {r["participant"]: r["total_points"] for r in rank}
    assert total == {"A": 12 * 6 - 4 * 6, "B": -12 * 6 + 4 * 6, "C": 4 * 6 - 4 * 6}
    assert [r["participant"] for r in rank] == ["A", "C", "B"]
    assert sum(total.values()) == 0
    for r in rank:
        assert r["adp"] == pytest.approx(r["total_points"] / r["games"])
        assert r["adp_low"] is None and r["adp_high"] is None  # every deal alike: no spread, no interval
    # A's bomb against B pays 1, 2 or 3 by deal: A's deals differ, and its interval is their t interval
    varied = [r for d in range(6) for r in _sweep(0, 1, d + 1, pay=1 + d % 3) if r[2] == d]
    rank = summarize_round_robin(["A", "B", "C"], varied + _sweep(1, 2, 6) + _sweep(2, 0, 6),
                                 resamples=10)["score_ranking"]
    a = next(r for r in rank if r["participant"] == "A")
    # a deal: two games won against B, two lost to C, each worth twice the stake to a side (both peasants pay,
    # or both are paid)
    per_deal = [(2 * 2 * (1 + d % 3) - 2 * 2) / 4 for d in range(6)]
    want = mean_summary(per_deal)
    assert a["adp"] == pytest.approx(want["mean"]) and a["adp_low"] < a["adp"] < a["adp_high"]
    assert (a["adp_low"], a["adp_high"]) == pytest.approx((want["low"], want["high"]))
    # a participant without games has no ADP and no interval (not an error)
    idle = summarize_round_robin(["A", "B", "C"], _sweep(0, 1, 4), resamples=10)["score_ranking"]
    c = next(r for r in idle if r["participant"] == "C")
    assert c["games"] == 0 and c["adp"] is None and c["adp_low"] is None and c["adp_high"] is None


def test_round_robin_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        round_robin({"only": "random"}, deals=2)
    with pytest.raises(ValueError, match="auction"):
        round_robin(PARTS, rules="online", deals=2)


# --- the CLI ------------------------------------------------------------------------------------
def test_cli_duel_and_roundrobin(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["duel", "--agent", "greedy", "--opponent", "random", "--deals", "4", "--workers", "1",
                 "--out", str(tmp_path / "duel.json")]) == 0
    assert json.loads((tmp_path / "duel.json").read_text())["A"]["landlord"]["games"] == 4
    assert main(["duel", "--agent", "greedy", "--opponent", "random", "--deals", "3", "--repeats", "2",
                 "--workers", "1", "--json"]) == 0
    assert main(["roundrobin", "--participants", "r=random,greedy", "--deals", "3", "--workers", "1",
                 "--resamples", "10", "--out", str(tmp_path / "rr")]) == 0
    saved = json.loads((tmp_path / "rr" / "roundrobin.json").read_text())
    assert saved["participants"] == ["r", "greedy"] and (tmp_path / "rr" / "roundrobin.png").stat().st_size > 0
    capsys.readouterr()
    # under an auction the duel plays the whole game (issue 26): every deck from every seat
    assert main(["duel", "--agent", "greedy", "--opponent", "random", "--rules", "standard", "--deals", "2",
                 "--workers", "1"]) == 0
    assert "landlord in" in capsys.readouterr().out
    assert main(["roundrobin", "--participants", "random,greedy", "--rules", "standard", "--deals", "2",
                 "--workers", "1"]) == 2
    assert "auction" in capsys.readouterr().err


def test_bradley_terry_from_counts_is_the_plackett_luce_fit_of_the_games() -> None:
    from climbrl.evaluate.rating import bradley_terry, plackett_luce

    rng = random.Random(2)
    games = [tuple(rng.sample(range(4), 2)) for _ in range(300)]
    counts = np.zeros((4, 4))
    for w, lose in games:
        counts[w, lose] += 1
    assert np.allclose(bradley_terry(counts), plackett_luce(games, 4), atol=1e-9)
