"""The ``big2_v0`` PettingZoo AEC environment passes PettingZoo's own API and seed tests."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from climbrl.games.big2 import env as big2_env
from climbrl.games.big2.combos import MAX_LEGAL_MOVES
from tests.random_play import env_episode_rewards


@pytest.mark.parametrize("rules", ["paper", "standard", "charlesworth"])
def test_api(rules: str) -> None:
    api_test(big2_env.env(rules=rules), num_cycles=300)


def test_seed() -> None:
    seed_test(lambda: big2_env.env(rules="paper"), num_cycles=200)


def test_mask_matches_legal_moves_and_infos() -> None:
    e = big2_env.env()
    e.reset(seed=3)
    for _ in range(60):
        agent = e.agent_selection
        obs, _, term, trunc, info = e.last()
        if term or trunc:
            break
        legal = info["legal_moves"]
        assert obs["action_mask"].shape == (MAX_LEGAL_MOVES,)
        assert obs["action_mask"].sum() == len(legal) and obs["action_mask"][: len(legal)].all()
        assert e.unwrapped.state.legal_moves() == legal
        assert info["legal_moves_text"] == [e.unwrapped.game.format_move(m) for m in legal]
        e.step(len(legal) - 1)
        assert agent != e.agent_selection or e.terminations[agent]


def test_rewards_are_engine_returns() -> None:
    e = big2_env.env(rules="standard")
    e.reset(seed=11)
    rng = np.random.default_rng(0)
    total = env_episode_rewards(e, rng)
    state = e.unwrapped.state
    assert state.is_terminal()
    assert [total[a] for a in e.possible_agents] == state.returns()


def test_illegal_action_is_a_clear_error() -> None:
    e = big2_env.env()
    e.reset(seed=1)
    n = len(e.unwrapped.state.legal_moves())
    with pytest.raises(ValueError, match="not legal"):
        e.step(n)
