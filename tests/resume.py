"""What the resume tests share: a training's numbers without its timings, and one training run
straight and, beside it, stopped an epoch early and resumed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from climbrl.config import TrainConfig
from climbrl.training import train


def untimed(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """History (or metrics.csv) rows without the fields that measure time (``*seconds*``,
    ``*per_s*``): what must agree between two runs of the same config."""
    return [{k: v for k, v in r.items() if "seconds" not in k and "per_s" not in k} for r in rows]


def straight_and_resumed(config: Callable[[int], TrainConfig], tmp_path: Path,
                         epochs: int = 3) -> tuple[dict[str, Any], dict[str, Any]]:
    """The summaries of ``config(epochs)`` trained straight into ``tmp_path / "a"``, and of
    ``config(epochs - 1)`` trained into ``tmp_path / "b"`` then resumed there to ``epochs``."""
    straight = train(config(epochs), tmp_path / "a", progress=False)
    train(config(epochs - 1), tmp_path / "b", progress=False)
    return straight, train(config(epochs), tmp_path / "b", resume=True, progress=False)


class FakeClock:
    """``time.perf_counter`` of the training loop advancing 10 s a call (patch it into
    ``climbrl.learn.train.time``): a leg's time limit is reached after a known number of epochs,
    whatever the machine's speed."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 10.0
        return self.now
