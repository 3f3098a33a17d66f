"""``dvc repro`` with the studies side by side: ``python -m pipeline.repro [--jobs N] [--dry]``.

``dvc repro`` runs one stage at a time, and every training and match computes on one thread
(:mod:`climbrl.threads`), so on a machine with two cores one of them idles through most of the
main job. The studies of ``params.yaml`` share no stage until the end (the Big 2 report reads the
Dou Dizhu study's ``metrics.json``), so this runs them as DVC's documented "parallel stage
execution": one ``dvc --wait-for-lock repro TARGETS`` per study, at the same time (DVC releases
its repository lock while a stage's command runs and takes it again to record the result, so
each process waits its turn for the lock instead of failing), then a final plain ``dvc repro``
for the stages that join the studies (and anything else still out of date). The numbers do not
depend on the order (every stage is seeded and single-threaded), so the outputs and
``dvc.lock`` are those of a plain ``dvc repro``; only the wall time differs.

Groups come from the DVC graph of the root ``dvc.yaml``: a stage belongs to the study named by its
``foreach`` key (``@doudizhu`` or ``@doudizhu-...``; every other stage to the main study); a stage
with an upstream stage of another study is a joint stage, left to the final ``dvc repro``. At most
``--jobs`` groups run at once (default: the number of cores, at least 1); ``--jobs 1`` is a plain
``dvc repro``. Each group's output is prefixed with its name. If a group fails, the others finish,
the final step is skipped, and the exit status is 1. Every study's MLflow experiment is created
before the studies start (:func:`prepare_tracking`: two first writers of a fresh store collide),
and the address of its runs table printed, at the start and the end.
Interrupted (SIGINT, SIGTERM), the running
``dvc`` processes are stopped. The wall time of the whole run is printed at the end.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pipeline  # noqa: F401  (environment defaults: analytics off)
from pipeline import params_io

MAIN = "big2"


def study_of(address: str, studies: Sequence[str]) -> str:
    """The study a stage belongs to, from its address (``train@doudizhu-ppo`` -> ``doudizhu``)."""
    _, _, key = address.partition("@")
    for s in studies:
        if key == s or key.startswith(f"{s}-"):
            return s
    return MAIN


def groups(edges: dict[str, set[str]], studies: Sequence[str]) -> tuple[dict[str, list[str]], list[str]]:
    """``({study: its stages}, joint stages)`` of a stage graph given as ``{stage: its upstream
    stages}`` (direct ones). A stage is joint when any stage upstream of it, directly or not,
    belongs to another study; the groups hold the other stages, in the order given."""
    def upstream(stage: str, seen: set[str]) -> set[str]:
        for dep in edges.get(stage, ()):
            if dep not in seen:
                seen.add(dep)
                upstream(dep, seen)
        return seen

    out: dict[str, list[str]] = {}
    joint: list[str] = []
    for stage in edges:
        mine = study_of(stage, studies)
        if any(study_of(u, studies) != mine for u in upstream(stage, set())):
            joint.append(stage)
        else:
            out.setdefault(mine, []).append(stage)
    return out, joint


def stage_graph(root: Path = Path(".")) -> dict[str, set[str]]:
    """``{stage address: direct upstream addresses}`` of the root ``dvc.yaml`` (DVC's own graph;
    other pipelines of the repository, such as ``ablations/dvc.yaml``, are left out: a plain
    ``dvc repro`` does not run them either)."""
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        g = repo.index.graph
        mine = [s for s in g.nodes if Path(s.path).resolve() == (root / "dvc.yaml").resolve()]
        return {s.addressing: {d.addressing for d in g.successors(s) if d in mine} for s in mine}


def _raw_params(root: Path) -> dict:
    from pipeline.params_io import ParamsError, read

    raw = read(root / "params.yaml") or {}
    if not isinstance(raw, dict):
        raise ParamsError("not a mapping", root / "params.yaml")
    return raw


def study_names(root: Path = Path(".")) -> list[str]:
    from climbrl.params import study_names as names

    return list(names(_raw_params(root)))


def tracked_studies(root: Path = Path(".")) -> list[tuple[str, str]]:
    """``(tracking_uri, experiment)`` of every study of ``params.yaml`` that tracks (the main study
    first; none without a ``tracking`` section)."""
    from climbrl.params import load_params
    from climbrl.params import study_names as names

    raw = _raw_params(root)
    if "tracking" not in raw:
        return []  # no MLflow store
    specs = [load_params(str(root / spec)) for spec in ["params.yaml", *(f"params.yaml#{s}" for s in names(raw))]]
    return [(p.tracking.tracking_uri, p.tracking.experiment) for p in specs if p.tracking.tracking_uri]


def prepare_tracking(root: Path = Path(".")) -> dict[str, str]:
    """Create every study's MLflow experiment (and, on a fresh SQLite store, its tables) before the
    studies start: two processes creating the same store's schema at once can collide. Returns
    ``{experiment: where its runs are seen}`` (:func:`climbrl.track.runs_address`)."""
    from climbrl import track

    return {experiment: track.runs_address(track.configure(uri, experiment), experiment)
            for uri, experiment in tracked_studies(root)}


def _pump(name: str, stream, lock: threading.Lock) -> None:
    for line in iter(stream.readline, ""):
        with lock:
            sys.stdout.write(f"[{name}] {line}")
            sys.stdout.flush()


def run_groups(commands: dict[str, list[str]], jobs: int) -> dict[str, int]:
    """Run the commands, at most ``jobs`` at once, output prefixed; ``{name: exit status}``."""
    lock = threading.Lock()
    pending = list(commands.items())
    running: dict[str, tuple[subprocess.Popen, threading.Thread]] = {}
    status: dict[str, int] = {}

    def stop(signum, frame) -> None:
        for proc, _ in running.values():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
        raise KeyboardInterrupt

    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while pending or running:
            while pending and len(running) < jobs:
                name, cmd = pending.pop(0)
                print(f"[{name}] $ {' '.join(cmd)}", flush=True)
                proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)
                t = threading.Thread(target=_pump, args=(name, proc.stdout, lock), daemon=True)
                t.start()
                running[name] = (proc, t)
            for name, (proc, t) in list(running.items()):
                if proc.poll() is not None:
                    t.join()
                    status[name] = proc.returncode
                    del running[name]
            time.sleep(0.2)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    return status


def show_addresses(addresses: dict[str, str]) -> None:
    """Where each study's MLflow runs are seen (printed at the start and again at the end)."""
    for experiment, address in addresses.items():
        print(f"MLflow runs of {experiment}: {address}", flush=True)


@params_io.command("python -m pipeline.repro")
def main(argv: Sequence[str] | None = None) -> int:
    p = params_io.ArgumentParser(prog="python -m pipeline.repro", description=__doc__.split("\n\n")[0])
    p.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 1),
                   help="studies run at once (default: the number of cores); 1 = plain dvc repro")
    p.add_argument("--dry", action="store_true", help="print the groups and the commands, run nothing")
    args = p.parse_args(argv)
    if args.jobs < 1:
        p.error("--jobs must be at least 1")
    dvc = [sys.executable, "-m", "dvc"]
    start = time.perf_counter()
    final = [*dvc, "repro"]
    by_study, joint = groups(stage_graph(), study_names())
    commands = {name: [*dvc, "--wait-for-lock", "repro", *stages] for name, stages in by_study.items()}
    if args.dry:
        for name, cmd in commands.items():
            print(f"[{name}] {' '.join(cmd)}")
        print(f"[joint: {', '.join(joint) or 'none'}] {' '.join(final)}")
        return 0
    addresses = prepare_tracking()
    show_addresses(addresses)
    if args.jobs > 1 and len(commands) > 1:
        status = run_groups(commands, args.jobs)
        failed = sorted(n for n, rc in status.items() if rc != 0)
        if failed:
            print(f"failed: {', '.join(failed)} (the final dvc repro was not run)", file=sys.stderr)
            return 1
    rc = subprocess.call(final)
    print(f"pipeline.repro: {'done' if rc == 0 else 'failed'} in {(time.perf_counter() - start) / 60:.1f} min "
          f"(jobs={args.jobs})", flush=True)
    show_addresses(addresses)
    return rc


if __name__ == "__main__":
    sys.exit(main())
