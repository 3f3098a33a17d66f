"""The training loop shared by every learner: self-play epochs, updates, evaluation, checkpoints.

Each epoch plays ``games_per_epoch`` games of ``cfg.game`` in lockstep (the curriculum decides
the seats), turns the learner's decisions into a :class:`~climbrl.learn.rollout.Rollout`, and
updates. Every ``eval_every`` epochs the ``evaluator`` scores the greedy policy (the study's: a
duplicate-deal match against each evaluation opponent on a fixed deal set; it lives a layer up,
in :mod:`climbrl.training`, since matches belong to ``evaluate``, which imports this layer).
After every epoch the checkpoint (learner, curriculum, history) is written atomically and the
per-epoch CSV rewritten, so a killed run resumes (``resume=True``) from its last finished epoch
with the same numbers it would have produced: every random choice is derived from (seed, epoch,
game, seat), and the learner's state is whole (Q-learning's and DQN's replay buffer and
priorities included, :mod:`climbrl.learn.replay`; a checkpoint of theirs written before it held
the buffer is refused, :func:`climbrl.learn.checkpoint.resume_conflicts`). With
``actors > 1`` the games are played in worker processes (:mod:`climbrl.learn.actors`); with
``device`` the learner's updates and its policy's forward passes run on a GPU. Every
``keep_policy_every`` epochs a copy of the policy stays in ``snapshots/epochNNN.pt`` (the
interpretability window follows an agent across them). A non-finite loss or weight stops the run
with :class:`~climbrl.learn.trainable.TrainingDiverged` before that epoch writes anything: the
folder keeps the last finite epoch (and :func:`climbrl.learn.checkpoint.load` refuses NaN weights).
"""

from __future__ import annotations

import copy
import csv
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from climbrl.agents.runner import deal_seeds, play_games, seat_seed
from climbrl.config import TrainConfig, resolve_device
from climbrl.encoders.base import RewardTerms
from climbrl.games.registry import make_game
from climbrl.learn import checkpoint as ckpt
from climbrl.learn.actors import ActorPool, Pending
from climbrl.learn.bidding import BidRouting
from climbrl.learn.curriculum import Curriculum
from climbrl.learn.learner import Learner
from climbrl.learn.legs import Ledger
from climbrl.learn.policy import PolicyAgent
from climbrl.learn.precision import update_context
from climbrl.learn.registry import make_learner
from climbrl.learn.rollout import Collector
from climbrl.learn.trainable import TrainingDiverged
from climbrl.threads import single_thread

CHECKPOINT = "checkpoint.pt"
POLICY = "policy.pt"
METRICS = "metrics.csv"
SNAPSHOTS = "snapshots"

Evaluator = Callable[[TrainConfig, Path], dict[str, float]]
"""Scores the policy file of a run: ``evaluator(cfg, policy_path)`` -> metrics of the epoch's row."""


def epoch_seed(cfg: TrainConfig, epoch: int) -> int:
    return int(np.random.SeedSequence([cfg.seed, epoch, 7]).generate_state(1)[0])


def reward_terms(cfg: TrainConfig) -> RewardTerms:
    """The terminal reward terms of ``cfg`` (all off by default; see :class:`RewardTerms`)."""
    return RewardTerms(cards_left=cfg.reward_cards_left, bombs_kept=cfg.reward_bombs_kept,
                       partner_win=cfg.reward_partner_win, guide=cfg.reward_guide,
                       pass_penalty=cfg.reward_pass_penalty, gamma=cfg.gamma,
                       win=cfg.reward_objective == "win")


def make_actors(cfg: TrainConfig, device: str) -> ActorPool | None:
    """The run's actors (``cfg.actors``, ``cfg.actor_cluster``): none for one, else local
    processes or a Dask cluster's workers."""
    if cfg.actors < 2:
        return None
    if cfg.actor_cluster:
        from climbrl.learn.dask_actors import DaskActorPool

        return DaskActorPool(cfg.actors, cfg.game_name, cfg.actor_cluster)
    return ActorPool(cfg.actors, cfg.game_name, device)


def play_epoch(cfg: TrainConfig, game: Any, behaviour: PolicyAgent, curriculum: Curriculum, epoch: int,
               bids: BidRouting, actors: ActorPool | None = None) -> Pending:
    """Draw epoch ``epoch``'s seatings and seeds and play its games: here (done on return, the
    auction routed by ``bids``, the bid model's batch in ``bid_batch``) or on ``actors`` (running
    on return; the config allows actors only without a separate bid model)."""
    es = epoch_seed(cfg, epoch)
    seatings = curriculum.seatings(cfg.games_per_epoch, behaviour, np.random.default_rng([es, 1]))
    seeds = deal_seeds(es, cfg.games_per_epoch, "train")
    seat_seeds = [[seat_seed(es, g, 0, s) for s in range(game.num_players)] for g in range(cfg.games_per_epoch)]
    terms = reward_terms(cfg)
    if actors is not None:
        assert not bids.active
        pending = actors.submit(seatings, seeds, seat_seeds, behaviour, cfg.reward_shaping, cfg.card_score_reward,
                                terms, cfg.hidden_signals)
        pending.opponents = curriculum.drawn
        return pending
    seatings, bid_collector = bids.seatings(seatings, behaviour, curriculum.snapshots)
    collector = Collector(behaviour, shaping=cfg.reward_shaping, terms=terms, hidden=cfg.hidden_signals)
    on_step = collector if bid_collector is None else _both(collector, bid_collector)
    states = play_games(game, seatings, seeds, seat_seeds, on_step=on_step)
    rollout = collector.build(states, card_score=cfg.card_score_reward, terms=terms)
    played = Pending(done=(rollout, sum(len(s.moves) for s in states)))
    played.opponents = curriculum.drawn
    if bid_collector is not None and bids.learner is not None:
        played.bid_batch = bid_collector.build(
            states, lambda st, seat: collector.final_reward(st, seat, cfg.card_score_reward, terms))
    return played


class Lag:
    """``actor_lag``: the next epoch's games, handed to the actors before this epoch's update, and
    what drew them (the behaviour's weights and epsilon, the curriculum's state), which the
    checkpoint keeps so that a resumed run plays its first epoch as the uninterrupted run did."""

    def __init__(self) -> None:
        self.pending: Pending | None = None
        self.state: dict[str, Any] | None = None

    def hand_over(self, cfg: TrainConfig, game: Any, learner: Learner, curriculum: Curriculum, epoch: int,
                  bids: BidRouting, actors: ActorPool) -> None:
        """Before epoch ``epoch``'s update: start epoch ``epoch + 1``'s games (if the run has one)."""
        behaviour = learner.behaviour()
        self.state = {"net": {k: v.detach().clone() for k, v in learner.net.state_dict().items()},
                      "epsilon": behaviour.epsilon, "teacher_share": behaviour.teacher_share,
                      "curriculum": curriculum.state_dict()}
        more = epoch + 1 < cfg.epochs
        self.pending = play_epoch(cfg, game, behaviour, curriculum, epoch + 1, bids, actors) if more else None

    def restore(self, state: dict[str, Any], cfg: TrainConfig, game: Any, learner: Learner, epoch: int,
                bids: BidRouting, actors: ActorPool) -> None:
        """On resume: start epoch ``epoch``'s games as :meth:`hand_over` did before the interruption."""
        self.state = state
        net = copy.deepcopy(learner.net)
        net.load_state_dict(state["net"])
        behaviour = learner.behaviour()
        behaviour.net, behaviour.epsilon = net.eval(), float(state["epsilon"])
        share = float(state.get("teacher_share", 0.0))
        behaviour.teacher, behaviour.teacher_share = (learner.teacher if share > 0 else None), share
        curriculum = Curriculum(cfg, learner, game.num_players)
        curriculum.load_state_dict(state["curriculum"], learner.net)
        self.pending = play_epoch(cfg, game, behaviour, curriculum, epoch, bids, actors)


def run_epoch(cfg: TrainConfig, game: Any, learner: Learner, curriculum: Curriculum,
              epoch: int, bids: BidRouting | None = None, actors: ActorPool | None = None,
              lag: Lag | None = None) -> dict[str, Any]:
    """One epoch: play (here, or on ``actors``), update, advance the curriculum; its CSV row.
    ``bids``: where the auction decisions go (default: ``cfg.bidding``'s, without a bid model).
    With ``lag`` (``actor_lag``) the epoch's games may have been started by the previous epoch,
    and the next epoch's are started before the update; ``play_seconds`` is then the time the
    update waited for the games."""
    start, cpu = time.perf_counter(), time.process_time()
    bids = bids or BidRouting(cfg)
    if lag is not None and lag.pending is not None:
        played = lag.pending
    else:
        played = play_epoch(cfg, game, learner.behaviour(), curriculum, epoch, bids, actors)
    rollout, total_decisions = played.result()
    play_secs = time.perf_counter() - start
    if lag is not None:
        assert actors is not None
        lag.hand_over(cfg, game, learner, curriculum, epoch, bids, actors)
    es = epoch_seed(cfg, epoch)
    with update_context(cfg.precision, learner.device):
        stats = learner.update(rollout, np.random.default_rng([es, 2]),
                               progress=(epoch / cfg.epochs, (epoch + 1) / cfg.epochs))
    if played.bid_batch is not None:
        assert bids.learner is not None
        batch = played.bid_batch
        stats.update({f"bid_{k}": v for k, v in bids.learner.update(batch, np.random.default_rng([es, 3])).items()})
        stats["bid_decisions"] = batch.size
    curriculum.record(played.opponents, rollout.outcomes)
    curriculum.after_epoch(learner, cfg.games_per_epoch)
    secs = time.perf_counter() - start
    return {
        "epoch": epoch + 1,
        "games": cfg.games_per_epoch,
        "learner_decisions": rollout.size,
        "decisions": total_decisions,
        "decisions_per_s": total_decisions / play_secs,
        "play_seconds": play_secs,
        "update_seconds": secs - play_secs,
        # the training process's CPU time and its actors': what the epoch cost, whatever else ran
        "cpu_seconds": time.process_time() - cpu + played.actor_cpu_seconds,
        "mean_return": float(np.mean(rollout.rewards[rollout.dones])),
        **{f"loss/{k}": v for k, v in stats.items()},
    }


def check_finite(learner: Learner, bids: BidRouting) -> None:
    """Raise :class:`TrainingDiverged` when a weight of the learner's (or the bid model's) network
    is a NaN or an infinity (:meth:`~climbrl.learn.trainable.TrainableState._step` stops on a
    non-finite loss; a finite loss can still step the weights out of range)."""
    nets = {"net": learner.net, **({"bid net": bids.learner.net} if bids.learner is not None else {})}
    bad = [f"{name} {k}" for name, net in nets.items() for k in ckpt.non_finite(net.state_dict())]
    if bad:
        raise TrainingDiverged(f"NaN or infinite weights after its update in {ckpt.name_some(bad)}")


def _past(started: float, time_limit: float, row: dict[str, Any]) -> bool:
    """Whether another epoch as long as ``row``'s (with its evaluation) would end past the limit."""
    last = row["play_seconds"] + row["update_seconds"] + row.get("eval_seconds", 0.0)
    return time.perf_counter() - started + last > time_limit


def _both(*listeners: Callable) -> Callable:
    def on_step(*args: Any) -> None:
        for f in listeners:
            f(*args)
    return on_step


def write_csv(history: list[dict[str, Any]], path: Path) -> None:
    cols: list[str] = []
    for row in history:
        cols += [k for k in row if k not in cols]
    tmp = path.with_suffix(".csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(history)
    tmp.replace(path)


def train(cfg: TrainConfig, out_dir: str | Path, resume: bool = False, progress: bool = True,
          on_epoch: Callable[[dict[str, Any]], None] | None = None,
          evaluator: Evaluator | None = None, time_limit: float | None = None) -> dict[str, Any]:
    """Train ``cfg.algo``; returns the summary (last evaluation, timings, history).

    ``time_limit``: seconds of wall time for this leg (:mod:`climbrl.learn.legs`): the run stops
    after the epoch whose successor would likely end past it (its files written, ``stopped`` in
    the summary says ``time limit``), to be resumed later; every leg is recorded in ``legs.json``.

    ``evaluator`` scores the policy every ``cfg.eval_every`` epochs; a config that evaluates
    needs one (:func:`climbrl.training.train` passes the study's duplicate-deal matches).

    Runs on one intra-op thread (:func:`climbrl.threads.single_thread`: a product's float sums
    depend on how many threads split it, so the numbers would otherwise depend on the machine's
    core count); the caller's thread count is restored afterwards."""
    resolve_device(cfg.device)  # cuda without a GPU: a clear error before any file is written
    if cfg.eval_every and evaluator is None:
        raise ValueError("this config evaluates every eval_every epochs: pass an evaluator "
                         "(climbrl.training.train evaluates with duplicate-deal matches)")
    if time_limit is not None and not time_limit > 0:
        raise ValueError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    with single_thread():
        return _train(cfg, Path(out_dir), resume, progress, on_epoch, evaluator, time_limit)


def _train(cfg: TrainConfig, out: Path, resume: bool, progress: bool,
           on_epoch: Callable[[dict[str, Any]], None] | None, evaluator: Evaluator | None,
           time_limit: float | None = None) -> dict[str, Any]:
    out.mkdir(parents=True, exist_ok=True)
    ckpt_path = out / CHECKPOINT
    game = make_game(cfg.game_name)
    learner = make_learner(cfg)
    curriculum = Curriculum(cfg, learner, game.num_players)
    bids = BidRouting(cfg)
    history: list[dict[str, Any]] = []
    start_epoch = 0
    lag_state = None
    if resume and ckpt_path.exists():
        state = ckpt.load(ckpt_path)
        ckpt.check_resume(cfg, state, ckpt_path)
        learner.load_state_dict(state["learner"])
        if bids.learner is not None:
            bids.learner.load_state_dict(state["bidder"])
        curriculum.load_state_dict(state["curriculum"], learner.net)
        learner.generator.set_state(state["torch_rng"])
        history = list(state["history"])
        start_epoch = int(state["epoch"])
        lag_state = state.get("lag")
    elif ckpt_path.exists():
        raise ckpt.CheckpointError(f"{ckpt_path} exists: pass resume=True (--resume) or use another --out")
    ledger = Ledger(out, start_epoch, resume, history)
    actors = make_actors(cfg, str(learner.device))
    try:
        lag = None
        if cfg.actor_lag:
            assert actors is not None  # the config checks actors >= 2
            lag = Lag()
            if lag_state is not None and start_epoch < cfg.epochs:
                lag.restore(lag_state, cfg, game, learner, start_epoch, bids, actors)
        return _epochs(cfg, out, game, learner, curriculum, bids, history, start_epoch, actors, lag, progress,
                       on_epoch, evaluator, ledger, time_limit)
    finally:
        if actors is not None:
            actors.close()


def _epochs(cfg: TrainConfig, out: Path, game: Any, learner: Learner, curriculum: Curriculum, bids: BidRouting,
            history: list[dict[str, Any]], start_epoch: int, actors: ActorPool | None, lag: Lag | None,
            progress: bool, on_epoch: Callable[[dict[str, Any]], None] | None, evaluator: Evaluator | None,
            ledger: Ledger, time_limit: float | None = None) -> dict[str, Any]:
    ckpt_path, policy_path, csv_path = out / CHECKPOINT, out / POLICY, out / METRICS
    started = time.perf_counter()
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=cfg.epochs, initial=start_epoch, desc=f"{cfg.algo}", unit="epoch")
    for epoch in range(start_epoch, cfg.epochs):
        try:
            row = run_epoch(cfg, game, learner, curriculum, epoch, bids, actors, lag)
            check_finite(learner, bids)
        except TrainingDiverged as e:
            kept = (f"{out} keeps epoch {epoch}'s checkpoint and policy, the last finite ones" if epoch
                    else "nothing was written")
            raise TrainingDiverged(f"{cfg.algo} diverged in epoch {epoch + 1}: {e}; {kept} (a smaller lr or "
                                   "max_grad_norm may help)") from None
        policy = {**ckpt.network_payload(learner.net, cfg.algo, epoch + 1, learner.encoder), **bids.payload()}
        if cfg.eval_every and (epoch + 1) % cfg.eval_every == 0:
            t0 = time.perf_counter()
            ckpt.save_atomic(policy, policy_path)
            assert evaluator is not None
            row.update(evaluator(cfg, policy_path))
            row["eval_seconds"] = time.perf_counter() - t0
        history.append(row)
        ckpt.save_atomic({
            "format": ckpt.FORMAT, "version": ckpt.VERSION, "algo": cfg.algo, "config": cfg.to_dict(),
            "net_config": learner.net.config(), "encoder": learner.encoder.describe(), "epoch": epoch + 1,
            "learner": learner.state_dict(),
            "curriculum": curriculum.state_dict(), "history": history,
            "torch_rng": learner.generator.get_state(),
            **({"bidder": bids.learner.state_dict()} if bids.learner is not None else {}),
            **({"lag": lag.state} if lag is not None else {}),
        }, ckpt_path)
        ckpt.save_atomic(policy, policy_path)
        if cfg.keep_policy_every and (epoch + 1) % cfg.keep_policy_every == 0:
            (out / SNAPSHOTS).mkdir(exist_ok=True)
            shutil.copyfile(policy_path, out / SNAPSHOTS / f"epoch{epoch + 1:03d}.pt")
        write_csv(history, csv_path)
        ledger.after_epoch(row)
        if on_epoch:
            on_epoch(row)
        if bar is not None:
            post = {"loss": next((f"{v:.3g}" for k, v in row.items() if k.startswith("loss/")), "")}
            for k, v in row.items():
                if k.startswith("win_rate/"):
                    post[k.split("/")[1][:4]] = f"{v:.2f}"
            bar.set_postfix(post)
            bar.update(1)
        if time_limit is not None and epoch + 1 < cfg.epochs and _past(started, time_limit, row):
            stopped = "time limit"
            break
    else:
        stopped = "done"
    ledger.stop(stopped)
    if bar is not None:
        bar.close()
    evals = [r for r in history if any(k.startswith("win_rate/") for k in r)]
    return {
        "algo": cfg.algo, "epochs": cfg.epochs, "out": str(out), "stopped": stopped,
        "epochs_done": len(history), "legs": len(ledger.legs),
        "seconds_this_run": time.perf_counter() - started,
        "train_seconds": sum(r["play_seconds"] + r["update_seconds"] for r in history),
        "eval_seconds": sum(r.get("eval_seconds", 0.0) for r in history),
        "final_eval": evals[-1] if evals else {},
        "history": history,
    }
