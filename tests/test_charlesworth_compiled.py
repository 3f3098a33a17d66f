"""The public agent's network as compiled code (``agents/external/charlesworth_compiled.py``), the
``big2-charlesworth`` encoder and the action-head network that trains with it.

The compiled observation and logits are checked against the torch adapter (itself checked
against the public agent's own recorded games) with the released weights, and against
:class:`~climbrl.learn.network.ActionHeadNet` with random weights, which needs no outside data.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from climbrl.agents import Decision, make_agent
from climbrl.agents.external.charlesworth import N_ACTIONS, action_of, action_positions, action_table
from climbrl.agents.external.charlesworth_compiled import (
    MAX_ACTIVE,
    POS_ACTION,
    compile_weights,
    encode_active,
    legal_logits,
    move_action,
)
from climbrl.encoders import EncoderError, make_encoder
from climbrl.games.big2 import Big2Game
from climbrl.learn.network import ActionHeadNet, make_net
from tests.reference import cw_mask, iter_reference_games, public_agent_weights, reference_games_path

GAME = Big2Game("charlesworth")


def _active(d: Decision) -> np.ndarray:
    o = d.observation
    out = np.zeros(MAX_ACTIVE, dtype=np.int64)
    n = encode_active(o.hand, o.seat, np.array(o.cards_left, dtype=np.int64), np.array(o.played, dtype=np.int64),
                      np.array(o.types_played, dtype=np.int64), o.leading, o.to_beat, o.to_beat_type, o.passes, out)
    return out[:n]


def _compiled_logits(w: tuple, d: Decision) -> np.ndarray:
    active = _active(d)
    masks = np.array(d.moves, dtype=np.int64)
    out = np.zeros(len(masks), dtype=np.float32)
    legal_logits(*w, active, len(active), d.hand, masks, len(masks), out,
                 np.zeros(w[1].shape[0], np.float32), np.zeros(w[3].shape[0], np.float32))
    return out


def _random_decisions(games: int, seed: int = 0):
    """Every decision of ``games`` random games under charlesworth rules."""
    rng = random.Random(seed)
    for g in range(games):
        s = GAME.new_game(seed=seed * 1000 + g)
        while not s.is_terminal():
            d = Decision.from_state(s)
            yield d
            s.apply(d.moves[rng.randrange(len(d.moves))])


def _random_head_net(seed: int = 0, hidden: int = 64) -> ActionHeadNet:
    return ActionHeadNet(412, 1, hidden, value_head=True, generator=torch.Generator().manual_seed(seed),
                         n_actions=N_ACTIONS)


def test_every_action_has_one_position_mask() -> None:
    positions = action_positions()
    assert sorted(int(a) for a in POS_ACTION if a >= 0) == list(range(N_ACTIONS))
    for i, pos in enumerate(positions):
        assert POS_ACTION[sum(1 << p for p in pos)] == i


def test_observation_equals_an_independent_build_on_random_games() -> None:
    """The compiled observation (the agent's and the rollouts') against a plain-Python one
    written from the layout (``tests/charlesworth_oracle.py``); the recorded games check both
    against the public agent's own engine when ``../shared`` is there."""
    from tests.charlesworth_oracle import observation

    n = 0
    for d in _random_decisions(60, seed=4):
        v = np.zeros(412, dtype=np.float32)
        v[_active(d)] = 1.0
        assert (v == observation(d.observation)).all()
        n += 1
    assert n > 3000


def test_move_actions_equal_the_adapters_on_random_games() -> None:
    table = action_table()
    n = 0
    for d in _random_decisions(40):
        for m in d.moves:
            assert move_action(d.hand, m) == action_of(m, d.hand, table)
        n += 1
    assert n > 2000


def test_logits_equal_the_torch_network_with_random_weights() -> None:
    """An ActionHeadNet of our own (random weights): the compiled legal logits are its forward
    pass on the encoder's vectors, to float32 rounding."""
    net = _random_head_net(1, hidden=96)
    w = compile_weights(net.weights())
    enc = make_encoder("big2", "big2-charlesworth")
    worst = 0.0
    decisions = list(_random_decisions(10, seed=2))
    states, moves, offsets = enc.encode(decisions)
    seg = torch.from_numpy(np.repeat(np.arange(len(decisions)), np.diff(offsets)))
    with torch.no_grad():
        ref = net(torch.from_numpy(states), torch.from_numpy(moves), seg).numpy()
    for b, d in enumerate(decisions):
        worst = max(worst, float(np.abs(_compiled_logits(w, d) - ref[offsets[b]:offsets[b + 1]]).max()))
    assert worst < 1e-4, worst


def test_logits_equal_the_public_agent_at_every_reference_decision() -> None:
    """With the released weights, on the public agent's own recorded games: the compiled
    observation is its observation, the compiled logits its logits."""
    from climbrl.agents.external.charlesworth import load_weights

    public_agent_weights()
    reference_games_path()
    w = compile_weights(load_weights())
    worst, checked = 0.0, 0
    for ref in iter_reference_games():
        state = GAME.new_game(hands=[cw_mask(ref["deal"][str(s)]) for s in range(1, 5)])
        for rec in ref["decisions"]:
            d = Decision.from_state(state)
            assert sorted(_active(d).tolist()) == sorted(rec["obs_nonzero"])
            ours = dict(zip((move_action(d.hand, m) for m in d.moves), _compiled_logits(w, d), strict=True))
            for a, want in zip(rec["legal"], rec["logits"], strict=True):
                worst = max(worst, abs(float(ours[a]) - want))
            state.apply(cw_mask(rec["cards"]))
            checked += 1
    assert checked == sum(len(ref["decisions"]) for ref in iter_reference_games()) > 0
    assert worst < 1e-4, worst


def test_encoder_vectors_and_its_refusal_of_other_rules() -> None:
    enc = make_encoder("big2", "big2-charlesworth")
    assert (enc.state_dim, enc.move_dim, enc.n_actions) == (412, 1, N_ACTIONS)
    decisions = list(_random_decisions(3, seed=5))
    states, moves, offsets = enc.encode(decisions)
    table = action_table()
    from tests.charlesworth_oracle import observation

    for b, d in enumerate(decisions):
        assert (states[b] == observation(d.observation)).all()
        assert moves[offsets[b]:offsets[b + 1], 0].tolist() == [action_of(m, d.hand, table) for m in d.moves]
    paper = Big2Game("paper")
    hands = list(("3C 4D 5D 6D 7D 8D 9D TD JD QD KD AD 2D",
                                              "3D 4C 5C 6C 7C 8C 9C TC JC QC KC AC 2C",
                                              "3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH 2H",
                                              "3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS 2S"))
    lead = Decision.from_state(paper.new_game(hands=hands))  # the holder of 3C leads: 3-card straights
    with pytest.raises(EncoderError, match="5-card straights only"):
        enc.encode([lead])


def test_action_head_network_round_trip_and_refusals(tmp_path) -> None:
    from climbrl.learn.checkpoint import load_network, network_payload, save_atomic

    enc = make_encoder("big2", "big2-charlesworth")
    net = _random_head_net(3)
    save_atomic(network_payload(net, "ppo", 1, enc), tmp_path / "p.pt")
    back, meta, enc2 = load_network(tmp_path / "p.pt", game="big2")
    assert isinstance(back, ActionHeadNet) and enc2.name == "big2-charlesworth"
    for k, v in net.weights().items():
        assert np.array_equal(back.weights()[k], v)
    with pytest.raises(ValueError, match="dueling"):
        make_net(412, 1, 64, dueling=True, n_actions=N_ACTIONS)
    with pytest.raises(ValueError, match="one move column"):
        make_net(412, 3, 64, n_actions=N_ACTIONS)
    with pytest.raises(ValueError, match="role"):
        make_net(412, 1, 64, n_actions=N_ACTIONS, roles=("a", "b"), role_columns=(0, 1))


def test_a_policy_trains_with_the_encoder(tmp_path) -> None:
    from climbrl.config import train_config
    from climbrl.learn.train import train

    cfg = train_config("ppo", rules="charlesworth", encoder="big2-charlesworth", epochs=1, games_per_epoch=8,
                       hidden=32, eval_every=0, keep_policy_every=0, seed=3)
    train(cfg, tmp_path, progress=False)
    agent = make_agent_from(tmp_path / "policy.pt")
    s = GAME.new_game(seed=1)
    rng = random.Random(0)
    while not s.is_terminal():
        d = Decision.from_state(s)
        s.apply(d.moves[agent.act(d, rng)])
    assert s.winner >= 0


def make_agent_from(path) -> object:
    from climbrl.learn.specs import make_agent as make_any_agent

    return make_any_agent(f"checkpoint:{path}", "big2:charlesworth")


def test_the_adapter_still_refuses_other_rules() -> None:
    public_agent_weights()
    with pytest.raises(ValueError):
        make_agent("search:S=4,K=3,rollout=charlesworth").act(
            Decision.from_state(Big2Game("paper").new_game(seed=0)), random.Random(0))
