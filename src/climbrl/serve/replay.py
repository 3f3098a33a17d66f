"""A finished game step by step, every hand visible: from the engine's JSON record
(:meth:`GameState.to_json`: a game played here and downloaded, or any game the engine wrote).

The record is replayed move by move through the engine, which checks every move, so a tampered
record is refused with the move that breaks it, never shown.
"""

from __future__ import annotations

import json
from typing import Any

from climbrl.games.registry import make_game
from climbrl.serve.limits import MAX_BODY_BYTES, MAX_RECORD_MOVES
from climbrl.serve.presenters import presenter_for


class RecordError(ValueError):
    """A record that cannot be replayed (the message says why)."""


def _parse(record: str | dict[str, Any]) -> dict[str, Any]:
    if isinstance(record, str):
        if len(record) > MAX_BODY_BYTES:
            raise RecordError(f"the record is larger than {MAX_BODY_BYTES} bytes")
        try:
            record = json.loads(record)
        except RecursionError:
            raise RecordError("the record is not JSON this server reads: it is nested too deeply") from None
        except ValueError as e:  # not JSON, or an integer of more than 4300 digits
            raise RecordError(f"the record is not JSON this server reads: {e}"[:300]) from None
    if not isinstance(record, dict) or record.get("game") not in ("big2", "doudizhu"):
        raise RecordError("not a game record: a JSON object with \"game\": \"big2\" or \"doudizhu\"")
    if not isinstance(record.get("moves"), list) or not isinstance(record.get("rules"), dict):
        raise RecordError("a game record has \"rules\" (an object) and \"moves\" (a list)")
    if len(record["moves"]) > MAX_RECORD_MOVES:
        raise RecordError(f"the record holds {len(record['moves'])} moves: the server replays at most "
                          f"{MAX_RECORD_MOVES} (its bound on a record's length)")
    return record


def frames(record: str | dict[str, Any]) -> dict[str, Any]:
    """``{"game", "preset", "frames"}``: frame 0 is the deal; frame ``i`` shows the table after
    move ``i`` (who moved, the move, every seat's hand, the cards left). The engine replays the
    moves, so an illegal or malformed one raises :class:`RecordError` naming it."""
    data = _parse(record)
    i = None
    try:
        game = _game_of(data)
        state = game.from_json({**data, "moves": []})
        auto = len(state.moves)
        p = presenter_for(game)
        out = [_frame(state, p, None, None)]
        for i, text in enumerate(data["moves"][auto:], start=auto):  # noqa: B007 (the error names it)
            seat = state.current_player
            move = _parse_move(game, text)
            state.apply(move)
            out.append(_frame(state, p, seat, move))
    except Exception as e:  # GameError, RulesError, and whatever else a foreign record breaks: its fault
        where = f" (move {i})" if i is not None else ""
        raise RecordError(f"the record cannot be replayed{where}: {type(e).__name__}: {e}"[:500]) from None
    result = None
    if state.is_terminal():
        r = state.result()
        result = {"winners": list(r.winners), "roles": list(r.roles), "returns": list(r.returns)}
    return {"game": game.name, "preset": game.rules.name, "seats": game.num_players, "frames": out,
            "result": result}


def _game_of(data: dict[str, Any]) -> Any:
    if data["game"] == "big2":
        from climbrl.games.big2.rules import Rules
    else:
        from climbrl.games.doudizhu.rules import Rules
    rules = Rules.from_dict(data["rules"])
    return make_game(f"{data['game']}:{rules.name}", **{k: v for k, v in rules.to_dict().items() if k != "name"})


def _parse_move(game: Any, text: Any) -> int:
    if game.name == "big2":
        if not isinstance(text, list) or not all(isinstance(t, str) for t in text):
            raise ValueError(f"a Big 2 move is a list of cards, got {text!r}")
        return game.parse_move(" ".join(text) if text else "pass")
    if not isinstance(text, str):
        raise ValueError(f"a Dou Dizhu move is a string, got {text!r}")
    return game.parse_move(text)


def _frame(state: Any, p: Any, seat: int | None, move: int | None) -> dict[str, Any]:
    """The table after a move: every hand, and what the table shows (the trick so far, the play
    to beat, a Dou Dizhu deal's bids, landlord, stake and kitty)."""
    f = {"seat": seat, "move": p.move_view(move) if move is not None else None,
         "hands": [p.hand_tokens(h) for h in state.hands], "cards_left": state.cards_left(),
         "current_player": state.current_player}
    obs = state.observation(0)
    f["to_beat"] = {"seat": obs.to_beat_player, **p.move_view(obs.to_beat)} if obs.to_beat else None
    if hasattr(state, "landlord"):
        f["landlord"] = state.landlord
        f["kitty"] = p.hand_tokens(state.kitty)
        f["phase"] = obs.phase
        f["stake"], f["bombs"] = obs.stake, obs.bombs
        f["bids"] = [{"seat": s, "label": p.label(a)} for s, a in obs.auction]
        plays = list(obs.history)
        f["trick"] = [{"seat": s, **p.move_view(m)} for s, m in plays[-(obs.passes + 1):]] if obs.to_beat else []
    else:
        f["phase"] = "play"
        f["trick"] = [{"seat": s, **p.move_view(m)} for s, m in obs.trick]
    return f
