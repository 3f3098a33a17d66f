"""Determinized one-step rollout search for Big 2 (``search[:S=..,K=..,rollout=..,own=..,belief=..,value=..]``).

At each decision with a real choice the agent

1. **samples** ``S`` deals of the cards it has not seen (not in its hand, not played) to the
   three opponents, from its own observation only (:func:`sample_deals`);
2. takes the top ``K`` legal moves of the **base policy's ranking** (:func:`candidate_order`);
3. plays each candidate on every sampled deal and **rolls the game out to the end** with a fast
   base policy in every seat (compiled: :mod:`climbrl.agents.rollouts`), the same deals for
   every candidate (common random numbers);
4. plays the candidate with the **most wins**, then the **fewest cards left** (summed over the
   samples), then the better rank in the base policy's order (``value=win``, the default; or
   the **highest return** under the rules' card scoring, ``value=score``, or its team's,
   ``value=team``: see *Scores* below).

Choices, and why:

- *Only the observation.* The agent gets a :class:`~climbrl.agents.base.Decision` (its
  observation, the legal moves, the game's rules), never the state. Everything it builds (the
  unseen cards, the cards left per seat, the trick to beat, the pass lock-outs) comes from
  public fields and its own hand, so exchanging the opponents' hidden cards among them in any
  way consistent with what it has seen cannot change its choice (``tests/test_search_agent.py``
  checks it on replayed games).
- *What the sample respects.* Hard facts only: the number of cards each opponent holds (public),
  the cards already played (public, removed from the pool) and the starting card: while it is
  unplayed it is in the hand of the seat that acted first (the rules give the first turn to its
  holder). Nothing else is certain: under every preset a seat may pass even when it could beat
  the table, so a pass proves nothing. Subject to these facts the deal is uniform (the starting
  card is placed, the rest shuffled and dealt by the counts), drawn with ``rng.shuffle`` from the
  ``random.Random`` the runner passes (seeded per game and seat): same seed, same samples,
  same move.
- *Belief filter* (``belief=M``, off by default, ``M`` >= 2): soft evidence from the opponents'
  past decisions. ``M x S`` deals are drawn as above; for each, every past decision of every
  opponent that had a choice is replayed with the hand it must then have held (its sampled hand
  plus the cards it played from then on) and the opponent model (the rollout policy) is asked
  what it would have played. A deal with ``d`` disagreements gets weight ``EPS ** d`` (``EPS`` =
  0.1: an opponent that follows the model except for one decision in ten), and ``S`` deals are
  resampled by weight (systematic resampling, one uniform draw from ``rng``). This is the strict
  rejection filter of SPARTA made soft: against the known heuristic the true deal always has
  ``d = 0``, and against any other opponent the filter still returns ``S`` deals instead of
  rejecting them all. The model is the search's own rollout policy, not a model of the table.
- *Candidates.* The base policy's ranking: the heuristic's own choice first, then the other
  legal moves by the heuristic's value of the hand left (structure score + shed cards - break
  penalties, :func:`~climbrl.agents.hand_structure.move_value`, which ``heuristic_pick`` applies
  to its k weakest, here to every legal move), ties by RankAction; when passing is legal and
  not among the first ``K``, it replaces the ``K``-th when ``K`` >= 2 (holding back is always
  worth scoring).
  With ``K`` >= the number of legal moves every move is scored. The same ranking is used
  whatever the rollout policy (it only proposes candidates; the rollouts decide).
  *A trained base policy* (``search:checkpoint:PATH,...``, built by
  :func:`climbrl.learn.specs.make_agent`): the candidates are instead the top ``K`` moves by the
  checkpoint's scores (ties in the order of the legal moves), with the same pass rule; the
  network sees the same decision the agent sees, so the fairness argument holds. The study's
  action-in networks score every legal move with a 512 x 512 layer, too slow for a rollout:
  over one of them the network proposes and the compiled rollouts decide. A base policy of the
  public agent's shape (an :class:`~climbrl.learn.network.ActionHeadNet`, one forward pass per
  decision) can also play seats of the rollouts (``own=base``, ``rollout=base``, below).
- *Rollouts.* One compiled function (numba, like the engine's move generator it calls) plays a
  whole game from arrays: four hands, the seat to act, the trick to beat (cls, power, its
  player), the lock-outs. Its turn logic is :class:`~climbrl.games.big2.state.Big2State`'s (a
  test plays the same positions in the engine with the same policy: same winner, same hands
  left). ``rollout=heuristic`` (default) puts the
  study's heuristic in every seat, ``rollout=greedy`` the greedy baseline (a wrong opponent
  model against heuristic players). Both are deterministic, so a deal and a candidate fix the
  rollout: the only randomness is the sampling, shared by all candidates.
- *Networks in the rollouts* (``charlesworth`` rules only: the networks read the public
  agent's observation and action space). ``rollout=`` is the opponents' policy and ``own=`` the
  agent's own later moves (default: the rollout policy when it is a rule agent, else the
  heuristic); either may be ``charlesworth`` (the public agent's released network) or ``base``
  (the base policy's network, when it is an :class:`~climbrl.learn.network.ActionHeadNet`),
  compiled (:mod:`climbrl.agents.external.charlesworth_compiled`). A network samples from the
  softmax of its legal logits; the stream of each sampled deal is seeded from ``rng`` after the
  deals are drawn, the same for every candidate. With a network as the opponents' model the
  belief filter weights a deal by its likelihood (the product of the network's probabilities of
  every past opponent move) to the power :data:`BELIEF_TEMPERATURE`: at power 1 the weights
  collapse on one or two of the drawn deals.
- *Lockstep rollouts* (an action-in base policy, such as ``make strong``'s DMC network, as
  ``own=base`` or ``rollout=base``). Such a network scores every legal move with a 512 x 512
  layer and has no compiled form, so the rollouts are played by the engine instead: each sampled
  deal is rebuilt into a game that reaches the agent's observation (:func:`rebuild`: the hands
  plus what each seat has played, the public moves replayed, every one checked), each candidate is
  played on it, and all ``S x K`` games are played out in lockstep
  (:func:`~climbrl.agents.runner.play_candidates`), the network scoring the waiting decisions of
  a step in a batch per policy (the own seat's, then the others'); rule agents may play the other
  seats. The tally is the compiled rollouts' (a
  test plays the heuristic in every seat both ways: the same wins, cards left and points). The
  belief filter needs a compiled opponent model and is refused here.
- *Scores.* Win = the agent's seat goes out first (the match's criterion under every preset);
  the tie-break is the agent's cards left at the end, the quantity the card-count presets score.
  Under card scoring (``standard``, ``charlesworth``) a game is worth more than its winner:
  ``value=score`` plays the candidate of the highest summed return of the agent's seat at the
  rollouts' ends (each loser pays :meth:`~climbrl.games.big2.rules.Rules.card_penalty` of its
  cards left, the winner collects), then most wins, then fewest cards; ``value=team`` adds
  the return of the seat across the table, for a team match (two of the agent in seats 0 and
  2, or 1 and 3): holding back so that the partner goes out is then worth as much as going
  out. Which seats are partners is part of the match, not of the hidden cards, so the fairness
  argument holds. The partner is still modelled as the other seats are (``rollout=``, in the
  rollouts and the belief filter), not as a copy of the agent: a modelling gap, measured as it
  is. Under rank rewards the value is the place, not a score: refused at the first decision.
- *Shortcuts.* No search when there is one legal move or a move plays out the whole hand (the
  heuristic's forced moves), or when ``K`` = 1 (the base policy's move); such a decision draws
  nothing from ``rng``.
- *No memory.* Every decision starts afresh from the observation (the agent keeps no state
  between calls), so a decision depends only on the observation, the seat's stream and the
  parameters, and one agent object may play any number of seats and games at once.

Defaults ``S=48, K=10``. Cost: about ``S x K`` rollouts per searched decision (see the README
for the measured seconds per decision and rollouts per second).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

import numpy as np

from climbrl.agents.base import Agent, Decision
from climbrl.agents.hand_structure import forced_move
from climbrl.agents.rollouts import (
    DUMMY_WEIGHTS,
    GREEDY,
    HEURISTIC,
    NETWORK,
    _tally,
    candidate_order,
    combo_cls,
    model_search_scores,
    replay_loglik,
    replay_mismatches,
    search_scores,
)
from climbrl.agents.runner import play_candidates
from climbrl.agents.spec_options import parse_options, split_base
from climbrl.games.big2.combos import classify_mask
from climbrl.games.big2.rules import Rules

ROLLOUT_POLICIES = ("heuristic", "greedy", "charlesworth", "base")
"""Policies of the rollouts' seats: two rule agents and two networks of the public agent's shape (its
own weights, or the trained base policy's)."""
VALUES = ("win", "score", "team")
"""What a candidate is chosen by (see *Scores* in the module docstring)."""
BELIEF_TEMPERATURE = 0.1
"""Belief filter with a network as the opponent model: a deal's weight is its likelihood to this power."""
EPS = 0.1
"""Belief filter: the weight factor of one decision where the opponent model disagrees."""
FULL = (1 << 52) - 1


# --- sampling (Python: every draw from the runner's random.Random) -------------------------------
def _bits(mask: int) -> list[int]:
    return [c for c in range(52) if mask >> c & 1]


def sample_deals(obs, start_card: int, rng: random.Random, n: int) -> np.ndarray:
    """``n`` deals (int64[n, 4]) consistent with the observation ``obs``: the agent's hand in its
    seat, the unseen cards dealt uniformly to the others by their public card counts, the
    unplayed starting card (card id ``start_card``) with the seat that acted first."""
    seat = obs.seat
    seen = obs.hand
    for p in obs.played:
        seen |= p
    unseen = FULL & ~seen
    others = [(seat + k) & 3 for k in (1, 2, 3)]
    counts = [obs.cards_left[s] for s in others]
    if sum(counts) != unseen.bit_count():
        raise ValueError(f"observation of seat {seat}: {unseen.bit_count()} unseen cards for "
                         f"{sum(counts)} cards in the opponents' hands")
    fixed = [0, 0, 0]
    start = 1 << start_card
    if unseen & start:
        if not obs.history:
            raise ValueError("the starting card is unseen, yet nobody has acted")
        fixed[others.index(obs.history[0][0])] = start
        unseen &= ~start
    pool = _bits(unseen)
    need = [c - f.bit_count() for c, f in zip(counts, fixed, strict=True)]
    deals = np.zeros((n, 4), dtype=np.int64)
    deals[:, seat] = obs.hand
    for i in range(n):
        rng.shuffle(pool)
        pos = 0
        for j, s in enumerate(others):
            m = fixed[j]
            for c in pool[pos:pos + need[j]]:
                m |= 1 << c
            pos += need[j]
            deals[i, s] = m
    return deals


def public_replay(obs, game, record: bool = False) -> tuple[np.ndarray, ...]:
    """The opponents' past decisions as arrays for :func:`replay_mismatches` (seats, masks
    played, trick cls / power to beat, must-include card, pass allowed, cards played from then
    on), rebuilt from the public history with the engine's turn logic. ``record``: also the
    public record each decision was made on, for :func:`replay_loglik` (every seat's cards
    left, cards played and types played, int64[n, 4] each, and the play to beat, its type and
    the passes since, int64[n, 3])."""
    rules = game.rules
    t = game.tables
    hist = list(obs.history)
    start = 0
    must = 0
    if rules.start_mode == "auto_play":
        start = 1  # the auto-played starting card is no decision
    elif rules.start_mode == "must_include":
        must = 1 << rules.starting_card_id
    after_seat = [0, 0, 0, 0]
    after = [0] * len(hist)
    for i in range(len(hist) - 1, -1, -1):
        p, m = hist[i]
        after_seat[p] |= m
        after[i] = after_seat[p]
    rows, records = [], []
    last_cls, last_power, last_player, locked = 0, -1, -1, 0
    left = [13, 13, 13, 13]
    played, types = [0, 0, 0, 0], [0, 0, 0, 0]
    to_beat, to_beat_type, passes = 0, 0, 0
    for i, (p, m) in enumerate(hist):
        if i >= start and p != obs.seat:
            rows.append((p, m, last_cls, last_power, must, last_cls != 0, after[i]))
            records.append((*left, *played, *types, to_beat, to_beat_type, passes))
        if m == 0:
            if game.locks:
                locked |= 1 << p
            passes += 1
        else:
            typ, cls, power = classify_mask(np.int64(m), t)
            if last_cls == 0:
                last_cls = int(cls)
            last_power = int(power)
            last_player = p
            must = 0
            left[p] -= m.bit_count()
            played[p] |= m
            types[p] |= 1 << int(typ)
            to_beat, to_beat_type, passes = m, int(typ), 0
        nxt = (p + 1) & 3
        while locked >> nxt & 1 and nxt != last_player:
            nxt = (nxt + 1) & 3
        if nxt == last_player:
            last_cls, last_power, locked = 0, -1, 0
            to_beat, to_beat_type, passes = 0, 0, 0
    cols = list(zip(*rows, strict=True)) if rows else [()] * 7
    seats, masks, want, power, musts, allow, aft = cols
    out = (np.array(seats, dtype=np.int64), np.array(masks, dtype=np.int64),
           np.array(want, dtype=np.int64), np.array(power, dtype=np.int64),
           np.array(musts, dtype=np.int64), np.array(allow, dtype=np.bool_),
           np.array(aft, dtype=np.int64))
    if not record:
        return out
    rec = np.array(records, dtype=np.int64).reshape(len(records), 15)
    return (*out, np.ascontiguousarray(rec[:, 0:4]), np.ascontiguousarray(rec[:, 4:8]),
            np.ascontiguousarray(rec[:, 8:12]), np.ascontiguousarray(rec[:, 12:15]))


def trick_state(obs) -> tuple[int, int, int, int]:
    """(cls, power, last player, lock-outs) of the trick the agent faces, from its observation."""
    if obs.leading:
        return 0, -1, -1, obs.locked_out
    cls = combo_cls(obs.to_beat_type, obs.to_beat.bit_count())
    return int(cls), int(obs.to_beat_power), int(obs.to_beat_player), int(obs.locked_out)


def rebuild(obs, game, hands: np.ndarray):
    """The game that reaches ``obs`` with ``hands`` (the four hands held now, card masks): dealt as
    before the first play (each hand plus what its seat has played) and replayed through the engine,
    every move checked (the automatic first play, under ``auto_play``, is the deal's own)."""
    start = [int(h) | int(p) for h, p in zip(hands, obs.played, strict=True)]
    state = game.new_game(hands=start)
    for _, m in obs.history[len(state.history):]:
        state.apply(m)
    return state


def best_candidate(wins: np.ndarray, cards: np.ndarray, points: np.ndarray | None = None) -> int:
    """The position of the best candidate: most wins, then fewest cards left, then the first
    (the base policy's order); with ``points``, the most points first."""
    def key(j: int) -> tuple:
        return (int(points[j]) if points is not None else 0, int(wins[j]), -int(cards[j]))

    best = 0
    for j in range(1, len(wins)):
        if key(j) > key(best):
            best = j
    return best


# --- the agent -----------------------------------------------------------------------------------
class SearchAgent(Agent):
    """Determinized one-step rollout search (see the module docstring)."""

    games = ("big2",)

    def __init__(self, samples: int = 48, candidates: int = 10, rollout: str = "heuristic",
                 belief: int = 0, ranker: Callable[[Decision], np.ndarray] | None = None,
                 base: str = "", own: str = "", base_weights: dict[str, np.ndarray] | None = None,
                 value: str = "win", base_agent: Agent | None = None,
                 make_rule: Callable[[str], Agent] | None = None) -> None:
        """``ranker``: the base policy's score of each legal move of a decision (its name:
        ``base``), which then orders the candidates instead of the heuristic's ranking.
        ``rollout``: the opponents' policy in the rollouts (and the belief filter's model);
        ``own``: the agent's own seat's (default: the rollout policy when it is a rule agent,
        else the heuristic). ``base_weights``: the base policy's network when it has the public
        agent's shape (:class:`~climbrl.learn.network.ActionHeadNet`), which ``base`` plays.
        ``base_agent``: the base policy as an agent; when ``base`` plays in the rollouts and has
        no compiled form (an action-in network, such as ``make strong``'s DMC policy), the rollouts
        are played in lockstep by the engine instead (*Lockstep rollouts* in the module
        docstring), with ``make_rule`` building the rule agents of the other seats.
        ``value``: what a candidate is chosen by (:data:`VALUES`)."""
        if samples < 1 or candidates < 1:
            raise ValueError(f"search needs S >= 1 and K >= 1, got S={samples}, K={candidates}")
        own = own or (rollout if rollout in ("heuristic", "greedy") else "heuristic")
        self.lockstep = "base" in (rollout, own) and base_weights is None and base_agent is not None
        """True: the base policy is an action-in network, and the rollouts are played by the engine."""
        for what, name in (("rollout", rollout), ("own", own)):
            if name not in ROLLOUT_POLICIES:
                raise ValueError(f"{what} policy {name!r} (choose from {', '.join(ROLLOUT_POLICIES)})")
            if name == "base" and base_weights is None and base_agent is None:
                raise ValueError(f"{what}=base plays the base policy in the rollouts: name a checkpoint "
                                 "(search:checkpoint:PATH,...)")
            if self.lockstep and name == "charlesworth":
                raise ValueError(f"{what}=charlesworth: the public agent's compiled network cannot share rollouts "
                                 "with an action-in base policy")
        if self.lockstep and belief:
            raise ValueError("belief=M needs a compiled opponent model; an action-in base policy plays the rollouts "
                             "(belief=0)")
        if self.lockstep and make_rule is None and not {rollout, own} <= {"base"}:
            raise ValueError("a rule agent beside an action-in base policy in the rollouts needs make_rule "
                             "(climbrl.learn.specs.make_agent passes it)")
        if value not in VALUES:
            raise ValueError(f"value {value!r} (choose from {', '.join(VALUES)})")
        if belief == 1 or belief < 0:
            raise ValueError(f"belief=M draws M x S deals to filter: M >= 2 (or 0: off), got {belief}")
        self.samples = samples
        self.candidates = candidates
        self.rollout = rollout
        self.own = own
        self.belief = belief
        self.value = value
        self.ranker = ranker
        self.last_search: dict | None = None
        """The last :meth:`act`'s search: candidate indices, their wins, cards left and points
        summed over the sampled deals, and the number of deals (``None`` after a forced move); the
        interpretability window reads it (:mod:`climbrl.serve.reasoning`)."""
        self.seat_agents: tuple[Agent, Agent] | None = None
        """Lockstep rollouts: the agents of the own seat and of the others."""
        if self.lockstep:
            assert base_agent is not None
            self.seat_agents = tuple(base_agent if name == "base" else make_rule(name)  # type: ignore[misc]
                                     for name in (own, rollout))
        nets = {}
        if "charlesworth" in (rollout, own):
            from climbrl.agents.external.charlesworth import load_weights
            from climbrl.agents.external.charlesworth_compiled import compile_weights

            nets["charlesworth"] = compile_weights(load_weights())
        if "base" in (rollout, own) and not self.lockstep:
            from climbrl.agents.external.charlesworth_compiled import compile_weights

            nets["base"] = compile_weights(base_weights)
        self.compiled = bool(nets)
        """True: a network plays a seat of the rollouts (:func:`model_search_scores`)."""
        self.policy = NETWORK if rollout in nets else ROLLOUT_POLICIES.index(rollout)
        self.opp_w = nets.get(rollout, DUMMY_WEIGHTS)
        self.own_policy = NETWORK if own in nets else ROLLOUT_POLICIES.index(own)
        self.own_w = nets.get(own, DUMMY_WEIGHTS)
        default_own = rollout if rollout in ("heuristic", "greedy") else "heuristic"
        self.name = (f"search:{base + ',' if base else ''}S={samples},K={candidates},rollout={rollout}"
                     + (f",own={own}" if own != default_own else "") + (f",belief={belief}" if belief else "")
                     + (f",value={value}" if value != "win" else ""))

    def candidates_of(self, d: Decision) -> np.ndarray:
        """Indices (into ``d.moves``) of the moves to score, best first."""
        if self.ranker is not None:
            order = np.argsort(-np.asarray(self.ranker(d), dtype=np.float64), kind="stable")
        else:
            masks = np.array(d.moves, dtype=np.int64)
            types = np.array(d.types, dtype=np.int64)
            powers = np.array(d.powers, dtype=np.int64)
            order = candidate_order(d.hand, masks, types, powers, d.game.tables)
        cand = order[:self.candidates].copy()
        if d.moves[0] == 0 and 0 not in cand and len(cand) > 1:  # a pass is legal: score it too
            cand[-1] = 0
        return cand

    def deals(self, d: Decision, rng: random.Random) -> np.ndarray:
        """The sampled deals of this decision (belief-filtered when ``belief`` is set)."""
        game = d.game
        start = game.rules.starting_card_id
        if not self.belief:
            return sample_deals(d.observation, start, rng, self.samples)
        pool = sample_deals(d.observation, start, rng, self.samples * self.belief)
        if self.policy == NETWORK:  # the network's likelihood of the opponents' past decisions, tempered
            loglik = replay_loglik(pool, *public_replay(d.observation, game, record=True), game.tables, self.opp_w)
            w = np.exp(BELIEF_TEMPERATURE * (loglik - loglik.max()))
        else:
            bad = replay_mismatches(pool, *public_replay(d.observation, game), game.tables, self.policy)
            w = EPS ** (bad - bad.min()).astype(np.float64)
        cum = np.cumsum(w / w.sum())
        u = rng.random()
        picks = np.searchsorted(cum, (u + np.arange(self.samples)) / self.samples, side="right")
        return pool[np.minimum(picks, len(pool) - 1)]

    def act(self, decision: Decision, rng: random.Random) -> int:
        d = decision
        if self.compiled and d.game.rules.name != "charlesworth":
            raise ValueError(f"{self.name}: a network of the public agent's shape plays only under the 'charlesworth' "
                             f"rules preset (its observation and action space), not {d.game.rules.name!r}")
        self.check_value(d.game.rules)  # before any shortcut: a forced first decision is refused too
        masks = np.array(d.moves, dtype=np.int64)
        self.last_search = None
        if forced_move(d.hand, masks) >= 0:
            return int(forced_move(d.hand, masks))
        cand = self.candidates_of(d)
        if len(cand) == 1:
            return int(cand[0])
        deals = self.deals(d, rng)
        seeds = None
        if self.compiled or self.lockstep:  # the networks' streams: one per deal, drawn after the deals
            seeds = np.array([rng.getrandbits(63) for _ in range(len(deals))], dtype=np.int64)
        wins, cards, points = self.score(d, cand, deals, seeds)
        self.last_search = {"candidates": cand, "wins": wins, "cards": cards, "points": points,
                            "samples": len(deals)}
        return int(cand[best_candidate(wins, cards, None if self.value == "win" else points)])

    def score(self, d: Decision, cand: np.ndarray, deals: np.ndarray,
              seeds: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(wins, cards left, points) of each candidate over ``deals`` (``seeds``: with a network
        in the rollouts, the stream of each deal's rollouts; default all zero). Points: the
        returns of :attr:`value` (zero with ``value=win``)."""
        pen, partner = self.scoring(d)
        if self.lockstep:
            return self.lockstep_scores(d, cand, deals, seeds, pen, partner)
        cls, power, last_player, locked = trick_state(d.observation)
        c_masks = np.array([d.moves[i] for i in cand], dtype=np.int64)
        c_types = np.array([d.types[i] for i in cand], dtype=np.int64)
        c_powers = np.array([d.powers[i] for i in cand], dtype=np.int64)
        if self.compiled:
            obs = d.observation
            trick = (0, 0, 0) if obs.leading else (obs.to_beat, obs.to_beat_type, obs.passes)
            if seeds is None:
                seeds = np.zeros(len(deals), dtype=np.int64)
            return model_search_scores(
                d.seat, deals, c_masks, c_types, c_powers, cls, power, last_player, locked,
                np.array(obs.played, dtype=np.int64), np.array(obs.types_played, dtype=np.int64),
                np.array(trick, dtype=np.int64), d.game.tables, bool(d.game.locks),
                self.own_policy, self.own_w, self.policy, self.opp_w, seeds, pen, partner)
        return search_scores(d.seat, deals, c_masks, c_types, c_powers, cls, power, last_player, locked,
                             d.game.tables, bool(d.game.locks), self.policy, pen, partner)

    def lockstep_scores(self, d: Decision, cand: np.ndarray, deals: np.ndarray, seeds: np.ndarray | None,
                        pen: np.ndarray, partner: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`score` with the rollouts played by the engine: every sampled deal rebuilt
        (:func:`rebuild`), each candidate played on it, and all of them played out in lockstep
        (:func:`~climbrl.agents.runner.play_candidates`: one batched call per policy and step);
        deal ``i``'s rollouts draw from streams seeded by ``seeds[i]``, the same for every candidate."""
        assert self.seat_agents is not None
        seat = d.seat
        if seeds is None:
            seeds = np.zeros(len(deals), dtype=np.int64)
        base = [rebuild(d.observation, d.game, deal) for deal in deals]
        states = play_candidates(base, [d.moves[int(k)] for k in cand], seeds, self.seat_agents, seat)
        wins, cards, points = (np.zeros(len(cand), dtype=np.int64) for _ in range(3))
        for i, st in enumerate(states):  # candidate-major: game i is candidate i // len(deals)'s
            _tally(i // len(deals), st.winner, np.array(st.hands, dtype=np.int64), seat, partner, pen, wins, cards,
                   points)  # the compiled rollouts' own tally
        return wins, cards, points

    def check_value(self, rules: Rules) -> None:
        """Refuses ``value=score|team`` under rules that reward by place."""
        if self.value != "win" and rules.reward != "cards":
            raise ValueError(f"{self.name}: value={self.value} scores the rules' card-count returns; rules "
                             f"{rules.name!r} reward by place ({rules.reward!r}): use value=win")

    def scoring(self, d: Decision) -> tuple[np.ndarray, int]:
        """``(pen, partner)`` for the rollouts' points: what a loser holding ``n`` cards pays
        (all zero with ``value=win``) and the partner's seat (-1: none)."""
        if self.value == "win":
            return _NO_PENALTY, -1
        self.check_value(d.game.rules)
        return penalty_table(d.game.rules), (d.seat + 2) % 4 if self.value == "team" else -1


_NO_PENALTY = np.zeros(14, dtype=np.int64)
_NO_PENALTY.flags.writeable = False


@functools.lru_cache(maxsize=64)
def penalty_table(rules: Rules) -> np.ndarray:
    """What a loser holding ``n`` (0..13) cards pays under ``rules`` (read-only; one per rule set)."""
    pen = np.array([rules.card_penalty(n) for n in range(14)], dtype=np.int64)
    pen.flags.writeable = False
    return pen


def parse_search_spec(spec: str, ranker: Callable[[Decision], np.ndarray] | None = None,
                      base_weights: dict[str, np.ndarray] | None = None, base_agent: Agent | None = None,
                      make_rule: Callable[[str], Agent] | None = None) -> SearchAgent:
    """``search`` or ``search:S=48,K=10,rollout=heuristic,own=heuristic,belief=0,value=win`` (any subset, any order;
    ``rollouts=`` is another name for ``S=``). With ``ranker``, the spec may name the base
    policy it comes from (``checkpoint:PATH``, see :func:`split_base`)."""
    base, _ = split_base(spec)
    if base and ranker is None:
        raise ValueError(f"agent {spec!r}: a search over a trained base policy is built by "
                         "climbrl.learn.specs.make_agent")
    kw = parse_options(spec, {"S": "samples", "rollouts": "samples", "K": "candidates", "rollout": "rollout",
                              "own": "own", "belief": "belief", "value": "value"}, text=("rollout", "own", "value"))
    try:
        return SearchAgent(**kw, ranker=ranker, base=base, base_weights=base_weights,  # type: ignore[arg-type]
                           base_agent=base_agent, make_rule=make_rule)
    except ValueError as e:
        raise ValueError(f"agent {spec!r}: {e}") from None


__all__ = ["SearchAgent", "parse_search_spec", "split_base", "best_candidate", "sample_deals", "public_replay",
           "rebuild", "trick_state", "ROLLOUT_POLICIES", "VALUES", "HEURISTIC", "GREEDY", "NETWORK"]
