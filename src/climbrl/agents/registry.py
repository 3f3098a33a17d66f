"""Agents by name: ``random``, ``greedy``, ``heuristic``, ``aggressive``, ``conservative``,
``charlesworth[:sample|:greedy]`` and ``checkpoint:PATH[#sample]`` (a trained policy; greedy
unless ``#sample``)."""

from __future__ import annotations

from climbrl.agents.base import Agent

AGENT_NAMES = ("random", "greedy", "heuristic", "aggressive", "conservative", "charlesworth")


def make_agent(spec: str) -> Agent:
    """Build an agent from its name; raises ``ValueError`` naming the spec when unknown."""
    name, _, arg = spec.partition(":")
    if name == "random":
        from climbrl.agents.baselines import RandomAgent

        return RandomAgent()
    if name == "greedy":
        from climbrl.agents.baselines import GreedyAgent

        return GreedyAgent()
    if name == "heuristic":
        from climbrl.agents.heuristic import HeuristicAgent

        return HeuristicAgent()
    if name in ("aggressive", "conservative"):
        from climbrl.agents.heuristic import RuleAgent

        return RuleAgent(aggressive=name == "aggressive")
    if name == "charlesworth":
        from climbrl.agents.external.charlesworth import CharlesworthAgent

        mode = arg or "sample"
        if mode not in ("sample", "greedy"):
            raise ValueError(f"agent {spec!r}: charlesworth takes ':sample' or ':greedy'")
        return CharlesworthAgent(greedy=mode == "greedy")
    if name == "checkpoint":
        if not arg:
            raise ValueError("agent 'checkpoint:PATH' needs a path")
        from climbrl.learn.policy import load_policy_agent

        path, _, mode = arg.partition("#")
        return load_policy_agent(path, mode=mode or "greedy")
    raise ValueError(f"unknown agent {spec!r} (agents: {', '.join(AGENT_NAMES)}, checkpoint:PATH)")
