"""An independent, plain-Python build of the public Big 2 agent's 412-dim observation, for tests.

Written from the layout in ``shared/external/charlesworth-big2/README.md`` (and that engine's two
type quirks, which its recorded games show: a plain straight also sets "full house", a straight
flush sets "straight" and "flush"), sharing no code with the compiled encoder
(:mod:`climbrl.agents.external.charlesworth_compiled`) that the agent and the rollouts use, so a
fresh clone without the recorded games still checks that encoder against something else.
"""

from __future__ import annotations

import numpy as np

from climbrl.cards import mask_to_cards
from climbrl.games.big2 import combos

# the play to beat, slots 18..25: single, pair, triple, two pair, four of a kind, straight, flush, full house
TO_BEAT_SLOTS = {
    combos.SINGLE: (0,), combos.PAIR: (1,), combos.TRIPLE: (2,), combos.TWO_PAIR: (3,),
    combos.FOUR_OF_A_KIND: (4,), combos.STRAIGHT: (5, 7), combos.FLUSH: (6,), combos.FULL_HOUSE: (7,),
    combos.STRAIGHT_FLUSH: (5, 6),
}
# an opponent's types played, slots 21..26: pair, triple, four-card hand, straight, flush, full house
PLAYED_SLOTS = {
    combos.PAIR: (0,), combos.TRIPLE: (1,), combos.TWO_PAIR: (2,), combos.FOUR_OF_A_KIND: (2,),
    combos.STRAIGHT: (3, 5), combos.FLUSH: (4,), combos.FULL_HOUSE: (5,), combos.STRAIGHT_FLUSH: (3, 4),
}


def _deciding_card(mask: int, typ: int) -> tuple[int, int]:
    cards = mask_to_cards(mask)
    if typ == combos.FULL_HOUSE:
        ranks = [c >> 2 for c in cards]
        return max(set(ranks), key=ranks.count), -1
    if typ == combos.STRAIGHT:
        return cards[2] >> 2, -1
    return cards[-1] >> 2, cards[-1] & 3


def observation(obs) -> np.ndarray:
    """The 412 entries (0/1) of ``obs`` (a :class:`~climbrl.games.big2.state.Big2Observation`)."""
    v = np.zeros(412, dtype=np.float32)
    hand = mask_to_cards(obs.hand)
    ranks = [c >> 2 for c in hand]
    suits = [c & 3 for c in hand]
    present = {r for r in ranks}
    for k, c in enumerate(hand):
        r, s = c >> 2, c & 3
        run = any(all(x in present for x in range(lo, lo + 5)) for lo in range(max(0, r - 4), min(r, 8) + 1))
        flags = (ranks.count(r) >= 2, ranks.count(r) >= 3, ranks.count(r) == 4, run, suits.count(s) >= 5)
        v[22 * k + r] = v[22 * k + 13 + s] = 1
        for i, f in enumerate(flags):
            v[22 * k + 17 + i] = f
    high = obs.played[obs.seat]
    for j in range(3):
        other = (obs.seat + 1 + j) % 4
        base = 286 + 27 * j
        if obs.cards_left[other]:
            v[base + obs.cards_left[other] - 1] = 1
        high |= obs.played[other]
        for c in mask_to_cards(obs.played[other]):
            if c >= 44:  # the aces and twos
                v[base + 13 + c - 44] = 1
        for typ, slots in PLAYED_SLOTS.items():
            if obs.types_played[other] >> typ & 1:
                for sl in slots:
                    v[base + 21 + sl] = 1
    for c in mask_to_cards(high):
        if c >= 36:  # queens, kings, aces, twos
            v[367 + c - 36] = 1
    if obs.leading:
        v[400] = 1
    else:
        rank, suit = _deciding_card(obs.to_beat, obs.to_beat_type)
        v[383 + rank] = 1
        if suit >= 0:
            v[396 + suit] = 1
        for sl in TO_BEAT_SLOTS[obs.to_beat_type]:
            v[401 + sl] = 1
        v[409 + min(obs.passes, 2)] = 1
    return v
