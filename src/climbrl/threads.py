"""One intra-op torch thread while the numbers are computed, without changing it for the caller.

A matrix product split over more threads sums its floats in another order, so a network's
outputs (and, amplified by the updates, a trained network) would depend on the machine's core
count. Training and matches therefore compute on one thread: :func:`single_thread` around the
work done in the caller's process (restoring the caller's count on exit), :func:`worker_init`
in the worker processes the matches start (their entry point). A library call never changes
the thread count behind the caller's back.

torch's thread count is process-wide state (with the OpenMP backend of the Linux builds it is
also per thread once a thread has run an op): concurrent work that must not share it runs in
processes of its own, as the study flow does (``pipeline.flows``).

A worker process also dies with the process that started it (:func:`die_with_parent`, which
:func:`worker_init` calls). The workers of a pool (a training's actors, a match's workers, a
pipeline stage run in a process of its own) wait on their parent for work; when the parent is
killed outright (SIGKILL, the OOM killer) nothing tells them, and they would live on,
reparented, each holding its own torch (some 400 MB), a stage's orphan writing the run folder
that a retry resumes. On Linux the kernel signals a process when its parent dies
(``prctl(PR_SET_PDEATHSIG)``). It ties that signal to the parent's *thread* that started the
worker, and a "spawn" pool starts its workers in the thread that submits work: a pool must not
outlive that thread (none does here: each is used and shut down by the call that made it). With
the workers gone, multiprocessing's resource tracker ends too: it exits once the last process
holding its pipe (the parent and every worker) has closed it.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager

PR_SET_PDEATHSIG = 1


@contextmanager
def single_thread() -> Iterator[None]:
    """Run the block on one intra-op thread; the previous count is restored afterwards."""
    import torch

    before = torch.get_num_threads()
    if before == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def die_with_parent() -> None:
    """Have this process killed (SIGKILL) when its multiprocessing parent dies (Linux; elsewhere,
    or in a process that multiprocessing did not start, a no-op). A parent that died before the
    call (the worker then belongs to another process already) ends the worker at once."""
    parent = mp.parent_process()
    if parent is None or not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
            return
    except (OSError, AttributeError):
        return
    if os.getppid() != parent.pid:
        os._exit(1)


def worker_init() -> None:
    """Initializer of a worker process: one intra-op thread for the worker's lifetime, and death
    with the process that started it (:func:`die_with_parent`: no orphan outlives a training or a
    match killed outright)."""
    die_with_parent()
    import torch

    torch.set_num_threads(1)


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A "spawn" pool of ``workers`` processes that die with this one (:func:`die_with_parent`),
    for work that sets its own thread count (the pipeline's studies and runs): killed outright, a
    stage leaves no worker training on as an orphan, holding its run folder or its study."""
    return ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"), initializer=die_with_parent)
