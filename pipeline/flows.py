"""Prefect flows: one per stage, and the parent flow that chains them (seeds -> train every
learner -> evaluate every learner -> tournament -> report). Stage logic lives in :mod:`pipeline.stages`.

Run the whole study from Prefect: ``python -m pipeline study`` (or ``study_flow()``). Without
``PREFECT_API_URL`` Prefect starts a temporary local server for the process; with it, the
same flows report to that server (``make run`` starts one for all stages:
:mod:`pipeline.prefect_server`). The parent flow trains learners concurrently on a task
runner: threads by default (``ThreadPoolTaskRunner``), or a Dask cluster (``task_runner="dask"``
with ``CLIMBRL_DASK_ADDRESS`` or a local cluster).

The stage tasks that run concurrently (train, evaluate, tournament, behaviour) call their stage
function (the one ``python -m pipeline STAGE --no-prefect`` calls) in a fresh process of its own
(:func:`in_own_process`): torch's thread count and random stream are process-wide, so two
stages on threads of one process could change each other's numbers. A learner trained by the
study flow is therefore the DVC stage's, bit for bit. The seeds and report stages run alone in
the flow and compute no torch numbers: they run in place (a process start costs seconds).
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from prefect import flow, task
from prefect.task_runners import ThreadPoolTaskRunner

import pipeline  # noqa: F401  (environment defaults)
from pipeline import stages


def in_own_process(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)`` in a fresh ("spawn") process: nothing process-wide (torch's
    thread count and random stream, forked locks of other threads) is shared with the flow or
    with the other stages. A daemonic process (a Dask worker) may not start children: there the
    call runs in place, one task at a time per worker process."""
    if mp.current_process().daemon:
        return fn(*args, **kwargs)
    with ProcessPoolExecutor(max_workers=1, mp_context=mp.get_context("spawn")) as pool:
        return pool.submit(fn, *args, **kwargs).result()


@task(name="make-seeds")
def seeds_task(params_path: str) -> str:
    return str(stages.make_seeds(stages.params(params_path)))


@task(name="train-learner", retries=1, retry_delay_seconds=5)
def train_task(params_path: str, algo: str, track: bool = True) -> dict[str, Any]:
    """Retrying is safe: training resumes from the last finished epoch's checkpoint."""
    res = in_own_process(stages.train_learner, stages.params(params_path), algo, track=track,
                         params_path=params_path)
    return {k: v for k, v in res.items() if k != "history"}


@task(name="evaluate-learner", retries=1, retry_delay_seconds=5)
def evaluate_task(params_path: str, algo: str, track: bool = True) -> dict[str, Any]:
    return in_own_process(stages.evaluate_learner, stages.params(params_path), algo, track=track,
                          params_path=params_path)


@task(name="tournament", retries=1, retry_delay_seconds=5)
def tournament_task(params_path: str, track: bool = True) -> dict[str, Any]:
    res = in_own_process(stages.tournament, stages.params(params_path), track=track)
    return {"games": res["games"], "leaderboard": res["leaderboard"]}


@flow(name="tournament")
def tournament_flow(params_path: str = "params.yaml", track: bool = True) -> dict[str, Any]:
    return tournament_task(params_path, track)


@task(name="behaviour", retries=1, retry_delay_seconds=5)
def behaviour_task(params_path: str, track: bool = True) -> dict[str, Any]:
    res = in_own_process(stages.behaviour, stages.params(params_path), track=track)
    return {"agents": list(res["agents"])}


@flow(name="behaviour")
def behaviour_flow(params_path: str = "params.yaml", track: bool = True) -> dict[str, Any]:
    return behaviour_task(params_path, track)


@task(name="report")
def report_task(params_path: str, track: bool = True) -> str:
    return str(stages.report(stages.params(params_path), track=track))


@flow(name="seeds")
def seeds_flow(params_path: str = "params.yaml") -> str:
    return seeds_task(params_path)


@flow(name="train")
def train_flow(algo: str, params_path: str = "params.yaml", track: bool = True) -> dict[str, Any]:
    return train_task(params_path, algo, track)


@flow(name="evaluate")
def evaluate_flow(algo: str, params_path: str = "params.yaml", track: bool = True) -> dict[str, Any]:
    return evaluate_task(params_path, algo, track)


@flow(name="report")
def report_flow(params_path: str = "params.yaml", track: bool = True) -> str:
    return report_task(params_path, track)


def _task_runner(kind: str):
    if kind == "dask":
        from prefect_dask import DaskTaskRunner

        address = os.environ.get("CLIMBRL_DASK_ADDRESS")
        if address:
            return DaskTaskRunner(address=address)
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
        seeds = seeds_task.submit(params_path)
        trained = {a: train_task.submit(params_path, a, track, wait_for=[seeds]) for a in algos}
        evaluated = {a: evaluate_task.submit(params_path, a, track, wait_for=[trained[a]]) for a in algos}
        tour = tournament_task.submit(params_path, track, wait_for=list(evaluated.values()))
        behaviour = behaviour_task.submit(params_path, track, wait_for=list(evaluated.values()))
        report = report_task.submit(params_path, track, wait_for=[tour, behaviour])
        return {"report": report.result(), "evaluations": {a: f.result() for a, f in evaluated.items()}}

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
