"""Optuna studies over the learners' hyperparameters.

Searched, where the learner has them: learning rate (log scale, all), entropy coefficient
(PPO, log scale), target-sync period (Q-learning, DQN, log scale), epsilon-decay length (DQN,
log scale), constant epsilon (MCQ, SARSA, Q-learning). Objective: the greedy policy's win rate
against a copy of ``tune.opponent`` in every other seat (default: Big 2 the heuristic, Dou Dizhu
greedy, :data:`climbrl.config.GAME_SETUP`) at a reduced budget, at the game of ``params.yaml``
under its rules; every evaluation during training is
reported so the pruner (median by default) stops weak trials. The sampler is seeded; the
storage defaults to SQLite and a study is resumable: rerunning the same command keeps the
finished trials and runs only the missing ones. Each trial is a nested MLflow run; the best
parameters go to a YAML file that ``climbrl train --config`` takes.

Dashboard: ``optuna-dashboard sqlite:///optuna.db --host 127.0.0.1 --port 8080``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from climbrl.config import train_config
from climbrl.params import TuneParams


def suggest(trial: Any, algo: str) -> dict[str, Any]:
    values: dict[str, Any] = {"lr": trial.suggest_float("lr", 1e-5, 1e-3, log=True)}
    if algo == "ppo":
        values["ent_coef"] = trial.suggest_float("ent_coef", 1e-4, 1e-1, log=True)
    if algo in ("qlearning", "dqn"):
        values["target_sync"] = trial.suggest_int("target_sync", 50, 5000, log=True)
    if algo == "dqn":
        values["epsilon_decay_steps"] = trial.suggest_int("epsilon_decay_steps", 5_000, 500_000, log=True)
    if algo in ("mcq", "sarsa", "qlearning"):
        values["epsilon"] = trial.suggest_float("epsilon", 0.01, 0.3)
    return values


def run_study(tp: TuneParams, rules: str = "", algo: str | None = None, trials: int | None = None,
              storage: str | None = None, study_name: str | None = None, out_dir: str | Path = "runs/tune",
              best_yaml: str | Path | None = None, track: bool = True, tracking: Any = None,
              game: str = "big2") -> dict[str, Any]:
    """The study of ``algo`` (default ``tp.algo``) at ``game`` under ``rules`` (default: the
    game's default preset); the objective plays ``tp.opponent``."""
    import optuna

    algo = algo or tp.algo
    opponent = tp.opponent
    trials = trials if trials is not None else tp.trials
    storage = storage or tp.storage
    study_name = study_name or (tp.study if algo == tp.algo else f"climbrl-{algo}")
    train_config(algo, game=game, rules=rules, eval_games=tp.eval_games,
                 eval_opponents=(opponent,))  # fail fast on an unknown learner, game, rules or opponent
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    pruner = optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=0) if tp.pruner == "median" \
        else optuna.pruners.NopPruner()
    study = optuna.create_study(study_name=study_name, storage=storage, direction="maximize", load_if_exists=True,
                                sampler=optuna.samplers.TPESampler(seed=tp.seed), pruner=pruner)
    # a resumed study keeps its trials: they must have played this game (a study from before the
    # second game, without the attribute, played Big 2)
    made_for = study.user_attrs.get("game", "big2" if study.trials else game)
    if made_for != game:
        raise ValueError(f"Optuna study {study_name} ({storage}) holds {made_for} trials; this search plays {game}: "
                         "name another study (--study, tune.study)")
    if "game" not in study.user_attrs:
        study.set_user_attr("game", game)
    finished = [t for t in study.trials if t.state.name in ("COMPLETE", "PRUNED")]
    remaining = max(0, trials - len(finished))
    mlflow = None
    if track and tracking is not None:
        from climbrl import track as tr

        tr.configure(tracking.tracking_uri, tracking.experiment)
        import mlflow

    def objective(trial: Any) -> float:
        from climbrl.training import train

        values = suggest(trial, algo)
        cfg = train_config(algo, game=game, rules=rules, epochs=tp.epochs, games_per_epoch=tp.games_per_epoch,
                           eval_every=tp.eval_every, eval_games=tp.eval_games,
                           eval_opponents=(opponent,), seed=tp.seed, **values)
        run_dir = Path(out_dir) / study_name / f"trial-{trial.number}"
        shutil.rmtree(run_dir, ignore_errors=True)  # a trial restarted after a crash starts clean
        last: dict[str, float] = {}

        def report(row: dict[str, Any]) -> None:
            key = f"win_rate/{opponent}"
            if key in row:
                last["value"] = row[key]
                trial.report(row[key], step=int(row["epoch"]))
                if trial.should_prune():
                    raise optuna.TrialPruned()

        ctx = mlflow.start_run(run_name=f"trial-{trial.number}", nested=True) if mlflow else None
        try:
            if ctx:
                ctx.__enter__()
                mlflow.log_params(values)
            train(cfg, run_dir, progress=False, on_epoch=report)
            value = last.get("value", 0.0)
            if ctx:
                mlflow.log_metric("objective", value)
            return value
        except optuna.TrialPruned:
            if ctx:
                mlflow.set_tag("state", "pruned")
            raise
        finally:
            if ctx:
                ctx.__exit__(None, None, None)

    if remaining:
        if mlflow:
            with mlflow.start_run(run_name=f"tune-{study_name}"):
                mlflow.set_tags({"stage": "tune", "algo": algo})
                study.optimize(objective, n_trials=remaining)
        else:
            study.optimize(objective, n_trials=remaining)
    done = [t for t in study.trials if t.state.name == "COMPLETE"]
    result = {"study": study_name, "storage": storage, "algo": algo, "trials": len(study.trials),
              "complete": len(done), "pruned": sum(t.state.name == "PRUNED" for t in study.trials)}
    if done:
        result["best_value"] = study.best_value
        result["best_params"] = study.best_params
        path = Path(best_yaml or f"reports/tune/best_{algo}.yaml")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# best of Optuna study {study_name} ({storage}); use: climbrl train --algo {algo} "
                        f"--config {path}\n" + yaml.safe_dump(study.best_params, sort_keys=True))
        result["best_yaml"] = str(path)
    return result
