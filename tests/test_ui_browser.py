"""What a person sees (issue 28): each UI the project sends its users to, opened in a real
Chromium (conftest's ``browser`` and ``page``: Debian's chromium driven by Playwright) against
tiny real runs, asserting on what is on the page: text, a chart, no "Can't connect".

- Prefect: the server of ``make run`` (pipeline/prefect_server.py) lists a flow run while it
  runs, and the address a stage prints ("View at ...") shows its run, task run and logs.
- MLflow: the address ``make run`` and ``make server`` print (climbrl.track.runs_address) opens
  the experiment's runs table with the run by its name; after the one click on "Model training"
  that the README names, the run's metric chart.
- optuna-dashboard: a 2-trial study, its objective by name and its trials.
- Both studies' committed ``report.html``: every figure loads.

Each test saves screenshots under its ``tmp_path``; with ``CLIMBRL_SCREENSHOTS=DIR`` also in DIR
(``docs/screenshots/`` holds the ones the README shows). Servers listen on 127.0.0.1 only.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.study_params import study_folder
from tests.test_live_tracking import SMALL
from tests.ui_servers import get_json, optuna_dashboard

REPO = Path(__file__).resolve().parents[1]
WAIT_S = 60  # the longest any page is given to show what it should (a loaded machine); no assertion on time

PROBE = """
import sys, time
from pathlib import Path
from prefect import flow, task

@task(name="wait-for-the-browser")
def wait(path: str) -> None:
    deadline = time.monotonic() + 300
    while not Path(path).exists():
        assert time.monotonic() < deadline, "the test never released the flow"
        time.sleep(0.2)

@flow(name="ui-probe")
def probe(path: str) -> None:
    wait(path)

probe(sys.argv[1])
"""
"""A flow that runs until the test creates the file it names: the page is looked at while it runs."""


def screenshot(page, tmp_path: Path, name: str) -> Path:
    """``name``.png of the page under ``tmp_path/screenshots`` (and in ``$CLIMBRL_SCREENSHOTS``)."""
    path = tmp_path / "screenshots" / f"{name}.png"
    path.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(path))
    if os.environ.get("CLIMBRL_SCREENSHOTS"):
        out = Path(os.environ["CLIMBRL_SCREENSHOTS"])
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out / path.name)
    return path


def reload_until_shown(page, locator, timeout: float = WAIT_S) -> None:
    """Reload the page until ``locator`` is visible (a list that does not refresh by itself)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + timeout
    while True:
        try:
            locator.first.wait_for(state="visible", timeout=5_000)
            return
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise
            page.reload()


def _study(tmp_path: Path, monkeypatch, **tune: object) -> Path:
    """The tiny study of tests/test_live_tracking.py in ``tmp_path``, tracked to ``tmp_path/mlflow.db``."""
    raw = {**SMALL, "tune": {**SMALL["tune"], **tune},
           "tracking": {**SMALL["tracking"], "tracking_uri": f"sqlite:///{tmp_path / 'mlflow.db'}",
                        "experiment": "ui"}}
    return study_folder(tmp_path, monkeypatch, raw)


def test_the_prefect_ui_lists_a_running_flow_and_shows_a_stage_s_run_at_the_address_it_prints(
        page, tmp_path, monkeypatch) -> None:
    from pipeline import prefect_server as ps
    from playwright.sync_api import expect

    _study(tmp_path, monkeypatch)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv("CLIMBRL_PREFECT_PORT", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))
    with ps.prefect_server() as api:
        ui = api.removesuffix("/api")
        assert get_json(f"{ui}/ui-settings")["api_url"] == api  # the UI calls this server, not 127.0.0.1:4200
        env = {**os.environ, "PREFECT_API_URL": api, "PREFECT_LOGGING_LEVEL": "INFO",
               "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
        release = tmp_path / "release"
        probe = subprocess.Popen([sys.executable, "-c", PROBE, str(release)], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        try:
            page.goto(f"{ui}/runs")
            reload_until_shown(page, page.get_by_text("ui-probe"))
            reload_until_shown(page, page.get_by_text("Running", exact=True))
            expect(page.get_by_text("Can't connect")).to_have_count(0)
            screenshot(page, tmp_path, "prefect-runs-running")
        finally:
            release.touch()
            out, _ = probe.communicate(timeout=120)
        assert probe.returncode == 0, out[-3000:]

        stage = subprocess.run([sys.executable, "-m", "pipeline", "seeds"], env=env, capture_output=True, text=True,
                               timeout=300)
        assert stage.returncode == 0, stage.stderr[-3000:]
        address = re.search(r"View at (\S+)", stage.stdout + stage.stderr).group(1)
        assert address.startswith(f"{ui}/runs/flow-run/")
        page.goto(address)  # the flow run's page: its state, its task run on the timeline, its logs
        expect(page.get_by_text("Beginning flow run").first).to_be_visible(timeout=WAIT_S * 1000)
        expect(page.get_by_text("for flow 'seeds'").first).to_be_visible()
        expect(page.get_by_text("Completed", exact=True).first).to_be_visible()
        reload_until_shown(page, page.get_by_text("Finished in state Completed()"))
        expect(page.get_by_text("Can't connect")).to_have_count(0)
        screenshot(page, tmp_path, "prefect-flow-run")
        page.get_by_text("Task Runs", exact=True).click()
        expect(page.get_by_text(re.compile(r"^make-seeds-")).first).to_be_visible(timeout=WAIT_S * 1000)


def test_mlflow_opens_the_runs_table_with_the_run_by_name_and_its_metric_chart(page, tmp_path, monkeypatch) -> None:
    from pipeline import stages
    from pipeline.mlflow_server import mlflow_server
    from playwright.sync_api import expect

    from climbrl import track
    from climbrl.params import load_params

    _study(tmp_path, monkeypatch)
    params = yaml.safe_load(Path("params.yaml").read_text())
    params["train"]["common"]["eval_every"] = 1  # a curve of three points
    Path("params.yaml").write_text(yaml.safe_dump(params))
    stages.train_learner(load_params("params.yaml"), "ppo")
    with mlflow_server(params["tracking"]["tracking_uri"], tmp_path / "artifacts", log=tmp_path / "mlflow.log") as uri:
        page.goto(track.runs_address(uri, "ui"))  # as make server and make run print it
        run_link = page.get_by_role("link", name="train@big2-ppo")
        expect(run_link).to_be_visible(timeout=WAIT_S * 1000)
        page.get_by_role("button", name="Close", exact=True).click()  # the AI assistant's panel, out of the picture
        # the one click the README names: the workflow switch starts on GenAI in a new browser
        page.get_by_text("Model training", exact=True).click()
        sidebar = page.get_by_role("link", name="Models", exact=True)
        expect(sidebar).to_be_visible()
        expect(page.get_by_text("Sessions", exact=True)).to_have_count(0)  # GenAI's sidebar is gone
        expect(run_link).to_be_visible(timeout=WAIT_S * 1000)  # the table, reloaded by the switch
        expect(page.get_by_role("alert")).to_have_count(0)  # no error notification
        screenshot(page, tmp_path, "mlflow-runs")
        run_link.click()
        page.get_by_role("tab", name="Model metrics").click()
        page.get_by_placeholder("Search metric charts").fill("win_rate/random")
        expect(page.locator(".js-plotly-plot")).to_have_count(1, timeout=WAIT_S * 1000)
        expect(page.get_by_text("train@big2-ppo (win_rate/random)")).to_be_visible()
        expect(sidebar).to_be_visible()  # the click was remembered: still the model-training workflow
        expect(page.get_by_role("alert")).to_have_count(0)
        screenshot(page, tmp_path, "mlflow-metric-chart")


def test_optuna_dashboard_shows_a_two_trial_study_with_its_objective_by_name(page, tmp_path, monkeypatch) -> None:
    from playwright.sync_api import expect

    from climbrl.params import load_params
    from climbrl.tune import run_study

    _study(tmp_path, monkeypatch, opponent="random")
    storage = f"sqlite:///{tmp_path / 'optuna.db'}"
    run_study(load_params("params.yaml").tune, trials=2, track=False, storage=storage, study_name="ui-study")
    with optuna_dashboard(storage) as dash:
        sid = get_json(f"{dash}/api/studies")["study_summaries"][0]["study_id"]
        page.goto(f"{dash}/dashboard/studies/{sid}")
        expect(page.get_by_text("ui-study").first).to_be_visible(timeout=WAIT_S * 1000)
        expect(page.get_by_text("win rate vs random").first).to_be_visible(timeout=WAIT_S * 1000)  # the axis
        screenshot(page, tmp_path, "optuna-dashboard")
        page.goto(f"{dash}/dashboard/studies/{sid}/trials")
        for n in (0, 1):
            expect(page.get_by_text(f"Trial {n}", exact=True).first).to_be_visible(timeout=WAIT_S * 1000)
        expect(page.get_by_text("2 Trials")).to_be_visible()
        screenshot(page, tmp_path, "optuna-trials")


@pytest.mark.parametrize("study", ["", "doudizhu"])
def test_every_figure_of_a_study_s_report_loads(page, tmp_path, study) -> None:
    """The committed report.html (figures embedded as data: URLs): as many images as report.md
    has figures, each decoded by the browser (a broken one has no natural width)."""
    reports = REPO / "reports" / study
    figures = re.findall(r"!\[[^\]]*\]\([^)]+\)", (reports / "report.md").read_text())
    page.goto((reports / "report.html").as_uri())
    page.wait_for_load_state("load")
    images = page.evaluate("Array.from(document.images).map(i => [i.alt, i.complete && i.naturalWidth > 0])")
    assert len(images) == len(figures) > 0
    assert [alt for alt, shown in images if not shown] == []
    page.locator("img").first.scroll_into_view_if_needed()
    screenshot(page, tmp_path, f"report-{study or 'big2'}")
