"""Behaviour cloning of a teacher (``climbrl.learn.imitation``, ``climbrl imitate``): the student
learns the teacher's choices, the numbers do not depend on the worker count, bad settings fail."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

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
                       ({"encoder": "big2"}, "action space"), ({"epochs": 0}, "epochs")):
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
