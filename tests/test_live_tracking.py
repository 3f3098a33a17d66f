"""MLflow while a training runs (issue 14, section 2): each epoch is logged as it ends, with its
real time and step = epoch, in a run that spans the training; a training that raises or is
stopped leaves its run FAILED or KILLED with the epochs so far, and a resumed training continues
that run; the experiment is tagged as model training; the params file and the deal sets are the
runs' inputs; and logging changes no output of the training."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
import yaml

from climbrl import track
from climbrl.config import train_config
from climbrl.training import train

SMALL = {
    "rules": "paper",
    "seeds": {"deals": 8, "seed": 1, "validation_deals": 2, "validation_seed": 7},
    "train": {
        "common": {"epochs": 3, "games_per_epoch": 4, "eval_every": 2, "eval_games": 8, "hidden": 16,
                   "minibatch_decisions": 64, "eval_opponents": ["random"], "keep_policy_every": 1},
        "ppo": {},
    },
    "evaluate": {"games": 8, "opponents": ["random"], "workers": 1},
    "tune": {"algo": "ppo", "trials": 1, "epochs": 1, "games_per_epoch": 4, "eval_every": 1, "eval_games": 8,
             "seed": 0, "storage": "sqlite:///optuna.db", "study": "t", "pruner": "median"},
    "tracking": {"tracking_uri": "sqlite:///mlflow.db", "experiment": "live", "register_model": "live-best"},
}


def tiny(**kw):
    return train_config("ppo", **{"epochs": 3, "games_per_epoch": 4, "eval_every": 2, "eval_games": 8,
                                  "hidden": 16, "eval_opponents": ("random",), **kw})


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """One sqlite store in a temporary folder for the module (creating it takes MLflow seconds)."""
    root = tmp_path_factory.mktemp("live")
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        mp.chdir(root)
        track.configure(f"sqlite:///{root / 'mlflow.db'}", "live")
        yield root


@pytest.fixture()
def client(store, request):
    import mlflow

    track.configure(f"sqlite:///{store / 'mlflow.db'}", f"live-{request.node.name}")
    return mlflow.tracking.MlflowClient()


def steps(client, run_id: str, key: str = "games") -> list[int]:
    return [m.step for m in client.get_metric_history(run_id, key)]


def test_every_epoch_is_in_the_store_while_the_training_runs(client, tmp_path) -> None:
    seen = []
    before = int(time.time() * 1000)
    with track.training_run(tiny().to_dict(), tmp_path) as run:

        def on_epoch(row):
            run.on_epoch(row)
            seen.append((client.get_run(run.run_id).info.status, steps(client, run.run_id)))

        res = train(tiny(), tmp_path, progress=False, on_epoch=on_epoch)
        run.complete(res["history"])
    after = int(time.time() * 1000)
    assert seen == [("RUNNING", [1]), ("RUNNING", [1, 2]), ("RUNNING", [1, 2, 3])]
    info = client.get_run(run.run_id).info
    assert info.status == "FINISHED"
    games = client.get_metric_history(run.run_id, "games")
    stamps = [m.timestamp for m in games]
    # real times, one per epoch as it ended, inside the run, which spans the training
    assert before <= info.start_time <= stamps[0] < stamps[1] < stamps[2] <= info.end_time <= after
    assert info.end_time - info.start_time >= sum(r["play_seconds"] + r["update_seconds"]
                                                  for r in res["history"]) * 1000
    # the losses every epoch, the in-training evaluation on the epochs that have one
    assert steps(client, run.run_id, "loss/policy_loss") == [1, 2, 3]
    wins = client.get_metric_history(run.run_id, "win_rate/random")
    assert [m.step for m in wins] == [2] and wins[0].value == res["history"][1]["win_rate/random"]
    assert wins[0].timestamp == stamps[1]


def test_a_training_that_raises_is_failed_with_its_epochs_and_a_resume_continues_the_run(client, tmp_path) -> None:
    cfg = tiny()

    def stop_at(run, epoch, exc):
        def on_epoch(row):
            run.on_epoch(row)
            if row["epoch"] == epoch:
                raise exc
        return on_epoch

    with pytest.raises(RuntimeError), track.training_run(cfg.to_dict(), tmp_path) as run:
        train(cfg, tmp_path, progress=False, on_epoch=stop_at(run, 2, RuntimeError("boom")))
    failed = run.run_id
    assert client.get_run(failed).info.status == "FAILED"
    assert steps(client, failed) == [1, 2] and steps(client, failed, "loss/policy_loss") == [1, 2]

    with track.training_run(cfg.to_dict(), tmp_path, resuming=True) as run:
        res = train(cfg, tmp_path, resume=True, progress=False, on_epoch=run.on_epoch)
        run.complete(res["history"])
    assert run.run_id == failed  # the same run, continued
    finished = client.get_run(failed)
    assert finished.info.status == "FINISHED" and finished.data.tags[track.RESUMES_TAG] == "1"
    assert steps(client, failed) == [1, 2, 3]

    other = tmp_path / "interrupted"
    with pytest.raises(KeyboardInterrupt), track.training_run(cfg.to_dict(), other) as run:
        train(cfg, other, progress=False, on_epoch=stop_at(run, 1, KeyboardInterrupt()))
    assert client.get_run(run.run_id).info.status == "KILLED" and steps(client, run.run_id) == [1]


def test_sigterm_during_training_ends_the_run_killed(client, tmp_path) -> None:
    if threading.current_thread() is not threading.main_thread() or \
            signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        pytest.skip("SIGTERM is turned into an exception only in the main thread with the default handler")

    def on_epoch(row):
        run.on_epoch(row)
        if row["epoch"] == 2:
            os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(SystemExit) as stopped, track.training_run(tiny().to_dict(), tmp_path) as run:
        train(tiny(), tmp_path, progress=False, on_epoch=on_epoch)
    assert stopped.value.code == 143
    assert client.get_run(run.run_id).info.status == "KILLED" and steps(client, run.run_id) == [1, 2]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored


def test_a_failed_write_does_not_stop_the_training_and_is_logged_at_the_end(client, tmp_path, monkeypatch,
                                                                          capsys) -> None:
    with track.training_run(tiny().to_dict(), tmp_path) as run:
        real, failures = run._log_rows, []

        def flaky(rows):
            if rows[0]["epoch"] == 2 and not failures:
                failures.append(2)
                raise OSError("database is locked")
            real(rows)

        monkeypatch.setattr(run, "_log_rows", flaky)
        res = train(tiny(), tmp_path, progress=False, on_epoch=run.on_epoch)
        assert steps(client, run.run_id) == [1, 3]
        run.complete(res["history"])
    assert sorted(steps(client, run.run_id)) == [1, 2, 3] and run.failed_writes == 1
    assert "epoch 2 not logged yet" in capsys.readouterr().err


def test_the_experiment_is_tagged_as_model_training(store) -> None:
    import mlflow

    track.configure(f"sqlite:///{store / 'mlflow.db'}", "kind-test")
    exp = mlflow.get_experiment_by_name("kind-test")
    assert exp.tags[track.EXPERIMENT_KIND_TAG] == track.EXPERIMENT_KIND == "custom_model_development"
    client = mlflow.tracking.MlflowClient()
    client.set_experiment_tag(exp.experiment_id, track.EXPERIMENT_KIND_TAG, "genai_development")
    track.configure(f"sqlite:///{store / 'mlflow.db'}", "kind-test")  # a kind chosen in the UI stays
    assert mlflow.get_experiment(exp.experiment_id).tags[track.EXPERIMENT_KIND_TAG] == "genai_development"


def test_the_stages_log_live_with_the_params_file_and_the_deal_sets_as_inputs(store, tmp_path,
                                                                             monkeypatch) -> None:
    """Through the stage functions (``python -m pipeline train ppo``): the run's inputs, and the
    same policy files and curve as a training without tracking, byte for byte."""
    import mlflow
    from pipeline import stages

    from climbrl.evaluate.match import deal_seeds
    from climbrl.params import load_params

    outputs = {}
    for tracked in (False, True):
        work = tmp_path / str(tracked)
        work.mkdir()
        monkeypatch.chdir(work)
        raw = {**SMALL, "tracking": {**SMALL["tracking"], "tracking_uri": f"sqlite:///{store / 'mlflow.db'}",
                                     "experiment": "live-stages"}}
        Path("params.yaml").write_text(yaml.safe_dump(raw))
        p = load_params("params.yaml")
        stages.make_seeds(p)
        stages.train_learner(p, "ppo", track=tracked)
        evaluation_began = time.time()
        stages.evaluate_learner(p, "ppo", track=tracked)
        outputs[tracked] = {f.as_posix(): f.read_bytes()
                            for f in [*sorted(Path("runs/ppo").rglob("*.pt")), Path("reports/curves/ppo.csv")]
                            if f.name != "checkpoint.pt"}  # the checkpoint holds the epochs' timings
    assert outputs[False] == outputs[True] and len(outputs[True]) == 5

    client = mlflow.tracking.MlflowClient()
    exp = mlflow.get_experiment_by_name("live-stages")
    assert exp.tags[track.EXPERIMENT_KIND_TAG] == "custom_model_development"
    runs = {r.data.tags["stage"]: r for r in client.search_runs([exp.experiment_id])}
    assert set(runs) == {"train", "evaluate", "validate"}

    def inputs(run) -> dict[str, tuple]:
        return {d.dataset.name: ({t.key: t.value for t in d.tags}["mlflow.data.context"], d.dataset.digest,
                                 json.loads(d.dataset.source)["uri"], d.dataset.profile)
                for d in client.get_run(run.info.run_id).inputs.dataset_inputs}

    params_file = (tmp_path / "True" / "params.yaml").resolve()
    params_input = ("params", hashlib.sha256(params_file.read_bytes()).hexdigest()[:16], str(params_file), None)
    train_inputs = inputs(runs["train"])
    assert train_inputs["params.yaml"] == params_input
    context, digest, source, profile = train_inputs["eval-deals-seed12345"]
    assert (context, source, json.loads(profile)["features_size"]) == ("evaluation", str(params_file), 2)
    assert digest == track.deals_input(deal_seeds(12345, 2, "train-eval"), "x", params_file).digest
    eval_inputs = inputs(runs["evaluate"])
    assert eval_inputs["params.yaml"] == params_input
    assert eval_inputs["eval_seeds.json"][0] == "evaluation"
    assert eval_inputs["eval_seeds.json"][2] == str((tmp_path / "True" / "data" / "eval_seeds.json").resolve())
    assert json.loads(eval_inputs["eval_seeds.json"][3])["features_size"] == 8
    assert inputs(runs["validate"])["valid_seeds.json"][0] == "validation"
    # the evaluation's runs span its games: begun before its results were written, not at logging
    written_ms = (tmp_path / "True" / "reports" / "eval" / "ppo.json").stat().st_mtime * 1000
    for stage in ("evaluate", "validate"):
        info = client.get_run(runs[stage].info.run_id).info
        assert evaluation_began * 1000 - 1 <= info.start_time < written_ms < info.end_time, (stage, info)
        assert info.status == "FINISHED"
        tags = client.get_run(runs[stage].info.run_id).data.tags
        assert tags["mlflow.runName"] == f"{stage}@big2-ppo" and {"mlflow.user", "mlflow.source.name"} <= set(tags)
        assert (tags["game"], tags["algo"], tags["variant"]) == ("big2", "ppo", "ppo")

    train_run = client.get_run(runs["train"].info.run_id)
    assert train_run.info.status == "FINISHED" and train_run.data.params["epochs"] == "3"
    assert train_run.info.run_name == "train@big2-ppo"
    assert steps(client, train_run.info.run_id) == [1, 2, 3]
    assert all(m.timestamp > 0 for m in client.get_metric_history(train_run.info.run_id, "games"))
    # logged live through the stage, each epoch when it ended: after its snapshot was written and
    # before the next epoch's (a run filled in at the end would hold the end's time for them all)
    snaps = [(tmp_path / "True" / "runs" / "ppo" / "snapshots" / f"epoch{e:03d}.pt").stat().st_mtime * 1000
             for e in (1, 2, 3)]
    logged = {m.step: m.timestamp for m in client.get_metric_history(train_run.info.run_id, "games")}
    for epoch in (1, 2):
        assert int(snaps[epoch - 1]) <= logged[epoch] <= snaps[epoch], (epoch, logged, snaps)
    assert {a.path for a in client.list_artifacts(train_run.info.run_id)} == {"policy.pt", "metrics.csv"}


def test_every_run_is_named_by_its_stage_and_learner_and_tagged_with_game_algo_and_variant(store, tmp_path,
                                                                                          monkeypatch) -> None:
    """Two PPO variants of a Dou Dizhu study, trained and evaluated through the stages: each run
    is named STAGE@GAME-LEARNER (not ``train-ppo`` twice), its algorithm and variant tags apart."""
    import mlflow
    from pipeline import stages

    from climbrl.params import load_params

    monkeypatch.chdir(tmp_path)
    raw = {**SMALL, "game": "doudizhu", "rules": "rlcard", "tune": {**SMALL["tune"], "eval_games": 6},
           "seeds": {"deals": 2, "seed": 1, "validation_deals": 2, "validation_seed": 7},
           "train": {"common": {"epochs": 1, "games_per_epoch": 2, "eval_every": 1, "eval_games": 6, "hidden": 16,
                                "minibatch_decisions": 64, "eval_opponents": ["random"]},
                     "ppo": {}, "ppo_small": {"algo": "ppo", "hidden": 8}},
           "evaluate": {"games": 4, "opponents": ["random"], "workers": 1},
           "tracking": {"tracking_uri": f"sqlite:///{store / 'mlflow.db'}", "experiment": "live-names",
                        "register_model": "live-names-best"}}
    Path("params.yaml").write_text(yaml.safe_dump(raw))
    p = load_params("params.yaml")
    stages.make_seeds(p)
    for learner in ("ppo", "ppo_small"):
        stages.train_learner(p, learner)
        stages.evaluate_learner(p, learner)
    exp = mlflow.get_experiment_by_name("live-names")
    runs = mlflow.tracking.MlflowClient().search_runs([exp.experiment_id])
    assert sorted((r.info.run_name, r.data.tags["stage"], r.data.tags["game"], r.data.tags["algo"],
                   r.data.tags["variant"]) for r in runs) == sorted(
        (f"{stage}@doudizhu-{learner}", stage, "doudizhu", "ppo", learner)
        for stage in ("train", "evaluate", "validate") for learner in ("ppo", "ppo_small"))


def test_the_printed_address_is_the_experiment_s_runs_table(store) -> None:
    """A SQLite store's address is the runs table's once ``mlflow ui`` serves that store, with the
    command (a tracking server's, the runs table on it: tests/test_ui_browser.py opens it)."""
    import mlflow

    uri = f"sqlite:///{store / 'mlflow.db'}"
    track.configure(uri, "live-address")
    eid = mlflow.get_experiment_by_name("live-address").experiment_id
    address = track.runs_address(uri, "live-address")
    assert address.startswith(f"http://127.0.0.1:5000/#/experiments/{eid}/runs (serve it first: ")
    assert f"ui --backend-store-uri {uri} --host 127.0.0.1 --port 5000)" in address
    assert track.runs_page("http://h:1/", eid) == f"http://h:1/#/experiments/{eid}/runs"
    # an experiment the store does not hold yet is made, tagged as model training
    address = track.runs_address(uri, "live-address-new")
    made = mlflow.get_experiment_by_name("live-address-new")
    assert f"/#/experiments/{made.experiment_id}/runs " in address
    assert made.tags[track.EXPERIMENT_KIND_TAG] == track.EXPERIMENT_KIND


def test_inputs_logged_by_two_runs_at_once_are_retried_after_the_datasets_race(store, monkeypatch) -> None:
    """Two learners' trainings starting side by side log the same params file: MLflow checks the
    experiment's datasets, then inserts, and the slower insert fails on the unique constraint
    (measured on a SQLite store: 2 of 4 trials of two processes released at once). The call is
    made again, and the run holds its inputs; any other error is raised at once."""
    import mlflow

    track.configure(f"sqlite:///{store / 'mlflow.db'}", "inputs-race")
    params = store / "race-params.yaml"
    params.write_text(yaml.safe_dump(SMALL))
    real = mlflow.log_inputs
    race = mlflow.exceptions.MlflowException(
        "(sqlite3.IntegrityError) UNIQUE constraint failed: datasets.experiment_id, datasets.name, "
        "datasets.digest\n[SQL: INSERT INTO datasets (dataset_uuid, experiment_id, name, digest, ...)]")
    calls = []

    def flaky(*args, errors=(race,), **kwargs):
        calls.append(1)
        if len(calls) <= len(errors):
            raise errors[len(calls) - 1]
        return real(*args, **kwargs)

    monkeypatch.setattr(mlflow, "log_inputs", flaky)
    with mlflow.start_run() as run:
        track.log_inputs([(track.params_file_input(params), "params")])
    assert len(calls) == 2
    held = mlflow.tracking.MlflowClient().get_run(run.info.run_id).inputs.dataset_inputs
    assert [i.dataset.name for i in held] == [params.name]

    other = mlflow.exceptions.MlflowException("RESOURCE_DOES_NOT_EXIST: no such run")
    for errors, attempts in (((other,), 1), ((race,) * track.DATASET_RACE_ATTEMPTS, track.DATASET_RACE_ATTEMPTS)):
        calls.clear()
        monkeypatch.setattr(mlflow, "log_inputs", lambda *a, errors=errors, **k: flaky(*a, errors=errors, **k))
        with mlflow.start_run(), pytest.raises(mlflow.exceptions.MlflowException):
            track.log_inputs([(track.params_file_input(params), "params")])
        assert len(calls) == attempts


def test_a_tuning_trial_that_raises_leaves_its_run_failed(store, tmp_path, monkeypatch) -> None:
    """A trial whose training raises is FAIL in Optuna and its nested MLflow run FAILED (tagged
    state=failed), not FINISHED as if it had scored; the error reaches the caller."""
    import mlflow
    import optuna

    import climbrl.training
    from climbrl.params import load_params
    from climbrl.tune import run_study

    monkeypatch.chdir(tmp_path)
    raw = {**SMALL, "tracking": {**SMALL["tracking"], "tracking_uri": f"sqlite:///{store / 'mlflow.db'}",
                                 "experiment": "live-tune-fails"}}
    Path("params.yaml").write_text(yaml.safe_dump(raw))
    p = load_params("params.yaml")

    def broken(*args, **kwargs):
        raise RuntimeError("the training broke")

    monkeypatch.setattr(climbrl.training, "train", broken)
    with pytest.raises(RuntimeError, match="the training broke"):
        run_study(p.tune, trials=1, track=True, tracking=p.tracking, storage="sqlite:///optuna.db", study_name="f")
    assert [t.state.name for t in optuna.load_study(study_name="f", storage="sqlite:///optuna.db").trials] == ["FAIL"]
    client = mlflow.tracking.MlflowClient()
    exp = mlflow.get_experiment_by_name("live-tune-fails")
    runs = {r.data.tags.get("stage"): r for r in client.search_runs([exp.experiment_id])}
    assert runs["tune-trial"].info.status == "FAILED" and runs["tune-trial"].data.tags["state"] == "failed"
    assert runs["tune"].info.status == "FAILED"  # the worker's run, which the error left
    assert (runs["tune"].info.run_name, runs["tune-trial"].info.run_name) == ("tune@big2-ppo", "trial-0@big2-ppo")
