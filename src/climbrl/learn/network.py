"""The one network shape every learner uses: an action-in scorer of (state, move) pairs.

``score(s, a) = w3 . relu(W2 relu(Ws s + Wm a + b1) + b2) + b3``: two fully connected layers of
512 units (the study's network) over the concatenated state and move vectors. The first layer
is applied to the state once per decision and to each legal move separately, then added: the
same function as one layer on the concatenation, computed without repeating the state for
every move. ``value_head`` adds a state-value MLP of the same shape (PPO's critic); ``dueling``
turns the scores into ``V(s) + A(s, a) - mean_a A(s, a)`` (the DQN family's dueling head).

The initial weights are torch's defaults for ``nn.Linear``, drawn from ``generator`` layer by
layer: a learner passes its own seeded generator, so its weights do not depend on what any
other code (another thread) draws from torch's global random stream; without one they come
from the global stream, as a plain ``nn.Linear`` does.
"""

from __future__ import annotations

import math

import torch
from torch import nn


class ActionInNet(nn.Module):
    """``state_dim``/``move_dim``: the sizes of the encoder's vectors (the game's encoder decides
    them; the network knows no game)."""

    def __init__(self, state_dim: int, move_dim: int, hidden: int = 512, value_head: bool = False,
                 dueling: bool = False, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.hidden = hidden
        self.state_dim = state_dim
        self.move_dim = move_dim
        self.state_in = linear(state_dim, hidden, generator)
        self.move_in = linear(move_dim, hidden, generator, bias=False)
        self.fc2 = linear(hidden, hidden, generator)
        self.out = linear(hidden, 1, generator)
        self.dueling = dueling
        self.has_value = value_head or dueling
        if self.has_value:
            self.value_net = nn.Sequential(
                linear(state_dim, hidden, generator), nn.ReLU(), linear(hidden, hidden, generator), nn.ReLU(),
                linear(hidden, 1, generator),
            )

    def config(self) -> dict:
        return {"state_dim": self.state_dim, "move_dim": self.move_dim, "hidden": self.hidden,
                "value_head": self.has_value and not self.dueling,
                "dueling": self.dueling}

    def forward(self, states: torch.Tensor, moves: torch.Tensor, seg: torch.Tensor) -> torch.Tensor:
        """One score per legal move; ``seg[i]`` is the decision (row of ``states``) of move ``i``."""
        h = torch.relu(self.state_in(states)[seg] + self.move_in(moves))
        scores = self.out(torch.relu(self.fc2(h))).squeeze(-1)
        if self.dueling:
            n = states.shape[0]
            mean = segment_sum(scores, seg, n) / segment_sum(torch.ones_like(scores), seg, n)
            scores = self.value(states)[seg] + scores - mean[seg]
        return scores

    def value(self, states: torch.Tensor) -> torch.Tensor:
        if not self.has_value:
            raise RuntimeError("this network has no value head")
        return self.value_net(states).squeeze(-1)


def linear(n_in: int, n_out: int, generator: torch.Generator | None, bias: bool = True) -> nn.Linear:
    """``nn.Linear(n_in, n_out)`` with its default initialisation (``reset_parameters``: weights
    ``kaiming_uniform_(a=sqrt(5))``, bias uniform in +-1/sqrt(n_in)) drawn from ``generator``."""
    layer = nn.utils.skip_init(nn.Linear, n_in, n_out, bias=bias)
    with torch.no_grad():
        nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
        if bias:
            bound = 1 / math.sqrt(n_in)
            nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
    return layer


def segment_sum(x: torch.Tensor, seg: torch.Tensor, n: int) -> torch.Tensor:
    return torch.zeros(n, dtype=x.dtype, device=x.device).index_add_(0, seg, x)


def segment_max(x: torch.Tensor, seg: torch.Tensor, n: int) -> torch.Tensor:
    out = torch.full((n,), float("-inf"), dtype=x.dtype, device=x.device)
    return out.scatter_reduce(0, seg, x, reduce="amax", include_self=True)


def segment_log_softmax(x: torch.Tensor, seg: torch.Tensor, n: int) -> torch.Tensor:
    """log-softmax of the scores within each decision's legal moves."""
    m = segment_max(x, seg, n).detach()
    z = x - m[seg]
    lse = torch.log(segment_sum(torch.exp(z), seg, n))
    return z - lse[seg]
