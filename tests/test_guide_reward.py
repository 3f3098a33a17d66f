"""The Dou Dizhu practice guide's reward as written (issue 26, part 2): its terminal reward, its
per-decision terms by role, the 1:20 rule between them, and the pass penalty of its pitfall 5.1."""

from __future__ import annotations

import random

import pytest

from climbrl.agents import Decision
from climbrl.encoders import make_encoder
from climbrl.encoders.base import RewardTerms
from climbrl.encoders.doudizhu import GUIDE_RATIO, GUIDE_TERMINAL, current_trick, guide_step_weights, min_score
from climbrl.games.doudizhu.rules import PRESETS
from climbrl.games.registry import make_game

GUIDE = RewardTerms(guide=True)


def _games(preset: str, n: int, seed: int = 0):
    """Random games of ``preset``: every play-phase decision with its pick, and the final state."""
    game = make_game(f"doudizhu:{preset}")
    rng = random.Random(seed)
    for g in range(n):
        state = game.new_game(seed=seed * 1000 + g)
        steps = []
        while not state.is_terminal():
            d = Decision.from_state(state)
            k = rng.randrange(len(d.moves))
            steps.append((d, k))
            state.apply(d.moves[k])
        yield steps, state


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_decision_earns_at_most_a_twentieth_of_the_smallest_terminal_reward(preset) -> None:
    enc = make_encoder("doudizhu")
    rules = make_game(f"doudizhu:{preset}").rules
    lead, give = guide_step_weights(rules)
    assert lead * GUIDE_RATIO == pytest.approx(GUIDE_TERMINAL * min_score(rules)) and give == pytest.approx(0.4 * lead)
    steps_seen, finals = [], []
    for steps, state in _games(preset, 30):
        steps_seen += [abs(enc.step_reward(d, k, GUIDE)) for d, k in steps]
        if state.landlord >= 0 and state.winner >= 0:
            finals += [abs(enc.final_reward(state, s, state.returns()[s], GUIDE)) for s in range(3)]
    assert max(steps_seen) > 0 and finals
    assert max(steps_seen) * GUIDE_RATIO <= min(finals) + 1e-12


def test_the_terminal_reward_is_a_tenth_of_the_score_with_its_multipliers() -> None:
    enc = make_encoder("doudizhu")
    for _steps, state in _games("standard", 20, seed=3):
        sc = state.score()
        for s in range(3):
            r = enc.final_reward(state, s, state.returns()[s], GUIDE)
            share = 2 if s == state.landlord else 1
            assert r == pytest.approx(0.1 * sc["pay"] * share * (1 if s in state.result().winners else -1))
    # under win/loss rules too: the score, not the preset's 0/1 reward
    for _steps, state in _games("rlcard", 5, seed=4):
        loser = next(s for s in range(3) if s not in state.result().winners)
        assert enc.final_reward(state, loser, state.returns()[loser], GUIDE) < 0 == state.returns()[loser]


def test_landlord_and_peasant_lose_the_lead_differently() -> None:
    """A peasant whose play its partner beats keeps the lead on its side (no penalty); beaten by
    the landlord, it pays; the landlord pays whoever beats it."""
    enc = make_encoder("doudizhu")
    give = guide_step_weights(make_game("doudizhu:standard").rules)[1]
    seen = set()
    for steps, _ in _games("standard", 60, seed=5):
        for d, k in steps:
            obs = d.observation
            trick = current_trick(obs.history)
            mine = [i for i, (s, a) in enumerate(trick) if s == obs.seat and a]
            if not mine or obs.to_beat == 0:
                continue
            later = [s for s, a in trick[mine[-1] + 1:] if a]
            if not later:
                continue
            r = enc.step_reward(d, k, GUIDE)
            landlord = obs.seat == obs.landlord
            by_landlord = obs.landlord in later
            if landlord or by_landlord:
                assert r == pytest.approx(-give), (obs.seat, obs.landlord, trick)
                seen.add("landlord beaten" if landlord else "peasant beaten by landlord")
            else:
                assert r == 0, (obs.seat, obs.landlord, trick)
                seen.add("peasant covered by partner")
    assert seen == {"landlord beaten", "peasant beaten by landlord", "peasant covered by partner"}


def test_the_trick_in_progress_is_what_the_table_shows() -> None:
    for steps, _ in _games("standard", 20, seed=6):
        for d, _ in steps:
            trick = current_trick(d.observation.history)
            plays = [a for _, a in trick if a]
            if d.observation.to_beat == 0:
                assert not plays or not d.observation.history  # a new trick: nothing to beat
            else:
                assert plays and plays[-1] == d.observation.to_beat


def test_the_pass_penalty_only_when_a_play_could_beat_the_table() -> None:
    enc = make_encoder("doudizhu")
    terms = RewardTerms(pass_penalty=0.1)
    cases = {"could beat": 0, "could not": 0}
    for steps, _ in _games("douzero", 20, seed=7):
        for d, k in steps:
            r = enc.step_reward(d, k, terms)
            if d.moves[k] == 0 and len(d.moves) > 1:
                assert r == -0.1
                cases["could beat"] += 1
            else:
                assert r == 0
                cases["could not"] += d.moves == [0]
    assert cases["could beat"] and cases["could not"]


def test_the_guide_reward_trains_and_is_refused_where_it_does_not_apply(tmp_path) -> None:
    from climbrl.config import ConfigError, train_config
    from climbrl.training import train

    with pytest.raises(ConfigError, match="reward_guide"):
        train_config("ppo", game="big2", reward_guide=True)
    with pytest.raises(ConfigError, match="reward_guide"):
        train_config("ppo", game="doudizhu", reward_guide=True, reward_shaping=True)
    with pytest.raises(ConfigError, match="reward_pass_penalty"):
        train_config("ppo", game="doudizhu", reward_pass_penalty=2)
    cfg = train_config("ppo", game="doudizhu", rules="standard", reward_guide=True, reward_pass_penalty=0.1,
                       epochs=1, games_per_epoch=6, eval_every=0, hidden=16)
    res = train(cfg, tmp_path, progress=False)
    assert len(res["history"]) == 1


def test_the_collector_adds_the_step_terms_and_the_guide_terminal() -> None:
    import torch

    from climbrl.agents.runner import seat_seed
    from climbrl.learn.network import make_net
    from climbrl.learn.policy import PolicyAgent
    from climbrl.learn.rollout import collect

    enc = make_encoder("doudizhu")
    net = make_net(state_dim=enc.state_dim, move_dim=enc.move_dim, hidden=8, generator=torch.Generator().manual_seed(0))
    agent = PolicyAgent(net, enc, mode="sample", record=True)
    game = make_game("doudizhu:douzero")
    seeds = list(range(4))
    seat_seeds = [[seat_seed(0, g, 0, s) for s in range(3)] for g in range(4)]
    plain, _ = collect(game, [[agent] * 3] * 4, seeds, seat_seeds, agent)
    guided, _ = collect(game, [[agent] * 3] * 4, seeds, seat_seeds, agent, terms=RewardTerms(guide=True))
    assert plain.size == guided.size
    finals = plain.dones
    assert guided.rewards[finals] == pytest.approx(0.1 * plain.rewards[finals], abs=0.01)  # + the last step's term
    assert (guided.rewards[~finals] != 0).any() and (plain.rewards[~finals] == 0).all()
