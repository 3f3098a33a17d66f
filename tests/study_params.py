"""Helpers of the pipeline tests: a params mapping with one key changed, and a study folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml


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
