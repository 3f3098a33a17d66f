"""The separate bid model: routing of auction decisions, the learned bidder's update, policy
files that bid with it, tiny training runs with bidding rule and learned, resume, bad values."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from climbrl.agents import Decision
from climbrl.agents.base import Agent
from climbrl.agents.bidding import BiddingAgent, RuleBidder
from climbrl.agents.doudizhu_rules import DdzHeuristicAgent
from climbrl.agents.runner import deal_seeds, play_games, seat_seed
from climbrl.config import ConfigError, train_config
from climbrl.encoders.doudizhu import S_PHASE
from climbrl.encoders.doudizhu_bid import BID_DIM
from climbrl.games.doudizhu.state import DdzGame
from climbrl.learn import checkpoint as ckpt
from climbrl.learn.bidding import BidBatch, BidLearner, LearnedBidder
from climbrl.learn.curriculum import Curriculum
from climbrl.learn.policy import PolicyAgent
from climbrl.learn.registry import make_learner
from climbrl.learn.specs import make_agent
from climbrl.learn.train import BidRouting, run_epoch
from climbrl.training import train
from tests.resume import untimed

GAME = DdzGame("standard")


def small(**kw):
    base = {"game": "doudizhu", "rules": "standard", "epochs": 2, "games_per_epoch": 9, "eval_every": 0,
            "hidden": 32, "minibatch_decisions": 64}
    return train_config("ppo", **{**base, **kw})


class Spy(Agent):
    """Wraps an agent and keeps the phases of the decisions it was asked."""

    def __init__(self, inner: Agent) -> None:
        self.inner, self.name, self.phases = inner, inner.name, []

    def act_batch(self, decisions, rngs):
        self.phases += [d.observation.phase for d in decisions]
        return self.inner.act_batch(decisions, rngs)

    def act(self, decision, rng):
        return self.act_batch([decision], [rng])[0]


def _play(agent: Agent, n: int = 9, seed: int = 3) -> list:
    seeds = deal_seeds(seed, n)
    seat_seeds = [[seat_seed(seed, g, 0, s) for s in range(3)] for g in range(n)]
    return play_games(GAME, [[agent] * 3 for _ in range(n)], seeds, seat_seeds)


@pytest.mark.parametrize("bidder", ["rule", "learned"])
def test_play_agent_never_sees_an_auction_decision(bidder) -> None:
    play = Spy(DdzHeuristicAgent())
    bid = Spy(RuleBidder() if bidder == "rule" else BidLearner(small(bidding="learned")).behaviour())
    states = _play(BiddingAgent(play, bid))
    assert set(play.phases) == {"play"} and set(bid.phases) == {"bid"}
    assert len(play.phases) + len(bid.phases) == sum(len(s.moves) for s in states) and len(bid.phases) >= 9


def test_routing_keeps_the_seat_streams() -> None:
    """The heuristic bids by the rule bidder's rule and draws one number per turn, as the rule
    bidder does: split in two by the wrapper, the same games come out."""
    plain = _play(DdzHeuristicAgent())
    split = _play(BiddingAgent(DdzHeuristicAgent(), RuleBidder()))
    assert [s.actions for s in plain] == [s.actions for s in split]


@pytest.mark.parametrize("bidding", ["rule", "learned"])
def test_auction_decisions_stay_out_of_the_play_rollout(bidding) -> None:
    cfg = small(bidding=bidding)
    learner = make_learner(cfg)
    routing = BidRouting(cfg)
    row = run_epoch(cfg, GAME, learner, Curriculum(cfg, learner, 3), 0, routing)
    assert row["learner_decisions"] < row["decisions"]  # every seat is the learner: the bids are missing
    # the same epoch again, the rollout itself: no state in the bid phase
    from climbrl.learn.rollout import Collector

    behaviour = learner.behaviour()
    seatings, bids = routing.seatings([[behaviour] * 3] * 6, behaviour)
    col = Collector(behaviour)
    on_step = col if bids is None else (lambda *a: (col(*a), bids(*a)))
    states = play_games(GAME, seatings, deal_seeds(1, 6), [[seat_seed(1, g, 0, s) for s in range(3)] for g in range(6)],
                        on_step=on_step)
    ro = col.build(states)
    assert (ro.states[:, S_PHASE] == 0).all() and (ro.states[:, S_PHASE + 1] == 1).all()
    if bids is not None:
        batch = bids.build(states, lambda st, seat: st.returns()[seat])
        assert batch.size >= 6 and set(batch.action.tolist()) <= {0, 1, 2, 3}
        assert ro.size + batch.size == sum(len(s.moves) for s in states)  # every decision, once


def test_learned_update_moves_q_toward_the_return() -> None:
    bl = BidLearner(small(bidding="learned", bid_lr=1e-2))
    rng = np.random.default_rng(0)
    x = rng.random((16, BID_DIM), dtype=np.float32)
    action = rng.integers(0, 4, 16)
    ret = np.where(action == 0, -1.0, 2.0).astype(np.float32)
    batch = BidBatch(x=x, action=action, mask=np.ones((16, 6), bool), ret=ret)

    def err() -> float:
        with torch.no_grad():
            q = bl.net(torch.from_numpy(x)).gather(1, torch.from_numpy(action)[:, None])[:, 0].numpy()
        return float(np.mean((q - ret) ** 2))

    before = err()
    for _ in range(5):
        stats = bl.update(batch, np.random.default_rng(1))
    assert err() < 0.5 * before and stats["rate"] == pytest.approx(np.mean(action != 0))
    assert bl.updates == 5 * 4 and bl.decisions_seen == 80


def test_learned_bidder_is_greedy_or_explores() -> None:
    net = BidLearner(small(bidding="learned")).net
    s = GAME.new_game(seed=1)
    d = Decision.from_state(s)
    greedy = LearnedBidder(net)
    picks = {greedy.act(d, random.Random(i)) for i in range(20)}
    assert len(picks) == 1
    explore = LearnedBidder(net, epsilon=1.0)
    assert {explore.act(d, random.Random(i)) for i in range(40)} == set(range(len(d.moves)))


@pytest.mark.parametrize("bidding", ["rule", "learned"])
def test_training_runs_resume_and_policy_files_bid_with_their_model(tmp_path, bidding) -> None:
    cfg = small(bidding=bidding)
    straight = train(cfg, tmp_path / "a", progress=False)
    train(small(bidding=bidding, epochs=1), tmp_path / "b", progress=False)
    resumed = train(cfg, tmp_path / "b", resume=True, progress=False)
    assert untimed(resumed["history"]) == untimed(straight["history"])
    if bidding == "learned":
        assert all(r["loss/bid_decisions"] > 0 for r in straight["history"])
        a = ckpt.load(tmp_path / "a" / "checkpoint.pt")["bidder"]["net"]
        b = ckpt.load(tmp_path / "b" / "checkpoint.pt")["bidder"]["net"]
        assert all(torch.equal(a[k], b[k]) for k in a)
    agent = make_agent(f"checkpoint:{tmp_path / 'a' / 'policy.pt'}", "doudizhu:standard")
    assert isinstance(agent, BiddingAgent) and isinstance(agent.play, PolicyAgent)
    assert agent.encoder is agent.play.encoder  # the play policy's attributes show through
    if bidding == "learned":
        saved = ckpt.load(tmp_path / "a" / "checkpoint.pt")["bidder"]["net"]
        assert isinstance(agent.bidder, LearnedBidder) and agent.bidder.epsilon == 0
        assert all(torch.equal(saved[k], v) for k, v in agent.bidder.net.state_dict().items())
    else:
        assert isinstance(agent.bidder, RuleBidder)
    spy = Spy(agent.play)
    _play(BiddingAgent(spy, agent.bidder), n=3)
    assert set(spy.phases) == {"play"}


def test_default_bidding_policy_files_stay_policy_agents(tmp_path) -> None:
    train(small(epochs=1), tmp_path, progress=False)
    assert type(make_agent(f"checkpoint:{tmp_path / 'policy.pt'}", "doudizhu")) is PolicyAgent
    assert "bidding" not in ckpt.load(tmp_path / "policy.pt")


def test_search_encoder_trains_and_is_recorded(tmp_path) -> None:
    train(small(epochs=1, rules="rlcard", encoder="doudizhu+handsplit"), tmp_path, progress=False)
    agent = make_agent(f"checkpoint:{tmp_path / 'policy.pt'}", "doudizhu")
    assert agent.encoder.name == "doudizhu+handsplit" and agent.net.config()["move_dim"] == 88


def test_bad_values_name_the_field() -> None:
    with pytest.raises(ConfigError, match=r"train\.bidding: 'learned' needs rules with an auction; doudizhu:rlcard"):
        small(rules="rlcard", bidding="learned")
    with pytest.raises(ConfigError, match=r"train\.bidding: .*big2"):
        train_config("ppo", bidding="rule")
    with pytest.raises(ConfigError, match=r"train\.bidding: must be one of policy, rule, learned, got 'auto'"):
        small(bidding="auto")
    with pytest.raises(ConfigError, match=r"train\.encoder: unknown doudizhu encoder 'search'"):
        small(encoder="search")
    with pytest.raises(ConfigError, match=r"train\.encoder: unknown big2 encoder"):
        train_config("ppo", encoder="doudizhu+handsplit")
    with pytest.raises(ConfigError, match=r"train\.bid_epsilon"):
        small(bidding="learned", bid_epsilon=1.5)
    with pytest.raises(ConfigError, match=r"train\.bid_lr"):
        small(bidding="learned", bid_lr=0)
    assert small(rules="rlcard").bidding == "policy"  # policy is fine without an auction
    assert small(rules="online", bidding="rule").bidding == "rule"  # the rob auction
