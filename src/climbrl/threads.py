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
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


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


def worker_init() -> None:
    """Initializer of a worker process: one intra-op thread for the worker's lifetime."""
    import torch

    torch.set_num_threads(1)
