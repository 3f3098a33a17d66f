"""The shared store's secrets (issue 29, section 5): no database password on any process's
command line, and an application role that is no superuser (pipeline/postgres.py,
pipeline/mlflow_server.py; a real PostgreSQL, ``postgres`` extra: skipped with the reason where it
is missing, a failure under CI)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]


def _need_postgres() -> None:
    from pipeline.postgres import available

    why = available()
    if why:
        pytest.fail(f"CI: {why}") if os.environ.get("CI") else pytest.skip(why)


def _password(url: str) -> str:
    return urllib.parse.unquote(urllib.parse.urlsplit(url.strip()).password or "")


def _command_lines() -> dict[int, str]:
    """Every process's command line (``ps`` shows the same), by pid."""
    out = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            with contextlib.suppress(OSError):  # gone meanwhile
                out[int(d.name)] = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return out


def _on_command_lines(secret: str) -> list[str]:
    assert len(secret) >= 16
    return [f"{pid}: {line}" for pid, line in _command_lines().items() if secret in line]


@pytest.fixture()
def pg_root():
    """A data folder the ``nobody`` user can reach when run as root (pytest's tmp_path cannot)."""
    d = Path(tempfile.mkdtemp(prefix="climbrl-secrets-"))
    d.chmod(0o711)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_no_password_on_any_command_line_while_make_server_runs(tmp_path, pg_root) -> None:
    """``make server``'s path (``python -m pipeline.mlflow_server``, its own PostgreSQL): while
    PostgreSQL and the MLflow server (uvicorn and its workers) run and take a client's run,
    neither the application role's password nor the superuser's is in any process's
    /proc/PID/cmdline; the files that hold them are 0600."""
    _need_postgres()
    import psutil
    from mlflow.tracking import MlflowClient
    from pipeline.postgres import free_port

    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MLFLOW_", "CLIMBRL_MLFLOW"))}
    env.update(PYTHONPATH=os.pathsep.join([str(REPO / "src"), str(REPO)]), MLFLOW_DISABLE_TELEMETRY="true",
               DO_NOT_TRACK="true")
    log = tmp_path / "server.log"
    proc = subprocess.Popen([sys.executable, "-m", "pipeline.mlflow_server", "--pgdata", str(pg_root / "pg"),
                             "--artifacts", str(tmp_path / "artifacts"), "--port", str(port), "--log", str(log)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if "export MLFLOW_TRACKING_URI=" in line:
                break
        else:
            raise AssertionError(f"the server did not come up: {''.join(seen)} {log.read_text()}")
        client = MlflowClient(tracking_uri=f"http://127.0.0.1:{port}")
        run = client.create_run(client.create_experiment("secrets"))
        client.log_metric(run.info.run_id, "x", 1.0)
        assert client.get_run(run.info.run_id).data.metrics == {"x": 1.0}  # the database is in use

        server_tree = psutil.Process(proc.pid).children(recursive=True)
        assert len(server_tree) >= 3  # postgres, mlflow server, uvicorn at least
        files = sorted((pg_root / "pg").glob("climbrl-*url"))
        secrets = {f.name: _password(f.read_text()) for f in files}
        for name, secret in secrets.items():
            assert not _on_command_lines(secret), (name, _on_command_lines(secret))
        assert set(secrets) == {"climbrl-admin-url", "climbrl-url"}, secrets.keys()
        for f in files:
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
        assert (pg_root / "pg" / "climbrl-url").read_text().startswith("postgresql://climbrl:")
        for f in (log, pg_root / "pg" / "postgres.log"):
            text = f.read_text(errors="replace")
            assert not [s for s in secrets.values() if s in text], f
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            assert proc.wait(60) == 0
        finally:
            if proc.poll() is None:
                proc.kill()


def test_the_mlflow_server_gets_its_backend_through_the_environment(tmp_path, postgres_server) -> None:
    """The context the other tests use (``mlflow_server(backend, ...)``): the URL is not on the
    server's command line, nor on any other."""
    from pipeline.mlflow_server import mlflow_server
    from pipeline.postgres import create_database

    backend = create_database(postgres_server, f"secrets{os.getpid()}")
    with mlflow_server(backend, tmp_path / "artifacts", log=tmp_path / "server.log"):
        assert not _on_command_lines(_password(backend))
        assert not [line for line in _command_lines().values() if backend in line]


def test_the_application_role_is_no_superuser_and_owns_its_databases(postgres_server) -> None:
    """What clients get (the URL of ``local_postgres``, the session's server) is a role without
    superuser, role creation, replication or RLS bypass, that owns its database and creates
    tables in it, and in the databases it makes (the tests' and MLflow's); the superuser's
    powers are refused to it: shell commands through ``COPY ... TO PROGRAM``, new roles,
    making itself superuser."""
    _need_postgres()
    import psycopg
    from pipeline.postgres import APP_ROLE, create_database

    assert urllib.parse.urlsplit(postgres_server).username == APP_ROLE
    made = create_database(postgres_server, f"owned{os.getpid()}")
    for url in (postgres_server, made):
        with psycopg.connect(url, autocommit=True) as conn:
            role = conn.execute("SELECT current_user, rolsuper, rolcreaterole, rolreplication, rolbypassrls "
                                "FROM pg_roles WHERE rolname = current_user").fetchone()
            assert role == (APP_ROLE, False, False, False, False)
            owner = conn.execute("SELECT pg_get_userbyid(datdba) FROM pg_database "
                                 "WHERE datname = current_database()").fetchone()[0]
            assert owner == APP_ROLE
            conn.execute("CREATE TABLE IF NOT EXISTS secrets_t (id serial PRIMARY KEY, v text)")
            conn.execute("INSERT INTO secrets_t (v) VALUES ('x')")
            assert conn.execute("SELECT count(*) >= 1 FROM secrets_t").fetchone()[0]
            for refused in ("COPY (SELECT 1) TO PROGRAM 'true'", "CREATE ROLE climbrl_other LOGIN",
                            f"ALTER ROLE {APP_ROLE} SUPERUSER"):
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(refused)


def test_beyond_loopback_only_the_application_role_is_let_in_from_other_hosts(pg_root) -> None:
    """pg_hba.conf of a server on 0.0.0.0: the superuser only from this machine's own addresses,
    clients of ``--allow`` only as the application role; an older folder's line that let every
    user in from ``--allow`` is replaced."""
    _need_postgres()
    from pipeline.postgres import PGDATA, LocalPostgres, bin_dir

    server = LocalPostgres(pg_root / "open", host="0.0.0.0", allow="10.0.0.0/8")
    server._init(bin_dir())  # initdb only: the rules are written before the server starts
    hba = pg_root / "open" / PGDATA / "pg_hba.conf"
    hba.write_text(hba.read_text() + "host all all 10.0.0.0/8 scram-sha-256  # climbrl: --allow\n")  # the old line
    server._access_rules()
    rules = [ln.split("#")[0].split() for ln in hba.read_text().splitlines() if ln.split("#")[0].strip()]
    beyond = [r for r in rules if r[0] == "host" and r[3] not in ("127.0.0.1/32", "::1/128")]
    assert beyond == [["host", "all", "postgres", "samehost", "scram-sha-256"],
                      ["host", "all", "climbrl", "10.0.0.0/8", "scram-sha-256"]]


def test_a_folder_made_before_the_application_role_is_handed_over(pg_root) -> None:
    """A data folder of the earlier code (its URL file the superuser's, the databases and MLflow's
    or Optuna's tables the superuser's): the next start keeps the superuser for setup (its URL
    moved to climbrl-admin-url), creates the application role, hands it the databases and their
    tables, sequences and types, and gives clients its URL."""
    _need_postgres()
    import psycopg
    from pipeline.postgres import ADMIN_FILE, APP_ROLE, URL_FILE, LocalPostgres

    root = pg_root / "old"
    server = LocalPostgres(root, durable=False)
    server.start()
    admin = (root / ADMIN_FILE).read_text().strip()
    port = server.port
    old_url = admin.rsplit("/", 1)[0] + "/climbrl"
    with psycopg.connect(admin, autocommit=True) as conn:  # what the earlier code left
        conn.execute("ALTER DATABASE climbrl OWNER TO postgres")
        conn.execute("CREATE DATABASE mlflow")
        conn.execute(f"DROP ROLE {APP_ROLE}")
    for url in (old_url, admin.rsplit("/", 1)[0] + "/mlflow"):
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TYPE status AS ENUM ('RUNNING', 'FINISHED')")
            conn.execute("CREATE TABLE runs (id serial PRIMARY KEY, s status)")
            conn.execute("CREATE SEQUENCE loose")
            conn.execute("CREATE VIEW finished AS SELECT id FROM runs WHERE s = 'FINISHED'")
    server.stop()
    (root / URL_FILE).write_text(old_url + "\n")
    (root / ADMIN_FILE).unlink()

    again = LocalPostgres(root, port=port, durable=False)
    try:
        url = again.start()
        assert urllib.parse.urlsplit(url).username == APP_ROLE and (root / URL_FILE).read_text().strip() == url
        assert _password((root / ADMIN_FILE).read_text()) == _password(old_url)
        assert stat.S_IMODE((root / ADMIN_FILE).stat().st_mode) == 0o600
        for db in ("climbrl", "mlflow"):
            with psycopg.connect(url.rsplit("/", 1)[0] + "/" + db, autocommit=True) as conn:
                assert conn.execute("SELECT pg_get_userbyid(datdba) FROM pg_database "
                                    "WHERE datname = current_database()").fetchone()[0] == APP_ROLE
                conn.execute("INSERT INTO runs (s) VALUES ('FINISHED')")  # the table and its sequence
                assert conn.execute("SELECT count(*) FROM finished").fetchone()[0] == 1
                conn.execute("SELECT nextval('loose')")
                conn.execute("ALTER TABLE runs ADD COLUMN note text")  # as a migration (alembic) would
                conn.execute("ALTER TYPE status ADD VALUE 'FAILED'")
                owners = conn.execute(
                    "SELECT DISTINCT pg_get_userbyid(relowner) FROM pg_class c JOIN pg_namespace n "
                    "ON n.oid = c.relnamespace WHERE n.nspname = 'public'").fetchall()
                assert owners == [(APP_ROLE,)]
    finally:
        again.stop()


def test_climbrl_tune_takes_its_storage_from_the_environment(tmp_path, postgres_url, monkeypatch) -> None:
    """``CLIMBRL_TUNE_STORAGE`` names the shared study's database, so that a worker's command
    line (``climbrl tune --study NAME``) holds no password."""
    import optuna

    from climbrl.params import load_params
    from climbrl.tune import run_study

    params = {"rules": "paper",
              "seeds": {"deals": 8, "seed": 1, "validation_deals": 2, "validation_seed": 7},
              "train": {"common": {"epochs": 1, "games_per_epoch": 2, "eval_every": 1, "eval_games": 4, "hidden": 16,
                                   "minibatch_decisions": 64, "eval_opponents": ["random"]}, "ppo": {}},
              "evaluate": {"games": 4, "opponents": ["random"], "workers": 1},
              "tracking": {"tracking_uri": "sqlite:///mlflow.db", "experiment": "secrets", "register_model": "s"},
              "tune": {"algo": "ppo", "trials": 1, "epochs": 1, "games_per_epoch": 2, "eval_every": 1,
                       "eval_games": 4, "seed": 0, "storage": "sqlite:///optuna.db", "study": "t",
                       "pruner": "median", "opponent": "random"}}
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLIMBRL_TUNE_STORAGE", postgres_url)
    p = load_params("params.yaml")
    res = run_study(p.tune, rules=p.rules, study_name="from-env", out_dir=tmp_path / "tune", track=False)
    assert _password(postgres_url) not in res["storage"]
    assert len(optuna.load_study(study_name="from-env", storage=postgres_url).trials) == 1
    assert not (tmp_path / "optuna.db").exists()
