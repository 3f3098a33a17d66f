"""An MLflow tracking server on PostgreSQL: ``python -m pipeline.mlflow_server`` (``make server``).

Runs ``mlflow server --artifacts-destination DIR --serve-artifacts --host 127.0.0.1 --port PORT``
with ``MLFLOW_BACKEND_STORE_URI=postgresql://...`` in its environment (runs, metrics, tags and
the model registry in the database; artifacts in DIR, uploaded and downloaded through the
server, so a client needs no access to DIR): that variable is the option's own, so the URL and
its password are on no command line, where every local user reads them in ``ps``
(``/proc/PID/environ`` is readable by the process's owner only). It waits for its ``/health``,
prints the tracking URI and the runs table of each study of ``params.yaml`` (if there is one
here; the experiments are made on the server) and runs until Ctrl-C / SIGTERM, then stops it
with its worker processes.

- ``CLIMBRL_MLFLOW_BACKEND`` or ``--backend-file FILE`` (a file holding the URL, such as
  ``.pgdata/climbrl-url``; keep it 0600): a PostgreSQL database URL (``--backend-store-uri URL``
  also works, but puts the password on this process's command line); without one, a local
  PostgreSQL is started in ``--pgdata`` (default ``.pgdata``, kept: the next start finds the same
  runs; pipeline/postgres.py, the ``postgres`` extra) with a database ``mlflow``, owned by the
  application role (not the superuser).
- ``--artifacts`` (default ``mlartifacts``), ``--port`` (or ``CLIMBRL_MLFLOW_PORT``, default 5000).
- ``--host`` (default 127.0.0.1, this machine only): an address of this machine, or 0.0.0.0, for
  clients on other machines (pipeline/hosts.py); MLflow then answers requests whose Host header
  is a loopback or private address, the address given to clients, or one of ``--allowed-hosts``
  (its guard against DNS rebinding: name there any other name clients use). The server has no
  authentication.

Clients: ``MLFLOW_TRACKING_URI=http://127.0.0.1:5000`` in their environment (climbrl.track reads
it before params.yaml's ``tracking_uri``): ``make run``, ``climbrl tune``, any number of processes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pipeline  # noqa: F401  (environment defaults)
from pipeline import params_io
from pipeline.hosts import client_address, free_port, is_loopback, local_address, url_host
from pipeline.postgres import HOST, LocalPostgres, PostgresUnavailable, create_database


class ServerError(RuntimeError):
    """The MLflow server did not come up."""


def healthy(uri: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{uri}/health", timeout=timeout) as r:
            return r.status == 200
    except (urllib.error.URLError, OSError):
        return False


def allowed_host_headers(host: str, extra: str | None = None) -> str | None:
    """``mlflow server --allowed-hosts`` for a server on ``host``: none on loopback (MLflow's
    default: loopback and private addresses); beyond it, that default, the address given to
    clients (this machine's name on 0.0.0.0) and ``extra`` (comma-separated), since naming any
    replaces MLflow's default."""
    if is_loopback(host) and not extra:
        return None
    from mlflow.server.security_utils import get_default_allowed_hosts

    given = client_address(host)
    mine = [] if is_loopback(given) else [url_host(given), f"{url_host(given)}:*"]
    more = [h.strip() for h in (extra or "").split(",") if h.strip()]
    return ",".join(dict.fromkeys([*get_default_allowed_hosts(), *mine, *more]))


def command(artifacts: str | Path, port: int, host: str = HOST, allowed_hosts: str | None = None) -> list[str]:
    """The server's command line: no backend store on it (``MLFLOW_BACKEND_STORE_URI`` in its
    environment, :func:`mlflow_server`)."""
    mlflow = Path(sys.executable).parent / "mlflow"
    allowed = allowed_host_headers(host, allowed_hosts)
    return [str(mlflow) if mlflow.exists() else "mlflow", "server",
            "--artifacts-destination", str(Path(artifacts).resolve()), "--serve-artifacts",
            "--host", host, "--port", str(port), "--workers", "1",
            *(["--allowed-hosts", allowed] if allowed else [])]


def _stop(proc: subprocess.Popen, timeout: float = 20.0) -> None:
    """SIGTERM to the server's process group (uvicorn and its job workers), SIGKILL if it lingers."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # children that outlive the server (huey consumers)
    proc.wait()


@contextmanager
def mlflow_server(backend: str, artifacts: str | Path, port: int | None = None, log: str | Path | None = None,
                  timeout: float = 120.0, host: str = HOST, allowed_hosts: str | None = None) -> Iterator[str]:
    """The server for the duration, listening on ``host``; yields its tracking URI for clients
    (``http://127.0.0.1:PORT`` by default)."""
    here = local_address(host)  # how this process reaches it
    port = port or free_port(here)
    uri = f"http://{url_host(client_address(host))}:{port}"
    health = f"http://{url_host(here)}:{port}"
    Path(artifacts).mkdir(parents=True, exist_ok=True)
    logf = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115  (closed below)
    env = {**os.environ, "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true",
           "MLFLOW_BACKEND_STORE_URI": backend}  # mlflow server's --backend-store-uri, kept off the command line
    env.pop("MLFLOW_TRACKING_URI", None)
    env.pop("CLIMBRL_MLFLOW_BACKEND", None)
    proc = subprocess.Popen(command(artifacts, port, host, allowed_hosts), stdout=logf,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + timeout
        while not healthy(health):
            if proc.poll() is not None:
                raise ServerError(f"mlflow server exited with status {proc.returncode} (log: {log})")
            if time.monotonic() > deadline:
                raise ServerError(f"mlflow server not healthy within {timeout:.0f} s (log: {log})")
            time.sleep(0.5)
        yield uri
    finally:
        _stop(proc)
        if log:
            logf.close()


def study_pages(uri: str, root: Path = Path(".")) -> dict[str, str]:
    """``{experiment: its runs table on the server at uri}`` for the studies of ``root``'s
    params.yaml (none without one), each experiment made on the server if it has none yet."""
    from climbrl.track import runs_address
    from pipeline.repro import tracked_studies

    if not (root / "params.yaml").exists():
        return {}
    return {experiment: runs_address(uri, experiment) for _, experiment in tracked_studies(root)}


@params_io.command("python -m pipeline.mlflow_server")
def main(argv: list[str] | None = None) -> int:
    from mlflow.exceptions import MlflowException

    ap = params_io.ArgumentParser(prog="python -m pipeline.mlflow_server", description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend-store-uri", default=os.environ.get("CLIMBRL_MLFLOW_BACKEND"),
                    help="postgresql://... (default CLIMBRL_MLFLOW_BACKEND, which keeps the password off the "
                    "command line; else --backend-file; else a local PostgreSQL in --pgdata)")
    ap.add_argument("--backend-file", default=None, help="a file (keep it 0600) holding the postgresql:// URL, "
                    "such as .pgdata/climbrl-url")
    ap.add_argument("--pgdata", default=".pgdata", help="the local PostgreSQL's folder (default .pgdata)")
    ap.add_argument("--artifacts", default="mlartifacts", help="artifact folder (default mlartifacts)")
    ap.add_argument("--port", type=int, default=int(os.environ.get("CLIMBRL_MLFLOW_PORT", "5000")))
    ap.add_argument("--log", default="mlflow-server.log")
    ap.add_argument("--host", default=HOST, help="the address to listen on (default 127.0.0.1, this machine "
                    "only; an address of this machine or 0.0.0.0 for clients on others)")
    ap.add_argument("--allowed-hosts", default=None, help="Host headers MLflow answers besides loopback and "
                    "private addresses (mlflow server --allowed-hosts), e.g. the server's host name")
    args = ap.parse_args(argv)
    stop = {"now": False}

    def handler(signum: int, frame: Any) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    pg = None
    backend = args.backend_store_uri
    if not backend and args.backend_file:
        backend = Path(args.backend_file).read_text().strip()
    try:
        if not backend:
            data = Path(args.pgdata).resolve()
            if os.geteuid() == 0:
                from pipeline.postgres import _owned

                data.mkdir(parents=True, exist_ok=True)
                _owned(data)
            pg = LocalPostgres(data, durable=True)
            backend = create_database(pg.start(), "mlflow")
            print(f"PostgreSQL on {HOST}:{pg.port} (data {data}); backend store: database mlflow", flush=True)
        with mlflow_server(backend, args.artifacts, args.port, log=args.log, host=args.host,
                           allowed_hosts=args.allowed_hosts) as uri:
            print(f"MLflow tracking server: {uri} (artifacts {Path(args.artifacts).resolve()}, log {args.log})\n"
                  f"  export MLFLOW_TRACKING_URI={uri}", flush=True)
            try:
                for experiment, page in study_pages(uri).items():
                    print(f"  runs of {experiment}: {page}", flush=True)
            except (MlflowException, ValueError) as e:  # the server runs on: only the addresses are missing
                print(f"pipeline.mlflow_server: no study's runs address ({type(e).__name__}: {e})", file=sys.stderr)
            while not stop["now"]:
                time.sleep(0.5)
    except (PostgresUnavailable, ServerError) as e:
        print(f"pipeline.mlflow_server: {e}", file=sys.stderr)
        return 1
    finally:
        if pg:
            pg.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
