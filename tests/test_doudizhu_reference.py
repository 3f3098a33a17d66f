"""Dou Dizhu against the public engines: replay RLCard's and OpenSpiel's 300 reference games
(``shared/external/doudizhu/README.md``) and compare every legal set and the final returns.

RLCard is replayed under the ``rlcard`` preset. OpenSpiel is replayed under ``openspiel`` with
the two fault knobs on (``OPENSPIEL_EXACT``), which must match it everywhere, and the correct
``openspiel`` preset is compared at the same positions: every difference must be one of the
README's documented faults, each shown by its own test below.
"""

from __future__ import annotations

import numpy as np
import pytest

from climbrl.games.doudizhu.combos import classify, legal_ids
from climbrl.games.doudizhu.moves import (
    TYPE_BOMB,
    TYPE_PAIR_CHAIN,
    TYPE_SOLO_CHAIN,
    TYPE_TRIO_CHAIN,
    action_table,
    format_counts,
    parse_counts,
)
from climbrl.games.doudizhu.rules import OPENSPIEL_EXACT, get_rules
from climbrl.games.doudizhu.state import DdzGame, openspiel_deal
from climbrl.paths import ddz_openspiel_games_path, ddz_rlcard_games_path
from tests.reference import iter_reference_games, require_reference

TABLE = action_table()
OPENSPIEL = get_rules("openspiel")
OPENSPIEL_FAULTS = get_rules("openspiel", **OPENSPIEL_EXACT)


def _cards(ids: list[int]) -> list[str]:
    return sorted({TABLE.moves[i].cards for i in ids})


def _move_id(game: DdzGame, d: dict, legal: list[int]) -> int:
    """The recorded action as our id (a winged plane's OpenSpiel label picks among ambiguous ids)."""
    ids = [i for i in classify(d["action"], game.rules) if i in legal] if d["action"] else [0]
    if len(ids) > 1:
        ids = [i for i in ids if TABLE.moves[i].label == d["label"]]
    assert len(ids) == 1, (d["action"], ids)
    return ids[0]


def _replay(game: DdzGame, record: dict, state, decisions: list) -> None:
    for d in record["decisions"]:
        assert state.current_player == d["player"]
        assert format_counts(state.hands[d["player"]]) == d["hand"]
        legal = state.legal_moves()
        if d["kind"] == "bid":
            assert legal == d["legal"], (record["game"], d)
            state.apply(d["action"])
            continue
        assert _cards(legal) == sorted(d["legal"]), (record["game"], d)
        if "n_legal_ids" in d:
            assert len(legal) == d["n_legal_ids"]
        decisions.append((d, state.prev, legal))
        move = _move_id(game, d, legal)
        assert TABLE.moves[move].type_name == d["type"] or (move == 0 and d["type"] == "pass")
        state.apply(move)
    assert state.is_terminal()


@pytest.fixture(scope="module")
def rlcard_replay():
    path = require_reference(ddz_rlcard_games_path(), "CLIMBRL_DDZ_RLCARD_GAMES")
    game = DdzGame("rlcard")
    games, decisions = [], []
    for rec in iter_reference_games(path):
        s = game.new_game(hands=rec["hands"], kitty=rec["kitty"], first_bidder=0)
        _replay(game, rec, s, decisions)
        games.append((rec, s))
    return games, decisions


@pytest.fixture(scope="module")
def openspiel_replay():
    path = require_reference(ddz_openspiel_games_path(), "CLIMBRL_DDZ_OPENSPIEL_GAMES")
    game = DdzGame(OPENSPIEL_FAULTS)
    games, decisions = [], []
    for rec in iter_reference_games(path):
        hands, kitty, first = openspiel_deal(rec["chance"])
        assert [format_counts(h) for h in hands] == rec["hands"]
        assert format_counts(kitty) == rec["kitty"] and first == rec["first_bidder"]
        s = game.new_game(hands=hands, kitty=kitty, first_bidder=first)
        _replay(game, rec, s, decisions)
        games.append((rec, s))
    return games, decisions


def _play_decisions(games) -> int:
    """The file's own count of play decisions (bids apart), which the replay must all have checked."""
    return sum(d["kind"] == "play" for rec, _ in games for d in rec["decisions"])


def test_rlcard_games_replay_with_identical_legal_sets_and_payoffs(rlcard_replay) -> None:
    games, decisions = rlcard_replay
    assert games and len(decisions) == _play_decisions(games)
    for rec, s in games:
        assert s.returns() == rec["payoffs"]
        assert s.winner == rec["winner"] and s.landlord == rec["landlord"] == 0
        assert [format_counts(h) for h in s.hands] == rec["final_hands"]


def test_openspiel_games_replay_with_faults_on_identically(openspiel_replay) -> None:
    games, decisions = openspiel_replay
    assert games and len(decisions) == _play_decisions(games)
    for rec, s in games:
        assert s.returns() == rec["returns"], rec["game"]
        assert s.landlord == (rec["landlord"] if rec["landlord"] is not None else -1)
        assert s.stake == rec["bid"]
        if rec["landlord"] is None:  # an all-pass auction: no play, nothing won or lost
            assert not any(d["kind"] == "play" for d in rec["decisions"]), rec["game"]
            assert s.returns() == [0, 0, 0] and s.stake == 0, rec["game"]
            continue
        assert s.bombs == rec["bombs"] and s.plays == rec["hands_played"]
        assert [format_counts(h) for h in s.hands] == rec["final_hands"]


def _fault_diffs(decisions):
    """Each decision where the correct ``openspiel`` preset differs: (record, ours, theirs)."""
    out = []
    for d, prev, recorded in decisions:
        hand = parse_counts(d["hand"])
        ours = legal_ids(hand, prev, OPENSPIEL)
        if ours != recorded:
            out.append((d, prev, set(ours) - set(recorded), set(recorded) - set(ours)))
    return out


def test_openspiel_preset_differs_only_by_documented_faults(openspiel_replay) -> None:
    _, decisions = openspiel_replay
    for d, prev, extra, missing in _fault_diffs(decisions):
        bombs_on_rocket = prev == TABLE.rocket and all(TABLE.type[i] == TYPE_BOMB for i in missing)
        quad_chains = all(
            TABLE.type[i] in (TYPE_SOLO_CHAIN, TYPE_PAIR_CHAIN, TYPE_TRIO_CHAIN)
            and parse_counts(d["hand"])[TABLE.main[i]] == 4 for i in extra)
        assert (not missing or bombs_on_rocket) and (not extra or quad_chains), d


def test_openspiel_fault_bombs_offered_against_the_rocket(openspiel_replay) -> None:
    """README fault 1: OpenSpiel offers every held bomb against the rocket; we offer only pass."""
    _, decisions = openspiel_replay
    diffs = [x for x in _fault_diffs(decisions) if x[3]]
    assert diffs, "the reference games hold bombs offered against the rocket (games 9, 22, ...)"
    for d, prev, _extra, missing in diffs:
        assert d["prev"] == "BR" and prev == TABLE.rocket
        assert {TABLE.moves[i].cards for i in missing} == {r * 4 for r in "3456789TJQKA2"
                                                            if r * 4 in d["legal"]}
        assert legal_ids(parse_counts(d["hand"]), prev, OPENSPIEL) == [0]
    print(f"bombs against the rocket: {len(diffs)} decisions")


def test_openspiel_fault_no_chain_from_a_quad_head(openspiel_replay) -> None:
    """README fault 2: OpenSpiel offers no solo/pair chain or plain plane starting at a rank
    held four times. Shown on the reference games (where it occurs) and on a chosen hand."""
    _, decisions = openspiel_replay
    diffs = [x for x in _fault_diffs(decisions) if x[2]]
    for d, _prev, extra, _missing in diffs:
        assert all(TABLE.moves[i].cards not in d["legal"] for i in extra)
    hand = parse_counts("33334567899TJQKA2")
    with_fault = _cards(legal_ids(hand, 0, OPENSPIEL_FAULTS))
    correct = _cards(legal_ids(hand, 0, OPENSPIEL))
    assert "34567" in correct and "34567" not in with_fault
    assert "45678" in with_fault
    assert set(correct) - set(with_fault) == {c for c in correct if c.startswith("34") and len(c) >= 5
                                              and len(set(c)) == len(c)}
    print(f"chains from a quad head: {len(diffs)} reference decisions")


def test_openspiel_ambiguous_planes_are_distinct_ids() -> None:
    """``333444555666`` is a 4-trio plane and two 3-trio planes with solo wings in OpenSpiel."""
    ids = classify("333444555666", OPENSPIEL)
    assert sorted(TABLE.moves[i].label for i in ids) == ["333444555-666", "333444555666", "444555666-333"]
    assert classify("333444555666", get_rules("rlcard")) == [ids[0]] or len(
        classify("333444555666", get_rules("rlcard"))) == 1
    hand = np.array(parse_counts("333444555666789TJ"))
    assert len(legal_ids(hand, 0, OPENSPIEL)) > len(_cards(legal_ids(hand, 0, OPENSPIEL)))


def test_action_table_sizes_match_the_engines() -> None:
    """Allowed plays: RLCard's 27,471 combinations and OpenSpiel's 26,053 play ids (pass apart)."""
    from climbrl.games.doudizhu.moves import allowed_mask

    assert int(allowed_mask(get_rules("rlcard")).sum()) - 1 == 27471
    assert int(allowed_mask(OPENSPIEL).sum()) - 1 == 26053
