#!/usr/bin/env bash
# The GPU and many-core measurements of issue 14 (sections 4 and 5) as one prepared run of at most
# 9.5 minutes (a lent machine's command limit is 10), for a lent machine with a GPU: its image's
# python3 holds a CUDA torch, numpy, numba, pyyaml and tqdm, all that training imports, so no
# virtual environment is needed there.
#
#   bash benchmarks/device.sh [RESULTS_DIR]     (default: $OUT when set, else benchmarks/results/device)
#
# 1. self-play scaling on the CPU path with 1, 2, 4, 8 and 16 actors (PPO, Big 2, 3 epochs), and
#    MCQ's with 1 and 8;
# 2. the CUDA path against it: PPO and MCQ with 1 and 8 actors on --device cuda;
# 3. the budget PPO on CUDA reaches in 3 minutes with 8 actors (benchmarks/budget.py: the decisions
#    and epochs finished in the time, and the rate; the 10 minutes of the issue are
#    `benchmarks/budget.py --device cuda --minutes 10` alone, a command of its own).
# Each part has its own time limit, so one that hangs costs only its share; every part writes its
# JSON as it goes (actors.py after every run, budget.py after every epoch). Copy the files to
# benchmarks/results/ and quote them in the README with the machine they name. Nothing here runs in the test suite or in CI.
set -u
dir=${1:-${OUT:-benchmarks/results/device}}
mkdir -p "$dir"
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 DVC_NO_ANALYTICS=1 \
       MLFLOW_DISABLE_TELEMETRY=true DO_NOT_TRACK=true
py=${PYTHON:-python3}
{ date -u; nproc; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
  "$py" -c 'import torch, numpy, numba; print("torch", torch.__version__, "cuda", torch.cuda.is_available(),
"numpy", numpy.__version__, "numba", numba.__version__)'; } 2>&1 | tee "$dir/machine.txt"
timeout 180 "$py" benchmarks/actors.py --games big2:paper --algos ppo --actors 1,2,4,8,16 --epochs 3 \
    --device cpu --out "$dir/actors_cpu.json"
timeout 60 "$py" benchmarks/actors.py --games big2:paper --algos mcq --actors 1,8 --epochs 3 \
    --device cpu --out "$dir/actors_cpu_mcq.json"
timeout 120 "$py" benchmarks/actors.py --games big2:paper --algos ppo,mcq --actors 1,8 --epochs 3 \
    --device cuda --out "$dir/actors_cuda.json"
timeout 200 "$py" benchmarks/budget.py --games big2:paper --algo ppo --device cuda --actors 8 --minutes 3 \
    --out "$dir/budget_cuda.json"
ls -l "$dir"
