"""Faults a user meets (issue 31, section 3): a training killed outright leaves no process
behind, a killed Q-learning or DQN run resumes into the uninterrupted one, and a diverging
training stops with a clear error instead of writing NaN weights (which no load accepts).

The killed training runs as the real command line in a session of its own; every process it
starts (the actors, multiprocessing's resource tracker) inherits that session, wherever it is
reparented when the training dies, so the session's members in ``/proc`` are the survivors.
"""

from __future__ import annotations

import contextlib
import csv
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import torch

from climbrl.config import train_config
from climbrl.learn import checkpoint as ckpt
from climbrl.learn.train import train
from climbrl.learn.trainable import TrainingDiverged
from tests.resume import untimed
from tests.study_params import write_tiny_study

ROOT = Path(__file__).resolve().parents[1]

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; the parent-death "
                                "signal is Linux's")


def session_members(sid: int) -> dict[int, str]:
    """The live processes of session ``sid`` (zombies, already dead, left out): pid -> command line."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # ended meanwhile
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state, ppid, pgrp, session
        if int(fields[3]) == sid and fields[0] != "Z":
            out[int(entry.name)] = cmdline
    return out


def wait_for_file(path: Path, proc: subprocess.Popen, timeout: float, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            pytest.fail(f"the training ended (rc {proc.returncode}) before writing {path}: {log.read_text()}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {path} within {timeout:.0f} s")
        time.sleep(0.2)


@contextlib.contextmanager
def own_session(proc: subprocess.Popen) -> Iterator[int]:
    """The session of ``proc`` (started with ``start_new_session``): its id; on exit every process
    left in it is killed (only the processes this test started), ``proc`` too."""
    sid = proc.pid  # a session leader's pid is its session's id
    try:
        yield sid
    finally:
        for pid in session_members(sid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def kill_and_expect_no_survivor(proc: subprocess.Popen, sid: int, what: str) -> None:
    """SIGKILL ``proc``; within 30 s no process of its session ``sid`` may be left."""
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    deadline = time.monotonic() + 30
    while (left := session_members(sid)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not left, f"alive 30 s after {what} was killed: {left}"


@linux_only
def test_a_training_killed_outright_leaves_no_actor_or_helper_alive(tmp_path) -> None:
    """SIGKILL the training while its two actors play its epochs: within seconds no process of its
    session is left (before the fix, the actors and the resource tracker lived on, reparented)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    out, log = tmp_path / "run", tmp_path / "stderr.txt"
    with open(log, "w") as err:  # a file, not a pipe: nobody reads a pipe while the training runs
        proc = subprocess.Popen(
            [sys.executable, "-m", "climbrl.cli", "train", "--algo", "ppo", "--epochs", "500", "--games-per-epoch",
             "8", "--actors", "2", "--eval-every", "0", "--set", "hidden=32", "--no-progress", "--out", str(out)],
            cwd=tmp_path, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=err)
    with own_session(proc) as sid:
        # mid-run: an epoch's checkpoint is written, so the actors are up and playing the next ones
        wait_for_file(out / "checkpoint.pt", proc, 300, log)
        members = session_members(sid)
        assert sum("spawn_main" in cmd for cmd in members.values()) == 2, members  # the actors
        kill_and_expect_no_survivor(proc, sid, "the training")


@linux_only
def test_a_pipeline_pool_killed_outright_leaves_no_worker_alive(tmp_path) -> None:
    """The pool of the pipeline's studies and runs (pipeline/tuning.py, seeds.py, ablation.py:
    climbrl.threads.process_pool): SIGKILL the parent while its two workers work, and within
    seconds none is left (an orphan would train on for hours, holding its study's lock)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    log = tmp_path / "stderr.txt"
    code = ("import time\nfrom pipeline.tuning import _pool_map\n"
            "if __name__ == '__main__':\n    _pool_map(time.sleep, [600, 600], 2)\n")
    (tmp_path / "pool.py").write_text(code)
    with open(log, "w") as err:
        proc = subprocess.Popen([sys.executable, str(tmp_path / "pool.py")], cwd=tmp_path, env=env,
                                start_new_session=True, stdout=subprocess.DEVNULL, stderr=err)
    with own_session(proc) as sid:
        deadline = time.monotonic() + 60
        while sum("spawn_main" in cmd for cmd in session_members(sid).values()) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        kill_and_expect_no_survivor(proc, sid, "the pool's parent")


# --- a replay learner's resume -------------------------------------------------------------------

def small(algo: str, **kw):
    base = {"epochs": 3, "games_per_epoch": 8, "eval_every": 0, "hidden": 32, "minibatch_decisions": 64,
            "batch_size": 32, "updates_per_epoch": 5, "keep_policy_every": 0}
    return train_config(algo, **{**base, **kw})


def metrics(run: Path) -> list[dict[str, str]]:
    """metrics.csv's rows without the timings."""
    with open(run / "metrics.csv", newline="") as f:
        return untimed(csv.DictReader(f))


def policy(run: Path) -> dict[str, torch.Tensor]:
    return ckpt.load_network(run / "policy.pt")[0].state_dict()


def stop_after(epoch: int):
    """An ``on_epoch`` that interrupts the run once epoch ``epoch``'s checkpoint is written."""
    def on_epoch(row: dict) -> None:
        if row["epoch"] == epoch:
            raise KeyboardInterrupt
    return on_epoch


@pytest.mark.parametrize("algo", ["qlearning", "dqn"])  # dqn: prioritized replay, double, dueling
def test_a_killed_replay_learner_resumes_into_the_uninterrupted_run(tmp_path, algo: str) -> None:
    """Stopped after its second epoch and resumed, the run's metrics.csv and policy are the
    uninterrupted run's: the checkpoint holds the replay buffer (a ring of 700 transitions, some
    500 an epoch: full and wrapped around at the stop, and part of it sampled after) and its
    priorities. Before, the resumed run started with an empty buffer (``loss/buffer`` 558
    against 2518 in the issue's run)."""
    cfg = small(algo, replay_capacity=700)
    train(cfg, tmp_path / "straight", progress=False)
    with pytest.raises(KeyboardInterrupt):
        train(cfg, tmp_path / "stopped", progress=False, on_epoch=stop_after(2))
    first, second = (r for r in metrics(tmp_path / "stopped"))
    assert 350 < int(first["learner_decisions"]) < 700 and second["loss/buffer"] == "700.0"
    train(cfg, tmp_path / "stopped", resume=True, progress=False)
    assert metrics(tmp_path / "stopped") == metrics(tmp_path / "straight")
    a, b = policy(tmp_path / "straight"), policy(tmp_path / "stopped")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_a_replay_checkpoint_without_its_buffer_is_not_resumed(tmp_path) -> None:
    """A Q-learning checkpoint written before checkpoints held the buffer: ``--resume`` refuses it
    with the reason, and the ablation runner (same rule) starts that run again."""
    from pipeline.seeded import stale

    cfg = small("qlearning", epochs=2)
    with pytest.raises(KeyboardInterrupt):
        train(cfg, tmp_path, progress=False, on_epoch=stop_after(1))
    state = ckpt.load(tmp_path / "checkpoint.pt")
    del state["learner"]["replay"]
    ckpt.save_atomic(state, tmp_path / "checkpoint.pt")
    with pytest.raises(ckpt.CheckpointError, match="no replay buffer"):
        train(cfg, tmp_path, resume=True, progress=False)
    assert "no replay buffer" in stale(cfg, tmp_path)


# --- divergence ----------------------------------------------------------------------------------

def test_the_issue_s_divergent_training_stops_with_one_line_and_exit_status_2(tmp_path, capsys) -> None:
    """``lr=1e6`` (and no effective clipping): the run stops on its first non-finite loss or weight;
    before, it exited 0 with inf losses and NaN weights in policy.pt."""
    from climbrl.cli import main

    out = tmp_path / "run"
    rc = main(["train", "--algo", "mcq", "--epochs", "3", "--games-per-epoch", "10", "--set", "lr=1000000",
               "--set", "max_grad_norm=1000000", "--set", "hidden=32", "--no-progress", "--out", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("climbrl train: error: mcq diverged in epoch ") and err.count("\n") == 1, err
    for f in out.glob("*.pt"):  # whatever the run kept is finite
        ckpt.load(f)


def _fault_in_epoch_two(monkeypatch, kind: str) -> None:
    """MCQ's second update meets ``kind``: an infinite target (a non-finite loss), or a weight set to
    NaN after the update (a finite loss that stepped out of range)."""
    from climbrl.learn.mcq import MCQ

    calls = []
    targets, update = MCQ.targets, MCQ.update

    def bad_targets(self, ro):
        t = targets(self, ro)
        return t * np.inf if len(calls) == 2 else t

    def counted_update(self, ro, rng, progress=(0.0, 0.0)):
        calls.append(1)
        stats = update(self, ro, rng, progress)
        if kind == "weight" and len(calls) == 2:
            with torch.no_grad():
                next(self.net.parameters())[0, 0] = float("nan")
        return stats

    monkeypatch.setattr(MCQ, "update", counted_update)
    if kind == "loss":
        monkeypatch.setattr(MCQ, "targets", bad_targets)


@pytest.mark.parametrize("kind", ["loss", "weight"])
def test_a_divergent_epoch_writes_nothing_and_keeps_the_last_finite_one(tmp_path, monkeypatch, kind: str) -> None:
    _fault_in_epoch_two(monkeypatch, kind)
    files = ("checkpoint.pt", "policy.pt", "metrics.csv")
    kept = {}

    def after(row: dict) -> None:
        kept.update({f: (tmp_path / f).read_bytes() for f in files})

    with pytest.raises(TrainingDiverged, match=rf"mcq diverged in epoch 2: .*{kind}.*keeps epoch 1's checkpoint"):
        train(small("mcq"), tmp_path, progress=False, on_epoch=after)
    assert {f: (tmp_path / f).read_bytes() for f in files} == kept  # epoch 1's, untouched
    assert ckpt.load(tmp_path / "checkpoint.pt")["epoch"] == 1 and ckpt.load_network(tmp_path / "policy.pt")


def test_nan_weights_are_refused_wherever_they_are_loaded(tmp_path, capsys) -> None:
    """A policy or a checkpoint holding a NaN: load_network, a checkpoint agent, ``climbrl evaluate``
    and ``--resume`` refuse it, naming the tensor (before, it played without a word)."""
    from climbrl.cli import main
    from climbrl.learn.registry import make_learner
    from climbrl.learn.specs import make_agent

    learner = make_learner(small("mcq"))
    payload = ckpt.network_payload(learner.net, "mcq", 1, learner.encoder)
    name = next(iter(payload["net"]))
    payload["net"][name][0] = float("nan")
    ckpt.save_atomic(payload, tmp_path / "policy.pt")
    with pytest.raises(ckpt.CheckpointError, match=rf"NaN or infinite values .* in net\.{name}$"):
        ckpt.load_network(tmp_path / "policy.pt")
    with pytest.raises(ckpt.CheckpointError, match="NaN or infinite"):
        make_agent(f"checkpoint:{tmp_path / 'policy.pt'}", "big2:paper")
    assert main(["evaluate", "--agent", f"checkpoint:{tmp_path / 'policy.pt'}", "--opponents", "random",
                 "--games", "4", "--workers", "1"]) == 2
    assert "NaN or infinite values" in capsys.readouterr().err
    train(small("mcq", epochs=1), tmp_path / "run", progress=False)
    state = ckpt.load(tmp_path / "run" / "checkpoint.pt")
    state["learner"]["opt"]["state"][0]["exp_avg"].fill_(float("inf"))
    ckpt.save_atomic(state, tmp_path / "run" / "checkpoint.pt")
    with pytest.raises(ckpt.CheckpointError, match=r"learner\.opt\.state\.0\.exp_avg"):
        train(small("mcq", epochs=2), tmp_path / "run", resume=True, progress=False)


def test_a_tuning_trial_that_diverges_fails_and_the_study_goes_on(tmp_path, monkeypatch) -> None:
    """Optuna would re-raise the trial's error and end the whole study; a diverged trial fails
    alone instead (its suggested lr is a bad one, not the study)."""
    import climbrl.training
    from climbrl.params import load_params
    from climbrl.tune import run_study

    tune = load_params(ROOT / "params.yaml").tune
    calls = []

    def fake_train(cfg, out, **kw):
        calls.append(cfg.lr)
        if len(calls) == 1:
            raise TrainingDiverged("ppo diverged in epoch 1: the loss of update 1 is nan")
        return {}

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(climbrl.training, "train", fake_train)
    res = run_study(tune, trials=2, storage=f"sqlite:///{tmp_path / 'optuna.db'}", study_name="t",
                    out_dir=tmp_path / "runs", best_yaml=tmp_path / "best.yaml", track=False)
    assert len(calls) == 2 and res["trials"] == 2 and res["complete"] == 1


def _tune_process(tmp_path: Path, log: str, **tune: object) -> subprocess.Popen:
    """``climbrl tune`` of a tiny local study ``t`` in ``tmp_path``, its output in ``tmp_path/log``."""
    params = write_tiny_study(tmp_path, **{"trials": 2, "pruner": "none", "opponent": "random", **tune})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]), "DVC_NO_ANALYTICS": "1",
           "MLFLOW_DISABLE_TELEMETRY": "true", "DO_NOT_TRACK": "true"}
    with open(tmp_path / log, "w") as out:
        return subprocess.Popen([sys.executable, "-m", "climbrl.cli", "tune", "--params", str(params), "--no-track",
                                 "--storage", f"sqlite:///{tmp_path / 'optuna.db'}", "--study", "t",
                                 "--best-out", str(tmp_path / "best.yaml")],
                                cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT)


def _finished(proc: subprocess.Popen, log: Path, timeout: float) -> str:
    """The output of ``proc`` once it ended within ``timeout`` (killed otherwise)."""
    try:
        proc.wait(timeout=timeout)
    finally:
        proc.kill()
        proc.wait()
    return log.read_text()


@linux_only
def test_a_sqlite_study_killed_in_a_trial_runs_that_trial_again_when_resumed(tmp_path) -> None:
    """A local study has no heartbeats; SIGKILL in the middle of a trial left it RUNNING for ever
    (and its parameters unmeasured). Resumed, the study fails it as interrupted and runs its
    parameters again; the budget counts the finished trials."""
    import optuna

    slow = _tune_process(tmp_path, "slow.log", epochs=200)  # long enough to be killed in its first trial
    try:
        wait_for_file(tmp_path / "runs" / "tune" / "t" / "trial-0" / "metrics.csv", slow, 120, tmp_path / "slow.log")
    finally:
        slow.kill()
        slow.wait()
    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    killed = optuna.load_study(study_name="t", storage=storage).trials[0]
    assert killed.state.name == "RUNNING"

    again = _tune_process(tmp_path, "again.log")
    out = _finished(again, tmp_path / "again.log", 300)
    assert again.returncode == 0, out[-3000:]
    assert "trial(s) 0 were left RUNNING" in out
    trials = optuna.load_study(study_name="t", storage=storage).trials
    assert trials[0].state.name == "FAIL" and trials[0].user_attrs["interrupted"] is True
    retried = [t for t in trials if t.user_attrs.get("retry_of") == 0]
    assert len(retried) == 1 and retried[0].params == killed.params and retried[0].state.name == "COMPLETE"
    assert [t.state.name for t in trials].count("COMPLETE") == 2 and len(trials) == 3  # the budget: 2 finished


def test_an_interrupted_trial_is_queued_once_and_never_past_the_budget(tmp_path) -> None:
    """A resume killed after queueing a retry but before failing the trial leaves both; the next
    resume fails the trial without queueing it twice. With no budget left nothing is queued."""
    import optuna

    from climbrl.tune import _LocalStudy

    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    store = optuna.storages.get_storage(storage)
    study = optuna.create_study(study_name="t", storage=store, direction="maximize")
    for _ in range(2):  # two trials whose process died in them
        study.ask({"lr": optuna.distributions.FloatDistribution(1e-5, 1e-3, log=True)})
    study.enqueue_trial(study.trials[0].params, user_attrs={"retry_of": 0})  # the killed resume's retry of trial 0
    local = _LocalStudy(storage, "t")
    try:
        assert local.retry_interrupted(study, store, remaining=5) == [0, 1]
    finally:
        local.close()
    trials = study.get_trials()
    assert [t.state.name for t in trials[:2]] == ["FAIL", "FAIL"]
    assert sorted(t.user_attrs["retry_of"] for t in trials[2:]) == [0, 1]  # trial 1 queued, trial 0 not again
    assert all(t.state.name == "WAITING" for t in trials[2:])

    other = optuna.create_study(study_name="u", storage=store, direction="maximize")
    other.ask({"x": optuna.distributions.FloatDistribution(0, 1)})
    local = _LocalStudy(storage, "u")
    try:
        assert local.retry_interrupted(other, store, remaining=0) == [0]
    finally:
        local.close()
    assert [t.state.name for t in other.get_trials()] == ["FAIL"]  # failed, no retry: the budget is spent


@linux_only
def test_a_second_process_on_a_running_sqlite_study_is_refused_and_the_claim_ends_with_its_holder(tmp_path) -> None:
    """Two processes on one local study would each run the whole budget, TPE drawing the same
    parameters; the second is refused at once, naming the holder, and changes nothing. Another
    study of the same file is free; once the holder is gone (killed), the study is free again."""
    from climbrl.tune import _LocalStudy

    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; sys.path.insert(0, sys.argv[1]); "
                               "from climbrl.tune import _LocalStudy; s = _LocalStudy(sys.argv[2], 't'); "
                               "print('held', flush=True); time.sleep(600)", str(ROOT / "src"), storage],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        refused = _tune_process(tmp_path, "refused.log")
        out = _finished(refused, tmp_path / "refused.log", 120)
        assert refused.returncode == 2 and "is being run by another process" in out and f":{holder.pid}" in out, out
        assert not (tmp_path / "runs").exists() and not (tmp_path / "optuna.db").exists()  # nothing written
        _LocalStudy(storage, "another").close()  # another study of the same database is not held
        assert not (tmp_path / "optuna.db.another.lock").exists()  # an ended claim leaves no file
    finally:
        holder.kill()
        holder.wait()
    assert (tmp_path / "optuna.db.t.lock").exists()  # a killed holder's file stays, its lock does not
    free = _LocalStudy(storage, "t")
    free.close()
    assert not (tmp_path / "optuna.db.t.lock").exists()


def test_a_retried_default_trial_keeps_its_mark(tmp_path) -> None:
    """The learner's own config (trial 0 of a new study), interrupted and run again, is still marked
    as that config in its retry (the report names it; the comparison decides by value anyway)."""
    import optuna

    from climbrl.config import train_config
    from climbrl.tune import _LocalStudy, enqueue_default

    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    store = optuna.storages.get_storage(storage)
    study = optuna.create_study(study_name="t", storage=store, direction="maximize")
    assert enqueue_default(study, train_config("sarsa"))
    running = study.ask()  # the queued default, taken by a process that then died in it
    running.suggest_float("lr", 1e-5, 1e-3, log=True)
    running.suggest_float("epsilon", 0.01, 0.3)
    local = _LocalStudy(storage, "t")
    try:
        assert local.retry_interrupted(study, store, remaining=3) == [0]
    finally:
        local.close()
    first, retry = study.get_trials()
    assert first.state.name == "FAIL" and first.user_attrs["default"] is True
    assert retry.state.name == "WAITING" and retry.user_attrs == {"retry_of": 0, "default": True}
