"""Anything that picks a move: baselines, rule agents, external agents, learned policies."""

from climbrl.agents.base import Agent, Decision
from climbrl.agents.registry import AGENT_NAMES, make_agent

__all__ = ["Agent", "Decision", "AGENT_NAMES", "make_agent"]
