"""The strong learners' pipeline (issue 25, pipeline/strong.py): a tiny run of both games through
train (resumed, or started over when its settings change), the learning curve, the final
evaluation and the report."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from pipeline import strong
from scipy import stats

from climbrl.agents.runner import deal_seeds
from climbrl.learn import checkpoint as ckpt
from climbrl.track import sha256_file


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
    assert "## doudizhu (`douzero` rules, dmc, self-play)" in md and "## big2 (`paper` rules, dmc, self-play)" in md
    assert "issue 25: >= 0.80 as landlord" in md and (reports / "figures" / "doudizhu.png").stat().st_size > 0
    assert set(json.loads((reports / "budget.json").read_text())) == {"doudizhu", "big2"}
    # other settings start the folder over: the stage's output always matches its params
    res = strong.train_game("big2", _params(tmp_path, hidden=8), runs=runs, track=False)
    assert len(res["history"]) == 2 and ckpt.load(runs / "big2" / "checkpoint.pt")["config"]["hidden"] == 8


def test_strong_params_and_missing_runs_are_clear_errors(tmp_path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("games: {doudizhu: {train: {algo: dmc}}}\n")
    with pytest.raises(ValueError, match=r"games.doudizhu must hold train, curve, evaluate \(and optionally imitate"):
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
    assert {"doudizhu", "big2"} <= set(params) and params["doudizhu"]["train"]["algo"] == "dmc"


def test_a_run_warm_started_from_behaviour_cloning(tmp_path) -> None:
    """A named run (``doudizhu-warm``) with an ``imitate`` section: the train step clones the
    teacher once into the run's folder and trains PPO from the student's weights against the
    heuristic; the curve starts at the student (epoch 0, at the cloning's CPU time) and counts the
    cloning in every point's CPU-hours; changed cloning settings start the run over."""
    base = _params(tmp_path)
    imitate = {"teacher": "heuristic", "games": 8, "epochs": 1, "workers": 1}
    warm = {"imitate": imitate, "train": {"algo": "ppo", "game": "doudizhu", "rules": "douzero", "epochs": 2,
                                          "games_per_epoch": 3, "hidden": 16, "minibatch_decisions": 64,
                                          "eval_every": 0, "keep_policy_every": 1, "seed": 0,
                                          "curriculum": "fixed_opponents", "fixed_opponents": ["heuristic"]},
            "curve": base["doudizhu"]["curve"], "evaluate": base["doudizhu"]["evaluate"]}
    path = tmp_path / "warm.yaml"
    path.write_text(yaml.safe_dump({"games": {"doudizhu-warm": warm}}))
    params = strong.load_strong_params(path)
    runs, reports = tmp_path / "runs", tmp_path / "reports"
    strong.train_game("doudizhu-warm", params, runs=runs, track=False)
    student = runs / "doudizhu-warm" / "imitation" / "policy.pt"
    cfg = ckpt.load(runs / "doudizhu-warm" / "checkpoint.pt")["config"]
    assert student.exists() and cfg["init_policy"] == str(student) and cfg["algo"] == "ppo"
    made = student.stat().st_mtime_ns
    longer = json.loads(json.dumps(warm))
    longer["train"]["epochs"] = 3
    path.write_text(yaml.safe_dump({"games": {"doudizhu-warm": longer}}))
    res = strong.train_game("doudizhu-warm", strong.load_strong_params(path), runs=runs, track=False)
    assert len(res["history"]) == 3 and student.stat().st_mtime_ns == made  # resumed; cloned once
    c = strong.curve("doudizhu-warm", strong.load_strong_params(path), runs=runs, reports=reports, workers=1)
    cloning = json.loads((student.parent / "imitation.json").read_text())["cpu_s"] / 3600
    assert [p["epoch"] for p in c["points"]] == [0, 1, 2, 3] and c["points"][0]["cpu_hours"] == cloning
    assert all(p["cpu_hours"] > cloning for p in c["points"][1:]) and c["game"] == "doudizhu"
    strong.final("doudizhu-warm", strong.load_strong_params(path), runs=runs, reports=reports, workers=1)
    md = strong.report(strong.load_strong_params(path), reports=reports).read_text()
    assert "## doudizhu-warm (`douzero` rules, ppo, against heuristic)" in md
    assert "Started from behaviour cloning of `heuristic` (8 games" in md and "issue 25: >= 0.80" in md
    other = json.loads(json.dumps(longer))
    other["imitate"]["games"] = 12
    path.write_text(yaml.safe_dump({"games": {"doudizhu-warm": other}}))
    res = strong.train_game("doudizhu-warm", strong.load_strong_params(path), runs=runs, track=False)
    assert len(res["history"]) == 3 and student.stat().st_mtime_ns != made
    assert json.loads((student.parent / "imitation.json").read_text())["config"]["games"] == 12
    made = student.stat().st_mtime_ns
    other["imitate"]["workers"] = 2  # the worker count changes no number: the cloning stays
    path.write_text(yaml.safe_dump({"games": {"doudizhu-warm": other}}))
    strong.train_game("doudizhu-warm", strong.load_strong_params(path), runs=runs, track=False)
    assert student.stat().st_mtime_ns == made
    cold = {k: v for k, v in other.items() if k != "imitate"}  # no cloning any more: its folder goes
    path.write_text(yaml.safe_dump({"games": {"doudizhu-warm": cold}}))
    strong.train_game("doudizhu-warm", strong.load_strong_params(path), runs=runs, track=False)
    assert not student.parent.exists()
    assert not ckpt.load(runs / "doudizhu-warm" / "checkpoint.pt")["config"]["init_policy"]
    bad = json.loads(json.dumps(warm))
    bad["imitate"]["holdout"] = 1.0
    path.write_text(yaml.safe_dump({"games": {"doudizhu-warm": bad}}))
    with pytest.raises(ValueError, match="holdout"):
        strong.load_strong_params(path)


def test_a_run_under_the_public_agents_rules_meets_it_and_runs_without_it(tmp_path, monkeypatch) -> None:
    """``big2-public``: Big 2 under ``charlesworth`` rules, its curve and final evaluation against the
    public agent, the points per game with their interval over the deals (replayed game by game:
    the same games as the match), the points target read by rules; without the public agent's
    weights the same steps run, its matches recorded as not run and the report saying why."""
    from climbrl.paths import charlesworth_weights_path
    from tests.reference import require_external

    require_external(charlesworth_weights_path(), "the public agent's weights (shared/external/charlesworth-big2)")
    base = _params(tmp_path)
    run = {"train": {**base["big2"]["train"], "game": "big2", "rules": "charlesworth"},
           "curve": {"opponents": ["charlesworth", "heuristic"], "deals": 2, "seed": 3},
           "evaluate": {"opponents": ["charlesworth", "random"], "deals": 3,
                        "deal_set": base["big2"]["evaluate"]["deal_set"]}}
    path = tmp_path / "public.yaml"
    path.write_text(yaml.safe_dump({"games": {"big2-public": run}}))
    params = strong.load_strong_params(path)
    runs, reports = tmp_path / "runs", tmp_path / "reports"
    strong.train_game("big2-public", params, runs=runs, track=False)
    c = strong.curve("big2-public", params, runs=runs, reports=reports, workers=1)
    assert c["rules"] == "charlesworth" and not c["not_run"]
    assert c["points"][-1]["charlesworth"]["all"]["games"] == 8
    f = strong.final("big2-public", params, runs=runs, reports=reports, workers=1)
    pub = f["matches"]["charlesworth"]["all"]
    assert pub["games"] == 12 and pub["mean_reward_low"] < pub["mean_reward"] < pub["mean_reward_high"]
    md = strong.report(params, reports=reports).read_text()
    assert "## big2-public (`charlesworth` rules, dmc, self-play)" in md
    assert "points per game above 0 against three public agents" in md and ">= 0.40 against three" not in md
    assert "| charlesworth all | heuristic all | charlesworth points | heuristic points |" in md

    monkeypatch.setenv("CLIMBRL_EXTERNAL", str(tmp_path / "no-external"))  # a clone with no ../shared
    c = strong.curve("big2-public", params, runs=runs, reports=reports, workers=1)
    f = strong.final("big2-public", params, runs=runs, reports=reports, workers=1)
    assert "charlesworth" not in c["points"][-1] and "heuristic" in c["points"][-1]
    assert set(f["matches"]) == {"random"} and "weights are missing" in f["not_run"]["charlesworth"]
    md = strong.report(params, reports=reports).read_text()
    assert "| charlesworth | | not run here: the public agent's weights are missing" in md
    assert "points per game above 0 against three public agents (the DMC anchor +1.84) | not measured" in md


def test_the_report_stage_reads_every_run_of_the_params() -> None:
    """``report`` depends on each run's curve and final evaluation: a run added to the params and not
    to the stage's deps would leave the report stale."""
    deps = yaml.safe_load((Path(strong.__file__).parents[1] / "strong" / "dvc.yaml").read_text())[
        "stages"]["report"]["deps"]
    for run in strong.load_strong_params():
        assert {f"reports/strong/{run}/curve.json", f"reports/strong/{run}/final.json"} <= set(deps), run


def _curve(values: list[float], hours: list[float]) -> list[dict]:
    return [{"cpu_hours": h, "heuristic": {"all": {"win_rate": v}}} for h, v in zip(hours, values, strict=True)]


def test_the_budget_a_missed_target_needs_is_read_off_the_curve() -> None:
    """A curve rising by 0.1 per tenfold budget (up to a little noise) from 0.3 at 1 CPU-hour
    reaches 0.40 at about 10 CPU-hours, with a range from the slope's interval around it; a flat
    or falling curve shows no budget; a line already at the target says so; too few points, none."""
    t = strong.Target("heuristic", "all", 0.40, "target")
    hours = [0.1, 0.2, 0.3, 0.5, 0.7, 1.0]
    noise = [0.002, -0.003, 0.001, 0.002, -0.002, 0.0]
    rising = [0.3 + 0.1 * math.log10(h) + e for h, e in zip(hours, noise, strict=True)]
    b = strong.budget_needed(_curve(rising, hours), t)
    assert b["verdict"] == "extrapolated" and b["points"] == 6
    assert b["slope_low"] < 0.1 < b["slope_high"] and b["slope_low"] > 0
    assert 8 < b["cpu_hours"] < 12 and b["cpu_hours_low"] < b["cpu_hours"] < b["cpu_hours_high"]
    flat = strong.budget_needed(_curve([0.30 + e for e in noise], hours), t)
    assert flat["verdict"].startswith("no rise shown") and flat["cpu_hours"] is None
    falling = strong.budget_needed(_curve([0.35 - 0.05 * i for i in range(6)], hours), t)
    assert falling["slope_high"] < 0 and falling["verdict"].startswith("no rise shown")
    there = strong.budget_needed(_curve([v + 0.2 for v in rising], hours), t)
    assert there["verdict"] == "the line already reaches it at the last point"
    assert strong.budget_needed(_curve(rising[:3], hours[:3]), t) is None
    assert strong.budget_needed(_curve(rising, hours), strong.Target("random", "all", 0.4, "x")) is None
    same = strong.budget_needed(_curve(rising, [0.5] * 6), t)  # one budget: no slope to read
    assert same["verdict"].startswith("no rise shown") and same["cpu_hours"] is None
    assert same["slope_per_decade"] is None and strong._budget_line(same) == f"| target | | | {same['verdict']} |"


def test_a_run_continued_from_another_runs_policy(tmp_path) -> None:
    """A run with a ``continue`` section (``make strong-long``) starts from the named weights and
    goes on from the named curve: that curve's points come first (marked with their run), this
    run's epochs, games, decisions and CPU-hours count on top of its last point, and the report
    says where it started and tests the first run's line against the last point."""
    runs, reports = tmp_path / "runs", tmp_path / "reports"
    params = _params(tmp_path, epochs=4)
    strong.train_game("big2", params, runs=runs, track=False)
    base = strong.curve("big2", params, runs=runs, reports=reports, workers=1)
    cont = {"continue": {"policy": str(runs / "big2" / "policy.pt"), "curve": str(reports / "big2" / "curve.json")},
            "train": {**params["big2"]["train"], "game": "big2", "epochs": 2, "seed": 1},
            "curve": params["big2"]["curve"], "evaluate": params["big2"]["evaluate"]}
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump({"games": {"big2-more": cont}}))
    more = strong.load_strong_params(path)
    assert strong.config(more["big2-more"], "big2-more").init_policy == cont["continue"]["policy"]
    strong.train_game("big2-more", more, runs=runs, track=False)
    c = strong.curve("big2-more", more, runs=runs, reports=reports, workers=1)
    n = len(base["points"])
    assert c["points"][:n] == [{**p, "run": "big2"} for p in base["points"]]
    assert c["continued"]["points"] == n and [p["run"] for p in c["points"][n:]] == ["big2-more"] * 2
    assert [p["epoch"] for p in c["points"][n:]] == [5, 6]
    assert "run" not in base["points"][0] and "continued" not in base  # a plain curve is as it was
    history = ckpt.load(runs / "big2-more" / "checkpoint.pt")["history"]
    assert c["points"][n]["games"] == base["points"][-1]["games"] + 3
    assert c["points"][-1]["decisions"] == base["points"][-1]["decisions"] + sum(r["decisions"] for r in history)
    own = strong.cpu_seconds(history)
    assert c["points"][n]["cpu_hours"] == pytest.approx(base["points"][-1]["cpu_hours"] + own[0] / 3600, rel=1e-12)
    assert c["points"][-1]["cpu_hours"] == pytest.approx(base["points"][-1]["cpu_hours"] + own[1] / 3600, rel=1e-12)
    start = json.loads((runs / "big2-more" / "start.json").read_text())
    assert start["sha256"] == sha256_file(runs / "big2" / "policy.pt")
    f = strong.final("big2-more", more, runs=runs, reports=reports, workers=1)
    paired = f["against_start"]["random"]  # the same games as the final match, and the start's on the same deals
    assert paired["end"]["wins"] == f["matches"]["random"]["all"]["wins"] and paired["end"]["games"] == 12
    start_alone = strong.final("big2", params, runs=runs, reports=reports / "start", workers=1)
    assert paired["start"]["wins"] == start_alone["matches"]["random"]["all"]["wins"]
    assert paired["difference"]["n"] == 3 and paired["difference"]["mean"] == pytest.approx(
        (paired["end"]["wins"] - paired["start"]["wins"]) / 12)
    md = strong.report(more, reports=reports, source="`long.yaml`").read_text()
    assert f"Continued from `{cont['continue']['policy']}`, the final policy of the run `big2` (4 epochs" in md
    assert "| run | epoch | CPU-hours |" in md and "| big2-more | 6 |" in md
    assert "The first run's line put to the test: fitted to its 4 points alone" in md
    assert "Against the policy it started from" in md and "| random | " in md
    tested = json.loads((reports / "line_test.json").read_text())["big2-more"]["heuristic/all"]
    assert tested["first_points"] == 4 and tested["measured"] == c["points"][-1]["heuristic"]["all"]["win_rate"]
    assert tested["continued_points"] == 2 and tested["games"] == 8 and tested["slopes"]["continued"] is None
    # the curve it goes on from must be comparable, and exist; not both a start of cloning and another run's
    other = {**cont, "curve": {**cont["curve"], "seed": 4}}
    path.write_text(yaml.safe_dump({"games": {"big2-more": other}}))
    with pytest.raises(strong.StrongError, match=r"'seed': 3, .*asks .*'seed': 4, .*not be comparable"):
        strong.curve("big2-more", strong.load_strong_params(path), runs=runs, reports=reports, workers=1)
    wider = {**cont["curve"], "opponents": ["heuristic", "random"]}
    path.write_text(yaml.safe_dump({"games": {"big2-more": {**cont, "curve": wider}}}))
    with pytest.raises(strong.StrongError, match="not be comparable"):
        strong.curve("big2-more", strong.load_strong_params(path), runs=runs, reports=reports, workers=1)
    (runs / "big2" / "model.json").write_text(json.dumps({"run": "doudizhu", "sha256": "0" * 64}))
    with pytest.raises(strong.StrongError, match="is not the final policy of the run"):
        strong.curve("big2-more", more, runs=runs, reports=reports, workers=1)
    (runs / "big2" / "model.json").unlink()
    # other weights shipped under the same path: the continued run starts over from them
    (runs / "big2" / "policy.pt").write_bytes((runs / "big2-more" / "policy.pt").read_bytes())
    res = strong.train_game("big2-more", {"big2-more": {**cont, "train": {**cont["train"], "epochs": 3}}},
                            runs=runs, track=False)
    assert len(res["history"]) == 3 and json.loads((runs / "big2-more" / "start.json").read_text())["sha256"] == \
        sha256_file(runs / "big2" / "policy.pt") != start["sha256"]
    gone = {**cont, "continue": {**cont["continue"], "curve": str(tmp_path / "none.json")}}
    path.write_text(yaml.safe_dump({"games": {"big2-more": gone}}))
    assert strong.main(["curve", "big2-more", "--params", str(path), "--reports", str(reports)]) == 2
    path.write_text(yaml.safe_dump({"games": {"big2-more": {**cont, "imitate": {"teacher": "heuristic"}}}}))
    with pytest.raises(ValueError, match="cannot both imitate and continue"):
        strong.load_strong_params(path)
    path.write_text(yaml.safe_dump({"games": {"big2-more": {**cont, "continue": {"policy": "x.pt"}}}}))
    with pytest.raises(ValueError, match="continue must hold policy"):
        strong.load_strong_params(path)


def test_the_long_run_params_load_and_its_report_reads_every_run() -> None:
    root = Path(strong.__file__).parents[1]
    params = strong.load_strong_params(root / "strong" / "long" / "params.yaml")
    deps = yaml.safe_load((root / "strong" / "long" / "dvc.yaml").read_text())["stages"]["report"]["deps"]
    for run, spec in params.items():
        assert {f"reports/strong/long/{run}/curve.json", f"reports/strong/long/{run}/final.json"} <= set(deps)
        assert (root / spec["continue"]["policy"]).exists() and (root / spec["continue"]["curve"]).exists()


def test_the_line_of_a_curve_predicts_a_later_point_with_an_interval() -> None:
    """On a line of 0.1 per tenfold budget (up to a little noise), the prediction at 10 CPU-hours is
    about 0.4, its interval holds it and is wider there than inside the measured range."""
    t = strong.Target("heuristic", "all", 0.40, "target")
    hours = [0.1, 0.2, 0.3, 0.5, 0.7, 1.0]
    noise = [0.002, -0.003, 0.001, 0.002, -0.002, 0.0]
    pts = _curve([0.3 + 0.1 * math.log10(h) + e for h, e in zip(hours, noise, strict=True)], hours)
    far, near = strong.predicted_at(pts, t, 10.0), strong.predicted_at(pts, t, 0.3)
    assert far["low"] < 0.4 < far["high"] and abs(far["fitted"] - 0.4) < 0.01 and far["points"] == 6
    # the interval of one new observation, computed here another way (numpy's polyfit, the t quantile)
    x, y = np.log10(hours), np.array([p["heuristic"]["all"]["win_rate"] for p in pts])
    slope, icpt = np.polyfit(x, y, 1)
    s2 = ((y - icpt - slope * x) ** 2).sum() / 4
    half = stats.t.ppf(0.975, 4) * math.sqrt(s2 * (1 + 1 / 6 + (1 - x.mean()) ** 2 / ((x - x.mean()) ** 2).sum()))
    assert far["fitted"] == pytest.approx(icpt + slope, abs=1e-12)
    assert far["high"] - far["fitted"] == pytest.approx(half, rel=1e-9)
    assert far["high"] - far["low"] > near["high"] - near["low"] > 0
    assert strong.predicted_at(pts[:3], t, 10.0) is None
