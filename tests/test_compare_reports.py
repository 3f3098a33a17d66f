"""benchmarks/compare_reports.py (issue 32): two report trees compared number by number, timings
aside; a difference anywhere (a nested list too) or a file on one side only is reported and fails."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "compare_reports.py"


def tree(folder: Path, win_rate: float, seconds: float, extra: bool = False) -> Path:
    (folder / "eval").mkdir(parents=True)
    doc = {"learners": {"ppo": {"win_rate": win_rate, "train_seconds": seconds, "curve": [0.1, win_rate],
                                "decisions_per_s": seconds * 10, "ok": True}}, "name": "x"}
    (folder / "eval" / "ppo.json").write_text(json.dumps(doc))
    if extra:
        (folder / "more.json").write_text("{}")
    return folder


def run(a: Path, b: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), str(a), str(b)], capture_output=True, text=True)


def test_equal_numbers_with_other_timings_pass(tmp_path) -> None:
    r = run(tree(tmp_path / "a", 0.61, 5.0), tree(tmp_path / "b", 0.61, 9.0))
    assert r.returncode == 0, r.stdout
    assert "1 JSON files, 3 numeric fields compared (timings aside): 0 differ" in r.stdout


def test_a_moved_number_and_a_missing_file_fail(tmp_path) -> None:
    r = run(tree(tmp_path / "a", 0.61, 5.0), tree(tmp_path / "b", 0.62, 5.0, extra=True))
    assert r.returncode == 1
    assert "2 differ" in r.stdout
    assert "eval/ppo.json learners/ppo/win_rate: 0.61 -> 0.62" in r.stdout
    assert "eval/ppo.json learners/ppo/curve/1: 0.61 -> 0.62" in r.stdout
    assert "only in new: more.json" in r.stdout
