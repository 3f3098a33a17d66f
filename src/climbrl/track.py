"""The one place that talks to MLflow.

Embedded default: ``sqlite:///mlflow.db`` with artifacts under ``./mlruns`` (params.yaml,
``tracking``); ``MLFLOW_TRACKING_URI`` in the environment points the same code at a server.
Telemetry off is an environment default that a program sets where it starts
(:func:`environment_defaults`: the ``climbrl`` CLI and the pipeline call it; the Makefile and CI
export the same variables), never as a side effect of importing this module.
Open the UI: ``mlflow ui --backend-store-uri sqlite:///mlflow.db --host 127.0.0.1 --port 5000``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

ENVIRONMENT_DEFAULTS = {
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "DO_NOT_TRACK": "true",
    "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false",
}

PIP_REQUIREMENTS = ["torch==2.13.0", "numpy==2.4.6", "climbrl==0.1.0"]


def environment_defaults() -> None:
    """No telemetry, no progress bars: set :data:`ENVIRONMENT_DEFAULTS` where unset (the
    environment wins). A program calls this once where it starts, before MLflow is imported."""
    for key, value in ENVIRONMENT_DEFAULTS.items():
        os.environ.setdefault(key, value)


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def params_hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]


def configure(tracking_uri: str, experiment: str) -> str:
    """Point MLflow at the store (the environment wins) and select the study's experiment."""
    import mlflow

    uri = os.environ.get("MLFLOW_TRACKING_URI", tracking_uri)
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment(experiment)
    return uri


def _metric_name(key: str) -> str:
    return key.replace("@", "_")


def log_training(cfg_dict: dict[str, Any], history: list[dict[str, Any]], out_dir: Path,
                 tags: dict[str, str] | None = None) -> str:
    """A run for one training: params, per-epoch metrics, checkpoint and CSV as artifacts."""
    import mlflow
    from mlflow.entities import Metric, Param

    algo = cfg_dict["algo"]
    with mlflow.start_run(run_name=f"train-{algo}") as run:
        client = mlflow.tracking.MlflowClient()
        params = [Param(k, json.dumps(v) if isinstance(v, (list, dict)) else str(v)) for k, v in cfg_dict.items()]
        metrics = [Metric(_metric_name(k), float(v), 0, int(row["epoch"]))
                   for row in history for k, v in row.items()
                   if k != "epoch" and isinstance(v, (int, float)) and v == v]
        for i in range(0, len(params), 100):
            client.log_batch(run.info.run_id, params=params[i:i + 100])
        for i in range(0, len(metrics), 1000):
            client.log_batch(run.info.run_id, metrics=metrics[i:i + 1000])
        mlflow.set_tags({"algo": algo, "stage": "train", "git_commit": git_commit(),
                         "params_hash": params_hash(cfg_dict), **(tags or {})})
        for name in ("policy.pt", "metrics.csv"):
            if (out_dir / name).exists():
                mlflow.log_artifact(str(out_dir / name))
        return run.info.run_id


def log_evaluation(algo: str, results: dict[str, Any], path: Path, tags: dict[str, str] | None = None) -> str:
    """A run for one learner's final evaluation: a metric per opponent, the JSON as artifact."""
    import mlflow

    with mlflow.start_run(run_name=f"evaluate-{algo}") as run:
        for m in results["matches"]:
            opp = m["opponents"][0]
            for k in ("win_rate", "win_rate_low", "win_rate_high", "normalized_win_rate", "mean_reward"):
                mlflow.log_metric(f"{k}/{opp}", m[k])
            mlflow.log_metric(f"games/{opp}", m["games"])
        mlflow.set_tags({"algo": algo, "stage": "evaluate", "git_commit": git_commit(), **(tags or {})})
        mlflow.log_artifact(str(path))
        return run.info.run_id


def register_policy(policy_path: Path, model_name: str, algo: str, metrics: dict[str, float]) -> str:
    """Log the best policy network as an MLflow model and register it under ``model_name``."""
    import mlflow
    import mlflow.pytorch

    from climbrl.learn.checkpoint import load_network

    net, _ = load_network(policy_path)
    with mlflow.start_run(run_name=f"best-policy-{algo}") as run:
        mlflow.log_metrics(metrics)
        mlflow.set_tags({"algo": algo, "stage": "register", "git_commit": git_commit()})
        mlflow.pytorch.log_model(net, name="policy", pip_requirements=PIP_REQUIREMENTS,
                                 serialization_format="pickle", registered_model_name=model_name)
        return run.info.run_id
