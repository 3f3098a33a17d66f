"""``big2_v0``: a PettingZoo AEC environment over the Big 2 engine.

Agents ``player_0`` .. ``player_3`` are the seats. Action ``i`` plays the ``i``-th legal move
in the engine's canonical order (:mod:`climbrl.games.big2.combos`); the action space is
``Discrete(8192)``, a bound no hand can exceed (legal moves are distinct subsets of a 13-card
hand), and ``action_mask`` marks the first ``len(legal moves)`` entries. The acting agent's
``infos`` also hold ``legal_moves`` (card masks, 0 = pass) and ``legal_moves_text``.

Observation (``float32``, all in [0, 1]); seats are relative to the observer: 0 itself,
1 the next to act after it, 2 across, 3 the one before it.

=========  ======================================================
index      meaning
=========  ======================================================
0-51       own hand (card id = rank * 4 + suit, see :mod:`climbrl.cards`)
52-103     the play to beat (all zero when leading)
104-311    cards played so far, 52 per relative seat 0..3
312-315    cards left per relative seat / 13
316-319    relative seat that made the play to beat (one-hot; zero when leading)
320        1 if the observer leads (may play anything, may not pass)
321-323    passes since the play to beat: 0, 1, 2 (one-hot)
324-327    relative seats locked out of the trick (``pass_locks_out`` rules)
=========  ======================================================

Rewards come only at the end: the engine's returns under the chosen rules.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv

from climbrl.cards import format_cards
from climbrl.games.big2.combos import MAX_LEGAL_MOVES
from climbrl.games.big2.rules import NUM_PLAYERS, Rules
from climbrl.games.big2.state import Big2Game, Big2State

OBS_SIZE = 328


def _bits(mask: int, out: np.ndarray, offset: int) -> None:
    while mask:
        low = mask & -mask
        out[offset + low.bit_length() - 1] = 1.0
        mask ^= low


def encode_observation(state: Big2State, seat: int) -> np.ndarray:
    """The observation vector of ``seat`` (layout in the module docstring)."""
    obs = state.observation(seat)
    v = np.zeros(OBS_SIZE, dtype=np.float32)
    _bits(obs.hand, v, 0)
    _bits(obs.to_beat, v, 52)
    for rel in range(NUM_PLAYERS):
        s = (seat + rel) % NUM_PLAYERS
        _bits(obs.played[s], v, 104 + 52 * rel)
        v[312 + rel] = obs.cards_left[s] / 13.0
        if obs.locked_out >> s & 1:
            v[324 + rel] = 1.0
    if obs.to_beat_player >= 0:
        v[316 + (obs.to_beat_player - seat) % NUM_PLAYERS] = 1.0
    v[320] = float(obs.leading and obs.current_player == seat)
    if not obs.leading:
        v[321 + min(obs.passes, 2)] = 1.0
    return v


class raw_env(AECEnv):  # noqa: N801  (PettingZoo's naming convention)
    metadata = {"render_modes": ["human", "ansi"], "name": "big2_v0", "is_parallelizable": False}

    def __init__(self, rules: Rules | str = "paper", render_mode: str | None = None) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.game = Big2Game(rules)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(NUM_PLAYERS)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (MAX_LEGAL_MOVES,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(MAX_LEGAL_MOVES) for a in self.possible_agents}
        self.np_random, _ = seeding.np_random(None)
        self.state: Big2State | None = None

    def observation_space(self, agent: str) -> gymnasium.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self.np_random, _ = seeding.np_random(seed)
        deal_seed = int(self.np_random.integers(0, 2**62))
        self.state = self.game.new_game(seed=deal_seed)
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.agent_selection = self.possible_agents[self.state.current_player]
        self._update_infos()

    def _update_infos(self) -> None:
        assert self.state is not None
        self.infos = {a: {"legal_moves": [], "legal_moves_text": []} for a in self.agents}
        if not self.state.is_terminal():
            legal = list(self.state.legal_moves())
            self.infos[self.agent_selection] = {
                "legal_moves": legal,
                "legal_moves_text": [self.game.format_move(m) for m in legal],
            }

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        assert self.state is not None, "call reset() first"
        seat = self.agent_name_mapping[agent]
        mask = np.zeros(MAX_LEGAL_MOVES, dtype=np.int8)
        if not self.state.is_terminal() and self.state.current_player == seat:
            mask[: len(self.state.legal_moves())] = 1
        return {"observation": encode_observation(self.state, seat), "action_mask": mask}

    def step(self, action: int | None) -> None:
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            self._was_dead_step(action)
            return
        assert self.state is not None
        legal = self.state.legal_moves()
        if action is None or not 0 <= int(action) < len(legal):
            raise ValueError(
                f"action {action} is not legal for {self.agent_selection}: "
                f"the legal actions are 0..{len(legal) - 1}"
            )
        self.state.apply(legal[int(action)])
        self._cumulative_rewards[self.agent_selection] = 0.0
        if self.state.is_terminal():
            returns = self.state.returns()
            self.rewards = {a: float(returns[i]) for i, a in enumerate(self.possible_agents)}
            self.terminations = {a: True for a in self.agents}
        else:
            self.agent_selection = self.possible_agents[self.state.current_player]
        self._accumulate_rewards()
        self._update_infos()
        if self.render_mode == "human":
            print(self.render())

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without a render_mode")
            return None
        s = self.state
        assert s is not None
        lines = [f"to beat: {format_cards(s.last_mask) or '-'} (seat {s.last_player})"]
        for i in range(NUM_PLAYERS):
            marker = "*" if i == s.current_player else " "
            lines.append(f"{marker} player_{i}: {format_cards(s.hands[i])}")
        return "\n".join(lines)

    def close(self) -> None:
        pass


def env(rules: Rules | str = "paper", render_mode: str | None = None) -> AECEnv:
    """The wrapped environment (PettingZoo's order enforcing wrapper)."""
    from pettingzoo.utils import wrappers

    e = raw_env(rules=rules, render_mode=render_mode)
    return wrappers.OrderEnforcingWrapper(e)
