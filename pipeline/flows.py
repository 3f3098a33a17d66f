"""Prefect flows: one per stage, and the parent flow that chains them (seeds -> train every
learner -> evaluate every learner -> tournament, behaviour, and the best learner's deep and
whole-game (auction) evaluations when the study has them -> report). Stage logic lives in :mod:`pipeline.stages`.

Run the whole study from Prefect: ``python -m pipeline study`` (or ``study_flow()``). Without
``PREFECT_API_URL`` Prefect starts a temporary local server for the process; with it, the
same flows report to that server (``make run`` starts one for all stages:
:mod:`pipeline.prefect_server`). The parent flow trains learners concurrently on a task
runner: threads by default (``ThreadPoolTaskRunner``), or a Dask cluster (``task_runner="dask"``
with ``CLIMBRL_DASK_ADDRESS`` or a local cluster). Every task runs its stage in the flow's project
folder (:func:`in_project`), so a worker started anywhere writes to the project (the shared
store); a task whose worker died is run again by the scheduler on another worker, which is safe:
training resumes from its checkpoint, the other stages rewrite the same files.

The stage tasks that run concurrently in the study flow (train, evaluate, tournament,
behaviour) call their stage function (the one ``python -m pipeline STAGE --no-prefect`` calls)
in a fresh process of its own (:func:`in_own_process`): torch's thread count and random stream
are process-wide, so two stages on threads of one process could change each other's numbers. The
seeds and report stages run alone in the flow and compute no torch numbers: they run in place.

The other single-stage flows (``train_flow``, ``evaluate_flow``, ``baselines_flow``, ``deep_flow``,
``auction_flow``, ``tournament_flow``, ``behaviour_flow``) spawn their stage's process too by default, so a caller's
process (a notebook, a test) keeps its own state. ``python -m pipeline STAGE``, the command DVC
runs, is already a process of the stage's own, with nothing beside it: it runs the flow with
``in_place=True`` and saves the second process (the imports of torch and climbrl again, seconds a
stage). Either way the stage function is the same and computes on one thread
(:mod:`climbrl.threads`): a learner trained by a DVC stage is the study flow's, bit for bit. In
place, a stage that raises is retried by Prefect as before; one whose process dies outright (the
OOM killer, a signal) ends the DVC stage, which the next ``dvc repro`` runs again (training
resumes from its checkpoint).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.task_runners import ThreadPoolTaskRunner

import pipeline  # noqa: F401  (environment defaults)
from climbrl.threads import die_with_parent
from pipeline import stages


def in_own_process(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a fresh ("spawn") process: nothing process-wide (torch's
    thread count and random stream, forked locks of other threads) is shared with the flow or
    with the other stages. A daemonic process (a Dask worker under a nanny) may not start
    children: there the call runs in place, one task at a time per worker process. The child dies
    with its parent (:func:`climbrl.threads.die_with_parent`): a Dask worker killed outright
    (SIGKILL, the OOM killer) leaves no stage running on as an orphan, writing the same run folder
    as the retry that the scheduler starts on another worker."""
    if mp.current_process().daemon:
        return fn(*args, **kwargs)
    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn"),
                             initializer=die_with_parent) as pool:
        return pool.submit(fn, *args, **kwargs).result()


_cwd_lock = threading.Lock()


def in_project(project: str | None, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` with the project folder ``project`` as the working directory (the
    stages read and write paths relative to it: data/, runs/, reports/, the params file, a SQLite
    tracking store). The study flow passes its own folder, so a stage run by a Dask worker started
    elsewhere writes to the project (a filesystem every worker mounts at the same path, the shared
    store), never to the worker's own folder. ``None``, or the current folder: a plain call.
    The call's own time is added to the file named by ``CLIMBRL_STAGE_WORK_FILE`` when that is set
    (:func:`record_work`)."""
    if project is None or Path(project).resolve() == Path.cwd().resolve():
        return _timed(fn, *args, **kwargs)
    with _cwd_lock:  # the working directory is process-wide
        before = os.getcwd()
        os.chdir(project)
        try:
            return _timed(fn, *args, **kwargs)
        finally:
            os.chdir(before)


WORK_FILE = "CLIMBRL_STAGE_WORK_FILE"


def _timed(fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    start = time.perf_counter()
    try:
        return fn(*args, **kwargs)
    finally:
        record_work(time.perf_counter() - start)


def record_work(seconds: float) -> None:
    """Add ``seconds`` of a stage's own work (the stage function, without the process start, the
    imports and Prefect) to the file ``CLIMBRL_STAGE_WORK_FILE`` names, if any: ``python -m
    pipeline STAGE`` names it for the stage (run in its own process, or in one a flow spawns,
    which inherits the environment), and records the sum beside the stage's wall time
    (:mod:`climbrl.stage_times`); a retried task adds both attempts."""
    path = os.environ.get(WORK_FILE)
    if path:
        with open(path, "a") as f:
            f.write(f"{seconds!r}\n")


def read_work(path: str | Path) -> float | None:
    """The seconds :func:`record_work` added up in ``path``; None when nothing was recorded."""
    p = Path(path)
    lines = p.read_text().split() if p.exists() else []
    return sum(float(x) for x in lines) if lines else None


def _stage(name: str, params_file: str, /, *args: Any, **kwargs: Any) -> Any:
    """The stage function ``name`` of :mod:`pipeline.stages` on the params file (picklable: a
    spawned child imports it by name)."""
    return getattr(stages, name)(stages.params(params_file), *args, **kwargs)


def run_stage(project: str | None, name: str, params_file: str, /, *args: Any, own_process: bool = True,
              **kwargs: Any) -> Any:
    """The stage ``name`` on the params file, in the project folder, in a process of its own (or
    in place)."""
    return _in_project_as(own_process, project, _stage, name, params_file, *args, **kwargs)


def _in_project_as(own_process: bool, project: str | None, fn: Callable[..., Any], /, *args: Any,
                   **kwargs: Any) -> Any:
    """:func:`in_project` in a process of its own (:func:`in_own_process`) or in this one."""
    if own_process:
        return in_own_process(in_project, project, fn, *args, **kwargs)
    return in_project(project, fn, *args, **kwargs)


def train_stage(params_file: str, /, algo: str, **kwargs: Any) -> dict[str, Any]:
    """The training stage as the flows run it (:func:`pipeline.stages.train_learner`, in the
    current folder). A run stopped part-way (a worker killed in the middle of the task, which the
    scheduler or a Prefect retry then runs again) resumes from its last checkpoint, which gives the
    uninterrupted run's policy bit for bit (PPO and Q-learning tested on the cluster; the
    checkpoint holds every learner's whole state, Q-learning's and DQN's replay buffer included).
    A Q-learning or DQN checkpoint written before checkpoints held the buffer
    (:func:`climbrl.learn.checkpoint.lacks_replay`) cannot be resumed exactly: an unfinished one
    starts again from scratch (its run folder removed), which is deterministic too. A finished
    run's checkpoint is kept (nothing left to train)."""
    import shutil

    from climbrl.learn import checkpoint as ckpt
    from climbrl.learn.train import CHECKPOINT

    params = stages.params(params_file)
    run = stages.study_paths(params).runs / algo
    if (run / CHECKPOINT).exists():
        try:
            state = ckpt.load(run / CHECKPOINT)
        except ckpt.CheckpointError:
            state = {}  # the training reports it
        if ckpt.lacks_replay(state) and int(state.get("epoch", 0)) < params.train[algo].epochs:
            shutil.rmtree(run)
    return stages.train_learner(params, algo, **kwargs)


@task(name="make-seeds")
def seeds_task(params_path: str, project: str | None = None) -> str:
    return str(run_stage(project, "make_seeds", params_path, own_process=False))


@task(name="train-learner", retries=1, retry_delay_seconds=5)
def train_task(params_path: str, algo: str, track: bool = True, project: str | None = None,
               own_process: bool = True) -> dict[str, Any]:
    """Running it again is safe (a Prefect retry, or the scheduler's after a Dask worker died in
    the middle of it): training resumes from the last finished epoch's checkpoint, or starts
    again (:func:`train_stage`), and trains the uninterrupted run's policy bit for bit."""
    res = _in_project_as(own_process, project, train_stage, params_path, algo, track=track, params_path=params_path)
    return {k: v for k, v in res.items() if k != "history"}


@task(name="evaluate-learner", retries=1, retry_delay_seconds=5)
def evaluate_task(params_path: str, algo: str, track: bool = True, project: str | None = None,
                  own_process: bool = True) -> dict[str, Any]:
    """Idempotent: the same matches on the same deals rewrite the same files."""
    return run_stage(project, "evaluate_learner", params_path, algo, track=track, params_path=params_path,
                     own_process=own_process)


@task(name="baselines", retries=1, retry_delay_seconds=5)
def baselines_task(params_path: str, project: str | None = None, own_process: bool = True) -> dict[str, Any]:
    res = run_stage(project, "baselines", params_path, own_process=own_process)
    return {"game": res.get("game", "big2"), "seconds": res["seconds"]}


@flow(name="baselines")
def baselines_flow(params_path: str = "params.yaml", in_place: bool = False) -> dict[str, Any]:
    return baselines_task(params_path, own_process=not in_place)


@task(name="deep-evaluation", retries=1, retry_delay_seconds=5)
def deep_task(params_path: str, track: bool = True, project: str | None = None,
              own_process: bool = True) -> dict[str, Any]:
    res = run_stage(project, "deep", params_path, track=track, own_process=own_process)
    return {"learner": res["learner"], "repeats": res["repeats"]}


@flow(name="deep")
def deep_flow(params_path: str = "params.yaml", track: bool = True, in_place: bool = False) -> dict[str, Any]:
    return deep_task(params_path, track, own_process=not in_place)


@task(name="auction-evaluation", retries=1, retry_delay_seconds=5)
def auction_task(params_path: str, track: bool = True, project: str | None = None,
                 own_process: bool = True) -> dict[str, Any]:
    res = run_stage(project, "auction", params_path, track=track, own_process=own_process)
    return {"learner": res["learner"], "target_met": res["target_met"]}


@flow(name="auction")
def auction_flow(params_path: str = "params.yaml", track: bool = True, in_place: bool = False) -> dict[str, Any]:
    return auction_task(params_path, track, own_process=not in_place)


@task(name="tournament", retries=1, retry_delay_seconds=5)
def tournament_task(params_path: str, track: bool = True, project: str | None = None,
                    own_process: bool = True) -> dict[str, Any]:
    res = run_stage(project, "tournament", params_path, track=track, own_process=own_process)
    return {"games": res["games"], "leaderboard": res["leaderboard"]}


@flow(name="tournament")
def tournament_flow(params_path: str = "params.yaml", track: bool = True, in_place: bool = False) -> dict[str, Any]:
    return tournament_task(params_path, track, own_process=not in_place)


@task(name="behaviour", retries=1, retry_delay_seconds=5)
def behaviour_task(params_path: str, track: bool = True, project: str | None = None,
                   own_process: bool = True) -> dict[str, Any]:
    res = run_stage(project, "behaviour", params_path, track=track, own_process=own_process)
    return {"agents": list(res["agents"])}


@flow(name="behaviour")
def behaviour_flow(params_path: str = "params.yaml", track: bool = True, in_place: bool = False) -> dict[str, Any]:
    return behaviour_task(params_path, track, own_process=not in_place)


@task(name="report")
def report_task(params_path: str, track: bool = True, project: str | None = None) -> str:
    return str(run_stage(project, "report", params_path, track=track, own_process=False))


@flow(name="seeds")
def seeds_flow(params_path: str = "params.yaml") -> str:
    return seeds_task(params_path)


@flow(name="train")
def train_flow(algo: str, params_path: str = "params.yaml", track: bool = True,
               in_place: bool = False) -> dict[str, Any]:
    """One learner's training; ``in_place``: in this process (see the module docstring)."""
    return train_task(params_path, algo, track, own_process=not in_place)


@flow(name="evaluate")
def evaluate_flow(algo: str, params_path: str = "params.yaml", track: bool = True,
                  in_place: bool = False) -> dict[str, Any]:
    return evaluate_task(params_path, algo, track, own_process=not in_place)


@flow(name="report")
def report_flow(params_path: str = "params.yaml", track: bool = True) -> str:
    return report_task(params_path, track)


def _task_runner(kind: str):
    if kind == "dask":
        from prefect_dask import DaskTaskRunner

        address = os.environ.get("CLIMBRL_DASK_ADDRESS")
        if address:  # TLS: CLIMBRL_DASK_TLS or Dask's configuration; plain TCP on loopback only (dask_tls)
            from pipeline.dask_tls import client_kwargs

            return DaskTaskRunner(address=address, client_kwargs=client_kwargs(address))
        return DaskTaskRunner(cluster_kwargs={"n_workers": 2, "threads_per_worker": 1, "processes": True})
    return ThreadPoolTaskRunner(max_workers=2)


def study_flow(params_path: str = "params.yaml", learners: list[str] | None = None, track: bool = True,
               task_runner: str = "threads") -> dict[str, Any]:
    """The whole chain. Learners train two at a time on the task runner, each in a process of
    its own."""

    @flow(name="study", task_runner=_task_runner(task_runner))
    def _study() -> dict[str, Any]:
        p = stages.params(params_path)
        algos = learners or p.learners()
        here = os.getcwd()  # the project folder: every task reads and writes there (in_project)
        seeds = seeds_task.submit(params_path, here)
        trained = {a: train_task.submit(params_path, a, track, here, wait_for=[seeds]) for a in algos}
        evaluated = {a: evaluate_task.submit(params_path, a, track, here, wait_for=[trained[a]]) for a in algos}
        tour = tournament_task.submit(params_path, track, here, wait_for=list(evaluated.values()))
        behaviour = behaviour_task.submit(params_path, track, here, wait_for=list(evaluated.values()))
        # the best learner's evaluations (deep, the whole game's auction), when the study has them
        extra = [t.submit(params_path, track, here, wait_for=list(evaluated.values()))
                 for t, on in ((deep_task, p.deep), (auction_task, p.auction)) if on is not None and not learners]
        report = report_task.submit(params_path, track, here, wait_for=[tour, behaviour, *extra])
        out = {"report": report.result(), "evaluations": {a: f.result() for a, f in evaluated.items()}}
        paths = stages.study_paths(p)
        missing = [str(f) for f in [*(paths.runs / a / "policy.pt" for a in algos),
                                    *(paths.reports / "eval" / f"{a}.json" for a in algos),
                                    paths.reports / "metrics.json"] if not f.exists()]
        if missing:  # a worker wrote to a folder of its own: the project is not shared with it
            raise RuntimeError(f"the study's outputs are not in the project folder {here}: {missing} "
                               "(start the Dask workers where the project is mounted at the same path)")
        return out

    return _study()


def train_many_flow(configs: list[dict[str, Any]], out_root: str, task_runner: str = "dask") -> list[dict]:
    """Train several configurations concurrently on a task runner (used by the Dask test and by
    sweeps): each item is a dict of train fields with ``algo``."""
    from climbrl.config import train_config
    from climbrl.training import train

    @task(name="train-config", retries=1)
    def one(i: int, values: dict[str, Any]) -> dict[str, Any]:
        values = dict(values)
        cfg = train_config(values.pop("algo"), **values)
        res = in_own_process(train, cfg, f"{out_root}/{i}-{cfg.algo}", resume=True, progress=False)
        return {"algo": cfg.algo, "final_eval": res["final_eval"], "epochs": len(res["history"]),
                "pid": os.getpid()}

    @flow(name="train-many", task_runner=_task_runner(task_runner))
    def _many() -> list[dict]:
        futures = [one.submit(i, c) for i, c in enumerate(configs)]
        return [f.result() for f in futures]

    return _many()
