"""Round-robin tournaments of any game: who beats whom, and in what cycles.

Schedule: with ``n`` seats (Big 2: 4, Dou Dizhu: 3), every group of ``n`` participants plays
every deal in all ``(n-1)!`` cyclic seat orders and, within each, all ``n`` rotations of the
seats (Big 2: 24 games per group and deal; Dou Dizhu: 6). So every participant meets every other
equally often, and in each relative position equally often, on the same cards: card luck and
seat bias cancel. In a team game the seat decides the role (Dou Dizhu with a fixed landlord),
so every participant also plays every deal in every role against every other.

Places: Big 2 ranks the seats by its finishing order (first out, then by cards left); a team
game puts the winning side first, tied, and the others after it, tied (nobody first when nobody
won). Rating: a Plackett-Luce maximum-likelihood fit on all games at once (a full order is one
ranking; tied places give one two-player ranking per pair across them), so the order in which
the games are read does not matter, on an Elo-like scale, with 95% bootstrap intervals over
deals and games (:mod:`climbrl.evaluate.rating`); the leaderboard sorts by the point estimate.
Also reported: mean reward and win rate with 95% intervals, the pairwise matrix (how often A
finished strictly ahead of B, with intervals) and the counter-chains it contains (A ahead of B,
B ahead of C, C ahead of A), each edge marked significant when its interval lies above one half.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from climbrl.agents import Agent
from climbrl.agents.runner import deal_seeds, play_games
from climbrl.evaluate.match import game_name, map_tasks
from climbrl.evaluate.stats import wilson_interval
from climbrl.games.registry import make_game
from climbrl.learn.specs import make_agent


def schedule(n_participants: int, deals: int, seats: int = 4) -> list[tuple[tuple[int, ...], int]]:
    """(participant in seat 0..seats-1, deal index) for every game of the tournament."""
    cyclic_orders = [(0,) + p for p in itertools.permutations(range(1, seats))]  # (seats-1)! cyclic orders
    games = []
    for group in itertools.combinations(range(n_participants), seats):
        for d in range(deals):
            for order in cyclic_orders:
                cycle = [group[i] for i in order]
                for rot in range(seats):
                    games.append((tuple(cycle[(s - rot) % seats] for s in range(seats)), d))
    return games


def _game_seeds(seed: int, index: int, seats: int) -> list[int]:
    return [int(x) for x in np.random.SeedSequence([seed, 99, index]).generate_state(seats)]


def places(state: Any) -> tuple[list[int], list[int]]:
    """(seats from first to last, the place of each of them): Big 2's finishing order (places
    0..3), or a team game's winners then the others (places 0 and 1; all 1 when nobody won)."""
    if hasattr(state, "finishing_order"):
        order = state.finishing_order()
        return order, list(range(len(order)))
    result = state.result()
    n = len(result.roles)
    others = [s for s in range(n) if s not in result.winners]
    return list(result.winners) + others, [0] * len(result.winners) + [1] * len(others)


def _play_chunk(args: tuple) -> list[list[Any]]:
    """Per game: the participants from first to last place, their places, returns and
    participants by seat, and the deal index (see :func:`summarize`)."""
    specs, name, seed, deals, chunk = args
    game = make_game(name)
    n = game.num_players
    agents: list[Agent] = [make_agent(s, name) for s in specs]
    seatings = [[agents[p] for p in seats] for (_, seats, _) in chunk]
    seeds = [deals[d] for (_, _, d) in chunk]
    seat_seeds = [_game_seeds(seed, i, n) for (i, _, _) in chunk]
    states = play_games(game, seatings, seeds, seat_seeds)
    out = []
    for (_, seats, d), st in zip(chunk, states, strict=True):
        order, place = places(st)
        rets = st.returns()
        out.append([seats[s] for s in order] + place + [rets[s] for s in range(n)] + list(seats) + [d])
    return out


def split_label(participant: str) -> tuple[str, str]:
    """(label, spec): ``label=spec`` names a participant (``ppo=checkpoint:runs/ppo/policy.pt``).

    Only a plain name counts as a label: in ``checkpoint:runs/ablation/curriculum=self_play/...``
    the ``=`` belongs to the path, and the whole string is the spec (and its label).
    """
    label, eq, spec = participant.partition("=")
    if eq and label and not any(c in label for c in ":/\\"):
        return label, spec
    return participant, participant


def run_tournament(participants: Sequence[str], rules: str = "", deals: int = 1, seed: int = 0,
                   workers: int = 1, chunk_games: int = 240, resamples: int = 200,
                   game: str = "big2") -> dict[str, Any]:
    """Every participant (an agent spec, or ``label=spec``) in the balanced schedule of ``game``
    under ``rules`` (default: its default preset); ``resamples`` bootstrap refits (seeded by
    ``seed``) give the ratings' intervals."""
    labels = [split_label(p)[0] for p in participants]
    specs = [split_label(p)[1] for p in participants]
    name = game_name(game, rules)
    n = make_game(name).num_players
    if len(specs) < n:
        raise ValueError(f"a {n}-seat tournament needs at least {n} participants, got {len(specs)}")
    if len(set(labels)) != len(labels):
        raise ValueError("participants must be distinct")
    if deals < 1:
        raise ValueError(f"deals must be >= 1, got {deals}")
    for s in specs:
        make_agent(s, name)
    games = schedule(len(specs), deals, n)
    deal_list = deal_seeds(seed, deals)
    indexed = [(i, seats, d) for i, (seats, d) in enumerate(games)]
    chunks = [indexed[i:i + chunk_games] for i in range(0, len(indexed), chunk_games)]
    tasks = [(tuple(specs), name, seed, deal_list, c) for c in chunks]
    parts = map_tasks(_play_chunk, tasks, workers)
    records = [r for p in parts for r in p]
    g, _, preset = name.partition(":")
    return summarize(labels, records, resamples=resamples, bootstrap_seed=seed, game=g, rules=preset, deals=deals,
                     seed=seed)


def summarize(specs: list[str], records: list[list], resamples: int = 200, bootstrap_seed: int = 0,
              **meta: Any) -> dict[str, Any]:
    """Leaderboard, pairwise matrix and counter-chains of game records.

    A record of a game of ``k`` seats is ``participants from first to last place (k) + their
    places (k; equal places are ties) + returns by seat (k) + participants by seat (k) + deal
    index``. The records are sorted first, so every number, down to the last bit of the sums,
    depends only on which games were played, not on their order.
    """
    from climbrl.evaluate.rating import bootstrap_ratings, elo, plackett_luce

    n = len(specs)
    k = (len(records[0]) - 1) // 4 if records else 0
    if not records or any(len(r) != 4 * k + 1 or k < 2 for r in records):
        raise ValueError("game records of k seats have 4k + 1 fields: participants in place order, places, "
                         "returns, participants by seat (k each) and the deal")
    records = sorted(tuple(r) for r in records)
    games = [_rankings(r[:k], r[k:2 * k]) for r in records]
    theta = plackett_luce([x for g in games for x in g], n)
    rating = elo(theta)
    low, high = bootstrap_ratings(games, [r[-1] for r in records], n, resamples=resamples, seed=bootstrap_seed)
    played = np.zeros(n, dtype=np.int64)
    wins = np.zeros(n, dtype=np.int64)
    reward = np.zeros(n)
    ahead = np.zeros((n, n), dtype=np.int64)
    met = np.zeros((n, n), dtype=np.int64)
    for rec in records:
        order, place, rets, seats = rec[:k], rec[k:2 * k], rec[2 * k:3 * k], rec[3 * k:4 * k]
        for a, pl in zip(order, place, strict=True):
            wins[a] += pl == 0
        for s, p in enumerate(seats):
            played[p] += 1
            reward[p] += rets[s]
        for i, a in enumerate(order):
            for j in range(i + 1, k):
                b = order[j]
                if place[i] < place[j]:
                    ahead[a, b] += 1
                elif place[j] < place[i]:
                    ahead[b, a] += 1
                met[a, b] += 1
                met[b, a] += 1
    board = []
    for p in range(n):
        lo, hi = wilson_interval(int(wins[p]), int(played[p]))
        board.append({"participant": specs[p], "rating": float(rating[p]), "rating_low": float(low[p]),
                      "rating_high": float(high[p]), "log_strength": float(theta[p]),
                      "games": int(played[p]), "wins": int(wins[p]),
                      "win_rate": wins[p] / played[p], "win_rate_low": lo, "win_rate_high": hi,
                      "mean_reward": reward[p] / played[p]})
    board.sort(key=lambda r: (-r["rating"], r["participant"]))
    pairwise = {}
    for a in range(n):
        for b in range(n):
            if a != b and met[a, b]:
                lo, hi = wilson_interval(int(ahead[a, b]), int(met[a, b]))
                pairwise[f"{specs[a]}>{specs[b]}"] = {"rate": ahead[a, b] / met[a, b], "low": lo, "high": hi,
                                                     "games": int(met[a, b])}
    chains = []
    for a, b, c in itertools.permutations(range(n), 3):
        if a < b and a < c:  # each cycle once, starting at its smallest member
            edges = [pairwise[f"{specs[x]}>{specs[y]}"] for x, y in ((a, b), (b, c), (c, a))]
            if all(e["rate"] > 0.5 for e in edges):
                chains.append({"cycle": [specs[a], specs[b], specs[c]], "rates": [e["rate"] for e in edges],
                               "significant": all(e["low"] > 0.5 for e in edges)})
    method = {"model": "plackett-luce (choix I-LSR), one virtual 2-player game won by each of every pair",
              "scale": "1500 + 400 log10(strength), 1500 = participants' mean", "interval": "95% percentile",
              "bootstrap": "deals, then games within each deal, with replacement", "resamples": resamples,
              "bootstrap_seed": bootstrap_seed}
    return {**meta, "participants": specs, "games": len(records), "rating_method": method, "leaderboard": board,
            "pairwise": pairwise, "counter_chains": chains}


def _rankings(order: Sequence[int], place: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """One game's rankings for the Plackett-Luce fit: the whole order when the places are all
    distinct, else one two-player ranking for each pair in different places (ties give none)."""
    if len(set(place)) == len(place):
        return (tuple(order),)
    return tuple((order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))
                 if place[i] < place[j])


def format_leaderboard(res: dict[str, Any]) -> str:
    lines = [f"{res['games']} games, {len(res['participants'])} participants, "
             f"{res.get('game', 'big2')} rules {res['rules']}",
             f"{'participant':<28} {'rating':>6} {'95% CI':>12} {'win rate':>9} {'95% CI':>15} {'reward':>7}"]
    if res["leaderboard"] and "rating" not in res["leaderboard"][0]:
        raise ValueError("this tournament result predates the Plackett-Luce ratings (it has OpenSkill's); "
                         "rerun the tournament")
    for r in res["leaderboard"]:
        rci = f"[{r['rating_low']:.0f}, {r['rating_high']:.0f}]"
        ci = f"[{r['win_rate_low']:.3f}, {r['win_rate_high']:.3f}]"
        lines.append(f"{r['participant']:<28} {r['rating']:6.0f} {rci:>12} "
                     f"{r['win_rate']:9.3f} {ci} {r['mean_reward']:7.3f}")
    for c in res["counter_chains"]:
        mark = "significant" if c["significant"] else "not significant"
        lines.append("counter-chain: " + " > ".join(c["cycle"] + [c["cycle"][0]])
                     + f" ({', '.join(f'{x:.2f}' for x in c['rates'])}; {mark})")
    if not res["counter_chains"]:
        lines.append("no counter-chains: the pairwise results are transitive")
    return "\n".join(lines)


def plot_pairwise(res: dict[str, Any], path: str) -> None:
    from climbrl.evaluate.heatmap import draw_matrix, pyplot, short_labels

    plt = pyplot()
    specs = [r["participant"] for r in res["leaderboard"]]
    m = np.full((len(specs), len(specs)), np.nan)
    for i, a in enumerate(specs):
        for j, b in enumerate(specs):
            if i != j:
                m[i, j] = res["pairwise"][f"{a}>{b}"]["rate"]
    fig, ax = plt.subplots(figsize=(1 + 0.6 * len(specs), 0.8 + 0.5 * len(specs)))
    im = draw_matrix(ax, m, short_labels(specs), "row finished ahead of column", 0, 1)
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


__all__ = ["run_tournament", "schedule", "summarize", "format_leaderboard", "plot_pairwise"]
