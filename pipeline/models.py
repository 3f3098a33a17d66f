"""The trained policies the repository ships (issue 25): ``models/RUN/policy.pt``, so that a fresh
clone evaluates and plays them without training (``checkpoint:models/RUN/policy.pt`` anywhere an
agent is named; ``climbrl serve`` lists them).

``python -m pipeline.models ship RUN`` copies ``make strong``'s final policy of the run
(``runs/strong/RUN/policy.pt``, a weights-only checkpoint: :func:`climbrl.learn.checkpoint.load`
reads it with ``weights_only=True``) to ``models/RUN/`` and writes ``models/RUN/model.json`` beside
it: the file's SHA-256 and size, the run's settings as ``strong/params.yaml`` (or
``strong/long/params.yaml``: :data:`SOURCES`) holds them, the command that made it, and its final
evaluation as ``reports/strong/RUN/final.json`` (``reports/strong/long/RUN/`` for a long run)
holds it (win rates with their intervals and sample sizes, on the study's versioned evaluation
decks); the run's learning curve goes beside it as
``curve.json``, so that a run continuing the policy (``make strong-long``) starts from both without
retraining. ``tests/test_models.py`` holds every shipped file to its manifest and the manifest to
the params.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any, NamedTuple

import pipeline  # noqa: F401  (environment defaults)
from climbrl.track import sha256_file
from pipeline import params_io

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"


SOURCES = (("strong/params.yaml", "reports/strong", "make strong", ""),
           ("strong/long/params.yaml", "reports/strong/long", "make strong-long",
            " --params strong/long/params.yaml"))
"""Where a run can come from: its params file, its reports folder, the make target and the extra
arguments of its ``python -m pipeline.strong`` steps."""


class RunSource(NamedTuple):
    """Where a run of :data:`SOURCES` comes from."""

    spec: dict[str, Any]
    """its ``games`` entry in its params file"""
    reports: Path
    target: str
    """the make target that runs it"""
    command: str
    """the make target and the stage's own command"""


def source(run: str, root: Path = ROOT) -> RunSource:
    """Where the run comes from; ``ValueError`` naming every params file when no file has it."""
    from pipeline.strong import load_strong_params

    names = []
    for params_file, reports, target, extra in SOURCES:
        if not (root / params_file).exists():
            continue
        params = load_strong_params(root / params_file)
        if run in params:
            return RunSource(params[run], root / reports, target,
                             f"{target} (the stage train@{run}: python -m pipeline.strong train {run}{extra})")
        names += params
    raise ValueError(f"no run {run!r} in {' or '.join(f for f, *_ in SOURCES)} (runs: {', '.join(names)})")


def manifest(run: str, policy: Path, root: Path = ROOT) -> dict[str, Any]:
    """What ``model.json`` says of the run's shipped policy."""
    src = source(run, root)
    final_path = src.reports / run / "final.json"
    if not final_path.exists():
        raise FileNotFoundError(f"{final_path.relative_to(root)} missing: run {src.target} (final@{run}) first")
    final = json.loads(final_path.read_text())
    return {"run": run, "game": final["game"], "rules": final["rules"], "algo": final["algo"],
            "file": "policy.pt", "sha256": sha256_file(policy), "bytes": policy.stat().st_size,
            "settings": {k: v for k, v in src.spec.items() if k in ("imitate", "continue", "train")},
            "command": src.command,
            "final": {"deal_set": final["deal_set"], "deals": final["deals"], "matches": final["matches"]}}


def ship(run: str, root: Path = ROOT) -> Path:
    """Copy the run's final policy into ``models/RUN`` with its manifest; returns the manifest's path."""
    policy = root / "runs" / "strong" / run / "policy.pt"
    if not policy.exists():
        raise FileNotFoundError(f"{policy.relative_to(root)} missing: train the run first (train@{run}, make strong "
                                "or make strong-long)")
    info = manifest(run, policy, root)  # checked before anything is written
    reports = source(run, root).reports
    out = root / "models" / run
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(policy, out / "policy.pt")
    if sha256_file(out / "policy.pt") != info["sha256"]:
        raise OSError(f"{out / 'policy.pt'}: the copy differs from {policy}")
    curve = reports / run / "curve.json"
    if curve.exists():  # the curve the policy ends: a run that continues it starts from both (strong/long)
        shutil.copyfile(curve, out / "curve.json")
    (out / "model.json").write_text(json.dumps(info, indent=2) + "\n")
    return out / "model.json"


@params_io.command("python -m pipeline.models")
def main(argv: list[str] | None = None) -> int:
    p = params_io.ArgumentParser(prog="python -m pipeline.models")
    p.add_argument("step", choices=("ship",))
    p.add_argument("run", help="a run of strong/params.yaml whose final policy exists (e.g. doudizhu-warm)")
    args = p.parse_args(argv)
    try:
        print(ship(args.run))
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
