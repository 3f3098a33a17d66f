"""Games by name: ``make_game("big2:paper")``, ``make_game("doudizhu:openspiel")``.

A name is ``GAME`` or ``GAME:PRESET`` (the game's default preset when left out).
"""

from __future__ import annotations

from typing import Any

from climbrl.games.base import GameError

DEFAULT_PRESETS = {"big2": "paper", "doudizhu": "standard"}


def game_presets(game: str) -> tuple[str, ...]:
    """The rules presets of ``game`` (empty for an unknown game)."""
    if game == "big2":
        from climbrl.games.big2.rules import PRESETS

        return tuple(PRESETS)
    if game == "doudizhu":
        from climbrl.games.doudizhu.rules import PRESETS as DDZ_PRESETS

        return tuple(DDZ_PRESETS)
    return ()


def num_players(game: str) -> int:
    """The number of seats of ``game`` (a name, with or without ``:preset``)."""
    g = game.partition(":")[0]
    if g == "big2":
        from climbrl.games.big2.rules import NUM_PLAYERS

        return NUM_PLAYERS
    if g == "doudizhu":
        from climbrl.games.doudizhu.rules import NUM_PLAYERS as DDZ_PLAYERS

        return DDZ_PLAYERS
    raise GameError(f"unknown game {game!r} (games: {', '.join(DEFAULT_PRESETS)})")


def make_game(name: str, **overrides: Any) -> Any:
    """The game ``name`` under its preset, with rule ``overrides``."""
    game, _, preset = name.partition(":")
    preset = preset or DEFAULT_PRESETS.get(game, "")
    if game == "big2":
        from climbrl.games.big2 import Big2Game

        return Big2Game(preset, **overrides)
    if game == "doudizhu":
        from climbrl.games.doudizhu.state import DdzGame

        return DdzGame(preset, **overrides)
    raise GameError(f"unknown game {game!r} (games: {', '.join(DEFAULT_PRESETS)})")
