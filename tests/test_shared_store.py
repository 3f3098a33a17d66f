"""One experiment store for many workers (issue 14, section 1), against a real PostgreSQL
(``postgres_server`` in conftest.py: pipeline/postgres.py, the ``postgres`` extra).

- Optuna: ``climbrl tune --storage postgresql://... --study NAME`` run by two worker processes at
  once shares one study, no trial lost, none run twice, the budget shared; a worker killed
  (SIGKILL) in the middle of a trial leaves it RUNNING only until its heartbeat is stale: the
  other worker, still running (it stays while any trial runs), or the next worker started, marks
  it FAIL and retries it with the same parameters.
- The median pruner prunes a worker's trial against the trials other workers finished.
- MLflow: ``python -m pipeline.mlflow_server`` (``make server``) on the same PostgreSQL; two
  processes train, evaluate and register through ``climbrl.track``, two more tune one study
  with their trials tracked; MLflow's client finds it all.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.study_params import TINY_STUDY, write_tiny_study
from tests.ui_servers import get_json, optuna_dashboard

REPO = Path(__file__).resolve().parents[1]



def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLFLOW_TRACKING")}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(REPO), env.get("PYTHONPATH", "")])
    env.update({"DVC_NO_ANALYTICS": "1", "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}, **extra)
    return env


def _params(tmp_path: Path, **tune: object) -> Path:
    return write_tiny_study(tmp_path, **tune)


def _tune(tmp_path: Path, url: str, study: str, params: Path, *extra: str, track: bool = False,
          env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "climbrl.cli", "tune", "--params", str(params), "--storage", url,
                             "--study", study, *([] if track else ["--no-track"]),
                             "--best-out", str(tmp_path / f"best-{study}.yaml"), *extra],
                            cwd=tmp_path, env=env or _env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def _finish(proc: subprocess.Popen, timeout: float = 300) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out[-3000:]
    return out


def test_a_look_at_a_study_waits_for_a_worker_s_setup(postgres_server) -> None:
    """Opening Optuna's storage on a fresh database writes its schema in several transactions;
    two processes doing it at once collide (a unique violation in PostgreSQL's catalogue). A look
    at a study (load_shared_study) waits while a worker holds the setup lock, and several opening
    fresh databases at once all succeed."""
    import threading

    import optuna
    from pipeline.postgres import create_database

    from climbrl.tune import SETUP_LOCK, _DbLock, load_shared_study, open_shared_storage

    url = create_database(postgres_server, f"setup{os.getpid()}_{time.monotonic_ns()}")
    worker = _DbLock(url, SETUP_LOCK)
    worker.acquire()  # a worker in the middle of its setup
    seen: list = []

    def look() -> None:
        try:
            seen.append(load_shared_study("looked-at", url).study_name)
        except KeyError:
            seen.append(None)

    looker = threading.Thread(target=look)
    looker.start()
    looker.join(2.0)
    assert looker.is_alive() and not seen  # waiting for the setup to end
    optuna.create_study(study_name="looked-at", storage=optuna.storages.RDBStorage(url))  # the worker's setup
    worker.close()
    looker.join(60)
    assert seen == ["looked-at"]
    # four openers of each of three fresh databases at once: none fails
    errors: list = []

    def open_it(u: str) -> None:
        try:
            open_shared_storage(u)
        except Exception as e:  # noqa: BLE001  (any failure is the finding)
            errors.append(repr(e))

    urls = [create_database(postgres_server, f"fresh{os.getpid()}_{time.monotonic_ns()}_{i}") for i in range(3)]
    threads = [threading.Thread(target=open_it, args=(u,)) for u in urls for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors

def test_two_workers_share_one_study(tmp_path, postgres_url):
    import optuna

    params = _params(tmp_path, trials=4)
    workers = [_tune(tmp_path, postgres_url, "shared", params) for _ in range(2)]
    for w in workers:
        _finish(w)
    study = optuna.load_study(study_name="shared", storage=postgres_url)
    trials = study.trials
    # exactly the budget, numbered 0..3, each finished once (complete or pruned), none failed or stuck
    assert [t.number for t in trials] == [0, 1, 2, 3]
    assert all(t.state.name in ("COMPLETE", "PRUNED") for t in trials), [t.state.name for t in trials]
    # every trial sampled its own parameters (workers seeded alike would sample the same ones)
    assert len({tuple(sorted(t.params.items())) for t in trials}) == 4
    # both workers ran trials, and each trial's folder was written by one of them
    assert len({t.user_attrs["worker"] for t in trials}) == 2
    assert sorted(p.name for p in (tmp_path / "runs" / "tune" / "shared").iterdir()) == [f"trial-{i}" for i in range(4)]
    assert study.metric_names == ["win rate vs random"]  # the dashboard's objective name
    # optuna-dashboard on the same storage starts and shows the named objective
    with optuna_dashboard(postgres_url) as dash:
        sid = get_json(f"{dash}/api/studies")["study_summaries"][0]["study_id"]
        detail = get_json(f"{dash}/api/studies/{sid}?after=0")
    assert detail["objective_names"] == ["win rate vs random"] and len(detail["trials"]) == 4
    # a worker started once the budget is spent runs nothing
    _finish(_tune(tmp_path, postgres_url, "shared", params))
    assert len(optuna.load_study(study_name="shared", storage=postgres_url).trials) == 4


@contextlib.contextmanager
def _storage(url: str, grace: int):
    """The study database's Optuna storage, opened as the workers open it, under their setup lock
    (a first look would otherwise create Optuna's tables and Alembic stamp on the fresh database
    while the first worker does: test_a_look_at_a_study_waits_for_a_worker_s_setup), and closed
    after (a test that polls must not leave a pool of connections behind at every look)."""
    from climbrl.tune import open_shared_storage

    storage = open_shared_storage(url, heartbeat_interval=1, grace_period=grace)
    try:
        yield storage
    finally:
        storage.scoped_session.remove()
        storage.engine.dispose()


def _heartbeats(study: str, url: str, grace: int) -> dict[int, tuple[object, bool]]:
    """The study's RUNNING trials that have recorded a heartbeat: number -> (the trial, whether it
    is stale past ``grace`` seconds). Stale by Optuna's own rule (``_get_stale_trial_ids``: the
    database's clock), the one a worker applies when it fails a dead worker's trial; a trial that
    never recorded a heartbeat is never failed. The killed-worker tests wait on these states, not
    on the wall clock: on a loaded machine a worker's first heartbeat, or the staleness, can come
    seconds later than a fixed sleep assumed."""
    import optuna
    from optuna.storages._rdb.models import TrialHeartbeatModel

    with _storage(url, grace) as storage:
        try:
            loaded = optuna.load_study(study_name=study, storage=storage)
        except KeyError:  # no such study yet
            return {}
        running = loaded.get_trials(states=(optuna.trial.TrialState.RUNNING,))
        stale = set(storage._get_stale_trial_ids(loaded._study_id))
        beating = {h.trial_id for h in storage.scoped_session().query(TrialHeartbeatModel).all()}
        return {t.number: (t, t._trial_id in stale) for t in running if t._trial_id in beating}


def _wait_for(found, proc: subprocess.Popen | None, what: str, timeout: float = 300):
    """Poll ``found()`` until it returns something truthy (returned); fail with ``what`` after
    ``timeout`` seconds, or when ``proc`` (the worker the state depends on) has ended."""
    deadline = time.monotonic() + timeout
    while not (value := found()):
        assert (proc is None or proc.poll() is None) and time.monotonic() < deadline, what
        time.sleep(0.5)
    return value


def test_killed_worker_trial_is_failed_and_retried(tmp_path, postgres_url):
    import optuna
    from optuna.storages import RetryFailedTrialCallback

    slow = _params(tmp_path, trials=2, epochs=200)  # a trial long enough to be killed in the middle
    worker = _tune(tmp_path, postgres_url, "killed", slow, "--heartbeat", "1", "--grace", "3")
    trial_0 = tmp_path / "runs" / "tune" / "killed" / "trial-0" / "metrics.csv"
    killed = _wait_for(lambda: trial_0.exists() and _heartbeats("killed", postgres_url, 3).get(0, (None,))[0],
                       worker, "the first trial never trained an epoch with a heartbeat recorded")
    os.kill(worker.pid, signal.SIGKILL)
    worker.wait()
    assert optuna.load_study(study_name="killed", storage=postgres_url).trials[0].state.name == "RUNNING"
    _wait_for(lambda: _heartbeats("killed", postgres_url, 3)[0][1], None, "its heartbeat never went stale")

    _finish(_tune(tmp_path, postgres_url, "killed", _params(tmp_path, trials=2), "--heartbeat", "1",
                  "--grace", "3"), timeout=600)
    trials = optuna.load_study(study_name="killed", storage=postgres_url).trials
    states = [t.state.name for t in trials]
    assert states[0] == "FAIL" and "RUNNING" not in states and "WAITING" not in states, states
    retried = [t for t in trials if RetryFailedTrialCallback.retried_trial_number(t) == killed.number]
    assert len(retried) == 1 and retried[0].state.name in ("COMPLETE", "PRUNED")
    assert retried[0].params == killed.params
    assert sum(t.state.name in ("COMPLETE", "PRUNED") for t in trials) == 2  # the budget, retry included


def test_two_workers_one_killed_mid_trial_the_other_runs_its_retry(tmp_path, postgres_url):
    """Two workers at once; one is SIGKILLed in the middle of a trial. The survivor does not leave
    when the budget looks spent while that trial is still RUNNING: once its heartbeat is stale
    the trial is failed, and the survivor runs its retry with the same parameters. Nothing is left
    RUNNING or WAITING, and the budget is met.

    The order is made, not hoped for: the victim (a trial of 200 epochs) runs its trial first,
    then the survivor (8 epochs) runs the other one and finishes it while the victim, alive and
    beating, still trains; only then is the victim killed. (Both started at once, a loaded
    machine could let the survivor run both trials before the victim started one.)"""
    import socket

    import optuna
    from optuna.storages import RetryFailedTrialCallback

    (tmp_path / "victim").mkdir()
    slow = write_tiny_study(tmp_path / "victim", trials=2, epochs=200)
    quick = _params(tmp_path, trials=2, epochs=8)
    hb = ("--heartbeat", "1", "--grace", "15")
    victim = _tune(tmp_path, postgres_url, "two-killed", slow, *hb)
    mark = f"{socket.gethostname()}:{victim.pid}"

    def victims_trial():
        for t, _ in _heartbeats("two-killed", postgres_url, 15).values():
            if t.user_attrs.get("worker") == mark and (tmp_path / "runs" / "tune" / "two-killed" /
                                                       f"trial-{t.number}" / "metrics.csv").exists():
                return t
        return None

    killed = _wait_for(victims_trial, victim, "the victim never ran a trial")
    survivor = _tune(tmp_path, postgres_url, "two-killed", quick, *hb)

    def survivors_own_ended():
        with _storage(postgres_url, 15) as storage:
            return optuna.load_study(study_name="two-killed", storage=storage).get_trials(
                states=(optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED))

    _wait_for(survivors_own_ended, survivor, "the survivor's own trial never ended")
    assert victim.poll() is None and killed.number in _heartbeats("two-killed", postgres_url, 15)
    os.kill(victim.pid, signal.SIGKILL)
    victim.wait()
    _finish(survivor, timeout=600)
    trials = optuna.load_study(study_name="two-killed", storage=postgres_url).trials
    states = {t.number: t.state.name for t in trials}
    assert states[killed.number] == "FAIL" and "RUNNING" not in states.values() \
        and "WAITING" not in states.values(), states
    retried = [t for t in trials if RetryFailedTrialCallback.retried_trial_number(t) == killed.number]
    assert len(retried) == 1 and retried[0].state.name in ("COMPLETE", "PRUNED"), states
    assert retried[0].params == killed.params and retried[0].user_attrs["worker"] != mark
    assert sum(t.state.name in ("COMPLETE", "PRUNED") for t in trials) == 2, states  # the budget, retry included
    # the case this tests: the survivor's own trial ended before the victim's was failed, so it
    # had to stay (leaving then would have left that trial RUNNING)
    own = [t for t in trials if t.number not in (killed.number, retried[0].number)]
    assert len(own) == 1 and own[0].datetime_complete < trials[killed.number].datetime_complete

@pytest.mark.parametrize("others", [1.0, 0.0])
def test_a_worker_prunes_against_the_other_workers_trials(tmp_path, postgres_url, others):
    """The median pruner compares a trial with every worker's, not only its own worker's: three
    trials finished by another worker (this test process, through Optuna on the same database)
    scored ``others`` at every epoch; a ``climbrl tune`` worker then runs the study's fourth trial.
    Against a perfect score (1.0, which 24 games of a barely trained policy against random players
    do not reach) that trial is pruned at its first evaluation and stops training there; against 0.0
    (its score ties or beats it) the same trial runs all its epochs."""
    import optuna

    from climbrl.tune import suggest

    epochs = 3
    study = optuna.create_study(study_name="pruned", storage=postgres_url, direction="maximize")
    for _ in range(3):  # the pruner's startup trials (MedianPruner(n_startup_trials=3))
        trial = study.ask()
        suggest(trial, "ppo")
        trial.set_user_attr("worker", "another-machine:1")
        for epoch in range(1, epochs + 1):
            trial.report(others, step=epoch)
        study.tell(trial, others)
    params = _params(tmp_path, trials=4, epochs=epochs, eval_games=24)
    _finish(_tune(tmp_path, postgres_url, "pruned", params))
    trials = optuna.load_study(study_name="pruned", storage=postgres_url).trials
    assert len(trials) == 4
    ours = trials[3]
    assert ours.user_attrs["worker"] != "another-machine:1"
    rows = (tmp_path / "runs" / "tune" / "pruned" / "trial-3" / "metrics.csv").read_text().splitlines()[1:]
    if others == 1.0:
        assert ours.state.name == "PRUNED", ours.intermediate_values
        assert list(ours.intermediate_values) == [1] and ours.intermediate_values[1] < 1.0
        assert len(rows) == 1  # training stopped at the pruned epoch
    else:
        assert ours.state.name == "COMPLETE", ours.intermediate_values
        assert list(ours.intermediate_values) == [1, 2, 3] and len(rows) == epochs


WORKER = r'''
import json, sys
from pathlib import Path
from climbrl import track as tr
from climbrl.config import train_config
from climbrl.evaluate.match import run_match
from climbrl.training import train

i = int(sys.argv[1])
uri = tr.configure("sqlite:///not-this.db", "shared-store")  # MLFLOW_TRACKING_URI wins
assert uri.startswith("http://"), uri
cfg = train_config("ppo", epochs=2, games_per_epoch=4, eval_every=1, eval_games=8, hidden=16,
                   eval_opponents=("random",), seed=i)
out = Path(f"run{i}")
with tr.training_run(cfg.to_dict(), out, artifacts=[out / "policy.pt", out / "metrics.csv"],
                     tags={"worker": str(i)}) as run:
    res = train(cfg, out, progress=False, on_epoch=run.on_epoch)
    run.complete(res["history"])
match = run_match(f"checkpoint:{out / 'policy.pt'}", ["random"], rules="paper", games=8, workers=1, seed=i)
path = out / "eval.json"
path.write_text(json.dumps({"matches": [match]}))
tr.log_evaluation("ppo", {"matches": [match]}, path, tags={"worker": str(i)})
if i == 0:
    version = tr.register_policy(out / "policy.pt", "shared-best", "ppo", {"win_rate/random": match["win_rate"]})
    print("version", version)
'''


def _check_tuning_runs(client, optuna_db: str) -> None:
    """Each tuning worker's run, and under it each trial it ran, with the trial's parameters, its
    curve (one point per evaluated epoch) and the objective Optuna holds."""
    import optuna

    trials = {t.number: t for t in optuna.load_study(study_name="tracked", storage=optuna_db).trials}
    assert sorted(trials) == [0, 1, 2] and all(t.state.name == "COMPLETE" for t in trials.values())
    exp = client.get_experiment_by_name(TINY_STUDY["tracking"]["experiment"])
    runs = client.search_runs([exp.experiment_id])
    parents = {r.info.run_id: r for r in runs if r.data.tags.get("stage") == "tune"}
    assert len(parents) == 2 and all(r.info.status == "FINISHED" for r in parents.values())
    assert {r.data.tags["study"] for r in parents.values()} == {"tracked"}
    from sqlalchemy.engine import make_url

    password = make_url(optuna_db).password
    assert all(password not in r.data.tags["storage"] and "***" in r.data.tags["storage"] for r in parents.values())
    children = [r for r in runs if r.data.tags.get("stage") == "tune-trial"]
    assert sorted(int(r.data.tags["trial"]) for r in children) == [0, 1, 2]
    for r in children:
        t = trials[int(r.data.tags["trial"])]
        assert r.data.tags["mlflow.parentRunId"] in parents and r.info.status == "FINISHED"
        assert r.data.tags["state"] == "complete" and r.data.tags["worker"] == t.user_attrs["worker"]
        assert {k: float(v) for k, v in r.data.params.items()} == pytest.approx(t.params)
        assert r.data.metrics["objective"] == pytest.approx(t.value)
        curve = client.get_metric_history(r.info.run_id, "win_rate/random")
        assert {m.step: m.value for m in curve} == pytest.approx(t.intermediate_values)


def test_mlflow_server_on_postgres_takes_runs_from_two_processes(tmp_path, postgres_server):
    import mlflow
    from mlflow.tracking import MlflowClient
    from pipeline.mlflow_server import mlflow_server
    from pipeline.postgres import create_database

    backend = create_database(postgres_server, f"mlflow{os.getpid()}")
    with mlflow_server(backend, tmp_path / "artifacts", log=tmp_path / "server.log") as uri:
        env = _env(MLFLOW_TRACKING_URI=uri)  # the workers' environment only, not this process's
        workers = [subprocess.Popen([sys.executable, "-c", WORKER, str(i)], cwd=tmp_path, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for i in range(2)]
        # and two tuning workers on one Optuna study (PostgreSQL too), their trials tracked there
        optuna_db = create_database(postgres_server, f"optuna{os.getpid()}")
        tuners = [_tune(tmp_path, optuna_db, "tracked", _params(tmp_path, trials=3), track=True, env=env)
                  for _ in range(2)]
        outs = [_finish(w) for w in workers]
        for t in tuners:
            _finish(t)
        assert "version 1" in outs[0]
        client = MlflowClient(tracking_uri=uri, registry_uri=uri)
        _check_tuning_runs(client, optuna_db)
        exp = client.get_experiment_by_name("shared-store")
        assert exp.tags["mlflow.experimentKind"] == "custom_model_development"
        runs = client.search_runs([exp.experiment_id])
        by_stage: dict[str, list] = {}
        for r in runs:
            by_stage.setdefault(r.data.tags.get("stage"), []).append(r)
        everything = [(r.info.experiment_id, r.data.tags.get("stage"), r.data.tags.get("worker"), r.info.status)
                      for r in client.search_runs([e.experiment_id for e in client.search_experiments()])]
        assert len(by_stage["train"]) == 2 and len(by_stage["evaluate"]) == 2 and len(by_stage["register"]) == 1, \
            (everything, outs)
        for r in by_stage["train"]:
            assert r.info.status == "FINISHED"
            assert r.data.params["epochs"] == "2" and r.data.tags["algo"] == "ppo"
            assert [m.step for m in client.get_metric_history(r.info.run_id, "games")] == [1, 2]
            assert {a.path for a in client.list_artifacts(r.info.run_id)} >= {"policy.pt", "metrics.csv"}
        assert {r.data.tags["worker"] for r in by_stage["train"]} == {"0", "1"}
        for r in by_stage["evaluate"]:
            assert "win_rate/random" in r.data.metrics
            assert [a.path for a in client.list_artifacts(r.info.run_id)] == ["eval.json"]
        mv = client.get_model_version_by_alias("shared-best", "best")
        assert mv.version == "1" and mv.run_id == by_stage["register"][0].info.run_id
        # the registered policy loads back through the server (artifacts served over HTTP)
        mlflow.set_tracking_uri(uri)
        try:
            from climbrl.track import load_registered_policy

            agent = load_registered_policy("shared-best", alias="best")
            assert agent.name == "models:/shared-best/1"
        finally:
            mlflow.set_tracking_uri(None)
    # the artifacts lie in the server's folder, not the workers' tracking folders
    assert list((tmp_path / "artifacts").rglob("policy.pt"))
    assert not (tmp_path / "mlruns").exists()


def test_make_server_starts_its_own_postgres_and_stops_cleanly(tmp_path, postgres_server) -> None:
    """``make server`` as a user runs it: ``python -m pipeline.mlflow_server`` with no backend
    given starts a PostgreSQL of its own in ``--pgdata``, then the MLflow server on it; a client
    logs a run; Ctrl-C (SIGINT) stops both, exit status 0; a second start finds the same run
    (the data folder is kept)."""
    import tempfile

    from mlflow.tracking import MlflowClient
    from pipeline.postgres import free_port

    pgdata = Path(tempfile.mkdtemp(prefix="climbrl-make-server-"))  # reachable by nobody when run as root
    pgdata.chmod(0o711)
    port = free_port()
    cmd = [sys.executable, "-m", "pipeline.mlflow_server", "--pgdata", str(pgdata / "pg"), "--artifacts",
           str(tmp_path / "artifacts"), "--port", str(port), "--log", str(tmp_path / "server.log")]
    env = {k: v for k, v in _env().items() if k != "CLIMBRL_MLFLOW_BACKEND"}

    def start() -> subprocess.Popen:
        proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)
        for line in proc.stdout:
            if "export MLFLOW_TRACKING_URI=" in line:
                return proc
        raise AssertionError(f"the server did not come up: {proc.wait()}, {(tmp_path / 'server.log').read_text()}")

    def stop(proc: subprocess.Popen) -> None:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(60) == 0

    try:
        proc = start()
        uri = f"http://127.0.0.1:{port}"
        client = MlflowClient(tracking_uri=uri)
        run = client.create_run(client.create_experiment("make-server"))
        client.log_metric(run.info.run_id, "x", 2.0)
        stop(proc)
        assert not _answers(uri)
        proc = start()  # the same database again
        assert MlflowClient(tracking_uri=uri).get_run(run.info.run_id).data.metrics == {"x": 2.0}
        stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
        import shutil

        shutil.rmtree(pgdata, ignore_errors=True)


def _answers(uri: str) -> bool:
    try:
        with urllib.request.urlopen(f"{uri}/health", timeout=2):
            return True
    except OSError:
        return False

@pytest.mark.skipif(os.geteuid() != 0, reason="only a root process drops to nobody to run PostgreSQL")
def test_server_binaries_out_of_nobody_s_reach_are_copied_where_it_can_run_them(tmp_path) -> None:
    """Run as root, the server runs as ``nobody``; a virtual environment under a private folder
    (``/root``, a ``mktemp -d`` folder, pytest's tmp_path) holds binaries that user cannot reach."""
    import pwd

    from pipeline import postgres

    install = tmp_path / "venv" / "site-packages" / "pgserver" / "pginstall"  # the wheel's layout
    (install / "bin").mkdir(parents=True)
    libs = tmp_path / "venv" / "site-packages" / "pgserver.libs"
    libs.mkdir()
    (libs / "libpq.txt").write_text("lib\n")
    script = install / "bin" / "postgres"
    script.write_text('#!/bin/sh\ncat "$(dirname "$0")/../../../pgserver.libs/libpq.txt"\n')  # its RPATH
    script.chmod(0o700)
    tmp_path.chmod(0o700)
    assert not postgres._others_can_run(install / "bin")
    bins = postgres._reachable(install / "bin")
    assert bins != install / "bin" and postgres._others_can_run(bins)
    assert postgres._reachable(install / "bin") == bins  # made once
    nobody = pwd.getpwnam("nobody")
    out = subprocess.run([str(bins / "postgres")], user=nobody.pw_uid, group=nobody.pw_gid, extra_groups=[],
                         capture_output=True, text=True, check=True)
    assert out.stdout == "lib\n"  # the copy runs as nobody and finds the bundled libraries by its RPATH


def test_a_collision_with_a_process_outside_the_lock_is_retried(monkeypatch) -> None:
    """optuna-dashboard (or any process that opens the storage without the setup lock) may create
    Optuna's schema at the moment a worker does: the worker's unique violation is retried, the
    other's schema then being there (here: the first attempt fails as PostgreSQL fails it)."""
    import sqlalchemy.exc
    from optuna import storages

    from climbrl import tune

    calls: list[str] = []

    class Storage:
        def __init__(self, url: str, **kwargs: object) -> None:
            calls.append(url)
            if len(calls) == 1:
                raise sqlalchemy.exc.IntegrityError("CREATE TABLE studies", {}, Exception("pg_type_typname_nsp_index"))

    class NoLock:
        def __init__(self, storage: str, name: str) -> None:
            assert name == tune.SETUP_LOCK

        acquire = close = lambda self: None

    monkeypatch.setattr(storages, "RDBStorage", Storage)
    monkeypatch.setattr(tune, "_DbLock", NoLock)
    monkeypatch.setattr(tune.time, "sleep", lambda s: None)
    assert isinstance(tune.open_shared_storage("postgresql://x/y"), Storage) and calls == ["postgresql://x/y"] * 2
