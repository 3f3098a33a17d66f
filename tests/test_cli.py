"""The command line: the rules explorer, the engine benchmark's output shape, the demo job."""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from climbrl.cli import main
from climbrl.evaluate.match import run_match


def run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        rc = main(list(argv))
    except SystemExit as e:  # argparse refuses a flag's value itself (status 2, the flag named)
        rc = e.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_moves_json_lead(capsys) -> None:
    rc, out, _ = run(capsys, "moves", "--rules", "paper", "--hand", "3D 3C 4H 5S", "--json")
    assert rc == 0
    rows = json.loads(out)
    cards = [tuple(r["cards"]) for r in rows]
    assert ("3D", "3C") in cards and ("3D", "4H", "5S") in cards and ("3C", "4H", "5S") in cards
    assert all(r["type"] != "pass" for r in rows)
    assert {r["type"] for r in rows} == {"single", "pair", "straight"}


def test_moves_facing_a_play(capsys) -> None:
    rc, out, _ = run(capsys, "moves", "--rules", "standard", "--hand", "9D 9S KH", "--prev", "9C 9H",
                     "--json")
    assert rc == 0
    rows = json.loads(out)
    assert rows[0] == {"index": 0, "cards": [], "type": "pass"}
    assert [r["cards"] for r in rows[1:]] == [["9D", "9S"]]


def test_moves_text_output(capsys) -> None:
    rc, out, _ = run(capsys, "moves", "--hand", "3♦ 4♦ 5♦ 6♦ 7♦")
    assert rc == 0
    assert "straight_flush" in out and "leading" in out


@pytest.mark.parametrize(
    "args,message",
    [
        (["--hand", "3D 4D", "--prev", "4C 6S"], "not a combination"),
        (["--hand", "3D 4X"], "'4X'"),
        (["--hand", "3D 4D", "--prev", "4D"], "shares cards"),
        (["--hand", "3D 3D"], "duplicate"),
        (["--rules", "nope", "--hand", "3D"], "unknown rules preset"),
    ],
)
def test_moves_errors(capsys, args: list[str], message: str) -> None:
    rc, _, err = run(capsys, "moves", *args)
    assert rc == 2 and message in err


def test_bench_engine_json_shape(capsys) -> None:
    rc, out, _ = run(capsys, "bench", "engine", "--games", "20", "--json", "--all-cores")
    assert rc == 0
    res = json.loads(out)
    assert res["games"] == 20 and res["games_per_s"] > 0 and res["decisions_per_s"] > 0
    assert res["decisions_per_game"] > 10
    assert res["with_observations"]["decisions_per_s"] > 0


def test_simulate_is_deterministic(capsys, tmp_path) -> None:
    out_file = tmp_path / "sim.json"
    rc, out, _ = run(capsys, "simulate", "--games", "40", "--seed", "3", "--json", "--out", str(out_file))
    assert rc == 0
    a = json.loads(out)
    rc, out, _ = run(capsys, "simulate", "--games", "40", "--seed", "3", "--json")
    assert json.loads(out) == a == json.loads(out_file.read_text())
    assert sum(w["wins"] for w in a["seat_win_rate"]) == 40
    assert all(w["low"] <= w["rate"] <= w["high"] for w in a["seat_win_rate"])


def test_console_script_is_installed() -> None:
    # the `climbrl` entry point of the environment running the tests (its bin folder first)
    script = shutil.which("climbrl", path=str(Path(sys.executable).parent)) or shutil.which("climbrl")
    assert script, "no climbrl console script: pip install -e . in this environment"
    proc = subprocess.run([script, "moves", "--hand", "2S", "--json"], capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout) == [{"index": 0, "cards": ["2S"], "type": "single"}]


def test_deep_evaluation_repeats_on_new_deal_sets(capsys) -> None:
    rc, out, _ = run(capsys, "evaluate", "--agent", "greedy", "--opponents", "random", "--games", "40",
                     "--repeats", "3", "--workers", "1", "--json")
    assert rc == 0
    r = json.loads(out)
    assert r["repeats"] == 3 and r["pooled_games"] == 120 and len(r["win_rates"]) == 3
    # repeat r is the match with seed + r on the deep evaluations' own deals (purpose "deep")
    rates = [run_match("greedy", ["random"], games=40, seed=seed, purpose="deep")["win_rate"] for seed in range(3)]
    assert rates == r["win_rates"]
    assert r["win_rate_std"] == pytest.approx(statistics.stdev(rates))
    rc, _, err = run(capsys, "evaluate", "--agent", "greedy", "--opponents", "random", "--repeats", "0")
    assert rc == 2 and "--repeats" in err


def test_behaviour_command(capsys) -> None:
    """The command prints what record_behaviour measures on the same games: its JSON is the
    library's result for those arguments, the table shows its numbers, and the seed picks the deals."""
    from climbrl.evaluate.behaviour import record_behaviour

    args = ["behaviour", "--agent", "greedy", "--opponents", "random", "--games", "8", "--workers", "1"]
    rc, out, _ = run(capsys, *args, "--json")
    assert rc == 0
    got = json.loads(out)
    assert got == json.loads(json.dumps(record_behaviour("greedy", ["random"], games=8, seed=0, workers=1)))
    assert got["decisions"] > 0
    rc, out, _ = run(capsys, *args)
    assert rc == 0 and "How they lead" in out and "deals from seed 0" in out
    assert f"| greedy | {got['leads']} | " in out and f"({got['can_beat']})" in out
    rc, other, _ = run(capsys, *args, "--seed", "1", "--json")
    assert rc == 0 and json.loads(other) != got
    rc, _, err = run(capsys, "behaviour", "--agent", "greedy", "--opponents", "randy", "--games", "8")
    assert rc == 2 and "unknown agent 'randy'" in err
