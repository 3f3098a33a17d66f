"""The precision switch (issue 47, ``TrainConfig.precision``, :mod:`climbrl.learn.precision`):
bfloat16 where it is asked for and nowhere else, float32 scores out of it, reproducible and
resumable runs, the setting recorded and kept by a resumed run."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from climbrl.config import ConfigError, train_config
from climbrl.games.registry import make_game
from climbrl.learn.checkpoint import CheckpointError, load
from climbrl.learn.policy import PolicyAgent
from climbrl.learn.registry import make_learner
from climbrl.training import train
from tests.resume import straight_and_resumed, untimed


def _cfg(precision: str, epochs: int = 2, seed: int = 3):
    return train_config("dmc", game="doudizhu", rules="douzero", epochs=epochs, games_per_epoch=12, eval_every=0,
                        keep_policy_every=0, seed=seed, hidden=32, precision=precision)


def _decisions(game_name: str, n: int):
    from climbrl.agents.base import Decision

    game = make_game(game_name)
    out = []
    for seed in range(n):
        state = game.new_game(seed=seed)
        out.append(Decision.from_state(state))
    return out


def test_an_unknown_precision_names_the_field() -> None:
    with pytest.raises(ConfigError, match="precision"):
        _cfg("fp16")


@pytest.mark.parametrize("precision, acting", [("fp32", torch.float32), ("bf16-actors", torch.bfloat16),
                                               ("bf16", torch.bfloat16)])
def test_the_behaviour_scores_with_the_asked_arithmetic_and_the_learner_keeps_fp32(precision, acting) -> None:
    learner = make_learner(_cfg(precision))
    behaviour = learner.behaviour()
    assert next(behaviour.scorer.parameters()).dtype == acting
    assert all(p.dtype == torch.float32 for p in learner.net.parameters())
    scores = behaviour.encoded_scores(_decisions("doudizhu:douzero", 4))[0]
    assert scores.dtype == np.float32
    with torch.no_grad():  # the bf16 scores stay close to the fp32 network's (a copy, not another policy)
        exact = PolicyAgent(learner.net, learner.encoder).encoded_scores(_decisions("doudizhu:douzero", 4))[0]
    np.testing.assert_allclose(scores, exact, atol=0.05, rtol=0.05)
    if precision == "fp32":
        assert behaviour.scorer is learner.net  # no copy: fp32 computes exactly as before the switch


def test_setting_a_policy_net_refreshes_its_bf16_copy() -> None:
    learner = make_learner(_cfg("bf16-actors"))
    agent = learner.behaviour()
    other = make_learner(_cfg("fp32", seed=4)).net
    agent.net = other
    decisions = _decisions("doudizhu:douzero", 3)
    got = agent.encoded_scores(decisions)[0]
    want = PolicyAgent(other, learner.encoder, acting="bf16").encoded_scores(decisions)[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("precision", ["bf16-actors", "bf16"])
def test_a_bf16_run_reproduces_resumes_and_records_its_setting(tmp_path, precision) -> None:
    straight, resumed = straight_and_resumed(lambda e: _cfg(precision, epochs=e), tmp_path)
    assert untimed(straight["history"]) == untimed(resumed["history"])
    a = load(tmp_path / "a" / "policy.pt")
    b = load(tmp_path / "b" / "policy.pt")
    assert all(torch.equal(a["net"][k], b["net"][k]) for k in a["net"])
    assert load(tmp_path / "a" / "checkpoint.pt")["config"]["precision"] == precision


def test_bf16_updates_change_the_numbers_and_fp32_does_not_move(tmp_path) -> None:
    """bf16 is another arithmetic (its losses differ from fp32's); fp32 is the default."""
    fp32 = train(_cfg("fp32"), tmp_path / "fp32", progress=False)["history"]
    bf16 = train(_cfg("bf16"), tmp_path / "bf16", progress=False)["history"]
    default = train(train_config("dmc", game="doudizhu", rules="douzero", epochs=2, games_per_epoch=12, eval_every=0,
                                 keep_policy_every=0, seed=3, hidden=32), tmp_path / "default",
                    progress=False)["history"]
    assert untimed(default) == untimed(fp32)
    losses = [k for k in fp32[0] if k.startswith("loss/")]
    assert losses
    assert [[r[k] for k in losses] for r in bf16] != [[r[k] for k in losses] for r in fp32]


def test_a_resumed_run_keeps_its_precision(tmp_path) -> None:
    train(_cfg("bf16", epochs=1), tmp_path, progress=False)
    with pytest.raises(CheckpointError, match="precision='bf16' there, 'fp32' here"):
        train(_cfg("fp32", epochs=2), tmp_path, resume=True, progress=False)


def test_bf16_actors_in_worker_processes_play_like_bf16_in_the_training_process(tmp_path) -> None:
    """The actors rebuild the behaviour with its arithmetic (NetSpec carries it)."""
    from climbrl.learn.actors import NetSpec

    agent = make_learner(_cfg("bf16-actors")).behaviour()
    rebuilt = NetSpec.of(agent).build("cpu")
    assert rebuilt.acting == "bf16"
    decisions = _decisions("doudizhu:douzero", 3)
    np.testing.assert_array_equal(rebuilt.encoded_scores(decisions)[0], agent.encoded_scores(decisions)[0])
    rngs = [random.Random(1) for _ in decisions]
    assert rebuilt.act_batch(decisions, rngs) == agent.act_batch(decisions, [random.Random(1) for _ in decisions])
