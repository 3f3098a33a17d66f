"""Where the command line writes (issue 31): every output path checked before any work, a result
printed when writing it fails, run folders never reused or shared, committed tables never
overwritten unless asked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from filelock import FileLock

from climbrl.cli import build_parser, main
from climbrl.outputs import LOCK

TINY_TRAIN = ["train", "--algo", "mcq", "--epochs", "1", "--games-per-epoch", "4", "--eval-every", "0",
              "--set", "hidden=16", "--no-progress"]

# command line (without --out) -> the function doing its work, which must not run
COMMANDS = {
    "evaluate": (["evaluate", "--agent", "random", "--opponents", "random", "--games", "4", "--workers", "1"],
                 "climbrl.evaluate.match.run_match"),
    "duel": (["duel", "--agent", "random", "--opponent", "random", "--deals", "2", "--workers", "1"],
             "climbrl.evaluate.duel.team_match"),
    "behaviour": (["behaviour", "--agent", "random", "--opponents", "random", "--games", "4", "--workers", "1"],
                  "climbrl.evaluate.windows.window"),
    "seeds": (["seeds", "--deals", "3"], "climbrl.evaluate.match.deal_seeds"),
    "bench": (["bench", "engine", "--games", "4"], "climbrl.bench.bench_engine"),
    "simulate": (["simulate", "--games", "4"], "climbrl.simulate.simulate_random"),
    "tune": (["tune", "--trials", "1", "--no-track"], "climbrl.tune.run_study"),
    "tournament": (["tournament", "--deals", "1", "--workers", "1"], "climbrl.evaluate.tournament.run_tournament"),
    "roundrobin": (["roundrobin", "--participants", "random,greedy", "--deals", "1", "--workers", "1"],
                   "climbrl.evaluate.roundrobin.round_robin"),
    "baselines": (["baselines", "--games", "4", "--workers", "1"],
                  "climbrl.evaluate.baselines_report.baselines_report"),
    "train": (TINY_TRAIN, "climbrl.training.train"),
    "imitate": (["imitate", "--teacher", "greedy", "--games", "8", "--workers", "1"],
                "climbrl.learn.imitation.imitate"),
}
FOLDER_OUT = {"tournament", "roundrobin", "baselines", "train", "imitate"}


def no_work(monkeypatch, target: str) -> None:
    def work(*args, **kwargs):
        raise AssertionError(f"{target} ran: the output path should have been refused first")

    monkeypatch.setattr(target, work)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("bad", ["other kind", "parent is a file"])
def test_a_bad_output_path_is_refused_before_any_work(tmp_path, monkeypatch, capsys, command, bad) -> None:
    argv, target = COMMANDS[command]
    no_work(monkeypatch, target)
    folder = command in FOLDER_OUT
    a_file = tmp_path / "file"
    a_file.write_text("kept\n")
    if bad == "other kind":
        path, message = (a_file, "is a file: give a folder") if folder else (tmp_path, "is a folder: give a file")
    else:
        path, message = a_file / "x", f"{a_file} is a file, not a folder"
    flag = "--best-out" if command == "tune" else "--out"
    rc, out, err = run(capsys, *argv, flag, str(path))
    assert rc == 2 and out == ""
    assert err.strip().count("\n") == 0 and f"{flag} {path}" in err and message in err, err
    assert a_file.read_text() == "kept\n" and sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_an_unwritable_parent_is_refused(tmp_path, monkeypatch, capsys) -> None:
    """A folder without write permission; root writes past permission bits, so as root (CI) the
    folder is /proc/sys, which the kernel keeps unwritable for root too."""
    no_work(monkeypatch, "climbrl.simulate.simulate_random")
    if os.geteuid() == 0:
        locked = Path("/proc/sys")
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
    assert not os.access(locked, os.W_OK), f"{locked} is writable here: the test needs another folder"
    rc, _, err = run(capsys, "simulate", "--games", "4", "--out", str(locked / "new" / "sim.json"))
    assert rc == 2 and f"{locked} is not writable" in err


def test_a_result_that_cannot_be_written_is_printed(tmp_path, monkeypatch, capsys) -> None:
    """The path was fine when the command began, but a folder took its place during the work:
    the result still goes to stdout, the error to stderr, exit status 2."""
    import climbrl.simulate

    out = tmp_path / "sim.json"
    simulate = climbrl.simulate.simulate_random

    def meanwhile(*args, **kwargs):
        out.mkdir()
        return simulate(*args, **kwargs)

    monkeypatch.setattr("climbrl.simulate.simulate_random", meanwhile)
    rc, printed, err = run(capsys, "simulate", "--games", "8", "--out", str(out))
    assert rc == 2 and f"cannot write {out}" in err and "the result is on stdout" in err
    assert "8 random-play games" in printed and json.loads(printed[printed.index("{"):])["games"] == 8


def test_imitate_refuses_a_used_folder(tmp_path, monkeypatch, capsys) -> None:
    argv, target = COMMANDS["imitate"]
    no_work(monkeypatch, target)
    (tmp_path / "policy.pt").write_bytes(b"first run")
    rc, _, err = run(capsys, *argv, "--out", str(tmp_path))
    assert rc == 2 and f"--out {tmp_path} already holds a run's files: choose another --out" in err
    assert (tmp_path / "policy.pt").read_bytes() == b"first run"


def test_train_resume_needs_a_checkpoint_and_touches_nothing(tmp_path, monkeypatch, capsys) -> None:
    no_work(monkeypatch, "climbrl.training.train")
    for name in ("policy.pt", "metrics.csv"):
        (tmp_path / name).write_text(f"{name} of the first run\n")
    rc, _, err = run(capsys, *TINY_TRAIN, "--out", str(tmp_path), "--resume")
    assert rc == 2 and f"--out {tmp_path}: nothing to resume, no checkpoint.pt in it" in err
    rc, _, err = run(capsys, *TINY_TRAIN, "--out", str(tmp_path))  # nor a new run over the old one's files
    assert rc == 2 and "already holds a run's files" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.csv", "policy.pt"]
    assert all((tmp_path / n).read_text() == f"{n} of the first run\n" for n in ("policy.pt", "metrics.csv"))
    rc, _, err = run(capsys, *TINY_TRAIN, "--out", str(tmp_path / "new"), "--resume")
    assert rc == 2 and "nothing to resume" in err and not (tmp_path / "new").exists()


@pytest.mark.parametrize("command", ["train", "imitate"])
def test_a_folder_in_use_is_refused_at_once(tmp_path, monkeypatch, capsys, command) -> None:
    argv, target = COMMANDS[command]
    no_work(monkeypatch, target)
    with FileLock(tmp_path / LOCK):
        rc, _, err = run(capsys, *argv, "--out", str(tmp_path))
    assert rc == 2 and f"--out {tmp_path} is in use by another climbrl process" in err


def test_the_lock_goes_with_its_process(tmp_path, capsys) -> None:
    """Another process holds the run folder: a training there is refused; once that process is
    killed (SIGKILL: no clean-up of its own) the training runs, and then leaves the folder free."""
    out = tmp_path / "run"
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", f"import time; from filelock import FileLock; lock = FileLock({str(out / LOCK)!r}); "
         "lock.acquire(); print('held', flush=True); time.sleep(300)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        rc, _, err = run(capsys, *TINY_TRAIN, "--out", str(out))
        assert rc == 2 and f"{out} is in use by another climbrl process" in err
        assert not (out / "checkpoint.pt").exists()
    finally:
        holder.kill()
        holder.wait()
    rc, _, err = run(capsys, *TINY_TRAIN, "--out", str(out))
    assert rc == 0, err
    assert (out / "checkpoint.pt").exists()
    lock = FileLock(out / LOCK)
    lock.acquire(timeout=0)  # released at the end of the run
    lock.release()
    rc, _, err = run(capsys, *TINY_TRAIN, "--out", str(out))
    assert rc == 2 and "or --resume to continue from its checkpoint.pt" in err


def test_baselines_never_overwrite_unless_forced(tmp_path, monkeypatch, capsys) -> None:
    assert build_parser().parse_args(["baselines"]).out == "runs/baselines"  # not the committed reports/
    (tmp_path / "baselines.json").write_text("{}\n")
    argv, target = COMMANDS["baselines"]
    with monkeypatch.context() as m:
        no_work(m, target)
        rc, _, err = run(capsys, *argv, "--out", str(tmp_path))
    assert rc == 2 and "already holds baselines.json: pass --force to overwrite" in err
    assert (tmp_path / "baselines.json").read_text() == "{}\n"
    rc, _, err = run(capsys, *argv, "--no-public-agent", "--out", str(tmp_path), "--force")
    assert rc == 0, err
    assert json.loads((tmp_path / "baselines.json").read_text())["games_per_match"] == 4


@pytest.mark.parametrize("command,result", [("tournament", "tournament.json"), ("roundrobin", "roundrobin.json")])
def test_a_folder_of_results_is_never_overwritten_unless_forced(tmp_path, monkeypatch, capsys, command,
                                                                 result) -> None:
    """``tournament``/``roundrobin --out reports/doudizhu`` would replace the committed study's
    tables as ``baselines`` did: refused before any game, unless --force."""
    (tmp_path / result).write_text("{}\n")
    argv, target = COMMANDS[command]
    with monkeypatch.context() as m:
        no_work(m, target)
        rc, _, err = run(capsys, *argv, "--out", str(tmp_path))
    assert rc == 2 and f"already holds {result}: pass --force to overwrite" in err, err
    assert (tmp_path / result).read_text() == "{}\n"
    rc, _, err = run(capsys, *argv, "--out", str(tmp_path), "--force")
    assert rc == 0, err
    assert json.loads((tmp_path / result).read_text())
