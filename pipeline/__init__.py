"""The experiment pipeline: stage logic (``stages``), Prefect flows (``flows``), the CI
regression gate (``regression``). ``python -m pipeline STAGE`` runs one stage as a flow."""

import os
from pathlib import Path

# No network at run time: Prefect's analytics off, its embedded server's database in the
# project (the temporary server starts per process unless PREFECT_API_URL names a server).
os.environ.setdefault("PREFECT_HOME", str(Path(__file__).resolve().parents[1] / ".prefect"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.setdefault("DVC_NO_ANALYTICS", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("DO_NOT_TRACK", "true")
