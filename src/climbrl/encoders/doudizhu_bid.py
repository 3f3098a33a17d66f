"""What the separate bid network of :mod:`climbrl.learn.bidding` reads of an auction decision.

``BID_DIM`` = 77 floats, slices of :mod:`climbrl.encoders.doudizhu`'s state vector plus one:

=========  ==================================================================================
0-53       own hand (cards)
54         stake the bids so far would set / the rules' highest stake
55-75      last auction action per relative seat, 7 each (none yet, pass, bid 1-3, call, rob)
76         plays the hand needs / 20 (:func:`climbrl.agents.ddz_hand.hand_plays`)
=========  ==================================================================================

The output it scores is one value per auction id 0-5 (pass, bid 1-3, call, rob);
:func:`legal_mask` marks the decision's legal ones. :class:`DdzBidEncoder` bundles both for
the learners (:func:`climbrl.encoders.registry.make_bid_encoder`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from climbrl.agents.base import Decision
from climbrl.agents.ddz_hand import hand_plays
from climbrl.encoders.doudizhu import N_AUCTION, S_AUCTION, S_HAND, S_STAKE, encode_decisions

BID_COLUMNS = np.r_[S_HAND:S_HAND + 54, S_STAKE, S_AUCTION:S_AUCTION + 21]
BID_DIM = len(BID_COLUMNS) + 1  # 77


def bid_features(decisions: Sequence[Decision]) -> np.ndarray:
    """``[B, BID_DIM]`` float32 of a batch of auction decisions."""
    out = np.zeros((len(decisions), BID_DIM), dtype=np.float32)
    if not decisions:
        return out
    states = encode_decisions(decisions)[0]
    out[:, :-1] = states[:, BID_COLUMNS]
    out[:, -1] = [hand_plays(d.observation.hand)[0] / 20.0 for d in decisions]
    return out


def legal_mask(decisions: Sequence[Decision]) -> np.ndarray:
    """``[B, 6]`` bool: the legal auction ids of each decision."""
    mask = np.zeros((len(decisions), N_AUCTION), dtype=bool)
    for b, d in enumerate(decisions):
        mask[b, d.moves] = True
    return mask


class DdzBidEncoder:
    """Dou Dizhu's auction decisions for a bid model: ``dim`` features, ``n_actions`` auction ids."""

    game = "doudizhu"
    dim = BID_DIM
    n_actions = N_AUCTION

    def features(self, decisions: Sequence[Decision]) -> np.ndarray:
        return bid_features(decisions)

    def legal_mask(self, decisions: Sequence[Decision]) -> np.ndarray:
        return legal_mask(decisions)
