"""Faults a user meets (issue 31, section 3): a training killed outright leaves no process
behind.

The killed training runs as the real command line in a session of its own; every process it
starts (the actors, multiprocessing's resource tracker) inherits that session, wherever it is
reparented when the training dies, so the session's members in ``/proc`` are the survivors.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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
    sid = proc.pid  # a session leader's pid is its session's id
    try:
        # mid-run: an epoch's checkpoint is written, so the actors are up and playing the next ones
        wait_for_file(out / "checkpoint.pt", proc, 300, log)
        members = session_members(sid)
        assert sum("spawn_main" in cmd for cmd in members.values()) == 2, members  # the actors
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 30
        while (left := session_members(sid)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"alive 30 s after the training was killed: {left}"
    finally:
        for pid in session_members(sid):  # only the processes this test started: its session's
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
