"""The training-seed study (issue 32, part 2; pipeline/seeds.py): a tiny run of both games end to end
(the study's config with only the seed replaced, seed 0 the study's own run and evaluation, an
existing checkpoint continued, another config's started over, finished runs skipped), and the
statistics on constructed records: contrasts paired on the deals, Holm's correction within a
claim, a tie called a tie, the winner chosen on the validation deals only."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from pipeline import seeded, seeds, seeds_report, stages
from pipeline.seeded import compare_pairs, holm_adjusted

from climbrl.evaluate.stats import holm
from climbrl.learn import checkpoint as ckpt
from climbrl.params import load_params
from climbrl.training import train
from tests.study_params import TINY_TUNE, study_folder

REPO = Path(__file__).resolve().parents[1]
TINY = {"epochs": 2, "games_per_epoch": 3, "eval_every": 1, "hidden": 16, "minibatch_decisions": 64,
        "batch_size": 16, "updates_per_epoch": 2, "eval_opponents": ["random"], "keep_policy_every": 1}
STUDY = {
    "rules": "paper",
    "seeds": {"deals": 12, "seed": 1, "validation_deals": 4, "validation_seed": 7},
    "train": {"common": {**TINY, "eval_games": 8}, "ppo": {}, "mcq": {}},
    "evaluate": {"games": 24, "opponents": ["random", "greedy"], "workers": 1},  # 6 deals x 4 seats
    "tune": {**TINY_TUNE, "eval_games": 12}, "report": {"title": "t"},
    "tracking": {"tracking_uri": "sqlite:///mlflow.db", "experiment": "t", "register_model": "t"},
    "studies": {"doudizhu": {
        "game": "doudizhu", "rules": "douzero",
        "seeds": {"deals": 6, "seed": 1, "validation_deals": 3, "validation_seed": 7},
        "train": {"common": {**TINY, "eval_games": 6}, "ppo": {},
                  "ppo_mixed": {"algo": "ppo", "reward_cards_left": 1.0}, "sarsa": {}},
        "evaluate": {"games": 10, "opponents": ["random", "greedy"], "workers": 1},  # 5 decks x 2 games
        "tune": TINY_TUNE}},
}
SEEDS = {"seeds": [0, 1, 2], "workers": 2,
         "games": {"doudizhu": {"study": "params.yaml#doudizhu", "learners": ["ppo", "ppo_mixed", "sarsa"]},
                   "big2": {"study": "params.yaml", "learners": ["mcq", "ppo"]}}}


@pytest.fixture()
def seed_dir(tmp_path, monkeypatch):
    study_folder(tmp_path, monkeypatch, STUDY)
    (tmp_path / "seeds.yaml").write_text(yaml.safe_dump(SEEDS, sort_keys=False))
    for spec in ("params.yaml", "params.yaml#doudizhu"):
        stages.make_seeds(load_params(spec))
    return tmp_path


def _md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def test_the_seed_study_runs_resumes_and_reports_both_games(seed_dir, monkeypatch) -> None:
    study = seeds.load_seed_params("seeds.yaml")
    todo = seeds.jobs(study)
    # the games' lists interleaved, every seed of a learner in a row
    assert [(j.game, j.learner) for j in todo[::3]] == [("doudizhu", "ppo"), ("big2", "mcq"), ("doudizhu", "ppo_mixed"),
                                                        ("big2", "ppo"), ("doudizhu", "sarsa")]
    assert [j.seed for j in todo[:3]] == [0, 1, 2]
    for j in todo:  # the study's exact config, only the seed replaced
        assert j.cfg == dataclasses.replace(load_params(study.games[j.game].study).train[j.learner], seed=j.seed)
    # an existing checkpoint is continued: its first epoch (marked) is kept
    cont = next(j for j in todo if (j.game, j.learner, j.seed) == ("big2", "ppo", 1))
    train(dataclasses.replace(cont.cfg, epochs=1), cont.out, progress=False)
    state = ckpt.load(Path(cont.out) / "checkpoint.pt")
    state["history"][0]["marker"] = 1
    ckpt.save_atomic(state, Path(cont.out) / "checkpoint.pt")
    # a checkpoint of another config (another lr) is started over
    over = next(j for j in todo if (j.game, j.learner, j.seed) == ("doudizhu", "sarsa", 2))
    train(dataclasses.replace(over.cfg, epochs=1, lr=2 * over.cfg.lr), over.out, progress=False)

    paths = seeds.run(study)

    history = ckpt.load(Path(cont.out) / "checkpoint.pt")["history"]
    assert [r["epoch"] for r in history] == [1, 2] and history[0].get("marker") == 1
    redone = ckpt.load(Path(over.out) / "checkpoint.pt")
    assert redone["config"]["lr"] == over.cfg.lr and redone["epoch"] == 2
    data = {g: json.loads(p.read_text()) for g, p in paths.items()}
    assert data["big2"]["learners"] == load_params("params.yaml").learners()  # the study's order (its rule for ties)
    assert data["doudizhu"]["algos"] == {"ppo": "ppo", "ppo_mixed": "ppo", "sarsa": "sarsa"}
    for game, deals, per_deal in (("big2", 6, 4), ("doudizhu", 5, 2)):
        d = data[game]
        assert d["sets"]["evaluation"]["deals"] == deals and d["sets"]["validation"]["seat_seed"] == 7
        for runs in d["runs"].values():
            assert sorted(runs) == ["0", "1", "2"]
            for r in runs.values():
                for o in ("random", "greedy"):
                    rec = r["evaluation"][o]
                    assert rec["per_deal"] == per_deal and len(rec["deal_wins"]) == deals
                    assert sum(map(int, rec["deal_wins"])) == rec["wins"] and rec["games"] == per_deal * deals

    # seed 0 is the study's run: the same policy, and the evaluate stage's numbers on both deal sets
    for spec, algo in (("params.yaml", "ppo"), ("params.yaml#doudizhu", "ppo_mixed")):
        p = load_params(spec)
        stages.train_learner(p, algo, track=False)
        ev = stages.evaluate_learner(p, algo, track=False)
        valid = json.loads((stages.study_paths(p).reports / "validation" / f"{algo}.json").read_text())
        mine = data[p.game]["runs"][algo]["0"]
        assert mine["policy_md5"] == _md5(stages.study_paths(p).runs / algo / "policy.pt")
        for which, matches in (("evaluation", ev["matches"]), ("validation", valid["matches"])):
            for m in matches:
                wins = m["A"]["both"]["wins"] if p.game == "doudizhu" else m["wins"]
                assert mine[which][m["opponents"][0]]["wins"] == wins, (spec, which)
        if p.game == "doudizhu":
            assert mine["evaluation"]["random"]["roles"]["landlord"] == {
                k: ev["matches"][0]["A"]["landlord"][k] for k in mine["evaluation"]["random"]["roles"]["landlord"]}

    # a finished run is skipped, not trained again; one on other deals or opponents is not finished
    def refuse(*_args):
        raise AssertionError("a finished run was trained again")

    monkeypatch.setattr(seeded, "train_resumable", refuse)
    assert seeds.run_one(cont)["policy_md5"] == data["big2"]["runs"]["ppo"]["1"]["policy_md5"]
    assert seeds.done(dataclasses.replace(cont, opponents=("random",))) is None
    other = dataclasses.replace(cont.sets[0], deals=cont.sets[0].deals[:5])
    assert seeds.done(dataclasses.replace(cont, sets=(other, cont.sets[1]))) is None

    # one game alone, as its DVC stages report@GAME run it; an unknown game is refused by name
    assert seeds_report.main(["--params", "seeds.yaml", "--game", "doudizhu"]) == 0
    alone = json.loads(Path("reports/seeds/doudizhu/report.json").read_text())
    assert list(alone["games"]) == ["doudizhu"]
    assert "## big2" not in Path("reports/seeds/doudizhu/report.md").read_text()
    assert seeds_report.main(["--params", "seeds.yaml", "--game", "chess"]) == 2
    assert seeds.main(["run", "--params", "seeds.yaml", "--game", "chess"]) == 2
    assert seeds.only_game(study, "big2").games == {"big2": study.games["big2"]}

    assert seeds_report.main(["--params", "seeds.yaml"]) == 0
    md = Path("reports/seeds/report.md").read_text()
    out = json.loads(Path("reports/seeds/report.json").read_text())
    assert "## doudizhu (`douzero` rules" in md and "## big2 (`paper` rules" in md and "**Verdict (big2):**" in md
    assert set(out["games"]["big2"]["claims"]) == {"best", "ppo_vs_value"}
    assert set(out["games"]["doudizhu"]["claims"]) == {"best", "ppo_vs_value", "variants_vs_ppo"}
    assert out["games"]["doudizhu"]["claims"]["variants_vs_ppo"][0]["a"] == "ppo_mixed"
    for g in out["games"].values():
        choice = g["selection"]["study_choice"]
        assert choice == g["selection"]["per_seed"]["0"]  # the validation winner of the study's seed
        for x in g["learners"].values():  # the guide's 5.4: mean +- sd over the seeds
            per_seed = [x["per_seed"][k]["mean"] for k in ("0", "1", "2")]
            assert x["sd_over_seeds"] == pytest.approx(float(np.std(per_seed, ddof=1)))
        assert [c["a"] for c in g["claims"]["best"]] == [choice] * (len(g["learners"]) - 1)
        for c in (c for claim in g["claims"].values() for c in claim):
            assert c["holm_p"] >= c["p_value"] and c["significant"] == (c["holm_p"] <= 0.05)
            assert c["low"] <= c["difference"] <= c["high"]


def _records(evaluation: dict[str, np.ndarray], validation: dict[str, np.ndarray], algos: dict[str, str]) -> dict:
    """A game's records as ``run`` writes them, from seeds x deals tables of wins (out of 4) against one
    baseline per learner."""
    def rec(row: np.ndarray) -> dict:
        return {"deal_wins": "".join(str(int(x)) for x in row), "per_deal": 4}

    n_seeds = next(iter(evaluation.values())).shape[0]
    runs = {a: {str(s): {"train_seconds": 60.0, "evaluation": {"x": rec(evaluation[a][s])},
                         "validation": {"x": rec(validation[a][s])}} for s in range(n_seeds)} for a in algos}
    return {"game": "big2", "rules": "paper", "study": "params.yaml", "seeds": list(range(n_seeds)), "study_seed": 0,
            "learners": list(algos), "algos": algos, "opponents": ["x"],
            "sets": {"evaluation": {"deal_set": "e.json", "deals": 40},
                     "validation": {"deal_set": "v.json", "deals": 40}},
            "runs": runs}


BASE = np.array([[i % 4 for i in range(40)]] * 3)
"""Three seeds x 40 deals of wins out of 4: the deals' difficulty spreads widely (0 to 3)."""


def _edge(every: int, minus: int = 0) -> np.ndarray:
    """BASE with +1 win on every ``every``-th deal (shifted by seed) and -1 on every ``minus``-th
    (within 0 to 4 wins): a small, noisy edge over BASE."""
    p = np.zeros(BASE.shape, dtype=int)
    for s in range(3):
        for i in range(40):
            p[s, i] += (i + s) % every == 0
            p[s, i] -= bool(minus) and (i + 2 * s) % minus == 1
    return np.clip(BASE + p, 0, 4)


def test_contrasts_are_paired_on_the_deals() -> None:
    """A small edge on the same deals is found; the same numbers with the deals' order broken (as
    if unpaired) hide it under the deals' spread."""
    better = _edge(5)
    paired = compare_pairs({"a": better / 4, "b": BASE / 4}, [("a", "b")], 4)[0]
    assert paired["difference"] == pytest.approx(0.05) and paired["verdict"] == "a" and paired["p_value"] < 1e-6
    shuffled = better[:, np.roll(np.arange(40), 1)]
    unpaired = compare_pairs({"a": shuffled / 4, "b": BASE / 4}, [("a", "b")], 4)[0]
    assert unpaired["difference"] == pytest.approx(0.05) and unpaired["verdict"] == "tie"


def test_holm_s_correction_turns_two_marginal_edges_into_ties() -> None:
    """Two contrasts each under 5% alone (p near 0.045) are not significant as a family of two."""
    tables = {"base": BASE / 4, "a": _edge(6, 9) / 4, "b": _edge(8, 13) / 4}
    alone = [compare_pairs(tables, [pair], 4)[0] for pair in (("a", "base"), ("b", "base"))]
    assert all(0.03 < c["p_value"] < 0.05 and c["verdict"] == "a" for c in alone)
    family = compare_pairs(tables, [("a", "base"), ("b", "base")], 4)
    assert [c["significant"] for c in family] == [False, False] and [c["verdict"] for c in family] == ["tie", "tie"]
    assert [c["holm_p"] for c in family] == pytest.approx([min(1, 2 * min(c["p_value"] for c in alone))] * 2)
    assert holm_adjusted([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.01, 0.04, 0.03]) == [True, False, False]


def test_the_winner_is_chosen_on_validation_and_a_tie_is_called_a_tie() -> None:
    """Validation prefers dqn in seeds 0 and 1 (the study's choice, seed 0's winner), ppo in seed 2;
    on the evaluation deals ppo is well ahead of dqn and ppo_roles plays exactly as dqn."""
    strong = BASE + (np.arange(40) % 2 == 0)
    evaluation = {"ppo": strong, "ppo_roles": BASE, "dqn": BASE}
    validation = {"ppo": BASE.copy(), "ppo_roles": BASE.copy(), "dqn": BASE + (np.arange(40) % 3 == 0)}
    validation["ppo"][2] += 1  # seed 2 chooses ppo
    s = seeds_report.game_statistics(_records(evaluation, validation, {"ppo": "ppo", "ppo_roles": "ppo", "dqn": "dqn"}))
    assert s["selection"] == {"study_choice": "dqn", "per_seed": {"0": "dqn", "1": "dqn", "2": "ppo"},
                              "mean_winner": "dqn"}
    best = {c["b"]: c for c in s["claims"]["best"]}
    assert best["ppo"]["verdict"] == "b" and best["ppo"]["difference"] == pytest.approx(-0.125)
    assert best["ppo_roles"]["verdict"] == "tie" and best["ppo_roles"]["difference"] == 0
    assert [(c["a"], c["b"], c["verdict"]) for c in s["claims"]["ppo_vs_value"]] == [("ppo", "dqn", "a")]
    assert [(c["a"], c["b"], c["verdict"]) for c in s["claims"]["variants_vs_ppo"]] == [("ppo_roles", "ppo", "b")]
    v = s["verdict"]
    assert not v["robust"] and v["ahead_of_choice"] == ["ppo"] and v["tied_with_choice"] == ["ppo_roles"]
    assert v["per_seed"] == {"0": "chosen", "1": "chosen", "2": "behind"} and v["text"].startswith("not robust: ppo")
    assert s["learners"]["ppo"]["mean"]["mean"] == pytest.approx(BASE.mean() / 4 + 0.125)
    md = "\n".join(seeds_report.game_lines(s))
    assert "- dqn minus ppo_roles: +0.000" in md and ": **tie**" in md and "**ppo ahead**" in md

    # every learner alike on the evaluation deals: the choice is tied for best, not a winner
    same = seeds_report.game_statistics(_records({a: BASE for a in evaluation}, validation,
                                          {"ppo": "ppo", "ppo_roles": "ppo", "dqn": "dqn"}))
    v = same["verdict"]
    assert [c["verdict"] for c in same["claims"]["best"]] == ["tie", "tie"]
    assert not v["robust"] and not v["clear"] and v["tied_with_choice"] == ["ppo", "ppo_roles"]
    assert v["per_seed"]["2"] == "tied" and "tied for best with ppo, ppo_roles" in v["text"]


def test_seed_params_are_checked(tmp_path) -> None:
    study = seeds.load_seed_params()  # the repository's: both games, the study's contenders
    assert study.seeds == (0, 1, 2) and set(study.games) == {"big2", "doudizhu"}
    assert set(study.games["big2"].learners) == set(load_params(REPO / "params.yaml").learners())
    assert {"ppo", "ppo_roles", "ppo_handsplit", "ppo_mixed", "ppo_pool"} <= set(study.games["doudizhu"].learners)
    path = tmp_path / "s.yaml"
    for change, message in [({"seeds": [0]}, "at least two distinct"), ({"seeds": [1, 2]}, "must be one seed among"),
                            ({"games": {"big2": {"study": f"{REPO}/params.yaml#doudizhu", "learners": ["ppo", "mcq"]}}},
                             "is a study of doudizhu"),
                            ({"games": {"big2": {"study": f"{REPO}/params.yaml", "learners": ["ppo", "dmc"]}}},
                             "dmc not trained by"),
                            ({"systems": {"x": {"base": "sarsa", "lr": 1e-3}}}, "among the contenders"),
                            ({"systems": {"x": {"base": "ppo", "against": "dqn", "lr": 1e-3}}}, "among the contenders"),
                            ({"systems": {"sarsa": {"base": "ppo", "lr": 1e-3}}}, "a name the study does not train"),
                            ({"systems": {"x": {"base": "ppo"}}}, "changes its base's config"),
                            ({"systems": {"x": {"base": "ppo", "seed": 3}}}, "not its seed"),
                            ({"systems": {"x": {"base": "ppo", "learning_rate": 1e-3}}}, "learning_rate"),
                            ({"systems": {"x": {"base": "ppo", "lr": -1.0}}}, "games.big2.systems.x: .*lr")]:
        raw = {"seeds": [0, 1, 2], "workers": 1,
               "games": {"big2": {"study": f"{REPO}/params.yaml", "learners": ["ppo", "mcq"]}}}
        if "systems" in change:
            raw["games"]["big2"]["systems"] = change.pop("systems")
        raw |= change
        path.write_text(yaml.safe_dump(raw))
        with pytest.raises(ValueError, match=message):
            seeds.load_seed_params(path)
    assert seeds.main(["run", "--params", str(path)]) == 2


def test_a_system_is_compared_with_its_base_and_takes_no_part_in_the_selection() -> None:
    """A system (trained by the seed study only) that validation would prefer is not chosen; it is
    compared with its base contender alone, paired on the deals."""
    strong = BASE + (np.arange(40) % 2 == 0)
    data = _records({"ppo": BASE, "dqn": BASE, "ppo_x": strong}, {"ppo": BASE + 1, "dqn": BASE, "ppo_x": BASE + 2},
                    {"ppo": "ppo", "dqn": "dqn", "ppo_x": "ppo"})
    data["learners"] = ["ppo", "dqn"]
    data["systems"] = {"ppo_x": {"base": "ppo", "changes": {"reward_pass_penalty": 0.1}}}
    s = seeds_report.game_statistics(data)
    # compared with another contender where the system says so
    other = seeds_report.game_statistics({**data, "systems": {"ppo_x": {**data["systems"]["ppo_x"], "against": "dqn"}}})
    assert [(c["a"], c["b"]) for c in other["claims"]["systems_vs_base"]] == [("ppo_x", "dqn")]
    assert "; compared with dqn" in "\n".join(seeds_report.game_lines(other))
    assert s["selection"]["study_choice"] == "ppo" and s["selection"]["mean_winner"] == "ppo"
    assert [c["b"] for c in s["claims"]["best"]] == ["dqn"]
    assert [(c["a"], c["b"], c["verdict"]) for c in s["claims"]["systems_vs_base"]] == [("ppo_x", "ppo", "a")]
    assert s["claims"]["systems_vs_base"][0]["difference"] == pytest.approx(0.125)
    assert s["learners"]["ppo_x"]["system"]["base"] == "ppo" and "system" not in s["learners"]["ppo"]
    assert s["learners"]["ppo_x"]["cpu_vendors"] == ["not recorded"]  # records made before they named it
    md = "\n".join(seeds_report.game_lines(s))
    assert "| ppo_x (system on ppo) |" in md and "- ppo_x: ppo with `reward_pass_penalty: 0.1`" in md
    assert "\n| ppo_x | " not in md  # not in the selection's table


def test_a_system_added_later_runs_alone_beside_the_kept_records(seed_dir, monkeypatch) -> None:
    """``--only`` trains the named system and keeps every other run's record from the game's records
    (never training them again); a run it would keep but the records lack, or an unknown name, is refused
    before anything trains."""
    plain = {"seeds": [0, 1], "workers": 1,
             "games": {"doudizhu": {"study": "params.yaml#doudizhu", "learners": ["ppo", "sarsa"]}}}
    Path("plain.yaml").write_text(yaml.safe_dump(plain))
    first = json.loads(seeds.run(seeds.load_seed_params("plain.yaml"))["doudizhu"].read_text())
    plain["games"]["doudizhu"]["systems"] = {"ppo_pass": {"base": "ppo", "reward_pass_penalty": 0.1}}
    Path("more.yaml").write_text(yaml.safe_dump(plain))
    study = seeds.load_seed_params("more.yaml")
    system = next(j for j in seeds.jobs(study) if j.learner == "ppo_pass")
    assert system.cfg == dataclasses.replace(load_params("params.yaml#doudizhu").train["ppo"], seed=system.seed,
                                             reward_pass_penalty=0.1)
    with pytest.raises(ValueError, match="dmc not among the runs"):
        seeds.run(study, only=("dmc",))
    with pytest.raises(ValueError, match="no record of ppo_pass seed 0"):
        seeds.run(study, only=("sarsa",))
    trained = []
    real = seeds.run_one
    monkeypatch.setattr(seeds, "run_one", lambda job: trained.append(job.learner) or real(job))
    monkeypatch.setattr(seeds, "process_pool", _InProcess)
    data = json.loads(seeds.run(study, only=("ppo_pass",))["doudizhu"].read_text())
    assert trained == ["ppo_pass", "ppo_pass"]
    for a in ("ppo", "sarsa"):
        for k in ("0", "1"):
            assert {x: data["runs"][a][k][x] for x in first["runs"][a][k]} == first["runs"][a][k]
    assert data["systems"] == {"ppo_pass": {"base": "ppo", "against": "ppo", "changes": {"reward_pass_penalty": 0.1}}}
    assert data["runs"]["ppo_pass"]["1"]["config"]["reward_pass_penalty"] == 0.1
    from pipeline.regression import math_path  # where it ran: runs of other machines may sit beside it
    assert data["runs"]["ppo_pass"]["1"]["math_path"] == math_path()
    rows = (Path(system.out) / "metrics.csv").read_text().splitlines()
    column = rows[0].split(",").index("learner_decisions")
    assert data["runs"]["ppo_pass"]["0"]["learner_decisions"] == sum(int(r.split(",")[column]) for r in rows[1:]) > 0
    assert data["algos"]["ppo_pass"] == "ppo" and data["learners"] == ["ppo", "sarsa"]
    out = seeds_report.game_statistics(data)
    assert [(c["a"], c["b"]) for c in out["claims"]["systems_vs_base"]] == [("ppo_pass", "ppo")]
    assert out["learners"]["ppo_pass"]["cpu_vendors"] == [math_path()["cpu_vendor"]]
    # a record made before records held their config is kept without one: no unchecked config is claimed
    del data["runs"]["sarsa"]["1"]["config"]
    Path("reports/seeds/doudizhu.json").write_text(json.dumps(data))
    again = json.loads(seeds.run(study, only=("ppo_pass",))["doudizhu"].read_text())
    assert "config" not in again["runs"]["sarsa"]["1"] and "config" in again["runs"]["sarsa"]["0"]
    assert again["runs"]["sarsa"]["1"]["evaluation"] == first["runs"]["sarsa"]["1"]["evaluation"]
    # a kept record made with another config (stored since the records hold it) is refused
    data["runs"]["sarsa"]["0"]["config"]["lr"] *= 2
    Path("reports/seeds/doudizhu.json").write_text(json.dumps(data))
    with pytest.raises(ValueError, match="no record of sarsa seed 0 with this config"):
        seeds.run(study, only=("ppo_pass",))


class _InProcess:
    """A stand-in for the process pool that runs each job here (so that a test can watch them)."""

    def __init__(self, *_args, **_kwargs) -> None:
        pass

    def __enter__(self) -> _InProcess:
        return self

    def __exit__(self, *_exc) -> None:
        return None

    def map(self, fn, items):
        return [fn(x) for x in items]


def test_the_main_report_carries_the_seed_verdict_when_make_seeds_has_run(tmp_path) -> None:
    from climbrl.report import seeds_lines

    big2, ddz = load_params(REPO / "params.yaml"), load_params(f"{REPO / 'params.yaml'}#doudizhu")
    reports = tmp_path / "reports"
    assert seeds_lines(big2, reports) == [] and seeds_lines(ddz, reports / "doudizhu") == []  # not run: nothing
    for game, text in (("big2", "not robust as a single winner: x"), ("doudizhu", "robust: y")):
        (reports / "seeds" / game).mkdir(parents=True)
        (reports / "seeds" / game / "report.json").write_text(json.dumps(
            {"games": {game: {"seeds": [0, 1, 2], "study_seed": 0, "selection": {"study_choice": "dqn"},
                              "verdict": {"text": text}}}}))
    lines = seeds_lines(big2, reports)
    assert "seeds 0, 1, 2" in lines[2] and "not robust as a single winner: x." in lines[2]
    assert lines[2].endswith("(seeds/big2/report.md).")  # no best given: nothing more to say
    assert "seed 0, this study's own config and seed, chose dqn where this report's run chose sarsa" in seeds_lines(
        big2, reports, "sarsa")[2]
    assert seeds_lines(big2, reports, "dqn")[2].endswith("(seeds/big2/report.md).")  # the same choice
    assert "robust: y." in seeds_lines(ddz, reports / "doudizhu")[2]
    assert "(../seeds/doudizhu/report.md)" in seeds_lines(ddz, reports / "doudizhu")[2]
    (reports / "seeds" / "big2" / "report.json").write_text("{broken")
    assert seeds_lines(big2, reports) == []
