"""One Prefect server for a whole run (issue 14, section 2): ``make run`` runs ``dvc repro`` under
``python -m pipeline.prefect_server``, which starts a server on loopback (or uses
``PREFECT_API_URL``), points every stage at it and stops it afterwards, also when the command fails."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from pipeline import prefect_server as ps

REPO = Path(__file__).resolve().parents[1]


def test_make_run_and_the_ablations_run_under_one_server() -> None:
    recipes = (REPO / "Makefile").read_text()
    assert "$(PY) -m pipeline.prefect_server -- $(PY) -m pipeline.repro --jobs $(JOBS)\n" in recipes  # dvc repro
    assert "$(PY) -m pipeline.prefect_server -- $(VENV)/bin/dvc repro ablations/dvc.yaml" in recipes


def test_a_given_prefect_api_url_that_does_not_answer_fails_at_once(monkeypatch) -> None:
    monkeypatch.setenv("PREFECT_API_URL", f"http://127.0.0.1:{ps.free_port()}/api")
    with pytest.raises(ps.ServerError, match="does not answer"), ps.prefect_server():
        pass
    assert ps.run_with_server([sys.executable, "-c", "pass"]) == 1


def test_a_stage_reports_to_the_one_server_which_stops_when_the_command_fails(tmp_path, monkeypatch) -> None:
    """Slow (a real server starts: 10-20 s here). The command runs the seeds stage as a Prefect
    flow, finds its flow run on the server, checks that a nested helper reuses the server and
    that the UI is given the server's address, and exits 3; the helper returns 3 and the server
    no longer answers."""
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.delenv("CLIMBRL_PREFECT_PORT", raising=False)
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path / "prefect-home"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), str(REPO / "src"), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.chdir(tmp_path)
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["seeds"] = {"deals": 8, "seed": 1, "validation_deals": 2, "validation_seed": 7}
    params["evaluate"]["games"] = 8 * 4  # every deal from every seat: the params check holds them together
    Path("params.yaml").write_text(yaml.safe_dump(params))
    script = textwrap.dedent("""
        import json, os, subprocess, sys, urllib.request
        from pipeline.prefect_server import prefect_server
        url = os.environ["PREFECT_API_URL"]
        subprocess.run([sys.executable, "-m", "pipeline", "seeds"], check=True)
        req = urllib.request.Request(url + "/flow_runs/filter", data=b"{}",
                                     headers={"Content-Type": "application/json"})
        runs = [r["state_type"] for r in json.load(urllib.request.urlopen(req))]
        with prefect_server() as again:  # PREFECT_API_URL is set: no second server
            reused = again == url
        ui_api = json.load(urllib.request.urlopen(url.removesuffix("/api") + "/ui-settings"))["api_url"]
        json.dump({"url": url, "runs": runs, "reused": reused, "ui_api": ui_api}, open("seen.json", "w"))
        sys.exit(3)
    """)
    assert ps.run_with_server([sys.executable, "-c", script]) == 3
    seen = json.loads(Path("seen.json").read_text())
    assert seen["url"].startswith("http://127.0.0.1:") and seen["url"].endswith("/api")
    assert seen["runs"] == ["COMPLETED"] and seen["reused"]
    assert seen["ui_api"] == seen["url"]  # the UI calls this server (not Prefect's default 127.0.0.1:4200)
    assert json.loads(Path("data/eval_seeds.json").read_text())["seed"] == 1
    assert not ps.healthy(seen["url"])  # stopped
    assert (tmp_path / "prefect-home" / "server.log").exists()
