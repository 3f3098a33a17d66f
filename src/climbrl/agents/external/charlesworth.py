"""The public Big 2 PPO agent (Charlesworth 2018) as an opponent, under ``charlesworth`` rules.

Data (never copied into the repository): the weights as ``.npz`` in
``shared/external/charlesworth-big2/`` (loaded with ``allow_pickle=False``; ``climbrl
convert-charlesworth`` makes it from the released file, see ``climbrl.paths``). The 1695 actions
(positions in the hand sorted by card id; 1694 = pass) are rebuilt here: they are the same as
that folder's ``action_index.json`` (tested), so the weights are the only file the agent needs.

The network: ``fc1 (412->512) ReLU, fc2 (512->256) ReLU, pi (256->1695)`` logits; the value head
``fc3 (512->256) ReLU, vf (256->1)`` branches from the first hidden layer. Illegal actions are
masked; the agent samples from the softmax of the legal logits (``charlesworth:sample``) or
takes the argmax (``charlesworth:greedy``).

The 412-dim observation, rebuilt from what the seat may know (0-based index ranges):

=========  =================================================================================
0-285      own hand: 13 slots x 22, slot k = k-th card sorted by id; per slot 0-12 rank,
           13-16 suit (D C H S), 17 in a pair (or more), 18 in a triple (or more), 19 in four
           of a kind, 20 in a run of 5+ consecutive ranks (3..2), 21 in a suit with 5+ cards
286-366    the three others in turn order after the observer, 27 each: 0-12 cards left
           (one-hot n-1), 13-20 which of the aces and twos it has played, 21-26 which types
           it has played (pair, triple, 4-card hand, straight, flush, full house)
367-382    which queens, kings, aces and twos anyone has played
383-411    the play to beat: 0-12 rank and 13-16 suit of its deciding card (highest card; a
           straight shows its middle card's rank and a full house its triple's rank, neither
           with a suit), 17 the observer leads (then nothing else here is set), 18-25 its type
           (single, pair, triple, two pair, four of a kind, straight, flush, full house; a
           straight flush sets straight and flush, a plain straight sets straight and full
           house: that engine's quirk), 26/27/28 no pass / one pass / two passes since
=========  =================================================================================

The reference games (``reference_games.jsonl.gz``) are the ground truth; ``tests/`` checks the
observation, the legal actions and the logits at every decision of all 300 games.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np
import torch

from climbrl.agents.base import Agent, Decision
from climbrl.agents.external.charlesworth_compiled import (
    MAX_ACTIVE,
    N_ACTIONS,
    OBS_SIZE,
    PASS_ACTION,
    action_positions,
    encode_active,
)
from climbrl.cards import mask_to_cards
from climbrl.paths import CHARLESWORTH_WEIGHTS, charlesworth_weights_path, public_agent_missing

WEIGHT_KEYS = ("fc1_w", "fc1_b", "fc2_w", "fc2_b", "pi_w", "pi_b", "fc3_w", "fc3_b", "vf_w", "vf_b")
WEIGHT_SHAPES = {
    "fc1_w": (412, 512), "fc1_b": (512,), "fc2_w": (512, 256), "fc2_b": (256,),
    "pi_w": (256, 1695), "pi_b": (1695,), "fc3_w": (512, 256), "fc3_b": (256,),
    "vf_w": (256, 1), "vf_b": (1,),
}
DEFAULT_WEIGHTS = CHARLESWORTH_WEIGHTS

class WeightsError(ValueError):
    """Missing, unreadable or mismatched weights."""


def _check_float(a: np.ndarray, key: str, path: str | Path) -> None:
    """Weights are floating-point numbers (the released file's are float32): any other dtype
    (objects, strings, integers, records) is refused, not converted."""
    if a.dtype.kind != "f":
        raise WeightsError(f"{path}: array {key} has dtype {a.dtype.str!r} ({a.dtype}), expected floating point")


def load_weights(path: str | Path | None = None) -> dict[str, np.ndarray]:
    """The 10 arrays from the ``.npz`` (``allow_pickle=False``), checked by name and shape."""
    if path is None:
        if missing := public_agent_missing():
            raise WeightsError(missing)  # names the file and how to obtain it
        path = charlesworth_weights_path()
    path = Path(path)
    if not path.exists():
        raise WeightsError(f"weights not found: {path}")
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as e:  # zipfile/format errors
        raise WeightsError(f"cannot read weights {path}: {e}") from e
    for k, shape in WEIGHT_SHAPES.items():
        if k not in arrays:
            raise WeightsError(f"{path}: missing array {k!r}")
        _check_float(arrays[k], k, path)
        if arrays[k].shape != shape:
            raise WeightsError(f"{path}: {k} has shape {arrays[k].shape}, expected {shape}")
    return {k: arrays[k].astype(np.float32) for k in WEIGHT_KEYS}


def convert_joblib(src: str | Path, out: str | Path) -> Path:
    """Convert the published joblib file to ``.npz`` with the array-only unpickler (numeric
    arrays within its size bounds only), checked by count, dtype (floating point) and shape."""
    from climbrl.agents.external.safe_pickle import load_arrays

    arrays = load_arrays(src)
    if len(arrays) != len(WEIGHT_KEYS):
        raise WeightsError(f"{src}: expected {len(WEIGHT_KEYS)} arrays, found {len(arrays)}")
    named = dict(zip(WEIGHT_KEYS, arrays, strict=True))
    for k, shape in WEIGHT_SHAPES.items():
        _check_float(named[k], k, src)
        if named[k].shape != shape:
            raise WeightsError(f"{src}: array {k} has shape {named[k].shape}, expected {shape}")
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, **named)
    return out


class CharlesworthNet(torch.nn.Module):
    def __init__(self, weights: dict[str, np.ndarray]) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(412, 512)
        self.fc2 = torch.nn.Linear(512, 256)
        self.pi = torch.nn.Linear(256, N_ACTIONS)
        self.fc3 = torch.nn.Linear(512, 256)
        self.vf = torch.nn.Linear(256, 1)
        with torch.no_grad():
            for name in ("fc1", "fc2", "pi", "fc3", "vf"):
                layer = getattr(self, name)
                layer.weight.copy_(torch.from_numpy(weights[f"{name}_w"].T.copy()))
                layer.bias.copy_(torch.from_numpy(weights[f"{name}_b"]))

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h1 = torch.relu(self.fc1(obs))
        logits = self.pi(torch.relu(self.fc2(h1)))
        value = self.vf(torch.relu(self.fc3(h1))).squeeze(-1)
        return logits, value


@lru_cache(maxsize=1)
def action_table() -> dict[tuple[int, ...], int]:
    """positions tuple -> action index."""
    return {pos: i for i, pos in enumerate(action_positions())}


def action_of(move: int, hand: int, table: dict[tuple[int, ...], int]) -> int:
    """The action index that plays ``move`` (a card mask) from ``hand``."""
    if move == 0:
        return PASS_ACTION
    cards = mask_to_cards(hand)
    pos = {c: i for i, c in enumerate(cards)}
    key = tuple(pos[c] for c in mask_to_cards(move))
    try:
        return table[key]
    except KeyError:
        raise ValueError(f"move at hand positions {key} has no action in that agent's action space") from None


def encode(decision: Decision) -> np.ndarray:
    """The 412-dim observation of the seat to act (layout in the module docstring), from the
    compiled encoder the rollouts use (:func:`~.charlesworth_compiled.encode_active`)."""
    o = decision.observation
    active = np.zeros(MAX_ACTIVE, dtype=np.int64)
    n = encode_active(o.hand, o.seat, np.array(o.cards_left, dtype=np.int64), np.array(o.played, dtype=np.int64),
                      np.array(o.types_played, dtype=np.int64), o.leading, o.to_beat, o.to_beat_type, o.passes, active)
    v = np.zeros(OBS_SIZE, dtype=np.float32)
    v[active[:n]] = 1.0
    return v


class CharlesworthAgent(Agent):
    games = ("big2",)
    """Plays the released network; sampling uses the seat's ``random.Random`` (reproducible)."""

    def __init__(self, greedy: bool = False, weights: str | Path | None = None) -> None:
        self.greedy = greedy
        self.name = "charlesworth:greedy" if greedy else "charlesworth:sample"
        self.net = CharlesworthNet(load_weights(weights)).eval()
        self.table = action_table()

    def _check_rules(self, decision: Decision) -> None:
        if decision.game.rules.name != "charlesworth":
            raise ValueError("the charlesworth agent plays only under the 'charlesworth' rules preset")

    def logits(self, decisions: Sequence[Decision]) -> tuple[np.ndarray, list[list[int]]]:
        """Network logits (B x 1695) and each decision's legal action indices (move order)."""
        obs = np.stack([encode(d) for d in decisions])
        with torch.no_grad():
            logits, _ = self.net(torch.from_numpy(obs))
        actions = [[action_of(m, d.hand, self.table) for m in d.moves] for d in decisions]
        return logits.numpy(), actions

    def act_batch(self, decisions: Sequence[Decision], rngs: Sequence[random.Random]) -> list[int]:
        if not decisions:
            return []
        self._check_rules(decisions[0])
        logits, actions = self.logits(decisions)
        picks = []
        for row, acts, rng in zip(logits, actions, rngs, strict=True):
            legal = row[acts].astype(np.float64)
            if self.greedy:
                picks.append(int(np.argmax(legal)))
                continue
            p = np.exp(legal - legal.max())
            cum = np.cumsum(p / p.sum())
            picks.append(min(int(np.searchsorted(cum, rng.random(), side="right")), len(acts) - 1))
        return picks

    def act(self, decision: Decision, rng: random.Random) -> int:
        return self.act_batch([decision], [rng])[0]
