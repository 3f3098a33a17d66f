"""The one place that talks to MLflow.

Embedded default: ``sqlite:///mlflow.db`` with artifacts under ``./mlruns`` (params.yaml,
``tracking``); ``MLFLOW_TRACKING_URI`` in the environment points the same code at a server.
Telemetry off is an environment default that a program sets where it starts
(:func:`climbrl.environment.environment_defaults`; the Makefile and CI export the same
variables), never as a side effect of importing this module.
Open the UI: ``mlflow ui --backend-store-uri sqlite:///mlflow.db --host 127.0.0.1 --port 5000``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

PIP_REQUIREMENTS = ["torch==2.13.0", "numpy==2.4.6", "climbrl==0.1.0"]
REGISTERED_DIR = "policy"
REGISTERED_FILE = "policy.pt"


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


def log_evaluation(algo: str, results: dict[str, Any], path: Path, tags: dict[str, str] | None = None,
                   stage: str = "evaluate") -> str:
    """A run for one learner's final evaluation (``stage`` evaluate) or its validation (``validate``):
    a metric per opponent, the JSON as artifact."""
    import mlflow

    with mlflow.start_run(run_name=f"{stage}-{algo}") as run:
        for m in results["matches"]:
            opp = m["opponents"][0]
            for k in ("win_rate", "win_rate_low", "win_rate_high", "normalized_win_rate", "mean_reward"):
                mlflow.log_metric(f"{k}/{opp}", m[k])
            mlflow.log_metric(f"games/{opp}", m["games"])
        mlflow.set_tags({"algo": algo, "stage": stage, "git_commit": git_commit(), **(tags or {})})
        mlflow.log_artifact(str(path))
        return run.info.run_id


def register_policy(policy_path: Path, model_name: str, algo: str, metrics: dict[str, float],
                    alias: str = "best") -> str:
    """Register the best policy under ``model_name`` as a weights-only checkpoint; returns the version.

    The artifact is the project's network file (``torch.save`` of tensors, plain containers and the
    network's config, read back with ``weights_only=True``), not a pickled model: loading it from a
    shared registry never runs code from the file; the code comes from the installed climbrl
    (:func:`load_registered_policy`). The version's tags name the format, the loader and the
    file's SHA-256, and ``alias`` points at it.
    """
    import tempfile

    import mlflow

    from climbrl.learn import checkpoint as ckpt

    net, meta, encoder = ckpt.load_network(policy_path)  # refuses anything that is not a weights-only network file
    with tempfile.TemporaryDirectory() as tmp, mlflow.start_run(run_name=f"best-policy-{algo}") as run:
        artifact = Path(tmp) / REGISTERED_FILE
        ckpt.save_atomic(ckpt.network_payload(net, meta.get("algo", algo), int(meta.get("epoch", 0)), encoder),
                        artifact)
        mlflow.log_metrics(metrics)
        mlflow.set_tags({"algo": algo, "stage": "register", "git_commit": git_commit()})
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
            "loader": "climbrl.track.load_registered_policy", "algo": algo, "sha256": _sha256(artifact),
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
        digest = _sha256(local)
        if digest != mv.tags.get("sha256"):
            raise CheckpointError(f"model {name} version {mv.version}: the artifact's SHA-256 {digest[:12]}... "
                                  f"does not match the registered {str(mv.tags.get('sha256'))[:12]}...; "
                                  "the file was changed after registration")
        agent = load_policy_agent(local, mode=mode)
    agent.name = f"models:/{name}/{mv.version}"
    return agent


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
