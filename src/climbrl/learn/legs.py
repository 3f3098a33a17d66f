"""A run trained in legs: the ledger of every session that trained it, and the time limit that
ends a leg cleanly.

Why: a machine of this project has two cores and a session lasts hours, while a strong run
needs tens of CPU-hours. So a long run is trained in legs: each leg resumes the run's committed
checkpoint (:func:`climbrl.learn.train.train` with ``resume=True``), trains until its
``time_limit``, stops after a whole epoch (checkpoint, policy and curve written, nothing half
done), and the next leg, on any machine, continues it. The curve's CPU time is the sum of its
epochs' ``cpu_seconds`` (the training process's and its actors'), over every leg.

The ledger, ``legs.json`` beside the checkpoint, says which leg trained which epochs: when it
started, from which commit, on which CPU, its epochs, CPU and wall seconds and why it stopped
(``running`` while it trains, ``time limit``, ``done`` when the run reached its epochs). It is
rewritten atomically after every epoch, so a leg killed outright still shows the epochs it
finished. It is bookkeeping only: nothing in the training reads it, so a run's numbers are the
same however it was cut into legs.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from climbrl.provenance import cpu_facts, git_commit

LEGS = "legs.json"


@dataclass
class Leg:
    started: str
    """UTC time the leg started (ISO 8601, seconds)."""
    commit: str
    """The commit of the code that trained it."""
    cpu: str
    """The CPU's vendor and model (:func:`climbrl.provenance.cpu_facts`)."""
    first_epoch: int
    """The first epoch it trained (1-based); ``last_epoch`` < ``first_epoch``: none yet."""
    last_epoch: int
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    stopped: str = "running"


class Ledger:
    """The legs of the run in ``out``: the earlier ones (a resumed run's) and the one now running.

    A leg's CPU and wall seconds are summed from the run's history (the curve's own rows) over
    its epochs, so the ledger and the curve always agree. The epochs a checkpoint holds beyond
    its ledger (a leg killed between writing the two) go to the last recorded leg; a resumed run
    without a ledger (trained before ledgers existed) starts with one ``unrecorded`` leg."""

    def __init__(self, out: Path, start_epoch: int, resume: bool, history: list[dict[str, Any]]) -> None:
        self.path = Path(out) / LEGS
        self.history = history
        self.legs = earlier_legs(self.path, start_epoch) if resume else []
        if self.legs and self.legs[-1].last_epoch < start_epoch:
            self.legs[-1].last_epoch = start_epoch
        elif not self.legs and start_epoch > 0:
            self.legs.append(Leg(started="unknown", commit="unknown", cpu="unknown", first_epoch=1,
                                 last_epoch=start_epoch, stopped="unrecorded"))
        facts = cpu_facts()
        self.current = Leg(started=datetime.now(UTC).isoformat(timespec="seconds"), commit=git_commit(),
                           cpu=f"{facts['vendor']} {facts['model']}", first_epoch=start_epoch + 1,
                           last_epoch=start_epoch)
        self.legs.append(self.current)

    def after_epoch(self, row: dict[str, Any]) -> None:
        """Count a finished epoch (its CSV row, already in the history) and rewrite the ledger."""
        self.current.last_epoch = int(row["epoch"])
        self.write()

    def stop(self, why: str) -> None:
        self.current.stopped = why
        self.write()

    def write(self) -> None:
        for leg in self.legs:
            rows = self.history[leg.first_epoch - 1:leg.last_epoch]
            leg.cpu_seconds = sum(float(r["cpu_seconds"]) for r in rows)
            leg.wall_seconds = sum(float(r["play_seconds"]) + float(r["update_seconds"]) for r in rows)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.tmp")  # one writer per run folder (its lock); the umask's mode
        tmp.write_text(json.dumps([asdict(leg) for leg in self.legs], indent=1) + "\n")
        tmp.replace(self.path)


def earlier_legs(path: Path, start_epoch: int) -> list[Leg]:
    """The legs recorded in ``path`` that end at or before ``start_epoch`` (the checkpoint's): a
    leg killed after its last checkpoint keeps only the epochs the checkpoint holds. A missing or
    unreadable ledger gives none (a run trained before ledgers existed)."""
    kept = []
    for leg in _parse(path):
        if leg.first_epoch > start_epoch:
            break
        if leg.last_epoch > start_epoch:
            leg.last_epoch, leg.stopped = start_epoch, "killed"
        elif leg.stopped == "running":
            leg.stopped = "killed"
        kept.append(leg)
    return kept


def read_legs(out: str | Path) -> list[dict[str, Any]]:
    """The ledger of the run in ``out`` as it was written (empty without a readable one)."""
    return [asdict(leg) for leg in _parse(Path(out) / LEGS)]


def _parse(path: Path) -> list[Leg]:
    """The legs a ledger file holds; none when it is missing or unreadable."""
    try:
        return [Leg(**row) for row in json.loads(path.read_text())]
    except (OSError, ValueError, TypeError):
        return []
