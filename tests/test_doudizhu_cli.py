"""``climbrl moves --game doudizhu``, ``bench engine --game doudizhu`` and the game registry."""

from __future__ import annotations

import json

import pytest

from climbrl.cli import main
from climbrl.games.registry import make_game


def test_moves_json_lists_cards_type_index_and_action_id(capsys) -> None:
    assert main(["moves", "--game", "doudizhu", "--rules", "rlcard", "--hand", "3345567789TJQKA2B",
                 "--prev", "34567", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0] == {"index": 0, "cards": "", "type": "pass", "action_id": 0, "label": "pass"}
    assert [r["cards"] for r in rows[1:]] == ["45678", "56789", "6789T", "789TJ", "89TJQ", "9TJQK", "TJQKA"]
    assert all(r["type"] == "solo_chain_5" for r in rows[1:])
    game = make_game("doudizhu:rlcard")
    assert [game.parse_move(r["cards"]) for r in rows[1:]] == [r["action_id"] for r in rows[1:]]


@pytest.mark.parametrize("args, token", [
    (["--hand", "3X4"], "'X'"),
    (["--hand", "33333"], "too many '3'"),
    (["--hand", "BB"], "too many 'B'"),
    (["--hand", "345", "--prev", "34"], "'34' is not a combination"),
    (["--hand", "345", "--prev", "3Z"], "'Z'"),
])
def test_moves_bad_input_exits_2_naming_the_token(capsys, args, token) -> None:
    assert main(["moves", "--game", "doudizhu", *args]) == 2
    assert token in capsys.readouterr().err


def test_bench_engine_doudizhu_reports_the_big2_fields(capsys) -> None:
    assert main(["bench", "engine", "--game", "doudizhu", "--rules", "openspiel", "--games", "20",
                 "--all-cores", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["game"] == "doudizhu" and res["rules"] == "openspiel"
    assert res["games_per_s"] > 0 and res["decisions_per_s"] > res["games_per_s"]


def test_registry_names_games_and_rejects_unknown() -> None:
    assert make_game("doudizhu:openspiel").rules.name == "openspiel"
    assert make_game("big2").rules.name == "paper"
    with pytest.raises(ValueError, match="unknown game"):
        make_game("chess")
