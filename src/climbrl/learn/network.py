"""The one network shape every learner uses: an action-in scorer of (state, move) pairs.

``score(s, a) = w3 . relu(W2 relu(Ws s + Wm a + b1) + b2) + b3``: two fully connected layers of
512 units (the study's network) over the concatenated state and move vectors. ``layers`` > 2
adds more ``hidden x hidden`` layers, and ``residual`` makes every layer after the first add its
input to its output (``h + relu(W h + b)``, a residual MLP as in DouRN), so that deeper networks
train as easily as shallow ones (issue 46's capacity at equal cost: 4 x 256 scores a move with
fewer multiply-adds than 2 x 512). The first layer
is applied to the state once per decision and to each legal move separately, then added: the
same function as one layer on the concatenation, computed without repeating the state for
every move. ``value_head`` adds a state-value MLP of the same shape (PPO's critic); ``dueling``
turns the scores into ``V(s) + A(s, a) - mean_a A(s, a)`` (the DQN family's dueling head).

The initial weights are torch's defaults for ``nn.Linear``, drawn from ``generator`` layer by
layer: a learner passes its own seeded generator, so its weights do not depend on what any
other code (another thread) draws from torch's global random stream; without one they come
from the global stream, as a plain ``nn.Linear`` does.

:class:`RoleNets` (``role_networks``) is one such network per role of a game with roles (Dou
Dizhu: landlord, the two peasants, the auction), with the same interface: each decision is
scored by its role's network alone. Scores and values come back as float32 whatever the
weights' dtype (a bfloat16 copy scores moves, :mod:`climbrl.learn.precision`). :func:`make_net`
builds either from a ``config()`` dict (what checkpoints record as ``net_config``).

Issue 46's training signals from the hidden cards: ``aux_dim`` > 0 adds a head that predicts the
other seats' hands (:meth:`ActionInNet.hidden_logits`, DouZero+'s opponent modelling) from the
state's first-layer activation, shared with the scorer, so that its gradient shapes the scorer's
features; ``oracle_dim`` > 0 makes the value head read those hands beside the state (PerfectDou's
oracle critic). Neither is an input of :meth:`ActionInNet.forward`, the move scores that play:
the acting policy never reads a hidden card.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from climbrl.config import MAX_LAYERS, MAX_WIDTH


class ActionInNet(nn.Module):
    """``state_dim``/``move_dim``: the sizes of the encoder's vectors (the game's encoder decides
    them; the network knows no game)."""

    def __init__(self, state_dim: int, move_dim: int, hidden: int = 512, value_head: bool = False,
                 dueling: bool = False, generator: torch.Generator | None = None, lstm: int = 0,
                 sequence: tuple[int, ...] | list[int] = (), layers: int = 2, residual: bool = False,
                 aux_dim: int = 0, oracle_dim: int = 0) -> None:
        """``lstm`` > 0: an LSTM of that size reads the state's ``sequence`` (``(start, steps,
        width)``, the encoder's :attr:`~climbrl.encoders.base.Encoder.sequence`) and its last
        output replaces those columns in the input of the first layer and of the value head
        (DouZero's history LSTM); its weights are drawn from ``generator`` after the others.
        ``layers``: hidden layers of the scorer and of the value head (the first over state and
        move, then ``layers - 1`` of ``hidden x hidden``); the extra ones are drawn after the
        output layer, so the default 2 draws exactly the study's network. ``residual``: every
        layer after the first adds its input (the value head stays a plain MLP). ``aux_dim``: the
        size of the hidden-hand head (0: none); ``oracle_dim``: the size of the hidden targets
        the value head reads beside the state (0: the state alone). Both are drawn after every
        other layer, so that a network without them draws exactly as before they existed."""
        super().__init__()
        check_depth(layers, residual)
        check_hidden_dims(aux_dim, oracle_dim)
        if oracle_dim and (dueling or not value_head):
            raise ValueError("an oracle critic (oracle_dim) is a value head of its own: it needs value_head and no "
                             "dueling head (whose scores would read the hidden cards)")
        self.hidden = hidden
        self.layers = layers
        self.residual = residual
        self.state_dim = state_dim
        self.move_dim = move_dim
        self.lstm_size = lstm
        self.sequence = tuple(int(x) for x in sequence) if lstm else ()
        self.aux_dim, self.oracle_dim = aux_dim, oracle_dim
        if lstm:
            if lstm < 1 or len(self.sequence) != 3 or self.sequence[0] < 0 or min(self.sequence[1:]) < 1 \
                    or self.sequence[0] + self.sequence[1] * self.sequence[2] > state_dim:
                raise ValueError(f"an LSTM needs a sequence (start, steps, width) inside the state vector "
                                 f"(size {state_dim}), got lstm={lstm!r}, sequence={tuple(sequence)!r}")
            _, steps, width = self.sequence
            in_dim = state_dim - steps * width + lstm
        else:
            in_dim = state_dim
        self.state_in = linear(in_dim, hidden, generator)
        self.move_in = linear(move_dim, hidden, generator, bias=False)
        self.fc2 = linear(hidden, hidden, generator)
        self.out = linear(hidden, 1, generator)
        if layers > 2:
            self.deeper = nn.ModuleList(linear(hidden, hidden, generator) for _ in range(layers - 2))
        self.dueling = dueling
        self.has_value = value_head or dueling
        if self.has_value:
            body: list[nn.Module] = [linear(in_dim + oracle_dim, hidden, generator), nn.ReLU()]
            for _ in range(layers - 1):
                body += [linear(hidden, hidden, generator), nn.ReLU()]
            self.value_net = nn.Sequential(*body, linear(hidden, 1, generator))
        if lstm:
            self.lstm = seeded_lstm(self.sequence[2], lstm, generator)
        if aux_dim:
            self.aux = linear(hidden, aux_dim, generator)

    def config(self) -> dict:
        cfg = {"state_dim": self.state_dim, "move_dim": self.move_dim, "hidden": self.hidden,
               "value_head": self.has_value and not self.dueling,
               "dueling": self.dueling}
        if self.lstm_size:  # absent without one: the configs recorded before LSTMs existed stay equal
            cfg.update(lstm=self.lstm_size, sequence=list(self.sequence))
        if self.layers != 2 or self.residual:  # the same: absent at the study's depth
            cfg.update(layers=self.layers, residual=self.residual)
        cfg.update({k: v for k, v in (("aux_dim", self.aux_dim), ("oracle_dim", self.oracle_dim)) if v})  # the same
        return cfg

    def features(self, states: torch.Tensor) -> torch.Tensor:
        """The first layer's input: the state, its sequence read by the LSTM when there is one."""
        if not self.lstm_size:
            return states
        start, steps, width = self.sequence
        end = start + steps * width
        seq = states[:, start:end].reshape(states.shape[0], steps, width)
        _, (h, _) = self.lstm(seq)
        return torch.cat([states[:, :start], states[:, end:], h[-1]], dim=1)

    def forward(self, states: torch.Tensor, moves: torch.Tensor, seg: torch.Tensor) -> torch.Tensor:
        """One score per legal move; ``seg[i]`` is the decision (row of ``states``) of move ``i``."""
        h = torch.relu(self.state_in(self.features(states))[seg] + self.move_in(moves))
        if self.layers == 2 and not self.residual:
            h = torch.relu(self.fc2(h))  # the study's network, operation for operation
        else:
            for layer in [self.fc2, *self.deeper] if self.layers > 2 else [self.fc2]:
                h = h + torch.relu(layer(h)) if self.residual else torch.relu(layer(h))
        scores = self.out(h).squeeze(-1).float()  # fp32 out of bf16 arithmetic too
        if self.dueling:
            n = states.shape[0]
            mean = segment_sum(scores, seg, n) / segment_sum(torch.ones_like(scores), seg, n)
            scores = self.value(states)[seg] + scores - mean[seg]
        return scores

    def value(self, states: torch.Tensor, hidden: torch.Tensor | None = None) -> torch.Tensor:
        """The state values; an oracle critic (``oracle_dim``) also reads ``hidden``, the
        decisions' hidden targets [B, oracle_dim], which training alone has."""
        if not self.has_value:
            raise RuntimeError("this network has no value head")
        x = self.features(states)
        if self.oracle_dim:
            if hidden is None:
                raise ValueError(f"this value head is an oracle critic: it reads the other seats' hands "
                                 f"(hidden [B, {self.oracle_dim}]), which only training has")
            x = torch.cat([x, hidden.to(x.dtype)], dim=1)
        elif hidden is not None:
            raise ValueError("this value head reads the state alone (no oracle_dim): pass no hidden cards")
        return self.value_net(x).squeeze(-1).float()

    def hidden_logits(self, states: torch.Tensor) -> torch.Tensor:
        """The hidden-hand head's logits [B, aux_dim] (a sigmoid each: the share of a rank's
        copies, or the card, that the other seats hold), from the state's first-layer activation."""
        if not self.aux_dim:
            raise RuntimeError("this network has no hidden-hand head (aux_dim 0)")
        return self.aux(torch.relu(self.state_in(self.features(states)))).float()


class RoleNets(nn.Module):
    """One :class:`ActionInNet` per role, each decision routed to the network of its role.

    The role of a state row is the argmax over its ``role_columns`` (one column per role, one-hot
    in every state: the encoder's :attr:`~climbrl.encoders.base.Encoder.role_columns`), so the
    network needs nothing but the state vector and stays game-agnostic. A decision's legal moves
    share its role, so the dueling head's advantage mean stays within one network. The nets are
    built in role order from ``generator``; a role no decision reaches keeps its initial weights
    (its parameters get no gradient, so Adam leaves them alone)."""

    def __init__(self, state_dim: int, move_dim: int, hidden: int = 512, value_head: bool = False,
                 dueling: bool = False, generator: torch.Generator | None = None,
                 roles: tuple[str, ...] | list[str] = (), role_columns: tuple[int, ...] | list[int] = (),
                 lstm: int = 0, sequence: tuple[int, ...] | list[int] = (), layers: int = 2,
                 residual: bool = False, aux_dim: int = 0, oracle_dim: int = 0) -> None:
        super().__init__()
        if len(roles) < 2 or len(roles) != len(role_columns):
            raise ValueError(f"role networks need two roles or more, one state column each; got roles {roles!r}, "
                             f"columns {role_columns!r}")
        if not all(0 <= int(c) < state_dim for c in role_columns):
            raise ValueError(f"role columns {role_columns!r} outside the state vector (size {state_dim})")
        self.roles = tuple(str(r) for r in roles)
        self.role_columns = tuple(int(c) for c in role_columns)
        self.nets = nn.ModuleList(ActionInNet(state_dim, move_dim, hidden, value_head=value_head, dueling=dueling,
                                              generator=generator, lstm=lstm, sequence=sequence, layers=layers,
                                              residual=residual, aux_dim=aux_dim, oracle_dim=oracle_dim)
                                  for _ in self.roles)
        self.register_buffer("columns", torch.tensor(self.role_columns, dtype=torch.int64), persistent=False)
        first = self.nets[0]
        self.hidden, self.state_dim, self.move_dim = hidden, state_dim, move_dim
        self.dueling, self.has_value = first.dueling, first.has_value
        self.aux_dim, self.oracle_dim = aux_dim, oracle_dim

    def config(self) -> dict:
        return {**self.nets[0].config(), "roles": list(self.roles), "role_columns": list(self.role_columns)}

    def role_of(self, states: torch.Tensor) -> torch.Tensor:
        """The role index of each state row (int64)."""
        return torch.argmax(states[:, self.columns], dim=1)

    def forward(self, states: torch.Tensor, moves: torch.Tensor, seg: torch.Tensor) -> torch.Tensor:
        role = self.role_of(states)
        single = self._single(role)
        if single is not None:
            return self.nets[single](states, moves, seg)
        move_role = role[seg]
        out = moves.new_zeros(moves.shape[0], dtype=torch.float32)
        for r, net in enumerate(self.nets):
            is_r = role == r
            rows = torch.nonzero(is_r).squeeze(1)
            if len(rows) == 0:
                continue
            mrows = torch.nonzero(move_role == r).squeeze(1)
            local = torch.cumsum(is_r, 0) - 1  # decision -> its position among role r's decisions
            out = out.index_copy(0, mrows, net(states[rows], moves[mrows], local[seg[mrows]]))
        return out

    def value(self, states: torch.Tensor, hidden: torch.Tensor | None = None) -> torch.Tensor:
        """Each row's value by its role's network (``hidden``: an oracle critic's rows, routed with the states)."""
        if not self.has_value:
            raise RuntimeError("this network has no value head")
        return self._routed(lambda net, s, h: net.value(s, h), states, hidden, ())

    def hidden_logits(self, states: torch.Tensor) -> torch.Tensor:
        """Each row's hidden-hand logits by its role's network."""
        if not self.aux_dim:
            raise RuntimeError("this network has no hidden-hand head (aux_dim 0)")
        return self._routed(lambda net, s, _: net.hidden_logits(s), states, None, (self.aux_dim,))

    def _routed(self, call: Callable[[ActionInNet, torch.Tensor, torch.Tensor | None], torch.Tensor],
                states: torch.Tensor, hidden: torch.Tensor | None, tail: tuple[int, ...]) -> torch.Tensor:
        """``call(net, states, hidden)`` of each row's role network (one row out per state row, of shape ``tail``)."""
        role = self.role_of(states)
        single = self._single(role)
        if single is not None:
            return call(self.nets[single], states, hidden)
        out = states.new_zeros((states.shape[0], *tail), dtype=torch.float32)
        for r, net in enumerate(self.nets):
            rows = torch.nonzero(role == r).squeeze(1)
            if len(rows):
                out = out.index_copy(0, rows, call(net, states[rows], None if hidden is None else hidden[rows]))
        return out

    @staticmethod
    def _single(role: torch.Tensor) -> int | None:
        """The one role of every row, if they share one (no routing needed)."""
        if len(role) and bool((role == role[0]).all()):
            return int(role[0])
        return None


class ActionHeadNet(nn.Module):
    """The public Big 2 agent's network shape, for an encoder with a fixed action space
    (``n_actions``; its move vector is one column, the move's action index): ``state ->
    hidden ReLU -> hidden2 ReLU -> n_actions`` logits, a move's score being its action's logit,
    and (``value_head``) a critic ``hidden ReLU -> hidden2 ReLU -> 1`` branching from the first
    layer. One forward pass per decision instead of one per legal move, which is what a compiled
    rollout can afford (:mod:`climbrl.agents.external.charlesworth_compiled` plays its weights)."""

    def __init__(self, state_dim: int, move_dim: int, hidden: int = 512, value_head: bool = False,
                 dueling: bool = False, generator: torch.Generator | None = None, n_actions: int = 0,
                 hidden2: int = 0) -> None:
        super().__init__()
        if dueling:
            raise ValueError("an action-head network has no dueling head")
        if move_dim != 1 or n_actions < 2:
            raise ValueError(f"an action-head network needs one move column (the action index) and n_actions >= 2, "
                             f"got move_dim={move_dim}, n_actions={n_actions}")
        self.hidden, self.hidden2 = hidden, hidden2 or hidden // 2
        self.state_dim, self.move_dim, self.n_actions = state_dim, move_dim, n_actions
        self.dueling = False
        self.has_value = value_head
        self.fc1 = linear(state_dim, self.hidden, generator)
        self.fc2 = linear(self.hidden, self.hidden2, generator)
        self.pi = linear(self.hidden2, n_actions, generator)
        if value_head:
            self.fc3 = linear(self.hidden, self.hidden2, generator)
            self.vf = linear(self.hidden2, 1, generator)

    def config(self) -> dict:
        return {"state_dim": self.state_dim, "move_dim": self.move_dim, "hidden": self.hidden,
                "hidden2": self.hidden2, "n_actions": self.n_actions, "value_head": self.has_value,
                "dueling": False}

    def forward(self, states: torch.Tensor, moves: torch.Tensor, seg: torch.Tensor) -> torch.Tensor:
        logits = self.pi(torch.relu(self.fc2(torch.relu(self.fc1(states)))))
        return logits[seg, moves[:, 0].long()].float()

    def value(self, states: torch.Tensor, hidden: torch.Tensor | None = None) -> torch.Tensor:
        """The state values (``hidden``: always ``None``, this network has no oracle critic)."""
        if not self.has_value:
            raise RuntimeError("this network has no value head")
        if hidden is not None:
            raise ValueError("an action-head network's value head reads the state alone: pass no hidden cards")
        return self.vf(torch.relu(self.fc3(torch.relu(self.fc1(states))))).squeeze(-1).float()

    def weights(self) -> dict[str, np.ndarray]:
        """The policy's arrays by the public agent's names (``fc1_w`` [in, out], ...), float32."""
        out = {}
        for name in ("fc1", "fc2", "pi"):
            layer = getattr(self, name)
            out[f"{name}_w"] = layer.weight.detach().cpu().numpy().T.copy()
            out[f"{name}_b"] = layer.bias.detach().cpu().numpy().copy()
        return out


def make_net(state_dim: int, move_dim: int, hidden: int = 512, value_head: bool = False, dueling: bool = False,
             generator: torch.Generator | None = None, roles: tuple[str, ...] | list[str] | None = None,
             role_columns: tuple[int, ...] | list[int] | None = None, n_actions: int = 0,
             hidden2: int = 0, lstm: int = 0, sequence: tuple[int, ...] | list[int] = (), layers: int = 2,
             residual: bool = False, aux_dim: int = 0, oracle_dim: int = 0) -> ActionInNet | RoleNets | ActionHeadNet:
    """The network of a ``config()`` dict: :class:`ActionHeadNet` when it names a fixed action
    space (``n_actions``), :class:`RoleNets` when it names roles, else one :class:`ActionInNet`
    (a ``net_config`` recorded before role networks existed has no roles); ``lstm``/``sequence``:
    the history LSTM of :class:`ActionInNet` (each role network has its own); ``layers``,
    ``residual``: its depth; ``aux_dim``, ``oracle_dim``: issue 46's hidden-hand head and oracle
    critic. The sizes are checked first (:func:`check_widths`, :func:`check_depth`,
    :func:`check_hidden_dims`)."""
    check_widths(hidden, hidden2, lstm)
    check_depth(layers, residual)
    check_hidden_dims(aux_dim, oracle_dim)
    if n_actions:
        if roles:
            raise ValueError("role networks of an action-head network are not supported")
        if lstm:
            raise ValueError("an action-head network has no LSTM")
        if layers != 2 or residual:
            raise ValueError("an action-head network has the public agent's two layers, no other depth")
        if aux_dim or oracle_dim:
            raise ValueError("an action-head network has no hidden-hand head (aux_dim) nor oracle critic (oracle_dim)")
        return ActionHeadNet(state_dim, move_dim, hidden, value_head=value_head, dueling=dueling,
                             generator=generator, n_actions=n_actions, hidden2=hidden2)
    if roles:
        return RoleNets(state_dim, move_dim, hidden, value_head=value_head, dueling=dueling, generator=generator,
                        roles=roles, role_columns=role_columns or (), lstm=lstm, sequence=sequence, layers=layers,
                        residual=residual, aux_dim=aux_dim, oracle_dim=oracle_dim)
    return ActionInNet(state_dim, move_dim, hidden, value_head=value_head, dueling=dueling, generator=generator,
                       lstm=lstm, sequence=sequence, layers=layers, residual=residual, aux_dim=aux_dim,
                       oracle_dim=oracle_dim)


def check_depth(layers: object, residual: object) -> None:
    """``ValueError`` unless ``layers`` is an integer from 2 to :data:`~climbrl.config.MAX_LAYERS`
    and ``residual`` a boolean (a checkpoint's ``net_config`` is read from a file)."""
    if isinstance(layers, bool) or not isinstance(layers, int) or not 2 <= layers <= MAX_LAYERS:
        raise ValueError(f"layers must be an integer from 2 to {MAX_LAYERS} (MAX_LAYERS), got {layers!r}")
    if not isinstance(residual, bool):
        raise ValueError(f"residual must be true or false, got {residual!r}")


def check_hidden_dims(aux_dim: object, oracle_dim: object) -> None:
    """``ValueError`` unless ``aux_dim`` and ``oracle_dim`` are integers from 0 to
    :data:`~climbrl.config.MAX_WIDTH` (a checkpoint's ``net_config`` is read from a file)."""
    for name, v in (("aux_dim", aux_dim), ("oracle_dim", oracle_dim)):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_WIDTH:
            raise ValueError(f"{name} must be an integer from 0 to {MAX_WIDTH} (MAX_WIDTH), got {v!r}")


def check_widths(hidden: object, hidden2: object = 0, lstm: object = 0) -> None:
    """``ValueError`` naming the first width that is not an integer up to
    :data:`~climbrl.config.MAX_WIDTH` (``hidden`` at least 1; ``hidden2`` and ``lstm`` may be 0:
    half of ``hidden``, no LSTM), before any layer allocates: a checkpoint's ``net_config`` is
    read from a file, and its ``hidden: -5`` was a RuntimeError deep in torch, ``10**6`` an
    attempt at terabytes."""
    for name, v, low in (("hidden", hidden, 1), ("hidden2", hidden2, 0), ("lstm", lstm, 0)):
        if isinstance(v, bool) or not isinstance(v, int) or not low <= v <= MAX_WIDTH:
            raise ValueError(f"{name} must be an integer from {low} to {MAX_WIDTH} (MAX_WIDTH), got {v!r}")


Net = ActionInNet | RoleNets | ActionHeadNet
"""Any of the networks: the same interface (``forward``, ``value``, ``config``, ``dueling``, ``has_value``)."""


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


def seeded_lstm(n_in: int, size: int, generator: torch.Generator | None) -> nn.LSTM:
    """``nn.LSTM(n_in, size, batch_first=True)`` with its default initialisation (every weight
    and bias uniform in +-1/sqrt(size)) drawn from ``generator``, parameter by parameter."""
    # built on the meta device (no draw from torch's global stream), then given storage
    layer = nn.LSTM(n_in, size, batch_first=True, device="meta").to_empty(device="cpu")
    bound = 1 / math.sqrt(size)
    with torch.no_grad():
        for p in layer.parameters():
            nn.init.uniform_(p, -bound, bound, generator=generator)
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
