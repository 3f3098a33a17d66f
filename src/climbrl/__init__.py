"""climbrl: a self-play reinforcement-learning lab for climbing card games."""

__version__ = "0.1.0"
