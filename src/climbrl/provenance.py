"""Where and from what a number was made: the code's commit and the machine's CPU.

Kept among the utilities so that every layer can record them: a training leg's ledger
(:mod:`climbrl.learn.legs`), the MLflow tags (:mod:`climbrl.track`) and the benchmarks' JSON.
"""

from __future__ import annotations

import platform
import subprocess
from typing import Any


def git_commit() -> str:
    """The commit checked out in the working folder (``unknown`` outside a git checkout)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


LOW_PRECISION_FLAGS = ("avx512f", "avx512_bf16", "amx_bf16", "amx_int8", "avx512_vnni", "avx_vnni")
"""The CPU flags that decide what lower-precision arithmetic gains here (bfloat16 through AMX or
``avx512_bf16``, int8 through VNNI or AMX)."""


def cpu_facts() -> dict[str, Any]:
    """The CPU's vendor, model and the flags of :data:`LOW_PRECISION_FLAGS` it has (from
    ``/proc/cpuinfo``; ``unknown`` elsewhere): every speed benchmark records them, since the same
    code runs at other relative speeds on Intel (AMX) and AMD machines of one kind."""
    facts: dict[str, Any] = {"vendor": "unknown", "model": platform.processor() or "unknown", "flags": []}
    try:
        with open("/proc/cpuinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return facts
    for line in lines:
        key, _, value = (part.strip() for part in line.partition(":"))
        if key == "vendor_id":
            facts["vendor"] = value
        elif key == "model name":
            facts["model"] = value
        elif key == "flags":
            have = set(value.split())
            facts["flags"] = [f for f in LOW_PRECISION_FLAGS if f in have]
            break
    return facts
