"""The strong learners' pipeline (issue 25, pipeline/strong.py): a tiny run of both games through
train (resumed, or started over when its settings change), the learning curve, the final
evaluation and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pipeline import strong

from climbrl.agents.runner import deal_seeds
from climbrl.learn import checkpoint as ckpt


def _params(tmp_path: Path, **train_changes: object) -> dict:
    seeds = {}
    for game in ("doudizhu", "big2"):
        seeds[game] = tmp_path / f"{game}-deals.json"
        seeds[game].write_text(json.dumps({"seed": 1, "deals": deal_seeds(1, 4, "evaluation")}))
    tiny = {"algo": "dmc", "epochs": 2, "games_per_epoch": 3, "hidden": 16, "minibatch_decisions": 64,
            "eval_every": 0, "keep_policy_every": 1, "seed": 0, **train_changes}
    raw = {"tracking": {"tracking_uri": f"sqlite:///{tmp_path / 'mlflow.db'}", "experiment": "strong-test"},
           "games": {"doudizhu": {"train": {**tiny, "rules": "douzero"},
                                  "curve": {"opponents": ["heuristic"], "deals": 2, "seed": 3},
                                  "evaluate": {"opponents": ["random"], "deals": 3,
                                               "deal_set": str(seeds["doudizhu"])}},
                     "big2": {"train": {**tiny, "rules": "paper"},
                              "curve": {"opponents": ["heuristic"], "deals": 2, "seed": 3},
                              "evaluate": {"opponents": ["random"], "deals": 3, "deal_set": str(seeds["big2"])}}}}
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    return strong.load_strong_params(path)


def test_the_strong_pipeline_trains_resumes_and_reports_both_games(tmp_path) -> None:
    runs, reports = tmp_path / "runs", tmp_path / "reports"
    params = _params(tmp_path)
    for game in params:
        strong.train_game(game, params, runs=runs, track=False)
    longer = _params(tmp_path, epochs=3)  # a bigger budget continues the run
    res = strong.train_game("doudizhu", longer, runs=runs, track=False)
    assert len(res["history"]) == 3 and (runs / "doudizhu" / "snapshots" / "epoch001.pt").exists()
    c = strong.curve("doudizhu", longer, runs=runs, reports=reports, workers=1)
    assert [p["epoch"] for p in c["points"]] == [1, 2, 3]
    hours = [p["cpu_hours"] for p in c["points"]]
    assert 0 < hours[0] < hours[1] < hours[2]
    first = c["points"][0]["heuristic"]
    assert set(first) == {"landlord", "peasants", "both"} and first["landlord"]["games"] == 2
    assert "adp" in first["both"]
    f = strong.final("doudizhu", longer, runs=runs, reports=reports, workers=1)
    assert f["deals"] == 3 and f["matches"]["random"]["landlord"]["games"] == 3
    b = strong.curve("big2", params, runs=runs, reports=reports, workers=1)
    assert b["points"][-1]["heuristic"]["all"]["games"] == 8  # 2 deals from every seat
    strong.final("big2", params, runs=runs, reports=reports, workers=1)
    md = strong.report(longer, reports=reports).read_text()
    assert "## doudizhu (`douzero` rules, dmc)" in md and "## big2 (`paper` rules, dmc)" in md
    assert "issue 25: >= 0.80 as landlord" in md and (reports / "figures" / "doudizhu.png").stat().st_size > 0
    # other settings start the folder over: the stage's output always matches its params
    res = strong.train_game("big2", _params(tmp_path, hidden=8), runs=runs, track=False)
    assert len(res["history"]) == 2 and ckpt.load(runs / "big2" / "checkpoint.pt")["config"]["hidden"] == 8


def test_strong_params_and_missing_runs_are_clear_errors(tmp_path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("games: {doudizhu: {train: {algo: dmc}}}\n")
    with pytest.raises(ValueError, match="games.doudizhu must hold exactly train, curve, evaluate"):
        strong.load_strong_params(path)
    params = _params(tmp_path)
    params["big2"]["train"]["gamma"] = 0.9
    path.write_text(yaml.safe_dump({"games": params}))
    with pytest.raises(ValueError, match="train.gamma: dmc learns"):
        strong.load_strong_params(path)
    with pytest.raises(FileNotFoundError, match="run python -m pipeline.strong train doudizhu first"):
        strong.curve("doudizhu", _params(tmp_path), runs=tmp_path / "nothing", reports=tmp_path / "r")
    assert strong.main(["train", "chess", "--params", str(tmp_path / "params.yaml")]) == 2
    md = strong.report(_params(tmp_path), reports=tmp_path / "empty").read_text()
    assert "Not run yet" in md


def test_the_default_strong_params_load() -> None:
    params = strong.load_strong_params()
    assert set(params) == {"doudizhu", "big2"} and params["doudizhu"]["train"]["algo"] == "dmc"
