"""Dou Dizhu as the field reports it: one side against the other, by role (DouZero's protocol).

Protocol (Zha et al. 2021, DouZero, section 5.1): on every deal, side A plays the landlord
against two copies of side B as peasants, then B plays the landlord against two copies of A, on
the same cards (game ``2k`` and ``2k + 1`` of deal ``k``: the landlord seat holds the same hand
in both). The card luck of a deal then falls on both sides equally, and the per-deal pair of
games is the unit of every paired number below.

Roles come from the seats, so the rules must fix the landlord (``douzero``, ``rlcard``; the
seat is ``rules.landlord``). Under an auction the role would depend on the bids, not on the
protocol, and those rules are refused.

Numbers, per side (A, B) and role (``landlord``, ``peasants``, and ``both``: every game of the
side):

* WP: games won / games played. Per role, one game per deal, so the games are independent and
  the 95% interval is Wilson's; ``both`` pairs two games on each deal, so its interval is
  clustered on the deals (Student t on the per-deal values, wins / 2, with deals - 1 degrees of
  freedom, clipped to [0, 1]; Wilson's on the pooled games when every deal scored alike, so that
  it is never zero-width: :func:`climbrl.evaluate.stats.clustered_rate_interval`).
* ADP, DouZero's *average difference in points*: per game, the points of the side minus the
  points of the other side, with base point 1 doubled per bomb or rocket. A side scores
  +2^bombs when it wins and -2^bombs when it loses, so the difference is +/-2 x 2^bombs; it is
  exactly what DouZero's ``evaluation/simulation.py`` prints (the landlord's score
  +/-2 x 2^bombs; the peasants' summed score, printed as 2 x one peasant's). Here it is read
  from the engine's ``state.score()``: ``2 x pay`` to the winning side, ``-2 x pay`` to the
  losing one, where ``pay = stake x 2^bombs`` (x 2 for a spring under rules that double it;
  the ``douzero`` preset does not, as DouZero's game does not). So ADP / 2 is the signed pay,
  and ADP equals the landlord's zero-sum return of the ``score`` rewards. Interval: Student t
  on the per-deal values (deals - 1 degrees of freedom); none (``null``) when the values show no
  spread, e.g. every deal won without a bomb (:func:`climbrl.evaluate.stats.mean_summary`).
* Paired (A's view, one value per deal): how often A won both games of a deal, split them, or
  lost both, and A's net points over the two games, with its t interval (as ADP's). B's numbers are
  A's mirrored (B as landlord is A as peasants); both are listed, as DouZero prints them.

Seat streams: the random choices of the seat ``s`` in both games of deal ``d`` come from one
stream, ``seat_seed(seed, d, landlord seat, s)``: when A and B are the same agent the two games
are the same game, random agents included, and the paired difference is exactly zero. Every
number is the same for any worker count (the runner's determinism, :mod:`climbrl.agents.runner`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from climbrl.agents.runner import deal_seeds, play_games, seat_seed
from climbrl.evaluate.match import CHUNK_DEALS, game_name, map_tasks
from climbrl.evaluate.stats import clustered_rate_interval, format_interval, mean_interval, wilson_interval
from climbrl.games.registry import make_game
from climbrl.learn.specs import make_agent

SIDES = ("A", "B")
ROLES = ("landlord", "peasants", "both")


class DuelGame(NamedTuple):
    """One finished game of a duel (a tuple, so records sort and pickle as plain data)."""

    deal: int
    """The deal's index in the match."""
    landlord_side: int
    """0 when side A held the landlord seat, 1 when side B did."""
    landlord_won: bool
    pay: int
    """``state.score()["pay"]``: stake x 2^bombs (x 2 for a spring when the rules double it)."""
    bombs: int
    spring: bool
    length: int
    """Moves played."""

    def winner(self) -> int:
        """The side that won: 0 (A) or 1 (B)."""
        return self.landlord_side if self.landlord_won else 1 - self.landlord_side

    def points(self, side: int) -> int:
        """DouZero's difference in points for ``side``: +2 pay when it won, -2 pay when it lost."""
        return 2 * self.pay if self.winner() == side else -2 * self.pay


def game_record(state: Any, deal: int, landlord_side: int) -> DuelGame:
    """The record of a finished Dou Dizhu game, read from ``state.score()``."""
    s = state.score()
    if s["winner"] < 0:
        raise ValueError(f"deal {deal}: the game ended without a winner (no landlord): not a duel game")
    return DuelGame(deal, landlord_side, bool(s["landlord_won"]), int(s["pay"]), int(s["bombs"]),
                    bool(s["spring"]), len(state.moves))


def duel_game_name(game: str, rules: str) -> str:
    """``game:rules`` checked for the duel protocol: Dou Dizhu with a fixed landlord seat."""
    name = game_name(game, rules)
    g = make_game(name)
    if g.name != "doudizhu":
        raise ValueError(f"game {game!r}: the landlord-versus-peasants protocol needs a team game with a fixed "
                         "landlord (doudizhu)")
    if g.rules.landlord is None:
        raise ValueError(f"rules {g.rules.name!r} choose the landlord by auction, so the role would follow the "
                         "bids rather than the protocol: use rules with a fixed landlord (douzero, rlcard)")
    return name


def check_specs(specs: Iterable[str], name: str) -> None:
    """Build every agent once, so that a bad spec fails before any process starts."""
    for spec in dict.fromkeys(specs):
        make_agent(spec, name)


def duel_tasks(a_spec: str, b_spec: str, name: str, seed: int, seeds: Sequence[int]) -> list[tuple]:
    """Chunk tasks ``(a, b, game:rules, seed, first deal, deal seeds)`` of :data:`CHUNK_DEALS` deals."""
    return [(a_spec, b_spec, name, seed, start, tuple(seeds[start:start + CHUNK_DEALS]))
            for start in range(0, len(seeds), CHUNK_DEALS)]


def play_duel_chunk(args: tuple) -> list[DuelGame]:
    """The two games of every deal of one chunk: A landlord (game ``2k``), then B landlord."""
    a_spec, b_spec, name, seed, first_deal, seeds = args
    game = make_game(name)
    lord_seat = game.rules.landlord
    a = make_agent(a_spec, name)
    b = make_agent(b_spec, name)  # an object of its own even for A's spec
    seatings, deal_list, streams = [], [], []
    for k, ds in enumerate(seeds):
        ss = [seat_seed(seed, first_deal + k, lord_seat, s) for s in range(game.num_players)]
        for lord, other in ((a, b), (b, a)):
            seatings.append([lord if s == lord_seat else other for s in range(game.num_players)])
            deal_list.append(ds)
            streams.append(ss)
    states = play_games(game, seatings, deal_list, streams)
    return [game_record(st, first_deal + i // 2, i % 2) for i, st in enumerate(states)]


def _role(games: Sequence[DuelGame], side: int) -> dict[str, Any]:
    """WP (Wilson) and ADP (Student t) of ``side`` over games that are one per deal."""
    wins = sum(g.winner() == side for g in games)
    lo, hi = wilson_interval(wins, len(games))
    adp, adp_lo, adp_hi = mean_interval([g.points(side) for g in games])
    return {"games": len(games), "wins": wins, "win_rate": wins / len(games), "win_rate_low": lo,
            "win_rate_high": hi, "adp": adp, "adp_low": adp_lo, "adp_high": adp_hi}


def deal_pairs(records: Iterable[DuelGame]) -> list[tuple[DuelGame, DuelGame]]:
    """The records by deal, (A landlord, B landlord); every deal must have both games."""
    by_deal: dict[int, list[DuelGame | None]] = {}
    for g in records:
        slot = by_deal.setdefault(g.deal, [None, None])
        if slot[g.landlord_side] is not None:
            raise ValueError(f"deal {g.deal}: two games with side {SIDES[g.landlord_side]} as landlord")
        slot[g.landlord_side] = g
    missing = [d for d, s in by_deal.items() if None in s]
    if missing:
        raise ValueError(f"deals {missing[:5]} lack one of their two games (a duel plays each deal both ways)")
    return [(s[0], s[1]) for _, s in sorted(by_deal.items())]  # type: ignore[misc]


def side_summary(pairs: Sequence[tuple[DuelGame, DuelGame]], side: int) -> dict[str, dict[str, Any]]:
    """WP and ADP of ``side`` (0: A, 1: B) as landlord, as peasants and over both games of a deal."""
    out = {"landlord": _role([p[side] for p in pairs], side), "peasants": _role([p[1 - side] for p in pairs], side)}
    wins = [sum(g.winner() == side for g in p) for p in pairs]
    points = [sum(g.points(side) for g in p) for p in pairs]
    _, lo, hi = clustered_rate_interval(wins, 2)
    adp, adp_lo, adp_hi = mean_interval([x / 2 for x in points])
    out["both"] = {"games": 2 * len(pairs), "wins": sum(wins), "win_rate": sum(wins) / (2 * len(pairs)),
                   "win_rate_low": lo, "win_rate_high": hi, "adp": adp, "adp_low": adp_lo, "adp_high": adp_hi}
    return out


def paired_summary(pairs: Sequence[tuple[DuelGame, DuelGame]]) -> dict[str, Any]:
    """A's view deal by deal: both games won, split, both lost; net points over the two games."""
    wins = [sum(g.winner() == 0 for g in p) for p in pairs]
    net, lo, hi = mean_interval([sum(g.points(0) for g in p) for p in pairs])
    return {"deals": len(pairs), "won_both": wins.count(2), "split": wins.count(1), "lost_both": wins.count(0),
            "net_points": net, "net_points_low": lo, "net_points_high": hi}


def summarize_duel(records: Iterable[DuelGame], per_deal: bool = False, **meta: Any) -> dict[str, Any]:
    """Every number of the module docstring from the records (in any order) of a duel."""
    pairs = deal_pairs(records)
    if not pairs:
        raise ValueError("a duel summary needs at least one deal")
    games = [g for p in pairs for g in p]
    out: dict[str, Any] = {**meta, "deals": len(pairs), "games": len(games)}
    out.update({SIDES[s]: side_summary(pairs, s) for s in (0, 1)})
    out["paired"] = paired_summary(pairs)
    out.update({"mean_bombs": sum(g.bombs for g in games) / len(games),
                "spring_rate": sum(g.spring for g in games) / len(games),
                "mean_game_length": sum(g.length for g in games) / len(games)})
    if per_deal:
        out["per_deal"] = {"a_wins": [sum(g.winner() == 0 for g in p) for p in pairs],
                           "a_points": [sum(g.points(0) for g in p) for p in pairs]}
    return out


def team_match(a_spec: str, b_spec: str, game: str = "doudizhu", rules: str = "douzero", deals: int = 1000,
               seed: int = 0, workers: int = 1, seeds: Sequence[int] | None = None,
               per_deal: bool = True, purpose: str | None = None) -> dict[str, Any]:
    """DouZero's protocol: on each of ``deals`` deals, A as landlord against two copies of B, then
    B as landlord against two copies of A (see the module docstring). Deal seeds come from
    ``seeds`` when given, else from :func:`deal_seeds` (``seed``, ``purpose``; None: the unnamed
    stream of ad hoc duels); ``per_deal`` adds A's wins (0..2) and net points deal by deal."""
    name = duel_game_name(game, rules)
    if seeds is not None:
        seeds = list(seeds)
        if deals > len(seeds):
            raise ValueError(f"deals: {deals} deals needed, the seed list holds {len(seeds)}")
    if deals < 1:
        raise ValueError(f"deals must be >= 1, got {deals}")
    check_specs([a_spec, b_spec], name)
    seed_list = seeds[:deals] if seeds is not None else deal_seeds(seed, deals, purpose)
    records = [g for part in map_tasks(play_duel_chunk, duel_tasks(a_spec, b_spec, name, seed, seed_list), workers)
               for g in part]
    g, _, preset = name.partition(":")
    return summarize_duel(records, per_deal=per_deal, a=a_spec, b=b_spec, game=g, rules=preset, seed=seed,
                          landlord_seat=make_game(name).rules.landlord)


def format_duel(res: dict[str, Any]) -> str:
    """A readable table of a duel summary (DouZero's WP and ADP, per side and role)."""
    lines = [f"A = {res['a']} vs B = {res['b']}: {res['game']} rules {res['rules']}, {res['deals']} deals "
             f"({res['games']} games), seed {res['seed']}",
             f"{'side':<5} {'role':<9} {'games':>6} {'WP':>6} {'95% CI':>15} {'ADP':>7} {'95% CI':>17}"]
    for side in SIDES:
        for role in ROLES:
            x = res[side][role]
            lines.append(f"{side:<5} {role:<9} {x['games']:>6} {x['win_rate']:6.3f} "
                         f"[{x['win_rate_low']:.3f}, {x['win_rate_high']:.3f}] {x['adp']:+7.3f} "
                         f"{format_interval(x['adp_low'], x['adp_high'], '+.3f')}")
    p = res["paired"]
    lines.append(f"per deal (A): won both {p['won_both']}, split {p['split']}, lost both {p['lost_both']}; "
                 f"net points {p['net_points']:+.3f} "
                 f"{format_interval(p['net_points_low'], p['net_points_high'], '+.3f')}")
    lines.append(f"mean bombs {res['mean_bombs']:.3f}, spring rate {res['spring_rate']:.3f}, "
                 f"mean length {res['mean_game_length']:.1f} moves (ADP: +/-2 x stake x 2^bombs per game)")
    return "\n".join(lines)


__all__ = ["DuelGame", "team_match", "summarize_duel", "format_duel", "duel_tasks", "play_duel_chunk",
           "duel_game_name", "game_record", "deal_pairs", "side_summary"]
