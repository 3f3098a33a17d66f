"""What every trained model shares: its gradient step, and what its checkpoint holds (its
network, its optimizer and two counters).

Shared by the play learners (:class:`climbrl.learn.learner.Learner`) and the bid learner
(:class:`climbrl.learn.bidding.BidLearner`), so that both step, and a resumed run restores both,
the same way; a learner with more state (a target network, a replay buffer) extends the dict
with ``super()``.
"""

from __future__ import annotations

from typing import Any

import torch

from climbrl.config import TrainConfig


class TrainingDiverged(ValueError):
    """A non-finite loss or weight: the training stops before any checkpoint or policy holds it
    (the command line prints it as one line, exit status 2)."""


class TrainableState:
    """:meth:`_step`, and ``state_dict``/``load_state_dict`` over ``net``, ``opt``, ``updates``
    and ``decisions_seen``."""

    cfg: TrainConfig
    net: torch.nn.Module
    opt: torch.optim.Optimizer
    updates: int
    decisions_seen: int

    def _step(self, loss: torch.Tensor) -> float:
        """One gradient step on ``loss``, the gradients clipped to ``cfg.max_grad_norm``; returns
        their norm before clipping. A NaN or infinite loss raises :class:`TrainingDiverged`
        before it reaches the weights."""
        if not bool(torch.isfinite(loss)):
            raise TrainingDiverged(f"the loss of update {self.updates + 1} is {float(loss.detach())}")
        self.opt.zero_grad()
        with torch.autocast(device_type=loss.device.type, enabled=False):  # backward outside any autocast
            loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.cfg.max_grad_norm)
        self.opt.step()
        self.updates += 1
        return float(norm)

    def state_dict(self) -> dict[str, Any]:
        return {"net": self.net.state_dict(), "opt": self.opt.state_dict(), "updates": self.updates,
                "decisions_seen": self.decisions_seen}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["net"])
        self.opt.load_state_dict(state["opt"])
        self.updates = int(state["updates"])
        self.decisions_seen = int(state["decisions_seen"])
