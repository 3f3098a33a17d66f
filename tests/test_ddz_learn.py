"""Dou Dizhu's learner switches: one network per role (``role_networks``) and the terminal reward
terms (``reward_cards_left``, ``reward_bombs_kept``, ``reward_partner_win``), each off by default."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from climbrl.agents import Decision
from climbrl.agents.runner import deal_seeds, play_games, seat_seed
from climbrl.config import ConfigError, train_config
from climbrl.encoders import EncoderError, make_encoder
from climbrl.encoders.base import RewardTerms
from climbrl.encoders.doudizhu import ROLES, bombs_dealt_and_kept
from climbrl.games.registry import make_game
from climbrl.learn import checkpoint as ckpt
from climbrl.learn.network import ActionInNet, RoleNets, make_net
from climbrl.learn.registry import make_learner
from climbrl.learn.rollout import Collector
from climbrl.learn.specs import make_agent
from climbrl.learn.train import reward_terms
from climbrl.training import train
from tests.resume import untimed

ENC = make_encoder("doudizhu")


def _decisions(name: str = "doudizhu:standard", n_games: int = 4, seed: int = 0) -> tuple[list[Decision], list[str]]:
    """Decisions of random games and the acting seat's role at each (``auction`` before a landlord)."""
    game, rng = make_game(name), random.Random(seed)
    out, roles = [], []
    for g in range(n_games):
        s = game.new_game(seed=seed + g)
        while not s.is_terminal():
            d = Decision.from_state(s)
            out.append(d)
            role = s.roles()[s.current_player]
            roles.append("auction" if role == "none" else role)
            s.apply(d.moves[rng.randrange(len(d.moves))])
    return out, roles


def _scores(net, decisions) -> torch.Tensor:
    states, moves, offsets = ENC.encode(decisions)
    seg = torch.from_numpy(np.repeat(np.arange(len(decisions)), np.diff(offsets)))
    with torch.no_grad():
        return net(torch.from_numpy(states), torch.from_numpy(moves), seg), seg


# --- roles and routing ---------------------------------------------------------------------------

def test_encoder_reads_the_acting_seats_role() -> None:
    decisions, roles = _decisions(n_games=6)
    states, _, _ = ENC.encode(decisions)
    got = [ROLES[i] for i in ENC.role_index(states)]
    assert got == roles
    assert set(roles) == set(ROLES)  # the auction and all three play roles occur
    assert make_encoder("big2").roles == ("player",)


@pytest.mark.parametrize("dueling", [False, True])
def test_each_decision_is_scored_by_its_roles_network_alone(dueling: bool) -> None:
    decisions, roles = _decisions(n_games=3)
    net = RoleNets(ENC.state_dim, ENC.move_dim, 16, value_head=not dueling, dueling=dueling,
                   generator=torch.Generator().manual_seed(1), roles=ENC.roles, role_columns=ENC.role_columns)
    before, seg = _scores(net, decisions)
    role_of_move = np.array(roles)[seg.numpy()]
    states = torch.from_numpy(ENC.encode(decisions)[0])
    with torch.no_grad():
        v_before = net.value(states)
    for r, name in enumerate(ROLES):
        with torch.no_grad():
            for p in net.nets[r].parameters():
                p.add_(0.5)
        after, _ = _scores(net, decisions)
        with torch.no_grad():
            v_after = net.value(states)
        mine = torch.from_numpy(role_of_move == name)
        assert torch.equal(after[~mine], before[~mine])  # other roles' scores did not move
        assert not torch.allclose(after[mine], before[mine])
        is_r = torch.from_numpy(np.array(roles) == name)
        assert torch.equal(v_after[~is_r], v_before[~is_r]) and not torch.allclose(v_after[is_r], v_before[is_r])
        before, v_before = after, v_after
    # a decision's scores are its role's net's scores on it alone
    for d, name in list(zip(decisions, roles, strict=True))[::7]:
        whole, _ = _scores(net, [d])
        alone, _ = _scores(net.nets[ROLES.index(name)], [d])
        assert torch.allclose(whole, alone)


def test_role_nets_refuse_a_game_without_roles_and_bad_columns() -> None:
    with pytest.raises(ConfigError, match="train.role_networks: big2 does not define it"):
        train_config("ppo", role_networks=True)
    with pytest.raises(ValueError, match="two roles or more"):
        RoleNets(10, 4, 8, roles=("player",), role_columns=(0,))
    with pytest.raises(ValueError, match="outside the state vector"):
        RoleNets(10, 4, 8, roles=("a", "b"), role_columns=(0, 10))
    assert type(make_net(10, 4, 8)) is ActionInNet


def test_role_networks_save_load_and_play_as_a_checkpoint_agent(tmp_path) -> None:
    cfg = train_config("ppo", game="doudizhu", rules="rlcard", role_networks=True, hidden=16)
    learner = make_learner(cfg)
    assert isinstance(learner.net, RoleNets) and len(learner.net.nets) == 4
    path = tmp_path / "policy.pt"
    ckpt.save_atomic(ckpt.network_payload(learner.net, "ppo", 1, learner.encoder), path)
    net, meta, _ = ckpt.load_network(path, game="doudizhu")
    assert meta["net_config"]["roles"] == list(ROLES) and isinstance(net, RoleNets)
    decisions, _ = _decisions("doudizhu:standard", n_games=2)
    assert torch.equal(_scores(net, decisions)[0], _scores(learner.net, decisions)[0])
    agent = make_agent(f"checkpoint:{path}", "doudizhu:rlcard")
    assert isinstance(agent.net, RoleNets)
    # one network (the default, and every policy file written before role networks): no roles key
    plain = make_learner(train_config("ppo", game="doudizhu", rules="rlcard", hidden=16))
    ckpt.save_atomic(ckpt.network_payload(plain.net, "ppo", 1, plain.encoder), tmp_path / "plain.pt")
    one, meta, _ = ckpt.load_network(tmp_path / "plain.pt")
    assert "roles" not in meta["net_config"] and type(one) is ActionInNet
    # role networks recorded for other state columns do not fit this encoder
    obj = ckpt.load(path)
    obj["net_config"]["role_columns"] = [0, 1, 2, 3]
    ckpt.save_atomic(obj, tmp_path / "bad.pt")
    with pytest.raises(ckpt.CheckpointError, match="role networks"):
        ckpt.load_network(tmp_path / "bad.pt")


@pytest.mark.parametrize("algo", ["ppo", "dqn"])
def test_role_networks_train_and_resume(tmp_path, algo: str) -> None:
    """Both resume exactly (DQN's checkpoint holds its replay buffer); DQN's frozen snapshots of
    the role networks are checked too."""
    kw = {"game": "doudizhu", "rules": "rlcard", "role_networks": True, "games_per_epoch": 6, "eval_every": 0,
          "hidden": 16, "minibatch_decisions": 64, "batch_size": 32, "updates_per_epoch": 3,
          "keep_policy_every": 0, "reward_cards_left": 0.5}
    if algo == "dqn":
        kw["curriculum"] = "checkpoint_self_play"  # frozen snapshots of the role networks too
        kw["snapshot_every"] = 6
        kw["prioritized"] = False  # a budget change would alter its beta schedule (not resumable)
    straight = train(train_config(algo, epochs=3, **kw), tmp_path / "a", progress=False)
    train(train_config(algo, epochs=2, **kw), tmp_path / "b", progress=False)
    resumed = train(train_config(algo, epochs=3, **kw), tmp_path / "b", resume=True, progress=False)
    a, _, _ = ckpt.load_network(tmp_path / "a" / "policy.pt")
    b, _, _ = ckpt.load_network(tmp_path / "b" / "policy.pt")
    assert isinstance(a, RoleNets) and isinstance(b, RoleNets)
    same = [torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True)]
    assert untimed(resumed["history"]) == untimed(straight["history"]) and all(same)
    if algo == "dqn":
        snaps = ckpt.load(tmp_path / "b" / "checkpoint.pt")["curriculum"]["snapshots"]  # start + 1 per epoch
        assert len(snaps) == 4 and all(k.startswith("nets.") for k in snaps[0])
    init = make_learner(train_config(algo, epochs=3, **kw)).net.state_dict()
    moved = [any(not torch.equal(a.state_dict()[k], init[k]) for k in init if k.startswith(f"nets.{r}."))
             for r in range(4)]
    assert moved == [True, True, True, False]  # rlcard has no auction: its net never trains


# --- terminal reward terms --------------------------------------------------------------------------
# rlcard's fixed landlord (seat 0) with the score reward; the landlord's hand takes the kitty
HANDS = ["222445566778899TT", "KKKKQQQQ333445566", "AAAA778899TTJJJBR"]
KITTY = "3J2"
LANDLORD_WINS = ["445566778899TT", "pass", "pass", "3", "pass", "A", "2222", "pass", "pass", "J"]
PEASANTS_WIN = ["445566778899TT", "pass", "BR", "pass", "pass", "AAAA", "pass", "pass", "778899TT",
                "pass", "pass", "JJJ"]


def _finished(moves: list[str]):
    game = make_game("doudizhu:rlcard", reward="score")
    s = game.new_game(hands=HANDS, kitty=KITTY)
    for m in moves:
        s.apply(game.parse_move(m))
    assert s.is_terminal()
    return s


def _final(s, terms: RewardTerms) -> list[float]:
    return [ENC.final_reward(s, seat, s.returns()[seat], terms) for seat in range(3)]


def test_bombs_dealt_and_kept_whole() -> None:
    s = _finished(LANDLORD_WINS)
    # landlord: 2222 played as a bomb; down: KKKK, QQQQ whole in hand; up: AAAA split by a single A,
    # the rocket whole in hand
    assert [bombs_dealt_and_kept(s, seat) for seat in range(3)] == [(1, 1), (2, 2), (2, 1)]
    s = _finished(PEASANTS_WIN)  # up played the rocket and AAAA as bombs; the landlord kept 2222
    assert [bombs_dealt_and_kept(s, seat) for seat in range(3)] == [(1, 1), (2, 2), (2, 2)]


def test_each_terminal_term_on_a_finished_game() -> None:
    s = _finished(LANDLORD_WINS)
    base = s.returns()
    assert s.cards_left() == [0, 17, 16] and base[0] > 0 > base[1] == base[2]
    assert _final(s, RewardTerms()) == base
    assert _final(s, RewardTerms(cards_left=2.0)) == pytest.approx([base[0], base[1] - 2 * 17 / 20,
                                                                    base[2] - 2 * 16 / 20])
    # bombs_kept: the end takes the potential back (the kept bombs, x gamma; step_reward gave the rest)
    assert _final(s, RewardTerms(bombs_kept=0.25)) == pytest.approx([base[0] - 0.25, base[1] - 0.5,
                                                                     base[2] - 0.25])
    assert _final(s, RewardTerms(bombs_kept=0.25, gamma=0.5)) == pytest.approx([base[0] - 0.125, base[1] - 0.25,
                                                                                base[2] - 0.125])
    assert _final(s, RewardTerms(partner_win=False)) == base  # the peasants lost: nothing changes

    s = _finished(PEASANTS_WIN)
    base = s.returns()
    assert s.cards_left() == [6, 17, 0] and base[0] < 0 < base[1] == base[2]
    # seat 2 went out; its partner (seat 1) loses the team's win; the landlord keeps its loss
    assert _final(s, RewardTerms(partner_win=False)) == [base[0], 0.0, base[2]]
    assert _final(s, RewardTerms(cards_left=1.0, bombs_kept=0.1, partner_win=False)) == pytest.approx(
        [base[0] - 6 / 20 - 0.1, 0.0 - 17 / 20 - 0.2, base[2] - 0.2])
    # the card-count base takes the terms too
    cs = [ENC.card_score(s, seat) for seat in range(3)]
    assert [ENC.final_reward(s, seat, cs[seat], RewardTerms(partner_win=False)) for seat in range(3)] == [
        cs[0], 0.0, cs[2]]


def test_a_deal_without_landlord_keeps_its_base() -> None:
    game = make_game("doudizhu:openspiel")  # all pass ends the game, every return 0
    s = game.new_game(seed=3)
    while not s.is_terminal():
        s.apply(0)
    assert s.landlord < 0
    assert _final(s, RewardTerms(cards_left=1.0, bombs_kept=1.0, partner_win=False)) == [0.0, 0.0, 0.0]


def _self_play(cfg, n_games: int = 6):
    """One epoch's self-play games of ``cfg`` and the collector of its learner's decisions."""
    game = make_game(cfg.game_name)
    learner = make_learner(cfg)
    behaviour = learner.behaviour()
    collector = Collector(behaviour)
    states = play_games(game, [[behaviour] * 3 for _ in range(n_games)], deal_seeds(5, n_games),
                        [[seat_seed(5, g, 0, s) for s in range(3)] for g in range(n_games)], on_step=collector)
    return collector, states


def test_default_terms_give_exactly_the_old_rewards() -> None:
    cfg = train_config("mcq", game="doudizhu", rules="standard", hidden=8)
    collector, states = _self_play(cfg)
    old = collector.build(states)
    new = collector.build(states, terms=reward_terms(cfg))
    assert np.array_equal(old.rewards, new.rewards) and old.rewards[old.dones].any()
    on = collector.build(states, terms=RewardTerms(cards_left=1.0, partner_win=False))
    assert np.array_equal(on.rewards[~on.dones], old.rewards[~old.dones])  # terminal terms only
    assert not np.array_equal(on.rewards, old.rewards)


@pytest.mark.parametrize("gamma", [1.0, 0.9])
def test_bombs_kept_is_potential_based_shaping(gamma: float) -> None:
    """The bombs term telescopes (Ng et al.): over each seat's decisions, the discounted sum of
    its step terms and its end term is minus the weight x the bombs it was dealt, whatever it
    played; a move that breaks a bomb gets the weight's penalty at once (issue 26)."""
    cfg = train_config("ppo", game="doudizhu", rules="douzero", hidden=8)
    terms = RewardTerms(bombs_kept=0.5, gamma=gamma)
    game = make_game(cfg.game_name)
    behaviour = make_learner(cfg).behaviour()
    collector = Collector(behaviour, terms=terms)
    n = 40
    states = play_games(game, [[behaviour] * 3 for _ in range(n)], deal_seeds(11, n),
                        [[seat_seed(11, g, 0, s) for s in range(3)] for g in range(n)], on_step=collector)
    dealt_any = broke_any = False
    for (g, seat), steps in collector.index.items():
        bonus = [b for _, _, b in steps]
        end = collector.final_reward(states[g], seat, terms=terms) - collector.final_reward(states[g], seat)
        shaped = sum(b * gamma ** t for t, b in enumerate(bonus)) + gamma ** (len(bonus) - 1) * end
        dealt, kept = bombs_dealt_and_kept(states[g], seat)
        assert shaped == pytest.approx(-0.5 * dealt, abs=1e-9)
        dealt_any |= dealt > 0
        broke_any |= kept < dealt and min(bonus) <= -0.5 * (1 - gamma) - 0.5 * gamma + 1e-12
    assert dealt_any and broke_any  # the games exercised both


def test_reward_switches_are_validated_and_dou_dizhu_only() -> None:
    cfg = train_config("ppo", game="doudizhu", reward_cards_left=1, reward_bombs_kept=0.2, reward_partner_win=False)
    assert reward_terms(cfg) == RewardTerms(1, 0.2, False, gamma=cfg.gamma)
    for field, value in (("reward_cards_left", "x"), ("reward_bombs_kept", float("inf")),
                         ("reward_partner_win", 1), ("role_networks", "yes")):
        with pytest.raises(ConfigError, match=f"train.{field}"):
            train_config("ppo", game="doudizhu", **{field: value})
    for field, value in (("reward_cards_left", 0.5), ("reward_bombs_kept", 1.0), ("reward_partner_win", False)):
        with pytest.raises(ConfigError, match=f"train.{field}: big2 does not define it"):
            train_config("ppo", **{field: value})
    assert train_config("ppo", reward_cards_left=0.0).reward_cards_left == 0.0  # the default is fine
    with pytest.raises(EncoderError, match="big2 defines no reward term cards_left"):
        make_encoder("big2").final_reward(None, 0, 1.0, RewardTerms(cards_left=1.0))


def test_cli_set_takes_the_switches(tmp_path, capsys) -> None:
    from climbrl.cli import main

    big2 = ["train", "--algo", "ppo", "--set", "role_networks=true", "--out", str(tmp_path / "b2"), "--no-progress"]
    assert main(big2) == 2
    assert "train.role_networks: big2 does not define it" in capsys.readouterr().err
    assert not (tmp_path / "b2").exists()  # refused before any work
    out = tmp_path / "ddz"
    assert main(["train", "--game", "doudizhu", "--rules", "rlcard", "--algo", "mcq", "--epochs", "1",
                 "--games-per-epoch", "3", "--eval-every", "0", "--set", "role_networks=true", "--set", "hidden=8",
                 "--set", "reward_cards_left=0.5", "--set", "reward_partner_win=false", "--out", str(out),
                 "--no-progress"]) == 0
    config = ckpt.load(out / "checkpoint.pt")["config"]
    assert (config["role_networks"], config["reward_cards_left"], config["reward_partner_win"]) == (True, 0.5, False)
    assert isinstance(ckpt.load_network(out / "policy.pt")[0], RoleNets)
