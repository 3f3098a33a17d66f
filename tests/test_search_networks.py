"""The rollout search with networks in the rollouts' seats (``own=``, ``rollout=base|charlesworth``):
its compiled rollout against the engine, its likelihood filter, fair play and its spec errors.

A network of the public agent's shape with random weights (an ActionHeadNet) stands in for a
trained one, so that everything but the released weights' own case runs without outside data.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from climbrl.agents import Decision
from climbrl.agents import make_agent as make_rule_agent
from climbrl.agents.external.charlesworth import N_ACTIONS
from climbrl.agents.external.charlesworth_compiled import MAX_ACTIVE, compile_weights
from climbrl.agents.rollouts import (
    DUMMY_WEIGHTS,
    HEURISTIC,
    NETWORK,
    _net_pick,
    model_rollout,
    replay_loglik,
    rollout,
)
from climbrl.agents.search import SearchAgent, public_replay, sample_deals, trick_state
from climbrl.encoders import make_encoder
from climbrl.games.big2 import Big2Game
from climbrl.games.big2.combos import MAX_LEGAL_MOVES
from climbrl.learn.checkpoint import network_payload, save_atomic
from climbrl.learn.network import ActionHeadNet, segment_log_softmax
from climbrl.learn.specs import make_agent
from tests.reference import public_agent_weights
from tests.test_search_agent import GAMES, _play_to, assert_choice_ignores_hidden_cards

CW = Big2Game("charlesworth")


@pytest.fixture(scope="module")
def net() -> ActionHeadNet:
    return ActionHeadNet(412, 1, 48, value_head=True, generator=torch.Generator().manual_seed(11),
                         n_actions=N_ACTIONS).eval()


@pytest.fixture(scope="module")
def base_checkpoint(net, tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("base") / "policy.pt"
    save_atomic(network_payload(net, "imitation", 1, make_encoder("big2", "big2-charlesworth")), path)
    return str(path)


def _scratch(*ws):
    """Scratch for rollouts with the networks ``ws`` (their layers' widest)."""
    return (np.empty(MAX_ACTIVE + 4, np.int64), np.empty(MAX_LEGAL_MOVES + 1, np.float32),
            np.empty(max(w[1].shape[0] for w in ws), np.float32), np.empty(max(w[3].shape[0] for w in ws), np.float32))


def _record_of(s):
    obs = s.observation(s.current_player)
    trick = np.array([0, 0, 0] if obs.leading else [obs.to_beat, obs.to_beat_type, obs.passes], dtype=np.int64)
    return (np.array(obs.played, dtype=np.int64), np.array(obs.types_played, dtype=np.int64), trick)


def _model_rollout(s, own, own_w, opp, opp_w, stream: int):
    seat = s.current_player
    played, types, trick = _record_of(s)
    cls, power, last_player, locked = trick_state(s.observation(seat))
    hands = np.array(s.hands, dtype=np.int64)
    buf = np.empty((3, MAX_LEGAL_MOVES + 1), dtype=np.int64)
    winner = model_rollout(hands, played, types, trick, seat, cls, power, last_player, locked, s.must, s.game.tables,
                           s.game.locks, seat, own, own_w, opp, opp_w, np.array([stream], dtype=np.uint64), buf,
                           *_scratch(own_w, opp_w))
    return winner, hands.tolist()


def test_with_rule_agents_in_every_seat_it_is_the_plain_rollout() -> None:
    """The record a network would read changes nothing else: with the heuristic in every seat
    the tracked rollout ends where the plain compiled rollout does, under every preset."""
    buf = np.empty((3, MAX_LEGAL_MOVES + 1), dtype=np.int64)
    for gi, game in enumerate(GAMES):
        for seed in range(12):
            s = _play_to(game, 70 * gi + seed, steps=(5 * seed) % 35, policy="random")
            cls, power, last_player, locked = trick_state(s.observation(s.current_player))
            hands = np.array(s.hands, dtype=np.int64)
            want = rollout(hands, s.current_player, cls, power, last_player, locked, s.must, game.tables, game.locks,
                           HEURISTIC, buf)
            got = _model_rollout(s, HEURISTIC, DUMMY_WEIGHTS, HEURISTIC, DUMMY_WEIGHTS, 0)
            assert got == (want, hands.tolist())


@pytest.fixture(scope="module")
def wide_net() -> ActionHeadNet:
    """A second network, of other widths (96 and 48 units)."""
    return ActionHeadNet(412, 1, 96, value_head=True, generator=torch.Generator().manual_seed(12),
                         n_actions=N_ACTIONS).eval()


@pytest.mark.parametrize("seats", ["opponents", "all", "two networks"])
def test_with_a_network_it_plays_the_engine_game(net, wide_net, seats: str) -> None:
    """The network seats of the rollout see the observation the engine would give them: playing
    the same position in the engine, each network decision made from the engine's own
    observation with the same random stream, ends the game the same way. "two networks": one
    of 48 units in the agent's seat and one of 96 in the others (scratch sized for the wider)."""
    w = compile_weights(net.weights())
    w_opp = compile_weights(wide_net.weights()) if seats == "two networks" else w
    heuristic = make_rule_agent("heuristic")
    own = HEURISTIC if seats == "opponents" else NETWORK
    for seed in range(20):
        s = _play_to(CW, 900 + seed, steps=(3 * seed) % 30, policy="random")
        seat = s.current_player
        want = _model_rollout(s, own, w, NETWORK, w_opp, 77 + seed)
        stream = np.array([77 + seed], dtype=np.uint64)
        scratch = _scratch(w, w_opp)
        while not s.is_terminal():
            d = Decision.from_state(s)
            p = s.current_player
            if len(d.moves) == 1:
                k = 0
            elif p == seat and own == HEURISTIC:
                k = heuristic.act(d, random.Random(0))
            else:
                played, types, trick = _record_of(s)
                k = _net_pick(d.hand, p, np.array(s.hands, dtype=np.int64), played, types, trick,
                              0 if d.observation.leading else 1, np.array(d.moves, dtype=np.int64), len(d.moves),
                              w if p == seat else w_opp, stream, *scratch)
            s.apply(d.moves[k])
        assert want == (s.winner, s.hands)


def test_the_rollout_stream_is_splitmix64() -> None:
    """The networks' random stream: splitmix64 (Steele et al.; reference in plain Python),
    the top 53 bits as a float in [0, 1)."""
    from climbrl.agents.rollouts import _uniform

    state, mask = 1234567, (1 << 64) - 1
    stream = np.array([state], dtype=np.uint64)
    for _ in range(1000):
        state = (state + 0x9E3779B97F4A7C15) & mask
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        z ^= z >> 31
        assert _uniform(stream) == (z >> 11) / 2.0 ** 53
    assert int(stream[0]) == state


def test_a_match_with_networks_in_the_rollouts_does_not_depend_on_the_worker_count(base_checkpoint) -> None:
    from climbrl.agents.runner import deal_seeds
    from climbrl.evaluate.match import deal_wins

    spec = f"search:checkpoint:{base_checkpoint},S=4,K=3,own=base,rollout=base,belief=2"
    seeds = deal_seeds(8, 4)
    one = deal_wins(spec, ["heuristic"], rules="charlesworth", games=16, seed=3, workers=1, seeds=seeds)
    two = deal_wins(spec, ["heuristic"], rules="charlesworth", games=16, seed=3, workers=2, seeds=seeds)
    assert one == two


def test_likelihood_of_the_true_deal_is_the_networks_probability_of_what_was_played(net) -> None:
    """In games the network plays itself (sampling), the filter's log-likelihood of the true
    hands is the sum of the network's log-probabilities of the opponents' past moves."""
    w = compile_weights(net.weights())
    enc = make_encoder("big2", "big2-charlesworth")

    def log_probs(d: Decision) -> np.ndarray:
        x, m, _ = enc.encode([d])
        seg = torch.zeros(len(d.moves), dtype=torch.int64)
        with torch.no_grad():
            return segment_log_softmax(net(torch.from_numpy(x), torch.from_numpy(m), seg), seg, 1).numpy()

    for seed in range(6):
        s = CW.new_game(seed=seed)
        rng = np.random.default_rng(seed)
        past: list[tuple[Decision, int]] = []
        for _ in range(10 + 4 * seed):
            d = Decision.from_state(s)
            p = np.exp(log_probs(d).astype(np.float64))
            k = int(rng.choice(len(d.moves), p=p / p.sum()))
            nxt = s.clone()
            nxt.apply(d.moves[k])
            if nxt.is_terminal():
                break
            past.append((d, k))
            s = nxt
        seat = s.current_player
        want = sum(float(log_probs(d)[k]) for d, k in past if d.seat != seat and len(d.moves) > 1)
        got = replay_loglik(np.array([s.hands], dtype=np.int64), *public_replay(s.observation(seat), CW, record=True),
                            CW.tables, w)[0]
        assert len([1 for d, _ in past if d.seat != seat and len(d.moves) > 1]) >= 3
        assert got == pytest.approx(want, abs=1e-3)


def test_filtered_deals_are_likelier_than_uniform_ones(net, base_checkpoint) -> None:
    agent = make_agent(f"search:checkpoint:{base_checkpoint},S=16,K=4,rollout=base,belief=8", "big2:charlesworth")
    w = compile_weights(net.weights())
    s = _play_to(CW, 5, steps=24)
    d = Decision.from_state(s)
    rec = public_replay(d.observation, CW, record=True)
    filtered = replay_loglik(agent.deals(d, random.Random(1)), *rec, CW.tables, w).mean()
    uniform = replay_loglik(sample_deals(d.observation, CW.rules.starting_card_id, random.Random(2), 128), *rec,
                            CW.tables, w).mean()  # another draw than the filter's pool
    assert filtered > uniform


@pytest.mark.parametrize("knobs", ["own=base", "rollout=base,own=base,belief=3", "rollout=base,belief=2"])
def test_choice_does_not_change_when_hidden_cards_are_exchanged(base_checkpoint, knobs: str) -> None:
    agent = make_agent(f"search:checkpoint:{base_checkpoint},S=8,K=5,{knobs}", "big2:charlesworth")
    _exchange_check(agent)


def test_public_agent_model_choice_does_not_change_when_hidden_cards_are_exchanged() -> None:
    public_agent_weights()
    _exchange_check(make_rule_agent("search:S=8,K=5,rollout=charlesworth,belief=3"))


def _exchange_check(agent: SearchAgent) -> None:
    assert_choice_ignores_hidden_cards(agent, [CW], positions=14, first_seed=400)


def test_network_knobs_and_their_errors(base_checkpoint) -> None:
    a = make_agent(f"search:checkpoint:{base_checkpoint},S=6,K=3,own=base", "big2:charlesworth")
    assert (a.rollout, a.own, a.compiled) == ("heuristic", "base", True)
    assert a.name == f"search:checkpoint:{base_checkpoint},S=6,K=3,rollout=heuristic,own=base"
    assert make_rule_agent("search:rollout=greedy").own == "greedy"  # a rule agent plays every seat, as before
    with pytest.raises(ValueError, match="own=base"):
        make_rule_agent("search:S=4,own=base")
    with pytest.raises(ValueError, match="rollout=base"):
        make_rule_agent("search:S=4,rollout=base")
    with pytest.raises(ValueError, match="own policy 'x'"):
        make_rule_agent("search:S=4,own=x")
    with pytest.raises(ValueError, match="charlesworth"):
        a.act(Decision.from_state(Big2Game("paper").new_game(seed=0)), random.Random(0))
    # a study checkpoint (action-in network) has no compiled form: it may rank, not play a seat
    assert SearchAgent(own="heuristic").compiled is False
