"""Deep Monte-Carlo (issue 25): DouZero's target and settings through the shared learner code,
a tiny run in both games, resume, and the CLI."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from climbrl.cli import main
from climbrl.config import ConfigError, train_config
from climbrl.learn import checkpoint as ckpt
from climbrl.learn.dmc import DMC
from climbrl.learn.mcq import MCQ
from climbrl.learn.network import RoleNets
from climbrl.learn.registry import make_learner
from climbrl.learn.rollout import Rollout
from tests.resume import straight_and_resumed, untimed

TINY = {"games_per_epoch": 6, "eval_every": 0, "hidden": 16, "minibatch_decisions": 64, "keep_policy_every": 0}


def test_dmc_takes_douzeros_settings_and_refuses_a_discount() -> None:
    ddz = train_config("dmc", game="doudizhu", rules="douzero")
    assert (ddz.gamma, ddz.epsilon, ddz.lr, ddz.optimizer, ddz.max_grad_norm) == (1.0, 0.01, 1e-4, "rmsprop", 40.0)
    assert ddz.role_networks  # one network per position in Dou Dizhu
    big2 = train_config("dmc")
    assert not big2.role_networks and big2.optimizer == "rmsprop"  # Big 2's seats share one network
    assert train_config("mcq", game="doudizhu").optimizer == "adam"  # the other learners keep theirs
    with pytest.raises(ConfigError, match="train.gamma: dmc learns the episode's undiscounted return"):
        train_config("dmc", gamma=0.99)
    with pytest.raises(ConfigError, match="train.optimizer: must be one of adam, rmsprop"):
        train_config("ppo", optimizer="sgd")
    opt = make_learner(train_config("dmc", game="doudizhu", hidden=8)).opt
    assert isinstance(opt, torch.optim.RMSprop) and opt.defaults["eps"] == 1e-5 and opt.defaults["alpha"] == 0.99


def test_the_target_is_each_seats_undiscounted_return_of_the_episode() -> None:
    """Two seats' decisions (game, seat, time order): every decision's target is the sum of the
    seat's rewards from there to the end of its game, shaping terms included, not discounted."""
    rewards = np.array([0.05, 0.0, 4.0, 0.0, -2.0], dtype=np.float32)
    dones = np.array([False, False, True, False, True])
    ro = Rollout(states=np.zeros((5, 1), np.float32), moves=np.zeros((5, 1), np.float32),
                 offsets=np.arange(6), picks=np.zeros(5, np.int64), logp=np.zeros(5, np.float32),
                 rewards=rewards, dones=dones, games=1)
    learner = make_learner(train_config("dmc", hidden=8))
    assert isinstance(learner, DMC) and isinstance(learner, MCQ)
    np.testing.assert_allclose(learner.targets(ro), [4.05, 4.0, 4.0, -2.0, -2.0], rtol=1e-6)


@pytest.mark.parametrize(("game", "rules"), [("doudizhu", "douzero"), ("big2", "paper")])
def test_a_tiny_dmc_run_trains_resumes_exactly_and_plays(tmp_path, game: str, rules: str) -> None:
    kw = {**TINY, "game": game, "rules": rules}
    straight, resumed = straight_and_resumed(lambda n: train_config("dmc", epochs=n, **kw), tmp_path)
    assert untimed(straight["history"]) == untimed(resumed["history"])
    a, _, _ = ckpt.load_network(tmp_path / "a" / "policy.pt")
    b, _, _ = ckpt.load_network(tmp_path / "b" / "policy.pt")
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))
    assert isinstance(a, RoleNets) == (game == "doudizhu")
    init = make_learner(train_config("dmc", epochs=3, **kw)).net.state_dict()
    assert any(not torch.equal(a.state_dict()[k], init[k]) for k in init)  # it learned something
    assert all(np.isfinite(r["loss/loss"]) for r in straight["history"])


def test_climbrl_train_takes_the_dmc_learner(tmp_path, capsys) -> None:
    out = tmp_path / "run"
    assert main(["train", "--algo", "dmc", "--game", "doudizhu", "--rules", "douzero", "--epochs", "1",
                 "--games-per-epoch", "3", "--eval-every", "0", "--set", "hidden=16", "--out", str(out),
                 "--no-progress"]) == 0
    assert (out / "policy.pt").exists()
    assert main(["duel", "--agent", f"checkpoint:{out / 'policy.pt'}", "--opponent", "random", "--deals", "2",
                 "--rules", "douzero"]) == 0
    assert main(["train", "--algo", "dmc", "--set", "gamma=0.9", "--epochs", "1", "--out", str(tmp_path / "x"),
                 "--no-progress"]) == 2
    assert "dmc learns the episode's undiscounted return" in capsys.readouterr().err
