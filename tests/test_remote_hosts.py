"""The servers a study spread over machines shares, on an address other machines reach
(``--host``; pipeline/hosts.py): PostgreSQL, the MLflow server and the Prefect server, each
started on this machine's own non-loopback address and used through it, as a worker on another
machine would. Loopback stays the default (the other tests). Skipped, with the reason, on a
machine with no non-loopback IPv4 address.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest
from pipeline.hosts import client_address, is_loopback, url_host

from tests.reference import require_postgres


def _own_address() -> str | None:
    """This machine's IPv4 address on its default route (a UDP connect sends nothing)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
        except OSError:
            return None
        addr = s.getsockname()[0]
    return None if is_loopback(addr) else addr


ADDR = _own_address()
needs_address = pytest.mark.skipif(ADDR is None, reason="this machine has no non-loopback IPv4 address")


@pytest.fixture()
def pg_folder():
    """A folder for a server's data that the ``nobody`` user can reach when run as root (pytest's
    own tmp_path lies under a folder closed to others)."""
    d = tempfile.mkdtemp(prefix="climbrl-pg-remote-")
    os.chmod(d, 0o711)  # others may pass through, not list it
    yield Path(d)
    shutil.rmtree(d, ignore_errors=True)


def test_client_address_names_this_machine_for_every_address() -> None:
    assert client_address("127.0.0.1") == "127.0.0.1" and client_address("10.1.2.3") == "10.1.2.3"
    assert client_address("0.0.0.0") == socket.gethostname()
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")
    assert url_host("::1") == "[::1]" and url_host("10.1.2.3") == "10.1.2.3"


@needs_address
def test_postgres_on_this_machine_s_address_takes_password_clients_of_its_subnet(pg_folder) -> None:
    require_postgres()
    import psycopg
    from pipeline.postgres import LocalPostgres

    server = LocalPostgres(pg_folder / "open", host=ADDR, durable=False)
    try:
        url = server.start()
        assert f"@{ADDR}:" in url
        with psycopg.connect(url, connect_timeout=5) as conn:  # from ADDR, not loopback: pg_hba's samenet line
            assert conn.execute("SELECT inet_client_addr()::text").fetchone()[0].split("/")[0] == ADDR
        assert (pg_folder / "open" / "climbrl-url").read_text().strip() == url
        wrong = url.replace(url.split("@")[0].split(":")[-1], "0" * 32)  # the wrong password
        with pytest.raises(psycopg.OperationalError, match="password"):
            psycopg.connect(wrong, connect_timeout=5)
    finally:
        server.stop()
    # the control: clients allowed from loopback only are refused from ADDR (initdb's own rules)
    closed = LocalPostgres(pg_folder / "closed", host=ADDR, durable=False, allow="127.0.0.1/32")
    try:
        with pytest.raises(Exception, match="pg_hba.conf"):
            closed.start(timeout=15)
    finally:
        closed.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root process drops to nobody to run PostgreSQL")
def test_a_data_folder_nobody_cannot_reach_is_refused_with_the_reason(tmp_path) -> None:
    from pipeline.postgres import LocalPostgres, PostgresUnavailable, available

    if available():
        pytest.skip(available())
    tmp_path.chmod(0o700)
    closed = next(d for d in reversed(tmp_path.parents) if not d.stat().st_mode & 0o001)  # pytest's own, or this
    with pytest.raises(PostgresUnavailable, match=f"cannot enter {closed} .mode 700."):
        LocalPostgres(tmp_path / "data").start()
    assert not (tmp_path / "data").exists()  # refused before anything was written


@needs_address
def test_mlflow_server_on_this_machine_s_address_answers_its_clients(tmp_path, postgres_server) -> None:
    from mlflow.tracking import MlflowClient
    from pipeline.mlflow_server import mlflow_server
    from pipeline.postgres import create_database

    backend = create_database(postgres_server, f"remote{os.getpid()}")
    with mlflow_server(backend, tmp_path / "artifacts", log=tmp_path / "server.log", host=ADDR) as uri:
        assert uri.startswith(f"http://{ADDR}:")
        client = MlflowClient(tracking_uri=uri)
        exp = client.create_experiment("from-another-machine")  # a write: checked against the Host header
        run = client.create_run(exp)
        client.log_metric(run.info.run_id, "x", 1.0)
        assert client.get_run(run.info.run_id).data.metrics == {"x": 1.0}


@needs_address
def test_prefect_server_on_this_machine_s_address_answers_its_clients(tmp_path, monkeypatch) -> None:
    from pipeline import prefect_server as ps

    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect"))
    with ps.prefect_server(host=ADDR) as api_url:
        assert api_url.startswith(f"http://{ADDR}:") and ps.healthy(api_url)
