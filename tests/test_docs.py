"""The README and the documentation (issue 28): the README is short, starts with the two set-up
commands, and its results block is what the reports' JSON says; ``make docs`` builds the site
offline in strict mode, where a missing result key or a broken link fails the build."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from pipeline import docs, readme

REPO = Path(__file__).resolve().parents[1]


def test_the_readme_starts_with_the_two_set_up_commands() -> None:
    text = (REPO / "README.md").read_text()
    first = re.search(r"```bash\n(.*?)```", text, re.S)
    assert first and text.index(first.group(0)) < text.index("\n## ")
    commands = [line.split("#")[0].strip() for line in first.group(1).splitlines()]
    assert commands == ["make run", "make test"]
    makefile = (REPO / "Makefile").read_text()
    assert re.search(r"^run: venv$", makefile, re.M) and re.search(r"^test: venv$", makefile, re.M)


def test_the_readme_is_short() -> None:
    assert len((REPO / "README.md").read_text().splitlines()) <= 250


def test_the_readme_results_block_matches_the_reports() -> None:
    text = (REPO / "README.md").read_text()
    assert docs.README_START in text and docs.README_END in text
    assert readme.render(text) == text, "README.md's results block is stale: run `python -m pipeline.readme`"


def test_the_readme_block_changes_with_the_json(tmp_path, monkeypatch) -> None:
    """The block is read from the JSON: a changed number in metrics.json changes the block."""
    import json

    for rel in ("reports/metrics.json",):
        data = json.loads((REPO / rel).read_text())
        data["learners"]["ppo"]["win_rate/heuristic"] = 0.123
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(json.dumps(data))
    for rel in ("reports/doudizhu/metrics.json", "params.yaml"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / rel, tmp_path / rel)
    monkeypatch.setattr(docs, "ROOT", tmp_path)
    docs.load.cache_clear()
    try:
        assert "| ppo | " in readme.block() and "0.123 [" in readme.block()
    finally:
        docs.load.cache_clear()


def test_a_missing_key_or_file_is_an_error() -> None:
    with pytest.raises(docs.MissingResult, match="no key"):
        docs.value("reports/metrics.json", "learners.ppo.no_such_metric")
    with pytest.raises(docs.MissingResult, match="no such file"):
        docs.value("reports/no_such_file.json", "x")
    with pytest.raises(docs.MissingResult, match="not a finite number"):
        docs.number("reports/metrics.json", "best_learner")


def test_keys_with_dots_and_lists() -> None:
    assert docs.value("params.yaml", "train.common.epochs") == docs.load("params.yaml")["train"]["common"]["epochs"]
    assert docs.value("reports/champion/base.json", "epoch_loss.0") == docs.load("reports/champion/base.json")[
        "epoch_loss"][0]


def _mkdocs(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
                           "--site-dir", str(site)], cwd=config.parent, env=env, capture_output=True, text=True,
                          timeout=600)


def test_the_docs_build_in_strict_mode_without_warnings(tmp_path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("material")
    pytest.importorskip("mkdocs_macros")
    out = _mkdocs(REPO / "mkdocs.yml", tmp_path / "site")
    log = out.stdout + out.stderr
    assert out.returncode == 0, log
    assert "WARNING" not in log, log
    assert (tmp_path / "site" / "index.html").is_file()
    # offline: no script, stylesheet or font from another host
    for page in (tmp_path / "site").glob("*.html"):
        html = page.read_text()
        assert not re.search(r'<(script|link)[^>]+(src|href)="(https?:)?//', html), page.name
    for page in (tmp_path / "site").glob("*.html"):
        html = re.sub(r"<pre.*?</pre>", "", page.read_text(), flags=re.S)
        # every macro expanded: no template syntax left in a page
        assert "{{" not in html and "{%" not in html, page.name
        # Python-Markdown's lists (four-space nesting, a blank line before a list): no list item left as text
        assert not re.search(r"\n\s*- (<strong>|<code>|\w)", html), page.name


def test_a_missing_result_key_fails_the_build(tmp_path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocs_macros")
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "pipeline").mkdir()
    shutil.copy(REPO / "pipeline" / "docs.py", project / "pipeline" / "docs.py")
    (project / "reports").symlink_to(REPO / "reports")
    shutil.copy(REPO / "params.yaml", project / "params.yaml")
    config = (REPO / "mkdocs.yml").read_text().split("\nnav:")[0]
    (project / "mkdocs.yml").write_text(config)
    page = project / "docs" / "index.md"
    page.write_text('# t\n\n{{ m("reports/metrics.json", "learners.ppo.win_rate/heuristic") }}\n')
    assert _mkdocs(project / "mkdocs.yml", tmp_path / "ok").returncode == 0
    page.write_text('# t\n\n{{ m("reports/metrics.json", "learners.ppo.no_such_metric") }}\n')
    out = _mkdocs(project / "mkdocs.yml", tmp_path / "bad")
    assert out.returncode != 0
    assert "no_such_metric" in out.stdout + out.stderr


# Settings, not results, that a page may write as they are (an ablation's value, the guide's reward scale)
SETTINGS_IN_PROSE = {"ablations.md": {"0.001"}, "learners.md": {"0.005", "0.002"}}


def test_the_docs_type_no_result_by_hand() -> None:
    """A win rate with three decimals or an interval written in a page's prose (outside the macros and
    code) is a number copied by hand, which drifts: it must be a lookup into the results instead."""
    found = []
    for page in sorted((REPO / "docs").glob("*.md")):
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", "", text, flags=re.S)
        text = re.sub(r"`[^`]*`", "", text)
        for hit in re.finditer(r"\[[-+]?\d*\.\d+, [-+]?\d*\.\d+\]|(?<![\w.])[-+]?\d\.\d{3}(?![\w.])", text):
            if hit.group(0) not in SETTINGS_IN_PROSE.get(page.name, set()):
                found.append(f"{page.name}: {hit.group(0)!r} in ...{text[max(0, hit.start() - 50):hit.end()]}")
    assert not found, "\n".join(found)


def test_the_readme_links_resolve() -> None:
    """Every relative link and image of the README names a file of the repository (the docs pages, the
    screenshots, the changelog), and a link's #anchor a heading of that page."""
    text = (REPO / "README.md").read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert any(link.startswith("docs/screenshots/") for link in links)
    for link in links:
        if "://" in link:
            continue
        path, _, anchor = link.partition("#")
        assert (REPO / path).exists(), link
        if anchor:
            headings = re.findall(r"^#+ (.+)$", (REPO / path).read_text(), flags=re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-") for h in headings}
            assert anchor in slugs, link
