"""Agent specs as the server takes them from a request (issue 51).

- ``checkpoint:PATH`` (alone or as a search's base policy) is read from the served project
  folder only: a regular file under its ``runs/`` or ``models/``, ``PATH`` relative to it (or
  absolute, inside it). Anything else (a missing file, ``/etc/shadow``, a FIFO, a link that
  leads out) gets one and the same refusal, so a request cannot tell which files exist outside
  the project, nor block a thread reading a pipe.
- A search or a trained policy decides in a worker process under a time limit
  (:mod:`climbrl.serve.workers`); the rule agents answer at once and play in the request itself.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

CHECKPOINT = re.compile(r"(checkpoint:)([^,#]+)")
SERVED = ("runs", "models")
"""The folders of the project whose checkpoints the server plays."""

WORKER_AGENTS = ("search", "checkpoint")
"""Agents whose decisions may take long (a search's size, a network's): run in a worker."""


def needs_worker(spec: str) -> bool:
    return spec.partition(":")[0].strip() in WORKER_AGENTS


def checkpoint_path(text: str, root: Path) -> Path:
    """The regular file ``text`` names under ``root/runs`` or ``root/models`` (``root``
    resolved); a ``ValueError`` with the same words for every other path."""
    text = text.strip()
    refused = ValueError(f"checkpoint not found: {text} (the server plays checkpoints that are files under "
                         f"{' or '.join(f'{d}/' for d in SERVED)} of the folder it serves)")
    lexical = Path(os.path.normpath(root / text))  # an absolute text stays itself
    if not any(lexical.is_relative_to(root / d) for d in SERVED):
        raise refused  # outside the project: not even looked at
    try:
        real = lexical.resolve(strict=True)
        mode = real.stat().st_mode
    except (OSError, RuntimeError):  # missing, unreadable folder, a loop of links
        raise refused from None
    homes = [root / d for d in SERVED] + [(root / d).resolve() for d in SERVED]  # runs/ may be a link
    if not stat.S_ISREG(mode) or not any(real.is_relative_to(h) for h in homes):
        raise refused
    return real


def rooted(spec: str, root: Path | None) -> str:
    """``spec`` with each ``checkpoint:PATH`` replaced by the file it names under ``root``
    (:func:`checkpoint_path`); unchanged when ``root`` is ``None`` (the terminal game: the
    person's own paths, read from the working folder)."""
    if root is None:
        return spec
    return CHECKPOINT.sub(lambda m: m.group(1) + str(checkpoint_path(m.group(2), root)), spec)
