"""The encoder protocol (encoders by game: :mod:`climbrl.encoders.registry`).

An encoder turns a batch of :class:`~climbrl.agents.base.Decision` into the arrays every
learner reads: one state vector per decision (``state_dim`` floats) and one vector per legal
move (``move_dim`` floats), the moves of decision ``b`` being rows ``offsets[b]:offsets[b+1]``
in the decision's move order. It also holds the game's optional reward terms (per-decision
shaping, the card-count score, the terminal terms of :class:`RewardTerms`) and the game's roles
(one network per role: :attr:`Encoder.roles`, read from the state vector's
:attr:`Encoder.role_columns`), since they read the game's observations. Learners, replay
buffers, runners and checkpoints know an encoder only through this protocol and its name: a
checkpoint records ``game`` and ``encoder`` (``name``, ``version``) and loading it for another
game or another encoder version is an :class:`EncoderError`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


class EncoderError(ValueError):
    """An encoder that does not exist or does not fit a game or checkpoint."""


@dataclass(frozen=True)
class RewardTerms:
    """The terminal reward terms a game's encoder may add to a seat's final reward (each off by
    default; :meth:`Encoder.final_reward`). Dou Dizhu's meanings: :class:`climbrl.encoders.
    doudizhu.DdzEncoder`; a game whose encoder does not list a term in ``reward_terms`` refuses it."""

    cards_left: float = 0.0
    """Times the seat's own cards left at the end / the game's hand scale, subtracted."""
    bombs_kept: float = 0.0
    """The weight of Dou Dizhu's potential-based shaping on the bombs kept whole (per decision
    and at the end, :class:`climbrl.encoders.doudizhu.DdzEncoder`): it moves no optimal policy."""
    partner_win: bool = True
    """False: a seat whose teammate went out gets no terminal reward for the team's win."""
    guide: bool = False
    """The Dou Dizhu practice guide's reward (its section 2.4 ``reward_step``): the terminal reward
    scaled to 0.1 x the score, and per-decision terms by role (:class:`climbrl.encoders.doudizhu.
    DdzEncoder`)."""
    pass_penalty: float = 0.0
    """Subtracted at a decision where the seat passed although it could beat the table (the
    guide's pitfall 5.1: 0.1)."""
    gamma: float = 1.0
    """The learner's discount: a potential-based term is ``gamma x potential after - potential
    before`` (not a term itself: it switches nothing on)."""
    win: bool = False
    """The win objective (``reward_objective: win``): the rules' return replaced by its sign before
    the terms above; game-free, so not one of an encoder's :data:`TERMS` (it switches none on)."""

    def active(self) -> list[str]:
        """The names of the terms that differ from their defaults (off)."""
        off = RewardTerms()
        return [k for k in TERMS if getattr(self, k) != getattr(off, k)]

    def steps_active(self) -> bool:
        """Whether a term rewards decisions (not only the end)."""
        return self.guide or bool(self.pass_penalty) or bool(self.bombs_kept)


TERMS = ("cards_left", "bombs_kept", "partner_win", "guide", "pass_penalty")


class Encoder(Protocol):
    game: str
    """The game it encodes (``big2``, ``doudizhu``)."""
    name: str
    version: int
    """Bumped whenever a vector's meaning changes: a checkpoint of another version cannot load."""
    state_dim: int
    move_dim: int
    roles: tuple[str, ...]
    """The roles a seat can play (one network each with ``role_networks``); one for a game
    without roles."""
    role_columns: tuple[int, ...]
    """Per role, the state-vector column that is 1 exactly when the acting seat has that role
    (one-hot over these columns); empty for a game without roles."""
    reward_terms: tuple[str, ...]
    """The :class:`RewardTerms` this game defines (the others are refused)."""
    sequence: tuple[int, ...]
    """``(start, steps, width)``: the state columns ``start .. start + steps x width`` hold a
    sequence of ``steps`` rows of ``width`` (oldest first) that a network may read with an LSTM
    (``lstm`` in the training config); empty for an encoder without one."""
    hidden_dim: int
    """The size of :meth:`hidden_targets`' vector (the other seats' hands); 0 for an encoder
    without one (``aux_hidden_coef`` and ``oracle_critic`` then refuse it)."""

    def encode(self, decisions: Sequence[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(states [B, state_dim], moves [R, move_dim], offsets [B + 1]), float32 / int64."""
        ...

    def shaping(self, decision: Any) -> float:
        """The per-decision shaping reward (``reward_shaping``) of ``decision``."""
        ...

    def card_score(self, state: Any, seat: int) -> float:
        """The card-count final reward (``card_score_reward``) of ``seat`` in a finished game."""
        ...

    def role_index(self, states: np.ndarray) -> np.ndarray:
        """The acting seat's role (an index into :attr:`roles`) of each state row, int64 [B]."""
        ...

    def final_reward(self, state: Any, seat: int, base: float, terms: RewardTerms) -> float:
        """``seat``'s terminal reward in the finished game ``state`` from its ``base`` (the
        rules' return or the card-count score) and the active ``terms``."""
        ...

    def hidden_targets(self, final_state: Any, observation: Any) -> tuple[np.ndarray, bool]:
        """The other seats' hands at the decision of ``observation`` ([hidden_dim] float32 in
        [0, 1], the seats in relative order) read from the finished game ``final_state``, and
        whether there is one (``False``: zeros, a decision the learner gets no target for).
        Training only: issue 46's auxiliary head and oracle critic learn from it, nothing that
        acts reads it."""
        ...

    def describe(self) -> dict[str, Any]:
        """``{"game", "name", "version", "state_dim", "move_dim"}`` (what a checkpoint records)."""
        ...


def describe(enc: Encoder) -> dict[str, Any]:
    return {"game": enc.game, "name": enc.name, "version": enc.version, "state_dim": enc.state_dim,
            "move_dim": enc.move_dim}


class RecordedEncoder:
    """What every encoder shares: :meth:`describe`, the record a checkpoint keeps of it, and by
    default one role and no terminal reward terms."""

    game: str
    name: str
    version: int
    state_dim: int
    move_dim: int
    roles: tuple[str, ...] = ("player",)
    role_columns: tuple[int, ...] = ()
    reward_terms: tuple[str, ...] = ()
    sequence: tuple[int, ...] = ()
    hidden_dim: int = 0

    def describe(self) -> dict[str, Any]:
        return describe(self)

    def role_index(self, states: np.ndarray) -> np.ndarray:
        if not self.role_columns:
            return np.zeros(len(states), dtype=np.int64)
        return np.argmax(np.asarray(states)[:, list(self.role_columns)], axis=1).astype(np.int64)

    def final_reward(self, state: Any, seat: int, base: float, terms: RewardTerms) -> float:
        self.check_terms(terms)
        return base

    def check_terms(self, terms: RewardTerms) -> None:
        unknown = [k for k in terms.active() if k not in self.reward_terms]
        if unknown:
            raise EncoderError(f"{self.game} defines no reward term {', '.join(unknown)}")

    def step_reward(self, decision: Any, pick: int, terms: RewardTerms) -> float:
        """The reward terms of one decision (``pick``: the index of the move made); none by default."""
        self.check_terms(terms)
        return 0.0

    def hidden_targets(self, final_state: Any, observation: Any) -> tuple[np.ndarray, bool]:
        raise EncoderError(f"the {self.name} encoder has no hidden-hand targets (hidden_dim 0)")


def check_fits(recorded: dict[str, Any] | None, enc: Encoder, where: str) -> None:
    """Raise :class:`EncoderError` when a checkpoint's recorded encoder is not ``enc``."""
    rec = dict(recorded or LEGACY)
    rec["name"] = RENAMED.get(rec.get("name"), rec.get("name"))
    mine = describe(enc)
    diff = [f"{k} {rec.get(k)!r} there, {mine[k]!r} here" for k in ("game", "name", "version", "state_dim", "move_dim")
            if rec.get(k) != mine[k]]
    if diff:
        raise EncoderError(f"{where} was trained for another game or encoder: " + "; ".join(diff))


RENAMED = {"doudizhu+search": "doudizhu+handsplit"}
"""Old encoder names a checkpoint may record -> today's (the same columns, renamed by issue 26)."""

LEGACY = {"game": "big2", "name": "big2", "version": 1, "state_dim": 558, "move_dim": 72}
"""What a checkpoint written before encoders were recorded was trained with (Big 2's only one)."""
