"""Strong runs trained in legs across sessions and machines (issue 46): ``make leg RUN=NAME HOURS=H``.

A machine of this project has two cores and a session lasts hours, while a strong run needs tens
of CPU-hours. A *live* run is declared in ``strong/legs/params.yaml`` (the strong pipeline's
format: :func:`pipeline.strong.load_strong_params`) and its resumable state lives in git, in
``strong/legs/state/NAME/``: ``checkpoint.pt`` (weights, optimizer, curriculum, RNG, history),
``policy.pt``, ``metrics.csv`` and the ledger ``legs.json`` (:mod:`climbrl.learn.legs`), one state
per run, overwritten by each leg (git keeps the earlier ones). Its kept policies
(``snapshots/``) are not committed: the curve measures them once and keeps the points.

- ``run NAME --hours H``: resume the state (or start it), train until the time limit (the leg
  stops after a whole epoch, its files written), then measure the new curve points and write the
  report. Commit ``strong/legs/`` afterwards.
- ``curve NAME``: the kept policies not yet on the curve against the curve's opponents, on the
  same fresh deals (``curve.json`` beside the state: the points measured before are kept while
  the run is the same run, that is while its ledger's first leg is the same).
- ``report``: ``reports/strong/legs/report.md``: each run's ledger (date, commit, CPU, epochs,
  CPU-hours of every leg) and its curve against the CPU-hours of every leg.

The curve's x axis counts every CPU second of every leg (the history's ``cpu_seconds``: the
training process's and its actors'), also those of a leg killed outright (its finished epochs).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from pipeline import params_io
from pipeline.strong import StrongError, config, cpu_seconds, load_strong_params, tracking_of, train_game

ROOT = Path(__file__).resolve().parents[1]
PARAMS = ROOT / "strong" / "legs" / "params.yaml"
STATE = Path("strong/legs/state")
REPORTS = Path("reports/strong/legs")
CURVE = "curve.json"
HOURS_MAX = 24.0
"""The longest leg a command may ask for: a session is hours long, and a leg must end in it."""


def lineage(out: Path) -> str:
    """Which run the folder holds: its ledger's first leg (when it started, from which commit).
    A run moved aside and started again gets another, so its old curve points are not reused."""
    from climbrl.learn.legs import read_legs

    legs = read_legs(out)
    return f"{legs[0]['started']}@{legs[0]['commit']}" if legs else "none"


def run_leg(name: str, params: dict[str, dict[str, Any]], hours: float, state: Path = STATE,
            tracking: dict[str, str] | None = None, workers: int = 2) -> dict[str, Any]:
    """Train one leg of the run ``name`` (at most ``hours`` of wall time), then its curve."""
    res = train_game(name, params, runs=state, track=tracking is not None, tracking=tracking,
                     time_limit=hours * 3600)
    print(f"leg of {name}: {res['stopped']} after epoch {res['epochs_done']} of {res['epochs']} "
          f"({res['legs']} legs so far)", flush=True)
    curve(name, params, state, workers)
    return res


def curve(name: str, params: dict[str, dict[str, Any]], state: Path = STATE, workers: int = 2) -> dict[str, Any]:
    """The run's curve: its kept policies (and its last policy) against the curve's opponents, the
    points measured before kept while the run is the same (:func:`lineage`) and the deals too."""
    from climbrl.evaluate.versus import versus
    from climbrl.learn import checkpoint as ckpt
    from climbrl.learn.train import CHECKPOINT, POLICY, SNAPSHOTS

    spec, out = params[name], state / name
    if not (out / CHECKPOINT).exists():
        raise FileNotFoundError(f"no state in {out}: run python -m pipeline.legs run {name} first")
    cfg = config(spec, name, state)
    history = ckpt.load(out / CHECKPOINT)["history"]
    spent = cpu_seconds(history)
    match = {"deals": spec["curve"]["deals"], "seed": spec["curve"]["seed"],
             "opponents": list(spec["curve"]["opponents"])}
    before = spent_before(spec)
    path = out / CURVE
    old = json.loads(path.read_text()) if path.exists() else {}
    same = old.get("lineage") == lineage(out) and old.get("match") == match
    points = {int(p["epoch"]): p for p in old.get("points", [])} if same else {}
    policies = {int(p.stem[5:]): p for p in out.glob(f"{SNAPSHOTS}/epoch*.pt")}
    policies.setdefault(len(history), out / POLICY)
    if cfg.init_policy:
        policies[0] = Path(cfg.init_policy)  # where the run started
    for epoch in sorted(e for e in policies if e not in points and e <= len(history)):
        row: dict[str, Any] = {"epoch": epoch, "games": sum(r["games"] for r in history[:epoch]),
                               "cpu_hours": before + (spent[epoch - 1] if epoch else 0.0) / 3600}
        for opp in match["opponents"]:
            row[opp] = versus(f"checkpoint:{policies[epoch]}", opp, cfg.game, cfg.rules, match["deals"],
                              match["seed"], workers=workers, purpose="deep")
        points[epoch] = row
        print(f"curve {name}: epoch {epoch} measured", flush=True)
    res = {"run": name, "game": cfg.game, "rules": cfg.rules, "algo": cfg.algo, "lineage": lineage(out),
           "match": match, "cpu_hours_before": before, "points": [points[e] for e in sorted(points)]}
    path.write_text(json.dumps(res, indent=1) + "\n")
    return res


def spent_before(spec: dict[str, Any]) -> float:
    """The CPU-hours of the run a live run continues (``continue.curve``'s last point), which its
    curve counts first: a run continued from a shipped model costs what that model cost too."""
    if "continue" not in spec:
        return 0.0
    path = Path(spec["continue"]["curve"])
    try:
        return float(json.loads(path.read_text())["points"][-1]["cpu_hours"])
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        raise StrongError(f"cannot read its last point's cpu_hours: {params_io.one_line(e)}", path) from None


def _rate(x: dict[str, Any]) -> str:
    return f"{x['win_rate']:.3f} [{x['win_rate_low']:.3f}, {x['win_rate_high']:.3f}]"


def report(params: dict[str, dict[str, Any]], state: Path = STATE, reports: Path = REPORTS) -> str:
    """The runs' ledgers and curves as markdown (``reports/strong/legs/report.md``)."""
    from climbrl.learn.legs import read_legs

    lines = ["# Strong runs in legs", "",
             "Generated by `python -m pipeline.legs report` from `strong/legs/state/*/` (issue 46). Each run is "
             "trained in legs of a few hours that resume its committed state; its CPU-hours add up over every leg.",
             ""]
    for name in params:
        out = state / name
        legs = read_legs(out)
        lines += [f"## {name}", ""]
        if not legs:
            lines += ["Not started yet.", ""]
            continue
        total = sum(leg["cpu_seconds"] for leg in legs) / 3600
        before = spent_before(params[name])
        start = (f" It continues `{params[name]['continue']['policy']}`, whose {before:.2f} CPU-hours its curve counts "
                 "first." if before else "")
        lines += [f"{len(legs)} legs, epochs 1-{legs[-1]['last_epoch']}, {total:.2f} CPU-hours in its legs.{start}", "",
                  "| leg | started | commit | CPU | epochs | CPU-hours | wall hours | stopped |",
                  "|---|---|---|---|---|---|---|---|"]
        for i, leg in enumerate(legs, 1):
            lines.append(f"| {i} | {leg['started']} | {leg['commit'][:10]} | {leg['cpu']} | {leg['first_epoch']}-"
                         f"{leg['last_epoch']} | {leg['cpu_seconds'] / 3600:.2f} | {leg['wall_seconds'] / 3600:.2f} | "
                         f"{leg['stopped']} |")
        c = json.loads((out / CURVE).read_text()) if (out / CURVE).exists() else None
        if c and c["points"]:
            opps = c["match"]["opponents"]
            duel = "landlord" in c["points"][0][opps[0]]
            heads = [f"{o} {r}" for o in opps for r in (("landlord", "peasants") if duel else ("all",))]
            lines += ["", f"Curve: win rates with 95% intervals on {c['match']['deals']} fresh deals (seed "
                      f"{c['match']['seed']}, the same for every point" + (", each in both seatings)" if duel else ")"),
                      "", "| epoch | CPU-hours | " + " | ".join(heads) + " |", "|---|---|" + "---|" * len(heads)]
            for p in c["points"]:
                cells = [_rate(p[o][r]) for o in opps for r in (("landlord", "peasants") if duel else ("all",))]
                lines.append(f"| {p['epoch']} | {p['cpu_hours']:.2f} | " + " | ".join(cells) + " |")
        lines.append("")
    text = "\n".join(lines)
    reports.mkdir(parents=True, exist_ok=True)
    (reports / "report.md").write_text(text)
    return text


@params_io.command("python -m pipeline.legs")
def main(argv: list[str] | None = None) -> int:
    p = params_io.ArgumentParser(prog="python -m pipeline.legs")
    p.add_argument("step", choices=("run", "curve", "report"))
    p.add_argument("run", nargs="?", help="the live run (a name in the params file)")
    p.add_argument("--hours", type=float, default=2.0, help=f"the leg's wall time (run; at most {HOURS_MAX:g})")
    p.add_argument("--params", default=str(PARAMS))
    p.add_argument("--state", default=str(STATE), help="the folder of the runs' committed states")
    p.add_argument("--reports", default=str(REPORTS))
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--no-track", action="store_true", help="train without MLflow")
    args = p.parse_args(argv)
    params_io.workers(args.workers)
    if not 0 < args.hours <= HOURS_MAX:
        raise StrongError(f"--hours must be in (0, {HOURS_MAX:g}], got {args.hours!r}")
    params = load_strong_params(Path(args.params))
    if args.step != "report" and args.run not in params:
        raise StrongError(f"name a run of {args.params}: {', '.join(params)}")
    start, state = time.perf_counter(), Path(args.state)
    if args.step == "run":
        run_leg(args.run, params, args.hours, state, None if args.no_track else tracking_of(args.params),
                args.workers)
    elif args.step == "curve":
        curve(args.run, params, state, args.workers)
    if args.step in ("run", "report"):
        report(params, state, Path(args.reports))
    print(f"legs {args.step} {args.run or ''}: {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
