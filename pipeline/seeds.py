"""The study's rankings with their training-seed spread (issue 32, part 2): ``make seeds`` runs
``dvc repro seeds/dvc.yaml`` from ``seeds/params.yaml`` (not part of ``make run``).

The study trains every learner once, with seed 0, and ranks them; one training trajectory is
one draw (issue 32 saw Big 2's best learner flip with the math library's code path). Here each
game's contenders are trained with the study's exact config (``params.yaml``'s train section of
the game's study, as ``pipeline/stages.py`` builds it) for every seed of ``seeds``, only the seed
replaced, and every final policy is played as the evaluate stage plays it (its baselines, seat
seeds and games) on both of the study's versioned deal sets, deal by deal.

- ``run`` (``python -m pipeline.seeds run``): every (game, learner, seed), ``workers`` at a time,
  one process each, in the order :func:`jobs` gives (the games' contenders interleaved, the
  first of each game's list first: the most valuable contrasts finish first). Each run trains
  into ``runs/seeds/GAME/LEARNER/seedS`` (resumed from its checkpoint: a killed run loses at most
  an epoch; a checkpoint of another config starts over, :func:`pipeline.seeded.train_resumable`),
  then plays its evaluation and validation matches into ``evaluation.json`` there. A run whose
  ``evaluation.json`` matches its config, policy and deals is done and skipped, so the command
  continues where it stopped. Then each game's records go to ``reports/seeds/GAME.json``.
  A run is kept while its config matches: after a code change that moves the numbers (not the
  config), delete ``runs/seeds`` to retrain. ``--game GAME`` runs one game (the DVC stages
  ``run@GAME``, so that one game's seeds can be run and committed without the other's).
- The report (``python -m pipeline.seeds_report``, :mod:`pipeline.seeds_report`):
  ``reports/seeds/report.md`` and ``report.json`` from those records.

Choosing and reporting stay apart: every winner is chosen on the validation deals, as the study
chooses (:func:`climbrl.report.choose_best`); every number that ranks is read on the evaluation
deals. The study's choice is the validation winner of the study's own seed (its ``train`` seed),
which is what ``make run`` chooses when its runs take the same math path.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import multiprocessing as mp
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import yaml

import pipeline  # noqa: F401  (environment defaults)
from climbrl.config import TrainConfig
from climbrl.params import Params, load_params

PARAMS = Path(__file__).resolve().parents[1] / "seeds" / "params.yaml"
RUNS = Path("runs/seeds")
REPORTS = Path("reports/seeds")
EVALUATION = "evaluation.json"
SETS = ("evaluation", "validation")


@dataclasses.dataclass(frozen=True)
class GameSpec:
    study: str
    """The params spec of the game's study (``params.yaml``, ``params.yaml#doudizhu``)."""
    learners: tuple[str, ...]
    """Its contenders, in the order they are run."""


@dataclasses.dataclass(frozen=True)
class SeedStudy:
    seeds: tuple[int, ...]
    workers: int
    games: dict[str, GameSpec]


def load_seed_params(path: str | Path = PARAMS) -> SeedStudy:
    """``seeds/params.yaml``, checked: ``ValueError`` naming the file and key on anything else
    (every game's study must name it as its game, configure each contender, and train with a seed
    among ``seeds``, so that the study's own choice is among the runs)."""
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as e:
        raise ValueError(f"cannot read {path}: {e}") from None
    if not isinstance(raw, dict) or set(raw) != {"seeds", "workers", "games"}:
        raise ValueError(f"{path}: expected exactly seeds, workers and games")
    seeds = raw["seeds"]
    if (not isinstance(seeds, list) or len(seeds) < 2 or len(set(seeds)) != len(seeds)
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)):
        raise ValueError(f"{path}: seeds must be at least two distinct non-negative integers, got {seeds!r}")
    if not isinstance(raw["workers"], int) or raw["workers"] < 1:
        raise ValueError(f"{path}: workers must be a positive integer")
    if not isinstance(raw["games"], dict) or not raw["games"]:
        raise ValueError(f"{path}: games must map each game to its study and learners")
    games = {}
    for game, g in raw["games"].items():
        if not isinstance(g, dict) or set(g) != {"study", "learners"}:
            raise ValueError(f"{path}: games.{game} must hold exactly study and learners")
        learners = g["learners"]
        if not isinstance(learners, list) or len(learners) < 2 or len(set(learners)) != len(learners):
            raise ValueError(f"{path}: games.{game}.learners must name at least two distinct learners")
        params = load_params(g["study"])  # ParamsError (a ValueError) names the key
        if params.game != game:
            raise ValueError(f"{path}: games.{game}.study {g['study']!r} is a study of {params.game}")
        missing = [a for a in learners if a not in params.train]
        if missing:
            raise ValueError(f"{path}: games.{game}.learners: {', '.join(missing)} not trained by {g['study']}")
        own = {params.train[a].seed for a in learners}
        if len(own) != 1 or not own <= set(seeds):
            raise ValueError(f"{path}: games.{game}: the study trains with seed(s) {sorted(own)}, which must be one "
                             f"seed among seeds {seeds} (the study's choice is read on it)")
        games[game] = GameSpec(g["study"], tuple(learners))
    return SeedStudy(tuple(seeds), raw["workers"], games)


@dataclasses.dataclass(frozen=True)
class DealSet:
    name: str
    """``evaluation`` or ``validation``."""
    path: str
    deals: tuple[int, ...]
    seat_seed: int


@dataclasses.dataclass(frozen=True)
class Job:
    """One run: everything a worker process needs (plain data: it crosses a spawn)."""

    game: str
    learner: str
    seed: int
    cfg: TrainConfig
    out: str
    opponents: tuple[str, ...]
    sets: tuple[DealSet, ...]


def deal_sets(params: Params) -> tuple[DealSet, DealSet]:
    """The study's evaluation and validation deals as its evaluate stage plays them: the first
    ``evaluate.games // games per deal`` evaluation deals from seat seed 0, the validation deals
    from the validation seed (:func:`pipeline.stages.evaluate_learner`)."""
    from climbrl.evaluate.baselines_report import games_per_deal
    from pipeline.stages import check_disjoint, load_seeds, study_paths

    paths = study_paths(params)
    n = params.evaluate.games // games_per_deal(params.game, params.rules)
    evaluation, validation = load_seeds(paths.seeds)[:n], load_seeds(paths.valid_seeds)
    check_disjoint(evaluation, validation)
    return (DealSet("evaluation", str(paths.seeds), tuple(evaluation), 0),
            DealSet("validation", str(paths.valid_seeds), tuple(validation), params.seeds.validation_seed))


def only_game(study: SeedStudy, game: str) -> SeedStudy:
    """``study`` with ``game`` alone (``ValueError`` for a game it does not hold)."""
    if game not in study.games:
        raise ValueError(f"--game: {game!r} is not among the seed study's games ({', '.join(study.games)})")
    return dataclasses.replace(study, games={game: study.games[game]})


def run_config(params: Params, learner: str, seed: int) -> TrainConfig:
    """The study's config of ``learner`` with the training seed replaced, nothing else."""
    return dataclasses.replace(params.train[learner], seed=seed)


def run_dir(runs: str | Path, game: str, learner: str, seed: int) -> Path:
    return Path(runs) / game / learner / f"seed{seed}"


def jobs(study: SeedStudy, runs: str | Path = RUNS) -> list[Job]:
    """Every run, in the order it is started: the games' learner lists interleaved (the first of
    each game, then the second of each, ...), every seed of a learner in a row."""
    per_game = []
    for game, spec in study.games.items():
        params = load_params(spec.study)
        sets = deal_sets(params)
        per_game.append([[Job(game, a, s, run_config(params, a, s), str(run_dir(runs, game, a, s)),
                              tuple(params.evaluate.opponents), sets) for s in study.seeds] for a in spec.learners])
    out = []
    for rank in range(max(len(g) for g in per_game)):
        for g in per_game:
            if rank < len(g):
                out += g[rank]
    return out


def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def _digest(deals: tuple[int, ...]) -> str:
    from pipeline.champion_report import deals_digest

    return deals_digest(list(deals))


def _expected(job: Job) -> dict[str, Any]:
    """What a finished run's ``evaluation.json`` must say about how it was made."""
    return {"config": json.loads(json.dumps(job.cfg.to_dict())), "opponents": list(job.opponents),
            "sets": {s.name: {"deal_set": s.path, "deals": len(s.deals), "digest": _digest(s.deals),
                              "seat_seed": s.seat_seed} for s in job.sets}}


def done(job: Job) -> dict[str, Any] | None:
    """The run's record when it is finished with this config, policy and deals; else None."""
    out = Path(job.out)
    path, policy = out / EVALUATION, out / "policy.pt"
    if not path.exists() or not policy.exists():
        return None
    try:
        rec = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    same = all(rec.get(k) == v for k, v in _expected(job).items())
    return rec if same and rec.get("policy_md5") == _md5(policy) else None


def run_one(job: Job) -> dict[str, Any]:
    """Train (or continue) one run and play its matches; its record, also in ``evaluation.json``."""
    import time

    from pipeline.seeded import deal_records, train_resumable

    rec = done(job)
    if rec is not None:
        return rec
    out = Path(job.out)
    print(f"seeds: {job.game} {job.learner} seed {job.seed}: training into {out}", file=sys.stderr, flush=True)
    res = train_resumable(job.cfg, out)
    started = time.perf_counter()
    rec = {"game": job.game, "learner": job.learner, "seed": job.seed, **_expected(job),
           "policy_md5": _md5(out / "policy.pt"), "epochs": len(res["history"]),
           "train_seconds": res["train_seconds"]}
    for s in job.sets:
        rec[s.name] = deal_records(out / "policy.pt", job.opponents, job.cfg.game, job.cfg.rules, s.deals,
                                   s.seat_seed)
    rec["eval_seconds"] = time.perf_counter() - started
    tmp = out / (EVALUATION + ".tmp")
    tmp.write_text(json.dumps(rec, indent=1) + "\n")
    tmp.replace(out / EVALUATION)
    print(f"seeds: {job.game} {job.learner} seed {job.seed} done", file=sys.stderr, flush=True)
    return rec


def run(study: SeedStudy, runs: str | Path = RUNS, reports: str | Path = REPORTS,
        workers: int | None = None) -> dict[str, Path]:
    """Every run (:func:`run_one`, ``workers`` processes), then each game's records in
    ``reports/GAME.json``."""
    todo = jobs(study, runs)
    with ProcessPoolExecutor(max_workers=workers or study.workers, mp_context=mp.get_context("spawn")) as pool:
        records = list(pool.map(run_one, todo))
    return {game: write_records(game, study, [r for j, r in zip(todo, records, strict=True) if j.game == game],
                                reports) for game in study.games}


def write_records(game: str, study: SeedStudy, records: list[dict[str, Any]], reports: str | Path) -> Path:
    """``reports/GAME.json``: the game's setup and every run's per-deal results."""
    params = load_params(study.games[game].study)
    contenders = study.games[game].learners
    first = records[0]
    data = {"game": game, "rules": params.rules, "study": study.games[game].study, "seeds": list(study.seeds),
            "study_seed": params.train[contenders[0]].seed,
            "learners": [a for a in params.learners() if a in contenders],  # the study's order: its ties rule
            "algos": {a: params.train[a].algo for a in contenders}, "opponents": first["opponents"],
            "sets": first["sets"], "runs": {a: {} for a in contenders}}
    for r in records:
        data["runs"][r["learner"]][str(r["seed"])] = {k: r[k] for k in ("policy_md5", "epochs", "train_seconds",
                                                                        "eval_seconds", *SETS)}
    path = Path(reports) / f"{game}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pipeline.seeds", description=__doc__.split("\n\n")[0])
    p.add_argument("step", choices=("run",), help="train and evaluate every run (the report: python -m "
                   "pipeline.seeds_report)")
    p.add_argument("--params", default=str(PARAMS))
    p.add_argument("--workers", type=int, help="runs at a time (default: the params' workers)")
    p.add_argument("--runs", default=str(RUNS))
    p.add_argument("--reports", default=str(REPORTS))
    p.add_argument("--game", help="only this game of the params (its DVC stage: run@GAME)")
    args = p.parse_args(argv)
    try:
        study = load_seed_params(args.params)
        if args.game:
            study = only_game(study, args.game)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for path in run(study, args.runs, args.reports, args.workers).values():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
