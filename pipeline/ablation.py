"""The study's two ablations, with error bars: PPO's entropy coefficient and the curriculum.

``dvc repro ablations/dvc.yaml`` runs them from the ``ablation`` section of ``params.yaml`` (not
part of ``make run``: at the study's budget the two take about 70 minutes on two cores). One
stage per ablation calls ``python -m pipeline.ablation entropy|curriculum``, which trains PPO
(``train.common`` + ``train.ppo``, with the ablated setting replaced) for every value and every
seed, ``workers`` runs at a time, one process each, and writes ``reports/ablations/<name>.json``
(in-training evaluation per run: the learning curves, drawn with a band of one standard deviation
over seeds in ``reports/ablations/<name>.png``). It then evaluates every run's final policy on the
versioned deal set (:func:`evaluate_ablation`, also on its own: ``python -m pipeline.ablation
evaluate entropy``): all the deals of ``data/eval_seeds.json`` from every seat (1000 deals, 4000
games per baseline and run), the evaluate stage's protocol (its opponents, seat seed 0) on more
deals. The JSON's ``final`` section then holds every run's outcome deal by deal, each value's mean
win rate over seeds with a 95% interval that holds both the training seeds' spread and the deals'
(:func:`climbrl.evaluate.stats.contrast_interval`), and every pair of values compared on the same
deals, with Holm's correction over the pairs against each baseline. ``python -m pipeline.ablation
summary`` renders both ablations into ``reports/ablations/ablations.md``.

Runs resume from their checkpoints when the command is repeated (a killed run loses at most an
epoch; a run with fewer epochs is extended); a checkpoint trained with any other setting is
discarded and that run starts over, so a result never mixes two configurations.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

import pipeline  # noqa: F401  (environment defaults)
from climbrl.config import TrainConfig, train_config
from climbrl.params import Params, load_params
from climbrl.threads import process_pool
from pipeline import params_io
from pipeline.seeded import deal_records, train_resumable
from pipeline.stages import SEEDS, load_seeds

ABLATIONS = {"entropy": "ent_coef", "curriculum": "curriculum"}
"""Ablation name -> the PPO setting it varies (its values come from ``params.yaml``)."""

SEAT_SEED = 0
"""Seat seed of the final evaluation: the evaluate stage's (``run_match``'s default)."""


def ablation_configs(name: str, params: Params, **overrides: Any) -> list[tuple[Any, int, TrainConfig]]:
    """(value, seed index, config) of every run of ablation ``name``, values outer, seeds inner."""
    if name not in ABLATIONS:
        raise ValueError(f"unknown ablation {name!r} (ablations: {', '.join(ABLATIONS)})")
    if params.game != "big2":
        raise ValueError(f"the ablations are Big 2's (their evaluation plays four seats, deal by deal); params.yaml "
                         f"names game {params.game!r}")
    a = dataclasses.replace(params.ablation, **overrides)
    base = params.train.get("ppo") or train_config("ppo", rules=params.rules)
    values = a.entropy if name == "entropy" else a.curriculum
    runs = []
    for v in values:
        for s in range(a.seeds):
            cfg = dataclasses.replace(base, **{ABLATIONS[name]: v}, seed=base.seed + s, epochs=a.epochs,
                                      games_per_epoch=a.games_per_epoch, eval_every=a.eval_every,
                                      eval_games=a.eval_games, keep_policy_every=0)
            runs.append((v, s, cfg))
    return runs


def _train_one(args: tuple[TrainConfig, str]) -> dict[str, Any]:
    cfg, out = args
    res = train_resumable(cfg, out)
    curve = [{k: v for k, v in r.items() if k == "epoch" or k.startswith("win_rate/")}
             for r in res["history"] if any(k.startswith("win_rate/") for k in r)]
    return {"final_eval": res["final_eval"], "curve": curve, "train_seconds": res["train_seconds"]}


def run_dir(out_root: str | Path, name: str, value: Any, seed: int) -> Path:
    """Where run (``value``, seed index ``seed``) of ablation ``name`` keeps its checkpoint and policy."""
    return Path(out_root) / name / f"{ABLATIONS[name]}={value}" / f"seed{seed}"


def run_ablation(name: str, params: Params | None = None, out_root: str = "runs/ablation",
                 reports: str = "reports/ablations", evaluate: bool = True, deals: int | None = None,
                 seeds_file: str | Path = SEEDS, **overrides: Any) -> dict[str, Any]:
    """Train every run of ablation ``name`` and write its JSON and figure, then (``evaluate``)
    evaluate every final policy (:func:`evaluate_ablation`); ``overrides`` replace fields of
    ``params.ablation`` (seeds, epochs, games_per_epoch, eval_every, eval_games, workers)."""
    params = params or load_params()
    a = dataclasses.replace(params.ablation, **overrides)
    runs = ablation_configs(name, params, **overrides)
    param = ABLATIONS[name]
    jobs = [(cfg, str(run_dir(out_root, name, v, s))) for v, s, cfg in runs]
    with process_pool(a.workers) as pool:
        results = list(pool.map(_train_one, jobs))
    opponents = sorted({k.split("/", 1)[1] for r in results for k in r["final_eval"] if k.startswith("win_rate/")})
    values = list(dict.fromkeys(v for v, _, _ in runs))
    summary: dict[str, Any] = {"ablation": name, "param": param, "seeds": a.seeds, "epochs": a.epochs,
                               "games_per_epoch": a.games_per_epoch, "eval_games": a.eval_games, "configs": []}
    for i, v in enumerate(values):
        group = results[i * a.seeds:(i + 1) * a.seeds]
        entry: dict[str, Any] = {"value": v, "runs": [r["final_eval"] for r in group],
                                 "train_seconds": [r["train_seconds"] for r in group]}
        for o in opponents:
            rates = np.array([r["final_eval"][f"win_rate/{o}"] for r in group])
            entry[f"mean/{o}"] = float(rates.mean())
            entry[f"std/{o}"] = float(rates.std(ddof=1)) if len(rates) > 1 else 0.0
        entry["curves"] = [r["curve"] for r in group]
        summary["configs"].append(entry)
    out = Path(reports)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.json").write_text(json.dumps(summary, indent=2) + "\n")
    _plot(summary, opponents, out / f"{name}.png")
    if evaluate:
        return evaluate_ablation(name, params, out_root, reports, deals=deals, seeds_file=seeds_file, **overrides)
    return summary


def evaluate_ablation(name: str, params: Params | None = None, out_root: str = "runs/ablation",
                      reports: str = "reports/ablations", deals: int | None = None,
                      seeds_file: str | Path = SEEDS, **overrides: Any) -> dict[str, Any]:
    """Every run's final policy against three copies of each ``evaluate.opponents`` baseline on the
    first ``deals`` deals of the versioned set (all of them by default), every deal from every
    seat; the per-value intervals and the pairwise comparisons go into the ``final`` section of
    ``<reports>/<name>.json`` (the rest of the file, the training part, is kept)."""
    params = params or load_params()
    a = dataclasses.replace(params.ablation, **overrides)
    runs = ablation_configs(name, params, **overrides)
    all_seeds = load_seeds(Path(seeds_file))
    deals = len(all_seeds) if deals is None else deals
    if not 2 <= deals <= len(all_seeds):
        raise ValueError(f"deals must be between 2 and the {len(all_seeds)} of {seeds_file}, got {deals}")
    missing = [str(run_dir(out_root, name, v, s) / "policy.pt") for v, s, _ in runs
               if not (run_dir(out_root, name, v, s) / "policy.pt").exists()]
    if missing:
        raise FileNotFoundError(f"ablation {name}: no trained policy at {', '.join(missing)} (train it first)")
    opponents = list(params.evaluate.opponents)
    values: dict[Any, list[dict[str, Any]]] = {}
    for v, s, cfg in runs:
        policy = run_dir(out_root, name, v, s) / "policy.pt"
        vs = deal_records(policy, opponents, cfg.game, cfg.rules, all_seeds[:deals], SEAT_SEED, a.workers)
        values.setdefault(v, []).append({"seed": cfg.seed, "policy": str(policy), "vs": vs})
    final = {"deal_set": str(seeds_file), "deals": deals, "games_per_run": 4 * deals, "seat_seed": SEAT_SEED,
             "opponents": opponents, **ablation_statistics(values, opponents)}
    path = Path(reports) / f"{name}.json"
    summary = json.loads(path.read_text()) if path.exists() else {
        "ablation": name, "param": ABLATIONS[name], "seeds": a.seeds, "configs": []}
    summary["final"] = final
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def ablation_statistics(values: dict[Any, list[dict[str, Any]]], opponents: list[str],
                        alpha: float = 0.05) -> dict[str, Any]:
    """Per value and baseline: mean win rate over seeds and its interval (seed and deal noise);
    per baseline: every pair of values compared on the same deals, Holm-corrected over the pairs.
    ``values`` maps each value to its runs, each with ``vs[opponent]["deal_wins"]`` (the agent's
    wins out of 4 on every deal, one digit per deal).

    Every interval is a win rate's (or a difference of two), so it is clipped to [0, 1] (or
    [-1, 1]) and never zero-width: without spread to estimate (every run scoring the same on every
    deal: a value that never wins, or always), a value's interval is Wilson's on all its games
    pooled and a difference's Newcombe's on the two values' pooled games, instead of a point."""
    from pipeline.seeded import compare_pairs, seeded_rate

    tables = {o: {v: np.array([[int(c) for c in r["vs"][o]["deal_wins"]] for r in runs]) / 4
                  for v, runs in values.items()} for o in opponents}
    configs = [{"value": v, "runs": runs, "vs": {o: seeded_rate(tables[o][v], 4) for o in opponents}}
               for v, runs in values.items()]
    names = list(values)
    pairs = [(va, vb) for i, va in enumerate(names) for vb in names[i + 1:]]
    comparisons = {o: compare_pairs(tables[o], pairs, 4, alpha) for o in opponents}
    return {"method": METHOD, "configs": configs, "comparisons": comparisons}


METHOD = ("a two-way (seeds x deals) method-of-moments variance: the training seeds' spread plus the deals' (every run "
          "plays the same deals); Student t with Satterthwaite's degrees of freedom; differences paired on the deals; "
          "'significant': Holm's correction over the pairs of values against the same baseline, family-wise 5%; a "
          "value's interval clipped to [0, 1], a difference's to [-1, 1]; without spread, Wilson's interval on the "
          "pooled games (a value) or Newcombe's (a difference) instead of a point")


def _plot(summary: dict[str, Any], opponents: list[str], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(opponents), figsize=(4.2 * len(opponents), 3.6), squeeze=False)
    for ax, o in zip(axes[0], opponents, strict=True):
        for entry in summary["configs"]:
            curves = entry["curves"]
            epochs = [p["epoch"] for p in curves[0]]
            rates = np.array([[p[f"win_rate/{o}"] for p in c] for c in curves])
            mean, std = rates.mean(axis=0), rates.std(axis=0)
            ax.plot(epochs, mean, label=f"{summary['param']}={entry['value']}")
            ax.fill_between(epochs, mean - std, mean + std, alpha=0.15)
        ax.axhline(0.25, color="grey", linestyle=":", linewidth=1)
        ax.set_title(f"vs three {o} ({summary['seeds']} seeds)")
        ax.set_xlabel("epoch")
        ax.set_ylim(0, 1)
    axes[0][0].set_ylabel("win rate (mean +- sd over seeds)")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def summary_markdown(reports: str | Path = "reports/ablations") -> Path:
    """``ablations.md``: per ablation JSON present in ``reports``, the final evaluation's table (mean
    win rate over seeds with its interval), its significant differences, and the learning curves."""
    reports = Path(reports)
    lines = ["# Ablations", "",
             "The study's two ablations of PPO, rerun by `dvc repro ablations/dvc.yaml` from the `ablation` "
             "section of `params.yaml`.", ""]
    for path in sorted(reports.glob("*.json")):
        a = json.loads(path.read_text())
        lines += [f"## {a['ablation']} ({a['param']})", ""]
        if a.get("epochs"):
            lines += [f"PPO, {a['seeds']} seeds per value, {a['epochs']} epochs x {a['games_per_epoch']} self-play "
                      "games.", ""]
        lines += _final_lines(a) if "final" in a else _training_lines(a)
        if path.with_suffix(".png").exists():
            lines += ["", f"Learning curves (the in-training evaluation, {a.get('eval_games', '?')} games per "
                      "baseline on one fixed deal set; band: one standard deviation over seeds):", "",
                      f"![{path.stem}]({path.stem}.png)"]
        lines.append("")
    out = reports / "ablations.md"
    reports.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines))
    return out


def _minutes(entry: dict[str, Any] | None) -> str:
    secs = (entry or {}).get("train_seconds")
    return f"{np.mean(secs) / 60:.1f}" if secs else "-"


def _final_lines(a: dict[str, Any]) -> list[str]:
    f, param = a["final"], a["param"]
    opps = f["opponents"]
    seeds = len(f["configs"][0]["runs"])
    training = {str(c["value"]): c for c in a.get("configs", [])}
    lines = [f"Final policies against three copies of each baseline on the versioned deal set ({f['deal_set']}): "
             f"{f['deals']} deals from every seat, {f['games_per_run']} games per baseline and run, the same deals "
             f"for every run. Mean win rate over the {seeds} seeds, [95% interval] with both the seeds' and the "
             f"deals' noise ({f['method']}).", "",
             f"| {param} | " + " | ".join(f"vs 3x {o}" for o in opps) + " | training min/run |",
             "|---|" + "---|" * (len(opps) + 1)]
    for c in f["configs"]:
        cells = [f"{c['vs'][o]['mean']:.3f} [{c['vs'][o]['low']:.3f}, {c['vs'][o]['high']:.3f}]" for o in opps]
        lines.append(f"| {c['value']} | " + " | ".join(cells) + f" | {_minutes(training.get(str(c['value'])))} |")
    n_pairs = len(next(iter(f["comparisons"].values()), []))
    lines += ["", f"Significant differences (paired on the deals, 95%, Holm over the {n_pairs} pairs against each "
              "baseline):", ""]
    found = [(o, c) for o in opps for c in f["comparisons"][o] if c["significant"]]
    for o, c in found:
        lines.append(f"- vs 3x {o}: {param}={c['a']} minus {param}={c['b']}: {c['difference']:+.3f} "
                     f"[{c['low']:+.3f}, {c['high']:+.3f}], p = {c['p_value']:.2g}")
    if not found:
        lines.append("- none: no two values differ significantly against any baseline.")
    return lines


def _training_lines(a: dict[str, Any]) -> list[str]:
    """Before the final evaluation: the in-training evaluation, mean +- sd over seeds (seed noise only)."""
    opps = sorted(k.split("/", 1)[1] for k in a["configs"][0] if k.startswith("mean/"))
    lines = [f"Not yet evaluated on the versioned deal set (`python -m pipeline.ablation evaluate {a['ablation']}`): "
             f"the in-training evaluation ({a['eval_games']} games per baseline, one fixed set of deals), mean +- "
             "standard deviation over seeds. The deals' noise is not in these spreads.", "",
             f"| {a['param']} | " + " | ".join(f"vs 3x {o}" for o in opps) + " | training min/run |",
             "|---|" + "---|" * (len(opps) + 1)]
    for c in a["configs"]:
        lines.append(f"| {c['value']} | " + " | ".join(f"{c[f'mean/{o}']:.3f} +- {c[f'std/{o}']:.3f}"
                                                        for o in opps) + f" | {_minutes(c)} |")
    return lines


@params_io.command("python -m pipeline.ablation")
def main(argv: list[str] | None = None) -> int:
    p = params_io.ArgumentParser(prog="python -m pipeline.ablation", description=__doc__.split("\n\n")[0])
    p.add_argument("name", choices=[*ABLATIONS, "summary", "evaluate"],
                   help="an ablation (train, then evaluate), 'evaluate ABLATION' (evaluate existing runs) or 'summary'")
    p.add_argument("ablation", nargs="?", choices=list(ABLATIONS), help="with 'evaluate': which ablation")
    p.add_argument("--params", default="params.yaml")
    p.add_argument("--out-root", default="runs/ablation", help="where the runs are (default runs/ablation)")
    p.add_argument("--reports", default="reports/ablations", help="where the JSON, figures and summary go")
    p.add_argument("--deals", type=int, help="final evaluation on the first N deals of the deal set (default all)")
    p.add_argument("--seeds-file", default=str(SEEDS), help="the versioned deal set (default data/eval_seeds.json)")
    for flag in ("seeds", "epochs", "games-per-epoch", "eval-every", "eval-games", "workers"):
        p.add_argument(f"--{flag}", type=int, help="override ablation." + flag.replace("-", "_"))
    args = p.parse_args(argv)
    if args.name == "summary":
        print(summary_markdown(args.reports))
        return 0
    if (args.name == "evaluate") != (args.ablation is not None):
        p.error("name the ablation after 'evaluate' (and only there)")
    skip = ("name", "ablation", "params", "out_root", "reports", "deals", "seeds_file")
    overrides = {k: v for k, v in vars(args).items() if k not in skip and v is not None}
    where = {"out_root": args.out_root, "reports": args.reports, "deals": args.deals, "seeds_file": args.seeds_file}
    params = load_params(args.params)
    if params.game != "big2":
        print(f"python -m pipeline.ablation: the ablations are Big 2's; {args.params} names game {params.game!r}",
              file=sys.stderr)
        return 2
    if args.name == "evaluate":
        s = evaluate_ablation(args.ablation, params, **where, **overrides)
    else:
        s = run_ablation(args.name, params, **where, **overrides)
    for c in s["final"]["configs"]:
        print(f"{s['param']}={c['value']}: " + ", ".join(
            f"{o} {r['mean']:.3f} [{r['low']:.3f}, {r['high']:.3f}]" for o, r in c["vs"].items()))
    lines = _final_lines(s)
    print("\n".join(lines[next(i for i, line in enumerate(lines) if line.startswith("Significant")):]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
