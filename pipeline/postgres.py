"""A local PostgreSQL server for the shared experiment store: ``python -m pipeline.postgres``.

Optuna studies shared by several ``climbrl tune`` workers and an MLflow tracking server both want
a real database (``postgresql://...``). Where no PostgreSQL runs, this starts one from the
binaries of the ``postgres`` extra (``pip install -e '.[postgres]'``: the ``pgserver`` wheel
bundles PostgreSQL 16, no root and no system package needed), or else from a PostgreSQL found on
``PATH`` / under ``/usr/lib/postgresql`` (Debian's ``postgresql`` package):

- ``initdb`` in a data folder of its own (password authentication; the superuser ``postgres``
  with a random password, kept in ``DATA/climbrl-admin-url``, readable by its owner only, and
  used only for setup);
- the application's role ``climbrl`` (:data:`APP_ROLE`: LOGIN, NOSUPERUSER, NOCREATEROLE,
  NOREPLICATION, NOBYPASSRLS, CREATEDB so that it can make the databases of new studies and
  servers, which it then owns), with a random password of its own sent to the server as a
  SCRAM verifier only; it owns the project's databases (in a data folder made before the role
  existed, the superuser's databases and their tables, sequences, views and types are handed to
  it at the next start). Every URL clients get (``DATA/climbrl-url``, what :meth:`LocalPostgres.start`
  returns) is that role's: a superuser can run shell commands on the database host (``COPY ...
  TO PROGRAM``), the application role cannot;
- ``postgres`` listening on 127.0.0.1 only (no Unix socket), on ``--port`` or a free port; with
  ``--host ADDR`` (an address of this machine, or 0.0.0.0) on that address instead, for workers on
  other machines, which then connect as the application role with its password from the hosts of
  ``--allow`` (default ``samenet``: this machine's subnets; PostgreSQL's pg_hba syntax, a CIDR
  such as 10.0.0.0/8); the superuser only from this machine's own addresses;
- the database ``--db`` (default ``climbrl``) created, owned by the application role; its URL
  printed and written to ``DATA/climbrl-url``; stopped (fast shutdown) on Ctrl-C / SIGTERM.

No password is ever on a command line: initdb reads the superuser's from a 0600 file, the role's
is set over the setup connection.

PostgreSQL refuses to run as root: run as root (a container), the server runs as the ``nobody``
user, in a data folder that user owns.

``python -m pipeline.postgres --data .pgdata`` keeps its data across restarts (the same folder
gives the same URL); the tests use :func:`local_postgres` in a temporary folder with ``fsync``
off (``tests/conftest.py``).
"""

from __future__ import annotations

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
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pipeline import params_io
from pipeline.hosts import LOOPBACK, client_address, free_port, is_loopback, local_address, url_host

HOST = LOOPBACK
URL_FILE = "climbrl-url"  # the application role's URL
ADMIN_FILE = "climbrl-admin-url"  # the superuser's URL (setup only)
PGDATA = "pgdata"
SUPERUSER = "postgres"
APP_ROLE = "climbrl"
APP_ROLE_OPTIONS = "LOGIN NOSUPERUSER NOCREATEROLE CREATEDB NOREPLICATION NOBYPASSRLS"


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


def _template(url: str) -> str:
    return re.sub(r"@[^/]*/", "@{host}:{port}/", url.strip(), count=1)


def _user(url: str) -> str | None:
    return urllib.parse.urlsplit(url).username


def _with_database(url: str, db: str) -> str:
    return url.strip().rsplit("/", 1)[0] + "/" + db


def _write_secret(path: Path, text: str) -> None:
    """``text`` in ``path``, readable by its owner only from the first byte on."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(text.strip() + "\n")


def _hand_over(admin_db_url: str, db: str) -> None:
    """Database ``db`` and what the superuser owns in it (tables with their indexes and sequences,
    other sequences, views, types) to the application role: for a data folder made before the
    role existed, whose databases the superuser created (MLflow's and Optuna's tables)."""
    import psycopg
    from psycopg import sql

    with psycopg.connect(admin_db_url, autocommit=True) as conn:
        conn.execute(sql.SQL("ALTER DATABASE {} OWNER TO {}").format(sql.Identifier(db), sql.Identifier(APP_ROLE)))
        mine = "(SELECT oid FROM pg_roles WHERE rolname = current_user)"
        user_schema = "NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%%'"
        kinds = {"r": "TABLE", "p": "TABLE", "f": "FOREIGN TABLE", "v": "VIEW", "m": "MATERIALIZED VIEW",
                 "S": "SEQUENCE"}
        for group in (("r", "p", "f", "v", "m"), ("S",)):  # a table takes its own sequences with it
            rows = conn.execute(
                "SELECT c.relkind, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                f"WHERE c.relowner = {mine} AND c.relkind = ANY(%s) AND n.nspname {user_schema}",
                (list(group),)).fetchall()
            for kind, schema, name in rows:
                conn.execute(sql.SQL("ALTER {} {} OWNER TO {}").format(
                    sql.SQL(kinds[kind]), sql.Identifier(schema, name), sql.Identifier(APP_ROLE)))
        types = conn.execute(
            "SELECT n.nspname, t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
            f"WHERE t.typowner = {mine} AND t.typtype IN ('e', 'd', 'r') AND n.nspname {user_schema}").fetchall()
        for schema, name in types:
            conn.execute(sql.SQL("ALTER TYPE {} OWNER TO {}").format(sql.Identifier(schema, name),
                                                                   sql.Identifier(APP_ROLE)))
        schemas = conn.execute(
            f"SELECT n.nspname FROM pg_namespace n WHERE n.nspowner = {mine} AND n.nspname {user_schema} "
            "AND n.nspname NOT LIKE 'pg_%%'").fetchall()
        for (schema,) in schemas:
            conn.execute(sql.SQL("ALTER SCHEMA {} OWNER TO {}").format(sql.Identifier(schema),
                                                                     sql.Identifier(APP_ROLE)))


def create_database(url: str, name: str) -> str:
    """Create database ``name`` on the server of ``url`` (nothing if it exists; owned by the
    URL's user, which needs CREATEDB, as the application role has); its URL."""
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

    def _init(self, bins: Path) -> tuple[str, str]:
        """initdb where the folder has no data yet; the superuser's and the application role's URL
        templates (``{host}:{port}`` filled at start)."""
        data = self.root / PGDATA
        url_file, admin_file = self.root / URL_FILE, self.root / ADMIN_FILE
        if (data / "PG_VERSION").exists() and url_file.exists():  # the same passwords; host and port anew
            app = _template(url_file.read_text())
            if admin_file.exists():
                admin = _template(admin_file.read_text())
            else:  # a folder made before the application role: its URL is the superuser's
                admin = _with_database(app, "postgres")
                _write_secret(admin_file, admin)
            if _user(app) != APP_ROLE:
                app = self._app_template()
                _write_secret(url_file, app)
            return admin, app
        password = secrets.token_hex(16)
        self.root.mkdir(parents=True, exist_ok=True)
        _owned(self.root)
        pwfile = self.root / "pw.tmp"
        pwfile.write_text(password + "\n")
        pwfile.chmod(0o600)
        _owned(pwfile)
        try:
            subprocess.run([str(bins / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=scram-sha-256",
                            f"--pwfile={pwfile}", "-E", "UTF8", "--locale=C", "--no-instructions"],
                           check=True, capture_output=True, text=True, **_run_as())
        except subprocess.CalledProcessError as e:
            raise PostgresUnavailable(f"initdb failed: {e.stderr.strip()[-2000:]}") from e
        finally:
            pwfile.unlink(missing_ok=True)
        admin = f"postgresql://{SUPERUSER}:{password}@{{host}}:{{port}}/postgres"  # host and port: at start
        _write_secret(admin_file, admin)  # the passwords kept at once (the URLs themselves once it is up)
        app = self._app_template()
        _write_secret(url_file, app)
        return admin, app

    def _app_template(self) -> str:
        return f"postgresql://{APP_ROLE}:{secrets.token_hex(16)}@{{host}}:{{port}}/{self.db}"

    def start(self, timeout: float = 60.0) -> str:
        """Start the server, set up the application role and its database; returns that
        database's URL (the application role's) once the role can connect."""
        check_driver()
        _check_reachable(self.root)
        bins = bin_dir()
        admin, app = self._init(bins)
        here = local_address(self.host)  # how this process reaches it
        self.port = self.port or free_port(here)
        self._access_rules()
        args = [str(bins / "postgres"), "-D", str(self.root / PGDATA), "-h", self.host, "-p", str(self.port),
                "-c", "unix_socket_directories=", "-c", "max_connections=200"]
        if not self.durable:
            args += ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True, **_run_as())
        deadline = time.monotonic() + timeout
        admin_url = admin.format(host=url_host(here), port=self.port)
        self._wait(admin_url, here, deadline)
        self._set_up(admin_url, app)
        _write_secret(self.root / ADMIN_FILE, admin_url)
        self._wait(app.format(host=url_host(here), port=self.port), here, deadline)  # as clients will connect
        self.url = app.format(host=url_host(client_address(self.host)), port=self.port)
        _write_secret(self.root / URL_FILE, self.url)
        return self.url

    def _wait(self, url: str, here: str, deadline: float) -> None:
        """Until ``url`` connects (the server is up and lets that user in from ``here``)."""
        import psycopg

        while True:
            if self.proc is not None and self.proc.poll() is not None:
                tail = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
                raise PostgresUnavailable(f"postgres exited with status {self.proc.returncode}: {tail}")
            try:
                psycopg.connect(url, connect_timeout=2).close()
                return
            except psycopg.OperationalError as e:
                if "pg_hba.conf" in str(e):  # up, but refuses this process's address: no use waiting
                    self.stop()
                    raise PostgresUnavailable(f"postgres refuses connections from {here} (--allow "
                                              f"{self.allow}): {str(e).strip()}") from None
                if time.monotonic() > deadline:
                    self.stop()
                    raise PostgresUnavailable("postgres did not accept connections in time") from None
                time.sleep(0.2)

    def _set_up(self, admin_url: str, app: str) -> None:
        """As the superuser: the application role (created, or its password set to the one in
        ``URL_FILE``: sent as a SCRAM verifier, never in clear), its database, and the databases
        the superuser owns (a folder made before the role) handed over to it."""
        import psycopg
        from psycopg import sql

        password = urllib.parse.unquote(urllib.parse.urlsplit(app).password or "")
        with psycopg.connect(admin_url, autocommit=True) as conn:
            verifier = conn.pgconn.encrypt_password(password.encode(), APP_ROLE.encode(), b"scram-sha-256")
            exists = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (APP_ROLE,)).fetchone()
            conn.execute(sql.SQL("{} ROLE {} " + APP_ROLE_OPTIONS + " PASSWORD {}").format(
                sql.SQL("ALTER" if exists else "CREATE"), sql.Identifier(APP_ROLE), sql.Literal(verifier.decode())))
            if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (self.db,)).fetchone():
                conn.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(self.db),
                                                                          sql.Identifier(APP_ROLE)))
            theirs = [r[0] for r in conn.execute(
                "SELECT datname FROM pg_database WHERE NOT datistemplate AND datname <> 'postgres' "
                "AND datdba = (SELECT oid FROM pg_roles WHERE rolname = current_user)")]
        for db in theirs:
            _hand_over(_with_database(admin_url, db), db)

    def _access_rules(self) -> None:
        """pg_hba.conf lines after initdb's (which let every user in from loopback with a
        password): the superuser from this machine's own addresses (setup over ``--host``), and,
        beyond loopback, the application role from the hosts of ``allow``; rewritten at each
        start (an earlier ``--allow`` line, or one that let every user in, is replaced)."""
        hba = self.root / PGDATA / "pg_hba.conf"
        lines = [ln for ln in hba.read_text().splitlines() if "# climbrl:" not in ln]
        lines.append(f"host all {SUPERUSER} samehost scram-sha-256  # climbrl: the superuser from this machine")
        if not is_loopback(self.host):
            lines.append(f"host all {APP_ROLE} {self.allow} scram-sha-256  # climbrl: --allow")
        hba.write_text("\n".join(lines) + "\n")

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


@params_io.command("python -m pipeline.postgres")
def main(argv: list[str] | None = None) -> int:
    ap = params_io.ArgumentParser(prog="python -m pipeline.postgres", description=__doc__.split("\n\n")[0])
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
