"""CI's win-rate regression gates: a short training and evaluation on fixed seeds, compared with
the results committed in ``ci/regression_band.yaml`` (Big 2: PPO, the paper rules) and
``ci/regression_band_doudizhu.yaml`` (Dou Dizhu: PPO, the ``douzero`` rules) and
``ci/regression_band_auction.yaml`` (Dou Dizhu's whole game: PPO with a learned bid model, the
``standard`` rules and their auction, judged from every seat).

The training and the evaluation are deterministic on their seeds, so a gate catches every change
of behaviour, not only a collapse:

- **exact**: on a math path the expected results were measured on (CPU vendor, ATen's CPU
  capability, the torch and numpy versions, MKL_CBWR and ATEN_CPU_CAPABILITY: :func:`math_path`),
  every opponent's win count must equal the one committed for that path. A file holds its first
  measurement (``expected``, ``math_path``) and, under ``other_paths``, the same code measured on
  other paths (``--write --add-path`` on such a machine): the project's machines are of more than
  one CPU vendor, and on another path a short training is another trajectory (issue 32 saw one
  gate's count against greedy move from 219 to 294 of 600 between an AMD and an Intel machine);
- **band**: on a path with no measurement, the gate is two-sided and statistical around the first
  measurement: a result fails when the 99% Newcombe interval of its difference from the committed
  win rate excludes 0 (either way: an unexplained gain is a change of behaviour too). It holds the
  evaluation's noise, not a new trajectory's: measure the path when it fails there with code that
  has not changed.

A change that is meant to move the results (anything the training or evaluation computes: a
learner, the encoder, the network, the rules, the seeds or the order of random draws) rewrites them
with ``python -m pipeline.regression --band FILE --write`` (which drops the other paths'
measurements: they were of the old code) and commits the file with the change;
a change that is not (reports, CLI, pipeline plumbing) must leave them equal.
``python -m pipeline.regression [--band FILE]`` runs one gate (exit 1 on failure).

The game is the band file's (``train.game``, default big2), never ``params.yaml``'s. Under a
fixed landlord (Dou Dizhu) the evaluation is DouZero's duel (:mod:`climbrl.evaluate.duel`: each
deal with the learner as landlord against two copies of the opponent, then as both peasants), and
the gated win rate is over both roles. Deals are drawn for the purpose ``regression``.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from pipeline import params_io

BAND = Path(__file__).resolve().parents[1] / "ci" / "regression_band.yaml"
DDZ_BAND = BAND.with_name("regression_band_doudizhu.yaml")
GAME = "big2"
"""The game of a band file that names none."""
ALPHA = 0.01
"""The band's two-sided level off the recorded math path."""
PURPOSE = "regression"
MATH_ENV = ("MKL_CBWR", "ATEN_CPU_CAPABILITY")


def load_band(path: Path = BAND) -> dict[str, Any]:
    """A band file: ``train`` (the training's params), ``evaluate`` (games, seed, workers),
    ``opponents`` and, once measured, ``expected`` ({opponent: {wins, games}}) with the
    ``math_path`` it was measured on. ``ValueError`` naming the file on anything else."""
    data = params_io.read(path)
    if not isinstance(data, dict) or not {"train", "evaluate", "opponents"} <= set(data):
        raise ValueError(f"{path}: expected 'train', 'evaluate' and 'opponents' sections")
    if not isinstance(data["opponents"], list) or not data["opponents"]:
        raise ValueError(f"{path}: 'opponents' must be a non-empty list")
    others = data.get("other_paths") or []
    if not isinstance(others, list) or not all(isinstance(o, dict) and set(o) == {"expected", "math_path"}
                                               for o in others):
        raise ValueError(f"{path}: other_paths must be a list of {{expected, math_path}}")
    for where, expected in [("expected", data.get("expected")), *((f"other_paths[{i}].expected", o["expected"])
                                                                  for i, o in enumerate(others))]:
        for opp, e in (expected or {}).items():
            if (opp not in data["opponents"] or not isinstance(e, dict)
                    or not all(isinstance(e.get(k), int) for k in ("wins", "games"))
                    or not 0 <= e["wins"] <= e["games"]):
                raise ValueError(f"{path}: {where}.{opp} must be an opponent's {{wins, games}} with "
                                 "0 <= wins <= games")
    return data


def measurements(spec: dict[str, Any]) -> list[tuple[dict[str, str] | None, dict[str, Any]]]:
    """Every (math path, expected results) of a band file, the first measurement first."""
    return [(spec.get("math_path"), spec.get("expected") or {}),
            *((o["math_path"], o["expected"]) for o in spec.get("other_paths") or [])]


def math_path() -> dict[str, str]:
    """What picks the floating-point kernels on this machine: the CPU vendor, ATen's CPU
    capability, the torch and numpy versions and the environment switches of MKL and ATen."""
    import numpy as np
    import torch

    vendor = platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("vendor_id"):
                vendor = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu_vendor": vendor, "aten_capability": str(torch.backends.cpu.get_cpu_capability()),
            "torch": str(torch.__version__), "numpy": str(np.__version__),
            **{k.lower(): os.environ.get(k, "") for k in MATH_ENV}}


def evaluate_agent(agent: str, spec: dict[str, Any]) -> dict[str, dict[str, float]]:
    """The agent's win rate (with its 95% interval and games) against each opponent of ``spec``
    (:func:`climbrl.evaluate.versus.versus`; over both roles under DouZero's protocol)."""
    from climbrl.evaluate.versus import versus
    from climbrl.games.registry import DEFAULT_PRESETS, num_players

    ev = spec["evaluate"]
    game = spec["train"].get("game", GAME)
    rules = spec["train"].get("rules", DEFAULT_PRESETS[game])
    out = {}
    for opp in spec["opponents"]:
        r = versus(agent, opp, game, rules, deals=ev["games"] // num_players(game), seed=ev["seed"],
                   workers=ev.get("workers", 1), purpose=PURPOSE)
        out[opp] = r.get("both", r.get("all"))
    return out


def train_and_evaluate(spec: dict[str, Any], out_dir: Path) -> dict[str, dict[str, float]]:
    import shutil

    from climbrl.config import train_config
    from climbrl.training import train

    values = dict(spec["train"])
    cfg = train_config(values.pop("algo"), game=values.pop("game", GAME), eval_every=0, **values)
    shutil.rmtree(out_dir, ignore_errors=True)
    train(cfg, out_dir, progress=False)
    return evaluate_agent(f"checkpoint:{out_dir / 'policy.pt'}", spec)


def wins(result: dict[str, float]) -> int:
    """The win count behind a result's win rate (its games are whole games)."""
    return round(result["win_rate"] * result["games"])


def gate(results: dict[str, dict[str, float]], spec: dict[str, Any], path: dict[str, str] | None = None,
         alpha: float = ALPHA) -> list[str]:
    """The failures of ``results`` against the committed results: exact win counts on a recorded
    math path (``path``, default this machine's; against that path's measurement), a two-sided band
    around the first measurement elsewhere."""
    from scipy.stats import norm

    from climbrl.evaluate.stats import newcombe_interval

    path = path if path is not None else math_path()
    known = [e for p, e in measurements(spec) if p == path]
    exact = bool(known)
    expected = known[0] if known else spec.get("expected") or {}
    missing = [o for o in spec["opponents"] if o not in expected]
    if missing:
        return [f"no expected result for {', '.join(missing)}: measure them with --write"]
    failures = []
    for opp in spec["opponents"]:
        r, e = results[opp], expected[opp]
        w = wins(r)
        said = f"vs {opp}: {w}/{r['games']} wins ({r['win_rate']:.3f}), committed {e['wins']}/{e['games']}"
        if r["games"] != e["games"]:
            failures.append(f"{said}: another number of games")
        elif exact and w != e["wins"]:
            failures.append(f"{said}: the behaviour changed on the math path it was measured on")
        elif not exact:
            _, low, high = newcombe_interval(w, r["games"], e["wins"], e["games"], z=float(norm.ppf(1 - alpha / 2)))
            if not low <= 0 <= high:
                failures.append(f"{said}: the difference's {1 - alpha:.0%} interval [{low:+.3f}, {high:+.3f}] "
                                "excludes 0")
    return failures


def write_expected(band_file: Path, spec: dict[str, Any], results: dict[str, dict[str, float]],
                   add_path: bool = False) -> None:
    """Rewrite ``band_file`` with ``results`` as the expected ones, measured on this math path
    (the file's leading comment lines are kept): the only measurement, or with ``add_path`` this
    path's beside the others (the same code measured on another machine; replaces this path's)."""
    text = Path(band_file).read_text()
    header = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    body = {k: v for k, v in spec.items() if k not in ("expected", "math_path", "other_paths")}
    mine = {"expected": {o: {"wins": wins(results[o]), "games": int(results[o]["games"])} for o in spec["opponents"]},
            "math_path": math_path()}
    kept = [{"expected": e, "math_path": p} for p, e in measurements(spec) if p != mine["math_path"] and e] \
        if add_path else []
    first, *others = [*kept, mine] if kept and spec.get("math_path") != mine["math_path"] else [mine, *kept]
    body.update(first)
    if others:
        body["other_paths"] = others
    Path(band_file).write_text("\n".join(header) + "\n" + yaml.safe_dump(body, sort_keys=False))


@params_io.command("python -m pipeline.regression")
def main(argv: list[str] | None = None) -> int:
    p = params_io.ArgumentParser(prog="python -m pipeline.regression")
    p.add_argument("--band", default=str(BAND), help="the gate's file (default %(default)s)")
    p.add_argument("--out", default="runs/regression")
    p.add_argument("--agent", help="evaluate this agent instead of training (e.g. random: must fail)")
    p.add_argument("--write", action="store_true", help="record the results as the expected ones (after a "
                                                            "change meant to move them; drops other paths')")
    p.add_argument("--add-path", action="store_true", help="with --write: add this math path's results beside "
                   "the other paths' (the same code, measured on another machine)")
    args = p.parse_args(argv)
    spec = load_band(Path(args.band))
    start = time.perf_counter()
    results = evaluate_agent(args.agent, spec) if args.agent else train_and_evaluate(spec, Path(args.out))
    game = spec["train"].get("game", GAME)
    path = math_path()
    mine = [e for p, e in measurements(spec) if p == path]  # this path's committed counts, else the first's
    committed = mine[0] if mine else spec.get("expected") or {}
    for opp, r in results.items():
        e = committed.get(opp)
        print(f"regression ({game}): vs {opp}: {wins(r)}/{r['games']} = {r['win_rate']:.3f} "
              f"[{r['win_rate_low']:.3f}, {r['win_rate_high']:.3f}]"
              + (f", committed {e['wins']}/{e['games']}" + ("" if mine else " (another math path)") if e else ""))
    if args.write:
        if args.agent:
            raise ValueError("--write records a training's results, not --agent's")
        write_expected(Path(args.band), spec, results, add_path=args.add_path)
        print(f"wrote the expected results to {args.band}")
        return 0
    failures = gate(results, spec, path=path)
    mode = "exact" if any(p == path for p, _ in measurements(spec)) else f"two-sided band at {1 - ALPHA:.0%}"
    print(json.dumps({"seconds": round(time.perf_counter() - start, 1), "mode": mode, "failures": failures}))
    if failures:
        print("REGRESSION GATE FAILED (a change meant to move the results rewrites them: --write):\n  "
              + "\n  ".join(failures), file=sys.stderr)
        return 1
    print(f"regression gate passed ({mode})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
