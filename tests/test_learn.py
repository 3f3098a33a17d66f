"""Learners on hand-made batches, the shared parts, checkpoints, resume, and one short run."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from climbrl.agents import Decision
from climbrl.config import ConfigError, train_config
from climbrl.encoders.big2 import MOVE_DIM, STATE_DIM, Big2Encoder, encode_decisions
from climbrl.games.big2 import Big2Game
from climbrl.learn import checkpoint as ckpt
from climbrl.learn.curriculum import Curriculum
from climbrl.learn.network import ActionInNet, segment_log_softmax, segment_sum
from climbrl.learn.policy import PolicyAgent
from climbrl.learn.registry import make_learner
from climbrl.learn.replay import PrioritizedReplayBuffer, ReplayBuffer
from climbrl.learn.rollout import Rollout
from climbrl.learn.specs import make_agent
from climbrl.training import train
from tests.resume import untimed


def small(algo: str, **kw):
    base = {"epochs": 2, "games_per_epoch": 8, "eval_every": 0, "hidden": 32, "minibatch_decisions": 64,
            "batch_size": 32, "updates_per_epoch": 5}
    return train_config(algo, **{**base, **kw})


def rollout(rewards: list[float], dones: list[bool], n_moves: int = 3, seed: int = 0) -> Rollout:
    """A hand-made rollout: random features, ``n_moves`` legal moves per decision, move 0 chosen."""
    rng = np.random.default_rng(seed)
    d = len(rewards)
    return Rollout(
        states=rng.random((d, STATE_DIM), dtype=np.float32),
        moves=rng.random((d * n_moves, MOVE_DIM), dtype=np.float32),
        offsets=np.arange(0, d * n_moves + 1, n_moves, dtype=np.int64),
        picks=np.zeros(d, dtype=np.int64),
        logp=np.full(d, np.log(1 / n_moves), dtype=np.float32),
        rewards=np.array(rewards, dtype=np.float32),
        dones=np.array(dones),
        games=1,
    )


# --- shared parts ------------------------------------------------------------------------------

def _decisions(n_games: int = 3, rules: str = "paper") -> list[Decision]:
    game, rng, out = Big2Game(rules), random.Random(0), []
    for g in range(n_games):
        s = game.new_game(seed=g)
        while not s.is_terminal():
            d = Decision.from_state(s)
            out.append(d)
            s.apply(d.moves[rng.randrange(len(d.moves))])
    return out


def test_encoding_layout() -> None:
    ds = _decisions()
    states, moves, offsets = encode_decisions(ds)
    assert states.shape == (len(ds), STATE_DIM) and moves.shape == (offsets[-1], MOVE_DIM)
    for d, s in zip(ds, states, strict=True):
        hand = [c for c in range(52) if d.hand >> c & 1]
        assert np.flatnonzero(s[:52]).tolist() == hand
        assert s[557] == (1.0 if d.observation.leading else 0.0)
        if not d.observation.leading:
            assert np.flatnonzero(s[52:104]).tolist() == [c for c in range(52) if d.observation.to_beat >> c & 1]
        assert s[543] == pytest.approx(len(hand) / 13)
    for b, d in enumerate(ds[:50]):
        rows = moves[offsets[b]:offsets[b + 1]]
        for m, row in zip(d.moves, rows, strict=True):
            assert np.flatnonzero(row[:52]).tolist() == [c for c in range(52) if m >> c & 1]
            assert row[68] == (1.0 if m == 0 else 0.0)


def test_encoding_uses_only_the_seat_view() -> None:
    """Two states that differ only in how the other seats' cards are split encode the same."""
    game = Big2Game("paper")
    a = game.new_game(hands=["3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC 2C",
                             "3D 4D 5D 6D 7D 8D 9D 10D JD QD KD AD 2D",
                             "3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH 2H",
                             "3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS 2S"])
    b = game.new_game(hands=["3C 4C 5C 6C 7C 8C 9C 10C JC QC KC AC 2C",
                             "3D 4H 5D 6H 7D 8H 9D 10H JD QH KD AH 2D",
                             "3H 4D 5H 6D 7H 8D 9H 10D JH QD KH AD 2H",
                             "3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS 2S"])
    sa, ma, _ = encode_decisions([Decision.from_state(a)])
    sb, mb, _ = encode_decisions([Decision.from_state(b)])
    assert np.array_equal(sa, sb) and np.array_equal(ma, mb)


def test_network_shapes_softmax_and_dueling() -> None:
    torch.manual_seed(0)
    seg = torch.tensor([0, 0, 0, 1, 1])
    s, m = torch.rand(2, STATE_DIM), torch.rand(5, MOVE_DIM)
    net = ActionInNet(Big2Encoder.state_dim, Big2Encoder.move_dim, hidden=16)
    scores = net(s, m, seg)
    assert scores.shape == (5,)
    probs = torch.exp(segment_log_softmax(scores, seg, 2))
    assert torch.allclose(segment_sum(probs, seg, 2), torch.ones(2))
    duel = ActionInNet(Big2Encoder.state_dim, Big2Encoder.move_dim, hidden=16, dueling=True)
    q = duel(s, m, seg)
    v = duel.value(s)
    # dueling: the mean Q over a decision's moves equals V(s)
    assert torch.allclose(segment_sum(q, seg, 2) / torch.tensor([3.0, 2.0]), v, atol=1e-5)
    # the state part is computed once per decision: same as scoring the concatenation
    full = torch.cat([s[seg], m], dim=1)
    w = torch.cat([net.state_in.weight, net.move_in.weight], dim=1)
    h = torch.relu(full @ w.T + net.state_in.bias)
    direct = net.out(torch.relu(net.fc2(h))).squeeze(-1)
    assert torch.allclose(scores, direct, atol=1e-5)


def test_study_network_has_two_layers_of_512() -> None:
    net = make_learner(train_config("ppo")).net
    assert net.state_in.out_features == 512 and net.fc2.in_features == 512 and net.fc2.out_features == 512


# --- learners on hand-made batches ---------------------------------------------------------------

def test_mcq_targets_are_the_discounted_returns() -> None:
    ro = rollout([0, 0, 1.0, 0, -1 / 3], [False, False, True, False, True])
    learner = make_learner(small("mcq", gamma=0.9))
    got = learner.targets(ro)
    assert np.allclose(got, [0.81, 0.9, 1.0, -0.3, -1 / 3])


def test_sarsa_target_uses_the_next_move_taken() -> None:
    ro = rollout([0, 0.5, 0, -1.0], [False, True, False, True])
    learner = make_learner(small("sarsa", gamma=0.9))
    with torch.no_grad():
        q = learner.chosen_q(ro, np.arange(4)).numpy()
    assert np.allclose(learner.targets(ro), [0.9 * q[1], 0.5, 0.9 * q[3], -1.0], atol=1e-6)


def test_ppo_ratio_is_one_before_the_first_update() -> None:
    cfg = small("ppo")
    learner = make_learner(cfg)
    game = Big2Game("paper")
    agent = learner.behaviour()
    from climbrl.evaluate.match import play_games
    from climbrl.learn.rollout import Collector

    col = Collector(agent)
    states = play_games(game, [[agent] * 4] * 2, [1, 2], [[1, 2, 3, 4], [5, 6, 7, 8]], on_step=col)
    ro = col.build(states)
    logp, _, _ = learner.log_probs(ro, np.arange(ro.size))
    assert torch.allclose(torch.exp(logp - torch.from_numpy(ro.logp)), torch.ones(ro.size), atol=1e-4)
    stats = learner.update(ro, np.random.default_rng(0))
    assert stats["ratio_mean"] == pytest.approx(1.0, abs=0.05)


def test_ppo_advantages_on_a_hand_made_trajectory() -> None:
    learner = make_learner(small("ppo", gamma=1.0, gae_lambda=1.0))
    torch.nn.init.zeros_(learner.net.value_net[-1].weight)
    torch.nn.init.zeros_(learner.net.value_net[-1].bias)
    ro = rollout([0, 0, 1.0], [False, False, True])
    adv, returns = learner.advantages(ro)
    assert np.allclose(adv, [1, 1, 1]) and np.allclose(returns, [1, 1, 1])


def test_target_network_changes_only_at_sync() -> None:
    learner = make_learner(small("qlearning", target_sync=3, target_sync_unit="updates", updates_per_epoch=1,
                                 batch_size=4))
    ro = rollout([0, 1.0, 0, -1.0] * 3, [False, True] * 6)
    before = [p.clone() for p in learner.target.parameters()]
    rng = np.random.default_rng(0)
    for k in range(1, 7):
        learner.update(ro, rng)
        same = all(torch.equal(a, b) for a, b in zip(before, learner.target.parameters(), strict=True))
        if k % 3:
            assert same, f"target moved at update {k}"
        else:
            assert not same
            before = [p.clone() for p in learner.target.parameters()]
            assert all(torch.equal(a, b) for a, b in zip(learner.target.parameters(),
                                                          learner.net.parameters(), strict=True))


def _sync_times(learner) -> list[int]:
    """Record the update count at every hard copy into the target network."""
    times: list[int] = []
    copy_in = learner.target.load_state_dict
    learner.target.load_state_dict = lambda sd: (times.append(learner.updates), copy_in(sd))[1]
    return times


def test_target_syncs_every_n_decisions_or_updates() -> None:
    """12 decisions per epoch over 4 updates: update k stands for decisions up to 3k, so with a
    sync every 10 decisions the copies follow updates 4 (decision 12 crosses 10) and 7 (21
    crosses 20); counted in updates, every 3rd update."""
    ro = rollout([0, 1.0] * 6, [False, True] * 6)
    for unit, want in (("decisions", [4, 7]), ("updates", [3, 6])):
        learner = make_learner(small("qlearning", target_sync=10 if unit == "decisions" else 3,
                                     target_sync_unit=unit, updates_per_epoch=4, batch_size=4))
        times = _sync_times(learner)
        rng = np.random.default_rng(0)
        for _ in range(2):
            learner.update(ro, rng)
        assert learner.updates == 8 and times == want, (unit, times)
        assert all(torch.equal(a, b) for a, b in zip(learner.target.parameters(), learner.net.parameters(),
                                                      strict=True)) == (want[-1] == 8)


def test_prioritized_beta_anneals_to_one_over_the_run(tmp_path, monkeypatch) -> None:
    """beta goes from priority_beta (0.4) to 1 over the run, a step per update: with 2 epochs of
    2 updates the four samples use 0.4 + 0.6 * k / 4 for k = 1..4."""
    betas: list[float] = []
    sample = PrioritizedReplayBuffer.sample
    monkeypatch.setattr(PrioritizedReplayBuffer, "sample",
                        lambda self, n, rng, beta=0.4: (betas.append(beta), sample(self, n, rng, beta))[1])
    res = train(small("dqn", epochs=2, updates_per_epoch=2), tmp_path, progress=False)
    assert betas == pytest.approx([0.55, 0.7, 0.85, 1.0])  # start, middle, end of the run
    assert [r["loss/beta"] for r in res["history"]] == pytest.approx([0.7, 1.0])


def test_soft_updates_move_the_target_by_tau() -> None:
    learner = make_learner(small("dqn", tau=0.5, updates_per_epoch=1, batch_size=4))
    ro = rollout([0, 1.0] * 4, [False, True] * 4)
    old_target = [p.clone() for p in learner.target.parameters()]
    learner.update(ro, np.random.default_rng(0))
    for old, new, online in zip(old_target, learner.target.parameters(), learner.net.parameters(), strict=True):
        assert torch.allclose(new, 0.5 * old + 0.5 * online, atol=1e-6)


def test_dqn_epsilon_schedule_and_switches() -> None:
    cfg = small("dqn", epsilon_decay_steps=100)
    learner = make_learner(cfg)
    assert cfg.double and cfg.dueling and cfg.prioritized and learner.net.dueling
    assert learner.epsilon() == 1.0
    learner.decisions_seen = 50
    assert learner.epsilon() == pytest.approx(0.525)
    learner.decisions_seen = 1000
    assert learner.epsilon() == pytest.approx(0.05)
    assert make_learner(small("qlearning")).epsilon() == 0.1


def test_prioritized_replay_samples_by_priority() -> None:
    buf = PrioritizedReplayBuffer(8, Big2Encoder.state_dim, Big2Encoder.move_dim, alpha=1.0)
    buf.add_rollout(rollout([0.0] * 4, [True] * 4))
    buf.update_priorities(np.arange(4), np.array([1.0, 1.0, 1.0, 9.0]) - buf.eps)
    s = buf.sample(400, np.random.default_rng(0), beta=1.0)
    assert 0.68 < np.mean(s.indices == 3) < 0.82  # 9 / 12
    assert s.weights[s.indices == 3].max() < s.weights[s.indices != 3].min()
    uni = ReplayBuffer(8, Big2Encoder.state_dim, Big2Encoder.move_dim)
    uni.add_rollout(rollout([0.0] * 4, [False, True, False, True]))
    sample = uni.sample(4, np.random.default_rng(0))
    assert sample.next_offsets[-1] == sum(0 if d else 3 for d in sample.dones)


# --- configuration, checkpoints, resume ---------------------------------------------------------

@pytest.mark.parametrize(
    "kwargs,field",
    [({"lr": -0.1}, "lr"), ({"epsilon": 1.5}, "epsilon"), ({"gamma": 2}, "gamma"),
     ({"epochs": 0}, "epochs"), ({"eval_games": 10}, "eval_games"), ({"curriculum": "x"}, "curriculum"),
     ({"eval_opponents": ("nobody",)}, "eval_opponents"), ({"bogus": 1}, "bogus"),
     ({"target_sync_unit": "steps"}, "target_sync_unit")],
)
def test_bad_hyperparameters_name_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=f"train.{field}"):
        train_config("ppo", **kwargs)
    with pytest.raises(ConfigError, match="train.algo"):
        train_config("a2c")


def test_resume_continues_exactly(tmp_path) -> None:
    cfg = small("ppo", epochs=3)
    straight = train(cfg, tmp_path / "a", progress=False)
    first = train(small("ppo", epochs=2), tmp_path / "b", progress=False)
    assert len(first["history"]) == 2
    resumed = train(cfg, tmp_path / "b", resume=True, progress=False)
    assert untimed(resumed["history"]) == untimed(straight["history"])
    a, _, _ = ckpt.load_network(tmp_path / "a" / "policy.pt")
    b, _, _ = ckpt.load_network(tmp_path / "b" / "policy.pt")
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True))


def test_checkpoint_errors(tmp_path) -> None:
    with pytest.raises(ckpt.CheckpointError, match="not found"):
        ckpt.load(tmp_path / "none.pt")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"garbage")
    with pytest.raises(ckpt.CheckpointError, match="corrupt"):
        ckpt.load(bad)
    train(small("mcq", epochs=1), tmp_path / "run", progress=False)
    with pytest.raises(ckpt.CheckpointError, match="exists"):
        train(small("mcq", epochs=1), tmp_path / "run", progress=False)
    with pytest.raises(ckpt.CheckpointError, match="algo"):
        train(small("sarsa", epochs=2), tmp_path / "run", resume=True, progress=False)
    with pytest.raises(ckpt.CheckpointError, match="hidden"):
        train(small("mcq", epochs=2, hidden=64), tmp_path / "run", resume=True, progress=False)
    # a truncated checkpoint (a crash mid-write never leaves one: writes are atomic)
    data = (tmp_path / "run" / "checkpoint.pt").read_bytes()
    (tmp_path / "run" / "checkpoint.pt").write_bytes(data[: len(data) // 2])
    with pytest.raises(ckpt.CheckpointError, match="corrupt"):
        train(small("mcq", epochs=2), tmp_path / "run", resume=True, progress=False)


def test_resume_refuses_any_changed_setting_but_the_budget(tmp_path) -> None:
    from pipeline.seeded import stale

    train(small("ppo", epochs=1), tmp_path, progress=False)
    other = small("ppo", epochs=2, lr=1e-3, ent_coef=0.05)
    with pytest.raises(ckpt.CheckpointError, match=r"lr=0\.0003 there, 0\.001 here; ent_coef=0\.01 there, 0\.05 here"):
        train(other, tmp_path, resume=True, progress=False)
    assert stale(other, tmp_path) == ("lr=0.0003 there, 0.001 here; ent_coef=0.01 there, 0.05 here")  # one rule
    # a longer budget, more evaluation workers, other kept policies: the same numbers, so accepted
    res = train(small("ppo", epochs=2, eval_workers=2, keep_policy_every=0), tmp_path, resume=True, progress=False)
    assert [r["epoch"] for r in res["history"]] == [1, 2]
    with pytest.raises(ckpt.CheckpointError, match="it has 2 epochs, this run wants 1"):
        train(small("ppo", epochs=1), tmp_path, resume=True, progress=False)


def test_resume_rule_for_prioritized_replay_and_older_checkpoints() -> None:
    dqn = small("dqn", epochs=2)
    state = {"config": dqn.to_dict(), "epoch": 1}
    assert ckpt.resume_conflicts(dqn, state) == []
    assert ckpt.resume_conflicts(small("dqn", epochs=3), state) == ["epochs=2 there, 3 here"]  # beta's schedule
    assert ckpt.resume_conflicts(small("dqn", epochs=3, prioritized=False), {
        "config": {**dqn.to_dict(), "prioritized": False}, "epoch": 1}) == []
    # a key the checkpoint predates is read at the field's default (the behaviour before it existed)
    ql = small("qlearning", target_sync_unit="updates")
    old = {"config": {k: v for k, v in ql.to_dict().items() if k != "target_sync_unit"}, "epoch": 1}
    assert ckpt.resume_conflicts(ql, old) == []
    assert ckpt.resume_conflicts(small("qlearning"), old) == [  # the study's Q-learning now counts decisions
        "target_sync_unit='updates' there, 'decisions' here"]


def test_policies_are_kept_every_n_epochs(tmp_path) -> None:
    train(small("mcq", epochs=4, keep_policy_every=2), tmp_path, progress=False)
    kept = sorted(p.name for p in (tmp_path / "snapshots").iterdir())
    assert kept == ["epoch002.pt", "epoch004.pt"]
    last, meta, _ = ckpt.load_network(tmp_path / "snapshots" / "epoch004.pt")
    final, _, _ = ckpt.load_network(tmp_path / "policy.pt")
    assert all(torch.equal(x, y) for x, y in zip(last.state_dict().values(), final.state_dict().values(), strict=True))
    train(small("mcq", epochs=2, keep_policy_every=0), tmp_path / "none", progress=False)
    assert not (tmp_path / "none" / "snapshots").exists()


def test_a_crash_mid_training_resumes_from_the_last_epoch(tmp_path) -> None:
    cfg = small("qlearning", epochs=3)
    calls = []

    def boom(row):
        calls.append(row["epoch"])
        if row["epoch"] == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train(cfg, tmp_path, progress=False, on_epoch=boom)
    res = train(cfg, tmp_path, resume=True, progress=False)
    assert [r["epoch"] for r in res["history"]] == [1, 2, 3]
    assert (tmp_path / "metrics.csv").read_text().count("\n") == 4


# --- curricula ---------------------------------------------------------------------------------

def test_curricula_seatings() -> None:
    learner = make_learner(small("ppo", curriculum="opponent_pool", pool_size=2, snapshot_every=8))
    cur = Curriculum(learner.cfg, learner)
    me = learner.behaviour()
    seats = cur.seatings(8, me, np.random.default_rng(0))
    for g, seating in enumerate(seats):
        assert seating[g % 4] is me and sum(a is me for a in seating) == 1
    names = {a.name for s in seats for a in s if a is not me}
    assert names <= {"aggressive", "conservative", "snapshot@0"}
    for _ in range(3):
        cur.after_epoch(learner, 8)
    assert len(cur.snapshots) == 2 and cur.snapshots[-1].name == "snapshot@24"  # oldest evicted
    fixed = Curriculum(small("ppo", curriculum="fixed_opponents", fixed_opponents=("greedy",)), learner)
    assert all(a.name == "greedy" for s in fixed.seatings(4, me, np.random.default_rng(0)) for a in s if a is not me)
    sp = Curriculum(small("ppo"), learner)
    assert all(a is me for s in sp.seatings(3, me, np.random.default_rng(0)) for a in s)


def test_snapshots_play_the_learners_behaviour_policy() -> None:
    """A value learner's frozen snapshot plays epsilon-greedy with the learner's epsilon when it
    was taken (not a softmax of Q-values); PPO's samples its softmax."""
    learner = make_learner(small("dqn", curriculum="opponent_pool", snapshot_every=8, epsilon_decay_steps=100))
    cur = Curriculum(learner.cfg, learner)
    learner.decisions_seen = 50
    cur.after_epoch(learner, 8)
    assert [(s.mode, s.epsilon) for s in cur.snapshots] == [("epsilon", 1.0), ("epsilon", pytest.approx(0.525))]
    assert not cur.snapshots[0].scores_are_logits
    again = Curriculum(learner.cfg, make_learner(learner.cfg))
    again.load_state_dict(cur.state_dict(), learner.net)
    def how(c: Curriculum) -> list:
        return [(s.mode, s.epsilon, s.name) for s in c.snapshots]

    assert how(again) == how(cur)
    old = {k: v for k, v in cur.state_dict().items() if k != "snapshot_epsilons"}
    with pytest.raises(ckpt.CheckpointError, match="predate"):
        again.load_state_dict(old, learner.net)
    # epsilon 0: exactly the greedy choice of its Q-values
    greedy_learner = make_learner(small("qlearning", curriculum="checkpoint_self_play", epsilon=0.0))
    snap = Curriculum(greedy_learner.cfg, greedy_learner).snapshots[0]
    ds = _decisions(2)
    greedy = PolicyAgent(greedy_learner.net, Big2Encoder(), mode="greedy")
    rngs = [random.Random(k) for k in range(len(ds))]
    assert snap.act_batch(ds, rngs) == greedy.act_batch(ds, [random.Random(k) for k in range(len(ds))])
    ppo = make_learner(small("ppo", curriculum="checkpoint_self_play"))
    assert Curriculum(ppo.cfg, ppo).snapshots[0].mode == "sample"


def _changed(before: dict, after: dict) -> bool:
    return any(not torch.equal(before[k], after[k]) for k in before)


@pytest.mark.parametrize("curriculum", ["self_play", "checkpoint_self_play", "fixed_opponents", "opponent_pool"])
def test_every_curriculum_trains(tmp_path, curriculum: str) -> None:
    cfg = small("ppo", curriculum=curriculum, snapshot_every=8)
    initial = {k: v.clone() for k, v in make_learner(cfg).net.state_dict().items()}
    res = train(cfg, tmp_path, progress=False)
    last = res["history"][-1]
    # the training data is the learner's own decisions: all four seats in self-play, one seat
    # per game against the curriculum's opponents
    if curriculum == "self_play":
        assert last["learner_decisions"] == last["decisions"]
    else:
        assert 0 < last["learner_decisions"] < last["decisions"] / 2
    assert np.isfinite(last["loss/policy_loss"]) and last["loss/entropy"] > 0
    assert _changed(initial, make_agent(f"checkpoint:{tmp_path / 'policy.pt'}").net.state_dict())
    snapshots = ckpt.load(tmp_path / "checkpoint.pt")["curriculum"]["snapshot_names"]
    if curriculum in ("checkpoint_self_play", "opponent_pool"):  # one at the start, one every 8 games
        assert snapshots == ["snapshot@0", "snapshot@8", "snapshot@16"][-cfg.pool_size:]
    else:
        assert snapshots == []


@pytest.mark.parametrize("algo", ["mcq", "sarsa", "qlearning", "dqn"])
def test_every_learner_trains_and_is_an_agent(tmp_path, algo: str) -> None:
    cfg = small(algo)
    initial = {k: v.clone() for k, v in make_learner(cfg).net.state_dict().items()}
    res = train(cfg, tmp_path, progress=False)
    assert len(res["history"]) == 2 and np.isfinite(res["history"][-1]["loss/loss"])
    agent = make_agent(f"checkpoint:{tmp_path / 'policy.pt'}")
    assert isinstance(agent, PolicyAgent) and agent.mode == "greedy"
    assert _changed(initial, agent.net.state_dict())  # the updates moved the weights
    # as an agent: its greedy move is the argmax of the trained network's scores, every decision
    decisions = _decisions(2)
    states, moves, offsets = encode_decisions(decisions)
    seg = torch.from_numpy(np.repeat(np.arange(len(decisions)), np.diff(offsets)))
    with torch.no_grad():
        scores = agent.net(torch.from_numpy(states), torch.from_numpy(moves), seg).numpy()
    want = [int(np.argmax(scores[offsets[b]:offsets[b + 1]])) for b in range(len(decisions))]
    assert agent.act_batch(decisions, [random.Random(i) for i in range(len(decisions))]) == want


# --- one short training run must beat random players ---------------------------------------------

def test_short_ppo_run_beats_random_players(tmp_path) -> None:
    cfg = train_config("ppo", epochs=4, games_per_epoch=50, eval_every=4, eval_games=400,
                       eval_opponents=("random",))
    res = train(cfg, tmp_path, progress=False)
    ev = res["final_eval"]
    assert ev["eval_games/random"] == 400
    assert ev["win_rate_low/random"] > 0.25, ev


def test_policy_agent_modes() -> None:
    net = ActionInNet(Big2Encoder.state_dim, Big2Encoder.move_dim, hidden=16)
    d = Decision.from_state(Big2Game("paper").new_game(seed=5))
    greedy = PolicyAgent(net, Big2Encoder(), mode="greedy")
    assert len({greedy.act(d, random.Random(k)) for k in range(5)}) == 1
    eps = PolicyAgent(net, Big2Encoder(), mode="epsilon", epsilon=1.0)
    assert len({eps.act(d, random.Random(k)) for k in range(40)}) > 1
    with pytest.raises(ValueError, match="mode"):
        PolicyAgent(net, Big2Encoder(), mode="soft")


def test_dueling_advantages_learn_from_replay() -> None:
    """Regression: with one move per state the dueling mean cancels the advantage and only V
    learns; the update must average over every legal move of the state."""
    learner = make_learner(small("dqn", updates_per_epoch=20, batch_size=8, prioritized=False, lr=1e-3))
    ro = rollout([0.0, 1.0] * 8, [False, True] * 8)
    out_before = learner.net.out.weight.detach().clone()
    learner.update(ro, np.random.default_rng(0))
    assert not torch.equal(out_before, learner.net.out.weight), "the advantage stream got no gradient"
    s = learner.buffer.sample(8, np.random.default_rng(1))
    assert torch.allclose(learner.q_chosen(s), learner.net(
        torch.from_numpy(s.states), torch.from_numpy(s.moves),
        torch.from_numpy(np.repeat(np.arange(8), np.diff(s.offsets))))[torch.from_numpy(s.chosen)])


def test_the_numbers_do_not_depend_on_the_machines_thread_count(tmp_path) -> None:
    """Training pins torch to one intra-op thread: the float sums of a product split over more
    threads differ in the last bits, and PPO's updates amplify such differences epoch by epoch."""
    cfg = small("ppo", epochs=1, games_per_epoch=16, hidden=512, minibatch_decisions=4096)
    before = torch.get_num_threads()
    try:
        weights = []
        for threads in (2, 1):
            torch.set_num_threads(threads)
            train(cfg, tmp_path / str(threads), progress=False)
            net, _, _ = ckpt.load_network(tmp_path / str(threads) / "policy.pt")
            weights.append(net.state_dict())
    finally:
        torch.set_num_threads(before)
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
