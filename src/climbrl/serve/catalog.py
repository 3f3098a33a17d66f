"""The agents a person may pick for each game: the rule agents, the search, the outside agents
when they are installed, the policies the repository ships under ``models/`` and every trained policy
the pipelines left under ``runs/`` (any spec the
CLI takes can also be typed in).

A checkpoint's game is read from its own record (:func:`climbrl.learn.checkpoint.load`, which
never unpickles code), once per file version.
"""

from __future__ import annotations

import functools
import json
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
            if "snapshots" in p.parts or not p.is_file():  # a pipe named policy.pt would block the read
                continue
            info = _checkpoint_game(str(p), p.stat().st_mtime_ns)
            if info is None:
                continue
            rel = p.relative_to(root)
            out.append({"spec": f"checkpoint:{rel}", "label": f"{word} {info[1]}: {rel.parent}", "kind": "trained",
                        "game": info[0]})
    return out


HEADLINE_OPPONENT = "heuristic"
"""The shipped models are ranked by their win rate against the lab's heuristic (every manifest
has that match, on the study's deal set)."""


def _headline(match: dict[str, Any]) -> dict[str, Any] | None:
    """A manifest match's headline: Big 2's ``all`` seats, Dou Dizhu's ``both`` roles (with
    each role's win rate)."""
    whole = match.get("all") or match.get("both")
    if not isinstance(whole, dict) or not isinstance(whole.get("win_rate"), (int, float)):
        return None
    out = {k: whole[k] for k in ("win_rate", "win_rate_low", "win_rate_high", "games", "deals", "adp")
           if isinstance(whole.get(k), (int, float))}
    for role in ("landlord", "peasants"):
        if isinstance(match.get(role), dict) and isinstance(match[role].get("win_rate"), (int, float)):
            out[f"{role}_win_rate"] = match[role]["win_rate"]
    return out


def shipped_models(root: Path) -> list[dict[str, Any]]:
    """The models the repository ships (``root/models/*/model.json`` beside a readable
    ``policy.pt``): ``{"spec", "name", "game", "rules", "algo", "headline": {opponent: ...}}``,
    each headline the manifest's final matches (the win rate with its 95% interval)."""
    out = []
    base = root / "models"
    for manifest in sorted(base.glob("*/model.json")) if base.is_dir() else []:
        try:
            data = json.loads(manifest.read_text())
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        policy = manifest.parent / str(data.get("file", "policy.pt"))
        if not isinstance(data, dict) or not policy.is_file() or "/" in str(data.get("file", "")):
            continue
        info = _checkpoint_game(str(policy), policy.stat().st_mtime_ns)
        if info is None or info[0] != data.get("game"):
            continue
        matches = (data.get("final") or {}).get("matches") or {}
        headline = {opp: h for opp, m in matches.items() if isinstance(m, dict) and (h := _headline(m))}
        out.append({"spec": f"checkpoint:{policy.relative_to(root)}", "name": manifest.parent.name,
                    "game": data["game"], "rules": str(data.get("rules", "")), "algo": str(data.get("algo", "")),
                    "deal_set": (data.get("final") or {}).get("deal_set"), "headline": headline})
    return out


def strongest(models: list[dict[str, Any]], game: str) -> dict[str, Any] | None:
    """The shipped model of ``game`` with the highest win rate against the heuristic (ties: the
    one trained under the game's default rules)."""
    ranked = [m for m in models if m["game"] == game and HEADLINE_OPPONENT in m["headline"]]
    if not ranked:
        return None
    return max(ranked, key=lambda m: (m["headline"][HEADLINE_OPPONENT]["win_rate"],
                                      m["rules"] == DEFAULT_PRESETS[game]))


def catalog(root: Path) -> dict[str, Any]:
    """Per game: its presets (the default first), seats, the agents to pick from, and the
    default opponent (the strongest shipped model, else the heuristic) with its headline
    numbers."""
    trained = checkpoints(root)
    models = shipped_models(root)
    out: dict[str, Any] = {}
    for game, default in DEFAULT_PRESETS.items():
        presets = [default] + [p for p in game_presets(game) if p != default]
        agents = [{"spec": s, "label": label, "kind": "search" if s.startswith("search") else "rule"}
                  for s, label in RULE_AGENTS[game]]
        agents += _outside(game)
        agents += [{k: v for k, v in c.items() if k != "game"} for c in trained if c["game"] == game]
        best = strongest(models, game)
        out[game] = {"presets": presets, "seats": num_players(game), "agents": agents,
                     "default_opponent": best or {"spec": "heuristic", "name": "heuristic", "game": game,
                                                  "headline": {}}}
    return out
