"""Generated reports: reports/report.md, a self-contained reports/report.html (figures embedded,
no network needed to view it), PNG figures and reports/metrics.json. Never hand-written.

The game is ``params.game``: the number of opponents, the deals x seats, the tournament's groups
and the chance level come from it. A free-for-all game (Big 2) has a chance level (1 / players:
the normalized win rates and the dotted line of the figures); a team game (Dou Dizhu) has none,
and has a per-role table instead (the ``by_role`` of its match summaries; in metrics.json
``win_rate/OPPONENT/ROLE`` and the like), and metrics.json names the game.
"""

from __future__ import annotations

import base64
import csv
import html
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from climbrl.evaluate.stats import format_interval
from climbrl.params import Params
from climbrl.stage_times import stage_time_lines

_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _word(n: int) -> str:
    return _WORDS.get(n, str(n))


class _Game:
    """What the report's wording needs of the game: seats, whether it is free-for-all, its title."""

    def __init__(self, params: Params) -> None:
        from climbrl.config import GAME_SETUP
        from climbrl.games.registry import make_game

        game = make_game(f"{params.game}:{params.rules}")
        self.name = params.game
        self.title = GAME_SETUP[params.game].title
        self.players = game.num_players
        self.opponents = self.players - 1
        self.free_for_all = len(game.roles) == 1
        self.roles = tuple(game.roles)
        self.chance = 1.0 / self.players if self.free_for_all else None
        """The win rate of random play against random play (free-for-all only)."""

    def copies(self) -> str:
        """``three copies`` (Big 2), ``two copies`` (Dou Dizhu)."""
        return f"{_word(self.opponents)} copies"

    def vs(self, opp: str) -> str:
        return f"vs {self.opponents}x {opp}"


def _read_curve(path: Path) -> list[dict[str, float]]:
    with open(path) as f:
        return [{k: float(v) for k, v in row.items() if v not in ("", None)} for row in csv.DictReader(f)]


def _plot_curves(curves: dict[str, list[dict[str, float]]], opponents: tuple[str, ...], out: Path,
                 game: _Game) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    for opp in opponents:
        fig, ax = plt.subplots(figsize=(6.4, 4))
        for algo, rows in curves.items():
            pts = [r for r in rows if f"win_rate/{opp}" in r]
            if not pts:
                continue
            x = [r["epoch"] for r in pts]
            ax.plot(x, [r[f"win_rate/{opp}"] for r in pts], label=algo)
            ax.fill_between(x, [r[f"win_rate_low/{opp}"] for r in pts], [r[f"win_rate_high/{opp}"] for r in pts],
                            alpha=0.2)
        if game.chance is not None:
            ax.axhline(game.chance, color="grey", linestyle=":", linewidth=1)
        ax.set_xlabel("epoch")
        ax.set_ylabel("win rate (95% CI)")
        ax.set_title(f"against {_word(game.opponents)} {opp} players")
        ax.set_ylim(0, 1)
        ax.legend(fontsize=8)
        p = out / f"curve_{opp}.png"
        fig.tight_layout()
        fig.savefig(p, dpi=100)
        plt.close(fig)
        paths.append(p)
    return paths


def _plot_final(finals: dict[str, dict[str, dict[str, Any]]], opponents: tuple[str, ...], out: Path,
                game: _Game) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    algos = list(finals)
    width = 0.8 / max(1, len(opponents))
    for j, opp in enumerate(opponents):
        xs = [i + j * width for i in range(len(algos))]
        rates = [finals[a][opp]["win_rate"] for a in algos]
        lo = [finals[a][opp]["win_rate"] - finals[a][opp]["win_rate_low"] for a in algos]
        hi = [finals[a][opp]["win_rate_high"] - finals[a][opp]["win_rate"] for a in algos]
        ax.bar(xs, rates, width, yerr=[lo, hi], capsize=3, label=game.vs(opp))
    if game.chance is not None:
        ax.axhline(game.chance, color="grey", linestyle=":", linewidth=1)
    ax.set_xticks([i + width * (len(opponents) - 1) / 2 for i in range(len(algos))], algos)
    ax.set_ylabel("final win rate (95% CI)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    p = out / "final_win_rates.png"
    fig.tight_layout()
    fig.savefig(p, dpi=100)
    plt.close(fig)
    return p


def _optuna_section(params: Params, game: _Game) -> tuple[list[str], dict[str, Any]]:
    """Best trials and parameter importances of the configured study, when it exists."""
    storage = params.tune.storage
    if storage.startswith("sqlite:///") and not Path(storage.removeprefix("sqlite:///")).exists():
        return [], {}
    try:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        study = optuna.load_study(study_name=params.tune.study, storage=storage)
    except Exception:  # no such study yet
        return [], {}
    done = [t for t in study.trials if t.state.name == "COMPLETE"]
    if not done:
        return [], {}
    lines = [f"## Hyperparameter search ({params.tune.study})", "",
             f"{len(study.trials)} trials ({len(done)} complete, "
             f"{sum(t.state.name == 'PRUNED' for t in study.trials)} pruned); objective: win rate against "
             f"{_word(game.opponents)} {params.tune.opponent} players at the reduced budget.", "",
             "| trial | win rate | parameters |", "|---|---|---|"]
    for t in sorted(done, key=lambda t: -(t.value or 0))[:5]:
        lines.append(f"| {t.number} | {t.value:.3f} | {', '.join(f'{k}={v:.3g}' for k, v in t.params.items())} |")
    info: dict[str, Any] = {"best_value": study.best_value, "best_params": study.best_params}
    if len(done) >= 2:
        try:
            imp = optuna.importance.get_param_importances(study)
            lines += ["", "Parameter importances: " + ", ".join(f"{k} {v:.2f}" for k, v in imp.items())]
            info["importances"] = imp
        except Exception:
            pass
    return lines + [""], info


def build_report(params: Params, reports: Path, runs: Path) -> Path:
    figs = reports / "figures"
    figs.mkdir(parents=True, exist_ok=True)
    game = _Game(params)
    opponents = params.evaluate.opponents
    evals: dict[str, dict[str, Any]] = {}
    for algo in params.learners():  # every learner of the study: one left out would let the rest win
        p = reports / "eval" / f"{algo}.json"
        if not p.exists():
            key = f"{params.study}-{algo}" if params.study else algo
            raise FileNotFoundError(f"{p}: no evaluation results for {algo}, a learner of the study; the evaluate "
                                    f"stage writes them (dvc repro evaluate@{key})")
        evals[algo] = _with_duel_views(json.loads(p.read_text()))
    curves = {a: _read_curve(reports / "curves" / f"{a}.csv") for a in params.learners()
              if (reports / "curves" / f"{a}.csv").exists()}
    finals = {a: {m["opponents"][0]: m for m in e["matches"]} for a, e in evals.items()}
    valids = read_validation(reports, list(finals))
    metrics: dict[str, Any] = {"rules": params.rules, "learners": {}}
    if game.name != "big2":
        metrics["game"] = game.name
    for algo, by_opp in finals.items():
        m = metrics["learners"][algo] = {}
        for opp, r in by_opp.items():
            for k in ("win_rate", "win_rate_low", "win_rate_high", "normalized_win_rate"):
                if k in r:  # a team game has no chance level to normalize by
                    m[f"{k}/{opp}"] = r[k]
            m[f"games/{opp}"] = r["games"]
            for role, x in r.get("by_role", {}).items():
                for k in ("win_rate", "win_rate_low", "win_rate_high", "mean_reward"):
                    # a duel's mean score is DouZero's ADP: named so in metrics.json
                    m[f"{'adp' if 'adp' in r and k == 'mean_reward' else k}/{opp}/{role}"] = x[k]
                m[f"games/{opp}/{role}"] = x["games"]
            if "adp" in r:
                m[f"adp/{opp}"] = r["adp"]
        timing = evals[algo].get("timing", {})
        for k in ("train_seconds", "eval_seconds", "decisions_per_s"):
            if k in timing:
                m[k] = timing[k]
        for opp, r in valids[algo]["by_opp"].items():
            for k in ("win_rate", "win_rate_low", "win_rate_high"):
                m[f"valid_{k}/{opp}"] = r[k]
            m[f"valid_games/{opp}"] = r["games"]
    if finals:
        metrics["best_learner"] = choose_best({a: v["by_opp"] for a, v in valids.items()})
        metrics["selection"] = {
            "chosen_on": "validation", "criterion": "mean win rate over the baselines",
            "validation_deal_seed": next(iter(valids.values()))["deal_seed"], "evaluation_deal_seed": params.seeds.seed,
            "validation_mean_win_rate": {a: _mean_rate(v["by_opp"]) for a, v in valids.items()},
            "evaluation_mean_win_rate": {a: _mean_rate(f) for a, f in finals.items()}}
    figure_paths = _plot_curves(curves, opponents, figs, game) if curves else []
    if finals:
        figure_paths.append(_plot_final(finals, opponents, figs, game))
    optuna_lines, optuna_info = _optuna_section(params, game)
    if optuna_info:
        metrics["tune"] = {k: v for k, v in optuna_info.items() if k != "importances"}

    from climbrl.evaluate.baselines_report import games_per_deal

    n, g = game.players, params.evaluate.games
    per = games_per_deal(params.game, params.rules)  # games per deal
    duel = any(e.get("protocol") == "duel" for e in evals.values())
    scale = (f"normalized = win rate / {game.chance:g} (random play = 1.0)" if game.chance is not None else
             f"a team game: every deal is played from every seat, and the table by role gives each role's win "
             f"rate and mean score ({', '.join(game.roles)})")
    protocol = (f"{g} games ({g // per} versioned deals x {n} seats); win rates with 95% Wilson intervals; {scale}"
                if not duel else
                f"DouZero's protocol: each of {g // per} versioned deals played twice, the learner as landlord against "
                f"two copies of the baseline, then as both peasants against it ({g} games); WP (win "
                "rate) with its 95% interval (Wilson by role; over both roles, Student t on the per-deal values) and "
                "ADP, DouZero's average difference in points (+/-2 x 2^bombs per game), with its 95% interval")
    md = [f"# {params.raw.get('report', {}).get('title', 'climbrl report')}", "",
          ("" if game.name == "big2" else f"Game: {game.title}. ") +
          f"Rules: `{params.rules}`. Every learner: {_budget(params)}. Final evaluation: each "
          f"learner's greedy policy against {game.copies()} of each baseline, {protocol}. Generated by "
          "`dvc repro` (stage `report`).", ""]
    if finals:
        selection = _selection_lines(valids, finals, opponents, metrics, game)  # sets metrics["best_learner"]
        md += _rlcard_target_lines(finals, reports, metrics)  # the headline, when the study has one
        norm_head = " | normalized (" + ", ".join(opponents) + ")" if game.free_for_all else ""
        md += ["## Final comparison", "", f"On the evaluation deals (seed {params.seeds.seed}).", "",
               "| learner | " + " | ".join(game.vs(o) for o in opponents) +
               norm_head + " | training time | decisions/s |",
               "|---|" + "---|" * len(opponents) + "---|" * game.free_for_all + "---|---|"]
        for algo in finals:
            norm = (" | " + ", ".join(f"{finals[algo][o]['normalized_win_rate']:.2f}" for o in opponents)
                    if game.free_for_all else "")
            t = evals[algo].get("timing", {})
            secs = t.get("train_seconds", math.nan) + t.get("eval_seconds", 0.0)
            md.append(f"| {algo} | " + " | ".join(_rate_cells(finals[algo], opponents)) + f"{norm} | "
                      f"{secs / 60:.1f} min | {t.get('decisions_per_s', math.nan):,.0f} |")
        md += [""]
        if not game.free_for_all:
            md += [*_role_lines(finals, opponents, game), ""]
        md += [*selection, ""]
        md += seeds_lines(params, reports, metrics["best_learner"])
        md += _deep_lines(evals, opponents, metrics, game)
        md += _deep_best_lines(reports, metrics)
        md += _auction_lines(reports, metrics)
    baselines = reports / "baselines.md"
    if baselines.exists():
        md += ["## Baselines", "", baselines.read_text().split("\n\n", 2)[-1], ""]
    md += ["## Figures", ""] + [f"![{p.stem}](figures/{p.name})" for p in figure_paths] + [""]
    tour = reports / "tournament.json"
    if tour.exists():
        t = json.loads(tour.read_text())
        heat = reports / "tournament_pairwise.png"
        if heat.exists():
            figure_paths.append(heat)
    if (reports / "auction.json").exists() and (reports / "auction_calibration.png").exists():
        figure_paths.append(reports / "auction_calibration.png")
    if tour.exists() and t.get("protocol") == "round_robin":
        from climbrl.evaluate.roundrobin import format_round_robin

        md += ["## Round robin", "", f"The practice guide's round robin of {len(t['participants'])} participants "
               f"(the learners, kept snapshots, the rule agents and RLCard's rule agent): every pair in DouZero's "
               f"duel on the same {t['deals']} deals, each playing every deal once as landlord and once as the "
               f"peasants against the other ({t['games']} games). Rating: a Bradley-Terry (two-place "
               "Plackett-Luce) maximum-likelihood fit on all games at once (independent of their order), "
               "Elo-like scale, 95% bootstrap intervals over deals and games; WP as landlord, as peasants and "
               "overall, ADP over both roles; sorted by the rating. Below it, as the guide ranks: the total "
               "score (points over all games, with the ADP's 95% interval over the deals), how many pairs a "
               "clustered t test on the deals separates after Holm's correction over every pair, and the "
               "counter-chains (X beats Y beats Z beats X), significant only when all three of their pairs "
               "are. The heatmap shows the pairwise WP and ADP matrices.", "", "```", format_round_robin(t), "```",
               "",
               "![tournament_pairwise](tournament_pairwise.png)", ""]
        metrics["tournament"] = {r["participant"]: r["rating"] for r in t["leaderboard"]}
    elif tour.exists():
        md += _tournament_lines(t, params.learners(), n, game.free_for_all)
        metrics["tournament"] = {r["participant"]: r["rating"] for r in t["leaderboard"]}
    md += _ablation_lines(reports, figure_paths)
    beh = reports / "behaviour" / "behaviour.json"
    if beh.exists():
        from climbrl.evaluate.windows import window_markdown

        md += window_markdown(json.loads(beh.read_text()))
        for png in sorted((reports / "behaviour").glob("*.png")):
            figure_paths.append(png)
            md += [f"![{png.stem}](behaviour/{png.name})", ""]
    md += optuna_lines
    md += tune_lines(params, reports)
    md += stage_time_lines(reports)
    for study in params.studies:
        md += _study_summary_lines(study, reports / study, metrics)
    (reports / "report.md").write_text("\n".join(md))
    (reports / "metrics.json").write_text(json.dumps(metrics, indent=2, sort_keys=True) + "\n")
    (reports / "report.html").write_text(_html("\n".join(md), figure_paths, params))
    return reports / "report.md"


DUEL_ROLES = ("landlord", "peasants")


def _tournament_lines(t: dict[str, Any], learners: Sequence[str], n: int, free_for_all: bool) -> list[str]:
    """The tournament's section: its schedule and methods, the leaderboard, and one sentence on the
    learners against the others that says only what the Holm-adjusted rating differences support."""
    from climbrl.evaluate.tournament import format_leaderboard, group_verdict

    seats, ways = _word(n), math.factorial(n)
    results = ("all the finishing orders" if free_for_all else
               "all the results (the winning side ahead of the others, tied)")
    lines = ["## Tournament", "", f"Balanced round-robin of {seats}-seat games ({t['games']} games: every group of "
             f"{seats} plays each of the {t['deals']} deals once, in one of its {ways} seatings, the seatings "
             f"cycling with the deal, so that every {ways} deals seat each group in all {ways} ways, and every "
             "participant holds every seat's cards of a deal equally often, or as nearly as the groups allow). "
             f"Rating: a Plackett-Luce maximum-likelihood fit on {results} at once (independent of the order of the "
             "games), on an Elo-like scale (a lead of 200 points = finishing ahead 76% of the time), with 95% "
             "bootstrap intervals over "
             "deals and games; win rates and the pairwise matrix with 95% intervals clustered on the deals; sorted "
             "by the rating. A participant is *above* another where their rating difference, bootstrapped in "
             "pairs over the deals, is significant after Holm's correction over all pairs and its interval "
             "excludes 0; counter-chains are significant only where all three of their pairs are, after Holm's "
             "correction.", "", "```", format_leaderboard(t), "```", ""]
    group = [a for a in learners if a in t["participants"]]
    if group and len(group) < len(t["participants"]):
        lines += [group_verdict(t, group), ""]
    return lines + ["![tournament_pairwise](tournament_pairwise.png)", ""]


def duel_view(m: dict[str, Any]) -> dict[str, Any]:
    """A duel summary (:mod:`climbrl.evaluate.duel`, DouZero's protocol) with the fields of a match
    summary that the report reads: the learner's (side A's) win rate over both roles on top, and
    ``by_role`` for landlord and peasants, whose ``mean_reward`` is DouZero's ADP."""
    a = m["A"]
    view = {**m, "win_rate": a["both"]["win_rate"], "win_rate_low": a["both"]["win_rate_low"],
            "win_rate_high": a["both"]["win_rate_high"], "wins": a["both"]["wins"], "adp": a["both"]["adp"]}
    view["by_role"] = {r: {"games": a[r]["games"], "wins": a[r]["wins"], "win_rate": a[r]["win_rate"],
                           "win_rate_low": a[r]["win_rate_low"], "win_rate_high": a[r]["win_rate_high"],
                           "mean_reward": a[r]["adp"], "mean_reward_low": a[r]["adp_low"],
                           "mean_reward_high": a[r]["adp_high"]} for r in DUEL_ROLES}
    return view


def _with_duel_views(e: dict[str, Any]) -> dict[str, Any]:
    if e.get("protocol") == "duel":
        e = {**e, "matches": [duel_view(m) for m in e["matches"]]}
    return e


def _mean_rate(by_opp: dict[str, dict[str, Any]]) -> float:
    return sum(r["win_rate"] for r in by_opp.values()) / len(by_opp)


def choose_best(validation: dict[str, dict[str, dict[str, Any]]]) -> str:
    """The best learner: the highest mean win rate over the baselines on the VALIDATION deals
    (``{learner: {opponent: match summary}}``), never on the evaluation deals whose numbers the
    report presents as the result. Ties go to the first learner in params order."""
    if not validation:
        raise ValueError("no validation results to choose the best learner from")
    return max(validation, key=lambda a: _mean_rate(validation[a]))


def read_validation(reports: Path, learners: list[str]) -> dict[str, dict[str, Any]]:
    """Every evaluated learner's matches on the validation deals; one missing is an error (the
    winner would otherwise be chosen among the rest)."""
    out = {}
    for algo in learners:
        p = reports / "validation" / f"{algo}.json"
        if not p.exists():
            raise FileNotFoundError(f"{p}: no validation results for {algo}, whose evaluation exists; the evaluate "
                                    f"stage writes both (dvc repro evaluate@{algo})")
        v = _with_duel_views(json.loads(p.read_text()))
        out[algo] = {"deal_seed": v["deal_seed"], "by_opp": {m["opponents"][0]: m for m in v["matches"]}}
    return out


def _rate_cells(by_opp: dict[str, dict[str, Any]], opponents: Sequence[str]) -> list[str]:
    return [f"{r['win_rate']:.3f} [{r['win_rate_low']:.3f}, {r['win_rate_high']:.3f}] (n={r['games']})"
            for r in (by_opp[o] for o in opponents)]


def _role_lines(finals: dict[str, dict[str, dict[str, Any]]], opponents: Sequence[str], game: _Game) -> list[str]:
    """A team game's table by role: each learner's win rate and mean score in each role, per
    baseline, on the evaluation deals (the ``by_role`` of the match summaries)."""
    lines = ["## By role", "", "Each learner in each role, on the evaluation deals: win rate with its 95% Wilson "
             "interval and the number of games, then the mean score with its 95% interval.", "",
             "| learner | role | " + " | ".join(game.vs(o) for o in opponents) + " |",
             "|---|---|" + "---|" * len(opponents)]
    for algo, by_opp in finals.items():
        roles = list(dict.fromkeys(r for o in opponents for r in by_opp[o].get("by_role", {})))
        for role in roles:
            cells = []
            for o in opponents:
                x = by_opp[o].get("by_role", {}).get(role)
                cells.append("-" if x is None else
                             f"{x['win_rate']:.3f} [{x['win_rate_low']:.3f}, {x['win_rate_high']:.3f}] "
                             f"(n={x['games']}); score {x['mean_reward']:+.3f} "
                             f"{format_interval(x['mean_reward_low'], x['mean_reward_high'], '+.3f')}")
            lines.append(f"| {algo} | {role} | " + " | ".join(cells) + " |")
    return lines


def _selection_lines(valids: dict[str, dict[str, Any]], finals: dict[str, dict[str, dict[str, Any]]],
                     opponents: Sequence[str], metrics: dict[str, Any], game: _Game) -> list[str]:
    """The validation table, the winner and which deals chose it."""
    sel = metrics["selection"]
    games = next(iter(next(iter(valids.values()))["by_opp"].values()))["games"]
    eval_games = next(iter(next(iter(finals.values())).values()))["games"]
    lines = ["## Model selection (validation deals)", "",
             f"The winner was chosen on the validation deals (seed {sel['validation_deal_seed']}, {games} games "
             f"per baseline); the evaluation table above is reported on disjoint deals (seed "
             f"{sel['evaluation_deal_seed']}, {eval_games} games per baseline).", "",
             "| learner | " + " | ".join(game.vs(o) for o in opponents)
             + " | mean (validation) | mean (evaluation) |",
             "|---|" + "---|" * len(opponents) + "---|---|"]
    for algo, v in valids.items():
        lines.append(f"| {algo} | " + " | ".join(_rate_cells(v["by_opp"], opponents)) +
                     f" | {sel['validation_mean_win_rate'][algo]:.3f} | {sel['evaluation_mean_win_rate'][algo]:.3f} |")
    ranked = sorted(sel["validation_mean_win_rate"].items(), key=lambda kv: -kv[1])
    margin = f" (validation margin over {ranked[1][0]}: {ranked[0][1] - ranked[1][1]:.3f})" if len(ranked) > 1 else ""
    return lines + ["", f"Best learner (mean win rate over the baselines on the validation deals): "
                        f"**{metrics['best_learner']}**{margin}."]


def _ablation_lines(reports: Path, figure_paths: list[Path]) -> list[str]:
    """The ablations' tables and figures, copied from ``reports/ablations/ablations.md``.

    The ablations are a separate DVC pipeline (an hour of training, not part of ``make run``), so
    the report stage does not declare them as a dependency: that would pull them into every
    ``dvc repro``. The copy is therefore as of the report's last run; ``ablations.md`` itself is
    always current.
    """
    src = reports / "ablations" / "ablations.md"
    if not src.exists():
        return []
    lines = ["## Ablations", "", "Copied from [ablations/ablations.md](ablations/ablations.md) (`make ablations`, "
             "a separate DVC pipeline) when this report was generated.", ""]
    for line in src.read_text().splitlines()[1:]:
        if line.startswith("#"):
            line = "#" + line
        elif line.startswith("![") and "](" in line:
            name = line.split("](")[1].rstrip(")")
            figure_paths.append(src.parent / name)
            line = line.replace(f"]({name})", f"](ablations/{name})")
        lines.append(line)
    return lines + [""]


def _deep_lines(evals: dict[str, dict[str, Any]], opponents: Sequence[str], metrics: dict[str, Any],
                game: _Game) -> list[str]:
    """The deep evaluation table (``evaluate.repeats`` > 1), when the evaluations hold one."""
    deep = {a: {d["opponents"][0]: d for d in e["deep"]} for a, e in evals.items() if e.get("deep")}
    if not deep:
        return []
    first = next(iter(next(iter(deep.values())).values()))
    if "spread" in first:
        return _deep_duel_lines(deep, opponents, metrics)
    lines = ["## Deep evaluation", "",
             f"Each final policy again on {first['repeats']} fresh deal sets of {first['games_per_repeat']} games "
             "per baseline: mean +- standard deviation of the win rate over the repeats, then the pooled win rate "
             "with its 95% interval.", "",
             "| learner | " + " | ".join(game.vs(o) for o in opponents) + " |", "|---|" + "---|" * len(opponents)]
    for algo, by_opp in deep.items():
        cells = []
        for o in opponents:
            d = by_opp.get(o)
            cells.append("-" if d is None else f"{d['win_rate_mean']:.3f} +- {d['win_rate_std']:.3f}; pooled "
                         f"{d['pooled_win_rate']:.3f} [{d['pooled_low']:.3f}, {d['pooled_high']:.3f}] "
                         f"(n={d['pooled_games']})")
            if d is not None:
                metrics["learners"][algo][f"deep_mean/{o}"] = d["win_rate_mean"]
                metrics["learners"][algo][f"deep_std/{o}"] = d["win_rate_std"]
        lines.append(f"| {algo} | " + " | ".join(cells) + " |")
    return lines + [""]


RLCARD = "rlcard-rule"
RLCARD_README = {"landlord": 0.454, "peasants": 0.546}
"""RLCard's rule agent against itself in RLCard's own environment, 1000 deals (its landlord won 454):
``shared/external/doudizhu/README.md`` (measured.json, ``rule_vs_rule``)."""


def _deep_vs(reports: Path, learner: str, opponent: str) -> dict[str, Any] | None:
    """The pooled deep evaluation (``reports/deep.json``) of ``learner`` against ``opponent``, by
    side and role, when the deep stage evaluated that learner against it."""
    path = reports / "deep.json"
    if not path.exists():
        return None
    d = json.loads(path.read_text())
    if d.get("learner") != learner:
        return None
    m = next((m for m in d.get("matches", []) if m.get("opponents") == [opponent]), None)
    return None if m is None else {**m["pooled"], "deals": d["repeats"] * d["deals_per_repeat"]}


def _rlcard_target_lines(finals: dict[str, dict[str, dict[str, Any]]], reports: Path,
                         metrics: dict[str, Any]) -> list[str]:
    """Issue 13's strength target, the study's headline: the best learner (chosen on the
    validation deals) against RLCard's rule agent, as landlord and as the peasants, next to
    RLCard's rule agent against itself: a better landlord and a better peasant pair than it when
    the learner's lower 95% bound is above rule-vs-rule's WP (RLCard's README, and the same duel on
    this project's deals in the baseline table). The verdict is read on the deep evaluation's fresh
    deals when the ``deep`` stage ran (issue 29: its many games on deals that chose nothing lead),
    else on the evaluation deals; the other figure stands beside it."""
    best = metrics.get("best_learner")
    if not best or RLCARD not in finals.get(best, {}) or "A" not in finals[best][RLCARD]:
        return []
    duel = finals[best][RLCARD]
    deep = _deep_vs(reports, best, RLCARD)
    lead = deep or duel
    own = None
    base = reports / "baselines.json"
    if base.exists():
        rows = json.loads(base.read_text()).get("matches", [])
        own = next((r for r in rows if r.get("agent") == RLCARD and r.get("opponents") == [RLCARD] and "A" in r), None)
    where = (f"the deep evaluation's {deep['deals']:,} fresh deals ({2 * deep['deals']:,} games, below)" if deep
             else f"the evaluation deals ({duel['deals']} deals)")
    lines = ["## Headline: against RLCard's rule agent", "",
             f"The best learner, **{best}** (chosen on the validation deals), against RLCard's rule agent in DouZero's "
             f"protocol on {where}: WP by role against RLCard's rule agent playing itself, in RLCard's own "
             "environment (its README: 1000 deals) and here (the baseline table's duel of rlcard-rule against "
             "itself). The target is met in a role when the learner's lower 95% bound is above both rule-vs-rule WPs."
             + (f" The {duel['deals']} evaluation deals' figure stands beside it." if deep else ""), "",
             "| role | learner WP [95% CI] (games) | ADP [95% CI] | " + ("evaluation deals WP | " if deep else "")
             + "rule vs rule (RLCard README) | rule vs rule (here) | target met |",
             "|---|---|---|" + ("---|" if deep else "") + "---|---|---|"]
    target: dict[str, Any] = {"learner": best, "deals": lead["deals"], "on": "deep" if deep else "evaluation"}
    for role in DUEL_ROLES:
        x = lead["A"][role]
        here = own["A"][role] if own else None
        ref = max(RLCARD_README[role], here["win_rate"] if here else 0.0)
        met = x["win_rate_low"] > ref
        target[role] = {"win_rate": x["win_rate"], "win_rate_low": x["win_rate_low"],
                        "win_rate_high": x["win_rate_high"], "games": x["games"], "reference": ref, "met": met}
        here_cell = f"{here['win_rate']:.3f} (n={here['games']})" if here else "-"
        e = duel["A"][role]
        eval_cell = f"{e['win_rate']:.3f} [{e['win_rate_low']:.3f}, {e['win_rate_high']:.3f}] (n={e['games']}) | "
        lines.append(f"| {role} | {x['win_rate']:.3f} [{x['win_rate_low']:.3f}, {x['win_rate_high']:.3f}] "
                     f"(n={x['games']:,}) | {x['adp']:+.3f} {format_interval(x['adp_low'], x['adp_high'], '+.3f')} | "
                     + (eval_cell if deep else "") + f"{RLCARD_README[role]:.3f} | "
                     f"{here_cell} | {'yes' if met else 'no'} |")
    if deep:
        both = deep["A"]["both"]
        lines += ["", f"Over both roles: {both['win_rate']:.3f} [{both['win_rate_low']:.3f}, "
                  f"{both['win_rate_high']:.3f}] ({both['games']:,} games), ADP {both['adp']:+.3f}."]
        target["both"] = {k: both[k] for k in ("win_rate", "win_rate_low", "win_rate_high", "games")}
    metrics["rlcard_target"] = target
    return lines + [""]


def _deep_best_lines(reports: Path, metrics: dict[str, Any]) -> list[str]:
    """The deep evaluation of the best learner (``reports/deep.json``, the ``deep`` stage)."""
    path = reports / "deep.json"
    if not path.exists():
        return []
    d = json.loads(path.read_text())
    lines = ["## Deep evaluation of the best learner", "",
             f"The practice guide's deep evaluation: **{d['learner']}** (chosen on the validation deals) in "
             f"{d['repeats']} duels of {d['deals_per_repeat']} fresh deals each ({2 * d['deals_per_repeat']} games; "
             f"deal seeds {d['seed']}..{d['seed'] + d['repeats'] - 1}) against each opponent: WP and ADP by role, "
             "mean +- standard deviation over the repeats, then pooled over all of them with the 95% interval.", "",
             "| opponent | role | WP mean +- sd | pooled WP [95% CI] | ADP mean +- sd | pooled ADP [95% CI] |",
             "|---|---|---|---|---|---|"]
    out: dict[str, Any] = {"learner": d["learner"], "repeats": d["repeats"], "deals_per_repeat": d["deals_per_repeat"]}
    for m in d["matches"]:
        opp = m["opponents"][0]
        for role in (*DUEL_ROLES, "both"):
            x, p = m["spread"]["A"][role], m["pooled"]["A"][role]
            lines.append(f"| {opp} | {role} | {x['win_rate_mean']:.3f} +- {x['win_rate_std']:.3f} | "
                         f"{p['win_rate']:.3f} [{p['win_rate_low']:.3f}, {p['win_rate_high']:.3f}] | "
                         f"{x['adp_mean']:+.3f} +- {x['adp_std']:.3f} | "
                         f"{p['adp']:+.3f} {format_interval(p['adp_low'], p['adp_high'], '+.3f')} |")
            out.update({f"{k}/{opp}/{role}": x[k] for k in ("win_rate_mean", "win_rate_std", "adp_mean", "adp_std")})
    metrics["deep_best"] = out
    return lines + [""]


def _auction_lines(reports: Path, metrics: dict[str, Any]) -> list[str]:
    """The whole game's evaluation (``reports/auction.json``, the ``auction`` stage of a study
    under rules with an auction), summed up: per opponent, every agent's ADP, WP, how often it was
    the landlord and bid, its stake; the best learner against its own play model bidding by rule;
    the target's verdict. The whole tables: ``auction.md``."""
    from climbrl.evaluate.auction import estimate_text as iv

    path = reports / "auction.json"
    if not path.exists():
        return []
    a = json.loads(path.read_text())
    best = a["learner"]
    control = f"{best}-rule-bid"
    lines = ["## The whole game, auction included", "",
             f"Every learner bids with the bid model it learned beside its play model; **{best}** (chosen on the "
             f"validation deals) also bids by the heuristic's hand-strength rule with the same play model "
             f"(`{control}`). Each agent against two copies of each rule bidder on the same {a['decks']:,} fresh "
             f"decks (seed {a['seed']}), every deck from every seat ({3 * a['decks']:,} games an agent); ADP per game "
             "with its 95% t interval over the decks, WP with Wilson's. The bid models' calibration, the tables by "
             "role and by hand strength: [auction.md](auction.md).", "",
             "| opponent | agent | ADP per game | WP | landlord in | bid in | stake as landlord |",
             "|---|---|---|---|---|---|---|"]
    head: dict[str, Any] = {"learner": best, "decks": a["decks"], "target_met": a.get("target_met")}
    for opp, o in a["opponents"].items():
        for name, r in o["agents"].items():
            lines.append(f"| {opp} | {name} | {iv(r['adp'])} | {iv(r['wp'], 'rate', '.3f')} | "
                         f"{iv(r['landlord_rate'], 'rate', '.3f')} | {iv(r['bid_rate'], 'rate', '.3f')} | "
                         f"{iv(r['stake_as_landlord'], 'mean', '.2f')} |")
            head[f"adp/{opp}/{name}"] = r["adp"]["mean"]
            head[f"adp_low/{opp}/{name}"] = r["adp"]["low"]
            head[f"adp_high/{opp}/{name}"] = r["adp"]["high"]
            head[f"wp/{opp}/{name}"] = r["wp"]["rate"]
            head[f"bid_rate/{opp}/{name}"] = r["bid_rate"]["rate"]
    lines += ["", "What the learned bid model adds (paired on the decks, Holm over each opponent's pairs):", ""]
    for opp, o in a["opponents"].items():
        for c in o["contrasts"]:
            if {c["a_name"], c["b_name"]} == {best, control}:
                sign = 1 if c["a_name"] == best else -1
                d = {"mean": sign * c["difference"], "low": min(sign * c["low"], sign * c["high"]),
                     "high": max(sign * c["low"], sign * c["high"])}
                lines.append(f"- against `{opp}`: {best} - {control} = {iv(d)} ADP per game, p {c['p']:.2g} "
                             f"({'differs' if c['holm_significant'] else 'no difference shown'})")
                head[f"learned_minus_rule_bid/{opp}"] = d["mean"]
                for k, v in (("low", d["low"]), ("high", d["high"]), ("p", c["p"])):
                    head[f"learned_minus_rule_bid_{k}/{opp}"] = v
    if a.get("target_met") is not None:
        t = a["opponents"]["heuristic"]["agents"][best]["adp"]
        lines += ["", f"**Target** (issue 26: the learned bidder with the best play model beats the heuristic's bidder "
                      f"with the heuristic player in ADP per game, the interval above 0): "
                      f"{'met' if a['target_met'] else 'not met'} by {best}, ADP {iv(t)}."]
    if (reports / "auction_calibration.png").exists():  # embedded in the HTML with the tournament's heatmap
        lines += ["", "![auction_calibration](auction_calibration.png)"]
    metrics["auction"] = head
    return lines + [""]


def _study_summary_lines(study: str, folder: Path, metrics: dict[str, Any]) -> list[str]:
    """The main report's summary of a study beside it (its own report is ``folder/report.md``):
    its best learner against each baseline by role, and the target against RLCard's rule agent;
    ``metrics[study]`` holds the same headline numbers."""
    path = folder / "metrics.json"
    if not path.exists():
        return [f"## Study `{study}`", "", f"Not run yet (`dvc repro report@{study}`).", ""]
    sm = json.loads(path.read_text())
    best = sm.get("best_learner")
    learner = sm.get("learners", {}).get(best, {})
    title = sm.get("game", study)
    lines = [f"## The {title} study" + ("" if title == study else f" `{study}` (rules `{sm.get('rules')}`)"), "",
             f"Its own report: [`{folder.as_posix()}/report.md`]({folder.name}/report.md). Best learner (chosen on its "
             f"validation deals): **{best}**. On its evaluation deals, by role (WP with its 95% interval; ADP):", "",
             "| baseline | role | WP | ADP |", "|---|---|---|---|"]
    head: dict[str, Any] = {"best_learner": best, "rules": sm.get("rules")}
    for key in sorted(k for k in learner if k.startswith("win_rate/") and k.count("/") == 2):
        _, opp, role = key.split("/")
        lo, hi = learner.get(f"win_rate_low/{opp}/{role}"), learner.get(f"win_rate_high/{opp}/{role}")
        adp = learner.get(f"adp/{opp}/{role}", learner.get(f"mean_reward/{opp}/{role}"))
        lines.append(f"| {opp} | {role} | {learner[key]:.3f} [{lo:.3f}, {hi:.3f}] | {adp:+.3f} |")
        head[f"win_rate/{opp}/{role}"], head[f"win_rate_low/{opp}/{role}"] = learner[key], lo
        head[f"adp/{opp}/{role}"] = adp
    if "rlcard_target" in sm:
        t = sm["rlcard_target"]
        head["rlcard_target"] = t
        on = (f", on the deep evaluation's {t['deals']:,} fresh deals" if t.get("on") == "deep"
              else f", on {t['deals']} evaluation deals" if "deals" in t else "")
        lines += ["", f"**Headline**: against RLCard's rule agent{on} (target: lower bound above rule-vs-rule's "
                  "WP): " + "; ".join(
            f"{r} {t[r]['win_rate']:.3f} (lower bound {t[r]['win_rate_low']:.3f} vs {t[r]['reference']:.3f}: "
            f"{'met' if t[r]['met'] else 'not met'})" for r in DUEL_ROLES)]
    if "auction" in sm:
        a = sm["auction"]
        best = a["learner"]
        cells = [f"{best} {a[f'adp/heuristic/{best}']:+.3f} [{a[f'adp_low/heuristic/{best}']:+.3f}, "
                 f"{a[f'adp_high/heuristic/{best}']:+.3f}]"] if f"adp/heuristic/{best}" in a else []
        head["auction"] = a
        lines += ["", f"**The whole game, auction included** ({a['decks']:,} fresh decks x 3 seats against two "
                      "heuristic, ADP per game): " + ("; ".join(cells) or "not played against the heuristic")
                  + ("" if a.get("target_met") is None else
                     f"; issue 26's target (interval above 0) {'met' if a['target_met'] else 'not met'}") + "."]
    metrics[study] = head
    return lines + [""]


def _deep_duel_lines(deep: dict[str, dict[str, dict[str, Any]]], opponents: Sequence[str],
                     metrics: dict[str, Any]) -> list[str]:
    """The practice guide's deep evaluation of duels: WP and ADP mean +- standard deviation over the
    repeats, by role."""
    first = next(iter(next(iter(deep.values())).values()))
    lines = ["## Deep evaluation", "",
             f"Each final policy again on {first['repeats']} fresh deal sets of {first['deals_per_repeat']} deals "
             "(DouZero's protocol): WP and ADP, mean +- standard deviation over the repeats, by role.", "",
             "| learner | baseline | landlord WP | landlord ADP | peasants WP | peasants ADP |",
             "|---|---|---|---|---|---|"]
    for algo, by_opp in deep.items():
        for o in opponents:
            d = by_opp.get(o)
            if d is None:
                continue
            cells = []
            for role in DUEL_ROLES:
                x = d["spread"]["A"][role]
                cells += [f"{x['win_rate_mean']:.3f} +- {x['win_rate_std']:.3f}",
                          f"{x['adp_mean']:+.3f} +- {x['adp_std']:.3f}"]
                for k in ("win_rate_mean", "win_rate_std", "adp_mean", "adp_std"):
                    metrics["learners"][algo][f"deep_{k}/{o}/{role}"] = x[k]
            lines.append(f"| {algo} | {o} | " + " | ".join(cells) + " |")
    return lines + [""]


def seeds_lines(params: Params, reports: Path, best: str | None = None) -> list[str]:
    """Whether the best learner holds over training seeds, with a link, when ``make seeds`` has run
    this game (``reports/seeds/GAME/report.json`` beside the main study's reports; nothing
    otherwise): one training per learner is one trajectory (issue 32). Not a DVC dependency of the
    report stage, as the tuning report is not: DVC would then run the seed study inside ``make run``;
    the main report takes a new verdict up when it next runs."""
    folder = (reports.parent if params.study else reports) / "seeds" / params.game
    try:
        entry = json.loads((folder / "report.json").read_text())["games"][params.game]
        verdict, seeds = entry["verdict"]["text"], entry["seeds"]
        choice, study_seed = entry["selection"]["study_choice"], entry["study_seed"]
        spec = entry.get("study")  # the params spec the seeds ran (absent in older reports: the game's one study)
    except (OSError, ValueError, KeyError, TypeError):
        return []
    if spec is not None and str(spec).partition("#")[2] != (params.study or ""):
        return []  # the seeds ran another study of this game (another setting)
    link = f"../seeds/{params.game}/report.md" if params.study else f"seeds/{params.game}/report.md"
    return ["## The best learner over training seeds (`make seeds`)", "",
            f"Every contender trained for seeds {', '.join(map(str, seeds))} and chosen on the validation deals "
            f"as above (the seeds' own runs, on the machine that ran them): {verdict}. Per seed and over seeds, with "
            f"the paired contrasts: [{link}]({link})."
            + ("" if best in (None, choice) else
               f" Its run of seed {study_seed}, this study's own config and seed, chose {choice} where this report's "
               f"run chose {best}: the same run on another math path is another trajectory."), ""]


def tune_lines(params: Params, reports: Path) -> list[str]:
    """The tuning report's headline for this study's game, with a link to it, when ``make tune``
    has written it (``reports/tune/report.json`` beside the main study's reports; nothing
    otherwise)."""
    folder = (reports.parent if params.study else reports) / "tune"
    path = folder / "report.json"
    if not path.exists():
        return []
    try:
        entry = json.loads(path.read_text())["games"][params.game]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    link = "../tune/report.md" if params.study else "tune/report.md"
    text = entry.get("headline")
    # the tuning ran on one study of the game (its params spec, e.g. params.yaml#doudizhu): another
    # study of the same game quotes its headline but has adopted nothing
    tuned_study = str(entry.get("study") or "").partition("#")[2]
    adopted = [a for a in entry.get("adopted") or [] if isinstance(a, str)] if tuned_study == (params.study or "") \
        else []
    return ["## Hyperparameter tuning (`make tune`)", "",
            (f"{text}." if text else "The studies ran; the full-budget comparison has not run yet.")
            + (f" This study trains the tuned config of {', '.join(adopted)} (adopted on that evidence)."
               if adopted else "")
            + f" Trials, importances, figures and the tuned configurations: [{link}]({link}).", ""]


def _budget(params: Params) -> str:
    c = next(iter(params.train.values()), None)
    if c is None:
        return "no learners configured"
    return (f"{c.epochs} epochs x {c.games_per_epoch} self-play games ({c.curriculum}), evaluated every "
            f"{c.eval_every} epochs with {c.eval_games} games against each of {', '.join(c.eval_opponents)}")


def _inline(text: str) -> str:
    """Escaped text with Markdown's inline ``**bold**``, `` `code` `` and ``[text](relative link)`` as
    HTML (a link to another of the generated reports; an address with a scheme stays text)."""
    out = html.escape(text)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\[([^\]]+)\]\(([^():\s]+)\)", r'<a href="\2">\1</a>', out)
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", out)


def _html(markdown: str, figures: list[Path], params: Params) -> str:
    return html_page(markdown, figures, params.raw.get("report", {}).get("title", "climbrl report"))


def html_page(markdown: str, figures: list[Path], title: str) -> str:
    """A minimal Markdown-to-HTML rendering (headings, tables, paragraphs, bold, inline code)
    with embedded PNGs: a page that works offline (the tuning report renders through it too)."""
    body: list[str] = []
    table: list[list[str]] = []

    def flush_table() -> None:
        if table:
            head, *rows = table
            body.append("<table><tr>" + "".join(f"<th>{_inline(c)}</th>" for c in head) + "</tr>"
                        + "".join("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in r) + "</tr>" for r in rows)
                        + "</table>")
            table.clear()

    images = {p.name: base64.b64encode(p.read_bytes()).decode() for p in figures}
    code: list[str] | None = None
    for line in markdown.splitlines():
        if line.startswith("```"):
            if code is None:
                flush_table()
                code = []
            else:
                body.append("<pre>" + html.escape("\n".join(code)) + "</pre>")
                code = None
            continue
        if code is not None:
            code.append(line)
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not all(set(c) <= {"-", ":"} for c in cells):
                table.append(cells)
            continue
        flush_table()
        if line.startswith("#"):
            level = len(line) - len(line.lstrip("#"))
            body.append(f"<h{level}>{_inline(line.lstrip('#').strip())}</h{level}>")
        elif line.startswith("![") and "](" in line:
            name = line.split("](")[1].rstrip(")").split("/")[-1]
            if name in images:
                body.append(f'<p><img alt="{html.escape(name)}" src="data:image/png;base64,{images[name]}"></p>')
        elif line.strip():
            body.append(f"<p>{_inline(line)}</p>")
    flush_table()
    title = html.escape(title)
    style = ("body{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em}"
             "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;"
             "font-size:13px}img{max-width:100%}")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title><style>{style}</style>"
            f"</head><body>{''.join(body)}</body></html>\n")
