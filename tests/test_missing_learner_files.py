"""A stage that needs a learner's file fails when it is missing, naming the file and the stage that
writes it (issue 29, section 6): the deep evaluation, the tournament, the behaviour window, the
report and the report stage's registration once dropped such a learner quietly, and so chose the
best among the rest, ranked a field without it, or registered nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pipeline import stages

from climbrl.params import load_params
from tests.study_params import study_folder, with_value, write_results

BIG2 = {
    "rules": "paper",
    "seeds": {"deals": 12, "seed": 1, "validation_deals": 2, "validation_seed": 7},
    "train": {"common": {"epochs": 1, "games_per_epoch": 4, "eval_every": 1, "eval_games": 8, "hidden": 16,
                         "eval_opponents": ["random", "greedy"]}, "ppo": {}, "mcq": {}},
    "evaluate": {"games": 8, "opponents": ["random", "greedy"], "workers": 1},
    "behaviour": {"games": 4, "opponents": ["random"], "reference_agents": ["greedy"], "workers": 1},
    "tournament": {"deals": 1, "workers": 1, "rule_agents": ["random", "greedy", "heuristic"]},
    "tune": {"algo": "ppo", "trials": 1, "epochs": 1, "games_per_epoch": 4, "eval_every": 1, "eval_games": 8,
             "seed": 0, "storage": "sqlite:///optuna.db", "study": "t", "pruner": "median"},
    "tracking": {"tracking_uri": "sqlite:///mlflow.db", "experiment": "t", "register_model": "t-best"},
}
DDZ = {**BIG2, "game": "doudizhu", "rules": "rlcard",
       "train": with_value(BIG2["train"], ("common", "eval_games"), 6),
       "tune": {**BIG2["tune"], "eval_games": 6},
       "evaluate": {"games": 6, "opponents": ["random", "greedy"], "workers": 1},
       "behaviour": {"games": 6, "opponents": ["random"], "reference_agents": ["greedy"], "workers": 1},
       "tournament": {**BIG2["tournament"], "snapshots": ["ppo@1"]},
       "deep": {"repeats": 2, "deals": 1, "opponents": ["random"], "seed": 100, "workers": 1}}


def _study(tmp_path, monkeypatch, raw: dict):
    study_folder(tmp_path, monkeypatch, raw)
    return load_params("params.yaml")


def _results(reports: Path, algos: tuple[str, ...], kinds: tuple[str, ...] = ("eval", "validation")) -> None:
    wins = {"ppo": {"random": 40, "greedy": 30}, "mcq": {"random": 60, "greedy": 50}}  # mcq the better
    for algo in algos:
        for kind in kinds:
            write_results(reports, kind, algo, wins[algo], 80)


def _policy(path: Path) -> None:
    """A stand-in policy file: the stages must fail on what is missing before they read any."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def test_the_report_stops_on_a_learner_without_its_evaluation(tmp_path, monkeypatch) -> None:
    from climbrl.report import build_report

    p = _study(tmp_path, monkeypatch, BIG2)
    _results(Path("reports"), ("ppo",))
    _results(Path("reports"), ("mcq",), ("validation",))
    with pytest.raises(FileNotFoundError, match=r"reports/eval/mcq\.json: no evaluation results for mcq.*"
                                                r"dvc repro evaluate@mcq"):
        build_report(p, Path("reports"), Path("runs"))
    assert not Path("reports/metrics.json").exists()


def test_the_report_stage_stops_when_the_best_learner_has_no_policy(tmp_path, monkeypatch) -> None:
    p = _study(tmp_path, monkeypatch, BIG2)
    _results(Path("reports"), ("ppo", "mcq"))
    _policy(Path("runs/ppo/policy.pt"))  # the other learner's: the best (mcq, on validation) has none
    with pytest.raises(FileNotFoundError, match=r"runs/mcq/policy\.pt: no trained policy for mcq.*"
                                                r"dvc repro train@mcq"):
        stages.report(p, track=True)
    assert json.loads(Path("reports/metrics.json").read_text())["best_learner"] == "mcq"


def test_the_tournament_stops_on_a_learner_without_its_policy(tmp_path, monkeypatch) -> None:
    p = _study(tmp_path, monkeypatch, BIG2)
    _policy(Path("runs/mcq/policy.pt"))
    with pytest.raises(FileNotFoundError, match=r"runs/ppo/policy\.pt: no trained policy for ppo.*train@ppo"):
        stages.tournament(p, track=False)
    assert not Path("reports/tournament.json").exists()


def test_the_behaviour_window_stops_on_a_learner_without_its_policy(tmp_path, monkeypatch) -> None:
    p = _study(tmp_path, monkeypatch, BIG2)
    stages.make_seeds(p)  # params order: mcq, then ppo
    with pytest.raises(FileNotFoundError, match=r"runs/mcq/policy\.pt: no trained policy for mcq.*train@mcq"):
        stages.behaviour(p, track=False)
    assert not Path("reports/behaviour/behaviour.json").exists()


def test_a_study_s_tournament_stops_on_a_missing_kept_policy(tmp_path, monkeypatch) -> None:
    """Dou Dizhu beside the main study: the round robin's snapshots (``tournament.snapshots``)
    too, and the stage to rerun is the study's (``train@doudizhu-ppo``)."""
    study_folder(tmp_path, monkeypatch, {**BIG2, "studies": {"doudizhu": DDZ}})
    p = load_params("params.yaml#doudizhu")
    for a in ("ppo", "mcq"):
        _policy(Path(f"runs/doudizhu/{a}/policy.pt"))
    with pytest.raises(FileNotFoundError, match=r"runs/doudizhu/ppo/snapshots/epoch001\.pt: no kept policy ppo@1 "
                                                r".*dvc repro train@doudizhu-ppo"):
        stages.tournament(p, track=False)


def test_the_deep_evaluation_stops_on_a_learner_without_validation_or_policy(tmp_path, monkeypatch) -> None:
    """It chooses its learner on the validation deals: among all of them, or not at all."""
    study_folder(tmp_path, monkeypatch, {**BIG2, "studies": {"doudizhu": DDZ}})
    p = load_params("params.yaml#doudizhu")
    reports = Path("reports/doudizhu")
    _results(reports, ("ppo",), ("validation",))  # mcq, the better on these numbers, has none
    _policy(Path("runs/doudizhu/ppo/policy.pt"))
    with pytest.raises(FileNotFoundError, match=r"reports/doudizhu/validation/mcq\.json: no validation results "
                                                r"for mcq.*dvc repro evaluate@doudizhu-mcq"):
        stages.deep(p, track=False)
    _results(reports, ("mcq",), ("validation",))
    with pytest.raises(FileNotFoundError, match=r"runs/doudizhu/mcq/policy\.pt: no trained policy for mcq"):
        stages.deep(p, track=False)
    assert not (reports / "deep.json").exists()
