"""Actors on a Dask cluster (issue 25: "on many machines the actors run on the existing Dask
cluster"): ``actors = N`` with ``actor_cluster = ADDRESS`` (``climbrl train --actors N
--actor-cluster tls://HOST:8786``) plays each epoch's ``N`` slices as tasks on the workers of the
Dask scheduler at ``ADDRESS`` instead of ``N`` local processes.

The same slices as :class:`~climbrl.learn.actors.ActorPool`'s (:func:`~climbrl.learn.actors.slices`
fixed by ``N``), each the same task (:func:`~climbrl.learn.actors.play_slice`, computed on one
torch thread as a local actor's), so a run gives the same numbers on the cluster as with ``N``
local processes, bit for bit on workers of the same machine kind. The weights travel with every
task (a CPU copy as numpy arrays); the learner stays in the training process (the client).

*A lost worker.* A task is pure: its seeds and weights are its inputs. When a worker dies in the
middle of a slice (killed, its machine gone), the scheduler hands the slice to another worker,
which plays the same games again; nothing is lost and the epoch goes on
(``tests/test_dask_actors.py`` SIGKILLs a worker mid-slice and gets the numbers of local actors).
Only when a slice has killed ``distributed.scheduler.allowed-failures`` workers (Dask's default 3)
does the epoch raise :class:`~climbrl.learn.actors.ActorError`, and the run resumes from its last
finished epoch (``--resume``), as with local actors.

*Security.* The client's arguments are :func:`climbrl.cluster.client_kwargs`'s: TLS with the
cluster's certificates (``CLIMBRL_DASK_TLS``, made by ``python -m pipeline.dask_tls``); a plain
``tcp://`` scheduler beyond this machine is refused. The workers import this package: they run
the project's code at the same version (the same environment on every machine).
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from climbrl.cluster import client_kwargs
from climbrl.learn.actors import ActorPool, check_actors, play_slice
from climbrl.threads import single_thread


def play_slice_on_one_thread(task: tuple) -> Any:
    """:func:`~climbrl.learn.actors.play_slice` on one torch thread, as a local actor computes it
    (the previous count restored: a worker may run other work)."""
    with single_thread():
        return play_slice(task)


class DaskActorPool(ActorPool):
    """``n`` slices an epoch, played by the workers of the Dask scheduler at ``address``."""

    def __init__(self, n: int, game_name: str, address: str, timeout: float = 60.0) -> None:
        check_actors(n)
        from distributed import Client
        from distributed.scheduler import KilledWorker

        self.n = n
        self.game_name = game_name
        self.device = "cpu"  # the actors play on the workers' CPUs; the learner may be on a GPU
        self.lost = (KilledWorker,)
        self.client = Client(address, timeout=timeout, set_as_default=False, **client_kwargs(address))

    def _submit(self, task: tuple) -> Future:
        return self.client.submit(play_slice_on_one_thread, task, pure=False)

    def close(self) -> None:
        self.client.close()
