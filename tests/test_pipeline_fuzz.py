"""A property-based fuzz of the pipeline commands' params and arguments (issue 51): the part of
``tests/test_cli_fuzz.py`` for ``python -m pipeline.*``. Hypothesis takes a valid params file of
a pipeline (strong, auction, seeds, tuning, champion), breaks it (a value replaced by a hostile
one, a key dropped or added, a run renamed to a path, the file made broken YAML, or missing), or
gives the command a hostile argument; the command runs in-process, and:

* it ends with status 0 or 2, never an exception (a traceback);
* a refusal (status 2) is one line on stderr;
* no file of the repository changes.

No training or match runs: each command's work (train, curve, final, the seed and tuning runs,
the champion's matches, the auction's training) is replaced by a stub, so what is fuzzed is the
reading of the params and the command's handling of its errors; a file the stub would have worked
on is never reached with bad params. ``CLIMBRL_FUZZ_EXAMPLES`` sets the number of examples.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pipeline import auction, champion, seeds, strong, tuning

from climbrl.agents.runner import deal_seeds
from tests.test_cli_fuzz import HOSTILE, repo_state  # noqa: F401  (a fixture: the repository is unchanged)

ROOT = Path(__file__).resolve().parents[1]

VALUES = [*HOSTILE, -1, 0, 1, 2**64, 10**12, True, False, None, 3.5, float("nan"), [1], [], {"a": 1}, {},
          "../../escaped", "heuristic", "random"]
NAMES = ["../../escaped", "", ".x", "a/b", "x..y", 5, True, None, "ok-name"]
BROKEN = ["[1", "{a: 1", "a: 1\na: 2\n", "\x00\x01", "", "- 1\n", "games: 5\n", "42", "'", "? [1]\n: 2\n"]


def _base(folder: Path) -> dict[str, dict[str, Any]]:
    """A valid params mapping of each fuzzed pipeline, its files written under ``folder``."""
    from tests.test_champion import _params as champion_params
    from tests.test_seeds import SEEDS
    from tests.test_seeds import STUDY as SEED_STUDY
    from tests.test_tune_pipeline import TUNING

    (folder / "params.yaml").write_text(yaml.safe_dump(SEED_STUDY))
    (folder / "deals.json").write_text(json.dumps({"seed": 1, "deals": deal_seeds(1, 4, "evaluation")}))
    (folder / "champion").mkdir()
    train = {"algo": "dmc", "epochs": 1, "games_per_epoch": 2, "hidden": 8, "rules": "paper", "seed": 0}
    run = {"train": train, "curve": {"opponents": ["heuristic"], "deals": 2, "seed": 3},
           "evaluate": {"opponents": ["random"], "deals": 3, "deal_set": "deals.json"}}
    auction_section = yaml.safe_load((ROOT / "strong" / "params.yaml").read_text())["auction"]
    tune = {**TUNING, "games": {"big2": {**TUNING["games"]["big2"], "learners": ["ppo", "mcq"]}}}
    return {"strong": {"games": {"big2": run, "big2-more": {**run, "train": {**train, "game": "big2"}}}},
            "auction": {"auction": auction_section},
            "seeds": {**SEEDS, "games": {"big2": SEEDS["games"]["big2"]}},
            "tuning": tune,
            "champion": yaml.safe_load(champion_params(folder / "champion").read_text())}


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory) -> tuple[Path, dict[str, dict[str, Any]]]:
    folder = tmp_path_factory.mktemp("pipeline-fuzz")
    return folder, _base(folder)


def _stub(*args: Any, **kwargs: Any) -> dict:
    return {}


STUBS = {"strong": [(strong, "train_game"), (strong, "curve"), (strong, "final")],
         "auction": [(auction, "train"), (auction, "evaluate"), (auction, "render")],
         "seeds": [(seeds, "run")],
         "tuning": [(tuning, "run_studies"), (tuning, "run_compare")],
         "champion": [(champion, "play_match"), (champion, "time_match"), (champion, "train_base")]}
"""Each command's work, replaced by :func:`_stub`."""

MAINS = {"strong": strong.main, "auction": auction.main, "seeds": seeds.main, "tuning": tuning.main,
         "champion": champion.main}


def _argv(command: str, params: str, draw: Any) -> list[str]:
    """The command line of ``command`` on the params file ``params``: a step (and run) it knows."""
    if command == "strong":
        step = draw(st.sampled_from(["train", "curve", "final", "report"]))
        return [step, draw(st.sampled_from(["big2", "big2-more"])), "--params", params, "--reports", "reports",
                "--no-track"]
    if command == "auction":
        return [draw(st.sampled_from(["train", "evaluate"])), "--params", params]
    if command == "seeds":
        return ["run", "--params", params]
    if command == "tuning":
        return [draw(st.sampled_from(["study", "compare", "estimate"])), "--params", params]
    step = draw(st.sampled_from(["match", "timing", "base"]))
    return ["--params", params, "--reports", "reports", step, *(["heuristic"] if step != "base" else [])]


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path in ``node`` (mappings and lists)."""
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    out = []
    for k, v in items:
        out.append((*prefix, k))
        out += _paths(v, (*prefix, k))
    return out


def _broken(raw: dict, draw: Any) -> tuple[dict | None, str | None]:
    """``raw`` with one thing broken; or ``(None, text)``: a file's text that is not such params."""
    how = draw(st.sampled_from(["value", "value", "value", "drop", "add", "rename", "text"]))
    if how == "text":
        return None, draw(st.sampled_from(BROKEN) | st.text(max_size=12))
    out = json.loads(json.dumps(raw))
    paths = _paths(out)
    path = draw(st.sampled_from(paths))
    parent = out
    for k in path[:-1]:
        parent = parent[k]
    last = path[-1]
    if how == "value":
        parent[last] = draw(st.sampled_from(VALUES))
    elif how == "drop":
        del parent[last]
    elif how == "add" and isinstance(parent, dict):
        parent[draw(st.sampled_from(["extra", "seed", "deals", "x"]))] = draw(st.sampled_from(VALUES))
    elif how == "rename" and isinstance(parent, dict):
        parent[draw(st.sampled_from(NAMES))] = parent.pop(last)
    return out, None


@pytest.mark.usefixtures("repo_state")
@settings(max_examples=int(os.environ.get("CLIMBRL_FUZZ_EXAMPLES", "150")), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(data=st.data())
def test_any_broken_params_or_argument_ends_in_0_or_2_with_one_line(data, fuzz_dir, monkeypatch) -> None:
    folder, base = fuzz_dir
    monkeypatch.chdir(folder)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("CLIMBRL_TUNE_STORAGE", raising=False)
    command = data.draw(st.sampled_from(sorted(MAINS)), label="command")
    for module, name in STUBS[command]:
        monkeypatch.setattr(module, name, _stub)
    path = folder / f"{command}.yaml"
    kind = data.draw(st.sampled_from(["params"] * 4 + ["missing", "argument"]), label="kind")
    if kind == "missing":
        path.unlink(missing_ok=True)
        argv = _argv(command, str(path), data.draw)
    else:
        raw, text = _broken(base[command], data.draw) if kind == "params" else (base[command], None)
        path.write_text(text if text is not None else yaml.safe_dump(raw, allow_unicode=True))
        argv = _argv(command, str(path), data.draw)
        if kind == "argument":
            at = data.draw(st.integers(0, len(argv)), label="at")
            argv[at:at] = data.draw(st.sampled_from([["--workers", "x"], ["--workers", "-1"], ["--bogus"], ["extra"],
                                                     ["--params"], ["../../x"], ["\x00"]]), label="argument")
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            rc = MAINS[command](argv)
        except SystemExit as e:  # argparse: a refused argument (2)
            rc = e.code
    said = err.getvalue()
    assert rc in (0, 2), (command, argv, rc, said[-2000:])
    assert "Traceback" not in said, (command, argv, said[-2000:])
    if rc == 2:
        assert len(said.strip().splitlines()) == 1 and ": error: " in said, (command, argv, said)
