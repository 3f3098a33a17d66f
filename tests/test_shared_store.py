"""One experiment store for many workers (issue 14, section 1), against a real PostgreSQL
(``postgres_server`` in conftest.py: pipeline/postgres.py, the ``postgres`` extra).

- Optuna: ``climbrl tune --storage postgresql://... --study NAME`` run by two worker processes at
  once shares one study, no trial lost, none run twice, the budget shared; a worker killed
  (SIGKILL) in the middle of a trial leaves it RUNNING only until its heartbeat is stale: the next
  worker marks it FAIL and retries it with the same parameters.
- MLflow: ``python -m pipeline.mlflow_server`` (``make server``) on the same PostgreSQL; two
  processes train, evaluate and register through ``climbrl.track``; MLflow's client finds it all.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]

TINY = {
    "rules": "paper",
    "seeds": {"deals": 8, "seed": 1, "validation_deals": 2, "validation_seed": 7},
    "train": {"common": {"epochs": 2, "games_per_epoch": 4, "eval_every": 1, "eval_games": 8, "hidden": 16,
                         "minibatch_decisions": 64, "eval_opponents": ["random"]}, "ppo": {}},
    "evaluate": {"games": 8, "opponents": ["random"], "workers": 1},
    "tune": {"algo": "ppo", "trials": 4, "epochs": 2, "games_per_epoch": 4, "eval_every": 1, "eval_games": 8,
             "seed": 0, "storage": "sqlite:///optuna.db", "study": "t", "pruner": "median", "opponent": "random"},
    "tracking": {"tracking_uri": "sqlite:///mlflow.db", "experiment": "shared", "register_model": "shared-best"},
}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_TRACKING")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(REPO), env.get("PYTHONPATH", "")])
    env.update({"DVC_NO_ANALYTICS": "1", "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}, **extra)
    return env


def _params(tmp_path: Path, **tune: object) -> Path:
    p = {**TINY, "tune": {**TINY["tune"], **tune}}
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(p))
    return path


def _tune(tmp_path: Path, url: str, study: str, params: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "climbrl.cli", "tune", "--params", str(params), "--storage", url,
                             "--study", study, "--no-track", "--best-out", str(tmp_path / f"best-{study}.yaml"),
                             *extra], cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def _finish(proc: subprocess.Popen, timeout: float = 300) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out[-3000:]
    return out


def test_two_workers_share_one_study(tmp_path, postgres_url):
    import optuna

    params = _params(tmp_path, trials=4)
    workers = [_tune(tmp_path, postgres_url, "shared", params) for _ in range(2)]
    for w in workers:
        _finish(w)
    study = optuna.load_study(study_name="shared", storage=postgres_url)
    trials = study.trials
    # exactly the budget, numbered 0..3, each finished once (complete or pruned), none failed or stuck
    assert [t.number for t in trials] == [0, 1, 2, 3]
    assert all(t.state.name in ("COMPLETE", "PRUNED") for t in trials), [t.state.name for t in trials]
    # every trial sampled its own parameters (workers seeded alike would sample the same ones)
    assert len({tuple(sorted(t.params.items())) for t in trials}) == 4
    # both workers ran trials, and each trial's folder was written by one of them
    assert len({t.user_attrs["worker"] for t in trials}) == 2
    assert sorted(p.name for p in (tmp_path / "runs" / "tune" / "shared").iterdir()) == [f"trial-{i}" for i in range(4)]
    assert study.metric_names == ["win rate vs random"]  # the dashboard's objective name
    # a worker started once the budget is spent runs nothing
    _finish(_tune(tmp_path, postgres_url, "shared", params))
    assert len(optuna.load_study(study_name="shared", storage=postgres_url).trials) == 4


def test_killed_worker_trial_is_failed_and_retried(tmp_path, postgres_url):
    import optuna
    from optuna.storages import RetryFailedTrialCallback

    slow = _params(tmp_path, trials=2, epochs=200)  # a trial long enough to be killed in the middle
    worker = _tune(tmp_path, postgres_url, "killed", slow, "--heartbeat", "1", "--grace", "3")
    deadline = time.monotonic() + 120
    while True:
        assert worker.poll() is None and time.monotonic() < deadline, "the first trial never started"
        try:
            running = optuna.load_study(study_name="killed", storage=postgres_url).get_trials(
                states=(optuna.trial.TrialState.RUNNING,))
        except KeyError:  # the study does not exist yet
            running = []
        if running and (tmp_path / "runs" / "tune" / "killed" / "trial-0" / "metrics.csv").exists():
            break
        time.sleep(0.5)
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait()
    killed = running[0]
    assert optuna.load_study(study_name="killed", storage=postgres_url).trials[0].state.name == "RUNNING"
    time.sleep(4)  # past the grace period: its heartbeat is stale

    _finish(_tune(tmp_path, postgres_url, "killed", _params(tmp_path, trials=2), "--heartbeat", "1",
                  "--grace", "3"))
    trials = optuna.load_study(study_name="killed", storage=postgres_url).trials
    states = [t.state.name for t in trials]
    assert states[0] == "FAIL" and "RUNNING" not in states and "WAITING" not in states, states
    retried = [t for t in trials if RetryFailedTrialCallback.retried_trial_number(t) == killed.number]
    assert len(retried) == 1 and retried[0].state.name in ("COMPLETE", "PRUNED")
    assert retried[0].params == killed.params
    assert sum(t.state.name in ("COMPLETE", "PRUNED") for t in trials) == 2  # the budget, retry included
