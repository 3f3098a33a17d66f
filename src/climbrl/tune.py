"""Optuna studies over the learners' hyperparameters.

Searched, where the learner has them: learning rate (log scale, all), entropy coefficient
(PPO, log scale), target-sync period (Q-learning, DQN, log scale), epsilon-decay length (DQN,
log scale), constant epsilon (MCQ, SARSA, Q-learning). Objective: the greedy policy's win rate
against a copy of ``tune.opponent`` in every other seat (default: Big 2 the heuristic, Dou Dizhu
greedy, :data:`climbrl.config.GAME_SETUP`) at a reduced budget, at the game of ``params.yaml``
under its rules; every evaluation during training is
reported so the pruner (median by default) stops weak trials. A new study's first trial is the
learner's own config (the study's base, else its defaults; user attribute ``default``), so that
what the study finds is measured beside where it started, on the same deals and budget (a study of
random draws alone may never come near it: Big 2's PPO study drew no learning rate near its
default). The sampler is seeded from ``tune.seed`` and the study's name (:func:`sampler_seed`), so
that the studies of two learners do not draw the same points; the storage defaults to SQLite and
a study is resumable: rerunning the same command keeps the finished trials and runs only the
missing ones. Each trial is a nested MLflow run; the best parameters go to a YAML file that
``climbrl train --config`` takes.

Dashboard: ``optuna-dashboard sqlite:///optuna.db --host 127.0.0.1 --port 8080``; the objective
is named there (``win rate vs heuristic``).

Many workers, one study: ``climbrl tune --storage postgresql://... --study NAME`` run by several
processes (on one machine or many) shares the study through the database (any RDB URL but
SQLite, whose path is unchanged). The URL can come from the environment instead,
``CLIMBRL_TUNE_STORAGE=postgresql://...`` (:data:`STORAGE_ENV`; ``--storage`` wins over it,
params.yaml's ``tune.storage`` comes last): the database's password is then on no command line,
where every local user reads it in ``ps``. Then:

- the workers together run ``trials`` trials, not each: before a worker starts a trial it counts
  the study's trials that are done, running or waiting and stops when the budget is reached; on
  PostgreSQL (MySQL) the count and the new trial's creation hold an advisory lock, so two workers
  never both take the last slot; every process opens the storage under another one
  (:func:`open_shared_storage`; :func:`load_shared_study` for one that only looks at a study), as
  two processes writing Optuna's schema on a fresh database at once collide;
- each worker seeds its sampler differently (``tune.seed``, its process id and the time): with one
  seed every worker would sample the same parameters; a shared study is not reproducible trial
  for trial (the order of the workers' results decides what TPE sees);
- the pruner compares a trial with every worker's trials (they are read from the database);
- every running trial writes a heartbeat (``heartbeat_interval``, default 60 s): a trial whose
  worker died (SIGKILL, a lost machine) is marked FAIL once its heartbeat is ``grace_period`` old
  (default twice the interval), by the next worker that starts or begins a trial, and is retried
  with the same parameters (``RetryFailedTrialCallback``, up to ``max_retry`` times); a worker
  whose budget is spent stays while other workers' trials run (:class:`_Budget`), so no trial
  stays RUNNING and none is lost while any worker is left.

A study on a local store (SQLite) is run by one process at a time (:class:`_LocalStudy`: a lock
file beside the database, ``optuna.db.<study>.lock``, held for the whole run): a second process
on the same study is refused at once, with the holder's host and pid. So a trial the store still
shows RUNNING when the study starts was left by a process that died in the middle of it (killed,
a lost session): it is marked FAIL (user attribute ``interrupted``) and run again with the same
parameters (``retry_of``), as a shared study's heartbeats do; without that it would stay RUNNING
for ever and its parameters would never be measured.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import time
import warnings
from pathlib import Path
from typing import Any

import yaml

from climbrl.config import TrainConfig, train_config
from climbrl.params import TuneParams

STORAGE_ENV = "CLIMBRL_TUNE_STORAGE"


def searched(algo: str) -> list[str]:
    """The hyperparameters :func:`suggest` searches for ``algo``, in its order (read from it)."""

    class _Names:
        def __init__(self) -> None:
            self.names: list[str] = []

        def suggest_float(self, name: str, low: float, *_a: Any, **_k: Any) -> float:
            self.names.append(name)
            return low

        suggest_int = suggest_float

    t = _Names()
    suggest(t, algo)
    return t.names


def sampler_seed(seed: int, study_name: str) -> int:
    """The sampler's seed of a study on a local store: ``tune.seed`` and the study's name together,
    so that the studies of two learners (named apart) do not draw the same random start-up points."""
    return int.from_bytes(hashlib.sha256(f"{seed}:{study_name}".encode()).digest()[:3], "big")  # < 2**24: + trials


def enqueue_default(study: Any, cfg: TrainConfig) -> bool:
    """On a study without trials, queue ``cfg``'s own values of the searched hyperparameters as its
    first trial (user attribute ``default``). Not when one lies outside the search's range (it
    could not be compared as one of its points); said so. Whether it was queued."""
    import optuna

    values = {k: getattr(cfg, k) for k in searched(cfg.algo)}
    probe = optuna.trial.FixedTrial(values)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # FixedTrial warns of a value outside the range
        try:
            suggest(probe, cfg.algo)
        except (UserWarning, ValueError) as e:
            print(f"tune: {study.study_name}: the learner's own config is outside the searched range, not queued ({e})")
            return False
    if "game" not in study.user_attrs:  # a study with trials and no game would read as one from before Dou Dizhu
        study.set_user_attr("game", cfg.game)
    study.enqueue_trial(values, user_attrs={"default": True})
    return True


def suggest(trial: Any, algo: str) -> dict[str, Any]:
    values: dict[str, Any] = {"lr": trial.suggest_float("lr", 1e-5, 1e-3, log=True)}
    if algo == "ppo":
        values["ent_coef"] = trial.suggest_float("ent_coef", 1e-4, 1e-1, log=True)
    if algo in ("qlearning", "dqn"):
        values["target_sync"] = trial.suggest_int("target_sync", 50, 5000, log=True)
    if algo == "dqn":
        values["epsilon_decay_steps"] = trial.suggest_int("epsilon_decay_steps", 5_000, 500_000, log=True)
    if algo in ("mcq", "sarsa", "qlearning", "dmc"):
        values["epsilon"] = trial.suggest_float("epsilon", 0.01, 0.3)
    return values


def shared_storage(storage: str) -> bool:
    """Whether ``storage`` is a database several workers share (an RDB URL other than SQLite)."""
    return "://" in storage and not storage.split(":", 1)[0].startswith("sqlite")


def check_storage(storage: str) -> None:
    """Refuse a storage URL that cannot work, before any trial: not a URL, a database driver that is
    not installed, or a SQLite file in a folder that does not exist (SQLAlchemy would say so only
    from deep inside Optuna, as a traceback)."""
    import sqlalchemy

    try:
        url = sqlalchemy.engine.make_url(storage)
        url.get_dialect()
    except (sqlalchemy.exc.ArgumentError, sqlalchemy.exc.NoSuchModuleError, ImportError) as e:
        raise ValueError(f"storage: not a database URL Optuna can use ({e})") from None
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        folder = Path(url.database).resolve().parent
        if not folder.is_dir():
            raise ValueError(f"storage {storage!r}: the folder {folder} does not exist")


def shown_url(storage: str) -> str:
    """``storage`` with its password hidden (for output and files)."""
    if not shared_storage(storage):
        return storage
    from sqlalchemy.engine import make_url

    return make_url(storage).render_as_string(hide_password=True)


class _LocalStudy:
    """The claim of one process on a study of a local store (SQLite file): an exclusive ``flock``
    on ``<database>.<study>.lock``, held until :meth:`close` (which removes the file) or the
    process's end (the kernel drops the lock with the process, so a killed run leaves a file but no
    stale claim). A claim taken on a file that its holder removed meanwhile is taken again on the
    file now at that path, so two processes never hold one study. An in-memory database needs
    none."""

    def __init__(self, storage: str, study_name: str) -> None:
        import fcntl
        import re

        import sqlalchemy

        self.fd: int | None = None
        db = sqlalchemy.engine.make_url(storage).database
        if not db or db == ":memory:":
            return
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", study_name)
        if safe != study_name:  # two names that differ only in unsafe characters keep two locks
            safe += "-" + hashlib.sha256(study_name.encode()).hexdigest()[:8]
        self.path = Path(f"{db}.{safe}.lock")
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "unknown"
                os.close(fd)
                raise ValueError(f"Optuna study {study_name} ({shown_url(storage)}) is being run by another "
                                 f"process ({holder}); a study on SQLite runs in one process at a time: wait for it "
                                 f"to end, or share a PostgreSQL store between workers "
                                 f"({STORAGE_ENV}=postgresql://...)") from None
            try:
                current = os.stat(self.path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                current = False
            if current:
                break
            os.close(fd)  # its holder ended and removed it between our open and our lock: claim the new one
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{socket.gethostname()}:{os.getpid()}\n".encode(), 0)
        self.fd = fd

    def retry_interrupted(self, study: Any, store: Any, remaining: int) -> list[int]:
        """Mark FAIL every trial the store shows RUNNING (this process holds the study, so no live
        process runs them) and enqueue each again with its parameters, as far as ``remaining`` (the
        trials still to run) leaves room beside the retries already waiting. The numbers failed."""
        from optuna.trial import TrialState

        stale = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        waiting = study.get_trials(deepcopy=False, states=(TrialState.WAITING,))
        queued = {w.user_attrs.get("retry_of") for w in waiting}
        # the retries first: a run killed between the two steps left them waiting, and they are not queued twice
        for t in [t for t in stale if t.number not in queued][:max(0, remaining - len(waiting))]:
            study.enqueue_trial(t.params, user_attrs={"retry_of": t.number,
                                                      **({"default": True} if t.user_attrs.get("default") else {})})
        for t in stale:  # _trial_id: the storage's key of the trial (Optuna's own stale-trial check uses it)
            store.set_trial_user_attr(t._trial_id, "interrupted", True)
            store.set_trial_state_values(t._trial_id, TrialState.FAIL)
        return [t.number for t in stale]

    def close(self) -> None:
        if self.fd is not None:
            self.path.unlink(missing_ok=True)  # while still held: a claim on it afterwards sees it gone
            os.close(self.fd)
            self.fd = None


class _DbLock:
    """A named advisory lock of the database of ``storage`` (PostgreSQL, MySQL/MariaDB; elsewhere
    a no-op), on a connection of its own: held across the steps that several workers must not
    interleave."""

    def __init__(self, storage: str, name: str) -> None:
        import sqlalchemy

        self.dialect = sqlalchemy.engine.make_url(storage).get_backend_name()
        digest = hashlib.sha256(name.encode()).digest()
        self.key = int.from_bytes(digest[:8], "big", signed=True)
        self.name = digest.hex()[:60]
        self.conn = None
        self.held = False
        if self.dialect in ("postgresql", "mysql", "mariadb"):
            engine = sqlalchemy.create_engine(storage, poolclass=sqlalchemy.pool.NullPool)
            self.conn = engine.connect().execution_options(isolation_level="AUTOCOMMIT")

    def acquire(self) -> None:
        from sqlalchemy import text

        if self.conn is not None and not self.held:
            if self.dialect == "postgresql":
                self.conn.execute(text("SELECT pg_advisory_lock(:k)"), {"k": self.key})
            else:
                self.conn.execute(text("SELECT GET_LOCK(:n, -1)"), {"n": self.name})
            self.held = True

    def release(self) -> None:
        from sqlalchemy import text

        if self.conn is not None and self.held:
            if self.dialect == "postgresql":
                self.conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": self.key})
            else:
                self.conn.execute(text("SELECT RELEASE_LOCK(:n)"), {"n": self.name})
            self.held = False

    def close(self) -> None:
        if self.conn is not None:
            self.release()
            self.conn.close()
            self.conn = None


SETUP_LOCK = "climbrl-tune:setup"
"""The advisory lock under which every process opens Optuna's storage on a shared database."""


def open_shared_storage(storage: str, **kwargs: Any) -> Any:
    """Optuna's storage of the shared database ``storage`` (``RDBStorage(storage, **kwargs)``),
    opened under :data:`SETUP_LOCK`.

    Opening it creates Optuna's tables, its version row and its Alembic stamp on a fresh
    database, in several transactions; two processes opening it at once collide (PostgreSQL
    refuses the second ``CREATE TABLE`` of one name with a unique violation in its catalogue,
    ``pg_type_typname_nsp_index``), and the loser stopped there: a worker died before its first
    trial. So every process opens it under the lock: the workers (:func:`run_study`) and one that
    only looks at a study (:func:`load_shared_study`). A process that opens it without the lock
    (optuna-dashboard started on an empty database) can still collide with one under it: a unique
    violation is then retried, the other's schema being in place."""
    import sqlalchemy.exc
    from optuna.storages import RDBStorage

    setup = _DbLock(storage, SETUP_LOCK)
    setup.acquire()
    try:
        for attempt in range(3):
            try:
                return RDBStorage(storage, engine_kwargs={"pool_pre_ping": True}, **kwargs)
            except sqlalchemy.exc.IntegrityError:
                if attempt == 2:
                    raise
                time.sleep(0.5)
    finally:
        setup.close()
    raise AssertionError("unreachable")


def load_shared_study(study_name: str, storage: str) -> Any:
    """``optuna.load_study`` (KeyError when there is no such study yet), its storage opened as the
    workers open it (:func:`open_shared_storage`) when ``storage`` is shared."""
    import optuna

    return optuna.load_study(study_name=study_name,
                             storage=open_shared_storage(storage) if shared_storage(storage) else storage)


class _Budget:
    """The study's trial budget shared by its workers: :meth:`claim` before a worker starts a trial
    (True: there is room, or a failed trial waits for its retry), :meth:`started` once the trial
    exists. On PostgreSQL and MySQL an advisory lock, per study, is held from the claim until the
    trial is created, so that the count and the creation are one step for all workers.

    A worker that finds the budget spent while other workers' trials still run does not leave: it
    checks again every ``poll`` seconds until none runs. One of them whose worker died is failed
    once its heartbeat is stale and waits for its retry, which this worker then runs; leaving
    at once would leave that trial RUNNING, and the study a trial short, until some later worker
    started."""

    def __init__(self, study: Any, storage: str, trials: int, poll: float) -> None:
        self.study, self.trials, self.poll = study, trials, poll
        self.lock = _DbLock(storage, f"climbrl-tune:{study.study_name}")

    def started(self) -> None:
        self.lock.release()

    def claim(self) -> bool:
        import optuna
        from optuna.trial import TrialState

        while True:
            self.lock.acquire()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
                optuna.storages.fail_stale_trials(self.study)  # a dead worker's trial: FAIL, retried as WAITING
            states = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING, TrialState.WAITING)
            counted = self.study.get_trials(deepcopy=False, states=states)
            if len(counted) < self.trials or any(t.state == TrialState.WAITING for t in counted):
                return True
            self.started()
            # this worker's own trials have all ended when it claims: a running one is another's
            if not any(t.state == TrialState.RUNNING for t in counted):
                return False
            time.sleep(self.poll)

    def close(self) -> None:
        self.lock.close()


def _name_objective(study: Any, opponent: str) -> None:
    """Name the objective for optuna-dashboard (otherwise "Objective 0")."""
    import optuna

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        if not study.metric_names:
            study.set_metric_names([f"win rate vs {opponent}"])


def run_study(tp: TuneParams, rules: str = "", algo: str | None = None, trials: int | None = None,
              storage: str | None = None, study_name: str | None = None, out_dir: str | Path = "runs/tune",
              best_yaml: str | Path | None = None, track: bool = True, tracking: Any = None,
              game: str = "big2", heartbeat_interval: int = 60, grace_period: int | None = None,
              max_retry: int = 3, pruner: Any = None, base: TrainConfig | None = None,
              keep_checkpoints: bool = True, start_from_default: bool = True) -> dict[str, Any]:
    """The study of ``algo`` (default ``tp.algo``) at ``game`` under ``rules`` (default: the
    game's default preset); the objective plays ``tp.opponent``. ``storage``: else
    ``CLIMBRL_TUNE_STORAGE``, else ``tp.storage``. A shared storage
    (:func:`shared_storage`) is run by any number of workers: the budget is shared, a dead worker's
    trial is failed after ``grace_period`` seconds without a heartbeat and retried (module doc).

    ``pruner``: an Optuna pruner instead of ``tp.pruner``'s (the tuning pipeline's successive
    halving, :mod:`pipeline.tuning`). ``base``: every trial trains this config with the sampled
    values replaced (a study's own config, its budget and objective already set: epochs, games
    per epoch, evaluation every rung, objective games, opponent and deal seed); without it, the
    learner's defaults at ``tp``'s budget. Every trial records its CPU seconds (this process's,
    training and objective together) and the epochs it trained as user attributes
    (``cpu_seconds``, ``epochs``). ``keep_checkpoints=False``: a trial's folder loses its
    checkpoint when the trial ends (its policy and metrics stay): a replay learner's holds its
    buffer, hundreds of MB a trial. ``start_from_default``: a new study's first trial is the
    learner's own config (:func:`enqueue_default`)."""
    import dataclasses

    import optuna

    algo = algo or (base.algo if base is not None else tp.algo)
    opponent = base.eval_opponents[0] if base is not None else tp.opponent
    trials = trials if trials is not None else tp.trials
    storage = storage or os.environ.get(STORAGE_ENV) or tp.storage
    study_name = study_name or (tp.study if algo == tp.algo else f"climbrl-{algo}")
    if base is not None:
        game, rules = base.game, base.rules
    # fails fast on an unknown learner, game, rules or opponent; the learner's own config, the study's first trial
    own = base if base is not None else train_config(algo, game=game, rules=rules, eval_games=tp.eval_games,
                                                     eval_opponents=(opponent,))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if pruner is None:
        pruner = optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=0) if tp.pruner == "median" \
            else optuna.pruners.NopPruner()
    if trials < 0:
        raise ValueError(f"trials: must be >= 0, got {trials}")
    check_storage(storage)
    shared = shared_storage(storage)
    local: _LocalStudy | None = None
    if shared:
        from optuna.storages import RetryFailedTrialCallback

        store: Any = open_shared_storage(storage, heartbeat_interval=heartbeat_interval, grace_period=grace_period,
                                         failed_trial_callback=RetryFailedTrialCallback(max_retry=max_retry))
        setup = _DbLock(storage, SETUP_LOCK)  # two workers of a new study would both create it
        setup.acquire()
        try:
            seed = int.from_bytes(hashlib.sha256(f"{tp.seed}:{os.getpid()}:{time.time_ns()}".encode()).digest()[:4])
            study = optuna.create_study(study_name=study_name, storage=store, direction="maximize",
                                        load_if_exists=True, sampler=optuna.samplers.TPESampler(seed=seed),
                                        pruner=pruner)
            _name_objective(study, opponent)
            if start_from_default and trials > 0 and not study.trials:  # the first worker, under the setup lock
                enqueue_default(study, own)
        finally:
            setup.close()
    else:
        local = _LocalStudy(storage, study_name)
        try:
            store = optuna.storages.get_storage(storage)
            seed = sampler_seed(tp.seed, study_name)
            study = optuna.create_study(study_name=study_name, storage=store, direction="maximize",
                                        load_if_exists=True, sampler=optuna.samplers.TPESampler(seed=seed),
                                        pruner=pruner)
            if study.trials:  # resumed: the seed's first draws were the first run's (its random start-up would
                # repeat their parameters), so the seed goes on with the trials it drew: reproducible from there
                # (a queued trial, the default or a retry, drew nothing)
                drawn = sum(1 for t in study.trials if "fixed_params" not in t.system_attrs)
                study.sampler = optuna.samplers.TPESampler(seed=seed + drawn)
            elif start_from_default and trials > 0:
                enqueue_default(study, own)
            _name_objective(study, opponent)
        except BaseException:
            local.close()
            raise
    try:
        # a resumed study keeps its trials: they must have played this game (a study from before the
        # second game, without the attribute, played Big 2)
        made_for = study.user_attrs.get("game", "big2" if study.trials else game)
        if made_for != game:
            raise ValueError(f"Optuna study {study_name} ({shown_url(storage)}) holds {made_for} trials; this search "
                             f"plays {game}: name another study (--study, tune.study)")
        if "game" not in study.user_attrs:
            study.set_user_attr("game", game)
        budget = _Budget(study, storage, trials, poll=min(float(heartbeat_interval), 10.0)) if shared else None
        finished = [t for t in study.trials if t.state.name in ("COMPLETE", "PRUNED")]
        remaining = max(0, trials - len(finished))
        if local is not None:
            interrupted = local.retry_interrupted(study, store, remaining)
            for n in interrupted if not keep_checkpoints else ():  # as a trial that ended would have
                (Path(out_dir) / study_name / f"trial-{n}" / "checkpoint.pt").unlink(missing_ok=True)
            if interrupted:
                print(f"tune: {study_name}: trial(s) {', '.join(map(str, interrupted))} were left RUNNING by a "
                      "process that ended in the middle of them: failed, and run again with their parameters")
        mlflow = None
        if track and tracking is not None:
            from climbrl import track as tr

            tr.configure(tracking.tracking_uri, tracking.experiment)
            import mlflow

        worker = f"{socket.gethostname()}:{os.getpid()}"  # this worker, in Optuna's trials and MLflow's runs

        def objective(trial: Any) -> float:
            from climbrl.training import train

            if budget:
                budget.started()
                trial.set_user_attr("worker", worker)
            values = suggest(trial, algo)
            if base is not None:
                cfg = dataclasses.replace(base, **values)
            else:
                cfg = train_config(algo, game=game, rules=rules, epochs=tp.epochs, games_per_epoch=tp.games_per_epoch,
                                   eval_every=tp.eval_every, eval_games=tp.eval_games,
                                   eval_opponents=(opponent,), seed=tp.seed, **values)
            cpu0 = time.process_time()
            run_dir = Path(out_dir) / study_name / f"trial-{trial.number}"
            shutil.rmtree(run_dir, ignore_errors=True)  # a trial restarted after a crash starts clean
            last: dict[str, float] = {}

            def report(row: dict[str, Any]) -> None:
                key = f"win_rate/{opponent}"
                if key in row:
                    last["value"] = row[key]
                    trial.set_user_attr("epochs", int(row["epoch"]))
                    trial.report(row[key], step=int(row["epoch"]))
                    if ctx:  # the trial's curve grows in the MLflow UI while it trains
                        mlflow.log_metric(key, row[key], step=int(row["epoch"]))
                    # the last epoch's report ends the trial: pruning it then would save nothing and mark a trial
                    # that trained its whole budget as pruned (successive halving compares it at a rung past the last)
                    if int(row["epoch"]) < cfg.epochs and trial.should_prune():
                        raise optuna.TrialPruned()

            name = f"trial-{trial.number}"
            ctx = mlflow.start_run(run_name=tr.run_name(name, game, algo), nested=True) if mlflow else None
            failed: BaseException | None = None
            try:
                if ctx:
                    ctx.__enter__()
                    mlflow.set_tags({**tr.learner_tags(game, algo), "stage": "tune-trial", "study": study_name,
                                     "trial": str(trial.number), "worker": worker})
                    mlflow.log_params(values)
                train(cfg, run_dir, progress=False, on_epoch=report)
                value = last.get("value", 0.0)
                if ctx:
                    mlflow.log_metric("objective", value)
                    mlflow.set_tag("state", "complete")
                return value
            except optuna.TrialPruned:
                if ctx:
                    mlflow.set_tag("state", "pruned")
                raise
            except BaseException as e:  # the trial's run ends FAILED, as Optuna's trial does
                failed = e
                if ctx:
                    mlflow.set_tag("state", "failed")
                raise
            finally:
                trial.set_user_attr("cpu_seconds", round(time.process_time() - cpu0, 2))
                if not keep_checkpoints:
                    (run_dir / "checkpoint.pt").unlink(missing_ok=True)
                if ctx:
                    ctx.__exit__(type(failed) if failed else None, failed, failed.__traceback__ if failed else None)

        from climbrl.learn.trainable import TrainingDiverged

        diverged = (TrainingDiverged,)  # a trial whose training diverged fails; the study goes on

        def optimize() -> None:
            if budget is None:
                study.optimize(objective, n_trials=remaining, catch=diverged)
                return

            def next_trial(study: Any, trial: Any) -> None:
                if not budget.claim():
                    study.stop()

            try:
                study.optimize(objective, callbacks=[next_trial], catch=diverged)
            finally:
                budget.close()

        go = budget.claim() if budget else remaining > 0  # a shared study: this worker's first claim on its budget
        if go:
            if mlflow:
                with mlflow.start_run(run_name=tr.run_name("tune", game, algo)):
                    mlflow.set_tags({**tr.learner_tags(game, algo), "stage": "tune", "study": study_name,
                                     "storage": shown_url(storage)})
                    optimize()
            else:
                optimize()
        elif budget:
            budget.close()
        done = [t for t in study.trials if t.state.name == "COMPLETE"]
        result = {"study": study_name, "storage": shown_url(storage), "algo": algo, "trials": len(study.trials),
                  "complete": len(done), "pruned": sum(t.state.name == "PRUNED" for t in study.trials)}
        if done:
            result["best_value"] = study.best_value
            result["best_params"] = study.best_params
            path = Path(best_yaml or f"reports/tune/best_{algo}.yaml")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"# best of Optuna study {study_name} ({shown_url(storage)}); use: climbrl train "
                            f"--algo {algo} --config {path}\n" + yaml.safe_dump(study.best_params, sort_keys=True))
            result["best_yaml"] = str(path)
        return result
    finally:
        if local is not None:
            local.close()
