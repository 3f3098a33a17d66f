"""Tuning that pays off (issue 30): ``make tune`` runs ``dvc repro tune/dvc.yaml`` from
``tune/params.yaml`` (not part of ``make run``).

- ``study`` (``python -m pipeline.tuning study``): an Optuna study per game and learner of the
  params (:func:`climbrl.tune.run_study`, the project's tuning code) over the learner's own
  hyperparameters (:func:`climbrl.tune.suggest`: learning rate; PPO's entropy coefficient; the
  target-sync period of Q-learning and DQN; DQN's epsilon-decay length; the constant epsilon of
  MCQ, SARSA and Q-learning). Every trial trains the game's study config (``params.yaml``'s train
  section for that learner) with the sampled values replaced, under a multi-fidelity schedule:
  successive halving (or Hyperband) over epochs, the objective reported at every rung
  (``min_epochs`` x ``reduction_factor`` ** k up to ``max_epochs``) and the best
  ``1 / reduction_factor`` of the trials at a rung carried on to the next. The objective: the
  greedy policy's win rate against copies of ``opponent`` on ``objective_games`` games of the
  study's own deals (``deal_seed``, the in-training evaluation's stream, :func:`objective_deals`),
  the same deals for every trial and rung, checked disjoint from the versioned evaluation and
  validation deals. Studies live in ``storage`` (SQLite by default, in ``runs/tune/study``; a
  PostgreSQL URL, or ``CLIMBRL_TUNE_STORAGE``, with ``study_workers`` processes per study), and
  are resumed: a rerun keeps the finished trials and runs only the missing ones (raising
  ``trials`` extends a study). Every trial is a live MLflow run (nested under its study's run).
  Then each study's trials, importances and CPU time go to ``reports/tune/studies/GAME.json``.
- ``compare`` (``python -m pipeline.tuning compare``): the best configuration of every study
  (chosen on the study's deals) is trained at the study's full budget for every seed of
  ``seeds``, beside the default config for the same seeds, both played on the versioned
  evaluation and validation deals deal by deal (:func:`pipeline.seeds.run_one`: the seed study's
  runs, resumable, a finished one skipped). A default run that ``make seeds`` already finished
  with the same config and deals is reused, not trained again. Records: ``reports/tune/GAME.json``.
- The report (:mod:`pipeline.tuning_report`): ``reports/tune/report.md`` and ``.html``.

Both steps take ``--game GAME`` (one game's studies or runs alone): the stages are per game
(``study@GAME``, ``compare@GAME``), so that one game's part fits a working session and its records
are committed before the other's start (``dvc repro tune/dvc.yaml:compare@doudizhu``).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pipeline  # noqa: F401  (environment defaults)
from climbrl.config import TrainConfig
from climbrl.params import Params, load_params
from climbrl.threads import process_pool
from pipeline import params_io
from pipeline.params_io import ParamsError

PARAMS = Path(__file__).resolve().parents[1] / "tune" / "params.yaml"
RUNS = Path("runs/tune")
REPORTS = Path("reports/tune")
SEEDS_RUNS = Path("runs/seeds")
"""Where ``make seeds`` keeps its runs: a finished default run there is reused."""
PRUNERS = ("halving", "hyperband")
TOP = ("storage", "workers", "study_workers", "seeds", "mlflow", "start_from_default", "games")
GAME_KEYS = ("study", "learners", "trials", "pruner", "min_epochs", "max_epochs", "reduction_factor", "opponent",
             "objective_games", "deal_seed")


@dataclasses.dataclass(frozen=True)
class GameTuning:
    """One game's studies (``games.GAME`` of ``tune/params.yaml``)."""

    study: str
    """The params spec of the game's study (``params.yaml``, ``params.yaml#doudizhu``)."""
    learners: tuple[str, ...]
    trials: int
    """Trials per study (a study's total: with several workers, shared)."""
    pruner: str
    min_epochs: int
    max_epochs: int
    reduction_factor: int
    opponent: str
    objective_games: int
    deal_seed: int

    def rungs(self) -> list[int]:
        """The epochs at which a trial is compared with the others (successive halving's rungs;
        Hyperband's first bracket)."""
        out, r = [], self.min_epochs
        while r <= self.max_epochs:
            out.append(r)
            r *= self.reduction_factor
        return out


@dataclasses.dataclass(frozen=True)
class Tuning:
    storage: str
    workers: int
    study_workers: int
    seeds: tuple[int, ...]
    mlflow: bool
    games: dict[str, GameTuning]
    start_from_default: bool = True
    """A new study's first trial is the learner's own config (:func:`climbrl.tune.enqueue_default`)."""


def _posint(v: Any, where: str, low: int = 1, high: int | None = None) -> int:
    return params_io.integer(v, where, "", low, high)


def load_tuning(path: str | Path = PARAMS) -> Tuning:
    """``tune/params.yaml``, checked: a :class:`~pipeline.params_io.ParamsError` naming the file
    and the key on anything else, before any work."""
    from climbrl.tune import check_storage, shared_storage

    raw = params_io.read(path)
    if not isinstance(raw, dict) or set(raw) - set(TOP) or {"games", "seeds"} - set(raw):
        raise ParamsError(f"{path}: expected the keys {', '.join(TOP)} (games and seeds required)")
    raw = {"storage": "sqlite:///runs/tune/study/optuna.db", "workers": 2, "study_workers": 1, "mlflow": True,
           "start_from_default": True, **raw}
    storage = raw["storage"]
    if not isinstance(storage, str) or not storage:
        raise ParamsError(f"{path}: storage must be a database URL, got {storage!r}")
    storage = os.environ.get("CLIMBRL_TUNE_STORAGE") or storage
    if not storage.startswith("sqlite:///"):
        try:
            check_storage(storage)
        except ValueError as e:
            raise ParamsError(f"{path}: {e}") from None
    workers = _posint(raw["workers"], f"{path}: workers", 1, params_io.WORKERS_MAX)
    study_workers = _posint(raw["study_workers"], f"{path}: study_workers", 1, params_io.WORKERS_MAX)
    if study_workers > 1 and not shared_storage(storage):
        raise ParamsError(f"{path}: study_workers {study_workers} needs a shared database (storage: postgresql://...); "
                         "a SQLite file takes one worker per study")
    seeds = raw["seeds"]
    if (not isinstance(seeds, list) or len(seeds) < 3 or len(set(map(repr, seeds))) != len(seeds)
            or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= params_io.SEED_MAX
                       for s in seeds)):
        raise ParamsError(f"{path}: seeds must be at least three distinct non-negative integers (the tuned and the "
                         f"default config each trained once per seed), got {seeds!r}")
    for key in ("mlflow", "start_from_default"):
        if not isinstance(raw[key], bool):
            raise ParamsError(f"{path}: {key} must be true or false, got {raw[key]!r}")
    if not isinstance(raw["games"], dict) or not raw["games"]:
        raise ParamsError(f"{path}: games must map each game to its studies")
    games = {game: _game_tuning(path, game, g, tuple(seeds)) for game, g in raw["games"].items()}
    return Tuning(storage, workers, study_workers, tuple(seeds), raw["mlflow"], games, raw["start_from_default"])


def _game_tuning(path: str | Path, game: str, g: Any, seeds: tuple[int, ...]) -> GameTuning:
    from climbrl.learn.specs import make_agent

    where = f"{path}: games.{game}"
    params_io.name(game, path, "games")
    if not isinstance(g, dict) or set(g) != set(GAME_KEYS):
        missing, extra = set(GAME_KEYS) - set(g if isinstance(g, dict) else {}), \
            set(g if isinstance(g, dict) else {}) - set(GAME_KEYS)
        raise ParamsError(f"{where} must hold exactly {', '.join(GAME_KEYS)}"
                         + (f" (missing {', '.join(sorted(missing))})" if missing else "")
                         + (f" (unknown {', '.join(sorted(map(str, extra)))})" if extra else ""))
    if not isinstance(g["study"], str):
        raise ParamsError(f"{where}.study: must be a params spec (params.yaml#STUDY), got {g['study']!r}")
    try:
        params = load_params(g["study"])  # ParamsError names the key
    except ValueError as e:
        raise ParamsError(f"{where}.study: {e}") from None
    if params.game != game:
        raise ParamsError(f"{where}.study {g['study']!r} is a study of {params.game}")
    learners = g["learners"]
    if not isinstance(learners, list) or not learners or len(set(map(repr, learners))) != len(learners):
        raise ParamsError(f"{where}.learners must name distinct learners")
    for a in learners:
        params_io.name(a, path, f"games.{game}.learners")  # runs/tune/compare/GAME/LEARNER
    missing = [a for a in learners if a not in params.train]
    if missing:
        raise ParamsError(f"{where}.learners: {', '.join(map(str, missing))} not trained by {g['study']}")
    if not isinstance(g["pruner"], str) or g["pruner"] not in PRUNERS:
        raise ParamsError(f"{where}.pruner: must be one of {', '.join(PRUNERS)}, got {g['pruner']!r}")
    trials = _posint(g["trials"], f"{where}.trials", 1, 100_000)
    lo, hi = _posint(g["min_epochs"], f"{where}.min_epochs"), _posint(g["max_epochs"], f"{where}.max_epochs")
    eta = _posint(g["reduction_factor"], f"{where}.reduction_factor", 2)
    full = {params.train[a].epochs for a in learners}
    if hi > min(full):
        raise ParamsError(f"{where}.max_epochs: {hi} is more than the study's full budget ({min(full)} epochs)")
    r = lo
    while r < hi:
        r *= eta
    if r != hi or lo == hi:
        raise ParamsError(f"{where}: max_epochs {hi} must be min_epochs {lo} x reduction_factor {eta} to a power >= 1 "
                         f"(the rungs of the schedule, e.g. {lo}, {lo * eta}, {lo * eta * eta})")
    opponent = g["opponent"]
    try:
        if not isinstance(opponent, str):
            raise TypeError(f"an agent spec is a string, got {opponent!r}")
        make_agent(opponent, game)
    except (ValueError, TypeError) as e:
        raise ParamsError(f"{where}.opponent: {e}") from None
    games_n = _posint(g["objective_games"], f"{where}.objective_games", 1, params_io.DEALS_MAX)
    from climbrl.games.registry import num_players

    n = num_players(game)
    if games_n % n:
        raise ParamsError(f"{where}.objective_games: must be a multiple of {n} (every deal from every seat), got "
                         f"{games_n}")
    spec = GameTuning(g["study"], tuple(learners), trials, g["pruner"], lo, hi, eta, opponent, games_n,
                      _posint(g["deal_seed"], f"{where}.deal_seed", 0, params_io.SEED_MAX))
    shared = set(objective_deals(spec, params)) & set(versioned_deals(params))
    if shared:
        raise ParamsError(f"{where}.deal_seed: the study's deals share {len(shared)} deal(s) with the versioned "
                         "evaluation or validation deals: choose another deal_seed")
    return spec


def objective_deals(spec: GameTuning, params: Params) -> list[int]:
    """The deals on which every trial's objective is measured: the in-training evaluation's stream
    (purpose ``train-eval``) of ``deal_seed``, ``objective_games`` / players deals, each played
    from every seat (:func:`climbrl.training.evaluate_policy`)."""
    from climbrl.agents.runner import deal_seeds
    from climbrl.games.registry import num_players

    return deal_seeds(spec.deal_seed, spec.objective_games // num_players(params.game), "train-eval")


def versioned_deals(params: Params) -> list[int]:
    """The study's versioned evaluation and validation deals: the files, and where one is not
    written yet, the deals its seeds stage will write (:func:`pipeline.stages.make_seeds`)."""
    from climbrl.agents.runner import deal_seeds
    from pipeline.stages import load_seeds, study_paths

    paths, s = study_paths(params), params.seeds
    out = []
    for path, seed, n, purpose in ((paths.seeds, s.seed, s.deals, "evaluation"),
                                   (paths.valid_seeds, s.validation_seed, s.validation_deals, "validation")):
        out += load_seeds(path) if path.exists() else deal_seeds(seed, n, purpose)
    return out


def study_name(game: str, learner: str) -> str:
    return f"tune-{game}-{learner}"


def trial_config(params: Params, spec: GameTuning, learner: str) -> TrainConfig:
    """What every trial of the study trains (with its sampled values replaced): the game's study
    config of ``learner`` at ``max_epochs``, evaluated at every ``min_epochs`` (every rung) with
    ``objective_games`` games against ``opponent`` on the study's deals; no snapshots kept."""
    return dataclasses.replace(params.train[learner], epochs=spec.max_epochs, eval_every=spec.min_epochs,
                               eval_games=spec.objective_games, eval_opponents=(spec.opponent,),
                               eval_seed=spec.deal_seed, keep_policy_every=0)


def make_pruner(spec: GameTuning) -> Any:
    """The schedule's pruner: successive halving (asynchronous, :class:`optuna.pruners.SuccessiveHalvingPruner`)
    with rungs at ``min_epochs`` x ``reduction_factor`` ** k, or Hyperband over the same
    resources (brackets of successive halving with later first rungs)."""
    import optuna

    if spec.pruner == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=spec.min_epochs, max_resource=spec.max_epochs,
                                              reduction_factor=spec.reduction_factor)
    return optuna.pruners.SuccessiveHalvingPruner(min_resource=spec.min_epochs,
                                                  reduction_factor=spec.reduction_factor,
                                                  min_early_stopping_rate=0)


@dataclasses.dataclass(frozen=True)
class StudyJob:
    """One worker of one study (plain data: it crosses a spawn)."""

    game: str
    learner: str
    study: str
    spec: GameTuning
    storage: str
    mlflow: bool
    runs: str
    start_from_default: bool = True


def only(t: Tuning, game: str | None) -> Tuning:
    """``t`` with one game's studies (``--game``), or all of them (None)."""
    if game is None:
        return t
    if game not in t.games:
        raise ValueError(f"no game {game!r} in the tuning params (games: {', '.join(t.games)})")
    return dataclasses.replace(t, games={game: t.games[game]})


def studies_path(reports: str | Path, game: str) -> Path:
    """One game's study summaries (:func:`write_studies`)."""
    return Path(reports) / "studies" / f"{game}.json"


def load_studies(reports: str | Path = REPORTS) -> dict[str, Any] | None:
    """Every game's study summaries in ``reports`` as one ``{"storage", "games"}`` record (the
    games in the order of their files' names), or None when no study has been summarized yet."""
    files = sorted((Path(reports) / "studies").glob("*.json"))
    if not files:
        return None
    out: dict[str, Any] = {"games": {}}
    for f in files:
        data = json.loads(f.read_text())
        out["storage"] = data["storage"]
        out["games"].update(data["games"])
    return out


def study_jobs(t: Tuning, runs: str | Path = RUNS) -> list[StudyJob]:
    """Every study's workers, ``study_workers`` each, the games' learner lists interleaved."""
    per_game = [[StudyJob(game, a, study_name(game, a), spec, t.storage, t.mlflow, str(runs), t.start_from_default)
                 for a in spec.learners] for game, spec in t.games.items()]
    out = []
    for rank in range(max(len(g) for g in per_game)):
        for g in per_game:
            if rank < len(g):
                out += [g[rank]] * t.study_workers
    return out


def worker_storage(storage: str) -> str:
    """``storage`` as a worker opens it: a SQLite file's folder made, and a minute's patience for its
    lock (the studies of one file run side by side in several processes; SQLite's default is 5 s)."""
    from sqlalchemy.engine import make_url

    url = make_url(storage)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return storage
    Path(url.database).parent.mkdir(parents=True, exist_ok=True)
    return storage if "timeout" in url.query else url.update_query_dict({"timeout": "60"}).render_as_string(
        hide_password=False)


def searched(algo: str) -> set[str]:
    """The train fields a study of ``algo`` samples (:func:`climbrl.tune.searched`)."""
    from climbrl.tune import searched as names

    return set(names(algo))


def study_setup(base: TrainConfig, spec: GameTuning) -> dict[str, Any]:
    """What a study's trials share and a resumed study must not change: the trial config but the
    sampled fields (its budget, objective and deals included) and the schedule."""
    skip = searched(base.algo)
    return {"config": {k: v for k, v in base.to_dict().items() if k not in skip}, "pruner": spec.pruner,
            "rungs": spec.rungs(), "reduction_factor": spec.reduction_factor}


SETUP_ATTR = "climbrl_setup"


def _check_setup(job: StudyJob, storage: str, setup: dict[str, Any]) -> None:
    """Refuse to resume a study whose trials were made under another setup (its results would mix
    two budgets or objectives); record the setup on a study that has none yet."""
    import optuna

    from climbrl.tune import load_shared_study, shared_storage, shown_url

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        study = load_shared_study(job.study, storage) if shared_storage(storage) else \
            optuna.load_study(study_name=job.study, storage=storage)
    except KeyError:
        return
    had = study.user_attrs.get(SETUP_ATTR)
    if had is None:
        study.set_user_attr(SETUP_ATTR, setup)
        return
    if had != setup:
        changed = sorted({k for k in set(had["config"]) | set(setup["config"])
                          if had["config"].get(k) != setup["config"].get(k)}
                         | {k for k in ("pruner", "rungs", "reduction_factor") if had.get(k) != setup.get(k)})
        raise ValueError(f"Optuna study {job.study} ({shown_url(storage)}) was run with another setup (changed: "
                         f"{', '.join(changed)}); its trials would mix two budgets or objectives: delete the study "
                         "(optuna delete-study, or runs/tune/study for the default store) to start it again")


def run_study_job(job: StudyJob) -> dict[str, Any]:
    """One worker of one study: :func:`climbrl.tune.run_study` on the study's trial config with the
    schedule's pruner, on one torch thread. A study resumed under another setup is refused
    (:func:`study_setup`: its budget, objective, deals or schedule changed)."""
    from climbrl.params import TuneParams
    from climbrl.threads import single_thread
    from climbrl.tune import run_study

    params = load_params(job.spec.study)
    base = trial_config(params, job.spec, job.learner)
    tp = TuneParams(algo=base.algo, trials=job.spec.trials, epochs=base.epochs, games_per_epoch=base.games_per_epoch,
                    eval_every=base.eval_every, eval_games=base.eval_games, seed=base.seed, storage=job.storage,
                    study=job.study, pruner="none", opponent=job.spec.opponent)
    tracking = tracking_of(params)
    storage = worker_storage(job.storage)
    setup = json.loads(json.dumps(study_setup(base, job.spec)))  # as the store gives it back (lists, not tuples)
    _check_setup(job, storage, setup)
    print(f"tune: study {job.study} ({job.spec.trials} trials, rungs {job.spec.rungs()} epochs)", file=sys.stderr,
          flush=True)
    folder = Path(job.runs) / "study" / job.game
    with single_thread():
        result = run_study(tp, storage=storage, study_name=job.study, out_dir=folder / "trials",
                         best_yaml=folder / "best" / f"{job.learner}.yaml", track=job.mlflow,
                         tracking=tracking if job.mlflow else None, pruner=make_pruner(job.spec), base=base,
                         keep_checkpoints=False, start_from_default=job.start_from_default)
    _check_setup(job, storage, setup)  # a new study gets its setup recorded
    return result


def _pool_map(fn: Any, items: list[Any], workers: int) -> list[Any]:
    if workers == 1 or len(items) <= 1:
        return [fn(x) for x in items]
    with process_pool(min(workers, len(items))) as pool:
        return list(pool.map(fn, items))


def tracking_of(params: Params) -> Any:
    """The MLflow store and experiment of a game's studies: its study's, the experiment ``-tune``."""
    from climbrl.params import TrackingParams

    return TrackingParams(params.tracking.tracking_uri, f"{params.tracking.experiment}-tune",
                          params.tracking.register_model)


def prepare_tracking(t: Tuning) -> None:
    """Create every game's experiment before the workers start (two first writers of a fresh
    MLflow store collide in its schema migration), and say where the trials are seen."""
    if not t.mlflow:
        return
    from climbrl import track

    for spec in t.games.values():
        k = tracking_of(load_params(spec.study))
        uri = track.configure(k.tracking_uri, k.experiment)
        print(f"tune: trials in MLflow at {track.runs_address(uri, k.experiment)}", file=sys.stderr, flush=True)


def prepare_store(storage: str) -> None:
    """Create Optuna's tables in ``storage`` before the workers start: two processes that open a
    fresh SQLite store at once collide in its schema creation (``table alembic_version already
    exists``: seen in one of three tries), and the loser's study never ran. A shared database is
    opened as its workers open it (:func:`climbrl.tune.open_shared_storage`, under its lock)."""
    import optuna

    from climbrl.tune import open_shared_storage, shared_storage

    if shared_storage(storage):
        open_shared_storage(storage)
    else:
        optuna.storages.RDBStorage(worker_storage(storage))


def run_studies(t: Tuning, runs: str | Path = RUNS, reports: str | Path = REPORTS,
                workers: int | None = None) -> list[Path]:
    """Every study of ``t``'s games (``workers`` processes), then each game's
    ``reports/studies/GAME.json``."""
    prepare_tracking(t)
    prepare_store(t.storage)
    for game in t.games:  # the stage's output, also where the trials run on other machines (a shared store)
        (Path(runs) / "study" / game).mkdir(parents=True, exist_ok=True)
    _pool_map(run_study_job, study_jobs(t, runs), workers or t.workers)
    return write_studies(t, reports)


def study_summary(t: Tuning, game: str, learner: str) -> dict[str, Any]:
    """What the report says of one study, read from the store: every trial with its state, the
    epochs it trained (its budget), its values at the rungs, its parameters and CPU seconds; the best
    complete trial; the parameter importances (:func:`optuna.importance.get_param_importances`, its
    default evaluator, on the objective at the first rung, which every finished trial reached); the
    study's CPU time."""
    import optuna

    from climbrl.tune import load_shared_study, shared_storage, shown_url

    spec = t.games[game]
    name = study_name(game, learner)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = load_shared_study(name, t.storage) if shared_storage(t.storage) else \
        optuna.load_study(study_name=name, storage=t.storage)
    trials = []
    for tr in study.trials:
        trials.append({"number": tr.number, "state": tr.state.name, "params": tr.params,
                       "interrupted": bool(tr.user_attrs.get("interrupted")), "retry_of": tr.user_attrs.get("retry_of"),
                       "default": bool(tr.user_attrs.get("default")),
                       "value": tr.value, "epochs": tr.user_attrs.get("epochs", 0),
                       "rungs": {str(k): v for k, v in sorted(tr.intermediate_values.items())},
                       "cpu_seconds": tr.user_attrs.get("cpu_seconds", 0.0),
                       "wall_seconds": ((tr.datetime_complete - tr.datetime_start).total_seconds()
                                        if tr.datetime_complete and tr.datetime_start else None)})
    complete = [x for x in trials if x["state"] == "COMPLETE"]
    out: dict[str, Any] = {"study": name, "storage": shown_url(t.storage), "algo": load_params(spec.study)
                           .train[learner].algo, "trials": trials, "cpu_seconds": sum(x["cpu_seconds"] for x in trials),
                           "states": {s: sum(x["state"] == s for x in trials) for s in
                                      sorted({x["state"] for x in trials})}}
    if complete:
        best = study.best_trial
        out["best"] = {"number": best.number, "value": best.value, "params": best.params}
    out["importances"] = None
    first = spec.rungs()[0]
    reached = [tr for tr in study.trials if tr.state.name in ("COMPLETE", "PRUNED") and first in tr.intermediate_values]
    out["importances_at"] = {"epochs": first, "trials": len(reached)}
    if len(reached) >= 2:
        # at the first rung, which every trial reached (the complete trials alone are the few the halving kept)
        at_first = optuna.create_study(direction="maximize")
        at_first.add_trials([optuna.trial.create_trial(params=tr.params, distributions=tr.distributions,
                                                       value=tr.intermediate_values[first]) for tr in reached])
        values = sorted((tr.intermediate_values[first] for tr in reached), reverse=True)
        cutoff = values[math.ceil(0.1 * len(values)) - 1]  # PED-ANOVA's top 10% (its _QuantileFilter), ties kept
        out["importances_top"] = sum(v >= cutoff for v in values)
        try:
            out["importances"] = dict(optuna.importance.get_param_importances(at_first))
        except (RuntimeError, ValueError) as e:
            out["importances_error"] = str(e)
    return out


def write_studies(t: Tuning, reports: str | Path = REPORTS) -> list[Path]:
    """``reports/studies/GAME.json`` for each game of ``t``: the schedule, the objective and every
    study's summary."""
    from climbrl.tune import shown_url

    paths = []
    for game, spec in t.games.items():
        params = load_params(spec.study)
        deals = objective_deals(spec, params)
        data: dict[str, Any] = {"storage": shown_url(t.storage), "games": {}}
        data["games"][game] = {
            "study": spec.study, "rules": params.rules, "pruner": spec.pruner, "rungs": spec.rungs(),
            "reduction_factor": spec.reduction_factor, "trials": spec.trials,
            "games_per_epoch": params.train[spec.learners[0]].games_per_epoch,
            "full_epochs": {a: params.train[a].epochs for a in spec.learners},
            "objective": {"opponent": spec.opponent, "games": spec.objective_games, "deals": len(deals),
                          "deal_seed": spec.deal_seed, "purpose": "train-eval"},
            "studies": {a: study_summary(t, game, a) for a in spec.learners}}
        path = studies_path(reports, game)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1) + "\n")
        paths.append(path)
    return paths


# --- the comparison at the full budget --------------------------------------------------------------

#: why a learner is left out of the comparison (:func:`kept_own`), on stderr and in the report
KEPT_OWN = ("the study's best trial has the learner's config in `params.yaml` (its default, or one adopted from an "
            "earlier comparison): the tuned arm would train it again, seed for seed")


def is_own_config(values: dict[str, Any], cfg: TrainConfig) -> bool:
    """Whether a trial's ``values`` are ``cfg``'s own (compared by value, not by a trial's mark: the
    params may have changed since the study ran, or adopted its best)."""
    return all(k in values and math.isclose(float(values[k]), float(getattr(cfg, k)), rel_tol=1e-9)
               for k in searched(cfg.algo))


def kept_own(t: Tuning, studies: dict[str, Any]) -> dict[str, list[str]]:
    """Per game, the learners whose study's best is their own config (:func:`is_own_config`): not compared."""
    out: dict[str, list[str]] = {}
    for game, spec in t.games.items():
        params = load_params(spec.study)
        for a in spec.learners:
            best = studies["games"].get(game, {}).get("studies", {}).get(a, {}).get("best")
            if best is not None and is_own_config(best["params"], params.train[a]):
                out.setdefault(game, []).append(a)
    return out


def tuned_config(params: Params, learner: str, best: dict[str, Any], seed: int | None = None) -> TrainConfig:
    """The game's study config of ``learner`` with the study's best values (the full budget)."""
    cfg = dataclasses.replace(params.train[learner], **best)
    return dataclasses.replace(cfg, seed=seed) if seed is not None else cfg


def compare_jobs(t: Tuning, studies: dict[str, Any], runs: str | Path = RUNS) -> list[Any]:
    """Every full-budget run of the comparison: per game, learner with a best trial and seed, the
    tuned config and the default one (:class:`pipeline.seeds.Job`: trained, then played on the
    study's evaluation and validation deals as the seed study plays them)."""
    from pipeline.seeds import Job, deal_sets

    out = []
    kept = kept_own(t, studies)
    for game, spec in t.games.items():
        params = load_params(spec.study)
        sets = deal_sets(params)
        for a in spec.learners:
            best = studies["games"][game]["studies"][a].get("best")
            if best is None:
                print(f"tune: {game} {a}: no complete trial, nothing to compare", file=sys.stderr)
                continue
            if a in kept.get(game, ()):
                print(f"tune: {game} {a}: {KEPT_OWN}, nothing to compare", file=sys.stderr)
                continue
            for arm, values in (("tuned", best["params"]), ("default", {})):
                for s in t.seeds:
                    out.append(Job(game, a, s, tuned_config(params, a, values, s),
                                   str(Path(runs) / "compare" / game / a / arm / f"seed{s}"),
                                   tuple(params.evaluate.opponents), sets))
    return out


def run_compare_job(job: Any) -> dict[str, Any]:
    """One run (:func:`pipeline.seeds.run_one`); a default run that ``make seeds`` finished with the
    same config, policy and deals is taken from there instead of trained again."""
    from climbrl.threads import single_thread
    from pipeline.seeds import EVALUATION, done, run_dir, run_one

    if "/default/" in job.out.replace(os.sep, "/"):
        theirs = dataclasses.replace(job, out=str(run_dir(SEEDS_RUNS, job.game, job.learner, job.seed)))
        rec = done(theirs)
        if rec is not None and done(job) is None:
            Path(job.out).mkdir(parents=True, exist_ok=True)
            for name in ("policy.pt", EVALUATION):
                shutil.copy2(Path(theirs.out) / name, Path(job.out) / name)
            print(f"tune: {job.game} {job.learner} default seed {job.seed}: reused from {theirs.out}",
                  file=sys.stderr, flush=True)
    with single_thread():
        rec = run_one(job)
    (Path(job.out) / "checkpoint.pt").unlink(missing_ok=True)  # finished: its policy and record are what count
    return rec


def studies_for(t: Tuning, reports: str | Path = REPORTS) -> dict[str, Any]:
    """The study summaries the comparison of ``t``'s games starts from; a ``ValueError`` naming a
    game whose studies have not run."""
    studies = load_studies(reports) or {"games": {}}
    missing = [g for g in t.games if g not in studies["games"]]
    if missing:
        raise ValueError(f"no study summary of {', '.join(missing)} in {Path(reports) / 'studies'}: run "
                         f"python -m pipeline.tuning study --game {missing[0]} first")
    return studies


def run_compare(t: Tuning, runs: str | Path = RUNS, reports: str | Path = REPORTS,
                workers: int | None = None) -> dict[str, Path]:
    """Every run of the comparison of ``t``'s games (``workers`` processes), then each game's
    ``reports/GAME.json``."""
    studies = studies_for(t, reports)
    todo = compare_jobs(t, studies, runs)
    records = _pool_map(run_compare_job, todo, workers or t.workers)
    out = {}
    for game, spec in t.games.items():
        params = load_params(spec.study)
        data: dict[str, Any] = {"game": game, "rules": params.rules, "study": spec.study, "seeds": list(t.seeds),
                                "opponents": list(params.evaluate.opponents), "learners": {},
                                "kept_own": kept_own(t, studies).get(game, [])}
        for job, rec in zip(todo, records, strict=True):
            if job.game != game:
                continue
            arm = "tuned" if "/tuned/" in job.out.replace(os.sep, "/") else "default"
            lr = data["learners"].setdefault(job.learner, {
                "algo": job.cfg.algo, "best": studies["games"][game]["studies"][job.learner]["best"],
                "config": {k: v for k, v in tuned_config(params, job.learner, studies["games"][game]["studies"]
                                                         [job.learner]["best"]["params"]).to_dict().items()},
                "tuned": {}, "default": {}})
            data["sets"] = rec["sets"]
            lr[arm][str(job.seed)] = {k: rec[k] for k in ("policy_md5", "epochs", "train_seconds", "eval_seconds",
                                                          "evaluation", "validation")}
        path = Path(reports) / f"{game}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1) + "\n")
        out[game] = path
    return out


def estimate(t: Tuning) -> dict[str, Any]:
    """A rough upper count of the study stage's epochs per game (every trial to the first rung, a
    ``1 / reduction_factor`` share on to each next one): what the params' budget comments are
    computed from."""
    out = {}
    for game, spec in t.games.items():
        rungs = spec.rungs()
        epochs, share, prev = 0.0, 1.0, 0
        for r in rungs:
            epochs += share * (r - prev)
            share /= spec.reduction_factor
            prev = r
        out[game] = {"epochs_per_trial": epochs, "trials": spec.trials, "learners": len(spec.learners),
                     "epochs": math.ceil(epochs * spec.trials * len(spec.learners))}
    return out


@params_io.command("python -m pipeline.tuning")
def main(argv: list[str] | None = None) -> int:
    p = params_io.ArgumentParser(prog="python -m pipeline.tuning", description=__doc__.split("\n\n")[0])
    p.add_argument("step", choices=("study", "compare", "estimate"), help="the Optuna studies, the full-budget "
                   "comparison, or the study stage's epoch counts (the report: python -m pipeline.tuning_report)")
    p.add_argument("--params", default=str(PARAMS))
    p.add_argument("--workers", type=int, help="processes at a time (default: the params' workers)")
    p.add_argument("--game", help="one game's studies or runs alone (default: every game of the params)")
    p.add_argument("--runs", default=str(RUNS))
    p.add_argument("--reports", default=str(REPORTS))
    args = p.parse_args(argv)
    params_io.workers(args.workers)
    t = only(load_tuning(args.params), args.game)
    if args.step == "compare":
        studies_for(t, args.reports)
    if args.step == "estimate":
        print(json.dumps(estimate(t), indent=1))
    elif args.step == "study":
        for path in run_studies(t, args.runs, args.reports, args.workers):
            print(path)
    else:
        for path in run_compare(t, args.runs, args.reports, args.workers).values():
            print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
