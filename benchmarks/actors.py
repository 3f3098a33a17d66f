"""Self-play throughput with 1 and more actor processes: writes benchmarks/results/actors.json.

Run: ``.venv/bin/python benchmarks/actors.py [--algos ppo,mcq] [--actors 1,2] [--lag] [--epochs 5]
[--games-per-epoch 200] [--hidden 512] [--games big2:paper,doudizhu:rlcard] [--precisions fp32,bf16]``.

For each (game, learner, actor count) it trains ``epochs`` epochs (no evaluation) and reports the
self-play decisions per second (every seat's decisions over the playing time, shipping the
weights to the actors and their rollouts back included; with ``--lag``, actor_lag runs too, whose
playing time is only the time the update waited for the games), the update time, and the epoch
rate and ``decisions_per_s_overall`` (over playing and updating: the numbers that actor_lag can
improve, and the only ones comparable between lagged and synchronous runs), and the CPU seconds
per million learned decisions (the training process's CPU time and its actors', playing and
updating: what a decision costs whatever the actor count; issue 25's measure), and the learner's
side (issue 47): ``learned_decisions_per_s``, the learner's decisions over the update time, and the
update's seconds per million learned decisions (one core: the training process's);
``--precisions`` runs each ``precision`` setting (:mod:`climbrl.learn.precision`) side by side in
the same run, interleaved per repeat, so that they share the machine's state (load, clock), and
``speedup_vs_fp32`` compares each with the fp32 run of its repeat; the CPU's vendor and
lower-precision flags are recorded (:func:`climbrl.bench.cpu_facts`): bfloat16 gains differ between
Intel (AMX) and AMD machines of one kind. The first epoch is left out of the rates (it includes
starting the actor processes). The machine's load average is recorded before and after each run
(``os.getloadavg``): on a shared machine other work competes for the cores, and the numbers mean
little without it.
Measurements of this machine at the time of the run, never assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from climbrl.config import train_config
from climbrl.learn.train import train
from climbrl.provenance import cpu_facts


def measure(game: str, algo: str, actors: int, epochs: int, games: int, hidden: int, seed: int,
            lag: bool = False, device: str = "cpu", precision: str = "fp32") -> dict:
    name, _, rules = game.partition(":")
    cfg = train_config(algo, game=name, rules=rules, epochs=epochs, games_per_epoch=games, hidden=hidden,
                       eval_every=0, keep_policy_every=0, seed=seed, actors=actors, actor_lag=lag,
                       device=device, precision=precision)
    out = Path(tempfile.mkdtemp(prefix="climbrl-actors-"))
    load_before = os.getloadavg()
    try:
        hist = train(cfg, out, progress=False)["history"]
    finally:
        shutil.rmtree(out, ignore_errors=True)
    timed = hist[1:] or hist
    play = sum(r["play_seconds"] for r in timed)
    update = sum(r["update_seconds"] for r in timed)
    decisions = sum(r["decisions"] for r in timed)
    learned = sum(r["learner_decisions"] for r in timed)
    cpu = sum(r["cpu_seconds"] for r in timed)  # the training process's and its actors' CPU time
    return {"game": game, "algo": algo, "actors": actors, "actor_lag": lag, "device": device, "precision": precision,
            "epochs_timed": len(timed),
            "games_per_epoch": games,
            "hidden": hidden, "decisions": decisions, "decisions_per_s": decisions / play,
            "decisions_per_s_overall": decisions / (play + update),
            "cpu_seconds_per_million_decisions": 1e6 * cpu / decisions,
            "learned_decisions": learned, "learned_decisions_per_s": learned / update,
            "update_seconds_per_million_learned": 1e6 * update / learned,
            "play_seconds": play, "update_seconds": update, "epochs_per_min": 60 * len(timed) / (play + update),
            "first_epoch_seconds": hist[0]["play_seconds"] + hist[0]["update_seconds"],
            "load_before": load_before, "load_after": os.getloadavg()}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--games", default="big2:paper")
    p.add_argument("--algos", default="ppo,mcq")
    p.add_argument("--actors", default="1,2")
    p.add_argument("--epochs", type=int, default=5)
    p.add_argument("--games-per-epoch", type=int, default=200)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lag", action="store_true", help="also every actor count >= 2 with actor_lag")
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto (train.device)")
    p.add_argument("--precisions", default="fp32", help="train.precision settings, side by side (fp32 first)")
    p.add_argument("--repeats", type=int, default=1, help="rounds of every setting, interleaved")
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "actors.json"))
    args = p.parse_args()
    rows = []
    precisions = args.precisions.split(",")
    counts = [int(x) for x in args.actors.split(",")]
    for repeat in range(args.repeats):
        for game in args.games.split(","):
            for algo in args.algos.split(","):
                base = None
                runs = [(n, False) for n in counts] + [(n, True) for n in counts if args.lag and n > 1]
                for n, lag in runs:
                    fp32 = None
                    for precision in precisions:
                        r = measure(game, algo, n, args.epochs, args.games_per_epoch, args.hidden, args.seed, lag,
                                    args.device, precision)
                        r["repeat"] = repeat
                        base = base or r["decisions_per_s"]
                        fp32 = fp32 or (r if precision == "fp32" else None)
                        r["speedup_vs_first"] = r["decisions_per_s"] / base
                        if fp32 is not None:
                            r["speedup_vs_fp32"] = {k: r[k] / fp32[k] for k in ("decisions_per_s",
                                                    "learned_decisions_per_s", "decisions_per_s_overall")}
                        rows.append(r)
                        print(f"{game} {algo} actors={n}{' lag' if lag else ''} {precision}: "
                              f"{r['decisions_per_s']:.0f} decisions/s (x{r['speedup_vs_first']:.2f}), "
                              f"{r['decisions_per_s_overall']:.0f} with the updates, "
                              f"{r['learned_decisions_per_s']:.0f} learned decisions/s, "
                              f"play {r['play_seconds']:.1f} s, update {r['update_seconds']:.1f} s, "
                              f"{r['cpu_seconds_per_million_decisions']:.0f} CPU-s per million decisions, load "
                              f"{r['load_before'][0]:.1f} -> {r['load_after'][0]:.1f}", flush=True)
                        write(args.out, rows)  # after every run: a run stopped at a time limit keeps the rows so far


def write(out: str, rows: list[dict]) -> None:
    results = {"measured": datetime.now(UTC).isoformat(timespec="seconds"),
               "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
               "cpu": cpu_facts(), "rows": rows}
    if any(r["device"] != "cpu" for r in rows):
        import torch

        results["gpu"] = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
        results["torch"] = torch.__version__
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
