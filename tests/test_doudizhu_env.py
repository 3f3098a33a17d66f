"""The ``doudizhu_v0`` PettingZoo AEC environment: PettingZoo's API and seed tests, fixed action
ids with an exact mask, the auction inside the episode, engine returns as rewards, no hidden card."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from climbrl.games.doudizhu import env as ddz_env
from climbrl.games.doudizhu.moves import action_table
from tests.random_play import env_episode_rewards


@pytest.mark.parametrize("rules", ["standard", "openspiel", "rlcard", "online", "douzero"])
def test_api(rules: str) -> None:
    api_test(ddz_env.env(rules=rules), num_cycles=300)


def test_seed() -> None:
    seed_test(lambda: ddz_env.env(rules="standard"), num_cycles=200)


def test_action_space_size_follows_the_rules() -> None:
    t = action_table()
    assert t.n_common < t.n_ids
    for rules, n in (("standard", t.n_common), ("openspiel", t.n_common), ("rlcard", t.n_common)):
        e = ddz_env.raw_env(rules=rules)
        assert e.action_space("player_0").n == n
        assert e.observation_space("player_0")["action_mask"].shape == (n,)
    from climbrl.games.doudizhu.rules import get_rules

    e = ddz_env.raw_env(rules=get_rules("openspiel", wing_same_rank=True))
    assert e.action_space("player_1").n == t.n_ids


@pytest.mark.parametrize("rules", ["standard", "online", "rlcard", "douzero"])
def test_mask_is_exactly_the_legal_ids(rules: str) -> None:
    e = ddz_env.env(rules=rules)
    e.reset(seed=3)
    rng = np.random.default_rng(1)
    phases = set()
    for agent in e.agent_iter():
        obs, _, term, trunc, info = e.last()
        if term or trunc:
            assert not obs["action_mask"].any()
            e.step(None)
            continue
        state = e.unwrapped.state
        phases.add(state.phase)
        legal = info["legal_moves"]
        assert state.legal_moves() == legal
        assert np.flatnonzero(obs["action_mask"]).tolist() == legal
        assert info["legal_moves_text"] == [e.unwrapped.game.format_move(m) for m in legal]
        for other in e.possible_agents:
            if other != agent:
                assert not e.observe(other)["action_mask"].any()
        e.step(int(rng.choice(legal)))
    assert phases == ({1} if rules in ("rlcard", "douzero") else {0, 1})


def test_bidding_is_part_of_the_episode() -> None:
    e = ddz_env.env(rules="standard")
    e.reset(seed=5)
    first = e.unwrapped.state.current_player
    assert e.agent_selection == f"player_{first}"
    assert e.last()[4]["legal_moves"] == [0, 1, 2, 3]
    e.step(3)  # bid 3 ends the auction: this seat is landlord and leads
    state = e.unwrapped.state
    assert state.landlord == first and state.stake == 3 and e.agent_selection == f"player_{first}"
    obs = e.last()[0]["observation"]
    assert obs[ddz_env._LANDLORD] == 1.0 and obs[ddz_env._LEADS] == 1.0
    assert 0 not in e.last()[4]["legal_moves"]  # no pass on a lead


@pytest.mark.parametrize("rules", ["standard", "openspiel", "rlcard", "online", "douzero"])
def test_rewards_are_engine_returns(rules: str) -> None:
    for seed in range(4):
        e = ddz_env.env(rules=rules)
        e.reset(seed=seed)
        rng = np.random.default_rng(seed)
        total = env_episode_rewards(e, rng)
        state = e.unwrapped.state
        assert state.is_terminal()
        assert [total[a] for a in e.possible_agents] == state.returns()


def test_all_pass_ending_gives_zero_rewards() -> None:
    e = ddz_env.env(rules="openspiel")
    e.reset(seed=2)
    for _ in range(3):
        e.step(0)
    assert all(e.terminations.values())
    assert e.unwrapped.state.returns() == [0.0, 0.0, 0.0]
    assert e.unwrapped.rewards == {a: 0.0 for a in e.possible_agents}


def test_observation_holds_no_hidden_card() -> None:
    """Moving a card between the two other hands changes nothing in a seat's observation."""
    e = ddz_env.raw_env(rules="standard")
    e.reset(seed=8)
    rng = np.random.default_rng(0)
    checked = 0
    while not e.state.is_terminal():
        s = e.state
        if s.phase == 1:
            for seat in range(3):
                o1, o2 = [x for x in range(3) if x != seat]
                x = next((r for r in range(15) if s.hands[o1][r] > 0 and s.hands[o2][r] == 0), None)
                y = next((r for r in range(15) if s.hands[o2][r] > 0 and s.hands[o1][r] == 0), None)
                if x is None or y is None:
                    continue
                t = s.clone()
                t.hands[o1][x] -= 1
                t.hands[o2][x] += 1
                t.hands[o2][y] -= 1
                t.hands[o1][y] += 1
                assert np.array_equal(ddz_env.encode_observation(t, seat), ddz_env.encode_observation(s, seat))
                checked += 1
        legal = s.legal_moves()
        e.step(int(rng.choice(legal)))
    assert checked > 20


def test_observation_layout() -> None:
    e = ddz_env.raw_env(rules="standard")
    e.reset(seed=4)
    s = e.state
    seat = s.current_player
    v = e.observe(f"player_{seat}")["observation"]
    assert v.shape == (ddz_env.OBS_SIZE,) and v.min() >= 0.0 and v.max() <= 1.0
    assert np.allclose(v[:13] * 4, s.hands[seat][:13]) and np.allclose(v[13:15], s.hands[seat][13:])
    assert v[ddz_env._PHASE] == 1.0 and not v[ddz_env._KITTY:ddz_env._KITTY + 15].any()
    assert v[ddz_env._HIGHEST] == 1.0
    e.step(2)
    nxt = e.state.current_player
    w = e.observe(f"player_{nxt}")["observation"]
    rel = (seat - nxt) % 3
    assert w[ddz_env._AUCTION + 7 * rel + 3] == 1.0  # that seat's last auction action: bid 2
    assert w[ddz_env._HIGHEST + 2] == 1.0


@pytest.mark.parametrize("bad", [-1, 10**6, 2.0, True, "0", None])
def test_illegal_action_is_a_clear_error(bad) -> None:
    e = ddz_env.env()
    e.reset(seed=1)
    before = e.unwrapped.state.clone()
    with pytest.raises(ValueError, match="not legal"):
        e.step(bad)
    assert e.unwrapped.state == before
