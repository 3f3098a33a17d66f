"""Games by name: ``make_game("big2:paper")``, ``make_game("doudizhu:openspiel")``.

A name is ``GAME`` or ``GAME:PRESET`` (the game's default preset when left out).
"""

from __future__ import annotations

from typing import Any

from climbrl.games.base import GameError

DEFAULT_PRESETS = {"big2": "paper", "doudizhu": "standard"}


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
