"""The ``climbrl`` command line.

``moves`` (rules explorer), ``evaluate`` (an agent against three opponents over duplicate
deals; ``--repeats`` for a deep evaluation), ``duel`` and ``roundrobin`` (Dou Dizhu's
landlord-versus-peasants protocol, DouZero's WP and ADP), ``behaviour`` (the interpretability window),
``seeds`` (a versioned file of deal seeds), ``convert-charlesworth`` (the public agent's joblib
weights to ``.npz``, safely), ``train``, ``tune``, ``tournament``, ``play``, ``baselines``,
``bench engine``, ``simulate``.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def _quiet_workers() -> None:
    """Ctrl-C is the command's to answer, not its workers'. A terminal sends SIGINT to every
    process of its foreground group: the command's own process answers it (one line, exit 130,
    :func:`main`) and ends its pools; a worker would print a KeyboardInterrupt traceback of its
    own, often in the middle of its imports. multiprocessing's "spawn" prepares a worker by running
    the command's main module under the name ``__mp_main__``: this module (``python -m
    climbrl.cli``) or the ``climbrl`` script that imports it, so such a worker ignores SIGINT from
    here on, before its heavy imports; its pool ends it once its current task is done (the
    command leaves then). A process that merely imports this module (a test, a pipeline stage)
    keeps its own handler."""
    main = sys.modules.get("__mp_main__")
    if __name__ == "__mp_main__" or Path(getattr(main, "__file__", None) or "").name == "climbrl":
        signal.signal(signal.SIGINT, signal.SIG_IGN)


_quiet_workers()

from climbrl.cards import CardError, format_card, mask_to_cards, parse_mask  # noqa: E402 (after the guard)
from climbrl.config import MAX_WIDTH, SEED_LIMIT, TOURNAMENT_DEALS, ConfigError  # noqa: E402
from climbrl.games.big2 import PRESETS, RulesError, get_rules  # noqa: E402
from climbrl.games.big2.combos import INVALID, TYPE_NAMES, classify, legal_plays  # noqa: E402
from climbrl.outputs import check_output, run_folder  # noqa: E402
from climbrl.params import ParamsError  # noqa: E402


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def _integer(text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _seed(text: str) -> int:
    """argparse type of a seed (argparse names the flag in its error)."""
    v = _integer(text)
    if not 0 <= v < SEED_LIMIT:
        raise argparse.ArgumentTypeError(f"a seed is an integer from 0 to {SEED_LIMIT - 1}, got {v}")
    return v


def _positive(text: str) -> int:
    v = _integer(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {v}")
    return v


def _nonnegative(text: str) -> int:
    v = _integer(text)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {v}")
    return v


def _duration(most: float, zero: bool = False):
    """argparse type of a duration up to ``most`` (in the flag's unit), above 0 (or 0 too: ``zero``)."""

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
        low_ok = v >= 0 if zero else v > 0
        if not low_ok or v > most or v != v:
            low = "from" if zero else "above"
            raise argparse.ArgumentTypeError(f"must be a number {low} 0 to {most:g}, got {text}")
        return v

    return parse


def _port(text: str) -> int:
    """argparse type of a TCP port: 0 (any free one) to 65535, what a socket can bind."""
    v = _integer(text)
    if not 0 <= v <= 65535:
        raise argparse.ArgumentTypeError(f"a port is an integer from 0 (any free one) to 65535, got {v}")
    return v


def _names(text: str) -> list[str]:
    """A comma-separated list of names (agents, participants), blanks dropped."""
    return [n.strip() for n in text.split(",") if n.strip()]


def _default_rules(rules: str | None, agents: list[str], game: str = "big2") -> str:
    """The given preset, else (Big 2) ``charlesworth`` when the public agent plays (its own
    rules), else the game's default preset (Big 2: paper, Dou Dizhu: standard)."""
    from climbrl.games.registry import DEFAULT_PRESETS

    if rules is not None:
        return rules
    if game != "big2":
        return DEFAULT_PRESETS[game]
    return "charlesworth" if any(a.startswith("charlesworth") for a in agents) else "paper"


@contextmanager
def _saving(result: Any, out: str, printed_json: bool) -> Iterator[None]:
    """Writing ``result`` (already printed) to ``out``: should that fail, the JSON result goes to
    stdout too (unless it is there already) and the error is the command's, so nothing computed
    is lost."""
    try:
        yield
    except OSError as e:
        if not printed_json:
            print(json.dumps(result, indent=2, allow_nan=False))
        raise CliError(f"cannot write {out}: {e} (the result is on stdout)") from None


def _refuse_results(out: str | None, names: tuple[str, ...], force: bool) -> None:
    """Refuse, before any work, a folder ``out`` that already holds one of the result files
    ``names`` unless ``--force``: a result is never overwritten unless asked."""
    there = [name for name in names if out and (Path(out) / name).exists()]
    if there and not force:
        raise CliError(f"--out {out} already holds {' and '.join(there)}: pass --force to overwrite, "
                       "or choose another --out")


def _write_json(obj: Any, out: str | None, as_json: bool, text: str) -> None:
    # strict JSON: a NaN or an infinity is a bug upstream (a missing value is None, null), never
    # written as the non-standard NaN / Infinity that strict parsers refuse
    payload = json.dumps(obj, indent=2, allow_nan=False)
    print(payload if as_json else text)
    if out:
        with _saving(obj, out, as_json):
            Path(out).parent.mkdir(parents=True, exist_ok=True)
            Path(out).write_text(payload + "\n")


def cmd_moves_doudizhu(args: argparse.Namespace) -> None:
    from climbrl.games.doudizhu.moves import parse_counts
    from climbrl.games.doudizhu.state import DdzGame

    game = DdzGame(args.rules or "standard")
    hand = parse_counts(args.hand, "--hand")
    if not 1 <= int(hand.sum()) <= 20:
        raise CliError(f"--hand must hold 1 to 20 cards, got {int(hand.sum())}")
    prev = 0
    if args.prev is not None:
        if not args.prev.strip():
            raise CliError("--prev is empty: leave it out to lead")
        prev = game.parse_move(args.prev, "--prev")
        if not game.table.moves[prev].cards:
            raise CliError(f"--prev {args.prev!r} is not a play of cards")
        if any(int(hand[r]) + int(game.table.counts[prev][r]) > (4 if r < 13 else 1) for r in range(15)):
            raise CliError(f"--prev {args.prev!r} and --hand hold more cards of a rank than a deck")
    from climbrl.games.doudizhu.combos import legal_ids

    rows = []
    for i, a in enumerate(legal_ids(hand, prev, game.rules)):
        m = game.table.moves[a]
        rows.append({"index": i, "cards": m.cards, "type": m.type_name if a else "pass", "action_id": a,
                     "label": game.format_move(a)})
    if args.json:
        print(json.dumps(rows))
        return
    print(f"{len(rows)} legal moves under {game.rules.name} rules, "
          + (f"facing {game.format_move(prev)}" if prev else "leading"))
    for r in rows:
        print(f"{r['index']:5d}  {r['label']:<22} {r['type']:<20} id {r['action_id']}")


def cmd_moves(args: argparse.Namespace) -> None:
    if args.game == "doudizhu":
        return cmd_moves_doudizhu(args)
    rules = get_rules(args.rules or "paper")
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


def _load_seeds(path: str) -> list[int]:
    from climbrl.agents.runner import load_deal_seeds

    try:
        return load_deal_seeds(path)
    except ValueError as e:
        raise CliError(str(e)) from None


def cmd_evaluate(args: argparse.Namespace) -> None:
    from climbrl.evaluate.match import format_table, run_match

    opponents = _names(args.opponents)
    rules = _default_rules(args.rules, [args.agent, *opponents], args.game)
    if args.repeats < 1:
        raise CliError(f"--repeats must be >= 1, got {args.repeats}")
    if args.repeats > 1:
        if args.seeds:
            raise CliError("--repeats draws a new deal set per repeat: it cannot take --seeds")
        from climbrl.evaluate.deep import deep_evaluate, format_deep

        res = deep_evaluate(args.agent, opponents, rules=rules, games=args.games, repeats=args.repeats,
                            seed=args.seed, workers=args.workers, game=args.game)
        _write_json(res, args.out, args.json, format_deep(res))
        return
    seeds = _load_seeds(args.seeds) if args.seeds else None
    res = run_match(args.agent, opponents, rules=rules, games=args.games, seed=args.seed,
                    workers=args.workers, seeds=seeds, game=args.game)
    _write_json(res, args.out, args.json, format_table([res]))


def cmd_duel(args: argparse.Namespace) -> None:
    if args.repeats < 1:
        raise CliError(f"--repeats must be >= 1, got {args.repeats}")
    from climbrl.games.registry import make_game

    if make_game(f"doudizhu:{args.rules}").rules.landlord is None:  # an auction: the whole game
        from climbrl.evaluate.auction import deep_whole_game, format_whole_game, whole_game

        if args.repeats > 1:
            res = deep_whole_game(args.agent, args.opponent, args.rules, args.deals, args.repeats, args.seed,
                                  workers=args.workers)
            text = res["text"]
        else:
            res = whole_game(args.agent, args.opponent, args.rules, args.deals, args.seed, workers=args.workers)
            res.pop("games")
            text = format_whole_game(res)
        _write_json(res, args.out, args.json, text)
        return
    if args.repeats > 1:
        from climbrl.evaluate.deep import deep_duel, format_deep_duel

        res = deep_duel(args.agent, args.opponent, game=args.game, rules=args.rules, deals=args.deals,
                        repeats=args.repeats, seed=args.seed, workers=args.workers)
        _write_json(res, args.out, args.json, format_deep_duel(res))
        return
    from climbrl.evaluate.duel import format_duel, team_match

    res = team_match(args.agent, args.opponent, game=args.game, rules=args.rules, deals=args.deals, seed=args.seed,
                     workers=args.workers)
    _write_json(res, args.out, args.json, format_duel(res))


def cmd_roundrobin(args: argparse.Namespace) -> None:
    from climbrl.evaluate.roundrobin import format_round_robin, plot_round_robin, round_robin
    from climbrl.evaluate.tournament import split_label

    participants: dict[str, str] = {}
    for p in _names(args.participants):
        label, spec = split_label(p)
        if label in participants:
            raise CliError(f"--participants: {label!r} is named twice")
        participants[label] = spec
    _refuse_results(args.out, ("roundrobin.json", "roundrobin.png"), args.force)
    res = round_robin(participants, game=args.game, rules=args.rules, deals=args.deals, seed=args.seed,
                      workers=args.workers, resamples=args.resamples)
    print(json.dumps(res, indent=2, allow_nan=False) if args.json else format_round_robin(res))
    if args.out:
        with _saving(res, args.out, args.json):
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            (out / "roundrobin.json").write_text(json.dumps(res, indent=2, allow_nan=False) + "\n")
            plot_round_robin(res, str(out / "roundrobin.png"))


def cmd_behaviour(args: argparse.Namespace) -> None:
    from climbrl.config import GAME_SETUP
    from climbrl.evaluate.windows import window

    default_opponents = "random,greedy,heuristic" if args.game == "big2" else ",".join(GAME_SETUP[args.game].baselines)
    opponents = _names(args.opponents if args.opponents is not None else default_opponents)
    if not opponents:
        raise CliError("--opponents must name at least one agent")
    games = args.games if args.games is not None else 400 if args.game == "big2" else 300
    rules = _default_rules(args.rules, [args.agent, *opponents], args.game)
    win = window(args.game)
    res = win.record(args.agent, opponents, rules=rules, games=games, seed=args.seed, workers=args.workers,
                     game=args.game)
    data = {"games_per_opponent": games, "opponents": opponents, "agents": {args.agent: res},
            "deals": f"deals from seed {args.seed}"}
    if args.game != "big2":
        data.update(game=args.game, rules=rules)
    _write_json(res, args.out, args.json, "\n".join(win.markdown(data)))


def cmd_seeds(args: argparse.Namespace) -> None:
    from climbrl.evaluate.match import deal_seeds

    if args.deals <= 0:
        raise CliError(f"--deals must be positive, got {args.deals}")
    res = {"seed": args.seed, "purpose": args.purpose, "deals": deal_seeds(args.seed, args.deals, args.purpose)}
    _write_json(res, args.out, args.json, f"{args.deals} deal seeds from seed {args.seed} ({args.purpose})")


def cmd_convert(args: argparse.Namespace) -> None:
    from climbrl.agents.external.charlesworth import convert_joblib

    out = convert_joblib(args.file, args.out)
    print(f"wrote {out}")


def cmd_baselines(args: argparse.Namespace) -> None:
    from climbrl.evaluate.baselines_report import baselines_report, to_markdown, write_report

    _refuse_results(args.out, ("baselines.json", "baselines.md"), args.force)
    report = baselines_report(games=args.games, seed=args.seed, workers=args.workers,
                              public_agent=not args.no_public_agent, game=args.game, rules=args.rules or "")
    print(to_markdown(report) + f"({report['seconds']:.1f} s)")
    with _saving(report, args.out, False):
        write_report(report, args.out)


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The train fields of ``--config``, then ``--set``, then the flags; ``algo`` may only repeat
    ``--algo``."""
    from climbrl.yamlfile import YamlError, load_yaml

    values: dict[str, Any] = {}
    given: dict[str, str] = {}  # where each field was given, for the algo check
    if args.config:
        try:
            loaded = load_yaml(Path(args.config).read_text()) or {}
        except (OSError, YamlError, UnicodeDecodeError) as e:
            raise CliError(f"cannot read --config {args.config}: {e}") from None
        if not isinstance(loaded, dict):
            raise CliError(f"--config {args.config}: expected a mapping of train fields")
        values.update(loaded)
        given.update({k: f"--config {args.config}" for k in loaded})
    for item in args.set or []:
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise CliError(f"--set {item!r}: expected KEY=VALUE")
        try:
            values[key.strip()] = load_yaml(raw)
        except YamlError as e:
            raise CliError(f"--set {item!r}: the value is {e}") from None
        given[key.strip()] = f"--set {item}"
    if "algo" in values:
        algo = values.pop("algo")
        if algo != args.algo:
            raise CliError(f"{given['algo']} names learner {algo!r}, --algo names {args.algo!r}: give it once")
    for flag in ("game", "rules", "epochs", "games_per_epoch", "seed", "curriculum", "eval_every", "eval_games",
                 "eval_workers", "actors", "actor_cluster", "device"):
        key = flag
        if getattr(args, flag) is not None:
            values[key] = getattr(args, flag)
    return values


def cmd_train(args: argparse.Namespace) -> None:
    from climbrl.config import resolve_device, train_config
    from climbrl.learn.train import CHECKPOINT
    from climbrl.training import train

    cfg = train_config(args.algo, **_overrides(args))  # validated before any work
    resolve_device(cfg.device)  # cuda without a GPU: a clear error before any work
    out = args.out or f"runs/{cfg.algo}-seed{cfg.seed}"
    with run_folder(out, resume=args.resume, checkpoint=CHECKPOINT):
        res = train(cfg, out, resume=args.resume, progress=not args.no_progress,
                    time_limit=None if args.time_limit is None else 3600 * args.time_limit)
    summary = {k: v for k, v in res.items() if k != "history"}
    lines = [f"{cfg.algo}: {cfg.epochs} epochs x {cfg.games_per_epoch} games in {res['train_seconds']:.0f} s "
             f"(+ {res['eval_seconds']:.0f} s evaluation); checkpoint and metrics.csv in {out}"]
    fe = res["final_eval"]
    for opp in cfg.eval_opponents:
        if f"win_rate/{opp}" in fe:
            lines.append(f"  vs {cfg.num_players - 1}x {opp}: win rate {fe[f'win_rate/{opp}']:.3f} "
                         f"[{fe[f'win_rate_low/{opp}']:.3f}, {fe[f'win_rate_high/{opp}']:.3f}] "
                         f"(n={int(fe[f'eval_games/{opp}'])})")
    _write_json(summary, None, args.json, "\n".join(lines))


def cmd_imitate(args: argparse.Namespace) -> None:
    from climbrl.learn.imitation import ImitationConfig, imitate

    fields = {k: getattr(args, k) for k in ("teacher", "rules", "games", "seed", "epochs", "hidden", "lr", "workers",
                                            "encoder") if getattr(args, k) is not None}
    if args.game == "doudizhu":  # Dou Dizhu's defaults: DouZero's rules, the learners' encoder
        fields = {"rules": "douzero", "encoder": "doudizhu", "teacher": "heuristic", **fields, "game": "doudizhu"}
    cfg = ImitationConfig(**fields)  # validated before any work
    out = args.out or f"runs/imitation-seed{cfg.seed}"
    with run_folder(out):
        res = imitate(cfg, out)
    acc = res["holdout_accuracy"]
    held = (f"the student picks the teacher's move in {acc:.3f} of {res['holdout_decisions']} held-out decisions"
            if acc is not None else "no held-out game")
    text = (f"imitation of {cfg.teacher}: {cfg.games} games, {res['decisions']} decisions; {held}; "
            f"{res['cpu_s']:.0f} CPU s (teacher {res['collect_cpu_s']:.0f}, fit {res['fit_cpu_s']:.0f}); "
            f"{out}/policy.pt")
    _write_json(res, None, args.json, text)


def cmd_tune(args: argparse.Namespace) -> None:
    from climbrl.params import load_params
    from climbrl.tune import run_study

    params = load_params(args.params)
    from sqlalchemy.exc import SQLAlchemyError

    try:
        res = run_study(params.tune, rules=params.rules, algo=args.algo, trials=args.trials, storage=args.storage,
                        study_name=args.study, best_yaml=args.best_out, track=not args.no_track,
                        tracking=params.tracking, game=params.game, heartbeat_interval=args.heartbeat,
                        grace_period=args.grace, max_retry=args.retries)
    except SQLAlchemyError as e:  # a database that cannot be reached or used
        raise CliError(f"--storage: the study's database failed: {getattr(e, 'orig', None) or e}") from None
    text = (f"study {res['study']} ({res['storage']}): {res['trials']} trials, {res['complete']} complete, "
            f"{res['pruned']} pruned")
    if "best_value" in res:
        text += (f"; best win rate vs {params.tune.opponent} {res['best_value']:.3f} with {res['best_params']} -> "
                 f"{res['best_yaml']}")
    _write_json(res, None, args.json, text)


def cmd_tournament(args: argparse.Namespace) -> None:
    from climbrl.evaluate.tournament import format_leaderboard, plot_pairwise, run_tournament, split_label

    parts = _names(args.participants or "")
    if args.participants is None:
        parts = ["random", "greedy", "heuristic", "aggressive", "conservative"] if args.game == "big2" else []
        if not parts:
            raise CliError(f"--participants: name at least 3 agents of {args.game} "
                           "(e.g. random,greedy,ppo=checkpoint:runs/ppo/policy.pt)")
    rules = _default_rules(args.rules, [split_label(p)[1] for p in parts], args.game)
    _refuse_results(args.out, ("tournament.json", "tournament_pairwise.png"), args.force)
    res = run_tournament(parts, rules=rules, deals=args.deals, seed=args.seed, workers=args.workers,
                         resamples=args.resamples, game=args.game)
    print(json.dumps(res, indent=2, allow_nan=False) if args.json else format_leaderboard(res))
    if args.out:
        with _saving(res, args.out, args.json):
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            (out / "tournament.json").write_text(json.dumps(res, indent=2, allow_nan=False) + "\n")
            plot_pairwise(res, str(out / "tournament_pairwise.png"))


def cmd_play(args: argparse.Namespace) -> None:
    from climbrl.play import play, play_doudizhu

    opponents = _names(args.opponents)
    if args.game == "doudizhu":
        if len(opponents) == 1:
            opponents *= 2
        if len(opponents) != 2:
            raise CliError("--opponents takes one agent (two copies) or two")
        play_doudizhu(args.rules or "standard", tuple(opponents), seat=args.seat, seed=args.seed, hints=args.hints)
        return
    if len(opponents) == 1:
        opponents *= 3
    if len(opponents) != 3:
        raise CliError("--opponents takes one agent (three copies) or three")
    rules = _default_rules(args.rules, opponents)
    play(rules, tuple(opponents), seat=args.seat, seed=args.seed, hints=args.hints)


def cmd_serve(args: argparse.Namespace) -> None:
    from climbrl.serve.server import serve

    serve(args.host, args.port, root=args.root, records=args.records, pause=args.pause)


def cmd_bench(args: argparse.Namespace) -> None:
    from climbrl.bench import bench_engine

    res = bench_engine(args.rules, games=args.games, seed=args.seed, one_core=not args.all_cores,
                       game_name=args.game)
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
    from climbrl.agents.runner import PURPOSES

    p = argparse.ArgumentParser(prog="climbrl", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    presets = ", ".join(PRESETS)

    m = sub.add_parser("moves", help="list the legal moves of a hand, leading or facing a play")
    m.add_argument("--game", default="big2", choices=("big2", "doudizhu"))
    m.add_argument("--rules", default=None, help=f"rules preset ({presets}; doudizhu: standard, "
                   "openspiel, rlcard, online, douzero)")
    m.add_argument("--hand", required=True, help='cards, e.g. "3D 4D 10S 2S" (doudizhu: "3345567789TJQKA2B")')
    m.add_argument("--prev", help="the play to beat (leave out to lead)")
    m.add_argument("--json", action="store_true", help="print a JSON array")
    m.set_defaults(func=cmd_moves)

    agents = ("random, greedy, heuristic, aggressive, conservative, charlesworth[:sample|:greedy], "
              "search[:S=48,K=10,rollout=heuristic,own=..,belief=0,value=win]")
    games = ("big2", "doudizhu")
    e = sub.add_parser("evaluate", help="an agent against the other seats' opponents, every seat, duplicate deals")
    e.add_argument("--game", default="big2", choices=games, help="the game (default big2)")
    e.add_argument("--agent", required=True,
                   help=f"agent ({agents}; Dou Dizhu: random, greedy, heuristic, aggressive, conservative, "
                        "rlcard-rule (optional extra rlcard; rlcard rules), checkpoint:PATH)")
    e.add_argument("--opponents", required=True,
                   help="one agent (a copy in every other seat) or one per other seat, comma-separated")
    e.add_argument("--rules", default=None, help=f"rules preset ({presets}); default paper, or "
                   "charlesworth when the public agent plays")
    e.add_argument("--games", type=_positive, default=400,
                   help="games, a multiple of the number of players (default 400; Dou Dizhu: e.g. 300)")
    e.add_argument("--seed", type=_seed, default=0, help="seed of the deals and of every random choice")
    e.add_argument("--seeds", help="JSON file of deal seeds ({'deals': [...]}, see `climbrl seeds`)")
    e.add_argument("--workers", type=_positive, default=os.cpu_count() or 1, help="processes (default: all cores)")
    e.add_argument("--repeats", type=_positive, default=1, help="deep evaluation: repeat the match on this many deal "
                   "sets (seeds SEED, SEED+1, ...) and report mean and sd of the win rate (e.g. 20 x --games 1000)")
    e.add_argument("--json", action="store_true")
    e.add_argument("--out", help="also write the JSON result here")
    e.set_defaults(func=cmd_evaluate)

    du = sub.add_parser("duel", help="Dou Dizhu, DouZero's protocol: A as landlord against two B, then B against "
                        "two A, on every deal; WP and ADP per side and role")
    du.add_argument("--game", default="doudizhu", choices=("doudizhu",))
    du.add_argument("--rules", default="douzero",
                    help="default douzero; a fixed-landlord preset (douzero, rlcard) plays DouZero's protocol; a "
                         "preset with an auction (standard, openspiel, online) plays the whole game: A against two "
                         "B, every deck from every seat, ADP and WP by the role the auction gave, bid rate and stake")
    du.add_argument("--agent", required=True, help="side A (Dou Dizhu agents, as for evaluate)")
    du.add_argument("--opponent", required=True, help="side B")
    du.add_argument("--deals", type=_positive, default=1000, help="deals, each played both ways (default 1000)")
    du.add_argument("--seed", type=_seed, default=0, help="seed of the deals and of every random choice")
    du.add_argument("--repeats", type=_positive, default=1, help="deep evaluation: this many deal sets (seeds SEED, "
                    "SEED+1, ...), mean and sd of WP and ADP over them (e.g. 20 x --deals 1000)")
    du.add_argument("--workers", type=_positive, default=os.cpu_count() or 1, help="processes (default: all cores)")
    du.add_argument("--json", action="store_true")
    du.add_argument("--out", help="also write the JSON result here")
    du.set_defaults(func=cmd_duel)

    rr = sub.add_parser("roundrobin", help="Dou Dizhu duels between every pair: WP and ADP matrices by role, rating")
    rr.add_argument("--game", default="doudizhu", choices=("doudizhu",))
    rr.add_argument("--rules", default="douzero", help="a fixed-landlord preset (default douzero; rlcard)")
    rr.add_argument("--participants", required=True,
                    help="comma-separated agents, label=spec allowed (e.g. heur=heuristic,rl=rlcard-rule)")
    rr.add_argument("--deals", type=_positive, default=1000,
                    help="deals per pair, each played both ways (default 1000)")
    rr.add_argument("--seed", type=_seed, default=0)
    rr.add_argument("--workers", type=_positive, default=os.cpu_count() or 1)
    rr.add_argument("--resamples", type=_positive, default=200, help="bootstrap refits for the ratings' 95%% intervals")
    rr.add_argument("--out", help="folder for roundrobin.json and roundrobin.png (the matrices' heatmaps)")
    rr.add_argument("--force", action="store_true", help="overwrite the folder's roundrobin.json and .png")
    rr.add_argument("--json", action="store_true")
    rr.set_defaults(func=cmd_roundrobin)

    bh = sub.add_parser("behaviour", help="the interpretability window for one agent (Big 2: leads, passes, 2s; "
                        "Dou Dizhu: bids, bombs, cooperation)")
    bh.add_argument("--agent", required=True, help=f"agent ({agents})")
    bh.add_argument("--game", default="big2", choices=("big2", "doudizhu"), help="the game (default big2)")
    bh.add_argument("--opponents", default=None,
                    help="comma-separated; the agent plays --games games against a copy of each in every other seat "
                    "(default: Big 2 random,greedy,heuristic; Dou Dizhu its baselines)")
    bh.add_argument("--rules", default=None, help=f"rules preset ({presets}); default paper, or "
                    "charlesworth when the public agent plays; Dou Dizhu: standard")
    bh.add_argument("--games", type=_positive, default=None,
                    help="games per opponent, a multiple of the seats (default Big 2 400, Dou Dizhu 300)")
    bh.add_argument("--seed", type=_seed, default=0)
    bh.add_argument("--workers", type=_positive, default=os.cpu_count() or 1)
    bh.add_argument("--json", action="store_true")
    bh.add_argument("--out", help="also write the JSON result here")
    bh.set_defaults(func=cmd_behaviour)

    sd = sub.add_parser("seeds", help="write a versioned file of evaluation deal seeds")
    sd.add_argument("--deals", type=_positive, default=1000)
    sd.add_argument("--seed", type=_seed, default=0)
    sd.add_argument("--purpose", choices=list(PURPOSES), default="evaluation",
                    help="whose deals: each purpose draws its own from a seed (default evaluation: "
                         "--seed 20260 --deals 1000 is data/eval_seeds.json)")
    sd.add_argument("--json", action="store_true")
    sd.add_argument("--out", help="write the JSON here")
    sd.set_defaults(func=cmd_seeds)

    cv = sub.add_parser("convert-charlesworth",
                        help="convert the public agent's joblib weights to .npz without unpickling code")
    cv.add_argument("file", help="the published joblib file (modelParameters136500)")
    cv.add_argument("out", help="the .npz to write")
    cv.set_defaults(func=cmd_convert)

    tr = sub.add_parser("train", help="train a learner by self-play (checkpoint + per-epoch CSV)")
    tr.add_argument("--algo", required=True,
                    help="ppo, mcq, sarsa, qlearning, dqn or dmc (Deep Monte-Carlo, DouZero's)")
    tr.add_argument("--game", default=None, choices=games, help="the game (default big2)")
    tr.add_argument("--rules", default=None, help=f"rules preset ({presets}); default: the game's (paper, standard)")
    tr.add_argument("--epochs", type=_positive, default=None, help="default 100")
    tr.add_argument("--games-per-epoch", type=_positive, default=None, help="default 200")
    tr.add_argument("--seed", type=_seed, default=None)
    tr.add_argument("--curriculum", default=None,
                    help="self_play, checkpoint_self_play, fixed_opponents or opponent_pool")
    tr.add_argument("--eval-every", type=_nonnegative, default=None, help="epochs between evaluations (default 5)")
    tr.add_argument("--eval-games", type=_positive, default=None, help="games per evaluation match (default 400)")
    tr.add_argument("--eval-workers", type=_positive, default=None)
    tr.add_argument("--actors", type=_positive, default=None,
                    help="processes that play the self-play games (default 1: in the training process)")
    tr.add_argument("--actor-cluster", default=None, metavar="ADDRESS",
                    help="a Dask scheduler (tls://HOST:PORT, its TLS files in CLIMBRL_DASK_TLS) whose workers play "
                         "the actors' games")
    tr.add_argument("--device", default=None, choices=("auto", "cpu", "cuda"),
                    help="where the updates and the policy's forward passes run (default cpu; auto: cuda if any)")
    tr.add_argument("--config", help="YAML mapping of train fields (e.g. Optuna's best parameters)")
    tr.add_argument("--set", action="append", metavar="KEY=VALUE", help="any train field, repeatable")
    tr.add_argument("--out", help="output folder (default runs/ALGO-seedS)")
    tr.add_argument("--resume", action="store_true", help="continue from the folder's checkpoint")
    tr.add_argument("--time-limit", type=_duration(24), default=None, metavar="HOURS",
                    help="train one leg of at most this many hours of wall time (up to 24), stopping after a whole "
                         "epoch; --resume continues it (every leg in the folder's legs.json)")
    tr.add_argument("--no-progress", action="store_true")
    tr.add_argument("--json", action="store_true")
    tr.set_defaults(func=cmd_train)

    im = sub.add_parser("imitate", help="behaviour cloning of a teacher agent: into an action-head network "
                        "(Big 2: a base policy the rollout search can play, own=base) or a learner's network "
                        "(a run's init_policy)")
    im.add_argument("--game", choices=("big2", "doudizhu"), default="big2")
    im.add_argument("--encoder", default=None,
                    help="the student's encoder (default: big2-charlesworth; Dou Dizhu: doudizhu)")
    im.add_argument("--teacher", default=None,
                    help="the agent that plays every seat (default search:S=16,K=20; Dou Dizhu: heuristic)")
    im.add_argument("--rules", default=None,
                    help="rules preset (default charlesworth, 5-card straights only; Dou Dizhu: douzero)")
    im.add_argument("--games", type=_positive, default=None, help="the teacher's games (default 2000)")
    im.add_argument("--seed", type=_seed, default=None)
    im.add_argument("--epochs", type=_positive, default=None, help="passes over the decisions (default 4)")
    im.add_argument("--hidden", type=_positive, default=None,
                    help=f"first layer's width (default 512; the second: half; at most {MAX_WIDTH})")
    im.add_argument("--lr", type=float, default=None)
    im.add_argument("--workers", type=_positive, default=None,
                    help="processes that play the teacher's games (default 2)")
    im.add_argument("--out", help="output folder (default runs/imitation-seedS)")
    im.add_argument("--json", action="store_true")
    im.set_defaults(func=cmd_imitate)

    tu = sub.add_parser("tune", help="Optuna search of a learner's hyperparameters (resumable)")
    tu.add_argument("--algo", default=None, help="learner (default: params.yaml tune.algo)")
    tu.add_argument("--trials", type=_nonnegative, default=None, help="total trials wanted (finished ones are kept)")
    tu.add_argument("--storage", default=None, help="Optuna storage URL (default: the environment's "
                    "CLIMBRL_TUNE_STORAGE, which keeps a password off the command line, else params.yaml's "
                    "sqlite:///optuna.db)")
    tu.add_argument("--study", default=None, help="study name")
    tu.add_argument("--params", default="params.yaml",
                    help="params file (its game and rules; its tune section: budget, seed, opponent)")
    tu.add_argument("--best-out", default=None, help="YAML for the best parameters (default reports/tune/)")
    tu.add_argument("--no-track", action="store_true", help="do not log trials to MLflow")
    tu.add_argument("--heartbeat", type=_positive, default=60,
                    help="shared storage (postgresql://...): seconds between a running trial's heartbeats (default 60)")
    tu.add_argument("--grace", type=_nonnegative, default=None,
                    help="shared storage: a trial without a heartbeat for this long is failed and retried "
                         "(default twice --heartbeat)")
    tu.add_argument("--retries", type=_nonnegative, default=3,
                    help="shared storage: retries of a failed trial (default 3)")
    tu.add_argument("--json", action="store_true")
    tu.set_defaults(func=cmd_tune)

    to = sub.add_parser("tournament", help="round-robin on shared deals: ratings, pairwise matrix, cycles")
    to.add_argument("--game", default="big2", choices=games, help="the game (default big2)")
    to.add_argument("--participants", default=None,
                    help="comma-separated agents (label=spec allowed, e.g. ppo=checkpoint:runs/ppo/policy.pt); "
                    "Big 2 default: random,greedy,heuristic,aggressive,conservative")
    to.add_argument("--deals", type=_positive, default=TOURNAMENT_DEALS,
                    help=f"deals (default {TOURNAMENT_DEALS}), each played once by every group of players, in one "
                    "of its seatings, which cycle with the deal (Big 2 24, Dou Dizhu 6: a multiple balances the "
                    "seats); the intervals are clustered on the deals")
    to.add_argument("--rules", default=None)
    to.add_argument("--seed", type=_seed, default=0)
    to.add_argument("--workers", type=_positive, default=os.cpu_count() or 1)
    to.add_argument("--resamples", type=_positive, default=200,
                    help="bootstrap refits (deals, then games) for the ratings' 95%% intervals")
    to.add_argument("--out", help="folder for tournament.json and the pairwise heatmap")
    to.add_argument("--force", action="store_true", help="overwrite the folder's tournament.json and heatmap")
    to.add_argument("--json", action="store_true")
    to.set_defaults(func=cmd_tournament)

    pl = sub.add_parser("play", help="play a game in the terminal against the agents (Dou Dizhu: the auction too)")
    pl.add_argument("--game", default="big2", choices=("big2", "doudizhu"), help="the game (default big2)")
    pl.add_argument("--rules", default=None, help=f"rules preset ({presets}); default paper (doudizhu: standard, "
                    "which has the auction)")
    pl.add_argument("--opponents", default="heuristic",
                    help="one agent (copies in every other seat) or one per other seat, comma-separated")
    pl.add_argument("--seat", type=int, default=0)
    pl.add_argument("--seed", type=_seed, default=0, help="the deal")
    pl.add_argument("--hints", default=None, help="show this agent's probabilities for your moves")
    pl.set_defaults(func=cmd_play)

    sv = sub.add_parser("serve", help="play the lab's agents in a browser: a local web application")
    sv.add_argument("--host", default="127.0.0.1",
                    help="the address to bind (default 127.0.0.1, this machine only; the application has no "
                         "login, so another address is refused: reach it from elsewhere through an SSH tunnel)")
    sv.add_argument("--port", type=_port, default=8765, help="the port (default 8765; 0: any free one)")
    sv.add_argument("--root", default=".", help="the project folder whose runs/ lists the trained agents")
    sv.add_argument("--records", default=None, help="where finished games are saved (default ROOT/runs/played)")
    sv.add_argument("--pause", type=_duration(10, zero=True), default=None,
                    help="seconds the page waits after each agent's play, so plays appear one at a time "
                         "(default 0.6; 0 to 10)")
    sv.set_defaults(func=cmd_serve)

    bl = sub.add_parser("baselines", help="the baseline table (baselines.json and .md in --out; the study's "
                        "committed one: python -m pipeline baselines)")
    bl.add_argument("--game", default="big2", choices=games, help="the game (default big2)")
    bl.add_argument("--rules", default=None,
                    help="the rule agents' rules preset (default: the game's, Big 2 paper; the public agent plays "
                    "its own, charlesworth)")
    bl.add_argument("--games", type=_positive, default=1000,
                    help="games per match: a multiple of the games of a deal (Big 2 4, one per seat; Dou Dizhu "
                         "under a fixed landlord 2, DouZero's duel; under an auction 3)")
    bl.add_argument("--seed", type=_seed, default=0)
    bl.add_argument("--workers", type=_positive, default=os.cpu_count() or 1)
    bl.add_argument("--no-public-agent", action="store_true", help="skip the charlesworth agent (Big 2 only)")
    bl.add_argument("--out", default="runs/baselines", help="output folder (default runs/baselines)")
    bl.add_argument("--force", action="store_true", help="overwrite the folder's baselines.json and .md")
    bl.set_defaults(func=cmd_baselines)

    b = sub.add_parser("bench", help="throughput benchmarks")
    bsub = b.add_subparsers(dest="what", required=True)
    be = bsub.add_parser("engine", help="random-play games and decisions per second on one core")
    be.add_argument("--game", default="big2", choices=("big2", "doudizhu"))
    be.add_argument("--rules", default=None, help=f"rules preset ({presets}; doudizhu: standard, ...)")
    be.add_argument("--games", type=_positive, default=2000)
    be.add_argument("--seed", type=_seed, default=0)
    be.add_argument("--all-cores", action="store_true", help="do not pin the process to one core")
    be.add_argument("--json", action="store_true")
    be.add_argument("--out", help="also write the JSON result here")
    be.set_defaults(func=cmd_bench)

    s = sub.add_parser("simulate", help="random-play statistics (seat win rates, game length)")
    s.add_argument("--rules", default="paper", help=f"rules preset ({presets})")
    s.add_argument("--games", type=_positive, default=1000)
    s.add_argument("--seed", type=_seed, default=0)
    s.add_argument("--json", action="store_true")
    s.add_argument("--out", help="also write the JSON result here")
    s.set_defaults(func=cmd_simulate)
    return p


# Each command's output options, checked before it does any work: attribute -> (flag, a folder?).
_OUTPUTS: dict[str, dict[str, tuple[str, bool]]] = {
    **{c: {"out": ("--out", False)} for c in ("evaluate", "duel", "behaviour", "seeds", "bench", "simulate")},
    **{c: {"out": ("--out", True)} for c in ("tournament", "roundrobin", "baselines", "train", "imitate")},
    "tune": {"best_out": ("--best-out", False)},
    "convert-charlesworth": {"out": ("OUT", False)},
}


def _check_outputs(args: argparse.Namespace) -> None:
    for attr, (flag, folder) in _OUTPUTS.get(args.command, {}).items():
        if getattr(args, attr):
            check_output(getattr(args, attr), folder=folder, flag=flag)


def main(argv: list[str] | None = None) -> int:
    from climbrl.environment import environment_defaults

    environment_defaults()  # the program starts here: MLflow's telemetry off
    args = build_parser().parse_args(argv)
    try:
        _check_outputs(args)
        args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, inside the handler, not at exit
    except BrokenPipeError:
        # the reader left (``climbrl moves ... | head -1``): what it wanted was written; stdout is
        # pointed at /dev/null so that Python's flush at exit does not fail again
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print(f"climbrl {args.command}: interrupted" + (
            "; what was checkpointed is kept (--resume continues it)" if args.command == "train" else ""),
            file=sys.stderr)
        return 130
    except (CliError, CardError, RulesError, ConfigError, ParamsError, ValueError, OSError,
            pickle.UnpicklingError) as e:
        print(f"climbrl {args.command}: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
