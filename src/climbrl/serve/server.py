"""Running the application: uvicorn on a loopback address, the address printed once it listens.

The application has no login, so it binds only to this machine's loopback addresses; from another
machine, reach it through an SSH tunnel (``ssh -L 8765:127.0.0.1:8765 HOST``), which is
authenticated and encrypted.
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from pathlib import Path


def check_host(host: str) -> None:
    """``ValueError`` unless ``host`` is a loopback address (or ``localhost``)."""
    if host == "localhost":
        return
    try:
        ok = ipaddress.ip_address(host).is_loopback
    except ValueError:
        ok = False
    if not ok:
        raise ValueError(f"--host {host}: climbrl serve has no login, so it binds to this machine only "
                         "(127.0.0.1 or ::1); from another machine use an SSH tunnel: "
                         "ssh -L 8765:127.0.0.1:8765 THIS_HOST")


def serve(host: str = "127.0.0.1", port: int = 8765, root: str | Path = ".", records: str | Path | None = None,
          ready=None, pause: float | None = None) -> None:
    """Serve until interrupted; ``ready(url)`` (default: print it) once the socket listens;
    ``pause``: the page's default pause between two agents' plays, in seconds (``None``:
    :data:`climbrl.serve.app.PAUSE_SECONDS`). The
    first SIGINT or SIGTERM stops it: the worker processes are killed, so a request waiting on an
    agent ends at once, and the requests still open get :data:`STOP_SECONDS` to finish."""
    import uvicorn

    from climbrl.serve.app import create_app

    check_host(host)
    root = Path(root)
    if not root.is_dir():
        raise ValueError(f"--root {root}: no such folder")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except (OSError, OverflowError) as e:
        sock.close()
        why = getattr(e, "strerror", None) or str(e)
        raise OSError(f"cannot listen on {host}:{port}: {why} (another server there? try --port 0)") from None
    sock.listen(128)  # connections queue from now on: the printed address answers as soon as it is shown
    port = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    app = create_app(root, records, port=port, **({} if pause is None else {"pause": pause}))
    (ready or (lambda u: print(f"climbrl serve: open {u}  (Ctrl-C stops it)", flush=True)))(url)
    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_graceful_shutdown=STOP_SECONDS)
    server = _server(config, app.state.close)
    try:
        server.run(sockets=[sock])
    finally:
        app.state.close()
        sock.close()
        sys.stdout.flush()


STOP_SECONDS = 3
"""Once stopping, how long the requests still open may take to finish."""


def _server(config, close):
    """uvicorn's server, whose signal handler also calls ``close`` (stopping the agents' worker
    processes): uvicorn alone waits for every open request, and one held by a long search never
    ended, nor did the process."""
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame) -> None:
            close()
            super().handle_exit(sig, frame)

    return Server(config)
