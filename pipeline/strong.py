"""The strong learners beside the study (issue 25): ``make strong`` runs ``dvc repro
strong/dvc.yaml`` from ``strong/params.yaml``, one training per game, far past the study's budget.

- ``train GAME`` (``python -m pipeline.strong train GAME``): the game's learner (DouZero's Deep
  Monte-Carlo by default, :mod:`climbrl.learn.dmc`) with the params' settings, into
  ``runs/strong/GAME``. Every epoch writes its checkpoint, so a killed run continues from its last
  finished epoch when the stage runs again (the folder is a persistent DVC output; a run whose
  settings changed starts over, the old one moved aside to ``runs/strong/.previous-<UTC time>/``,
  once the new start is checked). Logged live to MLflow (``tracking`` in the params). A copy of the
  policy is kept every ``train.keep_policy_every`` epochs: the points of the learning curve.
- ``curve GAME``: every kept policy and the final one against each ``curve.opponents`` on the
  same fresh deals (purpose ``deep``, ``curve.seed``), judged as the game is judged
  (:func:`climbrl.evaluate.versus.versus`: Dou Dizhu by role, WP and ADP; Big 2 from every seat,
  win rate and points), placed at the **CPU-hours** the training had spent when the policy was
  kept (:func:`cpu_seconds`: the CPU time of the training process and its actors; the in-training
  evaluations are not counted). ``reports/strong/GAME/curve.json``.
- ``final GAME``: the final policy (no choice among the kept ones, so no validation deals are
  needed) against each ``evaluate.opponents`` on the study's versioned evaluation deals of the
  game (``evaluate.deal_set``), ``reports/strong/GAME/final.json``.
- A run is named by its key in ``games`` (the game itself, or any name whose ``train.game`` says
  the game: ``doudizhu-warm``). A run with an ``imitate`` section (the fields of
  :class:`climbrl.learn.imitation.ImitationConfig`) starts from behaviour cloning: ``train`` first
  clones the teacher into ``runs/strong/RUN/imitation`` (once; redone, and the run started over,
  when the section changes), then trains from that student's weights (``init_policy``). The
  cloning's CPU time counts in the curve's CPU-hours, and the student is the curve's first point
  (epoch 0).
- ``report``: ``reports/strong/report.md`` and one figure per game (``figures/GAME.png``), the
  curve against CPU-hours with each target of the issue drawn in.
- An opponent that needs data from outside the repository (the public Big 2 agent's weights,
  ``../shared/external``) is not played where the data is missing: the curve and the final
  evaluation record why under ``not_run``, the report says so, and everything else runs.
- Big 2's points per game (the rules' score: under ``charlesworth`` each loser minus its cards
  left, the winner the sum) carry a 95% Student t interval over the deals (each deal's mean over
  its four seatings is one draw: the four games of a deal share its cards), computed from the same
  games replayed game by game (:func:`climbrl.evaluate.match.relative_returns`).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pipeline  # noqa: F401  (environment defaults)
from pipeline import params_io
from pipeline.params_io import ParamsError
from pipeline.previous import move_aside

PARAMS = Path(__file__).resolve().parents[1] / "strong" / "params.yaml"
RUNS = Path("runs/strong")
REPORTS = Path("reports/strong")
SECTIONS = ("train", "curve", "evaluate")
OPTIONAL = ("imitate", "continue")
MATCHES = {"curve": ("opponents", "deals", "seed"), "evaluate": ("opponents", "deals", "deal_set")}
"""The keys of the sections that play matches (all required, no other)."""
IMITATION = "imitation"
START = "start.json"


class StrongError(ParamsError):
    """Params or inputs the strong pipeline cannot use; ``main`` prints it and exits 2."""


@dataclass(frozen=True)
class Target:
    """One target of the issue: ``measure`` (``win_rate``, or ``mean_reward``: Big 2's points per game)
    of the run's final evaluation against ``opponent`` in ``role``, at least ``at_least``, under the
    rules ``rules`` (any rules when empty)."""

    opponent: str
    role: str
    at_least: float
    what: str
    measure: str = "win_rate"
    rules: str = ""


TARGETS: dict[str, list[Target]] = {
    "doudizhu": [Target("rlcard-rule", "landlord", 0.80, "issue 25: >= 0.80 as landlord (DouZero 0.87)"),
                 Target("rlcard-rule", "peasants", 0.85, "issue 25: >= 0.85 as peasants (DouZero 0.91)"),
                 Target("heuristic", "landlord", 0.50, "issue 25: above 0.50 against the heuristic"),
                 Target("heuristic", "peasants", 0.50, "issue 25: above 0.50 against the heuristic")],
    "big2": [Target("heuristic", "all", 0.40, "issue 25: >= 0.40 against three heuristic players (PPO 0.311)",
                    rules="paper"),
             Target("charlesworth", "all", 0.0, "issue 25: points per game above 0 against three public agents "
                    "(the DMC anchor +1.84)", measure="mean_reward", rules="charlesworth")],
}
"""The issue's targets, drawn on the curve (win rates); the report calls one met when the final
evaluation's whole 95% interval reaches it, and says so when only the point estimate does."""


def targets_of(game: str, rules: str) -> list[Target]:
    """The issue's targets that apply to a run of ``game`` under ``rules``."""
    return [t for t in TARGETS.get(game, []) if t.rules in ("", rules)]


def _verdict(x: dict[str, Any], t: Target) -> str:
    value, low = x.get(t.measure), x.get(f"{t.measure}_low")
    if value is None:
        return "not measured"
    if low is not None and low >= t.at_least and (t.measure == "win_rate" or low > t.at_least):
        return "met"
    return "point estimate only (the interval includes the target)" if value >= t.at_least else "missed"


def _opponents(names: list[str]) -> tuple[list[str], dict[str, str]]:
    """The opponents that can be played here, and why each other one cannot (outside data missing)."""
    from pipeline.external import external_missing

    why = {o: r for o in names if (r := external_missing(o))}
    return [o for o in names if o not in why], why


def with_points_interval(x: dict[str, Any], agent: str, opponent: str, game: str, rules: str, deals: int,
                         seed: int, workers: int, purpose: str | None = None,
                         seeds: list[int] | None = None) -> dict[str, Any]:
    """A free-for-all match's summary ``x`` (:func:`~climbrl.evaluate.versus.versus`'s ``all``)
    with its points per game's 95% interval over the deals, from the same games replayed game by
    game; the replay must give the summary's mean (the same games), else ``RuntimeError``."""
    from climbrl.evaluate.match import relative_returns
    from climbrl.evaluate.stats import mean_summary
    from climbrl.games.registry import num_players

    n = num_players(game)
    rows = relative_returns(agent, [opponent], rules=rules, games=deals * n, seed=seed, workers=workers,
                            seeds=None if seeds is None else seeds[:deals], game=game, purpose=purpose)
    per_deal = [sum(r[0] for r in rows[k:k + n]) / n for k in range(0, len(rows), n)]
    m = mean_summary(per_deal)
    if abs(m["mean"] - x["mean_reward"]) > 1e-9 * max(1.0, abs(m["mean"])):
        raise RuntimeError(f"{agent} against {opponent}: the replay's points {m['mean']} are not the match's "
                           f"{x['mean_reward']}")
    return {**x, "mean_reward_low": m["low"], "mean_reward_high": m["high"], "mean_reward_sd_deals": m["sd"]}


def load_strong_params(path: Path = PARAMS) -> dict[str, dict[str, Any]]:
    """``{run: {train, curve, evaluate}}``; :class:`StrongError` naming the file and key on
    anything else (the training settings are checked by :func:`climbrl.config.train_config`, the
    opponents by building them, outside data aside)."""
    data = params_io.read(path)
    games = data.get("games") if isinstance(data, dict) else None
    if not isinstance(games, dict) or not games:
        raise StrongError("expected a 'games' mapping of game name to its train, curve and evaluate", path)
    for game, spec in games.items():
        params_io.name(game, path, "games")  # the run's folder: runs/strong/RUN
        if not isinstance(spec, dict) or not set(SECTIONS) <= set(spec) <= set(SECTIONS + OPTIONAL):
            raise StrongError(f"games.{game} must hold {', '.join(SECTIONS)} (and optionally "
                              f"{', '.join(OPTIONAL)})", path)
        if not isinstance(spec["train"], dict) or spec["train"].get("game", game) not in ("big2", "doudizhu"):
            raise StrongError(f"games.{game}.train.game must name a game (big2, doudizhu), or the run's "
                              "name must be one", path)
        try:
            config(spec, game)  # ConfigError names the field
            if "imitate" in spec:
                imitation_config(spec, game)  # ImitationError names the field
        except (TypeError, ValueError) as e:
            raise StrongError(str(e), path, f"games.{game}") from None
        if "continue" in spec:
            _check_continue(spec, game, path)
        _check_matches(spec, game, path)
    return games


def _check_matches(spec: dict[str, Any], run: str, path: Path) -> None:
    """The curve's and the final evaluation's sections (:data:`MATCHES`): real integers within
    bounds (``deals: -1`` or ``seed: true`` would be read as something else), opponents that this
    game can build (one that needs outside data is checked where it is played), a deal set named."""
    for section, keys in MATCHES.items():
        where = f"games.{run}.{section}"
        sec = params_io.mapping(spec[section], path, where, f"a mapping of {', '.join(keys)}")
        missing = [k for k in keys if k not in sec]
        if missing:
            raise StrongError(f"{where} needs {', '.join(missing)}", path)
        unknown = sorted(map(str, set(sec) - set(keys)))
        if unknown:
            raise StrongError(f"unknown {', '.join(unknown)} (it holds {', '.join(keys)})", path, where)
        params_io.integer(sec["deals"], path, f"{where}.deals", 1, params_io.DEALS_MAX)
        _check_opponents(sec["opponents"], game_of(spec, run), path, f"{where}.opponents")
    params_io.integer(spec["curve"]["seed"], path, f"games.{run}.curve.seed", 0, params_io.SEED_MAX)
    deal_set = spec["evaluate"]["deal_set"]
    if not isinstance(deal_set, str) or not deal_set:
        raise StrongError(f"must be the path of a deal set, got {deal_set!r}", path, f"games.{run}.evaluate.deal_set")


def _check_opponents(value: Any, game: str, path: Path, key: str) -> None:
    from climbrl.learn.specs import make_agent
    from pipeline.external import needs_external

    if not isinstance(value, list) or not value or not all(isinstance(o, str) and o for o in value):
        raise StrongError(f"must be a list of agent specs, got {value!r}", path, key)
    # built here but for those that need outside data or a policy file (a run's: it may not exist yet)
    for opp in dict.fromkeys(o for o in value if not needs_external(o) and "checkpoint:" not in o):
        try:
            make_agent(opp, game)
        except (TypeError, ValueError) as e:
            raise StrongError(params_io.one_line(e), path, key) from None


def game_of(spec: dict[str, Any], run: str) -> str:
    """The game a run plays: its ``train.game``, else its name."""
    return str(spec["train"].get("game", run))


def config(spec: dict[str, Any], run: str, runs: Path = RUNS) -> Any:
    """The run's training config (``algo`` defaults to dmc); a run that starts from behaviour
    cloning starts from the student in its folder (``init_policy``)."""
    from climbrl.config import train_config

    train = dict(spec["train"])
    if "imitate" in spec:
        train["init_policy"] = str(runs / run / IMITATION / "policy.pt")
    if "continue" in spec:
        train["init_policy"] = str(spec["continue"]["policy"])
    return train_config(train.pop("algo", "dmc"), **{**train, "game": game_of(spec, run)})


def _check_continue(spec: dict[str, Any], run: str, path: Path) -> None:
    """A ``continue`` section names the policy the run starts from and the curve of the run that
    made it (whose CPU-hours this run's points are added to); not both it and ``imitate``."""
    c = spec["continue"]
    if "imitate" in spec:
        raise StrongError(f"games.{run} cannot both imitate and continue another run", path)
    if not isinstance(c, dict) or set(c) != {"policy", "curve"}:
        raise StrongError(f"games.{run}.continue must hold policy (the weights it starts from) and "
                          "curve (the curve.json of the run that made them), nothing else", path)
    for k in ("policy", "curve"):
        if not isinstance(c[k], str) or not c[k]:
            raise StrongError(f"must be a file's path, got {c[k]!r}", path, f"games.{run}.continue.{k}")


def _check_start(cfg: Any, run: str) -> None:
    """The weights a ``continue`` run starts from (``continue.policy``), checked as its training
    will load them (a readable policy of this game, of the network this config builds) before
    anything in the run's folder is touched: a bad start loses nothing."""
    from climbrl.learn.registry import make_learner

    try:
        make_learner(cfg)
    except (OSError, ValueError) as e:
        raise StrongError(params_io.one_line(e), key=f"games.{run}.continue.policy") from None


def imitation_config(spec: dict[str, Any], run: str) -> Any:
    """The run's behaviour cloning (:class:`~climbrl.learn.imitation.ImitationConfig`): the
    ``imitate`` section, in the run's game and rules, with the learner's width; Dou Dizhu's
    student is the learners' network (encoder ``doudizhu``)."""
    from climbrl.learn.imitation import ImitationConfig

    game, train = game_of(spec, run), spec["train"]
    encoder = {"doudizhu": "doudizhu", "big2": "big2"}[game]
    return ImitationConfig(**{"encoder": encoder, "hidden": train.get("hidden", 512), **spec["imitate"],
                              "game": game, "rules": train.get("rules", "")})


def _clone(spec: dict[str, Any], run: str, runs: Path) -> None:
    """Behaviour cloning into the run's folder, unless it is there with these settings; other
    settings start the whole run over (its training started from the other student)."""
    from dataclasses import asdict

    from climbrl.learn.imitation import imitate

    cfg = imitation_config(spec, run)
    out = runs / run
    done = out / IMITATION / "imitation.json"
    if done.exists() and (out / IMITATION / "policy.pt").exists():
        def same(c: dict[str, Any]) -> dict[str, Any]:  # the worker count changes no number (tested)
            return {k: v for k, v in c.items() if k != "workers"}

        if same(json.loads(done.read_text()).get("config", {})) == same(json.loads(json.dumps(asdict(cfg)))):
            return
        move_aside(out, "its behaviour cloning was made with other settings")
    elif out.exists() and any(out.iterdir()):
        move_aside(out, "it holds no finished behaviour cloning")
    imitate(cfg, out / IMITATION)


def train_game(game: str, params: dict[str, dict[str, Any]], runs: Path = RUNS, track: bool = True,
               tracking: dict[str, str] | None = None, time_limit: float | None = None) -> dict[str, Any]:
    """Train (or continue) the game's strong learner; a folder trained with other settings is
    started over, so the stage's output always matches its params. ``time_limit``: seconds for
    this leg of a run trained in legs (:mod:`pipeline.legs`; it stops after a whole epoch). Nothing is deleted: the new
    start (``continue.policy``) is checked first, and a run that starts over is moved aside
    (:func:`pipeline.previous.move_aside`); an unreadable checkpoint is a
    :class:`~climbrl.learn.checkpoint.CheckpointError` and the folder is left as it is."""
    from climbrl.learn.train import CHECKPOINT, METRICS, POLICY
    from climbrl.training import train

    spec, out = params[game], runs / game
    cfg = config(spec, game, runs)
    if "continue" in spec:
        _check_start(cfg, game)
    if "imitate" in spec:
        _clone(spec, game, runs)
    why = _stale(cfg, spec, out)
    if why:  # the behaviour cloning, made with these settings, stays
        move_aside(out, f"trained with other settings ({why})", keep=(IMITATION,) if "imitate" in spec else ())
    resume = (out / CHECKPOINT).exists()
    _record_start(spec, out, fresh=not resume)
    if not track:
        return train(cfg, out, resume=resume, progress=False, time_limit=time_limit)
    from climbrl import track as tr

    t = tracking or {"tracking_uri": "sqlite:///mlflow.db", "experiment": "climbrl-strong"}
    tr.configure(t["tracking_uri"], t["experiment"])
    with tr.training_run(cfg.to_dict(), out, artifacts=[out / POLICY, out / METRICS], resuming=resume,
                         stage="strong-train") as run:
        res = train(cfg, out, resume=resume, progress=False, on_epoch=run.on_epoch, time_limit=time_limit)
        run.complete(res["history"])
    return res


def _stale(cfg: Any, spec: dict[str, Any], out: Path) -> str | None:
    """Why the run's folder is not this config's training to continue (None: it is, or it is
    empty): another config in its checkpoint, other start weights, or a behaviour cloning from
    when the run had one."""
    from climbrl.learn import checkpoint as ckpt
    from climbrl.learn.train import CHECKPOINT

    why = []
    if "imitate" not in spec and (out / IMITATION).exists():
        why.append("it started from a behaviour cloning this run no longer makes")
    if (out / CHECKPOINT).exists():
        why += ckpt.resume_conflicts(cfg, ckpt.load(out / CHECKPOINT))  # CheckpointError: left for a person
        why += _start_conflicts(spec, out)
    return "; ".join(map(str, why)) or None


def _start_conflicts(spec: dict[str, Any], out: Path) -> list[str]:
    """A continued run's folder started from other weights than ``continue.policy`` holds now (a
    policy shipped again under the same path): its training is not this run's."""
    from climbrl.track import sha256_file

    start = out / START
    if "continue" not in spec or not start.exists():
        return []
    was = json.loads(start.read_text()).get("sha256")
    now = sha256_file(Path(spec["continue"]["policy"]))
    return [] if was == now else [f"it started from weights of SHA-256 {was}, {spec['continue']['policy']} is {now}"]


def _record_start(spec: dict[str, Any], out: Path, fresh: bool) -> None:
    """Write which weights a continued run starts from (``start.json``): for a fresh folder, and
    for one trained before the file existed."""
    from climbrl.track import sha256_file

    if "continue" in spec and (fresh or not (out / START).exists()):
        out.mkdir(parents=True, exist_ok=True)
        policy = Path(spec["continue"]["policy"])
        (out / START).write_text(json.dumps({"policy": str(policy), "sha256": sha256_file(policy)}, indent=1) + "\n")


def cpu_seconds(history: list[dict[str, Any]]) -> list[float]:
    """The CPU seconds the training had spent by the end of each epoch: the training process's and
    its actors' (``cpu_seconds`` of each epoch's row; the in-training evaluations are not counted:
    they measure, they do not train). CPU time, not wall time: other work on the machine does not
    inflate it."""
    return [float(x) for x in itertools.accumulate(r.get("cpu_seconds", r["play_seconds"] + r["update_seconds"])
                                                   for r in history)]  # rows from before the field: wall time


def curve(game: str, params: dict[str, dict[str, Any]], runs: Path = RUNS, reports: Path = REPORTS,
          workers: int = 2) -> dict[str, Any]:
    """Every kept policy and the final one against the curve's opponents, on the same deals."""
    from climbrl.evaluate.versus import versus
    from climbrl.learn import checkpoint as ckpt
    from climbrl.learn.train import CHECKPOINT, POLICY, SNAPSHOTS

    spec, cfg = params[game], config(params[game], game, runs)
    out = runs / game
    if not (out / POLICY).exists():
        raise FileNotFoundError(f"no trained policy in {out}: run python -m pipeline.strong train {game} first")
    history = ckpt.load(out / CHECKPOINT)["history"]
    imitation = _imitation_summary(game, runs) if "imitate" in spec else None
    before = continued_points(spec, game, cfg)
    start = before[-1] if before else {"epoch": 0, "games": 0, "decisions": 0, "cpu_hours": 0.0}
    # CPU seconds spent before this training's first epoch: the cloning's, or the continued run's
    spent_before = (imitation["cpu_s"] if imitation else 0.0) + start["cpu_hours"] * 3600
    spent = [spent_before + s for s in cpu_seconds(history)]
    points = sorted(out.glob(f"{SNAPSHOTS}/epoch*.pt"), key=lambda p: int(p.stem[5:]))
    policies = [(int(p.stem[5:]), p) for p in points]
    if not policies or policies[-1][0] != len(history):
        policies.append((len(history), out / POLICY))
    if "imitate" in spec:  # the student the training started from
        policies.insert(0, (0, out / IMITATION / POLICY))
    opponents, not_run = _opponents(list(spec["curve"]["opponents"]))
    rows = list(before)
    for epoch, path in policies:
        row: dict[str, Any] = {"epoch": start["epoch"] + epoch,
                               "games": start["games"] + sum(r["games"] for r in history[:epoch]),
                               "decisions": start["decisions"] + sum(r["decisions"] for r in history[:epoch]),
                               "cpu_hours": (spent[epoch - 1] if epoch else spent_before) / 3600}
        if before:  # a continued curve names each point's run
            row["run"] = game
        for opp in opponents:
            row[opp] = versus(f"checkpoint:{path}", opp, cfg.game, cfg.rules, spec["curve"]["deals"],
                              spec["curve"]["seed"], workers=workers, purpose="deep")
        rows.append(row)
    res = {"game": cfg.game, "run": game, "rules": cfg.rules, "algo": cfg.algo, "deals": spec["curve"]["deals"],
           "seed": spec["curve"]["seed"], "actors": cfg.actors, "points": rows,
           "imitation": imitation, "not_run": not_run}
    if before:
        res["continued"] = {**spec["continue"], "points": len(before)}
    (reports / game).mkdir(parents=True, exist_ok=True)
    (reports / game / "curve.json").write_text(json.dumps(res, indent=2))
    return res


def continued_points(spec: dict[str, Any], run: str, cfg: Any) -> list[dict[str, Any]]:
    """The points of the curve a ``continue`` run goes on from (each marked with its ``run``): the
    first points of this run's curve, whose last one is the policy this run starts from, at the
    CPU-hours this run's own are added to. Empty without ``continue``. :class:`StrongError` when
    that curve is missing, belongs to another game or rules, was measured on other deals or
    against other opponents (its points and this run's would not be comparable), or when the
    policy's manifest beside it (``model.json``, :mod:`pipeline.models`) names another run or file."""
    if "continue" not in spec:
        return []
    path, policy = Path(spec["continue"]["curve"]), Path(spec["continue"]["policy"])
    where = f"games.{run}.continue"
    if not path.exists():
        raise StrongError(f"{where}.curve: {path} missing (the curve of the run it continues: make strong)")
    base = json.loads(path.read_text())
    want = {"game": cfg.game, "rules": cfg.rules, "deals": spec["curve"]["deals"], "seed": spec["curve"]["seed"],
            "opponents": sorted(spec["curve"]["opponents"])}
    measured = [o for o, x in base["points"][0].items() if isinstance(x, dict)] + list(base.get("not_run", {}))
    have = {**{k: base.get(k) for k in ("game", "rules", "deals", "seed")}, "opponents": sorted(measured)}
    if have != want:
        raise StrongError(f"{where}.curve: {path} was measured with {have}; this run's curve asks {want}: the "
                          "points would not be comparable")
    manifest = policy.parent / "model.json"
    if manifest.exists():
        from climbrl.track import sha256_file

        info = json.loads(manifest.read_text())
        if info.get("run") != base.get("run") or info.get("sha256") != sha256_file(policy):
            raise StrongError(f"{where}: {policy} is not the final policy of the run of {path} ({manifest} names "
                              f"run {info.get('run')!r} and another file)")
    return [{**p, "run": p.get("run", base.get("run", base["game"]))} for p in base["points"]]


def final(game: str, params: dict[str, dict[str, Any]], runs: Path = RUNS, reports: Path = REPORTS,
          workers: int = 2) -> dict[str, Any]:
    """The final policy against each opponent on the game's versioned evaluation deals."""
    from climbrl.agents.runner import load_deal_seeds
    from climbrl.evaluate.versus import versus
    from climbrl.learn.train import POLICY

    spec, cfg = params[game], config(params[game], game, runs)
    policy = runs / game / POLICY
    if not policy.exists():
        raise FileNotFoundError(f"no trained policy in {runs / game}: run python -m pipeline.strong train {game} first")
    where = f"games.{game}.evaluate"
    try:
        seeds = load_deal_seeds(spec["evaluate"]["deal_set"])[:spec["evaluate"]["deals"]]
    except ValueError as e:
        raise StrongError(str(e), key=f"{where}.deal_set") from None
    if len(seeds) < spec["evaluate"]["deals"]:
        raise StrongError(f"{spec['evaluate']['deal_set']} holds {len(seeds)} deals, evaluate.deals asks "
                          f"{spec['evaluate']['deals']}", key=f"{where}.deals")
    opponents, not_run = _opponents(list(spec["evaluate"]["opponents"]))
    agent = f"checkpoint:{policy}"
    matches = {opp: versus(agent, opp, cfg.game, cfg.rules, len(seeds), seeds=seeds, workers=workers)
               for opp in opponents}
    for opp, m in matches.items():
        if "all" in m:  # every deal from every seat (Big 2): the points' interval over the deals
            m["all"] = with_points_interval(m["all"], agent, opp, cfg.game, cfg.rules, len(seeds), 0, workers,
                                            seeds=seeds)
    res = {"game": cfg.game, "run": game, "rules": cfg.rules, "algo": cfg.algo,
           "deal_set": spec["evaluate"]["deal_set"], "deals": len(seeds), "matches": matches, "not_run": not_run}
    if "continue" in spec:
        res["against_start"] = against_start(spec, agent, matches, cfg, seeds, workers)
    (reports / game).mkdir(parents=True, exist_ok=True)
    (reports / game / "final.json").write_text(json.dumps(res, indent=2))
    return res


def against_start(spec: dict[str, Any], agent: str, matches: dict[str, Any], cfg: Any, seeds: list[int],
                  workers: int) -> dict[str, dict[str, Any]]:
    """A continued run's final policy against the policy it started from (``continue.policy``),
    paired over the evaluation deals: both play the same games of each deal (every seat) against
    each opponent, and the per-deal difference of their win rates gets a Student t interval and p
    (:func:`~climbrl.evaluate.stats.mean_difference_test`). Games judged from every seat (Big 2)
    only; Dou Dizhu's are judged by role and are not paired here."""
    from climbrl.evaluate.match import deal_wins
    from climbrl.evaluate.stats import deal_record, mean_difference_test
    from climbrl.games.registry import num_players

    players, start = num_players(cfg.game), f"checkpoint:{spec['continue']['policy']}"
    out = {}
    for opp, m in matches.items():
        if "all" not in m:
            continue
        kw = {"rules": cfg.rules, "games": players * len(seeds), "seed": 0, "workers": workers, "seeds": seeds,
              "game": cfg.game}
        end, begin = deal_wins(agent, [opp], **kw), deal_wins(start, [opp], **kw)
        if sum(end) != m["all"]["wins"]:  # the same games as the final match: a bug otherwise
            raise RuntimeError(f"{agent} against {opp}: {sum(end)} wins deal by deal, {m['all']['wins']} in the match")
        out[opp] = {"start": {"agent": start, **deal_record(begin, players)}, "end": deal_record(end, players),
                    "difference": mean_difference_test([(e - b) / players for e, b in zip(end, begin, strict=True)])}
    return out


def _imitation_summary(run: str, runs: Path) -> dict[str, Any] | None:
    """What the report says of a run's behaviour cloning (None without one)."""
    path = runs / run / IMITATION / "imitation.json"
    if not path.exists():
        return None
    im = json.loads(path.read_text())
    return {"teacher": im["config"]["teacher"], "games": im["config"]["games"], "decisions": im["decisions"],
            "holdout_accuracy": im["holdout_accuracy"], "cpu_s": im["cpu_s"]}


def _measured(points: list[dict[str, Any]], t: Target) -> tuple[Any, Any]:
    """The curve's points that measured target ``t``'s measure after some training: their CPU-hours
    and the measure, as float arrays (the line of :func:`budget_needed` and :func:`predicted_at` is
    fitted against log10 of the hours)."""
    import numpy as np

    pts = [(p["cpu_hours"], p[t.opponent][t.role][t.measure]) for p in points
           if p.get("cpu_hours", 0) > 0 and isinstance(p.get(t.opponent), dict) and t.role in p[t.opponent]]
    return np.array([h for h, _ in pts], dtype=np.float64), np.array([v for _, v in pts], dtype=np.float64)


def budget_needed(points: list[dict[str, Any]], t: Target) -> dict[str, Any] | None:
    """What the curve says of the budget that would reach target ``t``: a least-squares line of the
    measure against log10(CPU-hours) over the curve's points, its slope per tenfold budget with a 95%
    t interval (its residuals hold the evaluation's noise and the trajectory's), and, where the slope
    is shown to be above 0 and the line is still below the target at the last point, the CPU-hours at
    which the line reaches it (with the slope's interval: a range), an extrapolation beyond the
    measured range. ``None`` when the curve lacks the measure or has fewer than 4 points."""
    import numpy as np
    from scipy import stats

    hours, y = _measured(points, t)
    if len(hours) < 4:
        return None
    x = np.log10(hours)
    if np.ptp(x) == 0:  # every point at one budget: no slope to read
        slope = low = high = at_last = float("nan")
    else:
        fit = stats.linregress(x, y)
        half = float(stats.t.ppf(0.975, len(x) - 2) * fit.stderr)
        slope, low, high = float(fit.slope), float(fit.slope) - half, float(fit.slope) + half
        at_last = float(fit.intercept + fit.slope * x[-1])
    last_h = float(hours[-1])
    out = {"what": t.what, "opponent": t.opponent, "role": t.role, "measure": t.measure, "target": t.at_least,
           "points": len(x), "slope_per_decade": slope, "slope_low": low, "slope_high": high,
           "last_cpu_hours": last_h, "fitted_at_last": at_last, "cpu_hours": None, "cpu_hours_low": None,
           "cpu_hours_high": None}
    if at_last >= t.at_least:
        out["verdict"] = "the line already reaches it at the last point"
    elif not low > 0:  # NaN too: points at one budget give no slope
        out["verdict"] = "no rise shown (the slope's interval is not above 0): this curve gives no budget for it"
    else:
        gap = t.at_least - at_last
        out.update(cpu_hours=last_h * 10 ** (gap / slope), cpu_hours_low=last_h * 10 ** (gap / high),
                   cpu_hours_high=last_h * 10 ** (gap / low), verdict="extrapolated")
    return {k: None if isinstance(v, float) and v != v else v for k, v in out.items()}  # NaN: no value


def predicted_at(points: list[dict[str, Any]], t: Target, hours: float) -> dict[str, Any] | None:
    """Where the least-squares line of :func:`budget_needed` over ``points`` puts target ``t``'s
    measure at ``hours`` CPU-hours, with a 95% prediction interval for one point of the curve there
    (the line's uncertainty and the points' scatter about it; the correlation of points along one
    training is left out, so the interval is too narrow if anything). What a continued run tests:
    the first run's line against the points the continuation measured. ``None`` with fewer than 4
    points or all at one budget."""
    import numpy as np
    from scipy import stats

    hours_measured, y = _measured(points, t)
    x = np.log10(hours_measured)
    if len(x) < 4 or np.ptp(x) == 0:
        return None
    fit = stats.linregress(x, y)
    n, x0 = len(x), float(np.log10(hours))
    resid = y - (fit.intercept + fit.slope * x)
    s = float(np.sqrt(resid @ resid / (n - 2)))
    spread = 1 + 1 / n + (x0 - x.mean()) ** 2 / ((x - x.mean()) ** 2).sum()
    half = float(stats.t.ppf(0.975, n - 2) * s * np.sqrt(spread))
    at = float(fit.intercept + fit.slope * x0)
    return {"cpu_hours": float(hours), "fitted": at, "low": at - half, "high": at + half, "points": n}


def _budget_line(b: dict[str, Any]) -> str:
    if None in (b["slope_per_decade"], b["slope_low"], b["slope_high"], b["fitted_at_last"]):
        return f"| {b['what']} | | | {b['verdict']} |"  # no slope to read (points at one budget, or too few)
    spec = ".3f" if b["measure"] == "win_rate" else "+.3f"
    slope = f"{b['slope_per_decade']:+.3f} [{b['slope_low']:+.3f}, {b['slope_high']:+.3f}]"
    if b["verdict"] == "extrapolated":
        need = (f"about {b['cpu_hours']:,.1f} CPU-hours ({b['cpu_hours_low']:,.1f} to {b['cpu_hours_high']:,.1f} "
                "with the slope's interval)")
    else:
        need = b["verdict"]
    return (f"| {b['what']} | {b['fitted_at_last']:{spec}} at {b['last_cpu_hours']:.2f} CPU-hours | {slope} | "
            f"{need} |")


def _cell(x: dict[str, Any], points: str) -> str:
    from climbrl.evaluate.stats import format_interval

    return (f"{x['win_rate']:.3f} [{x['win_rate_low']:.3f}, {x['win_rate_high']:.3f}] (n={x['games']:,}); "
            f"{points} {x[points]:+.3f} "
            f"{format_interval(x.get(points + '_low'), x.get(points + '_high'), '+.3f')}")


def report(params: dict[str, dict[str, Any]], reports: Path = REPORTS,
           source: str = "`strong/params.yaml`, `make strong`") -> Path:
    """``report.md`` and the curves' figures, from each game's ``curve.json`` and ``final.json``
    (``source``: the params and the command the report names)."""
    from climbrl.evaluate.stats import format_interval

    lines = ["# The strong learners (issue 25)", "",
             f"One training per run, far past the study's budget ({source}). Learning "
             "curve: every kept policy against each opponent on the same fresh deals, at the CPU-hours the "
             "training had spent (CPU time of the training process and its actors). Final: the last "
             "policy (chosen by nothing) on the game's versioned evaluation deals. Win rates with their 95% "
             "intervals; Dou Dizhu by role under DouZero's protocol, with ADP; Big 2 from every seat, with the "
             "rules' points per game. The network plays alone: no search.", ""]
    budgets: dict[str, dict[str, dict[str, Any]]] = {}
    tested: dict[str, dict[str, dict[str, Any]]] = {}
    for game in params:
        c_path, f_path = reports / game / "curve.json", reports / game / "final.json"
        if not c_path.exists() or not f_path.exists():
            lines += [f"## {game}", "", f"Not run yet ({source}: curve@{game}, final@{game}).", ""]
            continue
        c, f = json.loads(c_path.read_text()), json.loads(f_path.read_text())
        pts = "adp" if any("landlord" in m for m in f["matches"].values()) else "mean_reward"
        last = c["points"][-1]
        im = c.get("imitation")
        start = (f" Started from behaviour cloning of `{im['teacher']}` ({im['games']:,} games, {im['decisions']:,} "
                 f"decisions; the student picks the teacher's move in {im['holdout_accuracy']:.3f} of held-out "
                 f"decisions; {im['cpu_s'] / 3600:.2f} CPU-hours, counted in the curve; epoch 0 is the student)."
                 if im else "")
        cont = c.get("continued")
        if cont:
            first = c["points"][cont["points"] - 1]
            start += (f" Continued from `{cont['policy']}`, the final policy of the run "
                      f"`{first.get('run', '')}` ({first['epoch']} epochs, {first['cpu_hours']:.2f} CPU-hours, counted "
                      f"in the curve; its curve, `{cont['curve']}`, gives the first {cont['points']} points below), "
                      "with a fresh optimizer (the shipped file holds the weights alone).")
        train = params[game]["train"]
        against = (f", against {', '.join(train.get('fixed_opponents', []))}"
                   if train.get("curriculum") == "fixed_opponents" else ", self-play")
        lines += [f"## {game} (`{f['rules']}` rules, {f['algo']}{against})", "",
                  f"Trained {last['epoch']} epochs, {last['games']:,} games, {last['decisions']:,} decisions, "
                  f"{last['cpu_hours']:.2f} CPU-hours{' in all (the cloning included)' if im else ''}"
                  f"{' in all (the run it continues included)' if cont else ''} with "
                  f"{c['actors']} actor(s).{start}", "",
                  f"Final, on {f['deals']} evaluation deals (`{f['deal_set']}`):", "",
                  "| opponent | role | WP [95% CI] (games); points |", "|---|---|---|"]
        for opp, by_role in f["matches"].items():
            for role, x in by_role.items():
                lines.append(f"| {opp} | {role} | {_cell(x, pts)} |")
        for opp, why in {**f.get("not_run", {}), **c.get("not_run", {})}.items():
            lines.append(f"| {opp} | | not run here: {why} |")
        lines += ["", "| target | measured | |", "|---|---|---|"]
        for t in targets_of(f["game"], f["rules"]):
            x = f["matches"].get(t.opponent, {}).get(t.role)
            if x is None:
                lines.append(f"| {t.what} | not measured | |")
            else:
                spec = ".3f" if t.measure == "win_rate" else "+.3f"
                lines.append(f"| {t.what} | {x[t.measure]:{spec}} "
                             f"{format_interval(x.get(t.measure + '_low'), x.get(t.measure + '_high'), spec)} | "
                             f"{_verdict(x, t)} |")
        missed = [t for t in targets_of(f["game"], f["rules"])
                  if _verdict(f["matches"].get(t.opponent, {}).get(t.role, {}), t) == "missed"]
        fits = {f"{t.opponent}/{t.role}": b for t in missed if (b := budget_needed(c["points"], t)) is not None}
        budgets[game] = fits
        if fits:
            lines += ["", "The budget each missed target would need, read off the learning curve below (an "
                      "extrapolation: a least-squares line of the measure against log10 CPU-hours over the curve's "
                      "points, which are measured on its fresh deals, not on the final evaluation's; its slope per "
                      "tenfold budget with a 95% t interval; where the slope is shown to be above 0, the CPU-hours "
                      "at which the line reaches the target, beyond the last point. The range comes from the "
                      "slope's interval alone: it leaves out the uncertainty of the line's level and the points' "
                      "correlation along one training, so it is a rough one):", "",
                      "| target | the line at the last point | slope per tenfold budget | budget |",
                      "|---|---|---|---|", *(_budget_line(b) for b in fits.values())]
        if f.get("against_start"):
            lines += _against_start_lines(f)
        if cont:
            tested[game] = line_test(c, f)
            lines += _line_test_lines(c, tested[game])
        roles = [(o, r) for o in c["points"][0] if isinstance(c["points"][0][o], dict) for r in c["points"][0][o]]
        points_cols = [o for o, r in roles if r == "all"]  # Big 2: the rules' points per game too
        half = max((p[o][r]["win_rate_high"] - p[o][r]["win_rate_low"]) / 2 for p in c["points"] for o, r in roles)
        lines += ["", f"Learning curve ({c['deals']} fresh deals per point, seed {c['seed']}; every win rate's 95% "
                  f"interval is at most +-{half:.3f}, drawn in the figure):", "",
                  ("| run " if cont else "") + "| epoch | CPU-hours | games | "
                  + " | ".join(f"{o} {r}" for o, r in roles) + "".join(f" | {o} points" for o in points_cols) + " |",
                  ("|---" if cont else "") + "|---|---|---|" + "---|" * (len(roles) + len(points_cols))]
        for p in c["points"]:
            run_cell = f"| {p.get('run', game)} " if cont else ""
            lines.append(f"{run_cell}| {p['epoch']} | {p['cpu_hours']:.3f} | {p['games']:,} | " + " | ".join(
                f"{p[o][r]['win_rate']:.3f}" for o, r in roles)
                + "".join(f" | {p[o]['all']['mean_reward']:+.3f}" for o in points_cols) + " |")
        (reports / "figures").mkdir(parents=True, exist_ok=True)
        _plot(c, roles, targets_of(c["game"], c["rules"]), reports / "figures" / f"{game}.png")
        lines += ["", f"![learning curve](figures/{game}.png)", ""]
    out = reports / "report.md"
    reports.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    (reports / "budget.json").write_text(json.dumps(budgets, indent=1) + "\n")
    if tested:  # runs that continue another: its line against what they measured
        (reports / "line_test.json").write_text(json.dumps(tested, indent=1) + "\n")
    return out


def line_test(c: dict[str, Any], f: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """For a continued run's curve ``c``: each target's line fitted to the first run's points
    alone (:func:`predicted_at`) at the curve's last point, against what that point measured
    (``inside`` the 95% prediction interval or not), keyed ``opponent/role``; beside it, how many of
    the continued points fall outside that line's interval at their own budgets, and the slope per
    tenfold budget of each run's points alone (:func:`budget_needed`'s, with its t interval)."""
    cont, last = c["continued"], c["points"][-1]
    first, later = c["points"][:cont["points"]], c["points"][cont["points"]:]
    out = {}
    for t in targets_of(f["game"], f["rules"]):
        pred = predicted_at(first, t, last["cpu_hours"])
        x = last.get(t.opponent)
        got = x.get(t.role) if isinstance(x, dict) else None
        if pred is None or got is None or t.measure not in got:
            continue
        outside = 0
        for p in later:
            at = predicted_at(first, t, p["cpu_hours"])
            outside += not at["low"] <= p[t.opponent][t.role][t.measure] <= at["high"]
        slopes = {}
        for name, pts in (("first", first), ("continued", later)):
            b = budget_needed(pts, t)
            slopes[name] = None if b is None else {k: b[k] for k in ("slope_per_decade", "slope_low", "slope_high")}
        out[f"{t.opponent}/{t.role}"] = {
            "what": t.what, "measure": t.measure, "first_points": cont["points"], **pred,
            "measured": got[t.measure], "measured_low": got.get(t.measure + "_low"),
            "measured_high": got.get(t.measure + "_high"), "games": got.get("games"),
            "inside": pred["low"] <= got[t.measure] <= pred["high"],
            "continued_points": len(later), "continued_outside": outside, "slopes": slopes}
    return out


def _against_start_lines(f: dict[str, Any]) -> list[str]:
    from climbrl.evaluate.stats import format_interval

    rows = []
    for opp, x in f["against_start"].items():
        d = x["difference"]
        rows.append(f"| {opp} | {x['start']['win_rate']:.3f} | {x['end']['win_rate']:.3f} | {d['mean']:+.3f} "
                    f"{format_interval(d['low'], d['high'], '+.3f')} | {d['p']:.2g} |")
    return ["", f"Against the policy it started from (`{next(iter(f['against_start'].values()))['start']['agent']}`), "
            f"paired over the same {f['deals']:,} evaluation deals (both play every seat of each deal against the "
            "same opponents; the difference of their win rates per deal, a Student t interval and its two-sided p):",
            "", "| opponent | start | final | difference [95% CI] | p |", "|---|---|---|---|---|", *rows]


def _line_test_lines(c: dict[str, Any], tested: dict[str, dict[str, Any]]) -> list[str]:
    from climbrl.evaluate.stats import format_interval

    if not tested:
        return []
    rows = []
    for x in tested.values():
        if x["inside"]:
            verdict = "inside: consistent with the line (not rejected at this point)"
        elif x["measured"] > x["high"]:
            verdict = "above the interval: the continued training rises faster than the line"
        else:
            verdict = ("below the interval: the continued training falls short of the line (its restart, with a "
                       "fresh optimizer and other deals, may take part)")
        spec = ".3f" if x["measure"] == "win_rate" else "+.3f"
        slopes = "; ".join(f"{name} {v['slope_per_decade']:+.3f} [{v['slope_low']:+.3f}, {v['slope_high']:+.3f}]"
                           for name, v in x["slopes"].items() if v and v["slope_low"] is not None)
        rows.append(f"| {x['what']} | {x['fitted']:{spec}} [{x['low']:{spec}}, {x['high']:{spec}}] | "
                    f"{x['measured']:{spec}} {format_interval(x['measured_low'], x['measured_high'], spec)} "
                    f"(n={x['games']:,}) | {verdict} | {x['continued_outside']} of {x['continued_points']} | "
                    f"{slopes} |")
    last = c["points"][-1]
    return ["", f"The first run's line put to the test: fitted to its {c['continued']['points']} points alone, where "
            f"it puts each target's measure at this curve's last point ({last['cpu_hours']:.2f} CPU-hours), with a "
            "95% prediction interval for one point of the curve (it leaves out the correlation of points along one "
            "training), and what that point measured on the same curve deals (not the evaluation deals of the final "
            "table); then how many of the continued run's points fall outside the line's interval at their own "
            "budgets, and each run's points' own slope per tenfold budget (95% t interval). One point inside the "
            "interval does not confirm the line, and the budget above, fitted over both runs, assumes one straight "
            "line through them:", "",
            "| target | the first run's line there | measured | | continued points outside | slopes |",
            "|---|---|---|---|---|---|", *rows]


def _plot(c: dict[str, Any], roles: list[tuple[str, str]], targets: list[Target], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    x = [p["cpu_hours"] for p in c["points"]]
    for opp, role in roles:
        y = [p[opp][role]["win_rate"] for p in c["points"]]
        lo = [p[opp][role]["win_rate_low"] for p in c["points"]]
        hi = [p[opp][role]["win_rate_high"] for p in c["points"]]
        line, = ax.plot(x, y, marker="o", label=f"vs {opp} ({role})")
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.15)
        for t in targets:
            if (t.opponent, t.role, t.measure) == (opp, role, "win_rate"):
                ax.axhline(t.at_least, color=line.get_color(), ls=":", lw=1)
    if c.get("continued"):
        ax.axvline(c["points"][c["continued"]["points"] - 1]["cpu_hours"], color="grey", ls="--", lw=1,
                   label=f"continued from {c['continued']['policy']}")
    ax.set_xlabel("CPU-hours of training")
    ax.set_ylabel("win rate (95% interval)")
    ax.set_ylim(0, 1)
    ax.set_title(f"{c.get('run', c['game'])} ({c['rules']}), {c['algo']}: dotted = the issue's targets")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


@params_io.command("python -m pipeline.strong")
def main(argv: list[str] | None = None) -> int:
    p = params_io.ArgumentParser(prog="python -m pipeline.strong")
    p.add_argument("step", choices=("train", "curve", "final", "report"))
    p.add_argument("game", nargs="?")
    p.add_argument("--params", default=str(PARAMS))
    p.add_argument("--reports", default=str(REPORTS), help="the folder of the curves, finals and report")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--no-track", action="store_true", help="train without MLflow")
    args = p.parse_args(argv)
    params_io.workers(args.workers)
    params = load_strong_params(Path(args.params))
    if args.step != "report" and args.game not in params:
        raise StrongError(f"name a game of {args.params}: {', '.join(params)}")
    start = time.perf_counter()
    _step(args, params)
    print(f"strong {args.step} {args.game or ''}: {time.perf_counter() - start:.0f} s")
    return 0


def tracking_of(path: str | Path) -> dict[str, str] | None:
    """The params' ``tracking`` section (``tracking_uri``, ``experiment``), or None without one."""
    t = params_io.read(path).get("tracking")
    if t is not None and (not isinstance(t, dict) or set(t) != {"tracking_uri", "experiment"}
                          or not all(isinstance(v, str) and v for v in t.values())):
        raise StrongError(f"must hold tracking_uri and experiment, got {t!r}", path, "tracking")
    return t


def _step(args: argparse.Namespace, params: dict[str, dict[str, Any]]) -> None:
    if args.step == "train":
        train_game(args.game, params, track=not args.no_track, tracking=tracking_of(args.params))
    elif args.step == "curve":
        curve(args.game, params, reports=Path(args.reports), workers=args.workers)
    elif args.step == "final":
        final(args.game, params, reports=Path(args.reports), workers=args.workers)
    else:
        default = Path(args.params).resolve() == PARAMS
        source = "`strong/params.yaml`, `make strong`" if default else f"`{args.params}`"
        print(report(params, Path(args.reports), source))


if __name__ == "__main__":
    sys.exit(main())
