"""``big2_v0``: a PettingZoo AEC environment over the Big 2 engine.

Agents ``player_0`` .. ``player_3`` are the seats. Action ``i`` plays the ``i``-th legal move
in the engine's canonical order (:mod:`climbrl.games.big2.combos`); the action space is
``Discrete(8192)``, a bound no hand can exceed (legal moves are distinct subsets of a 13-card
hand), and ``action_mask`` marks the first ``len(legal moves)`` entries. The acting agent's
``infos`` also hold ``legal_moves`` (card masks, 0 = pass) and ``legal_moves_text``.

Observation (``float32``, all in [0, 1]); seats are relative to the observer: 0 itself,
1 the next to act after it, 2 across, 3 the one before it.

=========  ======================================================
index      meaning
=========  ======================================================
0-51       own hand (card id = rank * 4 + suit, see :mod:`climbrl.cards`)
52-103     the play to beat (all zero when leading)
104-311    cards played so far, 52 per relative seat 0..3
312-315    cards left per relative seat / 13
316-319    relative seat that made the play to beat (one-hot; zero when leading)
320        1 if the observer leads (may play anything, may not pass)
321-323    passes since the play to beat: 0, 1, 2 (one-hot)
324-327    relative seats locked out of the trick (``pass_locks_out`` rules)
=========  ======================================================

Rewards come only at the end: the engine's returns under the chosen rules.
"""

from __future__ import annotations

import numpy as np
from pettingzoo import AECEnv

from climbrl.cards import format_cards
from climbrl.games.aec import CardGameEnv, wrapped
from climbrl.games.big2.combos import MAX_LEGAL_MOVES
from climbrl.games.big2.rules import NUM_PLAYERS, Rules
from climbrl.games.big2.state import Big2Game, Big2State

OBS_SIZE = 328


def _bits(mask: int, out: np.ndarray, offset: int) -> None:
    while mask:
        low = mask & -mask
        out[offset + low.bit_length() - 1] = 1.0
        mask ^= low


def encode_observation(state: Big2State, seat: int) -> np.ndarray:
    """The observation vector of ``seat`` (layout in the module docstring)."""
    obs = state.observation(seat)
    v = np.zeros(OBS_SIZE, dtype=np.float32)
    _bits(obs.hand, v, 0)
    _bits(obs.to_beat, v, 52)
    for rel in range(NUM_PLAYERS):
        s = (seat + rel) % NUM_PLAYERS
        _bits(obs.played[s], v, 104 + 52 * rel)
        v[312 + rel] = obs.cards_left[s] / 13.0
        if obs.locked_out >> s & 1:
            v[324 + rel] = 1.0
    if obs.to_beat_player >= 0:
        v[316 + (obs.to_beat_player - seat) % NUM_PLAYERS] = 1.0
    v[320] = float(obs.leading and obs.current_player == seat)
    if not obs.leading:
        v[321 + min(obs.passes, 2)] = 1.0
    return v


class raw_env(CardGameEnv):  # noqa: N801  (PettingZoo's naming convention)
    metadata = {"render_modes": ["human", "ansi"], "name": "big2_v0", "is_parallelizable": False}
    num_players = NUM_PLAYERS
    obs_size = OBS_SIZE

    def __init__(self, rules: Rules | str = "paper", render_mode: str | None = None) -> None:
        super().__init__(Big2Game(rules), MAX_LEGAL_MOVES, render_mode)
        self.state: Big2State | None = None

    def encode(self, seat: int) -> np.ndarray:
        return encode_observation(self.state, seat)

    def legal_actions(self) -> slice:
        return slice(0, len(self.state.legal_moves()))

    def move_of(self, action: int | None, legal: list[int]) -> int:
        if action is None or not 0 <= int(action) < len(legal):
            raise ValueError(
                f"action {action} is not legal for {self.agent_selection}: "
                f"the legal actions are 0..{len(legal) - 1}"
            )
        return legal[int(action)]

    def render_lines(self) -> list[str]:
        s = self.state
        lines = [f"to beat: {format_cards(s.last_mask) or '-'} (seat {s.last_player})"]
        for i in range(NUM_PLAYERS):
            marker = "*" if i == s.current_player else " "
            lines.append(f"{marker} player_{i}: {format_cards(s.hands[i])}")
        return lines


def env(rules: Rules | str = "paper", render_mode: str | None = None) -> AECEnv:
    """The wrapped environment (PettingZoo's order enforcing wrapper)."""
    return wrapped(raw_env(rules=rules, render_mode=render_mode))
