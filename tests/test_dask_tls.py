"""A Dask cluster with TLS (issue 29, section 5; pipeline/dask_tls.py): a ``dask scheduler`` and a
``dask worker`` as processes on 127.0.0.1 with the certificates of ``python -m pipeline.dask_tls``.
A client holding the cluster's certificate (Dask's own, and the study flow's task runner) runs a
task; a client without it is refused by the scheduler and by the worker: plain TCP, TLS with no
client certificate, TLS with a certificate of another authority."""

from __future__ import annotations

import json
import operator
import os
import socket
import ssl
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pipeline.dask_tls import (
    ENV,
    INSECURE_ENV,
    TLSFilesError,
    client_kwargs,
    dask_config_env,
    make_certificates,
    security,
)

REPO = Path(__file__).resolve().parents[1]
CONNECT = 5  # seconds a refused client may try


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DASK_", "CLIMBRL_DASK"))}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def test_the_command_writes_a_ca_and_the_cluster_s_certificate_with_a_private_key(tmp_path) -> None:
    from cryptography import x509

    folder = tmp_path / "tls"
    run = subprocess.run([sys.executable, "-m", "pipeline.dask_tls", str(folder), "--env"], env=_env(),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "key.pem").stat().st_mode) == 0o600
    assert sorted(p.name for p in folder.iterdir()) == ["ca.pem", "cert.pem", "key.pem"]  # no CA key kept
    ca = x509.load_pem_x509_certificate((folder / "ca.pem").read_bytes())
    cert = x509.load_pem_x509_certificate((folder / "cert.pem").read_bytes())
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert not cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    cert.verify_directly_issued_by(ca)
    assert "export DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY=" in run.stdout
    again = subprocess.run([sys.executable, "-m", "pipeline.dask_tls", str(folder)], env=_env(),
                           capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "already holds certificates" in again.stderr  # never overwritten silently


def test_the_flow_s_client_arguments(tmp_path, monkeypatch) -> None:
    folder = tmp_path / "tls"
    make_certificates(folder)
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.delenv(INSECURE_ENV, raising=False)
    assert client_kwargs("tcp://127.0.0.1:8786") == {}  # loopback (the cluster test, a tunnel)
    with pytest.raises(TLSFilesError, match="plain TCP beyond this machine"):
        client_kwargs("tcp://10.1.2.3:8786")
    with pytest.raises(TLSFilesError, match="plain TCP beyond this machine"):
        client_kwargs("10.1.2.3:8786")  # Dask's default scheme
    monkeypatch.setenv(INSECURE_ENV, "1")
    assert client_kwargs("tcp://10.1.2.3:8786") == {}
    monkeypatch.setenv(ENV, str(folder))
    sec = client_kwargs("tls://10.1.2.3:8786")["security"]
    assert sec.require_encryption and sec.tls_client_cert == str(folder.resolve() / "cert.pem")
    with pytest.raises(TLSFilesError, match="not tls://"):
        client_kwargs("tcp://10.1.2.3:8786")
    (folder / "key.pem").chmod(0o644)
    with pytest.raises(TLSFilesError, match="readable by others"):
        security(folder)
    (folder / "key.pem").unlink()
    with pytest.raises(TLSFilesError, match="no key.pem"):
        security(folder)


def _host_port(address: str) -> tuple[str, int]:
    host, port = address.split("://", 1)[1].rsplit(":", 1)
    return host, int(port)


def _outcome(address: str, context: ssl.SSLContext | None) -> str:
    """What a raw client sees: ``accepted`` (the server's first message: Dask's comm handshake,
    which a server sends to a peer it let in) or ``refused`` (handshake failed, an alert, the
    connection closed)."""
    sock = socket.create_connection(_host_port(address), timeout=CONNECT)
    try:
        if context is not None:
            sock = context.wrap_socket(sock)  # the TLS handshake
        sock.sendall(b"\x00" * 64)  # plain TCP: not a TLS hello; the server must say no
        sock.settimeout(CONNECT)
        return "accepted" if sock.recv(1) else "refused"
    except (ssl.SSLError, ConnectionError):
        return "refused"
    except TimeoutError:
        return "no answer"
    finally:
        sock.close()


def _tls_context(ca: Path, cert: Path | None = None, key: Path | None = None) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(ca))
    ctx.check_hostname = False  # as Dask's own clients
    if cert:
        ctx.load_cert_chain(str(cert), str(key))
    return ctx


def test_a_tls_cluster_runs_the_certificate_holder_s_task_and_refuses_everyone_else(tmp_path, monkeypatch) -> None:
    import distributed  # a dependency of the project (prefect-dask): no skip
    import prefect_dask  # noqa: F401
    from pipeline.flows import _task_runner

    started = time.perf_counter()
    tls = make_certificates(tmp_path / "tls")
    other = make_certificates(tmp_path / "other")  # a certificate of another authority
    args = ["--tls-ca-file", str(tls["ca"]), "--tls-cert", str(tls["cert"]), "--tls-key", str(tls["key"])]
    dask = str(Path(sys.executable).with_name("dask"))
    sched_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []
    logs = {n: tmp_path / f"{n}.log" for n in ("scheduler", "worker")}

    def start(name: str, cmd: list[str]) -> None:
        with open(logs[name], "w") as log:
            procs.append(subprocess.Popen(cmd, cwd=tmp_path, env=_env(), stdout=log, stderr=subprocess.STDOUT))

    try:
        start("scheduler", [dask, "scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", "0",
                            "--no-dashboard", "--scheduler-file", str(sched_file), *args])
        deadline = time.monotonic() + 90
        while not sched_file.exists():
            assert procs[0].poll() is None and time.monotonic() < deadline, logs["scheduler"].read_text()
            time.sleep(0.2)
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tls://127.0.0.1:")
        start("worker", [dask, "worker", address, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                         "--host", "127.0.0.1", "--name", "w0", "--local-directory", str(tmp_path / "w0"), *args])

        with distributed.Client(address, security=security(tmp_path / "tls"), timeout=60) as client:
            client.wait_for_workers(1, timeout=90)
            (worker,) = client.scheduler_info()["workers"]
            assert worker.startswith("tls://127.0.0.1:")  # the worker listens with TLS too
            assert client.submit(operator.add, 2, 3, pure=False).result(timeout=60) == 5
            up = time.perf_counter() - started

            # the study flow's client (pipeline.flows), the certificate from CLIMBRL_DASK_TLS
            monkeypatch.setenv("CLIMBRL_DASK_ADDRESS", address)
            monkeypatch.setenv(ENV, str(tmp_path / "tls"))
            runner = _task_runner("dask")
            try:
                assert runner.client.submit(pow, 2, 10, pure=False).result(timeout=60) == 1024
            finally:
                runner._exit_stack.close()

            # Dask's configuration variables instead (a client given no security)
            monkeypatch.setattr(os, "environ", {**os.environ, **dask_config_env(tmp_path / "tls")})
            import dask.config

            dask.config.refresh()
            try:
                with distributed.Client(address, timeout=60) as configured:
                    assert configured.submit(operator.mul, 6, 7, pure=False).result(timeout=60) == 42
            finally:
                monkeypatch.undo()
                dask.config.refresh()

            # everyone else, at the scheduler and at the worker: refused during the handshake
            own = _tls_context(tls["ca"], tls["cert"], tls["key"])
            for target in (address, worker):
                assert _outcome(target, own) == "accepted", target  # the control: the holder is let in
                assert _outcome(target, None) == "refused", target  # plain TCP
                assert _outcome(target, _tls_context(tls["ca"])) == "refused", target  # TLS, no client certificate
                assert _outcome(target, _tls_context(tls["ca"], other["cert"], other["key"])) == "refused", target
            host, port = _host_port(address)
            with pytest.raises((OSError, TimeoutError)):  # Dask's own client, plain TCP
                distributed.Client(f"tcp://{host}:{port}", timeout=CONNECT)
            with pytest.raises((OSError, TimeoutError)):  # Dask's own client, another authority's certificate
                distributed.Client(address, security=security(tmp_path / "other"), timeout=CONNECT)
            clients = client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.clients))
            assert clients <= 2, clients  # this client and the scheduler's own: no refused client got in
            assert client.submit(operator.sub, 9, 4, pure=False).result(timeout=60) == 5  # still serving
        print(f"\nTLS cluster up and the first task done after {up:.1f} s; whole test "
              f"{time.perf_counter() - started:.1f} s")
    finally:
        for p in reversed(procs):  # the worker, then the scheduler
            if p.poll() is None:
                p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        print(f"stopped after {time.perf_counter() - started:.1f} s")
