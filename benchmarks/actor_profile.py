"""Where an actor's time goes: one self-play core split into its parts, and the bound that puts on
issue 25's "twice today's decisions per second per core". Writes benchmarks/results/actor_profile.json.

Run: ``.venv/bin/python benchmarks/actor_profile.py [--games doudizhu:douzero,big2:paper]
[--algo dmc] [--epochs 3] [--games-per-epoch 300] [--hidden 512] [--note TEXT] [--out FILE]``; with
``PYTHONPATH=WORKTREE/src`` it measures another version's code (its commit is recorded): the
version before issue 25 (32d28e6, which has no dmc: ``--algo mcq``, compared with today's mcq in
``results/actor_profile_mcq.json``) is issue 25's "today" (``results/actor_profile_before_25.json``).

One process plays what one actor plays: the learner's behaviour policy (a fresh network of the
configured size, epsilon-greedy for the value learners) in every seat, ``games-per-epoch`` games in
lockstep through :func:`climbrl.agents.runner.play_games` with the self-play collector, on one
torch thread, the first epoch left out (numba compilation, warm caches). Each part is timed by
wrapping the function that does it:

- ``engine``: the legal moves and the observation (``Decision.from_state``) and the moves
  applied (``state.apply``);
- ``encode``: the encoder's vectors of a batch of decisions;
- ``network``: the forward pass that scores every legal move (no gradient);
- ``rest``: everything else in the playing time (the choice, the collector, the runner's loop).

It also times the network's widest layer (``hidden x hidden``) alone on this core at the batch
shapes the actor fed it, to tell how close the forward pass runs to the core's matrix-product
speed. The FLOPs are counted from the shapes of the MLP action-in network (the study's; an LSTM's
are not counted). ``speedup_bound_engine_free``, the playing time over the network's share, is the most any
work outside the network can give, and ``speedup_bound_engine_free_network_at_layer_speed`` the most
with the whole forward pass (every layer's FLOPs, counted from the shapes) run at that layer's speed
too; where they are below 2, twice the decisions per core need fewer
network FLOPs per decision (a smaller network or fewer scored moves) or lower-precision arithmetic
(which changes the numbers rather than computing them faster), not a faster engine. Measurements of this
machine at the time of the run (load average recorded), never assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import torch

from climbrl.agents.base import Decision
from climbrl.agents.runner import deal_seeds, play_games, seat_seed
from climbrl.config import train_config
from climbrl.games.registry import make_game
from climbrl.learn import network
from climbrl.learn.registry import make_learner
from climbrl.learn.rollout import Collector
from climbrl.provenance import cpu_facts
from climbrl.threads import single_thread


class Timers:
    """Accumulated seconds per part; ``wrap`` times a function into one of them."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.rows = 0
        self.flops = 0
        self.batches: list[int] = []

    def wrap(self, part: str, fn):
        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[part] += time.perf_counter() - t
        return timed


def profile(game_spec: str, algo: str, epochs: int, games: int, hidden: int, seed: int,
            precision: str = "fp32") -> dict:
    name, _, rules = game_spec.partition(":")
    cfg = train_config(algo, game=name, rules=rules, epochs=epochs, games_per_epoch=games, hidden=hidden,
                       eval_every=0, keep_policy_every=0, seed=seed, precision=precision)
    game = make_game(cfg.game_name)
    learner = make_learner(cfg)
    timers = Timers()
    forward = network.ActionInNet.forward
    state_cls = type(game.new_game(seed=0))

    def counted_forward(net, states, moves, seg):
        if not torch.is_grad_enabled():
            scored, h = int(moves.shape[0]), net.hidden
            timers.rows += scored
            timers.batches.append(scored)
            # the first layer on each state and each move, the widest layer and the output, per scored move
            timers.flops += 2 * (states.shape[0] * states.shape[1] * h + scored * (moves.shape[1] * h + h * h + h))
        return forward(net, states, moves, seg)

    patches = [(Decision, "from_state", classmethod(timers.wrap("engine", Decision.from_state.__func__))),
               (state_cls, "apply", timers.wrap("engine", state_cls.apply)),
               (network.ActionInNet, "forward", timers.wrap("network", counted_forward))]
    originals = [(obj, attr, obj.__dict__[attr]) for obj, attr, _ in patches]
    rows = []
    with single_thread():
        try:
            for obj, attr, new in patches:
                setattr(obj, attr, new)
            for epoch in range(epochs):
                behaviour = learner.behaviour()
                encode = behaviour.encoder.encode
                behaviour.encoder.encode = timers.wrap("encode", encode)  # this agent's encoder only
                timers.seconds.clear()
                timers.rows, timers.flops, timers.batches = 0, 0, []
                seeds = deal_seeds(seed + epoch, games, "train")
                seat_seeds = [[seat_seed(seed + epoch, g, 0, s) for s in range(game.num_players)]
                              for g in range(games)]
                collector = Collector(behaviour)
                cpu0, t0 = time.process_time(), time.perf_counter()
                states = play_games(game, [[behaviour] * game.num_players] * games, seeds, seat_seeds,
                                    on_step=collector)
                collector.build(states)
                wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
                del behaviour.encoder.encode
                decisions = sum(len(s.moves) for s in states)
                parts = dict(timers.seconds)
                parts["rest"] = wall - sum(parts.values())
                rows.append({"epoch": epoch, "decisions": decisions, "rows": timers.rows, "flops": timers.flops,
                             "wall_seconds": wall,
                             "cpu_seconds": cpu, "parts": parts, "batches": list(timers.batches)})
        finally:
            for obj, attr, old in originals:
                setattr(obj, attr, old)
        timed = rows[1:] or rows
        wall = sum(r["wall_seconds"] for r in timed)
        parts = {k: sum(r["parts"][k] for r in timed) for k in timed[0]["parts"]}
        decisions = sum(r["decisions"] for r in timed)
        rowcount = sum(r["rows"] for r in timed)
        all_flops = sum(r["flops"] for r in timed)
        batches = [b for r in timed for b in r["batches"]]
        widest = widest_layer_rate(batches, hidden, seed)
    flops = 2 * hidden * hidden * rowcount  # the widest layer's multiply-adds over the scored moves
    return {
        "game": game_spec, "algo": algo, "precision": precision, "hidden": hidden, "games_per_epoch": games,
        "epochs_timed": len(timed), "rows_per_call": rows_per_call(batches),
        "decisions": decisions, "scored_moves": rowcount, "scored_moves_per_decision": rowcount / decisions,
        "decisions_per_s": decisions / wall, "cpu_seconds_per_million_decisions": 1e6 * sum(
            r["cpu_seconds"] for r in timed) / decisions,
        "seconds": parts, "share": {k: v / wall for k, v in parts.items()},
        "network_gflops": flops / parts["network"] / 1e9,
        "widest_layer_alone_gflops": widest,
        "widest_layer_share_of_network": flops / widest / 1e9 / parts["network"],
        "network_flops_per_decision": all_flops / decisions,
        "widest_layer_share_of_flops": flops / all_flops,
        "speedup_bound_engine_free": wall / parts["network"],
        "speedup_bound_engine_free_network_at_layer_speed": wall / (all_flops / widest / 1e9),
    }


def rows_per_call(batches: list[int]) -> dict:
    """The distribution of scored moves (rows) per forward call of the network: how many calls,
    their mean, quartiles and extremes, and the share of all rows scored in calls of at least
    256 rows (where bfloat16 arithmetic gains most, :mod:`climbrl.learn.precision`)."""
    if not batches:
        return {"calls": 0}
    b = sorted(batches)
    q = [b[min(len(b) - 1, int(f * len(b)))] for f in (0.1, 0.25, 0.5, 0.75, 0.9)]
    return {"calls": len(b), "mean": sum(b) / len(b), "min": b[0], "p10": q[0], "p25": q[1], "median": q[2],
            "p75": q[3], "p90": q[4], "max": b[-1], "share_of_rows_in_calls_of_256_or_more":
            sum(x for x in b if x >= 256) / sum(b)}


def widest_layer_rate(batches: list[int], hidden: int, seed: int) -> float:
    """GFLOP/s of a ``hidden x hidden`` linear layer on this core over the actor's batch sizes."""
    gen = torch.Generator().manual_seed(seed)
    layer = torch.nn.Linear(hidden, hidden)
    # a systematic sample of the batches the actor fed it (each size as often as it came)
    inputs = [torch.randn(b, hidden, generator=gen) for b in batches[:: max(1, len(batches) // 60)]]
    with torch.no_grad():
        for x in inputs:
            layer(x)
        t = time.perf_counter()
        done = 0
        for _ in range(3):
            for x in inputs:
                layer(x)
                done += x.shape[0]
        dt = time.perf_counter() - t
    return 2 * hidden * hidden * done / dt / 1e9


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def code_commit() -> str:
    """The commit of the climbrl package measured (the checkout it is imported from), ``+`` when
    that checkout has changes: ``PYTHONPATH=OTHER/src`` measures another version's code."""
    import climbrl

    where = Path(climbrl.__file__).parent
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=where, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "."], cwd=where, capture_output=True, text=True)
    return head.stdout.strip() + ("+" if dirty.stdout.strip() else "") if head.returncode == 0 else "unknown"


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--games", default="doudizhu:douzero,big2:paper")
    p.add_argument("--algo", default="dmc")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--games-per-epoch", type=int, default=300)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--precisions", default="fp32",
                   help="train.precision settings profiled side by side (comma-separated; issue 47)")
    p.add_argument("--note", default="", help="conditions of the run (recorded as is)")
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "actor_profile.json"))
    args = p.parse_args()
    out = {"measured": datetime.now(UTC).isoformat(timespec="seconds"),
           "machine": f"{platform.machine()}, {os.cpu_count()} cores, {cpu_model()}, "
                      f"Python {platform.python_version()}",
           "cpu": cpu_facts(), "torch": torch.__version__, "commit": code_commit(), "note": args.note,
           "load_before": os.getloadavg(),
           "rows": []}
    for spec, precision in ((g, p) for g in args.games.split(",") for p in args.precisions.split(",")):
        r = profile(spec, args.algo, args.epochs, args.games_per_epoch, args.hidden, args.seed, precision)
        out["rows"].append(r)
        share = ", ".join(f"{k} {v:.2f}" for k, v in r["share"].items())
        print(f"{spec} {args.algo} {precision}: {r['decisions_per_s']:.0f} decisions/s, "
              f"{r['scored_moves_per_decision']:.2f} "
              f"scored moves a decision; time shares: {share}; network {r['network_gflops']:.1f} GFLOP/s "
              f"(its widest layer alone {r['widest_layer_alone_gflops']:.1f}); at most "
              f"x{r['speedup_bound_engine_free']:.2f} with everything but the network free", flush=True)
    out["load_after"] = os.getloadavg()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
