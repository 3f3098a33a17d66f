"""Differential test: our engine under ``charlesworth`` rules against that engine's own games.

At every decision of all 300 reference games the legal move sets must be equal, except the two
faults of that engine's move generator documented in its README: it never offers a straight
flush against a lower straight flush, and it offers only 3 of the 4 triples of a four of a kind
(so also fewer full houses). Our set must be a superset whose extra moves are all of those
kinds. Final scores must be equal.
"""

from __future__ import annotations

from collections import Counter

from climbrl.cards import format_cards
from climbrl.games.big2 import Big2Game
from climbrl.games.big2.combos import FULL_HOUSE, STRAIGHT_FLUSH, TRIPLE
from tests.reference import cw_mask, iter_reference_games


def _documented_fault(move: int, typ: int, hand: int, to_beat_type: int) -> str | None:
    if typ == STRAIGHT_FLUSH and to_beat_type == STRAIGHT_FLUSH:
        return "straight flush over straight flush"
    if typ in (TRIPLE, FULL_HOUSE):
        for r in range(13):
            rank_cards = 0xF << (4 * r)
            if (move & rank_cards).bit_count() == 3 and (hand & rank_cards).bit_count() == 4:
                return "triple from four of a kind"
    return None


def test_reference_games_replay_exactly() -> None:
    game = Big2Game("charlesworth")
    n_games = 0
    n_decisions = 0
    extras: Counter[str] = Counter()
    for ref in iter_reference_games():
        n_games += 1
        hands = [cw_mask(ref["deal"][str(s)]) for s in range(1, 5)]
        state = game.new_game(hands=hands)
        opener, opened = state.history[0]
        assert opener == ref["opening"]["player"] - 1
        assert opened == cw_mask(ref["opening"]["cards"])
        for k, d in enumerate(ref["decisions"]):
            where = f"game {ref['game']} decision {k}"
            assert state.current_player == d["player"] - 1, where
            assert state.hands[state.current_player] == cw_mask(d["hand"]), where
            theirs = {cw_mask(c) for c in d["legal_cards"]}
            ours = {m: t for m, t, _ in state.legal_move_details()}
            missing = theirs - set(ours)
            assert not missing, f"{where}: we lack {[format_cards(m) for m in missing]}"
            for extra in set(ours) - theirs:
                why = _documented_fault(extra, ours[extra], state.hands[state.current_player],
                                        state.last_type)
                assert why, f"{where}: we offer {format_cards(extra)}, that engine does not"
                extras[why] += 1
            state.apply(cw_mask(d["cards"]))
            n_decisions += 1
        assert state.is_terminal(), f"game {ref['game']} did not end"
        assert state.returns() == [float(r) for r in ref["rewards"]], f"game {ref['game']} scores"
    # every recorded game and decision was replayed (the counts are the file's own)
    assert n_games > 0 and n_decisions == sum(len(ref["decisions"]) for ref in iter_reference_games())
    # the documented faults do occur in these games, and our engine offers the correct moves
    assert extras["triple from four of a kind"] > 0, extras
