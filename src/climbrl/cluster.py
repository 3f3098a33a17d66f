"""What a client of the project's Dask cluster needs (the study's flow, the training's actors):
the cluster's TLS files checked, Dask's ``Security`` from them, and the client's arguments for a
scheduler address, which refuse plain TCP beyond this machine. ``python -m pipeline.dask_tls``
makes the files and says how to start the scheduler and the workers with them."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from typing import Any

CA_FILE, CERT_FILE, KEY_FILE = "ca.pem", "cert.pem", "key.pem"
FILES = (CA_FILE, CERT_FILE, KEY_FILE)
ENV = "CLIMBRL_DASK_TLS"  # the folder of the files, for the study's flow and the actors
INSECURE_ENV = "CLIMBRL_DASK_INSECURE"  # 1: let a client use plain tcp:// beyond loopback


class TLSFilesError(RuntimeError):
    """The folder lacks a file, or its key is readable by others."""


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine's loopback (``localhost``, 127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def tls_files(folder: str | Path) -> dict[str, str]:
    """The folder's three files (absolute paths), checked: all there, the key readable by its owner only."""
    folder = Path(folder).resolve()
    missing = [f for f in FILES if not (folder / f).is_file()]
    if missing:
        raise TLSFilesError(f"{folder}: no {', '.join(missing)} (make them: python -m pipeline.dask_tls {folder})")
    mode = (folder / KEY_FILE).stat().st_mode & 0o777
    if mode & 0o077:
        raise TLSFilesError(f"{folder / KEY_FILE} is readable by others (mode {mode:o}): chmod 600 it")
    return {"ca": str(folder / CA_FILE), "cert": str(folder / CERT_FILE), "key": str(folder / KEY_FILE)}


def security(folder: str | Path) -> Any:
    """Dask's ``Security`` for a member of the cluster (client, scheduler or worker), encryption
    required: every connection is TLS with the folder's certificate, checked against its CA."""
    from distributed.security import Security

    f = tls_files(folder)
    return Security(tls_ca_file=f["ca"], tls_client_cert=f["cert"], tls_client_key=f["key"],
                    tls_scheduler_cert=f["cert"], tls_scheduler_key=f["key"],
                    tls_worker_cert=f["cert"], tls_worker_key=f["key"], require_encryption=True)


def client_kwargs(address: str) -> dict[str, Any]:
    """The Dask client's arguments at the scheduler ``address`` (the study's flow:
    ``CLIMBRL_DASK_ADDRESS``; the training's actors: ``actor_cluster``): the ``security`` of the
    folder in ``CLIMBRL_DASK_TLS`` when set (else Dask's own configuration applies, e.g. the
    variables of ``pipeline.dask_tls.dask_config_env``). A plain ``tcp://``
    address beyond loopback is refused (anyone reaching it runs code on the workers) unless
    ``CLIMBRL_DASK_INSECURE=1`` says the network is trusted."""
    from distributed.comm.addressing import get_address_host, parse_address

    scheme, _ = parse_address(address)
    folder = os.environ.get(ENV)
    if folder:
        if scheme != "tls":
            raise TLSFilesError(f"{ENV} is set but the scheduler address {address} is not tls://")
        return {"security": security(folder)}
    if scheme == "tcp" and not is_loopback(get_address_host(address)) and os.environ.get(INSECURE_ENV) != "1":
        raise TLSFilesError(
            f"the Dask scheduler {address} is plain TCP beyond this machine: whoever reaches it runs code on every "
            f"worker. Start the cluster with TLS (python -m pipeline.dask_tls FOLDER; docs/scaling.md, 'The study on a "
            f"Dask cluster') and give tls://... with {ENV}=FOLDER, or set {INSECURE_ENV}=1 on a network you trust")
    return {}
