"""The interpretability window: counters that must add up, rates that must follow from the rules
of a rule agent, probabilities that must be distributions, and worker-count independence."""

from __future__ import annotations

import random

import numpy as np
import pytest

from climbrl.agents import Decision
from climbrl.encoders.big2 import Big2Encoder
from climbrl.evaluate.behaviour import SITUATIONS, Behaviour, behaviour_markdown, move_probabilities, record_behaviour
from climbrl.games.big2 import Big2Game
from climbrl.learn.network import ActionInNet
from climbrl.learn.policy import PolicyAgent
from climbrl.learn.specs import make_agent


def _agent_turns(agent: str, opponents: list[str], games: int, seed: int) -> list[tuple[Decision, int]]:
    """Every decision of the evaluated agent's seat and the move it played, replayed from the
    finished games' move lists (independently of the recorder's bookkeeping)."""
    from climbrl.evaluate.match import _chunk_games, match_tasks

    game, out = Big2Game("paper"), []
    for task in match_tasks(agent, [(o,) * 3 for o in opponents], "paper", games, seed, None):
        for i, st in enumerate(_chunk_games(task)):
            replay = game.new_game(seed=task[5][i // 4])
            for move in st.moves:
                if replay.current_player == i % 4:
                    out.append((Decision.from_state(replay), move))
                replay.apply(move)
    return out


def test_counts_match_a_replay_of_the_games() -> None:
    r = record_behaviour("heuristic", ["random", "greedy"], games=40, seed=3)
    assert r["games"] == 80
    # duplicate deals: the 4 seats of a deal hold all four 2s
    assert r["twos_dealt"] == r["games"]
    # every dealt 2 is either played or still in hand at the end
    assert r["twos_played"] + round(r["twos_held_at_end_share"] * r["twos_dealt"]) == r["twos_dealt"]
    turns = _agent_turns("heuristic", ["random", "greedy"], 40, 3)
    assert r["decisions"] == len(turns)
    leads = [m for d, m in turns if d.observation.leading]
    assert r["leads"] == len(leads)
    for k, share in r["lead_share_by_cards"].items():
        assert share * len(leads) == pytest.approx(sum(m.bit_count() == int(k) for m in leads))
    follows = [(d, m) for d, m in turns if not d.observation.leading and len(d.moves) > 1]
    assert r["can_beat"] == len(follows)
    assert r["pass_rate_when_can_beat"] * len(follows) == pytest.approx(sum(m == 0 for _, m in follows))
    assert r["twos_played"] == sum((m & (0xF << 48)).bit_count() for _, m in turns)
    for name, (_, applies, in_class) in SITUATIONS.items():
        hits = [(d, m) for d, m in turns if applies(d)]
        assert r["situations"][name]["n"] == len(hits)
        chosen = sum(in_class(d, d.moves.index(m)) for d, m in hits)
        assert (r["situations"][name]["chosen"] or 0) * len(hits) == pytest.approx(chosen)


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
    net = ActionInNet(Big2Encoder.state_dim, Big2Encoder.move_dim, hidden=16)
    agent = PolicyAgent(net, Big2Encoder(), mode="greedy")
    decisions = _decisions(30)
    picks = agent.act_batch(decisions, [random.Random(i) for i in range(30)])
    probs = move_probabilities(agent, decisions, picks)
    for d, k, p in zip(decisions, picks, probs, strict=True):
        assert len(p) == len(d.moves) and p.sum() == pytest.approx(1.0) and (p >= 0).all()
        assert k == int(np.argmax(p))  # the greedy pick is the most probable move
    one_hot = move_probabilities(make_agent("heuristic"), decisions[:5], [0] * 5)
    assert all(p[0] == 1.0 and p.sum() == 1.0 for p in one_hot)


def test_situations_count_only_matching_decisions() -> None:
    decisions = _decisions(400, seed=5)
    leading = [d for d in decisions if d.observation.leading]
    b = Behaviour()
    for d in decisions:
        b.add(d, 0, np.eye(len(d.moves))[0])
    s = b.summary()
    # hand-checked classes: a lead offers no pass; a follow with a choice has the pass as move 0
    assert s["situations"]["pass_early_when_can_beat"]["n"] == sum(
        1 for d in decisions if not d.observation.leading and len(d.moves) > 1 and d.hand.bit_count() >= 10)
    assert s["situations"]["pass_early_when_can_beat"]["chosen"] == 1.0 and s["pass_rate_when_can_beat"] == 1.0
    assert s["situations"]["go_out"]["n"] == sum(d.hand in d.moves for d in decisions)
    assert s["leads"] == len(leading) and s["situations"]["early_lead_five_plus"]["n"] <= len(leading)
    # a decision outside every situation adds to none of them
    quiet = Behaviour()
    d = next(d for d in leading if d.hand.bit_count() < 10 and d.hand not in d.moves
             and 1 not in [n for k, n in enumerate(d.observation.cards_left) if k != d.seat])
    quiet.add(d, 0, np.eye(len(d.moves))[0])
    assert all(v["n"] == 0 for v in quiet.summary()["situations"].values())


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
    from climbrl.training import train

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
