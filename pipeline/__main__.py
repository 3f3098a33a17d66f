"""``python -m pipeline STAGE [ALGO] [--no-prefect] [--no-track] [--params FILE] [--study NAME]``

Stages: seeds, train ALGO, evaluate ALGO, baselines, deep, auction, tournament, behaviour, report, study (the
whole chain as one flow; its tasks on the Dask cluster at ``CLIMBRL_DASK_ADDRESS`` when that is set, else on threads).
DVC runs these (dvc.yaml); each runs as a Prefect flow unless ``--no-prefect`` (or
``CLIMBRL_PREFECT=0``), which calls the same stage function directly. ``--study NAME`` runs the
stage for the study ``studies.NAME`` of the params file (its files under data/NAME, runs/NAME,
reports/NAME) instead of the main one.
"""

from __future__ import annotations

import time

_START = time.perf_counter()  # the stage's time counts from here (stage_times)

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from typing import Any  # noqa: E402

import pipeline  # noqa: F401, E402  (environment defaults)
from climbrl.params import ParamsError  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pipeline")
    p.add_argument("stage", choices=["seeds", "train", "evaluate", "baselines", "deep", "auction", "tournament",
                                     "behaviour", "report", "study"])
    p.add_argument("algo", nargs="?")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--study", default="", help="a study beside the main one (studies.NAME in the params file)")
    p.add_argument("--no-prefect", action="store_true")
    p.add_argument("--no-track", action="store_true", help="do not log to MLflow")
    args = p.parse_args(argv)
    from pipeline import stages

    if args.study:
        args.params = f"{args.params}#{args.study}"  # the params spec every stage and task reads
    try:
        params = stages.params(args.params)  # validate everything before any work
    except ParamsError as e:
        print(f"params error: {e}", file=sys.stderr)
        return 2
    if args.stage in ("train", "evaluate") and args.algo not in params.train:
        print(f"params error: {args.stage} needs a learner configured under train: "
              f"{', '.join(params.learners())}", file=sys.stderr)
        return 2
    track = not args.no_track
    start = time.perf_counter()
    if args.no_prefect or os.environ.get("CLIMBRL_PREFECT") == "0":
        if args.stage == "study":
            print("the study stage is the parent Prefect flow: run it without --no-prefect", file=sys.stderr)
            return 2
        run = {"seeds": lambda: stages.make_seeds(params),
               "train": lambda: stages.train_learner(params, args.algo, track=track, params_path=args.params),
               "evaluate": lambda: stages.evaluate_learner(params, args.algo, track=track, params_path=args.params),
               "baselines": lambda: stages.baselines(params),
               "deep": lambda: stages.deep(params, track=track),
               "auction": lambda: stages.auction(params, track=track),
               "tournament": lambda: stages.tournament(params, track=track),
               "behaviour": lambda: stages.behaviour(params, track=track),
               "report": lambda: stages.report(params, track=track)}[args.stage]
        run()
        work = time.perf_counter() - start
    else:
        from pipeline import flows

        runner = "dask" if os.environ.get("CLIMBRL_DASK_ADDRESS") else "threads"  # the study's learners
        work = _run_flow(flows, args, track, runner)
    print(f"stage {args.stage} {args.algo or ''} done in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    if args.stage not in ("study", "report"):
        from climbrl.stage_times import write_stage_time

        write_stage_time(stages.study_paths(params).reports, args.stage, time.perf_counter() - _START,
                         args.algo if args.stage in ("train", "evaluate") else None, work_seconds=work)
    return 0


def _run_flow(flows: Any, args: argparse.Namespace, track: bool, runner: str) -> float | None:
    """The stage's flow, run in this process (the study flow spawns its stages' processes);
    returns the seconds of the stage's own work, which the stage records
    (:func:`pipeline.flows.record_work`) in a file named in the environment."""
    import tempfile

    # This process is the stage's own (DVC starts one per stage): the stage runs in it, in place
    # (seeds and report always do).
    call = {"seeds": lambda: flows.seeds_flow(args.params),
            "train": lambda: flows.train_flow(args.algo, args.params, track, in_place=True),
            "evaluate": lambda: flows.evaluate_flow(args.algo, args.params, track, in_place=True),
            "baselines": lambda: flows.baselines_flow(args.params, in_place=True),
            "deep": lambda: flows.deep_flow(args.params, track, in_place=True),
            "auction": lambda: flows.auction_flow(args.params, track, in_place=True),
            "tournament": lambda: flows.tournament_flow(args.params, track, in_place=True),
            "behaviour": lambda: flows.behaviour_flow(args.params, track, in_place=True),
            "report": lambda: flows.report_flow(args.params, track),
            "study": lambda: flows.study_flow(args.params, track=track, task_runner=runner)}[args.stage]
    if args.stage in ("study", "report"):  # not timed
        with _stage_settings(args.stage):
            call()
        return None
    with tempfile.TemporaryDirectory(prefix="climbrl-work-") as d, _stage_settings(args.stage):
        path = os.path.join(d, "seconds")
        before = os.environ.get(flows.WORK_FILE)
        os.environ[flows.WORK_FILE] = path  # for the stage (here, or in a process a flow spawns)
        try:
            call()
        finally:
            if before is None:
                del os.environ[flows.WORK_FILE]
            else:
                os.environ[flows.WORK_FILE] = before
        return flows.read_work(path)

HEARTBEAT_VARS = ("PREFECT_FLOWS_HEARTBEAT_FREQUENCY", "PREFECT_RUNNER_HEARTBEAT_FREQUENCY")


def _stage_settings(stage: str) -> Any:
    """Prefect's settings for one DVC stage's flow: its flow-run heartbeats off, unless the
    environment sets their frequency (``HEARTBEAT_VARS``).

    Prefect 3 sends a flow run's heartbeats from a thread that sleeps in steps of one second, and
    the flow waits for that thread when it ends: up to a second a stage (a whole second for a short
    one, such as ``seeds``), times every stage of ``dvc repro``. The heartbeats only serve an
    automation that marks a flow run whose process died as crashed; none is set up here, and a
    DVC stage whose process dies fails its ``dvc repro`` anyway, which runs it again next time. The
    study flow (``study``), one long flow that a user may watch from another machine, keeps them."""
    import contextlib

    if stage == "study" or any(v in os.environ for v in HEARTBEAT_VARS):
        return contextlib.nullcontext()
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    return temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None})


if __name__ == "__main__":
    sys.exit(main())
