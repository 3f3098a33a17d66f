"""The pipeline plays the game of params.yaml: Dou Dizhu's stages end to end at a tiny budget.

``game: doudizhu`` (RLCard's rules: seat 0 is the landlord, so every deal is played once in each
role): seeds, training, evaluation (with deep evaluation), tournament, behaviour (Dou Dizhu's own
interpretability window), the baseline
table, the Optuna objective and the report, each on three seats, with the game named in the
outputs and a team game's per-role results (``by_role``) carried through to metrics.json and the
report. Big 2's outputs are unchanged by the same code (tests/test_pipeline.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pipeline import stages

from climbrl.config import GAME_SETUP
from climbrl.params import ParamsError, load_params, parse_params
from tests.study_params import study_folder, with_value

DUEL_ROLES = {"landlord", "peasants", "both"}

DDZ = {
    "game": "doudizhu",
    "rules": "rlcard",
    "seeds": {"deals": 12, "seed": 1, "validation_deals": 2, "validation_seed": 7},
    "train": {
        "common": {"epochs": 2, "games_per_epoch": 6, "eval_every": 1, "eval_games": 6, "hidden": 32,
                   "minibatch_decisions": 64, "keep_policy_every": 1},
        "ppo": {},
    },
    "evaluate": {"games": 4, "opponents": ["random", "greedy"], "workers": 1, "repeats": 2},
    "tournament": {"deals": 1, "seed": 0, "workers": 1, "rule_agents": ["random", "greedy"], "snapshots": ["ppo@1"],
                   "resamples": 10},
    "tune": {"algo": "ppo", "trials": 1, "epochs": 1, "games_per_epoch": 3, "eval_every": 1, "eval_games": 6,
             "seed": 0, "storage": "sqlite:///optuna.db", "study": "t", "pruner": "none"},
    "report": {"title": "small Dou Dizhu study"},
    "deep": {"repeats": 2, "deals": 1, "opponents": ["random"], "seed": 100, "workers": 1},
    "tracking": {"tracking_uri": "sqlite:///mlflow.db", "experiment": "ddz", "register_model": "ddz-best"},
}


def test_dou_dizhu_params_take_the_game_s_defaults_and_sizes() -> None:
    p = parse_params(DDZ)
    assert p.game == "doudizhu" and p.rules == "rlcard"
    assert p.train["ppo"].game == "doudizhu" and p.train["ppo"].eval_opponents == ("random", "greedy", "heuristic")
    assert p.train["ppo"].pool_rule_agents == ("aggressive", "conservative")  # the practice guide's pool
    assert p.tune.opponent == "heuristic"  # the Dou Dizhu setup's default (config.GAME_SETUP)
    assert p.behaviour.opponents == p.behaviour.reference_agents == ("random", "greedy", "heuristic")
    assert p.behaviour.games == 300
    big2 = load_params(Path(__file__).resolve().parents[1] / "params.yaml")
    assert big2.game == "big2" and big2.tune.opponent == "heuristic" and big2.behaviour.games == 400
    for path, value, message in [
        (("tune", "opponent"), "charlesworth", "tune.opponent: agent 'charlesworth' plays big2 only"),
        (("tune", "eval_games"), 4, "tune.eval_games: must be a multiple of 3"),
        # the duel plays every deal twice: evaluate.games counts those games (issue 29: 1500 played 1000)
        (("evaluate", "games"), 9, r"evaluate.games: must be a multiple of 2 \(every deal played twice"),
        (("evaluate", "games"), 26, "evaluate.games: 26 games are 13 deals x 2 .*; seeds.deals holds 12"),
        (("baselines", "games"), 9, "baselines.games: must be a multiple of 2"),
        (("behaviour", "games"), 8, "behaviour.games: must be a multiple of 3"),
        (("tournament", "rule_agents"), ["random", "charlesworth"], "tournament.rule_agents: agent 'charlesworth'"),
        (("rules",), "paper", "rules: unknown doudizhu rules preset 'paper'"),
    ]:
        with pytest.raises(ParamsError, match=message):
            parse_params(with_value(DDZ, path, value))


def test_the_study_s_evaluate_games_are_the_games_it_plays() -> None:
    """Issue 29, section 9: ``evaluate.games: 1500`` played 1000 games (500 decks x 3 seats, but the
    duel plays a deck twice). The games count the games played, two per deck under the duel."""
    p = load_params(f"{Path(__file__).resolve().parents[1] / 'params.yaml'}#doudizhu")
    assert p.evaluate.games == 2 * p.seeds.deals == 1000
    assert p.raw["baselines"]["games"] == 600  # 300 decks, each twice


@pytest.fixture()
def ddz_dir(tmp_path, monkeypatch):
    small_window = {"games": 6, "opponents": ["random"], "reference_agents": ["greedy"], "workers": 1}
    return study_folder(tmp_path, monkeypatch, {**DDZ, "behaviour": small_window})


def _check_duel(m: dict, deals: int, opponent: str) -> None:
    """A duel of the learner (side A) against ``opponent`` (DouZero's protocol) on ``deals`` deals."""
    assert m["game"] == "doudizhu" and m["rules"] == "rlcard" and m["deals"] == deals and m["games"] == 2 * deals
    assert m["opponents"] == [opponent] and m["b"] == opponent and m["landlord_seat"] == 0
    assert "normalized_win_rate" not in m  # a team game has no chance level
    for side in ("A", "B"):
        assert set(m[side]) == DUEL_ROLES
        assert m[side]["landlord"]["games"] == m[side]["peasants"]["games"] == deals
    assert m["A"]["landlord"]["wins"] + m["B"]["peasants"]["wins"] == deals  # the same games from both sides
    assert m["paired"]["won_both"] + m["paired"]["split"] + m["paired"]["lost_both"] == deals


def test_dou_dizhu_stages_end_to_end(ddz_dir) -> None:
    """Under a fixed landlord every match is a duel (DouZero's protocol), the tournament the
    guide's round robin, the baseline table duels; the report shows WP and ADP by role."""
    from climbrl.cli import main

    p = load_params("params.yaml")
    stages.make_seeds(p)
    stages.train_learner(p, "ppo")
    ev = stages.evaluate_learner(p, "ppo")  # tracked: a duel logs the learner's WP and ADP by role
    assert ev["game"] == "doudizhu" and ev["protocol"] == "duel"
    assert [m["opponents"] for m in ev["matches"]] == [["random"], ["greedy"]]
    for m, opp in zip(ev["matches"], ("random", "greedy"), strict=True):
        _check_duel(m, 2, opp)  # evaluate.games 4 = 2 versioned deals x 2 games
    assert [d["game"] for d in ev["deep"]] == ["doudizhu"] * 2 and ev["deep"][0]["repeats"] == 2
    assert ev["deep"][0]["pooled"]["deals"] == 4 and set(ev["deep"][0]["spread"]["A"]) == DUEL_ROLES
    valid = json.loads(Path("reports/validation/ppo.json").read_text())
    assert valid["game"] == "doudizhu" and valid["protocol"] == "duel"
    for m, opp in zip(valid["matches"], ("random", "greedy"), strict=True):
        _check_duel(m, 2, opp)  # the 2 validation deals

    tour = stages.tournament(p)
    assert tour["game"] == "doudizhu" and tour["rules"] == "rlcard" and tour["protocol"] == "round_robin"
    assert tour["participants"] == ["ppo", "ppo-epoch1", "random", "greedy"]  # tournament.snapshots: [ppo@1]
    assert tour["games"] == 6 * 2 * 1  # every pair of 4, every deal twice (1 deal)
    assert len(tour["win_rate"]["both"]) == 4 and Path("reports/tournament_pairwise.png").exists()
    assert json.loads(Path("reports/tournament.json").read_text()) == tour

    beh = stages.behaviour(p)  # Dou Dizhu's own window (evaluate.behaviour_ddz)
    assert json.loads(Path("reports/behaviour/behaviour.json").read_text()) == beh
    assert beh["game"] == "doudizhu" and beh["rules"] == "rlcard" and "available" not in beh
    assert list(beh["agents"]) == ["ppo", "greedy"] and [c["epoch"] for c in beh["checkpoints"]["ppo"]] == [1, 2]
    assert all(a["games"] == 6 and a["auction"] is False for a in beh["agents"].values())
    assert sorted(f.name for f in Path("reports/behaviour").glob("*.png")) == [
        "behaviour_bids.png", "behaviour_bombs_cooperation.png", "behaviour_checkpoints.png"]

    assert main(["baselines", "--game", "doudizhu", "--rules", "rlcard", "--games", "2", "--workers", "1",
                 "--out", "reports"]) == 0
    base = json.loads(Path("reports/baselines.json").read_text())
    assert base["game"] == "doudizhu" and base["protocol"] == "duel" and "public_agent_note" not in base
    setup = GAME_SETUP["doudizhu"]  # every rule agent of the game (and RLCard's) against each baseline (and RLCard's)
    agents = [*setup.rule_agents, "rlcard-rule"]
    assert [(m["agent"], m["opponents"][0]) for m in base["matches"]] == [
        (a, b) for a in agents for b in [*setup.baselines, "rlcard-rule"]]
    base_md = Path("reports/baselines.md").read_text()
    assert "a duel on 1 deals (seed 0) of Dou Dizhu, rules `rlcard`" in base_md
    assert "| rlcard-rule | rlcard-rule | " in base_md

    from climbrl.tune import run_study

    study = run_study(p.tune, rules=p.rules, game=p.game, track=False)
    assert study["complete"] == 1 and 0.0 <= study["best_value"] <= 1.0
    assert "win_rate/heuristic" in Path("runs/tune/t/trial-0/metrics.csv").read_text()  # the objective's opponent
    big2_tune = load_params(Path(__file__).resolve().parents[1] / "params.yaml").tune
    with pytest.raises(ValueError, match="study t .* holds doudizhu trials; this search plays big2"):
        run_study(big2_tune, rules="paper", storage="sqlite:///optuna.db", study_name="t", track=False)

    deep = stages.deep(p)  # the best learner (chosen on the validation deals) in 2 duels of 1 fresh deal
    assert deep["learner"] == "ppo" and deep["chosen_on"] == "validation" and deep["repeats"] == 2
    assert deep["matches"][0]["opponents"] == ["random"] and deep["matches"][0]["pooled"]["deals"] == 2
    assert json.loads(Path("reports/deep.json").read_text()) == deep
    # deep seeds 1..2 include the versioned set's seed 1, and still draw their own deals (purpose "deep")
    assert parse_params(with_value(DDZ, ("deep", "seed"), 1)).deep.seed == 1

    stages.report(p)  # tracked: registers the best Dou Dizhu policy
    metrics = json.loads(Path("reports/metrics.json").read_text())
    assert metrics["game"] == "doudizhu" and metrics["rules"] == "rlcard" and metrics["best_learner"] == "ppo"
    assert metrics["deep_best"]["learner"] == "ppo" and "win_rate_mean/random/landlord" in metrics["deep_best"]
    learner = metrics["learners"]["ppo"]
    assert learner["games/random"] == 4 and "normalized_win_rate/random" not in learner
    for opp in ("random", "greedy"):
        for role in DUEL_ROLES - {"both"}:
            assert learner[f"games/{opp}/{role}"] == 2 and 0.0 <= learner[f"win_rate/{opp}/{role}"] <= 1.0
            assert f"adp/{opp}/{role}" in learner
    assert learner["valid_games/random"] == 4
    md = Path("reports/report.md").read_text()
    assert md.startswith("# small Dou Dizhu study\n\nGame: Dou Dizhu. Rules: `rlcard`.")
    assert "DouZero's protocol: each of 2 versioned deals played twice" in md
    assert "| learner | vs 2x random | vs 2x greedy | training time | decisions/s |" in md
    assert "## By role" in md and "| ppo | landlord | " in md and "| ppo | peasants | " in md
    assert "## Deep evaluation" in md and "## Model selection" in md and "## Round robin" in md
    assert "## Deep evaluation of the best learner" in md and "| random | landlord |" in md
    assert "win rate against two heuristic players" in md  # the Optuna section
    assert "| rlcard-rule | rlcard-rule |" in md  # the baseline table's duels
    assert "## Interpretability window\n\nWhat each agent does in Dou Dizhu (rlcard)" in md
    assert "### How the peasants cooperate" in md and "![behaviour_bids](behaviour/behaviour_bids.png)" in md
    assert "### Bids by hand strength" not in md  # a fixed landlord: no auction
    assert "3x" not in md and "three copies" not in md and "normalized" not in md
    assert "/ 0.25" not in md.partition("## Interpretability window")[0]  # no Big 2 chance level (the window's
    # cells are "probability / chosen")
    assert "data:image/png;base64," in Path("reports/report.html").read_text()

    import mlflow

    mlflow.set_tracking_uri("sqlite:///mlflow.db")
    runs = mlflow.search_runs(experiment_names=["ddz"])
    assert {"train", "evaluate", "validate", "tournament", "behaviour", "register"} <= set(runs["tags.stage"])
    assert set(runs["tags.mlflow.runName"]) == {  # each run by its stage and learner, the game and variant as tags
        "train@doudizhu-ppo", "evaluate@doudizhu-ppo", "validate@doudizhu-ppo", "deep@doudizhu-ppo",
        "tournament@doudizhu", "behaviour@doudizhu", "register@doudizhu-ppo"}
    assert set(runs["tags.game"]) == {"doudizhu"} and set(runs["tags.variant"].dropna()) == {"ppo"}
    ev_run = runs[runs["tags.stage"] == "evaluate"].iloc[0]
    assert "metrics.adp/random/landlord" in runs.columns and ev_run["metrics.games/random/landlord"] == 2
    norm = "metrics.normalized_win_rate/random"
    assert norm not in runs.columns or runs[norm].isna().all()
    beh_run = runs[runs["tags.stage"] == "behaviour"].iloc[0]
    assert 0.0 <= beh_run["metrics.pass_on_partner/ppo"] <= 1.0 and "metrics.bombs_played_share/greedy" in runs.columns
    from climbrl.track import load_registered_policy

    assert load_registered_policy("ddz-best", alias="best").net is not None


def test_the_dou_dizhu_regression_gate_fails_a_weakened_agent_and_a_stronger_one() -> None:
    """The Dou Dizhu gate (ci/regression_band_doudizhu.yaml) plays duels: an agent that plays at
    random wins exactly half against random (the duel's two games are the same game) and fails
    the gate, and so does the stronger heuristic (the gate is two-sided); both on fewer deals
    than CI's, which by itself fails the exact gate, so the band is checked here."""
    from pipeline import regression

    spec = regression.load_band(regression.DDZ_BAND)
    assert spec["train"]["game"] == "doudizhu" and spec["train"]["rules"] == "douzero"
    assert set(spec["expected"]) == set(spec["opponents"])
    spec["evaluate"] = {**spec["evaluate"], "games": 150, "workers": 1}  # 50 deals: enough to tell them apart
    spec["expected"] = {o: {"wins": round(e["wins"] / 4), "games": 100} for o, e in spec["expected"].items()}
    weak = regression.evaluate_agent("random", spec)
    assert weak["random"]["win_rate"] == 0.5 and weak["random"]["games"] == 100
    other = {"cpu_vendor": "elsewhere"}
    assert "vs random" in " ".join(regression.gate(weak, spec, path=other))
    strong = regression.evaluate_agent("heuristic", spec)
    assert "vs greedy" in " ".join(regression.gate(strong, spec, path=other)), strong


def test_the_ablations_stay_big2(ddz_dir) -> None:
    from pipeline.ablation import ablation_configs
    from pipeline.ablation import main as ablation_main

    with pytest.raises(ValueError, match="the ablations are Big 2's"):
        ablation_configs("entropy", load_params("params.yaml"))
    assert ablation_main(["entropy", "--params", "params.yaml"]) == 2


def test_the_main_report_summarizes_a_study_beside_it(tmp_path) -> None:
    """The Big 2 report's section on the Dou Dizhu study comes from that study's metrics.json, and
    the main metrics.json holds its headline numbers; a study not run yet is said to be so."""
    from climbrl.report import _study_summary_lines

    folder = tmp_path / "doudizhu"
    metrics: dict = {}
    assert "Not run yet (`dvc repro report@doudizhu`)." in _study_summary_lines("doudizhu", folder, metrics)
    folder.mkdir()
    target = {r: {"win_rate": 0.7, "win_rate_low": 0.65, "reference": 0.546, "met": True}
              for r in ("landlord", "peasants")}
    (folder / "metrics.json").write_text(json.dumps({
        "game": "doudizhu", "rules": "douzero", "best_learner": "mcq", "rlcard_target": target,
        "learners": {"mcq": {"win_rate/rlcard-rule/landlord": 0.7, "win_rate_low/rlcard-rule/landlord": 0.65,
                             "win_rate_high/rlcard-rule/landlord": 0.75, "adp/rlcard-rule/landlord": 0.9}}}))
    md = "\n".join(_study_summary_lines("doudizhu", folder, metrics))
    assert "Best learner (chosen on its validation deals): **mcq**" in md
    assert "| rlcard-rule | landlord | 0.700 [0.650, 0.750] | +0.900 |" in md
    assert "landlord 0.700 (lower bound 0.650 vs 0.546: met)" in md
    assert metrics["doudizhu"]["best_learner"] == "mcq" and metrics["doudizhu"]["rlcard_target"] == target


def test_the_headline_against_rlcard_leads_with_the_deep_evaluation(tmp_path) -> None:
    """Issue 29 section 3: the target against RLCard's rule agent is read on the deep evaluation's
    fresh deals when the deep stage ran, with the evaluation deals' figure beside it; without the
    deep evaluation (or when it evaluated another learner), on the evaluation deals."""
    from climbrl.report import _rlcard_target_lines

    def side(rate: float, low: float, games: int) -> dict:
        return {"win_rate": rate, "win_rate_low": low, "win_rate_high": rate + (rate - low), "games": games,
                "adp": 1.0, "adp_low": 0.9, "adp_high": 1.1}

    finals = {"ppo": {"rlcard-rule": {"deals": 500, "A": {"landlord": side(0.60, 0.56, 500),
                                                             "peasants": side(0.70, 0.66, 500)}}}}
    metrics = {"best_learner": "ppo"}
    md = "\n".join(_rlcard_target_lines(finals, tmp_path, metrics))
    assert "on the evaluation deals (500 deals)" in md and metrics["rlcard_target"]["on"] == "evaluation"
    assert metrics["rlcard_target"]["landlord"]["met"] and metrics["rlcard_target"]["landlord"]["win_rate"] == 0.60
    pooled = {"A": {"landlord": side(0.45, 0.44, 10000), "peasants": side(0.65, 0.64, 10000),
                    "both": side(0.575, 0.57, 20000)}}
    deep = {"learner": "ppo", "repeats": 20, "deals_per_repeat": 500, "seed": 1,
            "matches": [{"opponents": ["rlcard-rule"], "pooled": pooled}]}
    (tmp_path / "deep.json").write_text(json.dumps(deep))
    md = "\n".join(_rlcard_target_lines(finals, tmp_path, metrics))
    t = metrics["rlcard_target"]
    assert t["on"] == "deep" and t["deals"] == 10000 and t["landlord"]["games"] == 10000
    assert not t["landlord"]["met"] and t["peasants"]["met"]  # 0.44 is not above 0.454; 0.64 is above 0.546
    assert "| landlord | 0.450 [0.440, 0.460] (n=10,000) |" in md and "0.600 [0.560, 0.640] (n=500)" in md
    assert md.startswith("## Headline") and "Over both roles: 0.575" in md
    (tmp_path / "deep.json").write_text(json.dumps({**deep, "learner": "dqn"}))  # another learner's deep run
    _rlcard_target_lines(finals, tmp_path, metrics)
    assert metrics["rlcard_target"]["on"] == "evaluation"
