# CPU image of climbrl: the pinned environment, then the main job (`dvc repro`, under one local Prefect server).
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends git make && rm -rf /var/lib/apt/lists/*
WORKDIR /climbrl
ENV DVC_NO_ANALYTICS=1 MLFLOW_DISABLE_TELEMETRY=true DO_NOT_TRACK=true \
    PREFECT_SERVER_ANALYTICS_ENABLED=false PIP_NO_CACHE_DIR=1 \
    CLIMBRL_EXTERNAL=/shared/external
# The public agent's data is mounted, never copied: docker run -v $PWD/../shared:/shared:ro climbrl
COPY pyproject.toml README.md ./
COPY src ./src
# torch 2.13.0 from the CPU index keeps the image small (no CUDA build). The extras are make run's
# (the Makefile's venv target) less dev, the test tools: rlcard for the Dou Dizhu study's outside
# opponent (rlcard-rule), postgres for the shared store (tests/test_install_extras.py holds them).
RUN pip install --index-url https://download.pytorch.org/whl/cpu torch==2.13.0 \
    && pip install -e '.[postgres,rlcard]' \
    && python -c "import rlcard.games.doudizhu.utils"
COPY . .
CMD ["sh", "-c", "git init -q 2>/dev/null; python -m pipeline.prefect_server -- dvc repro"]
