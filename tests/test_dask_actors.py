"""Actors on a Dask cluster (issue 25, part 2: "on many machines the actors run on the existing Dask
cluster, tested with real worker processes, one of them killed: nothing is lost and training
continues"). A scheduler and two workers as processes with TLS (:mod:`tests.dask_procs`); ``climbrl
train --actors 2 --actor-cluster ADDRESS`` in a process of its own; one worker stopped while it
plays a slice (the scheduler still waiting for that slice's result) and SIGKILLed. The training
finishes with the very policy and numbers of two local actor processes; the refusals."""

from __future__ import annotations

import contextlib
import csv
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from climbrl.config import ConfigError, train_config
from climbrl.training import train
from tests.dask_procs import tls_cluster, worker_names

SETTINGS = {"game": "doudizhu", "rules": "douzero", "epochs": 2, "games_per_epoch": 600, "seed": 4, "eval_every": 0,
            "hidden": 16, "minibatch_decisions": 512, "keep_policy_every": 0, "actors": 2}


def _rows(run: Path) -> list[dict[str, str]]:
    with open(run / "metrics.csv", newline="") as f:
        return list(csv.DictReader(f))


def _numbers(run: Path) -> list[dict[str, str]]:
    """The metrics without what measures the machine (seconds, rates)."""
    return [{k: v for k, v in r.items() if "seconds" not in k and not k.endswith("_per_s")} for r in _rows(run)]


def _processing(client) -> dict[str, list[str]]:
    """{worker name: keys of the tasks the scheduler waits on from it}, asked of the scheduler."""
    return client.run_on_scheduler(lambda dask_scheduler: {
        ws.name: [str(ts.key) for ts in ws.processing] for ws in dask_scheduler.workers.values()})


def test_actors_on_a_dask_cluster_survive_a_killed_worker_with_the_numbers_of_local_actors(tmp_path) -> None:
    import distributed  # noqa: F401 - a dependency of the project (prefect-dask): no skip
    import psutil

    local = tmp_path / "local"
    train(train_config("dmc", **SETTINGS), local, progress=False)

    env = {k: v for k, v in os.environ.items() if k not in ("CLIMBRL_DASK_TLS", "CLIMBRL_DASK_ADDRESS")}
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[1] / "src"),
                                         env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    workdir, out = tmp_path / "workers", tmp_path / "cluster"
    workdir.mkdir()
    with tls_cluster(tmp_path, env, workdir) as cluster, contextlib.closing(cluster.client()) as client:
        args = [sys.executable, "-m", "climbrl.cli", "train", "--algo", "dmc", "--game", "doudizhu", "--rules",
                "douzero", "--epochs", "2", "--games-per-epoch", "600", "--seed", "4", "--eval-every", "0",
                "--actors", "2", "--actor-cluster", client.scheduler.address, "--set", "hidden=16",
                "--set", "minibatch_decisions=512", "--set", "keep_policy_every=0", "--no-progress", "--out", str(out)]
        trainer = cluster.start("train", args, tmp_path, {**env, "CLIMBRL_DASK_TLS": str(cluster.tls)})
        deadline = time.monotonic() + 300
        victim = key = None
        while victim is None:  # the first slice handed to a worker
            assert trainer.poll() is None, cluster.log("train")
            assert time.monotonic() < deadline, "no slice seen on a worker"
            victim, key = next(((w, ks[0]) for w, ks in _processing(client).items() if ks), (None, None))
            time.sleep(0.005)
        proc = cluster.workers[victim]
        proc.send_signal(signal.SIGSTOP)  # it can no longer send a result: its slice is unfinished for good
        time.sleep(1.0)
        assert key in _processing(client)[victim], "the slice finished before the worker was stopped"
        assert not (out / "metrics.csv").exists() or not _rows(out)  # its epoch has not finished
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert trainer.wait(timeout=600) == 0, cluster.log("train") + cluster.log("scheduler")
        assert list(worker_names(client).values()) == [n for n in cluster.workers if n != victim]
        assert not psutil.pid_exists(proc.pid) or psutil.Process(proc.pid).status() == psutil.STATUS_ZOMBIE

    assert (out / "policy.pt").read_bytes() == (local / "policy.pt").read_bytes()
    assert _numbers(out) == _numbers(local) and len(_rows(out)) == 2


def test_a_cluster_needs_actors_and_tls_beyond_this_machine(tmp_path, monkeypatch) -> None:
    with pytest.raises(ConfigError, match="actor_cluster"):
        train_config("dmc", game="doudizhu", actor_cluster="tls://127.0.0.1:8786")
    from climbrl.cluster import TLSFilesError
    from climbrl.learn.dask_actors import DaskActorPool

    monkeypatch.delenv("CLIMBRL_DASK_TLS", raising=False)
    monkeypatch.delenv("CLIMBRL_DASK_INSECURE", raising=False)
    with pytest.raises(TLSFilesError, match="plain TCP beyond this machine"):
        DaskActorPool(2, "doudizhu:douzero", "tcp://10.1.2.3:8786")
    monkeypatch.setenv("CLIMBRL_DASK_TLS", str(tmp_path / "none"))
    with pytest.raises(TLSFilesError, match="no ca.pem"):
        DaskActorPool(2, "doudizhu:douzero", "tls://10.1.2.3:8786")
    with pytest.raises(ValueError, match="at least 2 actors"):
        DaskActorPool(1, "doudizhu:douzero", "tls://10.1.2.3:8786")
