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
    path = charlesworth_games_path()
    if not path.exists():
        msg = f"reference games not found at {path} (set CLIMBRL_CHARLESWORTH_GAMES)"
        if os.environ.get("CI") or os.environ.get("CLIMBRL_REQUIRE_EXTERNAL"):
            pytest.fail(msg)
        pytest.skip(msg)
    return path


def iter_reference_games() -> Iterator[dict]:
    with gzip.open(reference_games_path(), "rt") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)
