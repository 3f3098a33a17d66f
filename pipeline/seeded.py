"""What the studies that train a configuration with several seeds share: the ablations
(``pipeline/ablation.py``) and the training-seed study (``pipeline/seeds.py``).

- :func:`train_resumable`: train into a folder, resuming from its checkpoint; a run that the
  config cannot resume (another setting: :func:`stale`) is moved aside and the run starts over,
  so a result never mixes two configurations; a checkpoint that cannot be read is refused, the
  folder left as it is for a person to look at.
- :func:`deal_records`: a final policy against copies of each baseline on a versioned deal list,
  as the game is judged (Big 2: every deal from every seat; Dou Dizhu under DouZero's protocol:
  every deal as landlord and as both peasants), the agent's wins deal by deal: what paired
  comparisons on the same deals need.
- :func:`seeded_rate`, :func:`seeded_difference`, :func:`compare_pairs`: a configuration's mean win
  rate over its seeds x deals table, and differences of two paired on the deals, with
  :func:`climbrl.evaluate.stats.contrast_interval`'s intervals (the seeds' and the deals' noise),
  never a point, and Holm's correction over a family of pairs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from climbrl.config import TrainConfig
from climbrl.evaluate.stats import contrast_interval, holm, newcombe_interval, wilson_interval


def stale(cfg: TrainConfig, out: Path) -> str | None:
    """Why the checkpoint in ``out`` cannot be resumed by ``cfg`` (None: it can, or there is none);
    the same rule as ``climbrl train --resume`` (:func:`climbrl.learn.checkpoint.resume_conflicts`).
    A checkpoint that cannot be read raises :class:`~climbrl.learn.checkpoint.CheckpointError`:
    what it holds is not known, so it is not for a program to discard."""
    from climbrl.learn import checkpoint as ckpt

    path = out / "checkpoint.pt"
    if not path.exists():
        return None
    return "; ".join(ckpt.resume_conflicts(cfg, ckpt.load(path))) or None


def train_resumable(cfg: TrainConfig, out: str | Path) -> dict[str, Any]:
    """Train ``cfg`` into ``out`` (:func:`climbrl.training.train`, the study's in-training
    evaluation), continuing its checkpoint; a folder of another configuration is moved aside
    (:func:`pipeline.previous.move_aside`) and the run starts over; an unreadable checkpoint is a
    :class:`~climbrl.learn.checkpoint.CheckpointError`, the folder left as it is."""
    from climbrl.training import train
    from pipeline.previous import move_aside

    out = Path(out)
    why = stale(cfg, out)
    if why:
        move_aside(out, f"trained with another config ({why})")
    return train(cfg, out, resume=True, progress=False)


def deal_records(policy: str | Path, opponents: Sequence[str], game: str, rules: str, seeds: Sequence[int],
                 seat_seed: int, workers: int = 1) -> dict[str, dict[str, Any]]:
    """``{opponent: record}``: the policy against copies of each opponent on the deals ``seeds``
    (all of them), each record :func:`climbrl.evaluate.stats.deal_record`'s (games, wins, win rate
    with its Wilson interval, ``deal_wins``: one digit per deal) plus ``per_deal``, the games of a
    deal. The games are the evaluate stage's (:func:`climbrl.evaluate.match.run_match` from every
    seat with seat seed ``seat_seed``; under DouZero's protocol :func:`climbrl.evaluate.duel.team_match`
    from ``seat_seed``, whose landlord and peasants summaries the record keeps as ``roles``)."""
    from climbrl.evaluate.baselines_report import duel_rules, games_per_deal
    from climbrl.evaluate.duel import team_match
    from climbrl.evaluate.match import deal_wins
    from climbrl.evaluate.stats import deal_record

    spec, seeds, n = f"checkpoint:{policy}", list(seeds), games_per_deal(game, rules)
    out = {}
    for opp in opponents:
        if duel_rules(game, rules):
            m = team_match(spec, opp, game=game, rules=rules, deals=len(seeds), seed=seat_seed, workers=workers,
                           seeds=seeds, per_deal=True)
            rec = deal_record(m["per_deal"]["a_wins"], n)
            rec["roles"] = {r: {k: m["A"][r][k] for k in ("games", "wins", "win_rate", "win_rate_low", "win_rate_high")}
                            for r in ("landlord", "peasants")}
        else:
            rec = deal_record(deal_wins(spec, [opp], rules=rules, games=n * len(seeds), seed=seat_seed,
                                        workers=workers, seeds=seeds, game=game), n)
        out[opp] = {**rec, "per_deal": n}
    return out


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values (step-down, made monotone, capped at 1): hypothesis ``i`` is
    rejected by :func:`~climbrl.evaluate.stats.holm` at ``alpha`` exactly when its adjusted p-value is <= ``alpha``."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    out = [1.0] * len(p_values)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[i]))
        out[i] = running
    return out


def _pooled(table: np.ndarray, games_per_cell: int) -> tuple[int, int]:
    """(wins, games) behind a seeds x deals table of win rates, each cell over ``games_per_cell`` games."""
    return int(round(float(table.sum()) * games_per_cell)), games_per_cell * table.size


_KEEP = ("low", "high", "se", "df", "p_value", "seed_sd", "deal_sd", "seed_noise_estimated")


def seeded_rate(table: np.ndarray, games_per_cell: int) -> dict[str, Any]:
    """A configuration's mean win rate over its seeds x deals table (each cell a win rate over
    ``games_per_cell`` games of that deal), with the 95% interval of :func:`~climbrl.evaluate.stats.contrast_interval`
    (seed and deal noise), clipped to [0, 1]. Without spread to estimate (every run scoring the
    same on every deal: never winning, or always) the interval is Wilson's on all the games pooled
    instead of a point. Keys: ``mean`` and those of :func:`~climbrl.evaluate.stats.contrast_interval`
    but ``estimate`` and ``p_value``."""
    t = np.asarray(table, dtype=float)
    ci = contrast_interval([t], [1], bounds=(0.0, 1.0))
    if ci["se"] == 0:
        ci["low"], ci["high"] = wilson_interval(*_pooled(t, games_per_cell))
    return {"mean": ci["estimate"], **{k: ci[k] for k in _KEEP if k != "p_value"}}


def seeded_difference(a: np.ndarray, b: np.ndarray, games_per_cell: int) -> dict[str, Any]:
    """``a``'s mean win rate minus ``b``'s, two seeds x deals tables on the same deals (paired on
    the deals; the seeds independent), with the 95% interval and p-value of
    :func:`~climbrl.evaluate.stats.contrast_interval`, clipped to [-1, 1]; without spread,
    Newcombe's interval on the two tables' pooled games instead of a point. Keys: ``difference`` and those of
    :func:`~climbrl.evaluate.stats.contrast_interval` but ``estimate``."""
    ta, tb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    ci = contrast_interval([ta, tb], [1, -1], bounds=(-1.0, 1.0))
    if ci["se"] == 0:
        _, ci["low"], ci["high"] = newcombe_interval(*_pooled(ta, games_per_cell), *_pooled(tb, games_per_cell))
    return {"difference": ci["estimate"], **{k: ci[k] for k in _KEEP}}


def compare_pairs(tables: dict[Any, np.ndarray], pairs: Sequence[tuple[Any, Any]], games_per_cell: int,
                  alpha: float = 0.05) -> list[dict[str, Any]]:
    """Every pair ``(a, b)`` of configurations compared on the same deals (:func:`seeded_difference`,
    a minus b), as one family: ``holm_p`` is Holm's adjusted p-value over the pairs and
    ``significant`` says whether the difference survives Holm's correction at ``alpha``. A
    difference that does not is a tie (``verdict`` ``"tie"``); one that does names the
    configuration ahead (``"a"`` or ``"b"``). A significant difference whose 95% interval still
    holds 0 (possible only where the interval is the pooled games' Newcombe interval, the spread
    being nil) is a tie as well: both tests must agree to call a winner."""
    out = [{"a": a, "b": b, **seeded_difference(tables[a], tables[b], games_per_cell)} for a, b in pairs]
    for row, significant, adjusted in zip(out, holm([r["p_value"] for r in out], alpha),
                                          holm_adjusted([r["p_value"] for r in out]), strict=True):
        row["significant"] = significant
        row["holm_p"] = adjusted
        excludes_zero = row["low"] > 0 or row["high"] < 0
        row["verdict"] = ("a" if row["difference"] > 0 else "b") if significant and excludes_zero else "tie"
    return out


__all__ = ["stale", "train_resumable", "deal_records", "seeded_rate", "seeded_difference", "compare_pairs",
           "holm_adjusted"]
