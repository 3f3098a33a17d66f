"""The pipeline: params schema, stage functions (without Prefect), MLflow records, Optuna
studies, the report, the CI regression gate, and one Prefect flow on a 2-worker Dask cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pipeline import regression, stages

from climbrl.params import ParamsError, load_params, parse_params, study_names
from tests.study_params import study_folder, with_value, write_results

REPO = Path(__file__).resolve().parents[1]

SMALL = {
    "rules": "paper",
    "seeds": {"deals": 40, "seed": 1, "validation_deals": 3, "validation_seed": 7},
    "train": {
        "common": {"epochs": 2, "games_per_epoch": 8, "eval_every": 1, "eval_games": 16, "hidden": 32,
                   "minibatch_decisions": 64, "batch_size": 32, "updates_per_epoch": 3,
                   "eval_opponents": ["random", "greedy"], "keep_policy_every": 1},
        "ppo": {},
        "qlearning": {"target_sync": 2},
    },
    "evaluate": {"games": 16, "opponents": ["random", "greedy"], "workers": 1, "repeats": 2},
    "behaviour": {"games": 8, "opponents": ["random"], "reference_agents": ["greedy"], "workers": 1},
    "tournament": {"deals": 24},  # one block of the 24 seatings: 35 groups of the 7 participants x 24 = 840 games
    "tune": {"algo": "ppo", "trials": 2, "epochs": 2, "games_per_epoch": 8, "eval_every": 1, "eval_games": 16,
             "seed": 0, "storage": "sqlite:///optuna.db", "study": "t", "pruner": "median"},
    "report": {"title": "small study"},
    "tracking": {"tracking_uri": "sqlite:///mlflow.db", "experiment": "test", "register_model": "test-best"},
}


def test_the_repository_params_are_valid() -> None:
    p = load_params(REPO / "params.yaml")
    assert p.learners() == ["ppo", "mcq", "sarsa", "qlearning", "dqn"]
    assert all(c.epochs == 100 and c.games_per_epoch == 200 and c.eval_every == 5 and c.eval_games == 400
               for c in p.train.values())
    assert p.train["dqn"].double and p.train["dqn"].prioritized and not p.train["qlearning"].double
    assert p.train["qlearning"].target_sync_unit == p.train["dqn"].target_sync_unit == "decisions"


@pytest.mark.parametrize(
    "path,value,message",
    [
        (("train", "ppo", "lr"), -1.0, "train.ppo.lr: must be positive"),
        (("train", "common", "epochs"), 0, "train.common.epochs"),
        (("train", "ppo", "epsilon"), 2.0, "train.ppo.epsilon"),
        (("rules",), "hk", "rules: unknown big2 rules preset"),
        (("evaluate", "games"), 10, "evaluate.games"),
        (("tune", "pruner"), "hyperband", "tune.pruner"),
        (("seeds", "deals"), "many", "seeds.deals"),
        (("behaviour", "opponents"), ["randy"], "behaviour.opponents"),
        (("behaviour", "games"), 6, "behaviour.games"),
        (("evaluate", "repeats"), 0, "evaluate.repeats"),
        (("evaluate", "opponents"), ["randy"], "evaluate.opponents: unknown agent"),
        (("tournament", "rule_agents"), ["greedy", "randy"], "tournament.rule_agents: unknown agent"),
        (("train", "qlearning", "target_sync_unit"), "steps", "train.qlearning.target_sync_unit: must be one of"),
    ],
)
def test_bad_params_name_the_key(path: tuple, value, message: str) -> None:
    with pytest.raises(ParamsError, match=message):
        parse_params(with_value(SMALL, path, value))
    raw = json.loads(json.dumps(SMALL))
    raw["train"]["a2c"] = {}
    with pytest.raises(ParamsError, match="train.a2c: unknown learner"):
        parse_params(raw)


@pytest.fixture()
def study_dir(tmp_path, monkeypatch):
    return study_folder(tmp_path, monkeypatch, SMALL)


def test_stages_end_to_end_with_tracking(study_dir) -> None:
    p = load_params("params.yaml")
    stages.make_seeds(p)
    assert len(stages.load_seeds()) == 40
    for algo in ("ppo", "qlearning"):
        stages.train_learner(p, algo)
        stages.evaluate_learner(p, algo)
    beh = stages.behaviour(p)
    assert list(beh["agents"]) == ["ppo", "qlearning", "greedy"]
    assert [c["epoch"] for c in beh["checkpoints"]["ppo"]] == [1, 2]  # the kept snapshot, then the final policy
    assert beh["checkpoints"]["ppo"][-1]["games"] == 8
    stages.report(p)
    metrics = json.loads(Path("reports/metrics.json").read_text())
    assert set(metrics["learners"]) == {"ppo", "qlearning"}
    assert metrics["learners"]["ppo"]["games/random"] == 16
    assert metrics["best_learner"] in ("ppo", "qlearning")
    assert metrics["learners"]["ppo"]["valid_games/random"] == 12  # the 3 validation deals x 4 seats
    assert metrics["selection"]["chosen_on"] == "validation"
    md = Path("reports/report.md").read_text()
    assert "Final comparison" in md and "(n=16)" in md
    assert "Interpretability window" in md and "behaviour/behaviour_checkpoints.png" in md
    assert "## Deep evaluation" in md and "(n=32)" in md
    # the deep evaluation: 2 repeats of 16 games against random; over two values the sample standard
    # deviation is |a - b| / sqrt(2)
    evaluation = json.loads(Path("reports/eval/ppo.json").read_text())
    deep = next(d for d in evaluation["deep"] if d["opponents"][0] == "random")
    a, b = deep["win_rates"]
    assert deep["repeats"] == 2 and deep["games_per_repeat"] == 16 and all((16 * x).is_integer() for x in (a, b))
    assert deep["pooled_games"] == 32 and deep["pooled_wins"] == round(16 * (a + b))
    assert metrics["learners"]["ppo"]["deep_mean/random"] == pytest.approx((a + b) / 2)
    assert metrics["learners"]["ppo"]["deep_std/random"] == pytest.approx(abs(a - b) / 2 ** 0.5)
    page = Path("reports/report.html").read_text()
    assert "data:image/png;base64," in page and "http" not in page.replace("http-equiv", "")
    assert sorted(f.name for f in Path("reports/figures").iterdir()) == [
        "curve_greedy.png", "curve_random.png", "final_win_rates.png"]
    assert Path("reports/curves/ppo.csv").read_text().startswith("epoch,")

    import mlflow

    mlflow.set_tracking_uri("sqlite:///mlflow.db")
    runs = mlflow.search_runs(experiment_names=["test"])
    train_runs = runs[runs["tags.stage"] == "train"]
    assert set(train_runs["tags.algo"]) == {"ppo", "qlearning"}
    assert train_runs["tags.git_commit"].notna().all() and train_runs["tags.params_hash"].notna().all()
    assert "metrics.win_rate/random" in runs.columns
    client = mlflow.tracking.MlflowClient()
    assert client.get_registered_model("test-best").name == "test-best"
    from climbrl.track import load_registered_policy

    assert load_registered_policy("test-best", alias="best").net is not None
    assert set(runs[runs["tags.stage"] == "validate"]["tags.algo"]) == {"ppo", "qlearning"}
    history = client.get_metric_history(train_runs.iloc[0]["run_id"], "win_rate/random")
    assert [m.step for m in history] == [1, 2]


def test_params_naming_the_public_agent_fail_at_load_without_its_weights(tmp_path, monkeypatch) -> None:
    """Every stage loads the params first, so this fails before any training, not after it."""
    monkeypatch.setenv("CLIMBRL_EXTERNAL", str(tmp_path))
    for section, key in (("evaluate", "opponents"), ("tournament", "rule_agents"), ("behaviour", "opponents")):
        raw = json.loads(json.dumps(SMALL))
        raw.setdefault(section, {})[key] = ["random", "charlesworth"]
        with pytest.raises(ParamsError, match=f"{section}.{key}: .*convert-charlesworth"):
            parse_params(raw)


def test_report_html_renders_bold_and_inline_code() -> None:
    from climbrl.report import _html

    md = "# T\n\nBest learner: **ppo**, see `x < y`.\n\n| a | b |\n|---|---|\n| **mcq** | `dqn` |\n"
    page = _html(md, [], load_params(REPO / "params.yaml"))
    assert "<p>Best learner: <strong>ppo</strong>, see <code>x &lt; y</code>.</p>" in page
    assert "<td><strong>mcq</strong></td><td><code>dqn</code></td>" in page
    assert "**" not in page and "`" not in page
    md = "## Seeds (`make seeds`)\n\nSee [seeds/big2/report.md](seeds/big2/report.md); not [x](javascript:alert(1)).\n"
    page = _html(md, [], load_params(REPO / "params.yaml"))
    assert "<h2>Seeds (<code>make seeds</code>)</h2>" in page
    assert '<a href="seeds/big2/report.md">seeds/big2/report.md</a>' in page and "javascript" in page
    assert 'href="javascript' not in page


def test_report_without_the_public_agent_says_so(study_dir, monkeypatch) -> None:
    from climbrl.cli import main

    monkeypatch.setenv("CLIMBRL_EXTERNAL", str(study_dir / "no-shared"))
    assert main(["baselines", "--games", "4", "--workers", "1", "--out", "reports"]) == 0
    for algo in ("ppo", "qlearning"):  # the study's learners' results (the report requires every one)
        for kind in ("eval", "validation"):
            write_results(Path("reports"), kind, algo, {"random": 5, "greedy": 3}, 16)
    stages.report(load_params("params.yaml"), track=False)
    note = json.loads(Path("reports/baselines.json").read_text())["public_agent_note"]
    assert "## Baselines" in Path("reports/report.md").read_text() and note in Path("reports/report.md").read_text()
    page = Path("reports/report.html").read_text()
    assert "The public agent (charlesworth) is left out" in page and "<code>climbrl convert-charlesworth" in page


def test_training_stage_resumes_a_killed_run(study_dir) -> None:
    p = load_params("params.yaml")
    from climbrl.training import train

    cfg = p.train["ppo"]
    import dataclasses

    train(dataclasses.replace(cfg, epochs=1), "runs/ppo", progress=False)
    res = stages.train_learner(p, "ppo", track=False)
    assert [r["epoch"] for r in res["history"]] == [1, 2]


def test_optuna_study_is_resumable_and_writes_best_params(study_dir) -> None:
    from climbrl.cli import main
    from climbrl.tune import run_study

    p = load_params("params.yaml")
    first = run_study(p.tune, trials=2, track=True, tracking=p.tracking)
    assert first["trials"] == 2
    again = run_study(p.tune, trials=3, track=False)
    assert again["trials"] == 3  # the two finished trials were kept, one more ran
    best = yaml.safe_load(Path(again["best_yaml"]).read_text())
    assert set(best) == {"lr", "ent_coef"}
    assert main(["train", "--algo", "ppo", "--config", again["best_yaml"], "--epochs", "1",
                 "--games-per-epoch", "4", "--eval-every", "0", "--set", "hidden=16", "--out", "runs/best",
                 "--no-progress"]) == 0
    import mlflow

    mlflow.set_tracking_uri("sqlite:///mlflow.db")
    runs = mlflow.search_runs(experiment_names=["test"])
    assert (runs["tags.mlflow.parentRunId"].notna()).sum() == 2  # each trial a nested run


def test_a_new_study_starts_from_the_learner_s_own_config_and_learners_draw_apart(study_dir) -> None:
    """Trial 0 of a new study is the learner's own config (marked ``default``), measured like any
    trial; a resumed study does not queue it again; two learners' studies draw different random
    points (the sampler's seed takes the study's name)."""
    import dataclasses

    from climbrl.config import train_config
    from climbrl.tune import run_study, sampler_seed, searched

    p = load_params("params.yaml")
    tune = dataclasses.replace(p.tune, pruner="none")
    run_study(tune, algo="sarsa", trials=2, track=False, study_name="a")
    again = run_study(tune, algo="sarsa", trials=3, track=False, study_name="a")
    assert again["trials"] == 3
    import optuna

    trials = optuna.load_study(study_name="a", storage=p.tune.storage).trials
    own = train_config("sarsa")
    assert trials[0].user_attrs.get("default") is True and trials[0].state.name == "COMPLETE"
    assert trials[0].params == {k: getattr(own, k) for k in searched("sarsa")}
    assert [t.number for t in trials if t.user_attrs.get("default")] == [0]  # not queued again on resume
    assert trials[1].params != trials[0].params
    run_study(tune, algo="mcq", trials=2, track=False, study_name="b")
    other = optuna.load_study(study_name="b", storage=p.tune.storage).trials
    assert other[0].params == trials[0].params  # both learners' defaults: lr 1e-4, epsilon 0.1
    assert other[1].params != trials[1].params and sampler_seed(0, "a") != sampler_seed(0, "b")
    off = run_study(tune, algo="mcq", trials=1, track=False, study_name="c", start_from_default=False)
    first = optuna.load_study(study_name="c", storage=p.tune.storage).trials[0]
    assert off["trials"] == 1 and "default" not in first.user_attrs


def test_regression_gate_fails_a_weakened_agent_and_a_stronger_one() -> None:
    """The Big 2 gate is two-sided around its committed win counts: an agent that acts at random
    fails it, and so does the much stronger heuristic, both on the math path the counts were measured on
    (exact counts) and on any other (the band: there the heuristic fails against at least one baseline,
    against random its rate may lie within the band); each measured path's counts pass on that path."""
    spec = regression.load_band()
    assert set(spec["expected"]) == set(spec["opponents"])  # measured and committed (--write)
    own, other = spec["math_path"], {"cpu_vendor": "another"}
    weak = regression.evaluate_agent("random", spec)  # a learner that acts at random
    for path in (own, other):
        assert len(regression.gate(weak, spec, path=path)) == len(spec["opponents"]), weak
    strong = regression.evaluate_agent("heuristic", spec)
    assert len(regression.gate(strong, spec, path=own)) == len(spec["opponents"]), strong
    assert regression.gate(strong, spec, path=other), strong
    for path, expected in regression.measurements(spec):  # each measured path's own counts pass there
        as_measured = {o: {"win_rate": e["wins"] / e["games"], "games": e["games"]} for o, e in expected.items()}
        assert regression.gate(as_measured, spec, path=path) == []
    as_committed = {o: {"win_rate": e["wins"] / e["games"], "games": e["games"]} for o, e in spec["expected"].items()}
    assert regression.gate(as_committed, spec, path=other) == []


def test_regression_gate_is_exact_on_its_math_path_and_a_band_elsewhere() -> None:
    spec = {"opponents": ["random"], "expected": {"random": {"wins": 258, "games": 400}},
            "math_path": {"cpu_vendor": "AuthenticAMD"}}
    here, other = spec["math_path"], {"cpu_vendor": "GenuineIntel"}

    def result(w: int, n: int = 400) -> dict:
        return {"random": {"win_rate": w / n, "games": n}}

    assert regression.gate(result(258), spec, path=here) == []
    (one_win_off,) = regression.gate(result(259), spec, path=here)
    assert "259/400" in one_win_off and "behaviour changed" in one_win_off
    assert regression.gate(result(259), spec, path=other) == []  # a last-bit difference elsewhere
    assert regression.gate(result(240), spec, path=other) == []  # -0.045: within the 99% band
    assert regression.gate(result(220), spec, path=other) != []  # -0.095: a weakening
    assert regression.gate(result(296), spec, path=other) != []  # +0.095: a gain is a change too
    assert "another number of games" in regression.gate(result(129, 200), spec, path=other)[0]
    assert "--write" in regression.gate(result(258), {**spec, "expected": {}}, path=here)[0]


def test_regression_band_file_errors_and_write(tmp_path) -> None:
    bad = tmp_path / "band.yaml"
    bad.write_text("train: {algo: ppo}\nevaluate: {games: 4}\n")
    with pytest.raises(ValueError, match="band.yaml: expected 'train', 'evaluate' and 'opponents'"):
        regression.load_band(bad)
    bad.write_text("train: {}\nevaluate: {}\nopponents: [random]\nexpected: {random: {wins: 5, games: 4}}\n")
    with pytest.raises(ValueError, match="0 <= wins <= games"):
        regression.load_band(bad)
    assert regression.main(["--band", str(tmp_path / "missing.yaml")]) == 2
    good = tmp_path / "good.yaml"
    good.write_text("# kept\ntrain: {algo: ppo}\nevaluate: {games: 8, seed: 1}\nopponents: [random, greedy]\n")
    spec = regression.load_band(good)
    regression.write_expected(good, spec, {"random": {"win_rate": 0.625, "games": 8},
                                           "greedy": {"win_rate": 0.25, "games": 8}})
    assert good.read_text().startswith("# kept\n")
    again = regression.load_band(good)
    assert again["expected"] == {"random": {"wins": 5, "games": 8}, "greedy": {"wins": 2, "games": 8}}
    assert again["math_path"] == regression.math_path() and again["train"] == spec["train"]

    # the same code measured on another machine is added beside the first (--write --add-path); the gate is
    # exact on each measured path against its own counts, and a band around the first elsewhere
    amd = {**regression.math_path(), "cpu_vendor": "AuthenticAMD-test"}
    first = {**again, "math_path": amd}
    good.write_text(yaml.safe_dump(first))
    regression.write_expected(good, regression.load_band(good), {"random": {"win_rate": 0.5, "games": 8},
                                                                 "greedy": {"win_rate": 0.375, "games": 8}},
                              add_path=True)
    both = regression.load_band(good)
    assert both["math_path"] == amd and both["expected"]["random"]["wins"] == 5  # the first stays first
    assert both["other_paths"] == [{"expected": {"random": {"wins": 4, "games": 8}, "greedy": {"wins": 3, "games": 8}},
                                    "math_path": regression.math_path()}]

    def res(r: int, g: int) -> dict:
        return {"random": {"win_rate": r / 8, "games": 8}, "greedy": {"win_rate": g / 8, "games": 8}}

    assert regression.gate(res(4, 3), both) == []  # this path: its own counts, exactly
    assert len(regression.gate(res(5, 2), both)) == 2  # the first path's counts are not this path's
    assert regression.gate(res(5, 2), both, path=amd) == []
    assert regression.gate(res(5, 2), both, path={"cpu_vendor": "another"}) == []  # a band around the first
    # a plain --write (a change meant to move the counts) leaves this path's alone: the others were of old code
    regression.write_expected(good, both, res(6, 1))
    alone = regression.load_band(good)
    assert "other_paths" not in alone and alone["math_path"] == regression.math_path()
    good.write_text(yaml.safe_dump({**both, "other_paths": [{"expected": {}}]}))
    with pytest.raises(ValueError, match="other_paths must be"):
        regression.load_band(good)


def test_dvc_yaml_declares_the_study(tmp_path) -> None:
    dvc = yaml.safe_load((REPO / "dvc.yaml").read_text())
    st = dvc["stages"]
    assert {"seeds", "train", "evaluate", "baselines", "tournament", "behaviour", "report"} <= set(st)
    assert "${item.p}train.${item.algo}" in st["train"]["do"]["params"]
    assert st["report"]["do"]["metrics"] == [{"${item.reports}/metrics.json": {"cache": False}}]
    # every study of params.yaml (the main one and those under studies:) is in every stage, its items
    # pointing at the study's params keys and at the folders the stages write (stages.study_paths)
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    studies = {"big2": ""} | {name: name for name in study_names(raw)}
    for name, study in studies.items():
        p = parse_params(raw, study)
        paths = stages.study_paths(p)
        for stage in ("seeds", "baselines", "tournament", "behaviour", "report"):
            item = st[stage]["foreach"][name]
            assert item["p"] == (f"studies.{study}." if study else "") and item["flag"] == (
                f" --study {study}" if study else "")
            assert (item["runs"], item["reports"], item["data"]) == (
                str(paths.runs), str(paths.reports), str(paths.seeds.parent))
        for stage in ("train", "evaluate"):
            learners = {k: v for k, v in st[stage]["foreach"].items() if v["runs"] == str(paths.runs)}
            assert sorted(v["algo"] for v in learners.values()) == sorted(p.learners())
            assert set(learners) == {a if not study else f"{study}-{a}" for a in p.learners()}
    # the best learner's further evaluations: exactly the studies whose params ask for them
    for stage in ("deep", "auction"):
        assert set(st[stage]["foreach"]) == {n for n, s in studies.items()
                                             if getattr(parse_params(raw, s), stage) is not None}
    # the Big 2 report summarizes every study beside it, from its metrics.json
    big2 = st["report"]["foreach"]["big2"]
    assert {big2["extra"], big2["extra2"]} == {f"reports/{s}/metrics.json" for s in study_names(raw)}


def test_prefect_flow_trains_two_configs_on_a_local_dask_cluster(tmp_path) -> None:
    from pipeline.flows import train_many_flow

    configs = [{"algo": "ppo", "epochs": 1, "games_per_epoch": 4, "eval_every": 0, "hidden": 16},
               {"algo": "mcq", "epochs": 1, "games_per_epoch": 4, "eval_every": 0, "hidden": 16}]
    res = train_many_flow(configs, str(tmp_path), task_runner="dask")
    assert [r["algo"] for r in res] == ["ppo", "mcq"] and all(r["epochs"] == 1 for r in res)
    assert (tmp_path / "0-ppo" / "policy.pt").exists() and (tmp_path / "1-mcq" / "policy.pt").exists()


def test_the_study_flow_runs_every_stage_in_order_and_trains_the_dvc_stages_learners(study_dir) -> None:
    """The flow trains two learners at a time; each is, bit for bit, the learner that the DVC
    stage's function (``python -m pipeline train ALGO``) trains alone: every kept policy file
    and every per-epoch evaluation are the same; and the flow's seeds, evaluations, tournament and
    behaviour equal dvc.yaml's stages run one after the other from scratch."""
    import shutil

    from pipeline.flows import study_flow

    res = study_flow("params.yaml", learners=["ppo", "qlearning"], track=False)
    assert set(res["evaluations"]) == {"ppo", "qlearning"}
    md = Path(res["report"]).read_text()
    assert "Final comparison" in md and "Interpretability window" in md and "## Tournament" in md

    def outputs() -> dict:
        def files(algo: str) -> dict[str, bytes]:
            run = Path("runs") / algo
            return {f.relative_to(run).as_posix(): f.read_bytes()
                    for f in [run / "policy.pt", *sorted((run / "snapshots").glob("*.pt"))]}

        evals = {a: json.loads(Path(f"reports/eval/{a}.json").read_text()) for a in ("ppo", "qlearning")}
        return {"seeds": stages.load_seeds(), "eval": {a: e["matches"] for a, e in evals.items()},
                "files": {a: files(a) for a in ("ppo", "qlearning")},
                "curves": {a: Path(f"reports/curves/{a}.csv").read_text() for a in ("ppo", "qlearning")},
                "tournament": json.loads(Path("reports/tournament.json").read_text()),
                "behaviour": json.loads(Path("reports/behaviour/behaviour.json").read_text())}

    flow_out = outputs()
    assert sorted(flow_out["files"]["ppo"]) == ["policy.pt", "snapshots/epoch001.pt", "snapshots/epoch002.pt"]
    # the DVC path from scratch: dvc.yaml's stages one after the other, each on the one before's files
    for d in ("data", "runs", "reports"):
        shutil.rmtree(d)
    p = load_params("params.yaml")
    stages.make_seeds(p)
    for algo in ("ppo", "qlearning"):
        stages.train_learner(p, algo, track=False)
    for algo in ("ppo", "qlearning"):
        stages.evaluate_learner(p, algo, track=False)
    stages.tournament(p, track=False)
    stages.behaviour(p, track=False)
    dvc_out = outputs()
    for key in flow_out:
        assert dvc_out[key] == flow_out[key], key


def test_tournament_schedule_is_balanced_and_cycles_are_found() -> None:
    from collections import Counter

    from climbrl.evaluate.tournament import schedule, summarize

    games = schedule(5, deals=24)
    assert len(games) == 5 * 24  # C(5, 4) groups x 24 deals, each group in one of its 24 seatings per deal
    rel = Counter()
    seat = Counter()
    for seats, _ in games:
        for s, p in enumerate(seats):
            seat[(p, s)] += 1
            for k in (1, 2, 3):
                rel[(p, seats[(s + k) % 4], k)] += 1
    assert len(set(seat.values())) == 1  # every participant equally often in every seat
    assert len(set(rel.values())) == 1  # every pair equally often next / across / before
    # a rock-paper-scissors record: A ahead of B, B ahead of C, C ahead of A, D always last
    rec = []
    for order in (["A", "B", "C", "D"], ["B", "C", "A", "D"], ["C", "A", "B", "D"]) * 30:
        idx = ["A", "B", "C", "D"]
        o = [idx.index(x) for x in order]
        rec.append(o + [0, 1, 2, 3] + [1.0, -1 / 3, -1 / 3, -1 / 3] + o + [len(rec) // 3])  # 30 deals
    res = summarize(["A", "B", "C", "D"], rec, rules="paper")
    assert res["leaderboard"][-1]["participant"] == "D"
    cycles = [c for c in res["counter_chains"] if set(c["cycle"]) == {"A", "B", "C"}]
    assert cycles and cycles[0]["significant"]


def test_tournament_runs_with_rule_agents_and_a_checkpoint(tmp_path) -> None:
    from climbrl.config import train_config
    from climbrl.evaluate.tournament import run_tournament
    from climbrl.training import train

    train(train_config("ppo", epochs=1, games_per_epoch=4, eval_every=0, hidden=16), tmp_path, progress=False)
    res = run_tournament([f"mine=checkpoint:{tmp_path / 'policy.pt'}", "random", "greedy", "heuristic", "aggressive"],
                         deals=24, workers=2)
    assert res["games"] == 120 and {r["participant"] for r in res["leaderboard"]} >= {"mine", "heuristic"}
    assert all(r["games"] == 96 for r in res["leaderboard"])  # 4 of 5 groups x 24 deals
    one = run_tournament(["random", "greedy", "heuristic", "aggressive", "conservative"], deals=24, workers=1)
    two = run_tournament(["random", "greedy", "heuristic", "aggressive", "conservative"], deals=24, workers=2)
    assert one == two


def test_ablation_runs_every_configuration_and_seed(study_dir, capsys) -> None:
    from pipeline.ablation import main as ablation_main
    from pipeline.ablation import run_ablation, summary_markdown

    from climbrl.evaluate.match import run_match

    p = load_params("params.yaml")
    stages.make_seeds(p)
    small = {"seeds": 2, "epochs": 1, "games_per_epoch": 4, "eval_every": 1, "eval_games": 8, "workers": 2}
    s = run_ablation("curriculum", p, deals=10, **small)
    assert [c["value"] for c in s["configs"]] == ["self_play", "checkpoint_self_play", "fixed_opponents",
                                                  "opponent_pool"]
    assert all(len(c["runs"]) == 2 and "std/random" in c for c in s["configs"])
    # the final evaluation: every run on the versioned deals, the evaluate stage's protocol
    final = s["final"]
    assert final["deals"] == 10 and final["opponents"] == ["random", "greedy"]
    assert [c["value"] for c in final["configs"]] == [c["value"] for c in s["configs"]]
    run = final["configs"][2]["runs"][1]
    assert run["policy"].endswith("curriculum=fixed_opponents/seed1/policy.pt")
    for o in ("random", "greedy"):
        digits = run["vs"][o]["deal_wins"]
        assert len(digits) == 10 and sum(map(int, digits)) == run["vs"][o]["wins"]
        same = run_match(f"checkpoint:{run['policy']}", [o], games=40, seeds=stages.load_seeds())
        assert same["wins"] == run["vs"][o]["wins"]
    for c in final["configs"]:
        v = c["vs"]["greedy"]
        rates = [r["vs"]["greedy"]["win_rate"] for r in c["runs"]]
        assert v["mean"] == pytest.approx(sum(rates) / 2) and v["low"] <= v["mean"] <= v["high"]
    assert len(final["comparisons"]["random"]) == 6  # every pair of the four curricula
    assert all(isinstance(c["significant"], bool) for c in final["comparisons"]["greedy"])
    md = summary_markdown().read_text()
    assert "| opponent_pool |" in md and "![curriculum](curriculum.png)" in md
    assert "Significant differences" in md and "10 deals from every seat" in md
    from climbrl.report import _ablation_lines

    figures: list[Path] = []
    lines = _ablation_lines(Path("reports"), figures)  # the main report's copy, figures re-pointed
    assert "![curriculum](ablations/curriculum.png)" in lines and "### curriculum (curriculum)" in lines
    assert [f.name for f in figures] == ["curriculum.png"] and figures[0].exists()
    # the evaluation alone, on the existing runs, gives the same numbers
    assert ablation_main(["evaluate", "curriculum", "--seeds", "2", "--deals", "10", "--workers", "1"]) == 0
    assert json.loads(Path("reports/ablations/curriculum.json").read_text())["final"] == final
    # repeated: every run resumes from its checkpoint and gives the same numbers
    assert run_ablation("curriculum", p, evaluate=False, **small)["configs"] == s["configs"]
    # a checkpoint of another configuration is discarded, not resumed
    more = run_ablation("curriculum", p, evaluate=False, **{**small, "eval_games": 12})
    assert all(r["eval_games/random"] == 12 for c in more["configs"] for r in c["runs"])
    with pytest.raises(ValueError, match="unknown ablation"):
        run_ablation("dropout", p)
    capsys.readouterr()
    assert ablation_main(["evaluate", "entropy", "--seeds", "1", "--deals", "10"]) == 2  # one line, no traceback
    assert capsys.readouterr().err.startswith("python -m pipeline.ablation: error: ablation entropy: no trained policy")


def test_ablation_params_are_validated() -> None:
    with pytest.raises(ParamsError, match="ablation.entropy"):
        parse_params({**SMALL, "ablation": {"entropy": [-0.1]}})
    with pytest.raises(ParamsError, match="ablation.curriculum"):
        parse_params({**SMALL, "ablation": {"curriculum": ["self_play", "league"]}})
    with pytest.raises(ParamsError, match="ablation.seeds"):
        parse_params({**SMALL, "ablation": {"seeds": 0}})
    assert parse_params(SMALL).ablation.entropy == (0.0, 0.001, 0.01, 0.05, 0.1)
    assert load_params(REPO / "params.yaml").ablation.epochs == 100


def test_participant_labels_are_plain_names() -> None:
    from climbrl.evaluate.tournament import split_label

    assert split_label("ppo=checkpoint:runs/ppo/policy.pt") == ("ppo", "checkpoint:runs/ppo/policy.pt")
    path = "checkpoint:runs/ablation/curriculum=self_play/seed0/policy.pt"  # '=' inside the path
    assert split_label(path) == (path, path)
    assert split_label("best=" + path) == ("best", path)
    assert split_label("heuristic") == ("heuristic", "heuristic")


def test_an_unlabelled_checkpoint_whose_path_holds_an_equals_sign_plays(tmp_path) -> None:
    from climbrl.config import train_config
    from climbrl.evaluate.tournament import run_tournament
    from climbrl.training import train

    out = tmp_path / "ent_coef=0.1"
    train(train_config("ppo", epochs=1, games_per_epoch=4, eval_every=0, hidden=16), out, progress=False)
    spec = f"checkpoint:{out / 'policy.pt'}"
    res = run_tournament([spec, "random", "greedy", "heuristic"], deals=1)
    assert spec in {r["participant"] for r in res["leaderboard"]}


def test_a_study_beside_the_main_one_is_parsed_from_its_own_sections() -> None:
    """``studies.NAME``: its own game, rules and sections; a left-out section takes its game's
    defaults (not the main study's values); tracking is inherited with the study's name; errors
    name the study's key; the params spec ``FILE#NAME`` loads it."""
    tune = {"algo": "ppo", "trials": 1, "epochs": 1, "games_per_epoch": 3, "eval_every": 1, "eval_games": 12,
            "seed": 0, "storage": "sqlite:///optuna.db", "study": "t", "pruner": "none"}
    raw = {"game": "big2", "rules": "paper", "seeds": {"deals": 10, "seed": 3}, "evaluate": {"games": 8, "workers": 1},
           "tune": tune,
           "tracking": {"tracking_uri": "sqlite:///m.db", "experiment": "e", "register_model": "m"},
           "studies": {"ddz": {"game": "doudizhu", "rules": "rlcard", "seeds": {"deals": 4, "seed": 5},
                               "train": {"common": {"epochs": 1}, "ppo": {}},
                               "evaluate": {"games": 6, "workers": 1}, "tune": tune}}}
    main, ddz = parse_params(raw), parse_params(raw, "ddz")
    assert (main.game, main.study, ddz.game, ddz.study, ddz.rules) == ("big2", "", "doudizhu", "ddz", "rlcard")
    assert "studies" not in main.raw and ddz.seeds.deals == 4 and ddz.train["ppo"].epochs == 1
    assert ddz.evaluate.opponents == ("random", "greedy", "heuristic")  # the game's default, not Big 2's section
    assert (ddz.tracking.experiment, ddz.tracking.register_model) == ("e-ddz", "m-ddz")
    assert stages.study_paths(ddz).runs == Path("runs/ddz") and stages.study_paths(main).runs == Path("runs")
    with pytest.raises(ParamsError, match="studies.nope: no such study"):
        parse_params(raw, "nope")
    with pytest.raises(ParamsError, match="studies.ddz.train.ppo.lr: must be positive"):
        parse_params(with_value(raw, ("studies", "ddz", "train", "ppo", "lr"), -1.0), "ddz")
    with pytest.raises(ParamsError, match="studies.ddz.ablation: unknown section"):
        parse_params(with_value(raw, ("studies", "ddz", "ablation"), {}), "ddz")
    assert load_params(REPO / "params.yaml").study == ""
    assert load_params(f"{REPO / 'params.yaml'}#doudizhu").game == "doudizhu"


def test_a_learner_variant_is_named_and_names_its_algorithm() -> None:
    """``train.ppo_roles: {algo: ppo, ...}``: a variant of a learner is a learner of its own (its
    stage, run folder and rows), its settings over train.common; a bad name or algorithm is an error."""
    raw = {"game": "big2", "seeds": {"deals": 10, "seed": 3}, "evaluate": {"games": 8, "workers": 1},
           "tune": {"algo": "ppo", "trials": 1, "epochs": 1, "games_per_epoch": 3, "eval_every": 1, "eval_games": 12,
                    "seed": 0, "storage": "sqlite:///optuna.db", "study": "t", "pruner": "none"},
           "train": {"common": {"epochs": 3, "ent_coef": 0.02}, "ppo": {}, "ppo_low": {"algo": "ppo", "lr": 1e-5}},
           "tracking": {"tracking_uri": "sqlite:///m.db", "experiment": "e", "register_model": "m"}}
    p = parse_params(raw)
    assert p.learners() == ["ppo", "ppo_low"]
    assert (p.train["ppo_low"].algo, p.train["ppo_low"].lr, p.train["ppo_low"].ent_coef) == ("ppo", 1e-5, 0.02)
    assert p.train["ppo"].lr != 1e-5
    with pytest.raises(ParamsError, match="train.fast.algo: unknown learner 'a2c'"):
        parse_params(with_value(raw, ("train", "fast"), {"algo": "a2c"}))
    with pytest.raises(ParamsError, match="train.fast: unknown learner 'fast'"):
        parse_params(with_value(raw, ("train", "fast"), {}))
    with pytest.raises(ParamsError, match="train.Bad-Name: a learner's name"):
        parse_params(with_value(raw, ("train", "Bad-Name"), {"algo": "ppo"}))
