"""Model selection on a validation deal set disjoint from the evaluation deals (review issue 10, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pipeline import stages

from climbrl.evaluate.stats import wilson_interval
from climbrl.params import ParamsError, parse_params
from climbrl.report import build_report
from tests.study_params import write_results

PARAMS = {
    "rules": "paper",
    "seeds": {"deals": 40, "seed": 1, "validation_deals": 30, "validation_seed": 77},
    "train": {"common": {"epochs": 1, "games_per_epoch": 4, "eval_every": 1, "eval_games": 8, "hidden": 16,
                         "eval_opponents": ["random", "greedy"]}, "ppo": {}, "mcq": {}},
    "evaluate": {"games": 8, "opponents": ["random", "greedy"], "workers": 1},
    "tune": {"algo": "ppo", "trials": 1, "epochs": 1, "games_per_epoch": 4, "eval_every": 1, "eval_games": 8,
             "seed": 0, "storage": "sqlite:///optuna.db", "study": "t", "pruner": "median"},
    "tracking": {"tracking_uri": "sqlite:///mlflow.db", "experiment": "t", "register_model": "t-best"},
}


def test_the_validation_deals_are_versioned_and_disjoint_from_the_evaluation_deals(tmp_path) -> None:
    from climbrl.games.big2.state import deal

    p = parse_params(PARAMS)
    stages.make_seeds(p, tmp_path / "eval.json", tmp_path / "valid.json")
    evaluation, validation = stages.load_seeds(tmp_path / "eval.json"), stages.load_seeds(tmp_path / "valid.json")
    assert json.loads((tmp_path / "valid.json").read_text())["seed"] == 77
    assert len(evaluation) == 40 and len(validation) == 30
    assert not set(evaluation) & set(validation)
    # not just different seeds: different deals
    assert not {tuple(deal(s)) for s in evaluation} & {tuple(deal(s)) for s in validation}
    with pytest.raises(ValueError, match="share 1 deal seed"):
        stages.check_disjoint(evaluation, [validation[0], evaluation[3]])


def test_equal_seeds_still_give_disjoint_versioned_deal_sets(tmp_path) -> None:
    """Each set is drawn for its own purpose (issue 29, section 9): the evaluation and validation
    seeds, and a deep evaluation's seeds 1..repeats, may coincide without sharing a deal."""
    from climbrl.agents.runner import deal_seeds

    p = parse_params({**PARAMS, "evaluate": {**PARAMS["evaluate"], "repeats": 20},
                      "seeds": {"deals": 40, "seed": 5, "validation_deals": 30, "validation_seed": 5}})
    stages.make_seeds(p, tmp_path / "eval.json", tmp_path / "valid.json")
    evaluation, validation = stages.load_seeds(tmp_path / "eval.json"), stages.load_seeds(tmp_path / "valid.json")
    assert len(set(evaluation) | set(validation)) == 70
    assert json.loads((tmp_path / "valid.json").read_text())["purpose"] == "validation"
    assert not set(evaluation + validation) & set(deal_seeds(5, 40, "deep"))
    with pytest.raises(ParamsError, match="seeds.validation_deals"):
        parse_params({**PARAMS, "seeds": {"deals": 40, "seed": 1, "validation_deals": 0}})


def _match(opp: str, wins: int, games: int) -> dict:
    lo, hi = wilson_interval(wins, games)
    return {"agent": "x", "opponents": [opp] * 3, "games": games, "wins": wins, "win_rate": wins / games,
            "win_rate_low": lo, "win_rate_high": hi, "normalized_win_rate": wins / games / 0.25}


_write = write_results


def test_the_best_learner_is_chosen_on_the_validation_deals_not_the_evaluation_deals(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    reports = tmp_path / "reports"
    # the evaluation deals favour ppo, the validation deals favour mcq: the choice follows validation
    _write(reports, "eval", "ppo", {"random": 60, "greedy": 40}, 80)
    _write(reports, "eval", "mcq", {"random": 50, "greedy": 35}, 80)
    _write(reports, "validation", "ppo", {"random": 50, "greedy": 30}, 120)
    _write(reports, "validation", "mcq", {"random": 70, "greedy": 30}, 120)
    build_report(parse_params(PARAMS), reports, tmp_path / "runs")
    metrics = json.loads((reports / "metrics.json").read_text())
    assert metrics["best_learner"] == "mcq"
    sel = metrics["selection"]
    assert sel["chosen_on"] == "validation" and sel["validation_deal_seed"] == 77
    assert sel["evaluation_mean_win_rate"]["ppo"] > sel["evaluation_mean_win_rate"]["mcq"]
    assert metrics["learners"]["mcq"]["valid_win_rate/random"] == pytest.approx(70 / 120)
    assert metrics["learners"]["mcq"]["valid_games/greedy"] == 120
    assert metrics["learners"]["mcq"]["win_rate/random"] == pytest.approx(50 / 80)  # the evaluation numbers stay
    md = (reports / "report.md").read_text()
    assert ("The winner was chosen on the validation deals (seed 77, 120 games per baseline); the evaluation "
            "table above is reported on disjoint deals (seed 1, 80 games per baseline).") in md
    assert "## Final comparison" in md and "## Model selection (validation deals)" in md
    assert "**mcq** (validation margin over ppo: 0.083)" in md


def test_choose_best_uses_only_the_numbers_it_is_given() -> None:
    from climbrl.report import choose_best

    valid = {"ppo": {"random": _match("random", 10, 40)}, "mcq": {"random": _match("random", 11, 40)}}
    assert choose_best(valid) == "mcq"
    with pytest.raises(ValueError, match="no validation results"):
        choose_best({})


def test_a_learner_without_validation_results_stops_the_report(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    reports = tmp_path / "reports"
    _write(reports, "eval", "ppo", {"random": 60, "greedy": 40}, 80)
    _write(reports, "eval", "mcq", {"random": 50, "greedy": 35}, 80)
    _write(reports, "validation", "ppo", {"random": 50, "greedy": 30}, 120)
    with pytest.raises(FileNotFoundError, match="no validation results for mcq"):
        build_report(parse_params(PARAMS), reports, tmp_path / "runs")


def test_dvc_versions_the_validation_deals_and_the_report_reads_them() -> None:
    import yaml

    st = yaml.safe_load((Path(__file__).resolve().parents[1] / "dvc.yaml").read_text())["stages"]
    assert "${item.data}/valid_seeds.json" in st["seeds"]["do"]["outs"]  # for every study (data/, data/NAME/)
    assert "${item.data}/valid_seeds.json" in st["evaluate"]["do"]["deps"]
    assert {"${item.reports}/validation/${item.algo}.json": {"cache": False}} in st["evaluate"]["do"]["outs"]
    assert "${item.reports}/validation" in st["report"]["do"]["deps"]
    assert "${item.p}seeds" in st["report"]["do"]["params"]
    assert "${item.reports}/validation" in st["deep"]["do"]["deps"]  # the deep stage chooses its learner there too
