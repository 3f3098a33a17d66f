"""The value learners' ``teacher`` option (issue 25): a rule agent plays a share of the learner's
own non-exploring decisions, recorded and learned from like the learner's; its share falls
linearly over ``teacher_decay_steps``; runs resume exactly, and actors play the same games."""

from __future__ import annotations

import random

import numpy as np
import pytest

from climbrl.agents.runner import deal_seeds, play_games, seat_seed
from climbrl.config import ConfigError, train_config
from climbrl.games.registry import make_game
from climbrl.learn.actors import NetSpec
from climbrl.learn.registry import make_learner
from climbrl.learn.rollout import collect
from climbrl.learn.specs import make_agent
from climbrl.training import train
from tests.resume import straight_and_resumed, untimed

TINY = {"game": "doudizhu", "rules": "douzero", "games_per_epoch": 6, "eval_every": 0, "hidden": 16,
        "minibatch_decisions": 64, "keep_policy_every": 0}


def test_bad_teacher_settings_are_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="train.teacher: unknown agent 'nobody'"):
        train_config("dmc", teacher="nobody", teacher_share=0.5)
    with pytest.raises(ConfigError, match="train.teacher: a teacher needs teacher_share > 0"):
        train_config("dmc", teacher="heuristic")
    with pytest.raises(ConfigError, match="train.teacher: a teacher needs teacher_share > 0"):
        train_config("dmc", teacher_share=0.5)
    with pytest.raises(ConfigError, match="train.teacher_share: must be a number in \\[0, 1\\]"):
        train_config("dmc", teacher="heuristic", teacher_share=1.5)
    with pytest.raises(ConfigError, match="train.teacher: a teacher's moves are off-policy for PPO"):
        train_config("ppo", teacher="heuristic", teacher_share=0.5)
    with pytest.raises(ConfigError, match="train.teacher_decay_steps: must be an integer >= 0"):
        train_config("dmc", teacher="heuristic", teacher_share=0.5, teacher_decay_steps=-1)


def _picks(behaviour, teacher, n_games: int = 4):
    """The learner's recorded picks, and the teacher's picks on the very same decisions."""
    game = make_game("doudizhu:douzero")
    seeds = deal_seeds(3, n_games, "train")
    seat_seeds = [[seat_seed(3, g, 0, s) for s in range(3)] for g in range(n_games)]
    seen = []

    def listen(agent, gis, decisions, picks):
        rngs = [random.Random(1000 * g + d.seat) for g, d in zip(gis, decisions, strict=True)]
        seen.extend(zip(picks, teacher.act_batch(decisions, rngs), strict=True))

    play_games(game, [[behaviour] * 3 for _ in seeds], seeds, seat_seeds, on_step=listen)
    return seen


def test_a_full_share_plays_the_teachers_moves_and_records_them() -> None:
    """Share 1 and no exploration: every learner decision is the heuristic's move (the heuristic
    is deterministic given its seat's stream), and the rollout records those picks."""
    cfg = train_config("dmc", teacher="heuristic", teacher_share=1.0, epsilon=0.0, **TINY)
    learner = make_learner(cfg)
    behaviour = learner.behaviour()
    assert behaviour.teacher is not None and behaviour.teacher_share == 1.0
    seen = _picks(behaviour, make_agent("heuristic", "doudizhu:douzero"))
    assert len(seen) > 50 and all(p == q for p, q in seen)
    # the same games without a teacher play the network's argmax instead: other moves somewhere
    plain = make_learner(train_config("dmc", epsilon=0.0, **TINY)).behaviour()
    assert plain.teacher is None
    assert any(p != q for p, q in _picks(plain, make_agent("heuristic", "doudizhu:douzero")))


def test_the_share_falls_linearly_to_zero_over_the_decay_steps() -> None:
    learner = make_learner(train_config("dmc", teacher="heuristic", teacher_share=0.8, teacher_decay_steps=1000,
                                        **TINY))
    shares = []
    for seen in (0, 250, 1000, 5000):
        learner.decisions_seen = seen
        shares.append(learner.behaviour().teacher_share)
    assert shares == pytest.approx([0.8, 0.6, 0.0, 0.0])
    learner.decisions_seen = 1000
    assert learner.behaviour().teacher is None  # spent: plain self-play, no second draw


def test_a_partial_share_mixes_the_teacher_and_the_network() -> None:
    cfg = train_config("dmc", teacher="heuristic", teacher_share=0.5, epsilon=0.0, **TINY)
    behaviour = make_learner(cfg).behaviour()
    heuristic = make_agent("heuristic", "doudizhu:douzero")
    agree = np.mean([p == q for p, q in _picks(behaviour, heuristic, 6)])
    assert 0.5 < agree < 1.0  # the teacher's half, plus the network's coincidences


def test_a_teacher_run_resumes_exactly_and_actors_play_the_same_games(tmp_path) -> None:
    kw = {**TINY, "teacher": "heuristic", "teacher_share": 1.0, "teacher_decay_steps": 5000}  # active throughout
    straight, resumed = straight_and_resumed(lambda n: train_config("dmc", epochs=n, **kw), tmp_path)
    assert untimed(straight["history"]) == untimed(resumed["history"])
    two = train(train_config("dmc", epochs=3, actors=2, **kw), tmp_path / "c", progress=False)
    # the same games (decision counts); the losses agree up to the batch-size rounding of actors
    assert [r["learner_decisions"] for r in two["history"]] == [r["learner_decisions"]
                                                                for r in straight["history"]]


def test_the_teacher_travels_to_an_actor_with_its_share() -> None:
    cfg = train_config("dmc", teacher="heuristic", teacher_share=0.7, **TINY)
    behaviour = make_learner(cfg).behaviour()
    rebuilt = NetSpec.of(behaviour).build("cpu")
    assert rebuilt.teacher_share == 0.7 and type(rebuilt.teacher) is type(behaviour.teacher)
    game = make_game("doudizhu:douzero")
    seeds = deal_seeds(5, 3, "train")
    seat_seeds = [[seat_seed(5, g, 0, s) for s in range(3)] for g in range(3)]
    here, _ = collect(game, [[behaviour] * 3] * 3, seeds, seat_seeds, behaviour)
    there, _ = collect(game, [[rebuilt] * 3] * 3, seeds, seat_seeds, rebuilt)
    np.testing.assert_array_equal(here.picks, there.picks)
