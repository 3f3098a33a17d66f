"""No hidden process-wide state: a learner's initial weights do not depend on what other threads
do, loading an agent or training leaves torch's thread count as it was, importing the tracking
module leaves the environment alone, and match workers start clean ("spawn")."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import torch

from climbrl.config import train_config
from climbrl.encoders.big2 import Big2Encoder
from climbrl.learn import checkpoint as ckpt
from climbrl.learn.network import ActionInNet
from climbrl.learn.registry import make_learner
from climbrl.learn.specs import make_agent
from climbrl.training import train
from tests.reference import public_agent_weights

REPO = Path(__file__).resolve().parents[1]


def _weights(learner) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in learner.net.state_dict().items()}


def test_learners_built_concurrently_get_the_weights_they_get_built_one_after_the_other() -> None:
    cfgs = [train_config(algo, hidden=256, seed=seed) for algo in ("ppo", "dqn") for seed in (0, 1, 2, 3)]
    alone = [_weights(make_learner(c)) for c in cfgs]
    built: list = [None] * len(cfgs)
    start = threading.Barrier(len(cfgs))

    def build(i: int) -> None:
        start.wait()
        built[i] = _weights(make_learner(cfgs[i]))

    threads = [threading.Thread(target=build, args=(i,)) for i in range(len(cfgs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for c, a, b in zip(cfgs, alone, built, strict=True):
        assert a.keys() == b.keys()
        assert all(torch.equal(a[k], b[k]) for k in a), f"{c.algo} seed {c.seed}"


def test_building_a_learner_leaves_torchs_global_random_stream_alone() -> None:
    torch.manual_seed(123)
    expected = torch.rand(4)
    torch.manual_seed(123)
    make_learner(train_config("ppo", hidden=16))
    assert torch.equal(torch.rand(4), expected)


@pytest.fixture()
def threads_set_to_three():
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    yield 3
    torch.set_num_threads(before)


def test_loading_a_policy_agent_leaves_the_thread_count_alone(tmp_path, threads_set_to_three) -> None:
    path = tmp_path / "policy.pt"
    net = ActionInNet(Big2Encoder.state_dim, Big2Encoder.move_dim, 16)
    ckpt.save_atomic(ckpt.network_payload(net, "ppo", 1, Big2Encoder()), path)
    make_agent(f"checkpoint:{path}")
    assert torch.get_num_threads() == threads_set_to_three


def test_loading_the_public_agent_leaves_the_thread_count_alone(threads_set_to_three) -> None:
    public_agent_weights()  # skips (fails under CI) with how to get them when missing
    make_agent("charlesworth")
    assert torch.get_num_threads() == threads_set_to_three


def test_training_and_matches_run_on_one_thread_and_restore_the_count(tmp_path, threads_set_to_three) -> None:
    from climbrl.evaluate.match import run_match

    seen = []
    train(train_config("ppo", epochs=1, games_per_epoch=4, eval_every=0, hidden=16), tmp_path,
          progress=False, on_epoch=lambda row: seen.append(torch.get_num_threads()))
    assert seen == [1]
    assert torch.get_num_threads() == threads_set_to_three
    run_match(f"checkpoint:{tmp_path / 'policy.pt'}", ["random"], games=4, workers=1)
    assert torch.get_num_threads() == threads_set_to_three


def test_importing_the_tracking_module_leaves_the_environment_alone() -> None:
    code = ("import os; before = dict(os.environ); import climbrl.track; "
            "changed = {k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k)}; "
            "print(sorted(changed))")
    env = {k: v for k, v in os.environ.items()
           if k not in ("MLFLOW_DISABLE_TELEMETRY", "DO_NOT_TRACK", "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_selecting_the_experiment_leaves_the_environment_to_child_processes_alone(tmp_path, monkeypatch) -> None:
    """mlflow.set_tracking_uri and set_experiment export MLFLOW_TRACKING_URI and MLFLOW_EXPERIMENT_ID;
    a child process meant for another store (a tracking server, the other study of ``make run``)
    would log to this one or fail on an id that is not there."""
    import mlflow

    from climbrl import track

    monkeypatch.delenv("MLFLOW_EXPERIMENT_ID", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    before = dict(os.environ)
    try:
        track.configure(f"sqlite:///{tmp_path / 'mlflow.db'}", "first")
        track.configure(f"sqlite:///{tmp_path / 'mlflow.db'}", "second")  # id 2 in this store
        assert dict(os.environ) == before
        with mlflow.start_run() as run:  # this process still logs to the experiment it chose
            pass
        assert mlflow.get_experiment(run.info.experiment_id).name == "second"
        other = f"sqlite:///{tmp_path / 'other.db'}"
        assert track.configure(other, "second") == other == mlflow.get_tracking_uri()  # not the first store
        monkeypatch.setenv("MLFLOW_EXPERIMENT_ID", "7")  # a value the caller set is kept
        track.configure(f"sqlite:///{tmp_path / 'mlflow.db'}", "first")
        assert os.environ["MLFLOW_EXPERIMENT_ID"] == "7"
    finally:
        mlflow.set_tracking_uri(None)


def test_a_process_that_loses_the_race_to_create_the_experiment_still_logs_to_it(tmp_path, monkeypatch) -> None:
    """Two workers on a fresh server: the second finds no experiment, fails to create it (the
    first just did) and gets it back from mlflow.set_experiment, not activated; its runs must
    not fall into the Default experiment."""
    import mlflow
    from mlflow.tracking import fluent
    from mlflow.tracking._tracking_service.client import TrackingServiceClient

    from climbrl import track

    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("MLFLOW_EXPERIMENT_ID", raising=False)
    monkeypatch.setattr(fluent, "_active_experiment_id", None)  # a fresh worker: no experiment chosen yet
    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    mlflow.MlflowClient(tracking_uri=uri).create_experiment("raced")  # the other worker was first
    real = TrackingServiceClient.get_experiment_by_name
    calls = []

    def not_yet(self, name):  # the first look happens before the other worker's creation
        calls.append(name)
        return None if len(calls) == 1 else real(self, name)

    monkeypatch.setattr(TrackingServiceClient, "get_experiment_by_name", not_yet)
    try:
        track.configure(uri, "raced")
        with mlflow.start_run() as run:
            pass
        assert mlflow.get_experiment(run.info.experiment_id).name == "raced"
    finally:
        mlflow.set_tracking_uri(None)


def test_the_environment_defaults_are_set_by_an_explicit_call(monkeypatch) -> None:
    from climbrl import environment

    monkeypatch.delenv("MLFLOW_DISABLE_TELEMETRY", raising=False)
    monkeypatch.setenv("DO_NOT_TRACK", "already-set")
    environment.environment_defaults()
    assert os.environ["MLFLOW_DISABLE_TELEMETRY"] == "true"
    assert os.environ["DO_NOT_TRACK"] == "already-set"  # the caller's environment wins


def test_match_workers_start_clean_processes() -> None:
    """Forking a process that runs other threads (a Prefect task runner) can copy a held lock;
    the match pools start their workers with "spawn"."""
    from climbrl.evaluate import match

    with match._pool(2) as pool:
        assert pool._mp_context.get_start_method() == "spawn"
