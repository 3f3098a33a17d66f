"""The interpretability window: counters that must add up, rates that must follow from the rules
of a rule agent, probabilities that must be distributions, and worker-count independence."""

from __future__ import annotations

import random

import numpy as np
import pytest

from climbrl.agents import Decision, make_agent
from climbrl.evaluate.behaviour import SITUATIONS, Behaviour, behaviour_markdown, move_probabilities, record_behaviour
from climbrl.games.big2 import Big2Game
from climbrl.learn.network import ActionInNet
from climbrl.learn.policy import PolicyAgent


def test_two_accounting_and_shares_add_up() -> None:
    r = record_behaviour("heuristic", ["random", "greedy"], games=40, seed=3)
    assert r["games"] == 80
    # duplicate deals: the 4 seats of a deal hold all four 2s
    assert r["twos_dealt"] == r["games"]
    # every dealt 2 is either played or still in hand at the end
    assert r["twos_played"] + round(r["twos_held_at_end_share"] * r["twos_dealt"]) == r["twos_dealt"]
    assert sum(r["lead_share_by_cards"].values()) == pytest.approx(1.0)
    assert sum(r["lead_share_by_type"].values()) == pytest.approx(1.0)
    assert sum(r["endgame_share_by_cards"].values()) == pytest.approx(1.0)
    assert sum(r["can_beat_by_hand"].values()) == r["can_beat"]
    assert sum(v for v in r["twos_share_by_hand"].values()) == pytest.approx(1.0)
    # a rule agent's probabilities are its choices
    for s in r["situations"].values():
        if s["n"]:
            assert s["mean_probability"] == pytest.approx(s["chosen"])


def test_greedy_never_passes_when_it_can_play_and_random_passes_often() -> None:
    greedy = record_behaviour("greedy", ["random"], games=40, seed=1)
    assert greedy["can_beat"] > 50 and greedy["pass_rate_when_can_beat"] == 0.0
    rnd = record_behaviour("random", ["random"], games=40, seed=1)
    assert rnd["pass_rate_when_can_beat"] > 0.15
    # random leads singles most of the time (most legal leads are singles)
    assert rnd["lead_share_by_cards"]["1"] > 0.5


def test_the_same_numbers_for_any_worker_count() -> None:
    one = record_behaviour("greedy", ["heuristic", "random"], games=112, seed=2, workers=1)
    two = record_behaviour("greedy", ["heuristic", "random"], games=112, seed=2, workers=2)
    assert one == two


def _decisions(n: int, seed: int = 0) -> list[Decision]:
    game = Big2Game("paper")
    rng = random.Random(seed)
    out = []
    state = game.new_game(seed=seed)
    while len(out) < n:
        if state.is_terminal():
            state = game.new_game(seed=rng.randrange(1 << 30))
        d = Decision.from_state(state)
        out.append(d)
        state.apply(d.moves[rng.randrange(len(d.moves))])
    return out


def test_network_probabilities_are_a_softmax_over_the_legal_moves() -> None:
    import torch

    torch.manual_seed(0)
    agent = PolicyAgent(ActionInNet(hidden=16), mode="greedy")
    decisions = _decisions(30)
    picks = agent.act_batch(decisions, [random.Random(i) for i in range(30)])
    probs = move_probabilities(agent, decisions, picks)
    for d, k, p in zip(decisions, picks, probs, strict=True):
        assert len(p) == len(d.moves) and p.sum() == pytest.approx(1.0) and (p >= 0).all()
        assert k == int(np.argmax(p))  # the greedy pick is the most probable move
    one_hot = move_probabilities(make_agent("heuristic"), decisions[:5], [0] * 5)
    assert all(p[0] == 1.0 and p.sum() == 1.0 for p in one_hot)


def test_situations_count_only_matching_decisions() -> None:
    b = Behaviour()
    for d in _decisions(400, seed=5):
        b.add(d, 0, np.eye(len(d.moves))[0])
    s = b.summary()
    for name, (_, applies, _) in SITUATIONS.items():
        assert s["situations"][name]["n"] == sum(applies(d) for d in _decisions(400, seed=5))
    # move 0 is the pass whenever passing is legal: "pass when it can beat" is then always taken
    assert s["situations"]["pass_early_when_can_beat"]["chosen"] == 1.0
    assert s["pass_rate_when_can_beat"] == 1.0


def test_markdown_has_every_table(tmp_path) -> None:
    r = record_behaviour("greedy", ["random"], games=8)
    data = {"games_per_opponent": 8, "opponents": ["random"], "agents": {"greedy": r},
            "checkpoints": {"ppo": [{"epoch": 5, **r}, {"epoch": 10, **r}]}}
    md = "\n".join(behaviour_markdown(data))
    for heading in ("How they lead", "Passing and the endgame", "When the 2s go", "Named situations",
                    "Across checkpoints"):
        assert heading in md
    assert "| ppo | 10 |" in md


def test_only_a_policy_networks_scores_are_read_as_probabilities(tmp_path) -> None:
    from climbrl.config import train_config
    from climbrl.learn.train import train

    decisions = _decisions(20, seed=3)
    for algo, softmax in (("ppo", True), ("mcq", False)):
        train(train_config(algo, epochs=1, games_per_epoch=4, eval_every=0, hidden=16), tmp_path / algo,
              progress=False)
        agent = make_agent(f"checkpoint:{tmp_path / algo / 'policy.pt'}")
        assert agent.scores_are_logits is softmax
        picks = agent.act_batch(decisions, [random.Random(i) for i in range(20)])
        probs = move_probabilities(agent, decisions, picks)
        one_hot = all(p[k] == 1.0 for p, k in zip(probs, picks, strict=True))
        assert one_hot is not softmax
