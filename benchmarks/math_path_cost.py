"""What a pin of the math libraries' code path would cost on a whole training (issue 32).

    .venv/bin/python benchmarks/math_path_cost.py [--epochs 10] [--games-per-epoch 200]

Trains the same learner with the same seed under each switch that could serve as a cross-vendor pin
(MKL's ``AVX2`` branch, which both vendors' current CPUs can take, and its ``COMPATIBLE`` branch,
which Intel documents as giving the same results on Intel and compatible processors, also with
ATen's scalar kernels), beside the default path, one after the
other on this otherwise idle machine: Big 2's PPO and Dou Dizhu's DQN (the two kinds of learner:
on-policy batches and replay updates) at the study's network size. Writes
``benchmarks/results/math_path_cost.json``: this machine's math path, and per case and switch the wall
and CPU seconds, the ratio to the default and the ``policy.pt`` md5 (which switches change the bits
here). A measurement, never an assertion; the tests do not run it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SWITCHES = [("default", {}), ("mkl-avx2", {"MKL_CBWR": "AVX2"}), ("mkl-compatible", {"MKL_CBWR": "COMPATIBLE"}),
            ("aten-scalar+mkl-compatible", {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"})]
CASES = [("big2/ppo", ["--game", "big2", "--algo", "ppo"]),
         ("doudizhu/dqn", ["--game", "doudizhu", "--rules", "douzero", "--algo", "dqn"])]


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--games-per-epoch", type=int, default=200)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "math_path_cost.json"))
    p.add_argument("--switches", help="comma-separated names to run (default: all); the others' rows are kept "
                   "from --out when it holds a run of the same budget")
    a = p.parse_args()
    names = [n for n, _ in SWITCHES]
    wanted = a.switches.split(",") if a.switches else names
    if unknown := sorted(set(wanted) - set(names)):
        p.error(f"unknown switch {', '.join(unknown)} (known: {', '.join(names)})")
    sys.path.insert(0, str(ROOT))
    from pipeline.regression import math_path

    common = ["--epochs", str(a.epochs), "--games-per-epoch", str(a.games_per_epoch), "--seed", str(a.seed),
              "--eval-every", "0", "--no-progress"]
    res = {"math_path": math_path(), "epochs": a.epochs, "games_per_epoch": a.games_per_epoch, "seed": a.seed,
           "command": "climbrl train CASE " + " ".join(common) + " --out X", "cases": {}}
    before = json.loads(Path(a.out).read_text()) if Path(a.out).exists() else {}
    if a.switches and all(before.get(k) == res[k] for k in ("epochs", "games_per_epoch", "seed", "math_path")):
        res["cases"] = before["cases"]
    with tempfile.TemporaryDirectory() as tmp:
        for case, args in CASES:
            rows = res["cases"].setdefault(case, {"args": " ".join(args)})
            for name, env in SWITCHES:
                if name not in wanted:
                    continue
                out = Path(tmp) / f"{case.replace('/', '-')}-{name}"
                cpu0, t0 = children_cpu(), time.perf_counter()
                subprocess.run([sys.executable, "-m", "climbrl.cli", "train", *args, *common, "--out", str(out)],
                               check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **env})
                rows[name] = {"env": env, "seconds": round(time.perf_counter() - t0, 2),
                              "cpu_seconds": round(children_cpu() - cpu0, 2),
                              "md5": hashlib.md5((out / "policy.pt").read_bytes()).hexdigest()}
                if "default" in rows:
                    rows[name]["ratio"] = round(rows[name]["seconds"] / rows["default"]["seconds"], 3)
                print(f"{case:14s} {name:28s} {rows[name]['seconds']:7.1f} s  x{rows[name].get('ratio', 1):.2f}  "
                      f"{rows[name]['md5']}", flush=True)
                Path(a.out).write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
