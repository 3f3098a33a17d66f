"""The tuning pipeline (issue 30; pipeline/tuning.py, pipeline/tuning_report.py): a tiny run of both
games end to end in a temp folder (studies under successive halving, resumed not restarted when
rerun, every trial a live MLflow run; the best configuration retrained beside the default for three
seeds; the report with its sections), the tuned configuration loaded as `climbrl train --config`
loads it, the study's deals disjoint from the versioned ones, and bad params refused with a message
naming the key."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import optuna
import pytest
import yaml
from pipeline import stages, tuning, tuning_report

from climbrl.params import load_params
from tests.study_params import TINY_TUNE, study_folder

REPO = Path(__file__).resolve().parents[1]
TINY = {"epochs": 4, "games_per_epoch": 2, "eval_every": 2, "hidden": 16, "minibatch_decisions": 64,
        "batch_size": 16, "updates_per_epoch": 2, "eval_opponents": ["random"], "keep_policy_every": 0}
STUDY = {
    "rules": "paper",
    "seeds": {"deals": 6, "seed": 1, "validation_deals": 2, "validation_seed": 7},
    "train": {"common": {**TINY, "eval_games": 8}, "ppo": {}, "sarsa": {}},
    "evaluate": {"games": 12, "opponents": ["random", "greedy"], "workers": 1},  # 3 deals x 4 seats
    "tune": TINY_TUNE, "report": {"title": "t"},
    "tracking": {"tracking_uri": "sqlite:///mlflow.db", "experiment": "t", "register_model": "t"},
    "studies": {"doudizhu": {
        "game": "doudizhu", "rules": "douzero",
        "seeds": {"deals": 4, "seed": 1, "validation_deals": 2, "validation_seed": 7},
        "train": {"common": {**TINY, "eval_games": 6}, "mcq": {}},
        "evaluate": {"games": 6, "opponents": ["random"], "workers": 1},  # 3 decks x 2 games
        "tune": TINY_TUNE}},
}
GAME = {"trials": 3, "pruner": "halving", "min_epochs": 1, "max_epochs": 2, "reduction_factor": 2,
        "opponent": "random", "deal_seed": 5}
# start_from_default off: at 3 trials the learner's own config can stay a study's best, which leaves that
# learner out of the comparison this test follows (the default trial has tests of its own)
TUNING = {"storage": "sqlite:///runs/tune/study/optuna.db", "workers": 1, "study_workers": 1, "seeds": [0, 1, 2],
          "mlflow": False, "start_from_default": False,
          "games": {"big2": {"study": "params.yaml", "learners": ["ppo", "sarsa"], "objective_games": 8, **GAME},
                    "doudizhu": {"study": "params.yaml#doudizhu", "learners": ["mcq"], "objective_games": 6, **GAME}}}


@pytest.fixture()
def tune_dir(tmp_path, monkeypatch):
    study_folder(tmp_path, monkeypatch, STUDY)
    (tmp_path / "tune.yaml").write_text(yaml.safe_dump(TUNING, sort_keys=False))
    for spec in ("params.yaml", "params.yaml#doudizhu"):
        stages.make_seeds(load_params(spec))
    return tmp_path


def _trials(name: str) -> list:
    return optuna.load_study(study_name=name, storage="sqlite:///runs/tune/study/optuna.db").trials


def test_the_pipeline_runs_resumes_and_reports_both_games(tune_dir, monkeypatch) -> None:
    t = tuning.load_tuning("tune.yaml")
    assert [(j.game, j.learner) for j in tuning.study_jobs(t)] == [("big2", "ppo"), ("doudizhu", "mcq"),
                                                                    ("big2", "sarsa")]
    # every trial a live MLflow run: one study tracked (into the temp folder's store)
    ppo = tuning.study_jobs(dataclasses.replace(t, mlflow=True))[0]
    tuning.run_study_job(dataclasses.replace(ppo, spec=dataclasses.replace(ppo.spec, trials=2)))
    first = _trials("tune-big2-ppo")
    assert len(first) == 2
    for tr in first:  # the study's config at the schedule's budget, reported at every rung it reached
        assert tr.user_attrs["cpu_seconds"] > 0 and tr.user_attrs["epochs"] in (1, 2)
        assert sorted(tr.intermediate_values) == list(range(1, tr.user_attrs["epochs"] + 1))
    import mlflow

    runs = mlflow.search_runs(experiment_names=["t-tune"], filter_string="tags.stage = 'tune-trial'")
    assert len(runs) == 2 and set(runs["tags.study"]) == {"tune-big2-ppo"}

    # one game alone (the per-game stage study@doudizhu): its summary only, the other game's studies untouched
    assert tuning.main(["study", "--params", "tune.yaml", "--game", "doudizhu"]) == 0
    assert [p.name for p in Path("reports/tune/studies").iterdir()] == ["doudizhu.json"]
    assert len(_trials("tune-doudizhu-mcq")) == 3 and len(_trials("tune-big2-ppo")) == 2
    assert tuning.main(["study", "--params", "tune.yaml", "--game", "chess"]) == 2
    assert tuning.main(["compare", "--params", "tune.yaml", "--game", "big2"]) == 2  # its studies not run yet
    assert tuning_report.main(["--params", "tune.yaml"]) == 0  # the report says what has not run yet
    md = Path("reports/tune/report.md").read_text()
    assert "Studies not run yet (`dvc repro tune/dvc.yaml:study@big2`)" in md
    assert "Not run yet (`dvc repro tune/dvc.yaml:compare@doudizhu`)" in md and "#### mcq" in md

    studies = tuning.run_studies(t)  # resumes ppo's study (its 2 trials kept, 1 more), runs the others
    assert [p.name for p in studies] == ["big2.json", "doudizhu.json"]
    again = _trials("tune-big2-ppo")
    assert len(again) == 3
    assert [(x.number, x.datetime_start, x.params) for x in again[:2]] == [(x.number, x.datetime_start, x.params)
                                                                          for x in first]
    assert again[2].params not in [x.params for x in first]  # the resumed sampler does not redraw the first trials
    assert tuning.main(["study", "--params", "tune.yaml"]) == 0  # a finished study runs nothing more
    trials = Path("runs/tune/study")  # each trial keeps its policy and curve, not its (large) checkpoint
    assert len(list(trials.rglob("policy.pt"))) == 9 and not list(trials.rglob("checkpoint.pt"))
    assert len(list(Path("runs/tune/study/doudizhu/trials").rglob("policy.pt"))) == 3  # each game's in its folder
    assert len(_trials("tune-big2-ppo")) == 3 and len(_trials("tune-doudizhu-mcq")) == 3
    data = tuning.load_studies()
    assert list(data["games"]) == ["big2", "doudizhu"]
    for g in data["games"].values():  # a trial that trained the top rung completed; a pruned one stopped below it
        for s in g["studies"].values():
            assert all((x["state"] == "COMPLETE") == (x["epochs"] == 2) for x in s["trials"]), s["trials"]
    g = data["games"]["big2"]
    assert g["rungs"] == [1, 2] and g["pruner"] == "halving"
    for a in ("ppo", "sarsa"):
        s = g["studies"][a]
        assert len(s["trials"]) == 3 and s["cpu_seconds"] > 0 and s["best"]["number"] in range(3)
        complete = [x for x in s["trials"] if x["state"] == "COMPLETE"]
        assert all(x["epochs"] == 2 and set(x["rungs"]) == {"1", "2"} for x in complete)  # the top rung
        assert s["best"]["value"] == max(x["value"] for x in complete)
        assert set(s["best"]["params"]) == ({"lr", "ent_coef"} if a == "ppo" else {"lr", "epsilon"})
        # importances at the first rung, which every trial reached
        assert set(s["importances"]) == set(s["best"]["params"]) and s["importances_at"] == {"epochs": 1, "trials": 3}
        # PED-ANOVA's top 10% of 3 trials: the best at the first rung, with any trial tied with it
        firsts = [x["rungs"]["1"] for x in s["trials"]]
        assert s["importances_top"] == firsts.count(max(firsts))

    # a study resumed under another setup (here its objective's games) is refused, naming what changed
    other = tuning.study_jobs(t)[0]
    with pytest.raises(ValueError, match=r"tune-big2-ppo .* another setup \(changed: eval_games\)"):
        tuning.run_study_job(dataclasses.replace(other, spec=dataclasses.replace(other.spec, objective_games=12)))

    # a default run that `make seeds` finished with the same config and deals is taken, not trained again
    from pipeline import seeds

    mine = next(j for j in tuning.compare_jobs(t, data) if "/default/" in j.out and (j.learner, j.seed) == ("sarsa", 1))
    theirs = dataclasses.replace(mine, out=str(seeds.run_dir(tuning.SEEDS_RUNS, "big2", "sarsa", 1)))
    seeds.run_one(theirs)

    assert tuning.main(["compare", "--params", "tune.yaml", "--workers", "2"]) == 0
    stamp = [(Path(j.out) / "policy.pt").stat().st_mtime_ns for j in (mine, theirs)]
    assert stamp[0] == stamp[1]  # copied with its time: not trained again
    assert not list(Path("runs/tune/compare").rglob("checkpoint.pt"))  # finished runs keep no checkpoint
    records = {g: Path(f"reports/tune/{g}.json") for g in ("big2", "doudizhu")}
    big2 = json.loads(records["big2"].read_text())
    assert set(big2["learners"]) == {"ppo", "sarsa"}
    ppo_cfg = load_params("params.yaml").train["ppo"]
    for arm in ("tuned", "default"):
        assert sorted(big2["learners"]["ppo"][arm]) == ["0", "1", "2"]
        for r in big2["learners"]["ppo"][arm].values():
            assert r["epochs"] == ppo_cfg.epochs  # the full budget, not the schedule's
            rec = r["evaluation"]["greedy"]
            assert rec["per_deal"] == 4 and len(rec["deal_wins"]) == 3
    tuned = big2["learners"]["ppo"]["config"]
    assert tuned["lr"] == data["games"]["big2"]["studies"]["ppo"]["best"]["params"]["lr"]
    assert tuned["epochs"] == ppo_cfg.epochs and tuned["hidden"] == ppo_cfg.hidden

    assert tuning_report.main(["--params", "tune.yaml"]) == 0
    md = Path("reports/tune/report.md").read_text()
    for section in ("**Headline:**", "## big2 (`paper` rules", "## doudizhu (`douzero` rules",
                    "### Tuned against default at the full budget", "| learner | tuned values | default | tuned |",
                    "Per baseline", "**Verdict (big2):**", "### The tuned configurations", "![slices-big2]",
                    "#### ppo (study `tune-big2-ppo`)", "| trial | state | epochs | @1 | @2 |", "CPU time",
                    "Parameter importances", "PED-ANOVA, Optuna's default: how far the parameters of the top 10% "
                    f"of the trials, here {g['studies']['ppo']['importances_top']}, lie from those of all 3"):
        assert section in md, section
    html = Path("reports/tune/report.html").read_text()
    assert "data:image/png;base64," in html and "http" not in html.replace("http-equiv", "")
    assert Path("reports/tune/figures/slices-doudizhu.png").stat().st_size > 1000
    out = json.loads(Path("reports/tune/report.json").read_text())
    assert set(out["games"]["big2"]["learners"]) == {"ppo", "sarsa"}
    for x in out["games"]["big2"]["learners"].values():
        assert x["verdict"] in ("tuned", "default", "tie") and x["low"] <= x["difference"] <= x["high"]

    # the tuned configuration loads as `climbrl train --config` loads it, and is the study's with the tuned values
    from climbrl.cli import _overrides, build_parser

    path = Path("reports/tune/tuned/big2-ppo.yaml")
    args = build_parser().parse_args(["train", "--algo", "ppo", "--config", str(path)])
    from climbrl.config import train_config

    assert train_config("ppo", **_overrides(args)) == tuning.tuned_config(
        load_params("params.yaml"), "ppo", data["games"]["big2"]["studies"]["ppo"]["best"]["params"])

    # the main report carries the tuning headline and links to it; without the tuning report nothing changes
    from climbrl.report import tune_lines

    lines = tune_lines(load_params("params.yaml"), Path("reports"))
    assert lines[0].startswith("## Hyperparameter tuning") and "tune/report.md" in lines[2]
    assert out["games"]["big2"]["headline"] in lines[2]
    assert "../tune/report.md" in tune_lines(load_params("params.yaml#doudizhu"), Path("reports/doudizhu"))[2]
    Path("reports/tune/report.json").unlink()
    assert tune_lines(load_params("params.yaml"), Path("reports")) == []


def test_the_schedule_is_multi_fidelity(monkeypatch) -> None:
    monkeypatch.chdir(REPO)
    t = tuning.load_tuning()  # the repository's: both games, five learners each
    assert set(t.games) == {"big2", "doudizhu"}
    for spec in t.games.values():
        params = load_params(spec.study)
        assert set(spec.learners) == {"ppo", "mcq", "sarsa", "qlearning", "dqn"}
        rungs = spec.rungs()
        assert len(rungs) >= 3 and rungs[-1] == spec.max_epochs == params.train["ppo"].epochs  # ends at full budget
        assert all(b == a * spec.reduction_factor for a, b in zip(rungs, rungs[1:], strict=False))
        pruner = tuning.make_pruner(spec)
        assert isinstance(pruner, optuna.pruners.SuccessiveHalvingPruner)
        cfg = tuning.trial_config(params, spec, "dqn")
        assert cfg.eval_every == rungs[0] and cfg.epochs == rungs[-1] and cfg.eval_opponents == (spec.opponent,)
        assert all(r % cfg.eval_every == 0 for r in rungs)  # the objective is measured at every rung
    hb = tuning.make_pruner(dataclasses.replace(t.games["big2"], pruner="hyperband"))
    assert isinstance(hb, optuna.pruners.HyperbandPruner)
    # successive halving on a toy objective: trials stop at the lower rungs, the best go on to the top
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.RandomSampler(seed=0),
                                pruner=tuning.make_pruner(tuning.GameTuning("", ("ppo",), 12, "halving", 1, 4, 2,
                                                                            "random", 4, 0)))

    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        for step in range(1, 5):
            trial.report(x * step / 4, step)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return x

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study.optimize(objective, n_trials=12)
    budgets = sorted(max(tr.intermediate_values) for tr in study.trials)
    assert budgets[0] < 4 and budgets[-1] == 4 and len(set(budgets)) >= 2


def test_the_study_s_deals_are_disjoint_from_the_evaluation_deals(monkeypatch) -> None:
    from climbrl.agents.runner import deal_seeds, load_deal_seeds

    monkeypatch.chdir(REPO)
    t = tuning.load_tuning()
    versioned = {"big2": ["data/eval_seeds.json", "data/valid_seeds.json"],
                 "doudizhu": ["data/doudizhu/eval_seeds.json", "data/doudizhu/valid_seeds.json"]}
    for game, spec in t.games.items():
        params = load_params(spec.study)
        mine = set(tuning.objective_deals(spec, params))
        assert len(mine) == spec.objective_games // params.train["ppo"].num_players
        assert not mine & set(tuning.versioned_deals(params))
        s = params.seeds  # the versioned deals as their seeds stage draws them, and the files where present
        drawn = deal_seeds(s.seed, s.deals, "evaluation") + deal_seeds(s.validation_seed, s.validation_deals,
                                                                        "validation")
        assert not mine & set(drawn)
        for f in versioned[game]:
            if (REPO / f).exists():
                assert not mine & set(load_deal_seeds(REPO / f)), f
        # and the training's own in-training evaluation deals are others (another seed)
        assert spec.deal_seed != params.train["ppo"].eval_seed


def test_bad_params_are_refused_with_the_key(tune_dir) -> None:
    path = tune_dir / "bad.yaml"
    big2 = TUNING["games"]["big2"]
    cases = [({"seeds": [0, 1]}, "at least three distinct"),
             ({"workers": 0}, "workers: must be an integer >= 1"),
             ({"start_from_default": "yes"}, "start_from_default must be true or false"),
             ({"study_workers": 2}, "needs a shared database"),
             ({"storage": "nosuch://x"}, "storage"),
             ({"games": {"big2": {**big2, "pruner": "median"}}}, "games.big2.pruner: must be one of halving"),
             ({"games": {"big2": {**big2, "max_epochs": 3}}}, "must be min_epochs 1 x reduction_factor 2"),
             ({"games": {"big2": {**big2, "max_epochs": 8, "min_epochs": 2}}}, "more than the study's full budget"),
             ({"games": {"big2": {**big2, "objective_games": 10}}}, "objective_games: must be a multiple of 4"),
             ({"games": {"big2": {**big2, "learners": ["ppo", "dqn"]}}}, "dqn not trained by"),
             ({"games": {"big2": {**big2, "opponent": "nobody"}}}, "games.big2.opponent"),
             ({"games": {"big2": {**big2, "trails": 3}}}, "unknown trails"),
             ({"games": {"doudizhu": {**big2, "study": "params.yaml"}}}, "is a study of big2")]
    for change, message in cases:
        path.write_text(yaml.safe_dump({**TUNING, **change}))
        with pytest.raises(ValueError, match=message):
            tuning.load_tuning(path)
    assert tuning.main(["study", "--params", str(path)]) == 2
    assert tuning_report.main(["--params", "tune.yaml", "--reports", str(tune_dir / "none")]) == 2  # no studies yet


def test_a_study_on_a_shared_database_is_run_by_several_workers(tune_dir, postgres_url, monkeypatch) -> None:
    """The documented cluster option: the store a PostgreSQL URL (from CLIMBRL_TUNE_STORAGE, no
    password in any file) and two workers on one study, which share its trial budget."""
    raw = {**TUNING, "study_workers": 2, "workers": 2,
           "games": {"big2": {**TUNING["games"]["big2"], "learners": ["ppo"]}}}
    (tune_dir / "shared.yaml").write_text(yaml.safe_dump(raw))
    monkeypatch.setenv("CLIMBRL_TUNE_STORAGE", postgres_url)
    t = tuning.load_tuning("shared.yaml")
    assert t.storage == postgres_url and len(tuning.study_jobs(t)) == 2
    assert tuning.main(["study", "--params", "shared.yaml"]) == 0
    from climbrl.tune import load_shared_study

    trials = load_shared_study("tune-big2-ppo", postgres_url).trials
    assert len(trials) == 3 and all(x.state.name in ("COMPLETE", "PRUNED") for x in trials)  # 3 in all, not 3 each
    data = json.loads(Path("reports/tune/studies/big2.json").read_text())
    assert len(data["games"]["big2"]["studies"]["ppo"]["trials"]) == 3
    from sqlalchemy.engine import make_url

    password = make_url(postgres_url).password
    if password:  # the report's store is named with its password hidden
        assert password not in Path("reports/tune/studies/big2.json").read_text() and "***" in data["storage"]


def test_the_store_is_made_before_the_workers_open_it(tmp_path) -> None:
    """Two workers opening a fresh SQLite store at once collide in Optuna's schema creation (one of
    three tries here: the loser's study never ran), so the parent makes it first; again is harmless."""
    import sqlalchemy

    url = f"sqlite:///{tmp_path / 'store' / 'optuna.db'}"
    tuning.prepare_store(url)
    tuning.prepare_store(url)
    tables = set(sqlalchemy.inspect(sqlalchemy.create_engine(url)).get_table_names())
    assert {"studies", "trials", "alembic_version"} <= tables
    optuna.create_study(study_name="x", storage=url)  # and it is Optuna's store, usable as it is


def test_the_report_names_an_interrupted_trial_and_its_retry() -> None:
    """A trial whose process died in it (failed when the study resumed, climbrl.tune._LocalStudy)
    and the trial that ran its parameters again are named as such, not as two plain trials."""
    trial = {"number": 0, "state": "FAIL", "params": {"lr": 1e-4}, "value": None, "epochs": 2, "rungs": {"1": 0.5},
             "cpu_seconds": 0.0, "interrupted": True, "retry_of": None}
    retry = {**trial, "number": 1, "state": "COMPLETE", "value": 0.6, "rungs": {"1": 0.5, "2": 0.6},
             "cpu_seconds": 3.0, "interrupted": False, "retry_of": 0}
    s = {"study": "tune-big2-ppo", "trials": [trial, retry], "states": {"COMPLETE": 1, "FAIL": 1}, "cpu_seconds": 3.0,
         "best": {"number": 1, "value": 0.6, "params": {"lr": 1e-4}}}
    lines = tuning_report.study_lines("big2", "ppo", s, {"rungs": [1, 2], "objective": {"games": 8}})
    rows = {int(x.split("|")[1]): x for x in lines if x.startswith("| 0 ") or x.startswith("| 1 ")}
    assert "fail (interrupted: its process ended in it; CPU time not recorded)" in rows[0]
    assert "complete (retry of 0)" in rows[1] and "interrupted" not in rows[1]


def test_the_report_says_which_winning_config_the_main_study_adopted(tmp_path) -> None:
    """A tuned config that beat the default is named as adopted only once the study's params hold
    its values; the main report's tuning section carries the same fact."""
    from climbrl.report import tune_lines

    best = {"params": {"lr": 0.0008459126528049375, "epsilon": 0.12119804045947552}}
    cmp = {"sarsa": {"verdict": "tuned", "best": best}, "mcq": {"verdict": "tie", "best": best}}
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["studies"]["doudizhu"]["train"]["sarsa"].update(lr=1e-4, epsilon=0.1)  # the default before
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(params))
    assert tuning_report.adopted(cmp, f"{path}#doudizhu") == {"sarsa": False}
    assert "sarsa: not in" in tuning_report.adoption_text({"sarsa": False}, "params.yaml#doudizhu")
    params["studies"]["doudizhu"]["train"]["sarsa"].update(lr=0.0008459126528049375, epsilon=0.12119804045947552)
    path.write_text(yaml.safe_dump(params))
    assert tuning_report.adopted(cmp, f"{path}#doudizhu") == {"sarsa": True}
    assert tuning_report.adopted(cmp, None) == {} and tuning_report.adopted({"mcq": cmp["mcq"]}, str(path)) == {}
    assert "the default column above is the config before" in tuning_report.adoption_text({"sarsa": True}, "p")

    reports = tmp_path / "reports"
    (reports / "tune").mkdir(parents=True)
    (reports / "tune" / "report.json").write_text(json.dumps(
        {"games": {"doudizhu": {"headline": "doudizhu: tuning beat the default for sarsa", "adopted": ["sarsa"],
                                "study": "params.yaml#doudizhu"}}}))
    study = load_params("params.yaml#doudizhu")
    assert "trains the tuned config of sarsa" in tune_lines(study, reports / "doudizhu")[2]
    other = dataclasses.replace(study, study="doudizhu_auction")  # another study of the game adopted nothing
    line = tune_lines(other, reports / "doudizhu_auction")[2]
    assert "tuning beat the default for sarsa" in line and "trains the tuned config" not in line


def test_a_study_whose_best_is_the_learner_s_own_config_is_not_compared_and_says_so(capsys, monkeypatch) -> None:
    """When a study's best trial has the learner's config of params.yaml (trial 0, the default, or a
    config adopted before), comparing would train that config twice seed for seed: it is left out by
    value (not by the trial's mark), said on stderr, and the report names it, also when every learner
    of a game is left out; its trial reads as the learner's own config."""
    import pipeline.seeds

    monkeypatch.setattr(pipeline.seeds, "deal_sets", lambda params: {})  # the deals play no part here
    t = tuning.load_tuning()
    game = next(iter(t.games))
    t = dataclasses.replace(t, games={game: t.games[game]})
    params = load_params(t.games[game].study)
    learners = list(t.games[game].learners)

    def own(a: str, mark: bool) -> dict:
        return {"number": 0, "value": 0.5, "default": mark,
                "params": {k: getattr(params.train[a], k) for k in tuning.searched(params.train[a].algo)}}

    other = {"number": 3, "value": 0.6, "params": {"lr": 2e-4, "epsilon": 0.2, "ent_coef": 0.02, "target_sync": 300,
                                                   "epsilon_decay_steps": 9000}, "default": True}  # a stale mark
    studies = {"games": {game: {"studies": {a: {"best": own(a, False) if i == 0 else other}
                                            for i, a in enumerate(learners)}}}}
    jobs = tuning.compare_jobs(t, studies, "runs-x")
    assert {j.learner for j in jobs} == set(learners[1:]) and len(jobs) == 2 * len(t.seeds) * (len(learners) - 1)
    assert f"{learners[0]}: the study's best trial has the learner's config" in capsys.readouterr().err
    assert tuning.kept_own(t, studies) == {game: [learners[0]]}

    trial = {"number": 0, "state": "COMPLETE", "params": {"lr": 1e-4}, "value": 0.5, "epochs": 2, "rungs": {"1": 0.5},
             "cpu_seconds": 1.0, "interrupted": False, "retry_of": None, "default": True}
    s = {"study": "s", "trials": [trial], "states": {"COMPLETE": 1}, "cpu_seconds": 1.0, "best": own(learners[0], True)}
    row = [x for x in tuning_report.study_lines(game, learners[0], s, {"rungs": [1], "objective": {"games": 8}})
           if x.startswith("| 0 ")][0]
    assert "complete (the learner's own config)" in row

    g = {"rules": "r", "study": "params.yaml", "pruner": "halving", "games_per_epoch": 4, "rungs": [1, 2],
         "reduction_factor": 2, "trials": 2, "studies": {a: s for a in learners},
         "objective": {"opponent": "random", "games": 8, "deals": 2, "deal_seed": 1, "purpose": "tune"}}
    data = {"opponents": ["random"], "learners": {}, "kept_own": learners, "seeds": [0]}
    text = "\n".join(tuning_report.game_lines(game, g, data, {}, Path("f.png"), Path("."), [0]))
    assert f"Not compared: {', '.join(learners)}" in text and "Not run yet" not in text
    assert f"the study's best was the learner's own config for {', '.join(learners)} (not compared)" in text
    assert f"(of {len(learners)};" in tuning_report.headline(game, {}, learners)
