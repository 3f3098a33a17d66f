"""The practice guide's remedies for replay and its DQN loop (issue 26, part 2), as options of the
replay learners: a recency window for sampling, dropping the oldest part of the buffer on a
schedule (5.5), and one update per decision (4.2). Their defaults leave every run as it was."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from climbrl.config import ConfigError
from climbrl.learn.replay import PrioritizedReplayBuffer, ReplayBuffer
from climbrl.training import train
from tests.test_faults import metrics, policy, stop_after
from tests.test_learn import rollout, small


def _filled(cls, capacity: int, n: int):
    buf = cls(capacity, *_dims())
    ro = rollout([float(i) for i in range(n)], [False] * (n - 1) + [True])
    buf.add_rollout(ro)
    return buf


def _dims():
    from tests.test_learn import MOVE_DIM, STATE_DIM

    return STATE_DIM, MOVE_DIM


@pytest.mark.parametrize("cls", [ReplayBuffer, PrioritizedReplayBuffer])
@pytest.mark.parametrize(("capacity", "n"), [(20, 12), (10, 25)])  # part full; full and wrapped around
def test_dropping_the_oldest_keeps_the_newest_in_order(cls, capacity: int, n: int) -> None:
    buf = _filled(cls, capacity, n)
    before = [float(buf.rewards[i]) for i in buf.age_order()]  # a transition's reward is its number
    if cls is PrioritizedReplayBuffer:
        buf.update_priorities(buf.age_order(), np.arange(buf.size, dtype=float))
        prio = {float(buf.rewards[i]): buf.tree[i + buf.tree_size] for i in range(buf.size)}
    dropped = buf.drop_oldest(0.3)
    after = [float(buf.rewards[i]) for i in buf.age_order()]
    assert dropped == int(0.3 * len(before)) and after == before[dropped:]
    assert buf.pos == buf.size % buf.capacity
    if cls is PrioritizedReplayBuffer:
        assert all(buf.tree[i + buf.tree_size] == prio[float(buf.rewards[i])] for i in range(buf.size))
        assert buf.tree[1] == pytest.approx(sum(prio[r] for r in after))
    # new transitions go after the kept ones
    buf.add_rollout(rollout([100.0, 101.0], [False, True]))
    assert [float(buf.rewards[i]) for i in buf.age_order()][-2:] == [100.0, 101.0]


def test_recent_sampling_draws_only_from_the_newest() -> None:
    buf = _filled(ReplayBuffer, 10, 25)  # slots hold transitions 15..24, wrapped around
    rng = np.random.default_rng(0)
    s = buf.sample(500, rng, recent=0.3)
    assert set(s.rewards.tolist()) == {22.0, 23.0, 24.0}
    full = buf.sample(500, np.random.default_rng(0))
    assert set(full.rewards.tolist()) == set(map(float, range(15, 25)))
    assert np.array_equal(full.indices, buf.sample(500, np.random.default_rng(0), recent=1.0).indices)


def test_one_update_per_decision_and_the_options_resume_exactly(tmp_path) -> None:
    cfg = small("qlearning", updates_per_decision=0.05, replay_recent=0.5, replay_drop_every=300,
                replay_capacity=2000, epochs=3)
    train(cfg, tmp_path / "straight", progress=False)
    rows = metrics(tmp_path / "straight")
    per_epoch = [int(r["learner_decisions"]) for r in rows]  # the epoch's own
    assert [float(r["loss/updates"]) for r in rows] == [float(round(0.05 * d)) for d in per_epoch]
    assert sum(float(r["loss/replay_dropped"]) for r in rows) > 0
    with pytest.raises(KeyboardInterrupt):
        train(cfg, tmp_path / "stopped", progress=False, on_epoch=stop_after(2))
    train(cfg, tmp_path / "stopped", resume=True, progress=False)
    assert metrics(tmp_path / "stopped") == rows
    a, b = policy(tmp_path / "straight"), policy(tmp_path / "stopped")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_bad_settings_are_named() -> None:
    for kw, field in (({"updates_per_decision": -1}, "updates_per_decision"), ({"replay_recent": 0}, "replay_recent"),
                      ({"replay_recent": 0.5, "prioritized": True}, "replay_recent"),
                      ({"replay_drop_every": -3}, "replay_drop_every"), ({"replay_drop_fraction": 1.0},
                                                                          "replay_drop_fraction")):
        with pytest.raises(ConfigError, match=field):
            small("dqn" if "prioritized" in kw else "qlearning", **kw)
