"""What every learner shares: the network, the optimizer, scoring a rollout, the behaviour
policy and the state that a checkpoint must hold. Subclasses add only their own update rule."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from climbrl.config import ConfigError, TrainConfig, resolve_device
from climbrl.encoders import Encoder, make_encoder
from climbrl.learn.network import make_net, segment_log_softmax
from climbrl.learn.policy import PolicyAgent
from climbrl.learn.precision import acting_precision
from climbrl.learn.rollout import Rollout
from climbrl.learn.trainable import TrainableState

TRAINING_ONLY = ("aux_dim", "oracle_dim")
"""The ``net_config`` keys of the parts that only training uses (they see hidden cards): a warm start
may add them to a policy that has none (:meth:`Learner._load_init_policy`)."""


def t(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x))


def make_optimizer(cfg: TrainConfig, params: Any) -> torch.optim.Optimizer:
    """``cfg.optimizer`` over ``params`` at ``cfg.lr``: Adam, or RMSprop as DouZero sets it."""
    if cfg.optimizer == "rmsprop":
        return torch.optim.RMSprop(params, lr=cfg.lr, alpha=0.99, eps=1e-5, momentum=0.0)
    return torch.optim.Adam(params, lr=cfg.lr)


class Learner(TrainableState):
    algo = "base"
    value_head = False
    dueling = False
    behaviour_mode = "sample"

    def __init__(self, cfg: TrainConfig, encoder: Encoder | None = None) -> None:
        """``encoder``: the game's encoder (default: ``cfg.encoder`` of ``cfg.game``)."""
        self.cfg = cfg
        self.encoder = encoder if encoder is not None else make_encoder(cfg.game, cfg.encoder)
        # The learner's own torch random stream (initial weights; any torch draw a learner makes
        # takes it too): torch.manual_seed would reseed the whole process's stream, which other
        # threads draw from. Seeded like torch.manual_seed(seed), so the weights are the same.
        self.generator = torch.Generator().manual_seed(cfg.seed)
        # role_networks: one network per role of the game (learn.network.RoleNets); off, the
        # single network of before, built by the same draws. Drawn on the CPU from the
        # generator, then moved: the same initial weights on any device.
        self.device = resolve_device(cfg.device)
        shape: dict = ({"roles": self.encoder.roles, "role_columns": self.encoder.role_columns} if cfg.role_networks
                       else {})
        if cfg.lstm:  # the history LSTM (learn.network.ActionInNet) over the encoder's sequence
            shape.update(lstm=cfg.lstm, sequence=self.encoder.sequence)
        if cfg.layers != 2 or cfg.residual:  # depth (learn.network.ActionInNet); the default builds as before
            shape.update(layers=cfg.layers, residual=cfg.residual)
        # issue 46's signals from the hidden cards (learn.network.ActionInNet): absent by default
        hidden_dim = getattr(self.encoder, "hidden_dim", 0)
        if cfg.hidden_signals and not hidden_dim:
            raise ConfigError(f"train.{'aux_hidden_coef' if cfg.aux_hidden_coef else 'oracle_critic'}: the encoder "
                              f"{self.encoder.name!r} has no hidden targets (hidden_dim 0)")
        if cfg.aux_hidden_coef:
            shape.update(aux_dim=hidden_dim)
        if cfg.oracle_critic:
            shape.update(oracle_dim=hidden_dim)
        self.net = make_net(self.encoder.state_dim, self.encoder.move_dim, cfg.hidden,
                            value_head=self.value_head, dueling=self.dueling, generator=self.generator,
                            n_actions=getattr(self.encoder, "n_actions", 0), **shape).to(self.device)
        if cfg.init_policy:
            self._load_init_policy(cfg.init_policy)
        self.opt = make_optimizer(cfg, self.net.parameters())
        self.updates = 0
        self.decisions_seen = 0
        self.teacher = None
        if cfg.teacher:
            from climbrl.learn.specs import make_agent

            self.teacher = make_agent(cfg.teacher, cfg.game_name)

    def _load_init_policy(self, path: str) -> None:
        """Start from the weights of the policy file ``path`` (``init_policy``); a network that is
        not the one this config builds is a :class:`~climbrl.learn.checkpoint.CheckpointError`
        naming both. The training-only parts that see hidden cards (``aux_dim``, ``oracle_dim``:
        :data:`TRAINING_ONLY`) may differ: a warm start from a policy without them keeps their
        initial weights (the oracle critic's first value layer, which reads more inputs, included)
        and takes every other weight from the file."""
        from climbrl.learn.checkpoint import CheckpointError, load_network

        try:
            net, _, encoder = load_network(path, game=self.cfg.game)
        except CheckpointError as e:
            raise CheckpointError(f"init_policy: {e}") from None
        mine, theirs = self.net.config(), net.config()
        same = {k: v for k, v in mine.items() if k not in TRAINING_ONLY} == {
            k: v for k, v in theirs.items() if k not in TRAINING_ONLY}
        if encoder.describe() != self.encoder.describe() or not same:
            raise CheckpointError(f"init_policy {path}: its network ({theirs}, encoder {encoder.describe()}) is not "
                                  f"the one this run builds ({mine}, encoder {self.encoder.describe()})")
        own, given = self.net.state_dict(), net.state_dict()
        kept = {k: v for k, v in given.items() if k in own and own[k].shape == v.shape}
        if set(given) - set(own):  # cannot happen for equal configs: a guard against a future part
            raise CheckpointError(f"init_policy {path}: weights {sorted(set(given) - set(own))[:4]} have no place here")
        self.net.load_state_dict({**own, **kept})

    def t(self, x: np.ndarray) -> torch.Tensor:
        """``x`` as a tensor on the learner's device (on the CPU: the array's own memory)."""
        return t(x).to(self.device)

    # --- acting ----------------------------------------------------------------------------------
    def epsilon(self) -> float:
        return self.cfg.epsilon

    def teacher_share(self) -> float:
        """The share of the non-exploring decisions the ``teacher`` plays now: ``teacher_share``,
        falling linearly to 0 over ``teacher_decay_steps`` learner decisions when that is set."""
        c = self.cfg
        if not c.teacher_decay_steps:
            return c.teacher_share
        return c.teacher_share * max(0.0, 1.0 - self.decisions_seen / c.teacher_decay_steps)

    def behaviour(self) -> PolicyAgent:
        """The policy that plays the learner's seats in self-play, recording its decisions."""
        share = self.teacher_share() if self.teacher is not None else 0.0
        return PolicyAgent(self.net, self.encoder, mode=self.behaviour_mode, epsilon=self.epsilon(),
                           name=f"{self.algo}-learner", record=True,
                           teacher=self.teacher if share > 0 else None, teacher_share=share,
                           acting=acting_precision(self.cfg.precision))

    # --- learning --------------------------------------------------------------------------------
    def update(self, ro: Rollout, rng: np.random.Generator,
               progress: tuple[float, float] = (0.0, 0.0)) -> dict[str, float]:
        """One epoch's update from its rollout; ``progress`` is the run's progress (0..1) at the
        start and end of the epoch, for schedules over the run (only prioritized replay's beta)."""
        raise NotImplementedError

    def minibatches(self, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        order = rng.permutation(n)
        size = self.cfg.minibatch_decisions
        return [order[i:i + size] for i in range(0, n, size)]

    def select(self, ro: Rollout, idx: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """States, all legal move rows, segment ids and chosen-row positions of decisions ``idx``."""
        counts = ro.offsets[idx + 1] - ro.offsets[idx]
        rows = np.concatenate([np.arange(ro.offsets[i], ro.offsets[i + 1]) for i in idx])
        seg = np.repeat(np.arange(len(idx)), counts)
        starts = np.zeros(len(idx), dtype=np.int64)
        np.cumsum(counts[:-1], out=starts[1:])
        chosen = starts + ro.picks[idx]
        return self.t(ro.states[idx]), self.t(ro.moves[rows]), self.t(seg), self.t(chosen)

    def log_probs(self, ro: Rollout, idx: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(log-prob of the chosen move, entropy, states) under the current network."""
        states, moves, seg, chosen = self.select(ro, idx)
        logp_all = segment_log_softmax(self.net(states, moves, seg), seg, len(idx))
        p = torch.exp(logp_all)
        entropy = -torch.zeros(len(idx), device=self.device).index_add_(0, seg, p * logp_all)
        return logp_all[chosen], entropy, states

    # --- issue 46's signals from the hidden cards (training only) --------------------------------
    def oracle_input(self, ro: Rollout, idx: np.ndarray | None = None) -> torch.Tensor | None:
        """The hidden targets of decisions ``idx`` (all by default) for an oracle critic, else ``None``."""
        if not self.cfg.oracle_critic:
            return None
        if ro.hidden is None:
            raise ValueError("oracle_critic: this rollout has no hidden targets (build it with hidden=True)")
        return self.t(ro.hidden if idx is None else ro.hidden[idx])

    def aux_loss(self, ro: Rollout, idx: np.ndarray, states: torch.Tensor | None = None) -> torch.Tensor | None:
        """The hidden-hand head's loss on decisions ``idx``: binary cross-entropy of its logits and
        the other seats' hands, averaged over the hands' entries and the decisions that have
        targets (0 when none has); ``None`` without the head. ``states``: their state tensor,
        when the caller has it."""
        if not self.cfg.aux_hidden_coef:
            return None
        if ro.hidden is None or ro.hidden_mask is None:
            raise ValueError("aux_hidden_coef: this rollout has no hidden targets (build it with hidden=True)")
        valid = ro.hidden_mask[idx]
        if not valid.any():
            return torch.zeros((), device=self.device)
        states = self.t(ro.states[idx]) if states is None else states
        rows = self.t(np.flatnonzero(valid))
        logits = self.net.hidden_logits(states[rows])
        return F.binary_cross_entropy_with_logits(logits, self.t(ro.hidden[idx[valid]]))

    def chosen_q(self, ro: Rollout, idx: np.ndarray, net: torch.nn.Module | None = None) -> torch.Tensor:
        """Q(s, a) of the chosen moves: one row per decision, or all legal rows for a dueling head
        (whose advantage mean is over every legal move)."""
        net = net or self.net
        if net.dueling:
            states, moves, seg, chosen = self.select(ro, idx)
            return net(states, moves, seg)[chosen]
        rows = ro.chosen_rows()[idx]
        seg = torch.arange(len(idx), device=self.device)
        return net(self.t(ro.states[idx]), self.t(ro.moves[rows]), seg)


class OnPolicyValueLearner(Learner):
    """Regress Q(s, a) of the moves taken on a target computed from the epoch's own games."""

    behaviour_mode = "epsilon"

    def targets(self, ro: Rollout) -> np.ndarray:
        raise NotImplementedError

    def update(self, ro: Rollout, rng: np.random.Generator,
               progress: tuple[float, float] = (0.0, 0.0)) -> dict[str, float]:
        self.decisions_seen += ro.size
        target = self.targets(ro)
        losses, aux_losses = [], []
        for _ in range(self.cfg.update_epochs):
            for idx in self.minibatches(ro.size, rng):
                q = self.chosen_q(ro, idx)
                loss = torch.mean((q - self.t(target[idx])) ** 2)
                aux = self.aux_loss(ro, idx)
                if aux is None:
                    self._step(loss)
                else:  # the head's loss joins the step; "loss" stays the Q regression's
                    self._step(loss + self.cfg.aux_hidden_coef * aux)
                    aux_losses.append(float(aux.detach()))
                losses.append(float(loss.detach()))
        stats = {"loss": float(np.mean(losses)), "target_mean": float(np.mean(target))}
        if aux_losses:
            stats["aux_loss"] = float(np.mean(aux_losses))
        return stats
