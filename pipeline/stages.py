"""The pipeline's stage logic as plain functions (tested without Prefect; the flows wrap them).

Paths (relative to the repository root):
  data/eval_seeds.json            versioned evaluation deal set (DVC-cached)
  data/valid_seeds.json           versioned validation deal set, disjoint from it (DVC-cached)
  runs/<algo>/                    checkpoint.pt, policy.pt, metrics.csv (DVC-cached)
  reports/curves/<algo>.csv       learning curves (DVC plots, committed)
  reports/eval/<algo>.json        final evaluation against the baselines (committed)
  reports/validation/<algo>.json  the same matches on the validation deals: they choose the best learner
  reports/behaviour/              the interpretability window (committed)
  reports/metrics.json            the headline numbers (DVC metrics, committed)
  reports/report.md, .html        the generated report (committed)

The game is ``params.game`` (``game:`` in params.yaml, default big2) under ``params.rules``: every
match, deep evaluation, tournament and training plays it, with its number of seats. The JSON of a
Big 2 run is as it always was; another game's evaluation files also name the game at the top
(``"game": "doudizhu"``; every match summary names it in any case, and a team game's holds its
per-role results, ``by_role``). The interpretability window is the game's own
(:mod:`climbrl.evaluate.windows`: Big 2 and Dou Dizhu); for a game without one the behaviour
stage still writes ``reports/behaviour/behaviour.json`` (DVC expects the stage's output), saying
that the window is not available for that game, and the report says so.
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from climbrl.agents.runner import load_deal_seeds
from climbrl.params import Params, load_params

SEEDS = Path("data/eval_seeds.json")
VALID_SEEDS = Path("data/valid_seeds.json")
RUNS = Path("runs")
REPORTS = Path("reports")


@dataclass(frozen=True)
class StudyPaths:
    """Where a study's files live: the main study's at the paths above, a study beside it
    (``studies.NAME`` in params.yaml) in folders of its name: ``data/NAME/``, ``runs/NAME/``,
    ``reports/NAME/``."""

    seeds: Path
    valid_seeds: Path
    runs: Path
    reports: Path


def study_paths(params: Params) -> StudyPaths:
    if not params.study:
        return StudyPaths(SEEDS, VALID_SEEDS, RUNS, REPORTS)
    data = Path("data") / params.study
    return StudyPaths(data / SEEDS.name, data / VALID_SEEDS.name, RUNS / params.study, REPORTS / params.study)


def stage_key(params: Params, algo: str) -> str:
    """A learner's key in dvc.yaml's per-learner stages: ``ppo`` (main study), ``doudizhu-ppo``."""
    return f"{params.study}-{algo}" if params.study else algo


def algorithm(params: Params, learner: str) -> str:
    """The learning algorithm of a study's learner (``ppo_handsplit`` -> ``ppo``): its runs' ``algo``
    tag, beside the learner's id (``variant``) and the game (:func:`climbrl.track.learner_tags`)."""
    cfg = params.train.get(learner)
    return cfg.algo if cfg else learner


def learner_file(params: Params, algo: str, path: Path, what: str, stage: str) -> Path:
    """``path``, a file of learner ``algo`` (its policy, evaluation or validation results) that a
    later stage needs. Missing, it is an error naming the file and the stage that writes it: a
    learner left out quietly would change the result (the best learner chosen among the rest, a
    tournament or a report without it)."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: no {what} for {algo}, a learner of the study; the {stage} stage "
                                f"writes it (dvc repro {stage}@{stage_key(params, algo)})")
    return path


def make_seeds(params: Params, out: Path | None = None, valid_out: Path | None = None) -> Path:
    """The evaluation deal set and the validation deal set, checked disjoint before either is written
    (at the study's paths unless given). Each is drawn for its own purpose (``"evaluation"``,
    ``"validation"``: :data:`climbrl.agents.runner.PURPOSES`), so neither shares a deal with the
    other or with any other purpose's deals, whatever the seeds."""
    from climbrl.evaluate.match import deal_seeds

    paths = study_paths(params)
    out, valid_out = out or paths.seeds, valid_out or paths.valid_seeds
    s = params.seeds
    evaluation = deal_seeds(s.seed, s.deals, "evaluation")
    validation = deal_seeds(s.validation_seed, s.validation_deals, "validation")
    check_disjoint(evaluation, validation)
    for path, seed, purpose, deals in ((out, s.seed, "evaluation", evaluation),
                                       (valid_out, s.validation_seed, "validation", validation)):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"seed": seed, "purpose": purpose, "deals": deals}))
    return out


def load_seeds(path: Path = SEEDS) -> list[int]:
    return load_deal_seeds(path)


def check_disjoint(evaluation: list[int], validation: list[int]) -> None:
    """The deals that choose the winner must not be among those that report its result."""
    shared = set(evaluation) & set(validation)
    if shared:
        raise ValueError(f"the validation deals share {len(shared)} deal seed(s) with the evaluation deals "
                         f"(e.g. {min(shared)}): choose another seeds.validation_seed")


def write_curve(history: list[dict[str, Any]], path: Path) -> None:
    """Learning curve for DVC plots: one row per evaluation, win rate and bounds per opponent."""
    rows = [{k: v for k, v in r.items() if k == "epoch" or k.startswith(("win_rate", "loss/"))}
            for r in history if any(k.startswith("win_rate/") for k in r)]
    path.parent.mkdir(parents=True, exist_ok=True)
    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols or ["epoch"])
        w.writeheader()
        w.writerows(rows)


def _players(params: Params) -> int:
    from climbrl.games.registry import num_players

    return num_players(params.game)


def _duel_game(params: Params) -> bool:
    """Whether the study's game is judged by DouZero's protocol (:mod:`climbrl.evaluate.duel`): a
    team game whose rules fix the landlord's seat (:func:`climbrl.evaluate.baselines_report.duel_rules`,
    which the baseline table and the CI gate ask too). Its evaluation matches are then duels (one per
    opponent: every deal with the learner as landlord against two copies of the opponent, and as
    both peasants against it), ``"protocol": "duel"`` in the JSON; an auction's roles come from
    the bids, so such rules keep the seat-rotation match (``by_role``)."""
    from climbrl.evaluate.baselines_report import duel_rules

    return duel_rules(params.game, params.rules)


def _game_key(params: Params) -> dict[str, str]:
    """``{"game": ...}`` at the top of a stage's JSON, for a game other than Big 2 (whose files
    keep the layout they had before the second game)."""
    return {} if params.game == "big2" else {"game": params.game}


def train_learner(params: Params, algo: str, track: bool = True, resume: bool = True,
                  params_path: str | Path = "params.yaml") -> dict[str, Any]:
    """Train one learner (resuming a killed run), write its curve. Tracked, the MLflow run is open
    while it trains: every epoch is logged as it ends (:func:`climbrl.track.training_run`)."""
    from climbrl.learn.train import CHECKPOINT, METRICS, POLICY
    from climbrl.training import train

    if algo not in params.train:
        raise ValueError(f"train.{algo}: not configured in params.yaml")
    cfg = params.train[algo]
    paths = study_paths(params)
    out = paths.runs / algo
    params_path = params_file(params_path)
    start = time.perf_counter()
    if track:
        from climbrl import track as tr
        from climbrl.evaluate.match import deal_seeds

        tr.configure(params.tracking.tracking_uri, params.tracking.experiment)
        inputs = []
        if Path(params_path).exists():
            # the in-training evaluations' deals derive from the params file's eval_seed (as in run_match)
            inputs = [(tr.params_file_input(params_path), "params"),
                      (tr.deals_input(deal_seeds(cfg.eval_seed, cfg.eval_games // cfg.num_players, "train-eval"),
                                      f"eval-deals-seed{cfg.eval_seed}", params_path), "evaluation")]
        with tr.training_run(cfg.to_dict(), out, inputs=inputs, artifacts=[out / POLICY, out / METRICS],
                             resuming=resume and (out / CHECKPOINT).exists(), learner=algo) as run:
            res = train(cfg, out, resume=resume, progress=False, on_epoch=run.on_epoch)
            run.complete(res["history"])
    else:
        res = train(cfg, out, resume=resume, progress=False)
    res["wall_seconds"] = time.perf_counter() - start
    write_curve(res["history"], paths.reports / "curves" / f"{algo}.csv")
    timing = {"algo": algo, "train_seconds": res["train_seconds"], "eval_seconds": res["eval_seconds"],
              "decisions": sum(r["decisions"] for r in res["history"]),
              "decisions_per_s": sum(r["decisions"] for r in res["history"])
              / max(1e-9, sum(r["play_seconds"] for r in res["history"]))}
    (out / "timing.json").write_text(json.dumps(timing, indent=2))
    return res


def evaluate_learner(params: Params, algo: str, track: bool = True,
                     params_path: str | Path = "params.yaml") -> dict[str, Any]:
    """The trained policy against a copy of each baseline in every other seat on the versioned
    evaluation deals (reports/eval, the reported result) and on the disjoint validation deals
    (reports/validation, which choose the best learner). ``evaluate.games`` counts the games
    played per opponent: deals x seats, or deals x 2 under DouZero's protocol."""
    from climbrl.evaluate.baselines_report import games_per_deal
    from climbrl.evaluate.duel import team_match
    from climbrl.evaluate.match import run_match

    started = time.time()
    n = games_per_deal(params.game, params.rules)  # games per deal
    paths = study_paths(params)
    params_path = params_file(params_path)
    seeds, valid_seeds = load_seeds(paths.seeds), load_seeds(paths.valid_seeds)
    check_disjoint(seeds[:params.evaluate.games // n], valid_seeds)
    policy = paths.runs / algo / "policy.pt"

    duel = _duel_game(params)

    def play(deals: list[int], games: int, seed: int) -> list[dict[str, Any]]:
        if duel:  # DouZero's protocol: every deal once with the learner as landlord, once as the peasants
            matches = [team_match(f"checkpoint:{policy}", opp, game=params.game, rules=params.rules,
                                  deals=games // n, seed=seed, workers=params.evaluate.workers, seeds=deals,
                                  per_deal=False) | {"opponents": [opp]}
                       for opp in params.evaluate.opponents]
        else:
            matches = [run_match(f"checkpoint:{policy}", [opp], rules=params.rules, games=games,
                                 workers=params.evaluate.workers, seed=seed, seeds=deals, game=params.game)
                       for opp in params.evaluate.opponents]
        for m in matches:
            m["agent"] = algo
        return matches

    matches = play(seeds, params.evaluate.games, 0)
    vs = params.seeds
    validation = {"algo": algo, **_game_key(params), "rules": params.rules, "deal_seed": vs.validation_seed,
                  **({"protocol": "duel"} if duel else {}),
                  "matches": play(valid_seeds, n * vs.validation_deals, vs.validation_seed)}
    repeated = []
    if params.evaluate.repeats > 1:
        from climbrl.evaluate.deep import deep_duel, deep_evaluate

        # fresh deal sets (seeds 1..repeats, purpose "deep"), apart from the versioned ones
        if duel:
            repeated = [deep_duel(f"checkpoint:{policy}", opp, game=params.game, rules=params.rules,
                                  deals=params.evaluate.games // n, repeats=params.evaluate.repeats, seed=1,
                                  workers=params.evaluate.workers) | {"opponents": [opp]}
                        for opp in params.evaluate.opponents]
        else:
            repeated = [deep_evaluate(f"checkpoint:{policy}", [opp], rules=params.rules,
                                      games=params.evaluate.games, repeats=params.evaluate.repeats, seed=1,
                                      workers=params.evaluate.workers, game=params.game)
                        for opp in params.evaluate.opponents]
        for d in repeated:
            d["agent"] = algo
    timing_file = paths.runs / algo / "timing.json"
    timing = json.loads(timing_file.read_text()) if timing_file.exists() else {}
    result = {"algo": algo, **_game_key(params), "rules": params.rules, **({"protocol": "duel"} if duel else {}),
              "matches": matches, "timing": timing}
    if repeated:
        result["deep"] = repeated
    path = paths.reports / "eval" / f"{algo}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2) + "\n")
    valid_path = paths.reports / "validation" / f"{algo}.json"
    valid_path.parent.mkdir(parents=True, exist_ok=True)
    valid_path.write_text(json.dumps(validation, indent=2) + "\n")
    if track:
        from climbrl import track as tr

        tr.configure(params.tracking.tracking_uri, params.tracking.experiment)
        given = [(tr.params_file_input(params_path), "params")] if Path(params_path).exists() else []
        evaluation = (tr.deals_input(seeds, paths.seeds.name, paths.seeds), "evaluation")
        learner = {"game": params.game, "learner": algo}
        tr.log_evaluation(algorithm(params, algo), result, path, inputs=[evaluation, *given], started=started,
                          **learner)
        tr.log_evaluation(algorithm(params, algo), validation, valid_path, stage="validate", started=started,
                          inputs=[(tr.deals_input(valid_seeds, paths.valid_seeds.name, paths.valid_seeds),
                                  "validation"), *given], **learner)
    return result


def baselines(params: Params, workers: int = 2) -> dict[str, Any]:
    """The baseline table of the study's game (``baselines.games`` games per match from
    ``baselines.seed``): :func:`climbrl.evaluate.baselines_report.baselines_report`, written to
    the study's reports folder (baselines.json, baselines.md)."""
    from climbrl.evaluate.baselines_report import baselines_report, write_report

    b = params.raw.get("baselines", {})
    table = baselines_report(games=int(b.get("games", 1000)), seed=int(b.get("seed", 0)), workers=workers,
                             game=params.game, rules=params.rules)
    write_report(table, study_paths(params).reports)
    return table


def deep(params: Params, track: bool = True) -> dict[str, Any]:
    """The practice guide's deep evaluation (``deep:`` in the study's params): the best learner,
    chosen on the validation deals as the report chooses it (never on the deals it reports), in
    ``deep.repeats`` duels of ``deep.deals`` fresh deals against each of ``deep.opponents``: WP and
    ADP by role, mean +- standard deviation over the repeats, and pooled. Writes
    ``reports/<study>/deep.json``."""
    from climbrl.evaluate.deep import deep_duel

    started = time.time()
    if params.deep is None:
        raise ValueError("deep: the study has no deep section (deep: repeats, deals, opponents)")
    if not _duel_game(params):
        raise ValueError(f"deep: {params.game} under rules {params.rules!r} is not judged by duels "
                         "(a team game with a fixed landlord); use evaluate.repeats instead")
    paths = study_paths(params)
    best = best_learner(params)
    d = params.deep
    policy = learner_file(params, best, paths.runs / best / "policy.pt", "trained policy", "train")
    runs = [deep_duel(f"checkpoint:{policy}", opp, game=params.game, rules=params.rules, deals=d.deals,
                      repeats=d.repeats, seed=d.seed, workers=d.workers) | {"opponents": [opp]}
            for opp in d.opponents]
    result = {"learner": best, "chosen_on": "validation", "game": params.game, "rules": params.rules,
              "repeats": d.repeats, "deals_per_repeat": d.deals, "seed": d.seed, "matches": runs}
    out = paths.reports / "deep.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    if track:
        import mlflow

        from climbrl import track as tr

        tr.configure(params.tracking.tracking_uri, params.tracking.experiment)
        with tr.stage_run(tr.run_name("deep", params.game, best), started):
            for r in runs:
                opp = r["opponents"][0]
                for role, x in r["spread"]["A"].items():
                    for k in ("win_rate_mean", "win_rate_std", "adp_mean", "adp_std"):
                        mlflow.log_metric(f"{k}/{opp}/{role}", x[k])
            mlflow.set_tags({**tr.learner_tags(params.game, algorithm(params, best), best), "stage": "deep",
                             "git_commit": tr.git_commit()})
            mlflow.log_artifact(str(out))
    return result


def best_learner(params: Params) -> str:
    """The study's best learner, chosen on the validation deals as the report chooses it (never on
    the deals it reports); every learner must have its validation results (one left out would let
    the rest win)."""
    from climbrl.report import choose_best, read_validation

    paths = study_paths(params)
    for a in params.learners():
        learner_file(params, a, paths.reports / "validation" / f"{a}.json", "validation results", "evaluate")
    learners = read_validation(paths.reports, params.learners())
    return choose_best({a: v["by_opp"] for a, v in learners.items()})


def auction(params: Params, track: bool = True) -> dict[str, Any]:
    """The whole game of an auction study (``auction:`` in its params; issue 26): every learner
    bidding with the bid model it learned beside its play model, the best learner (chosen on the
    validation deals) also bidding by the heuristic's hand-strength rule with the same play model
    (the control that isolates what the learned bid model adds), and the heuristic itself, each
    against two copies of every ``auction.opponents`` (rule bidders) on the same fresh decks, every
    deck from every seat (:func:`climbrl.evaluate.auction_report.compare`): ADP and WP by role, the
    auction's rates and stakes, the paired contrasts, the bid models' calibration. Writes
    ``reports/<study>/auction.json``, ``auction.md`` and ``auction_calibration.png``."""
    import tempfile

    from climbrl.evaluate.auction_report import compare, plot_calibration, render, target_met
    from climbrl.learn.bidder_training import write_rule_bidder

    started = time.time()
    a = params.auction
    if a is None:
        raise ValueError("auction: the study has no auction section (auction: decks, seed, opponents)")
    paths = study_paths(params)
    best = best_learner(params)
    policies = {x: learner_file(params, x, paths.runs / x / "policy.pt", "trained policy", "train")
                for x in params.learners()}
    by_opp = {}
    with tempfile.TemporaryDirectory(prefix="climbrl-auction-") as tmp:
        rule_bid = Path(tmp) / f"{best}-rule-bid.pt"
        write_rule_bidder(policies[best], rule_bid)
        agents = {**{x: f"checkpoint:{p}" for x, p in policies.items()},
                  f"{best}-rule-bid": f"checkpoint:{rule_bid}", "heuristic": "heuristic"}
        for opp in a.opponents:
            by_opp[opp] = compare(agents, opp, params.rules, a.decks, a.seed, workers=a.workers)
            # the control's file lives only for this stage: name it by what it is
            by_opp[opp]["agents"][f"{best}-rule-bid"]["agent"] = f"checkpoint:{policies[best]} bidding by rule"
    result = {"learner": best, "chosen_on": "validation", "game": params.game, "rules": params.rules,
              "decks": a.decks, "seed": a.seed, "target": best,
              "target_met": target_met(by_opp["heuristic"], best) if "heuristic" in by_opp else None,
              "opponents": by_opp}
    out = paths.reports / "auction.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    plot_calibration(by_opp, paths.reports / "auction_calibration.png")
    md = ["# The whole game, auction included", "",
          f"Every learner of the study bids with the bid model it learned beside its play model (`bidding: learned`). "
          f"**{best}** (the best learner, chosen on the validation deals) also bids by the heuristic's hand-strength "
          f"rule with the same play model (`{best}-rule-bid`): the paired contrast of the two is what the learned bid "
          "model adds. The heuristic is the yardstick.", ""]
    for opp, o in by_opp.items():
        md += [f"## Against two `{opp}`", "", *render(o, level=3, target=best)]
    (paths.reports / "auction.md").write_text("\n".join(md) + "\n")
    if track:
        import mlflow

        from climbrl import track as tr

        tr.configure(params.tracking.tracking_uri, params.tracking.experiment)
        with tr.stage_run(tr.run_name("auction", params.game, best), started):
            for opp, o in by_opp.items():
                for name, r in o["agents"].items():
                    mlflow.log_metric(f"adp/{opp}/{name}", r["adp"]["mean"])
                    mlflow.log_metric(f"wp/{opp}/{name}", r["wp"]["rate"])
                    mlflow.log_metric(f"bid_rate/{opp}/{name}", r["bid_rate"]["rate"])
            mlflow.set_tags({**tr.learner_tags(params.game, algorithm(params, best), best), "stage": "auction",
                             "git_commit": tr.git_commit()})
            mlflow.log_artifact(str(out))
            mlflow.log_artifact(str(paths.reports / "auction.md"))
    return result


def snapshot_file(name: str) -> str:
    """``ppo@20`` -> ``epoch020.pt``: a learner's kept policy (``snapshots/`` of its run)."""
    algo, _, epoch = name.partition("@")
    if not algo or not epoch.isdigit():
        raise ValueError(f"tournament.snapshots: {name!r} is not ALGO@EPOCH (e.g. ppo@20)")
    return f"epoch{int(epoch):03d}.pt"


def tournament(params: Params, track: bool = True) -> dict[str, Any]:
    """Every trained learner and the rule agents in one balanced round-robin of the game's seats
    (rule agents by default: those that play the game, :data:`climbrl.config.GAME_SETUP`). A game
    judged by DouZero's protocol (:func:`_duel_game`) plays the practice guide's round robin
    instead (:func:`climbrl.evaluate.roundrobin.round_robin`: every pair in the duel on the same
    ``tournament.deals`` deals, pairwise WP and ADP matrices, an order-free rating), with the kept
    policies named in ``tournament.snapshots`` (``ALGO@EPOCH``) among the participants."""
    from climbrl.config import GAME_SETUP, TOURNAMENT_DEALS
    from climbrl.evaluate.tournament import plot_pairwise, run_tournament

    started = time.time()
    t = params.raw.get("tournament", {})
    rule_agents = t.get("rule_agents", list(GAME_SETUP[params.game].rule_agents))
    paths = study_paths(params)
    names = t.get("learners", params.learners())  # default: every learner of the study
    learners = [f"{a}=checkpoint:{learner_file(params, a, paths.runs / a / 'policy.pt', 'trained policy', 'train')}"
                for a in names]
    out = paths.reports / "tournament.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    if _duel_game(params):
        from climbrl.evaluate.roundrobin import plot_round_robin, round_robin

        snapshots = [f"{s.replace('@', '-epoch')}=checkpoint:"
                     + str(learner_file(params, s.partition("@")[0],
                                        paths.runs / s.partition("@")[0] / "snapshots" / snapshot_file(s),
                                        f"kept policy {s} (tournament.snapshots)", "train"))
                     for s in t.get("snapshots", [])]
        participants = dict(x.split("=", 1) for x in learners + snapshots) | {a: a for a in rule_agents}
        res = round_robin(participants, game=params.game, rules=params.rules, deals=int(t.get("deals", 100)),
                          seed=int(t.get("seed", 0)), workers=int(t.get("workers", 2)),
                          resamples=int(t.get("resamples", 200)))
        res["protocol"] = "round_robin"
        out.write_text(json.dumps(res, indent=2) + "\n")
        plot_round_robin(res, str(paths.reports / "tournament_pairwise.png"))
    else:
        res = run_tournament(learners + list(rule_agents), rules=params.rules,
                             deals=int(t.get("deals", TOURNAMENT_DEALS)), seed=int(t.get("seed", 0)),
                             workers=int(t.get("workers", 2)), game=params.game)
        out.write_text(json.dumps(res, indent=2) + "\n")
        plot_pairwise(res, str(paths.reports / "tournament_pairwise.png"))
    if track:
        import mlflow

        from climbrl import track as tr

        tr.configure(params.tracking.tracking_uri, params.tracking.experiment)
        with tr.stage_run(tr.run_name("tournament", params.game), started):
            for r in res["leaderboard"]:
                mlflow.log_metric(f"rating/{r['participant']}", r["rating"])
                mlflow.log_metric(f"win_rate/{r['participant']}", r["win_rate"])
            mlflow.set_tags({"stage": "tournament", "game": params.game, "git_commit": tr.git_commit()})
            mlflow.log_artifact(str(out))
    return res


def behaviour(params: Params, track: bool = True) -> dict[str, Any]:
    """The interpretability window: every learner's final policy and kept snapshots, and the
    reference rule agents, recorded over evaluation games on the versioned deals.

    The window is the game's (:mod:`climbrl.evaluate.windows`: Big 2's and Dou Dizhu's; a Dou
    Dizhu result names its game and rules at the top, Big 2's JSON is as it always was). For a game
    without one the stage does not fail, and does not skip its output (DVC would then report the
    stage's ``reports/behaviour`` missing and the report stage could not run): it writes
    ``behaviour.json`` saying that the window is not available for that game (``available:
    false``, a ``note``, no agents), which the report shows in place of the window."""
    from climbrl.evaluate.windows import GAMES, window

    started = time.time()
    if params.game not in GAMES:
        return _behaviour_unavailable(params, track, started)
    win = window(params.game)
    b = params.behaviour
    paths = study_paths(params)
    seeds = load_seeds(paths.seeds)

    def record(spec: str) -> dict[str, Any]:
        return win.record(spec, b.opponents, rules=params.rules, games=b.games, workers=b.workers, seeds=seeds,
                          game=params.game)

    agents: dict[str, Any] = {}
    checkpoints: dict[str, list[dict[str, Any]]] = {}
    for algo in params.learners():
        policy = learner_file(params, algo, paths.runs / algo / "policy.pt", "trained policy", "train")
        final = record(f"checkpoint:{policy}")
        agents[algo] = final
        final_epoch = params.train[algo].epochs
        points = []
        for snap in sorted((paths.runs / algo / "snapshots").glob("epoch*.pt")):
            epoch = int(snap.stem.removeprefix("epoch"))
            if epoch != final_epoch:
                points.append({"epoch": epoch, **record(f"checkpoint:{snap}")})
        checkpoints[algo] = points + [{"epoch": final_epoch, **final}]
    for spec in b.reference_agents:
        agents[spec] = record(spec)
    data = {"games_per_opponent": b.games, "opponents": list(b.opponents), "agents": agents,
            "checkpoints": checkpoints}
    if params.game != "big2":
        data = {"game": params.game, "rules": params.rules, **data}
    out = paths.reports / "behaviour"
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.png"):  # figures of an earlier game's run would otherwise pass for this one's
        old.unlink()
    (out / "behaviour.json").write_text(json.dumps(data, indent=2) + "\n")
    figures = win.plot(data, str(out))
    if track:
        import mlflow

        from climbrl import track as tr

        tr.configure(params.tracking.tracking_uri, params.tracking.experiment)
        with tr.stage_run(tr.run_name("behaviour", params.game), started):
            for name, s in agents.items():
                for metric, value in win.headline(s).items():
                    mlflow.log_metric(f"{metric}/{name}", value)
            mlflow.set_tags({"stage": "behaviour", "game": params.game, "git_commit": tr.git_commit()})
            mlflow.log_artifact(str(out / "behaviour.json"))
            for f in figures:
                mlflow.log_artifact(f)
    return data


def _behaviour_unavailable(params: Params, track: bool, started: float) -> dict[str, Any]:
    """The behaviour stage's output for a game without a window (its MLflow run from ``started``)."""
    from climbrl.config import GAME_SETUP
    from climbrl.evaluate.windows import GAMES

    data = {"game": params.game, "rules": params.rules, "available": False,
            "note": f"The interpretability window is not available for {GAME_SETUP[params.game].title} yet: it "
                    f"reads {', '.join(GAME_SETUP[g].title for g in GAMES)} games only (their own move types).",
            "agents": {}, "checkpoints": {}}
    out = study_paths(params).reports / "behaviour"
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.png"):  # figures of an earlier game's run would otherwise pass for this one's
        old.unlink()
    (out / "behaviour.json").write_text(json.dumps(data, indent=2) + "\n")
    if track:
        import mlflow

        from climbrl import track as tr

        tr.configure(params.tracking.tracking_uri, params.tracking.experiment)
        with tr.stage_run(tr.run_name("behaviour", params.game), started):
            mlflow.set_tags({"stage": "behaviour", "game": params.game, "available": "false",
                             "git_commit": tr.git_commit()})
            mlflow.log_artifact(str(out / "behaviour.json"))
    return data


def report(params: Params, track: bool = True) -> Path:
    """The generated report (Markdown, self-contained HTML, PNG figures) and metrics.json."""
    from climbrl.report import build_report

    paths = study_paths(params)
    out = build_report(params, paths.reports, paths.runs)
    if track:
        from climbrl import track as tr

        metrics = json.loads((paths.reports / "metrics.json").read_text())
        best = metrics.get("best_learner")
        if best:
            policy = learner_file(params, best, paths.runs / best / "policy.pt", "trained policy", "train")
            tr.configure(params.tracking.tracking_uri, params.tracking.experiment)
            flat = {k: v for k, v in metrics.get("learners", {}).get(best, {}).items() if isinstance(v, float)}
            tr.register_policy(policy, params.tracking.register_model, algorithm(params, best), flat,
                               game=params.game, learner=best)
    return out


def params(path: str = "params.yaml") -> Params:
    """The params of a params spec: ``params.yaml`` (the main study) or ``params.yaml#STUDY``."""
    return load_params(path)


def params_file(spec: str | Path) -> Path:
    """The file of a params spec (``params.yaml#doudizhu`` -> ``params.yaml``)."""
    from climbrl.params import split_spec

    return split_spec(spec)[0]
