"""The protocol every game implements (Big 2 and Dou Dizhu).

A game is a small set of pure operations over a cloneable state. Moves are plain ``int``
values whose meaning belongs to the game (Big 2: the 52-bit mask of the cards played, 0 for a
pass; Dou Dizhu: an action id of its fixed table); ``format_move``/``parse_move`` turn them into
text and ``action_id``/``move_of`` map them to a dense id range ``0..num_distinct_actions - 1``
(identity in Dou Dizhu). Nothing above ``games/`` needs to know more than this protocol.

What :class:`Game` declares follows OpenSpiel's ``GameType``/``GameInfo``: the number of
players, the roles a seat can hold and the teams they form, the phases of a game (bidding,
play), whether the returns of a finished game sum to zero, the number of distinct actions and
an upper bound on the legal moves of one decision. A finished state's :meth:`GameState.result`
names the winning seats (a team in a team game) and every seat's role.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable


class GameError(ValueError):
    """Base class of game errors."""


class IllegalMoveError(GameError):
    """A move that is not legal in the current state (the state is left untouched)."""


class GameOverError(IllegalMoveError):
    """An operation that needs a running game was called on a finished one."""


class GameResult(NamedTuple):
    """How a finished game ended.

    ``winners``: the seats of the winning team (Big 2: the one seat that went out first; Dou
    Dizhu: the landlord, or both peasants); empty when nobody won (a Dou Dizhu deal that every
    seat passed, under rules that end it with zero returns). ``roles``: each seat's role, one of
    the game's :attr:`Game.roles`. ``returns``: each seat's return, as :meth:`GameState.returns`.
    """

    winners: tuple[int, ...]
    roles: tuple[str, ...]
    returns: tuple[float, ...]


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

    def legal_features(self) -> tuple[list[int], list[int], list[int]]:
        """(moves, types, powers): the legal moves, as :meth:`legal_moves`, with each one's
        combination type and its strength within that type (the features agents may use)."""
        ...

    def is_terminal(self) -> bool: ...

    def returns(self) -> list[float]:
        """Each seat's final reward (zeros before the end)."""
        ...

    def result(self) -> GameResult:
        """Winners, roles and returns of the finished game (:class:`GameError` before the end)."""
        ...

    def cards_left(self) -> list[int]:
        """How many cards each seat holds (public in both games)."""
        ...

    @property
    def moves(self) -> list[int]:
        """Every move made so far, in order (the public history; bids included)."""
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
    roles: tuple[str, ...]
    """Every role a seat can hold (Big 2: ``("player",)``; Dou Dizhu: landlord and the two
    peasants, named by their position after the landlord)."""
    teams: tuple[tuple[str, ...], ...]
    """The roles grouped into teams (a free-for-all game: one team per role)."""
    phases: tuple[str, ...]
    """The phases of a game in order (``("play",)``, ``("bid", "play")``)."""

    @property
    def zero_sum(self) -> bool:
        """Whether the returns of every finished game sum to zero."""
        ...

    @property
    def num_distinct_actions(self) -> int:
        """The size of the dense action-id range (every move any state can offer)."""
        ...

    @property
    def max_legal_moves(self) -> int:
        """An upper bound on the number of legal moves of one decision."""
        ...

    def action_id(self, move: int) -> int:
        """The dense id of ``move`` (:class:`GameError` for a move that is no action)."""
        ...

    def move_of(self, action_id: int) -> int:
        """The move with dense id ``action_id`` (the inverse of :meth:`action_id`)."""
        ...

    def move_size(self, move: int) -> int:
        """The number of cards ``move`` plays (0 for a pass or an auction action)."""
        ...

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
