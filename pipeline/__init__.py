"""The experiment pipeline: stage logic (``stages``), Prefect flows (``flows``), the CI
regression gate (``regression``). ``python -m pipeline STAGE`` runs one stage as a flow.

Importing this package sets the pipeline program's environment defaults (values already in the
environment win): it is the application, not a library, and Prefect reads its settings when it
is imported (by ``pipeline.flows``), so they must be in place before any flow module loads.
"""

import os
from pathlib import Path

from climbrl.environment import environment_defaults

# No network at run time: Prefect's analytics off, its embedded server's database in the
# project (the temporary server starts per process unless PREFECT_API_URL names a server).
os.environ.setdefault("PREFECT_HOME", str(Path(__file__).resolve().parents[1] / ".prefect"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")
os.environ.setdefault("DVC_NO_ANALYTICS", "1")
environment_defaults()  # MLflow's telemetry off
