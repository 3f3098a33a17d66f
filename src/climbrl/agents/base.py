"""The agent interface: an agent sees one seat's :class:`Decision` and returns a move index.

An agent never sees the game state itself, only what its seat may know (the observation) and
the legal moves, so no agent can peek at hidden cards. Every random choice comes from the
``random.Random`` passed in, which the caller seeds per game and seat: the same seeds give the
same moves, however the games are spread over processes.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import NamedTuple

from climbrl.games.big2.state import Big2Game, Big2Observation, Big2State


class Decision(NamedTuple):
    """One seat's turn: its observation, the legal moves (canonical order) and the game."""

    observation: Big2Observation
    moves: list[int]  # card masks, 0 = pass
    types: list[int]
    powers: list[int]
    game: Big2Game

    @property
    def seat(self) -> int:
        return self.observation.seat

    @property
    def hand(self) -> int:
        return self.observation.hand

    @classmethod
    def from_state(cls, state: Big2State) -> Decision:
        masks, types, powers = state._legal_lists()
        return cls(state.observation(state.current_player), masks, types, powers, state.game)


class Agent(ABC):
    """Picks a move. Subclasses implement :meth:`act`; batched agents override :meth:`act_batch`."""

    name: str = "agent"

    @abstractmethod
    def act(self, decision: Decision, rng: random.Random) -> int:
        """The index (into ``decision.moves``) of the move to play."""

    def act_batch(self, decisions: Sequence[Decision], rngs: Sequence[random.Random]) -> list[int]:
        """One index per decision; the default asks :meth:`act` one at a time."""
        return [self.act(d, r) for d, r in zip(decisions, rngs, strict=True)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"
