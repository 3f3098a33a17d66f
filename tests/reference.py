"""Reading the public agent's reference games (``shared/external/charlesworth-big2``)."""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from climbrl.paths import charlesworth_games_path


def cw_mask(ids: list[int]) -> int:
    """Card ids of that engine (1..52, 4*(rank-1)+suit) as our mask (ours = id - 1)."""
    m = 0
    for i in ids:
        m |= 1 << (i - 1)
    return m


def reference_games_path() -> Path:
    """The reference file; fails (never skips) when CI requires it and it is missing."""
    return require_reference(charlesworth_games_path(), "CLIMBRL_CHARLESWORTH_GAMES")


def require_reference(path: Path, env_var: str) -> Path:
    """``path`` if it exists; else fail under CI (or CLIMBRL_REQUIRE_EXTERNAL), skip elsewhere."""
    if not path.exists():
        msg = f"reference games not found at {path} (set {env_var})"
        if os.environ.get("CI") or os.environ.get("CLIMBRL_REQUIRE_EXTERNAL"):
            pytest.fail(msg)
        pytest.skip(msg)
    return path


def iter_reference_games(path: Path | None = None) -> Iterator[dict]:
    with gzip.open(path or reference_games_path(), "rt") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)
