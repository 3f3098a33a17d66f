"""``doudizhu+lookahead``: Dou Dizhu's encoder plus the practice guide's look-ahead features (its
6.1, "search features grafted onto the learner"; ``encoder=doudizhu+lookahead`` in the config).

The guide: a rule engine plays out the next three plays of each candidate, and the win
probability of each is appended to the state as three features. Here, at every play decision
with a real choice (two legal moves or more):

1. **Candidates**: the rule engine's top three legal moves: the ``heuristic`` agent's own choice,
   then the other moves by the cards they shed (:func:`climbrl.agents.ddz_search.rule_candidates`,
   the order Dou Dizhu's search uses without a base policy; passing, when legal, takes the third
   place).
2. **Deals**: ``SAMPLES`` deals of the cards the seat cannot see, from its own observation only
   (:func:`~climbrl.agents.ddz_search.sample_hands`: the public card counts, the cards played, the
   landlord's kitty cards), each rebuilt as a game of the rules that reaches this observation
   (:func:`~climbrl.agents.ddz_search.rebuild`), weighted as the search weights them
   (:func:`~climbrl.agents.ddz_search.deal_weights`).
3. **Play-outs**: on each deal the candidate is played, then the next ``HORIZON`` plays (every
   seat's, the acting seat's own next turn included) by the ``heuristic`` agent.
4. **Win probability**: the weighted mean over the deals of the seat's side winning: 1 or 0 for
   a game decided within the horizon (the seat's return above 0); otherwise the rule engine's
   tempo reading of the position reached: 1 when the seat's side needs fewer plays to go out
   than the other side (the fewest plays of the side's hands, :func:`~climbrl.agents.ddz_hand.
   hand_plays`, as the rule agents count them), 0 when it needs more, 1/2 on a tie.

The random numbers (the shuffles of the deals, the agent's streams) are seeded from a hash of
the observation itself, the seat's own information: the same observation gives the same
features in any game, any process and any order, and moving the hidden cards between the two
other seats in any way consistent with the observation changes nothing
(``tests/test_lookahead_features.py`` re-deals them).

State vector (``STATE_DIM`` = 546): :mod:`climbrl.encoders.doudizhu`'s 542, then

=========  ==================================================================================
542-544    the win probability of the rule engine's first, second and third candidate (0 for
           a candidate that does not exist: fewer legal moves)
545        1 when the look-ahead ran (a play decision with two legal moves or more), else 0
           (auction decisions and forced moves: columns 542-545 all 0)
=========  ==================================================================================

Move vector (``MOVE_DIM`` = 85): the base's 82, then 82-84: the move is the rule engine's first,
second or third candidate (one-hot; zeros for the other moves). So an action-in network reads
each candidate's play-out beside the candidate itself.

Cost: ``SAMPLES`` x 3 x (1 + ``HORIZON``) engine steps and ``HORIZON`` rule-agent decisions per
candidate and deal, in Python: far more than one network decision (``benchmarks/lookahead_features.py``
measures it). The guide reports about 30% more training time; its distilled variant (a network
trained to predict the features, for inference) is measured there too.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence

import numpy as np

from climbrl.agents.base import Decision
from climbrl.agents.ddz_hand import hand_plays
from climbrl.agents.ddz_search import deal_weights, rebuild, rule_candidates, sample_hands
from climbrl.agents.doudizhu_rules import DdzHeuristicAgent
from climbrl.encoders.doudizhu import MOVE_DIM as BASE_MOVE_DIM
from climbrl.encoders.doudizhu import STATE_DIM as BASE_STATE_DIM
from climbrl.encoders.doudizhu import DdzEncoder, encode_decisions

CANDIDATES = 3
"""The guide's three features: the rule engine's top three moves."""
HORIZON = 3
"""The guide's "next three plays" after the candidate."""
SAMPLES = 4
"""Deals of the hidden cards per decision."""
S_WIN = BASE_STATE_DIM
S_RAN = BASE_STATE_DIM + CANDIDATES
STATE_DIM = S_RAN + 1  # 546
M_CANDIDATE = BASE_MOVE_DIM
MOVE_DIM = BASE_MOVE_DIM + CANDIDATES  # 85

_RULE = DdzHeuristicAgent()


def observation_seed(obs: object) -> int:
    """A 64-bit seed from the observation's own content (every field is the seat's information:
    its hand and the public record), the same in every process (no salted ``hash``)."""
    return int.from_bytes(hashlib.blake2b(repr(obs).encode(), digest_size=8).digest(), "little")


def side_value(state, seat: int) -> float:
    """The seat's side's win (1), loss (0) or tempo reading (module docstring, step 4) in a
    sampled game whose every hand the play-out knows."""
    if state.is_terminal():
        return 1.0 if state.returns()[seat] > 0 else 0.0
    plays = [hand_plays(state.hands[p])[0] for p in range(3)]
    mine = [p for p in range(3) if (p == state.landlord) == (seat == state.landlord)]
    own = min(plays[p] for p in mine)
    other = min(plays[p] for p in range(3) if p not in mine)
    return 1.0 if own < other else 0.0 if own > other else 0.5


def play_ahead(state, plays: int, rng: random.Random) -> None:
    """Play ``plays`` more plays (or to the end) with the rule engine in every seat."""
    for _ in range(plays):
        if state.is_terminal():
            return
        d = Decision.from_state(state)
        state.apply(d.moves[_RULE.act(d, rng)])


def candidates(d: Decision) -> tuple[np.ndarray, random.Random]:
    """(the rule engine's candidates, indices into ``d.moves``; the stream the play-outs go on
    with), both from the observation's seed; no candidates for an auction decision or a forced
    move."""
    root = random.Random(observation_seed(d.observation))
    if d.observation.phase != "play" or len(d.moves) < 2:
        return np.zeros(0, dtype=np.int64), root
    return rule_candidates(d, _RULE.act(d, random.Random(root.getrandbits(62))), CANDIDATES), root


def lookahead(d: Decision) -> tuple[np.ndarray, np.ndarray]:
    """(candidate indices into ``d.moves``, their win probabilities), see the module docstring;
    empty for an auction decision or a forced move."""
    obs = d.observation
    cand, root = candidates(d)
    if not len(cand):
        return cand, np.zeros(0)
    hands = sample_hands(obs, root, SAMPLES)
    weights = deal_weights(obs, hands)
    seeds = [root.getrandbits(62) for _ in hands]
    values = np.zeros((len(cand), len(hands)))
    for j, h in enumerate(hands):
        base = rebuild(obs, d.game, h)
        for i, k in enumerate(cand):
            st = base.clone()
            st.apply(d.moves[int(k)])
            play_ahead(st, HORIZON, random.Random(seeds[j]))  # the same stream for every candidate
            values[i, j] = side_value(st, obs.seat)
    return cand, values @ weights


def encode_lookahead(decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(states [B, 546], moves [R, 85], offsets [B + 1]): the base encoding plus the columns above."""
    return encode_with(decisions, lookahead)


def encode_with(decisions: Sequence[Decision], features) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The layout above with ``features(decision) -> (candidates, win probabilities)`` filling
    the look-ahead columns (:func:`lookahead`, or a distilled predictor's)."""
    base_states, base_moves, offsets = encode_decisions(decisions)
    states = np.zeros((len(base_states), STATE_DIM), dtype=np.float32)
    states[:, :BASE_STATE_DIM] = base_states
    moves = np.zeros((len(base_moves), MOVE_DIM), dtype=np.float32)
    moves[:, :BASE_MOVE_DIM] = base_moves
    for b, d in enumerate(decisions):
        cand, wins = features(d)
        if len(cand):
            states[b, S_WIN:S_WIN + len(cand)] = wins
            states[b, S_RAN] = 1.0
            moves[offsets[b] + cand, M_CANDIDATE + np.arange(len(cand))] = 1.0
    return states, moves, offsets


class DdzLookaheadEncoder(DdzEncoder):
    """``doudizhu+lookahead`` (version 1): :class:`DdzEncoder`'s vectors plus the guide's
    look-ahead columns; the same rewards."""

    name = "doudizhu+lookahead"
    version = 1
    state_dim = STATE_DIM
    move_dim = MOVE_DIM
    base_state_dim = BASE_STATE_DIM
    base_move_dim = BASE_MOVE_DIM
    n_candidates = CANDIDATES

    def encode(self, decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return encode_lookahead(decisions)

    # what a stand-in for the play-outs reads (climbrl.learn.lookahead_distill)
    def encode_base(self, decisions: Sequence[Decision]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The base encoder's vectors (:mod:`climbrl.encoders.doudizhu`)."""
        return encode_decisions(decisions)

    def candidates(self, d: Decision) -> np.ndarray:
        """The rule engine's candidates (:func:`candidates`)."""
        return candidates(d)[0]

    def features(self, d: Decision) -> tuple[np.ndarray, np.ndarray]:
        """The candidates and their play-outs' win probabilities (:func:`lookahead`)."""
        return lookahead(d)

    def encode_with(self, decisions: Sequence[Decision], features) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """This layout with other look-ahead values (:func:`encode_with`)."""
        return encode_with(decisions, features)
