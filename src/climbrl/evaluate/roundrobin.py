"""Dou Dizhu round robin of landlord-versus-peasants duels: pairwise WP and ADP matrices, a rating.

Every unordered pair of participants plays the duel of :mod:`climbrl.evaluate.duel` on the same
deals (one deal set for the whole round robin): X as landlord against two copies of Y, then Y as
landlord against two copies of X, so every ordered pair plays every deal once. Matrices (row =
participant X, column = opponent Y; the diagonal is empty):

* ``landlord``: X as landlord against Y as peasants;
* ``peasants``: X as the two peasants against Y as landlord;
* ``both``: every game of X against Y (WP over both games; ADP the mean of the two).

``adp.both`` is antisymmetric (``adp.both[X][Y] == -adp.both[Y][X]``: the points are
zero-sum), ``win_rate.both[X][Y] + win_rate.both[Y][X] == 1``, and ``win_rate.landlord[X][Y] +
win_rate.peasants[Y][X] == 1`` (the same games seen from both sides).

Rating: each game is a two-player ranking, the winning side before the losing one, fitted by the
Plackett-Luce model of :mod:`climbrl.evaluate.rating` (with two places, Bradley-Terry, fitted
from the win counts: ``rating.bradley_terry``, the same optimum as ``plackett_luce`` on the games,
at a cost independent of their number) on all games at once, so their order does not matter;
every pair plays both roles equally, so the landlord's advantage or handicap cancels. 95%
intervals: the deals, then the games within each deal, resampled (a deal is the same cards for
every pair: the unit of card luck).

Beside the rating, as the practice guide ranks its round robin:

* the total score (``score_ranking``): each participant's points summed over all its games (every
  participant plays the same games, so it ranks as the ADP does), with a 95% t interval of the ADP
  over the deals (each deal's mean points, every participant playing every deal equally often);
* the pairwise verdicts (``pairwise``, ``"X>Y"``: how often X won its games against Y, both roles,
  clustered on the deals) with a clustered t test per pair, Holm-adjusted over every pair, and the
  counter-chains (X beats Y beats Z beats X), as Big 2's tournament tests them
  (:func:`climbrl.evaluate.tournament.counter_chains`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from climbrl.agents.runner import deal_seeds
from climbrl.evaluate.duel import (
    DuelGame,
    check_specs,
    deal_pairs,
    duel_game_name,
    duel_tasks,
    play_duel_chunk,
    side_summary,
)
from climbrl.evaluate.match import map_tasks
from climbrl.evaluate.stats import format_interval, mean_summary
from climbrl.evaluate.tournament import chain_lines, counter_chains, pairwise_table

ROLE_KEYS = ("landlord", "peasants", "both")


def round_robin(participants: Mapping[str, str], game: str = "doudizhu", rules: str = "douzero", deals: int = 1000,
                seed: int = 0, workers: int = 1, resamples: int = 200) -> dict[str, Any]:
    """Every pair of ``participants`` (name -> agent spec) in the duel on ``deals`` shared deals
    (seeds from :func:`deal_seeds` of ``seed``, purpose ``"roundrobin"``); ``resamples`` bootstrap refits (seeded by
    ``seed``) give the ratings' intervals. Same numbers for any ``workers``."""
    names = list(participants)
    if len(names) < 2:
        raise ValueError(f"participants: a round robin needs at least 2, got {len(names)}")
    if deals < 1:
        raise ValueError(f"deals must be >= 1, got {deals}")
    name = duel_game_name(game, rules)
    specs = [participants[n] for n in names]
    check_specs(specs, name)
    seeds = deal_seeds(seed, deals, "roundrobin")
    tasks = [((i, j), t) for i, j in itertools.combinations(range(len(names)), 2)
             for t in duel_tasks(specs[i], specs[j], name, seed, seeds)]
    parts = map_tasks(play_duel_chunk, [t for _, t in tasks], workers)
    records = [(i, j, *g) for ((i, j), _), part in zip(tasks, parts, strict=True) for g in part]
    g, _, preset = name.partition(":")
    return summarize_round_robin(names, records, resamples=resamples, bootstrap_seed=seed, specs=specs, game=g,
                                 rules=preset, deals=deals, seed=seed)


def summarize_round_robin(names: Sequence[str], records: Sequence[Sequence[Any]], resamples: int = 200,
                          bootstrap_seed: int = 0, **meta: Any) -> dict[str, Any]:
    """Matrices, leaderboard and rating from game records ``(A index, B index, *DuelGame)``.

    The records are sorted first: every number depends only on which games were played."""
    from climbrl.evaluate.rating import bootstrap_pairs, bradley_terry, elo

    n = len(names)
    rows = sorted(tuple(r) for r in records)
    if not rows:
        raise ValueError("a round robin summary needs game records")
    by_pair: dict[tuple[int, int], list[DuelGame]] = {}
    for r in rows:
        by_pair.setdefault((int(r[0]), int(r[1])), []).append(DuelGame(*r[2:]))
    wp = {k: np.full((n, n), np.nan) for k in ROLE_KEYS}
    adp = {k: np.full((n, n), np.nan) for k in ROLE_KEYS}
    rankings, deal_of = [], []
    deals = sorted({int(r[2]) for r in rows})
    at = {d: k for k, d in enumerate(deals)}
    pair_wins = np.zeros((n, n, len(deals)), dtype=np.int64)   # [x, y, deal]: x's wins against y
    pair_games = np.zeros((n, n, len(deals)), dtype=np.int64)
    deal_points = np.zeros((n, len(deals)))
    for (i, j), games in sorted(by_pair.items()):
        pairs = deal_pairs(games)
        for side, (x, y) in enumerate(((i, j), (j, i))):
            summ = side_summary(pairs, side)
            for k in ROLE_KEYS:
                wp[k][x, y] = summ[k]["win_rate"]
                adp[k][x, y] = summ[k]["adp"]
        for gm in games:
            w, lose = (i, j) if gm.winner() == 0 else (j, i)
            rankings.append((w, lose))
            deal_of.append(gm.deal)
            d = at[gm.deal]
            pair_wins[w, lose, d] += 1
            pair_games[[i, j], [j, i], d] += 1
            deal_points[i, d] += gm.points(0)
            deal_points[j, d] += gm.points(1)
    deal_games = pair_games.sum(axis=1)  # [x, deal]
    wins, played, points = pair_wins.sum(axis=(1, 2)), deal_games.sum(axis=1), deal_points.sum(axis=1)
    theta = bradley_terry(pair_wins.sum(axis=2).astype(float))
    rating = elo(theta)
    low, high = bootstrap_pairs([w for w, _ in rankings], [x for _, x in rankings], deal_of, n,
                                resamples=resamples, seed=bootstrap_seed)
    board = [{"participant": names[p], "rating": float(rating[p]), "rating_low": float(low[p]),
              "rating_high": float(high[p]), "games": int(played[p]), "wins": int(wins[p]),
              "win_rate": float(wins[p] / played[p]) if played[p] else None,
              "adp": float(points[p] / played[p]) if played[p] else None,
              "win_rate_landlord": float(np.nanmean(wp["landlord"][p])),
              "win_rate_peasants": float(np.nanmean(wp["peasants"][p]))} for p in range(n)]
    board.sort(key=lambda r: (-r["rating"], r["participant"]))
    pairwise = pairwise_table(names, pair_wins, pair_games)

    def table(m: np.ndarray) -> list[list[float | None]]:
        return [[None if np.isnan(v) else float(v) for v in row] for row in m]

    method = {"model": "plackett-luce on two-player rankings (winning side first), one virtual game won by each "
                       "of every pair", "scale": "1500 + 400 log10(strength), 1500 = participants' mean",
              "interval": "95% percentile", "bootstrap": "deals, then games within each deal, with replacement",
              "resamples": resamples, "bootstrap_seed": bootstrap_seed}
    return {**meta, "participants": list(names), "games": len(rows), "rating_method": method, "leaderboard": board,
            "matrix_rows": "row = participant, column = opponent, in the order of 'participants'",
            "win_rate": {k: table(wp[k]) for k in ROLE_KEYS}, "adp": {k: table(adp[k]) for k in ROLE_KEYS},
            "score_ranking": _score_ranking(names, points, deal_points, deal_games),
            "pairwise": pairwise, "counter_chains": counter_chains(names, pairwise),
            "verdicts": "pairwise: clustered t test on the deals per pair, Holm over every pair (family-wise 5%); "
                        "a counter-chain is significant when its three pairs are"}


def _score_ranking(names: Sequence[str], points: np.ndarray, deal_points: np.ndarray,
                   deal_games: np.ndarray) -> list[dict[str, Any]]:
    """The participants by total score (most points first), each with its ADP and a 95% t
    interval of the ADP over the deals (the deals are the unit of card luck; every participant
    plays each deal equally often, so the ADP is the mean of its deals' means):
    :func:`climbrl.evaluate.stats.mean_summary`, which gives no interval where the deals show no
    spread."""
    rows = []
    for p, name in enumerate(names):
        has = deal_games[p] > 0
        adp = mean_summary(deal_points[p, has] / deal_games[p, has]) if has.any() else {"low": None, "high": None}
        rows.append({"participant": name, "total_points": float(points[p]), "games": int(deal_games[p].sum()),
                     "adp": float(points[p] / deal_games[p].sum()) if has.any() else None,
                     "adp_low": adp["low"], "adp_high": adp["high"]})
    rows.sort(key=lambda r: (-r["total_points"], r["participant"]))
    return rows


def format_round_robin(res: dict[str, Any]) -> str:
    lines = [f"{res['games']} games, {len(res['participants'])} participants, {res.get('deals')} deals per pair "
             f"and role, {res.get('game', 'doudizhu')} rules {res.get('rules')}",
             f"{'participant':<24} {'rating':>6} {'95% CI':>12} {'WP':>6} {'WP lord':>8} {'WP peas.':>8} {'ADP':>7}"]
    for r in res["leaderboard"]:
        rci = f"[{r['rating_low']:.0f}, {r['rating_high']:.0f}]"
        lines.append(f"{r['participant']:<24} {r['rating']:6.0f} {rci:>12} {r['win_rate']:6.3f} "
                     f"{r['win_rate_landlord']:8.3f} {r['win_rate_peasants']:8.3f} {r['adp']:+7.3f}")
    if "score_ranking" not in res:
        return "\n".join(lines)
    lines += ["", "total score (points over all games; ADP with its 95% interval over the deals):",
              f"{'participant':<24} {'points':>8} {'ADP':>7} {'95% CI':>18}"]
    for r in res["score_ranking"]:
        ci = format_interval(r["adp_low"], r["adp_high"], "+.3f")
        lines.append(f"{r['participant']:<24} {r['total_points']:8.0f} {r['adp']:+7.3f} {ci:>18}")
    beaten = sum(1 for v in res["pairwise"].values() if v["significant"])
    lines += ["", f"pairwise: {beaten} of {len(res['pairwise']) // 2} pairs separated (clustered t test on the "
                  "deals, Holm over every pair)"]
    lines += chain_lines(res["counter_chains"])
    return "\n".join(lines)


def plot_round_robin(res: dict[str, Any], path: str) -> None:
    """WP (top) and ADP (bottom) matrices as landlord, as peasants and both, rows and columns in
    leaderboard order."""
    from climbrl.evaluate.heatmap import draw_matrix, pyplot, short_labels

    plt = pyplot()
    names = res["participants"]
    order = [names.index(r["participant"]) for r in res["leaderboard"]]
    labels = short_labels([names[i] for i in order])
    k = len(names)
    size = 1.2 + 0.5 * k
    fig, axes = plt.subplots(2, 3, figsize=(3 * size + 1.5, 2 * size), squeeze=False)
    adp_max = max((abs(v) for k_ in ROLE_KEYS for row in res["adp"][k_] for v in row if v is not None), default=1.0)
    for c, role in enumerate(ROLE_KEYS):
        for r, (key, vmin, vmax, fmt) in enumerate((("win_rate", 0.0, 1.0, "{:.2f}"),
                                                     ("adp", -adp_max, adp_max, "{:+.2f}"))):
            m = np.array([[np.nan if v is None else v for v in row] for row in res[key][role]])[np.ix_(order, order)]
            title = f"{'WP' if key == 'win_rate' else 'ADP'}: row {'as ' + role if role != 'both' else 'both roles'}"
            im = draw_matrix(axes[r][c], m, labels, title, vmin, vmax, fmt)
            if c == 2:
                fig.colorbar(im, ax=axes[r][c], fraction=0.046)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


__all__ = ["round_robin", "summarize_round_robin", "format_round_robin", "plot_round_robin"]
