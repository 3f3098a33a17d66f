"""A property-based fuzz of the command line (issue 31's systematic fix): Hypothesis draws a
subcommand, any of its flags with good or hostile values (negative, zero, huge, not a number,
Unicode, YAML that does not parse, unknown agents), sometimes an unknown flag, and the person's
input for ``play``; each command runs in-process at a tiny budget in an empty folder, and:

* it ends with status 0 or 2 (argparse's refusals are 2 too), never an exception (a traceback);
* with ``--json`` and status 0, stdout is strict JSON (no NaN);
* it writes nothing outside its own output: the ``--out``/``--best-out`` it was given, or else
  the default output of that command (``runs/...``, ``reports/tune``, the study's SQLite files);
* no file of the repository changes.

Budgets stay tiny by drawing counts only from small values and hostile non-counts (a huge
``--games`` is a valid request for a long run, not a fuzz case); seeds are drawn huge too.
Sizes that have a bound are drawn past it (issue 51: ``--hidden 100000`` was killed by the
kernel's OOM killer, ``serve --port 99999`` an OverflowError), and agents include checkpoints
whose ``net_config`` was tampered with (a negative or a huge width: a RuntimeError, or terabytes
asked for). ``serve`` runs without its server (:func:`_serve_without_a_server`).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from climbrl.cli import main

ROOT = Path(__file__).resolve().parents[1]

HOSTILE = ["-1", "0", "", " ", "x", "²", "1e3", "nan", "null", "[1", "{a: 1", "random:foo", "nope", "--", "-",
           "\x00", "../../etc", "3X", "🂡"]
SEEDS = ["0", "7", str(2**32 - 1), str(2**32), str(2**64), "-1", "1.5"]

# flag -> good values; each command lists its flags
GOOD = {
    "--game": ["big2", "doudizhu"],
    "--rules": ["paper", "standard", "douzero", "charlesworth", "rlcard"],
    "--agent": ["random", "greedy", "heuristic", "checkpoint:bad/negative.pt", "checkpoint:bad/wide.pt",
                "checkpoint:bad/state.pt"],
    "--opponents": ["random", "greedy", "random,greedy,random", "random,greedy"],
    "--opponent": ["random", "greedy"],
    "--participants": ["random,greedy", "random,greedy,heuristic", "a=random,b=greedy"],
    "--games": ["3", "4", "6", "8"],
    "--deals": ["1", "2", "3"],
    "--seed": SEEDS,
    "--workers": ["1"],
    "--repeats": ["1", "2"],
    "--epochs": ["1"],
    "--games-per-epoch": ["1", "2"],
    "--eval-every": ["0", "1"],
    "--eval-games": ["4", "6"],
    "--resamples": ["2"],
    "--trials": ["0", "1"],
    "--hand": ["3D 4D 5D", "3345", "3D 3C 3H", "33344456"],
    "--prev": ["3C", "4", "pass", "bid1", "3D 3C"],
    "--set": ["hidden=8", "lr=0.01", "eval_opponents=random", "algo=ppo", "algo=dqn", "extra=1", "lr=[1", "nope",
              "hidden=100000", "lstm=99999"],
    "--algo": ["ppo", "mcq", "qlearning", "sarsa", "dqn"],
    "--purpose": ["evaluation", "validation", "tournament", "tuning"],
    "--teacher": ["greedy", "random"],
    "--hidden": ["8"],
    "--lr": ["0.01"],
    "--seat": ["0", "3", "4", "-1"],
    "--hints": ["greedy", "random"],
    "--curriculum": ["self_play", "opponent_pool"],
    "--actors": ["1"],
    "--study": ["s"],
    "--storage": ["sqlite:///optuna.db", "bogus://x", "sqlite:////nonexistent/dir/x.db"],
    "--heartbeat": ["1"],
    "--retries": ["0"],
    "--port": ["0"],
    "--host": ["127.0.0.1", "::1", "0.0.0.0"],
}
#: values past a flag's bound, drawn among its hostile ones
PAST_BOUNDS = {"--hidden": ["4097", "100000"], "--port": ["65536", "99999", str(2**64)]}
BOOL = ["--json", "--no-progress", "--resume", "--no-track", "--no-public-agent", "--force", "--all-cores"]
OUT_FILE = ("evaluate", "duel", "behaviour", "seeds", "bench engine", "simulate")
OUT_FOLDER = ("roundrobin", "tournament", "baselines", "train", "imitate")

COMMANDS: dict[str, tuple[list[str], list[str]]] = {  # required, optional
    "moves": (["--hand"], ["--game", "--rules", "--prev", "--json"]),
    "evaluate": (["--agent", "--opponents"], ["--game", "--rules", "--games", "--seed", "--workers", "--repeats",
                                             "--json"]),
    "duel": (["--agent", "--opponent"], ["--rules", "--deals", "--seed", "--repeats", "--workers", "--json"]),
    "roundrobin": (["--participants"], ["--rules", "--deals", "--seed", "--workers", "--resamples", "--json",
                                        "--force"]),
    "behaviour": (["--agent"], ["--game", "--opponents", "--rules", "--games", "--seed", "--workers", "--json"]),
    "seeds": ([], ["--deals", "--seed", "--purpose", "--json"]),
    "train": (["--algo"], ["--game", "--epochs", "--games-per-epoch", "--seed", "--eval-every", "--eval-games",
                           "--curriculum", "--actors", "--set", "--resume", "--json"]),
    "imitate": (["--teacher"], ["--games", "--seed", "--epochs", "--hidden", "--lr", "--workers", "--json"]),
    "tune": (["--trials"], ["--algo", "--storage", "--study", "--no-track", "--heartbeat", "--retries", "--json"]),
    "tournament": ([], ["--game", "--participants", "--deals", "--seed", "--workers", "--resamples", "--json",
                        "--force"]),
    "play": ([], ["--game", "--opponents", "--seat", "--seed", "--hints", "--rules"]),
    "baselines": ([], ["--game", "--games", "--seed", "--workers", "--no-public-agent", "--force"]),
    "bench engine": ([], ["--game", "--games", "--seed", "--json"]),
    "simulate": ([], ["--rules", "--games", "--seed", "--json"]),
    "serve": (["--port"], ["--host"]),
}
#: what a command may write where it was given no output (relative to its working folder)
DEFAULT_OUTPUTS = ("runs", "reports", "optuna.db", "mlflow.db", "mlruns")
#: budgets a hostile value must not replace by a large valid one
SMALL_FLAGS = {"--games", "--deals", "--epochs", "--games-per-epoch", "--eval-games", "--resamples", "--trials",
               "--repeats", "--workers", "--actors", "--hidden", "--heartbeat"}


@st.composite
def command_lines(draw) -> tuple[list[str], str]:
    name = draw(st.sampled_from(sorted(COMMANDS)))
    required, optional = COMMANDS[name]
    argv = name.split()
    flags = list(required) + draw(st.lists(st.sampled_from(optional), max_size=5, unique=True))
    for flag in flags:
        if flag in BOOL:
            argv.append(flag)
            continue
        if flag in required and draw(st.integers(0, 19)) == 0:
            continue  # a required flag left out
        hostile = draw(st.integers(0, 9)) < 2
        bad = st.sampled_from(HOSTILE + PAST_BOUNDS.get(flag, [])) | st.text(max_size=4)
        value = draw(bad if hostile else st.sampled_from(GOOD[flag]))
        argv += [flag, value]
    if name in ("train", "imitate", "tune", "evaluate", "behaviour", "baselines", "tournament", "roundrobin",
                "duel", "simulate", "bench engine"):
        for flag, value in (("--epochs", "1"), ("--games-per-epoch", "2"), ("--eval-every", "0"), ("--games", "4"),
                            ("--deals", "1"), ("--workers", "1"), ("--resamples", "2"), ("--trials", "1")):
            if flag in optional + required and flag not in argv:
                argv += [flag, value]  # tiny budgets unless drawn
    if name == "train":
        argv += ["--no-progress", "--set", "hidden=8"]
    if name == "tune":
        argv += ["--params", "params.yaml", "--no-track"]
    if name in OUT_FILE + OUT_FOLDER and draw(st.booleans()):
        argv += ["--out", draw(st.sampled_from(["out/r", "out", "out/r.json", "params.yaml"]))]
    if name == "tune" and draw(st.booleans()):
        argv += ["--best-out", draw(st.sampled_from(["out/best.yaml", "out"]))]
    if draw(st.integers(0, 14)) == 0:
        argv.append(draw(st.sampled_from(["--bogus", "-x", "--games=", "extra"])))
    said = st.sampled_from(["0", "pass", "", "²", "99", "3D", "quit", "-1", "hello", "#0", "#99", "#", "3", "33",
                            "bid 1", "bid 3", "10JQKA"]) | st.text(max_size=3)
    stdin = draw(st.lists(said, max_size=6))
    return argv, "\n".join([*stdin, "quit"]) + "\n"


def _tracked_state() -> dict[str, tuple[int, int]]:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    out = {}
    for rel in filter(None, files.decode().split("\0")):
        p = ROOT / rel
        if p.is_file():
            st_ = p.stat()
            out[rel] = (st_.st_mtime_ns, st_.st_size)
    return out


def _small_params(folder: Path) -> None:
    from climbrl.yamlfile import load_yaml

    raw = load_yaml((ROOT / "params.yaml").read_text())
    raw["tune"].update(trials=1, epochs=1, games_per_epoch=2, eval_every=1, eval_games=4)
    raw["train"]["common"].update(hidden=8)
    import yaml

    (folder / "params.yaml").write_text(yaml.safe_dump(raw))


@pytest.fixture(scope="module")
def bad_checkpoints(tmp_path_factory) -> Path:
    """Policy files whose ``net_config`` was tampered with: a negative width, a huge one, a state
    size that is not the encoder's (the weights are a real tiny network's)."""
    import torch

    from climbrl.encoders import make_encoder
    from climbrl.learn.checkpoint import network_payload
    from climbrl.learn.network import make_net

    enc = make_encoder("big2")
    net = make_net(enc.state_dim, enc.move_dim, 8, value_head=True, generator=torch.Generator().manual_seed(0))
    folder = tmp_path_factory.mktemp("bad")
    for name, change in (("negative", {"hidden": -5}), ("wide", {"hidden": 10**6}), ("state", {"state_dim": 10**9})):
        payload = network_payload(net, "ppo", 1, enc)
        payload["net_config"] = {**payload["net_config"], **change}
        torch.save(payload, folder / f"{name}.pt")
    return folder


def _serve_without_a_server(host: str, port: int, **_: object) -> None:
    """``climbrl serve`` runs until interrupted; the fuzz checks what the command line hands it: a
    port a socket can bind (99999 reached ``bind`` before issue 51, an OverflowError)."""
    if not 0 <= port <= 65535:
        raise OverflowError(f"bind(): port must be 0-65535, got {port}")


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.fixture(scope="module")
def repo_state():
    before = _tracked_state()
    yield
    assert _tracked_state() == before, "the fuzzed commands changed a file of the repository"


@settings(max_examples=int(os.environ.get("CLIMBRL_FUZZ_EXAMPLES", "120")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
          phases=[p for p in Phase if p is not Phase.shrink or not os.environ.get("CLIMBRL_FUZZ_NO_SHRINK")])
@given(case=command_lines())
def test_any_command_line_ends_in_0_or_2_and_writes_only_its_output(case, tmp_path_factory, repo_state,
                                                                    bad_checkpoints, monkeypatch) -> None:
    argv, stdin = case
    work = tmp_path_factory.mktemp("fuzz")
    _small_params(work)
    shutil.copytree(bad_checkpoints, work / "bad")
    monkeypatch.setattr("climbrl.serve.server.serve", _serve_without_a_server)
    before = _files(work)
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.chdir(work)
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:  # argparse: --help (0) or a refused value (2)
            rc = e.code
    assert rc in (0, 2), (argv, rc, err.getvalue()[-2000:])
    assert "Traceback" not in err.getvalue(), (argv, err.getvalue()[-2000:])
    if rc == 0 and "--json" in argv:
        json.loads(out.getvalue(), parse_constant=lambda c: pytest.fail(f"{argv}: {c} in --json output"))
    given_out = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a in ("--out", "--best-out")]
    allowed = tuple(given_out) if given_out else DEFAULT_OUTPUTS
    if "tune" in argv:
        allowed += ("optuna.db", "runs")  # the study's store and its trials' runs
    new = _files(work) - before
    def own(f: str) -> bool:  # the output, inside it, or a folder made to hold it
        return any(f == a or f.startswith(a.rstrip("/") + "/") or a.startswith(f + "/") for a in allowed)

    stray = sorted(f for f in new if not own(f))
    assert not stray, (argv, stray)
