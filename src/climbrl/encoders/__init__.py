"""Per-game encoders: what a learner sees of a decision (state and move feature vectors)."""

from climbrl.encoders.base import Encoder, EncoderError
from climbrl.encoders.registry import make_encoder

__all__ = ["Encoder", "EncoderError", "make_encoder"]
