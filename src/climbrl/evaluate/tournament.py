"""Round-robin tournaments of four-seat games: who beats whom, and in what cycles.

Schedule: every group of four participants plays every deal in all six cyclic seat orders
and, within each, all four rotations of the seats (24 games per group and deal). So every
participant meets every other equally often, and in each relative position (next to act,
across, before) equally often, on the same cards: card luck and seat bias cancel.

Rating: a Plackett-Luce maximum-likelihood fit on all the finishing orders at once (so the
order in which the games are read does not matter), on an Elo-like scale, with 95% bootstrap
intervals over deals and games (:mod:`climbrl.evaluate.rating`); the leaderboard sorts by the
point estimate. Also reported: mean reward and win rate with 95% intervals, the pairwise matrix
(how often A finished ahead of B, with intervals) and the counter-chains it contains (A ahead
of B, B ahead of C, C ahead of A), each edge marked significant when its interval lies above
one half.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from climbrl.agents import Agent, make_agent
from climbrl.evaluate.match import deal_seeds, map_tasks, play_games
from climbrl.evaluate.stats import wilson_interval
from climbrl.games.big2 import Big2Game, get_rules

CYCLIC_ORDERS = [(0,) + p for p in itertools.permutations((1, 2, 3))]  # 6 cyclic orders of 4


def schedule(n_participants: int, deals: int) -> list[tuple[tuple[int, int, int, int], int]]:
    """(participant in seat 0..3, deal index) for every game of the tournament."""
    games = []
    for group in itertools.combinations(range(n_participants), 4):
        for d in range(deals):
            for order in CYCLIC_ORDERS:
                cycle = [group[i] for i in order]
                for rot in range(4):
                    games.append((tuple(cycle[(s - rot) % 4] for s in range(4)), d))
    return games


def _game_seeds(seed: int, index: int) -> list[int]:
    return [int(x) for x in np.random.SeedSequence([seed, 99, index]).generate_state(4)]


def _play_chunk(args: tuple) -> list[list[int]]:
    """Per game: finishing order (participant indices, first to last), returns and participants by
    seat, and the deal index."""
    specs, rules, seed, deals, chunk = args
    game = Big2Game(rules)
    agents: list[Agent] = [make_agent(s) for s in specs]
    seatings = [[agents[p] for p in seats] for (_, seats, _) in chunk]
    seeds = [deals[d] for (_, _, d) in chunk]
    seat_seeds = [_game_seeds(seed, i) for (i, _, _) in chunk]
    states = play_games(game, seatings, seeds, seat_seeds)
    out = []
    for (_, seats, d), st in zip(chunk, states, strict=True):
        order = [seats[s] for s in st.finishing_order()]
        rets = st.returns()
        out.append(order + [rets[s] for s in range(4)] + list(seats) + [d])
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


def run_tournament(participants: Sequence[str], rules: str = "paper", deals: int = 1, seed: int = 0,
                   workers: int = 1, chunk_games: int = 240, resamples: int = 200) -> dict[str, Any]:
    """Every participant (an agent spec, or ``label=spec``) in the balanced schedule; ``resamples``
    bootstrap refits (seeded by ``seed``) give the ratings' intervals."""
    labels = [split_label(p)[0] for p in participants]
    specs = [split_label(p)[1] for p in participants]
    if len(specs) < 4:
        raise ValueError(f"a four-seat tournament needs at least 4 participants, got {len(specs)}")
    if len(set(labels)) != len(labels):
        raise ValueError("participants must be distinct")
    if deals < 1:
        raise ValueError(f"deals must be >= 1, got {deals}")
    get_rules(rules)
    for s in specs:
        make_agent(s)
    games = schedule(len(specs), deals)
    deal_list = deal_seeds(seed, deals)
    indexed = [(i, seats, d) for i, (seats, d) in enumerate(games)]
    chunks = [indexed[i:i + chunk_games] for i in range(0, len(indexed), chunk_games)]
    tasks = [(tuple(specs), rules, seed, deal_list, c) for c in chunks]
    parts = map_tasks(_play_chunk, tasks, workers)
    records = [r for p in parts for r in p]
    return summarize(labels, records, resamples=resamples, bootstrap_seed=seed, rules=rules, deals=deals, seed=seed)


def summarize(specs: list[str], records: list[list], resamples: int = 200, bootstrap_seed: int = 0,
              **meta: Any) -> dict[str, Any]:
    """Leaderboard, pairwise matrix and counter-chains of game records.

    A record is ``finishing order (4 participant indices, first to last) + returns by seat (4) +
    participants by seat (4) + deal index``. The records are sorted first, so every number, down
    to the last bit of the sums, depends only on which games were played, not on their order.
    """
    from climbrl.evaluate.rating import bootstrap_ratings, elo, plackett_luce

    n = len(specs)
    if any(len(r) != 13 for r in records):
        raise ValueError("a game record has 13 fields: finishing order, returns, seats (4 each) and the deal")
    records = sorted(tuple(r) for r in records)
    orders = [r[:4] for r in records]
    theta = plackett_luce(orders, n)
    rating = elo(theta)
    low, high = bootstrap_ratings(orders, [r[12] for r in records], n, resamples=resamples, seed=bootstrap_seed)
    played = np.zeros(n, dtype=np.int64)
    wins = np.zeros(n, dtype=np.int64)
    reward = np.zeros(n)
    ahead = np.zeros((n, n), dtype=np.int64)
    met = np.zeros((n, n), dtype=np.int64)
    for rec in records:
        order, rets, seats = rec[:4], rec[4:8], rec[8:12]
        wins[order[0]] += 1
        for s, p in enumerate(seats):
            played[p] += 1
            reward[p] += rets[s]
        for i, a in enumerate(order):
            for b in order[i + 1:]:
                ahead[a, b] += 1
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


def format_leaderboard(res: dict[str, Any]) -> str:
    lines = [f"{res['games']} games, {len(res['participants'])} participants, rules {res['rules']}",
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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    specs = [r["participant"] for r in res["leaderboard"]]
    m = np.full((len(specs), len(specs)), np.nan)
    for i, a in enumerate(specs):
        for j, b in enumerate(specs):
            if i != j:
                m[i, j] = res["pairwise"][f"{a}>{b}"]["rate"]
    fig, ax = plt.subplots(figsize=(1 + 0.6 * len(specs), 0.8 + 0.5 * len(specs)))
    im = ax.imshow(m, cmap="RdBu", vmin=0, vmax=1)
    labels = [s.split("/")[-1][:18] for s in specs]
    ax.set_xticks(range(len(specs)), labels, rotation=60, ha="right", fontsize=7)
    ax.set_yticks(range(len(specs)), labels, fontsize=7)
    for i in range(len(specs)):
        for j in range(len(specs)):
            if i != j:
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=6)
    ax.set_title("row finished ahead of column")
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


__all__ = ["run_tournament", "schedule", "summarize", "format_leaderboard", "plot_pairwise"]
