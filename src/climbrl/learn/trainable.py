"""What every trained model's checkpoint holds: its network, its optimizer and two counters.

Shared by the play learners (:class:`climbrl.learn.learner.Learner`) and the bid learner
(:class:`climbrl.learn.bidding.BidLearner`), so that a resumed run restores both the same way;
a learner with more state (a target network, a replay buffer) extends the dict with ``super()``.
"""

from __future__ import annotations

from typing import Any

import torch


class TrainableState:
    """``state_dict``/``load_state_dict`` over ``net``, ``opt``, ``updates`` and ``decisions_seen``."""

    net: torch.nn.Module
    opt: torch.optim.Optimizer
    updates: int
    decisions_seen: int

    def state_dict(self) -> dict[str, Any]:
        return {"net": self.net.state_dict(), "opt": self.opt.state_dict(), "updates": self.updates,
                "decisions_seen": self.decisions_seen}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.net.load_state_dict(state["net"])
        self.opt.load_state_dict(state["opt"])
        self.updates = int(state["updates"])
        self.decisions_seen = int(state["decisions_seen"])
