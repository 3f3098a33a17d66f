"""Actors (self-play in worker processes) and the training device.

The games an actor plays are seeded exactly as in the training process, so N actors play the
very games of one process; the behaviour's float scores differ in their last bits with the
forward pass's batch size, hence: value learners (argmax choices, no log-probability) give the
same numbers for any N, PPO the same games and numbers equal up to rounding, and a fixed N the
same numbers bit for bit (resume included). No test needs a GPU.
"""

from __future__ import annotations

import math
import os
import signal

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from climbrl.agents.runner import deal_seeds, seat_seed
from climbrl.config import ConfigError, resolve_device, train_config
from climbrl.games.registry import make_game
from climbrl.learn import checkpoint as ckpt
from climbrl.learn.actors import ActorError, ActorPool, pack, play_slice, slices
from climbrl.learn.curriculum import Curriculum
from climbrl.learn.registry import make_learner
from climbrl.learn.rollout import Rollout, collect
from climbrl.learn.train import train
from tests.resume import untimed

GAMES = {"big2": "paper", "doudizhu": "rlcard"}


def small(algo: str, game: str = "big2", **kw):
    base = {"epochs": 2, "games_per_epoch": 8, "eval_every": 0, "hidden": 32, "minibatch_decisions": 64,
            "batch_size": 32, "updates_per_epoch": 5, "keep_policy_every": 0, "game": game, "rules": GAMES[game]}
    return train_config(algo, **{**base, **kw})


def weights(path) -> dict[str, torch.Tensor]:
    return ckpt.load_network(path)[0].state_dict()


@given(st.integers(1, 500), st.integers(1, 16))
def test_slices_cover_the_games_in_order(n_games: int, n_actors: int) -> None:
    parts = slices(n_games, n_actors)
    assert len(parts) == min(n_games, n_actors)
    assert parts[0][0] == 0 and parts[-1][1] == n_games
    assert all(a[1] == b[0] for a, b in zip(parts, parts[1:], strict=False))
    sizes = [hi - lo for lo, hi in parts]
    assert min(sizes) >= 1 and max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("kw", [{"curriculum": "self_play"}, {"curriculum": "opponent_pool"},
                                {"game": "doudizhu", "role_networks": True, "curriculum": "opponent_pool"}])
def test_slices_played_apart_give_the_rollout_of_one_batch(kw: dict) -> None:
    """The actors' path without processes: pack the seatings, play the slices, join the rollouts
    (role networks travel too)."""
    cfg = small("ppo", hidden=64, **kw)
    game = make_game(cfg.game_name)
    learner = make_learner(cfg)
    behaviour = learner.behaviour()
    seatings = Curriculum(cfg, learner, game.num_players).seatings(12, behaviour, np.random.default_rng(3))
    seeds = deal_seeds(11, 12)
    seat_seeds = [[seat_seed(11, g, 0, s) for s in range(game.num_players)] for g in range(12)]
    whole, decisions = collect(game, seatings, seeds, seat_seeds, behaviour, shaping=True)
    parts = []
    for lo, hi in slices(12, 3):
        table, seats, ix = pack(seatings[lo:hi], behaviour)
        parts.append(play_slice((cfg.game_name, table, seats, ix, seeds[lo:hi], seat_seeds[lo:hi], True, False, None,
                                 "cpu")))
    joined = Rollout.concat([p[0] for p in parts])
    assert sum(p[1] for p in parts) == decisions
    assert joined.games == whole.games == 12
    for f in ("states", "moves", "offsets", "picks", "rewards", "dones"):
        assert np.array_equal(getattr(joined, f), getattr(whole, f)), f
    np.testing.assert_allclose(joined.logp, whole.logp, rtol=0, atol=1e-5)


@pytest.mark.parametrize("algo,game", [("dqn", "big2"), ("dqn", "doudizhu"), ("mcq", "big2"),
                                       ("sarsa", "doudizhu"), ("qlearning", "big2")])
def test_value_learner_numbers_do_not_depend_on_the_actor_count(tmp_path, algo: str, game: str) -> None:
    runs = [train(small(algo, game, actors=n), tmp_path / str(n), progress=False) for n in (1, 2)]
    assert untimed(runs[0]["history"]) == untimed(runs[1]["history"])
    a, b = weights(tmp_path / "1" / "policy.pt"), weights(tmp_path / "2" / "policy.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("game", ["big2", "doudizhu"])
def test_ppo_with_actors_plays_the_same_games(tmp_path, game: str) -> None:
    """Same games, decisions and returns; the losses agree up to the rounding of the batch sizes."""
    runs = [untimed(train(small("ppo", game, actors=n), tmp_path / str(n), progress=False)["history"])
            for n in (1, 2)]
    for one, two in zip(*runs, strict=True):
        assert one.keys() == two.keys()
        for k in one:
            if isinstance(one[k], int) or k == "mean_return":
                assert one[k] == two[k], k
            else:
                assert math.isclose(one[k], two[k], rel_tol=1e-3, abs_tol=1e-6), (k, one[k], two[k])


def test_a_fixed_actor_count_reproduces_and_resumes_exactly(tmp_path) -> None:
    """The opponent pool's snapshots and rule agents travel to the actors too."""
    cfg = small("ppo", epochs=3, actors=2, curriculum="opponent_pool", snapshot_every=8)
    straight = train(cfg, tmp_path / "a", progress=False)
    train(small("ppo", epochs=2, actors=2, curriculum="opponent_pool", snapshot_every=8), tmp_path / "b",
          progress=False)
    resumed = train(cfg, tmp_path / "b", resume=True, progress=False)
    assert untimed(resumed["history"]) == untimed(straight["history"])
    a, b = weights(tmp_path / "a" / "policy.pt"), weights(tmp_path / "b" / "policy.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_killed_actor_raises_instead_of_hanging() -> None:
    cfg = small("ppo")
    game = make_game(cfg.game_name)
    behaviour = make_learner(cfg).behaviour()
    seats = [[behaviour] * game.num_players for _ in range(4)]
    seeds = deal_seeds(1, 4)
    seat_seeds = [[seat_seed(1, g, 0, s) for s in range(game.num_players)] for g in range(4)]
    with ActorPool(2, cfg.game_name) as pool:
        pool.collect(seats, seeds, seat_seeds, behaviour)  # the workers are up
        victim = next(iter(pool.pool._processes.values()))
        os.kill(victim.pid, signal.SIGKILL)
        victim.join()
        with pytest.raises(ActorError, match="--resume"):
            pool.collect(seats, seeds, seat_seeds, behaviour)


@pytest.mark.parametrize(("kwargs", "field"), [({"actors": 0}, "train.actors"), ({"actors": 1.5}, "train.actors"),
                                               ({"device": "gpu"}, "train.device"),
                                               ({"device": "CUDA"}, "train.device")])
def test_bad_actor_and_device_settings_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=field):
        train_config("ppo", **kwargs)


def test_cuda_without_a_gpu_is_a_clear_error_and_auto_falls_back(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == torch.device("cpu")
    assert resolve_device("cpu") == torch.device("cpu")
    with pytest.raises(ConfigError, match="train.device: cuda .*no CUDA GPU"):
        resolve_device("cuda")
    with pytest.raises(ConfigError, match="train.device"):
        train(small("ppo", device="cuda"), tmp_path / "cuda", progress=False)
    assert not (tmp_path / "cuda").exists()
    cpu = train(small("ppo", epochs=1), tmp_path / "cpu", progress=False)
    auto = train(small("ppo", epochs=1, device="auto"), tmp_path / "auto", progress=False)
    assert untimed(auto["history"]) == untimed(cpu["history"])


def test_checkpoints_hold_cpu_tensors_whatever_the_device(tmp_path) -> None:
    """A CPU object is written as it is (the same bytes as before devices existed); one holding a
    tensor on another device (a meta tensor stands in for a GPU one here) is recognised as such."""
    learner = make_learner(small("dqn"))
    state = learner.state_dict()
    assert ckpt.on_cpu(state) is state
    assert not ckpt._off_cpu(state)
    assert ckpt._off_cpu({"learner": {"net": [torch.empty(2, device="meta")]}})
    ckpt.save_atomic({"format": ckpt.FORMAT, "version": ckpt.VERSION, "learner": state}, tmp_path / "c.pt")
    loaded = torch.load(tmp_path / "c.pt", weights_only=True)  # no map_location needed
    assert all(v.device.type == "cpu" for v in loaded["learner"]["net"].values())


def test_cli_train_takes_actors_and_device(tmp_path, monkeypatch, capsys) -> None:
    from climbrl.cli import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main(["train", "--algo", "ppo", "--device", "cuda", "--out", str(tmp_path / "c"), "--no-progress"]) == 2
    assert "train.device: cuda" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
    args = ["train", "--algo", "dqn", "--epochs", "1", "--games-per-epoch", "4", "--eval-every", "0", "--set",
            "hidden=16", "--device", "auto", "--actors", "2", "--out", str(tmp_path / "a"), "--no-progress"]
    assert main(args) == 0
    saved = ckpt.load(tmp_path / "a" / "checkpoint.pt")["config"]
    assert (saved["actors"], saved["device"]) == (2, "auto")


def test_actor_lag_plays_with_the_previous_weights_and_resumes_exactly(tmp_path) -> None:
    """Epoch 2 is played by the initial weights under actor_lag (by the updated ones without it),
    so the runs part there; an interrupted lagged run resumes into the uninterrupted one's numbers."""
    lagged = small("ppo", epochs=3, actors=2, actor_lag=True)
    straight = train(lagged, tmp_path / "a", progress=False)["history"]
    sync = train(small("ppo", epochs=3, actors=2), tmp_path / "s", progress=False)["history"]
    assert untimed(straight)[0] == untimed(sync)[0]
    assert untimed(straight)[1] != untimed(sync)[1]
    train(small("ppo", epochs=1, actors=2, actor_lag=True), tmp_path / "b", progress=False)
    resumed = train(lagged, tmp_path / "b", resume=True, progress=False)["history"]
    assert untimed(resumed) == untimed(straight)
    a, b = weights(tmp_path / "a" / "policy.pt"), weights(tmp_path / "b" / "policy.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_actor_lag_needs_actors_and_actors_no_bid_model() -> None:
    with pytest.raises(ConfigError, match="train.actor_lag: needs actors >= 2"):
        train_config("ppo", actor_lag=True)
    with pytest.raises(ConfigError, match="train.actors: the actors do not carry a separate bid model"):
        train_config("ppo", game="doudizhu", bidding="learned", actors=2)
