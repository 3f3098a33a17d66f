"""``doudizhu_v0``: a PettingZoo AEC environment over the Dou Dizhu engine, auction included.

Agents ``player_0`` .. ``player_2`` are the seats. An action IS the engine's fixed action id
(:mod:`climbrl.games.doudizhu.moves`: 0 pass, 1..3 bid, 4 call / 5 rob landlord, then the
plays), the same id for the same move under every rule set, so a policy head can be shared
across rules. The action space is ``Discrete(game.num_actions)``: the short id range
(``ActionTable.n_common`` = 33,501 ids) under rules without ``wing_same_rank``, the full table
(``n_ids`` = 94,381) with it (those extra ids are the planes whose solo wing is the fourth card
of a plane rank, kept at the end of the table for that reason). ``action_mask`` (``int8``)
marks exactly the legal ids of the acting agent (all zero for the others and at the end). The
acting agent's ``infos`` also hold ``legal_moves`` (the ids, ascending) and
``legal_moves_text`` (``pass``, ``bid2``, ``call``, ``333444-57`` ...).

Observation (``float32``, all in [0, 1]), built only from the engine's per-seat
:class:`~climbrl.games.doudizhu.state.DdzObservation` (own hand and public record, never another
seat's cards). Seats are relative to the observer: 0 itself, 1 the next to act, 2 the one
before it. Rank counts (15 ranks ``3..A 2 B R``) are divided by the copies in a deck (4, or 1
for a joker).

=========  ==================================================================================
index      meaning
=========  ==================================================================================
0-14       own hand
15-29      the play to beat (all zero when leading or in the auction)
30-74      cards played so far, 15 per relative seat 0..2
75-77      cards left per relative seat / 20
78-80      landlord, relative seat (one-hot; zero during the auction)
81-95      the kitty (zero until the landlord takes it; then public)
96-98      relative seat that made the play to beat (one-hot; zero when leading)
99         1 if the observer must lead (plays anything, may not pass)
100-102    phase: auction, play, over (one-hot)
103-104    passes since the play to beat: 0, 1 (one-hot; zero when leading)
105-125    each relative seat's last auction action this deal: none, pass, bid 1, bid 2,
           bid 3, call, rob (7 one-hot per seat)
126-129    highest bid so far 0..3 (one-hot; call-score auction)
130-133    robs so far 0..3 (one-hot; rob auction)
134        stake / 8 (0 during the auction)
135        bombs and rockets played / 14
136-138    plays made per relative seat / 20 (spring and anti-spring depend on them)
=========  ==================================================================================

Rewards come only at the end: the engine's per-seat returns under the chosen rules (zero-sum
scores, or RLCard's win/loss payoffs under ``rlcard``; all zero when the game ends with nobody
bidding). A redeal after an all-pass auction continues the same episode.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pettingzoo import AECEnv

from climbrl.games.aec import CardGameEnv, wrapped
from climbrl.games.doudizhu.moves import MAX_COPIES, NUM_RANKS, format_counts
from climbrl.games.doudizhu.rules import NUM_PLAYERS, Rules
from climbrl.games.doudizhu.state import DdzGame, DdzState

OBS_SIZE = 139
_HAND, _TO_BEAT, _PLAYED, _LEFT, _LANDLORD, _KITTY = 0, 15, 30, 75, 78, 81
_TO_BEAT_SEAT, _LEADS, _PHASE, _PASSES, _AUCTION, _HIGHEST, _ROBS = 96, 99, 100, 103, 105, 126, 130
_STAKE, _BOMBS, _PLAYS = 134, 135, 136
_INV_COPIES = 1.0 / np.array(MAX_COPIES, dtype=np.float32)
_PHASES = {"bid": 0, "play": 1, "over": 2}


def encode_observation(state: DdzState, seat: int) -> np.ndarray:
    """The observation vector of ``seat`` (layout in the module docstring)."""
    obs = state.observation(seat)
    counts = state.game.table.counts
    v = np.zeros(OBS_SIZE, dtype=np.float32)
    v[_HAND:_HAND + NUM_RANKS] = np.asarray(obs.hand, dtype=np.float32) * _INV_COPIES
    if obs.to_beat:
        v[_TO_BEAT:_TO_BEAT + NUM_RANKS] = counts[obs.to_beat] * _INV_COPIES
        v[_TO_BEAT_SEAT + (obs.to_beat_player - seat) % NUM_PLAYERS] = 1.0
        v[_PASSES + min(obs.passes, 1)] = 1.0
    v[_KITTY:_KITTY + NUM_RANKS] = np.asarray(obs.kitty, dtype=np.float32) * _INV_COPIES
    last_auction = {}
    for s, action in obs.auction:
        last_auction[s] = action
    for rel in range(NUM_PLAYERS):
        s = (seat + rel) % NUM_PLAYERS
        off = _PLAYED + NUM_RANKS * rel
        v[off:off + NUM_RANKS] = np.asarray(obs.played[s], dtype=np.float32) * _INV_COPIES
        v[_LEFT + rel] = obs.cards_left[s] / 20.0
        v[_AUCTION + 7 * rel + (last_auction[s] + 1 if s in last_auction else 0)] = 1.0
    if obs.landlord >= 0:
        v[_LANDLORD + (obs.landlord - seat) % NUM_PLAYERS] = 1.0
    phase = _PHASES[obs.phase]
    v[_PHASE + phase] = 1.0
    v[_LEADS] = float(phase == 1 and obs.current_player == seat and not obs.to_beat)
    bids = [a for _, a in obs.auction if 1 <= a <= 3]
    v[_HIGHEST + (max(bids) if bids else 0)] = 1.0
    v[_ROBS + min(sum(a == 5 for _, a in obs.auction), 3)] = 1.0
    v[_STAKE] = min(obs.stake / 8.0, 1.0)
    v[_BOMBS] = obs.bombs / 14.0
    plays = [0, 0, 0]
    for s, move in obs.history:
        plays[s] += move != 0
    for rel in range(NUM_PLAYERS):
        v[_PLAYS + rel] = plays[(seat + rel) % NUM_PLAYERS] / 20.0
    return v


class raw_env(CardGameEnv):  # noqa: N801  (PettingZoo's naming convention)
    metadata = {"render_modes": ["human", "ansi"], "name": "doudizhu_v0", "is_parallelizable": False}
    num_players = NUM_PLAYERS
    obs_size = OBS_SIZE

    def __init__(self, rules: Rules | str = "standard", render_mode: str | None = None) -> None:
        game = DdzGame(rules)
        super().__init__(game, game.num_actions, render_mode)
        self.state: DdzState | None = None

    def encode(self, seat: int) -> np.ndarray:
        return encode_observation(self.state, seat)

    def legal_actions(self) -> list[int]:
        return self.state.legal_moves()

    def move_of(self, action: Any, legal: list[int]) -> int:
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or int(action) not in legal:
            raise ValueError(
                f"action {action} is not legal for {self.agent_selection}: the legal action ids are "
                f"{legal[:20]}{' ...' if len(legal) > 20 else ''}"
            )
        return int(action)

    def render_lines(self) -> list[str]:
        s = self.state
        who = f"seat {s.prev_player}" if s.prev else "leading"
        lines = [f"phase {('bid', 'play', 'over')[s.phase]}, landlord {s.landlord}, stake {s.stake}, "
                 f"to beat: {self.game.format_move(s.prev) if s.prev else '-'} ({who})"]
        for i in range(NUM_PLAYERS):
            marker = "*" if i == s.current_player else " "
            lines.append(f"{marker} player_{i}: {format_counts(s.hands[i])}")
        return lines


def env(rules: Rules | str = "standard", render_mode: str | None = None) -> AECEnv:
    """The wrapped environment (PettingZoo's order enforcing wrapper)."""
    return wrapped(raw_env(rules=rules, render_mode=render_mode))
