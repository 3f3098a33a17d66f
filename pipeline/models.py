"""The trained policies the repository ships (issue 25): ``models/RUN/policy.pt``, so that a fresh
clone evaluates and plays them without training (``checkpoint:models/RUN/policy.pt`` anywhere an
agent is named; ``climbrl serve`` lists them).

``python -m pipeline.models ship RUN`` copies ``make strong``'s final policy of the run
(``runs/strong/RUN/policy.pt``, a weights-only checkpoint: :func:`climbrl.learn.checkpoint.load`
reads it with ``weights_only=True``) to ``models/RUN/`` and writes ``models/RUN/model.json`` beside
it: the file's SHA-256 and size, the run's settings as ``strong/params.yaml`` holds them, the command
that made it, and its final evaluation as ``reports/strong/RUN/final.json`` holds it (win rates with
their intervals and sample sizes, on the study's versioned evaluation decks). ``tests/test_models.py``
holds every shipped file to its manifest and the manifest to the params.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pipeline  # noqa: F401  (environment defaults)
from climbrl.track import sha256_file

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "models"


def manifest(run: str, policy: Path, root: Path = ROOT) -> dict[str, Any]:
    """What ``model.json`` says of the run's shipped policy."""
    from pipeline.strong import load_strong_params

    params = load_strong_params(root / "strong" / "params.yaml")
    if run not in params:
        raise ValueError(f"strong/params.yaml has no run {run!r} (runs: {', '.join(params)})")
    final_path = root / "reports" / "strong" / run / "final.json"
    if not final_path.exists():
        raise FileNotFoundError(f"{final_path.relative_to(root)} missing: run make strong (final@{run}) first")
    final = json.loads(final_path.read_text())
    return {"run": run, "game": final["game"], "rules": final["rules"], "algo": final["algo"],
            "file": "policy.pt", "sha256": sha256_file(policy), "bytes": policy.stat().st_size,
            "settings": {k: v for k, v in params[run].items() if k in ("imitate", "train")},
            "command": f"make strong (the stage train@{run}: python -m pipeline.strong train {run})",
            "final": {"deal_set": final["deal_set"], "deals": final["deals"], "matches": final["matches"]}}


def ship(run: str, root: Path = ROOT) -> Path:
    """Copy the run's final policy into ``models/RUN`` with its manifest; returns the manifest's path."""
    source = root / "runs" / "strong" / run / "policy.pt"
    if not source.exists():
        raise FileNotFoundError(f"{source.relative_to(root)} missing: run make strong (train@{run}) first")
    info = manifest(run, source, root)  # checked before anything is written
    out = root / "models" / run
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, out / "policy.pt")
    if sha256_file(out / "policy.pt") != info["sha256"]:
        raise OSError(f"{out / 'policy.pt'}: the copy differs from {source}")
    (out / "model.json").write_text(json.dumps(info, indent=2) + "\n")
    return out / "model.json"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m pipeline.models")
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
