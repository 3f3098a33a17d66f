"""Round-robin tournaments of any game: who beats whom, and in what cycles.

Schedule (:func:`schedule`): with ``n`` seats (Big 2: 4, Dou Dizhu: 3), every group of ``n``
participants plays every deal once, in one of the group's ``n!`` seatings (Big 2: 24, Dou
Dizhu: 6; that is ``(n-1)!`` cyclic orders x ``n`` rotations). The seating of group ``g`` on
deal ``d`` is the group's own base seating with the seats then permuted by the ``(d mod n!)``-th
permutation of the seats:

* over every block of ``n!`` consecutive deals each group plays each of its ``n!`` seatings once,
  so every participant meets every other equally often, in each relative position equally
  often, and sits in every seat equally often: the seat bias cancels, as in a schedule that
  plays every deal in every seating. The study plays whole blocks (120 deals = 5 x 24);
* within one deal every participant holds every seat's cards equally often, across its groups:
  the base seatings are chosen, group by group, to even out each participant's seats (exactly
  even when the number of groups a participant is in, ``C(P - 1, n - 1)`` of ``P``
  participants, is a multiple of ``n``: the study's 10 participants, 84 groups each, hold every
  seat of every deal 21 times; within one otherwise), and a permutation of the seats shared by
  all groups keeps that. So a deal's card luck cancels in every participant's score, deal by
  deal, as duplicate play would;
* a game costs the same as before and there are ``n!`` times fewer games per deal: 10
  participants on 120 deals play 25,200 games, where 4 deals in all 24 seatings played 20,160.
  The deals are the unit of card luck, and the intervals below are clustered on them: 120 deals
  give 120 clusters, 4 gave 4.

Rejected: playing each deal in the 4 rotations of one cyclic order (4 games per group and deal:
84,000 games for 100 deals, four times the cost), and one seating per deal shared by every group
(a participant would hold the same seat's cards in all its games of a deal, and the deal's luck
would go whole into its score). In a team game the seat decides the role (Dou Dizhu with a fixed
landlord), so over a block every participant also plays every role against every other.

Places: Big 2 ranks the seats by its finishing order (first out, then by cards left); a team
game puts the winning side first, tied, and the others after it, tied (nobody first when nobody
won). Rating: a Plackett-Luce maximum-likelihood fit on all games at once (a full order is one
ranking; tied places give one two-player ranking per pair across them), so the order in which
the games are read does not matter, on an Elo-like scale, with 95% bootstrap intervals over
deals and games (:mod:`climbrl.evaluate.rating`); the leaderboard sorts by the point estimate.

Every interval is clustered on the deals, since the games of a deal share its cards:

* win rates and the pairwise matrix (how often A finished strictly ahead of B) carry
  :func:`~climbrl.evaluate.stats.clustered_rate_interval` over the deals (t on deals - 1 df);
* the ratings' bootstrap draws deals, then games within them; the rating differences are taken
  within each bootstrap sample (paired on the deals): 95% percentile interval, and a two-sided
  p-value from the bootstrap standard error (normal approximation);
* verdicts are Holm-adjusted (:func:`~climbrl.evaluate.stats.holm`, family-wise 5%) over every
  pair: a pair is *separated* when A finished ahead of B, in the games where they were not tied,
  significantly more often than half (the clustered t test,
  :func:`~climbrl.evaluate.stats.clustered_rate_p_value`); a participant is *above* another when
  their rating difference is Holm-significant and its percentile interval excludes 0.
  Counter-chains are the cycles of the pairwise matrix (A ahead of B, B ahead of C, C ahead of
  A, each more often than behind), *significant* when all three of its pairs are: a chain is
  wrongly called significant only if one of its pairs is, so every chain claim together is held
  at 5% too, however many chains were looked at.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from climbrl.agents import Agent
from climbrl.agents.runner import deal_seeds, play_games
from climbrl.config import TOURNAMENT_DEALS
from climbrl.evaluate.match import game_name, map_tasks
from climbrl.evaluate.stats import clustered_rate_interval, clustered_rate_p_value, holm
from climbrl.games.registry import make_game
from climbrl.learn.specs import make_agent


def _base_seatings(n_participants: int, seats: int) -> list[tuple[int, ...]]:
    """Every group's base seating (the seat of each member), chosen group by group to keep each
    participant's count in each seat as even as possible (the fewest games in the seats given)."""
    count = np.zeros((n_participants, seats), dtype=np.int64)
    base = []
    for group in itertools.combinations(range(n_participants), seats):
        seat_of = min(itertools.permutations(range(seats)),
                      key=lambda pm: sum(count[p, s] for p, s in zip(group, pm, strict=True)))
        count[group, seat_of] += 1
        base.append(seat_of)
    return base


def schedule(n_participants: int, deals: int, seats: int = 4) -> list[tuple[tuple[int, ...], int]]:
    """(participant in seat 0..seats-1, deal index) for every game of the tournament: every group
    plays every deal once, in its base seating with the seats permuted by the deal (module
    docstring): balanced over every ``seats!`` deals, and within every deal by seat."""
    permutations = list(itertools.permutations(range(seats)))
    groups = list(itertools.combinations(range(n_participants), seats))
    base = _base_seatings(n_participants, seats)
    games = []
    for group, seat_of in zip(groups, base, strict=True):
        for d in range(deals):
            perm = permutations[d % len(permutations)]
            seated = [0] * seats
            for member, s in enumerate(seat_of):
                seated[perm[s]] = group[member]
            games.append((tuple(seated), d))
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


def run_tournament(participants: Sequence[str], rules: str = "", deals: int = TOURNAMENT_DEALS, seed: int = 0,
                   workers: int = 1, chunk_games: int = 240, resamples: int = 200,
                   game: str = "big2") -> dict[str, Any]:
    """Every participant (an agent spec, or ``label=spec``) in the balanced schedule of ``game``
    under ``rules`` (default: its default preset) on ``deals`` deals (a multiple of the seatings,
    ``seats!``, balances the seats and relative positions: :func:`schedule`); ``resamples``
    bootstrap refits (seeded by ``seed``) give the ratings' intervals."""
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
    deal_list = deal_seeds(seed, deals, "tournament")
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
    """Leaderboard, pairwise matrix, rating differences and counter-chains of game records, every
    interval clustered on the deals and every verdict Holm-adjusted (module docstring).

    A record of a game of ``k`` seats is ``participants from first to last place (k) + their
    places (k; equal places are ties) + returns by seat (k) + participants by seat (k) + deal
    index``. The records are sorted first, so every number, down to the last bit of the sums,
    depends only on which games were played, not on their order.
    """
    from climbrl.evaluate.rating import bootstrap_rating_samples, elo, plackett_luce

    n = len(specs)
    k = (len(records[0]) - 1) // 4 if records else 0
    if not records or any(len(r) != 4 * k + 1 or k < 2 for r in records):
        raise ValueError("game records of k seats have 4k + 1 fields: participants in place order, places, "
                         "returns, participants by seat (k each) and the deal")
    records = sorted(tuple(r) for r in records)
    games = [_rankings(r[:k], r[k:2 * k]) for r in records]
    theta = plackett_luce([x for g in games for x in g], n)
    rating = elo(theta)
    samples = bootstrap_rating_samples(games, [r[-1] for r in records], n, resamples=resamples, seed=bootstrap_seed)
    low, high = np.percentile(samples, [2.5, 97.5], axis=0)
    t = _Tally(records, n, k)
    board = []
    for p in range(n):
        if not t.played[p].any():
            raise ValueError(f"{specs[p]} played no game")
        has = t.played[p] > 0
        rate, lo, hi = clustered_rate_interval(t.wins[p, has], t.played[p, has])
        board.append({"participant": specs[p], "rating": float(rating[p]), "rating_low": float(low[p]),
                      "rating_high": float(high[p]), "log_strength": float(theta[p]),
                      "games": int(t.played[p].sum()), "wins": int(t.wins[p].sum()),
                      "deals": int(has.sum()), "win_rate": rate, "win_rate_low": lo, "win_rate_high": hi,
                      "mean_reward": t.reward[p] / t.played[p].sum()})
    board.sort(key=lambda r: (-r["rating"], r["participant"]))
    pairwise = pairwise_table(specs, t.ahead, t.met)
    order = [specs.index(r["participant"]) for r in board]
    method = {"model": "plackett-luce (I-LSR as choix's), one virtual 2-player game won by each of every pair",
              "scale": "1500 + 400 log10(strength), 1500 = participants' mean", "interval": "95% percentile",
              "bootstrap": "deals, then games within each deal, with replacement", "resamples": resamples,
              "bootstrap_seed": bootstrap_seed,
              "differences": "paired within each bootstrap sample; p-value from the bootstrap standard error",
              "verdicts": "Holm over every pair (family-wise 5%): rating differences and the pairwise matrix "
                          "(clustered t test on the deals)"}
    return {"deals": t.played.shape[1], **meta, "participants": specs, "games": len(records),
            "rating_method": method, "leaderboard": board, "pairwise": pairwise,
            "rating_differences": _rating_differences(specs, order, rating, samples),
            "counter_chains": counter_chains(specs, pairwise)}


class _Tally:
    """Per participant (and pair) and deal: games, wins, finishes ahead; rewards in all."""

    def __init__(self, records: Sequence[Sequence[Any]], n: int, k: int) -> None:
        deals = sorted({r[-1] for r in records})
        at = {d: i for i, d in enumerate(deals)}
        self.played = np.zeros((n, len(deals)), dtype=np.int64)
        self.wins = np.zeros((n, len(deals)), dtype=np.int64)
        self.ahead = np.zeros((n, n, len(deals)), dtype=np.int64)  # a finished strictly ahead of b
        self.met = np.zeros((n, n, len(deals)), dtype=np.int64)
        self.reward = np.zeros(n)
        for rec in records:
            order, place, rets, seats, d = rec[:k], rec[k:2 * k], rec[2 * k:3 * k], rec[3 * k:4 * k], at[rec[-1]]
            for a, pl in zip(order, place, strict=True):
                self.wins[a, d] += pl == 0
            for s, p in enumerate(seats):
                self.played[p, d] += 1
                self.reward[p] += rets[s]
            for i, a in enumerate(order):
                for j in range(i + 1, k):
                    b = order[j]
                    if place[i] < place[j]:
                        self.ahead[a, b, d] += 1
                    elif place[j] < place[i]:
                        self.ahead[b, a, d] += 1
                    self.met[a, b, d] += 1
                    self.met[b, a, d] += 1


def pairwise_table(specs: Sequence[str], ahead: np.ndarray, met: np.ndarray) -> dict[str, dict[str, Any]]:
    """``A>B``: how often A finished strictly ahead of B, clustered on the deals, with the
    Holm-adjusted verdict of the pair's test (the games where they were not tied).

    ``ahead[a, b, d]``: the games of deal ``d`` where ``a`` finished strictly ahead of ``b``;
    ``met[a, b, d]``: the games of deal ``d`` where they met (Dou Dizhu's round robin passes its
    wins and games: every game there has a winner)."""
    n = len(specs)
    pairs = [(a, b) for a in range(n) for b in range(a + 1, n) if met[a, b].any()]
    p_values = []
    for a, b in pairs:
        decisive = ahead[a, b] + ahead[b, a]
        has = decisive > 0
        p_values.append(clustered_rate_p_value(ahead[a, b, has], decisive[has]) if has.any() else 1.0)
    rejected = dict(zip(pairs, holm(p_values), strict=True))
    p_of = dict(zip(pairs, p_values, strict=True))
    out = {}
    for a in range(n):
        for b in range(n):
            pair = (min(a, b), max(a, b))
            if a == b or pair not in p_of:
                continue
            has = met[a, b] > 0
            rate, lo, hi = clustered_rate_interval(ahead[a, b, has], met[a, b, has])
            out[f"{specs[a]}>{specs[b]}"] = {
                "rate": rate, "low": lo, "high": hi, "games": int(met[a, b].sum()), "p_value": p_of[pair],
                "significant": rejected[pair] and int(ahead[a, b].sum()) > int(ahead[b, a].sum())}
    return out


def counter_chains(specs: Sequence[str], pairwise: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The cycles A > B > C > A of a pairwise matrix (``"A>B"`` -> its ``rate``, ``p_value`` and
    Holm-adjusted ``significant``; each edge ahead more often than behind), each once, starting at
    its first participant; significant when every edge is (a chain is wrongly called significant
    only if one of its edges is, so the chains together stay within the pairs' family-wise level)."""
    chains = []
    for a, b, c in itertools.permutations(range(len(specs)), 3):
        keys = [f"{specs[x]}>{specs[y]}" for x, y in ((a, b), (b, c), (c, a))]
        back = [f"{specs[y]}>{specs[x]}" for x, y in ((a, b), (b, c), (c, a))]
        if a < b and a < c and all(k in pairwise for k in keys) and \
                all(pairwise[k]["rate"] > pairwise[r]["rate"] for k, r in zip(keys, back, strict=True)):
            edges = [pairwise[k] for k in keys]
            chains.append({"cycle": [specs[a], specs[b], specs[c]], "rates": [e["rate"] for e in edges],
                           "p_values": [e["p_value"] for e in edges],
                           "significant": all(e["significant"] for e in edges)})
    return chains


def _rating_differences(specs: list[str], order: list[int], rating: np.ndarray,
                        samples: np.ndarray) -> list[dict[str, Any]]:
    """Every pair's rating difference (the higher-rated first, in leaderboard ``order``): paired
    bootstrap interval, p-value and Holm-adjusted verdict (module docstring)."""
    from scipy import stats

    rows = []
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            diff = samples[:, a] - samples[:, b]
            est = float(rating[a] - rating[b])
            se = float(diff.std(ddof=1)) if len(diff) > 1 else 0.0
            lo, hi = np.percentile(diff, [2.5, 97.5])
            rows.append({"higher": specs[a], "lower": specs[b], "difference": est, "low": float(lo),
                         "high": float(hi), "p_value": float(2 * stats.norm.sf(abs(est) / se)) if se > 0 else 1.0})
    for row, rejected in zip(rows, holm([r["p_value"] for r in rows]), strict=True):
        row["significant"] = rejected and row["low"] > 0
    return rows


def _relation(res: dict[str, Any]) -> Any:
    """``rel(a, b)``: "above", "below" or "level" (not separated), by the Holm-adjusted rating
    differences alone."""
    above = {(d["higher"], d["lower"]) for d in res["rating_differences"] if d["significant"]}
    return lambda a, b: "above" if (a, b) in above else "below" if (b, a) in above else "level"


def _join(names: Sequence[str]) -> str:
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def separations(res: dict[str, Any]) -> list[str]:
    """One line per participant, in leaderboard order: whom it is above and whom it is not
    separated from, by the Holm-adjusted rating differences (nothing else is claimed)."""
    rel = _relation(res)
    names = [r["participant"] for r in res["leaderboard"]]
    lines = []
    for a in names:
        over = [b for b in names if rel(a, b) == "above"]
        level = [b for b in names if b != a and rel(a, b) == "level"]
        lines.append(f"{a}: above {', '.join(over) or 'nobody'}; not separated from {', '.join(level) or 'anybody'}")
    return lines


def group_verdict(res: dict[str, Any], group: Sequence[str]) -> str:
    """How the members of ``group`` (the learners) stand against the other participants, in one
    sentence that says only what the Holm-adjusted rating differences support: the others that
    every member is above, then, member by member, where it stands against the rest."""
    rel = _relation(res)
    names = [r["participant"] for r in res["leaderboard"]]
    members = [m for m in names if m in group]
    others = [o for o in names if o not in group]
    if not members or not others:
        raise ValueError("a group verdict needs members of the group and others in the tournament")
    common = [o for o in others if all(rel(m, o) == "above" for m in members)]
    clauses = [f"all are above {_join(common)}" if common else f"none of {_join(others)} is below them all"]
    for m in members:
        words = [f"{label} {_join(xs)}" for kind, label in (("above", "also above" if common else "above"),
                                                           ("level", "not separated from"), ("below", "below"))
                 if (xs := [o for o in others if o not in common and rel(m, o) == kind])]
        if words:
            clauses.append(f"{m} is " + " and is ".join(words))
    return (f"By the rating differences (paired bootstrap over the {res['deals']} deals, Holm-adjusted over all "
            f"{len(res['rating_differences'])} pairs), of {_join(members)}: " + "; ".join(clauses) + ".")


def _rankings(order: Sequence[int], place: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """One game's rankings for the Plackett-Luce fit: the whole order when the places are all
    distinct, else one two-player ranking for each pair in different places (ties give none)."""
    if len(set(place)) == len(place):
        return (tuple(order),)
    return tuple((order[i], order[j]) for i in range(len(order)) for j in range(i + 1, len(order))
                 if place[i] < place[j])


def format_leaderboard(res: dict[str, Any]) -> str:
    lines = [f"{res['games']} games on {res['deals']} deals, {len(res['participants'])} participants, "
             f"{res.get('game', 'big2')} rules {res['rules']}",
             f"{'participant':<28} {'rating':>6} {'95% CI':>12} {'win rate':>9} {'95% CI':>15} {'reward':>7}"]
    if res["leaderboard"] and "rating" not in res["leaderboard"][0]:
        raise ValueError("this tournament result predates the Plackett-Luce ratings (it has OpenSkill's); "
                         "rerun the tournament")
    if "rating_differences" not in res:
        raise ValueError("this tournament result predates the deal-clustered intervals and Holm's verdicts; "
                         "rerun the tournament")
    for r in res["leaderboard"]:
        rci = f"[{r['rating_low']:.0f}, {r['rating_high']:.0f}]"
        ci = f"[{r['win_rate_low']:.3f}, {r['win_rate_high']:.3f}]"
        lines.append(f"{r['participant']:<28} {r['rating']:6.0f} {rci:>12} "
                     f"{r['win_rate']:9.3f} {ci} {r['mean_reward']:7.3f}")
    lines.append(f"rating differences (bootstrap paired on the deals; Holm over all {len(res['rating_differences'])} "
                 "pairs):")
    lines += ["  " + line for line in separations(res)]
    lines += chain_lines(res["counter_chains"])
    return "\n".join(lines)


def chain_lines(chains: Sequence[dict[str, Any]]) -> list[str]:
    """One line per counter-chain of :func:`counter_chains` (its edges' rates, p-values and
    verdict), or the line that says there is none."""
    lines = []
    for c in chains:
        mark = "significant" if c["significant"] else "not significant"
        rates, ps = (", ".join(f"{x:{spec}}" for x in c[key]) for key, spec in (("rates", ".2f"), ("p_values", ".2g")))
        lines.append(f"counter-chain: {' > '.join(c['cycle'] + [c['cycle'][0]])} ({rates}; p {ps}; {mark} after Holm)")
    return lines or ["no counter-chains: the pairwise results are transitive"]


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


__all__ = ["run_tournament", "schedule", "summarize", "separations", "group_verdict", "format_leaderboard",
           "plot_pairwise", "pairwise_table", "counter_chains", "chain_lines"]
