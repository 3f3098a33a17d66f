"""pipeline.repro: the studies' stages run side by side by DVC, the joint stages after them, and
each stage's wall time reaches the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pipeline import repro

from climbrl.stage_times import read_stage_times, stage_time_lines, write_stage_time

REPO = Path(__file__).resolve().parents[1]


def test_a_stage_belongs_to_the_study_its_foreach_key_names() -> None:
    studies = ["doudizhu"]
    assert repro.study_of("train@doudizhu-ppo", studies) == "doudizhu"
    assert repro.study_of("seeds@doudizhu", studies) == "doudizhu"
    assert repro.study_of("train@ppo", studies) == repro.MAIN
    assert repro.study_of("simulate@paper", studies) == repro.MAIN
    assert repro.study_of("train@doudizhuish", studies) == repro.MAIN  # a prefix is not a study
    both = ["doudizhu", "doudizhu_auction"]
    assert repro.study_of("train@doudizhu_auction-ppo", both) == "doudizhu_auction"
    assert repro.study_of("train@doudizhu-ppo", both) == "doudizhu"


def test_a_stage_downstream_of_two_studies_is_joint() -> None:
    edges = {"s@big2": set(), "t@ppo": {"s@big2"}, "s@o": set(), "t@o-ppo": {"s@o"},
             "r@o": {"t@o-ppo"}, "r@big2": {"t@ppo", "r@o"}, "x": {"r@big2"}}
    by, joint = repro.groups(edges, ["o"])
    assert by == {"big2": ["s@big2", "t@ppo"], "o": ["s@o", "t@o-ppo", "r@o"]}
    assert joint == ["r@big2", "x"]  # x only through r@big2: still downstream of both studies


def test_the_repository_pipeline_runs_its_studies_side_by_side() -> None:
    by, joint = repro.groups(repro.stage_graph(REPO), repro.study_names(REPO))
    assert set(by) == {"big2", "doudizhu", "doudizhu_auction"}
    assert joint == ["report@big2"]  # it reads the Dou Dizhu studies' metrics.json
    assert "report@doudizhu" in by["doudizhu"] and "train@ppo" in by["big2"]
    assert {"train@doudizhu_auction-ppo", "auction@doudizhu_auction"} <= set(by["doudizhu_auction"])
    assert not any(s.startswith("report") for s in by["big2"])


TOY = """
stages:
  work:
    foreach: [big2, other]
    do:
      cmd: python stamp.py ${item}
      deps:
        - stamp.py
      outs:
        - out_${item}.json
  join:
    cmd: python join.py
    deps: [join.py, out_big2.json, out_other.json]
    outs: [joined.txt]
"""

STAMP = """import json, sys, time
start = time.time(); time.sleep(3)
json.dump({"start": start, "end": time.time()}, open(f"out_{sys.argv[1]}.json", "w"))
"""


JOIN = """import json
ends = [json.load(open(f"out_{s}.json"))["end"] for s in ("big2", "other")]
open("joined.txt", "w").write(str(len(ends)))
"""


@pytest.fixture()
def toy_repo(tmp_path, monkeypatch):
    env = {**os.environ, "DVC_NO_ANALYTICS": "1"}
    monkeypatch.setenv("DVC_NO_ANALYTICS", "1")
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run([sys.executable, "-m", "dvc", "init", "-q"], cwd=tmp_path, check=True, env=env)
    (tmp_path / "dvc.yaml").write_text(TOY)
    (tmp_path / "stamp.py").write_text(STAMP)
    (tmp_path / "join.py").write_text(JOIN)
    (tmp_path / "params.yaml").write_text("studies:\n  other: {}\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_studies_run_at_the_same_time_and_the_joint_stage_after_them(toy_repo) -> None:
    assert repro.main(["--jobs", "2"]) == 0
    a, b = (json.loads((toy_repo / f"out_{s}.json").read_text()) for s in ("big2", "other"))
    assert a["start"] < b["end"] and b["start"] < a["end"]  # the two studies' stages overlapped
    assert (toy_repo / "joined.txt").read_text().strip() == "2"
    status = subprocess.run([sys.executable, "-m", "dvc", "status"], capture_output=True, text=True, check=True)
    assert "up to date" in status.stdout  # dvc.lock records every stage: no write was lost


def test_one_job_is_a_plain_dvc_repro(toy_repo) -> None:
    assert repro.main(["--jobs", "1"]) == 0
    a, b = (json.loads((toy_repo / f"out_{s}.json").read_text()) for s in ("big2", "other"))
    assert a["end"] <= b["start"] or b["end"] <= a["start"]  # one after the other
    assert (toy_repo / "joined.txt").exists()


def test_a_failing_study_skips_the_joint_stage(toy_repo) -> None:
    (toy_repo / "stamp.py").write_text(STAMP + "sys.exit(sys.argv[1] == 'other')\n")
    assert repro.main(["--jobs", "2"]) == 1
    assert (toy_repo / "out_big2.json").exists() and not (toy_repo / "joined.txt").exists()


def test_stage_times_are_recorded_in_pipeline_order_and_summed(tmp_path) -> None:
    write_stage_time(tmp_path, "tournament", 130.0)
    write_stage_time(tmp_path, "train", 61.04, "ppo")
    write_stage_time(tmp_path, "seeds", 3.0)
    rows = read_stage_times(tmp_path)
    assert [(r["stage"], r["learner"]) for r in rows] == [("seeds", None), ("train", "ppo"), ("tournament", None)]
    md = "\n".join(stage_time_lines(tmp_path))
    assert "| train | ppo | 61 s |  |  |" in md and "| tournament |  | 2.2 min |  |  |" in md
    assert "**all stages** | | **3.2 min** | | |" in md  # own work not known for every stage: no sum
    assert stage_time_lines(tmp_path / "none") == []
    # with each stage's own work: the rest (process start, imports, Prefect) per stage and summed
    write_stage_time(tmp_path, "tournament", 130.0, work_seconds=124.5)
    write_stage_time(tmp_path, "train", 61.04, "ppo", work_seconds=57.0)
    write_stage_time(tmp_path, "seeds", 3.0, work_seconds=0.01)
    md = "\n".join(stage_time_lines(tmp_path))
    assert "| train | ppo | 61 s | 57 s | 4.0 s |" in md and "| tournament |  | 2.2 min | 2.1 min | 5.5 s |" in md
    assert "**all stages** | | **3.2 min** | **3.0 min** | **13 s** |" in md


def test_a_stage_run_records_its_time(tmp_path, monkeypatch) -> None:
    from pipeline.__main__ import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text((REPO / "params.yaml").read_text())
    assert main(["seeds", "--no-prefect", "--no-track"]) == 0
    assert main(["seeds", "--no-prefect", "--no-track", "--study", "doudizhu"]) == 0
    for reports in ("reports", "reports/doudizhu"):
        (row,) = read_stage_times(tmp_path / reports)
        assert row["stage"] == "seeds" and row["learner"] is None and 0 < row["work_seconds"] < row["seconds"]
    assert main(["seeds", "--no-track"]) == 0  # as a Prefect flow: its own work apart from Prefect's
    (row,) = read_stage_times(tmp_path / "reports")
    # the stage's own work is timed apart from Prefect's start-up (no wall-clock bound: CI machines vary)
    assert 0 < row["work_seconds"] < row["seconds"], row
    from pipeline.flows import WORK_FILE

    assert WORK_FILE not in os.environ  # the clock's file was named for the stage process only


def test_python_m_pipeline_runs_each_stage_in_the_command_s_process(tmp_path, monkeypatch) -> None:
    """DVC gives every stage a process: ``python -m pipeline STAGE`` runs the stage's flow in it
    and spawns no second one (the re-import of torch and climbrl costs seconds a stage). The
    stage functions are replaced here by ones that note the process they ran in; a spawned
    process would run the real ones, and spawning is made to fail."""
    from pipeline import flows, stages
    from pipeline.__main__ import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text((REPO / "params.yaml").read_text())
    ran: list[tuple[str, int]] = []

    def fake(name: str, result: dict):
        def stage(params, *args, **kwargs):
            ran.append((name, os.getpid()))
            return result
        return stage

    for name, result in [("train_learner", {"history": []}), ("evaluate_learner", {}),
                         ("baselines", {"seconds": 0.0}), ("deep", {"learner": "ppo", "repeats": 1}),
                         ("tournament", {"games": 0, "leaderboard": []}), ("behaviour", {"agents": {}})]:
        monkeypatch.setattr(stages, name, fake(name, result))

    def no_spawn(*args, **kwargs):
        raise AssertionError("a stage process was spawned")

    monkeypatch.setattr(flows, "in_own_process", no_spawn)
    for argv in (["train", "ppo"], ["evaluate", "ppo"], ["baselines"], ["deep"], ["tournament"], ["behaviour"]):
        assert main([*argv, "--no-track"]) == 0, argv
    assert ran == [(n, os.getpid()) for n in ("train_learner", "evaluate_learner", "baselines", "deep",
                                              "tournament", "behaviour")]
    rows = read_stage_times(tmp_path / "reports")
    assert len(rows) == 6 and all(0 <= r["work_seconds"] < r["seconds"] for r in rows), rows
    # a flow called from elsewhere (a notebook, a test) still runs its stage in a process of its own
    monkeypatch.setattr(flows, "baselines_task", flows.baselines_task.with_options(retries=0))
    with pytest.raises(AssertionError, match="spawned"):
        flows.baselines_flow("params.yaml")


def test_a_dvc_stage_s_flow_sends_no_heartbeats_unless_the_environment_asks(tmp_path, monkeypatch) -> None:
    """Prefect's flow-run heartbeats cost up to a second at the end of every stage's flow (their
    thread sleeps in one-second steps and the flow joins it): ``python -m pipeline STAGE`` turns
    them off, and a frequency set in the environment turns them back on. Counted at Prefect's own
    emitter, which the heartbeat thread calls at once when it starts."""
    from pipeline import stages
    from pipeline.__main__ import HEARTBEAT_VARS, _stage_settings, main
    from prefect.flow_engine import BaseFlowRunEngine
    from prefect.settings import get_current_settings

    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text((REPO / "params.yaml").read_text())
    monkeypatch.setattr(stages, "baselines", lambda params, *a, **k: {"seconds": 0.0})
    beats: list[int] = []
    monkeypatch.setattr(BaseFlowRunEngine, "_emit_flow_run_heartbeat", lambda self, *a: beats.append(1))
    for var in HEARTBEAT_VARS:
        monkeypatch.delenv(var, raising=False)
    assert main(["baselines", "--no-track"]) == 0
    assert beats == []
    # a frequency in the environment: the stage leaves Prefect's setting alone (read when Prefect
    # was imported, so the beats here come at its default frequency, not at 60 s)
    monkeypatch.setenv("PREFECT_FLOWS_HEARTBEAT_FREQUENCY", "60")
    assert main(["baselines", "--no-track"]) == 0
    assert beats, "the heartbeats were turned off although the environment sets their frequency"
    # the study flow keeps them, whatever the environment
    monkeypatch.delenv("PREFECT_FLOWS_HEARTBEAT_FREQUENCY")
    before = get_current_settings().flows.heartbeat_frequency
    with _stage_settings("study"):
        assert get_current_settings().flows.heartbeat_frequency == before is not None
    with _stage_settings("train"):
        assert get_current_settings().flows.heartbeat_frequency is None


def _nap() -> str:
    import time

    time.sleep(0.3)
    return "done"


def test_a_stage_process_records_its_own_work_for_the_stage_time(tmp_path, monkeypatch) -> None:
    """The stage runs in a spawned process (flows.in_own_process): the seconds of its own work
    reach the parent through the file CLIMBRL_STAGE_WORK_FILE names; a retried task adds both."""
    from pipeline import flows

    clock = tmp_path / "seconds"
    monkeypatch.setenv(flows.WORK_FILE, str(clock))
    assert flows.read_work(clock) is None
    assert flows.in_own_process(flows.in_project, None, _nap) == "done"
    first = flows.read_work(clock)
    assert 0.3 <= first < 5
    flows.in_project(None, _nap)
    assert first + 0.3 <= flows.read_work(clock) < first + 5


def test_every_study_s_experiment_exists_before_the_studies_start_and_its_runs_address_is_given(tmp_path) -> None:
    import mlflow

    (tmp_path / "params.yaml").write_text((REPO / "params.yaml").read_text())
    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    # in a process of its own: MLflow's active experiment is process-wide state
    out = subprocess.run([sys.executable, "-c", "import json; from pipeline import repro; "
                          "print(json.dumps(repro.prepare_tracking()))"],
                         cwd=tmp_path, env={**env, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "src")])},
                         capture_output=True, text=True, check=True)
    addresses = json.loads(out.stdout)
    assert list(addresses) == ["climbrl-big2-study", "climbrl-doudizhu-study", "climbrl-doudizhu_auction-study"]
    client = mlflow.tracking.MlflowClient(f"sqlite:///{tmp_path / 'mlflow.db'}")
    ids = {e.name: e.experiment_id for e in client.search_experiments()}
    for name, address in addresses.items():  # make run prints each study's runs table, and how to serve it
        assert address.startswith(f"http://127.0.0.1:5000/#/experiments/{ids[name]}/runs (serve it first: ")
