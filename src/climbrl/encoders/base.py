"""The encoder protocol (encoders by game: :mod:`climbrl.encoders.registry`).

An encoder turns a batch of :class:`~climbrl.agents.base.Decision` into the arrays every
learner reads: one state vector per decision (``state_dim`` floats) and one vector per legal
move (``move_dim`` floats), the moves of decision ``b`` being rows ``offsets[b]:offsets[b+1]``
in the decision's move order. It also holds the game's optional reward terms (per-decision
shaping, the card-count score), since they read the game's observations. Learners, replay
buffers, runners and checkpoints know an encoder only through this protocol and its name: a
checkpoint records ``game`` and ``encoder`` (``name``, ``version``) and loading it for another
game or another encoder version is an :class:`EncoderError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np


class EncoderError(ValueError):
    """An encoder that does not exist or does not fit a game or checkpoint."""


class Encoder(Protocol):
    game: str
    """The game it encodes (``big2``, ``doudizhu``)."""
    name: str
    version: int
    """Bumped whenever a vector's meaning changes: a checkpoint of another version cannot load."""
    state_dim: int
    move_dim: int

    def encode(self, decisions: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(states [B, state_dim], moves [R, move_dim], offsets [B + 1]), float32 / int64."""
        ...

    def shaping(self, decision: Any) -> float:
        """The per-decision shaping reward (``reward_shaping``) of ``decision``."""
        ...

    def card_score(self, state: Any, seat: int) -> float:
        """The card-count final reward (``card_score_reward``) of ``seat`` in a finished game."""
        ...

    def describe(self) -> dict[str, Any]:
        """``{"game", "name", "version", "state_dim", "move_dim"}`` (what a checkpoint records)."""
        ...


def describe(enc: Encoder) -> dict[str, Any]:
    return {"game": enc.game, "name": enc.name, "version": enc.version, "state_dim": enc.state_dim,
            "move_dim": enc.move_dim}


class RecordedEncoder:
    """What every encoder shares: :meth:`describe`, the record a checkpoint keeps of it."""

    game: str
    name: str
    version: int
    state_dim: int
    move_dim: int

    def describe(self) -> dict[str, Any]:
        return describe(self)


def check_fits(recorded: dict[str, Any] | None, enc: Encoder, where: str) -> None:
    """Raise :class:`EncoderError` when a checkpoint's recorded encoder is not ``enc``."""
    rec = recorded or LEGACY
    mine = describe(enc)
    diff = [f"{k} {rec.get(k)!r} there, {mine[k]!r} here" for k in ("game", "name", "version", "state_dim", "move_dim")
            if rec.get(k) != mine[k]]
    if diff:
        raise EncoderError(f"{where} was trained for another game or encoder: " + "; ".join(diff))


LEGACY = {"game": "big2", "name": "big2", "version": 1, "state_dim": 558, "move_dim": 72}
"""What a checkpoint written before encoders were recorded was trained with (Big 2's only one)."""
