"""The evaluation harness: duplicate deals from every seat, intervals, worker-count invariance."""

from __future__ import annotations

import json

import pytest

from climbrl.cli import main
from climbrl.evaluate.match import deal_seeds, deal_wins, play_games, run_match, seat_seed
from climbrl.evaluate.stats import wilson_interval
from climbrl.games.big2 import Big2Game
from climbrl.learn.specs import make_agent


def test_same_numbers_for_any_worker_count() -> None:
    one = run_match("heuristic", ["random", "greedy", "conservative"], games=120, seed=4, workers=1)
    two = run_match("heuristic", ["random", "greedy", "conservative"], games=120, seed=4, workers=2)
    assert one == two
    assert one["games"] == 120 and one["deals"] == 30


def test_every_deal_from_every_seat() -> None:
    res = run_match("greedy", ["greedy"], games=200, seed=1, workers=2)
    # identical deterministic agents: each deal's four rotations are the same game, so the
    # evaluated seat wins exactly one in four
    assert res["wins"] == 50 and res["win_rate"] == 0.25
    assert sum(res["wins_by_seat"]) == res["wins"]


def test_summary_fields() -> None:
    res = run_match("heuristic", ["random", "greedy", "conservative"], games=80, seed=2, workers=2)
    # the same 80 games played here by hand: deal k from seat a, opponents from the next seat on
    game = Big2Game("paper")
    me, opps = make_agent("heuristic"), [make_agent(o) for o in ("random", "greedy", "conservative")]
    seatings, deals, seat_seeds = [], [], []
    for k, ds in enumerate(deal_seeds(2, 20)):
        for a in range(4):
            seatings.append([me if s == a else opps[(s - a - 1) % 4] for s in range(4)])
            deals.append(ds)
            seat_seeds.append([seat_seed(2, k, a, s) for s in range(4)])
    states = play_games(game, seatings, deals, seat_seeds)
    wins_by_seat = [sum(st.winner == a for i, st in enumerate(states) if i % 4 == a) for a in range(4)]
    wins = sum(wins_by_seat)
    assert (res["games"], res["deals"], res["wins"], res["wins_by_seat"]) == (80, 20, wins, wins_by_seat)
    assert res["win_rate"] == wins / 80 and (res["win_rate_low"], res["win_rate_high"]) == wilson_interval(wins, 80)
    assert res["normalized_win_rate"] == pytest.approx(wins / 20)
    assert res["mean_reward"] == pytest.approx(sum(st.returns()[i % 4] for i, st in enumerate(states)) / 80)
    assert res["mean_cards_left"] == pytest.approx(sum(st.cards_left()[i % 4] for i, st in enumerate(states)) / 80)
    assert res["mean_game_length"] == pytest.approx(sum(len(st.moves) for st in states) / 80)
    assert 0 < wins < 80 and res["mean_cards_left"] > 0


def test_deal_wins_are_the_match_deal_by_deal() -> None:
    res = run_match("heuristic", ["random", "greedy", "conservative"], games=80, seed=2, workers=1)
    per_deal = deal_wins("heuristic", ["random", "greedy", "conservative"], games=80, seed=2, workers=2)
    assert len(per_deal) == 20 and sum(per_deal) == res["wins"] and set(per_deal) <= {0, 1, 2, 3, 4}
    assert per_deal[:5] == deal_wins("heuristic", ["random", "greedy", "conservative"], games=20, seed=2)
    assert deal_wins("greedy", ["greedy"], games=40, seed=1) == [1] * 10  # identical agents: one win per deal


def test_stronger_agents_win_more() -> None:
    heur = run_match("heuristic", ["random"], games=400, seed=0, workers=2)
    rand = run_match("random", ["heuristic"], games=400, seed=0, workers=2)
    assert heur["win_rate_low"] > 0.25 > rand["win_rate_high"]


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"games": 10}, "multiple of 4"),
        ({"opponents": ["random", "greedy"]}, "one opponent"),
        ({"agent": "nobody"}, "unknown agent"),
        ({"rules": "nope"}, "unknown rules preset"),
        ({"workers": 0}, "workers"),
    ],
)
def test_bad_match_requests(kwargs: dict, message: str) -> None:
    args = {"agent": "random", "opponents": ["random"], "games": 8, **kwargs}
    with pytest.raises(ValueError, match=message):
        run_match(**args)


def test_deal_seeds_are_stable() -> None:
    assert deal_seeds(0, 3) == deal_seeds(0, 5)[:3]
    assert deal_seeds(0, 3) != deal_seeds(1, 3)


def test_cli_evaluate_json_and_seed_file(capsys, tmp_path) -> None:
    seeds = tmp_path / "seeds.json"
    assert main(["seeds", "--deals", "10", "--seed", "3", "--out", str(seeds)]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--agent", "greedy", "--opponents", "random", "--games", "40",
                 "--seeds", str(seeds), "--workers", "1", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    for key in ("games", "wins", "win_rate", "win_rate_low", "win_rate_high"):
        assert key in res
    assert res["games"] == 40 and res["rules"] == "paper"
    assert main(["evaluate", "--agent", "greedy", "--opponents", "random", "--games", "400",
                 "--seeds", str(seeds)]) == 2
    assert "100 deals needed" in capsys.readouterr().err
