"""A run that starts over is moved aside, never deleted (issue 51): its checkpoint, policy and
metrics stay on disk until a person removes them.

:func:`move_aside` moves a run folder ``.../NAME`` to ``.../.previous-<UTC time>/NAME`` (beside it,
so that a pipeline's output folder does not grow by it where the run folder is that output) and
says where it went. Callers check the new inputs first: what is moved aside is only what a
training that can start is about to replace.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Collection
from pathlib import Path


def _free_folder(parent: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    folder, n = parent / f".previous-{stamp}", 1
    while folder.exists():  # two moves within a second
        folder, n = parent / f".previous-{stamp}-{n}", n + 1
    return folder


def move_aside(run: str | Path, why: str, keep: Collection[str] = ()) -> Path:
    """Move the folder ``run`` (all but its entries named in ``keep``, which stay where they are)
    to ``.previous-<UTC time>/`` beside it, print ``why`` and where it went on stderr, and return
    the new place."""
    run = Path(run)
    dest = _free_folder(run.parent) / run.name
    dest.parent.mkdir(parents=True)
    if keep:
        dest.mkdir()
        for entry in sorted(run.iterdir()):
            if entry.name not in keep:
                entry.rename(dest / entry.name)
    else:
        run.rename(dest)
    print(f"{run}: {why}: starting over; the previous run is kept in {dest}", file=sys.stderr, flush=True)
    return dest


__all__ = ["move_aside"]
