"""Matches: one agent against the other seats' opponents over fixed deals, every seat, duplicate deals.

Each deal is played once with the agent in every seat (Big 2: 4 games, Dou Dizhu: 3), the
opponents filling the other seats in their listed order (the next seat after the agent gets the
first opponent), so card luck and seat bias cancel out. In a team game the seat decides the role
(Dou Dizhu with a fixed landlord: every deal is played once as landlord and once in each peasant
seat, DouZero's protocol), so rotating the seats rotates the roles; with an auction the role is
what the bidding gave, and the summary says how often each came. The seat count, the roles and
who won come from the game (:mod:`climbrl.games.base`). Every seat of every game has its own
random stream, seeded from (match seed, deal index, agent seat, seat): the numbers are identical
whatever the number of worker processes. Games advance in lockstep inside a chunk of deals so
that an agent that batches (a neural policy) scores all its waiting decisions in one call; the
chunks are a fixed size, independent of the worker count. Chunks run on one torch thread (see
:mod:`climbrl.threads`); worker processes are started with "spawn", which is safe from a
program that runs other threads (a Prefect task runner), where "fork" can copy a held lock.

The agent wins a game when its seat is among the result's winners (Big 2: it went out first;
Dou Dizhu: its side won). A free-for-all game's summary also gives the win rate normalized by
chance (1 / number of players); a team game's gives, per role, the games, win rate and mean
score with 95% intervals (``by_role``: Wilson's for the win rate; Student t on the games, with
games - 1 degrees of freedom, for the score, and none, ``null``, when the scores show no spread:
:func:`climbrl.evaluate.stats.mean_summary`).
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from climbrl.agents import Agent
from climbrl.agents.runner import deal_seeds, play_games, seat_seed
from climbrl.evaluate.stats import format_interval, moments_interval, wilson_interval
from climbrl.games.registry import DEFAULT_PRESETS, make_game
from climbrl.learn.specs import make_agent
from climbrl.threads import single_thread, worker_init

CHUNK_DEALS = 25


def _free_for_all(game: Any) -> bool:
    """Every seat holds the same role and plays for itself (Big 2), rather than a team game."""
    return len(game.roles) == 1


@dataclass
class RoleStats:
    """Games, wins and scores of the agent in one role."""

    games: int = 0
    wins: int = 0
    reward_sum: float = 0.0
    reward_sq: float = 0.0

    def add(self, other: RoleStats) -> None:
        self.games += other.games
        self.wins += other.wins
        self.reward_sum += other.reward_sum
        self.reward_sq += other.reward_sq

    def summary(self) -> dict[str, Any]:
        n = max(self.games, 1)
        lo, hi = wilson_interval(self.wins, self.games)
        mean, mean_lo, mean_hi = moments_interval(n, self.reward_sum, self.reward_sq)
        return {"games": self.games, "wins": self.wins, "win_rate": self.wins / n, "win_rate_low": lo,
                "win_rate_high": hi, "mean_reward": mean, "mean_reward_low": mean_lo,
                "mean_reward_high": mean_hi}


@dataclass
class MatchResult:
    """Outcome of one match, seen from the evaluated agent."""

    agent: str
    opponents: list[str]
    rules: str
    seed: int
    game: str = "big2"
    num_players: int = 4
    games: int = 0
    wins: int = 0
    reward_sum: float = 0.0
    cards_left_sum: int = 0
    length_sum: int = 0
    wins_by_seat: list[int] = field(default_factory=list)
    by_role: dict[str, RoleStats] = field(default_factory=dict)
    free_for_all: bool = True

    def __post_init__(self) -> None:
        if not self.wins_by_seat:
            self.wins_by_seat = [0] * self.num_players

    def add(self, other: MatchResult) -> None:
        self.games += other.games
        self.wins += other.wins
        self.reward_sum += other.reward_sum
        self.cards_left_sum += other.cards_left_sum
        self.length_sum += other.length_sum
        self.wins_by_seat = [a + b for a, b in zip(self.wins_by_seat, other.wins_by_seat, strict=True)]
        for role, st in other.by_role.items():
            self.by_role.setdefault(role, RoleStats()).add(st)
        self.free_for_all = other.free_for_all

    def summary(self) -> dict[str, Any]:
        lo, hi = wilson_interval(self.wins, self.games)
        n = max(self.games, 1)
        rate = self.wins / n
        out: dict[str, Any] = {
            "agent": self.agent,
            "opponents": self.opponents,
            "game": self.game,
            "rules": self.rules,
            "seed": self.seed,
            "games": self.games,
            "deals": self.games // self.num_players,
            "wins": self.wins,
            "win_rate": rate,
            "win_rate_low": lo,
            "win_rate_high": hi,
        }
        if self.free_for_all:
            chance = 1.0 / self.num_players
            out.update({"normalized_win_rate": rate / chance, "normalized_low": lo / chance,
                        "normalized_high": hi / chance})
        out.update({
            "mean_reward": self.reward_sum / n,
            "mean_cards_left": self.cards_left_sum / n,
            "mean_game_length": self.length_sum / n,
            "wins_by_seat": self.wins_by_seat,
        })
        if not self.free_for_all:
            out["by_role"] = {r: self.by_role[r].summary() for r in sorted(self.by_role)}
        return out


def duplicate_seatings(agent_spec: str, opponent_specs: Sequence[str], seed: int, first_deal: int,
                       seeds: Sequence[int], game: str = "big2",
                       num_players: int = 4) -> tuple[Agent, list[list[Agent]], list[int], list[list[int]]]:
    """The evaluated agent and, for every deal and every seat of it, the seating, deal seed and
    seat seeds of one game (game ``i`` has the agent in seat ``i % num_players``)."""
    n = num_players
    agent = make_agent(agent_spec, game)
    # one object per distinct opponent spec (a batching agent then scores all its seats at
    # once); copies of the evaluated agent's own spec get objects of their own
    shared: dict[str, Agent] = {}
    opponents = []
    for o in opponent_specs:
        if o == agent_spec:
            opponents.append(make_agent(o, game))
        else:
            if o not in shared:
                shared[o] = make_agent(o, game)
            opponents.append(shared[o])
    seatings, deal_list, seat_seed_list = [], [], []
    for k, ds in enumerate(seeds):
        d = first_deal + k
        for agent_seat in range(n):
            seating: list[Agent] = [agent] * n
            for j, opp in enumerate(opponents):
                seating[(agent_seat + 1 + j) % n] = opp
            seatings.append(seating)
            deal_list.append(ds)
            seat_seed_list.append([seat_seed(seed, d, agent_seat, s) for s in range(n)])
    return agent, seatings, deal_list, seat_seed_list


def _chunk_games(args: tuple) -> list[Any]:
    """The finished games of one chunk task (game ``i`` has the agent in seat ``i % players``)."""
    agent_spec, opponent_specs, game_name, seed, first_deal, seeds = args
    game = make_game(game_name)
    _, seatings, deal_list, seat_seed_list = duplicate_seatings(agent_spec, opponent_specs, seed, first_deal, seeds,
                                                                 game_name, game.num_players)
    return play_games(game, seatings, deal_list, seat_seed_list)


def _play_chunk(args: tuple) -> MatchResult:
    agent_spec, opponent_specs, game_name, seed = args[:4]
    states = _chunk_games(args)
    g, _, rules = game_name.partition(":")
    n = len(opponent_specs) + 1
    res = MatchResult(agent_spec, list(opponent_specs), rules, seed, g, n)
    for i, st in enumerate(states):
        agent_seat = i % n
        result = st.result()
        won = agent_seat in result.winners
        reward = result.returns[agent_seat]
        res.games += 1
        res.length_sum += len(st.moves)
        res.reward_sum += reward
        res.cards_left_sum += st.cards_left()[agent_seat]
        if won:
            res.wins += 1
            res.wins_by_seat[agent_seat] += 1
        role = res.by_role.setdefault(result.roles[agent_seat], RoleStats())
        role.games += 1
        role.wins += won
        role.reward_sum += reward
        role.reward_sq += reward * reward
    res.free_for_all = _free_for_all(states[0].game) if states else True
    return res


def match_game(agent: str, opponents: Sequence[str], rules: str, seed: int, seeds: Sequence[int], deal: int,
               agent_seat: int, game: str = "big2") -> tuple[Any, int, list[int]]:
    """One game of a match as the match played it: the game of deal ``deal`` (an index into the
    match's ``seeds``) with the agent in ``agent_seat``, and whether the agent won that deal from
    each seat. The whole chunk holding the deal is replayed (:data:`CHUNK_DEALS` deals, the same
    seatings, seat seeds and lockstep batching as :func:`run_match`), so a batching network decides
    on the same batches, and the game is the one the match played. Returns the game, the first
    deal of the chunk and the agent's wins on each deal of the chunk (from every seat, as
    :func:`deal_wins` counts them), to check the replay against a record."""
    n, opponents, _ = _tasks(agent, opponents, rules, _players(game, rules) * len(seeds), seed, seeds, game)
    if not 0 <= deal < len(seeds):
        raise ValueError(f"deal {deal}: the match played deals 0..{len(seeds) - 1}")
    if not 0 <= agent_seat < n:
        raise ValueError(f"seat {agent_seat}: the game has seats 0..{n - 1}")
    start = deal // CHUNK_DEALS * CHUNK_DEALS
    task = (agent, tuple(opponents), game_name(game, rules), seed, start,
            list(seeds[start:min(start + CHUNK_DEALS, len(seeds))]))
    with single_thread():
        states = _chunk_games(task)
    wins = [sum(s in states[k * n + s].result().winners for s in range(n)) for k in range(len(states) // n)]
    return states[(deal - start) * n + agent_seat], start, wins


def _pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"), initializer=worker_init)


def game_name(game: str, rules: str) -> str:
    """``game:rules``, the rules defaulting to the game's default preset; an unknown game or
    preset raises (``GameError`` / ``RulesError``, both ``ValueError``)."""
    g = game.partition(":")[0]
    if g not in DEFAULT_PRESETS:
        raise ValueError(f"unknown game {game!r} (games: {', '.join(DEFAULT_PRESETS)})")
    name = f"{g}:{rules or DEFAULT_PRESETS[g]}"
    make_game(name)
    return name


def match_tasks(agent: str, opponent_lists: Sequence[Sequence[str]], rules: str, games: int, seed: int,
                seeds: Sequence[int] | None, game: str = "big2", purpose: str | None = None) -> list[tuple]:
    """Checked chunk tasks ``(agent, opponents, game:rules, seed, first_deal, deal_seeds)``:
    ``games`` games against each list of opponents (one per other seat), in chunks of
    :data:`CHUNK_DEALS` deals (``seeds``, else ``deal_seeds(seed, deals, purpose)``). Bad names,
    rules or sizes fail here, before any process starts."""
    name = game_name(game, rules)
    n = make_game(name).num_players
    if games <= 0 or games % n:
        raise ValueError(f"games must be a positive multiple of {n} (every deal from every seat), got {games}")
    for opps in opponent_lists:
        if len(opps) != n - 1:
            raise ValueError(f"{len(opps)} opponents for the {n - 1} other seats of {name}")
    for spec in dict.fromkeys([agent, *(o for opps in opponent_lists for o in opps)]):
        make_agent(spec, name)
    n_deals = games // n
    all_seeds = list(seeds) if seeds is not None else deal_seeds(seed, n_deals, purpose)
    if len(all_seeds) < n_deals:
        raise ValueError(f"{n_deals} deals needed, the seed list holds {len(all_seeds)}")
    return [(agent, tuple(opps), name, seed, start, all_seeds[start:min(start + CHUNK_DEALS, n_deals)])
            for opps in opponent_lists for start in range(0, n_deals, CHUNK_DEALS)]


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


def opponent_list(opponents: Sequence[str], num_players: int) -> list[str]:
    """The opponents of a match, one per other seat: one name stands for a copy in every seat."""
    opponents = list(opponents)
    if len(opponents) == 1:
        opponents = opponents * (num_players - 1)
    if len(opponents) != num_players - 1:
        raise ValueError(f"give one opponent (a copy in every other seat) or {num_players - 1}, got {len(opponents)}")
    return opponents


def _players(game: str, rules: str) -> int:
    return make_game(game_name(game, rules)).num_players


def _tasks(agent: str, opponents: Sequence[str], rules: str, games: int, seed: int, seeds: Sequence[int] | None,
           game: str, purpose: str | None = None) -> tuple[int, list[str], list[tuple]]:
    """The players, the opponent of every other seat and the chunk tasks of one match: what
    :func:`run_match`, :func:`deal_wins` and :func:`relative_returns` share."""
    n = _players(game, rules)
    opponents = opponent_list(opponents, n)
    return n, opponents, match_tasks(agent, [tuple(opponents)], rules, games, seed, seeds, game, purpose)


def run_match(
    agent: str,
    opponents: Sequence[str],
    rules: str = "",
    games: int = 400,
    seed: int = 0,
    workers: int = 1,
    seeds: Sequence[int] | None = None,
    game: str = "big2",
    purpose: str | None = None,
) -> dict[str, Any]:
    """Evaluate ``agent`` against ``opponents`` (one name for a copy in every other seat, or one
    name per other seat) at ``game`` under ``rules`` (default: the game's default preset).

    ``games`` must be a multiple of the number of players (each deal is played from every
    seat). Deal seeds come from ``seeds`` when given (e.g. a versioned seed file), else from
    :func:`deal_seeds` of ``seed`` for ``purpose`` (None: the unnamed stream of ad hoc matches).
    """
    n, opponents, tasks = _tasks(agent, opponents, rules, games, seed, seeds, game, purpose)
    parts = map_tasks(_play_chunk, tasks, workers)
    g, _, preset = tasks[0][2].partition(":")
    total = MatchResult(agent, opponents, preset, seed, g, n)
    for p in parts:
        total.add(p)
    return total.summary()


def _chunk_deal_wins(args: tuple) -> list[int]:
    states = _chunk_games(args)
    n = len(args[1]) + 1
    return [sum(seat in states[k + seat].result().winners for seat in range(n)) for k in range(0, len(states), n)]


def deal_wins(
    agent: str,
    opponents: Sequence[str],
    rules: str = "",
    games: int = 400,
    seed: int = 0,
    workers: int = 1,
    seeds: Sequence[int] | None = None,
    game: str = "big2",
    purpose: str | None = None,
) -> list[int]:
    """The match of :func:`run_match` (same games, same arguments), deal by deal: how many of
    the games of each deal (one per seat) the agent won. Paired comparisons of two agents on the
    same deals (``pipeline/ablation.py``) need the outcomes per deal, not only the total."""
    tasks = _tasks(agent, opponents, rules, games, seed, seeds, game, purpose)[2]
    return [w for part in map_tasks(_chunk_deal_wins, tasks, workers) for w in part]


def _chunk_relative_returns(args: tuple) -> list[list[float]]:
    states = _chunk_games(args)
    n = len(args[1]) + 1
    out = []
    for i, st in enumerate(states):
        returns = st.result().returns
        out.append([float(returns[(i % n + j) % n]) for j in range(n)])
    return out


def relative_returns(
    agent: str,
    opponents: Sequence[str],
    rules: str = "",
    games: int = 400,
    seed: int = 0,
    workers: int = 1,
    seeds: Sequence[int] | None = None,
    game: str = "big2",
    purpose: str | None = None,
) -> list[list[float]]:
    """The match of :func:`run_match` (same games, same arguments), game by game: every seat's
    return, counted from the agent's seat (``[agent, next seat, ...]``; the games of a deal are
    consecutive, the agent in seat 0, 1, ...). With one opponent per other seat naming the
    agent's own spec across the table, it scores a team match: the agent's team's score is
    ``row[0] + row[2]``."""
    tasks = _tasks(agent, opponents, rules, games, seed, seeds, game, purpose)[2]
    return [r for part in map_tasks(_chunk_relative_returns, tasks, workers) for r in part]


def team_scores(rows: Sequence[Sequence[float]], players: int) -> dict[str, Any]:
    """A team match's summary from its :func:`relative_returns` rows (the agent's team in the
    row's seats 0 and 2): the team's score per game (its two seats' returns summed) with a 95%
    interval over the deals' means (a deal's ``players`` games are not independent: Student t with
    deals - 1 degrees of freedom; none, ``null``, when every deal gives the same mean, see
    :func:`climbrl.evaluate.stats.mean_summary`), and the games the team came out ahead in."""
    from climbrl.evaluate.stats import mean_interval

    team = [r[0] + r[2] for r in rows]
    per_deal = [sum(team[i:i + players]) / players for i in range(0, len(team), players)]
    mean, lo, hi = mean_interval(per_deal)
    return {"games": len(rows), "team_score": mean, "team_score_low": lo, "team_score_high": hi,
            "team_wins": sum(t > 0 for t in team)}


def format_table(rows: Sequence[dict[str, Any]]) -> str:
    """A readable table of match summaries."""
    head = (f"{'agent':<16} {'opponents':<34} {'games':>6} {'wins':>5} {'win rate':>9} "
            f"{'95% CI':>15} {'norm.':>6} {'reward':>7} {'cards left':>10} {'length':>7}")
    lines = [head, "-" * len(head)]
    for r in rows:
        k = len(r["opponents"])
        opp = f"{r['opponents'][0]} x{k}" if len(set(r["opponents"])) == 1 else ",".join(r["opponents"])
        lines.append(
            f"{r['agent']:<16} {opp:<34} {r['games']:>6} {r['wins']:>5} {r['win_rate']:>9.3f} "
            f"[{r['win_rate_low']:.3f}, {r['win_rate_high']:.3f}] {r.get('normalized_win_rate', float('nan')):>6.2f} "
            f"{r['mean_reward']:>7.3f} {r['mean_cards_left']:>10.2f} {r['mean_game_length']:>7.1f}"
        )
        for role, x in r.get("by_role", {}).items():
            lines.append(
                f"  as {role:<13} {x['games']:>6} games  win rate {x['win_rate']:.3f} "
                f"[{x['win_rate_low']:.3f}, {x['win_rate_high']:.3f}]  mean score {x['mean_reward']:+.3f} "
                f"{format_interval(x['mean_reward_low'], x['mean_reward_high'], '+.3f')}"
            )
    return "\n".join(lines)


__all__ = ["MatchResult", "deal_seeds", "deal_wins", "relative_returns", "team_scores", "run_match", "format_table",
           "play_games", "seat_seed", "match_game"]
