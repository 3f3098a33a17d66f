"""Behaviour cloning of a teacher (``climbrl.learn.imitation``, ``climbrl imitate``): the student
learns the teacher's choices, the numbers do not depend on the worker count, bad settings fail."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch

from climbrl.agents import Decision
from climbrl.cli import main as cli
from climbrl.encoders import EncoderError
from climbrl.games.big2 import Big2Game
from climbrl.learn.imitation import ImitationConfig, ImitationError, collect, fit, imitate
from climbrl.learn.specs import make_agent

SMALL = {"teacher": "heuristic", "games": 200, "epochs": 10, "hidden": 128, "lr": 3e-3, "holdout": 0.25, "seed": 5}


def test_the_same_data_and_student_whatever_the_worker_count() -> None:
    one = collect(ImitationConfig(**{**SMALL, "games": 30}, workers=1))
    two = collect(ImitationConfig(**{**SMALL, "games": 30}, workers=2))
    for k in ("states", "moves", "offsets", "picks", "value", "game"):
        assert np.array_equal(one[k], two[k]), k
    assert len(one["picks"]) > 100
    a, _ = fit(ImitationConfig(**{**SMALL, "games": 30}), one)
    b, _ = fit(ImitationConfig(**{**SMALL, "games": 30}), two)
    assert all(np.array_equal(x, y) for x, y in zip(a.weights().values(), b.weights().values(), strict=True))


def test_the_student_learns_the_teachers_moves(tmp_path) -> None:
    """Against the heuristic as teacher, on games it was not trained on, the student picks the
    teacher's move far more often than a uniform choice among the legal moves would."""
    res = imitate(ImitationConfig(**SMALL, workers=1), tmp_path)
    data = collect(ImitationConfig(**SMALL, workers=1))
    held = data["game"] >= SMALL["games"] - 50  # holdout 0.25 of 200 games
    chance = float(np.mean(1.0 / np.diff(data["offsets"])[held]))
    assert res["holdout_decisions"] == int(held.sum()) > 50
    assert res["holdout_accuracy"] > chance + 0.25, (res["holdout_accuracy"], chance)  # measured 0.70 vs 0.26
    assert json.loads((tmp_path / "imitation.json").read_text())["cpu_s"] == pytest.approx(res["cpu_s"])
    agent = make_agent(f"checkpoint:{tmp_path / 'policy.pt'}", "big2:charlesworth")
    s = Big2Game("charlesworth").new_game(seed=3)
    while not s.is_terminal():
        d = Decision.from_state(s)
        s.apply(d.moves[agent.act(d, random.Random(0))])
    # the student can play a seat of the search's rollouts
    search = make_agent(f"search:checkpoint:{tmp_path / 'policy.pt'},S=4,K=3,own=base,rollout=base",
                        "big2:charlesworth")
    assert search.compiled


def test_bad_settings_fail_before_any_game() -> None:
    for bad, match in (({"games": 2}, "games"), ({"holdout": 1.0}, "holdout"), ({"workers": 0}, "workers"),
                       ({"encoder": "doudizhu"}, "no encoder 'doudizhu' for big2"), ({"epochs": 0}, "epochs")):
        with pytest.raises(ImitationError, match=match):
            ImitationConfig(**bad)
    with pytest.raises(EncoderError, match="5-card straights"):
        collect(ImitationConfig(rules="paper", games=4, workers=1))


def test_cli(tmp_path, capsys) -> None:
    assert cli(["imitate", "--teacher", "greedy", "--games", "8", "--epochs", "1", "--hidden", "16",
                "--workers", "1", "--out", str(tmp_path)]) == 0
    assert "imitation of greedy: 8 games" in capsys.readouterr().out
    assert (tmp_path / "policy.pt").exists()
    assert cli(["imitate", "--games", "1", "--out", str(tmp_path)]) == 2
    assert "games must be at least 4" in capsys.readouterr().err


def test_a_dou_dizhu_student_is_a_learners_network_that_a_run_starts_from(tmp_path, capsys) -> None:
    """Dou Dizhu's student is the learners' per-move scoring network with a value head: it learns
    the heuristic's moves far above chance on held-out games, and a PPO run starts from its weights
    (``init_policy``); a learner whose network differs (DMC's role networks) is refused by name."""
    from climbrl.config import train_config
    from climbrl.learn.checkpoint import CheckpointError, load_network
    from climbrl.learn.registry import make_learner

    assert cli(["imitate", "--game", "doudizhu", "--teacher", "heuristic", "--games", "120", "--epochs", "6",
                "--hidden", "64", "--lr", "3e-3", "--workers", "1", "--out", str(tmp_path), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["config"]["rules"] == "douzero" and res["config"]["encoder"] == "doudizhu"
    data = collect(ImitationConfig(**res["config"]))
    held = data["game"] >= 120 - 6  # holdout 0.05 of 120 games
    chance = float(np.mean(1.0 / np.diff(data["offsets"])[held]))
    assert res["holdout_accuracy"] > chance + 0.2, (res["holdout_accuracy"], chance)
    student, _, _ = load_network(tmp_path / "policy.pt", game="doudizhu")
    learner = make_learner(train_config("ppo", game="doudizhu", rules="douzero", hidden=64,
                                        init_policy=str(tmp_path / "policy.pt")))
    for k, v in student.state_dict().items():
        assert torch.equal(learner.net.state_dict()[k], v), k
    seeded = make_learner(train_config("ppo", game="doudizhu", rules="douzero", hidden=64))
    assert not all(torch.equal(seeded.net.state_dict()[k], v) for k, v in student.state_dict().items())
    with pytest.raises(CheckpointError, match="is not the one this run builds"):
        make_learner(train_config("dmc", game="doudizhu", rules="douzero", hidden=64,
                                  init_policy=str(tmp_path / "policy.pt")))
    with pytest.raises(CheckpointError, match="is not the one this run builds"):
        make_learner(train_config("ppo", game="doudizhu", rules="douzero", hidden=32,
                                  init_policy=str(tmp_path / "policy.pt")))
    with pytest.raises(CheckpointError, match="init_policy: .* was trained for doudizhu, not big2"):
        make_learner(train_config("ppo", game="big2", init_policy=str(tmp_path / "policy.pt")))
    with pytest.raises(CheckpointError, match="init_policy: checkpoint not found"):
        make_learner(train_config("ppo", game="doudizhu", init_policy=str(tmp_path / "none.pt")))
