"""The ``climbrl`` command line: ``climbrl moves``, ``climbrl bench engine``, ``climbrl simulate``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from climbrl.cards import CardError, format_card, mask_to_cards, parse_mask
from climbrl.games.big2 import PRESETS, RulesError, get_rules
from climbrl.games.big2.combos import INVALID, TYPE_NAMES, classify, legal_plays


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def _write_json(obj: Any, out: str | None, as_json: bool, text: str) -> None:
    payload = json.dumps(obj, indent=2)
    if out:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(payload + "\n")
    print(payload if as_json else text)


def cmd_moves(args: argparse.Namespace) -> None:
    rules = get_rules(args.rules)
    hand = parse_mask(args.hand)
    if not 1 <= hand.bit_count() <= 13:
        raise CliError(f"--hand must hold 1 to 13 cards, got {hand.bit_count()}")
    prev = 0
    if args.prev is not None:
        prev = parse_mask(args.prev)
        if prev == 0:
            raise CliError("--prev is empty: leave it out to lead")
        if classify(prev, rules)[0] == INVALID:
            raise CliError(f"--prev {args.prev!r} is not a combination under {rules.name} rules")
        if prev & hand:
            raise CliError("--prev shares cards with --hand")
    moves = legal_plays(hand, rules, to_beat=prev)
    rows = [
        {"index": i, "cards": [format_card(c) for c in mask_to_cards(m)], "type": TYPE_NAMES[t]}
        for i, (m, t, _) in enumerate(moves)
    ]
    if args.json:
        print(json.dumps(rows))
        return
    head = f"{len(rows)} legal moves under {rules.name} rules, " + (
        f"facing {args.prev}" if prev else "leading"
    )
    print(head)
    for r in rows:
        print(f"{r['index']:5d}  {' '.join(r['cards']) or 'pass':<22} {r['type']}")


def cmd_bench(args: argparse.Namespace) -> None:
    from climbrl.bench import bench_engine

    res = bench_engine(args.rules, games=args.games, seed=args.seed, one_core=not args.all_cores)
    text = (
        f"engine ({res['rules']} rules, {res['games']} random-play games, one core): "
        f"{res['games_per_s']:.0f} games/s, {res['decisions_per_s']:.0f} decisions/s "
        f"({res['decisions_per_game']:.1f} decisions a game); with observations "
        f"{res['with_observations']['games_per_s']:.0f} games/s, "
        f"{res['with_observations']['decisions_per_s']:.0f} decisions/s"
    )
    _write_json(res, args.out, args.json, text)


def cmd_simulate(args: argparse.Namespace) -> None:
    from climbrl.simulate import simulate_random

    res = simulate_random(args.rules, games=args.games, seed=args.seed)
    lines = [f"{res['games']} random-play games under {res['rules']} rules (seed {res['seed']})"]
    for s, w in enumerate(res["seat_win_rate"]):
        lines.append(
            f"  seat {s}: win rate {w['rate']:.3f} [{w['low']:.3f}, {w['high']:.3f}] (n={res['games']})"
        )
    st = res["starter_win_rate"]
    lines.append(f"  starting seat: {st['rate']:.3f} [{st['low']:.3f}, {st['high']:.3f}]")
    lines.append(f"  mean decisions a game: {res['mean_decisions']:.1f}")
    _write_json(res, args.out, args.json, "\n".join(lines))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="climbrl", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    presets = ", ".join(PRESETS)

    m = sub.add_parser("moves", help="list the legal moves of a hand, leading or facing a play")
    m.add_argument("--rules", default="paper", help=f"rules preset ({presets})")
    m.add_argument("--hand", required=True, help='cards, e.g. "3D 4D 10S 2S"')
    m.add_argument("--prev", help="the play to beat (leave out to lead)")
    m.add_argument("--json", action="store_true", help="print a JSON array")
    m.set_defaults(func=cmd_moves)

    b = sub.add_parser("bench", help="throughput benchmarks")
    bsub = b.add_subparsers(dest="what", required=True)
    be = bsub.add_parser("engine", help="random-play games and decisions per second on one core")
    be.add_argument("--rules", default="paper", help=f"rules preset ({presets})")
    be.add_argument("--games", type=int, default=2000)
    be.add_argument("--seed", type=int, default=0)
    be.add_argument("--all-cores", action="store_true", help="do not pin the process to one core")
    be.add_argument("--json", action="store_true")
    be.add_argument("--out", help="also write the JSON result here")
    be.set_defaults(func=cmd_bench)

    s = sub.add_parser("simulate", help="random-play statistics (seat win rates, game length)")
    s.add_argument("--rules", default="paper", help=f"rules preset ({presets})")
    s.add_argument("--games", type=int, default=1000)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--json", action="store_true")
    s.add_argument("--out", help="also write the JSON result here")
    s.set_defaults(func=cmd_simulate)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (CliError, CardError, RulesError, ValueError) as e:
        print(f"climbrl {args.command}: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
