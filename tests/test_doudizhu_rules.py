"""Dou Dizhu's rule agents (``heuristic``, ``aggressive``, ``conservative``): legal answers under
every preset, the hand split, scripted spots, the bidding score, and Big 2's agents untouched."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from climbrl.agents import Decision, make_agent
from climbrl.agents.ddz_hand import NODE_CAP, evaluate_moves, hand_plays, split_hand, split_nodes
from climbrl.agents.doudizhu_rules import (
    THRESHOLDS,
    DdzHeuristicAgent,
    DdzStyleAgent,
    bid_action,
    hand_strength,
)
from climbrl.agents.heuristic import HeuristicAgent, RuleAgent
from climbrl.agents.registry import check_game
from climbrl.evaluate.match import run_match
from climbrl.games.doudizhu.combos import classify
from climbrl.games.doudizhu.moves import TYPE_NAMES, format_counts, parse_counts
from climbrl.games.doudizhu.state import DdzGame, deal

PRESETS = ["standard", "openspiel", "rlcard", "online", "douzero"]
AGENTS = ["heuristic", "aggressive", "conservative", "random", "greedy"]


@pytest.mark.parametrize("preset", PRESETS)
def test_every_agent_answers_a_legal_index_in_random_games(preset: str) -> None:
    game = DdzGame(preset)
    rng = random.Random(preset)
    bids = plays = 0
    for g in range(40):
        seating = [make_agent(rng.choice(AGENTS), f"doudizhu:{preset}") for _ in range(3)]
        seating[g % 3] = make_agent(("heuristic", "aggressive", "conservative")[g % 3], "doudizhu")
        rngs = [random.Random(1000 * g + s) for s in range(3)]
        state = game.new_game(seed=g)
        while not state.is_terminal():
            d = Decision.from_state(state)
            k = seating[state.current_player].act(d, rngs[state.current_player])
            assert type(k) is int and 0 <= k < len(d.moves)
            bids += d.observation.phase == "bid"
            plays += d.observation.phase == "play"
            state.apply(d.moves[k])  # apply() itself rejects anything illegal
    assert plays > 0 and (bids > 0) == (game.rules.landlord is None)


# --- the hand split ---------------------------------------------------------------------------------
def _split(hand: str) -> tuple[int, list[str]]:
    plays, _, groups = split_hand(parse_counts(hand))
    return plays, sorted(f"{TYPE_NAMES[t]}:{format_counts(c)}" for t, c in groups)


def test_the_split_finds_the_fewest_plays() -> None:
    assert _split("3456789TJQKA") == (1, ["solo_chain:3456789TJQKA"])
    assert _split("334455667788") == (1, ["pair_chain:334455667788"])
    assert _split("33344456789") == (2, ["solo_chain:456789", "trio_pair:33344"])
    assert _split("333444555666BR") == (2, ["rocket:BR", "trio_chain:333444555666"])
    assert _split("33344478") == (1, ["trio_solo_chain:33344478"])
    assert _split("3334448899") == (1, ["trio_pair_chain:3334448899"])
    # bombs stay whole, 2s and jokers are never wings
    assert _split("5555K22") == (3, ["bomb:5555", "pair:22", "solo:K"])
    assert _split("3332") == (2, ["solo:2", "trio:333"])
    assert _split("") == (0, [])
    # a plane's wing is never the last card of one of its own fours: TTTJJJ+JK is no combination
    assert _split("TTTJJJJK") == (2, ["bomb:JJJJ", "trio_solo:TTTK"])
    assert _split("9TTTJJJJK") == (2, ["solo:J", "trio_solo_chain:9TTTJJJK"])
    # ... so the single 9 left by the plane 888999 goes to the other plane, not the lowest single 5
    # (lowest singles first, 888999 was one wing short: 3 plays, the bomb 9999 among them)
    assert _split("33344456888999T9") == (2, ["trio_solo_chain:33344459", "trio_solo_chain:6888999T"])


def test_each_split_keeps_the_better_of_the_two_wing_orders() -> None:
    """The other planes' singles first is not a pure gain (issue 29, section 9): in this dealt hand
    it gave 333444 the Q that JJJQQQ cannot take and left the 7 unattached, weakness 16 for the
    same 4 plays; lowest first leaves the Q (weakness 6), and the split keeps that order here."""
    hand = parse_counts("33344457TTJJJQQQQKK2")
    assert hand_plays(hand) == (4, 6)
    assert _split("33344457TTJJJQQQQKK2") == (4, ["solo:2", "solo:Q", "trio_pair_chain:TTJJJQQQKK",
                                                   "trio_solo_chain:33344457"])
    # ... while the hand that needs the preference keeps it (lowest first: 3 plays)
    assert hand_plays(parse_counts("33344456888999T9")) == (2, 0)


@st.composite
def _hands(draw) -> np.ndarray:
    """Hands of up to 20 cards, rich in trios and fours (so in planes beside a four)."""
    counts = draw(st.lists(st.integers(0, 4), min_size=13, max_size=13)) + draw(
        st.lists(st.integers(0, 1), min_size=2, max_size=2))
    hand, total = np.zeros(15, dtype=np.int8), 0
    for q in draw(st.permutations(range(15))):
        hand[q] = min(counts[q], 20 - total)
        total += int(hand[q])
    return hand


@settings(max_examples=300, deadline=None)
@given(hand=_hands())
@example(hand=parse_counts("KKKKAAAA"))  # once the plane KKKAAA winged by its own K and A
def test_every_group_of_the_split_is_a_combination_under_every_preset(hand) -> None:
    """The rule agents lead these groups, and the search encoder counts them as plays: each must
    be a move of the game's action table, of the group's type (one card string may be several
    moves: ``JJJQQQKKKAAA`` is also a winged plane under OpenSpiel's rules), and together they are
    the hand."""
    plays, _, groups = split_hand(hand)
    assert plays == len(groups)
    assert sum((c.astype(np.int64) for _, c in groups), np.zeros(15, np.int64)).tolist() == hand.tolist()
    for preset in PRESETS:
        game = DdzGame(preset)
        for t, counts in groups:
            assert t in {int(game.table.type[m]) for m in classify(counts, game.rules)}, (preset, format_counts(counts))


def test_ties_go_to_the_split_with_the_strongest_leftover_singles() -> None:
    # 34567 + 8 or 45678 + 3: both two plays; the weak 3 belongs in the chain
    assert _split("345678")[0] == 1
    plays, weak, groups = split_hand(parse_counts("3456789K"))
    assert plays == 2 and [format_counts(c) for _, c in groups if c.sum() == 1] == ["K"]
    assert hand_plays(parse_counts("3456789K")) == (plays, weak)


def test_the_search_is_bounded_and_move_evaluation_matches_the_split() -> None:
    game = DdzGame("standard")
    for seed in range(200):
        hands, kitty, _ = deal(seed)
        for h in (hands[0] + kitty, hands[1], hands[2]):
            assert split_nodes(h) < NODE_CAP
    hand = parse_counts("33445566789TJQKA2BR")
    moves = [0, *game.table.ids_of(parse_counts("3456789TJQKA")), *game.table.ids_of(parse_counts("BR"))]
    after, weak = evaluate_moves(hand, moves, game.table.counts)
    assert after[0] == hand_plays(hand)[0]
    for m, a, w in zip(moves, after, weak, strict=True):
        assert (a, w) == hand_plays(hand - game.table.counts[m])


# --- scripted spots -------------------------------------------------------------------------------
def _decision(hand: str, prev: str = "", prev_player: int = -1, seat: int = 0, landlord: int = 0,
              left: tuple[int, int, int] | None = None, played: dict[int, str] | None = None) -> Decision:
    """A play decision of ``seat`` holding ``hand`` (``rlcard`` rules), facing ``prev`` played by
    ``prev_player`` (or leading), with the given cards left and cards played."""
    game = DdzGame("rlcard")
    state = game.new_game(seed=0)
    state.landlord = landlord
    state.player = seat
    state.hands[seat] = parse_counts(hand)
    left = left or tuple(int(state.hands[s].sum()) for s in range(3))
    state.left = list(left)
    state.left[seat] = len(hand)
    state.played[:] = 0
    for s, cards in (played or {}).items():
        state.played[s] = parse_counts(cards)
    state.prev = game.parse_move(prev) if prev else 0
    state.prev_player = prev_player if prev else -1
    state.passes = 1 if prev and (prev_player + 1) % 3 != seat else 0
    state._legal = None
    return Decision.from_state(state)


def pick(agent: str, d: Decision, seed: int = 0) -> str:
    return d.game.format_move(d.moves[make_agent(agent, "doudizhu").act(d, random.Random(seed))])


def test_a_hand_that_is_one_combination_plays_it() -> None:
    for agent in ("heuristic", "aggressive", "conservative"):
        assert pick(agent, _decision("3456789TJQKA", left=(12, 17, 17))) == "3456789TJQKA"
        assert pick(agent, _decision("33344478", left=(8, 17, 17))) == "333444-78"
    # following: the move that empties the hand, even over a partner
    assert pick("heuristic", _decision("22", prev="KK", prev_player=1, seat=2, left=(15, 10, 2))) == "22"


def test_the_heuristic_leads_its_weakest_group_and_keeps_its_controls() -> None:
    d = _decision("3456789JJQ2R", left=(12, 17, 17))
    assert pick("heuristic", d) == "3456789"  # the lowest group; the 2 and the joker wait
    # two plays, one of them unbeatable: the rocket first, then the last card goes out
    assert pick("heuristic", _decision("4BR", left=(3, 17, 17))) == "BR"
    # an enemy holds one card: no beatable single is led while anything else is left
    assert pick("heuristic", _decision("3399", seat=1, landlord=0, left=(1, 4, 17))) == "33"


def test_a_peasant_does_not_beat_its_partner_but_beats_the_landlord() -> None:
    # seat 2 is the peasant before the landlord (seat 0); seat 1 is its partner
    hand = "3456TT2R"
    partner = _decision(hand, prev="A", prev_player=1, seat=2, left=(15, 9, 8))
    assert pick("heuristic", partner) == "pass"
    landlord = _decision(hand, prev="A", prev_player=0, seat=2, left=(15, 9, 8))
    assert pick("heuristic", landlord) == "2"  # the cheapest single that beats
    assert pick("heuristic", _decision(hand, prev="TT", prev_player=1, seat=2, left=(15, 9, 8))) == "pass"
    # ... unless beating it wins the game: going out, or a sure win (no bomb or rocket unseen,
    # the black joker gone: the 2 holds the trick, the red joker goes out)
    assert pick("heuristic", _decision("2", prev="A", prev_player=1, seat=2, left=(15, 9, 1))) == "2"
    gone = {0: "3333444455556666", 1: "777788889999TTTT", 2: "JJJJQQQQKKKKAAAA2B"}
    assert pick("heuristic", _decision("2R", prev="A", prev_player=1, seat=2, left=(5, 5, 2))) == "pass"
    assert pick("heuristic", _decision("2R", prev="A", prev_player=1, seat=2, left=(5, 5, 2), played=gone)) == "2"
    # and with the landlord (next to act) on its last card it tops a partner's low single
    assert pick("heuristic", _decision(hand, prev="4", prev_player=1, seat=2, left=(1, 9, 8))) == "R"
    for agent in ("aggressive", "conservative"):
        assert pick(agent, partner) == "pass"


def test_a_bomb_kept_by_conservative_is_spent_by_aggressive() -> None:
    spot = _decision("345555679J", prev="2", prev_player=0, seat=1, left=(12, 10, 17))
    assert pick("aggressive", spot) == "5555"
    for seed in range(8):
        assert pick("conservative", spot, seed) == "pass"
    assert pick("heuristic", spot) == "pass"  # the landlord is far from out
    close = _decision("345555679J", prev="2", prev_player=0, seat=1, left=(3, 10, 17))
    assert pick("heuristic", close) == "5555"  # it is close: bomb it
    assert pick("conservative", close) == "pass"


def test_conservative_keeps_its_high_cards_and_aggressive_sheds_the_most() -> None:
    d = _decision("34589TTJQK22BR", left=(14, 17, 17))
    assert pick("conservative", d) == "3"
    assert pick("aggressive", d) == "89TJQK"
    follow = _decision("3458TJQ2B", prev="A", prev_player=0, seat=1, left=(15, 9, 17))
    assert pick("aggressive", follow) == "B"  # the strongest single that beats
    waits = {pick("conservative", follow, s) for s in range(20)}
    assert waits == {"pass"}  # only the 2 or the joker beat: kept


# --- bidding ---------------------------------------------------------------------------------------
HANDS = [
    "34568899TJJQKKAAA",  # scattered (9 plays), three aces, no 2 or joker: S = 2
    "3345678899TTJQKKA",  # one ace but only 4 plays: 5
    "3456789TTJQKAA22B",  # a long chain, aces, 2s and a joker: 12
    "3356679TJQQKA22BR",  # the rocket and 2s, 8 plays: 14
    "33334445566AA22BR",  # a bomb, the rocket, 2s and aces: 22
]


def test_the_hand_strength_orders_hands_sensibly() -> None:
    scores = [hand_strength(parse_counts(h)) for h in HANDS]
    assert scores == sorted(scores) and len(set(scores)) == len(scores)
    # the same split (5 plays) with one control card: red joker > black joker > 2
    s2, sb, sr = (hand_strength(parse_counts("3345678899TTJQKK" + x)) for x in "2BR")
    assert s2 < sb < sr
    # a bomb adds more than its cards (both hands need 4 plays)
    assert hand_strength(parse_counts("3333678899TTJQKKA")) > hand_strength(parse_counts("3334678899TTJQKKA")) + 3
    # the fewer plays, the stronger: the same control cards (one ace), 4 plays against 10
    assert hand_strength(parse_counts("3345678899TTJQKKA")) > hand_strength(parse_counts("34568899TJJQKKQQA"))


def test_bids_follow_the_strength_with_thresholds_per_style() -> None:
    t1, t2, t3, t_call, t_rob = THRESHOLDS["heuristic"]
    full = [0, 1, 2, 3]
    assert [bid_action(s, full, THRESHOLDS["heuristic"]) for s in (t1 - 1, t1, t2, t3, 30)] == [0, 1, 2, 3, 3]
    assert bid_action(t2, [0, 3], THRESHOLDS["heuristic"]) == 0  # wants 2, 2 is taken: pass
    assert bid_action(t3, [0, 3], THRESHOLDS["heuristic"]) == 3
    assert bid_action(t_call, [0, 4], THRESHOLDS["heuristic"]) == 4
    assert bid_action(t_call - 1, [0, 4], THRESHOLDS["heuristic"]) == 0
    assert bid_action(t_rob, [0, 5], THRESHOLDS["heuristic"]) == 5
    assert bid_action(t_rob - 1, [0, 5], THRESHOLDS["heuristic"]) == 0
    for s in range(-5, 30):  # more daring styles bid at least as high
        bids = [bid_action(s, full, THRESHOLDS[k]) for k in ("conservative", "heuristic", "aggressive")]
        assert bids == sorted(bids)
    # in a game: the agent's index is legal and its action is the rule's, in both auctions
    for preset, first in (("standard", 0), ("online", 0), ("openspiel", 0)):
        game = DdzGame(preset)
        rest = np.array([4] * 13 + [1, 1], dtype=np.int8)
        strong = parse_counts(HANDS[-1])
        others = rest - strong
        cards = [r for r in range(15) for _ in range(int(others[r]))]
        hands = [format_counts(strong), "".join("3456789TJQKA2BR"[r] for r in cards[:17]),
                 "".join("3456789TJQKA2BR"[r] for r in cards[17:34])]
        kitty = "".join("3456789TJQKA2BR"[r] for r in cards[34:])
        state = game.new_game(hands=hands, kitty=kitty, first_bidder=first)
        d = Decision.from_state(state)
        for name in ("heuristic", "aggressive", "conservative"):
            k = make_agent(name, "doudizhu").act(d, random.Random(0))
            assert d.moves[k] == bid_action(hand_strength(strong), d.moves, THRESHOLDS[name]) != 0


# --- the registry and Big 2 -----------------------------------------------------------------------
def test_the_registry_picks_the_agent_by_game_and_big2_is_unchanged() -> None:
    assert type(make_agent("heuristic")) is HeuristicAgent
    assert type(make_agent("heuristic", "big2")) is HeuristicAgent
    assert type(make_agent("heuristic", "big2:paper")) is HeuristicAgent
    assert type(make_agent("aggressive", "big2")) is RuleAgent and type(make_agent("conservative")) is RuleAgent
    assert type(make_agent("heuristic", "doudizhu")) is DdzHeuristicAgent
    assert type(make_agent("aggressive", "doudizhu:rlcard")) is DdzStyleAgent
    assert make_agent("conservative", "doudizhu").name == "conservative"
    for agent in (DdzHeuristicAgent(), DdzStyleAgent(True), DdzStyleAgent(False)):
        assert agent.games == ("doudizhu",)
        with pytest.raises(ValueError, match="plays doudizhu only, not big2"):
            check_game(agent, agent.name, "big2:paper")
    with pytest.raises(ValueError, match="plays big2 only, not doudizhu"):
        make_agent("charlesworth", "doudizhu")


def test_big2_rule_agents_give_the_committed_baseline_numbers() -> None:
    """reports/baselines.json (1000 games, seed 0, paper rules) is unchanged by Dou Dizhu's agents."""
    assert run_match("heuristic", ["greedy"], rules="paper", games=1000, seed=0)["wins"] == 304
    assert run_match("aggressive", ["heuristic"], rules="paper", games=1000, seed=0)["wins"] == 95
    assert run_match("conservative", ["greedy"], rules="paper", games=1000, seed=0)["wins"] == 69


def test_dou_dizhu_rule_agents_in_a_match() -> None:
    r = run_match("heuristic", ["random"], rules="rlcard", games=60, seed=0, game="doudizhu")
    roles = r["by_role"]
    assert set(roles) == {"landlord", "peasant_down", "peasant_up"}
    assert roles["landlord"]["win_rate"] > 0.7 and r["win_rate"] > 0.7
