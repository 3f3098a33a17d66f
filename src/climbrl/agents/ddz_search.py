"""Decision-time search for Dou Dizhu (``search[:S=16,K=6,rollout=..,own=..,value=score]`` for
``doudizhu``; over a trained policy ``search:checkpoint:PATH,...``, built by
:func:`climbrl.learn.specs.make_agent`). Issue 25, part 4: Big 2's champion search
(:mod:`climbrl.agents.search`) for the other game.

At each play decision with a real choice the agent

1. **samples** ``S`` deals of the cards it cannot see to the two other seats, from its own
   observation only (:func:`sample_hands`);
2. takes the top ``K`` legal moves of the **base policy's ranking** (:meth:`DdzSearchAgent.candidates_of`);
3. plays each candidate on every sampled deal and **rolls the game out to the end** with the
   rollout policies (the same deals and the same random streams for every candidate: common
   random numbers), all rollouts of a decision in lockstep, so a network plays them in one
   batch per policy and step;
4. plays the candidate with the **highest mean return** of its seat (``value=score``: the score
   with the bomb, rocket and spring doublings, by role, what ADP counts) or the **most wins**
   (``value=win``: what WP counts), means weighted over the deals (*Weights* below); ties go to
   the better rank in the base policy's order.

Choices, and why:

- *Only the observation.* The agent gets a :class:`~climbrl.agents.base.Decision`, never the
  state. The sampled deals are built from public fields and its own hand, so moving the other
  seats' hidden cards among them in any way consistent with what it has seen cannot change its
  choice (``tests/test_ddz_search.py`` checks it on replayed games, with a control that peeks).
- *What the sample respects.* Hard facts only: the cards each other seat holds (public counts),
  the cards played (public, removed from the pool) and the kitty, which the landlord took face
  up: while the landlord has not played as many cards of a rank as the kitty held, it still
  holds the difference (cards of one rank are alike, so that is exactly what is known). Under
  every preset a seat may pass when it could beat the table, so a pass proves nothing. The
  known cards are placed and the rest shuffled with the ``random.Random`` the runner passes
  (seeded per game and seat) and dealt by the counts: same seed, same samples, same move.
- *Weights.* That shuffle is uniform over the cards left, which is not the deal conditioned on the
  facts: a hand that played ``u`` cards of a rank and holds ``y`` more was dealt ``y + u``, and a
  deal's chance goes with ``1 / (y + u)!`` per rank and seat where the shuffle's goes with
  ``1 / y!``. Unweighted, a seat that played a pair would look three times likelier than it is to
  hold the pair that completes its bomb. So every sample carries the weight
  ``prod 1 / C(y + u, u)`` over the other seats and ranks (:func:`deal_weights`; the landlord's
  ``u`` counts only what it played beyond its kitty cards), and a candidate's value is the
  weighted mean over the samples: the estimate of its value under the deal conditioned on the
  facts (``tests/test_ddz_search.py`` checks it against a rejection sampler of whole deals).
- *The sampled game.* :func:`rebuild` deals the sampled hands as they were before the first play
  (each seat's hand plus what it has played, the landlord's less the kitty) and replays the
  public auction and plays through the engine, so every sampled game is a game of the rules
  that reaches this very observation (checked move by move by the engine).
- *Candidates.* The base policy's ranking (a checkpoint's move scores; ties in the order of the
  legal moves). Without one, the rollout policy's own choice comes first, then the other legal
  moves by the number of cards they shed (most first), ties in the legal order. When passing is
  legal and not among the first ``K``, it replaces the ``K``-th when ``K`` >= 2 (holding back is
  always worth scoring). With ``K`` >= the number of legal moves every move is scored.
- *Rollout policies.* ``rollout`` plays the two other seats, ``own`` the searching seat's later
  turns: a rule agent of the game (``heuristic`` by default, ``greedy``, ``random``,
  ``aggressive``, ``conservative``) or ``base``, the checkpoint itself (greedy), the default over
  a checkpoint: the search then improves on the learned policy with the learned policy's own
  play, as DouZero's authors suggest. Each rollout's seats draw from their own streams, seeded
  from the agent's ``rng`` once per sampled deal.
- *Bids.* The search plays the play phase; an auction decision goes to the base policy (its bid
  model) or, without one, to the ``own`` rule agent.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from climbrl.agents.base import Agent, Decision
from climbrl.agents.runner import play_candidates, play_out
from climbrl.agents.spec_options import parse_options

FULL = np.array([4] * 13 + [1, 1], dtype=np.int64)
"""The deck as rank counts (``3..A, 2, B, R``)."""
RULE_POLICIES = ("heuristic", "greedy", "random", "aggressive", "conservative")
VALUES = ("score", "win")


def unseen_cards(obs: Any) -> np.ndarray:
    """The rank counts the other two seats hold together: the deck less the own hand and every
    card played."""
    return FULL - np.asarray(obs.hand, dtype=np.int64) - np.asarray(obs.played, dtype=np.int64).sum(axis=0)


def known_cards(obs: Any) -> np.ndarray:
    """``(3, 15)`` rank counts each seat is known to hold beyond the own hand: the kitty cards
    the landlord has not played yet (nothing when the seat is the landlord, or in the auction)."""
    known = np.zeros((3, len(FULL)), dtype=np.int64)
    if obs.landlord >= 0 and obs.landlord != obs.seat:
        kitty = np.asarray(obs.kitty, dtype=np.int64)
        known[obs.landlord] = np.maximum(kitty - np.asarray(obs.played[obs.landlord], dtype=np.int64), 0)
    return known


def sample_hands(obs: Any, rng: random.Random, n: int) -> np.ndarray:
    """``n`` deals ``(n, 3, 15)`` of the current hands consistent with the seat's observation:
    its own hand as it is, each other seat holding its public count, the landlord its known kitty
    cards, the rest of the unseen cards uniform (module docstring)."""
    seat = obs.seat
    others = [(seat + 1) % 3, (seat + 2) % 3]
    known = known_cards(obs)
    rest = unseen_cards(obs) - known.sum(axis=0)
    need = [int(obs.cards_left[o]) - int(known[o].sum()) for o in others]
    if rest.min() < 0 or min(need) < 0 or sum(need) != int(rest.sum()):
        raise ValueError(f"the observation of seat {seat} is not consistent: {int(rest.sum())} unseen cards "
                         f"for {need} to deal")
    cards = np.repeat(np.arange(len(FULL)), rest).tolist()
    out = np.zeros((n, 3, len(FULL)), dtype=np.int64)
    out[:, seat] = np.asarray(obs.hand, dtype=np.int64)
    for i in range(n):
        rng.shuffle(cards)
        first = np.bincount(cards[:need[0]], minlength=len(FULL))
        out[i, others[0]] = known[others[0]] + first
        out[i, others[1]] = known[others[1]] + (rest - first)
    return out


_LOG_FACTORIAL = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, 64)))])


def deal_weights(obs: Any, hands: np.ndarray) -> np.ndarray:
    """Importance weights (summing to 1) of deals drawn by :func:`sample_hands`, that make their
    weighted means estimates under the deal conditioned on what the seat has seen (module
    docstring, *Weights*): ``prod 1 / C(y + u, u)`` over the two other seats and the ranks, ``y``
    the seat's hidden count (its known kitty cards left out), ``u`` what it has played (the
    landlord: beyond its kitty cards)."""
    hands = np.asarray(hands, dtype=np.int64)
    known = known_cards(obs)
    played = np.asarray(obs.played, dtype=np.int64)
    kitty = np.asarray(obs.kitty, dtype=np.int64)
    log_w = np.zeros(len(hands))
    for p in ((obs.seat + 1) % 3, (obs.seat + 2) % 3):
        u = np.maximum(played[p] - (kitty if p == obs.landlord else 0), 0)
        y = hands[:, p] - known[p]
        log_w -= (_LOG_FACTORIAL[y + u] - _LOG_FACTORIAL[y]).sum(axis=1)  # log C(y + u, u) less its constant log u!
    w = np.exp(log_w - log_w.max())
    return w / w.sum()


def rebuild(obs: Any, game: Any, hands: np.ndarray) -> Any:
    """The game that reaches ``obs`` with ``hands`` (``(3, 15)``, the hands held now): dealt as
    before the first play and replayed through the engine (every move checked)."""
    start = np.asarray(hands, dtype=np.int64) + np.asarray(obs.played, dtype=np.int64)
    kitty = np.asarray(obs.kitty, dtype=np.int64)
    start[obs.landlord] -= kitty
    first = obs.auction[0][0] if obs.auction else 0
    state = game.new_game(hands=[h.astype(np.int8) for h in start], kitty=kitty.astype(np.int8),
                          first_bidder=first)
    for _, a in obs.auction:
        state.apply(a)
    for _, m in obs.history:
        state.apply(m)
    return state


def keep_pass(d: Decision, cand: np.ndarray) -> np.ndarray:
    """``cand`` with passing in its last place when passing is legal and not among them (and
    there are two places or more): holding back is always worth scoring."""
    if d.moves[0] == 0 and 0 not in cand and len(cand) >= 2:
        cand[-1] = 0
    return cand


def rule_candidates(d: Decision, first: int, k: int) -> np.ndarray:
    """The top ``k`` legal moves (indices into ``d.moves``) of a rule policy's ranking: its own
    choice ``first``, then the other moves by the cards they shed (most first, ties in the legal
    order), passing kept by :func:`keep_pass`."""
    sizes = [d.game.move_size(m) for m in d.moves]
    rest = sorted((i for i in range(len(d.moves)) if i != first), key=lambda i: (-sizes[i], i))
    return keep_pass(d, np.array([first, *rest], dtype=np.int64)[:k].copy())


class DdzSearchAgent(Agent):
    """Determinized one-step rollout search for Dou Dizhu (see the module docstring)."""

    games = ("doudizhu",)

    def __init__(self, make_rule: Callable[[str], Agent], samples: int = 16, candidates: int = 6,
                 rollout: str = "", own: str = "", value: str = "score", base_agent: Agent | None = None,
                 base: str = "") -> None:
        """``make_rule``: a Dou Dizhu rule agent from its name (the registry's). ``base_agent``: a
        trained policy with ``move_scores`` (named ``base`` in the spec) that ranks the candidates
        and may play the rollouts (``rollout=base``, ``own=base``: the default with one);
        ``rollout`` plays the other seats, ``own`` the searching seat."""
        if samples < 1 or candidates < 1:
            raise ValueError(f"search needs S >= 1 and K >= 1, got S={samples}, K={candidates}")
        if value not in VALUES:
            raise ValueError(f"value {value!r} (choose from {', '.join(VALUES)})")
        default = "base" if base_agent is not None else "heuristic"
        rollout, own = rollout or default, own or rollout or default
        policies = []
        for what, name in (("own", own), ("rollout", rollout)):
            if name == "base":
                if base_agent is None:
                    raise ValueError(f"{what}=base plays the base policy in the rollouts: name a checkpoint "
                                     "(search:checkpoint:PATH,...)")
                policies.append(base_agent)
            elif name in RULE_POLICIES:
                policies.append(make_rule(name))
            else:
                raise ValueError(f"{what} policy {name!r} (choose from {', '.join((*RULE_POLICIES, 'base'))})")
        self.samples, self.candidates, self.value = samples, candidates, value
        self.rollout, self.own = rollout, own
        self.policies = tuple(policies)
        self.base_agent = base_agent
        self.ranker: Callable[[Decision], np.ndarray] | None = getattr(base_agent, "move_scores", None)
        self.last_search: dict | None = None
        """The last :meth:`act`'s search: candidate indices, each one's weighted mean return and
        win rate over the sampled deals, the number of deals and their effective number under the
        weights, and what the choice was made by (``None`` after a forced move)."""
        self.name = (f"search:{base + ',' if base else ''}S={samples},K={candidates},rollout={rollout}"
                     + (f",own={own}" if own != rollout else "") + (f",value={value}" if value != "score" else ""))

    def candidates_of(self, d: Decision, rng: random.Random) -> np.ndarray:
        """Indices (into ``d.moves``) of the moves to score, best first (module docstring)."""
        if self.ranker is None:
            return rule_candidates(d, self.policies[0].act(d, rng), self.candidates)
        order = np.argsort(-np.asarray(self.ranker(d), dtype=np.float64), kind="stable")
        return keep_pass(d, order[:self.candidates].copy())

    def act(self, decision: Decision, rng: random.Random) -> int:
        d = decision
        self.last_search = None
        if d.observation.phase != "play":
            return (self.base_agent or self.policies[0]).act(d, rng)
        if len(d.moves) == 1:
            return 0
        cand = self.candidates_of(d, rng)
        if len(cand) == 1:
            return int(cand[0])
        hands = sample_hands(d.observation, rng, self.samples)
        weights = deal_weights(d.observation, hands)
        seeds = [rng.getrandbits(62) for _ in range(len(hands))]
        returns = self.returns(d, cand, hands, seeds)
        wins = (returns > 0).astype(np.float64) @ weights
        means = returns @ weights
        key = means if self.value == "score" else wins
        best = int(np.flatnonzero(key >= key.max() - 1e-12)[0])  # ties: the better rank
        self.last_search = {"candidates": cand, "returns": means, "wins": wins, "samples": len(hands),
                            "effective_samples": float(1.0 / np.sum(weights ** 2)), "value": self.value}
        return int(cand[best])

    def returns(self, d: Decision, cand: np.ndarray, hands: np.ndarray, seeds: Sequence[int]) -> np.ndarray:
        """``(len(cand), len(hands))``: the seat's return after each candidate on each sampled
        deal, rolled out to the end (the deal's seeds give each rollout's streams, the same for
        every candidate)."""
        obs, seat = d.observation, d.observation.seat
        base = [rebuild(obs, d.game, h) for h in hands]
        states = play_candidates(base, [d.moves[int(k)] for k in cand], seeds, self.policies, seat)
        return np.array([st.returns()[seat] for st in states], dtype=np.float64).reshape(len(cand), len(hands))


def parse_ddz_search_spec(spec: str, make_rule: Callable[[str], Agent], base_agent: Agent | None = None,
                          base: str = "") -> DdzSearchAgent:
    """``search`` or ``search:S=16,K=6,rollout=heuristic,own=heuristic,value=score`` (any subset,
    any order; ``rollouts=`` is another name for ``S=``) for Dou Dizhu, with the spec's base
    policy built by :func:`climbrl.learn.specs.make_agent` (``base_agent``, named ``base``) and
    the rule agents by ``make_rule``."""
    kw = parse_options(spec, {"S": "samples", "rollouts": "samples", "K": "candidates", "rollout": "rollout",
                              "own": "own", "value": "value"}, text=("rollout", "own", "value"))
    try:
        return DdzSearchAgent(make_rule, **kw, base_agent=base_agent, base=base)  # type: ignore[arg-type]
    except ValueError as e:
        raise ValueError(f"agent {spec!r}: {e}") from None


__all__ = ["DdzSearchAgent", "parse_ddz_search_spec", "sample_hands", "deal_weights", "rebuild", "play_out",
           "rule_candidates", "keep_pass",
           "known_cards", "unseen_cards", "VALUES", "RULE_POLICIES"]
