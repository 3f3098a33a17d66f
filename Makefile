# The two set-up commands of the README: `make run` (the main job) and `make test`.
VENV ?= .venv
SERVER_HOST ?= 127.0.0.1
PY := $(VENV)/bin/python
export DVC_NO_ANALYTICS := 1
export MLFLOW_DISABLE_TELEMETRY := true
export DO_NOT_TRACK := true
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PATH := $(abspath $(VENV))/bin:$(PATH)

.PHONY: run test lint bench venv ablations champion strong strong-long leg seeds tune server serve docs

venv: $(VENV)/.installed

# the last step: RLCard unpacks its Dou Dizhu tables at its first import, unlocked, and two worker processes
# importing it at once on a fresh install race (FileExistsError, or one reads a half-written file): unpacked once
$(VENV)/.installed: pyproject.toml
	test -x $(PY) || python3.11 -m venv $(VENV) || python3 -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev,postgres,rlcard]'
	$(PY) -c "import rlcard.games.doudizhu.utils"
	touch $@

# dvc repro with the two studies side by side (pipeline/repro.py; JOBS=1: a plain dvc repro), under
# one local Prefect server (127.0.0.1, a free port; PREFECT_API_URL if set) for every stage, stopped
# afterwards, also on failure: pipeline/prefect_server.py
JOBS ?= 2
run: venv
	$(PY) -m pipeline.prefect_server -- $(PY) -m pipeline.repro --jobs $(JOBS)

# the study's entropy and curriculum ablations (about an hour on two cores; not part of `run`)
ablations: venv
	$(PY) -m pipeline.prefect_server -- $(VENV)/bin/dvc repro ablations/dvc.yaml

# the Big 2 champion's matches and report (issue 12; champion/params.yaml; not part of `run`; it trains the
# study's PPO first when runs/ppo is missing)
champion: venv
	$(PY) -m pipeline.prefect_server -- $(VENV)/bin/dvc repro champion/dvc.yaml

# the strong learners (issue 25; strong/params.yaml; not part of `run`): DouZero's Deep Monte-Carlo in both
# games far past the study's budget, resumed when killed, its learning curve against CPU-hours
strong: venv
	$(PY) -m pipeline.prefect_server -- $(VENV)/bin/dvc repro strong/dvc.yaml

# Big 2's strong run continued from its shipped policy, testing its curve's line at a larger budget (issue 25;
# strong/long/params.yaml; about 1.7 h on two cores; not part of `strong`): reports/strong/long/report.md
strong-long: venv
	$(PY) -m pipeline.prefect_server -- $(VENV)/bin/dvc repro strong/long/dvc.yaml

# one leg of a live strong run (issue 46; strong/legs/params.yaml; not part of `strong`): resumes its committed
# state in strong/legs/state/RUN, trains for HOURS of wall time (it stops after a whole epoch), measures the new
# curve points and writes reports/strong/legs/report.md; commit strong/legs/ and the report afterwards
RUN ?= doudizhu-league
HOURS ?= 2
leg: venv
	$(PY) -m pipeline.legs run $(RUN) --hours $(HOURS)

# play the lab's agents in a browser (issue 27): http://127.0.0.1:8765/ (PORT=...); this machine only
PORT ?= 8765
serve: venv
	$(VENV)/bin/climbrl serve --port $(PORT)

# the study's rankings over training seeds (issue 32; seeds/params.yaml; not part of `run`): every contender
# of both games trained for seeds 0, 1, 2 with the study's config, resumed when killed, and the rankings
# as paired contrasts over seeds and deals: reports/seeds/GAME/report.md
seeds: venv
	$(PY) -m pipeline.prefect_server -- $(VENV)/bin/dvc repro seeds/dvc.yaml

# tuning that pays off (issue 30; tune/params.yaml; not part of `run`): an Optuna study per learner of both games
# under successive halving over epochs (about an hour per game on two cores), resumed when rerun, then each study's
# best configuration retrained at the full budget beside the default for 3 seeds, and the paired contrasts:
# reports/tune/report.md (pipeline/tuning.py, pipeline/tuning_report.py)
tune: venv
	$(VENV)/bin/dvc repro tune/dvc.yaml

# the documentation (issue 28; mkdocs.yml, docs/): the README's results block regenerated from the reports'
# JSON, then the site built offline into site/ in strict mode (a broken link or a missing result key fails)
docs: venv
	$(PY) -m pipeline.readme
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site

test: venv
	$(PY) -m ruff check src tests benchmarks pipeline
	$(PY) -m pytest -q -n 2

bench: venv
	$(VENV)/bin/climbrl bench engine --rules paper --games 4000

# an MLflow tracking server on PostgreSQL, SERVER_HOST:5000 (default 127.0.0.1; SERVER_HOST=0.0.0.0 for clients on other
# machines; a local PostgreSQL in .pgdata unless
# CLIMBRL_MLFLOW_BACKEND=postgresql://... names one; artifacts in mlartifacts/): pipeline/mlflow_server.py
server: venv
	$(PY) -m pipeline.mlflow_server --host $(SERVER_HOST)
