"""Agent work in a few worker processes, each job under a time limit (issue 51).

A search or a trained policy may take as long as its spec asks; run in the server's own threads,
one such request held a core (and the shutdown) for ever. Here each job runs in a worker process
of a small pool: at most ``size`` at once, the others waiting their turn a bounded time
(:class:`Busy`); a job past its time is stopped by killing its worker (:class:`TooSlow`), and
:meth:`Pool.close` (the server stopping) kills every worker, so a waiting request ends at once
(:class:`Stopped`). A killed worker is replaced on the next job.

Why not :class:`concurrent.futures.ProcessPoolExecutor`: it cannot stop a job that has started
(``Future.cancel`` only drops queued ones, and its shutdown waits for running jobs), which is the
one thing needed here. Workers are forked from a ``forkserver`` (the server's threads are never
forked), which imports ``preload`` once, so a new worker starts in a moment; each exits by itself
when the server is gone (even killed), since its parent, the fork server, then exits too.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import time
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any


class WorkerError(Exception):
    """A job that did not run to its end; ``status``: the HTTP status the server answers with."""

    status = 503


class Busy(WorkerError):
    """Every worker stayed busy for the whole wait."""


class TooSlow(WorkerError):
    """The job ran past its time: its worker was stopped."""


class Stopped(WorkerError):
    """The server is stopping, or the job was cancelled."""


class JobFailed(Exception):
    """The job raised: ``message`` is its ``Type: text``; ``bad_input``: it was a ``ValueError``
    (the job's input was refused, a 400), not a failure of the job itself."""

    def __init__(self, message: str, bad_input: bool) -> None:
        super().__init__(message)
        self.bad_input = bad_input


def _watch_parent() -> None:
    """Exit when the parent (the fork server, which exits with the server) is gone."""
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(1)
    os._exit(0)


def _work(conn: Connection) -> None:
    """A worker's loop: run each ``(fn, args)`` received and send back its result or its error."""
    threading.Thread(target=_watch_parent, daemon=True).start()
    while True:
        try:
            fn, args = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple = ("ok", fn(*args))
        except Exception as e:  # sent back: the request answers with it, the worker goes on
            reply = ("error", f"{type(e).__name__}: {e}", isinstance(e, ValueError))
        conn.send(reply)


class _Worker:
    def __init__(self, ctx: Any) -> None:
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_work, args=(child,), daemon=True, name="climbrl-serve-worker")
        self.process.start()
        child.close()

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.conn.close()


class Pool:
    """At most ``size`` worker processes; a job waits at most ``wait`` seconds for one and runs at
    most ``seconds`` (unless the call names its own limit)."""

    def __init__(self, size: int, seconds: float, wait: float, preload: Sequence[str] = ()) -> None:
        self.size, self.seconds, self.wait = size, seconds, wait
        self._ctx = mp.get_context("forkserver")
        if preload:
            self._ctx.set_forkserver_preload(list(preload))
        self._slots = threading.BoundedSemaphore(size)
        self._idle: list[_Worker] = []
        self._busy: set[_Worker] = set()
        self._lock = threading.Lock()
        self.closed = False

    def call(self, fn: Callable[..., Any], *args: Any, seconds: float | None = None,
             cancel: threading.Event | None = None) -> Any:
        """``fn(*args)`` in a worker (``fn`` importable by name); raises :class:`WorkerError`
        when it did not run to its end, :class:`JobFailed` when it raised."""
        limit = self.seconds if seconds is None else seconds
        if not self._acquire():
            raise Busy(f"the server's {self.size} agent workers stayed busy for {self.wait:g} s: try again")
        try:
            worker = self._take()
            try:
                worker.conn.send((fn, args))
                deadline = time.monotonic() + limit
                while not worker.conn.poll(0.1):
                    if self.closed or (cancel is not None and cancel.is_set()):
                        raise Stopped("stopped: the server is stopping" if self.closed else "cancelled")
                    if time.monotonic() > deadline:
                        raise TooSlow(f"stopped after {limit:g} s, the server's time limit")
                reply = worker.conn.recv()
            except (EOFError, OSError):
                self._drop(worker)
                raise Stopped("stopped: the server is stopping") from None
            except WorkerError:
                self._drop(worker)
                raise
            self._give_back(worker)
        finally:
            self._slots.release()
        if reply[0] == "error":
            raise JobFailed(reply[1], reply[2])
        return reply[1]

    def _acquire(self) -> bool:
        deadline = time.monotonic() + self.wait
        while not self.closed:
            if self._slots.acquire(timeout=0.2):
                return True
            if time.monotonic() > deadline:
                return False
        raise Stopped("stopped: the server is stopping")

    def _take(self) -> _Worker:
        with self._lock:
            if self.closed:
                raise Stopped("stopped: the server is stopping")
            worker = self._idle.pop() if self._idle else None
            if worker is not None and not worker.process.is_alive():
                worker.kill()
                worker = None
        worker = worker or _Worker(self._ctx)
        with self._lock:
            self._busy.add(worker)
        return worker

    def _give_back(self, worker: _Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
            if self.closed:
                worker.kill()
            else:
                self._idle.append(worker)

    def _drop(self, worker: _Worker) -> None:
        with self._lock:
            self._busy.discard(worker)
        worker.kill()
        worker.process.join(5)

    def close(self) -> None:
        """Kill every worker (a running job ends with :class:`Stopped`); safe in a signal handler
        and more than once."""
        self.closed = True
        with self._lock:
            workers = self._idle + list(self._busy)
            self._idle = []
        for w in workers:
            if w.process.is_alive():
                w.process.kill()
