"""Rule agents by name: ``random``, ``greedy``, ``heuristic``, ``aggressive``, ``conservative``,
``charlesworth[:sample|:greedy]``, ``rlcard-rule`` (RLCard's Dou Dizhu rule agent, optional extra
``rlcard``: :mod:`climbrl.agents.external.rlcard_rule`), and the rollout search over the heuristic
or greedy policy, ``search[:S=48,K=10,rollout=heuristic,own=..,belief=0,value=win]`` (:mod:`climbrl.agents.search`;
Dou Dizhu's: ``search[:S=16,K=6,rollout=heuristic,own=..,value=score]``, :mod:`climbrl.agents.ddz_search`).

``heuristic``, ``aggressive`` and ``conservative`` name one agent per game: Big 2's
(:mod:`climbrl.agents.heuristic`) for ``big2`` (and for any game that is not Dou Dizhu, which
then refuses it), Dou Dizhu's (:mod:`climbrl.agents.doudizhu_rules`) for ``doudizhu``.

A trained policy (``checkpoint:PATH[#sample]``) is a network, which lives a layer up:
:func:`climbrl.learn.specs.make_agent` builds every spec, these and checkpoints. An agent that
plays one game only (:attr:`Agent.games`) is refused for another game with an error naming both.
"""

from __future__ import annotations

from climbrl.agents.base import Agent

AGENT_NAMES = ("random", "greedy", "heuristic", "aggressive", "conservative", "charlesworth", "rlcard-rule",
               "search")


def make_agent(spec: str, game: str = "big2") -> Agent:
    """Build a rule agent for ``game`` from its name; raises ``ValueError`` naming the spec when
    unknown or not made for ``game`` (a game name, with or without ``:preset``)."""
    name, colon, arg = spec.partition(":")
    if colon and name in AGENT_NAMES and name not in ("charlesworth", "search"):
        raise ValueError(f"agent {spec!r}: {name} takes no argument (write {name!r})")
    ddz = game.partition(":")[0] == "doudizhu"
    kind: type[Agent]
    args: tuple = ()
    if name == "random":
        from climbrl.agents.baselines import RandomAgent as kind
    elif name == "greedy":
        from climbrl.agents.baselines import GreedyAgent as kind
    elif name == "heuristic" and ddz:
        from climbrl.agents.doudizhu_rules import DdzHeuristicAgent as kind
    elif name in ("aggressive", "conservative") and ddz:
        from climbrl.agents.doudizhu_rules import DdzStyleAgent as kind

        args = (name == "aggressive",)
    elif name == "heuristic":
        from climbrl.agents.heuristic import HeuristicAgent as kind
    elif name in ("aggressive", "conservative"):
        from climbrl.agents.heuristic import RuleAgent as kind

        args = (name == "aggressive",)
    elif name == "charlesworth":
        from climbrl.agents.external.charlesworth import CharlesworthAgent as kind

        mode = arg or "sample"
        if mode not in ("sample", "greedy"):
            raise ValueError(f"agent {spec!r}: charlesworth takes ':sample' or ':greedy'")
        args = (mode == "greedy",)
    elif name == "rlcard-rule":
        from climbrl.agents.external.rlcard_rule import RLCardRuleAgent as kind

        args = (game,)
    elif name == "search" and ddz:
        from climbrl.agents.ddz_search import parse_ddz_search_spec
        from climbrl.agents.spec_options import split_base

        if split_base(spec)[0]:
            raise ValueError(f"agent {spec!r}: a search over a trained base policy is built by "
                             "climbrl.learn.specs.make_agent")
        return parse_ddz_search_spec(spec, lambda rule: make_agent(rule, "doudizhu"))
    elif name == "search":
        from climbrl.agents.search import SearchAgent, parse_search_spec

        check_game(SearchAgent, spec, game)
        return parse_search_spec(spec)
    elif name == "checkpoint":
        raise ValueError(f"agent {spec!r} is a trained policy: build it with climbrl.learn.specs.make_agent")
    else:
        raise ValueError(f"unknown agent {spec!r} (agents: {', '.join(AGENT_NAMES)}, checkpoint:PATH)")
    check_game(kind, spec, game)  # before building it: the public agent loads its weights
    return kind(*args)


def check_game(agent: Agent | type[Agent], spec: str, game: str) -> None:
    """``ValueError`` when ``agent`` (built from ``spec``; an agent or its class) does not play
    ``game``."""
    g = game.partition(":")[0]
    if agent.games is not None and g not in agent.games:
        raise ValueError(f"agent {spec!r} plays {', '.join(agent.games)} only, not {g}")
