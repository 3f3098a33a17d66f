"""Every learner of both studies, trained at a tiny budget, matches its committed fingerprint
(tests/golden/training.json: metrics by epoch and the sums of every tensor of policy.pt), within
the tolerance that the math libraries' CPU-dependent code paths need (tests/golden/training.py).
A change of behaviour (a refactor that moves a number, another deal, another update) fails it;
a change meant to move numbers regenerates it: ``python -m tests.golden.training --write``."""

from __future__ import annotations

import json

import pytest

from tests.golden.training import GOLDEN, all_fingerprints, cases, differences


def test_the_golden_file_covers_every_learner_of_params() -> None:
    assert sorted(json.loads(GOLDEN.read_text())) == sorted(cases())


def test_every_learner_trains_to_its_committed_fingerprint() -> None:
    bad = differences(json.loads(GOLDEN.read_text()), all_fingerprints())
    assert not bad, f"{len(bad)} values moved (regenerate only if meant): " + "; ".join(bad[:12])


@pytest.mark.parametrize("case", ["big2/ppo"])
def test_the_fingerprint_sees_a_change_of_behaviour(case, tmp_path) -> None:
    """The comparison is not vacuous: one more game per epoch moves the fingerprint."""
    import dataclasses

    from tests.golden.training import fingerprint

    cfg = cases()[case]
    golden = {case: json.loads(GOLDEN.read_text())[case]}
    moved = {case: fingerprint(dataclasses.replace(cfg, games_per_epoch=cfg.games_per_epoch + 1), tmp_path / "x")}
    assert differences(golden, moved)


def test_paths_are_compared_like_with_like_across_vendors(tmp_path, monkeypatch) -> None:
    """``--paths`` compares each switch with the same switch kept from another machine: equal bits are
    called equal, one moved value or one value more is a difference, a switch not kept there is named,
    and a file made from other case configs is not compared at all."""
    from tests.golden import training

    monkeypatch.setattr(training, "PATHS_DIR", tmp_path)
    fp = {"big2/ppo": {"epoch1/loss": 0.5, "w/sum": 1.25, "w/abs": 2.5}}
    (tmp_path / "AuthenticAMD-AVX2.json").write_text(json.dumps(
        {"math_path": {"aten_capability": "AVX2", "torch": "2.13.0+cpu"}, "commit": "abc", "cases_hash": "h1",
         "paths": {"mkl-compatible": fp, "default": {"big2/ppo": {**fp["big2/ppo"], "w/sum": 1.2500001}},
                   "aten-avx2": fp}}))
    more = {"big2/ppo": {**fp["big2/ppo"], "epoch2/loss": 0.4}}
    out = training.compare_vendors({"mkl-compatible": fp, "default": fp, "aten-scalar": fp, "aten-avx2": more},
                                   "GenuineIntel-AVX512", "h1")
    lines = dict(line.strip().split(": ", 1) for line in out.splitlines()[1:])
    assert lines["mkl-compatible"].endswith("EQUAL bit for bit") and lines["mkl-compatible"].startswith("3 of 3")
    assert lines["default"].endswith("differs") and lines["default"].startswith("2 of 3")
    assert lines["aten-avx2"].endswith("differs")  # every kept value equal, one more here
    assert lines["aten-scalar"] == "not measured there"
    assert "not comparable, made from other case configs" in training.compare_vendors(
        {"default": fp}, "GenuineIntel-AVX512", "h2")
    assert training.compare_vendors({"default": fp}, "AuthenticAMD-AVX2", "h1").startswith(
        "no other machine's paths kept")


def test_kept_files_are_compared_with_each_other_without_training(tmp_path, monkeypatch) -> None:
    """``--kept`` sets each pair of kept machines side by side, switch by switch, and refuses a pair
    made from other case configs."""
    from tests.golden import training

    monkeypatch.setattr(training, "PATHS_DIR", tmp_path)
    assert training.compare_kept().startswith("fewer than two machines")
    fp = {"big2/ppo": {"epoch1/loss": 0.5, "w/sum": 1.25}}
    moved = {"big2/ppo": {"epoch1/loss": 0.5, "w/sum": 1.2500001}}

    def keep(name: str, paths: dict, cases_hash: str = "h1") -> None:
        (tmp_path / f"{name}.json").write_text(json.dumps(
            {"math_path": {"torch": "2.13.0+cpu"}, "commit": name[:3], "cases_hash": cases_hash, "paths": paths}))

    keep("AuthenticAMD-AVX512", {"default": fp, "mkl-compatible": fp})
    keep("GenuineIntel-AVX512", {"default": moved, "mkl-compatible": fp})
    lines = training.compare_kept().splitlines()
    assert lines[0] == "AuthenticAMD-AVX512 (commit Aut)" and lines[1].startswith("against GenuineIntel-AVX512")
    assert lines[2] == "  default: 1 of 2 values equal, tensors at most 8.0e-08 apart: differs"
    assert lines[3].startswith("  mkl-compatible: 2 of 2 values equal") and lines[3].endswith("EQUAL bit for bit")
    keep("GenuineIntel-AVX2", {"default": fp}, cases_hash="h2")
    out = training.compare_kept()
    assert "AuthenticAMD-AVX512 and GenuineIntel-AVX2: not comparable, made from other case configs" in out
    assert "GenuineIntel-AVX2 and GenuineIntel-AVX512: not comparable" in out



def test_write_case_rewrites_only_the_named_case(tmp_path, monkeypatch) -> None:
    """``--write --case`` trains and rewrites the named case alone and keeps every other value as
    committed; a case that is new in params.yaml must be named; ``--case`` goes with ``--write``
    and ``--save`` with ``--paths``."""
    import sys

    from tests.golden import training

    golden = json.loads(GOLDEN.read_text())
    copy = tmp_path / "training.json"
    stale = {k: {**v, "w/sum": -1.0} for k, v in golden.items()}  # every case marked as not retrained
    copy.write_text(json.dumps(stale))
    monkeypatch.setattr(training, "GOLDEN", copy)
    monkeypatch.setattr(sys, "argv", ["training", "--write", "--case", "big2/sarsa"])
    training.main()
    out = json.loads(copy.read_text())
    assert out["big2/sarsa"] == golden["big2/sarsa"] or not differences({"c": golden["big2/sarsa"]},
                                                                         {"c": out["big2/sarsa"]})
    assert "w/sum" not in out["big2/sarsa"]
    assert all(out[k] == stale[k] for k in stale if k != "big2/sarsa")
    del stale["doudizhu/mcq"]
    copy.write_text(json.dumps(stale))
    for argv in (["--write", "--case", "big2/sarsa"], ["--case", "big2/ppo"], ["--save"]):
        monkeypatch.setattr(sys, "argv", ["training", *argv])
        with pytest.raises(SystemExit):
            training.main()
    assert json.loads(copy.read_text()) == stale  # refused before anything was written
