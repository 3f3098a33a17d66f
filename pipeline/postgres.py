"""A local PostgreSQL server for the shared experiment store: ``python -m pipeline.postgres``.

Optuna studies shared by several ``climbrl tune`` workers and an MLflow tracking server both want
a real database (``postgresql://...``). Where no PostgreSQL runs, this starts one from the
binaries of the ``postgres`` extra (``pip install -e '.[postgres]'``: the ``pgserver`` wheel
bundles PostgreSQL 16, no root and no system package needed), or else from a PostgreSQL found on
``PATH`` / under ``/usr/lib/postgresql`` (Debian's ``postgresql`` package):

- ``initdb`` in a data folder of its own (password authentication, a random password kept in
  ``DATA/climbrl-url``, which is readable by its owner only);
- ``postgres`` listening on 127.0.0.1 only (no Unix socket), on ``--port`` or a free port; with
  ``--host ADDR`` (an address of this machine, or 0.0.0.0) on that address instead, for workers on
  other machines, which then connect with the password from the hosts of ``--allow`` (default
  ``samenet``: this machine's subnets; PostgreSQL's pg_hba syntax, a CIDR such as 10.0.0.0/8);
- the database ``--db`` (default ``climbrl``) created; the URL printed and written to
  ``DATA/climbrl-url``; stopped (fast shutdown) on Ctrl-C / SIGTERM.

PostgreSQL refuses to run as root: run as root (a container), the server runs as the ``nobody``
user, in a data folder that user owns.

``python -m pipeline.postgres --data .pgdata`` keeps its data across restarts (the same folder
gives the same URL); the tests use :func:`local_postgres` in a temporary folder with ``fsync``
off (``tests/conftest.py``).
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import os
import pwd
import re
import secrets
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pipeline.hosts import LOOPBACK, client_address, free_port, is_loopback, local_address, url_host

HOST = LOOPBACK
URL_FILE = "climbrl-url"
PGDATA = "pgdata"


class PostgresUnavailable(RuntimeError):
    """No PostgreSQL binaries (``initdb``, ``postgres``) or no driver (psycopg) here."""


def bin_dir() -> Path:
    """The folder of ``initdb`` and ``postgres``: the ``pgserver`` wheel's, else the system's."""
    import importlib.util

    spec = importlib.util.find_spec("pgserver")  # the postgres extra (located, not imported: its import
    if spec and spec.submodule_search_locations:  # sets up per-user folders this does not use)
        d = Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin"
        if (d / "postgres").exists():
            return _reachable(d)
    found = shutil.which("initdb")
    if found and (Path(found).resolve().parent / "postgres").exists():
        return Path(found).resolve().parent
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(d) / "initdb").exists() and (Path(d) / "postgres").exists():
            return Path(d)
    raise PostgresUnavailable("no PostgreSQL server binaries: pip install -e '.[postgres]' (the pgserver wheel) "
                              "or install Debian's postgresql package")


def _others_can_run(d: Path) -> bool:
    """Whether a user other than the owner can reach ``d`` (every folder above it searchable by others)."""
    return all(p.stat().st_mode & stat.S_IXOTH for p in (d, *d.parents))


def _reachable(d: Path) -> Path:
    """``d``, or, run as root with ``d`` out of the ``nobody`` user's reach (a virtual environment
    under a private folder such as ``/root`` or a ``mktemp -d`` folder), the ``bin`` folder of a
    world-readable copy of the wheel's installation, made once in the temporary folder (about 35
    MB): the server runs as ``nobody`` and must be able to execute its binaries. The copy keeps
    the wheel's layout, ``pgserver/pginstall`` beside ``pgserver.libs``, where the binaries' RPATH
    (``$ORIGIN/../../../pgserver.libs``) finds the libraries bundled with them."""
    if os.geteuid() != 0 or _others_can_run(d):
        return d
    install = d.parent  # .../site-packages/pgserver/pginstall
    libs = install.parent.parent / "pgserver.libs"
    key = hashlib.sha256(f"{install}:{(d / 'postgres').stat().st_mtime_ns}".encode()).hexdigest()[:12]
    target = Path(tempfile.gettempdir()) / f"climbrl-pginstall-{key}"
    bins = target / "pgserver" / "pginstall" / "bin"
    if not (bins / "postgres").exists():
        part = Path(tempfile.mkdtemp(prefix=f"{target.name}.part-", dir=target.parent))
        shutil.copytree(install, part / "pgserver" / "pginstall", symlinks=True)
        if libs.is_dir():
            shutil.copytree(libs, part / "pgserver.libs", symlinks=True)
        for p in (part, *part.rglob("*")):
            if not p.is_symlink():
                mode = p.stat().st_mode
                run = p.is_dir() or mode & stat.S_IXUSR
                p.chmod(mode | stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH
                        | (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH if run else 0))
        try:
            part.rename(target)
        except OSError:  # another process made it first
            shutil.rmtree(part, ignore_errors=True)
    return bins


def check_driver() -> None:
    try:
        import psycopg  # noqa: F401  (SQLAlchemy 2.1's default driver for postgresql:// URLs)
    except ImportError as e:
        raise PostgresUnavailable("no PostgreSQL driver: pip install -e '.[postgres]' (psycopg[binary])") from e


def available() -> str | None:
    """None when a local server can be started here, else why not."""
    try:
        bin_dir()
        check_driver()
    except PostgresUnavailable as e:
        return str(e)
    return None


def _run_as() -> dict[str, Any]:
    """Popen arguments that drop root to ``nobody`` (PostgreSQL refuses to run as root)."""
    if os.geteuid() != 0:
        return {}
    nobody = pwd.getpwnam("nobody")
    return {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}


def _owned(path: Path) -> None:
    drop = _run_as()
    if drop:
        os.chown(path, drop["user"], drop["group"])


def _check_reachable(root: Path) -> None:
    """Run as root, the server runs as ``nobody``, which must be able to enter every folder above
    its data: a clear error where one is closed to it (``/root``, a ``mktemp -d`` folder)."""
    drop = _run_as()
    if not drop:
        return
    for d in reversed(Path(root).resolve().parents):
        st = d.stat()
        if not (st.st_mode & stat.S_IXOTH or (st.st_uid == drop["user"] and st.st_mode & stat.S_IXUSR)):
            raise PostgresUnavailable(
                f"run as root, PostgreSQL runs as the nobody user, which cannot enter {d} (mode "
                f"{stat.S_IMODE(st.st_mode):o}) to reach its data in {root}: give a data folder outside it "
                "(--data, --pgdata; e.g. /var/tmp/climbrl-pg) or run as another user")


def create_database(url: str, name: str) -> str:
    """Create database ``name`` on the server of ``url`` (nothing if it exists); its URL."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn, conn.cursor() as cur:
        cur.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,))
        if cur.fetchone() is None:
            cur.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + "/" + name


class LocalPostgres:
    """One PostgreSQL server in ``root`` (its data in ``root/pgdata``), on ``host``:``port``
    (default 127.0.0.1; beyond loopback, clients of ``allow`` may connect with the password)."""

    def __init__(self, root: str | Path, port: int | None = None, db: str = "climbrl", durable: bool = True,
                 log: str | Path | None = None, host: str = HOST, allow: str = "samenet") -> None:
        self.root = Path(root)
        self.host, self.allow = host, allow
        self.port = port
        self.db = db
        self.durable = durable
        self.log = Path(log) if log else self.root / "postgres.log"
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def _init(self, bins: Path) -> str:
        data = self.root / PGDATA
        url_file = self.root / URL_FILE
        if (data / "PG_VERSION").exists() and url_file.exists():  # the same password; host and port anew
            return re.sub(r"@[^/]*/", "@{host}:{port}/", url_file.read_text().strip(), count=1)
        password = secrets.token_hex(16)
        self.root.mkdir(parents=True, exist_ok=True)
        _owned(self.root)
        pwfile = self.root / "pw.tmp"
        pwfile.write_text(password + "\n")
        pwfile.chmod(0o600)
        _owned(pwfile)
        try:
            subprocess.run([str(bins / "initdb"), "-D", str(data), "-U", "postgres", "--auth=scram-sha-256",
                            f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C", "--no-instructions"],
                           check=True, capture_output=True, text=True, **_run_as())
        except subprocess.CalledProcessError as e:
            raise PostgresUnavailable(f"initdb failed: {e.stderr.strip()[-2000:]}") from e
        finally:
            pwfile.unlink(missing_ok=True)
        url = f"postgresql://postgres:{password}@{{host}}:{{port}}/{self.db}"  # host and port: at start
        url_file.write_text(url + "\n")  # the password kept at once (the URL itself once it is up)
        url_file.chmod(0o600)
        return url

    def start(self, timeout: float = 60.0) -> str:
        """Start the server; returns the database's URL once it accepts connections."""
        check_driver()
        _check_reachable(self.root)
        bins = bin_dir()
        template = self._init(bins)
        here = local_address(self.host)  # how this process reaches it
        self.port = self.port or free_port(here)
        if not is_loopback(self.host):
            self._allow_remote()
        args = [str(bins / "postgres"), "-D", str(self.root / PGDATA), "-h", self.host, "-p", str(self.port),
                "-c", "unix_socket_directories=", "-c", "max_connections=200"]
        if not self.durable:
            args += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True, **_run_as())
        server_url = template.format(host=url_host(here), port=self.port).rsplit("/", 1)[0] + "/postgres"
        deadline = time.monotonic() + timeout
        import psycopg

        while True:
            if self.proc.poll() is not None:
                tail = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
                raise PostgresUnavailable(f"postgres exited with status {self.proc.returncode}: {tail}")
            try:
                psycopg.connect(server_url, connect_timeout=2).close()
                break
            except psycopg.OperationalError as e:
                if "pg_hba.conf" in str(e):  # up, but refuses this process's address: no use waiting
                    self.stop()
                    raise PostgresUnavailable(f"postgres refuses connections from {here} (--allow "
                                              f"{self.allow}): {str(e).strip()}") from None
                if time.monotonic() > deadline:
                    self.stop()
                    raise PostgresUnavailable(f"postgres did not accept connections within {timeout:.0f} s") \
                        from None
                time.sleep(0.2)
        create_database(server_url, self.db)
        self.url = template.format(host=url_host(client_address(self.host)), port=self.port)
        url_file = self.root / URL_FILE
        url_file.write_text(self.url + "\n")
        url_file.chmod(0o600)
        return self.url

    def _allow_remote(self) -> None:
        """A pg_hba.conf line letting hosts of ``allow`` connect over TCP with the password (initdb's
        file lets only loopback in); added once."""
        hba = self.root / PGDATA / "pg_hba.conf"
        line = f"host all all {self.allow} scram-sha-256  # climbrl: --allow"
        text = hba.read_text()
        if line not in text.splitlines():
            hba.write_text(text.rstrip("\n") + "\n" + line + "\n")

    def stop(self, timeout: float = 30.0) -> None:
        """Fast shutdown (SIGINT: running transactions are rolled back), then SIGKILL if it hangs."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@contextmanager
def local_postgres(root: str | Path | None = None, port: int | None = None, db: str = "climbrl",
                   durable: bool = False) -> Iterator[str]:
    """A throw-away server (in ``root``, or a temporary folder that is removed afterwards) for the
    duration; yields the database's URL. Run as root, a temporary folder is used whatever ``root``
    says (the ``nobody`` user must own the data folder and reach it)."""
    tmp = None
    if root is None or os.geteuid() == 0:
        tmp = tempfile.mkdtemp(prefix="climbrl-pg-")
        os.chmod(tmp, 0o700)
        root = tmp
    server = LocalPostgres(Path(root) / "server" if tmp is None else root, port=port, db=db, durable=durable)
    try:
        yield server.start()
    finally:
        server.stop()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.postgres", description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=".pgdata", help="its folder (data, URL, log); kept (default .pgdata)")
    ap.add_argument("--port", type=int, default=int(os.environ.get("CLIMBRL_PG_PORT", "5432")),
                    help="port (default CLIMBRL_PG_PORT or 5432)")
    ap.add_argument("--db", default="climbrl", help="database to create (default climbrl)")
    ap.add_argument("--host", default=HOST, help="the address to listen on (default 127.0.0.1, this machine "
                    "only; an address of this machine or 0.0.0.0 for workers on others)")
    ap.add_argument("--allow", default="samenet", help="beyond loopback, the clients that may connect with the "
                    "password (pg_hba.conf: samenet, the default, or a CIDR such as 10.0.0.0/8)")
    args = ap.parse_args(argv)
    data = Path(args.data).resolve()
    if os.geteuid() == 0:
        data.mkdir(parents=True, exist_ok=True)
        _owned(data)
    server = LocalPostgres(data, port=args.port, db=args.db, durable=True, host=args.host, allow=args.allow)
    stop = {"now": False}

    def handler(signum: int, frame: Any) -> None:
        stop["now"] = True

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    try:
        url = server.start()
    except PostgresUnavailable as e:
        print(f"pipeline.postgres: {e}", file=sys.stderr)
        return 1
    print(f"PostgreSQL on {server.host}:{server.port}, data {data / PGDATA}; URL (also in {data / URL_FILE}):\n{url}",
          flush=True)
    try:
        while not stop["now"] and server.proc is not None and server.proc.poll() is None:
            time.sleep(0.5)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
