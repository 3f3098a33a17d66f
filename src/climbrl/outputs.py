"""Where the command line writes: every output path checked before any work, run folders held.

A result is never overwritten unless asked: :func:`check_output` refuses a path that cannot take
the result (a folder where a file goes, a file where a folder goes, a parent that is a file or
not writable) before a command plays any game, and :func:`run_folder` gives a training its folder
only when it is new or empty (or, to resume, holds the checkpoint), and only to one process at a
time.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

LOCK = ".climbrl.lock"
"""The lock file of a run folder (an OS lock: the system drops it when the process dies)."""


class OutputError(ValueError):
    """An output path that cannot take the result (the command line prints it as one line)."""


def check_output(path: str | Path, folder: bool, flag: str = "--out") -> None:
    """Refuse ``path`` unless a file (``folder=False``) or a folder can be written there: it is
    not the other kind, and it, or else its nearest existing parent (missing folders are made
    when the result is written), is writable, a parent being a folder."""
    p = Path(path)
    if p.is_dir() and not folder:
        raise OutputError(f"{flag} {path} is a folder: give a file name")
    if p.exists() and not p.is_dir() and folder:
        raise OutputError(f"{flag} {path} is a file: give a folder")
    existing = next(q for q in [p.absolute(), *p.absolute().parents] if q.exists())
    if existing != p.absolute() and not existing.is_dir():
        raise OutputError(f"{flag} {path}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | (os.X_OK if existing.is_dir() else 0)):
        raise OutputError(f"{flag} {path}: {existing} is not writable")


@contextmanager
def run_folder(path: str | Path, resume: bool = False, checkpoint: str = "checkpoint.pt",
               flag: str = "--out") -> Iterator[Path]:
    """Hold the run folder ``path`` while the block runs: a new run needs it missing or empty,
    a resumed one (``resume``) needs its ``checkpoint``; the folder is locked (``LOCK`` in it)
    so that a second process is refused at once. Every refusal comes before the folder is
    made or touched; the lock is released when the block ends, or by the system if the process
    dies."""
    check_output(path, folder=True, flag=flag)
    p = Path(path)

    def refuse_a_used_folder() -> None:
        if resume and not (p / checkpoint).is_file():
            raise OutputError(f"{flag} {path}: nothing to resume, no {checkpoint} in it "
                              f"(leave out --resume to start a new run in a new folder)")
        if not resume and p.is_dir() and any(f.name != LOCK for f in p.iterdir()):
            again = f", or --resume to continue from its {checkpoint}" if (p / checkpoint).is_file() else ""
            raise OutputError(f"{flag} {path} already holds a run's files: choose another {flag}{again}")

    refuse_a_used_folder()
    p.mkdir(parents=True, exist_ok=True)
    lock = FileLock(p / LOCK)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise OutputError(f"{flag} {path} is in use by another climbrl process (it holds {p / LOCK}): "
                          f"wait for it, or choose another {flag}") from None
    try:
        refuse_a_used_folder()  # again, holding the lock: a run may have finished there meanwhile
        yield p
    finally:
        lock.release()


__all__ = ["LOCK", "OutputError", "check_output", "run_folder"]
