"""Issue 51, the ``climbrl`` command's share of the second hostile round: every case here was a
traceback, an out-of-memory kill or a silent oddity before its fix.

* ``climbrl serve --port 99999``: an OverflowError out of ``bind`` (finding 7);
* a checkpoint whose ``net_config`` says ``hidden: -5`` or ``10**6`` (or tampers with any other
  size): a RuntimeError, or an attempt at terabytes, when loaded (findings 5 and 7);
* ``climbrl imitate --hidden 100000``: killed by the kernel's OOM killer; no network size had an
  upper bound anywhere (finding 9);
* checkpoints written 0600 beside a 0644 ``metrics.csv`` (finding 11);
* Ctrl-C at a terminal (SIGINT to the whole process group): the command answered with one line
  and 130, but its worker processes printed KeyboardInterrupt tracebacks of their own.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from climbrl.config import MAX_WIDTH, ConfigError, train_config
from climbrl.encoders import make_encoder
from climbrl.learn.checkpoint import CheckpointError, load_network, network_payload, save_atomic
from climbrl.learn.imitation import ImitationConfig, ImitationError
from climbrl.learn.network import make_net
from tests.test_cli_messages import run

ROOT = Path(__file__).resolve().parents[1]


def one_line(err: str) -> str:
    """The one line a refused command writes (no traceback, nothing else)."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith(("usage:", " "))]
    assert len(lines) == 1, err  # argparse's usage lines before it aside
    return lines[0]


# --- finding 7: the port ------------------------------------------------------------------------

@pytest.mark.parametrize("port", ["99999", "65536", "-1", str(2**64), "x"])
def test_a_port_outside_0_to_65535_is_one_line(capsys, port) -> None:
    rc, _, err = run(capsys, "serve", "--port", port)
    assert rc == 2
    line = one_line(err)
    assert "argument --port" in line and ("65535" in line or "integer" in line), line


# --- findings 5, 7: checkpoints whose network sizes are tampered with -----------------------------

@pytest.fixture(scope="module")
def policy_file(tmp_path_factory) -> Path:
    """A tiny Big 2 policy file (hidden 8), as ``climbrl train`` writes one."""
    enc = make_encoder("big2")
    net = make_net(enc.state_dim, enc.move_dim, 8, value_head=True, generator=torch.Generator().manual_seed(0))
    path = tmp_path_factory.mktemp("policy") / "policy.pt"
    save_atomic(network_payload(net, "ppo", 1, enc), path)
    return path


def tampered(policy: Path, folder: Path, **net_config) -> Path:
    obj = torch.load(policy, weights_only=True)
    obj["net_config"] = {**obj["net_config"], **net_config}
    path = folder / "tampered.pt"
    torch.save(obj, path)
    return path


BAD_SIZES = [
    ({"hidden": -5}, "hidden"), ({"hidden": 10**6}, "hidden"), ({"hidden": 0}, "hidden"),
    ({"hidden": "512"}, "hidden"), ({"hidden": True}, "hidden"), ({"hidden": 1.5}, "hidden"),
    ({"hidden2": 10**6, "n_actions": 2}, "n_actions"),  # an action head the encoder does not have
    ({"lstm": 10**6, "sequence": [0, 5, 10]}, "lstm"),
    ({"state_dim": 10**9}, "state_dim"), ({"move_dim": -1}, "move_dim"),
]


@pytest.mark.parametrize("sizes,field", BAD_SIZES)
def test_a_checkpoint_with_a_bad_network_size_is_refused_when_loaded(policy_file, tmp_path, sizes, field) -> None:
    path = tampered(policy_file, tmp_path, **sizes)
    with pytest.raises(CheckpointError, match=field) as e:
        load_network(path, "big2")
    assert str(path) in str(e.value)


def test_a_width_at_the_bound_loads(policy_file) -> None:
    net, _, _ = load_network(policy_file, "big2")
    assert net.config()["hidden"] == 8
    # the bound itself builds (a network of MAX_WIDTH units is a real, if large, request)
    enc = make_encoder("big2")
    assert make_net(enc.state_dim, enc.move_dim, MAX_WIDTH).config()["hidden"] == MAX_WIDTH


@pytest.mark.parametrize("hidden", [-5, 10**6])
def test_evaluate_with_a_tampered_checkpoint_is_one_line(capsys, policy_file, tmp_path, monkeypatch, hidden) -> None:
    path = tampered(policy_file, tmp_path, hidden=hidden)
    monkeypatch.chdir(tmp_path)
    rc, _, err = run(capsys, "evaluate", "--agent", f"checkpoint:{path}", "--opponents", "random", "--games", "4",
                     "--workers", "1")
    assert rc == 2
    line = one_line(err)
    assert line.startswith("climbrl evaluate: error:") and "hidden" in line and str(MAX_WIDTH) in line, line


# --- finding 9: network sizes have an upper bound everywhere ----------------------------------------

@pytest.mark.parametrize("field", ["hidden", "lstm"])
def test_the_train_config_bounds_every_width(field) -> None:
    extra = {"game": "doudizhu", "encoder": "doudizhu+history"} if field == "lstm" else {}
    assert getattr(train_config("dmc", **extra, **{field: MAX_WIDTH}), field) == MAX_WIDTH
    with pytest.raises(ConfigError, match=rf"train\.{field}: .*{MAX_WIDTH}"):
        train_config("dmc", **extra, **{field: MAX_WIDTH + 1})


def test_the_imitation_config_bounds_its_width() -> None:
    assert ImitationConfig(hidden=MAX_WIDTH).hidden == MAX_WIDTH
    with pytest.raises(ImitationError, match=f"hidden .*{MAX_WIDTH}.*100000"):
        ImitationConfig(hidden=100000)


@pytest.mark.parametrize("argv", [
    ["imitate", "--hidden", "100000", "--games", "4", "--workers", "1"],
    ["train", "--algo", "ppo", "--epochs", "1", "--games-per-epoch", "1", "--eval-every", "0", "--no-progress",
     "--set", "hidden=100000"],
])
def test_a_huge_network_is_refused_before_any_work(capsys, tmp_path, monkeypatch, argv) -> None:
    monkeypatch.chdir(tmp_path)
    rc, _, err = run(capsys, *argv)
    assert rc == 2
    line = one_line(err)
    assert "hidden" in line and str(MAX_WIDTH) in line, line
    assert not list(tmp_path.iterdir()), "a refused command left files behind"


# --- finding 11: the modes of a run's files ---------------------------------------------------------

@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002], ids=oct)
def test_a_run_s_files_all_follow_the_umask(capsys, tmp_path, monkeypatch, umask) -> None:
    monkeypatch.chdir(tmp_path)
    old = os.umask(umask)
    try:
        rc, _, err = run(capsys, "train", "--algo", "ppo", "--epochs", "1", "--games-per-epoch", "1",
                         "--eval-every", "0", "--no-progress", "--set", "hidden=8", "--set", "keep_policy_every=1",
                         "--out", "run")
    finally:
        os.umask(old)
    assert rc == 0, err
    files = [p for p in (tmp_path / "run").rglob("*") if p.is_file() and p.name != ".climbrl.lock"]
    names = {p.name for p in files}
    assert {"checkpoint.pt", "policy.pt", "metrics.csv"} <= names, names
    modes = {str(p.relative_to(tmp_path)): oct(p.stat().st_mode & 0o777) for p in files}
    assert set(modes.values()) == {oct(0o666 & ~umask)}, modes


# --- every command: Ctrl-C is the command's, not its workers' ---------------------------------------

def _ignore_sigint(pid: int) -> list[bool]:
    """For each process under ``pid``: whether it ignores SIGINT (its ``SigIgn`` mask in /proc)."""
    import psutil

    out = []
    for child in psutil.Process(pid).children(recursive=True):
        try:
            status = Path(f"/proc/{child.pid}/status").read_text()
        except OSError:  # ended meanwhile
            continue
        mask = int(next(line for line in status.splitlines() if line.startswith("SigIgn:")).split()[1], 16)
        out.append(bool(mask & 1 << (signal.SIGINT - 1)))
    return out


@pytest.mark.parametrize("argv", [
    ["evaluate", "--agent", "heuristic", "--opponents", "heuristic", "--games", "4000", "--workers", "2"],
    ["imitate", "--teacher", "heuristic", "--games", "400", "--workers", "2", "--out", "imit"],
])
def test_ctrl_c_at_a_terminal_is_one_line_from_the_command_alone(tmp_path, argv) -> None:
    """SIGINT to the whole process group, as a terminal sends it, once the two workers (and
    multiprocessing's resource tracker) have started and ignore it, which they do before their
    heavy imports (where a KeyboardInterrupt printed its traceback; they never did before)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])}
    p = subprocess.Popen([sys.executable, "-m", "climbrl.cli", *argv], cwd=tmp_path, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 60
        while (ignoring := _ignore_sigint(p.pid)).count(True) < 3:
            assert p.poll() is None and time.monotonic() < deadline, ("the workers do not ignore SIGINT", ignoring)
            time.sleep(0.05)
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    assert p.returncode == 130, err
    assert err == f"climbrl {argv[0]}: interrupted\n", err
