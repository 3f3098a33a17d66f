"""Matches: one agent against three opponents over fixed deals, every seat, duplicate deals.

Each deal is played four times, the agent in seat 0, 1, 2 and 3 in turn, the opponents filling
the other seats in their listed order (the next seat after the agent gets the first opponent),
so card luck and seat bias cancel out. Every seat of every game has its own random stream,
seeded from (match seed, deal index, agent seat, seat): the numbers are identical whatever the
number of worker processes. Games advance in lockstep inside a chunk of deals so that an agent
that batches (a neural policy) scores all its waiting decisions in one call; the chunks are a
fixed size, independent of the worker count. Chunks run on one torch thread (see
:mod:`climbrl.threads`); worker processes are started with "spawn", which is safe from a
program that runs other threads (a Prefect task runner), where "fork" can copy a held lock.
"""

from __future__ import annotations

import multiprocessing as mp
import random
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from climbrl.agents import Agent, Decision, make_agent
from climbrl.evaluate.stats import wilson_interval
from climbrl.games.big2 import Big2Game, get_rules
from climbrl.threads import single_thread, worker_init

CHUNK_DEALS = 25
NUM_SEATS = 4


def deal_seeds(seed: int, n: int) -> list[int]:
    """``n`` deal seeds derived from ``seed`` (numpy SeedSequence; stable across versions)."""
    if n < 0:
        raise ValueError(f"number of deals must be >= 0, got {n}")
    return [int(x) for x in np.random.SeedSequence(seed).generate_state(n, dtype=np.uint64) >> np.uint64(1)]


def seat_seed(match_seed: int, deal_index: int, agent_seat: int, seat: int) -> int:
    return int(np.random.SeedSequence([match_seed, deal_index, agent_seat, seat]).generate_state(1)[0])


@dataclass
class MatchResult:
    """Outcome of one match, seen from the evaluated agent."""

    agent: str
    opponents: list[str]
    rules: str
    seed: int
    games: int = 0
    wins: int = 0
    reward_sum: float = 0.0
    cards_left_sum: int = 0
    length_sum: int = 0
    wins_by_seat: list[int] = field(default_factory=lambda: [0] * NUM_SEATS)

    def add(self, other: MatchResult) -> None:
        self.games += other.games
        self.wins += other.wins
        self.reward_sum += other.reward_sum
        self.cards_left_sum += other.cards_left_sum
        self.length_sum += other.length_sum
        self.wins_by_seat = [a + b for a, b in zip(self.wins_by_seat, other.wins_by_seat, strict=True)]

    def summary(self) -> dict[str, Any]:
        lo, hi = wilson_interval(self.wins, self.games)
        n = max(self.games, 1)
        rate = self.wins / n
        return {
            "agent": self.agent,
            "opponents": self.opponents,
            "rules": self.rules,
            "seed": self.seed,
            "games": self.games,
            "deals": self.games // NUM_SEATS,
            "wins": self.wins,
            "win_rate": rate,
            "win_rate_low": lo,
            "win_rate_high": hi,
            "normalized_win_rate": rate / 0.25,
            "normalized_low": lo / 0.25,
            "normalized_high": hi / 0.25,
            "mean_reward": self.reward_sum / n,
            "mean_cards_left": self.cards_left_sum / n,
            "mean_game_length": self.length_sum / n,
            "wins_by_seat": self.wins_by_seat,
        }


def play_games(
    game: Big2Game,
    seatings: Sequence[Sequence[Agent]],
    seeds: Sequence[int],
    seat_seeds: Sequence[Sequence[int]],
    on_step: Callable[[Agent, list[int], list[Decision], list[int]], None] | None = None,
) -> list[Any]:
    """Play one game per (seating, deal seed) in lockstep; returns the finished states.

    ``on_step(agent, game_indices, decisions, picks)`` is called after every batched choice
    (the self-play collector records the learner's decisions through it).
    """
    states = [game.new_game(seed=s) for s in seeds]
    rngs = [[random.Random(x) for x in ss] for ss in seat_seeds]
    active = [i for i, s in enumerate(states) if not s.is_terminal()]
    while active:
        groups: dict[int, tuple[Agent, list[int]]] = {}
        for gi in active:
            agent = seatings[gi][states[gi].current_player]
            groups.setdefault(id(agent), (agent, []))[1].append(gi)
        for agent, gis in groups.values():
            decisions = [Decision.from_state(states[g]) for g in gis]
            picks = agent.act_batch(decisions, [rngs[g][states[g].current_player] for g in gis])
            if on_step is not None:
                on_step(agent, gis, decisions, picks)
            for g, d, k in zip(gis, decisions, picks, strict=True):
                if not 0 <= k < len(d.moves):
                    raise ValueError(f"agent {agent.name} returned move index {k} of {len(d.moves)}")
                states[g].apply(d.moves[k])
        active = [g for g in active if not states[g].is_terminal()]
    return states


def duplicate_seatings(agent_spec: str, opponent_specs: Sequence[str], seed: int, first_deal: int,
                       seeds: Sequence[int]) -> tuple[Agent, list[list[Agent]], list[int], list[list[int]]]:
    """The evaluated agent and, for every deal and every seat of it, the seating, deal seed and
    seat seeds of one game (game ``i`` has the agent in seat ``i % 4``)."""
    agent = make_agent(agent_spec)
    # one object per distinct opponent spec (a batching agent then scores all its seats at
    # once); copies of the evaluated agent's own spec get objects of their own
    shared: dict[str, Agent] = {}
    opponents = []
    for o in opponent_specs:
        if o == agent_spec:
            opponents.append(make_agent(o))
        else:
            if o not in shared:
                shared[o] = make_agent(o)
            opponents.append(shared[o])
    seatings, deal_list, seat_seed_list = [], [], []
    for k, ds in enumerate(seeds):
        d = first_deal + k
        for agent_seat in range(NUM_SEATS):
            seating: list[Agent] = [agent] * NUM_SEATS
            for j, opp in enumerate(opponents):
                seating[(agent_seat + 1 + j) % NUM_SEATS] = opp
            seatings.append(seating)
            deal_list.append(ds)
            seat_seed_list.append([seat_seed(seed, d, agent_seat, s) for s in range(NUM_SEATS)])
    return agent, seatings, deal_list, seat_seed_list


def _chunk_games(args: tuple) -> list[Any]:
    """The finished games of one chunk task (game ``i`` has the agent in seat ``i % 4``)."""
    agent_spec, opponent_specs, rules, seed, first_deal, seeds = args
    _, seatings, deal_list, seat_seed_list = duplicate_seatings(agent_spec, opponent_specs, seed, first_deal, seeds)
    return play_games(Big2Game(rules), seatings, deal_list, seat_seed_list)


def _play_chunk(args: tuple) -> MatchResult:
    agent_spec, opponent_specs, rules, seed = args[:4]
    states = _chunk_games(args)
    res = MatchResult(agent_spec, list(opponent_specs), rules, seed)
    for i, st in enumerate(states):
        agent_seat = i % NUM_SEATS
        res.games += 1
        res.length_sum += len(st.moves)
        res.reward_sum += st.returns()[agent_seat]
        res.cards_left_sum += st.cards_left()[agent_seat]
        if st.winner == agent_seat:
            res.wins += 1
            res.wins_by_seat[agent_seat] += 1
    return res


def _pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"), initializer=worker_init)


def match_tasks(agent: str, opponent_triples: Sequence[tuple[str, str, str]], rules: str, games: int, seed: int,
                seeds: Sequence[int] | None) -> list[tuple]:
    """Checked chunk tasks ``(agent, opponents, rules, seed, first_deal, deal_seeds)``: ``games``
    games against each opponent triple, in chunks of :data:`CHUNK_DEALS` deals. Bad names, rules
    or sizes fail here, before any process starts."""
    if games <= 0 or games % NUM_SEATS:
        raise ValueError(f"games must be a positive multiple of 4 (every deal from every seat), got {games}")
    get_rules(rules)
    for spec in [agent, *(o for triple in opponent_triples for o in triple)]:
        make_agent(spec)
    n_deals = games // NUM_SEATS
    all_seeds = list(seeds) if seeds is not None else deal_seeds(seed, n_deals)
    if len(all_seeds) < n_deals:
        raise ValueError(f"{n_deals} deals needed, the seed list holds {len(all_seeds)}")
    return [(agent, tuple(triple), rules, seed, start, all_seeds[start:min(start + CHUNK_DEALS, n_deals)])
            for triple in opponent_triples for start in range(0, n_deals, CHUNK_DEALS)]


def map_tasks(fn: Callable[[tuple], Any], tasks: list[tuple], workers: int) -> list[Any]:
    """``fn`` over ``tasks``, in order: in this process, or on ``workers`` processes (on one
    torch thread either way)."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if workers == 1 or len(tasks) == 1:
        with single_thread():
            return [fn(t) for t in tasks]
    with _pool(min(workers, len(tasks))) as pool:
        return list(pool.map(fn, tasks))


def opponent_triple(opponents: Sequence[str]) -> list[str]:
    """The three opponents of a match: one name stands for three copies."""
    opponents = list(opponents)
    if len(opponents) == 1:
        opponents = opponents * 3
    if len(opponents) != 3:
        raise ValueError(f"give one opponent (three copies) or three, got {len(opponents)}")
    return opponents


def run_match(
    agent: str,
    opponents: Sequence[str],
    rules: str = "paper",
    games: int = 400,
    seed: int = 0,
    workers: int = 1,
    seeds: Sequence[int] | None = None,
) -> dict[str, Any]:
    """Evaluate ``agent`` against ``opponents`` (one name for three copies, or three names).

    ``games`` must be a multiple of 4 (each deal is played from every seat). Deal seeds come
    from ``seeds`` when given (e.g. a versioned seed file), else from :func:`deal_seeds`.
    """
    opponents = opponent_triple(opponents)
    tasks = match_tasks(agent, [tuple(opponents)], rules, games, seed, seeds)
    parts = map_tasks(_play_chunk, tasks, workers)
    total = MatchResult(agent, opponents, rules, seed)
    for p in parts:
        total.add(p)
    return total.summary()


def _chunk_deal_wins(args: tuple) -> list[int]:
    states = _chunk_games(args)
    return [sum(states[k + seat].winner == seat for seat in range(NUM_SEATS))
            for k in range(0, len(states), NUM_SEATS)]


def deal_wins(
    agent: str,
    opponents: Sequence[str],
    rules: str = "paper",
    games: int = 400,
    seed: int = 0,
    workers: int = 1,
    seeds: Sequence[int] | None = None,
) -> list[int]:
    """The match of :func:`run_match` (same games, same arguments), deal by deal: how many of
    the four games of each deal the agent won (0 to 4). Paired comparisons of two agents on the
    same deals (``pipeline/ablation.py``) need the outcomes per deal, not only the total."""
    opponents = opponent_triple(opponents)
    tasks = match_tasks(agent, [tuple(opponents)], rules, games, seed, seeds)
    return [w for part in map_tasks(_chunk_deal_wins, tasks, workers) for w in part]


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """A readable table of match summaries."""
    head = (f"{'agent':<16} {'opponents':<34} {'games':>6} {'wins':>5} {'win rate':>9} "
            f"{'95% CI':>15} {'norm.':>6} {'reward':>7} {'cards left':>10} {'length':>7}")
    lines = [head, "-" * len(head)]
    for r in rows:
        opp = r["opponents"][0] + " x3" if len(set(r["opponents"])) == 1 else ",".join(r["opponents"])
        lines.append(
            f"{r['agent']:<16} {opp:<34} {r['games']:>6} {r['wins']:>5} {r['win_rate']:>9.3f} "
            f"[{r['win_rate_low']:.3f}, {r['win_rate_high']:.3f}] {r['normalized_win_rate']:>6.2f} "
            f"{r['mean_reward']:>7.3f} {r['mean_cards_left']:>10.2f} {r['mean_game_length']:>7.1f}"
        )
    return "\n".join(lines)


__all__ = ["MatchResult", "deal_seeds", "deal_wins", "run_match", "format_table", "play_games"]
