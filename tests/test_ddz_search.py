"""Dou Dizhu's decision-time search: its sampled deals respect what the seat has seen and rebuild
games of the rules that reach its observation, its choice does not change when the hidden cards
move (with a control that peeks), reproducibility, legal moves, bids, a trained base policy."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from climbrl.agents import Decision, make_agent
from climbrl.agents.ddz_search import DdzSearchAgent, deal_weights, known_cards, rebuild, sample_hands
from climbrl.games.doudizhu.state import DdzGame, DdzState
from climbrl.learn.specs import make_agent as make_any_agent

GAMES = [DdzGame("douzero"), DdzGame("standard")]
DECK = np.array([4] * 13 + [1, 1])


def rule_agent(name: str):
    """The registry's maker of rule agents, as the specs pass it to the search."""
    return make_agent(name, "doudizhu")


def _play_to(game: DdzGame, seed: int, steps: int, policy: str = "heuristic") -> DdzState:
    """A game dealt from ``seed`` after ``steps`` moves (auction included) of ``policy`` in every
    seat, or one move before its end; a game whose auction ends without a landlord is redealt
    from the next seed."""
    agent, rng = make_agent(policy, "doudizhu"), random.Random(seed)
    while True:
        s = game.new_game(seed=seed)
        for _ in range(steps):
            d = Decision.from_state(s)
            nxt = s.clone()
            nxt.apply(d.moves[agent.act(d, rng)])
            if nxt.is_terminal():
                break
            s = nxt
        if not s.is_terminal():
            return s
        seed += 1000


def _exchanged(state: DdzState, rng: random.Random) -> DdzState:
    """The same game with the hidden cards of the seat to act's two other seats moved among them
    at random, keeping what the seat has seen: each seat's card count and plays, the kitty cards
    the landlord has not played. Written from the state (not the observation): the new starting
    hands are replayed with the state's own moves."""
    seat = state.current_player
    others = [p for p in range(3) if p != seat]
    hands = state.hands.astype(np.int64)
    keep = np.zeros_like(hands)
    if state.landlord in others:
        keep[state.landlord] = np.minimum(hands[state.landlord],
                                          np.maximum(state.kitty - state.played[state.landlord], 0))
    pool = [r for p in others for r in range(15) for _ in range(hands[p][r] - keep[p][r])]
    rng.shuffle(pool)
    new = hands.copy()
    for p in others:
        n = int(hands[p].sum() - keep[p].sum())
        new[p] = keep[p] + np.bincount(pool[:n], minlength=15)
        pool = pool[n:]
    start = new + state.played
    start[state.landlord] -= state.kitty
    other = state.game.new_game(hands=[h.astype(np.int8) for h in start], kitty=state.kitty.copy(),
                                first_bidder=state.deals[-1][2])
    for _, m in state.auction_history + state.history:  # this deal's (after a redeal: the last one's)
        other.apply(m)
    return other


def _play_position(game: DdzGame, seed: int) -> DdzState:
    """A play-phase position with a choice (the seat to act has at least two legal moves)."""
    for steps in range(3 + (7 * seed) % 30, 0, -1):
        s = _play_to(game, seed, steps)
        if s.observation(s.current_player).phase == "play" and len(s.legal_moves()) > 1:
            return s
    raise AssertionError(f"no play position with a choice in game {seed}")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 10_000), steps=st.integers(0, 60), draw=st.integers(0, 99))
def test_sampled_deals_respect_what_the_seat_has_seen(game: DdzGame, seed: int, steps: int, draw: int) -> None:
    """Every sampled deal: the own hand as it is, the other seats' public counts, the landlord's
    unplayed kitty cards with the landlord, one deck with the played cards; and the game rebuilt
    from it reaches the seat's very observation and legal moves."""
    state = _play_to(game, seed, steps)
    obs = state.observation(state.current_player)
    if obs.phase != "play":
        return
    known = known_cards(obs)
    assert np.all(state.hands >= known)  # the true hands are among the possible deals
    for hands in sample_hands(obs, random.Random(draw), 4):
        assert tuple(hands[obs.seat]) == obs.hand
        assert [int(h.sum()) for h in hands] == list(obs.cards_left)
        assert np.all(hands >= known)
        assert np.array_equal(hands.sum(axis=0) + np.asarray(obs.played).sum(axis=0), DECK)
        other = rebuild(obs, game, hands)
        assert other.observation(obs.seat) == obs
        assert other.legal_features() == state.legal_features()


def _rejection_deals(obs, rng: random.Random, n: int) -> np.ndarray:
    """The oracle: current hands of ``n`` deals drawn from the deal itself conditioned on what the
    seat has seen, by rejection. The two other seats' dealt cards (what they hold now and what they
    played, the landlord's kitty left out) are shuffled as single cards and dealt again by the dealt
    sizes; a deal in which a seat could not have made its plays is rejected."""
    seat = obs.seat
    others = [(seat + 1) % 3, (seat + 2) % 3]
    played = np.asarray(obs.played, dtype=np.int64)
    kitty = np.asarray(obs.kitty, dtype=np.int64)
    extra = [kitty if p == obs.landlord else 0 * kitty for p in others]
    pool = DECK - np.asarray(obs.hand) - played.sum(axis=0) + played[others].sum(axis=0) - sum(extra)
    cards = np.repeat(np.arange(15), pool).tolist()
    size = int(obs.cards_left[others[0]] + played[others[0]].sum() - extra[0].sum())
    out = []
    while len(out) < n:
        rng.shuffle(cards)
        now = [np.bincount(part, minlength=15) + extra[i] - played[others[i]]
               for i, part in enumerate((cards[:size], cards[size:]))]
        if min(h.min() for h in now) >= 0:
            h = np.zeros((3, 15), dtype=np.int64)
            h[seat], h[others[0]], h[others[1]] = obs.hand, now[0], now[1]
            out.append(h)
    return np.array(out)


# searching: the landlord, the landlord, a peasant
@pytest.mark.parametrize(("seed", "steps"), [(1, 6), (3, 12), (4, 5)])
def test_the_weighted_samples_are_the_deal_conditioned_on_the_facts(seed: int, steps: int) -> None:
    """The weighted share of each count of each rank in the next seat's hand matches the rejection
    oracle's, where the unweighted shuffle's does not (a seat that played part of a rank looks
    likelier to hold the rest than it is)."""
    obs = (s := _play_to(GAMES[0], seed, steps)).observation(s.current_player)
    oracle = _rejection_deals(obs, random.Random(1), 3000)
    hands = sample_hands(obs, random.Random(2), 3000)
    w = deal_weights(obs, hands)
    assert w.sum() == pytest.approx(1.0) and 1 / np.sum(w ** 2) > 1000  # most samples still count
    nxt = (obs.seat + 1) % 3

    def shares(h: np.ndarray, weights: np.ndarray) -> np.ndarray:
        return np.array([[weights @ (h[:, nxt, r] == k) for k in range(5)] for r in range(15)])

    truth = shares(oracle, np.full(len(oracle), 1 / len(oracle)))
    assert np.abs(shares(hands, w) - truth).max() < 0.06
    unweighted = np.abs(shares(hands, np.full(len(hands), 1 / len(hands))) - truth).max()
    assert unweighted > 0.1  # what the weights mend


def test_the_samples_follow_the_seed_and_vary() -> None:
    state = _play_position(GAMES[0], 3)
    obs = state.observation(state.current_player)
    a = sample_hands(obs, random.Random(7), 16)
    assert np.array_equal(a, sample_hands(obs, random.Random(7), 16))
    assert len({h.tobytes() for h in a}) > 8  # the hidden cards are really dealt anew


SPECS = ["search:S=6,K=4", "search:S=4,K=3,rollout=greedy,own=heuristic", "search:S=4,K=5,value=win"]


def _redealt_position() -> DdzState:
    """A play position with a choice in a game of the auction preset that was redealt (every seat
    passed on the first deal): random players."""
    for seed in range(200):
        for steps in range(12, 40, 4):
            s = _play_to(GAMES[1], seed, steps, policy="random")
            if len(s.deals) > 1 and s.observation(s.current_player).phase == "play" and len(s.legal_moves()) > 1:
                return s
    raise AssertionError("no redealt game found")


def assert_choice_ignores_hidden_cards(agent, positions: int = 8) -> None:
    """The issue's fair-play test: same observation, same seed -> same choice, whatever the
    other seats hold, over positions of both presets (one of a redealt game), each with three
    exchanges."""
    changed = checked = 0
    states = [_play_position(game, 100 * gi + seed) for gi, game in enumerate(GAMES) for seed in range(positions)]
    for seed, state in enumerate([*states, _redealt_position()]):
        d = Decision.from_state(state)
        ref = agent.act(d, random.Random(seed))
        for k in range(3):
            other = _exchanged(state, random.Random(1000 * seed + k))
            assert other.observation(other.current_player) == d.observation
            changed += not np.array_equal(other.hands, state.hands)
            assert agent.act(Decision.from_state(other), random.Random(seed)) == ref
            checked += 1
    assert changed > checked // 2  # the hidden cards really moved in most positions


@pytest.mark.parametrize("spec", SPECS)
def test_choice_does_not_change_when_hidden_cards_are_exchanged(spec: str) -> None:
    assert_choice_ignores_hidden_cards(make_agent(spec, "doudizhu"))


def test_the_exchange_test_catches_an_agent_that_peeks() -> None:
    """Control: the same search scored on the true hands (a cheat) changes its choice under
    some of these exchanges, so the test above would catch an agent that peeks."""
    agent = DdzSearchAgent(rule_agent, samples=1, candidates=8)

    def cheat(state: DdzState) -> int:
        d = Decision.from_state(state)
        cand = agent.candidates_of(d, random.Random(0))
        returns = agent.returns(d, cand, state.hands[None].astype(np.int64), [0])
        return int(cand[int(np.argmax(returns[:, 0]))])

    positions = [s for seed in range(6) for steps in (10, 20, 30)
                 if len((s := _play_to(GAMES[0], seed, steps)).legal_moves()) > 1]
    moved = sum(any(cheat(_exchanged(s, random.Random(k))) != cheat(s) for k in range(3)) for s in positions)
    assert moved > 0


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.rules.name)
def test_same_seed_same_moves_and_only_legal_indices(game: DdzGame) -> None:
    """Whole games with a search in one seat (bids too, under the auction preset)."""
    for seed in range(2):
        runs = []
        for _ in range(2):
            agents = [make_agent("search:S=3,K=3", "doudizhu"), make_agent("heuristic", "doudizhu"),
                      make_agent("greedy", "doudizhu")]
            rngs = [random.Random(seed * 10 + p) for p in range(3)]
            s = game.new_game(seed=seed)
            while not s.is_terminal():
                d = Decision.from_state(s)
                k = agents[s.current_player].act(d, rngs[s.current_player])
                assert isinstance(k, int) and 0 <= k < len(d.moves)
                s.apply(d.moves[k])
            runs.append(s.moves)
        assert runs[0] == runs[1]


@pytest.mark.parametrize("value", ["score", "win"])
def test_the_search_plays_the_candidate_its_value_ranks_first(value: str) -> None:
    """``value=score`` plays the highest weighted mean return, ``value=win`` the most wins."""
    agent = DdzSearchAgent(rule_agent, samples=8, candidates=40, value=value)
    for seed in range(6):
        d = Decision.from_state(_play_position(GAMES[0], seed))
        k = agent.act(d, random.Random(seed))
        info = agent.last_search
        assert info is not None and info["samples"] == 8 and info["value"] == value
        key = info["returns"] if value == "score" else info["wins"]
        assert k == int(info["candidates"][int(np.argmax(key))])
        assert len(info["candidates"]) == min(40, len(d.moves))


def test_every_candidate_is_played_out_on_the_same_deals_and_streams() -> None:
    """A candidate's rollouts do not depend on the other candidates (the same deals and random
    streams for each: common random numbers), and a move that goes out wins for the seat's side,
    landlord or peasant (its return is positive on every deal)."""
    agent = DdzSearchAgent(rule_agent, samples=6, candidates=40, rollout="random", own="random")
    roles = set()
    for seed in range(40):
        state = _play_to(GAMES[0], seed, 60)  # a move before the end: someone can go out
        d = Decision.from_state(state)
        if len(d.moves) < 2:
            continue
        cand = agent.candidates_of(d, random.Random(seed))
        hands = sample_hands(d.observation, random.Random(seed), 6)
        seeds = list(range(6))
        both = agent.returns(d, cand, hands, seeds)
        for j in (0, len(cand) - 1):
            assert np.array_equal(agent.returns(d, cand[j:j + 1], hands, seeds)[0], both[j])
        for j, m in enumerate(cand):
            if d.game.move_size(d.moves[m]) == state.left[d.seat]:
                assert (both[j] > 0).all()
                roles.add(state.roles()[d.seat])
    assert roles == {"landlord", "peasant_down", "peasant_up"}


def test_bad_specs_are_refused() -> None:
    for spec, msg in [("search:S=0", "S >= 1"), ("search:K=x", "integer"), ("search:rollout=base", "checkpoint"),
                      ("search:own=charlesworth", "own policy"), ("search:value=points", "value"),
                      ("search:T=3", "search takes")]:
        with pytest.raises(ValueError, match=msg):
            make_agent(spec, "doudizhu")
    with pytest.raises(ValueError, match="make_agent"):
        make_agent("search:checkpoint:x.pt,S=4", "doudizhu")


@pytest.fixture(scope="module")
def base_policy(tmp_path_factory) -> str:
    """A small trained Dou Dizhu policy (one epoch) for the search to rank moves by and play."""
    from climbrl.config import train_config
    from climbrl.learn.train import train

    out = tmp_path_factory.mktemp("ddzbase")
    train(train_config("ppo", game="doudizhu", rules="douzero", epochs=1, games_per_epoch=4, hidden=32,
                       eval_every=0, keep_policy_every=0, seed=3), out, progress=False)
    return str(out / "policy.pt")


def test_a_trained_base_policy_ranks_the_candidates_and_plays_the_rollouts(base_policy) -> None:
    agent = make_any_agent(f"search:checkpoint:{base_policy},rollouts=4,K=3", "doudizhu:douzero")
    policy = make_any_agent(f"checkpoint:{base_policy}", "doudizhu:douzero")
    assert (agent.samples, agent.candidates, agent.rollout, agent.own) == (4, 3, "base", "base")
    assert agent.name == f"search:checkpoint:{base_policy},S=4,K=3,rollout=base"
    seen = 0
    for seed in range(8):
        d = Decision.from_state(_play_position(GAMES[0], seed))
        scores = policy.move_scores(d)
        cand = agent.candidates_of(d, random.Random(0))
        top = list(np.argsort(-scores, kind="stable")[:3])
        if d.moves[0] == 0 and 0 not in top and len(top) > 1:
            top[-1] = 0  # a legal pass is always scored
        assert list(cand) == top
        seen += len(d.moves) > 3
        ref = agent.act(d, random.Random(seed))
        other = _exchanged(_play_position(GAMES[0], seed), random.Random(seed))
        assert agent.act(Decision.from_state(other), random.Random(seed)) == ref
    assert seen
