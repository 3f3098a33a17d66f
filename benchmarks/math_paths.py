"""Issue 32's cross-machine check: the issue's short PPO training at its commit, under each switch of
the math libraries' code paths, its ``policy.pt`` hash against the hashes the issue measured on an
Intel Xeon with AVX-512.

Run: ``.venv/bin/python benchmarks/math_paths.py [--commit aa357c4]``, in a git checkout (the commit is
checked out into a temporary worktree and run with this checkout's ``.venv``). Writes
``benchmarks/results/math_paths.json`` (this machine's math path, every switch's hash and seconds, and
whether it equals the issue's) and prints a table. Measurements, never assertions: on another vendor's
CPU the hashes are expected to differ (the golden test's ``python -m tests.golden.training --paths``
shows by how much).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ["train", "--algo", "ppo", "--epochs", "4", "--games-per-epoch", "100", "--seed", "3", "--eval-every", "0",
           "--no-progress"]
#: (switch, environment, the policy.pt md5 issue 32 measured at aa357c4 on an Intel Xeon with AVX-512)
SWITCHES = [("default", {}, "243cbea3051a80474037c0ab9507a9b8"),
            ("ATEN_CPU_CAPABILITY=avx2", {"ATEN_CPU_CAPABILITY": "avx2"}, "243cbea3051a80474037c0ab9507a9b8"),
            ("MKL_ENABLE_INSTRUCTIONS=AVX2", {"MKL_ENABLE_INSTRUCTIONS": "AVX2"}, "796431a2b2ba90ab1c4f09454a62f7f4"),
            ("MKL_CBWR=AVX2", {"MKL_CBWR": "AVX2"}, "796431a2b2ba90ab1c4f09454a62f7f4"),
            ("MKL_CBWR=COMPATIBLE", {"MKL_CBWR": "COMPATIBLE"}, "e7233c770ebfbc289ad4c493b77b2a04")]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--commit", default="aa357c4", help="the commit whose training is hashed (the issue's: aa357c4)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "math_paths.json"))
    args = p.parse_args()
    sys.path.insert(0, str(ROOT))
    from pipeline.regression import math_path

    results = {"commit": args.commit, "command": "climbrl " + " ".join(COMMAND) + " --out X",
               "math_path": math_path(), "switches": {}}
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), args.commit], cwd=ROOT, check=True)
        try:
            for name, env, issue in SWITCHES:
                out = Path(tmp) / name.replace("=", "-")
                started = time.perf_counter()
                subprocess.run([sys.executable, "-m", "climbrl.cli", *COMMAND, "--out", str(out)], check=True,
                               env={**os.environ, "PYTHONPATH": str(tree / "src"), **env}, stdout=subprocess.DEVNULL)
                md5 = hashlib.md5((out / "policy.pt").read_bytes()).hexdigest()
                results["switches"][name] = {"md5": md5, "seconds": time.perf_counter() - started,
                                             "issue_intel_md5": issue if args.commit == "aa357c4" else None,
                                             "equal_to_issue": md5 == issue if args.commit == "aa357c4" else None}
                print(f"{name:30s} {md5} {results['switches'][name]['seconds']:5.1f} s"
                      + (f"  {'equal to' if md5 == issue else 'differs from'} the issue's Intel hash"
                         if args.commit == "aa357c4" else ""), flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
