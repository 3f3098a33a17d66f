"""Games of the pipeline's recorded matches, replayed as the match played them.

A match record (``reports/**/matches/*.json``: the champion's matches) holds the agent and
opponent specs, the rules, the deal set, the number of deals, the seat seed and the agent's wins
deal by deal, not the moves. One of its games is replayed with :func:`climbrl.evaluate.match.match_game`
(the chunk of deals that held it, with the same seatings, seeds and batching), and checked against
the record: the agent's wins on every deal of the replayed chunk, from every seat, against the
record's. A
record played on other deals or by other code says so instead of passing for the recorded game.

A record is checked field by field before any work (issue 51: a tampered one failed after
100 s, with a traceback), and every path it names is read under the served folder: the deal
set, and the checkpoints of its specs (:func:`climbrl.serve.specs.rooted`). The replay itself,
up to minutes with trained agents, runs as a job in a worker process (:mod:`climbrl.serve.jobs`):
the page shows its progress and may cancel it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from climbrl.agents.runner import load_deal_seeds
from climbrl.evaluate.match import CHUNK_DEALS, game_name, match_game
from climbrl.games.registry import DEFAULT_PRESETS, make_game
from climbrl.serve.limits import MAX_BODY_BYTES, MAX_MATCH_DEALS
from climbrl.serve.replay import frames
from climbrl.serve.specs import rooted

KEYS = ("agent", "opponent", "rules", "deal_set", "deals", "seat_seed", "deal_wins")
MAX_SPEC = 500
"""The longest agent spec a record may name."""


class MatchError(ValueError):
    """A match record that cannot be replayed (the message says why)."""


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def problem(data: Any) -> str | None:
    """Why ``data`` is no match record this server replays (``None``: it is one)."""
    if not isinstance(data, dict) or not all(k in data for k in KEYS):
        return f"a match record is a JSON object with {', '.join(KEYS)}"
    for key in ("agent", "opponent", "rules", "deal_set"):
        if not isinstance(data[key], str) or len(data[key]) > MAX_SPEC:
            return f"its {key} must be a text of at most {MAX_SPEC} characters, not {type(data[key]).__name__}"
    if data.get("game", "big2") not in DEFAULT_PRESETS:
        return f"its game must be one of {', '.join(DEFAULT_PRESETS)}"
    deals, wins = data["deals"], data["deal_wins"]
    if not _is_int(deals) or not 1 <= deals <= MAX_MATCH_DEALS:
        return f"its deals must be an integer 1..{MAX_MATCH_DEALS} (the server's bound), got {str(deals)[:40]!r}"
    if not _is_int(data["seat_seed"]) or not 0 <= data["seat_seed"] < 2 ** 63:
        return "its seat_seed must be an integer 0..2^63-1"
    if not isinstance(wins, str) or len(wins) != deals or not (wins.isascii() and wins.isdigit()):
        return f"its deal_wins must be {deals} digits, one per deal"
    return None


def _load(path: Path) -> Any:
    if path.stat().st_size > MAX_BODY_BYTES:
        return None
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None


def match_records(root: Path) -> list[dict[str, Any]]:
    """Every replayable match record under ``root/reports``."""
    reports = root / "reports"
    out = []
    for p in sorted(reports.rglob("*.json")) if reports.is_dir() else []:
        r = _load(p) if p.is_file() else None
        if problem(r) is None:
            out.append({"file": str(p.relative_to(root)), "agent": r["agent"], "opponent": r["opponent"],
                        "rules": r["rules"], "game": r.get("game", "big2"), "deals": r["deals"]})
    return out


def _deal_set(root: Path, file: str, name: str, deals: int) -> list[int]:
    path = Path(name)
    resolved = (root / path).resolve()
    if not resolved.is_relative_to(root):
        raise MatchError(f"{file}: its deal set {name!r} lies outside the project")
    if not resolved.exists():
        raise MatchError(f"{file}: its deal set {name} is missing: make it with `dvc repro seeds` "
                         "(or fetch it with `dvc pull`)")
    if not resolved.is_file() or resolved.stat().st_size > 16 * MAX_BODY_BYTES:
        raise MatchError(f"{file}: its deal set {name} is no deal set file")
    try:
        seeds = load_deal_seeds(resolved)[:deals]
    except ValueError as e:
        raise MatchError(f"{file}: {e}") from None
    if len(seeds) < deals:
        raise MatchError(f"{file}: its deal set holds {len(seeds)} deals, the match played {deals}")
    return seeds


def match_job(root: Path, file: str, deal: Any, seat: Any) -> tuple[tuple, str]:
    """The checked arguments of :func:`replay_job` for one game of a match record, and its title;
    a :class:`MatchError` saying why not. Quick: the replay is the job's."""
    root = root.resolve()
    path = (root / file).resolve()
    if not path.is_relative_to(root / "reports") or path.suffix != ".json" or not path.is_file():
        raise MatchError(f"no match record {file!r} under reports/")
    r = _load(path)
    why = problem(r)
    if why is not None:
        raise MatchError(f"{file} is not a match record: {why}")
    game = r.get("game", "big2")
    try:
        n = make_game(game_name(game, r["rules"])).num_players
        agent, opponent = rooted(r["agent"], root), rooted(r["opponent"], root)
    except ValueError as e:  # unknown rules, a checkpoint outside the project
        raise MatchError(f"{file}: {e}") from None
    if not _is_int(deal) or not 0 <= deal < r["deals"]:
        raise MatchError(f"deal {deal}: the match played deals 0..{r['deals'] - 1}")
    if not _is_int(seat) or not 0 <= seat < n:
        raise MatchError(f"seat {seat}: the game has seats 0..{n - 1}")
    seeds = _deal_set(root, file, r["deal_set"], r["deals"])
    start = deal // CHUNK_DEALS * CHUNK_DEALS
    args = (agent, opponent, r["rules"], r["seat_seed"], seeds, deal, seat, game,
            r["deal_wins"][start:start + CHUNK_DEALS], r["agent"], r["opponent"])
    title = f"{r['agent']} against {r['opponent']} ({r['rules']}), deal {deal}, seat {seat}"
    return args, title


def replay_job(agent: str, opponent: str, rules: str, seat_seed: int, seeds: list[int], deal: int, seat: int,
               game: str, chunk_wins: str, agent_name: str, opponent_name: str) -> dict[str, Any]:
    """The frames of one game of a match, with its names and the check against the record's
    wins on the chunk replayed (run in a worker process: :func:`match_job` made the arguments)."""
    state, start, wins = match_game(agent, [opponent], rules, seat_seed, seeds, deal, seat, game)
    n = len(state.cards_left())
    names = [opponent_name] * n
    names[seat] = agent_name
    recorded = [int(c) for c in chunk_wins[:len(wins)]]
    same = recorded == wins
    span = f"deals {start}..{start + len(wins) - 1}"
    check = {"recorded_wins": recorded, "replayed_wins": wins, "first_deal": start, "same": same,
             "text": (f"the agent's wins on {span} (the chunk replayed), deal by deal from every seat, are the "
                      "record's" if same else
                      f"the agent's wins on {span} replayed differ from the record's on "
                      f"{sum(a != b for a, b in zip(wins, recorded, strict=False))} of {len(wins)} deals: the record "
                      "was played on other deals or by other code, so this is not its game")}
    return {**frames(state.to_json()), "names": names, "check": check}

