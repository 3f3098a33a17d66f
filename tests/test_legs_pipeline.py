"""``python -m pipeline.legs`` (issue 46): a live run trained in legs from its committed state, its
curve measured once per kept policy, and a report with every leg's ledger."""

from __future__ import annotations

import json

import pytest
from pipeline import legs

from climbrl.learn import train as train_mod
from tests.resume import FakeClock

PARAMS = """
games:
  tiny:
    train: {algo: mcq, game: big2, epochs: 4, games_per_epoch: 8, hidden: 16, seed: 3, eval_every: 0,
            keep_policy_every: 2}
    curve: {opponents: [random], deals: 2, seed: 5}
    evaluate: {opponents: [random], deals: 2, deal_set: data/eval_seeds.json}
"""


def test_two_legs_continue_one_run_and_the_curve_keeps_its_points(tmp_path, monkeypatch) -> None:
    (tmp_path / "params.yaml").write_text(PARAMS)
    params = legs.load_strong_params(tmp_path / "params.yaml")
    state = tmp_path / "state"
    monkeypatch.setattr(train_mod.time, "perf_counter", FakeClock())
    first = legs.run_leg("tiny", params, hours=45 / 3600, state=state, workers=1)
    monkeypatch.undo()
    assert first["stopped"] == "time limit" and first["epochs_done"] < 4
    c1 = json.loads((state / "tiny" / legs.CURVE).read_text())
    measured = {p["epoch"]: p for p in c1["points"]}
    second = legs.run_leg("tiny", params, hours=1.0, state=state, workers=1)
    assert second["stopped"] == "done" and second["legs"] == 2
    c2 = json.loads((state / "tiny" / legs.CURVE).read_text())
    assert [p["epoch"] for p in c2["points"]] == [first["epochs_done"], 2, 4]  # each leg ends in a point
    for p in c2["points"]:  # a point measured in the first leg is kept as it was, not measured again
        if p["epoch"] in measured:
            assert p == measured[p["epoch"]]
        assert p["random"]["all"]["games"] == 2 * 4
    hours = [p["cpu_hours"] for p in c2["points"]]
    assert hours == sorted(hours) and hours[-1] == pytest.approx(
        sum(r["cpu_seconds"] for r in second["history"]) / 3600)
    text = legs.report(params, state, tmp_path / "reports")
    assert "| 1 |" in text and "| 2 |" in text and "time limit" in text and "done" in text
    assert (tmp_path / "reports" / "report.md").read_text() == text


def test_a_run_started_again_does_not_reuse_the_old_curve(tmp_path) -> None:
    (tmp_path / "params.yaml").write_text(PARAMS.replace("epochs: 4", "epochs: 2"))
    params = legs.load_strong_params(tmp_path / "params.yaml")
    state = tmp_path / "state"
    legs.run_leg("tiny", params, hours=1.0, state=state, workers=1)
    path = state / "tiny" / legs.CURVE
    old = json.loads(path.read_text())
    old["points"][0]["random"]["all"]["win_rate"] = 2.0  # a point from another run would show
    old["lineage"] = "another run"
    path.write_text(json.dumps(old))
    again = legs.curve("tiny", params, state, workers=1)
    assert all(p["random"]["all"]["win_rate"] <= 1 for p in again["points"])


@pytest.mark.parametrize("argv, says", [
    (["run", "tiny", "--hours", "0"], "--hours"),
    (["run", "tiny", "--hours", "100"], "--hours"),
    (["run", "nosuch"], "name a run"),
    (["curve", "tiny"], "no state"),
])
def test_bad_commands_end_in_one_line(tmp_path, capsys, argv, says) -> None:
    (tmp_path / "params.yaml").write_text(PARAMS)
    assert legs.main([*argv, "--params", str(tmp_path / "params.yaml"), "--state", str(tmp_path / "s"),
                      "--no-track"]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and "\n" not in err and "Traceback" not in err
