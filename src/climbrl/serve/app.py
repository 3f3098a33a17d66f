"""The web application: FastAPI routes over :class:`~climbrl.serve.table.Table` (issue 27).

Routes (every error is ``{"error": message}`` with a 4xx or 5xx status, and changes nothing):

- ``GET /``: the page; ``/static/...``: its script and style (served here: no CDN).
- ``GET /api/catalog``: games, presets and agents (trained policies under ``runs/`` included).
- ``POST /api/games``: a new game; ``GET /api/games/{id}``: the person's view of it.
- ``POST /api/games/{id}/move``: ``{"turn", "cards"}`` or ``{"turn", "index"}``.
- ``GET /api/games/{id}/advice?turn=N``: the advisor's reasoning over the person's legal moves.
- ``GET /api/games/{id}/record``: the finished game as the engine's JSON (a download), also
  written to the record folder; ``GET /api/games/{id}/replay``: its frames.
- ``GET /api/records``, ``GET /api/records/{name}``: the games finished here (the record folder);
  ``POST /api/replay``: the frames of any record the page uploads.
- ``GET /api/matches``: the pipeline's match records; ``POST /api/matches/replay``
  ``{"file", "deal", "seat"}``: one of their games, replayed and checked (:mod:`.matches`).

A game's id is a random token: only the tab that started it (or a person who was given its
address) can see or move in it. Games live in memory, the oldest dropped beyond ``max_games``.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from climbrl.serve.catalog import catalog
from climbrl.serve.matches import MatchError, match_records, replay_match
from climbrl.serve.replay import MAX_RECORD_BYTES, RecordError, frames
from climbrl.serve.table import Table, TableError


class UnknownGame(TableError):
    status = 404

STATIC = Path(__file__).parent / "static"
RECORD_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,80}\.json$")


class NewGame(BaseModel):
    model_config = ConfigDict(extra="forbid")
    game: str = "big2"
    preset: str | None = None
    opponents: list[str] = Field(default_factory=lambda: ["heuristic"], max_length=3)
    seat: int = 0
    seed: int = 0
    open_hands: bool = False
    advisor: str | None = None


class MatchGame(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file: str
    deal: int = 0
    seat: int = 0


class Move(BaseModel):
    model_config = ConfigDict(extra="forbid")
    turn: int
    cards: list[str] | None = Field(default=None, max_length=20)
    index: int | None = None


def _error(status: int, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


def create_app(root: str | Path = ".", record_dir: str | Path | None = None, max_games: int = 200) -> FastAPI:
    """The application over the project folder ``root`` (its ``runs/`` lists the trained agents);
    finished games are written to ``record_dir`` (default ``root/runs/played``)."""
    root = Path(root).resolve()
    records = Path(record_dir) if record_dir else root / "runs" / "played"
    tables: OrderedDict[str, Table] = OrderedDict()
    lock = threading.Lock()
    app = FastAPI(title="climbrl", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.exception_handler(RequestValidationError)
    async def malformed(request: Request, exc: RequestValidationError) -> JSONResponse:
        where = "; ".join(f"{'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors())
        return _error(422, f"malformed request: {where}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(TableError)
    async def table_error(request: Request, exc: TableError) -> JSONResponse:
        return _error(exc.status, str(exc), **exc.extra)

    @app.exception_handler(RecordError)
    async def record_error(request: Request, exc: RecordError) -> JSONResponse:
        return _error(400, str(exc))

    @app.exception_handler(MatchError)
    async def match_error(request: Request, exc: MatchError) -> JSONResponse:
        return _error(400, str(exc))

    def table(gid: str) -> Table:
        with lock:
            t = tables.get(gid)
            if t is not None:
                tables.move_to_end(gid)
        if t is None:
            raise UnknownGame("no such game (the server was restarted, or the address is wrong): start a new game")
        return t

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    @app.get("/api/catalog")
    def get_catalog() -> dict[str, Any]:
        return catalog(root)

    @app.post("/api/games", status_code=201)
    def new_game(body: NewGame) -> dict[str, Any]:
        t = Table(body.game, body.preset, body.opponents, body.seat, body.seed, body.open_hands, body.advisor,
                  root=root)
        with lock:
            tables[t.id] = t
            while len(tables) > max_games:
                tables.popitem(last=False)
        with t.lock:
            return _saved(t)

    @app.get("/api/games/{gid}")
    def get_game(gid: str) -> dict[str, Any]:
        t = table(gid)
        with t.lock:
            return t.view()

    @app.post("/api/games/{gid}/move")
    def move(gid: str, body: Move) -> dict[str, Any]:
        t = table(gid)
        with t.lock:
            t.move(body.turn, cards=body.cards, index=body.index)
            return _saved(t)

    @app.get("/api/games/{gid}/advice")
    def advice(gid: str, turn: int) -> dict[str, Any]:
        t = table(gid)
        with t.lock:
            return t.advice(turn)

    @app.get("/api/games/{gid}/record")
    def record(gid: str) -> Response:
        t = table(gid)
        with t.lock:
            text = t.record()
        return Response(text, media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="{_record_name(t)}"'})

    @app.get("/api/games/{gid}/replay")
    def replay_game(gid: str) -> dict[str, Any]:
        t = table(gid)
        with t.lock:
            text = t.record()
            names = t.names
        return {**frames(text), "names": names}

    @app.get("/api/records")
    def list_records() -> list[dict[str, Any]]:
        if not records.is_dir():
            return []
        files = sorted(records.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        return [{"name": p.name} for p in files[:200]]

    @app.get("/api/records/{name}")
    def open_record(name: str) -> dict[str, Any]:
        if not RECORD_NAME.match(name) or not (records / name).is_file():
            raise TableError(f"no record {name!r}")
        return frames((records / name).read_text())

    @app.get("/api/matches")
    def list_matches() -> list[dict[str, Any]]:
        return match_records(root)

    @app.post("/api/matches/replay")
    def match_replay(body: MatchGame) -> dict[str, Any]:
        return replay_match(root, body.file, body.deal, body.seat)

    @app.post("/api/replay")
    async def replay_upload(request: Request) -> dict[str, Any]:
        body = await request.body()
        if len(body) > MAX_RECORD_BYTES:
            raise RecordError(f"the record is larger than {MAX_RECORD_BYTES} bytes")
        try:
            text = body.decode()
        except UnicodeDecodeError:
            raise RecordError("the record is not UTF-8 text") from None
        return frames(text)

    def _record_name(t: Table) -> str:
        return f"{t.game_name}-{t.preset}-seed{t.seed}-{t.id}.json"

    def _saved(t: Table) -> dict[str, Any]:
        """The view, after writing a game that just finished to the record folder."""
        view = t.view()
        if view["over"] and not t.saved:
            try:
                records.mkdir(parents=True, exist_ok=True)
                (records / _record_name(t)).write_text(t.record())
                view["record_file"] = _record_name(t)
            except OSError as e:
                view["record_error"] = f"the game could not be saved: {e}"
            t.saved = True
        return view

    return app
