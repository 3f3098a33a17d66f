"""Depth as configuration (issue 46): ``layers`` and ``residual`` on the action-in network, the
study's network unchanged at the default, deeper networks trained, saved and loaded like it."""

from __future__ import annotations

import pytest
import torch

from climbrl.config import MAX_LAYERS, ConfigError, train_config
from climbrl.learn.checkpoint import CheckpointError, load, load_network, save_atomic
from climbrl.learn.network import ActionInNet, make_net
from climbrl.learn.registry import make_learner
from climbrl.training import train
from tests.resume import straight_and_resumed, untimed


def _inputs(state_dim: int = 12, move_dim: int = 5):
    gen = torch.Generator().manual_seed(0)
    states = torch.randn(3, state_dim, generator=gen)
    moves = torch.randn(7, move_dim, generator=gen)
    seg = torch.tensor([0, 0, 1, 1, 1, 2, 2])
    return states, moves, seg


def test_the_default_depth_is_the_study_network_draw_for_draw() -> None:
    plain = ActionInNet(12, 5, 16, value_head=True, generator=torch.Generator().manual_seed(1))
    deep = ActionInNet(12, 5, 16, value_head=True, generator=torch.Generator().manual_seed(1), layers=2,
                       residual=False)
    assert plain.state_dict().keys() == deep.state_dict().keys()
    assert all(torch.equal(plain.state_dict()[k], deep.state_dict()[k]) for k in plain.state_dict())
    assert "layers" not in plain.config() and "residual" not in plain.config()
    assert sorted(k for k in plain.state_dict() if k.startswith("value_net")) == [
        "value_net.0.bias", "value_net.0.weight", "value_net.2.bias", "value_net.2.weight", "value_net.4.bias",
        "value_net.4.weight"]


@pytest.mark.parametrize("layers, residual", [(3, False), (4, True), (2, True)])
def test_deeper_and_residual_networks_score_rebuild_from_their_config(layers: int, residual: bool) -> None:
    net = ActionInNet(12, 5, 16, value_head=True, generator=torch.Generator().manual_seed(2), layers=layers,
                      residual=residual)
    hidden_layers = sum(1 for k in net.state_dict() if k.endswith("weight") and not k.startswith(("value", "out")))
    assert hidden_layers == layers + 1  # the first layer is two matrices (state, move)
    states, moves, seg = _inputs()
    again = make_net(**net.config(), generator=torch.Generator())
    again.load_state_dict(net.state_dict())
    with torch.no_grad():
        assert torch.equal(net(states, moves, seg), again(states, moves, seg))
        assert net.value(states).shape == (3,)
    # the residual connection is there: zeroing the extra layers' weights leaves h + relu(b)
    if residual:
        with torch.no_grad():
            for layer in [net.fc2, *(net.deeper if layers > 2 else [])]:
                layer.weight.zero_()
                layer.bias.zero_()
            h = torch.relu(net.state_in(states)[seg] + net.move_in(moves))
            assert torch.allclose(net(states, moves, seg), net.out(h).squeeze(-1))


def test_a_deep_run_trains_resumes_and_its_policy_loads(tmp_path) -> None:
    def cfg(epochs: int):
        return train_config("dmc", game="doudizhu", rules="douzero", epochs=epochs, games_per_epoch=9, eval_every=0,
                            keep_policy_every=0, seed=1, hidden=16, layers=4, residual=True)

    straight, resumed = straight_and_resumed(cfg, tmp_path)
    assert untimed(straight["history"]) == untimed(resumed["history"])
    net, _, _ = load_network(tmp_path / "a" / "policy.pt", game="doudizhu")
    assert net.config()["layers"] == 4 and net.config()["residual"] is True
    assert make_learner(cfg(1)).net.config() == net.config()


@pytest.mark.parametrize("kwargs", [{"layers": 1}, {"layers": MAX_LAYERS + 1}, {"layers": True},
                                    {"layers": 2.0}, {"residual": "yes"}])
def test_bad_depths_name_the_field(kwargs: dict) -> None:
    with pytest.raises(ConfigError, match=next(iter(kwargs))):
        train_config("ppo", game="big2", **kwargs)


def test_a_checkpoint_asking_for_a_huge_depth_is_refused_before_building(tmp_path) -> None:
    train(train_config("mcq", game="big2", epochs=1, games_per_epoch=4, eval_every=0, keep_policy_every=0,
                       hidden=8), tmp_path, progress=False)
    policy = load(tmp_path / "policy.pt")
    policy["net_config"]["layers"] = 10**6
    save_atomic(policy, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError, match="layers"):
        load_network(tmp_path / "bad.pt")
