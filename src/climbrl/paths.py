"""Where the project's files and the shared outside data live."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]

# The public Big 2 agent (Charlesworth 2018): its released weights, converted once to .npz.
CHARLESWORTH_REPOSITORY = "https://github.com/henrycharlesworth/big2_PPOalgorithm"
CHARLESWORTH_RELEASED = "modelParameters136500"
CHARLESWORTH_WEIGHTS = "charlesworth_ppo_136500.npz"


def external_dir() -> Path:
    """``shared/external`` beside the checkout (override: ``CLIMBRL_EXTERNAL``)."""
    env = os.environ.get("CLIMBRL_EXTERNAL")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "external"


def charlesworth_dir() -> Path:
    return external_dir() / "charlesworth-big2"


def charlesworth_weights_path() -> Path:
    return charlesworth_dir() / CHARLESWORTH_WEIGHTS


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


def how_to_get_public_agent(path: Path | None = None) -> str:
    """One line: where the public agent's weights come from and where they go."""
    path = path or charlesworth_weights_path()
    return (f"get {CHARLESWORTH_RELEASED} from {CHARLESWORTH_REPOSITORY}, then run "
            f"`climbrl convert-charlesworth {CHARLESWORTH_RELEASED} {path}` (or point CLIMBRL_EXTERNAL "
            "at a folder holding charlesworth-big2/)")


def public_agent_missing() -> str | None:
    """None when the public agent's weights are in place; else one line naming the missing file
    and how to obtain it. Everything but the public agent works without them."""
    path = charlesworth_weights_path()
    if path.exists():
        return None
    return f"the public agent's weights are missing: {path}; {how_to_get_public_agent(path)}"
