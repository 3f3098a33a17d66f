"""The one place that talks to MLflow.

Embedded default: ``sqlite:///mlflow.db`` with artifacts under ``./mlruns`` (params.yaml,
``tracking``); ``MLFLOW_TRACKING_URI`` in the environment points the same code at a server.
Telemetry off is an environment default that a program sets where it starts
(:func:`climbrl.environment.environment_defaults`; the Makefile and CI export the same
variables), never as a side effect of importing this module.
Open the UI: ``mlflow ui --backend-store-uri sqlite:///mlflow.db --host 127.0.0.1 --port 5000``.

Every run is named by its stage and learner (:func:`run_name`: ``train@doudizhu-ppo_handsplit``,
``evaluate@big2-dqn``, ``tournament@big2``) and tagged with the game, the algorithm and the
variant (:func:`learner_tags`); :func:`runs_page` is the UI's address of an experiment's runs.

A training is logged while it runs (:func:`training_run`, the training loop's ``on_epoch``): the
run starts before the first epoch and ends after the last, every epoch's row is logged as it
ends (real time, step = epoch), and a stopped or failed training leaves its run KILLED or FAILED
with the epochs so far. The experiment carries MLflow's kind tag (model training), the runs
their inputs (the params file, the deal sets) as datasets.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from climbrl.provenance import git_commit

PIP_REQUIREMENTS = ["torch==2.13.0", "numpy==2.4.6", "climbrl==0.1.0"]
REGISTERED_DIR = "policy"
REGISTERED_FILE = "policy.pt"
# The experiment's kind as MLflow's UI reads it (mlflow 3.17: the tag the UI's kind selector writes;
# without it the UI guesses, and guessed GenAI for the study): model training, not GenAI.
EXPERIMENT_KIND_TAG = "mlflow.experimentKind"
EXPERIMENT_KIND = "custom_model_development"
OUT_DIR_TAG = "climbrl.out_dir"     # a training run's output folder: a resumed training finds its run by it
RESUMES_TAG = "climbrl.resumes"     # how many times the run was continued by a resumed training
STEP_METRIC = "games"               # a metric every epoch's row has: the epochs a run holds


def run_name(stage: str, game: str | None, learner: str | None = None) -> str:
    """A run's name: its stage, then the game and the learner's id in the study (its key in
    params.yaml's ``train``): ``train@doudizhu-ppo_handsplit``, ``evaluate@big2-dqn``,
    ``tournament@big2``. The learner's id, not its algorithm: five Dou Dizhu learners are PPO,
    and runs named by the algorithm alone (``train-ppo``) could not be told apart in the UI."""
    who = "-".join(x for x in (game, learner) if x)
    return f"{stage}@{who}" if who else stage


def learner_tags(game: str | None, algo: str, variant: str | None = None) -> dict[str, str]:
    """The tags of a learner's run: the game, the algorithm (``ppo``) and the variant, the
    learner's id in the study (``ppo_handsplit``; the algorithm's name where the study has one
    learner per algorithm). A run whose game is not known has no game tag."""
    return {**({"game": game} if game else {}), "algo": algo, "variant": variant or algo}


def runs_page(ui_url: str, experiment_id: str) -> str:
    """The MLflow UI's address of an experiment's runs table: ``http://127.0.0.1:5000/#/experiments/1/runs``.

    MLflow 3.17 has no setting for the UI's default workflow: its switch (top left) starts on
    GenAI in a browser that has not chosen, and one click on "Model training" is remembered
    there. (The ``workflowType`` query parameter the switch writes is undocumented, and the UI
    drops it at the next link.) The runs table shows either way: the experiments are tagged as
    model training (:data:`EXPERIMENT_KIND`)."""
    return f"{ui_url.rstrip('/')}/#/experiments/{experiment_id}/runs"


LOCAL_UI = "http://127.0.0.1:5000"
"""Where ``mlflow ui`` serves a store by default (this machine only)."""


def runs_address(tracking_uri: str, experiment: str) -> str:
    """Where a person sees ``experiment``'s runs in the store at ``tracking_uri``: its runs table
    (:func:`runs_page`) on a tracking server; a store the UI is not served from (SQLite) gets the
    address ``mlflow ui`` gives it, with that command. The experiment is made (tagged as model
    training) if the store has none of that name, so the address exists before the first run."""
    from mlflow.exceptions import MlflowException
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri)
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        try:
            experiment_id = client.create_experiment(experiment, tags={EXPERIMENT_KIND_TAG: EXPERIMENT_KIND})
        except MlflowException:  # another process made it a moment before
            experiment_id = client.get_experiment_by_name(experiment).experiment_id
    else:
        experiment_id = exp.experiment_id
    if tracking_uri.startswith(("http://", "https://")):
        return runs_page(tracking_uri, experiment_id)
    page = runs_page(LOCAL_UI, experiment_id)
    if tracking_uri.startswith("sqlite:"):
        cli = Path(sys.executable).parent / "mlflow"
        cli_name = os.path.relpath(cli) if cli.exists() else "mlflow"
        return f"{page} (serve it first: {cli_name} ui --backend-store-uri {tracking_uri} --host 127.0.0.1 --port 5000)"
    # a database URL is not printed: it may hold a password
    return f"{page} (once an MLflow server serves this store)"


def params_hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


@contextmanager
def _environment_kept(*names: str) -> Iterator[None]:
    """MLflow's ``set_tracking_uri`` and ``set_experiment`` also export ``MLFLOW_TRACKING_URI`` and
    ``MLFLOW_EXPERIMENT_ID`` to the process environment, where every child process inherits them:
    a child meant for another store (the other study of ``make run``, a test's server) would then
    log to this one or fail on an experiment id that is not there, and a second ``configure`` in
    this process would take the first store for the user's override. The selection lives in
    MLflow's module state; the environment is put back as it was."""
    before = {k: os.environ.get(k) for k in names}
    try:
        yield
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def configure(tracking_uri: str, experiment: str) -> str:
    """Point MLflow at the store (the environment wins) and select the study's experiment, tagged
    as model training (:data:`EXPERIMENT_KIND`) unless someone chose another kind."""
    import mlflow

    uri = os.environ.get("MLFLOW_TRACKING_URI", tracking_uri)
    with _environment_kept("MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_ID"):
        mlflow.set_tracking_uri(uri)
        exp = mlflow.set_experiment(experiment)
        # mlflow 3.17: a process that loses the race to create the experiment (two workers starting
        # on a fresh server) gets it back from set_experiment without making it the active one, and
        # its runs would go to the Default experiment: activate it by id, which always does
        exp = mlflow.set_experiment(experiment_id=exp.experiment_id)
    if EXPERIMENT_KIND_TAG not in exp.tags:
        client = mlflow.tracking.MlflowClient()
        try:
            client.set_experiment_tag(exp.experiment_id, EXPERIMENT_KIND_TAG, EXPERIMENT_KIND)
        except mlflow.exceptions.MlflowException:
            # another process tagged it at the same moment (a server on PostgreSQL refuses the second
            # insert): fine if the tag is there now
            if EXPERIMENT_KIND_TAG not in client.get_experiment(exp.experiment_id).tags:
                raise
    return uri


def _metric_name(key: str) -> str:
    return key.replace("@", "_")


def _row_metrics(row: dict[str, Any], timestamp_ms: int) -> list[Any]:
    from mlflow.entities import Metric

    step = int(row["epoch"])
    return [Metric(_metric_name(k), float(v), timestamp_ms, step) for k, v in row.items()
            if k != "epoch" and isinstance(v, (int, float)) and v == v]


def params_file_input(path: str | Path) -> Any:
    """The params file as a run input: a metadata-only dataset (the file stays where it is),
    its digest the file's SHA-256, so two runs show whether they read the same file."""
    from mlflow.data.meta_dataset import MetaDataset
    from mlflow.data.sources import LocalArtifactDatasetSource

    path = Path(path).resolve()
    return MetaDataset(LocalArtifactDatasetSource(str(path)), name=path.name, digest=sha256_file(path)[:16])


def deals_input(deals: Sequence[int], name: str, source: str | Path) -> Any:
    """A deal set (the deal seeds the games are dealt from) as a run input: a NumPy dataset whose
    digest MLflow computes from the seeds, with ``source`` the file they were read (or derived) from."""
    import mlflow
    import numpy as np
    from mlflow.data.sources import LocalArtifactDatasetSource

    return mlflow.data.from_numpy(np.asarray(deals, dtype=np.int64), name=name,
                                  source=LocalArtifactDatasetSource(str(Path(source).resolve())))


DATASET_RACE_ATTEMPTS = 3
"""How often :func:`log_inputs` tries when another process created the same dataset meanwhile."""


def _dataset_race(e: Exception) -> bool:
    """True when ``e`` is the store refusing a dataset row that another run inserted a moment
    before (SQLite's and PostgreSQL's unique-constraint errors on the datasets table)."""
    text = str(e)
    return "datasets" in text and ("UNIQUE constraint failed" in text or "duplicate key value" in text)


def log_inputs(inputs: Sequence[tuple[Any, str]]) -> None:
    """``(dataset, context)`` pairs as the active run's inputs (contexts: ``params``, ``evaluation``...).

    MLflow inserts a dataset the experiment does not hold yet, and two runs that log the same
    dataset at the same moment (two learners' trainings starting side by side: the same params
    file, the same deals) race for that insert: the loser's transaction is rolled back with a
    unique-constraint error. The row is then there, so the call is made again (at most
    :data:`DATASET_RACE_ATTEMPTS` times); any other error is raised as it is."""
    import mlflow

    if not inputs:
        return
    for attempt in range(DATASET_RACE_ATTEMPTS):
        try:
            mlflow.log_inputs(datasets=[ds for ds, _ in inputs], contexts=[c for _, c in inputs],
                              tags_list=[None] * len(inputs))
            return
        except mlflow.exceptions.MlflowException as e:
            if not _dataset_race(e) or attempt == DATASET_RACE_ATTEMPTS - 1:
                raise


class TrainingRun:
    """The MLflow run of one training while it runs: :meth:`on_epoch` is the training loop's
    ``on_epoch`` callback. Each epoch's row (losses, timings, and the in-training evaluation on
    the epochs that have one) is logged at once, step = epoch, timestamp = now. A failed write is
    reported and skipped, never raised into the training: :meth:`complete` logs whatever epochs
    of the final history the run does not hold yet (also those a resumed training restored from
    its checkpoint)."""

    def __init__(self, run_id: str, logged_steps: set[int] | None = None) -> None:
        self.run_id = run_id
        self.logged_steps = set(logged_steps or ())
        self.failed_writes = 0

    def _log_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        import mlflow

        now = int(time.time() * 1000)
        metrics = [m for row in rows for m in _row_metrics(row, now)]
        client = mlflow.tracking.MlflowClient()
        for i in range(0, len(metrics), 1000):
            client.log_batch(self.run_id, metrics=metrics[i:i + 1000])
        self.logged_steps.update(int(row["epoch"]) for row in rows)

    def on_epoch(self, row: dict[str, Any]) -> None:
        try:
            self._log_rows([row])
        except Exception as e:  # noqa: BLE001  (tracking must not stop a training)
            self.failed_writes += 1
            print(f"MLflow: epoch {row.get('epoch')} not logged yet ({type(e).__name__}: {e}); "
                  "it is logged when the training ends", file=sys.stderr)

    def complete(self, history: Sequence[dict[str, Any]]) -> None:
        missing = [row for row in history if int(row["epoch"]) not in self.logged_steps]
        if missing:
            self._log_rows(missing)


def _unfinished_run(out_key: str, hash_: str) -> tuple[str, set[int]] | None:
    """The latest run of this training (same output folder, same config) that did not finish:
    a resumed training continues it. Returns its id and the epochs it holds."""
    import mlflow

    if "'" in out_key:
        return None
    runs = mlflow.search_runs(filter_string=f"tags.`{OUT_DIR_TAG}` = '{out_key}' and tags.params_hash = '{hash_}'",
                              order_by=["attributes.start_time DESC"], max_results=5, output_format="list")
    for run in runs:
        if run.info.status != "FINISHED":
            history = mlflow.tracking.MlflowClient().get_metric_history(run.info.run_id, STEP_METRIC)
            return run.info.run_id, {m.step for m in history}
    return None


@contextmanager
def training_run(cfg_dict: dict[str, Any], out_dir: Path, inputs: Sequence[tuple[Any, str]] = (),
                 artifacts: Sequence[Path] = (), tags: dict[str, str] | None = None,
                 resuming: bool = False, stage: str = "train", learner: str | None = None) -> Iterator[TrainingRun]:
    """The MLflow run of one training, open while the training runs (call it from inside).

    Started before the first epoch with the config as params, tags and ``inputs``; ended
    FINISHED after the body (the ``artifacts`` that exist are logged then), KILLED when the body
    is interrupted (Ctrl-C; SIGTERM, turned into an exception while the run is open in the main
    thread) and FAILED when it raises: the epochs logged so far stay. A process killed outright
    (SIGKILL) leaves the run RUNNING with its epochs; ``resuming=True`` (the training resumes from
    a checkpoint) continues that run, or a FAILED or KILLED one of the same folder and config,
    instead of starting a new one. Logging changes nothing in the training: it reads the rows
    after each epoch's files are written and draws no random numbers. The run is named
    ``STAGE@GAME-LEARNER`` (:func:`run_name`; ``learner``, the learner's id in the study, defaults
    to the config's algorithm) and tagged with :func:`learner_tags`."""
    import mlflow
    from mlflow.entities import Param

    algo, game = cfg_dict["algo"], cfg_dict.get("game")
    hash_ = params_hash(cfg_dict)
    out_key = str(Path(out_dir).resolve())
    previous = _unfinished_run(out_key, hash_) if resuming else None
    run = (mlflow.start_run(run_id=previous[0]) if previous
           else mlflow.start_run(run_name=run_name(stage, game, learner or algo)))
    tracker = TrainingRun(run.info.run_id, previous[1] if previous else None)
    status = "FAILED"
    try:
        if previous:
            resumes = int(run.data.tags.get(RESUMES_TAG, "0")) + 1
            mlflow.set_tags({RESUMES_TAG: str(resumes), "git_commit": git_commit()})
        else:
            client = mlflow.tracking.MlflowClient()
            params = [Param(k, json.dumps(v) if isinstance(v, (list, dict)) else str(v)) for k, v in cfg_dict.items()]
            for i in range(0, len(params), 100):
                client.log_batch(run.info.run_id, params=params[i:i + 100])
            mlflow.set_tags({**learner_tags(game, algo, learner), "stage": stage, "git_commit": git_commit(),
                             "params_hash": hash_, OUT_DIR_TAG: out_key, **(tags or {})})
            log_inputs(inputs)
        with _sigterm_raises():
            yield tracker
        for path in artifacts:
            if Path(path).exists():
                mlflow.log_artifact(str(path))
        status = "FINISHED"
    except BaseException as e:
        if _interrupted(e):
            status = "KILLED"
        raise
    finally:
        mlflow.end_run(status)


def _interrupted(e: BaseException) -> bool:
    """Stopped from outside (Ctrl-C, SIGTERM, a Prefect cancellation) rather than failed."""
    return isinstance(e, KeyboardInterrupt | SystemExit) or type(e).__name__ in ("TerminationSignal", "CancelledError")


class _Terminated(SystemExit):
    """SIGTERM while a training run is open (exit status 143, as the default handler's)."""


@contextmanager
def _sigterm_raises() -> Iterator[None]:
    """SIGTERM raises :class:`_Terminated` in the main thread for the duration (so the run is
    ended KILLED rather than left RUNNING); elsewhere, or with a handler already set, nothing changes."""
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise _Terminated(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def stage_run(name: str, started: float | None = None) -> Iterator[Any]:
    """The active run of a stage that logs its results once they exist (an evaluation, a
    tournament, the behaviour window): opened at ``started`` (``time.time()`` when the stage's work
    began; default now) in the experiment :func:`configure` selected, so that the run's start and
    duration in the UI are the work's, not the moment of logging. Ends FINISHED, FAILED on an
    exception. (MLflow 3.17, pinned, takes no start time in ``start_run``: the run is made as
    ``start_run`` makes it, in the experiment it would use, with the tags it would resolve, user and
    source, by the client, which takes one.)"""
    import mlflow
    from mlflow.tracking.context import registry
    from mlflow.tracking.fluent import _get_experiment_id
    from mlflow.utils.mlflow_tags import MLFLOW_RUN_NAME

    client = mlflow.tracking.MlflowClient()
    start_ms = int((time.time() if started is None else started) * 1000)
    run = client.create_run(_get_experiment_id(), start_time=start_ms, run_name=name,
                            tags=registry.resolve_tags({MLFLOW_RUN_NAME: name}))
    with mlflow.start_run(run_id=run.info.run_id) as active:
        yield active


def log_evaluation(algo: str, results: dict[str, Any], path: Path, tags: dict[str, str] | None = None,
                   stage: str = "evaluate", inputs: Sequence[tuple[Any, str]] = (),
                   started: float | None = None, game: str | None = None, learner: str | None = None) -> str:
    """A run for one learner's final evaluation (``stage`` evaluate) or its validation (``validate``):
    a metric per opponent, the JSON as artifact, ``inputs`` (the deal set, the params file) as inputs;
    it spans the evaluation from ``started`` (:func:`stage_run`). Named and tagged as the
    learner's training is (:func:`run_name`, :func:`learner_tags`: ``algo`` the algorithm,
    ``learner`` its id in the study, by default the algorithm)."""
    import mlflow

    with stage_run(run_name(stage, game, learner or algo), started) as run:
        log_inputs(inputs)
        for m in results["matches"]:
            opp = m["opponents"][0]
            for k in ("win_rate", "win_rate_low", "win_rate_high", "normalized_win_rate", "mean_reward"):
                if k in m:  # a team game has no chance-normalized rate
                    mlflow.log_metric(f"{k}/{opp}", m[k])
            mlflow.log_metric(f"games/{opp}", m["games"])
            for role, r in m.get("by_role", {}).items():
                for k in ("win_rate", "win_rate_low", "win_rate_high", "mean_reward", "games"):
                    mlflow.log_metric(f"{k}/{opp}/{role}", r[k])
            for role, r in m.get("A", {}).items():  # a duel (DouZero's protocol): the learner's side by role
                for k in ("win_rate", "win_rate_low", "win_rate_high", "adp", "games"):
                    mlflow.log_metric(f"{k}/{opp}/{role}", r[k])
        mlflow.set_tags({**learner_tags(game, algo, learner), "stage": stage, "git_commit": git_commit(),
                         **(tags or {})})
        mlflow.log_artifact(str(path))
        return run.info.run_id


def register_policy(policy_path: Path, model_name: str, algo: str, metrics: dict[str, float],
                    alias: str = "best", game: str | None = None, learner: str | None = None) -> str:
    """Register the best policy under ``model_name`` as a weights-only checkpoint; returns the version.

    The artifact is the project's network file (``torch.save`` of tensors, plain containers and the
    network's config, read back with ``weights_only=True``), not a pickled model: loading it from a
    shared registry never runs code from the file; the code comes from the installed climbrl
    (:func:`load_registered_policy`). The version's tags name the format, the loader and the
    file's SHA-256, and ``alias`` points at it. The run that holds it is ``register@GAME-LEARNER``.
    """
    import tempfile

    import mlflow

    from climbrl.learn import checkpoint as ckpt

    net, meta, encoder = ckpt.load_network(policy_path)  # refuses anything that is not a weights-only network file
    name = run_name("register", game, learner or algo)
    with tempfile.TemporaryDirectory() as tmp, mlflow.start_run(run_name=name) as run:
        artifact = Path(tmp) / REGISTERED_FILE
        ckpt.save_atomic(ckpt.network_payload(net, meta.get("algo", algo), int(meta.get("epoch", 0)), encoder),
                        artifact)
        mlflow.log_metrics(metrics)
        mlflow.set_tags({**learner_tags(game, algo, learner), "stage": "register", "git_commit": git_commit()})
        mlflow.log_artifact(str(artifact), artifact_path=REGISTERED_DIR)
        source = f"{run.info.artifact_uri.rstrip('/')}/{REGISTERED_DIR}"
        client = mlflow.tracking.MlflowClient()
        try:
            client.get_registered_model(model_name)
        except mlflow.exceptions.MlflowException:
            client.create_registered_model(model_name, description="climbrl policy networks, weights-only "
                                           "checkpoints: load with climbrl.track.load_registered_policy")
        version = client.create_model_version(model_name, source=source, run_id=run.info.run_id, tags={
            "format": f"{ckpt.FORMAT} v{ckpt.VERSION}: torch.save of tensors and plain data, weights_only=True",
            "loader": "climbrl.track.load_registered_policy", "algo": algo, "sha256": sha256_file(artifact),
            "requirements": ", ".join(PIP_REQUIREMENTS)})
        if alias:
            client.set_registered_model_alias(model_name, alias, version.version)
        return str(version.version)


def load_registered_policy(name: str, version: str | int | None = None, alias: str | None = None,
                           mode: str = "greedy") -> Any:
    """A registered policy as an agent (:class:`climbrl.learn.policy.PolicyAgent`).

    Give ``version`` or ``alias``. The artifact is downloaded, its SHA-256 checked against the
    version's tag, and read with ``torch.load(weights_only=True)`` through climbrl's own loader: a
    file that is not a weights-only climbrl network (a tampered pickle, say) raises
    :class:`climbrl.learn.checkpoint.CheckpointError` and none of its code runs.
    """
    import tempfile

    import mlflow

    from climbrl.learn.checkpoint import CheckpointError
    from climbrl.learn.policy import load_policy_agent

    if (version is None) == (alias is None):
        raise ValueError("give exactly one of version and alias")
    client = mlflow.tracking.MlflowClient()
    mv = (client.get_model_version(name, str(version)) if version is not None
          else client.get_model_version_by_alias(name, alias))
    if mv.tags.get("loader") != "climbrl.track.load_registered_policy":
        raise CheckpointError(f"model {name} version {mv.version} was not registered as a climbrl weights-only "
                              f"policy (loader tag {mv.tags.get('loader')!r}); refusing to load it")
    with tempfile.TemporaryDirectory() as tmp:
        local = Path(mlflow.artifacts.download_artifacts(artifact_uri=f"{mv.source.rstrip('/')}/{REGISTERED_FILE}",
                                                         dst_path=tmp))
        digest = sha256_file(local)
        if digest != mv.tags.get("sha256"):
            raise CheckpointError(f"model {name} version {mv.version}: the artifact's SHA-256 {digest[:12]}... "
                                  f"does not match the registered {str(mv.tags.get('sha256'))[:12]}...; "
                                  "the file was changed after registration")
        agent = load_policy_agent(local, mode=mode)
    agent.name = f"models:/{name}/{mv.version}"
    return agent


def sha256_file(path: str | Path) -> str:
    """The SHA-256 of a file's bytes (hex), read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
