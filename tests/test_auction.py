"""The whole game with its auction (issue 26, part 1): a bid model trained on top of a fixed play
policy (climbrl.learn.bidder_training), the whole-game evaluation (climbrl.evaluate.auction) and
its pipeline steps (pipeline/auction.py)."""

from __future__ import annotations

import json

import pytest
import torch

from climbrl.evaluate.auction import by_strength, paired, summarize, whole_game
from climbrl.learn.bidder_training import BidTraining, train_bidder, write_rule_bidder


@pytest.fixture(scope="module")
def play_policy(tmp_path_factory):
    """A tiny Dou Dizhu play network (random weights) as a policy file."""
    from climbrl.encoders import make_encoder
    from climbrl.learn.checkpoint import network_payload, save_atomic
    from climbrl.learn.network import make_net

    enc = make_encoder("doudizhu", "")
    net = make_net(state_dim=enc.state_dim, move_dim=enc.move_dim, hidden=16,
                   generator=torch.Generator().manual_seed(1))
    path = tmp_path_factory.mktemp("play") / "policy.pt"
    save_atomic(network_payload(net, "dmc", 3, enc), path)
    return str(path)


def test_a_bid_model_trains_on_a_fixed_play_policy_resumes_and_is_an_agent(play_policy, tmp_path) -> None:
    from climbrl.agents.bidding import BiddingAgent
    from climbrl.learn.bidding import LearnedBidder
    from climbrl.learn.checkpoint import load
    from climbrl.learn.specs import make_agent

    spec = BidTraining(play=play_policy, epochs=2, games_per_epoch=24, seed=3)
    h2 = train_bidder(spec, tmp_path / "a")
    assert [r["epoch"] for r in h2] == [1, 2] and all(r["bids"] > 0 for r in h2)
    # a run of 3 epochs repeats the first two (every draw comes from the seed)
    full = train_bidder(BidTraining(play=play_policy, epochs=3, games_per_epoch=24, seed=3), tmp_path / "b")
    assert full[:2] == h2
    agent = make_agent(f"checkpoint:{tmp_path / 'b' / 'policy.pt'}", "doudizhu:standard")
    assert isinstance(agent, BiddingAgent) and isinstance(agent.bidder, LearnedBidder)
    play = load(play_policy)
    bid = load(tmp_path / "b" / "policy.pt")
    assert all(torch.equal(play["net"][k], bid["net"][k]) for k in play["net"])  # the play model is untouched
    assert (tmp_path / "b" / "history.csv").read_text().count("\n") == 4


def test_a_killed_run_continues_from_its_last_epoch(play_policy, tmp_path) -> None:
    from climbrl.learn.checkpoint import load

    ref = train_bidder(BidTraining(play=play_policy, epochs=3, games_per_epoch=18, seed=5), tmp_path / "ref")
    calls = []

    def killed(row):
        calls.append(row)
        if row["epoch"] == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train_bidder(BidTraining(play=play_policy, epochs=3, games_per_epoch=18, seed=5), tmp_path / "run",
                     on_epoch=killed)
    assert len(load(tmp_path / "run" / "checkpoint.pt")["history"]) == 2
    again = train_bidder(BidTraining(play=play_policy, epochs=3, games_per_epoch=18, seed=5), tmp_path / "run")
    assert again == ref
    a, b = load(tmp_path / "ref" / "policy.pt"), load(tmp_path / "run" / "policy.pt")
    assert all(torch.equal(a["bid_net"][k], b["bid_net"][k]) for k in a["bid_net"])


def test_other_settings_are_refused_and_bad_ones_named(play_policy, tmp_path) -> None:
    from climbrl.config import ConfigError
    from climbrl.learn.checkpoint import CheckpointError

    train_bidder(BidTraining(play=play_policy, epochs=1, games_per_epoch=9), tmp_path)
    with pytest.raises(CheckpointError, match="other settings"):
        train_bidder(BidTraining(play=play_policy, epochs=2, games_per_epoch=9, seed=1), tmp_path)
    with pytest.raises(ConfigError, match="auction"):
        BidTraining(play=play_policy, rules="douzero").check()
    with pytest.raises(ValueError, match="epochs"):
        BidTraining(play=play_policy, epochs=0).check()
    with pytest.raises(ValueError, match="unknown agent"):
        BidTraining(play=play_policy, pool=("nobody",)).check()


def test_the_pool_puts_the_learner_against_rule_agents(play_policy, tmp_path) -> None:
    """With a pool of one agent, half the games are self-play; the others hold one learner seat."""
    solo = train_bidder(BidTraining(play=play_policy, epochs=1, games_per_epoch=30), tmp_path / "solo")
    pooled = train_bidder(BidTraining(play=play_policy, epochs=1, games_per_epoch=30, pool=("heuristic",)),
                          tmp_path / "pool")
    assert 0 < pooled[0]["bids"] < solo[0]["bids"]


def test_an_agent_against_copies_of_itself_scores_zero_on_every_deck() -> None:
    """Every deck is played from each of the three seats: a deterministic agent meeting copies of
    itself plays the same game three times, so its returns on a deck sum to the game's, 0."""
    r = whole_game("heuristic", "heuristic", "standard", decks=12, seed=4, purpose="deep")
    assert r["n_games"] == 36 and r["adp"]["mean"] == 0 and r["adp"]["low"] is None
    assert r["landlord_rate"]["rate"] == pytest.approx(1 / 3)
    assert sum(b["games"] for b in r["by_strength"]) == 36
    roles = r["by_role"]
    assert roles["landlord"]["games"] + roles["peasant"]["games"] == 36
    p = paired(r, r)
    assert p["difference"] == 0 and p["p"] == 1.0


def test_the_whole_game_needs_an_auction_and_pairs_only_like_with_like() -> None:
    with pytest.raises(ValueError, match="auction"):
        whole_game("heuristic", "random", "douzero", decks=3)
    a = whole_game("random", "heuristic", "standard", decks=6, seed=1)
    b = whole_game("heuristic", "heuristic", "standard", decks=6, seed=2)
    with pytest.raises(ValueError, match="same opponent"):
        paired(a, b)
    assert a["adp"]["mean"] < 0  # a random player loses to the heuristic's


def test_summary_counts_roles_bids_and_stakes() -> None:
    games = [{"deck": 0, "seat": 0, "landlord": 0, "role": "landlord", "bid": 3, "stake": 3, "won": True,
              "return": 6.0, "deals": 1, "strength": 12},
             {"deck": 0, "seat": 1, "landlord": 0, "role": "peasant", "bid": 0, "stake": 3, "won": False,
              "return": -3.0, "deals": 1, "strength": 5},
             {"deck": 0, "seat": 2, "landlord": 0, "role": "peasant", "bid": 1, "stake": 3, "won": False,
              "return": -3.0, "deals": 1, "strength": 8}]
    s = summarize(games)
    assert s["adp"]["mean"] == 0 and s["landlord_rate"]["rate"] == pytest.approx(1 / 3)
    assert s["bid_rate"]["rate"] == pytest.approx(2 / 3) and s["stake_as_landlord"]["mean"] == 3
    assert s["by_role"]["landlord"]["wp"]["rate"] == 1 and s["by_role"]["peasant"]["wp"]["rate"] == 0
    rows = by_strength(games, edges=(7, 11))
    assert [r["games"] for r in rows] == [1, 1, 1] and rows[2]["landlord_wp"] == 1 and rows[0]["bid_rate"] == 0


def test_the_pipeline_steps_end_to_end(play_policy, tmp_path) -> None:
    import yaml
    from pipeline import auction

    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump({"auction": {
        "train": {"play": play_policy, "rules": "standard", "epochs": 1, "games_per_epoch": 12, "seed": 0,
                  "pool": ["heuristic"]},
        "evaluate": {"agents": {"learned": f"checkpoint:{tmp_path / 'bid' / 'policy.pt'}",
                                "rule-bid": f"checkpoint:{tmp_path / 'bid' / 'rule-bid.pt'}"},
                     "opponent": "heuristic", "decks": 6, "seed": 9}}}))
    sec = auction.load_auction_params(params)
    auction.train(sec, runs=tmp_path / "bid")
    out = auction.evaluate(sec, reports=tmp_path / "reports", workers=1)
    assert set(out["agents"]) == {"learned", "rule-bid"} and len(out["contrasts"]) == 1
    assert all(len(r["per_deck_adp"]) == 6 for r in out["agents"].values())
    md = (tmp_path / "reports" / "auction.md").read_text()
    assert "**Target**" in md and "| learned - rule-bid | 6 |" in md
    cal = out["agents"]["learned"]["bid_calibration"]
    assert sum(b["n"] for b in cal) > 0 and "bid_calibration" not in out["agents"]["rule-bid"]
    assert "Calibration of the bid model (learned)" in md
    assert (tmp_path / "reports" / "auction_calibration.png").exists()
    assert json.loads((tmp_path / "reports" / "auction.json").read_text())["decks"] == 6
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"auction": {"train": {"play": play_policy, "nope": 1}, "evaluate": {}}}))
    with pytest.raises(ValueError, match="unknown nope"):
        auction.load_auction_params(bad)


def test_the_rule_bidder_control_bids_with_the_heuristics_rule(play_policy, tmp_path) -> None:
    from climbrl.agents.bidding import BiddingAgent, RuleBidder
    from climbrl.learn.specs import make_agent

    write_rule_bidder(play_policy, tmp_path / "rule.pt")
    agent = make_agent(f"checkpoint:{tmp_path / 'rule.pt'}", "doudizhu:standard")
    assert isinstance(agent, BiddingAgent) and isinstance(agent.bidder, RuleBidder)


def test_climbrl_duel_plays_the_whole_game_under_an_auction(capsys, tmp_path) -> None:
    from climbrl.cli import main

    assert main(["duel", "--agent", "random", "--opponent", "heuristic", "--rules", "standard", "--deals", "5",
                 "--workers", "1", "--json", "--out", str(tmp_path / "d.json")]) == 0
    res = json.loads((tmp_path / "d.json").read_text())
    assert res["n_games"] == 15 and "landlord_rate" in res and "games" not in res
    assert main(["duel", "--agent", "random", "--opponent", "heuristic", "--rules", "online", "--deals", "3",
                 "--repeats", "2", "--workers", "1"]) == 0
    assert "2 x 3 fresh decks" in capsys.readouterr().out


def test_the_auction_regression_gate_plays_the_whole_game_and_fails_other_agents() -> None:
    """ci/regression_band_auction.yaml: a learner with a bid model under the standard rules, judged
    in the whole game from every seat; an agent that plays at random, and the much stronger
    heuristic, both fail it (two-sided), checked in band mode on fewer decks than CI's."""
    from pipeline import regression

    spec = regression.load_band(regression.BAND.with_name("regression_band_auction.yaml"))
    assert spec["train"]["rules"] == "standard" and spec["train"]["bidding"] == "learned"
    assert set(spec["expected"]) == set(spec["opponents"])
    spec["evaluate"] = {**spec["evaluate"], "games": 150, "workers": 1}
    spec["expected"] = {o: {"wins": round(e["wins"] / 4), "games": 150} for o, e in spec["expected"].items()}
    other = {"cpu_vendor": "elsewhere"}
    weak = regression.evaluate_agent("random", spec)
    assert weak["random"]["games"] == 150
    assert "vs random" in " ".join(regression.gate(weak, spec, path=other))
    strong = regression.evaluate_agent("heuristic", spec)
    assert "vs greedy" in " ".join(regression.gate(strong, spec, path=other)), strong
