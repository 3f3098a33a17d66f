"""What an agent thought of its legal moves at one decision (the interpretability window, live).

- A policy network (PPO, imitation) and the public agent: the softmax of its scores, a
  probability per legal move.
- A value network (DQN, DMC, SARSA...): its Q-value per legal move (the softmax of Q-values is no
  distribution of anything, so none is shown).
- The rollout search: each candidate's share of wins over the sampled deals, its mean cards
  left, and its visits (the deals it was played out on); read from the agent's record of its
  last search (:attr:`climbrl.agents.search.SearchAgent.last_search`), not computed again.
- A rule agent: its choice only (it scores nothing).

A :class:`~climbrl.agents.bidding.BiddingAgent` is explained by the part that decided.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from climbrl.agents import Agent, Decision

TOP = 12
"""Rows shown: the best-scored moves (and always the one played)."""


def _decider(agent: Agent, decision: Decision) -> Agent:
    from climbrl.agents.bidding import BiddingAgent, is_bid

    while isinstance(agent, BiddingAgent):
        agent = agent.bidder if is_bid(decision) else agent.play
    return agent


def explain(agent: Agent, decision: Decision, chosen: int, label) -> dict[str, Any]:
    """``{"kind", "agent", "what", "rows"}`` for ``agent``'s choice ``chosen`` (an index into
    ``decision.moves``); ``label`` formats a move. Rows: ``{"move", "index", "value", "chosen"}`` (and
    ``visits``, ``cards`` for a search), best first."""
    from climbrl.agents.ddz_search import DdzSearchAgent
    from climbrl.agents.external.charlesworth import CharlesworthAgent
    from climbrl.agents.search import SearchAgent
    from climbrl.evaluate.behaviour import move_probabilities
    from climbrl.learn.policy import PolicyAgent

    who = _decider(agent, decision)
    base = {"agent": getattr(agent, "name", type(agent).__name__), "n_legal": len(decision.moves)}
    if len(decision.moves) == 1:
        return {**base, "kind": "forced", "what": "the only legal move", "rows": _table(label, decision, [1.0], chosen)}
    if isinstance(who, DdzSearchAgent):
        last = getattr(who, "last_search", None)
        if not last:
            return {**base, "kind": "forced", "what": "played without a search (a forced move, a single candidate "
                    "or a bid)", "rows": _table(label, decision, None, chosen)}
        cand, means, wins, samples = last["candidates"], last["returns"], last["wins"], last["samples"]
        by_points = last.get("value", "score") == "score"
        rows = [{"move": label(decision.moves[int(cand[j])]), "index": int(cand[j]), "value": float(wins[j]),
                 "points": float(means[j]),
                 "visits": samples, "chosen": int(cand[j]) == chosen}
                for j in np.argsort(-np.asarray(means if by_points else wins, dtype=np.float64), kind="stable")]
        return {**base, "kind": "search", "what": "share of the sampled deals won by playing it out, and the mean "
                "points (the score with its doublings); both weighted over the deals as the facts make them "
                f"likely; the choice: the {'most points' if by_points else 'highest win share'} "
                f"({samples} deals per candidate)", "rows": rows}
    if isinstance(who, SearchAgent):
        last = getattr(who, "last_search", None)
        if not last:
            return {**base, "kind": "forced", "what": "played without a search (a forced move)",
                    "rows": _table(label, decision, None, chosen)}
        cand, wins, cards, samples = last["candidates"], last["wins"], last["cards"], last["samples"]
        rows = []
        for j in np.argsort(-np.asarray(wins, dtype=np.float64), kind="stable"):
            i = int(cand[j])
            rows.append({"move": label(decision.moves[i]), "index": i, "value": float(wins[j]) / samples,
                         "cards": float(cards[j]) / samples, "visits": samples, "chosen": i == chosen})
        return {**base, "kind": "search", "what": "share of the sampled deals won by playing it out "
                f"({samples} deals per candidate; cards: mean cards left)", "rows": rows}
    if isinstance(who, PolicyAgent) and not who.scores_are_logits:
        return {**base, "kind": "q", "what": "the network's Q-value (expected return) of each move",
                "rows": _table(label, decision, who.move_scores(decision), chosen)}
    probs = move_probabilities(who, [decision], [chosen])[0]
    if isinstance(who, (PolicyAgent, CharlesworthAgent)):
        return {**base, "kind": "policy", "what": "the policy's probability of each move",
                "rows": _table(label, decision, probs, chosen)}
    return {**base, "kind": "rule", "what": "a rule agent: it scores no moves, this is its choice",
            "rows": _table(label, decision, None, chosen)}


def _table(label, decision: Decision, values, chosen: int) -> list[dict[str, Any]]:
    """Rows best first (the ``TOP`` best and the chosen one); without values, the choice alone."""
    if values is None:
        return [{"move": label(decision.moves[chosen]), "index": chosen, "value": None, "chosen": True}]
    values = np.asarray(values, dtype=np.float64)
    order = [int(i) for i in np.argsort(-values, kind="stable")]
    keep = order[:TOP] + ([chosen] if chosen not in order[:TOP] else [])
    return [{"move": label(decision.moves[i]), "index": i, "value": float(values[i]), "chosen": i == chosen}
            for i in keep]
