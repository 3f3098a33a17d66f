"""Every purpose draws its own deals (issue 29, section 9): under one seed, the Big 2 baseline
table, the tournament and the champion base's teacher games used to play the same deals
(``deal_seeds(0, n)`` is a prefix of ``deal_seeds(0, m)``). Now each purpose's deals come from its
own SeedSequence spawn key (:data:`climbrl.agents.runner.PURPOSES`)."""

from __future__ import annotations

import contextlib
import itertools
import sys
from pathlib import Path

import pytest
import yaml

import climbrl.agents.runner as runner
from climbrl.params import parse_params

REPO = Path(__file__).resolve().parents[1]


class Drawn(Exception):
    """Raised by the spy once a stage has drawn its deals: nothing is played."""


def test_every_purpose_has_its_own_deals_under_one_seed() -> None:
    drawn = {p: runner.deal_seeds(0, 5000, p) for p in [*runner.PURPOSES, None]}
    assert len(set(runner.PURPOSES.values())) == len(runner.PURPOSES)
    for (a, x), (b, y) in itertools.combinations(drawn.items(), 2):
        assert not set(x) & set(y), (a, b)
    for p, deals in drawn.items():  # reproducible, and the first k of n are the k deals
        assert runner.deal_seeds(0, 7, p) == deals[:7] and len(set(deals)) == len(deals)
    # the unnamed stream is the one ad hoc matches always had (climbrl evaluate --seed 12: the tuning deals)
    assert runner.deal_seeds(12, 3) == [4993459512098953890, 5293410889086331237, 1918956811573485089]
    assert runner.deal_seeds(0, 2, "evaluation") != runner.deal_seeds(0, 2, "validation")
    with pytest.raises(ValueError, match="unknown deal purpose 'tuning'"):
        runner.deal_seeds(0, 2, "tuning")


@pytest.fixture
def spy(monkeypatch):
    """``deal_seeds`` replaced, in every module that imported it, by a spy that keeps what it
    drew; ``spy.stop`` makes it raise :class:`Drawn` right after (the stage plays nothing)."""
    import pipeline.champion  # noqa: F401 (every module that draws deals, imported before the patch)
    import pipeline.stages  # noqa: F401

    import climbrl.evaluate.baselines_report  # noqa: F401
    import climbrl.evaluate.deep  # noqa: F401
    import climbrl.evaluate.roundrobin  # noqa: F401
    import climbrl.evaluate.tournament  # noqa: F401
    import climbrl.learn.imitation  # noqa: F401
    import climbrl.learn.train  # noqa: F401
    import climbrl.training  # noqa: F401

    real = runner.deal_seeds

    class Spy:
        stop = True
        deals: list[int] = []

        def __call__(self, *args, **kwargs):
            out = real(*args, **kwargs)
            self.deals += out
            if self.stop:
                raise Drawn
            return out

    s = Spy()
    s.deals = []
    for module in list(sys.modules.values()):
        if getattr(module, "deal_seeds", None) is real:
            monkeypatch.setattr(module, "deal_seeds", s)
    return s


def _params(study: str = "", **overrides):
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    section = raw["studies"][study] if study else raw
    for key, value in overrides.items():
        *path, last = key.split(".")
        d = section
        for k in path:
            d = d.setdefault(k, {})
        d[last] = value
    return parse_params(raw, study)


def _draw(spy, fn) -> list[int]:
    spy.deals = []
    with pytest.raises(Drawn):
        fn()
    return spy.deals


def _versioned(spy, params, tmp_path) -> tuple[list[int], list[int]]:
    from pipeline import stages

    spy.stop, spy.deals = False, []
    with contextlib.suppress(ValueError):  # shared deals, refused after drawing both: the test names them
        stages.make_seeds(params, tmp_path / "e.json", tmp_path / "v.json")
    spy.stop = True
    n = params.seeds.deals
    return spy.deals[:n], spy.deals[n:]


def _shared(drawn: dict[str, list[int]]) -> list[tuple[str, str, int]]:
    return [(a, b, len(set(x) & set(y))) for (a, x), (b, y) in itertools.combinations(drawn.items(), 2)
            if set(x) & set(y)]


def test_the_stages_draw_disjoint_deals_at_seed_0(spy, monkeypatch, tmp_path) -> None:
    """The deals each stage of a study (and of the Big 2 champion) draws with every seed set to 0,
    as many as the committed params ask (the validation seed 1: equal seeds are tests/test_selection.py's): no
    two purposes of one game share one."""
    from pipeline import champion, stages

    from climbrl.evaluate import match
    from climbrl.evaluate.deep import deep_duel, deep_evaluate
    from climbrl.evaluate.roundrobin import round_robin
    from climbrl.training import evaluate_policy

    monkeypatch.chdir(tmp_path)
    zero = {"seeds.seed": 0, "seeds.validation_seed": 1, "baselines.seed": 0, "tournament.seed": 0,
            "train.common.seed": 0, "train.common.eval_seed": 0}
    big2 = _params(**zero, **{"tournament.learners": []})  # the rule agents' deals: no trained policy needed

    def in_training_evaluation(params):
        with monkeypatch.context() as m:
            m.setattr(match, "make_agent", lambda *a, **k: None)  # no trained policy needed to draw
            return _draw(spy, lambda: evaluate_policy(params.train["ppo"], tmp_path / "p.pt"))

    drawn: dict[str, list[int]] = {}
    drawn["evaluation"], drawn["validation"] = _versioned(spy, big2, tmp_path)
    drawn["baselines"] = _draw(spy, lambda: stages.baselines(big2, workers=1))
    drawn["tournament"] = _draw(spy, lambda: stages.tournament(big2, track=False))
    drawn["deep (evaluate.repeats)"] = _draw(spy, lambda: deep_evaluate(
        "random", ["greedy"], rules=big2.rules, games=big2.evaluate.games, repeats=2, seed=0))
    drawn["training epoch 0"] = _draw(spy, lambda: stages.train_learner(big2, "ppo", track=False))
    drawn["in-training evaluation"] = in_training_evaluation(big2)
    base = champion.load_champion_params(REPO / "champion" / "params.yaml")
    assert base.base["seed"] == 0
    drawn["champion base's teacher"] = _draw(spy, lambda: champion.train_base(base, tmp_path / "b", tmp_path))
    sizes = {k: len(v) for k, v in drawn.items()}
    assert sizes["baselines"] == 250 and sizes["champion base's teacher"] == base.base["games"], sizes
    assert _shared(drawn) == []

    ddz = _params("doudizhu", **zero, **{"deep.seed": 0})
    drawn = {}
    drawn["evaluation"], drawn["validation"] = _versioned(spy, ddz, tmp_path)
    drawn["baselines"] = _draw(spy, lambda: stages.baselines(ddz, workers=1))
    drawn["round robin"] = _draw(spy, lambda: round_robin({"random": "random", "greedy": "greedy"}, game=ddz.game,
                                                          rules=ddz.rules, deals=ddz.raw["tournament"]["deals"],
                                                          seed=0))
    drawn["deep"] = _draw(spy, lambda: deep_duel("random", "greedy", rules=ddz.rules, deals=ddz.deep.deals,
                                                 repeats=ddz.deep.repeats, seed=ddz.deep.seed))
    drawn["training epoch 0"] = _draw(spy, lambda: stages.train_learner(ddz, "ppo", track=False))
    drawn["in-training evaluation"] = in_training_evaluation(ddz)
    assert _shared(drawn) == []


def test_the_seeds_command_writes_the_versioned_sets_and_repeats_itself(tmp_path, capsys) -> None:
    """``climbrl seeds`` draws for a purpose (default evaluation): the study's seeds give its
    versioned files, and the same arguments the same deals."""
    import json

    from pipeline import stages

    from climbrl.cli import main

    params = _params()
    stages.make_seeds(params, tmp_path / "e.json", tmp_path / "v.json")
    s = params.seeds
    runs = [["seeds", "--seed", str(s.seed), "--deals", str(s.deals), "--json"]] * 2 + [
        ["seeds", "--seed", str(s.validation_seed), "--deals", str(s.validation_deals), "--purpose", "validation",
         "--json"]]
    out = []
    for argv in runs:
        assert main(argv) == 0
        out.append(json.loads(capsys.readouterr().out))
    assert out[0] == out[1] == json.loads((tmp_path / "e.json").read_text())
    assert out[2] == json.loads((tmp_path / "v.json").read_text()) and out[2]["purpose"] == "validation"
    with pytest.raises(SystemExit) as e:
        main(["seeds", "--purpose", "tuning"])
    assert e.value.code == 2
