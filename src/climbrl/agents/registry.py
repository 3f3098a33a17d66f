"""Rule agents by name: ``random``, ``greedy``, ``heuristic``, ``aggressive``, ``conservative``,
``charlesworth[:sample|:greedy]``, and the rollout search over the heuristic or greedy policy,
``search[:S=48,K=10,rollout=heuristic,belief=0]`` (:mod:`climbrl.agents.search`).

A trained policy (``checkpoint:PATH[#sample]``) is a network, which lives a layer up:
:func:`climbrl.learn.specs.make_agent` builds every spec, these and checkpoints. An agent that
plays one game only (:attr:`Agent.games`) is refused for another game with an error naming both.
"""

from __future__ import annotations

from climbrl.agents.base import Agent

AGENT_NAMES = ("random", "greedy", "heuristic", "aggressive", "conservative", "charlesworth", "search")


def make_agent(spec: str, game: str = "big2") -> Agent:
    """Build a rule agent for ``game`` from its name; raises ``ValueError`` naming the spec when
    unknown or not made for ``game`` (a game name, with or without ``:preset``)."""
    name, _, arg = spec.partition(":")
    agent: Agent
    if name == "random":
        from climbrl.agents.baselines import RandomAgent

        agent = RandomAgent()
    elif name == "greedy":
        from climbrl.agents.baselines import GreedyAgent

        agent = GreedyAgent()
    elif name == "heuristic":
        from climbrl.agents.heuristic import HeuristicAgent

        agent = HeuristicAgent()
    elif name in ("aggressive", "conservative"):
        from climbrl.agents.heuristic import RuleAgent

        agent = RuleAgent(aggressive=name == "aggressive")
    elif name == "charlesworth":
        from climbrl.agents.external.charlesworth import CharlesworthAgent

        mode = arg or "sample"
        if mode not in ("sample", "greedy"):
            raise ValueError(f"agent {spec!r}: charlesworth takes ':sample' or ':greedy'")
        agent = CharlesworthAgent(greedy=mode == "greedy")
    elif name == "search":
        from climbrl.agents.search import parse_search_spec

        agent = parse_search_spec(spec)
    elif name == "checkpoint":
        raise ValueError(f"agent {spec!r} is a trained policy: build it with climbrl.learn.specs.make_agent")
    else:
        raise ValueError(f"unknown agent {spec!r} (agents: {', '.join(AGENT_NAMES)}, checkpoint:PATH)")
    check_game(agent, spec, game)
    return agent


def check_game(agent: Agent, spec: str, game: str) -> None:
    """``ValueError`` when ``agent`` (built from ``spec``) does not play ``game``."""
    g = game.partition(":")[0]
    if agent.games is not None and g not in agent.games:
        raise ValueError(f"agent {spec!r} plays {', '.join(agent.games)} only, not {g}")
