"""Baselines and rule agents: legal moves always, scripted choices, determinism."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from climbrl.agents import Decision
from climbrl.agents.hand_structure import hand_structure, rank_action
from climbrl.cards import format_cards, parse_mask
from climbrl.games.big2 import Big2Game
from climbrl.games.big2.combos import classify, legal_plays
from climbrl.learn.specs import make_agent

BASELINES = ["random", "greedy", "heuristic", "aggressive", "conservative"]
GAMES = [Big2Game("paper"), Big2Game("standard"), Big2Game("charlesworth"),
         Big2Game("paper", pass_locks_out=True, four_card_hands=True)]


@settings(max_examples=25, deadline=None)
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 2**31),
       seating=st.lists(st.sampled_from(BASELINES), min_size=4, max_size=4))
def test_baselines_only_play_legal_moves(game, seed, seating) -> None:
    agents = [make_agent(n) for n in seating]
    rngs = [random.Random(seed + k) for k in range(4)]
    s = game.new_game(seed=seed)
    while not s.is_terminal():
        d = Decision.from_state(s)
        k = agents[s.current_player].act(d, rngs[s.current_player])
        assert isinstance(k, int) and 0 <= k < len(d.moves)
        s.apply(d.moves[k])  # apply() itself rejects anything illegal


def _decision(hand: str, prev: str | None = None, rules: str = "paper", others: int = 13) -> Decision:
    """A decision for a scripted hand facing ``prev`` (or leading)."""
    game = Big2Game(rules)
    state = game.new_game(seed=0)
    seat = state.current_player
    state.hands[seat] = parse_mask(hand)
    if prev:
        state.last_mask = parse_mask(prev)
        state.last_type, state.last_cls, state.last_power = classify(state.last_mask, game.rules)
        state.last_player = (seat + 3) % 4
    state._legal = None
    return Decision.from_state(state)


def pick(agent: str, d: Decision, seed: int = 0) -> str:
    return format_cards(d.moves[make_agent(agent).act(d, random.Random(seed))]) or "pass"


def test_greedy_sheds_most_cards_weakest_first() -> None:
    assert pick("greedy", _decision("3D 3C 5H 6S 7D 8C 9H KS")) == "5H 6S 7D 8C 9H"
    assert pick("greedy", _decision("3D 3C 5H KS", prev="4D")) == "5H"
    assert pick("greedy", _decision("3D 4C", prev="2S")) == "pass"  # only when nothing else


def test_random_is_uniform_over_legal_moves() -> None:
    d = _decision("3D 5C 7H", prev="4D")
    counts = {m: 0 for m in d.moves}
    agent, rng = make_agent("random"), random.Random(1)
    for _ in range(3000):
        counts[d.moves[agent.act(d, rng)]] += 1
    assert len(counts) == 3 and all(900 < c < 1100 for c in counts.values()), counts


def test_hand_structure_counts() -> None:
    t = Big2Game("charlesworth").tables
    # pairs: 5s and 9s; five-card structures: the 9-K straight window, full house (999+55)
    pairs, fives, dead = hand_structure(parse_mask("3D 5D 5C 9D 9C 9H 10S JD QC KH"), t)
    assert (pairs, fives, dead) == (2, 2, 1)  # 3D is the only dead card
    _, fives, _ = hand_structure(parse_mask("3H 5H 7H 9H JH 4C"), t)
    assert fives == 1  # a flush of hearts


def test_heuristic_keeps_pairs_and_plays_dead_cards() -> None:
    # facing a 4: the dead 9 rather than breaking the pair of 5s or the triple of kings
    assert pick("heuristic", _decision("5D 5C 9S KD KC KH 3D 3C", prev="4D")) == "9S"


def test_heuristic_candidates_are_the_weaker_half() -> None:
    d = _decision("5C 7D 9S JD KC 2S", prev="4D")
    scores = rank_action(d.hand, np.array(d.moves), np.array(d.types), np.array(d.powers),
                         d.game.tables)
    order = sorted(range(len(d.moves)), key=lambda i: (scores[i], i))
    k = max(len(d.moves) // 2, 2)
    chosen = make_agent("heuristic").act(d, random.Random(0))
    assert chosen in order[:k]


def test_heuristic_takes_a_winning_move() -> None:
    assert pick("heuristic", _decision("2S", prev="AS")) == "2S"
    assert pick("heuristic", _decision("8D 8C", prev="5D 5S")) == "8D 8C"


def test_heuristic_leads_a_five_card_hand_early() -> None:
    got = pick("heuristic", _decision("3D 4C 5H 6S 7D 9C 9H JS QD KC AH 2D 2C"))
    assert got == "3D 4C 5H 6S 7D"


def test_aggressive_and_conservative() -> None:
    d = _decision("5D 9S KD AC 2S 3H 6H 7C 8D 10C JH", prev="4D")
    assert pick("aggressive", d) == "2S"
    # its weakest sensible play (5D to JH are kept for the straights 5-9 and 7-J, so KD), except one
    # time in four (the turn's first draw below 0.25) it waits
    waits = [random.Random(seed).random() < 0.25 for seed in range(40)]
    assert [pick("conservative", d, seed=seed) for seed in range(40)] == ["pass" if w else "KD" for w in waits]
    assert 0 < sum(waits) < 40
    # an ace or a two is all it could play: the conservative agent waits (early game)
    d = _decision("3D 3C 7H 7S 9D 9C JH JS KD KC AS 2D", prev="KS")
    assert pick("conservative", d) == "pass"
    assert pick("aggressive", d) == "2D"


def test_agents_are_deterministic_given_the_seed() -> None:
    game = Big2Game("paper")

    def play(name: str, seed: int) -> str:
        s = game.new_game(seed=seed)
        agent, rng = make_agent(name), random.Random(seed)
        while not s.is_terminal():
            d = Decision.from_state(s)
            s.apply(d.moves[agent.act(d, rng)])
        return s.to_json()

    for name in BASELINES:
        assert play(name, 9) == play(name, 9)


def test_unknown_agent() -> None:
    with pytest.raises(ValueError, match="unknown agent 'best'"):
        make_agent("best")
    with pytest.raises(ValueError, match="sample' or ':greedy"):
        make_agent("charlesworth:soft")


def test_legal_plays_helper_matches_decision() -> None:
    d = _decision("3D 3C 4H", prev="3S")
    assert [m for m, _, _ in legal_plays(d.hand, d.game.rules, to_beat=parse_mask("3S"))] == d.moves
