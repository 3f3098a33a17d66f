"""A league past the warm start (issue 46): prioritised fictitious self-play over the opponent
pool (``pool_weighting: pfsp``, :class:`climbrl.learn.curriculum.WinRates`) and the win-rate
objective (``reward_objective: win``)."""

from __future__ import annotations

import numpy as np
import pytest

from climbrl.config import ConfigError, train_config
from climbrl.games.registry import make_game
from climbrl.learn.bidding import BidRouting
from climbrl.learn.checkpoint import load
from climbrl.learn.curriculum import Curriculum, WinRates
from climbrl.learn.registry import make_learner
from climbrl.learn.train import play_epoch
from tests.resume import straight_and_resumed, untimed


def _league(epochs: int = 3, **kw):
    return train_config("ppo", game="big2", epochs=epochs, games_per_epoch=8, eval_every=0, keep_policy_every=0,
                        seed=2, hidden=16, curriculum="opponent_pool", pool_weighting="pfsp",
                        pool_rule_agents=("random", "heuristic"), snapshot_every=8, pool_size=2, **kw)


def test_win_rates_start_even_fade_and_forget() -> None:
    rates = WinRates()
    assert rates.rate("x") == 0.5
    rates.record(["x", "x", "y"], np.array([True, True, False]))
    assert rates.rate("x") == pytest.approx(3 / 4) and rates.rate("y") == pytest.approx(1 / 3)
    rates.record(["y"], np.array([True]))  # x's two games fade by DECAY
    assert rates.games["x"] == pytest.approx(2 * WinRates.DECAY)
    rates.forget({"y"})
    assert rates.rate("x") == 0.5


def test_pfsp_meets_the_opponents_that_still_win_most_one_opponent_a_game() -> None:
    cfg = _league()
    learner = make_learner(cfg)
    cur = Curriculum(cfg, learner, 4)
    me = learner.behaviour()
    names = [a.name for a in cur.snapshots + cur.rule_agents]
    beaten, strong = names[-2], names[-1]  # random, heuristic
    cur.win_rates.record([beaten] * 50 + [strong] * 50, np.array([True] * 48 + [False] * 2 + [False] * 50))
    seatings = cur.seatings(400, me, np.random.default_rng(0))
    assert len(cur.drawn) == 400
    for g, (seating, name) in enumerate(zip(seatings, cur.drawn, strict=True)):
        assert seating[g % 4] is me
        assert {a.name for i, a in enumerate(seating) if i != g % 4} == {name}
    counts = {n: cur.drawn.count(n) for n in names}
    assert counts[strong] > 5 * counts[beaten]
    assert counts[strong] > counts[names[0]] > counts[beaten]  # the unmet snapshot is met as an even one


def test_a_league_counts_the_learners_results_and_resumes_exactly(tmp_path) -> None:
    straight, resumed = straight_and_resumed(_league, tmp_path)
    assert untimed(straight["history"]) == untimed(resumed["history"])
    rates = load(tmp_path / "a" / "checkpoint.pt")["curriculum"]["win_rates"]
    assert rates == load(tmp_path / "b" / "checkpoint.pt")["curriculum"]["win_rates"]
    assert sum(rates["games"].values()) > 0  # the games were counted against their opponents


def test_a_leagues_outcomes_are_the_learners_own_returns() -> None:
    cfg = _league()
    game = make_game(cfg.game_name)
    learner = make_learner(cfg)
    cur = Curriculum(cfg, learner, game.num_players)
    played = play_epoch(cfg, game, learner.behaviour(), cur, 0, BidRouting(cfg))
    rollout, _ = played.result()
    assert played.opponents == cur.drawn and len(rollout.outcomes) == cfg.games_per_epoch
    np.testing.assert_array_equal(rollout.outcomes, rollout.rewards[rollout.dones])  # the score objective


def test_the_win_objective_rewards_the_sign_of_the_return() -> None:
    cfg = _league(reward_objective="win")
    game = make_game(cfg.game_name)
    learner = make_learner(cfg)
    rollout, _ = play_epoch(cfg, game, learner.behaviour(), Curriculum(cfg, learner, 4), 0, BidRouting(cfg)).result()
    finals = rollout.rewards[rollout.dones]
    np.testing.assert_array_equal(finals, np.sign(rollout.outcomes))
    assert set(np.unique(finals)) <= {-1.0, 0.0, 1.0} and (finals != 0).any()


@pytest.mark.parametrize("kwargs, field", [
    ({"pool_weighting": "pfsp", "curriculum": "self_play"}, "pool_weighting"),
    ({"pool_weighting": "elo"}, "pool_weighting"),
    ({"pfsp_power": -1}, "pfsp_power"),
    ({"pfsp_power": True}, "pfsp_power"),
    ({"reward_objective": "points"}, "reward_objective"),
    ({"reward_objective": "win", "card_score_reward": True}, "reward_objective"),
])
def test_bad_league_and_objective_settings_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        train_config("ppo", game="big2", **kwargs)
