"""Behaviour cloning of a teacher agent: a network that plays like it, at a fraction of its cost.

The champion's base policy (issue 12) is trained this way: the teacher is a rollout search (say
``search:S=16,K=20``, about 0.003 s a decision), which plays every seat of ``games`` games; the
student, an :class:`~climbrl.learn.network.ActionHeadNet` over the ``big2-charlesworth`` encoder
(one forward pass per decision), learns to pick the teacher's move among the legal ones
(cross-entropy of the softmax over the legal moves' logits), and its value head the seat's final
reward (the card-count score / 13, what the public agent was trained on), which a later PPO run
can start from. A compiled rollout then plays the student a few microseconds a decision
(``search:checkpoint:PATH,own=base``): a search over a base policy distilled from a search.

Reproducible: the games are seeded from ``seed`` (deal seeds, and every seat's stream as in a
match), collected in fixed chunks of deals whatever the number of worker processes, and the
student's initial weights and minibatch order come from its own seeded generators. Decisions with
one legal move teach nothing and are left out. The last ``holdout`` share of the games is kept
out of training to measure how often the student picks the teacher's move on games it has not
seen, after every epoch (so that a number of epochs can be chosen on that curve, never on
evaluation deals; a tie for the student's top move counts as the teacher's move when the
teacher's is among the tied). ``train_accuracy`` is measured on the first 20,000 training
decisions.
Both phases' CPU seconds are recorded (the issue's training budget counts them).
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from climbrl.agents.runner import deal_seeds, play_games, seat_seed
from climbrl.config import MAX_WIDTH, SEED_LIMIT
from climbrl.encoders import make_encoder
from climbrl.learn.checkpoint import network_payload, save_atomic
from climbrl.learn.network import make_net, segment_log_softmax
from climbrl.threads import worker_init

CHUNK_GAMES = 25


class ImitationError(ValueError):
    """A bad imitation setting; the message names it."""


@dataclass(frozen=True)
class ImitationConfig:
    teacher: str = "search:S=16,K=20"
    """The agent that plays every seat of the teacher's games (any agent spec)."""
    game: str = "big2"
    rules: str = "charlesworth"
    encoder: str = "big2-charlesworth"
    """The student's encoder. One with a fixed action space (``big2-charlesworth``) makes an
    action-head network; any other (Dou Dizhu's ``doudizhu``, Big 2's ``big2``) the learners' own
    per-move scoring network with a value head, which a learner's run can start from
    (``init_policy``)."""
    games: int = 2000
    seed: int = 0
    holdout: float = 0.05
    """Share of the games (the last ones, rounded up) kept out of training to measure the student."""
    hidden: int = 512
    epochs: int = 4
    """Passes over the training decisions."""
    lr: float = 1e-3
    batch: int = 1024
    value_coef: float = 0.5
    workers: int = 2

    def __post_init__(self) -> None:
        checks = [("seed", 0 <= self.seed < SEED_LIMIT, f"an integer from 0 to {SEED_LIMIT - 1}"),
                  ("games", self.games >= 4, "at least 4"), ("holdout", 0.0 <= self.holdout < 1.0, "in [0, 1)"),
                  ("hidden", isinstance(self.hidden, int) and 2 <= self.hidden <= MAX_WIDTH,
                   f"from 2 to {MAX_WIDTH} (MAX_WIDTH, the widest network layer)"),
                  ("epochs", self.epochs >= 1, ">= 1"),
                  ("lr", self.lr > 0, "> 0"), ("batch", self.batch >= 1, ">= 1"),
                  ("value_coef", self.value_coef >= 0, ">= 0"), ("workers", self.workers >= 1, ">= 1")]
        for name, ok, want in checks:
            if not ok:
                raise ImitationError(f"imitation {name} must be {want}, got {getattr(self, name)!r}")
        from climbrl.encoders import EncoderError

        try:
            make_encoder(self.game, self.encoder)
        except (EncoderError, KeyError, ValueError) as e:
            raise ImitationError(f"imitation encoder {self.encoder!r} for game {self.game!r}: {e}") from None


def _chunk(args: tuple) -> dict[str, Any]:
    """The teacher's decisions in the games of deals ``first .. first + len(seeds)``."""
    from climbrl.games.registry import make_game
    from climbrl.learn.specs import make_agent
    from climbrl.threads import single_thread

    teacher_spec, game_name, encoder_name, seed, first, seeds = args
    start = time.process_time()
    with single_thread():
        game = make_game(game_name)
        teacher = make_agent(teacher_spec, game_name)
        enc = make_encoder(game_name, encoder_name)
        n = game.num_players
        rows: list[tuple[int, int]] = []  # (game in chunk, seat) of each recorded decision
        states, moves, counts, picks = [], [], [], []

        def record(agent, gis, decisions, chosen):
            keep = [i for i, d in enumerate(decisions) if len(d.moves) > 1]
            if not keep:
                return
            s, m, off = enc.encode([decisions[i] for i in keep])
            states.append(s)
            moves.append(m)
            counts.extend(np.diff(off).tolist())
            picks.extend(chosen[i] for i in keep)
            rows.extend((gis[i], decisions[i].seat) for i in keep)

        finished = play_games(game, [[teacher] * n for _ in seeds], list(seeds),
                              [[seat_seed(seed, first + g, 0, p) for p in range(n)] for g in range(len(seeds))],
                              on_step=record)
        value = [enc.card_score(finished[g], p) for g, p in rows]
    return {"states": np.concatenate(states) if states else np.zeros((0, enc.state_dim), np.float32),
            "moves": np.concatenate(moves) if moves else np.zeros((0, enc.move_dim), np.float32),
            "counts": np.array(counts, dtype=np.int64), "picks": np.array(picks, dtype=np.int64),
            "value": np.array(value, dtype=np.float32), "game": np.array([first + g for g, _ in rows], np.int64),
            "cpu_s": time.process_time() - start}


def collect(cfg: ImitationConfig) -> dict[str, Any]:
    """The teacher's decisions over all ``cfg.games`` games, in deal order (any worker count)."""
    from climbrl.games.registry import make_game

    name = f"{cfg.game}:{cfg.rules}"
    from climbrl.agents.base import Decision

    game = make_game(name)  # an unknown game or preset fails here, before any process starts
    make_encoder(name, cfg.encoder).encode([Decision.from_state(game.new_game(seed=0))])  # rules it cannot encode
    seeds = deal_seeds(cfg.seed, cfg.games, "teacher")  # the teacher's own deals: no evaluation's
    tasks = [(cfg.teacher, name, cfg.encoder, cfg.seed, s, seeds[s:s + CHUNK_GAMES])
             for s in range(0, cfg.games, CHUNK_GAMES)]
    if cfg.workers == 1 or len(tasks) == 1:
        parts = [_chunk(t) for t in tasks]
    else:
        with ProcessPoolExecutor(max_workers=min(cfg.workers, len(tasks)), mp_context=mp.get_context("spawn"),
                                 initializer=worker_init) as pool:
            parts = list(pool.map(_chunk, tasks))
    out = {k: np.concatenate([p[k] for p in parts]) for k in ("states", "moves", "counts", "picks", "value", "game")}
    out["offsets"] = np.concatenate([[0], np.cumsum(out.pop("counts"))]).astype(np.int64)
    out["cpu_s"] = float(sum(p["cpu_s"] for p in parts))
    return out


def _batch(data: dict[str, Any], idx: np.ndarray) -> tuple[torch.Tensor, ...]:
    off = data["offsets"]
    counts = off[idx + 1] - off[idx]
    rows = np.concatenate([np.arange(off[i], off[i + 1]) for i in idx])
    seg = np.repeat(np.arange(len(idx)), counts)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return (torch.from_numpy(data["states"][idx]), torch.from_numpy(data["moves"][rows]),
            torch.from_numpy(seg), torch.from_numpy(starts + data["picks"][idx]),
            torch.from_numpy(data["value"][idx]))


def _accuracy(net, data: dict[str, Any], idx: np.ndarray) -> float | None:
    """Share of the decisions ``idx`` where the student's top move is the teacher's (None: no decision)."""
    if not len(idx):
        return None
    hits = 0
    with torch.no_grad():
        for lo in range(0, len(idx), 4096):
            part = idx[lo:lo + 4096]
            states, moves, seg, chosen, _ = _batch(data, part)
            scores = net(states, moves, seg)
            best = torch.full((len(part),), float("-inf")).scatter_reduce(0, seg, scores, reduce="amax")
            hits += int((scores[chosen] >= best).sum())
    return hits / len(idx)


def fit(cfg: ImitationConfig, data: dict[str, Any]) -> tuple[torch.nn.Module, dict[str, Any]]:
    """Train the student on the decisions of the first games; measure it on the held-out ones."""
    from climbrl.threads import single_thread

    enc = make_encoder(cfg.game, cfg.encoder)
    n_train_games = cfg.games - math.ceil(cfg.holdout * cfg.games)  # at least one game held out when holdout > 0
    train_idx = np.flatnonzero(data["game"] < n_train_games)
    test_idx = np.flatnonzero(data["game"] >= n_train_games)
    if not len(train_idx):
        raise ImitationError("the teacher's games hold no decision with a choice to learn from")
    start = time.process_time()
    with single_thread():
        net = make_net(enc.state_dim, enc.move_dim, cfg.hidden, value_head=True,
                       generator=torch.Generator().manual_seed(cfg.seed), n_actions=getattr(enc, "n_actions", 0))
        opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
        order_rng = np.random.default_rng(cfg.seed)
        losses, holdout_curve = [], []
        for _ in range(cfg.epochs):
            order = train_idx[order_rng.permutation(len(train_idx))]
            epoch_loss = []
            for lo in range(0, len(order), cfg.batch):
                states, moves, seg, chosen, value = _batch(data, order[lo:lo + cfg.batch])
                logp = segment_log_softmax(net(states, moves, seg), seg, len(value))
                loss = -logp[chosen].mean() + cfg.value_coef * torch.mean((net.value(states) - value) ** 2)
                opt.zero_grad()
                loss.backward()
                opt.step()
                epoch_loss.append(loss.item())
            losses.append(float(np.mean(epoch_loss)))
            holdout_curve.append(_accuracy(net, data, test_idx))
        stats = {"train_decisions": int(len(train_idx)), "holdout_decisions": int(len(test_idx)),
                 "epoch_loss": losses, "epoch_holdout_accuracy": holdout_curve,
                 "train_accuracy": _accuracy(net, data, train_idx[:20000]),
                 "holdout_accuracy": _accuracy(net, data, test_idx), "fit_cpu_s": time.process_time() - start}
    return net.eval(), stats


def imitate(cfg: ImitationConfig, out: str | Path) -> dict[str, Any]:
    """Collect the teacher's games, fit the student, write ``policy.pt`` (a weights-only
    checkpoint any ``checkpoint:PATH`` spec loads) and ``imitation.json`` (the settings, the
    sizes, the student's accuracy and the CPU seconds of both phases) into ``out``."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    data = collect(cfg)
    net, stats = fit(cfg, data)
    enc = make_encoder(cfg.game, cfg.encoder)
    save_atomic(network_payload(net, "imitation", cfg.epochs, enc), out / "policy.pt")
    summary = {"config": asdict(cfg), "decisions": int(len(data["picks"])), "collect_cpu_s": data["cpu_s"], **stats}
    summary["cpu_s"] = summary["collect_cpu_s"] + summary["fit_cpu_s"]
    (out / "imitation.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


__all__ = ["ImitationConfig", "ImitationError", "collect", "fit", "imitate"]
