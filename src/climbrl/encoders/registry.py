"""Encoders by game: ``make_encoder("big2")``, ``make_encoder("doudizhu:rlcard")``, and by name
among a game's encoders: ``make_encoder("doudizhu", "doudizhu+handsplit")``."""

from __future__ import annotations

from climbrl.encoders.base import RENAMED, Encoder, EncoderError

ENCODERS = ("big2", "doudizhu")
"""The games with an encoder (each game's default encoder has the game's name)."""
GAME_ENCODERS = {"big2": ("big2", "big2-charlesworth"),
                 "doudizhu": ("doudizhu", "doudizhu+handsplit", "doudizhu+history", "doudizhu+lookahead")}
"""Every encoder of each game, its default first."""


def encoder_names(game: str) -> tuple[str, ...]:
    """The encoders of ``game`` (a name, with or without ``:preset``; empty for an unknown game)."""
    return GAME_ENCODERS.get(game.partition(":")[0], ())


def make_encoder(game: str, name: str = "") -> Encoder:
    """The encoder ``name`` of ``game`` (a game name, with or without ``:preset``); ``""`` (or
    ``None``) is the game's default."""
    g = game.partition(":")[0]
    if g not in GAME_ENCODERS:
        raise EncoderError(f"no encoder for game {game!r} (games: {', '.join(ENCODERS)})")
    name = RENAMED.get(name, name) or g
    if name not in GAME_ENCODERS[g]:
        raise EncoderError(f"no encoder {name!r} for {g} (encoders: {', '.join(GAME_ENCODERS[g])})")
    if name == "big2":
        from climbrl.encoders.big2 import Big2Encoder

        return Big2Encoder()
    if name == "big2-charlesworth":
        from climbrl.encoders.big2_public import Big2PublicEncoder

        return Big2PublicEncoder()
    if name == "doudizhu+handsplit":
        from climbrl.encoders.doudizhu_handsplit import DdzHandSplitEncoder

        return DdzHandSplitEncoder()
    if name == "doudizhu+history":
        from climbrl.encoders.doudizhu_history import DdzHistoryEncoder

        return DdzHistoryEncoder()
    if name == "doudizhu+lookahead":
        from climbrl.encoders.doudizhu_lookahead import DdzLookaheadEncoder

        return DdzLookaheadEncoder()
    from climbrl.encoders.doudizhu import DdzEncoder

    return DdzEncoder()


def make_bid_encoder(game: str):
    """What a separate bid model reads of ``game``'s auction decisions
    (:class:`climbrl.encoders.doudizhu_bid.DdzBidEncoder`); only Dou Dizhu has an auction."""
    if game.partition(":")[0] != "doudizhu":
        raise EncoderError(f"no auction encoder for game {game!r} (only doudizhu has an auction)")
    from climbrl.encoders.doudizhu_bid import DdzBidEncoder

    return DdzBidEncoder()
