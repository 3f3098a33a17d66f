"""The practice guide's distilled look-ahead features (its 6.1: "distil the features for inference").

:mod:`climbrl.encoders.doudizhu_lookahead` plays the rule engine's three candidates out on sampled
deals at every decision, which costs far more than the network's own decision. A
:class:`LookaheadDistiller` learns to predict those three win probabilities from what the decision
shows without any play-out: the base state vector (542) and the base move vectors of the three
candidates (82 each, zeros for a candidate that does not exist), which the rule engine names in one
decision of its own. :class:`DistilledLookaheadEncoder` then stands in for the play-outs: it
describes itself as ``doudizhu+lookahead`` (same layout, same version), so a policy trained with the
play-outs plays with the predictions instead (``agent.encoder = DistilledLookaheadEncoder(...)``).

The distiller is a 2-layer MLP (ReLU, a sigmoid output) fitted by mean-squared error with Adam,
its weights and minibatch order drawn from its own seeded generator; nothing process-wide changes.
``benchmarks/lookahead_features.py`` fits it on heuristic self-play positions and measures what the
policies win with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from climbrl.agents.base import Decision
from climbrl.encoders import make_encoder
from climbrl.learn.network import linear

LOOKAHEAD = "doudizhu+lookahead"


def lookahead_encoder() -> Any:
    """The play-out encoder (through the registry: the learners name no game)."""
    return make_encoder("doudizhu", LOOKAHEAD)


def distill_inputs(enc: Any, decisions: Sequence[Decision],
                   cands: Sequence[np.ndarray] | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
    """(inputs [B, base state + 3 x base move], each decision's candidates): the base state and
    the candidates' base move vectors (``cands``: the candidates when already known)."""
    states, moves, offsets = enc.encode_base(decisions)
    x = np.zeros((len(decisions), enc.base_state_dim + enc.n_candidates * enc.base_move_dim), dtype=np.float32)
    x[:, :enc.base_state_dim] = states
    cands = [enc.candidates(d) for d in decisions] if cands is None else list(cands)
    for b, cand in enumerate(cands):
        for i, k in enumerate(cand):
            at = enc.base_state_dim + i * enc.base_move_dim
            x[b, at:at + enc.base_move_dim] = moves[offsets[b] + k]
    return x, cands


class LookaheadDistiller(nn.Module):
    """Predicts the three look-ahead win probabilities (module docstring)."""

    def __init__(self, hidden: int = 256, seed: int = 0) -> None:
        super().__init__()
        self.enc = lookahead_encoder()
        n_in = self.enc.base_state_dim + self.enc.n_candidates * self.enc.base_move_dim
        self.generator = torch.Generator().manual_seed(seed)
        self.net = nn.Sequential(linear(n_in, hidden, self.generator), nn.ReLU(),
                                 linear(hidden, hidden, self.generator), nn.ReLU(),
                                 linear(hidden, self.enc.n_candidates, self.generator))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.net(x))

    def fit(self, decisions: Sequence[Decision], epochs: int = 30, lr: float = 1e-3, batch: int = 256,
            holdout: float = 0.1) -> dict[str, float]:
        """Fit on the play decisions with a choice among ``decisions`` (their play-outs are the
        targets; a missing candidate's target and prediction are masked out). The last ``holdout``
        of them are kept out; returns the held-out mean absolute error, with a constant predictor's
        (the training targets' mean) beside it."""
        labelled = [(d, *self.enc.features(d)) for d in decisions]  # the play-outs, once each
        labelled = [(d, cand, wins) for d, cand, wins in labelled if len(cand)]
        ds = [d for d, _, _ in labelled]
        if len(ds) < 10:
            raise ValueError(f"distilling needs at least 10 play decisions with a choice, got {len(ds)}")
        x, _ = distill_inputs(self.enc, ds, [cand for _, cand, _ in labelled])
        y = np.zeros((len(ds), self.enc.n_candidates), dtype=np.float32)
        mask = np.zeros_like(y)
        for b, (_, _, wins) in enumerate(labelled):
            y[b, :len(wins)] = wins
            mask[b, :len(wins)] = 1.0
        cut = len(ds) - max(1, int(holdout * len(ds)))
        xt, yt, mt = (torch.from_numpy(a[:cut]) for a in (x, y, mask))
        opt = torch.optim.Adam(self.parameters(), lr=lr)
        for _ in range(epochs):
            order = torch.randperm(cut, generator=self.generator)
            for i in range(0, cut, batch):
                j = order[i:i + batch]
                loss = (((self(xt[j]) - yt[j]) ** 2) * mt[j]).sum() / mt[j].sum().clamp(min=1)
                opt.zero_grad()
                loss.backward()
                opt.step()
        with torch.no_grad():
            pred = self(torch.from_numpy(x[cut:])).numpy()
        m, yh = mask[cut:], y[cut:]
        const = (y[:cut] * mask[:cut]).sum(axis=0) / np.maximum(mask[:cut].sum(axis=0), 1)
        return {"positions": len(ds), "held_out": len(ds) - cut,
                "mae": float((np.abs(pred - yh) * m).sum() / m.sum()),
                "mae_constant": float((np.abs(const - yh) * m).sum() / m.sum())}

    def features(self, d: Decision) -> tuple[np.ndarray, np.ndarray]:
        """(candidates, predicted win probabilities) of one decision, as :func:`lookahead` returns."""
        x, cands = distill_inputs(self.enc, [d])
        if not len(cands[0]):
            return cands[0], np.zeros(0)
        with torch.no_grad():
            return cands[0], self(torch.from_numpy(x)).numpy()[0, :len(cands[0])]


class DistilledLookaheadEncoder:
    """``doudizhu+lookahead``'s layout with the distiller's predictions in place of the play-outs;
    everything else (its name and version, roles, rewards) is the play-out encoder's."""

    def __init__(self, distiller: LookaheadDistiller) -> None:
        self.distiller = distiller.eval()
        self.inner = distiller.enc

    def __getattr__(self, name: str) -> Any:  # only for what is not set here
        if name in ("inner", "distiller") or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    def encode(self, decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self.inner.encode_with(decisions, self.distiller.features)
