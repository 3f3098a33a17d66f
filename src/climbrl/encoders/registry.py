"""Encoders by game: ``make_encoder("big2")``, ``make_encoder("doudizhu:rlcard")``."""

from __future__ import annotations

from climbrl.encoders.base import Encoder, EncoderError

ENCODERS = ("big2", "doudizhu")


def make_encoder(game: str) -> Encoder:
    """The encoder of ``game`` (a game name, with or without ``:preset``)."""
    name = game.partition(":")[0]
    if name == "big2":
        from climbrl.encoders.big2 import Big2Encoder

        return Big2Encoder()
    if name == "doudizhu":
        from climbrl.encoders.doudizhu import DdzEncoder

        return DdzEncoder()
    raise EncoderError(f"no encoder for game {game!r} (games: {', '.join(ENCODERS)})")
