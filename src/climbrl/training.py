"""Training as the study runs it: :func:`climbrl.learn.train.train` with its in-training
evaluation, a duplicate-deal match of the greedy policy against each evaluation opponent.

The loop lives in ``learn`` and matches in ``evaluate``, which imports ``learn`` (a match loads
trained policies); this module sits above both and joins them, so neither imports the other's
layer upwards.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from climbrl.config import TrainConfig
from climbrl.evaluate.match import run_match
from climbrl.learn.train import train as _train_loop


def evaluate_policy(cfg: TrainConfig, policy_path: Path) -> dict[str, float]:
    """Win rate (with its 95% interval), games and mean reward of the policy at ``policy_path``
    against each of ``cfg.eval_opponents`` (one opponent spec fills every other seat), on the deals
    of ``cfg.eval_seed`` for the purpose ``"train-eval"``."""
    out: dict[str, float] = {}
    for opp in cfg.eval_opponents:
        r = run_match(f"checkpoint:{policy_path}", [opp], rules=cfg.rules, games=cfg.eval_games,
                      seed=cfg.eval_seed, workers=cfg.eval_workers, game=cfg.game, purpose="train-eval")
        out[f"win_rate/{opp}"] = r["win_rate"]
        out[f"win_rate_low/{opp}"] = r["win_rate_low"]
        out[f"win_rate_high/{opp}"] = r["win_rate_high"]
        out[f"eval_games/{opp}"] = r["games"]
        out[f"mean_reward/{opp}"] = r["mean_reward"]
    return out


def train(cfg: TrainConfig, out_dir: str | Path, resume: bool = False, progress: bool = True,
          on_epoch: Callable[[dict[str, Any]], None] | None = None, time_limit: float | None = None) -> dict[str, Any]:
    """Train ``cfg.algo`` on ``cfg.game`` with the study's in-training evaluation (see
    :func:`climbrl.learn.train.train` for checkpoints, resume, legs with a ``time_limit`` and the
    returned summary)."""
    return _train_loop(cfg, out_dir, resume=resume, progress=progress, on_epoch=on_epoch, evaluator=evaluate_policy,
                       time_limit=time_limit)


__all__ = ["train", "evaluate_policy"]
