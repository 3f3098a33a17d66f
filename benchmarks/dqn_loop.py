"""What the practice guide's DQN loop (its 4.2) costs against the study's, on Dou Dizhu.

The guide makes one update per environment step, syncs the target every 2000 steps and decays
epsilon from 1.0 to 0.05 over 500k steps. The study's DQN (``params.yaml``, ``studies.doudizhu``)
makes ``updates_per_epoch`` (50) updates an epoch of 200 games instead. This trains the study's DQN
config for a few epochs as the study runs it, and one short epoch of the guide's loop
(``updates_per_decision: 1.0`` with the guide's sync and decay; a whole epoch of it runs for tens of
minutes), with no in-training evaluation, and projects both to the study's full budget: the
study's play time and learner decisions an epoch, and each loop's measured time per update.

Run: ``.venv/bin/python benchmarks/dqn_loop.py [--epochs 3]``. Writes
``benchmarks/results/dqn_loop.json`` and prints a table. Measurements, never assertions; the
machine's load while it ran is recorded beside them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import shutil
import time
from pathlib import Path

from climbrl.params import load_params
from climbrl.training import train

GUIDE = {"updates_per_decision": 1.0, "target_sync": 2000, "target_sync_unit": "decisions",
         "epsilon_decay_steps": 500_000}
"""The guide's 4.2 loop as the config's options (:mod:`climbrl.learn.replay_learner`)."""


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--params", default="params.yaml#doudizhu")
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "dqn_loop.json"))
    p.add_argument("--guide-games", type=int, default=20,
                   help="games of the guide's loop's one measured epoch (its updates are what cost)")
    p.add_argument("--runs", default="runs/bench/dqn_loop")
    args = p.parse_args()
    study = load_params(args.params).train["dqn"]
    results = {"machine": f"{platform.machine()}, Python {platform.python_version()}, {os.cpu_count()} cores",
               "params": args.params, "epochs": args.epochs, "study_epochs": study.epochs,
               "games_per_epoch": study.games_per_epoch, "load_before": os.getloadavg()[0], "loops": {}}
    for name, changes, epochs, games in (("study", {}, args.epochs, study.games_per_epoch),
                                         ("guide", GUIDE, 1, args.guide_games)):
        cfg = dataclasses.replace(study, epochs=epochs, games_per_epoch=games, eval_every=0, **changes)
        run_dir = Path(args.runs) / name
        shutil.rmtree(run_dir, ignore_errors=True)
        start = time.perf_counter()
        hist = train(cfg, run_dir, progress=False)["history"]
        wall = time.perf_counter() - start
        decisions = sum(r["learner_decisions"] for r in hist)
        # the guide's loop records the updates it made (none before replay holds a batch)
        updates = (round(sum(r["loss/updates"] for r in hist)) if cfg.updates_per_decision
                   else cfg.updates_per_epoch * epochs)
        update_seconds = sum(r["update_seconds"] for r in hist)
        results["loops"][name] = {
            "changes": changes, "epochs": epochs, "games_per_epoch": games, "wall_seconds": wall,
            "play_seconds": sum(r["play_seconds"] for r in hist), "update_seconds": update_seconds,
            "learner_decisions": decisions, "updates": updates,
            "ms_per_update": 1000 * update_seconds / updates if updates else None}
        if not updates:
            raise SystemExit(f"{name}: no update was made (replay never held a batch): raise --guide-games")
    # the full budget: the study's games and decisions an epoch; the guide makes one update per decision
    st, gd = results["loops"]["study"], results["loops"]["guide"]
    play, per_epoch = st["play_seconds"] / st["epochs"], st["learner_decisions"] / st["epochs"]
    projected = {"study": study.epochs * (play + study.updates_per_epoch * st["ms_per_update"] / 1000),
                 "guide": study.epochs * (play + per_epoch * gd["ms_per_update"] / 1000)}
    results["projected_hours"] = {k: v / 3600 for k, v in projected.items()}
    results["updates_at_full_budget"] = {"study": study.epochs * study.updates_per_epoch,
                                         "guide": round(study.epochs * per_epoch)}
    for name in ("study", "guide"):
        x = results["loops"][name]
        print(f"{name}: {x['epochs']} epoch(s) of {x['games_per_epoch']} games, {x['updates']:,} updates, "
              f"{x['ms_per_update']:.1f} ms an update; the study's {study.epochs} epochs: "
              f"{results['updates_at_full_budget'][name]:,} updates, {results['projected_hours'][name]:.2f} h",
              flush=True)
    results["load_after"] = os.getloadavg()[0]
    results["ratio"] = results["projected_hours"]["guide"] / results["projected_hours"]["study"]
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"the guide's loop: {results['ratio']:.1f} x the study's training time")


if __name__ == "__main__":
    main()
