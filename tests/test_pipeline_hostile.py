"""The pipeline commands under hostile params and input (issue 51, findings 1, 7, 8 and 10): a
run is never deleted before its replacement is known good (an invalid ``continue.policy`` leaves
the trained run untouched; a run that starts over is moved aside, not deleted; an unreadable
checkpoint is refused, not removed), names from params files stay plain names, bad values are
refused rather than read as something else, and every refusal is status 2 with one line, Ctrl-C
status 130, never a traceback."""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from pipeline import champion, params_io, seeded, seeds, strong, tuning
from pipeline.params_io import ParamsError

from climbrl.agents.runner import deal_seeds
from climbrl.config import train_config
from climbrl.learn import checkpoint as ckpt
from climbrl.learn.registry import make_learner
from tests.study_params import study_folder

TINY = {"algo": "dmc", "epochs": 1, "games_per_epoch": 2, "hidden": 8, "minibatch_decisions": 64, "eval_every": 0,
        "keep_policy_every": 1, "seed": 0, "rules": "paper"}
BIG2 = {"train": TINY, "curve": {"opponents": ["heuristic"], "deals": 2, "seed": 3},
        "evaluate": {"opponents": ["random"], "deals": 3, "deal_set": "deals.json"}}
MORE = {**BIG2, "train": {**TINY, "game": "big2", "seed": 1},
        "continue": {"policy": "runs/strong/big2/policy.pt", "curve": "curve.json"}}


def _strong_params(folder: Path, **runs: dict) -> str:
    path = folder / "strong.yaml"
    path.write_text(yaml.safe_dump({"games": runs or {"big2": BIG2, "big2-more": MORE}}))
    return str(path)


def _with(raw: dict, dotted: str, value: object) -> dict:
    """A deep copy of ``raw`` with the key ``a.b.c`` set to ``value`` (removed for ``...``)."""
    out = json.loads(json.dumps(raw))
    *path, last = dotted.split(".")
    node = out
    for k in path:
        node = node[k]
    if value is ...:
        del node[last]
    else:
        node[last] = value
    return out


def _run(main, argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as e:
            rc = e.code
    return rc, err.getvalue()


def _refused(main, argv: list[str], *words: str, progress: bool = False) -> str:
    """``main(argv)`` ends with status 2 and one line on stderr naming each of ``words`` (after the
    lines of the work it had started, where ``progress``)."""
    rc, err = _run(main, argv)
    assert rc == 2, err
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert "Traceback" not in err and len(errors) == 1 and err.strip().splitlines()[-1] == errors[0], err
    assert progress or len(err.strip().splitlines()) == 1, err
    for w in words:
        assert w in err, (w, err)
    return err


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A folder with a tiny trained Big 2 run (``runs/strong/big2``), a run continued from its
    policy (``runs/strong/big2-more``) and a Dou Dizhu policy (``ddz.pt``): paths relative to it."""
    root = tmp_path_factory.mktemp("strong")
    (root / "deals.json").write_text(json.dumps({"seed": 1, "deals": deal_seeds(1, 4, "evaluation")}))
    (root / "curve.json").write_text("{}")
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        params = strong.load_strong_params(Path(_strong_params(root)))
        for run in params:
            strong.train_game(run, params, runs=Path("runs/strong"), track=False)
        learner = make_learner(train_config("dmc", game="doudizhu", rules="douzero", hidden=8))
        ckpt.save_atomic(ckpt.network_payload(learner.net, "dmc", 1, learner.encoder), root / "ddz.pt")
    return root


@pytest.fixture()
def work(trained, tmp_path, monkeypatch) -> Path:
    """A copy of :func:`trained` as the working folder."""
    folder = tmp_path / "w"
    shutil.copytree(trained, folder)
    monkeypatch.chdir(folder)
    return folder


# --- finding 1: a changed continue.policy that is invalid loses nothing -------------------------------

@pytest.mark.parametrize("policy", ["ddz.pt", "/etc/passwd", "missing.pt", "runs/strong/big2/metrics.csv"])
def test_an_invalid_continue_policy_leaves_the_trained_run_untouched(work, policy) -> None:
    before = _snapshot(work / "runs")
    path = _strong_params(work, big2=BIG2, **{"big2-more": _with(MORE, "continue.policy", policy)})
    _refused(strong.main, ["train", "big2-more", "--params", path, "--no-track"], "continue.policy", policy)
    assert _snapshot(work / "runs") == before


def test_a_run_that_starts_over_is_moved_aside_not_deleted(work) -> None:
    old = _snapshot(work / "runs" / "strong" / "big2")
    path = _strong_params(work, big2=_with(BIG2, "train.seed", 5))
    rc, err = _run(strong.main, ["train", "big2", "--params", path, "--no-track"])
    assert rc == 0, err
    aside = list((work / "runs" / "strong").glob(".previous-*/big2"))
    assert len(aside) == 1 and _snapshot(aside[0]) == old
    assert str(aside[0].relative_to(work)) in err and "starting over" in err
    assert ckpt.load(work / "runs" / "strong" / "big2" / "checkpoint.pt")["config"]["seed"] == 5


# --- findings 7 and 8: strong params refused in one line, never read as something else -----------------

@pytest.mark.parametrize(("key", "value", "words"), [
    ("curve.deals", "x", ["games.big2.curve.deals", "'x'"]),
    ("curve.deals", 0, ["games.big2.curve.deals"]),
    ("curve.seed", [1], ["games.big2.curve.seed", "[1]"]),
    ("curve.seed", True, ["games.big2.curve.seed", "True"]),
    ("curve.seed", -3, ["games.big2.curve.seed"]),
    ("curve.opponents", ["nobody"], ["games.big2.curve.opponents", "nobody"]),
    ("curve.opponents", "heuristic", ["games.big2.curve.opponents"]),
    ("curve.extra", 1, ["games.big2.curve", "extra"]),
    ("evaluate.deals", -1, ["games.big2.evaluate.deals", "-1"]),
    ("evaluate.deals", 10**12, ["games.big2.evaluate.deals"]),
    ("evaluate.deal_set", ..., ["games.big2.evaluate", "deal_set"]),
    ("evaluate.deal_set", 5, ["games.big2.evaluate.deal_set"]),
    ("evaluate.opponents", [], ["games.big2.evaluate.opponents"]),
    ("train.hidden", "wide", ["hidden"]),
])
def test_bad_strong_params_are_refused_in_one_line(tmp_path, key, value, words) -> None:
    path = _strong_params(tmp_path, big2=_with(BIG2, key, value))
    for step in ("train", "curve", "final", "report"):
        _refused(strong.main, [step, "big2", "--params", path], str(path), *words)


@pytest.mark.parametrize("text", ["games: {big2: [1", "games: {}\ngames: {}\n", "\x00\x01", ""])
def test_an_unreadable_strong_params_file_is_refused_in_one_line(tmp_path, text) -> None:
    path = tmp_path / "strong.yaml"
    path.write_text(text)
    _refused(strong.main, ["report", "--params", str(path)], str(path))
    _refused(strong.main, ["report", "--params", str(tmp_path / "none.yaml")], "none.yaml")


def test_a_run_name_that_is_not_a_plain_name_is_refused(tmp_path) -> None:
    for bad in ("../escaped", ".hidden", "a/b", "x..y"):
        with pytest.raises(ParamsError, match="not a plain name"):
            strong.load_strong_params(Path(_strong_params(tmp_path, **{bad: BIG2})))


def test_the_final_step_refuses_a_deal_set_it_cannot_use(work) -> None:
    path = _strong_params(work, big2=_with(BIG2, "evaluate.deal_set", "nowhere.json"))
    _refused(strong.main, ["final", "big2", "--params", path, "--workers", "1"], "evaluate.deal_set", "nowhere.json")
    path = _strong_params(work, big2=_with(BIG2, "evaluate.deals", 5))  # the set holds 4
    _refused(strong.main, ["final", "big2", "--params", path, "--workers", "1"], "evaluate.deals", "4 deals")


def test_ctrl_c_during_train_is_status_130_in_one_line(work, monkeypatch) -> None:
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(strong, "train_game", interrupted)
    rc, err = _run(strong.main, ["train", "big2", "--params", _strong_params(work), "--no-track"])
    assert rc == 130 and "Traceback" not in err and err.strip().splitlines() == ["python -m pipeline.strong: "
                                                                                 "interrupted"]


# --- finding 7: tuning and champion -------------------------------------------------------------------

def test_a_second_tuning_study_on_a_busy_folder_is_refused_in_one_line(tmp_path, monkeypatch) -> None:
    from pipeline import stages

    from climbrl.params import load_params
    from tests.test_tune_pipeline import STUDY, TUNING

    study_folder(tmp_path, monkeypatch, STUDY)
    (tmp_path / "tune.yaml").write_text(yaml.safe_dump(TUNING))
    stages.make_seeds(load_params("params.yaml"))
    lock = tmp_path / "runs" / "tune" / "study" / f"optuna.db.{tuning.study_name('big2', 'ppo')}.lock"
    lock.parent.mkdir(parents=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another process runs the study
        os.write(fd, b"elsewhere:1\n")
        _refused(tuning.main, ["study", "--params", "tune.yaml", "--game", "big2"], "is being run by another process",
                 progress=True)
    finally:
        os.close(fd)


@pytest.mark.parametrize(("text", "argv", "words"), [
    (None, ["match", "nonexist"], ["nonexist"]),
    ("matches: [1\n", ["match", "heuristic"], ["params.yaml", "YAML"]),
    ("rules: paper\nrules: paper\n", ["report"], ["params.yaml", "twice"]),
    ("- 1\n", ["report"], ["params.yaml"]),
    ("missing", ["base"], ["nothere.yaml"]),
])
def test_every_champion_params_error_is_one_line(tmp_path, monkeypatch, text, argv, words) -> None:
    from tests.test_champion import _params

    path = _params(tmp_path)
    if text == "missing":
        path = tmp_path / "nothere.yaml"
    elif text is not None:
        path.write_text(text)
    monkeypatch.chdir(tmp_path)
    _refused(champion.main, ["--params", str(path), "--reports", str(tmp_path / "r"), *argv], *words)


def test_a_champion_match_name_must_be_a_plain_name(tmp_path) -> None:
    from tests.test_champion import _params

    m = {"agent": "search:S=4,K=3", "opponent": "heuristic", "deals": 3}
    with pytest.raises(ParamsError, match="not a plain name"):
        champion.load_champion_params(_params(tmp_path, matches={"../../evil": m, "heuristic": m}))


# --- finding 10: the seeds study's names, and a checkpoint it cannot read ------------------------------

def test_a_seeds_system_named_outside_its_folder_is_refused(tmp_path, monkeypatch) -> None:
    from tests.test_seeds import SEEDS, STUDY

    study_folder(tmp_path, monkeypatch, STUDY)
    raw = json.loads(json.dumps(SEEDS))
    raw["games"]["big2"]["systems"] = {"../../../escaped": {"base": "ppo", "lr": 0.01}}
    Path("seeds.yaml").write_text(yaml.safe_dump(raw))
    with pytest.raises(ParamsError, match=r"systems.*not a plain name"):
        seeds.load_seed_params("seeds.yaml")
    _refused(seeds.main, ["run", "--params", "seeds.yaml"], "seeds.yaml", "escaped")
    assert not (tmp_path.parent / "escaped").exists()


def test_train_resumable_never_deletes_a_run_it_cannot_read(tmp_path) -> None:
    out = tmp_path / "seed0"
    out.mkdir()
    (out / "checkpoint.pt").write_bytes(b"not a checkpoint")
    (out / "metrics.csv").write_text("epoch\n1\n")
    before = _snapshot(out)
    cfg = train_config("mcq", rules="paper", epochs=1, games_per_epoch=2, hidden=8, eval_every=0)
    with pytest.raises(ckpt.CheckpointError, match="checkpoint.pt"):
        seeded.train_resumable(cfg, out)
    assert _snapshot(out) == before


def test_train_resumable_moves_another_configs_run_aside(tmp_path) -> None:
    out = tmp_path / "seed0"
    cfg = train_config("mcq", rules="paper", epochs=1, games_per_epoch=2, hidden=8, eval_every=0)
    seeded.train_resumable(cfg, out)
    old = _snapshot(out)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        seeded.train_resumable(train_config("mcq", rules="paper", epochs=1, games_per_epoch=2, hidden=16,
                                            eval_every=0), out)
    aside = list(tmp_path.glob(".previous-*/seed0"))
    assert len(aside) == 1 and _snapshot(aside[0]) == old and str(aside[0]) in err.getvalue()
    assert ckpt.load(out / "checkpoint.pt")["config"]["hidden"] == 16


# --- the shared reader -----------------------------------------------------------------------------------

def test_the_params_reader_reads_as_the_project_does(tmp_path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("lr: 3e-5\n")
    assert params_io.read(path) == {"lr": 3e-5}
    path.write_text("a: 1\na: 2\n")
    with pytest.raises(ParamsError, match="'a' is given twice") as e:
        params_io.read(path)
    assert e.value.file == str(path)
    assert params_io.integer(3, path, "k", 1, 5) == 3
    for bad in (True, "3", 3.0, [3], 0, 6):
        with pytest.raises(ParamsError, match=r"k: must be an integer >= 1 and <= 5, got"):
            params_io.integer(bad, path, "k", 1, 5)
    import pickle

    again = pickle.loads(pickle.dumps(ParamsError("bad", "f.yaml", "a.b")))  # crosses a process pool whole
    assert (str(again), again.file, again.key) == ("f.yaml: a.b: bad", "f.yaml", "a.b")
