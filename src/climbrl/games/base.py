"""The protocol every game implements (Big 2 now, Dou Dizhu next).

A game is a small set of pure operations over a cloneable state. Moves are plain ``int``
values whose meaning belongs to the game (Big 2: the 52-bit mask of the cards played, 0 for a
pass); ``format_move``/``parse_move`` turn them into text. Nothing above ``games/`` needs to
know more than this protocol.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable


class GameError(ValueError):
    """Base class of game errors."""


class IllegalMoveError(GameError):
    """A move that is not legal in the current state (the state is left untouched)."""


class GameOverError(IllegalMoveError):
    """An operation that needs a running game was called on a finished one."""


@runtime_checkable
class GameState(Protocol):
    """One position of a game, with its whole history."""

    @property
    def num_players(self) -> int: ...

    @property
    def current_player(self) -> int:
        """The seat to act; -1 when the game is over."""
        ...

    def legal_moves(self) -> Sequence[int]:
        """The legal moves of the seat to act, in the game's canonical order."""
        ...

    def apply(self, move: int) -> None:
        """Play ``move`` for the seat to act; :class:`IllegalMoveError` leaves the state as it was."""
        ...

    def is_terminal(self) -> bool: ...

    def returns(self) -> list[float]:
        """Each seat's final reward (zeros before the end)."""
        ...

    def clone(self) -> GameState: ...

    def observation(self, seat: int) -> Any:
        """What ``seat`` may know: its own cards and the public history, nothing hidden."""
        ...

    def to_json(self) -> str:
        """The whole game (rules, deal, moves) as JSON that :meth:`Game.from_json` replays."""
        ...


@runtime_checkable
class Game(Protocol):
    """A game with fixed rules: deals states and reads them back."""

    name: str
    num_players: int

    def new_game(self, seed: int | None = None) -> GameState:
        """A fresh game dealt deterministically from ``seed``."""
        ...

    def from_json(self, text: str) -> GameState: ...

    def format_move(self, move: int) -> str: ...

    def parse_move(self, text: str) -> int: ...

    @property
    def max_game_length(self) -> int:
        """An upper bound on the number of moves in a game."""
        ...

    @property
    def returns_sum(self) -> float:
        """The sum of the returns of every finished game."""
        ...
