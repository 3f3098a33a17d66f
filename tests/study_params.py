"""Helpers of the pipeline tests: a params mapping with one key changed, and a study folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

TINY_TUNE = {"algo": "ppo", "trials": 1, "epochs": 1, "games_per_epoch": 3, "eval_every": 1, "eval_games": 12,
             "seed": 0, "storage": "sqlite:///optuna.db", "study": "t", "pruner": "median"}
"""The ``tune`` section of the tiny study params the pipeline tests write."""

TINY_STUDY = {
    "rules": "paper",
    "seeds": {"deals": 8, "seed": 1, "validation_deals": 2, "validation_seed": 7},
    "train": {"common": {"epochs": 2, "games_per_epoch": 4, "eval_every": 1, "eval_games": 8, "hidden": 16,
                         "minibatch_decisions": 64, "eval_opponents": ["random"]}, "ppo": {}},
    "evaluate": {"games": 8, "opponents": ["random"], "workers": 1},
    "tune": {"algo": "ppo", "trials": 4, "epochs": 2, "games_per_epoch": 4, "eval_every": 1, "eval_games": 8,
             "seed": 0, "storage": "sqlite:///optuna.db", "study": "t", "pruner": "median", "opponent": "random"},
    "tracking": {"tracking_uri": "sqlite:///mlflow.db", "experiment": "shared", "register_model": "shared-best"},
}
"""A whole tiny params file for `climbrl tune` run as a process (a Big 2 study of a few games)."""


def write_tiny_study(folder: Path, **tune: Any) -> Path:
    """``folder/params.yaml``: :data:`TINY_STUDY` with ``tune`` replacing keys of its tune section."""
    path = folder / "params.yaml"
    path.write_text(yaml.safe_dump({**TINY_STUDY, "tune": {**TINY_STUDY["tune"], **tune}}))
    return path


def with_value(raw: dict, path: tuple, value: Any) -> dict:
    """A deep copy of ``raw`` with the key at ``path`` (created where missing) set to ``value``."""
    out = json.loads(json.dumps(raw))
    node = out
    for k in path[:-1]:
        node = node.setdefault(k, {})
    node[path[-1]] = value
    return out


def study_folder(tmp_path: Path, monkeypatch: Any, params: dict) -> Path:
    """``tmp_path`` as the working folder, holding ``params.yaml``; no MLflow URI from outside."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    return tmp_path


def write_results(reports: Path, kind: str, algo: str, wins: dict[str, int], games: int) -> Path:
    """A learner's results file as the evaluate stage writes it (``kind``: ``eval`` or
    ``validation``): one match against three copies of each opponent in ``wins``, Wilson intervals."""
    from climbrl.evaluate.stats import wilson_interval

    def match(opp: str, w: int) -> dict:
        lo, hi = wilson_interval(w, games)
        return {"agent": "x", "opponents": [opp] * 3, "games": games, "wins": w, "win_rate": w / games,
                "win_rate_low": lo, "win_rate_high": hi, "normalized_win_rate": w / games / 0.25}

    path = reports / kind / f"{algo}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"algo": algo, "rules": "paper", "matches": [match(o, w) for o, w in wins.items()]}
    if kind == "validation":
        data["deal_seed"] = 77
    path.write_text(json.dumps(data))
    return path
