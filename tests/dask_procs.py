"""A Dask cluster with TLS as real processes on 127.0.0.1, as the README's recipe starts it (the
certificates of ``python -m pipeline.dask_tls``): a ``dask scheduler`` and workers without a nanny
(a killed worker stays dead: a lost machine). Used by the study's cluster test and the actors'."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Cluster:
    tls: Path
    """The folder of the cluster's TLS files (``CLIMBRL_DASK_TLS``)."""
    scheduler_file: Path
    logs: Path
    workers: dict[str, subprocess.Popen] = field(default_factory=dict)
    procs: list[subprocess.Popen] = field(default_factory=list)

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text()

    def start(self, name: str, args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen:
        """A process of the test (its output in ``logs/NAME.log``), stopped with the cluster."""
        with open(self.logs / f"{name}.log", "w") as log:  # the child keeps its own descriptor
            p = subprocess.Popen(args, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def client(self, timeout: float = 60):
        """A client of the cluster holding its certificate, once every worker has joined."""
        import distributed
        from pipeline.dask_tls import security

        client = distributed.Client(scheduler_file=str(self.scheduler_file), timeout=timeout,
                                    security=security(self.tls))
        assert client.scheduler.address.startswith("tls://127.0.0.1:")
        client.wait_for_workers(len(self.workers), timeout=timeout)
        return client


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


@contextmanager
def tls_cluster(tmp: Path, env: dict[str, str], workdir: Path,
                names: tuple[str, ...] = ("w0", "w1")) -> Iterator[Cluster]:
    """A scheduler and one single-threaded worker per name (each in ``workdir / name``), with TLS;
    every process stopped on exit."""
    from pipeline.dask_tls import make_certificates

    tls = make_certificates(tmp / "tls")
    tls_args = ["--tls-ca-file", str(tls["ca"]), "--tls-cert", str(tls["cert"]), "--tls-key", str(tls["key"])]
    cluster = Cluster(tmp / "tls", tmp / "scheduler.json", tmp / "logs")
    cluster.logs.mkdir()
    dask = str(Path(sys.executable).with_name("dask"))
    try:
        cluster.start("scheduler", [dask, "scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", "0",
                                    "--no-dashboard", "--scheduler-file", str(cluster.scheduler_file), *tls_args],
                      workdir, env)
        deadline = time.monotonic() + 60
        while not cluster.scheduler_file.exists():
            assert time.monotonic() < deadline, cluster.log("scheduler")
            time.sleep(0.2)
        for n in names:
            cluster.workers[n] = cluster.start(n, [dask, "worker", "--scheduler-file", str(cluster.scheduler_file),
                                                   "--nthreads", "1", "--nworkers", "1", "--no-nanny", "--no-dashboard",
                                                   "--name", n, "--host", "127.0.0.1", "--local-directory",
                                                   str(workdir / n), *tls_args], workdir, env)
        yield cluster
    finally:
        stop(cluster.procs)


def worker_names(client) -> dict[str, str]:
    """{address: name} of the workers the scheduler holds now, asked of the scheduler itself.
    (``client.scheduler_info()`` answers a failed query, e.g. a scheduler slowed by a loaded
    machine, with the client's cached summary, whose worker list is empty.)"""
    return client.run_on_scheduler(lambda dask_scheduler: {a: ws.name for a, ws in dask_scheduler.workers.items()})
