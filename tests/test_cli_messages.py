"""Issue 31, sections 4-6: what a careless user types gets one line that names the problem (exit 2),
never a traceback, and nothing that is wrong is accepted without a word. Each case is a command
of the issue; every one of them failed (traceback, silence or an unnamed message) before."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from climbrl.cli import CliError, main
from climbrl.params import ParamsError, parse_params
from climbrl.yamlfile import YamlError, load_yaml

ROOT = Path(__file__).resolve().parents[1]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(list(argv))
    except SystemExit as e:  # argparse's own errors
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


TINY_TRAIN = ("train", "--algo", "ppo", "--epochs", "1", "--games-per-epoch", "1", "--eval-every", "0",
              "--no-progress")


@pytest.mark.parametrize("argv,message", [
    # section 4: the learner twice, a --set value that is not YAML
    ([*TINY_TRAIN, "--set", "algo=dqn"], "--set algo=dqn names learner 'dqn', --algo names 'ppo'"),
    ([*TINY_TRAIN, "--set", "lr=[1"], "--set 'lr=[1': the value is not valid YAML"),
    # section 5: accepted without a word
    ([*TINY_TRAIN, "--set", "extra=1"], "train.extra: unknown field"),
    (["evaluate", "--agent", "random:foo", "--opponents", "random", "--games", "4", "--workers", "1"],
     "agent 'random:foo': random takes no argument"),
    (["tune", "--trials", "-2"], "argument --trials: must be an integer >= 0, got -2"),
    # section 6: messages that name the flag
    (["evaluate", "--agent", "random", "--opponents", "random", "--seed", "-1"],
     "argument --seed: a seed is an integer from 0 to 4294967295, got -1"),
    (["simulate", "--seed", "-1"], "argument --seed: a seed is an integer from 0 to 4294967295, got -1"),
    ([*TINY_TRAIN, "--seed", str(2**64)], "argument --seed: a seed is an integer"),
    (["imitate", "--seed", str(2**64)], "argument --seed: a seed is an integer"),
    (["duel", "--agent", "random", "--opponent", "random", "--seed", str(2**64)], "argument --seed"),
    (["play", "--seed", str(2**64)], "argument --seed"),
    (["moves", "--game", "doudizhu", "--hand", "345", "--prev", "3X"], "--prev"),
    (["moves", "--game", "doudizhu", "--hand", "345", "--prev", "bid1"], "--prev 'bid1' is not a play of cards"),
    (["evaluate", "--agent", "random", "--opponents", "random", "--games", "0"], "argument --games: must be a "
     "positive integer, got 0"),
])
def test_a_bad_command_gets_one_line_naming_it(capsys, tmp_path, monkeypatch, argv, message) -> None:
    monkeypatch.chdir(tmp_path)  # nothing of these may be written anywhere; a train would write runs/ here
    rc, out, err = run(capsys, *argv)
    assert rc == 2, (rc, out, err)
    assert message in err, err
    assert "Traceback" not in err
    assert not list(tmp_path.iterdir()), "a refused command left files behind"


def test_the_learner_may_be_repeated_where_it_agrees(tmp_path) -> None:
    from climbrl.cli import _overrides, build_parser

    cfg = tmp_path / "c.yaml"
    cfg.write_text("algo: dqn\nlr: 0.001\n")
    args = build_parser().parse_args(["train", "--algo", "dqn", "--config", str(cfg)])
    assert _overrides(args) == {"lr": 0.001}
    args = build_parser().parse_args(["train", "--algo", "ppo", "--config", str(cfg)])
    with pytest.raises(CliError, match=f"--config {cfg} names learner 'dqn', --algo names 'ppo'"):
        _overrides(args)


@pytest.mark.parametrize("text,name", [("lr: 0.1\nlr: 0.2\n", "duplicate"), (b"\xff\xfe\x00binary", "binary")])
def test_a_bad_config_file_is_named(capsys, tmp_path, monkeypatch, text, name) -> None:
    cfg = tmp_path / f"{name}.yaml"
    cfg.write_bytes(text if isinstance(text, bytes) else text.encode())
    monkeypatch.chdir(tmp_path)
    rc, _, err = run(capsys, *TINY_TRAIN, "--config", str(cfg))
    assert rc == 2 and f"cannot read --config {cfg}" in err, err
    if name == "duplicate":
        assert "key 'lr' is given twice (lines 1 and 2)" in err


def test_one_opponent_in_a_set_is_one_name_not_its_letters() -> None:
    from climbrl.config import train_config

    assert train_config("ppo", eval_opponents="random").eval_opponents == ("random",)
    assert train_config("ppo", eval_opponents="random, greedy").eval_opponents == ("random", "greedy")
    with pytest.raises(ValueError, match="eval_opponents: must be a list of agent names"):
        train_config("ppo", eval_opponents=[1, 2])


def test_a_seed_beyond_the_limit_is_refused_by_the_config() -> None:
    from climbrl.config import ConfigError, train_config

    with pytest.raises(ConfigError, match="train.seed: a seed is an integer from 0 to 4294967295"):
        train_config("ppo", seed=2**64)
    with pytest.raises(ConfigError, match="train.eval_seed: must be an integer >= 0"):
        train_config("ppo", eval_seed=-1)


@pytest.mark.parametrize("storage,message", [
    ("bogus://x", "not a database URL Optuna can use"),
    ("sqlite:////nonexistent/dir/x.db", "the folder /nonexistent/dir does not exist"),
])
def test_a_storage_that_cannot_work_is_refused_before_any_trial(capsys, tmp_path, monkeypatch, storage,
                                                               message) -> None:
    monkeypatch.chdir(tmp_path)  # restored afterwards: a later test in this worker reads files relative to the repo
    rc, _, err = run(capsys, "tune", "--params", str(ROOT / "params.yaml"), "--storage", storage, "--trials", "1",
                     "--no-track")
    assert rc == 2 and message in err and "Traceback" not in err, err
    assert not list(tmp_path.iterdir())


# --- params.yaml: unknown keys in every section, duplicate keys ------------------------------------

def _params() -> dict:
    return load_yaml((ROOT / "params.yaml").read_text())


@pytest.mark.parametrize("section,key", [("seeds", "dealz"), ("evaluate", "repeatz"), ("baselines", "gamez"),
                                         ("tournament", "deal"), ("tracking", "uri"), ("report", "titel"),
                                         ("simulate", "games_")])
def test_an_unknown_key_in_any_section_is_refused(section, key) -> None:
    raw = _params()
    raw[section][key] = 5
    with pytest.raises(ParamsError, match=f"{section}.{key}: unknown key"):
        parse_params(raw)


def test_an_unknown_key_in_a_study_section_names_the_study() -> None:
    raw = _params()
    raw["studies"]["doudizhu"]["deep"]["repeatz"] = 3
    with pytest.raises(ParamsError, match="studies.doudizhu.deep.repeatz: unknown key"):
        parse_params(raw, "doudizhu")


def test_the_committed_params_have_no_unknown_key() -> None:
    raw = _params()
    parse_params(raw)
    for study in raw.get("studies", {}):
        parse_params(raw, study)


def test_a_duplicate_key_is_refused_wherever_it_stands(tmp_path) -> None:
    with pytest.raises(YamlError, match=r"key 'deals' is given twice \(lines 2 and 3\)"):
        load_yaml("seeds:\n  deals: 5\n  deals: 6\n")
    with pytest.raises(YamlError, match="key 'a' is given twice"):
        load_yaml("{a: 1, a: 2}")
    assert load_yaml("x: &A {a: 1}\ny:\n  <<: *A\n  a: 2\n") == {"x": {"a": 1}, "y": {"a": 2}}  # a merge may override
    from climbrl.params import load_params

    p = tmp_path / "params.yaml"
    p.write_text((ROOT / "params.yaml").read_text() + "\nrules: standard\n")
    with pytest.raises(ParamsError, match="key 'rules' is given twice"):
        load_params(p)


def test_a_float_without_a_dot_is_a_number_as_yaml_1_2_reads_it(capsys, tmp_path, monkeypatch) -> None:
    """PyYAML reads ``3e-5`` as a string (YAML 1.1); the project's files and ``--set`` read it as a number."""
    assert load_yaml("lr: 3e-5\nb: -1E4\nc: 2.5e-3\nd: 1e\ne: 12\n") == {"lr": 3e-5, "b": -1e4, "c": 2.5e-3,
                                                                         "d": "1e", "e": 12}
    import yaml

    assert yaml.safe_load("3e-5") == "3e-5"  # PyYAML's own loader is left as it is
    monkeypatch.chdir(tmp_path)
    rc, out, err = run(capsys, *TINY_TRAIN, "--set", "lr=3e-5", "--out", "r")
    assert rc == 0, err
    from climbrl.learn.checkpoint import load

    assert load(tmp_path / "r" / "checkpoint.pt")["config"]["lr"] == 3e-5


# --- play: input that is not a move -----------------------------------------------------------------

def test_play_answers_input_that_is_not_a_move_and_goes_on() -> None:
    from climbrl.play import play

    lines = iter(["²", "", "quit"])
    said: list[str] = []
    assert play(seed=2, opponents=("random",) * 3, ask=lambda _: next(lines), out=said.append) is None
    text = "\n".join(said)
    assert "not understood" in text  # '²' is not a number of a move
    assert "an empty line is not a move" in text
    assert said[-1] == "you left the game"


def test_play_from_a_pipe_with_a_superscript_digit(tmp_path) -> None:
    p = subprocess.run([sys.executable, "-m", "climbrl.cli", "play", "--opponents", "random", "--seed", "2"],
                       input="²\nquit\n", capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    assert "you left the game" in p.stdout


# --- the process's end: a closed pipe, Ctrl-C ---------------------------------------------------------

def test_a_reader_that_leaves_early_is_no_error(tmp_path) -> None:
    """``climbrl moves ... | head -1`` where the reader has left before the listing is written (``head
    -c 0`` exits at once; the interpreter starts long after): the write meets a closed pipe, and the
    command ends with status 0 and says nothing."""
    q = subprocess.run(f"set -o pipefail; {sys.executable} -m climbrl.cli moves --game doudizhu "
                       "--hand 3334445556667778889T | head -c 0", shell=True, capture_output=True,
                       text=True, timeout=120, cwd=tmp_path, executable="/bin/bash")
    assert q.returncode == 0, q.stderr
    assert q.stderr == ""


def test_ctrl_c_during_training_is_one_line(tmp_path) -> None:
    """SIGINT while a training runs: a line that says what is kept, exit 130, no traceback."""
    p = subprocess.Popen([sys.executable, "-m", "climbrl.cli", "train", "--algo", "ppo", "--epochs", "500",
                          "--games-per-epoch", "4", "--eval-every", "0", "--no-progress", "--set", "hidden=16",
                          "--out", str(tmp_path / "run")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=tmp_path,
                         # SIGINT as a terminal leaves it, whatever this worker's disposition (an ignored
                         # signal is inherited across exec, and then Python installs no handler)
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not (tmp_path / "run" / "checkpoint.pt").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert (tmp_path / "run" / "checkpoint.pt").exists(), "no checkpoint within 120 s"
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, (p.returncode, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert "interrupted; what was checkpointed is kept (--resume continues it)" in err


def test_a_checkpoint_from_before_extra_was_removed_still_resumes() -> None:
    """``extra`` (a free mapping nothing read, which took ``--set extra=1`` silently) is gone; a
    checkpoint that holds it at its old default resumes, one that set it does not."""
    from climbrl.config import train_config
    from climbrl.learn.checkpoint import resume_conflicts

    cfg = train_config("ppo", epochs=2)
    assert resume_conflicts(cfg, {"config": {**cfg.to_dict(), "extra": {}}, "epoch": 1}) == []
    assert resume_conflicts(cfg, {"config": {**cfg.to_dict(), "extra": {"a": 1}}, "epoch": 1}) == \
        ["extra={'a': 1} there, None here"]
