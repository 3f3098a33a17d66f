"""The whole game of Dou Dizhu, auction included: an agent against two copies of an opponent.

Every deck is played three times, the agent in each seat (:func:`climbrl.evaluate.match.match_tasks`:
the same seatings, deal seeds and seat streams as :func:`~climbrl.evaluate.match.run_match`), so
every agent bids from every seat on every deck, and the role each game gives it is what the
auction decided. Numbers, each over the games (``n`` given):

- **ADP**: the agent's mean return per game under the rules' ``score`` reward (the stake times the
  bomb and spring multipliers; the landlord collects from, or pays, both peasants), with a Student
  t 95% interval over the decks (the three rotations of a deck are one draw: its mean);
- **WP**: the win rate over every game, and per role (landlord, peasant), each with ADP;
- the auction: how often the agent's seat became the landlord (chance would be 1/3), how often it
  bid at all, its mean stake as landlord, and how often a deck was passed by everyone (redealt or
  ended, as the rules say).

:func:`paired` compares two agents that met the same opponent on the same decks with the same
seat streams: the per-deck difference of their ADP, a Student t interval and p-value over the
decks.

:func:`bid_calibration`: for a learned bid model, its bids' predicted values against the returns
that followed (the interpretability window's calibration).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from climbrl.evaluate.match import _chunk_games, map_tasks, match_tasks, opponent_list
from climbrl.evaluate.stats import format_interval, mean_difference_test, mean_summary, wilson_interval

ROLES = ("landlord", "peasant")


def _games(args: tuple) -> list[dict[str, Any]]:
    """One chunk's games as records: deck, agent seat, landlord, the agent's role, bid, return."""
    _, opponents, _, _, first, _ = args
    n = len(opponents) + 1
    out = []
    from climbrl.agents.doudizhu_rules import hand_strength

    for i, st in enumerate(_chunk_games(args)):
        seat = i % n
        bids = [a for s, a in st.auction_history if s == seat]
        dealt = np.frombuffer(st.deals[-1][0], np.int8).reshape(n, -1)[seat]
        out.append({"deck": first + i // n, "seat": seat, "landlord": int(st.landlord),
                    "role": "none" if st.landlord < 0 else "landlord" if st.landlord == seat else "peasant",
                    "bid": max(bids, default=0), "stake": int(st.stake), "won": seat in st.result().winners,
                    "return": float(st.returns()[seat]), "deals": len(st.deals),
                    "strength": hand_strength(dealt), "actions": list(st.actions)})
    return out


def whole_game(agent: str, opponent: str, rules: str = "standard", decks: int = 1000, seed: int = 0,
               seeds: Sequence[int] | None = None, workers: int = 1, purpose: str | None = None) -> dict[str, Any]:
    """``agent`` against two ``opponent`` on ``decks`` decks (``seeds``, else ``deal_seeds(seed,
    decks, purpose)``), every deck from every seat; the summary above, with ``games`` (the per-game
    records) for paired comparisons."""
    from climbrl.games.registry import make_game

    game = make_game(f"doudizhu:{rules}")
    if game.rules.landlord is not None:
        raise ValueError(f"rules {rules!r} fix the landlord: the whole game needs an auction (standard, openspiel, "
                         "online)")
    opponents = opponent_list([opponent], game.num_players)
    tasks = match_tasks(agent, [tuple(opponents)], rules, decks * game.num_players, seed, seeds, "doudizhu", purpose)
    games = [g for part in map_tasks(_games, tasks, workers) for g in part]
    deck_seeds = [s for t in tasks for s in t[5]]
    out = {"agent": agent, "opponent": opponent, "rules": rules, "decks": decks, "seed": seed,
           **summarize(games), "games": games}
    cal = bid_calibration(agent, game, games, deck_seeds)
    if cal is not None:
        out["bid_calibration"] = cal
    return out


def bid_calibration(agent: str, game: Any, games: Sequence[dict[str, Any]], deck_seeds: Sequence[int],
                    bins: int = 8) -> list[dict[str, Any]] | None:
    """For an agent that bids with a learned model (:class:`~climbrl.learn.bidding.LearnedBidder`):
    each of its bids' predicted value (the model's Q of the bid it made) against the return the
    game then gave it, in ``bins`` bins of equal count by prediction: the calibration of the bid
    model. ``None`` for any other agent. The auctions are replayed from the decks' seeds and the
    recorded actions, so the model sees exactly the decisions it made."""
    import torch

    from climbrl.agents import Decision
    from climbrl.agents.bidding import BiddingAgent
    from climbrl.learn.bidding import LearnedBidder
    from climbrl.learn.specs import make_agent

    a = make_agent(agent, f"doudizhu:{game.rules.name}")
    bidder = a.bidder if isinstance(a, BiddingAgent) else None
    if not isinstance(bidder, LearnedBidder):
        return None
    decisions, realized = [], []
    for g in games:
        state = game.new_game(seed=deck_seeds[g["deck"]])
        for action in g["actions"]:
            if state.phase != 0:  # the auction is over (play phase)
                break
            if state.current_player == g["seat"]:
                decisions.append((Decision.from_state(state), action))
                realized.append(g["return"])
            state.apply(action)
    if not decisions:
        return []
    x = bidder.encoder.features([d for d, _ in decisions])
    with torch.no_grad():
        q = bidder.net(torch.from_numpy(x)).numpy()
    predicted = np.array([q[i, a] for i, (_, a) in enumerate(decisions)], dtype=np.float64)
    realized_a = np.array(realized, dtype=np.float64)
    order = np.argsort(predicted, kind="stable")
    out = []
    for part in np.array_split(order, min(bins, len(order))):
        out.append({"n": int(len(part)), "predicted": float(predicted[part].mean()),
                    "realized": _adp(realized_a[part].tolist())})
    return out


def _rate(k: int, n: int) -> dict[str, Any]:
    lo, hi = wilson_interval(k, n) if n else (0.0, 1.0)
    return {"rate": k / n if n else None, "low": lo, "high": hi, "n": n}


def _adp(values: Sequence[float]) -> dict[str, Any]:
    m = mean_summary(values)
    return {"mean": m["mean"], "low": m["low"], "high": m["high"], "n": m["n"]}


def per_deck(games: Sequence[dict[str, Any]]) -> list[float]:
    """The agent's mean return on each deck (over its seats)."""
    by: dict[int, list[float]] = {}
    for g in games:
        by.setdefault(g["deck"], []).append(g["return"])
    return [sum(v) / len(v) for _, v in sorted(by.items())]


def summarize(games: Sequence[dict[str, Any]]) -> dict[str, Any]:
    n = len(games)
    adp = _adp(per_deck(games))
    roles = {}
    for role in ROLES:
        gs = [g for g in games if g["role"] == role]
        roles[role] = {"games": len(gs), "wp": _rate(sum(g["won"] for g in gs), len(gs)),
                       "adp": _adp([g["return"] for g in gs]) if gs else None}
    landlord = [g for g in games if g["role"] == "landlord"]
    return {
        "n_games": n, "adp": adp, "wp": _rate(sum(g["won"] for g in games), n), "by_role": roles,
        "landlord_rate": _rate(len(landlord), n), "bid_rate": _rate(sum(g["bid"] > 0 for g in games), n),
        "stake_as_landlord": _adp([g["stake"] for g in landlord]) if landlord else None,
        "all_pass_rate": _rate(sum(g["role"] == "none" for g in games), n),
        "by_strength": by_strength(games),
    }


def by_strength(games: Sequence[dict[str, Any]], edges: Sequence[int] = (4, 7, 9, 11, 13)) -> list[dict[str, Any]]:
    """The interpretability window of the auction: by the strength of the dealt hand (the rule
    agents' bidding score ``S``, :func:`climbrl.agents.doudizhu_rules.hand_strength`), how often the
    agent bid, took the landlord's seat, and won as landlord, and its mean return."""
    bounds = [-10**6, *edges, 10**6]
    out = []
    for lo, hi in zip(bounds, bounds[1:], strict=False):
        gs = [g for g in games if lo <= g["strength"] < hi]
        ll = [g for g in gs if g["role"] == "landlord"]
        out.append({"from": None if lo == bounds[0] else lo, "to": None if hi == bounds[-1] else hi, "games": len(gs),
                    "bid_rate": sum(g["bid"] > 0 for g in gs) / len(gs) if gs else None,
                    "landlord_rate": len(ll) / len(gs) if gs else None,
                    "landlord_wp": sum(g["won"] for g in ll) / len(ll) if ll else None,
                    "adp": sum(g["return"] for g in gs) / len(gs) if gs else None})
    return out


def paired(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """ADP of ``a`` minus ``b`` (two :func:`whole_game` results on the same decks and opponent),
    deck by deck: mean, 95% interval and two-sided p-value over the decks."""
    if (a["opponent"], a["rules"], a["decks"], a["seed"]) != (b["opponent"], b["rules"], b["decks"], b["seed"]):
        raise ValueError("a paired comparison needs the same opponent, rules, decks and seed")
    da, db = per_deck(a["games"]), per_deck(b["games"])
    m = mean_difference_test([x - y for x, y in zip(da, db, strict=True)])
    return {"a": a["agent"], "b": b["agent"], "decks": m["n"], "difference": m["mean"], "low": m["low"],
            "high": m["high"], "p": m["p"]}


def deep_whole_game(agent: str, opponent: str, rules: str = "standard", decks: int = 1000, repeats: int = 20,
                    seed: int = 0, workers: int = 1) -> dict[str, Any]:
    """The deep evaluation of the whole game: :func:`whole_game` on ``repeats`` fresh deck sets
    (purpose ``deep``, seeds ``seed .. seed + repeats - 1``); ADP as the mean of the repeats'
    ADP with a Student t interval over the repeats."""
    reps = []
    for k in range(repeats):
        r = whole_game(agent, opponent, rules, decks, seed + k, workers=workers, purpose="deep")
        r.pop("games")
        reps.append(r)
    adp = _adp([r["adp"]["mean"] for r in reps])
    wp = _adp([r["wp"]["rate"] for r in reps])
    text = (f"{agent} against two {opponent} ({rules}), {repeats} x {decks} fresh decks from every seat: "
            f"ADP per game {adp['mean']:+.3f} [{adp['low']:+.3f}, {adp['high']:+.3f}], "
            f"WP {wp['mean']:.3f} [{wp['low']:.3f}, {wp['high']:.3f}] (t intervals over the repeats)"
            if adp["low"] is not None and wp["low"] is not None else
            f"{agent} against two {opponent} ({rules}): ADP {adp['mean']:+.3f}, WP {wp['mean']:.3f} (no spread)")
    return {"agent": agent, "opponent": opponent, "rules": rules, "decks": decks, "repeats": repeats, "seed": seed,
            "adp": adp, "wp": wp, "runs": reps, "text": text}


def estimate_text(x: dict[str, Any] | None, key: str = "mean", fmt: str = "+.3f") -> str:
    """``x[key]`` with its interval (``low``, ``high``; ``[n/a]`` without one), ``-`` when absent."""
    if not x or x.get(key) is None:
        return "-"
    return f"{x[key]:{fmt}} {format_interval(x.get('low'), x.get('high'), fmt)}"


def format_whole_game(res: dict[str, Any]) -> str:
    iv = estimate_text
    lines = [f"{res['agent']} against two {res['opponent']} ({res['rules']}, {res['decks']} decks x 3 seats, "
             f"{res['n_games']} games)",
             f"  ADP per game {iv(res['adp'])}; WP {iv(res['wp'], 'rate', '.3f')}",
             f"  landlord in {iv(res['landlord_rate'], 'rate', '.3f')} of games (chance 1/3); bid in "
             f"{iv(res['bid_rate'], 'rate', '.3f')}; stake as landlord {iv(res['stake_as_landlord'], 'mean', '.2f')}"]
    for role, r in res["by_role"].items():
        lines.append(f"  as {role}: {r['games']} games, WP {iv(r['wp'], 'rate', '.3f')}, ADP {iv(r['adp'])}")
    return "\n".join(lines)
