"""The rollout search agent: fair play (only its observation), reproducibility, legal moves,
its compiled rollout against the engine, its sampler and its belief filter."""

from __future__ import annotations

import random

import numpy as np
import pytest

from climbrl.agents import Decision, make_agent
from climbrl.agents.rollouts import GREEDY, HEURISTIC, replay_mismatches, rollout
from climbrl.agents.search import (
    SearchAgent,
    best_candidate,
    public_replay,
    rebuild,
    sample_deals,
    trick_state,
)
from climbrl.games.big2 import Big2Game
from climbrl.games.big2.combos import MAX_LEGAL_MOVES
from climbrl.games.big2.state import Big2State
from climbrl.learn.specs import make_agent as make_any_agent

GAMES = [Big2Game("paper"), Big2Game("standard"), Big2Game("charlesworth"),
         Big2Game("paper", pass_locks_out=True)]
SMALL = ["search:S=8,K=4", "search:S=6,K=5,rollout=greedy", "search:S=4,K=6,belief=3"]


def _play_to(game: Big2Game, seed: int, steps: int, policy: str = "heuristic") -> Big2State:
    """A game dealt from ``seed`` after ``steps`` moves of ``policy`` in every seat (or until
    one move before the end)."""
    agent, rng = make_agent(policy), random.Random(seed)
    s = game.new_game(seed=seed)
    for _ in range(steps):
        d = Decision.from_state(s)
        nxt = s.clone()
        nxt.apply(d.moves[agent.act(d, rng)])
        if nxt.is_terminal():
            break
        s = nxt
    return s


def _exchanged(state: Big2State, rng: random.Random) -> Big2State:
    """The same game with the hidden cards of the seat to act's opponents exchanged among them
    at random, keeping all it has seen: each opponent's card count and plays, and the unplayed
    starting card with the seat that acted first. The same moves are replayed on the new deal."""
    game = state.game
    seat = state.current_player
    others = [p for p in range(4) if p != seat]
    start = 1 << game.rules.starting_card_id
    holder = state.history[0][0] if state.history else seat
    pool = [c for p in others for c in range(52) if state.hands[p] >> c & 1 and not (1 << c) & start]
    rng.shuffle(pool)
    hands = list(state.deal_hands)
    for p in others:
        kept = state.hands[p] & start
        need = state.hands[p].bit_count() - kept.bit_count()
        new = kept
        for c in pool[:need]:
            new |= 1 << c
        pool = pool[need:]
        hands[p] = (state.deal_hands[p] & ~state.hands[p]) | new  # its plays, then its new hidden cards
        assert holder == p or not kept
    other = game.new_game(hands=hands)
    for m in state.moves:
        other.apply(m)
    return other


def assert_choice_ignores_hidden_cards(agent, games: list[Big2Game], positions: int = 12, first_seed: int = 0,
                                       stride: int = 100) -> None:
    """The issue's fair-play test: same observation, same seed -> same choice, whatever the
    opponents hold, over ``positions`` positions of each game (dealt from ``first_seed + stride x
    game's index + position``), each with three exchanges of the hidden cards."""
    changed = checked = 0
    for gi, game in enumerate(games):
        for seed in range(positions):
            state = _play_to(game, first_seed + stride * gi + seed, steps=(7 * seed) % 40)
            d = Decision.from_state(state)
            ref = agent.act(d, random.Random(seed))
            for k in range(3):
                other = _exchanged(state, random.Random(1000 * seed + k))
                assert other.observation(other.current_player) == d.observation
                assert list(other.legal_features()) == [d.moves, d.types, d.powers]
                changed += other.hands != state.hands
                assert agent.act(Decision.from_state(other), random.Random(seed)) == ref
                checked += 1
    assert changed > checked // 2  # the hidden cards really moved in most positions


@pytest.mark.parametrize("spec", [*SMALL, "search:S=16,K=8,belief=2,rollout=greedy"])
def test_choice_does_not_change_when_hidden_cards_are_exchanged(spec: str) -> None:
    """Over many positions of every preset."""
    assert_choice_ignores_hidden_cards(make_agent(spec), GAMES)


def test_the_exchange_test_catches_an_agent_that_peeks() -> None:
    """Control: the same search scored on the true hands (a cheat) changes its choice under
    some of these exchanges, so the test above would catch an agent that peeks."""
    agent = SearchAgent(samples=1, candidates=8)

    def cheat(state: Big2State) -> int:
        d = Decision.from_state(state)
        cand = agent.candidates_of(d)
        wins, cards, _ = agent.score(d, cand, np.array([state.hands], dtype=np.int64))
        return int(cand[best_candidate(wins, cards)])

    moved = 0
    for seed in range(12):
        state = _play_to(GAMES[0], seed, steps=(7 * seed) % 40)
        if len(state.legal_moves()) < 2:
            continue
        moved += any(cheat(_exchanged(state, random.Random(k))) != cheat(state) for k in range(3))
    assert moved > 0


@pytest.mark.parametrize("spec", SMALL)
def test_same_seed_same_moves_and_only_legal_indices(spec: str) -> None:
    for game in GAMES:
        for seed in range(3):
            runs = []
            for _ in range(2):
                agents = [make_agent(spec), make_agent("heuristic"), make_agent(spec), make_agent("greedy")]
                rngs = [random.Random(seed * 10 + p) for p in range(4)]
                s = game.new_game(seed=seed)
                while not s.is_terminal():
                    d = Decision.from_state(s)
                    k = agents[s.current_player].act(d, rngs[s.current_player])
                    assert isinstance(k, int) and 0 <= k < len(d.moves)
                    s.apply(d.moves[k])
                runs.append(s.moves)
            assert runs[0] == runs[1]


def test_each_game_gets_its_own_search_and_bad_specs_are_refused() -> None:
    from climbrl.agents.ddz_search import DdzSearchAgent
    from climbrl.agents.registry import check_game

    for build in (make_agent, make_any_agent):
        assert isinstance(build("search", "doudizhu"), DdzSearchAgent)
        assert isinstance(build("search:S=8", "doudizhu:rlcard"), DdzSearchAgent)
    with pytest.raises(ValueError, match="big2"):
        check_game(make_agent("search"), "search", "doudizhu")
    assert isinstance(make_any_agent("search:S=8,K=3", "big2:charlesworth"), SearchAgent)
    a = make_agent("search:K=7,rollout=greedy,S=9,belief=3")
    assert (a.samples, a.candidates, a.rollout, a.belief) == (9, 7, "greedy", 3)
    assert make_agent("search").name == "search:S=48,K=10,rollout=heuristic"
    for bad in ("search:S=0", "search:K=x", "search:rollout=random", "search:T=3", "search:S",
                "search:belief=1"):
        with pytest.raises(ValueError, match="search"):
            make_agent(bad)


@pytest.mark.parametrize("policy", ["heuristic", "greedy"])
def test_compiled_rollout_plays_the_engine_game(policy: str) -> None:
    """From arrays built out of an observation, the rollout ends exactly where the engine does
    with the same policy in every seat (same winner, same hands left)."""
    buf = np.empty((3, MAX_LEGAL_MOVES + 1), dtype=np.int64)
    pid = {"heuristic": HEURISTIC, "greedy": GREEDY}[policy]
    agent = make_agent(policy)
    for gi, game in enumerate(GAMES):
        for seed in range(15):
            s = _play_to(game, 50 * gi + seed, steps=(5 * seed) % 35, policy="random")
            cls, power, last_player, locked = trick_state(s.observation(s.current_player))
            hands = np.array(s.hands, dtype=np.int64)
            winner = rollout(hands, s.current_player, cls, power, last_player, locked, s.must, game.tables,
                             game.locks, pid, buf)
            rng = random.Random(0)
            while not s.is_terminal():
                d = Decision.from_state(s)
                s.apply(d.moves[agent.act(d, rng)])
            assert (winner, hands.tolist()) == (s.winner, s.hands)


def test_sampled_deals_respect_what_the_seat_has_seen() -> None:
    for gi, game in enumerate(GAMES):
        start = game.rules.starting_card_id
        for seed in range(10):
            s = _play_to(game, 10 * gi + seed, steps=3 * seed)
            obs = s.observation(s.current_player)
            deals = sample_deals(obs, start, random.Random(seed), 20)
            played = 0
            for p in obs.played:
                played |= p
            holder = obs.history[0][0] if obs.history else obs.seat
            for row in deals.tolist():
                assert row[obs.seat] == obs.hand
                assert [h.bit_count() for h in row] == list(obs.cards_left)
                union = 0
                for h in row:
                    assert not union & h
                    union |= h
                assert union | played == (1 << 52) - 1 and not union & played
                if not played >> start & 1:
                    assert row[holder] >> start & 1
            free = [obs.cards_left[p] - (p == holder and not played >> start & 1) for p in range(4) if p != obs.seat]
            if sum(f > 0 for f in free) >= 2:  # more than one deal is possible
                assert len({tuple(r) for r in deals.tolist()}) > 1
            again = sample_deals(obs, start, random.Random(seed), 20)
            assert (again == deals).all()


@pytest.mark.parametrize("policy", ["heuristic", "greedy"])
def test_true_deal_agrees_with_the_opponent_model_it_was_played_by(policy: str) -> None:
    """The belief filter's replay rebuilds every past decision: against opponents that are the
    model, the true hands never disagree, while uniform samples usually do."""
    pid = {"heuristic": HEURISTIC, "greedy": GREEDY}[policy]
    disagree = 0
    for gi, game in enumerate(GAMES):
        for seed in range(8):
            s = _play_to(game, 30 * gi + seed, steps=12 + 3 * seed, policy=policy)
            obs = s.observation(s.current_player)
            replay = public_replay(obs, game)
            true = np.array([s.hands], dtype=np.int64)
            assert replay_mismatches(true, *replay, game.tables, pid)[0] == 0
            deals = sample_deals(obs, game.rules.starting_card_id, random.Random(seed), 20)
            disagree += int((replay_mismatches(deals, *replay, game.tables, pid) > 0).sum())
    assert disagree > 0


def test_belief_filter_keeps_s_deals_and_prefers_consistent_ones() -> None:
    game = Big2Game("paper")
    s = _play_to(game, 4, steps=20)
    d = Decision.from_state(s)
    agent = SearchAgent(samples=16, candidates=4, belief=8)
    deals = agent.deals(d, random.Random(3))
    assert deals.shape == (16, 4)
    replay = public_replay(d.observation, game)
    uniform = sample_deals(d.observation, game.rules.starting_card_id, random.Random(3), 128)
    filtered = replay_mismatches(deals, *replay, game.tables, HEURISTIC).mean()
    assert filtered < replay_mismatches(uniform, *replay, game.tables, HEURISTIC).mean()


@pytest.fixture(scope="module")
def base_policy(tmp_path_factory) -> str:
    """A small trained Big 2 policy (one epoch): a base policy for the search to rank moves by."""
    from climbrl.config import train_config
    from climbrl.learn.train import train

    out = tmp_path_factory.mktemp("base")
    train(train_config("ppo", epochs=1, games_per_epoch=8, hidden=32, eval_every=0, keep_policy_every=0, seed=3),
          out, progress=False)
    return str(out / "policy.pt")


def test_a_trained_base_policy_ranks_the_candidates(base_policy) -> None:
    agent = make_any_agent(f"search:checkpoint:{base_policy},rollouts=6,K=3")
    policy = make_any_agent(f"checkpoint:{base_policy}")
    assert (agent.samples, agent.candidates) == (6, 3)
    assert agent.name == f"search:checkpoint:{base_policy},S=6,K=3,rollout=heuristic"
    seen = 0
    for seed in range(10):
        state = _play_to(GAMES[0], seed, steps=(5 * seed) % 30)
        d = Decision.from_state(state)
        scores = policy.move_scores(d)
        cand = agent.candidates_of(d)
        top = list(np.argsort(-scores, kind="stable")[:3])
        if d.moves[0] == 0 and 0 not in top and len(top) > 1:
            top[-1] = 0  # a legal pass is always scored
        assert list(cand) == top
        assert int(np.argmax(scores)) == policy.act(d, random.Random(0))  # the policy's own choice heads it
        seen += len(d.moves) > 3
    assert seen  # positions with more moves than candidates were checked


def test_a_search_over_a_base_policy_sees_only_its_observation(base_policy) -> None:
    agent = make_any_agent(f"search:checkpoint:{base_policy},S=8,K=4")
    for seed in range(8):
        state = _play_to(GAMES[seed % 2], seed, steps=(7 * seed) % 40)
        d = Decision.from_state(state)
        ref = agent.act(d, random.Random(seed))
        for k in range(3):
            other = _exchanged(state, random.Random(1000 * seed + k))
            assert agent.act(Decision.from_state(other), random.Random(seed)) == ref


def test_a_base_policy_spec_is_checked(base_policy, tmp_path) -> None:
    with pytest.raises(ValueError, match="make_agent"):
        make_agent(f"search:checkpoint:{base_policy}")  # the rule-agent registry cannot load a network
    with pytest.raises(ValueError, match="one base policy"):
        make_any_agent(f"search:checkpoint:{base_policy},checkpoint:{base_policy}")
    with pytest.raises(ValueError, match="twice"):
        make_any_agent(f"search:checkpoint:{base_policy},S=4,rollouts=8")
    with pytest.raises(Exception, match="missing.pt"):
        make_any_agent(f"search:checkpoint:{tmp_path / 'missing.pt'},S=4")
    with pytest.raises(ValueError, match="big2"):
        make_any_agent(f"search:checkpoint:{base_policy}", "doudizhu")


@pytest.mark.parametrize("game", GAMES, ids=lambda g: g.rules.name + ("+locks" if g.locks else ""))
def test_a_sampled_deal_is_rebuilt_into_a_game_that_reaches_the_observation(game) -> None:
    """:func:`rebuild` deals each sampled hand plus its seat's plays and replays the public moves:
    the game reaches the agent's very observation with the sampled hands, and on the true hands it
    is the game itself."""
    for seed in range(6):
        state = _play_to(game, seed, steps=(9 * seed) % 40)
        d = Decision.from_state(state)
        truth = rebuild(d.observation, game, np.array(state.hands, dtype=np.int64))
        assert (truth.hands, truth.moves, truth.deal_hands) == (state.hands, state.moves, state.deal_hands)
        for deal in sample_deals(d.observation, game.rules.starting_card_id, random.Random(seed), 4):
            other = rebuild(d.observation, game, deal)
            assert other.observation(d.seat) == d.observation
            assert other.hands == [int(h) for h in deal]


def test_lockstep_rollouts_score_as_the_compiled_ones() -> None:
    """The engine's lockstep rollouts (what an action-in base policy plays) give the compiled
    rollouts' wins, cards left and points when the heuristic plays every seat of both: the
    rebuilt deals, the candidates' moves and the tally are the same."""
    heuristic = make_agent("heuristic")
    for game, value in ((GAMES[0], "win"), (GAMES[1], "score"), (GAMES[3], "win")):
        lockstep = SearchAgent(samples=6, candidates=4, own="base", rollout="base", base_agent=heuristic,
                               value=value)
        compiled = SearchAgent(samples=6, candidates=4, value=value)
        assert lockstep.lockstep and not compiled.lockstep
        for seed in range(5):
            state = _play_to(game, seed, steps=(7 * seed) % 36)
            d = Decision.from_state(state)
            if len(d.moves) < 2:
                continue
            cand = compiled.candidates_of(d)
            deals = compiled.deals(d, random.Random(seed))
            got = lockstep.score(d, cand, deals, np.arange(len(deals), dtype=np.int64))
            want = compiled.score(d, cand, deals)
            for g, w in zip(got, want, strict=True):
                assert np.array_equal(g, w)


def test_an_action_in_base_policy_plays_its_own_rollouts_and_sees_only_its_observation(base_policy) -> None:
    """``own=base,rollout=base`` over an action-in network (the learners' shape, such as make
    strong's DMC policy): the rollouts are played through the engine, the choice is the same
    whatever the opponents' hidden cards, and the spec's impossible combinations are refused."""
    agent = make_any_agent(f"search:checkpoint:{base_policy},S=4,K=3,own=base,rollout=base")
    assert agent.lockstep and agent.seat_agents[0] is agent.seat_agents[1]
    assert agent.name == f"search:checkpoint:{base_policy},S=4,K=3,rollout=base,own=base"
    assert_choice_ignores_hidden_cards(agent, GAMES[:2], positions=5)
    mixed = make_any_agent(f"search:checkpoint:{base_policy},S=3,K=2,own=base,rollout=greedy")
    assert mixed.lockstep and mixed.seat_agents[1].name == "greedy"
    for bad, why in ((",own=base,belief=2", "belief"), (",own=base,rollout=charlesworth", "charlesworth")):
        with pytest.raises(ValueError, match=why):
            make_any_agent(f"search:checkpoint:{base_policy},S=4" + bad, "big2:charlesworth")


def test_play_candidates_give_each_deal_its_own_streams_the_same_for_every_candidate() -> None:
    """Common random numbers: with random players the same move on the same deal gives the same
    game whichever candidate it is, another deal's seed another game, and the streams are the
    documented ``Random(seed x players + seat)``."""
    from climbrl.agents.runner import play_candidates, play_out

    rnd = make_agent("random")
    state = _play_to(GAMES[0], 3, steps=6)
    seat, move = state.current_player, state.legal_moves()[-1]
    done = play_candidates([state, state], [move, move], [5, 9], (rnd, rnd), seat)
    assert [s.moves for s in done[:2]] == [s.moves for s in done[2:]]  # candidate-major, same streams
    assert done[0].moves != done[1].moves  # another seed, another game
    alone = state.clone()
    alone.apply(move)
    play_out([alone], (rnd, rnd), seat, [[random.Random(5 * 4 + p) for p in range(4)]])
    assert alone.moves == done[0].moves and all(s.is_terminal() for s in done)
