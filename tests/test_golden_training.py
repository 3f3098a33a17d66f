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
