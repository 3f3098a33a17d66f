"""Actors: self-play games played in worker processes while the training process waits.

With ``actors = N > 1`` each epoch's games are cut into ``N`` consecutive slices of game indices
(:func:`slices`, fixed by ``N`` and the number of games), one per worker process. A slice travels
with everything its games need: the deal seeds and seat seeds the single-process path gives
those very games (derived from (seed, epoch, game, seat)), and the seatings the curriculum drew
for them in the training process, where every distinct agent travels once:

* a network agent (the learner's behaviour policy, a curriculum's frozen snapshot) as its weights
  (a CPU copy of the state dict, as numpy arrays), its mode, epsilon and name; the actor rebuilds
  it on the run's device;
* any other agent (the rule agents of ``fixed_opponents`` and ``opponent_pool``) pickled as it is
  (rule agents draw only from the seat's random stream, so a copy plays as the original).

A separate bid model (``bidding`` rule or learned) does not travel: the config refuses
``actors > 1`` with it (its seats are wrapped and its bids collected in the training process).

The actor plays its slice in lockstep with the same :func:`~climbrl.learn.rollout.collect` as the
training process and returns the learner's decisions; the slices' rollouts joined in order are
ordered by (game, seat, time) like a single-process rollout. The games are the same for every
``N``; what differs is which decisions share a forward pass, and a float product's last bits
depend on the batch's size (the single output unit's matrix-vector product is summed in a
size-dependent order): the behaviour log-probabilities agree with ``N = 1`` up to rounding, and
so do the updates. The numbers are reproducible bit for bit for a fixed ``N``; ``N = 1`` (the
default) runs in the training process exactly as before actors existed.

Collection is synchronous by default: epoch ``e + 1`` is played with the weights after epoch
``e``'s update, as in the single-process path. ``actor_lag`` overlaps them instead: epoch
``e + 1``'s games are handed to the actors before epoch ``e``'s update, so they are played by the
policy from before that update (one update stale; PPO's ratio uses the recorded behaviour
log-probabilities, so its clipped objective accounts for it) while the training process updates.
Another policy plays, so the numbers differ from the synchronous ones; they are reproducible for a
fixed ``N``, resume included (the checkpoint holds the stale policy and the curriculum as they
were when the next epoch's games were drawn). Workers are started with "spawn" (safe from a process that runs
other threads) and each computes on one torch thread (:func:`climbrl.threads.worker_init`). A
worker that dies (killed, out of memory) breaks the pool: the epoch raises :class:`ActorError`
instead of waiting, and the run resumes from its last finished epoch (``--resume``). A training
process that dies takes its actors with it (:func:`climbrl.threads.die_with_parent`, which
:func:`~climbrl.threads.worker_init` calls).
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from climbrl.agents.base import Agent
from climbrl.encoders import Encoder
from climbrl.encoders.base import RewardTerms
from climbrl.games.registry import make_game
from climbrl.learn.network import make_net
from climbrl.learn.policy import PolicyAgent
from climbrl.learn.rollout import Rollout, collect
from climbrl.threads import worker_init


class ActorError(RuntimeError):
    """An actor process died while it played; the epoch cannot finish."""


def slices(n_games: int, n_actors: int) -> list[tuple[int, int]]:
    """Consecutive ``[lo, hi)`` game ranges, one per actor (fewer when there are fewer games),
    as even as possible; the first ones are the longer."""
    n = min(n_actors, n_games)
    return [(i * n_games // n, (i + 1) * n_games // n) for i in range(n)]


@dataclass
class NetSpec:
    """A network agent as it travels to an actor: weights as numpy arrays, no torch storage
    (pickling a tensor for another process would move the learner's own storage to shared
    memory)."""

    net_config: dict[str, Any]
    weights: dict[str, np.ndarray]
    encoder: Encoder
    mode: str
    epsilon: float
    name: str
    record: bool
    scores_are_logits: bool
    teacher: Agent | None = None
    """The behaviour's teacher (a rule agent, pickled as it is), and its share."""
    teacher_share: float = 0.0
    acting: str = "fp32"
    """The arithmetic the agent scores with (:mod:`climbrl.learn.precision`)."""

    @classmethod
    def of(cls, agent: PolicyAgent) -> NetSpec:
        weights = {k: v.detach().cpu().numpy().copy() for k, v in agent.net.state_dict().items()}
        return cls(agent.net.config(), weights, agent.encoder, agent.mode, agent.epsilon, agent.name,
                   agent.record, agent.scores_are_logits, agent.teacher, agent.teacher_share, agent.acting)

    def build(self, device: str) -> PolicyAgent:
        cfg = {"state_dim": self.encoder.state_dim, "move_dim": self.encoder.move_dim, **self.net_config}
        net = make_net(**cfg, generator=torch.Generator())  # placeholder weights, loaded over next
        net.load_state_dict({k: torch.from_numpy(v) for k, v in self.weights.items()})
        return PolicyAgent(net.to(device).eval(), self.encoder, mode=self.mode, epsilon=self.epsilon, name=self.name,
                           record=self.record, scores_are_logits=self.scores_are_logits, teacher=self.teacher,
                           teacher_share=self.teacher_share, acting=self.acting)


def pack(seatings: Sequence[Sequence[Agent]], learner: PolicyAgent) -> tuple[list[Any], list[list[int]], int]:
    """Every distinct agent of ``seatings`` once (network agents as :class:`NetSpec`), the seatings
    as indices into that table, and the learner's index."""
    table: list[Any] = []
    index: dict[int, int] = {}

    def ref(agent: Agent) -> int:
        if id(agent) not in index:
            index[id(agent)] = len(table)
            table.append(NetSpec.of(agent) if isinstance(agent, PolicyAgent) else agent)
        return index[id(agent)]

    seats = [[ref(a) for a in seating] for seating in seatings]
    return table, seats, ref(learner)


def play_slice(task: tuple) -> tuple[Rollout, int, float]:
    """An actor's work: rebuild the agents, play the slice's games, collect the learner's
    decisions; with the CPU seconds the actor spent on it."""
    cpu = time.process_time()
    game_name, table, seats, learner_ix, seeds, seat_seeds, shaping, card_score, terms, device, *more = task
    hidden = bool(more and more[0])  # issue 46's hidden targets; a task without the flag has none
    agents = [a.build(device) if isinstance(a, NetSpec) else a for a in table]
    seatings = [[agents[i] for i in seating] for seating in seats]
    rollout, decisions = collect(make_game(game_name), seatings, seeds, seat_seeds, agents[learner_ix], shaping,
                                 card_score, terms, hidden)
    return rollout, decisions, time.process_time() - cpu


def check_actors(n: int) -> None:
    if n < 2:
        raise ValueError(f"an actor pool needs at least 2 actors, got {n}")


def _died(e: BaseException) -> ActorError:
    return ActorError(f"an actor process died while playing ({e}); the checkpoint holds the last "
                      "finished epoch: rerun with --resume (resume=True) to continue")


class Pending:
    """Games being played: on the actors (``futures``, one per slice) or already done (``done``);
    ``lost``: the exceptions that say an actor died (a pool's own)."""

    def __init__(self, futures: list[Future] | None = None, done: tuple[Rollout, int] | None = None,
                 lost: tuple[type[BaseException], ...] = (BrokenProcessPool,)) -> None:
        self.futures = futures or []
        self.done = done
        self.lost = lost
        self.bid_batch: Any = None
        """The separate bid model's batch of these games (played in the training process only)."""
        self.opponents: list[str] | None = None
        """The curriculum's opponent of each game (a league's; :meth:`~climbrl.learn.curriculum.Curriculum.record`)."""
        self.actor_cpu_seconds = 0.0
        """CPU seconds the actors spent on these games (0 for games played in the training process,
        whose own CPU time counts them)."""

    def result(self) -> tuple[Rollout, int]:
        """The learner's decisions of the games and every seat's decision count (waits)."""
        if self.done is None:
            try:
                parts = [f.result() for f in self.futures]
            except self.lost as e:
                raise _died(e) from None
            self.done = Rollout.concat([p[0] for p in parts]), sum(p[1] for p in parts)
            self.actor_cpu_seconds = sum(p[2] for p in parts)
        return self.done


class ActorPool:
    """``n`` actor processes for the whole training run (started once; :meth:`close` ends them).
    :class:`climbrl.learn.dask_actors.DaskActorPool` plays the same slices on a Dask cluster."""

    lost: tuple[type[BaseException], ...] = (BrokenProcessPool,)
    """What a future raises when its actor died."""

    def __init__(self, n: int, game_name: str, device: str = "cpu") -> None:
        check_actors(n)
        self.n = n
        self.game_name = game_name
        self.device = device
        self.pool = ProcessPoolExecutor(max_workers=n, mp_context=mp.get_context("spawn"), initializer=worker_init)

    def _submit(self, task: tuple) -> Future:
        return self.pool.submit(play_slice, task)

    def submit(self, seatings: Sequence[Sequence[Agent]], seeds: Sequence[int], seat_seeds: Sequence[Sequence[int]],
               learner: PolicyAgent, shaping: bool = False, card_score: bool = False,
               terms: RewardTerms | None = None, hidden: bool = False) -> Pending:
        """Start the games of :func:`~climbrl.learn.rollout.collect` on the actors and return at
        once; the agents' weights are copied now, so the caller may update them meanwhile.
        ``hidden``: the rollouts carry the decisions' hidden targets (issue 46)."""
        futures = []
        try:
            for lo, hi in slices(len(seeds), self.n):
                table, seats, learner_ix = pack(seatings[lo:hi], learner)
                futures.append(self._submit((
                    self.game_name, table, seats, learner_ix, list(seeds[lo:hi]),
                    [list(s) for s in seat_seeds[lo:hi]], shaping, card_score, terms, self.device, hidden)))
        except self.lost as e:
            raise _died(e) from None
        return Pending(futures, lost=self.lost)

    def collect(self, seatings: Sequence[Sequence[Agent]], seeds: Sequence[int], seat_seeds: Sequence[Sequence[int]],
                learner: PolicyAgent, shaping: bool = False, card_score: bool = False,
                terms: RewardTerms | None = None, hidden: bool = False) -> tuple[Rollout, int]:
        """The games of :func:`~climbrl.learn.rollout.collect`, split over the actors; the same
        rollout up to the last bits of the behaviour's scores (see the module's docstring)."""
        return self.submit(seatings, seeds, seat_seeds, learner, shaping, card_score, terms, hidden).result()

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> ActorPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
