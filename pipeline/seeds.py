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

import dataclasses
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pipeline  # noqa: F401  (environment defaults)
from climbrl.config import TrainConfig
from climbrl.params import Params, load_params
from climbrl.threads import process_pool
from pipeline import params_io
from pipeline.params_io import ParamsError

PARAMS = Path(__file__).resolve().parents[1] / "seeds" / "params.yaml"
RUNS = Path("runs/seeds")
REPORTS = Path("reports/seeds")
EVALUATION = "evaluation.json"
SETS = ("evaluation", "validation")


@dataclasses.dataclass(frozen=True)
class System:
    """A configuration that the seed study trains beside the contenders and the study does not."""

    base: str
    """The contender whose config it starts from."""
    changes: dict[str, Any]
    """Its config changes (not the seed)."""
    against: str
    """The contender it is compared with: its base unless the params name another (the opponent pool
    at plain PPO's decisions is compared with plain PPO)."""


@dataclasses.dataclass(frozen=True)
class GameSpec:
    study: str
    """The params spec of the game's study (``params.yaml``, ``params.yaml#doudizhu``)."""
    learners: tuple[str, ...]
    """Its contenders, in the order they are run."""
    systems: dict[str, System] = dataclasses.field(default_factory=dict)
    """By name, the systems trained here only (not by the study), run after the contenders."""

    def runs(self) -> tuple[str, ...]:
        """Every name that is trained: the contenders, then the systems."""
        return (*self.learners, *self.systems)


@dataclasses.dataclass(frozen=True)
class SeedStudy:
    seeds: tuple[int, ...]
    workers: int
    games: dict[str, GameSpec]


def load_seed_params(path: str | Path = PARAMS) -> SeedStudy:
    """``seeds/params.yaml``, checked: :class:`~pipeline.params_io.ParamsError` naming the file
    and key on anything else (every game's study must name it as its game, configure each
    contender, and train with a seed among ``seeds``, so that the study's own choice is among the
    runs; every name is a plain name, as it names the runs' folders)."""
    raw = params_io.read(path)
    if not isinstance(raw, dict) or set(raw) != {"seeds", "workers", "games"}:
        raise ParamsError(f"{path}: expected exactly seeds, workers and games")
    seeds = raw["seeds"]
    if (not isinstance(seeds, list) or len(seeds) < 2 or len(set(map(repr, seeds))) != len(seeds)
            or not all(isinstance(s, int) and not isinstance(s, bool) and 0 <= s <= params_io.SEED_MAX
                       for s in seeds)):
        raise ParamsError(f"{path}: seeds must be at least two distinct integers from 0 to {params_io.SEED_MAX:,}, "
                          f"got {seeds!r}")
    params_io.integer(raw["workers"], path, "workers", 1, params_io.WORKERS_MAX)
    if not isinstance(raw["games"], dict) or not raw["games"]:
        raise ParamsError(f"{path}: games must map each game to its study and learners")
    games = {}
    for game, g in raw["games"].items():
        params_io.name(game, path, "games")
        if not isinstance(g, dict) or not {"study", "learners"} <= set(g) <= {"study", "learners", "systems"}:
            raise ParamsError(f"{path}: games.{game} must hold study and learners, and may hold systems")
        learners = g["learners"]
        if (not isinstance(learners, list) or len(learners) < 2 or len(set(map(repr, learners))) != len(learners)
                or not isinstance(g["study"], str)):
            raise ParamsError(f"{path}: games.{game}.learners must name at least two distinct learners (and study a "
                              "params spec)")
        for a in learners:
            params_io.name(a, path, f"games.{game}.learners")
        try:
            params = load_params(g["study"])  # ParamsError names the key
        except ValueError as e:
            raise ParamsError(str(e), path, f"games.{game}.study") from None
        if params.game != game:
            raise ParamsError(f"{path}: games.{game}.study {g['study']!r} is a study of {params.game}")
        missing = [a for a in learners if a not in params.train]
        if missing:
            raise ParamsError(f"{path}: games.{game}.learners: {', '.join(missing)} not trained by {g['study']}")
        own = {params.train[a].seed for a in learners}
        if len(own) != 1 or not own <= set(seeds):
            raise ParamsError(f"{path}: games.{game}: the study trains with seed(s) {sorted(own)}, which must be one "
                             f"seed among seeds {seeds} (the study's choice is read on it)")
        games[game] = GameSpec(g["study"], tuple(learners), _systems(path, game, g.get("systems") or {}, params,
                                                                     learners))
    return SeedStudy(tuple(seeds), raw["workers"], games)


def _systems(path: str | Path, game: str, raw: Any, params: Params, learners: list[str]
             ) -> dict[str, System]:
    """``games.GAME.systems``, checked: each a new name, built on one of the game's contenders
    (``base``), with changes that make a valid config of that learner, compared with ``against``
    (a contender; default: the base)."""
    where = f"{path}: games.{game}.systems"
    if not isinstance(raw, dict):
        raise ParamsError(f"{where} must map each system to its base learner and config changes")
    out = {}
    for name, spec in raw.items():
        params_io.name(name, path, f"games.{game}.systems")  # runs/seeds/GAME/NAME
        if (name in params.train or not isinstance(spec, dict) or spec.get("base") not in learners
                or spec.get("against", spec.get("base")) not in learners):
            raise ParamsError(f"{where}.{name}: a system needs a name the study does not train, and a base (and "
                             f"against, if given) among the contenders ({', '.join(learners)})")
        changes = {k: v for k, v in spec.items() if k not in ("base", "against")}
        if not changes or "seed" in changes:
            raise ParamsError(f"{where}.{name}: a system changes its base's config (not its seed)")
        try:
            dataclasses.replace(params.train[spec["base"]], **changes)
        except (TypeError, ValueError) as e:
            raise ParamsError(f"{where}.{name}: {e}") from None
        out[name] = System(spec["base"], changes, spec.get("against", spec["base"]))
    return out


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


def run_config(params: Params, learner: str, seed: int, spec: GameSpec | None = None) -> TrainConfig:
    """The study's config of ``learner`` with the training seed replaced, nothing else; a system of
    ``spec``: its base learner's, with the system's changes."""
    system = spec.systems.get(learner) if spec else None
    if system is None:
        return dataclasses.replace(params.train[learner], seed=seed)
    return dataclasses.replace(params.train[system.base], seed=seed, **system.changes)


def run_dir(runs: str | Path, game: str, learner: str, seed: int) -> Path:
    return Path(runs) / game / learner / f"seed{seed}"


def jobs(study: SeedStudy, runs: str | Path = RUNS) -> list[Job]:
    """Every run, in the order it is started: the games' learner lists interleaved (the first of
    each game, then the second of each, ...), every seed of a learner in a row."""
    per_game = []
    for game, spec in study.games.items():
        params = load_params(spec.study)
        sets = deal_sets(params)
        per_game.append([[Job(game, a, s, run_config(params, a, s, spec), str(run_dir(runs, game, a, s)),
                              tuple(params.evaluate.opponents), sets) for s in study.seeds] for a in spec.runs()])
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

    out = Path(job.out)
    rec = done(job)
    if rec is not None:
        return {"learner_decisions": learner_decisions(out), **rec}
    print(f"seeds: {job.game} {job.learner} seed {job.seed}: training into {out}", file=sys.stderr, flush=True)
    res = train_resumable(job.cfg, out)
    started = time.perf_counter()
    from pipeline.regression import math_path

    # the math path of the process that finished the run (a run resumed on another machine is not told apart)
    rec = {"game": job.game, "learner": job.learner, "seed": job.seed, **_expected(job), "math_path": math_path(),
           "policy_md5": _md5(out / "policy.pt"), "epochs": len(res["history"]),
           "learner_decisions": learner_decisions(out), "train_seconds": res["train_seconds"]}
    for s in job.sets:
        rec[s.name] = deal_records(out / "policy.pt", job.opponents, job.cfg.game, job.cfg.rules, s.deals,
                                   s.seat_seed)
    rec["eval_seconds"] = time.perf_counter() - started
    tmp = out / (EVALUATION + ".tmp")
    tmp.write_text(json.dumps(rec, indent=1) + "\n")
    tmp.replace(out / EVALUATION)
    print(f"seeds: {job.game} {job.learner} seed {job.seed} done", file=sys.stderr, flush=True)
    return rec


def learner_decisions(out: Path) -> int | None:
    """The decisions the run's learner made over its epochs (its ``metrics.csv``; None without one):
    what a comparison at the same budget holds equal."""
    import csv

    try:
        with open(out / "metrics.csv", newline="") as f:
            return sum(int(r["learner_decisions"]) for r in csv.DictReader(f))
    except (OSError, KeyError, ValueError):
        return None


def run(study: SeedStudy, runs: str | Path = RUNS, reports: str | Path = REPORTS,
        workers: int | None = None, only: tuple[str, ...] = ()) -> dict[str, Path]:
    """Every run (:func:`run_one`, ``workers`` processes), then each game's records in
    ``reports/GAME.json``. With ``only``, only those contenders or systems run; every other run's
    record is kept from the ``reports/GAME.json`` already there (:func:`kept_records`)."""
    todo = jobs(study, runs)
    names = {j.learner for j in todo}
    if set(only) - names:
        raise ValueError(f"--only: {', '.join(sorted(set(only) - names))} not among the runs "
                         f"({', '.join(sorted(names))})")
    fresh = [j for j in todo if not only or j.learner in only]
    made = kept_records([j for j in todo if j not in fresh], reports)  # before any training: fail early
    with process_pool(workers or study.workers) as pool:
        made |= {_key(j): r for j, r in zip(fresh, pool.map(run_one, fresh), strict=True)}
    return {game: write_records(game, study, [made[_key(j)] for j in todo if j.game == game], reports)
            for game in study.games}


def _key(job: Job) -> tuple[str, str, int]:
    return job.game, job.learner, job.seed


def kept_records(todo: list[Job], reports: str | Path) -> dict[tuple[str, str, int], dict[str, Any]]:
    """The records of ``todo`` in the ``reports/GAME.json`` already there (``ValueError`` for a run it
    lacks, or one played on other deals or opponents, or trained with another config where the record
    holds its config), so that a system can be added without training every contender again. A record
    is kept as it is: one made before records held their config keeps none (its config was not
    checked, so none is claimed)."""
    out, files = {}, {}
    for j in todo:
        path = Path(reports) / f"{j.game}.json"
        if path not in files:
            try:
                files[path] = json.loads(path.read_text())
            except (OSError, json.JSONDecodeError) as e:
                raise ValueError(f"--only: the other runs' records are needed from {path}: {e}") from None
        data, want = files[path], _expected(j)
        rec = data["runs"].get(j.learner, {}).get(str(j.seed))
        if (rec is None or data["sets"] != want["sets"] or data["opponents"] != want["opponents"]
                or rec.get("config", want["config"]) != want["config"]):
            raise ValueError(f"--only: {path} holds no record of {j.learner} seed {j.seed} with this config, "
                             "deals and opponents: run it too")
        out[_key(j)] = {"game": j.game, "learner": j.learner, "seed": j.seed, "opponents": want["opponents"],
                        "sets": want["sets"], **rec}
    return out


def write_records(game: str, study: SeedStudy, records: list[dict[str, Any]], reports: str | Path) -> Path:
    """``reports/GAME.json``: the game's setup and every run's per-deal results and config."""
    params = load_params(study.games[game].study)
    spec = study.games[game]
    first = records[0]
    data = {"game": game, "rules": params.rules, "study": spec.study, "seeds": list(study.seeds),
            "study_seed": params.train[spec.learners[0]].seed,
            "learners": [a for a in params.learners() if a in spec.learners],  # the study's order: its ties rule
            "systems": {a: dataclasses.asdict(x) for a, x in spec.systems.items()},
            "algos": {a: run_config(params, a, 0, spec).algo for a in spec.runs()}, "opponents": first["opponents"],
            "sets": first["sets"], "runs": {a: {} for a in spec.runs()}}
    for r in records:
        data["runs"][r["learner"]][str(r["seed"])] = {k: r[k] for k in ("config", "math_path", "policy_md5", "epochs",
                                                                        "learner_decisions", "train_seconds",
                                                                        "eval_seconds", *SETS) if k in r}
    path = Path(reports) / f"{game}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


@params_io.command("python -m pipeline.seeds")
def main(argv: list[str] | None = None) -> int:
    p = params_io.ArgumentParser(prog="python -m pipeline.seeds", description=__doc__.split("\n\n")[0])
    p.add_argument("step", choices=("run",), help="train and evaluate every run (the report: python -m "
                   "pipeline.seeds_report)")
    p.add_argument("--params", default=str(PARAMS))
    p.add_argument("--workers", type=int, help="runs at a time (default: the params' workers)")
    p.add_argument("--runs", default=str(RUNS))
    p.add_argument("--reports", default=str(REPORTS))
    p.add_argument("--game", help="only this game of the params (its DVC stage: run@GAME)")
    p.add_argument("--only", nargs="+", default=(), metavar="NAME",
                   help="run only these contenders or systems; the other runs' records are kept from the "
                        "REPORTS/GAME.json already there (an error where it lacks one)")
    args = p.parse_args(argv)
    params_io.workers(args.workers)
    study = load_seed_params(args.params)
    if args.game:
        study = only_game(study, args.game)
    paths = run(study, args.runs, args.reports, args.workers, tuple(args.only))
    for path in paths.values():
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
