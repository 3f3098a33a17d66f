"""Fingerprints of a short training of every learner of both studies (issue 29 section 7, issue 32).

A refactor that claims to change no number (the README's "equal tensor by tensor") is held to a
committed fingerprint: for each learner of ``params.yaml`` (the main study and each study under
``studies``), its config cut to a tiny budget (:data:`TINY`) is trained, and the fingerprint is
every numeric metric of every epoch plus, for every tensor of ``policy.pt``, its sum and its sum
of absolute values (float64).

Compared within tolerances, not bit for bit: the math libraries take CPU-dependent code paths
(MKL's branches, ATen's vector kernels), whose last bits differ from one machine to another
(issue 32). Each metric must agree to :data:`RTOL` (relative) or :data:`ATOL`; the tensors, taken
together as one vector of sums, to a relative distance of :data:`TENSOR_RTOL`. Measured on this
machine kind (AMD EPYC, 2026-12-02) with ``python -m tests.golden.training --paths``, which trains
every case under MKL's default, AVX2 and COMPATIBLE branches and ATen's scalar kernels: every
metric equal to 1e-6, tensor distances at most 1.2e-6 (a single bias moves up to 0.8%: Adam's
step does not shrink with a tiny gradient, hence the distance over all tensors rather than each
value). A change of behaviour moves far more: another training seed 1.5e-2 in every case, 1%
more learning rate 3e-4 (DQN) to 6e-6 (PPO, below the tolerance: so small a change is not what
this test is for). On an Intel Xeon with AVX-512 (2026-12-03), ``--paths`` found every path within
the tolerances of that AMD file (its tensors at most 5.9e-7 apart) and none equal to it bit for bit
(at most 331 of its 629 values, the counts among them), so the test compares within tolerances. That
comparison set each switch here against the AMD machine's *default* path; whether a switch gives
both vendors the same bits needs the same switch on both: ``--paths --save`` keeps every switch's
fingerprints in ``paths/VENDOR-CAPABILITY.json`` and compares with the other machines' files kept
there (:func:`compare_vendors`; ``--kept`` compares the kept files with each other). The Intel Xeon's
(2026-12-05) and an AMD EPYC's with AVX-512 (2026-12-06, the same code and configs) are kept: no
switch gives both the same bits (``MKL_CBWR=COMPATIBLE`` comes closest, 417 of 629 values), so the
test keeps comparing within tolerances and the project sets no pin (docs/pipeline.md).

Regenerate after a change that is meant to move numbers: ``python -m tests.golden.training --write``,
or only the cases it moves, keeping the others' values as they were measured:
``python -m tests.golden.training --write --case doudizhu/sarsa``. Issue 30's adoption of SARSA's tuned
config moved that case alone; it was rewritten on the Intel Xeon (2026-12-05), and issue 26's whole-game
study (``doudizhu_auction/*``) was added there the same day; the other cases are the AMD file's.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("training.json")
#: every path's fingerprints, one file per CPU vendor (``--paths --save``)
PATHS_DIR = Path(__file__).with_name("paths")
TINY = {"epochs": 2, "games_per_epoch": 4, "eval_every": 0, "hidden": 32, "keep_policy_every": 0, "actors": 1}
RTOL = 1e-4
ATOL = 1e-6
TENSOR_RTOL = 1e-5
TIMING = ("seconds", "time", "sps", "per_s", "cpu")
#: (name, environment) of the code paths that --paths compares
PATHS = [("default", {}), ("mkl-avx2", {"MKL_CBWR": "AVX2"}), ("mkl-compatible", {"MKL_CBWR": "COMPATIBLE"}),
         ("aten-scalar", {"ATEN_CPU_CAPABILITY": "default"}), ("aten-avx2", {"ATEN_CPU_CAPABILITY": "avx2"}),
         ("aten-avx2+mkl-avx2", {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2"}),
         ("aten-scalar+mkl-compatible", {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE"})]


def cases() -> dict[str, Any]:
    """``study/learner`` -> its TrainConfig at the tiny budget, for every learner of params.yaml."""
    from climbrl.params import load_params

    out = {}
    main = load_params(ROOT / "params.yaml")
    for params in [main, *(load_params(f"{ROOT / 'params.yaml'}#{s}") for s in main.studies)]:
        for name, cfg in params.train.items():
            out[f"{params.study or 'big2'}/{name}"] = dataclasses.replace(cfg, **TINY)
    return out


def fingerprint(cfg: Any, folder: Path) -> dict[str, float]:
    """Train ``cfg`` into ``folder``; its metrics by epoch and its tensors' sums."""
    import torch

    from climbrl.training import train

    res = train(cfg, folder, progress=False)
    fp: dict[str, float] = {}
    for row in res["history"]:
        for k, v in row.items():
            # NaN stands for "no value" (a replay learner's loss before its buffer fills): left out,
            # so that a value appearing or vanishing shows as a key on one side only
            if isinstance(v, (int, float)) and not isinstance(v, bool) and not any(t in k for t in TIMING) \
                    and not math.isnan(v):
                fp[f"epoch{row.get('epoch')}/{k}"] = float(v)
    from climbrl.learn.checkpoint import load

    def tensors(obj: Any, prefix: str) -> None:
        if isinstance(obj, torch.Tensor) and obj.is_floating_point():
            fp[f"{prefix}/sum"] = float(obj.double().sum())
            fp[f"{prefix}/abs"] = float(obj.double().abs().sum())
        elif isinstance(obj, dict):
            for k in sorted(obj):
                tensors(obj[k], f"{prefix}.{k}" if prefix else str(k))

    tensors(load(folder / "policy.pt")["net"], "")
    return fp


def all_fingerprints() -> dict[str, dict[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        return {name: fingerprint(cfg, Path(tmp) / name.replace("/", "-")) for name, cfg in cases().items()}


def tensor_distance(x: dict[str, float], y: dict[str, float]) -> float:
    """Relative Euclidean distance of the tensors' sums of ``x`` and ``y`` (their common keys)."""
    keys = [k for k in x if not k.startswith("epoch") and k in y]
    norm = math.sqrt(sum(x[k] ** 2 for k in keys)) or 1.0
    return math.sqrt(sum((x[k] - y[k]) ** 2 for k in keys)) / norm


def differences(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]]) -> list[str]:
    """Every metric of ``a`` and ``b`` outside the tolerance, every case whose tensors moved
    beyond :data:`TENSOR_RTOL`, and keys on one side only."""
    bad = []
    for case in sorted(set(a) | set(b)):
        x, y = a.get(case, {}), b.get(case, {})
        for k in sorted(set(x) | set(y)):
            if k not in x or k not in y:
                bad.append(f"{case} {k}: only on one side")
            elif k.startswith("epoch") and not math.isclose(x[k], y[k], rel_tol=RTOL, abs_tol=ATOL):
                bad.append(f"{case} {k}: {x[k]!r} != {y[k]!r}")
        if x and y and tensor_distance(x, y) > TENSOR_RTOL:
            bad.append(f"{case}: the tensors moved by {tensor_distance(x, y):.2e} (relative)")
    return bad


def largest_relative(a: dict[str, dict[str, float]], b: dict[str, dict[str, float]]) -> tuple[float, str]:
    """The largest relative difference of a value beyond ATOL, and where."""
    worst, where = 0.0, ""
    for case in a:
        for k, v in a[case].items():
            w = b[case][k]
            if abs(v - w) > ATOL and abs(v - w) / max(abs(v), abs(w)) > worst:
                worst, where = abs(v - w) / max(abs(v), abs(w)), f"{case} {k}: {v!r} / {w!r}"
    return worst, where


def committed_equality(golden: dict[str, dict[str, float]], run: dict[str, dict[str, float]]) -> tuple[int, int, float]:
    """(values of ``run`` equal to the committed ``golden`` bit for bit, values of ``golden``, the largest
    tensor distance of a case): whether this machine's path gives the bits of the machine that wrote
    the golden file (issue 32's cross-vendor question), not just values within the tolerance."""
    same = sum(1 for c in golden for k, v in golden[c].items() if run.get(c, {}).get(k) == v)
    total = sum(len(x) for x in golden.values())
    return same, total, max(tensor_distance(golden[c], run.get(c, {})) for c in golden)


def this_machine() -> str:
    """This machine's name among the kept paths: its CPU vendor and ATen's capability
    (``GenuineIntel-AVX512``), as :func:`pipeline.regression.math_path` reads them."""
    from pipeline.regression import math_path

    mp = math_path()
    return f"{mp['cpu_vendor']}-{mp['aten_capability']}"


def cases_hash() -> str:
    """A hash of every case's config: kept paths are compared only when made from the same configs."""
    import hashlib

    return hashlib.sha256(json.dumps({k: dataclasses.asdict(v) for k, v in sorted(cases().items())},
                                     sort_keys=True, default=str).encode()).hexdigest()[:16]


def save_paths(runs: dict[str, dict[str, dict[str, float]]]) -> Path:
    """Keep this machine's fingerprints under every path of :data:`PATHS` (``--paths --save``), so that
    a machine of another vendor compares like with like: the same switch on both (:func:`compare_vendors`)."""
    from pipeline.regression import math_path

    PATHS_DIR.mkdir(exist_ok=True)
    out = PATHS_DIR / f"{this_machine()}.json"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    out.write_text(json.dumps({"math_path": {k: v for k, v in math_path().items() if k not in ("mkl_cbwr",
                                                                                               "aten_cpu_capability")},
                               "commit": commit.stdout.strip(), "cases_hash": cases_hash(),
                               "paths": runs}, indent=1, sort_keys=True) + "\n")
    return out


def compare_vendors(runs: dict[str, dict[str, dict[str, float]]], machine: str, configs: str | None = None) -> str:
    """For each path run here, how many of its values equal bit for bit those that the same path gave
    on each other machine kept (``paths/VENDOR-CAPABILITY.json``): a path equal on machines of both
    vendors is a pin that gives the same numbers across vendors (issue 32). ``configs``: this run's
    :func:`cases_hash`; a kept file made from other configs is named as not comparable. Lines of
    text; says so when no other machine is kept."""
    lines = []
    for f in sorted(PATHS_DIR.glob("*.json")) if PATHS_DIR.is_dir() else []:
        if f.stem == machine:
            continue
        other = json.loads(f.read_text())
        if configs is not None and other.get("cases_hash") != configs:
            lines.append(f"against {f.stem}: not comparable, made from other case configs (commit "
                         f"{other.get('commit', '?')}; params.yaml or the tiny budget changed since): run "
                         "--paths --save there again")
            continue
        lines += switch_by_switch(runs, other, f.stem)
    return "\n".join(lines) or f"no other machine's paths kept in {PATHS_DIR} (run --paths --save on one)"


def switch_by_switch(runs: dict[str, dict[str, dict[str, float]]], other: dict[str, Any], name: str) -> list[str]:
    """Lines: for each path of ``runs``, how many of its values equal those of the same path in the
    kept file ``other`` (named ``name``)."""
    lines = [f"against {name} (torch {other['math_path'].get('torch')}, commit {other.get('commit', '?')}), "
             "the same switch on both:"]
    for path, run in runs.items():
        if path not in other["paths"]:
            lines.append(f"  {path}: not measured there")
            continue
        same, total, dist = committed_equality(other["paths"][path], run)
        verdict = "EQUAL bit for bit" if run == other["paths"][path] else "differs"
        lines.append(f"  {path}: {same} of {total} values equal, tensors at most {dist:.1e} apart: {verdict}")
    return lines


def compare_kept() -> str:
    """Every pair of the kept machines' files made from the same case configs, switch by switch
    (``--kept``: what the kept files say without training anything)."""
    kept = [(f.stem, json.loads(f.read_text())) for f in sorted(PATHS_DIR.glob("*.json"))] if PATHS_DIR.is_dir() else []
    lines = []
    for i, (name, data) in enumerate(kept):
        for other_name, other in kept[i + 1:]:
            if data.get("cases_hash") != other.get("cases_hash"):
                lines.append(f"{name} and {other_name}: not comparable, made from other case configs")
                continue
            lines.append(f"{name} (commit {data.get('commit', '?')})")
            lines += switch_by_switch(data["paths"], other, other_name)
    return "\n".join(lines) or f"fewer than two machines' paths kept in {PATHS_DIR}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--write", action="store_true", help=f"write {GOLDEN.name}")
    p.add_argument("--paths", action="store_true", help="compare the code paths of this machine")
    p.add_argument("--save", action="store_true",
                   help=f"with --paths: keep every path's fingerprints in {PATHS_DIR.name}/VENDOR-CAPABILITY.json")
    p.add_argument("--kept", action="store_true",
                   help=f"compare the machines kept in {PATHS_DIR.name}/ with each other (trains nothing)")
    p.add_argument("--case", action="append", metavar="STUDY/LEARNER",
                   help="with --write: rewrite only this case (repeatable); the others keep their committed values")
    p.add_argument("--json", help=argparse.SUPPRESS)  # one path's fingerprints to this file (for --paths)
    a = p.parse_args()
    if a.case and not a.write:
        p.error("--case goes with --write")
    if a.save and not a.paths:
        p.error("--save goes with --paths")
    if a.kept:
        print(compare_kept())
    elif a.json:
        Path(a.json).write_text(json.dumps(all_fingerprints()))
    elif a.paths:
        runs = {}
        with tempfile.TemporaryDirectory() as tmp:
            for name, env in PATHS:
                f = Path(os.environ.get("CLIMBRL_GOLDEN_PATHS", tmp)) / f"{name}.json"
                subprocess.run([sys.executable, "-m", "tests.golden.training", "--json", str(f)], cwd=ROOT,
                               env={**os.environ, **env}, check=True)
                runs[name] = json.loads(f.read_text())
        golden = json.loads(GOLDEN.read_text())
        for name in runs:
            worst, where = largest_relative(runs["default"], runs[name])
            print(f"{name}: largest relative difference from default {worst:.2e} ({where})")
            same, total, dist = committed_equality(golden, runs[name])
            print(f"  against the committed {GOLDEN.name}: {same} of {total} values equal bit for bit, the tensors "
                  f"at most {dist:.1e} apart (relative)")
        print(compare_vendors(runs, this_machine(), cases_hash()))
        if a.save:
            out = save_paths(runs)
            print(f"wrote {out}")
    elif a.write:
        if a.case:
            known = cases()
            unknown = sorted(set(a.case) - set(known))
            if unknown:
                p.error(f"no such case {', '.join(unknown)} (known: {', '.join(sorted(known))})")
            golden = json.loads(GOLDEN.read_text())
            new = sorted(set(known) - set(golden) - set(a.case))
            if new:
                p.error(f"{', '.join(new)}: in params.yaml but not in {GOLDEN.name}: name them with --case too")
            with tempfile.TemporaryDirectory() as tmp:
                for name in a.case:
                    golden[name] = fingerprint(known[name], Path(tmp) / name.replace("/", "-"))
            # cases no longer in params.yaml go; the test requires the file to cover exactly them
            golden = {k: v for k, v in golden.items() if k in known}
        else:
            golden = all_fingerprints()
        GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
        print(f"wrote {GOLDEN}" + (f" ({', '.join(a.case)})" if a.case else ""))


if __name__ == "__main__":
    main()
