"""The image installs what ``make run`` installs (issue 29, section 6): the Dockerfile once ran
``pip install -e .`` without the ``rlcard`` extra, so ``docker run`` failed at the Dou Dizhu
stages, whose params name RLCard's rule agent. The Dockerfile's extras are held against the
Makefile's ``venv`` target (what ``make run`` depends on), less ``dev`` (the test tools, which the
image does not run), and against the agents the studies of params.yaml name."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
TEST_ONLY = {"dev"}  # pytest, xdist, hypothesis, ruff: `make test`'s, not the pipeline's


def _editable_extras(text: str, where: str) -> list[set[str]]:
    """The extras of every ``pip install ... -e .[A,B]`` (quoted or not) in ``text``."""
    found = [set(filter(None, (m.group(1) or "").replace(" ", "").split(",")))
             for m in re.finditer(r"pip install\b[^\n]*?-e\s+['\"]?\.(?:\[([^\]]*)\])?['\"]?(?=\s|$)", text)]
    assert found, f"{where}: no editable install of the project"
    return found


def _makefile_target(text: str, target: str) -> str:
    """The recipe of ``target`` (its tab-indented lines)."""
    m = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", text, flags=re.M)
    assert m, f"Makefile: no target {target}"
    return m.group(1)


def make_run_extras() -> set[str]:
    text = (REPO / "Makefile").read_text()
    assert re.search(r"^run:.*\bvenv\b", text, flags=re.M), "make run no longer depends on the venv target"
    assert re.search(r"^venv:.*\$\(VENV\)/\.installed", text, flags=re.M)
    (extras,) = _editable_extras(_makefile_target(text, "$(VENV)/.installed"), "Makefile")
    return extras


def docker_extras() -> set[str]:
    (extras,) = _editable_extras((REPO / "Dockerfile").read_text(), "Dockerfile")
    return extras


def test_the_parsers_read_both_spellings() -> None:
    assert _editable_extras("RUN pip install -e .\n", "x") == [set()]
    assert _editable_extras("\t$(PY) -m pip install --quiet -e '.[dev, rlcard]'\n", "x") == [{"dev", "rlcard"}]
    assert _editable_extras('RUN pip install x && pip install -e ".[postgres]"\n', "x") == [{"postgres"}]


def test_the_image_installs_the_extras_of_make_run() -> None:
    declared = set(tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    make = make_run_extras()
    assert TEST_ONLY <= make <= declared
    assert docker_extras() == make - TEST_ONLY, (
        f"Dockerfile installs extras {sorted(docker_extras())}; make run installs {sorted(make)} "
        f"(the image leaves out only {sorted(TEST_ONLY)})")


def test_the_image_holds_the_outside_agents_the_studies_name() -> None:
    """RLCard's rule agent (``rlcard-rule``) is the ``rlcard`` extra's: a study naming it anywhere
    in its params needs the extra in the image."""
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    assert "rlcard-rule" in yaml.safe_dump(raw), "no study names rlcard-rule: revisit this test"
    assert "rlcard" in docker_extras()
