"""Which address a server listens on, and the one its clients are given.

Every server of the project (PostgreSQL, MLflow, Prefect) listens on 127.0.0.1 unless told
otherwise (``--host``): only this machine reaches it. A study spread over several machines needs
its servers on an address the others reach: ``--host`` an address of this machine, or
``0.0.0.0`` (all of them), in which case the clients are given this machine's host name.
Opening a server beyond loopback is the user's choice, behind their own network's protection:
the database asks for its password; MLflow's and Prefect's servers have no authentication.
"""

from __future__ import annotations

import socket

from climbrl.cluster import is_loopback  # noqa: F401 (the servers' and the tests' name for it)

LOOPBACK = "127.0.0.1"
ANY = ("0.0.0.0", "*", "::")


def client_address(host: str) -> str:
    """The address to give clients of a server listening on ``host``."""
    return socket.gethostname() if host in ANY else host


def local_address(host: str) -> str:
    """The address this machine's own processes reach a server listening on ``host`` by."""
    return LOOPBACK if host in ANY else host


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port free on ``host`` now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def url_host(host: str) -> str:
    """``host`` as it stands in a URL (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host else host
