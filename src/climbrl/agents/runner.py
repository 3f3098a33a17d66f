"""The lockstep runner that self-play and evaluation share, and the seeds of its games.

:func:`play_games` advances many games at once: at every step the games are grouped by the agent
to act and each agent scores all of its waiting decisions in one call (a neural policy then runs
one forward pass for the whole group). Every seat of every game has its own ``random.Random``,
so a game's moves depend only on its deal seed and seat seeds, never on which other games share
the batch. It knows a game only through the protocol of :mod:`climbrl.games.base`: any number of
seats, any phases.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from climbrl.agents.base import Agent, Decision

PURPOSES: dict[str, int] = {
    "evaluation": 1,   # the versioned evaluation deal set (seeds.seed: data/eval_seeds.json)
    "validation": 2,   # the versioned validation deal set (seeds.validation_seed: data/valid_seeds.json)
    "train": 3,        # the self-play games of one training epoch (learn/train.py)
    "train-eval": 4,   # the in-training evaluations (train.*.eval_seed: training.py)
    "baselines": 5,    # the baseline table (baselines.seed: evaluate/baselines_report.py)
    "tournament": 6,   # Big 2's four-seat tournament (tournament.seed: for evaluate/tournament.py, which still
                       # draws from the unnamed stream, disjoint from every purpose here too)
    "roundrobin": 7,   # Dou Dizhu's round robin of duels (tournament.seed: evaluate/roundrobin.py)
    "deep": 8,         # the deep evaluations' fresh deal sets (seed + repeat: evaluate/deep.py)
    "teacher": 9,      # the imitation teacher's games (the champion base: learn/imitation.py)
    "regression": 10,  # CI's regression gates (pipeline/regression.py)
}
"""Every purpose that draws deals from a seed, and its SeedSequence spawn key. The ids are part
of the deals: never renumber one (a new purpose takes a new id)."""


def deal_seeds(seed: int, n: int, purpose: str | None = None) -> list[int]:
    """``n`` deal seeds derived from ``seed`` for ``purpose`` (numpy SeedSequence; stable across
    versions). Each purpose of :data:`PURPOSES` draws from ``SeedSequence(seed,
    spawn_key=(id,))``, its own stream: two purposes never share deals, even under the same seed
    (seed 0 of the baseline table, the tournament and the teacher's games). ``None`` is the
    unnamed stream, ``SeedSequence(seed)``, disjoint from every purpose's: ad hoc matches
    (``climbrl evaluate`` and ``duel`` with ``--seed``, the benchmarks, the tuning deals), which
    keep the deals they always had. The first ``k`` of ``n`` seeds are ``deal_seeds(seed, k)``."""
    if n < 0:
        raise ValueError(f"number of deals must be >= 0, got {n}")
    if purpose is None:
        ss = np.random.SeedSequence(seed)
    elif purpose in PURPOSES:
        ss = np.random.SeedSequence(seed, spawn_key=(PURPOSES[purpose],))
    else:
        raise ValueError(f"unknown deal purpose {purpose!r} (purposes: {', '.join(PURPOSES)})")
    return [int(x) for x in ss.generate_state(n, dtype=np.uint64) >> np.uint64(1)]


def load_deal_seeds(path: str | Path) -> list[int]:
    """The deal seeds of a versioned file (``{"deals": [...]}``, written by ``climbrl seeds`` and
    the pipeline's seeds stage); ``ValueError`` naming the file when it cannot be read or holds
    anything else."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"cannot read seeds file {path}: {e}") from None
    seeds = data.get("deals") if isinstance(data, dict) else None
    if not isinstance(seeds, list) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0
                                              for s in seeds):
        raise ValueError(f"seeds file {path}: expected {{'deals': [non-negative integers]}}")
    return seeds


def seat_seed(match_seed: int, deal_index: int, agent_seat: int, seat: int) -> int:
    """The seed of one seat's random stream in one game (deal ``deal_index``, the evaluated
    agent in ``agent_seat``)."""
    return int(np.random.SeedSequence([match_seed, deal_index, agent_seat, seat]).generate_state(1)[0])


OnStep = Callable[[Agent, list[int], list[Decision], list[int]], None]


def play_games(
    game: Any,
    seatings: Sequence[Sequence[Agent]],
    seeds: Sequence[int],
    seat_seeds: Sequence[Sequence[int]],
    on_step: OnStep | None = None,
) -> list[Any]:
    """Play one game per (seating, deal seed) in lockstep; returns the finished states.

    ``seatings[g][s]`` is the agent in seat ``s`` of game ``g`` (``game.num_players`` seats).
    ``on_step(agent, game_indices, decisions, picks)`` is called after every batched choice
    (the self-play collector records the learner's decisions through it).
    """
    n = game.num_players
    for g, seating in enumerate(seatings):
        if len(seating) != n:
            raise ValueError(f"game {g}: {len(seating)} agents for {n} seats of {game.name}")
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


def play_out(states: list[Any], policies: Sequence[Agent], seat: int, rngs: Sequence[Sequence[random.Random]]) -> None:
    """Play every state to its end in lockstep: ``policies[0]`` in ``seat``, ``policies[1]`` in
    the others; state ``i``'s seat ``p`` draws from ``rngs[i][p]``. One batched call per policy
    and step (the rollouts of the decision-time searches over a network)."""
    active = [i for i, s in enumerate(states) if not s.is_terminal()]
    while active:
        for which in (0, 1):
            group = [i for i in active if not states[i].is_terminal()
                     and (states[i].current_player == seat) == (which == 0)]
            if not group:
                continue
            decisions = [Decision.from_state(states[i]) for i in group]
            picks = policies[which].act_batch(decisions, [rngs[i][states[i].current_player] for i in group])
            for i, d, k in zip(group, decisions, picks, strict=True):
                states[i].apply(d.moves[k])
        active = [i for i in active if not states[i].is_terminal()]


def play_candidates(bases: Sequence[Any], moves: Sequence[Any], seeds: Sequence[int], policies: Sequence[Agent],
                    seat: int) -> list[Any]:
    """A decision-time search's rollouts: each move of ``moves`` played on a copy of each sampled
    game of ``bases`` (candidate-major: the first move on every base, then the second...), then all
    played out by :func:`play_out`; base ``i``'s rollouts draw from the streams
    ``random.Random(seeds[i] * players + p)``, the same for every move (common random numbers).
    Returns the finished games."""
    states, rngs = [], []
    for move in moves:
        for b, s in zip(bases, seeds, strict=True):
            st = b.clone()
            st.apply(move)
            states.append(st)
            rngs.append([random.Random(int(s) * b.game.num_players + p) for p in range(b.game.num_players)])
    play_out(states, policies, seat, rngs)
    return states


__all__ = ["PURPOSES", "deal_seeds", "load_deal_seeds", "seat_seed", "play_games", "play_out", "play_candidates"]
