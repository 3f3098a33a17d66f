"""One local Prefect server for a whole run: ``python -m pipeline.prefect_server -- dvc repro``.

Without ``PREFECT_API_URL`` every Prefect process starts a temporary server of its own (about 10
to 20 s per ``python -m pipeline STAGE`` here, for every stage of ``dvc repro``). This runs a
command with one server for all of them:

- ``PREFECT_API_URL`` already set: the command runs against that server (checked to answer first).
- otherwise: ``prefect server start --host 127.0.0.1 --port PORT`` (loopback only; analytics off;
  its database under ``PREFECT_HOME``, the project's ``.prefect/`` by default, the same one the
  temporary servers use, so the UI keeps earlier runs; its UI told the server's own address,
  ``PREFECT_SERVER_UI_API_URL``) starts in a process group of its own; once
  its health endpoint answers, the command runs with ``PREFECT_API_URL`` set, and the server is
  stopped when the command ends, fails, or this process is interrupted (SIGINT, SIGTERM).

PORT: ``--port``, else ``CLIMBRL_PREFECT_PORT``, else a free port. ``--host`` (default 127.0.0.1,
this machine only): an address of this machine, or 0.0.0.0, for Dask workers on other machines,
which are then given ``PREFECT_API_URL=http://HOST:PORT/api`` (pipeline/hosts.py; Prefect's
server has no authentication). The server's log goes to
``PREFECT_HOME/server.log``; the UI's address is printed while the command runs. Exit status:
the command's (or 1 when the server does not come up).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pipeline  # noqa: F401  (environment defaults: PREFECT_HOME, analytics off)
from pipeline import params_io
from pipeline.hosts import LOOPBACK, client_address, free_port, local_address, url_host

HOST = LOOPBACK


class ServerError(RuntimeError):
    """The Prefect server did not come up (or a given PREFECT_API_URL does not answer)."""


def healthy(api_url: str, timeout: float = 2.0) -> bool:
    """Whether the Prefect API at ``api_url`` (``http://host:port/api``) answers its health check."""
    try:
        with urllib.request.urlopen(f"{api_url.rstrip('/')}/health", timeout=timeout) as r:
            return r.status == 200 and r.read().strip() == b"true"
    except (OSError, urllib.error.URLError, ValueError):
        return False


def _stop(proc: subprocess.Popen, grace: float = 15.0) -> None:
    """SIGTERM to the server's process group (the server and anything it started), SIGKILL after ``grace`` s."""
    if proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def prefect_server(port: int | None = None, startup_timeout: float = 120.0,
                   log: Path | None = None, host: str = HOST) -> Iterator[str]:
    """The API URL of a Prefect server for the duration: ``PREFECT_API_URL`` when set, else a
    server started here on ``host`` (default loopback) and stopped on exit (also on an exception)."""
    given = os.environ.get("PREFECT_API_URL")
    if given:
        if not healthy(given, timeout=10.0):
            raise ServerError(f"PREFECT_API_URL={given} does not answer {given.rstrip('/')}/health; "
                              "start that server or unset PREFECT_API_URL to start one here")
        yield given
        return
    here = local_address(host)  # how this process reaches it
    port = port or int(os.environ.get("CLIMBRL_PREFECT_PORT") or 0) or free_port(here)
    home = Path(os.environ["PREFECT_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    log = log or home / "server.log"
    api_url = f"http://{url_host(client_address(host))}:{port}/api"
    env = {**os.environ, "PREFECT_SERVER_ANALYTICS_ENABLED": "false", "PREFECT_HOME": str(home)}
    env.pop("PREFECT_API_URL", None)
    # the API address the served UI gives the browser (its /ui-settings): unset, Prefect 3.9 builds
    # it from PREFECT_SERVER_API_HOST and _PORT, which --host and --port do not change, so the UI
    # would call 127.0.0.1:4200 and say "Can't connect to Server API". One the user set (a proxy's) stays.
    if not (env.get("PREFECT_SERVER_UI_API_URL") or env.get("PREFECT_UI_API_URL")):
        env["PREFECT_SERVER_UI_API_URL"] = api_url
    cmd = [sys.executable, "-m", "prefect", "server", "start", "--host", host, "--port", str(port),
           "--analytics-off", "--no-scheduler", "--no-late-runs"]
    health = f"http://{url_host(here)}:{port}/api"
    with open(log, "ab") as out:
        proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + startup_timeout
        while not healthy(health):
            if proc.poll() is not None:
                raise ServerError(f"the Prefect server exited with status {proc.returncode} before answering; "
                                  f"see {log}")
            if time.monotonic() > deadline:
                raise ServerError(f"the Prefect server did not answer {health}/health within "
                                  f"{startup_timeout:.0f} s; see {log}")
            time.sleep(0.25)
        yield api_url
    finally:
        _stop(proc)


def run_with_server(command: Sequence[str], port: int | None = None, host: str = HOST) -> int:
    """``command`` with ``PREFECT_API_URL`` naming one server (:func:`prefect_server`); its exit status.

    SIGTERM to this process stops the command (SIGTERM forwarded) and then the server. Ctrl-C
    reaches the command from the terminal; this process waits for it to end, then stops the server."""
    start = time.perf_counter()
    try:
        with prefect_server(port, host=host) as url:
            ui = url.removesuffix("/api")
            print(f"prefect: server {url} up in {time.perf_counter() - start:.1f} s (UI: {ui})", file=sys.stderr)
            proc = subprocess.Popen(list(command), env={**os.environ, "PREFECT_API_URL": url})
            previous = signal.signal(signal.SIGTERM, lambda signum, frame: proc.send_signal(signal.SIGTERM))
            try:
                while True:
                    try:
                        rc = proc.wait()
                        return 128 - rc if rc < 0 else rc  # killed by signal N: 128 + N, as a shell says
                    except KeyboardInterrupt:
                        continue  # the terminal sent the command the same SIGINT: wait for it to stop
            finally:
                signal.signal(signal.SIGTERM, previous)
                if proc.poll() is None:
                    proc.kill()
                    proc.wait()
    except ServerError as e:
        print(f"prefect: {e}", file=sys.stderr)
        return 1


@params_io.command("python -m pipeline.prefect_server")
def main(argv: list[str] | None = None) -> int:
    p = params_io.ArgumentParser(prog="python -m pipeline.prefect_server",
                                description="run COMMAND with one local Prefect server (or PREFECT_API_URL)")
    p.add_argument("--port", type=int, default=None, help="the server's port (default: CLIMBRL_PREFECT_PORT "
                   "or a free one)")
    p.add_argument("--host", default=HOST, help="the address to listen on (default 127.0.0.1, this machine "
                   "only; an address of this machine or 0.0.0.0 for workers on others)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = p.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        p.error("give the command after --, e.g. python -m pipeline.prefect_server -- dvc repro")
    return run_with_server(command, args.port, args.host)


if __name__ == "__main__":
    sys.exit(main())
