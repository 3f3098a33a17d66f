"""The largest training budget a machine reaches in a given wall time (issue 14, section 5).

Run: ``.venv/bin/python benchmarks/budget.py [--device cuda] [--actors 8] [--algo ppo] [--minutes 10]
[--games big2:paper] [--out FILE]``.

Trains one learner at the study's settings (2 x 512 network, 200 self-play games per epoch, no
in-training evaluation) epoch after epoch until ``--minutes`` of wall time have passed, then
reports how many self-play decisions (every seat's) and epochs it finished in that time, the
decisions per second over playing and updating, and the machine (CPU count, the GPU's name and
torch's version). The epoch running when time is up is finished, so the run ends a little after
the limit; the rate and the decisions at the limit (finished epochs only) are what to quote.
Measurements, never assertions; nothing in the test suite runs this.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from climbrl.config import train_config
from climbrl.learn.train import train


class TimeUp(Exception):
    """Raised from the epoch callback once the wall time is spent."""


def machine(device: str) -> dict[str, Any]:
    import torch

    info: dict[str, Any] = {"cpu": platform.machine(), "cores": os.cpu_count(), "python": platform.python_version(),
                            "torch": torch.__version__}
    if device != "cpu" and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name(0)
    return info


def run(game: str, algo: str, device: str, actors: int, minutes: float, games: int, hidden: int,
        seed: int, write: Any = None) -> dict[str, Any]:
    """The run's summary; ``write(summary)`` after every epoch as well, so that a run stopped at a
    time limit of its own (a lent machine's command limit) keeps what it measured."""
    name, _, rules = game.partition(":")
    cfg = train_config(algo, game=name, rules=rules, epochs=100_000, games_per_epoch=games, hidden=hidden,
                       eval_every=0, keep_policy_every=0, seed=seed, actors=actors, device=device)
    limit = minutes * 60
    rows: list[dict[str, Any]] = []
    start = time.perf_counter()

    def on_epoch(row: dict[str, Any]) -> None:
        rows.append({**row, "at_seconds": time.perf_counter() - start})
        if write:
            write(summary())
        if rows[-1]["at_seconds"] >= limit:
            raise TimeUp

    def summary() -> dict[str, Any]:
        return _summary(game, algo, device, actors, minutes, games, hidden, limit, rows)

    out = Path(tempfile.mkdtemp(prefix="climbrl-budget-"))
    try:
        train(cfg, out, progress=False, on_epoch=on_epoch)
    except TimeUp:
        pass
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return summary()


def _summary(game: str, algo: str, device: str, actors: int, minutes: float, games: int, hidden: int,
             limit: float, rows: list[dict[str, Any]]) -> dict[str, Any]:
    within = [r for r in rows if r["at_seconds"] <= limit]
    work = sum(r["play_seconds"] + r["update_seconds"] for r in rows)
    decisions = sum(r["decisions"] for r in rows)
    return {"game": game, "algo": algo, "device": device, "actors": actors, "minutes": minutes,
            "games_per_epoch": games, "hidden": hidden,
            "epochs_within": len(within), "decisions_within": sum(r["decisions"] for r in within),
            "epochs_run": len(rows), "decisions_run": decisions, "seconds_run": rows[-1]["at_seconds"] if rows else 0.0,
            "decisions_per_s_overall": decisions / work if work else 0.0,
            "play_seconds": sum(r["play_seconds"] for r in rows),
            "update_seconds": sum(r["update_seconds"] for r in rows),
            "load_after": os.getloadavg()}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--games", default="big2:paper")
    p.add_argument("--algo", default="ppo")
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto (train.device)")
    p.add_argument("--actors", type=int, default=1)
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--games-per-epoch", type=int, default=200)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "budget.json"))
    args = p.parse_args()
    measured = datetime.now(UTC).isoformat(timespec="seconds")

    def write(r: dict[str, Any]) -> None:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps({"measured": measured, "machine": machine(args.device), "rows": [r]},
                                             indent=2) + "\n")

    r = run(args.games, args.algo, args.device, args.actors, args.minutes, args.games_per_epoch, args.hidden,
            args.seed, write)
    write(r)
    print(f"{r['game']} {r['algo']} device={r['device']} actors={r['actors']}: {r['decisions_within']} decisions "
          f"({r['epochs_within']} epochs) within {args.minutes:g} min, {r['decisions_per_s_overall']:.0f} decisions/s "
          f"with the updates", flush=True)


if __name__ == "__main__":
    main()
