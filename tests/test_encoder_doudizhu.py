"""Dou Dizhu's encoder: dimensions, move rows, no hidden information, determinism, rewards."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from climbrl.agents.base import Decision
from climbrl.encoders import EncoderError, make_encoder
from climbrl.encoders.base import check_fits, describe
from climbrl.encoders.doudizhu import MOVE_DIM, STATE_DIM, DdzEncoder, cards
from climbrl.games.doudizhu.moves import TYPE_BOMB, TYPE_ROCKET, TYPE_SOLO, TYPE_TRIO_SOLO, parse_counts
from climbrl.games.doudizhu.state import DdzGame
from tests.random_play import play, play_prefix

GAMES = {name: DdzGame(name) for name in ("standard", "rlcard", "openspiel", "online")}
FULL = np.array([4] * 13 + [1, 1])
ENC = DdzEncoder()
game_st = st.sampled_from(sorted(GAMES))
seed_st = st.integers(0, 2**32)


def decisions_of(game, seed, choice):
    out = []
    state = play(game, seed, choice, lambda s, rng: out.append(Decision.from_state(s)))
    return out, state


def test_layout_constants() -> None:
    assert (ENC.state_dim, ENC.move_dim) == (STATE_DIM, MOVE_DIM) == (542, 82)
    assert ENC.describe() == {"game": "doudizhu", "name": "doudizhu", "version": 1, "state_dim": 542,
                              "move_dim": 82}


def test_cards_encoding_is_douzero_thermometer() -> None:
    v = cards(parse_counts("3334BR"))
    assert np.flatnonzero(v).tolist() == [0, 1, 2, 4, 52, 53]
    assert cards(FULL).sum() == 54 and cards(np.zeros(15)).sum() == 0


@settings(max_examples=20, deadline=None)
@given(name=game_st, seed=seed_st, choice=seed_st)
def test_shapes_rows_and_ranges_over_random_games(name, seed, choice) -> None:
    decs, _ = decisions_of(GAMES[name], seed, choice)
    states, moves, offsets = ENC.encode(decs)
    assert states.shape == (len(decs), STATE_DIM) and states.dtype == np.float32
    assert moves.shape == (sum(len(d.moves) for d in decs), MOVE_DIM) and moves.dtype == np.float32
    assert offsets.dtype == np.int64 and offsets[0] == 0
    assert np.diff(offsets).tolist() == [len(d.moves) for d in decs]
    assert states.min() >= 0 and states.max() <= 1 and moves.min() >= 0 and moves.max() <= 1
    # every state has exactly one phase, one role per relative seat, one auction slot per seat
    assert (states[:, 355:357].sum(axis=1) == 1).all()
    assert (states[:, 346:355].reshape(-1, 3, 3).sum(axis=2) == 1).all()
    assert (states[:, 358:379].reshape(-1, 3, 7).sum(axis=2) == 1).all()
    # own hand + unseen + played = the deck, rank by rank
    total = states[:, 0:54] + states[:, 54:108] + states[:, 181:343].reshape(-1, 3, 54).sum(axis=1)
    assert (total[:, :52].reshape(-1, 13, 4).sum(axis=2) == 4).all() and (total[:, 52:] == 1).all()
    for b, d in enumerate(decs):
        rows = moves[offsets[b]:offsets[b + 1]]
        assert (rows[:, 72] == [m == 0 for m in d.moves]).all()
        bid = d.observation.phase == "bid"
        assert (rows[:, 73:79].sum(axis=1) == (1 if bid else 0)).all()
        assert np.allclose(rows[:, 79] * 20, sum(d.observation.hand) - rows[:, 71] * 20)
    # a batch encodes as its decisions one at a time, in any split
    k = len(decs) // 2
    s1, m1, o1 = ENC.encode(decs[:k])
    s2, m2, o2 = ENC.encode(decs[k:])
    assert np.array_equal(np.concatenate([s1, s2]), states) and np.array_equal(np.concatenate([m1, m2]), moves)
    assert np.array_equal(np.concatenate([o1, o2[1:] + o1[-1]]), offsets)


def test_empty_batch() -> None:
    s, m, o = ENC.encode([])
    assert s.shape == (0, STATE_DIM) and m.shape == (0, MOVE_DIM) and o.tolist() == [0]


def _bomb_game():
    """rlcard (seat 0 landlord): seat 0 holds 3333, 222 and, with the kitty, the rocket."""
    hand0 = "3333456789TJQKA22"
    rest = FULL - parse_counts(hand0)
    cs = "".join("3456789TJQKA2BR"[r] * int(c) for r, c in enumerate(rest))
    game = GAMES["rlcard"]
    return game, game.new_game(hands=[hand0, cs[:17], cs[17:34]], kitty=cs[34:], first_bidder=0)


def test_move_rows_of_bombs_breaks_and_pass() -> None:
    game, s = _bomb_game()
    assert s.landlord == 0 and s.current_player == 0 and s.kitty.tolist()[-3:] == [1, 1, 1]  # kitty 2BR
    d = Decision.from_state(s)
    states, moves, offsets = ENC.encode([d])
    row = {game.format_move(m): moves[i] for i, m in enumerate(d.moves)}
    bomb = row["3333"]
    assert np.flatnonzero(bomb[:54]).tolist() == [0, 1, 2, 3]
    assert np.flatnonzero(bomb[54:69]).tolist() == [TYPE_BOMB]
    assert bomb[69] == pytest.approx(1 / 12) and bomb[70] == 0 and bomb[71] == pytest.approx(4 / 20)
    assert bomb[72] == 0 and bomb[73:79].sum() == 0
    assert bomb[79] == pytest.approx(16 / 20) and bomb[80] == 0 and bomb[81] == 1
    rocket = row["BR"]
    assert np.flatnonzero(rocket[:54]).tolist() == [52, 53]
    assert np.flatnonzero(rocket[54:69]).tolist() == [TYPE_ROCKET]
    assert rocket[69] == pytest.approx(2 / 12) and rocket[70] == pytest.approx(13 / 14)
    assert rocket[80] == 0 and rocket[81] == 1
    solo3 = row["3"]
    assert np.flatnonzero(solo3[54:69]).tolist() == [TYPE_SOLO] and solo3[80] == 1 and solo3[81] == 0
    assert row["4"][80] == 0 and row["B"][80] == 1 and row["R"][80] == 1
    assert row["2"][80] == 0 and row["2"][70] == pytest.approx(12 / 14)
    assert row["3334"][80] == 1 and np.flatnonzero(row["3334"][54:69]).tolist() == [TYPE_TRIO_SOLO]
    assert row["333345"][80] == 1  # a four with two uses up the bomb
    assert row["4222"][80] == 0
    assert 0 not in d.moves  # the landlord leads
    assert states[0, 177] == 1 and states[0, 162] == 1 and states[0, 108:162].sum() == 0
    assert states[0, 178:181].sum() == 0
    assert states[0, 380:434].sum() == 3  # the kitty is shown

    s.apply(game.parse_move("4"))
    d = Decision.from_state(s)
    assert d.seat == 1 and d.moves[0] == 0
    states, moves, _ = ENC.encode([d])
    p = moves[0]
    assert np.flatnonzero(p).tolist() == [54, 72, 79]  # type pass, is pass, cards left
    assert p[79] == pytest.approx(17 / 20)
    st_ = states[0]
    assert np.flatnonzero(st_[108:162]).tolist() == [4] and st_[162 + TYPE_SOLO] == 1 and st_[177] == 0
    assert np.flatnonzero(st_[178:181]).tolist() == [2]  # played by the seat before (relative 2)
    assert np.flatnonzero(st_[434:488]).tolist() == [4] and st_[488:542].sum() == 0  # the last play
    assert st_[343:346] * 20 == pytest.approx([17, 17, 19])
    assert np.flatnonzero(st_[346:355]).tolist() == [1, 4, 6]  # peasant, peasant, landlord
    assert np.flatnonzero(st_[355:357]).tolist() == [1]  # play phase
    assert st_[357] == 1  # fixed landlord: the base stake is the highest


def test_move_and_state_rows_in_the_auction() -> None:
    game = GAMES["standard"]
    s = game.new_game(seed=5)
    d = Decision.from_state(s)
    assert d.moves == [0, 1, 2, 3]
    states, moves, _ = ENC.encode([d])
    assert np.flatnonzero(moves[0]).tolist() == [54, 72, 73, 79]
    for k in (1, 2, 3):
        assert np.flatnonzero(moves[k]).tolist() == [73 + k, 79]
    assert moves[:, 79] == pytest.approx(np.full(4, 17 / 20))
    s0 = states[0]
    assert np.flatnonzero(s0[346:355]).tolist() == [2, 5, 8]  # no landlord yet
    assert np.flatnonzero(s0[355:357]).tolist() == [0] and s0[177] == 0 and s0[357] == 0
    assert s0[54:108].sum() == 37 and s0[380:434].sum() == 0  # the kitty is unseen
    s.apply(2)
    d = Decision.from_state(s)
    s1 = ENC.encode([d])[0][0]
    assert s1[357] == pytest.approx(2 / 3)
    assert np.flatnonzero(s1[358:379]).tolist() == [0, 7, 14 + 3]  # the seat before bid 2
    assert ENC.encode([d])[1][:, 73:79].argmax(axis=1).tolist() == [0, 3]


def test_rob_auction_stake() -> None:
    game = GAMES["online"]
    s = game.new_game(seed=2)
    s.apply(4)
    assert ENC.encode([Decision.from_state(s)])[0][0, 357] == pytest.approx(1 / 8)
    s.apply(5)
    d = Decision.from_state(s)
    st_, mv, _ = ENC.encode([d])
    assert st_[0, 357] == pytest.approx(2 / 8)
    assert d.moves == [0, 5] and mv[1, 78] == 1


def _with_opponents_resplit(s, rng):
    """A state with the same public record and the acting seat's hand, the two other seats'
    unplayed cards dealt anew between them (the landlord keeps what it must of the kitty)."""
    game = s.game
    actor = s.current_player
    o1, o2 = [x for x in range(3) if x != actor]
    hands = s.hands.astype(np.int64)
    played = s.played.astype(np.int64)
    kitty = s.kitty.astype(np.int64)
    shown = s.landlord >= 0
    keep = {o: np.maximum(kitty - played[o], 0) if shown and o == s.landlord else np.zeros(15, np.int64)
            for o in (o1, o2)}
    pool = hands[o1] + hands[o2] - keep[o1] - keep[o2]
    cs = [r for r in range(15) for _ in range(int(pool[r]))]
    rng.shuffle(cs)
    n1 = int(hands[o1].sum() - keep[o1].sum())
    new = {o1: keep[o1] + np.bincount(cs[:n1], minlength=15), o2: keep[o2] + np.bincount(cs[n1:], minlength=15)}
    deal = [None, None, None]
    deal[actor] = hands[actor] + played[actor] - (kitty if shown and actor == s.landlord else 0)
    for o in (o1, o2):
        deal[o] = new[o] + played[o] - (kitty if shown and o == s.landlord else 0)
    first = s.deals[-1][2]
    t = game.new_game(hands=[d.astype(np.int8) for d in deal], kitty=kitty.astype(np.int8), first_bidder=first)
    n = len(s.auction_history) + len(s.history)
    for a in s.actions[len(s.actions) - n:]:
        t.apply(a)
    assert t.current_player == actor and np.array_equal(t.hands[actor], s.hands[actor])
    return t


@settings(max_examples=20, deadline=None)
@given(name=game_st, seed=seed_st, choice=seed_st, stop=st.integers(0, 120), resplit=seed_st)
def test_state_never_depends_on_hidden_cards(name, seed, choice, stop, resplit) -> None:
    s = play_prefix(GAMES[name], seed, choice, stop)
    if s is None:
        return
    t = _with_opponents_resplit(s, random.Random(resplit))
    a, b = Decision.from_state(s), Decision.from_state(t)
    ea, eb = ENC.encode([a]), ENC.encode([b])
    for x, y in zip(ea, eb, strict=True):
        assert np.array_equal(x, y)


@settings(max_examples=10, deadline=None)
@given(name=game_st, seed=seed_st, choice=seed_st)
def test_encoding_reads_only_the_decision_and_is_deterministic(name, seed, choice) -> None:
    decs, _ = decisions_of(GAMES[name], seed, choice)
    copies = [Decision(d.observation, list(d.moves), list(d.types), list(d.powers), d.game) for d in decs]
    a, b, c = ENC.encode(decs), ENC.encode(copies), DdzEncoder().encode(decs)
    for x, y, z in zip(a, b, c, strict=True):
        assert np.array_equal(x, y) and np.array_equal(x, z)


@settings(max_examples=20, deadline=None)
@given(name=game_st, seed=seed_st, choice=seed_st)
def test_shaping_is_the_lead_bonus_only(name, seed, choice) -> None:
    decs, state = decisions_of(GAMES[name], seed, choice)
    for d in decs:
        o = d.observation
        won_trick = o.phase == "play" and o.to_beat == 0 and len(o.history) > 0
        assert ENC.shaping(d) == (0.05 if won_trick else 0.0)
        if won_trick:  # the last play before the two passes was its own
            assert o.history[-1][1] == 0 and o.history[-2][1] == 0 and o.history[-3][0] == o.seat


@settings(max_examples=20, deadline=None)
@given(name=game_st, seed=seed_st, choice=seed_st)
def test_card_score_is_the_losing_sides_cards(name, seed, choice) -> None:
    _, s = decisions_of(GAMES[name], seed, choice)
    winners = s.result().winners
    left = s.cards_left()
    scores = [ENC.card_score(s, seat) for seat in range(3)]
    if not winners:
        assert scores == [0.0, 0.0, 0.0]
        return
    losing = sum(left[x] for x in range(3) if x not in winners)
    assert losing > 0 and left[s.winner] == 0
    assert scores == [(losing if x in winners else -losing) / 20 for x in range(3)]


def test_make_encoder_round_trip() -> None:
    enc = make_encoder("doudizhu:standard")
    assert isinstance(enc, DdzEncoder) and describe(enc) == ENC.describe()
    assert type(make_encoder("doudizhu")) is DdzEncoder
    check_fits(describe(enc), make_encoder("doudizhu:rlcard"), "checkpoint")
    with pytest.raises(EncoderError):
        check_fits(describe(enc), make_encoder("big2"), "checkpoint")
    with pytest.raises(EncoderError):
        check_fits(None, enc, "legacy checkpoint")
