"""The tuning report (issue 30; ``python -m pipeline.tuning_report``, the last stage of
``tune/dvc.yaml``): ``reports/tune/report.md``, a self-contained ``report.html`` (figures
embedded, nothing fetched), ``report.json`` (the headline the main reports quote), a slice figure
per game (``figures/slices-GAME.png``, matplotlib) and each tuned configuration as a YAML file that
``climbrl train --config`` takes (``tuned/GAME-LEARNER.yaml``).

From ``reports/tune/studies/GAME.json`` (the studies: :func:`pipeline.tuning.write_studies`) and
``reports/tune/GAME.json`` (the full-budget comparison: :func:`pipeline.tuning.run_compare`):

- per study, every trial with its state, the epochs it trained (its budget) and its objective at
  each rung; the parameter importances (Optuna's default evaluator); the study's CPU time; the best
  trial and how far its objective stands above the runner-up's, in the objective's noise;
- per game, the tuned-minus-default difference of each learner at the full budget, over seeds and
  deals on the versioned evaluation deals (:func:`pipeline.seeded.compare_pairs`: paired on the deals,
  the seeds independent), Holm's correction over the learners (the mean over the baselines, the
  verdict) and over every learner and opponent (per baseline).
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import yaml

import pipeline  # noqa: F401  (environment defaults)
from pipeline import params_io
from pipeline.params_io import ParamsError
from pipeline.tuning import KEPT_OWN, load_studies

PARAMS = Path(__file__).resolve().parents[1] / "tune" / "params.yaml"
REPORTS = Path("reports/tune")
ALPHA = 0.05
LOG_PARAMS = {"lr", "ent_coef", "target_sync", "epsilon_decay_steps"}
"""The parameters :func:`climbrl.tune.suggest` samples on a log scale (their figure axes are too)."""


def _tables(data: dict[str, Any], learner: str, arm: str) -> tuple[dict[str, np.ndarray], int]:
    """Per opponent, the seeds x deals table of win rates of one arm on the evaluation deals; the
    games behind a cell."""
    runs = data["learners"][learner][arm]
    seeds = [str(s) for s in data["seeds"]]
    out, n = {}, 1
    for o in data["opponents"]:
        recs = [runs[s]["evaluation"][o] for s in seeds]
        n = recs[0]["per_deal"]
        out[o] = np.array([[int(c) for c in r["deal_wins"]] for r in recs]) / n
    return out, n


def comparison(data: dict[str, Any], alpha: float = ALPHA) -> dict[str, Any]:
    """The tuned-minus-default contrasts of one game (module doc), each learner's verdict:
    ``tuned`` (tuning beat the default at the full budget), ``default`` (the default is ahead) or
    ``tie`` (no difference shown), on the mean win rate over the baselines, Holm over the learners."""
    from pipeline.seeded import compare_pairs, seeded_rate

    opps, learners = data["opponents"], list(data["learners"])
    mean, per_opp, cell = {}, {}, 1
    rates: dict[str, Any] = {}
    for a in learners:
        for arm in ("tuned", "default"):
            t, n = _tables(data, a, arm)
            cell = n * len(opps)
            for o in opps:
                per_opp[f"{a}|{o}|{arm}"] = t[o]
            mean[f"{a}|{arm}"] = np.mean([t[o] for o in opps], axis=0)
            rates.setdefault(a, {})[arm] = {"mean": seeded_rate(mean[f"{a}|{arm}"], cell),
                                            **{o: seeded_rate(t[o], n) for o in opps}}
    head = compare_pairs(mean, [(f"{a}|tuned", f"{a}|default") for a in learners], cell, alpha)
    by_opp = compare_pairs(per_opp, [(f"{a}|{o}|tuned", f"{a}|{o}|default") for a in learners for o in opps],
                           cell // len(opps), alpha)
    out: dict[str, Any] = {}
    for a, c in zip(learners, head, strict=True):
        verdict = {"a": "tuned", "b": "default", "tie": "tie"}[c["verdict"]]
        out[a] = {"rates": rates[a], "contrast": _strip(c), "verdict": verdict,
                  "by_opponent": {o: _strip(x) for x in by_opp if x["a"].startswith(f"{a}|")
                                  for o in [x["a"].split("|")[1]]},
                  "best": data["learners"][a]["best"], "algo": data["learners"][a]["algo"],
                  "train_minutes": {arm: float(np.mean([r["train_seconds"] for r in data["learners"][a][arm].values()]))
                                    / 60 for arm in ("tuned", "default")}}
    return out


def _strip(c: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in c.items() if k not in ("a", "b")}


def _verdict_text(v: str) -> str:
    return {"tuned": "**tuning beat the default**", "default": "**the default is ahead**",
            "tie": "no difference shown"}[v]


def headline(game: str, cmp: dict[str, Any], kept: list[str] | tuple[str, ...] = ()) -> str:
    """One sentence per game: what tuning bought at the full budget (``kept``: the learners whose
    study's best is their own config, not compared)."""
    won = [a for a, x in cmp.items() if x["verdict"] == "tuned"]
    lost = [a for a, x in cmp.items() if x["verdict"] == "default"]
    parts = [f"{game + ': ' if game else ''}tuning beat the default at the full budget for "
             + (", ".join(won) if won else "no learner")]
    if lost:
        parts.append(f"the default is ahead for {', '.join(lost)}")
    ties = [a for a, x in cmp.items() if x["verdict"] == "tie"]
    if ties:
        parts.append(f"no difference shown for {', '.join(ties)}")
    if kept:
        parts.append(f"the study's best was the learner's own config for {', '.join(kept)} (not compared)")
    return "; ".join(parts) + f" (of {len(cmp) + len(kept)}; mean win rate over the baselines, paired over seeds and " \
        "deals, Holm)"


def adopted(cmp: dict[str, Any], study: str | None) -> dict[str, bool]:
    """For each learner where tuning beat the default: whether the study's params (``study``, a
    params spec such as ``params.yaml#doudizhu``) now hold its tuned values, i.e. the main study
    trains them. Nothing without the spec or when those params cannot be read."""
    from climbrl.params import load_params

    won = [a for a, x in cmp.items() if x["verdict"] == "tuned"]
    if not won or not study:
        return {}
    try:
        train = load_params(study).train
    except (OSError, ValueError):
        return {}

    def same(have: Any, want: Any) -> bool:
        return math.isclose(have, want, rel_tol=1e-9) if isinstance(want, float) else have == want

    return {a: a in train and all(same(getattr(train[a], k, None), v) for k, v in cmp[a]["best"]["params"].items())
            for a in won}


def adoption_text(adopt: dict[str, bool], study: str) -> str:
    """The sentence that says which winning configurations the main study now trains."""
    yes = [a for a, v in adopt.items() if v]
    no = [a for a, v in adopt.items() if not v]
    parts = []
    if yes:
        parts.append(f"{', '.join(yes)}: the tuned values are now the study's config in `{study}` (adopted on this "
                     "evidence; `make run` trains them, and the default column above is the config before). So "
                     "`dvc status tune/dvc.yaml` shows this game's studies and comparison as changed: run again, "
                     "they would compare the study's best with the adopted config")
    if no:
        parts.append(f"{', '.join(no)}: not in `{study}` yet (copy the tuned values below into it to adopt them)")
    return "**In the main study:** " + "; ".join(parts) + "."


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.3g}"
    return str(v)


def _ci(x: dict[str, Any], key: str = "mean", spec: str = ".3f") -> str:
    return f"{x[key]:{spec}} [{x['low']:{spec}}, {x['high']:{spec}}]"


def noise(study: dict[str, Any], games: int) -> dict[str, Any] | None:
    """How far the best complete trial's objective stands above the runner-up's, against the
    objective's noise: the binomial standard error of a difference of two win rates on
    ``games`` games each (an upper bound: the trials play the same deals, which pairs them)."""
    done = sorted((t for t in study["trials"] if t["state"] == "COMPLETE"), key=lambda t: -t["value"])
    if len(done) < 2:
        return None
    a, b = done[0]["value"], done[1]["value"]
    se = math.sqrt((a * (1 - a) + b * (1 - b)) / games)
    return {"best": done[0]["number"], "runner_up": done[1]["number"], "gap": a - b, "se": se,
            "within_noise": a - b <= 2 * se}


def slice_figure(game: str, g: dict[str, Any], out: Path) -> Path:
    """One row per learner, one panel per parameter: every trial's last objective against the
    parameter's value, coloured by the epochs it trained (its budget), pruned trials hollow."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    learners = list(g["studies"])
    names = {a: sorted({k for t in g["studies"][a]["trials"] for k in t["params"]}) for a in learners}
    cols = max([len(v) for v in names.values()] + [1])
    fig, axes = plt.subplots(len(learners), cols, figsize=(3.2 * cols, 2.4 * len(learners)), squeeze=False)
    top = max(g["rungs"])
    for i, a in enumerate(learners):
        for j in range(cols):
            ax = axes[i][j]
            if j >= len(names[a]):
                ax.axis("off")
                continue
            k = names[a][j]
            for t in g["studies"][a]["trials"]:
                if k not in t["params"] or not t["rungs"]:
                    continue
                last = list(t["rungs"].values())[-1]
                colour = plt.cm.viridis(t["epochs"] / top)
                ax.scatter([t["params"][k]], [last], s=28, edgecolors=[colour],
                           facecolors=[colour] if t["state"] == "COMPLETE" else ["none"])
            if k in LOG_PARAMS:
                ax.set_xscale("log")
                ax.xaxis.set_minor_formatter(NullFormatter())  # a narrow range labels every minor tick, overlapping
            ax.set_xlabel(k, fontsize=8)
            ax.tick_params(labelsize=7)
            if j == 0:
                ax.set_ylabel(f"{a}\nobjective", fontsize=8)
    fig.suptitle(f"{game}: objective (win rate vs {g['objective']['opponent']}) at each trial's last rung\n"
                 f"colour = epochs trained (max {top}), hollow = pruned", fontsize=9)
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"slices-{game}.png"
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return path


def tuned_yaml(game: str, learner: str, config: dict[str, Any], best: dict[str, Any], out: Path) -> Path:
    """The tuned configuration as ``climbrl train --config`` takes it: every train field of the
    study's config, the tuned values in it."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{game}-{learner}.yaml"
    head = (f"# {game} {learner} tuned (Optuna study tune-{game}-{learner}, trial {best['number']}: "
            + ", ".join(f"{k}={_fmt(v)}" for k, v in best["params"].items())
            + f"); the study's config otherwise.\n# use: climbrl train --algo {config['algo']} --config {path}\n")
    path.write_text(head + yaml.safe_dump(config, sort_keys=True))
    return path


def study_lines(game: str, a: str, s: dict[str, Any], g: dict[str, Any]) -> list[str]:
    rungs = g["rungs"]
    lines = [f"#### {a} (study `{s['study']}`)", "",
             f"{len(s['trials'])} trials ("
             + ", ".join(f"{n} {st.lower()}" for st, n in s["states"].items())
             + f"); CPU time {s['cpu_seconds'] / 60:.1f} min.", "",
             "| trial | state | epochs | " + " | ".join(f"@{r}" for r in rungs) + " | parameters | CPU s |",
             "|---|---|---|" + "---|" * len(rungs) + "---|---|"]
    for t in s["trials"]:
        vals = [f"{t['rungs'][str(r)]:.3f}" if str(r) in t["rungs"] else "" for r in rungs]
        state = t["state"].lower() \
            + (" (interrupted: its process ended in it; CPU time not recorded)" if t.get("interrupted") else "") \
            + (f" (retry of {t['retry_of']})" if t.get("retry_of") is not None else "") \
            + (" (the learner's own config)" if t.get("default") else "")
        lines.append(f"| {t['number']} | {state} | {t['epochs']} | " + " | ".join(vals)
                     + " | " + ", ".join(f"{k}={_fmt(v)}" for k, v in t["params"].items())
                     + f" | {t['cpu_seconds']:.0f} |")
    lines.append("")
    if s.get("best"):
        b = s["best"]
        lines.append(f"Best: trial {b['number']}, objective {b['value']:.3f} at {max(rungs)} epochs: "
                     + ", ".join(f"{k}={_fmt(v)}" for k, v in b["params"].items()) + ".")
        nz = noise(s, g["objective"]["games"])
        if nz:
            lines.append(f"Its lead over the runner-up (trial {nz['runner_up']}): {nz['gap']:+.3f}, standard error "
                         f"{nz['se']:.3f} ({'within' if nz['within_noise'] else 'beyond'} two standard errors of the "
                         "objective: " + ("the study's ranking at the top is not decided by its games; the "
                                          "full-budget comparison below is what counts" if nz["within_noise"]
                                          else "the study's games separate them") + ").")
    else:
        lines.append("No trial completed: no best configuration yet.")
    at = s.get("importances_at", {})
    if s.get("importances"):
        lines.append(f"Parameter importances (Optuna's evaluator, on the objective at the first rung, "
                     f"{at.get('epochs')} epochs, which all {at.get('trials')} finished trials reached): "
                     + ", ".join(f"{k} {v:.2f}" for k, v in s["importances"].items())
                     + (f" (PED-ANOVA, Optuna's default: how far the parameters of the top 10% of the trials, here "
                        f"{s['importances_top']}, lie from those of all {at.get('trials')}; with so few trials a hint, "
                        "not a share of the objective's variance)" if s.get("importances_top") else "") + ".")
    else:
        lines.append("Parameter importances: not available (" + s.get("importances_error", "fewer than two "
                                                                      "finished trials") + ").")
    return lines + [""]


def game_lines(game: str, g: dict[str, Any], data: dict[str, Any] | None, cmp: dict[str, Any] | None,
               figure: Path, reports: Path, seeds: list[int], adopt: dict[str, bool] | None = None) -> list[str]:
    o = g["objective"]
    lines = [f"## {game} (`{g['rules']}` rules; study `{g['study']}`)", "",
             f"Schedule: {'successive halving' if g['pruner'] == 'halving' else 'Hyperband'} over epochs "
             f"({g['games_per_epoch']} self-play games each), rungs at {', '.join(map(str, g['rungs']))} epochs, "
             f"the best 1/{g['reduction_factor']} of a rung's trials carried on; {g['trials']} trials per learner. "
             f"Objective: win rate against copies of {o['opponent']} on {o['games']} games ({o['deals']} deals "
             f"of the study's own, deal seed {o['deal_seed']}, stream `{o['purpose']}`; disjoint from the versioned "
             "evaluation and validation deals), the same deals for every trial and rung.", "",
             "### Tuned against default at the full budget", ""]
    if cmp is None or data is None:
        lines += [f"Not run yet (`dvc repro tune/dvc.yaml:compare@{game}`).", ""]
    elif not cmp:
        lines += [f"Not compared: {', '.join(data.get('kept_own', []))}: {KEPT_OWN}.", "",
                  f"**Verdict ({game}):** {headline('', cmp, data.get('kept_own', []))}.", ""]
    else:
        opps = data["opponents"]
        ev = data["sets"]["evaluation"]
        lines += [f"Each learner's best configuration (chosen on the study's deals) and its default, each trained at "
                  f"the study's full budget for seeds {', '.join(map(str, seeds))}, played against copies of each of "
                  f"{', '.join(opps)} on {ev['deals']} deals of `{ev['deal_set']}`. Mean win rate over the baselines "
                  "[95% interval over seeds and deals]; tuned minus default paired on the deals, Holm over the "
                  f"{len(cmp)} learner{'s' if len(cmp) > 1 else ''}.", "",
                  "| learner | tuned values | default | tuned | tuned - default [95%] | p | Holm p | verdict |",
                  "|---|---|---|---|---|---|---|---|"]
        for a, x in cmp.items():
            c = x["contrast"]
            lines.append(f"| {a} | " + ", ".join(f"{k}={_fmt(v)}" for k, v in x["best"]["params"].items())
                         + f" | {_ci(x['rates']['default']['mean'])} | {_ci(x['rates']['tuned']['mean'])} | "
                         f"{_ci(c, 'difference', '+.3f')} | {c['p_value']:.2g} | {c['holm_p']:.2g} | "
                         f"{_verdict_text(x['verdict'])} |")
        if data.get("kept_own"):
            lines += ["", f"Not compared: {', '.join(data['kept_own'])}: {KEPT_OWN}."]
        lines += ["", f"Per baseline (tuned minus default; Holm over all {len(cmp) * len(opps)} learner and "
                  "baseline pairs):", "",
                  "| learner | " + " | ".join(f"vs {o}" for o in opps) + " |", "|---|" + "---|" * len(opps)]
        for a, x in cmp.items():
            cells = []
            for o in opps:
                c = x["by_opponent"][o]
                mark = {"a": " (tuned ahead)", "b": " (default ahead)", "tie": ""}[c["verdict"]]
                cells.append(f"{_ci(c, 'difference', '+.3f')}, Holm p {c['holm_p']:.2g}{mark}")
            lines.append(f"| {a} | " + " | ".join(cells) + " |")
        lines += ["", f"**Verdict ({game}):** {headline('', cmp, data.get('kept_own', []))}.", ""]
        if adopt:
            lines += [adoption_text(adopt, g["study"]), ""]
        lines += ["### The tuned configurations", "",
                  "Each file holds the study's full train config with the tuned values; `climbrl train --algo ALGO "
                  "--config FILE` takes it. A tuned configuration replaces the default in `params.yaml` only where "
                  "the table above shows tuning ahead.", ""]
        for a, x in cmp.items():
            path = tuned_yaml(game, a, data["learners"][a]["config"], x["best"], reports / "tuned")
            lines += [f"`{path.relative_to(reports)}` ({x['algo']}; tuned values):", "", "```yaml",
                      yaml.safe_dump(x["best"]["params"], sort_keys=True).strip(), "```", ""]
    lines += ["### The studies", "", f"![slices-{game}](figures/{figure.name})", "",
              "| learner | trials | complete | pruned | failed | CPU min | best objective |",
              "|---|---|---|---|---|---|---|"]
    for a, s in g["studies"].items():
        lines.append(f"| {a} | {len(s['trials'])} | {s['states'].get('COMPLETE', 0)} | {s['states'].get('PRUNED', 0)} "
                     f"| {s['states'].get('FAIL', 0)} | {s['cpu_seconds'] / 60:.1f} "
                     f"| {s['best']['value'] if s.get('best') else math.nan:.3f} |")
    lines.append("")
    for a, s in g["studies"].items():
        lines += study_lines(game, a, s, g)
    return lines


METHOD = ("tuned minus default on the mean win rate over the baselines, per deal; over seeds x deals a two-way "
          "method-of-moments variance (the training seeds' spread plus the deals', both arms playing the same deals), "
          "Student t with Satterthwaite's degrees of freedom, paired on the deals, the seeds independent; Holm's "
          "correction over the learners (the verdict) and over every learner and baseline (per baseline); a "
          "difference that does not survive it is no difference shown")


def report(reports: str | Path = REPORTS, seeds: list[int] | None = None, games: list[str] | None = None) -> Path:
    """``report.md``, ``report.html``, ``report.json``, the figures and the tuned configurations in
    ``reports``, from the games' study summaries (``studies/GAME.json``) and comparison records
    there (a game whose comparison has not run is said to be not run yet, and so is a game of
    ``games``, the params', whose studies have not)."""
    from climbrl.report import html_page

    reports = Path(reports)
    studies = load_studies(reports)
    if studies is None:
        raise ValueError(f"{reports / 'studies'}: no studies yet (python -m pipeline.tuning study writes them)")
    lines = ["# Tuning that pays off", "",
             "Per game and learner an Optuna study over the learner's own hyperparameters under a multi-fidelity "
             "schedule, chosen on the study's own deals; then the best configuration retrained at the study's full "
             "budget with several seeds beside the default, both judged on the versioned evaluation deals, which "
             f"the studies never saw. Generated by `make tune` (`tune/dvc.yaml`, `tune/params.yaml`); studies in "
             f"`{studies['storage']}` (browse them: `optuna-dashboard {studies['storage'].split('?')[0]}`); every "
             "trial an MLflow run in the study's experiment with `-tune` appended.", "", f"Method: {METHOD}.", ""]
    out: dict[str, Any] = {"method": METHOD, "alpha": ALPHA, "games": {}}
    figures = []
    heads = []
    for game, g in studies["games"].items():
        path = reports / f"{game}.json"
        data = json.loads(path.read_text()) if path.exists() else None
        if data is not None and not data.get("learners") and not data.get("kept_own"):
            data = None
        cmp = comparison(data) if data and data.get("learners") else ({} if data else None)
        adopt = adopted(cmp, g.get("study")) if cmp else {}
        fig = slice_figure(game, g, reports / "figures")
        figures.append(fig)
        lines += game_lines(game, g, data, cmp, fig, reports, seeds or (data or {}).get("seeds", []), adopt)
        entry: dict[str, Any] = {"cpu_minutes": {a: s["cpu_seconds"] / 60 for a, s in g["studies"].items()},
                                 "best": {a: s.get("best") for a, s in g["studies"].items()}}
        if cmp is not None:
            entry["headline"] = headline(game, cmp, data.get("kept_own", []))
            entry["learners"] = {a: {"verdict": x["verdict"], "difference": x["contrast"]["difference"],
                                     "low": x["contrast"]["low"], "high": x["contrast"]["high"],
                                     "holm_p": x["contrast"]["holm_p"]} for a, x in cmp.items()}
            entry["adopted"] = [a for a, v in adopt.items() if v]
            entry["study"] = g.get("study")
            heads.append(entry["headline"])
        out["games"][game] = entry
    for game in games or []:
        if game not in studies["games"]:
            lines += [f"## {game}", "", f"Studies not run yet (`dvc repro tune/dvc.yaml:study@{game}`).", ""]
    if heads:
        lines[2:2] = ["**Headline:** " + " ".join(h + "." for h in heads), ""]
    md = "\n".join(lines)
    (reports / "report.md").write_text(md)
    (reports / "report.json").write_text(json.dumps(out, indent=1) + "\n")
    (reports / "report.html").write_text(html_page(md, figures, "climbrl: tuning that pays off"))
    return reports / "report.md"


@params_io.command("python -m pipeline.tuning_report")
def main(argv: list[str] | None = None) -> int:
    p = params_io.ArgumentParser(prog="python -m pipeline.tuning_report", description=__doc__.split("\n\n")[0])
    p.add_argument("--params", default=str(PARAMS), help="the tuning params (its seeds)")
    p.add_argument("--reports", default=str(REPORTS), help="where the records are and the report goes")
    args = p.parse_args(argv)
    if load_studies(args.reports) is None:
        raise FileNotFoundError(f"{Path(args.reports) / 'studies'}: no studies yet (python -m pipeline.tuning study "
                                "writes them)")
    raw = params_io.read(args.params)  # checked by the studies (pipeline.tuning.load_tuning)
    if not isinstance(raw, dict) or not isinstance(raw.get("seeds"), list) or not isinstance(raw.get("games"), dict):
        raise ParamsError(f"{args.params}: expected seeds (a list) and games (a mapping) (python -m pipeline.tuning "
                          "estimate checks the whole file)")
    print(report(args.reports, raw["seeds"], list(raw["games"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
