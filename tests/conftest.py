"""Test-session settings: quiet Prefect's temporary-server log lines at interpreter exit (they
would be written to pytest's already-closed capture streams); the PostgreSQL fixtures."""

import itertools
import os

import pytest

os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


# --- a real PostgreSQL (issue 14, section 1): pipeline/postgres.py -------------------------------

@pytest.fixture(scope="session")
def postgres_server(tmp_path_factory):
    """One PostgreSQL server for the test session (per xdist worker), in a temporary folder, on
    127.0.0.1 and a free port, fsync off; yields the URL of its ``climbrl`` database. Skipped with
    the reason when no server binaries or driver are installed (``pip install -e '.[postgres]'``);
    under CI (``CI`` set) that is a failure instead, so that a missing server cannot hide a test."""
    from pipeline.postgres import available, local_postgres

    why = available()
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"CI: the PostgreSQL tests must run here: {why}")
        pytest.skip(f"no local PostgreSQL: {why}")
    with local_postgres(tmp_path_factory.mktemp("postgres")) as url:
        yield url


_databases = itertools.count()


@pytest.fixture()
def postgres_url(postgres_server):
    """A fresh, empty database on the session's server, for one test."""
    from pipeline.postgres import create_database

    return create_database(postgres_server, f"t{os.getpid()}_{next(_databases)}")
