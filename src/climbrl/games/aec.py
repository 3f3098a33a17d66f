"""The PettingZoo AEC machinery that every card-game env shares (``big2_v0``, ``doudizhu_v0``).

A game's env subclasses :class:`CardGameEnv` and says only what differs between games: how it
builds its game from rules, the size of its observation and of its action space, how an action
maps to an engine move (:meth:`CardGameEnv.move_of`), which actions are legal for a seat
(:meth:`CardGameEnv.legal_actions`), the observation vector and the rendering. Seating, the
seeded deal, rewards at the end, infos with the legal moves and their text, dead steps and the
order-enforcing wrapper are here, once.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv


class CardGameEnv(AECEnv):
    """An AEC env over one engine game; agents ``player_0`` .. are the seats."""

    metadata: dict[str, Any] = {"render_modes": ["human", "ansi"], "name": "", "is_parallelizable": False}
    num_players: int = 0
    obs_size: int = 0

    def __init__(self, game: Any, num_actions: int, render_mode: str | None = None) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}")
        self.game = game
        self.num_actions = num_actions
        self.render_mode = render_mode
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_space = spaces.Dict(
            {
                "observation": spaces.Box(0.0, 1.0, (self.obs_size,), dtype=np.float32),
                "action_mask": spaces.Box(0, 1, (num_actions,), dtype=np.int8),
            }
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(num_actions) for a in self.possible_agents}
        self.np_random, _ = seeding.np_random(None)
        self.state: Any = None

    # --- what a game's env provides ---------------------------------------------------------
    def encode(self, seat: int) -> np.ndarray:
        """The observation vector of ``seat`` (built from that seat's observation only)."""
        raise NotImplementedError

    def legal_actions(self) -> Any:
        """The action indices that are legal for the seat to act (an index array or a slice)."""
        raise NotImplementedError

    def move_of(self, action: Any, legal: list[int]) -> int:
        """The engine move that ``action`` stands for; ``ValueError`` when it is not legal."""
        raise NotImplementedError

    def render_lines(self) -> list[str]:
        raise NotImplementedError

    # --- shared ----------------------------------------------------------------------------
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
        mask = np.zeros(self.num_actions, dtype=np.int8)
        if not self.state.is_terminal() and self.state.current_player == seat:
            mask[self.legal_actions()] = 1
        return {"observation": self.encode(seat), "action_mask": mask}

    def step(self, action: Any) -> None:
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            self._was_dead_step(action)
            return
        assert self.state is not None
        self.state.apply(self.move_of(action, self.state.legal_moves()))
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
        assert self.state is not None
        return "\n".join(self.render_lines())

    def close(self) -> None:
        pass


def wrapped(e: CardGameEnv) -> AECEnv:
    """``e`` inside PettingZoo's order enforcing wrapper (what ``env()`` of each game returns)."""
    from pettingzoo.utils import wrappers

    return wrappers.OrderEnforcingWrapper(e)
