"""``doudizhu+handsplit``: the six hand-split columns on hand-made positions, against the rule agents'
own hand split and beatable rule on random positions, and blind to the hidden cards."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from climbrl.agents.base import Decision
from climbrl.agents.ddz_hand import split_hand
from climbrl.agents.doudizhu_rules import _View
from climbrl.encoders import EncoderError, make_encoder
from climbrl.encoders.doudizhu import DdzEncoder
from climbrl.encoders.doudizhu_handsplit import MOVE_DIM, DdzHandSplitEncoder, search_features
from climbrl.games.doudizhu.moves import FIRST_PLAY
from tests.random_play import play_prefix
from tests.test_encoder_doudizhu import GAMES, _bomb_game, _with_opponents_resplit

ENC = DdzHandSplitEncoder()
game_st = st.sampled_from(sorted(GAMES))
seed_st = st.integers(0, 2**32)


def _rows(d):
    _, moves, _ = ENC.encode([d])
    return {d.game.format_move(m): moves[i, 82:] for i, m in enumerate(d.moves)}


def test_registry_and_layout() -> None:
    enc = make_encoder("doudizhu:standard", "doudizhu+handsplit")
    assert isinstance(enc, DdzHandSplitEncoder) and (enc.state_dim, enc.move_dim) == (542, MOVE_DIM) == (542, 88)
    assert enc.describe()["name"] == "doudizhu+handsplit"
    assert type(make_encoder("doudizhu", "")) is DdzEncoder
    with pytest.raises(EncoderError, match="encoders: big2"):
        make_encoder("big2", "doudizhu+handsplit")


def test_checkpoints_that_record_the_old_name_still_load(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Renamed from ``doudizhu+search`` (issue 26): a policy file that records the old name loads
    with today's encoder, and a checkpoint check against the new one passes."""
    import torch

    from climbrl.encoders.base import check_fits
    from climbrl.learn.checkpoint import load_network, network_payload
    from climbrl.learn.network import make_net

    net = make_net(state_dim=ENC.state_dim, move_dim=ENC.move_dim, hidden=8, generator=torch.Generator())
    payload = network_payload(net, "ppo", 1, ENC)
    payload["encoder"]["name"] = "doudizhu+search"
    torch.save(payload, tmp_path / "old.pt")
    _, _, enc = load_network(tmp_path / "old.pt", game="doudizhu")
    assert isinstance(enc, DdzHandSplitEncoder)
    check_fits(payload["encoder"], ENC, "old.pt")
    assert isinstance(make_encoder("doudizhu", "doudizhu+search"), DdzHandSplitEncoder)


def test_features_on_a_hand_made_position() -> None:
    # seat 0 (landlord, leading) holds 3333 4..A 222 B R; unseen: three of each of 4..A and one 2
    _, s = _bomb_game()
    d = Decision.from_state(s)
    assert list(d.observation.hand) == [4] + [1] * 11 + [3, 1, 1]
    base = DdzEncoder().encode([d])[1]
    assert np.array_equal(ENC.encode([d])[1][:, :82], base)  # the base columns are unchanged
    r = _rows(d)
    # after the 3: chain 3..A, rocket, 222+33, none beatable (no unseen bomb, rocket, higher trio)
    assert r["3"] == pytest.approx([3 / 20, 0, 1, 1, 12 / 13, 0])  # 4..A and the 2 beat a 3
    assert r["A"][3:] == pytest.approx([1, 1 / 13, 0])  # only the unseen 2
    for m in ("2", "BR", "3333"):
        assert r[m][3:].tolist() == [0, 0, 0]
    # the long chain leaves the rocket and trios 333 and 222: three plays, the 333 beatable
    assert r["3456789TJQKA"] == pytest.approx([3 / 20, 1 / 20, 0, 0, 0, 0])
    assert r["34567"][3:] == pytest.approx([1, 7 / 13, 0])  # starts 4..T, all three times unseen


def test_going_out_leaves_an_unbeatable_empty_hand() -> None:
    game, s = _bomb_game()
    t = game.table
    m = game.parse_move("3333")
    hand = t.counts[m].astype(np.int64)[None]
    unseen = (np.array([4] * 13 + [1, 1]) - hand)  # a rocket and bombs unseen: the 3333 is beatable
    out = search_features(hand, unseen, np.array([17]), np.array([0]), np.array([m]), t.counts,
                          np.asarray(t.type), np.asarray(t.main), np.asarray(t.length), np.asarray(t.ncards),
                          FIRST_PLAY)
    assert out[0] == pytest.approx([0, 0, 1, 1, 0, 1])  # 12 higher bombs and the rocket, capped at 4


def test_auction_rows_carry_the_hand_only() -> None:
    s = GAMES["standard"].new_game(seed=5)
    d = Decision.from_state(s)
    _, moves, _ = ENC.encode([d])
    plays = split_hand(d.observation.hand)[0]
    assert (moves[:, 82] == np.float32(plays / 20)).all() and (moves[:, 85:] == 0).all()


def _reference(d):
    """The columns from the rule agents' split and beatable rule, move by move."""
    v = _View(d)
    game = d.game
    out = []
    for m in d.moves:
        play = m >= FIRST_PLAY
        rest = v.hand - (game.table.counts[m] if play else 0)
        plays, beatable = 0, 0
        if rest.sum():
            plays, _, groups = split_hand(rest)
            for _, counts in groups:
                text = "".join("3456789TJQKA2BR"[q] * int(c) for q, c in enumerate(counts))
                beatable += v.beatable(game.parse_move(text))
        out.append((plays, beatable, beatable == 0, play and v.beatable(m)))
    return np.array(out, dtype=np.float64)


@settings(max_examples=15, deadline=None)
@given(name=game_st, seed=seed_st, choice=seed_st, stop=st.integers(0, 80))
@example(name="rlcard", seed=13355, choice=0, stop=0)  # TTT JJJJ K: the split once winged a plane with its own J
def test_columns_match_the_rule_agents_split_and_beatable_rule(name, seed, choice, stop) -> None:
    s = play_prefix(GAMES[name], seed, choice, stop)
    if s is None:
        return
    d = Decision.from_state(s)
    if d.observation.phase != "play":  # the rule agents' view is of the play phase
        return
    _, moves, _ = ENC.encode([d])
    got = np.stack([moves[:, 82] * 20, moves[:, 83] * 20, moves[:, 84], moves[:, 85]], axis=1)
    assert np.allclose(got, _reference(d))
    beat = (moves[:, 86] > 0) | (moves[:, 87] > 0)
    assert (beat == (moves[:, 85] == 1)).all()


@settings(max_examples=20, deadline=None)
@given(name=game_st, seed=seed_st, choice=seed_st, stop=st.integers(0, 120), resplit=seed_st)
def test_encoding_never_depends_on_hidden_cards(name, seed, choice, stop, resplit) -> None:
    s = play_prefix(GAMES[name], seed, choice, stop)
    if s is None:
        return
    t = _with_opponents_resplit(s, random.Random(resplit))
    for x, y in zip(ENC.encode([Decision.from_state(s)]), ENC.encode([Decision.from_state(t)]), strict=True):
        assert np.array_equal(x, y)
