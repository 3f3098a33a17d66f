"""The policies the repository ships (issue 25, ``models/``, ``pipeline/models.py``): each file is
the one its manifest names (SHA-256), the manifest's settings are the run's in strong/params.yaml,
its final numbers are the strong report's, and a fresh clone plays it without training."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from pipeline import models

from climbrl.agents.base import Decision
from climbrl.games.registry import make_game
from climbrl.learn.specs import make_agent
from climbrl.track import sha256_file

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "models").glob("*/model.json"))


def test_the_repository_ships_a_policy() -> None:
    assert SHIPPED, "models/ holds no shipped policy"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.parent.name)
def test_a_shipped_policy_is_the_one_its_manifest_names_and_plays(path: Path) -> None:
    info = json.loads(path.read_text())
    policy = path.parent / info["file"]
    assert sha256_file(policy) == info["sha256"] and policy.stat().st_size == info["bytes"]
    spec, reports, _, command = models.source(info["run"], ROOT)
    assert info["settings"] == {k: v for k, v in spec.items() if k in ("imitate", "continue", "train")}, \
        "the run's params changed since this policy was shipped: retrain and ship it again"
    assert info["command"] == command
    final = reports / info["run"] / "final.json"
    assert json.loads(final.read_text())["matches"] == info["final"]["matches"]
    curve = path.parent / "curve.json"  # shipped beside the policy: the same curve the report shows
    if curve.exists():
        assert curve.read_bytes() == (reports / info["run"] / "curve.json").read_bytes()
    game_name = f"{info['game']}:{info['rules']}"
    agent = make_agent(f"checkpoint:{policy}", game_name)
    state = make_game(game_name).new_game(seed=7)
    rng = random.Random(0)
    while not state.is_terminal():
        d = Decision.from_state(state)
        state.apply(d.moves[agent.act(d, rng)])
    assert state.is_terminal()


def test_shipping_needs_a_trained_run_and_names_what_is_missing(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="runs/strong/doudizhu-warm/policy.pt missing"):
        models.ship("doudizhu-warm", root=tmp_path)
    assert models.main(["ship", "nothing-here"]) == 2


def test_serve_lists_the_shipped_policies() -> None:
    from climbrl.serve.catalog import checkpoints

    listed = {c["spec"]: c for c in checkpoints(ROOT)}
    for path in SHIPPED:
        spec = f"checkpoint:{(path.parent / 'policy.pt').relative_to(ROOT)}"
        assert spec in listed and listed[spec]["label"].startswith("shipped ")
