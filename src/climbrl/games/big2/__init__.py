"""Big 2: rules presets, combinations, legal moves, game state and the PettingZoo env."""

from climbrl.games.big2.rules import PRESETS, Rules, RulesError, get_rules
from climbrl.games.big2.state import Big2Game, Big2Observation, Big2State, deal, load_game

__all__ = [
    "PRESETS", "Rules", "RulesError", "get_rules", "Big2Game", "Big2Observation", "Big2State",
    "deal", "load_game",
]
