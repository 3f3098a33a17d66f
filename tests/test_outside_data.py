"""A fresh clone has no ``../shared``: the tests that need the public agent's files skip with
how to obtain them (and fail under CI), and the baseline stage leaves the public agent out with a
note instead of failing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from climbrl.cli import main

REPO = Path(__file__).resolve().parents[1]
NEEDS_PUBLIC_AGENT = ["tests/test_play.py::test_hints_show_probabilities_and_quit_leaves",
                      "tests/test_charlesworth_agent.py::test_refuses_other_rules"]


def _pytest(empty: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("CI", "CLIMBRL_REQUIRE_EXTERNAL", "CLIMBRL_CHARLESWORTH_GAMES", "PYTEST_XDIST_WORKER")}
    clean.update(CLIMBRL_EXTERNAL=str(empty), **env)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:xdist", "-p", "no:cacheprovider",
                           *NEEDS_PUBLIC_AGENT], cwd=REPO, env=clean, capture_output=True, text=True, timeout=600)


def test_public_agent_tests_skip_with_how_to_get_it_and_fail_under_ci(tmp_path) -> None:
    res = _pytest(tmp_path)
    assert res.returncode == 0, res.stdout[-3000:]
    skips = [line for line in res.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skips) == len(NEEDS_PUBLIC_AGENT), res.stdout[-3000:]
    assert all("charlesworth_ppo_136500.npz" in s and "big2_PPOalgorithm" in s and "convert-charlesworth" in s
               for s in skips)
    ci = _pytest(tmp_path, CI="true")
    summary = ci.stdout.strip().splitlines()[-1]
    assert ci.returncode == 1 and "skipped" not in summary and "passed" not in summary, summary


def test_baselines_without_the_public_agent_leave_it_out_with_a_note(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CLIMBRL_EXTERNAL", str(tmp_path / "nothing"))
    out = tmp_path / "reports"
    assert main(["baselines", "--games", "4", "--workers", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    data = json.loads((out / "baselines.json").read_text())
    assert len(data["matches"]) == 15 and all(m["rules"] == "paper" for m in data["matches"])
    assert "convert-charlesworth" in data["public_agent_note"]
    md = (out / "baselines.md").read_text()
    assert md.rstrip().endswith(data["public_agent_note"]) and data["public_agent_note"] in printed
