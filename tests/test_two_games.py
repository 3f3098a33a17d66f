"""One lab, two games: the same runner, match, tournament, learners and CLI play Big 2 and Dou Dizhu.

The game protocol (:mod:`climbrl.games.base`) is checked on both engines; Dou Dizhu then goes
through every upper layer at a tiny budget: the five learners train on it, a match reports each
role with intervals, a tournament rotates three seats, a checkpoint refuses the other game, and
the CLI takes ``--game``.
"""

from __future__ import annotations

import json
import random

import pytest

from climbrl.agents.runner import play_games
from climbrl.config import ConfigError, train_config
from climbrl.evaluate.match import run_match
from climbrl.evaluate.tournament import run_tournament, schedule
from climbrl.games.base import GameError
from climbrl.games.registry import make_game
from climbrl.learn.checkpoint import CheckpointError
from climbrl.learn.specs import make_agent
from climbrl.training import train

GAMES = ["big2:paper", "big2:charlesworth", "doudizhu:standard", "doudizhu:rlcard", "doudizhu:openspiel",
         "doudizhu:online"]


def _random_games(name: str, n: int, seed: int = 0) -> list:
    game = make_game(name)
    agent = make_agent("random", name)
    return play_games(game, [[agent] * game.num_players] * n, list(range(seed, seed + n)),
                      [[seed * 1000 + 10 * g + s for s in range(game.num_players)] for g in range(n)])


@pytest.mark.parametrize("name", GAMES)
def test_the_protocol_holds_on_random_games(name: str) -> None:
    game = make_game(name)
    assert set(game.phases) <= {"bid", "play"} and game.phases[-1] == "play"
    assert {r for team in game.teams for r in team} <= set(game.roles)
    for st in _random_games(name, 6):
        res = st.result()
        assert len(res.roles) == game.num_players and set(res.roles) <= set(game.roles)
        assert list(res.returns) == st.returns()
        if game.zero_sum:
            assert sum(res.returns) == pytest.approx(0.0)
        if res.winners:
            team = {res.roles[s] for s in res.winners}
            assert any(team <= set(t) for t in game.teams)  # the winners are one team
            losers = [s for s in range(game.num_players) if s not in res.winners]
            assert min(res.returns[s] for s in res.winners) > max(res.returns[s] for s in losers) or \
                name == "big2:paper"  # rank rewards: the winner is first, later places differ among losers
            assert max(res.returns) == max(res.returns[s] for s in res.winners)
        # replay: every move has a dense id that maps back, within the declared bounds
        replay = game.new_game(seed=st.seed)
        for move in st.moves:
            legal, types, powers = replay.legal_features()
            assert len(legal) == len(types) == len(powers) <= game.max_legal_moves
            assert move in legal
            aid = game.action_id(move)
            assert 0 <= aid < game.num_distinct_actions and game.move_of(aid) == move
            replay.apply(move)
        assert replay.is_terminal() and replay.returns() == st.returns()


def test_a_game_that_is_not_over_has_no_result() -> None:
    for name in ("big2", "doudizhu"):
        with pytest.raises(GameError, match="not over"):
            make_game(name).new_game(seed=1).result()


def test_dou_dizhu_roles_follow_the_landlord() -> None:
    for st in _random_games("doudizhu:rlcard", 3):
        assert st.result().roles == ("landlord", "peasant_down", "peasant_up")  # RLCard: seat 0 is the landlord
    seen = set()
    for st in _random_games("doudizhu:standard", 20, seed=5):
        res = st.result()
        if st.landlord >= 0:
            ll = st.landlord
            assert res.roles[ll] == "landlord" and res.roles[(ll + 1) % 3] == "peasant_down"
            seen.add(ll)
            assert res.winners in ((ll,), tuple(s for s in range(3) if s != ll))
        else:
            assert res.winners == () and set(res.roles) == {"none"}
    assert len(seen) >= 2  # the auction does move the landlord


def test_the_runner_refuses_a_seating_of_the_wrong_size() -> None:
    game = make_game("doudizhu:rlcard")
    agent = make_agent("random", "doudizhu")
    with pytest.raises(ValueError, match="4 agents for 3 seats"):
        play_games(game, [[agent] * 4], [1], [[1, 2, 3]])


def test_a_match_of_dou_dizhu_plays_every_deal_in_every_role() -> None:
    r = run_match("greedy", ["random"], rules="rlcard", games=60, seed=3, game="doudizhu")
    assert r["game"] == "doudizhu" and r["deals"] == 20 and len(r["opponents"]) == 2
    assert "normalized_win_rate" not in r  # a team game has no 1/n chance level
    roles = r["by_role"]
    assert set(roles) == {"landlord", "peasant_down", "peasant_up"}
    assert all(x["games"] == 20 for x in roles.values())
    assert sum(x["wins"] for x in roles.values()) == r["wins"]
    for x in roles.values():
        assert x["win_rate_low"] <= x["win_rate"] <= x["win_rate_high"]
        assert x["mean_reward_low"] <= x["mean_reward"] <= x["mean_reward_high"]
    # the same numbers on two workers, and the same games again
    assert run_match("greedy", ["random"], rules="rlcard", games=60, seed=3, game="doudizhu", workers=2) == r


def test_match_sizes_and_agents_are_checked_for_the_game() -> None:
    with pytest.raises(ValueError, match="multiple of 3"):
        run_match("random", ["random"], games=40, game="doudizhu")
    with pytest.raises(ValueError, match="or 2, got 3"):
        run_match("random", ["random", "random", "random"], games=30, game="doudizhu")
    with pytest.raises(ValueError, match="plays big2 only, not doudizhu"):
        run_match("charlesworth", ["random"], games=30, game="doudizhu")
    with pytest.raises(ValueError, match="unknown game"):
        run_match("random", ["random"], games=30, game="hearts")


def test_a_three_seat_tournament_is_balanced_and_rates_teams() -> None:
    games = schedule(4, deals=6, seats=3)
    assert len(games) == 4 * 6  # C(4, 3) groups x 6 deals, each group in one of its 6 seatings per deal
    assert len({(tuple(sorted(seats)), seats) for seats, _ in games}) == 4 * 6  # every group in all 6 seatings
    per_seat = {(p, s, d) for seats, d in games for s, p in enumerate(seats)}
    assert len(per_seat) == 12 * 6  # on every deal, every participant in every seat (role) once
    res = run_tournament(["random", "greedy", "a=random", "b=greedy"], rules="rlcard", deals=12, seed=1,
                         resamples=10, game="doudizhu")
    assert res["game"] == "doudizhu" and res["games"] == 48
    board = {r["participant"]: r for r in res["leaderboard"]}
    assert all(r["games"] == 36 for r in board.values())
    # teammates tie: "A ahead of B" and "B ahead of A" need not add up to all their meetings
    for key, e in res["pairwise"].items():
        a, b = key.split(">")
        back = res["pairwise"][f"{b}>{a}"]
        assert e["games"] == back["games"] and e["rate"] + back["rate"] <= 1 + 1e-12


@pytest.mark.parametrize("algo", ["ppo", "mcq", "sarsa", "qlearning", "dqn"])
def test_every_learner_trains_on_dou_dizhu_and_its_policy_plays_only_dou_dizhu(algo: str, tmp_path) -> None:
    cfg = train_config(algo, game="doudizhu", rules="rlcard", epochs=2, games_per_epoch=6, eval_every=2,
                       eval_games=12, hidden=16, batch_size=16, updates_per_epoch=2, minibatch_decisions=64, seed=1,
                       reward_shaping=algo == "ppo", card_score_reward=algo == "mcq")
    res = train(cfg, tmp_path, progress=False)
    assert res["final_eval"]["eval_games/random"] == 12
    agent = make_agent(f"checkpoint:{tmp_path / 'policy.pt'}", "doudizhu:rlcard")
    assert agent.encoder.game == "doudizhu" and agent.net.state_dim == agent.encoder.state_dim
    with pytest.raises(CheckpointError, match="trained for doudizhu, not big2"):
        make_agent(f"checkpoint:{tmp_path / 'policy.pt'}", "big2")
    r = run_match(f"checkpoint:{tmp_path / 'policy.pt'}", ["greedy"], rules="rlcard", games=12, game="doudizhu")
    assert r["games"] == 12


def test_a_learner_with_an_auction_and_an_opponent_pool(tmp_path) -> None:
    cfg = train_config("ppo", game="doudizhu", epochs=2, games_per_epoch=6, eval_every=0, hidden=16,
                       curriculum="opponent_pool", snapshot_every=6, minibatch_decisions=64)
    assert cfg.rules == "standard" and cfg.pool_rule_agents == ("aggressive", "conservative")  # the guide's pool
    res = train(cfg, tmp_path, progress=False)
    assert len(res["history"]) == 2 and res["history"][-1]["learner_decisions"] > 0


def test_a_checkpoint_of_another_encoder_version_is_refused(tmp_path) -> None:
    import torch

    cfg = train_config("ppo", game="doudizhu", rules="rlcard", epochs=1, games_per_epoch=3, eval_every=0, hidden=8)
    train(cfg, tmp_path, progress=False)
    obj = torch.load(tmp_path / "policy.pt", weights_only=True)
    obj["encoder"]["version"] = 99
    torch.save(obj, tmp_path / "future.pt")
    with pytest.raises(CheckpointError, match="version 99 there, 1 here"):
        make_agent(f"checkpoint:{tmp_path / 'future.pt'}", "doudizhu")


def test_configs_are_checked_per_game() -> None:
    cfg = train_config("dqn", game="doudizhu")
    assert (cfg.rules, cfg.eval_games, cfg.num_players) == ("standard", 300, 3)
    assert train_config("dqn").rules == "paper"
    with pytest.raises(ConfigError, match="multiple of 3"):
        train_config("ppo", game="doudizhu", eval_games=400)
    with pytest.raises(ConfigError, match="unknown doudizhu rules preset 'paper'"):
        train_config("ppo", game="doudizhu", rules="paper")
    with pytest.raises(ConfigError, match="unknown game"):
        train_config("ppo", game="hearts")


def test_the_cli_plays_dou_dizhu(tmp_path, capsys) -> None:
    from climbrl.cli import main

    main(["evaluate", "--game", "doudizhu", "--rules", "rlcard", "--agent", "greedy", "--opponents", "random",
          "--games", "30", "--workers", "1", "--json"])
    r = json.loads(capsys.readouterr().out)
    assert r["game"] == "doudizhu" and set(r["by_role"]) == {"landlord", "peasant_down", "peasant_up"}
    main(["tournament", "--game", "doudizhu", "--participants", "random,greedy,x=random", "--deals", "6",
          "--workers", "1", "--resamples", "5", "--json"])
    assert json.loads(capsys.readouterr().out)["games"] == 6
    main(["train", "--algo", "ppo", "--game", "doudizhu", "--rules", "rlcard", "--epochs", "1",
          "--games-per-epoch", "3", "--eval-every", "1", "--eval-games", "6", "--set", "hidden=8",
          "--out", str(tmp_path / "run"), "--no-progress"])
    out = capsys.readouterr().out
    assert "vs 2x random" in out
    assert main(["evaluate", "--game", "doudizhu", "--agent", "charlesworth", "--opponents", "random",
                 "--games", "30"]) == 2
    assert "plays big2 only" in capsys.readouterr().err


def test_random_agents_are_reproducible_in_both_games() -> None:
    for name in ("big2", "doudizhu:standard"):
        a = [st.moves for st in _random_games(name, 4, seed=9)]
        b = [st.moves for st in _random_games(name, 4, seed=9)]
        assert a == b
        random.Random(0)  # no global stream is touched: the results above did not use it
