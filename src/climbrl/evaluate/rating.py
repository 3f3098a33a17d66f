"""Order-free ratings from finishing orders: a Plackett-Luce fit on all games at once.

Model (Plackett-Luce): participants with strengths ``w`` finish a game in the order (a, b, c, d)
with probability ``w_a / (w_a + w_b + w_c + w_d) * w_b / (w_b + w_c + w_d) * w_c / (w_c + w_d)``.
The maximum-likelihood strengths are a function of the *set* of finishing orders, so reading the
same games in another order gives the same ratings (OpenSkill's game-by-game updates did not: the
same 5,040 games gave the random agent 14.7 in schedule order and 20.4 reversed). The fit is
I-LSR (Maystre & Grossglauser 2015), which converges to the maximum-likelihood estimate: choix's
``ilsr_rankings`` step for step (the same optimum to 1e-15), computed on the distinct rankings
with their counts, in numpy. A bootstrap sample only changes the counts, so a refit costs the same
however many games the tournament has: the study's 200 refits of 25,200 games take seconds, not
the four minutes of choix's loop over the games (choix's ``opt_rankings`` is slower still).

Prior: every pair of participants is credited with ``prior_games`` virtual two-player games won
by each (one by default). Without it the estimate diverges for a participant who always finishes
last (or first) in the data or in a bootstrap sample; being extra games of the same model, it
keeps the fit a (penalised) maximum-likelihood estimate, unique and order-free. Its pull towards
equal strengths is small next to a real tournament's games (10,080 per participant in the study's).

Scale: Elo-like, ``rating = 1500 + 400 log10 w`` with the log-strengths centred on the
participants' mean. Under Plackett-Luce, A finishes ahead of B (whoever else is at the table)
with probability ``w_A / (w_A + w_B) = 1 / (1 + 10 ** ((R_B - R_A) / 400))``: a lead of 200
points means finishing ahead 76% of the time, 400 points 91%.

Intervals: a two-stage percentile bootstrap (Davison & Hinkley 1997, section 3.8): draw the deals
with replacement, then, within each drawn deal, its games with replacement, and refit. Games on
the same deal share the cards, so the deal is the unit of card luck; the second stage measures the
seatings' and the agents' own randomness, the only variation left when a tournament has a single
deal (its intervals then say nothing about card luck: play more deals to measure it). The games
are put in a canonical order before resampling, so the intervals, like the ratings, do not depend
on the order in which the games are given. Each bootstrap sample refits every rating at once, so
differences of ratings taken within the samples are paired on the deals
(:func:`bootstrap_rating_samples`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

ELO_BASE = 1500.0
ELO_SCALE = 400.0 / math.log(10.0)  # rating points per unit of natural log-strength


def _virtual_games(n: int, prior_games: int) -> list[tuple[int, int]]:
    return [(i, j) for i in range(n) for j in range(n) if i != j] * prior_games


def plackett_luce(rankings: Sequence[Sequence[int]], n: int, prior_games: int = 1,
                  start: np.ndarray | None = None) -> np.ndarray:
    """Log-strengths (centred on their mean) of ``n`` participants from finishing orders.

    Each ranking lists participant indices from first to last place; see the module docstring
    for the prior that ``prior_games`` sets (0 for the plain maximum-likelihood estimate, which
    needs every participant to both win and lose somewhere). ``start``, log-strengths to iterate
    from, only saves time: the fit converges to the same optimum (to 1e-10) from anywhere.
    """
    if n < 2:
        raise ValueError(f"a rating needs at least 2 participants, got {n}")
    if prior_games < 0:
        raise ValueError(f"prior_games must be >= 0, got {prior_games}")
    data = [tuple(int(p) for p in r) for r in rankings]
    for r in data:
        if len(r) < 2 or len(set(r)) != len(r) or min(r) < 0 or max(r) >= n:
            raise ValueError(f"a ranking must list at least 2 distinct participants in 0..{n - 1}, got {r}")
    data += _virtual_games(n, prior_games)
    table = _Distinct(data)
    return table.fit(table.counts(table.ids(data)), n, start)


class _Distinct:
    """The distinct rankings of a data set, grouped by length: the I-LSR fit of any multiset of
    them (their counts, as a bootstrap sample gives) costs the same however many games it holds."""

    def __init__(self, rankings: Sequence[tuple[int, ...]]) -> None:
        distinct = sorted(set(rankings), key=lambda r: (len(r), r))
        self.index = {r: i for i, r in enumerate(distinct)}  # ids run through the groups in order
        self.groups = [np.array([r for r in distinct if len(r) == k], dtype=np.int64)
                       for k in sorted({len(r) for r in distinct})]

    def ids(self, rankings: Sequence[tuple[int, ...]]) -> np.ndarray:
        return np.array([self.index[r] for r in rankings], dtype=np.int64)

    def counts(self, ids: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(ids, weights=weights, minlength=len(self.index)).astype(float)

    def fit(self, counts: np.ndarray, n: int, start: np.ndarray | None = None, max_iter: int = 1000,
            tol: float = 1e-10) -> np.ndarray:
        """Centred log-strengths: I-LSR (Maystre & Grossglauser 2015) as choix's ``ilsr_rankings``
        computes it, each distinct ranking weighted by its count, with choix's stopping rule (the
        L1 change of the centred parameters at most ``tol`` per participant)."""
        from choix.utils import exp_transform, log_transform, statdist

        params, previous = start, None
        for _ in range(max_iter):
            weights = np.ones(n) if params is None else exp_transform(params)
            chain = np.zeros(n * n)
            first = 0
            for rows in self.groups:
                count = counts[first:first + len(rows)]
                first += len(rows)
                rest = weights[rows].sum(axis=1)  # the strengths of the places still open
                for i in range(rows.shape[1] - 1):  # place i won against every later one, at rate 1 / rest
                    for j in range(i + 1, rows.shape[1]):
                        chain += np.bincount(rows[:, j] * n + rows[:, i], weights=count / rest, minlength=n * n)
                    rest = rest - weights[rows[:, i]]
            generator = chain.reshape(n, n)
            params = log_transform(statdist(generator - np.diag(generator.sum(axis=1))))
            centred = params - params.mean()
            if previous is not None and np.abs(previous - centred).sum() <= tol * n:
                return centred
            previous = centred
        raise RuntimeError(f"the Plackett-Luce fit did not converge after {max_iter} iterations")


def elo(theta: np.ndarray) -> np.ndarray:
    """Centred log-strengths on the Elo-like scale (1500 = the participants' mean)."""
    return ELO_BASE + ELO_SCALE * (np.asarray(theta) - np.mean(theta))


def bootstrap_ratings(rankings: Sequence[Sequence[int]], deals: Sequence[int], n: int, resamples: int = 200,
                      seed: int = 0, level: float = 0.95, prior_games: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) percentile intervals of the Elo-like ratings: deals, then games within a deal, resampled
    (the percentiles of :func:`bootstrap_rating_samples`, which says what the arguments are)."""
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    samples = bootstrap_rating_samples(rankings, deals, n, resamples, seed, prior_games)
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(samples, [tail, 100 - tail], axis=0)
    return low, high


def bootstrap_rating_samples(rankings: Sequence[Sequence[int]], deals: Sequence[int], n: int, resamples: int = 200,
                             seed: int = 0, prior_games: int = 1) -> np.ndarray:
    """The Elo-like ratings refitted on ``resamples`` two-stage bootstrap samples (resamples x n):
    deals with replacement, then games within each drawn deal. A row holds every participant's
    rating on the same sample, so differences of ratings taken row by row are paired on the deals.

    A game is one ranking, or a tuple of rankings (a team game's two-player rankings across its
    tied places), which are resampled together.

    ``deals[i]`` is the deal that game ``i`` was played on. The generator is seeded by ``seed``;
    the games are sorted first, so the result depends only on which games were played, not on the
    order they are listed in.
    """
    if len(rankings) != len(deals):
        raise ValueError(f"{len(rankings)} rankings but {len(deals)} deal indices")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    by_deal: dict[int, list[tuple[tuple[int, ...], ...]]] = {}
    for r, d in zip(rankings, deals, strict=True):
        by_deal.setdefault(int(d), []).append(_game(r))
    groups = [sorted(by_deal[d]) for d in sorted(by_deal)]
    virtual = _virtual_games(n, prior_games)
    table = _Distinct([x for games in groups for g in games for x in g] + virtual)
    prior = table.counts(table.ids(virtual))
    # per deal: the ids of its games' rankings, and the game (its index in the deal) of each
    ids = [table.ids([x for g in games for x in g]) for games in groups]
    owner = [np.array([i for i, g in enumerate(games) for _ in g], dtype=np.int64) for games in groups]
    start = table.fit(prior + sum(table.counts(x) for x in ids), n)
    rng = np.random.default_rng(seed)
    samples = np.empty((resamples, n))
    for b in range(resamples):
        counts = prior.copy()
        for g in rng.integers(len(groups), size=len(groups)):
            drawn = np.bincount(rng.integers(len(groups[g]), size=len(groups[g])), minlength=len(groups[g]))
            counts += table.counts(ids[g], drawn[owner[g]].astype(float))
        samples[b] = elo(table.fit(counts, n, start=start))
    return samples


def bradley_terry(wins: np.ndarray, prior_games: int = 1, start: np.ndarray | None = None) -> np.ndarray:
    """Log-strengths (centred) from two-player games given as counts, ``wins[i, j]`` = games ``i``
    won against ``j``: the optimum of :func:`plackett_luce` on the same games as two-player
    rankings (same model, same prior), computed from the counts (choix's dense I-LSR), so its
    cost does not grow with the number of games."""
    import choix

    w = np.asarray(wins, dtype=float)
    n = w.shape[0]
    if w.shape != (n, n) or n < 2 or (w < 0).any():
        raise ValueError(f"wins must be a square matrix of counts >= 0 for at least 2 participants, got {w.shape}")
    if prior_games < 0:
        raise ValueError(f"prior_games must be >= 0, got {prior_games}")
    w = w * (1 - np.eye(n)) + prior_games * (1 - np.eye(n))
    theta = choix.ilsr_pairwise_dense(w, initial_params=start, max_iter=1000, tol=1e-10)
    return theta - theta.mean()


def bootstrap_pairs(winners: Sequence[int], losers: Sequence[int], deals: Sequence[int], n: int,
                    resamples: int = 200, seed: int = 0, level: float = 0.95,
                    prior_games: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """:func:`bootstrap_ratings` for two-player games (winner, loser, deal), through
    :func:`bradley_terry`: the same two-stage resampling, with the games sorted first."""
    if not len(winners) == len(losers) == len(deals):
        raise ValueError(f"{len(winners)} winners, {len(losers)} losers, {len(deals)} deal indices")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    games = np.array(sorted(zip((int(d) for d in deals), (int(w) for w in winners), (int(x) for x in losers),
                                strict=True)), dtype=np.int64).reshape(-1, 3)
    _, first, counts = np.unique(games[:, 0], return_index=True, return_counts=True)
    full = np.zeros((n, n))
    np.add.at(full, (games[:, 1], games[:, 2]), 1)
    start = bradley_terry(full, prior_games)
    rng = np.random.default_rng(seed)
    samples = np.empty((resamples, n))
    for b in range(resamples):
        picked = rng.integers(len(first), size=len(first))
        idx = np.concatenate([first[g] + rng.integers(counts[g], size=counts[g]) for g in picked])
        m = np.zeros((n, n))
        np.add.at(m, (games[idx, 1], games[idx, 2]), 1)
        samples[b] = elo(bradley_terry(m, prior_games, start=start))
    tail = 100 * (1 - level) / 2
    low, high = np.percentile(samples, [tail, 100 - tail], axis=0)
    return low, high


def _game(r: Sequence[int] | Sequence[Sequence[int]]) -> tuple[tuple[int, ...], ...]:
    """A game as a tuple of rankings (a plain ranking is a game of one; an empty one, a game that
    ranked nobody, such as a deal nobody won, has none)."""
    if not len(r):
        return ()
    if isinstance(r[0], (tuple, list)):
        return tuple(tuple(int(p) for p in x) for x in r)  # type: ignore[union-attr]
    return (tuple(int(p) for p in r),)  # type: ignore[arg-type]


__all__ = ["plackett_luce", "bradley_terry", "bootstrap_pairs", "elo", "bootstrap_ratings",
           "bootstrap_rating_samples", "ELO_BASE", "ELO_SCALE"]
