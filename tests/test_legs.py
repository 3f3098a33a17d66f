"""Runs trained in legs (issue 46, :mod:`climbrl.learn.legs`): a leg stops cleanly at its time
limit after a whole epoch, the next leg resumes it to the numbers of an uninterrupted run, and the
ledger lists every leg with its epochs and CPU time."""

from __future__ import annotations

import json

import pytest
import torch

from climbrl.config import train_config
from climbrl.learn import train as train_mod
from climbrl.learn.checkpoint import load
from climbrl.learn.legs import LEGS, read_legs
from climbrl.training import train
from tests.resume import FakeClock, untimed


def _cfg(epochs: int = 4):
    return train_config("mcq", game="big2", epochs=epochs, games_per_epoch=8, eval_every=0, keep_policy_every=0,
                        seed=5, hidden=16)


def test_a_leg_stops_at_its_time_limit_after_a_whole_epoch_and_the_next_continues_it(tmp_path, monkeypatch) -> None:
    straight = train(_cfg(), tmp_path / "straight", progress=False)
    assert straight["stopped"] == "done" and straight["legs"] == 1
    clock = FakeClock()
    monkeypatch.setattr(train_mod.time, "perf_counter", clock)
    first = train(_cfg(), tmp_path / "legs", progress=False, time_limit=45.0)
    monkeypatch.undo()
    assert first["stopped"] == "time limit"
    assert 0 < first["epochs_done"] < 4
    state = load(tmp_path / "legs" / "checkpoint.pt")
    assert state["epoch"] == first["epochs_done"]  # the checkpoint holds every epoch the leg finished
    second = train(_cfg(), tmp_path / "legs", resume=True, progress=False)
    assert second["stopped"] == "done"
    assert untimed(second["history"]) == untimed(straight["history"])
    a, b = load(tmp_path / "straight" / "policy.pt"), load(tmp_path / "legs" / "policy.pt")
    assert all(torch.equal(a["net"][k], b["net"][k]) for k in a["net"])
    legs = read_legs(tmp_path / "legs")
    assert [(leg["first_epoch"], leg["last_epoch"], leg["stopped"]) for leg in legs] == [
        (1, first["epochs_done"], "time limit"), (first["epochs_done"] + 1, 4, "done")]
    cpu = sum(r["cpu_seconds"] for r in second["history"])
    assert sum(leg["cpu_seconds"] for leg in legs) == pytest.approx(cpu)
    assert all(leg["commit"] and leg["cpu"] and leg["started"] for leg in legs)


def test_a_leg_killed_after_its_checkpoint_is_marked_killed_at_the_checkpoint_epoch(tmp_path) -> None:
    train(_cfg(epochs=2), tmp_path, progress=False)
    ledger = json.loads((tmp_path / LEGS).read_text())
    ledger[0].update(last_epoch=3, stopped="running")  # a leg that wrote epoch 3 to its ledger, not its checkpoint
    (tmp_path / LEGS).write_text(json.dumps(ledger))
    train(_cfg(epochs=3), tmp_path, resume=True, progress=False)
    legs = read_legs(tmp_path)
    assert [(leg["first_epoch"], leg["last_epoch"], leg["stopped"]) for leg in legs] == [
        (1, 2, "killed"), (3, 3, "done")]


def test_a_run_from_before_ledgers_gets_an_unrecorded_first_leg(tmp_path) -> None:
    train(_cfg(epochs=2), tmp_path, progress=False)
    (tmp_path / LEGS).unlink()
    summary = train(_cfg(epochs=3), tmp_path, resume=True, progress=False)
    legs = read_legs(tmp_path)
    assert [(leg["first_epoch"], leg["last_epoch"], leg["stopped"]) for leg in legs] == [
        (1, 2, "unrecorded"), (3, 3, "done")]
    assert legs[0]["cpu_seconds"] == pytest.approx(sum(r["cpu_seconds"] for r in summary["history"][:2]))


def test_epochs_a_checkpoint_holds_beyond_its_ledger_go_to_the_last_leg(tmp_path) -> None:
    train(_cfg(epochs=2), tmp_path, progress=False)
    ledger = json.loads((tmp_path / LEGS).read_text())
    ledger[0].update(last_epoch=1, stopped="running")  # killed after epoch 2's checkpoint, before its ledger
    (tmp_path / LEGS).write_text(json.dumps(ledger))
    train(_cfg(epochs=3), tmp_path, resume=True, progress=False)
    assert [(leg["first_epoch"], leg["last_epoch"], leg["stopped"]) for leg in read_legs(tmp_path)] == [
        (1, 2, "killed"), (3, 3, "done")]


def test_a_fresh_run_starts_a_new_ledger_and_a_bad_time_limit_is_refused(tmp_path) -> None:
    (tmp_path / LEGS).write_text("not json")
    train(_cfg(epochs=1), tmp_path, progress=False)
    assert len(read_legs(tmp_path)) == 1
    with pytest.raises(ValueError, match="time_limit"):
        train(_cfg(epochs=1), tmp_path / "x", progress=False, time_limit=0)


def test_climbrl_train_runs_a_leg_and_refuses_a_bad_limit(tmp_path, capsys) -> None:
    from climbrl.cli import main

    out = tmp_path / "run"
    argv = ["train", "--algo", "mcq", "--epochs", "2", "--games-per-epoch", "4", "--eval-every", "0", "--set",
            "hidden=8", "--no-progress", "--out", str(out)]
    assert main([*argv, "--time-limit", "1"]) in (None, 0)
    assert [leg["stopped"] for leg in read_legs(out)] == ["done"]
    capsys.readouterr()
    with pytest.raises(SystemExit) as e:
        main([*argv, "--resume", "--time-limit", "0"])
    assert e.value.code == 2 and "--time-limit" in capsys.readouterr().err
