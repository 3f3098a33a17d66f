"""Random play shared by the games' tests: a whole game through the engine API, and a whole
episode through a PettingZoo env (the same loop for Big 2 and Dou Dizhu)."""

from __future__ import annotations

import random

import numpy as np


def play(game, seed: int, choice_seed: int, check=None):
    """Play a game from ``seed`` with uniform random moves (``choice_seed``); ``check(state, rng)``
    runs before every move; the game must end within ``game.max_game_length`` moves."""
    s = game.new_game(seed=seed)
    rng = random.Random(choice_seed)
    steps = 0
    while not s.is_terminal():
        if check:
            check(s, rng)
        moves = s.legal_moves()
        s.apply(moves[rng.randrange(len(moves))])
        steps += 1
        assert steps <= game.max_game_length
    return s


def play_prefix(game, seed: int, choice_seed: int, moves: int):
    """The state after at most ``moves`` uniform random moves of a game from ``seed`` (choices from
    ``choice_seed``), or None when the game ended within them."""
    s = game.new_game(seed=seed)
    rng = random.Random(choice_seed)
    for _ in range(moves):
        if s.is_terminal():
            break
        legal = s.legal_moves()
        s.apply(legal[rng.randrange(len(legal))])
    return None if s.is_terminal() else s


def env_episode_rewards(e, rng: np.random.Generator) -> dict[str, float]:
    """Play one episode of a reset AEC env with uniform random legal actions (from the action
    mask); each agent's summed rewards."""
    total = {a: 0.0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, reward, term, trunc, _ = e.last()
        total[agent] += reward
        if term or trunc:
            e.step(None)
            continue
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return total
