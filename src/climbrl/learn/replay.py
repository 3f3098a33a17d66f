"""Replay buffers for the off-policy learners: uniform and prioritized (proportional, sum tree).

A transition is one decision of a seat and that seat's next decision: state, the chosen move's
encoding, reward, done, next state and the encodings of all the next decision's legal moves
(the target takes a max over them). Stored as float16 to halve the memory.

A buffer's state (:meth:`ReplayBuffer.state_dict`) is part of the learner's checkpoint, so that
a resumed run samples from the very transitions (and, prioritized, priorities) that the
uninterrupted run would: its filled rows as tensors (a checkpoint is read with
``torch.load(weights_only=True)``, which takes no numpy arrays), the variable-length move lists
flattened with their offsets. Its size is bounded by ``replay_capacity``: about 4 kB a Big 2
transition (the two state vectors take 2.2 kB), so some 0.4 GB when the study's 100,000 are full.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from climbrl.learn.rollout import Rollout

_ROWS = ("states", "actions", "rewards", "dones", "next_states", "picks")
"""The buffer's fixed-size arrays, one row per slot."""


@dataclass
class ReplaySample:
    states: np.ndarray
    actions: np.ndarray
    rewards: np.ndarray
    dones: np.ndarray
    next_states: np.ndarray
    next_moves: np.ndarray
    next_offsets: np.ndarray
    moves: np.ndarray  # all legal moves of the sampled states (the dueling head averages over them)
    offsets: np.ndarray
    chosen: np.ndarray  # row of the chosen move in ``moves``
    indices: np.ndarray
    weights: np.ndarray  # importance-sampling weights (ones for uniform replay)


class ReplayBuffer:
    """``state_dim``/``move_dim``: the sizes of the encoder's vectors."""

    def __init__(self, capacity: int, state_dim: int, move_dim: int) -> None:
        self.capacity = capacity
        self.move_dim = move_dim
        self.states = np.zeros((capacity, state_dim), dtype=np.float16)
        self.actions = np.zeros((capacity, move_dim), dtype=np.float16)
        self.rewards = np.zeros(capacity, dtype=np.float32)
        self.dones = np.zeros(capacity, dtype=bool)
        self.next_states = np.zeros((capacity, state_dim), dtype=np.float16)
        self.next_moves: list[np.ndarray | None] = [None] * capacity
        self.legal_moves: list[np.ndarray | None] = [None] * capacity
        self.picks = np.zeros(capacity, dtype=np.int64)
        self.pos = 0
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def add_rollout(self, ro: Rollout) -> np.ndarray:
        """Store every decision of ``ro`` as a transition; returns the slots written."""
        nxt = ro.next_index()
        chosen = ro.chosen_rows()
        slots = np.empty(ro.size, dtype=np.int64)
        for i in range(ro.size):
            j = self.pos
            slots[i] = j
            self.states[j] = ro.states[i]
            self.actions[j] = ro.moves[chosen[i]]
            self.legal_moves[j] = ro.moves[ro.offsets[i]:ro.offsets[i + 1]].astype(np.float16)
            self.picks[j] = ro.picks[i]
            self.rewards[j] = ro.rewards[i]
            self.dones[j] = ro.dones[i]
            if nxt[i] >= 0:
                n = nxt[i]
                self.next_states[j] = ro.states[n]
                self.next_moves[j] = ro.moves[ro.offsets[n]:ro.offsets[n + 1]].astype(np.float16)
            else:
                self.next_states[j] = 0
                self.next_moves[j] = None
            self.pos = (self.pos + 1) % self.capacity
            self.size = min(self.size + 1, self.capacity)
        return slots

    def _flatten(self, arrays: list[np.ndarray | None], dtype: type = np.float32) -> tuple[np.ndarray, np.ndarray]:
        """The move lists ``arrays`` as one array of rows and their offsets (``None``: no rows)."""
        counts = np.array([0 if m is None else len(m) for m in arrays], dtype=np.int64)
        offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        parts = [m for m in arrays if m is not None]
        moves = np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros((0, self.move_dim), dtype)
        return moves, offsets

    def _gather(self, idx: np.ndarray, weights: np.ndarray) -> ReplaySample:
        next_moves, next_offsets = self._flatten([self.next_moves[i] for i in idx])
        moves, offsets = self._flatten([self.legal_moves[i] for i in idx])
        return ReplaySample(
            self.states[idx].astype(np.float32), self.actions[idx].astype(np.float32),
            self.rewards[idx], self.dones[idx], self.next_states[idx].astype(np.float32),
            next_moves, next_offsets, moves, offsets, offsets[:-1] + self.picks[idx], idx, weights.astype(np.float32),
        )

    def sample(self, batch: int, rng: np.random.Generator, beta: float = 0.4, recent: float = 1.0) -> ReplaySample:
        """``batch`` transitions drawn uniformly, among the newest ``recent`` fraction of the
        stored ones (at least one)."""
        if recent >= 1:
            idx = rng.integers(0, self.size, size=batch)
        else:
            window = max(1, int(np.ceil(recent * self.size)))
            idx = (self.pos - 1 - rng.integers(0, window, size=batch)) % self.capacity
        return self._gather(idx, np.ones(batch))

    def age_order(self) -> np.ndarray:
        """The filled slots, oldest first."""
        if self.size < self.capacity:
            return np.arange(self.size, dtype=np.int64)
        return (self.pos + np.arange(self.size, dtype=np.int64)) % self.capacity

    def drop_oldest(self, fraction: float) -> int:
        """Forget the oldest ``fraction`` of the stored transitions (the rest keep their order,
        moved to the front); returns how many were dropped."""
        order = self.age_order()
        drop = int(np.floor(fraction * self.size))
        keep = order[drop:]
        k = len(keep)
        for name in _ROWS:
            arr = getattr(self, name)
            arr[:k] = arr[keep]
        self.legal_moves[:k] = [self.legal_moves[i] for i in keep]
        self.next_moves[:k] = [self.next_moves[i] for i in keep]
        self.legal_moves[k:] = self.next_moves[k:] = [None] * (self.capacity - k)
        self.size, self.pos = k, k % self.capacity
        return drop

    def update_priorities(self, idx: np.ndarray, td: np.ndarray) -> None:
        """Uniform replay has no priorities."""

    def state_dict(self) -> dict[str, Any]:
        """The stored transitions (copies, as tensors): the filled slots' rows, the legal and next
        move lists flattened (``*_offsets``; a slot without a next decision has no next rows), the
        write position and the size."""
        n = self.size
        legal, legal_offsets = self._flatten(self.legal_moves[:n], np.float16)
        nxt, next_offsets = self._flatten(self.next_moves[:n], np.float16)
        rows = {k: torch.from_numpy(getattr(self, k)[:n].copy()) for k in _ROWS}
        return {**rows, "legal_moves": torch.from_numpy(legal), "legal_offsets": torch.from_numpy(legal_offsets),
                "next_moves": torch.from_numpy(nxt), "next_offsets": torch.from_numpy(next_offsets),
                "pos": self.pos, "size": n}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`'s transitions into this (empty or not) buffer of the same
        shape; a state that does not fit raises ``ValueError``."""
        n, pos = int(state["size"]), int(state["pos"])
        if not 0 <= n <= self.capacity or not 0 <= pos < self.capacity or (n < self.capacity and pos != n):
            raise ValueError(f"replay buffer state of {n} transitions at slot {pos} does not fit a buffer of "
                             f"{self.capacity}")
        for k in _ROWS:
            rows = state[k].numpy()
            if rows.shape[1:] != getattr(self, k).shape[1:] or len(rows) != n:
                raise ValueError(f"replay buffer state: {k} of shape {tuple(rows.shape)}, this buffer holds "
                                 f"{(n, *getattr(self, k).shape[1:])}")
            getattr(self, k)[:n] = rows
        self.legal_moves[:n] = _split(state["legal_moves"].numpy(), state["legal_offsets"].numpy())
        self.next_moves[:n] = _split(state["next_moves"].numpy(), state["next_offsets"].numpy())
        self.legal_moves[n:] = self.next_moves[n:] = [None] * (self.capacity - n)
        self.pos, self.size = pos, n


def _split(moves: np.ndarray, offsets: np.ndarray) -> list[np.ndarray | None]:
    """The move lists that :meth:`ReplayBuffer._flatten` joined (an empty one: ``None``)."""
    return [moves[a:b] if b > a else None for a, b in zip(offsets[:-1], offsets[1:], strict=True)]


class PrioritizedReplayBuffer(ReplayBuffer):
    """Proportional prioritized replay (Schaul et al. 2016): P(i) ~ p_i^alpha, IS weights."""

    def __init__(self, capacity: int, state_dim: int, move_dim: int, alpha: float = 0.6,
                 eps: float = 1e-3) -> None:
        super().__init__(capacity, state_dim, move_dim)
        self.alpha = alpha
        self.eps = eps
        self.tree_size = 1
        while self.tree_size < capacity:
            self.tree_size *= 2
        self.tree = np.zeros(2 * self.tree_size, dtype=np.float64)
        self.max_priority = 1.0

    def _set(self, i: int, p: float) -> None:
        j = i + self.tree_size
        self.tree[j] = p
        j //= 2
        while j >= 1:
            self.tree[j] = self.tree[2 * j] + self.tree[2 * j + 1]
            j //= 2

    def add_rollout(self, ro: Rollout) -> np.ndarray:
        slots = super().add_rollout(ro)
        for s in slots:
            self._set(int(s), self.max_priority ** self.alpha)
        return slots

    def _find(self, mass: float) -> int:
        j = 1
        while j < self.tree_size:
            left = self.tree[2 * j]
            if mass <= left:
                j = 2 * j
            else:
                mass -= left
                j = 2 * j + 1
        return min(j - self.tree_size, self.size - 1)

    def drop_oldest(self, fraction: float) -> int:
        keep = self.age_order()[int(np.floor(fraction * self.size)):]
        priorities = self.tree[keep + self.tree_size].copy()
        dropped = super().drop_oldest(fraction)
        self.tree[:] = 0.0
        for i, p in enumerate(priorities):
            self._set(i, float(p))
        return dropped

    def sample(self, batch: int, rng: np.random.Generator, beta: float = 0.4, recent: float = 1.0) -> ReplaySample:
        total = self.tree[1]
        bounds = np.linspace(0.0, total, batch + 1)
        masses = rng.uniform(bounds[:-1], bounds[1:])  # stratified
        idx = np.array([self._find(m) for m in masses], dtype=np.int64)
        probs = self.tree[idx + self.tree_size] / total
        weights = (self.size * np.maximum(probs, 1e-12)) ** (-beta)
        return self._gather(idx, weights / weights.max())

    def update_priorities(self, idx: np.ndarray, td: np.ndarray) -> None:
        for i, e in zip(idx, np.abs(td) + self.eps, strict=True):
            self._set(int(i), float(e) ** self.alpha)
            self.max_priority = max(self.max_priority, float(e))

    def state_dict(self) -> dict[str, Any]:
        """The transitions, the sum tree of their priorities and the largest priority seen."""
        return {**super().state_dict(), "tree": torch.from_numpy(self.tree.copy()), "max_priority": self.max_priority}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        tree = state["tree"].numpy()
        if tree.shape != self.tree.shape:
            raise ValueError(f"replay buffer state: a priority tree of {len(tree)} nodes, this buffer's has "
                             f"{len(self.tree)}")
        super().load_state_dict(state)
        self.tree[:] = tree
        self.max_priority = float(state["max_priority"])
