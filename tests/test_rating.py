"""Tournament ratings: a Plackett-Luce fit on all games at once, independent of their order."""

import random

import numpy as np
import pytest

from climbrl.evaluate.rating import bootstrap_ratings, elo, plackett_luce
from climbrl.evaluate.tournament import schedule, summarize

TRUE = np.array([-1.2, -0.6, 0.0, 0.2, 0.5, 1.1])  # log-strengths, centred


def _pl_game(rng: np.random.Generator, players, theta) -> list[int]:
    """A Plackett-Luce finishing order: descending log-strength + Gumbel noise (the Gumbel-max trick)."""
    keys = np.asarray(theta)[list(players)] + rng.gumbel(size=len(players))
    return [players[i] for i in np.argsort(-keys)]


def _records(theta, deals: int, seed: int = 0) -> list[list]:
    """Game records (finishing order, places, returns, seats, deal) of a balanced schedule played by the model."""
    rng = np.random.default_rng(seed)
    rec = []
    for seats, d in schedule(len(theta), deals):
        order = _pl_game(rng, list(seats), theta)
        rets = [1.0 if p == order[0] else -1 / 3 for p in seats]
        rec.append(order + [0, 1, 2, 3] + rets + list(seats) + [d])
    return rec


def test_shuffling_the_games_leaves_every_rating_unchanged() -> None:
    names = [f"p{i}" for i in range(len(TRUE))]
    rec = _records(TRUE, deals=72)  # 15 groups x 72 deals = 1,080 games
    base = summarize(names, rec, resamples=10, rules="paper")
    shuffled = rec[:]
    random.Random(1).shuffle(shuffled)
    for other in (shuffled, rec[::-1]):
        res = summarize(names, other, resamples=10, rules="paper")
        # tolerance: none at all, the records are put in a canonical order before anything is summed
        assert res == base
    # the fit itself, without that canonical order, agrees to 1e-6 (it is a maximum-likelihood estimate)
    orders = [r[:4] for r in rec]
    a = plackett_luce(orders, len(TRUE))
    b = plackett_luce([r[:4] for r in shuffled], len(TRUE))
    assert np.max(np.abs(elo(a) - elo(b))) < 1e-6


def test_plackett_luce_recovers_known_strengths() -> None:
    rec = _records(TRUE, deals=1200)  # 18,000 games, 12,000 per participant
    orders = [r[:4] for r in rec]
    theta = plackett_luce(orders, len(TRUE))
    assert list(np.argsort(theta)) == list(np.argsort(TRUE))
    assert np.max(np.abs(theta - TRUE)) < 0.05
    # the Elo-like scale means what it says: P(A ahead of B) = 1 / (1 + 10^((R_B - R_A) / 400))
    r = elo(theta)
    for a, b in ((0, 5), (2, 3), (4, 1)):
        met = [o for o in orders if a in o and b in o]
        ahead = np.mean([o.index(a) < o.index(b) for o in met])
        assert ahead == pytest.approx(1 / (1 + 10 ** ((r[b] - r[a]) / 400)), abs=0.02)


def test_bootstrap_intervals_cover_the_true_ratings() -> None:
    rec = _records(TRUE, deals=96)  # 1,440 games
    orders, deals = [r[:4] for r in rec], [r[12] for r in rec]
    est = elo(plackett_luce(orders, len(TRUE)))
    low, high = bootstrap_ratings(orders, deals, len(TRUE), resamples=40, seed=0)
    assert np.all(low < est) and np.all(est < high)
    assert np.all(high - low > 10) and np.all(high - low < 300)  # 1,440 games: tens of points, not zero
    truth = elo(TRUE)
    assert np.sum((low <= truth) & (truth <= high)) >= len(TRUE) - 1  # 95% intervals
    # one deal: the second stage (games within the deal) still measures the play's randomness
    one = [i for i, d in enumerate(deals) if d == 0]
    lo1, hi1 = bootstrap_ratings([orders[i] for i in one], [0] * len(one), len(TRUE), resamples=20)
    assert np.all(hi1 - lo1 > 0)
    # the bootstrap, too, depends only on which games were played
    perm = np.random.default_rng(3).permutation(len(orders))
    lo2, hi2 = bootstrap_ratings([orders[i] for i in perm], [deals[i] for i in perm], len(TRUE), resamples=40)
    assert np.array_equal(lo2, low) and np.array_equal(hi2, high)


def test_a_participant_who_always_loses_gets_a_finite_lowest_rating() -> None:
    orders = [[0, 1, 2, 3], [1, 2, 0, 3], [2, 0, 1, 3]] * 30
    theta = plackett_luce(orders, 4)
    assert np.all(np.isfinite(theta)) and np.argmin(theta) == 3
    assert theta[3] < theta[:3].min() - 2  # far below: strength under e^-2 of the others'


def test_bad_rating_input_is_rejected() -> None:
    with pytest.raises(ValueError, match="0..3"):
        plackett_luce([[0, 1, 2, 4]], 4)
    with pytest.raises(ValueError, match="distinct"):
        plackett_luce([[0, 0, 1, 2]], 4)
    with pytest.raises(ValueError, match="deal indices"):
        bootstrap_ratings([[0, 1, 2, 3]], [0, 1], 4)
    with pytest.raises(ValueError, match="4k \\+ 1 fields"):
        summarize(["a", "b", "c", "d"], [[0, 1, 2, 3, 0, 1, 2, 3, 1.0, 0, 0, 0, 0, 1, 2, 3]])


def test_the_fit_is_choix_ilsr_step_for_step_on_counts() -> None:
    """The fit runs I-LSR on the distinct rankings with their counts (a bootstrap refit costs the
    same however many games there are); it is choix's ``ilsr_rankings`` on the games themselves,
    full orders and a team game's two-player rankings alike."""
    import choix

    from climbrl.evaluate.rating import _virtual_games

    orders = [tuple(r[:4]) for r in _records(TRUE, deals=24)]
    pairs = [(0, 1), (2, 0), (3, 1), (1, 2), (4, 5), (5, 3)] * 7
    for data, n in ((orders, len(TRUE)), (orders[:100] + pairs, len(TRUE)), (pairs, len(TRUE))):
        theirs = choix.ilsr_rankings(n, list(data) + _virtual_games(n, 1), max_iter=1000, tol=1e-10)
        assert np.max(np.abs(plackett_luce(data, n) - (theirs - theirs.mean()))) < 1e-12
