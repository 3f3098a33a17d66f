"""Determinized one-step rollout search for Big 2 (``search[:S=..,K=..,rollout=..,belief=..]``).

At each decision with a real choice the agent

1. **samples** ``S`` deals of the cards it has not seen (not in its hand, not played) to the
   three opponents, from its own observation only (:func:`sample_deals`);
2. takes the top ``K`` legal moves of the **base policy's ranking** (:func:`candidate_order`);
3. plays each candidate on every sampled deal and **rolls the game out to the end** with a fast
   base policy in every seat (compiled: :func:`search_scores`), the same deals for every
   candidate (common random numbers);
4. plays the candidate with the **most wins**, then the **fewest cards left** (summed over the
   samples), then the better rank in the base policy's order.

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
  network sees the same decision the agent sees, so the fairness argument holds. The rollouts
  stay compiled (a network in every seat of every rollout would cost far more than the 0.2 s a
  decision may take): the network proposes, the heuristic rollouts decide.
- *Rollouts.* One compiled function (numba, like the engine's move generator it calls) plays a
  whole game from arrays: four hands, the seat to act, the trick to beat (cls, power, its
  player), the lock-outs. Its turn logic is :class:`~climbrl.games.big2.state.Big2State`'s (a
  test plays the same positions in the engine with the same policy: same winner, same hands
  left). ``rollout=heuristic`` (default) puts the
  study's heuristic in every seat, ``rollout=greedy`` the greedy baseline (a wrong opponent
  model against heuristic players). Both are deterministic, so a deal and a candidate fix the
  rollout: the only randomness is the sampling, shared by all candidates.
- *Scores.* Win = the agent's seat goes out first (the match's criterion under every preset);
  the tie-break is the agent's cards left at the end, the quantity the card-count presets score.
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

import random
from collections.abc import Callable

import numpy as np
from numba import njit

from climbrl.agents.base import Agent, Decision
from climbrl.agents.external.charlesworth_compiled import MAX_ACTIVE, encode_active, legal_logits
from climbrl.agents.hand_structure import (
    forced_move,
    hand_structure,
    heuristic_pick,
    move_value,
    phase_of,
    rank_action,
)
from climbrl.games.big2.combos import (
    _CACHE,
    MAX_LEGAL_MOVES,
    STRAIGHT,
    _popcount,
    classify_mask,
    generate_moves,
)

ROLLOUT_POLICIES = ("heuristic", "greedy", "charlesworth", "base")
"""Policies of the rollouts' seats: two rule agents and two networks of the public agent's shape (its
own weights, or the trained base policy's)."""
HEURISTIC, GREEDY, NETWORK = 0, 1, 2
BELIEF_TEMPERATURE = 0.1
"""Belief filter with a network as the opponent model: a deal's weight is its likelihood to this power."""
EPS = 0.1
"""Belief filter: the weight factor of one decision where the opponent model disagrees."""
FULL = (1 << 52) - 1


# --- compiled core -------------------------------------------------------------------------------
@njit(cache=_CACHE)
def _combo_cls(typ, ncards):
    if typ == STRAIGHT and ncards != 5:
        return 16 + ncards
    return ncards


@njit(cache=_CACHE)
def _greedy_pick(masks, n):
    """The greedy baseline: the most cards, the first (weakest) of those in canonical order."""
    best, best_cards = 0, -1
    for i in range(n):
        c = _popcount(masks[i])
        if c > best_cards:
            best, best_cards = i, c
    return best


@njit(cache=_CACHE)
def _pick(h, buf, n, t, policy):
    if n == 1:
        return 0
    if policy == GREEDY:
        return _greedy_pick(buf[0], n)
    return heuristic_pick(h, buf[0, :n], buf[1, :n], buf[2, :n], t)


@njit(cache=_CACHE)
def rollout(hands, player, last_cls, last_power, last_player, locked, must, t, locks, policy, buf):
    """Play the game to its end with ``policy`` in every seat; ``hands`` (int64[4]) is updated
    in place and the winner's seat returned. The turn logic is ``Big2State``'s: a trick ends
    when the turn would come back to its last player, passes lock a seat out when ``locks``."""
    while True:
        h = hands[player]
        n = generate_moves(h, last_cls, last_power, must, last_cls != 0, t, buf)
        k = _pick(h, buf, n, t, policy)
        m = buf[0, k]
        if m != 0:
            must = 0
        won, player, last_cls, last_power, last_player, locked = _play(
            hands, player, m, buf[1, k], buf[2, k], last_cls, last_power, last_player, locked, locks)
        if won:
            return player


@njit(cache=_CACHE)
def _play(hands, player, m, typ, power, last_cls, last_power, last_player, locked, locks):
    """``player`` plays ``m`` (0: a pass; ``typ``, ``power``: its type and power) with
    ``Big2State``'s turn logic: ``hands`` is updated in place. Returns (won, the next player, or
    ``player`` when it went out, and the trick's new cls, power, last player and lock-outs)."""
    if m == 0:
        if locks:
            locked |= 1 << player
    else:
        if last_cls == 0:
            last_cls = _combo_cls(typ, _popcount(m))
        last_power = power
        last_player = player
        hands[player] ^= m
        if hands[player] == 0:
            return True, player, last_cls, last_power, last_player, locked
    nxt = (player + 1) & 3
    while (locked >> nxt) & 1 and nxt != last_player:
        nxt = (nxt + 1) & 3
    if nxt == last_player:
        last_cls = 0
        last_power = -1
        locked = 0
    return False, nxt, last_cls, last_power, last_player, locked


@njit(cache=_CACHE)
def search_scores(seat, deals, cand_masks, cand_types, cand_powers, last_cls, last_power, last_player,
                  locked, t, locks, policy):
    """(wins, cards left) of each candidate summed over the deals (``deals[s]``: four hands with
    the agent's own in ``seat``): the candidate is played, then the game rolled out."""
    n_deals = deals.shape[0]
    k = cand_masks.shape[0]
    wins = np.zeros(k, dtype=np.int64)
    cards = np.zeros(k, dtype=np.int64)
    buf = np.empty((3, MAX_LEGAL_MOVES + 1), dtype=np.int64)
    hands = np.empty(4, dtype=np.int64)
    for s in range(n_deals):
        for c in range(k):
            for p in range(4):
                hands[p] = deals[s, p]
            won, nxt, lc, lp, lpl, lk = _play(hands, seat, cand_masks[c], cand_types[c], cand_powers[c],
                                              last_cls, last_power, last_player, locked, locks)
            if won:
                wins[c] += 1
                continue
            winner = rollout(hands, nxt, lc, lp, lpl, lk, 0, t, locks, policy, buf)
            if winner == seat:
                wins[c] += 1
            cards[c] += _popcount(hands[seat])
    return wins, cards


# --- rollouts with a model of the public agent in the opponents' seats -----------------------------
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


@njit(cache=_CACHE)
def _uniform(state):
    """A uniform float in [0, 1) from a splitmix64 stream (``state``: uint64[1], advanced)."""
    x = state[0] + _GOLDEN
    state[0] = x
    z = (x ^ (x >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    z = z ^ (z >> np.uint64(31))
    return float(z >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=_CACHE)
def _net_pick(h, seat, hands, played, types, trick, last_cls, masks, n, w, rng_state, work_i, work_f, h1, h2):
    """A move of a network of the public agent's shape (weights ``w``, see
    :func:`~climbrl.agents.external.charlesworth_compiled.compile_weights`), sampled from the
    softmax of its legal logits, for ``seat`` holding ``h``: its observation is built from the
    rollout's public record."""
    left = work_i[MAX_ACTIVE:MAX_ACTIVE + 4]
    for p in range(4):
        left[p] = _popcount(hands[p])
    n_act = encode_active(h, seat, left, played, types, last_cls == 0, trick[0], trick[1], trick[2], work_i)
    w1, b1, w2, b2, wpi_t, bpi = w
    legal_logits(w1, b1, w2, b2, wpi_t, bpi, work_i, n_act, h, masks, n, work_f, h1, h2)
    top = -np.inf
    for i in range(n):
        if work_f[i] > top:
            top = work_f[i]
    total = 0.0
    for i in range(n):
        total += np.exp(work_f[i] - top)
    u = _uniform(rng_state) * total
    acc = 0.0
    for i in range(n):
        acc += np.exp(work_f[i] - top)
        if u < acc:
            return i
    return n - 1


@njit(cache=_CACHE)
def _seat_pick(code, w, h, player, hands, played, types, trick, last_cls, buf, n, t, rng_state, work_i, work_f,
               h1, h2):
    """The move index of policy ``code`` (:data:`HEURISTIC`, :data:`GREEDY` or :data:`NETWORK`
    with weights ``w``) for ``player`` holding ``h``, its legal moves in ``buf[:, :n]``."""
    if n == 1:
        return 0
    if code == NETWORK:
        return _net_pick(h, player, hands, played, types, trick, last_cls, buf[0], n, w, rng_state, work_i, work_f,
                         h1, h2)
    return _pick(h, buf, n, t, code)


@njit(cache=_CACHE)
def _record(p, m, typ, played, types, trick):
    """The public record after ``p`` plays ``m`` of type ``typ`` (0: a pass): ``trick`` holds
    (to_beat, its type, passes since)."""
    if m == 0:
        trick[2] += 1
    else:
        played[p] |= m
        types[p] |= 1 << typ
        trick[0] = m
        trick[1] = typ
        trick[2] = 0


@njit(cache=_CACHE)
def model_rollout(hands, played, types, trick, player, last_cls, last_power, last_player, locked, must, t,
                  locks, seat, own, own_w, opp, opp_w, rng_state, buf, work_i, work_f, h1, h2):
    """:func:`rollout` with policy ``own`` in ``seat`` and ``opp`` in the others (codes as in
    :func:`_seat_pick`; a network's weights ``own_w`` / ``opp_w``), tracking what a network's
    observation needs: every seat's cards and types played, and ``trick`` (int64[3]: the play to
    beat, its type, the passes since). A network samples its moves from ``rng_state``."""
    while True:
        h = hands[player]
        n = generate_moves(h, last_cls, last_power, must, last_cls != 0, t, buf)
        if player == seat:
            k = _seat_pick(own, own_w, h, player, hands, played, types, trick, last_cls, buf, n, t, rng_state,
                           work_i, work_f, h1, h2)
        else:
            k = _seat_pick(opp, opp_w, h, player, hands, played, types, trick, last_cls, buf, n, t, rng_state,
                           work_i, work_f, h1, h2)
        m = buf[0, k]
        if m != 0:
            must = 0
        _record(player, m, buf[1, k], played, types, trick)
        won, player, last_cls, last_power, last_player, locked = _play(
            hands, player, m, buf[1, k], buf[2, k], last_cls, last_power, last_player, locked, locks)
        if won:
            return player
        if last_cls == 0:
            trick[0] = 0
            trick[1] = 0
            trick[2] = 0


@njit(cache=_CACHE)
def model_search_scores(seat, deals, cand_masks, cand_types, cand_powers, last_cls, last_power, last_player,
                        locked, played0, types0, trick0, t, locks, own, own_w, opp, opp_w, seeds):
    """:func:`search_scores` with :func:`model_rollout`: the rollouts of deal ``s`` draw from
    the stream seeded ``seeds[s]``, the same for every candidate (common random numbers)."""
    n_deals = deals.shape[0]
    k = cand_masks.shape[0]
    wins = np.zeros(k, dtype=np.int64)
    cards = np.zeros(k, dtype=np.int64)
    buf = np.empty((3, MAX_LEGAL_MOVES + 1), dtype=np.int64)
    hands = np.empty(4, dtype=np.int64)
    played = np.empty(4, dtype=np.int64)
    types = np.empty(4, dtype=np.int64)
    trick = np.empty(3, dtype=np.int64)
    rng_state = np.empty(1, dtype=np.uint64)
    work_i = np.empty(MAX_ACTIVE + 4, dtype=np.int64)
    work_f = np.empty(MAX_LEGAL_MOVES + 1, dtype=np.float32)
    width1 = max(own_w[1].shape[0], opp_w[1].shape[0])
    width2 = max(own_w[3].shape[0], opp_w[3].shape[0])
    h1 = np.empty(width1, dtype=np.float32)
    h2 = np.empty(width2, dtype=np.float32)
    for s in range(n_deals):
        for c in range(k):
            for p in range(4):
                hands[p] = deals[s, p]
                played[p] = played0[p]
                types[p] = types0[p]
            for i in range(3):
                trick[i] = trick0[i]
            rng_state[0] = np.uint64(seeds[s])
            _record(seat, cand_masks[c], cand_types[c], played, types, trick)
            won, nxt, lc, lp, lpl, lk = _play(hands, seat, cand_masks[c], cand_types[c], cand_powers[c],
                                              last_cls, last_power, last_player, locked, locks)
            if won:
                wins[c] += 1
                continue
            if lc == 0:
                trick[0] = 0
                trick[1] = 0
                trick[2] = 0
            winner = model_rollout(hands, played, types, trick, nxt, lc, lp, lpl, lk, 0, t, locks, seat, own, own_w,
                                   opp, opp_w, rng_state, buf, work_i, work_f, h1, h2)
            if winner == seat:
                wins[c] += 1
            cards[c] += _popcount(hands[seat])
    return wins, cards


@njit(cache=_CACHE)
def candidate_order(h, masks, types, powers, t):
    """The legal moves in the base policy's order: the heuristic's choice first, then by the
    heuristic's value of the hand left (higher first), ties by RankAction, then canonical order."""
    n = masks.shape[0]
    first = heuristic_pick(h, masks, types, powers, t)
    phase = phase_of(_popcount(h))
    ra = rank_action(h, masks, types, powers, t)
    p0, f0, d0 = hand_structure(h, t)
    key = np.empty(n, dtype=np.float64)
    for i in range(n):
        value = move_value(h, masks[i], p0, f0, d0, phase, t)
        # value dominates; RankAction (at most ~100 apart) breaks its ties
        key[i] = -value * 1000.0 + ra[i]
    order = np.argsort(key, kind="mergesort")
    out = np.empty(n, dtype=np.int64)
    out[0] = first
    j = 1
    for i in range(n):
        if order[i] != first:
            out[j] = order[i]
            j += 1
    return out


@njit(cache=_CACHE)
def replay_mismatches(deals, seats, masks, want_cls, min_power, must, allow_pass, after, t, policy):
    """For each deal, how many of the given past decisions the opponent model would have made
    differently. Decision ``i`` was made by ``seats[i]`` (facing ``want_cls``/``min_power``,
    ``must``, pass allowed or not) and played ``masks[i]``; its hand then was the deal's current
    hand of that seat plus ``after[i]`` (the cards that seat played from decision ``i`` on)."""
    n_deals = deals.shape[0]
    out = np.zeros(n_deals, dtype=np.int64)
    buf = np.empty((3, MAX_LEGAL_MOVES + 1), dtype=np.int64)
    for s in range(n_deals):
        for i in range(seats.shape[0]):
            h = deals[s, seats[i]] | after[i]
            n = generate_moves(h, want_cls[i], min_power[i], must[i], allow_pass[i], t, buf)
            if n <= 1:
                continue
            k = _pick(h, buf, n, t, policy)
            if buf[0, k] != masks[i]:
                out[s] += 1
    return out


@njit(cache=_CACHE)
def replay_loglik(deals, seats, masks, want_cls, min_power, must, allow_pass, after, left, played, types,
                  trick, t, model):
    """For each deal, the log-likelihood of the given past decisions under the public agent's
    policy (the softmax of its legal logits): decision ``i`` as in :func:`replay_mismatches`,
    made on the public record ``left[i]``, ``played[i]``, ``types[i]``, ``trick[i]`` (see
    :func:`public_replay`)."""
    n_deals = deals.shape[0]
    out = np.zeros(n_deals, dtype=np.float64)
    buf = np.empty((3, MAX_LEGAL_MOVES + 1), dtype=np.int64)
    work_i = np.empty(MAX_ACTIVE, dtype=np.int64)
    work_f = np.empty(MAX_LEGAL_MOVES + 1, dtype=np.float32)
    h1 = np.empty(model[1].shape[0], dtype=np.float32)
    h2 = np.empty(model[3].shape[0], dtype=np.float32)
    w1, b1, w2, b2, wpi_t, bpi = model
    for s in range(n_deals):
        for i in range(seats.shape[0]):
            p = seats[i]
            h = deals[s, p] | after[i]
            n = generate_moves(h, want_cls[i], min_power[i], must[i], allow_pass[i], t, buf)
            if n <= 1:
                continue
            n_act = encode_active(h, p, left[i], played[i], types[i], want_cls[i] == 0, trick[i, 0],
                                  trick[i, 1], trick[i, 2], work_i)
            legal_logits(w1, b1, w2, b2, wpi_t, bpi, work_i, n_act, h, buf[0], n, work_f, h1, h2)
            top = -np.inf
            chosen = -np.inf
            for k in range(n):
                if work_f[k] > top:
                    top = work_f[k]
                if buf[0, k] == masks[i]:
                    chosen = work_f[k]
            total = 0.0
            for k in range(n):
                total += np.exp(work_f[k] - top)
            out[s] += chosen - top - np.log(total)
    return out


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
    cls = _combo_cls(obs.to_beat_type, obs.to_beat.bit_count())
    return int(cls), int(obs.to_beat_power), int(obs.to_beat_player), int(obs.locked_out)


def best_candidate(wins: np.ndarray, cards: np.ndarray) -> int:
    """The position of the best candidate: most wins, then fewest cards left, then the first
    (the base policy's order)."""
    best = 0
    for j in range(1, len(wins)):
        if wins[j] > wins[best] or (wins[j] == wins[best] and cards[j] < cards[best]):
            best = j
    return best


# --- the agent -----------------------------------------------------------------------------------
_DUMMY_WEIGHTS = (np.zeros((1, 1), np.float32), np.zeros(1, np.float32), np.zeros((1, 1), np.float32),
                  np.zeros(1, np.float32), np.zeros((1, 1), np.float32), np.zeros(1, np.float32))
"""Weights of a seat that plays no network (the compiled functions take the same types either way)."""


class SearchAgent(Agent):
    """Determinized one-step rollout search (see the module docstring)."""

    games = ("big2",)

    def __init__(self, samples: int = 48, candidates: int = 10, rollout: str = "heuristic",
                 belief: int = 0, ranker: Callable[[Decision], np.ndarray] | None = None,
                 base: str = "", own: str = "", base_weights: dict[str, np.ndarray] | None = None) -> None:
        """``ranker``: the base policy's score of each legal move of a decision (its name:
        ``base``), which then orders the candidates instead of the heuristic's ranking.
        ``rollout``: the opponents' policy in the rollouts (and the belief filter's model);
        ``own``: the agent's own seat's (default: the rollout policy when it is a rule agent,
        else the heuristic). ``base_weights``: the base policy's network when it has the public
        agent's shape (:class:`~climbrl.learn.network.ActionHeadNet`), which ``base`` plays."""
        if samples < 1 or candidates < 1:
            raise ValueError(f"search needs S >= 1 and K >= 1, got S={samples}, K={candidates}")
        own = own or (rollout if rollout in ("heuristic", "greedy") else "heuristic")
        for what, name in (("rollout", rollout), ("own", own)):
            if name not in ROLLOUT_POLICIES:
                raise ValueError(f"{what} policy {name!r} (choose from {', '.join(ROLLOUT_POLICIES)})")
            if name == "base" and base_weights is None:
                raise ValueError(f"{what}=base plays the base policy's network in the rollouts: name a checkpoint "
                                 "trained with the big2-charlesworth encoder (search:checkpoint:PATH,...)")
        if belief == 1 or belief < 0:
            raise ValueError(f"belief=M draws M x S deals to filter: M >= 2 (or 0: off), got {belief}")
        self.samples = samples
        self.candidates = candidates
        self.rollout = rollout
        self.own = own
        self.belief = belief
        self.ranker = ranker
        nets = {}
        if "charlesworth" in (rollout, own):
            from climbrl.agents.external.charlesworth import load_weights
            from climbrl.agents.external.charlesworth_compiled import compile_weights

            nets["charlesworth"] = compile_weights(load_weights())
        if "base" in (rollout, own):
            from climbrl.agents.external.charlesworth_compiled import compile_weights

            nets["base"] = compile_weights(base_weights)
        self.compiled = bool(nets)
        """True: a network plays a seat of the rollouts (:func:`model_search_scores`)."""
        self.policy = NETWORK if rollout in nets else ROLLOUT_POLICIES.index(rollout)
        self.opp_w = nets.get(rollout, _DUMMY_WEIGHTS)
        self.own_policy = NETWORK if own in nets else ROLLOUT_POLICIES.index(own)
        self.own_w = nets.get(own, _DUMMY_WEIGHTS)
        default_own = rollout if rollout in ("heuristic", "greedy") else "heuristic"
        self.name = (f"search:{base + ',' if base else ''}S={samples},K={candidates},rollout={rollout}"
                     + (f",own={own}" if own != default_own else "") + (f",belief={belief}" if belief else ""))

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
        masks = np.array(d.moves, dtype=np.int64)
        if forced_move(d.hand, masks) >= 0:
            return int(forced_move(d.hand, masks))
        cand = self.candidates_of(d)
        if len(cand) == 1:
            return int(cand[0])
        deals = self.deals(d, rng)
        seeds = None
        if self.compiled:  # the networks sample: one stream per deal, drawn after the deals
            seeds = np.array([rng.getrandbits(63) for _ in range(len(deals))], dtype=np.int64)
        wins, cards = self.score(d, cand, deals, seeds)
        return int(cand[best_candidate(wins, cards)])

    def score(self, d: Decision, cand: np.ndarray, deals: np.ndarray,
              seeds: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(wins, cards left) of each candidate over ``deals`` (``seeds``: with a network in the
        rollouts, the stream of each deal's rollouts; default all zero)."""
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
                self.own_policy, self.own_w, self.policy, self.opp_w, seeds)
        return search_scores(d.seat, deals, c_masks, c_types, c_powers, cls, power, last_player, locked,
                             d.game.tables, bool(d.game.locks), self.policy)


def split_base(spec: str) -> tuple[str, str]:
    """``(base, rest)`` of a search spec: ``search:checkpoint:P,S=64`` -> ``("checkpoint:P",
    "search:S=64")``; ``("", spec)`` when it names no base policy."""
    _, _, arg = spec.partition(":")
    parts = arg.split(",")
    bases = [p for p in parts if p.strip().startswith("checkpoint:")]
    if not bases:
        return "", spec
    if len(bases) > 1:
        raise ValueError(f"agent {spec!r}: one base policy at most")
    return bases[0].strip(), "search:" + ",".join(p for p in parts if p not in bases)


def parse_search_spec(spec: str, ranker: Callable[[Decision], np.ndarray] | None = None,
                      base_weights: dict[str, np.ndarray] | None = None) -> SearchAgent:
    """``search`` or ``search:S=48,K=10,rollout=heuristic,belief=0`` (any subset, any order;
    ``rollouts=`` is another name for ``S=``). With ``ranker``, the spec may name the base
    policy it comes from (``checkpoint:PATH``, see :func:`split_base`)."""
    base, spec_rest = split_base(spec)
    if base and ranker is None:
        raise ValueError(f"agent {spec!r}: a search over a trained base policy is built by "
                         "climbrl.learn.specs.make_agent")
    _, _, arg = spec_rest.partition(":")
    kw: dict[str, int | str] = {}
    names = {"S": "samples", "rollouts": "samples", "K": "candidates", "rollout": "rollout", "own": "own",
             "belief": "belief"}
    for part in filter(None, arg.split(",")):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in names:
            raise ValueError(f"agent {spec!r}: search takes checkpoint:PATH, S= (or rollouts=), K=, rollout=, "
                             f"own=, belief= (got {part!r})")
        if names[key] in kw:
            raise ValueError(f"agent {spec!r}: {key} given twice")
        if key in ("rollout", "own"):
            kw[names[key]] = value.strip()
        else:
            try:
                kw[names[key]] = int(value)
            except ValueError:
                raise ValueError(f"agent {spec!r}: {key} must be an integer, got {value!r}") from None
    try:
        return SearchAgent(**kw, ranker=ranker, base=base, base_weights=base_weights)  # type: ignore[arg-type]
    except ValueError as e:
        raise ValueError(f"agent {spec!r}: {e}") from None


__all__ = ["SearchAgent", "parse_search_spec", "split_base", "best_candidate", "sample_deals", "rollout",
           "search_scores",
           "candidate_order", "public_replay", "replay_mismatches", "replay_loglik", "model_search_scores",
           "model_rollout", "trick_state", "ROLLOUT_POLICIES"]
