"""``doudizhu+history``: Dou Dizhu's encoder plus the last 15 plays of the game, DouZero's history
input (``encoder=doudizhu+history`` in the config).

DouZero (Zha et al., 2021) feeds the most recent 15 moves of the play, as 5 steps of 3 moves
(162 = 3 x 54 card floats a step, oldest first, zero-padded before the game's start), to an
LSTM whose last output joins the state features. This encoder appends exactly that block to
:mod:`climbrl.encoders.doudizhu`'s state vector (``STATE_DIM`` = 542 + 810 = 1352):

=========  ==================================================================================
542-1351   the last 15 plays of the history, oldest first, 54 card floats each (zeros for a
           pass and before the first play); in 5 steps of 3 plays (:attr:`sequence`)
=========  ==================================================================================

The move vector is the base encoder's (82). The block is the public record of the play (every
seat sees every play), so it is the same for any deal of the hidden cards.

Its :attr:`~DdzHistoryEncoder.sequence` tells the network where the block lies: with
``lstm`` > 0 in the training config (:class:`climbrl.learn.network.ActionInNet`) an LSTM reads
the 5 steps and its last output replaces the block in the first layer's input, as DouZero's
network does; with ``lstm`` = 0 the MLP reads the 810 columns as they are, which separates what
the history adds from what the LSTM adds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from climbrl.agents.base import Decision
from climbrl.encoders.doudizhu import CARD_DIM, M_CARDS, MOVE_DIM, DdzEncoder, encode_decisions, move_matrix
from climbrl.encoders.doudizhu import STATE_DIM as BASE_STATE_DIM

HISTORY_PLAYS = 15
"""DouZero's: the most recent 15 moves."""
PLAYS_PER_STEP = 3
"""One step of the LSTM is a round of the three seats' plays (DouZero's 5 x 162)."""
STEPS = HISTORY_PLAYS // PLAYS_PER_STEP
STEP_WIDTH = PLAYS_PER_STEP * CARD_DIM
S_HISTORY = BASE_STATE_DIM
STATE_DIM = BASE_STATE_DIM + HISTORY_PLAYS * CARD_DIM  # 1352


def encode_history(decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The base encoder's batch with the history block appended to every state row."""
    base, moves, offsets = encode_decisions(decisions)
    b = len(decisions)
    states = np.zeros((b, STATE_DIM), dtype=np.float32)
    states[:, :BASE_STATE_DIM] = base
    if b == 0:
        return states, moves, offsets
    mm, _, _ = move_matrix(decisions[0].game.table)
    ids = np.zeros((b, HISTORY_PLAYS), dtype=np.int64)  # id 0 (pass) has no cards: the padding
    for i, d in enumerate(decisions):
        recent = [a for _, a in d.observation.history[-HISTORY_PLAYS:]]
        if recent:
            ids[i, HISTORY_PLAYS - len(recent):] = recent
    states[:, S_HISTORY:] = mm[ids, M_CARDS:M_CARDS + CARD_DIM].reshape(b, HISTORY_PLAYS * CARD_DIM)
    return states, moves, offsets


class DdzHistoryEncoder(DdzEncoder):
    """``doudizhu+history`` (version 1): :class:`DdzEncoder`'s vectors plus the last 15 plays;
    the same rewards."""

    name = "doudizhu+history"
    version = 1
    state_dim = STATE_DIM
    move_dim = MOVE_DIM
    sequence = (S_HISTORY, STEPS, STEP_WIDTH)

    def encode(self, decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return encode_history(decisions)
