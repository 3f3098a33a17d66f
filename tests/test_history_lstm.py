"""DouZero's history input (issue 25): the ``doudizhu+history`` encoder's last 15 plays, rebuilt from
the game's record by an independent reading, blind to the hidden cards; the LSTM that reads them
(``lstm`` in the config), its weights from the learner's own stream, its checkpoints, its refusals,
and a tiny DMC run with it in one and two actor processes."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from climbrl.agents.base import Decision
from climbrl.config import ConfigError, train_config
from climbrl.encoders import make_encoder
from climbrl.encoders.doudizhu import DdzEncoder
from climbrl.encoders.doudizhu_history import DdzHistoryEncoder
from climbrl.learn import checkpoint as ckpt
from climbrl.learn.network import ActionInNet, RoleNets, make_net
from climbrl.learn.registry import make_learner
from climbrl.training import train
from tests.random_play import play_prefix
from tests.resume import straight_and_resumed, untimed
from tests.test_encoder_doudizhu import GAMES, _with_opponents_resplit

ENC = DdzHistoryEncoder()
BASE = DdzEncoder()
TINY = {"game": "doudizhu", "rules": "douzero", "games_per_epoch": 6, "eval_every": 0, "hidden": 16,
        "minibatch_decisions": 64, "keep_policy_every": 0, "encoder": "doudizhu+history", "lstm": 8}


def _history_oracle(d: Decision) -> np.ndarray:
    """The block read another way: the record's plays one by one, each a card multiset written
    as rank counts and laid out slot by slot (a rank with n cards fills its first n slots)."""
    plays = [a for _, a in d.observation.history][-15:]
    rows = [np.zeros(54, dtype=np.float32) for _ in range(15 - len(plays))]
    for a in plays:
        counts = d.game.table.counts[a] if a else np.zeros(15)
        row = np.zeros(54, dtype=np.float32)
        for rank in range(13):
            row[4 * rank:4 * rank + int(counts[rank])] = 1.0
        row[52], row[53] = counts[13], counts[14]
        rows.append(row)
    return np.concatenate(rows)


def test_registry_and_layout() -> None:
    enc = make_encoder("doudizhu:douzero", "doudizhu+history")
    assert isinstance(enc, DdzHistoryEncoder)
    assert (enc.state_dim, enc.move_dim, enc.sequence) == (542 + 15 * 54, 82, (542, 5, 162))
    assert enc.describe()["name"] == "doudizhu+history"
    assert BASE.sequence == () and make_encoder("big2").sequence == ()


@settings(max_examples=25, deadline=None)
@given(name=st.sampled_from(sorted(GAMES)), seed=st.integers(0, 2**32), choice=st.integers(0, 2**32),
       stop=st.integers(0, 120), resplit=st.integers(0, 2**32))
def test_the_block_is_the_last_15_plays_and_blind_to_hidden_cards(name, seed, choice, stop, resplit) -> None:
    s = play_prefix(GAMES[name], seed, choice, stop)
    if s is None:
        return
    d = Decision.from_state(s)
    states, moves, offsets = ENC.encode([d])
    base = BASE.encode([d])
    assert np.array_equal(states[:, :542], base[0]) and np.array_equal(moves, base[1])
    assert np.array_equal(offsets, base[2])
    np.testing.assert_array_equal(states[0, 542:], _history_oracle(d))
    t = _with_opponents_resplit(s, random.Random(resplit))
    assert np.array_equal(ENC.encode([Decision.from_state(t)])[0], states)


def test_a_batch_encodes_as_its_decisions_one_by_one() -> None:
    states = (play_prefix(GAMES["rlcard"], seed, seed, k) for seed, k in ((1, 0), (2, 5), (3, 40), (4, 70)))
    decisions = [Decision.from_state(s) for s in states if s is not None]
    assert len(decisions) >= 3
    together = ENC.encode(decisions)[0]
    for i, d in enumerate(decisions):
        assert np.array_equal(together[i], ENC.encode([d])[0][0])


def _net(lstm: int, seed: int = 0, **kw) -> ActionInNet:
    return ActionInNet(ENC.state_dim, ENC.move_dim, hidden=16, lstm=lstm, sequence=ENC.sequence if lstm else (),
                       generator=torch.Generator().manual_seed(seed), **kw)


def test_the_lstm_reads_the_history_and_replaces_its_columns() -> None:
    net = _net(8, value_head=True)
    assert net.state_in.in_features == 542 + 8 and net.value_net[0].in_features == 542 + 8
    x = torch.rand(3, ENC.state_dim)
    moves, seg = torch.rand(5, ENC.move_dim), torch.tensor([0, 0, 1, 2, 2])
    y = x.clone()
    y[:, 542 + 162:542 + 324] += 1.0  # the second step of the history
    assert not torch.allclose(net(x, moves, seg), net(y, moves, seg))
    assert not torch.allclose(net.value(x), net.value(y))
    assert net.features(x).shape == (3, 542 + 8)
    assert torch.equal(net.features(x)[:, :542], x[:, :542])


def test_weights_come_from_the_generator_alone() -> None:
    before = torch.get_rng_state()
    a, b = _net(8, seed=3), _net(8, seed=3)
    assert torch.equal(before, torch.get_rng_state())  # torch's global stream untouched
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))
    assert not torch.equal(_net(8, seed=4).lstm.weight_ih_l0, a.lstm.weight_ih_l0)
    plain = _net(0)
    assert "lstm" not in plain.config() and not hasattr(plain, "lstm")  # the MLP's config as before


def test_bad_lstm_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="sequence"):
        ActionInNet(ENC.state_dim, ENC.move_dim, hidden=8, lstm=8, sequence=(542, 5, 200))  # past the state
    with pytest.raises(ValueError, match="no LSTM"):
        make_net(10, 1, 8, n_actions=5, lstm=8, sequence=(0, 2, 5))
    with pytest.raises(ConfigError, match="no history sequence"):
        train_config("dmc", game="doudizhu", rules="douzero", lstm=128)  # the default encoder has none
    with pytest.raises(ConfigError, match="no history sequence"):
        train_config("dmc", game="big2", lstm=128)
    with pytest.raises(ConfigError, match="integer >= 0"):
        train_config("dmc", game="doudizhu", encoder="doudizhu+history", lstm=-1)


def test_a_tiny_lstm_dmc_run_resumes_exactly_loads_and_plays_with_two_actors(tmp_path) -> None:
    straight, resumed = straight_and_resumed(lambda n: train_config("dmc", epochs=n, **TINY), tmp_path)
    assert untimed(straight["history"]) == untimed(resumed["history"])
    net, _, enc = ckpt.load_network(tmp_path / "a" / "policy.pt", game="doudizhu")
    assert isinstance(net, RoleNets) and isinstance(enc, DdzHistoryEncoder)
    assert net.config()["lstm"] == 8 and all(hasattr(n, "lstm") for n in net.nets)
    init = make_learner(train_config("dmc", epochs=3, **TINY)).net.state_dict()
    assert any(not torch.equal(net.state_dict()[k], init[k]) for k in init if "lstm" in k)  # the LSTM learned
    two = train(train_config("dmc", epochs=2, actors=2, **TINY), tmp_path / "c", progress=False)
    assert [r["decisions"] for r in two["history"]] == [r["decisions"] for r in straight["history"][:2]]
