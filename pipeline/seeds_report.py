"""The report of the training-seed study (``python -m pipeline.seeds_report``; the runs:
:mod:`pipeline.seeds`): from each game's records (``reports/seeds/GAME.json``), every learner per
seed and over seeds, the study's rankings as paired contrasts over seeds and deals with Holm's
correction (a contrast that does not survive it is a tie), and whether the study's best learner
is robust to the seed. ``reports/seeds/report.md`` and ``report.json`` (both games), or with
``--game GAME`` ``reports/seeds/GAME/report.md`` and ``report.json`` (the DVC stages ``report@GAME``).

Choosing and reporting stay apart: every winner is chosen on the validation deals by the study's
rule (:func:`climbrl.report.choose_best`); every number that ranks is read on the evaluation deals.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

import pipeline  # noqa: F401  (environment defaults)
from pipeline import params_io

PARAMS = Path(__file__).resolve().parents[1] / "seeds" / "params.yaml"
REPORTS = Path("reports/seeds")

VALUE_LEARNERS = ("mcq", "sarsa", "qlearning", "dqn")
"""The algorithms that the study's "PPO against the value learners" compares PPO with."""
ALPHA = 0.05


def _tables(data: dict[str, Any], which: str) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, np.ndarray], int]:
    """Per opponent and learner, the seeds x deals table of win rates on deal set ``which``; per
    learner, the same averaged over the opponents (the study's ranking: the mean win rate over the
    baselines); the games behind one cell of a per-opponent table."""
    seeds = [str(s) for s in data["seeds"]]
    per_opp: dict[str, dict[str, np.ndarray]] = {o: {} for o in data["opponents"]}
    n = None
    for a in _names(data):
        for o in data["opponents"]:
            recs = [data["runs"][a][s][which][o] for s in seeds]
            n = recs[0]["per_deal"]
            per_opp[o][a] = np.array([[int(c) for c in r["deal_wins"]] for r in recs]) / n
    mean = {a: np.mean([per_opp[o][a] for o in data["opponents"]], axis=0) for a in _names(data)}
    assert n is not None
    return per_opp, mean, n


def _names(data: dict[str, Any]) -> list[str]:
    """Every run's name: the study's contenders, then the systems trained here only."""
    return [*data["learners"], *data.get("systems", {})]


def _mean_of(runs: dict[str, Any], seeds: list[str], key: str) -> float | None:
    """The mean of ``key`` over the seeds' runs; None where a run's record does not hold it (made before it
    was recorded)."""
    values = [runs[s].get(key) for s in seeds]
    return None if None in values else float(np.mean(values))


def _choose(rates: dict[str, float], order: list[str]) -> str:
    """The study's rule (:func:`climbrl.report.choose_best`) on mean win rates, in the study's order."""
    from climbrl.report import choose_best

    return choose_best({a: {"mean": {"win_rate": rates[a]}} for a in order})


def _claims(data: dict[str, Any], choice: str) -> dict[str, list[tuple[str, str]]]:
    """The study's rankings as pairs (a, b) read as a minus b, one family each."""
    learners, algos = data["learners"], data["algos"]
    claims = {"best": [(choice, a) for a in learners if a != choice]}
    if "ppo" in learners:
        claims["ppo_vs_value"] = [("ppo", a) for a in learners if algos[a] in VALUE_LEARNERS]
        claims["variants_vs_ppo"] = [(a, "ppo") for a in learners if algos[a] == "ppo" and a != "ppo"]
    claims["systems_vs_base"] = [(a, x.get("against", x["base"])) for a, x in data.get("systems", {}).items()]
    return {k: v for k, v in claims.items() if v}


def game_statistics(data: dict[str, Any], alpha: float = ALPHA) -> dict[str, Any]:
    """Everything the report says about one game, from its records (``reports/seeds/GAME.json``).

    - ``learners``: each learner's mean win rate over the baselines on the evaluation deals, per
      seed and over seeds (interval with the seeds' and the deals' noise), and per baseline; its
      validation mean per seed.
    - ``selection``: the validation winner of every seed and of the seeds' mean; the study's
      choice (the winner of its own seed).
    - ``claims``: the study's rankings as paired contrasts on the evaluation deals over seeds and
      deals (:func:`climbrl.evaluate.stats.compare_pairs`), Holm's correction within each claim:
      ``best`` (the study's choice against every other contender), ``ppo_vs_value`` (PPO against
      each value learner), ``variants_vs_ppo`` (each PPO variant against plain PPO),
      ``systems_vs_base`` (each system trained here only against the contender it is built on,
      or the one its ``against`` names). A contrast that does not survive the correction is a tie. Systems take no
      part in the selection.
    - ``per_seed``: in each seed, the study's choice against that seed's validation winner on the
      evaluation deals (one seed: the deals' noise only), Holm over the seeds where they differ.
    - ``verdict``: whether the study's choice is robust to the seed.
    """
    from pipeline.seeded import compare_pairs, seeded_rate

    seeds, learners, opps = [str(s) for s in data["seeds"]], data["learners"], data["opponents"]
    per_opp, mean, n = _tables(data, "evaluation")
    _, valid_mean, _ = _tables(data, "validation")
    cell = n * len(opps)  # games behind a cell of a mean table
    table: dict[str, Any] = {}
    for a in _names(data):
        table[a] = {"algo": data["algos"][a], **({"system": data["systems"][a]} if a not in learners else {}),
                    "per_seed": {s: {"mean": float(mean[a][i].mean()),
                                     **{o: float(per_opp[o][a][i].mean()) for o in opps}} for i, s in enumerate(seeds)},
                    "mean": seeded_rate(mean[a], cell),
                    "sd_over_seeds": float(np.std(mean[a].mean(axis=1), ddof=1)) if len(seeds) > 1 else None,
                    "vs": {o: seeded_rate(per_opp[o][a], n) for o in opps},
                    "validation": {s: float(valid_mean[a][i].mean()) for i, s in enumerate(seeds)},
                    "validation_mean": float(valid_mean[a].mean()),
                    "train_minutes": float(np.mean([data["runs"][a][s]["train_seconds"] for s in seeds])) / 60,
                    "learner_decisions": _mean_of(data["runs"][a], seeds, "learner_decisions"),
                    "cpu_vendors": sorted({data["runs"][a][s].get("math_path", {}).get("cpu_vendor", "not recorded")
                                           for s in seeds})}
    winners = {s: _choose({a: table[a]["validation"][s] for a in learners}, learners) for s in seeds}
    choice = winners[str(data["study_seed"])]
    mean_winner = _choose({a: table[a]["validation_mean"] for a in learners}, learners)
    claims = {k: compare_pairs(mean, pairs, cell, alpha) for k, pairs in _claims(data, choice).items()}
    rows = {f"{a}@{s}": mean[a][i:i + 1] for a in learners for i, s in enumerate(seeds)}
    differ = [(f"{choice}@{s}", f"{w}@{s}") for s, w in winners.items() if w != choice]
    tests = {c["b"].split("@")[1]: c for c in compare_pairs(rows, differ, cell, alpha)}
    rank = {s: 1 + sorted(learners, key=lambda a: -table[a]["validation"][s]).index(choice) for s in seeds}
    per_seed = {s: {"winner": w, "choice_rank": rank[s], **({"contrast": tests[s]} if s in tests else {})}
                for s, w in winners.items()}
    return {"game": data["game"], "rules": data["rules"], "study": data["study"], "seeds": data["seeds"],
            "study_seed": data["study_seed"], "opponents": opps, "sets": data["sets"], "games_per_deal": n,
            "learners": table,
            "selection": {"study_choice": choice, "per_seed": winners, "mean_winner": mean_winner},
            "claims": claims, "per_seed": per_seed,
            "verdict": verdict(choice, winners, mean_winner, claims["best"], per_seed)}


def verdict(choice: str, winners: dict[str, str], mean_winner: str, best: list[dict[str, Any]],
            per_seed: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Whether the study's choice is robust to the seed: ``robust`` when the validation deals
    choose it in every seed and on the seeds' mean and no contender is ahead of it over seeds and
    deals; ``clear`` when, besides, it is ahead of every contender; the contenders it ties with
    and those ahead of it; per seed, ``chosen``, ``tied`` (another is chosen, but on that seed's
    evaluation deals the choice is not behind it) or ``behind``."""
    seeds = {s: ("chosen" if "contrast" not in p else "behind" if p["contrast"]["verdict"] == "b" else "tied")
             for s, p in per_seed.items()}
    ahead = [c["b"] for c in best if c["verdict"] == "b"]
    tied = [c["b"] for c in best if c["verdict"] == "tie"]
    every = all(w == choice for w in winners.values()) and mean_winner == choice
    others = sorted({w for w in [*winners.values(), mean_winner] if w != choice})
    if ahead:
        text = (f"not robust: {', '.join(ahead)} {'is' if len(ahead) == 1 else 'are'} ahead of {choice} over seeds "
                "and deals (Holm)")
    elif every and not tied:
        text = f"robust: {choice} is chosen in every seed and is ahead of every other contender over seeds and deals"
    elif every:
        text = (f"robust as the choice (chosen in every seed and on the mean), but tied with {', '.join(tied)} "
                "over seeds and deals: a tie for best, not a clear winner")
    elif tied:
        text = (f"not robust as a single winner: the validation deals choose {', '.join(others)} in some seed or "
                f"on the mean; {choice} is tied for best with {', '.join(tied)} (no contender is ahead of it over "
                "seeds and deals)")
    else:
        text = (f"not robust as the choice: the validation deals choose {', '.join(others)} in some seed or on the "
                f"mean, although over seeds and deals {choice} is ahead of every other contender")
    text += "; per seed: " + ", ".join(f"seed {s} {v}" for s, v in seeds.items())
    return {"robust": every and not ahead, "clear": every and not ahead and not tied, "ahead_of_choice": ahead,
            "tied_with_choice": tied, "per_seed": seeds, "text": text}


METHOD = ("Mean win rate over the study's baselines (its ranking), per deal; over seeds x deals a two-way "
          "method-of-moments variance (the training seeds' spread plus the deals', every run playing the same "
          "deals), Student t with Satterthwaite's degrees of freedom; differences paired on the deals, the seeds "
          "independent; Holm's correction within each claim, family-wise 5%; a difference that does not survive it "
          "is a tie; without spread, Wilson's (a rate) or Newcombe's (a difference) interval on the pooled games")


# --- report ---------------------------------------------------------------------------------------

CLAIM_TITLES = {"best": "The study's best learner against every other contender",
                "ppo_vs_value": "PPO against the value learners",
                "variants_vs_ppo": "The PPO variants against plain PPO",
                "systems_vs_base": "The systems trained here only, each against its contender (its base unless said)"}


def _ci(x: dict[str, Any], key: str = "mean", spec: str = ".3f") -> str:
    return f"{x[key]:{spec}} [{x['low']:{spec}}, {x['high']:{spec}}]"


def _contrast_line(c: dict[str, Any]) -> str:
    call = {"tie": "**tie**", "a": f"**{c['a']} ahead**", "b": f"**{c['b']} ahead**"}[c["verdict"]]
    a, b = (x.split("@")[0] for x in (c["a"], c["b"]))
    return (f"- {a} minus {b}: {_ci(c, 'difference', '+.3f')}, p = {c['p_value']:.2g}, Holm p = {c['holm_p']:.2g}: "
            f"{call}")


def game_lines(s: dict[str, Any]) -> list[str]:
    seeds, opps, sel = [str(x) for x in s["seeds"]], s["opponents"], s["selection"]
    ev, va = s["sets"]["evaluation"], s["sets"]["validation"]
    choice = sel["study_choice"]
    lines = [f"## {s['game']} (`{s['rules']}` rules; study `{s['study']}`)", "",
             f"Every contender trained with the study's config for seeds {', '.join(seeds)} (the study's own: seed "
             f"{s['study_seed']}). Evaluation: {ev['deals']} deals of `{ev['deal_set']}`, {s['games_per_deal']} games "
             f"a deal, against each of {', '.join(opps)}. Win rate: the mean over the baselines (the study's ranking); "
             "per seed, then the mean over seeds [95% interval with the seeds' and the deals' noise].", "",
             "| learner | " + " | ".join(f"seed {x}" for x in seeds) + " | mean [95%] | sd over seeds | "
             + " | ".join(f"vs {o}" for o in opps) + " | training min/run | learner decisions/run |",
             "|---|" + "---|" * (len(seeds) + len(opps) + 4)]
    order = sorted(s["learners"], key=lambda a: -s["learners"][a]["mean"]["mean"])
    for a in order:
        x = s["learners"][a]
        name = f"{a} (system on {x['system']['base']})" if "system" in x else a
        lines.append(f"| {name} | " + " | ".join(f"{x['per_seed'][k]['mean']:.3f}" for k in seeds)
                     + f" | {_ci(x['mean'])} | "
                     + ("-" if x.get("sd_over_seeds") is None else f"{x['sd_over_seeds']:.3f}") + " | "
                     + " | ".join(_ci(x["vs"][o]) for o in opps)
                     + f" | {x['train_minutes']:.1f} | "
                     + ("-" if x.get("learner_decisions") is None else f"{x['learner_decisions']:,.0f}") + " |")
    lines += ["", f"### Selection on the validation deals ({va['deals']} deals of `{va['deal_set']}`)", "",
              "Mean win rate over the baselines on the validation deals, which choose (the study's rule); the "
              "evaluation deals above only report.", "",
              "| learner | " + " | ".join(f"seed {x}" for x in seeds) + " | mean |",
              "|---|" + "---|" * (len(seeds) + 1)]
    for a in (a for a, x in s["learners"].items() if "system" not in x):  # systems take no part
        x = s["learners"][a]
        lines.append(f"| {a} | " + " | ".join(f"{x['validation'][k]:.3f}" for k in seeds)
                     + f" | {x['validation_mean']:.3f} |")
    lines += ["", "| | " + " | ".join(f"seed {x}" for x in seeds) + " | mean |", "|---|" + "---|" * (len(seeds) + 1),
              "| chosen | " + " | ".join(sel["per_seed"][k] for k in seeds) + f" | {sel['mean_winner']} |", "",
              f"The study's choice: **{choice}** (the validation winner of seed {s['study_seed']}, as `make run` "
              "chooses).", ""]
    for k in seeds:
        p = s["per_seed"][k]
        if "contrast" in p:
            c = p["contrast"]
            lines.append(f"- seed {k}: {p['winner']} chosen ({choice} ranks {p['choice_rank']} on validation); on the "
                         f"evaluation deals of that seed (deal noise only, Holm over the seeds where the choice "
                         f"differs): {_contrast_line(c)[2:]}")
        else:
            lines.append(f"- seed {k}: {choice} chosen")
    lines += [""]
    systems = {a: x["system"] for a, x in s["learners"].items() if "system" in x}
    if systems:
        lines += ["Systems trained here only (`seeds/params.yaml`), each its base contender's config with these "
                  "changes, the same budget and seeds; they take no part in the selection:", ""]
        lines += [f"- {a}: {x['base']} with " + ", ".join(f"`{k}: {v}`" for k, v in x["changes"].items())
                  + ("" if x.get("against", x["base"]) == x["base"] else f"; compared with {x['against']}")
                  for a, x in systems.items()] + [""]
    for name, contrasts in s["claims"].items():
        lines += [f"### {CLAIM_TITLES[name]}", "",
                  f"Paired on the evaluation deals, over seeds and deals; Holm over the {len(contrasts)} "
                  f"contrast{'s' if len(contrasts) > 1 else ''}.", ""]
        lines += [_contrast_line(c) for c in contrasts] + [""]
    lines += [f"**Verdict ({s['game']}):** {s['verdict']['text']}.", ""]
    return lines


def report(games: Sequence[str], seeds: Sequence[int], reports: str | Path, out_dir: str | Path | None = None) -> Path:
    """``report.md`` and ``report.json`` in ``out_dir`` (default ``reports``) from each game's
    records in ``reports`` (``GAME.json``); a game without records is named as not run yet."""
    reports = Path(reports)
    out_dir = Path(out_dir) if out_dir is not None else reports
    stats: dict[str, Any] = {}
    lines = ["# The rankings over training seeds (issue 32, part 2)", "",
             "The study trains each learner once. Here each game's contenders are trained with the study's exact "
             f"config for seeds {', '.join(map(str, seeds))} (`seeds/params.yaml`, `make seeds`) and every "
             "final policy is played as the study's evaluate stage plays it. Winners are chosen on the validation "
             "deals; every ranking is read on the disjoint evaluation deals.", "", f"Method: {METHOD}.", ""]
    for game in games:
        path = reports / f"{game}.json"
        if not path.exists():
            lines += [f"## {game}", "", "Not run yet (`python -m pipeline.seeds run`).", ""]
            continue
        stats[game] = game_statistics(json.loads(path.read_text()))
        lines += game_lines(stats[game])
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "report.json").write_text(json.dumps({"method": METHOD, "alpha": ALPHA, "games": stats}, indent=1)
                                         + "\n")
    out = out_dir / "report.md"
    out.write_text("\n".join(lines))
    return out


@params_io.command("python -m pipeline.seeds_report")
def main(argv: list[str] | None = None) -> int:
    p = params_io.ArgumentParser(prog="python -m pipeline.seeds_report", description=__doc__.split("\n\n")[0])
    p.add_argument("--params", default=str(PARAMS), help="the seed study's params (its games and seeds)")
    p.add_argument("--reports", default=str(REPORTS), help="where the records are and the report goes")
    p.add_argument("--game", help="this game alone, into REPORTS/GAME/ (its DVC stage: report@GAME)")
    args = p.parse_args(argv)
    from pipeline.seeds import load_seed_params, only_game

    study = load_seed_params(args.params)
    games = list((only_game(study, args.game) if args.game else study).games)
    if args.game:
        print(report(games, study.seeds, args.reports, Path(args.reports) / args.game))
    else:
        print(report(games, study.seeds, args.reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
