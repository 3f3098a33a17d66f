"""Environment defaults of climbrl's programs: no telemetry, no progress bars, nothing that needs
the network at run time.

A program calls :func:`environment_defaults` once where it starts (the ``climbrl`` CLI, the
``pipeline`` package), before MLflow or Prefect are imported; values already in the environment
win. No library module sets them as a side effect of being imported. Kept apart from ``track.py``
so that a stage that only needs the defaults (``climbrl simulate``) does not depend on the MLflow code.
"""

from __future__ import annotations

import os

ENVIRONMENT_DEFAULTS = {
    "MLFLOW_DISABLE_TELEMETRY": "true",
    "DO_NOT_TRACK": "true",
    "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR": "false",
}


def environment_defaults() -> None:
    """Set :data:`ENVIRONMENT_DEFAULTS` where unset (the environment wins)."""
    for key, value in ENVIRONMENT_DEFAULTS.items():
        os.environ.setdefault(key, value)
