"""The practice guide's look-ahead features (its 6.1; issue 26): ``doudizhu+lookahead`` reads only
the seat's own information (its columns do not move when the hidden cards are re-dealt, with a
control that peeks), a move that goes out is a sure win, the sides are scored by team, the layout
and the empty cases, and a tiny DMC run with the encoder."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from climbrl.agents import Decision
from climbrl.agents.ddz_hand import hand_plays
from climbrl.config import train_config
from climbrl.encoders import make_encoder
from climbrl.encoders.doudizhu import DdzEncoder
from climbrl.encoders.doudizhu_lookahead import (
    CANDIDATES,
    M_CANDIDATE,
    S_RAN,
    S_WIN,
    DdzLookaheadEncoder,
    lookahead,
    side_value,
)
from climbrl.games.doudizhu.state import DdzGame
from climbrl.learn.specs import make_agent
from climbrl.training import train
from tests.test_ddz_search import GAMES, _exchanged, _play_position, _play_to

ENC = DdzLookaheadEncoder()
BASE = DdzEncoder()


def test_registry_and_layout() -> None:
    enc = make_encoder("doudizhu:douzero", "doudizhu+lookahead")
    assert isinstance(enc, DdzLookaheadEncoder)
    assert (enc.state_dim, enc.move_dim) == (546, 85)
    decisions = [Decision.from_state(_play_position(game, seed)) for game in GAMES for seed in range(4)]
    states, moves, offsets = enc.encode(decisions)
    b_states, b_moves, b_offsets = BASE.encode(decisions)
    np.testing.assert_array_equal(states[:, :S_WIN], b_states)
    np.testing.assert_array_equal(moves[:, :M_CANDIDATE], b_moves)
    np.testing.assert_array_equal(offsets, b_offsets)
    assert np.all(states[:, S_RAN] == 1.0)  # every position has a choice
    assert np.all((states[:, S_WIN:S_RAN] >= 0) & (states[:, S_WIN:S_RAN] <= 1))
    for b, d in enumerate(decisions):
        marks = moves[offsets[b]:offsets[b + 1], M_CANDIDATE:]
        k = min(CANDIDATES, len(d.moves))
        assert marks.sum() == k and np.all(marks[:, :k].sum(axis=0) == 1)  # each candidate marks one move
        cand, wins = lookahead(d)
        assert [int(np.flatnonzero(marks[:, i])[0]) for i in range(k)] == list(cand)
        np.testing.assert_allclose(states[b, S_WIN:S_WIN + k], wins, rtol=1e-6)
    assert len({tuple(np.round(s[S_WIN:S_RAN], 3)) for s in states}) > len(states) // 2  # they vary


def test_auction_decisions_and_forced_moves_carry_nothing() -> None:
    game = DdzGame("standard")
    s = game.new_game(seed=3)
    bid = Decision.from_state(s)
    assert bid.observation.phase == "bid"
    forced = None
    for seed in range(50):  # a play decision with one legal move (a pass under a rocket, or the last card)
        s = _play_to(GAMES[0], seed, 40)
        while not s.is_terminal():
            d = Decision.from_state(s)
            if d.observation.phase == "play" and len(d.moves) == 1:
                forced = d
                break
            s.apply(d.moves[0] if len(d.moves) == 1 else d.moves[-1])
        if forced:
            break
    assert forced is not None
    states, moves, _ = ENC.encode([bid, forced])
    assert not states[:, S_WIN:].any() and not moves[:, M_CANDIDATE:].any()


def test_a_move_that_goes_out_is_a_sure_win() -> None:
    """The heuristic goes out when it can (its rule 1): that candidate comes first and wins on
    every sampled deal."""
    found = 0
    for seed in range(40):
        s = _play_to(GAMES[0], seed, 200)  # one move before the end
        d = Decision.from_state(s)
        out = [i for i, m in enumerate(d.moves) if d.game.move_size(m) == sum(d.observation.hand)]
        if out and len(d.moves) > 1:
            cand, wins = lookahead(d)
            assert cand[0] in out and wins[0] == pytest.approx(1.0)
            found += 1
    assert found >= 5


def test_sides_are_scored_by_team() -> None:
    """A finished game: 1 for every seat of the winning side, 0 for the other side. A game in
    progress: the side whose best hand needs fewer plays reads 1, a peasant sharing its
    partner's reading."""
    ended = 0
    for seed in range(6):
        s = _play_to(GAMES[0], seed, 200)  # one move before the end: its biggest move goes out
        d = Decision.from_state(s)
        s.apply(d.moves[[d.game.move_size(m) for m in d.moves].index(max(d.game.move_size(m) for m in d.moves))])
        if s.is_terminal():
            r = s.returns()
            assert [side_value(s, p) for p in range(3)] == [float(x > 0) for x in r]
            ended += 1
    assert ended >= 3
    s = GAMES[0].new_game(seed=11)
    plays = [hand_plays(s.hands[p])[0] for p in range(3)]
    lord, peasants = plays[s.landlord], min(p for i, p in enumerate(plays) if i != s.landlord)
    want = 1.0 if lord < peasants else 0.0 if lord > peasants else 0.5
    assert side_value(s, s.landlord) == want
    for p in range(3):
        if p != s.landlord:
            assert side_value(s, p) == 1.0 - want


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(which=st.integers(0, 1), seed=st.integers(0, 5_000), draw=st.integers(0, 10_000))
def test_features_do_not_move_when_the_hidden_cards_are_redealt(which: int, seed: int, draw: int) -> None:
    """The guide's features from the seat's own information only: the same position with the
    other seats' hidden cards re-dealt (every public fact kept) gives the same columns."""
    state = _play_position(GAMES[which], seed)
    other = _exchanged(state, random.Random(draw))
    d, e = Decision.from_state(state), Decision.from_state(other)
    assert e.observation == d.observation
    a, b = ENC.encode([d]), ENC.encode([e])
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_the_redeal_test_catches_features_that_peek() -> None:
    """Control: the same play-outs run on the true hands (a cheat) give other values under some
    of these re-deals, so the test above would catch features that peek."""
    from climbrl.agents.ddz_search import rebuild
    from climbrl.encoders.doudizhu_lookahead import _RULE as rule
    from climbrl.encoders.doudizhu_lookahead import HORIZON, play_ahead, rule_candidates

    def cheat(state) -> list[float]:
        d = Decision.from_state(state)
        cand = rule_candidates(d, rule.act(d, random.Random(0)), CANDIDATES)
        out = []
        for k in cand:
            st_ = rebuild(d.observation, d.game, state.hands.astype(np.int64))
            st_.apply(d.moves[int(k)])
            play_ahead(st_, HORIZON, random.Random(0))
            out.append(side_value(st_, d.observation.seat))
        return out

    positions = [_play_position(GAMES[0], seed) for seed in range(8)]
    assert sum(any(cheat(_exchanged(s, random.Random(k))) != cheat(s) for k in range(3)) for s in positions) > 0


def test_a_tiny_dmc_run_learns_with_the_features(tmp_path) -> None:
    cfg = train_config("dmc", game="doudizhu", rules="douzero", encoder="doudizhu+lookahead", epochs=1,
                       games_per_epoch=3, eval_every=0, hidden=16, minibatch_decisions=64, keep_policy_every=0,
                       seed=5)
    train(cfg, tmp_path, progress=False)
    agent = make_agent(f"checkpoint:{tmp_path / 'policy.pt'}", "doudizhu")
    assert isinstance(agent.encoder, DdzLookaheadEncoder)
    d = Decision.from_state(_play_position(GAMES[0], 1))
    assert 0 <= agent.act(d, random.Random(0)) < len(d.moves)


def _heuristic_decisions(games: int) -> list[Decision]:
    """Every decision of ``games`` heuristic self-play games, in the runner's lockstep order."""
    from climbrl.agents.doudizhu_rules import DdzHeuristicAgent
    from climbrl.agents.runner import play_games

    rule, out = DdzHeuristicAgent(), []
    play_games(GAMES[0], [[rule] * 3] * games, range(games), [[3 * g + p for p in range(3)] for g in range(games)],
               on_step=lambda agent, gis, decisions, picks: out.extend(decisions))
    return out


def test_the_distiller_learns_the_features_and_stands_in_for_the_playouts() -> None:
    """The guide's distilled variant: fitted on the play-outs it predicts them better than a
    constant on its own positions, the same seed gives the same weights, and its encoder keeps
    the layout (the base columns, the candidates, the flag) with predictions in place of the
    play-outs, under the play-out encoder's name, so a policy trained with one plays with the other."""
    import torch

    from climbrl.learn.lookahead_distill import DistilledLookaheadEncoder, LookaheadDistiller

    decisions = _heuristic_decisions(5)
    a, b = LookaheadDistiller(hidden=32, seed=1), LookaheadDistiller(hidden=32, seed=1)
    fit = a.fit(decisions, epochs=60, holdout=0.05)
    b.fit(decisions, epochs=60, holdout=0.05)
    for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True):
        assert torch.equal(x, y)
    assert fit["positions"] > 50
    choice = [d for d in decisions if len(lookahead(d)[0])]
    truth = [lookahead(d)[1] for d in choice]
    pred = [a.features(d)[1] for d in choice]
    const = np.mean(np.concatenate(truth))
    err = np.mean(np.concatenate([np.abs(p - t) for p, t in zip(pred, truth, strict=True)]))
    assert err < 0.8 * np.mean(np.abs(np.concatenate(truth) - const))
    enc = DistilledLookaheadEncoder(a)
    assert enc.describe() == ENC.describe()
    sample = decisions[:40]
    (s1, m1, o1), (s2, m2, o2) = enc.encode(sample), ENC.encode(sample)
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(m1, m2)
    np.testing.assert_array_equal(s1[:, :S_WIN], s2[:, :S_WIN])
    np.testing.assert_array_equal(s1[:, S_RAN], s2[:, S_RAN])
    ran = s1[:, S_RAN] == 1
    assert ran.any() and np.all((s1[ran, S_WIN:S_RAN] >= 0) & (s1[ran, S_WIN:S_RAN] <= 1))
