"""The outside data tests read (``shared/external/charlesworth-big2``, see ``climbrl.paths``).

One rule for every such file: a test that needs a missing one skips with one line naming the
file and how to obtain it, so that a fresh clone without ``../shared`` passes ``make test``;
under CI (``CI`` or ``CLIMBRL_REQUIRE_EXTERNAL`` set) it fails instead, so CI never hides it.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from climbrl.paths import (
    CHARLESWORTH_RELEASED,
    CHARLESWORTH_REPOSITORY,
    charlesworth_dir,
    charlesworth_games_path,
    charlesworth_weights_path,
    how_to_get_public_agent,
)

_OFF = ("", "0", "false", "no")


def external_required() -> bool:
    """True under CI: a missing outside file is then a failure, not a skip."""
    return any(os.environ.get(v, "").strip().lower() not in _OFF for v in ("CI", "CLIMBRL_REQUIRE_EXTERNAL"))


def require_external(path: Path, how: str) -> Path:
    """``path`` if it exists; else skip (fail under CI) with one line: the file and how to get it."""
    if not path.exists():
        msg = f"missing outside data {path}: {how}"
        if external_required():
            pytest.fail(msg)
        pytest.skip(msg)
    return path


def public_agent_weights() -> Path:
    """The public agent's converted weights (what ``make_agent("charlesworth")`` loads)."""
    path = charlesworth_weights_path()
    return require_external(path, how_to_get_public_agent(path))


def released_weights() -> Path:
    """The weights as published (the joblib file that ``climbrl convert-charlesworth`` reads)."""
    return require_external(charlesworth_dir() / CHARLESWORTH_RELEASED, f"download it from {CHARLESWORTH_REPOSITORY}")


def reference_games_path() -> Path:
    """The 300 games recorded from the public agent's own engine."""
    return require_external(charlesworth_games_path(), "games recorded from the public agent's engine "
                            "(shared/external/charlesworth-big2/README.md); set CLIMBRL_CHARLESWORTH_GAMES")


def cw_mask(ids: list[int]) -> int:
    """Card ids of that engine (1..52, 4*(rank-1)+suit) as our mask (ours = id - 1)."""
    m = 0
    for i in ids:
        m |= 1 << (i - 1)
    return m


def require_reference(path: Path, env_var: str) -> Path:
    """Reference games at ``path`` (skip, or fail under CI, when missing; ``env_var`` overrides it)."""
    return require_external(path, f"reference games of a public engine (see shared/external/); set {env_var}")


def iter_reference_games(path: Path | None = None) -> Iterator[dict]:
    with gzip.open(path or reference_games_path(), "rt") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def skip_or_fail(msg: str) -> NoReturn:
    """Skip with ``msg``; under CI (:func:`external_required`) fail with it instead."""
    if external_required():
        pytest.fail(msg)
    pytest.skip(msg)


def require_rlcard() -> None:
    """Skip (fail under CI) with one line when the optional package ``rlcard`` (RLCard's rule
    agent, ``pip install -e '.[rlcard]'``) is not installed."""
    from climbrl.agents.external.rlcard_rule import rlcard_missing

    if msg := rlcard_missing():
        skip_or_fail(msg)


def require_postgres() -> None:
    """Skip (fail under CI) with one line when no local PostgreSQL server can be started here: the
    ``postgres`` extra's server binaries or driver missing (``pip install -e '.[postgres]'``)."""
    from pipeline.postgres import available

    if why := available():
        skip_or_fail(f"no local PostgreSQL: {why}")
