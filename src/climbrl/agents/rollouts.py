"""The rollout search's compiled core (:mod:`climbrl.agents.search` is the agent around it).

- :func:`rollout` / :func:`search_scores`: rollouts with a rule agent (the heuristic or the
  greedy baseline) in every seat, from four hands and the trick's state; :func:`_play` is
  :class:`~climbrl.games.big2.state.Big2State`'s turn logic on those arrays.
- :func:`model_rollout` / :func:`model_search_scores`: the same with a network of the public
  agent's shape (its own weights or the base policy's) in the agent's seat, the others' or both;
  they also track the public record a network's observation reads (every seat's cards and types
  played, the play to beat and the passes since), and a network samples its moves from a
  splitmix64 stream (:func:`_uniform`) seeded per sampled deal.
- :func:`candidate_order`: the heuristic's ranking of the legal moves (the candidates).
- :func:`replay_mismatches` / :func:`replay_loglik`: the belief filter's replay of the opponents'
  past decisions under a rule agent (disagreements) or a network (log-likelihood).

Policy codes: :data:`HEURISTIC`, :data:`GREEDY`, :data:`NETWORK`; a seat that plays no network
gets :data:`DUMMY_WEIGHTS` (the compiled functions take the same types either way).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from climbrl.agents.external.charlesworth_compiled import MAX_ACTIVE, encode_active, legal_logits
from climbrl.agents.hand_structure import (
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
    generate_moves,
)

HEURISTIC, GREEDY, NETWORK = 0, 1, 2
"""Policy codes of a rollout seat."""
DUMMY_WEIGHTS = (np.zeros((1, 1), np.float32), np.zeros(1, np.float32), np.zeros((1, 1), np.float32),
                 np.zeros(1, np.float32), np.zeros((1, 1), np.float32), np.zeros(1, np.float32))
"""Weights of a seat that plays no network."""


# --- compiled core -------------------------------------------------------------------------------
@njit(cache=_CACHE)
def combo_cls(typ, ncards):
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
            last_cls = combo_cls(typ, _popcount(m))
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
def _seat_return(hands, seat, pen):
    """``seat``'s return at the end of a game under card scoring (``pen[n]``: what a loser
    holding ``n`` cards pays): the winner, the seat with no cards, collects what the others pay."""
    n = _popcount(hands[seat])
    if n > 0:
        return -pen[n]
    total = 0
    for p in range(4):
        if p != seat:
            total += pen[_popcount(hands[p])]
    return total


@njit(cache=_CACHE)
def _points(hands, seat, partner, pen):
    """The return of ``seat`` at the end of a game, plus its partner's (``partner`` >= 0)."""
    r = _seat_return(hands, seat, pen)
    if partner >= 0:
        r += _seat_return(hands, partner, pen)
    return r


@njit(cache=_CACHE)
def _tally(c, winner, hands, seat, partner, pen, wins, cards, points):
    """Adds a game's end (``hands`` as it ended, its ``winner``) to candidate ``c``'s sums of
    wins, cards left and points (:func:`_points`)."""
    if winner == seat:
        wins[c] += 1
    cards[c] += _popcount(hands[seat])
    points[c] += _points(hands, seat, partner, pen)


@njit(cache=_CACHE)
def search_scores(seat, deals, cand_masks, cand_types, cand_powers, last_cls, last_power, last_player,
                  locked, t, locks, policy, pen, partner):
    """(wins, cards left, points) of each candidate summed over the deals (``deals[s]``: four
    hands with the agent's own in ``seat``): the candidate is played, then the game rolled out.
    Points: the agent's return under card scoring (``pen``, see :func:`_seat_return`), plus
    the seat ``partner``'s when it is >= 0 (a team match). (The rule agents' path:
    :func:`model_search_scores` does the same with a network in some seat, and also tracks the
    public record a network reads, which this one, the champion's hot loop under paper rules,
    does not pay for.)"""
    n_deals = deals.shape[0]
    k = cand_masks.shape[0]
    wins = np.zeros(k, dtype=np.int64)
    cards = np.zeros(k, dtype=np.int64)
    points = np.zeros(k, dtype=np.int64)
    buf = np.empty((3, MAX_LEGAL_MOVES + 1), dtype=np.int64)
    hands = np.empty(4, dtype=np.int64)
    for s in range(n_deals):
        for c in range(k):
            for p in range(4):
                hands[p] = deals[s, p]
            won, nxt, lc, lp, lpl, lk = _play(hands, seat, cand_masks[c], cand_types[c], cand_powers[c],
                                              last_cls, last_power, last_player, locked, locks)
            winner = seat if won else rollout(hands, nxt, lc, lp, lpl, lk, 0, t, locks, policy, buf)
            _tally(c, winner, hands, seat, partner, pen, wins, cards, points)
    return wins, cards, points


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
                        locked, played0, types0, trick0, t, locks, own, own_w, opp, opp_w, seeds, pen, partner):
    """:func:`search_scores` with :func:`model_rollout`: the rollouts of deal ``s`` draw from
    the stream seeded ``seeds[s]``, the same for every candidate (common random numbers)."""
    n_deals = deals.shape[0]
    k = cand_masks.shape[0]
    wins = np.zeros(k, dtype=np.int64)
    cards = np.zeros(k, dtype=np.int64)
    points = np.zeros(k, dtype=np.int64)
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
                winner = seat
            else:
                if lc == 0:
                    trick[0] = 0
                    trick[1] = 0
                    trick[2] = 0
                winner = model_rollout(hands, played, types, trick, nxt, lc, lp, lpl, lk, 0, t, locks, seat, own,
                                       own_w, opp, opp_w, rng_state, buf, work_i, work_f, h1, h2)
            _tally(c, winner, hands, seat, partner, pen, wins, cards, points)
    return wins, cards, points


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


__all__ = ["HEURISTIC", "GREEDY", "NETWORK", "DUMMY_WEIGHTS", "rollout", "search_scores", "model_rollout",
           "model_search_scores", "candidate_order", "replay_mismatches", "replay_loglik"]
