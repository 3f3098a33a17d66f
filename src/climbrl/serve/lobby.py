"""The games in progress, per browser (issue 51).

Every request comes from this machine (the server binds a loopback address), so the address
tells no two browsers apart: a browser is known by the ``climbrl_client`` cookie the page gets
with ``GET /`` (a random id signed by the server, so a request cannot name another browser's; a
request without a valid one, e.g. ``curl``, counts as one shared client). Each browser may hold
:data:`~climbrl.serve.limits.GAMES_PER_CLIENT` games: its next closes its own oldest. Past
:data:`~climbrl.serve.limits.MAX_GAMES` in all, the least recently used game of the browser
holding the most goes. A closed game's address then says why it is gone, not that the server
was restarted.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from collections import OrderedDict

from climbrl.serve.limits import GAMES_PER_CLIENT, MAX_GAMES
from climbrl.serve.table import Table, TableError

COOKIE = "climbrl_client"
CLOSED_KEPT = 10_000
"""Closed games whose address still explains why (the oldest forgotten first)."""


class UnknownGame(TableError):
    status = 404


class ClientIds:
    """Signed browser ids: ``id.signature``, valid for this server process only."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def _sign(self, ident: str) -> str:
        return hmac.new(self._key, ident.encode(), hashlib.sha256).hexdigest()[:32]

    def new(self) -> str:
        ident = secrets.token_urlsafe(12)
        return f"{ident}.{self._sign(ident)}"

    def check(self, cookie: str | None) -> str:
        """The browser id of a cookie; ``""`` (the shared client) for none or a forged one."""
        ident, _, sig = (cookie or "").partition(".")
        return ident if ident and hmac.compare_digest(sig, self._sign(ident)) else ""


class Lobby:
    """The tables by id, each with its browser, least recently used first."""

    def __init__(self, max_games: int = MAX_GAMES, per_client: int = GAMES_PER_CLIENT) -> None:
        self.max_games, self.per_client = max_games, per_client
        self._tables: OrderedDict[str, tuple[str, Table]] = OrderedDict()
        self._closed: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, client: str, table: Table) -> None:
        with self._lock:
            self._tables[table.id] = (client, table)
            mine = [gid for gid, (c, _) in self._tables.items() if c == client]
            for gid in mine[:max(0, len(mine) - self.per_client)]:
                self._close(gid, f"this browser started more than {self.per_client} games (the server's bound "
                                 "per browser), so its oldest was closed")
            while len(self._tables) > self.max_games:
                counts: dict[str, int] = {}
                for c, _ in self._tables.values():
                    counts[c] = counts.get(c, 0) + 1
                most = max(counts.values())
                gid = next(g for g, (c, _) in self._tables.items() if counts[c] == most)
                self._close(gid, f"the server holds at most {self.max_games} games in progress, and the browser "
                                 "that started this one held the most")

    def _close(self, gid: str, why: str) -> None:
        del self._tables[gid]
        self._closed[gid] = why
        while len(self._closed) > CLOSED_KEPT:
            self._closed.popitem(last=False)

    def get(self, gid: str) -> Table:
        with self._lock:
            entry = self._tables.get(gid)
            if entry is not None:
                self._tables.move_to_end(gid)
                return entry[1]
            why = self._closed.get(gid)
        if why is not None:
            raise UnknownGame(f"this game was closed: {why}; start a new game")
        raise UnknownGame("no such game (a wrong address, or the server was restarted): start a new game")

    def __len__(self) -> int:
        return len(self._tables)
