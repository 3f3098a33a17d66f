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


# --- a real browser (issues 27 and 28): Debian's chromium driven by Playwright -------------------

CHROMIUM = os.environ.get("CLIMBRL_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def browser():
    """One headless Chromium for the test session (per xdist worker): Debian's package
    (``/usr/bin/chromium``, or ``CLIMBRL_CHROMIUM``) launched through Playwright's Python API with
    ``executable_path``, so that no browser is downloaded. Skipped with the reason when either is
    missing; under CI a failure instead (``.ci/run`` installs both)."""
    why = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = "Playwright is not installed: pip install -e '.[dev]'"
    if why is None and not os.access(CHROMIUM, os.X_OK):
        why = f"no Chromium at {CHROMIUM}: apt-get install chromium (or set CLIMBRL_CHROMIUM)"
    if why:
        if os.environ.get("CI"):
            pytest.fail(f"CI: the browser tests must run here: {why}")
        pytest.skip(why)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                              args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield b
        finally:
            b.close()


@pytest.fixture()
def page(browser):
    """A fresh browser context and page for one test (no cookies or storage shared with others)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    try:
        yield pg
    finally:
        context.close()
