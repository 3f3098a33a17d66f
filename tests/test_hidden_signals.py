"""Issue 46's signals from the hidden cards, in training only: each decision's hidden targets (the
other seats' true hands at that moment), the auxiliary head that predicts them, the oracle critic
that reads them, and the rule that the acting network never does (the exchange test applied to a
trained network, with a control showing the oracle critic does read them)."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from climbrl.agents import Decision, make_agent
from climbrl.agents.runner import deal_seeds, seat_seed
from climbrl.config import ConfigError, train_config
from climbrl.encoders import make_encoder
from climbrl.games.big2 import Big2Game
from climbrl.games.doudizhu.state import DdzGame
from climbrl.games.registry import make_game
from climbrl.learn.actors import pack, play_slice, slices
from climbrl.learn.checkpoint import load_network
from climbrl.learn.curriculum import Curriculum
from climbrl.learn.network import ActionInNet, make_net
from climbrl.learn.policy import PolicyAgent, load_policy_agent
from climbrl.learn.registry import make_learner
from climbrl.learn.rollout import Rollout, collect
from climbrl.training import train
from tests import test_ddz_search as ddz_exchange
from tests import test_search_agent as big2_exchange
from tests.resume import straight_and_resumed, untimed

TINY = {"eval_every": 0, "keep_policy_every": 0, "hidden": 16, "minibatch_decisions": 64}
DDZ = {"game": "doudizhu", "rules": "douzero", "games_per_epoch": 6, **TINY}


def _random_games(game, seeds, agent):
    """Play random games step by step: each decision's observation with every seat's hand then,
    and the finished game."""
    for seed in seeds:
        state, rng, steps = game.new_game(seed=seed), random.Random(seed), []
        while not state.is_terminal():
            d = Decision.from_state(state)
            steps.append((d.observation, np.array(state.hands, dtype=np.int64).copy()))
            state.apply(d.moves[agent.act(d, rng)])
        yield state, steps


@pytest.mark.parametrize("rules", ["standard", "douzero"])
def test_doudizhu_targets_are_the_other_hands_at_each_decision(rules: str) -> None:
    """The next seat's then the one after's rank counts / 4 (jokers / 1), for every play-phase
    decision; the auction's decisions (and a redealt deal's) have none (masked, zeros)."""
    enc = make_encoder("doudizhu")
    full = np.array([4] * 13 + [1, 1])
    counted = {"play": 0, "bid": 0}
    for final, steps in _random_games(DdzGame(rules), range(12), make_agent("random", "doudizhu")):
        for obs, hands in steps:
            target, valid = enc.hidden_targets(final, obs)
            assert target.shape == (enc.hidden_dim,) == (30,) and target.dtype == np.float32
            assert valid == (obs.phase == "play")
            counted[obs.phase] += 1
            if valid:
                want = np.concatenate([hands[(obs.seat + 1) % 3], hands[(obs.seat + 2) % 3]]) / np.tile(full, 2)
                np.testing.assert_array_equal(target, want.astype(np.float32))
            else:
                assert not target.any()
    assert counted["play"] > 100
    assert (counted["bid"] > 0) == (rules == "standard")  # douzero's landlord is fixed: no auction


def test_big2_targets_are_the_three_other_hands_at_each_decision() -> None:
    enc = make_encoder("big2")
    for final, steps in _random_games(Big2Game("paper"), range(4), make_agent("random")):
        for obs, hands in steps:
            target, valid = enc.hidden_targets(final, obs)
            assert valid and target.shape == (156,)
            want = [(int(hands[(obs.seat + r) % 4]) >> c) & 1 for r in (1, 2, 3) for c in range(52)]
            np.testing.assert_array_equal(target, np.array(want, dtype=np.float32))


def test_the_public_agents_encoder_has_no_targets_and_is_refused() -> None:
    assert make_encoder("big2", "big2-charlesworth").hidden_dim == 0
    for field in ("aux_hidden_coef", "oracle_critic"):
        value = 1.0 if field == "aux_hidden_coef" else True
        with pytest.raises(ConfigError, match=f"train.{field}: .*hidden_dim 0"):
            train_config("ppo", game="big2", rules="charlesworth", encoder="big2-charlesworth", **{field: value})
    # the learner checks the encoder it is given too
    with pytest.raises(ConfigError, match="train.aux_hidden_coef"):
        make_learner(train_config("ppo", game="big2", rules="charlesworth", aux_hidden_coef=1.0, **TINY),
                     encoder=make_encoder("big2", "big2-charlesworth"))


@pytest.mark.parametrize("kwargs, field", [
    ({"aux_hidden_coef": -0.1}, "aux_hidden_coef"), ({"aux_hidden_coef": float("inf")}, "aux_hidden_coef"),
    ({"aux_hidden_coef": 101.0}, "aux_hidden_coef"), ({"aux_hidden_coef": True}, "aux_hidden_coef"),
    ({"algo": "dqn", "aux_hidden_coef": 1.0}, "aux_hidden_coef"),
    ({"algo": "qlearning", "aux_hidden_coef": 1.0}, "aux_hidden_coef"),
    ({"oracle_critic": "yes"}, "oracle_critic"), ({"algo": "mcq", "oracle_critic": True}, "oracle_critic"),
    ({"algo": "dqn", "oracle_critic": True}, "oracle_critic")])
def test_bad_settings_name_the_field(kwargs: dict, field: str) -> None:
    kw = dict(kwargs)
    with pytest.raises(ConfigError, match=f"train.{field}"):
        train_config(kw.pop("algo", "ppo"), game="doudizhu", **kw)


@pytest.mark.parametrize("kwargs", [{"aux_dim": -1}, {"aux_dim": 5000}, {"oracle_dim": 2.0}, {"aux_dim": True},
                                    {"oracle_dim": 3, "dueling": True}, {"oracle_dim": 3, "value_head": False}])
def test_bad_network_settings_are_refused(kwargs: dict) -> None:
    kw = {"value_head": True, **kwargs}
    with pytest.raises(ValueError, match="aux_dim|oracle_dim"):
        make_net(12, 5, 8, generator=torch.Generator(), **kw)


def test_the_action_head_network_has_neither() -> None:
    with pytest.raises(ValueError, match="action-head network has no hidden-hand head"):
        make_net(12, 1, 8, n_actions=4, aux_dim=3, generator=torch.Generator())


def test_default_networks_draw_as_before_and_the_new_layers_come_last() -> None:
    """A default network has no new key in its config or state; a network with the head and the
    oracle critic draws every earlier layer identically (the new layers are drawn after them),
    so the defaults' initial weights (and the golden training numbers) cannot have moved."""
    def net(**kw):
        return ActionInNet(12, 5, 16, value_head=True, generator=torch.Generator().manual_seed(4), lstm=0, **kw)

    plain, aux, both = net(), net(aux_dim=7), net(aux_dim=7, oracle_dim=3)
    assert "aux_dim" not in plain.config() and "oracle_dim" not in plain.config()
    assert not any(k.startswith("aux") for k in plain.state_dict())
    assert aux.state_dict().keys() - plain.state_dict().keys() == {"aux.weight", "aux.bias"}
    assert all(torch.equal(plain.state_dict()[k], aux.state_dict()[k]) for k in plain.state_dict())
    earlier = [k for k in plain.state_dict() if not k.startswith("value_net")]
    assert all(torch.equal(plain.state_dict()[k], both.state_dict()[k]) for k in earlier)
    assert both.state_dict()["value_net.0.weight"].shape == (16, 12 + 3)
    assert both.config()["aux_dim"] == 7 and both.config()["oracle_dim"] == 3
    for cfg in (train_config("ppo", **TINY), train_config("dmc", **DDZ)):
        learner = make_learner(cfg)
        assert not {"aux_dim", "oracle_dim"} & set(learner.net.config())
        assert not any(".aux." in k or k.startswith("aux.") for k in learner.net.state_dict())


def test_the_oracle_critic_needs_the_hidden_cards_and_the_plain_one_refuses_them() -> None:
    states = torch.randn(4, 12)
    oracle = make_net(12, 5, 8, value_head=True, oracle_dim=3, generator=torch.Generator())
    with pytest.raises(ValueError, match="oracle critic"):
        oracle.value(states)
    assert oracle.value(states, torch.rand(4, 3)).shape == (4,)
    plain = make_net(12, 5, 8, value_head=True, generator=torch.Generator())
    with pytest.raises(ValueError, match="no oracle_dim"):
        plain.value(states, torch.rand(4, 3))
    with pytest.raises(RuntimeError, match="no hidden-hand head"):
        plain.hidden_logits(states)


def test_slices_played_apart_carry_the_hidden_targets_of_one_batch() -> None:
    """The actors' path (the task's flag) gives the same targets as one process; without the
    flag a rollout has none."""
    cfg = train_config("ppo", aux_hidden_coef=1.0, **DDZ)
    game = make_game(cfg.game_name)
    learner = make_learner(cfg)
    behaviour = learner.behaviour()
    seatings = Curriculum(cfg, learner, game.num_players).seatings(6, behaviour, np.random.default_rng(3))
    seeds = deal_seeds(11, 6)
    seat_seeds = [[seat_seed(11, g, 0, s) for s in range(game.num_players)] for g in range(6)]
    whole, _ = collect(game, seatings, seeds, seat_seeds, behaviour, hidden=True)
    plain, _ = collect(game, seatings, seeds, seat_seeds, behaviour)
    assert plain.hidden is None and plain.hidden_mask is None
    assert whole.hidden.shape == (whole.size, 30) and whole.hidden_mask.all()  # douzero: no auction
    parts = []
    for lo, hi in slices(6, 2):
        table, seats, ix = pack(seatings[lo:hi], behaviour)
        parts.append(play_slice((cfg.game_name, table, seats, ix, seeds[lo:hi], seat_seeds[lo:hi], False, False, None,
                                 "cpu", True))[0])
    joined = Rollout.concat(parts)
    np.testing.assert_array_equal(joined.hidden, whole.hidden)
    np.testing.assert_array_equal(joined.hidden_mask, whole.hidden_mask)
    np.testing.assert_array_equal(joined.states, whole.states)


def test_the_aux_loss_falls_on_a_fixed_batch() -> None:
    cfg = train_config("ppo", aux_hidden_coef=1.0, lr=1e-3, **DDZ)
    learner = make_learner(cfg)
    game = make_game(cfg.game_name)
    behaviour = learner.behaviour()
    seeds = deal_seeds(5, 6)
    seat_seeds = [[seat_seed(5, g, 0, s) for s in range(3)] for g in range(6)]
    ro, _ = collect(game, [[behaviour] * 3] * 6, seeds, seat_seeds, behaviour, hidden=True)
    rng = np.random.default_rng(0)
    losses = [learner.update(ro, rng)["aux_loss"] for _ in range(8)]
    assert all(np.isfinite(losses)) and losses[-1] < losses[0] - 0.02, losses


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> dict[str, str]:
    """One epoch of PPO with the hidden-hand head and the oracle critic, per game: its policy file."""
    out = {}
    for game, kw in (("doudizhu", DDZ), ("big2", {"game": "big2", "games_per_epoch": 8, **TINY})):
        path = tmp_path_factory.mktemp(game)
        train(train_config("ppo", epochs=1, seed=2, aux_hidden_coef=1.0, oracle_critic=True, **kw), path,
              progress=False)
        out[game] = str(path / "policy.pt")
    return out


@pytest.mark.parametrize("acting", ["fp32", "bf16"])
def test_the_trained_policy_ignores_the_hidden_cards(trained, acting: str) -> None:
    """The exchange test of the searches, applied to the network (greedy and sampling), with the
    scores themselves unchanged; the hidden-hand head reads only the observation too."""
    net, meta, encoder = load_network(trained["doudizhu"], game="doudizhu")
    assert net.config()["aux_dim"] == net.config()["oracle_dim"] == 30
    for mode in ("greedy", "sample"):
        agent = PolicyAgent(net.eval(), encoder, mode=mode, acting=acting)
        ddz_exchange.assert_choice_ignores_hidden_cards(agent, positions=4)
    agent = load_policy_agent(trained["big2"], game="big2")
    big2_exchange.assert_choice_ignores_hidden_cards(agent, [Big2Game("paper")], positions=6)
    scorer = PolicyAgent(net.eval(), encoder, acting=acting)
    for seed in range(4):
        state = ddz_exchange._play_position(DdzGame("douzero"), seed)
        other = ddz_exchange._exchanged(state, random.Random(seed))
        a, b = Decision.from_state(state), Decision.from_state(other)
        np.testing.assert_array_equal(scorer.encoded_scores([a])[0], scorer.encoded_scores([b])[0])
        with torch.no_grad():
            sa, sb = (torch.from_numpy(encoder.encode([d])[0]) for d in (a, b))
            assert torch.equal(net.hidden_logits(sa), net.hidden_logits(sb))


def test_control_the_oracle_critic_does_read_the_hidden_cards(trained) -> None:
    """Control: the same exchanges move the oracle critic's value (it reads the true hands), so
    the exchange test above would catch a policy that read them."""
    net, _, encoder = load_network(trained["doudizhu"], game="doudizhu")
    moved = 0
    for seed in range(4):
        state = ddz_exchange._play_position(DdzGame("douzero"), seed)
        other = ddz_exchange._exchanged(state, random.Random(seed))
        obs = state.observation(state.current_player)
        assert other.observation(other.current_player) == obs
        states = torch.from_numpy(encoder.encode([Decision.from_state(state)])[0])
        # the live game read as a "final" state gives the hands at this very decision
        hid = [torch.from_numpy(encoder.hidden_targets(s, obs)[0])[None] for s in (state, other)]
        with torch.no_grad():
            moved += not torch.equal(net.value(states, hid[0]), net.value(states, hid[1]))
    assert moved >= 3


def test_dmc_with_the_hidden_hand_head_trains_and_resumes_on_actors(tmp_path) -> None:
    """Role networks (one head each), two actor processes, stopped and resumed: the same numbers."""
    def cfg(epochs: int):
        return train_config("dmc", epochs=epochs, seed=1, aux_hidden_coef=0.5, actors=2, **DDZ)

    straight, resumed = straight_and_resumed(cfg, tmp_path)
    assert untimed(straight["history"]) == untimed(resumed["history"])
    assert all(np.isfinite(r["loss/aux_loss"]) and r["loss/aux_loss"] > 0 for r in straight["history"])
    net, _, _ = load_network(tmp_path / "a" / "policy.pt", game="doudizhu")
    assert net.config()["aux_dim"] == 30 and len(net.nets) > 1 and "oracle_dim" not in net.config()
    assert make_learner(cfg(1)).net.config() == net.config()


def test_ppo_with_the_oracle_critic_trains_and_resumes(tmp_path) -> None:
    def cfg(epochs: int):
        return train_config("ppo", epochs=epochs, seed=1, oracle_critic=True, **DDZ)

    straight, resumed = straight_and_resumed(cfg, tmp_path)
    assert untimed(straight["history"]) == untimed(resumed["history"])
    assert all(np.isfinite(r["loss/value_loss"]) for r in straight["history"])
    assert "loss/aux_loss" not in straight["history"][0]  # only the head's runs report it
    net, _, _ = load_network(tmp_path / "a" / "policy.pt", game="doudizhu")
    assert net.config()["oracle_dim"] == 30 and "aux_dim" not in net.config()



def test_a_warm_start_adds_the_training_only_parts_and_keeps_every_other_weight(tmp_path) -> None:
    """A policy trained without the hidden-card parts warm-starts a run with them (the lever
    issue 46 names after the warm start): the scorer's and the critic's shared weights come from
    the file, the aux head and the oracle's wider first value layer keep their initial weights."""
    base = dict(game="doudizhu", rules="douzero", epochs=1, games_per_epoch=6, eval_every=0, keep_policy_every=0,
                hidden=16, seed=4)
    train(train_config("ppo", **base), tmp_path / "warm", progress=False)
    policy = tmp_path / "warm" / "policy.pt"
    warm, _, _ = load_network(policy, game="doudizhu")
    learner = make_learner(train_config("ppo", **{**base, "seed": 5}, init_policy=str(policy), aux_hidden_coef=1.0,
                                        oracle_critic=True))
    own, given = learner.net.state_dict(), warm.state_dict()
    assert all(torch.equal(own[k], v) for k, v in given.items() if own[k].shape == v.shape)
    fresh = sorted(k for k in own if k not in given or own[k].shape != given[k].shape)
    assert fresh and all(k.startswith("aux") or k == "value_net.0.weight" for k in fresh)
    with pytest.raises(Exception, match="init_policy"):  # another shape than the training-only parts: refused
        make_learner(train_config("ppo", **{**base, "hidden": 32}, init_policy=str(policy)))
