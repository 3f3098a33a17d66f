"""The agents a person may pick for each game: the rule agents, the search, the outside agents
when they are installed, the policies the repository ships under ``models/`` and every trained policy
the pipelines left under ``runs/`` (any spec the
CLI takes can also be typed in).

A checkpoint's game is read from its own record (:func:`climbrl.learn.checkpoint.load`, which
never unpickles code), once per file version.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from climbrl.games.registry import DEFAULT_PRESETS, game_presets, num_players

RULE_AGENTS = {
    "big2": [("heuristic", "the lab's hand-written heuristic"), ("aggressive", "rule agent: plays big early"),
             ("conservative", "rule agent: keeps its big cards"), ("greedy", "plays its lowest move"),
             ("random", "a uniformly random legal move"),
             ("search:S=48,K=10", "rollout search over the heuristic (48 deals x 10 candidates)")],
    "doudizhu": [("heuristic", "the lab's hand-written heuristic"),
                 ("aggressive", "rule agent: the guide's aggressive style"),
                 ("conservative", "rule agent: the guide's conservative style"),
                 ("greedy", "plays its lowest move"), ("random", "a uniformly random legal move"),
                 ("search:S=16,K=6", "rollout search over the heuristic (16 deals x 6 candidates)")],
}


def _outside(game: str) -> list[dict[str, str]]:
    out = []
    if game == "big2":
        try:
            from climbrl.agents.external.charlesworth import load_weights

            load_weights()
            out.append({"spec": "charlesworth", "label": "the public Big 2 agent (Charlesworth's PPO)",
                        "kind": "outside", "presets": "charlesworth"})
        except (OSError, ValueError, ImportError):
            pass
    else:
        from climbrl.agents.external.rlcard_rule import rlcard_missing

        if rlcard_missing() is None:
            out.append({"spec": "rlcard-rule", "label": "RLCard's Dou Dizhu rule agent (fixed-landlord presets)",
                        "kind": "outside", "presets": "douzero rlcard"})
    return out


@functools.lru_cache(maxsize=256)
def _checkpoint_game(path: str, mtime_ns: int) -> tuple[str, str] | None:
    """(game, learner) a checkpoint was trained for; ``None`` for a file that is no readable one."""
    from climbrl.learn.checkpoint import CheckpointError, load, recorded_encoder

    try:
        obj = load(path)
    except (CheckpointError, OSError):
        return None
    return str(recorded_encoder(obj).get("game")), str(obj.get("algo", "?"))


def checkpoints(root: Path) -> list[dict[str, str]]:
    """Every ``policy.pt`` the repository ships (``root/models``) and the pipelines left under
    ``root/runs``, as ``{"spec", "label", "kind", "game"}``."""
    out = []
    for folder, word in (("models", "shipped"), ("runs", "trained")):
        base = root / folder
        if not base.is_dir():
            continue
        for p in sorted(base.rglob("policy.pt")):
            if "snapshots" in p.parts:
                continue
            info = _checkpoint_game(str(p), p.stat().st_mtime_ns)
            if info is None:
                continue
            rel = p.relative_to(root)
            out.append({"spec": f"checkpoint:{rel}", "label": f"{word} {info[1]}: {rel.parent}", "kind": "trained",
                        "game": info[0]})
    return out


def catalog(root: Path) -> dict[str, Any]:
    """Per game: its presets (the default first), seats, and the agents to pick from."""
    trained = checkpoints(root)
    out = {}
    for game, default in DEFAULT_PRESETS.items():
        presets = [default] + [p for p in game_presets(game) if p != default]
        agents = [{"spec": s, "label": label, "kind": "search" if s.startswith("search") else "rule"}
                  for s, label in RULE_AGENTS[game]]
        agents += _outside(game)
        agents += [{k: v for k, v in c.items() if k != "game"} for c in trained if c["game"] == game]
        out[game] = {"presets": presets, "seats": num_players(game), "agents": agents}
    return out
