"""The study's simple baselines: ``random`` and ``greedy``.

``greedy`` is the study's "heuristic that maximizes the immediate sub-reward", read as: shed as
many cards as possible now. It plays the legal move with the most cards; among those the
weakest (the first in the engine's canonical order, i.e. the lowest combination type, then the
lowest power); it passes only when passing is the only legal move. In any game: the legal move
with the most cards (:meth:`Game.move_size`), the first of those in the game's canonical order
(Dou Dizhu: the lowest type, then the shortest, then the lowest rank); in an auction, where no
move holds cards, the first legal action (a pass).
"""

from __future__ import annotations

import random

from climbrl.agents.base import Agent, Decision


class RandomAgent(Agent):
    """Uniform over the legal moves (pass included when it is legal)."""

    name = "random"

    def act(self, decision: Decision, rng: random.Random) -> int:
        return rng.randrange(len(decision.moves))


class GreedyAgent(Agent):
    name = "greedy"

    def act(self, decision: Decision, rng: random.Random) -> int:
        best, best_cards = 0, -1
        size = decision.game.move_size
        for i, m in enumerate(decision.moves):
            n = size(m)
            if n > best_cards:  # strict: the first (weakest) of the largest moves wins
                best, best_cards = i, n
        return best
