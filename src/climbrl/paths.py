"""Where the project's files and the shared outside data live."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def external_dir() -> Path:
    """``shared/external`` beside the checkout (override: ``CLIMBRL_EXTERNAL``)."""
    env = os.environ.get("CLIMBRL_EXTERNAL")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "external"


def charlesworth_dir() -> Path:
    return external_dir() / "charlesworth-big2"


def charlesworth_games_path() -> Path:
    """The public agent's reference games (override: ``CLIMBRL_CHARLESWORTH_GAMES``)."""
    env = os.environ.get("CLIMBRL_CHARLESWORTH_GAMES")
    return Path(env) if env else charlesworth_dir() / "reference_games.jsonl.gz"


def doudizhu_dir() -> Path:
    return external_dir() / "doudizhu"


def ddz_rlcard_games_path() -> Path:
    """RLCard's Dou Dizhu reference games (override: ``CLIMBRL_DDZ_RLCARD_GAMES``)."""
    env = os.environ.get("CLIMBRL_DDZ_RLCARD_GAMES")
    return Path(env) if env else doudizhu_dir() / "reference_games_rlcard.jsonl.gz"


def ddz_openspiel_games_path() -> Path:
    """OpenSpiel's Dou Dizhu reference games (override: ``CLIMBRL_DDZ_OPENSPIEL_GAMES``)."""
    env = os.environ.get("CLIMBRL_DDZ_OPENSPIEL_GAMES")
    return Path(env) if env else doudizhu_dir() / "reference_games_openspiel.jsonl.gz"
