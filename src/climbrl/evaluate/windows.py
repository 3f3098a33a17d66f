"""The interpretability windows by game: each game's recorder, figures and report tables.

Big 2's window is :mod:`climbrl.evaluate.behaviour` (its JSON names no game, as it always did);
Dou Dizhu's is :mod:`climbrl.evaluate.behaviour_ddz` (its JSON says ``"game": "doudizhu"``). The
pipeline's behaviour stage and the report pick the window here, by the study's game.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class Window(NamedTuple):
    record: Callable[..., dict[str, Any]]
    """``record(agent, opponents, rules=, games=, seed=, workers=, seeds=, game=)``: one agent's summary."""
    plot: Callable[[dict[str, Any], str], list[str]]
    markdown: Callable[[dict[str, Any]], list[str]]
    headline: Callable[[dict[str, Any]], dict[str, float]]
    """The numbers of one agent's summary logged to the tracker."""


def _big2() -> Window:
    from climbrl.evaluate.behaviour import behaviour_markdown, plot_behaviour, record_behaviour

    return Window(record_behaviour, plot_behaviour, behaviour_markdown,
                  lambda s: {"pass_when_can_beat": s["pass_rate_when_can_beat"] or 0.0})


def _doudizhu() -> Window:
    from climbrl.evaluate.behaviour_ddz import behaviour_ddz_markdown, plot_ddz_behaviour, record_ddz_behaviour

    def headline(s: dict[str, Any]) -> dict[str, float]:
        return {"bombs_played_share": s["bombs"]["all"]["played_share"] or 0.0,
                "pass_on_partner": s["cooperation"]["peasant"]["partner_pass_rate"] or 0.0}

    return Window(record_ddz_behaviour, plot_ddz_behaviour, behaviour_ddz_markdown, headline)


WINDOWS: dict[str, Callable[[], Window]] = {"big2": _big2, "doudizhu": _doudizhu}
GAMES = tuple(WINDOWS)
"""The games with a window (the behaviour stage writes a note for the others)."""


def window(game: str) -> Window:
    """The window of ``game`` (a name, ``:preset`` allowed); an unknown game raises naming them."""
    g = game.partition(":")[0]
    if g not in WINDOWS:
        raise ValueError(f"game: no interpretability window for {game!r} (windows: {', '.join(GAMES)})")
    return WINDOWS[g]()


def window_markdown(data: dict[str, Any]) -> list[str]:
    """The report section of a behaviour stage result: the note when the window was not available,
    else the tables of the game the result names (Big 2 when it names none)."""
    if data.get("available") is False:
        return ["## Interpretability window", "", data["note"], ""]
    return window(data.get("game", "big2")).markdown(data)
