"""Test-session settings: quiet Prefect's temporary-server log lines at interpreter exit (they
would be written to pytest's already-closed capture streams)."""

import os

os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
