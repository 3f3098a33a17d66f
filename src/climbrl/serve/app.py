"""The web application: FastAPI routes over :class:`~climbrl.serve.table.Table` (issue 27).

Routes (every error is ``{"error": message}`` with a 4xx or 5xx status, and changes nothing):

- ``GET /``: the page (and the browser's ``climbrl_client`` cookie: :mod:`.lobby`);
  ``/static/...``: its script and style (served here: no CDN).
- ``GET /api/catalog``: games, presets and agents (trained policies under ``runs/`` included).
- ``POST /api/games``: a new game; ``GET /api/games/{id}``: the person's view of it.
- ``POST /api/games/{id}/move``: ``{"turn", "cards"}`` or ``{"turn", "index"}``.
- ``POST /api/games/{id}/step``: ``{"turn"}``: one agent's move, in a game started with
  ``"step": true`` (the page's: it shows each agent thinking, then its play, one at a time).
- ``GET /api/games/{id}/advice?turn=N``: the advisor's reasoning over the person's legal moves,
  with its choice; ``GET /api/games/{id}/hint?turn=N``: the same, from the heuristic when the
  game has no advisor (the page's *Hint*).
- ``GET /api/games/{id}/record``: the finished game as the engine's JSON (a download), also
  written to the record folder; ``GET /api/games/{id}/replay``: its frames.
- ``GET /api/records``, ``GET /api/records/{name}``: the games finished here (the record folder,
  each record beside a ``.meta`` file: its date, seats, result and the agents' reasoning);
  ``POST /api/replay``: the frames of any record the page uploads.
- ``GET /api/matches``: the pipeline's match records; ``POST /api/matches/replay``
  ``{"file", "deal", "seat"}``: one of their games, replayed and checked (:mod:`.matches`), as a
  job (202, ``{"job"}``) followed with ``GET /api/jobs/{job}`` and cancelled with
  ``DELETE /api/jobs/{job}`` (:mod:`.jobs`).

A game's id is a random token: only the tab that started it (or a person who was given its
address) can see or move in it. Games live in memory, a bounded number per browser
(:mod:`.lobby`). Every request passes :class:`~climbrl.serve.security.Guard` first (Host,
Origin, content type, body size, JSON for any failure); searches and trained policies decide in
worker processes under a time limit (:mod:`.workers`). The bounds: :mod:`.limits`.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from climbrl.serve.catalog import catalog
from climbrl.serve.jobs import Jobs
from climbrl.serve.limits import (
    DECISION_SECONDS,
    GAMES_PER_CLIENT,
    MATCH_SECONDS,
    MAX_BODY_BYTES,
    MAX_GAMES,
    WAIT_SECONDS,
    WORKERS,
)
from climbrl.serve.lobby import COOKIE, ClientIds, Lobby
from climbrl.serve.matches import MatchError, match_job, match_records, replay_job
from climbrl.serve.replay import RecordError, frames
from climbrl.serve.security import Guard
from climbrl.serve.table import Table, TableError
from climbrl.serve.workers import Pool

STATIC = Path(__file__).parent / "static"
PAUSE_SECONDS = 0.6
"""The page's default pause between two agents' plays (each shown as it comes)."""
LISTED_RECORDS = 200
RECORD_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,80}\.json$")
Spec = Annotated[str, Field(max_length=500)]


STRICT = ConfigDict(extra="forbid", strict=True)
"""Request bodies: no unknown key, and no coercion (``"seed": true`` is not 1, ``"turn": "3"`` not 3:
issue 51's silent wrong numbers)."""


class NewGame(BaseModel):
    model_config = STRICT
    game: str = Field(default="big2", max_length=40)
    preset: str | None = Field(default=None, max_length=40)
    opponents: list[Spec] = Field(default_factory=lambda: ["heuristic"], max_length=3)
    seat: int = 0
    seed: int = 0
    open_hands: bool = False
    advisor: Spec | None = None
    step: bool = False


class Step(BaseModel):
    model_config = STRICT
    turn: int


class MatchGame(BaseModel):
    model_config = STRICT
    file: str = Field(max_length=500)
    deal: int = 0
    seat: int = 0


class Move(BaseModel):
    model_config = STRICT
    turn: int
    cards: list[str] | None = Field(default=None, max_length=20)
    index: int | None = None


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


def create_app(root: str | Path = ".", record_dir: str | Path | None = None, max_games: int = MAX_GAMES, *,
               port: int | None = None, per_client: int = GAMES_PER_CLIENT,
               decision_seconds: float = DECISION_SECONDS, match_seconds: float = MATCH_SECONDS,
               workers: int = WORKERS, pause: float = PAUSE_SECONDS) -> FastAPI:
    """The application over the project folder ``root`` (its ``runs/`` lists the trained agents);
    finished games are written to ``record_dir`` (default ``root/runs/played``). ``port``: the
    port it is served on (requests naming another are refused; ``None``: any). The other
    arguments override the bounds of :mod:`climbrl.serve.limits`; ``pause``: the page's default
    pause between two agents' plays, in seconds (a person may change it on the page).
    ``app.state.close()`` stops every worker process (the server calls it when it stops)."""
    if not 0 <= pause <= 10:
        raise ValueError(f"the pause between the agents' plays is 0..10 seconds, got {pause!r}")
    root = Path(root).resolve()
    records = Path(record_dir) if record_dir else root / "runs" / "played"
    lobby = Lobby(max_games, per_client)
    ids = ClientIds()
    preload = ("climbrl.serve.table", "climbrl.serve.matches")
    decisions = Pool(workers, decision_seconds, WAIT_SECONDS, preload)
    replays = Pool(1, match_seconds, WAIT_SECONDS, preload)
    jobs = Jobs()
    app = FastAPI(title="climbrl", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.close = lambda: (decisions.close(), replays.close())
    app.add_middleware(Guard, port=port, max_body=MAX_BODY_BYTES)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, exc: RequestValidationError) -> JSONResponse:
        where = "; ".join(f"{'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors())
        return _error(422, f"malformed request: {where}"[:2000])

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(TableError)
    async def table_error(request: Request, exc: TableError) -> JSONResponse:
        return _error(exc.status, str(exc), **exc.extra)

    @app.exception_handler(RecordError)
    @app.exception_handler(MatchError)
    async def bad_record(request: Request, exc: ValueError) -> JSONResponse:
        return _error(400, str(exc))

    def client(request: Request) -> str:
        return ids.check(request.cookies.get(COOKIE))

    @app.get("/", include_in_schema=False)
    def index(request: Request) -> FileResponse:
        page = FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})
        if not client(request):
            page.set_cookie(COOKIE, ids.new(), httponly=True, samesite="strict")
        return page

    @app.get("/api/catalog")
    def get_catalog() -> dict[str, Any]:
        return {**catalog(root), "pause_ms": round(1000 * pause)}

    @app.post("/api/games", status_code=201)
    def new_game(body: NewGame, request: Request) -> dict[str, Any]:
        t = Table(body.game, body.preset, body.opponents, body.seat, body.seed, body.open_hands, body.advisor,
                  root=root, worker=decisions.call, step=body.step)
        lobby.add(client(request), t)
        with t.lock:
            return _saved(t)

    @app.get("/api/games/{gid}")
    def get_game(gid: str) -> dict[str, Any]:
        t = lobby.get(gid)
        with t.lock:
            return t.view()

    @app.post("/api/games/{gid}/move")
    def move(gid: str, body: Move) -> dict[str, Any]:
        t = lobby.get(gid)
        with t.lock:
            t.move(body.turn, cards=body.cards, index=body.index)
            return _saved(t)

    @app.post("/api/games/{gid}/step")
    def step(gid: str, body: Step) -> dict[str, Any]:
        t = lobby.get(gid)
        with t.lock:
            t.step(body.turn)
            return _saved(t)

    @app.get("/api/games/{gid}/advice")
    def advice(gid: str, turn: int) -> dict[str, Any]:
        t = lobby.get(gid)
        with t.lock:
            return t.advice(turn)

    @app.get("/api/games/{gid}/hint")
    def hint(gid: str, turn: int) -> dict[str, Any]:
        t = lobby.get(gid)
        with t.lock:
            return t.advice(turn, hint=True)

    @app.get("/api/games/{gid}/record")
    def record(gid: str) -> Response:
        t = lobby.get(gid)
        with t.lock:
            text = t.record()
        return Response(text, media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="{_record_name(t)}"'})

    @app.get("/api/games/{gid}/replay")
    def replay_game(gid: str) -> dict[str, Any]:
        t = lobby.get(gid)
        with t.lock:
            text = t.record()
            meta = _meta(t)
        return _with_meta(frames(text), meta)

    @app.get("/api/records")
    def list_records() -> list[dict[str, Any]]:
        if not records.is_dir():
            return []
        files = sorted(records.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        return [_listed(p) for p in files[:LISTED_RECORDS]]

    @app.get("/api/records/{name}")
    def open_record(name: str) -> dict[str, Any]:
        path = records / name
        if not RECORD_NAME.match(name) or not path.is_file():
            raise TableError(f"no record {name!r}")
        if path.stat().st_size > MAX_BODY_BYTES:
            raise RecordError(f"the record is larger than {MAX_BODY_BYTES} bytes (the server's bound)")
        return _with_meta(frames(path.read_text(errors="replace")), _read_meta(path))

    @app.get("/api/matches")
    def list_matches() -> list[dict[str, Any]]:
        return match_records(root)

    @app.post("/api/matches/replay", status_code=202)
    def match_replay(body: MatchGame) -> dict[str, Any]:
        args, title = match_job(root, body.file, body.deal, body.seat)
        return jobs.start(replays, replay_job, args, match_seconds, title).view()

    @app.get("/api/jobs/{jid}")
    def job_state(jid: str) -> Any:
        job = jobs.get(jid)
        return _error(*job.error, **job.view()) if job.error else job.view()

    @app.delete("/api/jobs/{jid}")
    def cancel_job(jid: str) -> dict[str, Any]:
        job = jobs.get(jid)
        job.cancel.set()
        return job.view()

    @app.post("/api/replay")
    async def replay_upload(request: Request) -> dict[str, Any]:
        body = await request.body()  # bounded by the Guard
        try:
            text = body.decode()
        except UnicodeDecodeError:
            raise RecordError("the record is not UTF-8 text") from None
        return await run_in_threadpool(frames, text)

    def _record_name(t: Table) -> str:
        return f"{t.game_name}-{t.preset}-seed{t.seed}-{t.id}.json"

    def _saved(t: Table) -> dict[str, Any]:
        """The view, after writing a game that just finished to the record folder (its record,
        and beside it its ``.meta``: date, seats, result, the agents' reasoning)."""
        view = t.view()
        if view["over"] and not t.saved:
            try:
                records.mkdir(parents=True, exist_ok=True)
                (records / _record_name(t)).write_text(t.record())
                (records / _record_name(t)).with_suffix(".meta").write_text(json.dumps(_meta(t)))
                view["record_file"] = _record_name(t)
            except OSError as e:
                view["record_error"] = f"the game could not be saved: {e}"
            t.saved = True
        return view

    return app


def _meta(t: Table) -> dict[str, Any]:
    """What a finished game's record does not hold: its seats' names, the person's seat, the
    result, the time it ended and the agents' reasoning, move by move (``None``: none recorded)."""
    res = t.state.result()
    moves = [e for e in t.events if e["phase"] != "note" and e["note"] != "played automatically"]
    return {"game": t.game_name, "preset": t.preset, "seed": t.seed, "names": t.names, "seat": t.seat,
            "finished": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime()),
            "result": {"winners": list(res.winners), "returns": list(res.returns)},
            "reasoning": [e["reasoning"] for e in moves]}


def _read_meta(path: Path) -> dict[str, Any] | None:
    meta = path.with_suffix(".meta")
    try:
        if meta.is_file() and meta.stat().st_size <= MAX_BODY_BYTES:
            data = json.loads(meta.read_text())
            return data if isinstance(data, dict) else None
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        pass
    return None


def _with_meta(replay: dict[str, Any], meta: dict[str, Any] | None) -> dict[str, Any]:
    """A replay's frames with the names, the person's seat and each move's reasoning, where its
    game was played here (its ``.meta``)."""
    if not meta:
        return replay
    names, reasons = meta.get("names"), meta.get("reasoning")
    if isinstance(names, list) and len(names) == replay["seats"] and all(isinstance(n, str) for n in names):
        replay["names"] = names
    if isinstance(meta.get("seat"), int):
        replay["you"] = meta["seat"]
    if isinstance(reasons, list) and len(reasons) == len(replay["frames"]) - 1:
        for f, r in zip(replay["frames"][1:], reasons, strict=True):
            f["reasoning"] = r if isinstance(r, dict) else None
    return replay


def _listed(path: Path) -> dict[str, Any]:
    """A saved game as the replays page lists it: name, date, game, seats and result."""
    out: dict[str, Any] = {"name": path.name,
                           "date": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(path.stat().st_mtime))}
    meta = _read_meta(path)
    if meta:
        out.update({k: meta[k] for k in ("game", "preset", "names", "seat", "result", "finished") if k in meta})
        out["date"] = meta.get("finished", out["date"])
    return out
