"""Dou Dizhu's interpretability window: counters that agree with a replay of the games, rates that
follow from the documented rules of the rule agents (bidding thresholds, when bombs go, peasants
that never top their partner), hand-made decisions, worker-count independence, and Big 2's window
unchanged by the shared recorder."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from climbrl.agents import Decision
from climbrl.agents.doudizhu_rules import hand_strength
from climbrl.evaluate.behaviour_ddz import (
    SITUATIONS,
    DdzBehaviour,
    Facts,
    behaviour_ddz_markdown,
    plot_ddz_behaviour,
    record_ddz_behaviour,
    s_bucket,
)
from climbrl.evaluate.windows import GAMES, window, window_markdown
from climbrl.games.doudizhu.moves import RANKS, TYPE_BOMB, format_counts, parse_counts
from climbrl.games.doudizhu.state import DdzGame

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def heuristic_standard() -> dict:
    return record_ddz_behaviour("heuristic", ["heuristic"], rules="standard", games=90, seed=4)


def _replay(agent: str, opponent: str, rules: str, games: int, seed: int) -> list[tuple]:
    """(decision, move, finished state, agent seat) of every decision of the agent's seat, replayed
    from the finished games' move lists (independently of the window's bookkeeping)."""
    from climbrl.evaluate.match import _chunk_games, match_tasks

    game, out = DdzGame(rules), []
    for task in match_tasks(agent, [(opponent,) * 2], rules, games, seed, None, "doudizhu"):
        for i, st in enumerate(_chunk_games(task)):
            replay = game.new_game(seed=task[5][i // 3])
            for move in st.moves:
                if replay.current_player == i % 3:
                    out.append((Decision.from_state(replay), move, st, i % 3))
                replay.apply(move)
    return out


def test_counts_match_a_replay_of_the_games(heuristic_standard) -> None:
    r = heuristic_standard
    turns = _replay("heuristic", "heuristic", "standard", 90, 4)
    assert r["games"] == 90 and r["decisions"] == len(turns)
    assert sum(v["games"] for v in r["by_role"].values()) == 90
    bids = [(d, m) for d, m, _, _ in turns if d.observation.phase == "bid" and len(d.moves) > 1]
    assert sum(v["bid_decisions"] for v in r["bids_by_strength"].values()) == len(bids) > 0
    for b, v in r["bids_by_strength"].items():
        mine = [m for d, m in bids if s_bucket(hand_strength(d.observation.hand)) == b]
        assert v["bid_decisions"] == len(mine)
        if mine:
            assert v["mean_bid"] == pytest.approx(sum(mine) / len(mine))
    plays = [(d, m) for d, m, _, _ in turns if d.observation.phase == "play"]
    bombs = [(d, m) for d, m in plays if d.game.types[m] >= TYPE_BOMB]
    assert r["bombs"]["all"]["played"] == len(bombs)
    if bombs:
        assert r["bombs"]["all"]["mean_hand_size"] == pytest.approx(
            np.mean([sum(d.observation.hand) for d, _ in bombs]))
    # the landlord is the agent in as many games as the replay says, and every game has one
    landlord_games = {(id(st)) for _, _, st, seat in turns if st.landlord == seat}
    assert r["by_role"]["landlord"]["games"] == len(landlord_games)
    assert sum(v["landlord_games"] for v in r["bids_by_strength"].values()) == len(landlord_games)
    for name, (_, applies, in_class) in SITUATIONS.items():
        hits = [(d, m) for d, m in plays + bids if applies(d, Facts(d) if d.observation.phase == "play" else None)]
        assert r["situations"][name]["n"] == len(hits)
        chosen = sum(in_class(d, d.moves.index(m)) for d, m in hits)
        assert (r["situations"][name]["chosen"] or 0) * len(hits) == pytest.approx(chosen)


def test_bids_follow_the_heuristics_thresholds_on_the_standard_preset(heuristic_standard) -> None:
    """The heuristic wants bid 1 at S >= 7, 2 at S >= 9, 3 at S >= 11 (doudizhu_rules)."""
    bids = heuristic_standard["bids_by_strength"]
    assert heuristic_standard["auction"] is True
    for b in ("<5", "5-6"):
        assert bids[b]["bid_decisions"] > 0 and bids[b]["bid_rate"] == 0.0 and bids[b]["mean_bid"] == 0.0
        assert bids[b]["landlord_share"] < 0.5
    strong = [b for b in ("11-12", "13+") if bids[b]["bid_decisions"]]
    assert strong
    for b in strong:  # bid 3 is legal whenever it speaks (a 3 ends the auction)
        assert bids[b]["bid_rate"] == 1.0 and bids[b]["mean_bid"] == 3.0 and bids[b]["landlord_share"] == 1.0
    assert 0 < bids["7-8"]["mean_bid"] <= 1.0
    assert heuristic_standard["situations"]["bid_three_strong"]["chosen"] == 1.0
    conservative = record_ddz_behaviour("conservative", ["heuristic"], rules="standard", games=45, seed=4)
    assert conservative["bids_by_strength"]["7-8"]["bid_rate"] == 0.0  # its bid 1 needs S >= 9


def test_a_fixed_landlord_has_no_bids_but_a_landlord_table() -> None:
    r = record_ddz_behaviour("heuristic", ["random"], rules="rlcard", games=30, seed=2)
    assert r["auction"] is False
    assert all(v["bid_decisions"] == 0 and v["bid_rate"] is None for v in r["bids_by_strength"].values())
    # every deal from every seat: the agent is the landlord (seat 0) in a third of the games
    assert sum(v["landlord_games"] for v in r["bids_by_strength"].values()) == r["by_role"]["landlord"]["games"] == 10
    assert "Bids by hand strength" not in "\n".join(behaviour_ddz_markdown(
        {"opponents": ["random"], "games_per_opponent": 30, "agents": {"heuristic": r}}))


def test_the_conservative_agent_bombs_only_late_and_the_aggressive_early() -> None:
    """conservative: a bomb only when the hand left is nothing but bombs; aggressive: at any point."""
    cons = record_ddz_behaviour("conservative", ["aggressive"], rules="rlcard", games=150, seed=8)
    b = cons["bombs"]["all"]
    assert b["played"] > 0 and b["share_by_hand"]["11+"] == 0.0
    assert b["share_over_partner"] == 0.0
    aggr = record_ddz_behaviour("aggressive", ["conservative"], rules="rlcard", games=150, seed=8)
    a = aggr["bombs"]["all"]
    assert a["played"] > 0 and a["share_by_hand"]["11+"] > 0 and a["mean_hand_size"] > b["mean_hand_size"]
    # every bomb held is played, kept to the end or broken up
    for s in (b, a):
        assert s["played_share"] + s["held_at_end_share"] + s["broken_share"] == pytest.approx(1.0)


def test_peasants_do_not_top_their_partner() -> None:
    """The styles pass on the partner's play unless they can go out; the heuristic tops it only for a
    sure win or to block a landlord on 1 card, so it passes in every quiet decision."""
    h = record_ddz_behaviour("heuristic", ["heuristic"], rules="rlcard", games=120, seed=6)["cooperation"]["peasant"]
    assert h["quiet_n"] > 20 and h["quiet_pass_rate"] == 1.0 and h["tops_other"] == 0
    assert h["tops"] == h["tops_sure_win"] + h["tops_block"]
    assert h["enemy_pass_rate"] < h["partner_pass_rate"]
    for style in ("aggressive", "conservative"):
        c = record_ddz_behaviour(style, ["heuristic"], rules="rlcard", games=60, seed=6)["cooperation"]["peasant"]
        assert c["partner_n"] > 5 and c["partner_pass_rate"] == 1.0 and c["tops"] == 0
        if style == "aggressive":  # it never passes when it can beat an enemy
            assert c["enemy_n"] > 5 and c["enemy_pass_rate"] == 0.0


def _deal(hands: dict[int, str], kitty: str) -> list[str]:
    """Three 17-card hands: the given ones, the rest of the deck (less the kitty) dealt in rank order."""
    rest = np.array([4] * 13 + [1, 1]) - sum(parse_counts(h) for h in [*hands.values(), kitty])
    cards = "".join(RANKS[r] * int(rest[r]) for r in range(15))
    out, k = [], 0
    for seat in range(3):
        if seat in hands:
            out.append(hands[seat])
        else:
            out.append(cards[k:k + 17])
            k += 17
    return out


def _add(b: DdzBehaviour, d: Decision, pick: int) -> None:
    b.add(d, pick, np.eye(len(d.moves))[pick])


def test_hand_made_decisions() -> None:
    game = DdzGame("rlcard")  # seat 0 is the landlord
    # the partner's single to beat: peasant_up holds four bombs and could beat it
    st = game.new_game(hands=["3333444455556666R", "7888899992222JJJB", "TTTTJQQQQKKKKAAAA"],
                       kitty="777")
    st.apply_text("3")
    st.apply_text("7")
    d = Decision.from_state(st)
    f = Facts(d)
    assert (f.role, f.by_partner, f.can_beat, f.go_out, f.enemy_min) == ("peasant_up", True, True, False, 19)
    b = DdzBehaviour()
    _add(b, d, 0)
    bomb = next(i for i, m in enumerate(d.moves) if d.types[i] >= TYPE_BOMB)
    _add(b, d, bomb)
    s = b.summary()
    c = s["cooperation"]["peasant_up"]
    assert (c["partner_n"], c["partner_pass_rate"], c["quiet_n"], c["tops"], c["tops_other"], c["tops_bomb"]) == (
        2, 0.5, 2, 1, 1, 1)
    assert s["bombs"]["peasant_up"]["share_over_partner"] == 1.0
    assert s["bombs"]["peasant_up"]["share_by_hand"]["11+"] == 1.0
    assert s["situations"]["pass_partner_single"] == {"n": 2, "mean_probability": 0.5, "chosen": 0.5}
    assert s["situations"]["bomb_enemy_on_two"]["n"] == 0
    # a landlord's lead from a hand of singles and pairs: the lowest once-held card is the 4
    hands = _deal({0: "3345567789TTJQKA2"}, "89B")
    st = game.new_game(hands=hands, kitty="89B")
    d = Decision.from_state(st)
    assert format_counts(d.observation.hand) == "334556778899TTJQKA2B"
    lead = SITUATIONS["lead_lowest_single"]
    assert lead[1](d, Facts(d))
    low = [game.format_move(d.moves[i]) for i in range(len(d.moves)) if lead[2](d, i)]
    assert low == ["4"]
    b = DdzBehaviour()
    _add(b, d, d.moves.index(game.parse_move("4")))
    assert b.summary()["situations"]["lead_lowest_single"] == {"n": 1, "mean_probability": 1.0, "chosen": 1.0}


def test_the_same_numbers_for_any_worker_count() -> None:
    one = record_ddz_behaviour("heuristic", ["conservative"], rules="standard", games=78, seed=2, workers=1)
    two = record_ddz_behaviour("heuristic", ["conservative"], rules="standard", games=78, seed=2, workers=2)
    assert one == two


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="game"):
        record_ddz_behaviour("heuristic", ["random"], game="big2")
    with pytest.raises(ValueError, match="multiple of 3"):
        record_ddz_behaviour("heuristic", ["random"], rules="rlcard", games=10)
    with pytest.raises(ValueError, match="windows: big2, doudizhu"):
        window("chess")


def test_markdown_and_figures(tmp_path) -> None:
    r = record_ddz_behaviour("heuristic", ["random"], rules="standard", games=15, seed=1)
    data = {"game": "doudizhu", "rules": "standard", "games_per_opponent": 15, "opponents": ["random"],
            "agents": {"heuristic": r}, "checkpoints": {"ppo": [{"epoch": 1, **r}, {"epoch": 2, **r}]}}
    md = "\n".join(window_markdown(json.loads(json.dumps(data))))
    for heading in ("Bids by hand strength", "The landlord by hand strength", "When bombs and the rocket go",
                    "How the peasants cooperate", "The endgame", "Named situations", "Across checkpoints"):
        assert heading in md
    assert "| ppo | 2 |" in md
    paths = plot_ddz_behaviour(data, str(tmp_path))
    assert [Path(p).name for p in paths] == ["behaviour_bids.png", "behaviour_bombs_cooperation.png",
                                             "behaviour_checkpoints.png"]
    assert all(Path(p).stat().st_size > 0 for p in paths)


def test_big2_window_is_unchanged() -> None:
    """The shared recorder gives Big 2's numbers of before the refactor (pinned from main), and
    the committed Big 2 result (no game named) renders through Big 2's tables."""
    from climbrl.evaluate.behaviour import behaviour_markdown, record_behaviour

    assert GAMES == ("big2", "doudizhu")
    r = record_behaviour("heuristic", ["greedy"], games=24, seed=5)
    assert (r["decisions"], r["leads"], r["can_beat"], r["twos_played"]) == (206, 35, 73, 18)
    assert r["pass_rate_when_can_beat"] == 6 / 73
    assert r["situations"]["pass_early_when_can_beat"] == {"n": 25, "mean_probability": 0.16, "chosen": 0.16}
    committed = json.loads((ROOT / "reports" / "behaviour" / "behaviour.json").read_text())
    assert "game" not in committed
    assert window_markdown(committed) == behaviour_markdown(committed)
