"""What a network shape costs per scored move (issue 46: capacity at equal cost). Writes
benchmarks/results/capacity.json.

Run: ``.venv/bin/python benchmarks/capacity.py [--shapes 2x512,4x256,4x256r,6x256r,3x384r]
[--game doudizhu:douzero] [--rows 64,1024] [--precisions fp32,bf16] [--repeats 3]``.

For each shape (``LAYERSxHIDDEN``, ``r``: residual) it builds the action-in network of the game's
encoder (one role's network: the DMC and PPO runs of Dou Dizhu have one per role) and records its
parameters, the multiply-adds it spends per scored move (the first layer's move part and every
``hidden x hidden`` layer: the state part is paid once per decision) and the scored moves per
second of its forward pass on one thread, at each call size (rows per call: the actors' calls
are mostly 256 to 2,000 rows, ``benchmarks/actor_profile.py``) and arithmetic (``bf16``: the
weights in bfloat16, as the actors of ``precision: bf16`` score), each decision with 5.5 moves as
in the actors. Shapes are timed interleaved, ``--repeats`` rounds, and the best round kept (other
work on the machine only slows a round). The CPU's vendor and flags are recorded. Measurements of
this machine at the time of the run, never assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import torch

from climbrl.encoders import make_encoder
from climbrl.learn.network import ActionInNet
from climbrl.provenance import cpu_facts
from climbrl.threads import single_thread

MOVES_PER_DECISION = 5.5


def parse_shape(text: str) -> tuple[int, int, bool]:
    layers, _, hidden = text.rstrip("r").partition("x")
    return int(layers), int(hidden), text.endswith("r")


def build(shape: str, state_dim: int, move_dim: int) -> ActionInNet:
    layers, hidden, residual = parse_shape(shape)
    return ActionInNet(state_dim, move_dim, hidden, generator=torch.Generator().manual_seed(0), layers=layers,
                       residual=residual).eval()


def multiply_adds_per_move(net: ActionInNet) -> int:
    """The first layer's move part, every ``hidden x hidden`` layer and the output, per scored move."""
    h = net.hidden
    return net.move_dim * h + (net.layers - 1) * h * h + h


def moves_per_second(net: torch.nn.Module, rows: int, state_dim: int, move_dim: int, seconds: float = 0.5) -> float:
    decisions = max(1, round(rows / MOVES_PER_DECISION))
    gen = torch.Generator().manual_seed(1)
    dtype = next(net.parameters()).dtype
    states = torch.randn(decisions, state_dim, generator=gen).to(dtype)
    moves = torch.randn(rows, move_dim, generator=gen).to(dtype)
    seg = torch.arange(rows) % decisions
    with torch.no_grad():
        for _ in range(3):
            net(states, moves, seg)
        done, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            net(states, moves, seg)
            done += rows
    return done / (time.perf_counter() - start)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--shapes", default="2x512,4x256,4x256r,6x256r,3x384r")
    p.add_argument("--game", default="doudizhu:douzero")
    p.add_argument("--rows", default="64,1024")
    p.add_argument("--precisions", default="fp32,bf16")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "capacity.json"))
    args = p.parse_args()
    game = args.game.partition(":")[0]
    enc = make_encoder(game, "")
    shapes = args.shapes.split(",")
    nets = {s: build(s, enc.state_dim, enc.move_dim) for s in shapes}
    copies = {(s, prec): (net if prec == "fp32" else build(s, enc.state_dim, enc.move_dim).to(torch.bfloat16))
              for s, net in nets.items() for prec in args.precisions.split(",")}
    best: dict[tuple[str, str, int], float] = {}
    with single_thread():
        for _ in range(args.repeats):
            for (shape, prec), net in copies.items():
                for rows in (int(r) for r in args.rows.split(",")):
                    rate = moves_per_second(net, rows, enc.state_dim, enc.move_dim)
                    best[shape, prec, rows] = max(best.get((shape, prec, rows), 0.0), rate)
    base = shapes[0]
    out_rows = []
    for shape in shapes:
        net = nets[shape]
        row = {"shape": shape, "layers": net.layers, "hidden": net.hidden, "residual": net.residual,
               "parameters": sum(p.numel() for p in net.parameters()),
               "multiply_adds_per_move": multiply_adds_per_move(net),
               "multiply_adds_vs_first": multiply_adds_per_move(net) / multiply_adds_per_move(nets[base]),
               "moves_per_s": {f"{prec}@{rows}": best[shape, prec, rows] for (s, prec, rows) in best if s == shape},
               "speed_vs_first": {f"{prec}@{rows}": best[shape, prec, rows] / best[base, prec, rows]
                                  for (s, prec, rows) in best if s == shape}}
        out_rows.append(row)
        print(f"{shape}: {row['parameters']:,} parameters, {row['multiply_adds_per_move']:,} multiply-adds a move "
              f"(x{row['multiply_adds_vs_first']:.2f}); moves/s "
              + ", ".join(f"{k} {v:,.0f}" for k, v in row["moves_per_s"].items()), flush=True)
    result = {"measured": datetime.now(UTC).isoformat(timespec="seconds"), "cpu": cpu_facts(),
              "torch": torch.__version__, "game": args.game, "repeats": args.repeats,
              "load_average": os.getloadavg(), "rows": out_rows}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
