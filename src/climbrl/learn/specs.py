"""Every agent spec, trained policies included: ``checkpoint:PATH[#sample|#epsilon]``, the rollout
search over one (``search:checkpoint:PATH,S=..,K=..``) and the rule agents of
:func:`climbrl.agents.make_agent`.

A checkpoint is loaded for the game it is asked to play: one trained for another game (or with
another encoder version) is refused with a :class:`~climbrl.learn.checkpoint.CheckpointError`
naming both.
"""

from __future__ import annotations

from climbrl.agents import Agent
from climbrl.agents.registry import check_game
from climbrl.agents.registry import make_agent as make_rule_agent


def make_agent(spec: str, game: str = "big2") -> Agent:
    """An agent from its spec for ``game`` (a name, with or without ``:preset``); ``ValueError``
    (or :class:`CheckpointError`) naming the spec when it cannot be built."""
    name, _, arg = spec.partition(":")
    if name == "search":
        from climbrl.agents.search import parse_search_spec, split_base

        base, _ = split_base(spec)
        if base and game.partition(":")[0] == "doudizhu":  # the play-outs' policy may be the base policy itself
            from climbrl.agents.ddz_search import parse_ddz_search_spec

            policy = make_agent(base, game)
            if not hasattr(policy, "move_scores"):
                raise ValueError(f"agent {spec!r}: the base policy {base!r} has no move scores")
            return parse_ddz_search_spec(spec, lambda rule: make_rule_agent(rule, "doudizhu"), base_agent=policy,
                                         base=base)
        if base:  # the rollout search over a trained base policy: its network ranks the candidates (and
            # may play seats of the rollouts: own=base, rollout=base)
            policy = make_agent(base, game)
            if not hasattr(policy, "move_scores"):
                raise ValueError(f"agent {spec!r}: the base policy {base!r} has no move scores")
            weights = policy.net.weights() if hasattr(getattr(policy, "net", None), "weights") else None
            # an action-in network has no compiled form: it plays the rollouts through the engine
            agent = parse_search_spec(spec, ranker=policy.move_scores, base_weights=weights, base_agent=policy,
                                      make_rule=lambda rule: make_rule_agent(rule, game))
            check_game(agent, spec, game)
            return agent
    if name == "checkpoint":
        if not arg:
            raise ValueError("agent 'checkpoint:PATH' needs a path")
        from climbrl.learn.policy import load_policy_agent

        path, _, mode = arg.partition("#")
        return load_policy_agent(path, mode=mode or "greedy", game=game)
    return make_rule_agent(spec, game)


__all__ = ["make_agent"]
