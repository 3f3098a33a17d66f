"""Long requests as jobs the page follows and may cancel (issue 51: a match replay took about
100 s per click, with nothing shown).

``POST`` starts a job and answers at once with its id (202); ``GET /api/jobs/{id}`` tells its
state (``running`` with the seconds so far and the time limit; ``done`` with the result; a
refused or failed one answers its error); ``DELETE /api/jobs/{id}`` cancels it, which stops its
worker process. Jobs are kept in memory, the oldest finished ones forgotten beyond
:data:`KEPT`.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from climbrl.serve.table import TableError
from climbrl.serve.workers import JobFailed, Pool, Stopped, WorkerError

KEPT = 50


class Job:
    """``fn(*args)`` run in ``pool`` on a thread of its own, under ``seconds``."""

    def __init__(self, pool: Pool, fn: Callable[..., Any], args: tuple, seconds: float, title: str) -> None:
        self.id = secrets.token_urlsafe(12)
        self.title, self.seconds = title, seconds
        self.started = time.monotonic()
        self.ended: float | None = None
        self.cancel = threading.Event()
        self.result: Any = None
        self.error: tuple[int, str] | None = None
        self.state = "running"
        threading.Thread(target=self._run, args=(pool, fn, args), daemon=True, name=f"job {self.id}").start()

    def _run(self, pool: Pool, fn: Callable[..., Any], args: tuple) -> None:
        try:
            self.result, self.state = pool.call(fn, *args, seconds=self.seconds, cancel=self.cancel), "done"
        except Stopped as e:
            self.error, self.state = (409, f"{self.title}: {e}"), "cancelled"
        except WorkerError as e:
            self.error, self.state = (e.status, f"{self.title}: {e}"), "failed"
        except JobFailed as e:
            self.error, self.state = (400 if e.bad_input else 500, f"{self.title}: {e}"), "failed"
        self.ended = time.monotonic()

    def view(self) -> dict[str, Any]:
        elapsed = (self.ended or time.monotonic()) - self.started
        out = {"job": self.id, "state": self.state, "title": self.title, "seconds": round(elapsed, 1),
               "limit": self.seconds}
        if self.state == "done":
            out["result"] = {**self.result, "title": self.title}
        return out


class UnknownJob(TableError):
    status = 404


class Jobs:
    def __init__(self) -> None:
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()

    def start(self, pool: Pool, fn: Callable[..., Any], args: tuple, seconds: float, title: str) -> Job:
        job = Job(pool, fn, args, seconds, title)
        with self._lock:
            self._jobs[job.id] = job
            done = [j for j in self._jobs.values() if j.state != "running"]
            for old in done[:max(0, len(self._jobs) - KEPT)]:
                del self._jobs[old.id]
        return job

    def get(self, jid: str) -> Job:
        with self._lock:
            job = self._jobs.get(jid)
        if job is None:
            raise UnknownJob("no such job (finished long ago, or the server was restarted)")
        return job
