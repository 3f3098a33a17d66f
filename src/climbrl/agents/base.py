"""The agent interface: an agent sees one seat's :class:`Decision` and returns a move index.

An agent never sees the game state itself, only what its seat may know (the observation) and
the legal moves, so no agent can peek at hidden cards. Every random choice comes from the
``random.Random`` passed in, which the caller seeds per game and seat: the same seeds give the
same moves, however the games are spread over processes.

A :class:`Decision` is the same for every game: the observation (the game's own type), the legal
moves with each one's combination type and strength (:meth:`GameState.legal_features`), and the
game, whose protocol (:mod:`climbrl.games.base`) an agent may use to read the moves. An agent
that only plays one game says so in :attr:`Agent.games`; :func:`climbrl.agents.make_agent`
refuses it for another game.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, NamedTuple

from climbrl.games.base import GameState


class Decision(NamedTuple):
    """One seat's turn: its observation, the legal moves (the game's canonical order), each
    move's combination type and strength, and the game."""

    observation: Any  # the game's observation type (it has ``seat`` and ``hand``)
    moves: list[int]  # the game's moves (Big 2: card masks, 0 = pass; Dou Dizhu: action ids)
    types: list[int]
    powers: list[int]
    game: Any  # a climbrl.games.base.Game

    @property
    def seat(self) -> int:
        return self.observation.seat

    @property
    def hand(self) -> int:
        return self.observation.hand

    @classmethod
    def from_state(cls, state: GameState) -> Decision:
        moves, types, powers = state.legal_features()
        return cls(state.observation(state.current_player), moves, types, powers, state.game)


class Agent(ABC):
    """Picks a move. Subclasses implement :meth:`act`; batched agents override :meth:`act_batch`."""

    name: str = "agent"
    games: tuple[str, ...] | None = None
    """The games this agent can play (``None``: every game)."""

    @abstractmethod
    def act(self, decision: Decision, rng: random.Random) -> int:
        """The index (into ``decision.moves``) of the move to play."""

    def act_batch(self, decisions: Sequence[Decision], rngs: Sequence[random.Random]) -> list[int]:
        """One index per decision; the default asks :meth:`act` one at a time."""
        return [self.act(d, r) for d, r in zip(decisions, rngs, strict=True)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
