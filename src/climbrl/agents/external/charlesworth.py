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
from itertools import combinations
from pathlib import Path

import numpy as np
import torch

from climbrl.agents.base import Agent, Decision
from climbrl.cards import mask_to_cards
from climbrl.games.big2 import combos
from climbrl.paths import CHARLESWORTH_WEIGHTS, charlesworth_weights_path, public_agent_missing

OBS_SIZE = 412
N_ACTIONS = 1695
PASS_ACTION = 1694
WEIGHT_KEYS = ("fc1_w", "fc1_b", "fc2_w", "fc2_b", "pi_w", "pi_b", "fc3_w", "fc3_b", "vf_w", "vf_b")
WEIGHT_SHAPES = {
    "fc1_w": (412, 512), "fc1_b": (512,), "fc2_w": (512, 256), "fc2_b": (256,),
    "pi_w": (256, 1695), "pi_b": (1695,), "fc3_w": (512, 256), "fc3_b": (256,),
    "vf_w": (256, 1), "vf_b": (1,),
}
DEFAULT_WEIGHTS = CHARLESWORTH_WEIGHTS

# prev-hand type slots 18..25. That engine also sets "full house" for a plain straight (in
# the play to beat and in the types a player has played); we reproduce it, since the network
# was trained on it.
_TYPE_SLOT = {
    combos.SINGLE: (0,), combos.PAIR: (1,), combos.TRIPLE: (2,), combos.TWO_PAIR: (3,),
    combos.FOUR_OF_A_KIND: (4,), combos.STRAIGHT: (5, 7), combos.FLUSH: (6,),
    combos.FULL_HOUSE: (7,), combos.STRAIGHT_FLUSH: (5, 6),
}
# types-played slots 21..26: pair, triple, 4-card hand, straight, flush, full house
_PLAYED_SLOT = {
    combos.PAIR: (0,), combos.TRIPLE: (1,), combos.TWO_PAIR: (2,), combos.FOUR_OF_A_KIND: (2,),
    combos.STRAIGHT: (3, 5), combos.FLUSH: (4,), combos.FULL_HOUSE: (5,), combos.STRAIGHT_FLUSH: (3, 4),
}


class WeightsError(ValueError):
    """Missing, unreadable or mismatched weights."""


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
        if arrays[k].shape != shape:
            raise WeightsError(f"{path}: {k} has shape {arrays[k].shape}, expected {shape}")
    return {k: arrays[k].astype(np.float32) for k in WEIGHT_KEYS}


def convert_joblib(src: str | Path, out: str | Path) -> Path:
    """Convert the published joblib file to ``.npz`` with the array-only unpickler."""
    from climbrl.agents.external.safe_pickle import load_arrays

    arrays = load_arrays(src)
    if len(arrays) != len(WEIGHT_KEYS):
        raise WeightsError(f"{src}: expected {len(WEIGHT_KEYS)} arrays, found {len(arrays)}")
    named = dict(zip(WEIGHT_KEYS, arrays, strict=True))
    for k, shape in WEIGHT_SHAPES.items():
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


def action_positions() -> list[tuple[int, ...]]:
    """The 1695 actions as hand positions, in that agent's order (its ``actionIndices.pkl``).

    Hand positions index the hand sorted by card id, so cards of one rank sit at most 3 apart:
    a pair or a triple spans at most 4 positions, a four-card hand is two such pairs, and every
    5 of the 13 positions is an action (lexicographic order in each block).
    """
    n = 13
    near = [(i, j) for i in range(n) for j in range(i + 1, min(i + 4, n))]
    acts: list[tuple[int, ...]] = [(i,) for i in range(n)]
    acts += near
    acts += [(i, j, k) for i in range(n) for j in range(i + 1, n) for k in range(j + 1, min(i + 4, n))]
    acts += [a + b for a in near for b in near if b[0] > a[1]]
    acts += list(combinations(range(n), 5))
    acts.append(())  # pass
    return acts


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


def _deciding_card(mask: int, typ: int) -> tuple[int, int]:
    """(rank, suit or -1) that the observation shows for the play to beat, as that engine does:
    the highest card for most types; for a straight the rank of its middle card and for a full
    house the rank of its triple, both without a suit."""
    cards = mask_to_cards(mask)
    if typ == combos.FULL_HOUSE:
        ranks = [c >> 2 for c in cards]
        return max(set(ranks), key=ranks.count), -1
    if typ == combos.STRAIGHT:
        return cards[2] >> 2, -1
    return cards[-1] >> 2, cards[-1] & 3


def encode(decision: Decision) -> np.ndarray:
    """The 412-dim observation of the seat to act (layout in the module docstring)."""
    obs = decision.observation
    v = np.zeros(OBS_SIZE, dtype=np.float32)
    hand = mask_to_cards(obs.hand)
    rank_count = [0] * 13
    suit_count = [0] * 4
    for c in hand:
        rank_count[c >> 2] += 1
        suit_count[c & 3] += 1
    in_run = [False] * 13
    run = 0
    for r in range(13):
        run = run + 1 if rank_count[r] else 0
        if run >= 5:
            for k in range(r - run + 1, r + 1):
                in_run[k] = True
    for k, c in enumerate(hand):
        base = 22 * k
        r, s = c >> 2, c & 3
        v[base + r] = 1
        v[base + 13 + s] = 1
        if rank_count[r] >= 2:
            v[base + 17] = 1
        if rank_count[r] >= 3:
            v[base + 18] = 1
        if rank_count[r] == 4:
            v[base + 19] = 1
        if in_run[r]:
            v[base + 20] = 1
        if suit_count[s] >= 5:
            v[base + 21] = 1
    seat = obs.seat
    high = 0
    for j in range(3):
        other = (seat + 1 + j) % 4
        base = 286 + 27 * j
        left = obs.cards_left[other]
        if left > 0:
            v[base + left - 1] = 1
        played = obs.played[other]
        high |= played
        for c in mask_to_cards(played >> 44):  # ids 44..51 here = 45..52 there (aces and twos)
            v[base + 13 + c] = 1
        types = obs.types_played[other]
        for typ, slots in _PLAYED_SLOT.items():
            if types >> typ & 1:
                for sl in slots:
                    v[base + 21 + sl] = 1
    high |= obs.played[seat]
    for c in mask_to_cards(high >> 36):  # queens, kings, aces, twos
        v[367 + c] = 1
    if obs.leading:
        v[383 + 17] = 1
    else:
        rank, suit = _deciding_card(obs.to_beat, obs.to_beat_type)
        v[383 + rank] = 1
        if suit >= 0:
            v[383 + 13 + suit] = 1
        for sl in _TYPE_SLOT[obs.to_beat_type]:
            v[383 + 18 + sl] = 1
        v[383 + 26 + min(obs.passes, 2)] = 1
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
