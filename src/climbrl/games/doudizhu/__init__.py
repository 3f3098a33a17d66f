"""Dou Dizhu: rules presets, the rank-count notation and action table, combinations, the
auction, the game state and the PettingZoo env."""
