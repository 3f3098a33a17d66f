"""What every request passes before the application sees it, and the JSON answer to every
failure (issue 51): the checks Jupyter and MLflow make for the same reason, since a page of any
web site, open in the person's browser, can send requests to a server on this machine.

- **Host**: the name the request was sent to must be this server's (``127.0.0.1``,
  ``localhost`` or ``[::1]``, and the port it listens on). A site that points its own name at
  127.0.0.1 (DNS rebinding) sends its name, and is refused (403).
- **Origin**: a request that changes something (POST, PUT, PATCH, DELETE) from a browser page
  must come from this server's own page (403 otherwise; clients that send no ``Origin``, like
  ``curl``, are not pages).
- **Content type**: a POST's body is ``application/json`` (415 otherwise), which a page of another
  site cannot send without asking first (a CORS preflight, which this server never grants).
- **Size**: a body is read in pieces and refused (413) as soon as it passes
  :data:`~climbrl.serve.limits.MAX_BODY_BYTES`, the rest never read.
- **Failures**: an error no handler turned into a 4xx answers ``{"error": ...}`` with status 500
  and one line in the log, never a plain-text page or a traceback.

Starlette's ``TrustedHostMiddleware`` checks the name only (not the port) and answers in plain
text; the few lines here do all the checks above with JSON answers.
"""

from __future__ import annotations

import json
import logging

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from climbrl.serve.limits import MAX_BODY_BYTES

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
CHANGING = ("POST", "PUT", "PATCH", "DELETE")
log = logging.getLogger("climbrl.serve")


def split_host(host: str) -> tuple[str, str]:
    """``(name, port)`` of a ``Host`` header (``port`` empty when it names none)."""
    if host.startswith("["):
        name, _, rest = host.partition("]")
        return name + "]", rest[1:] if rest.startswith(":") else rest
    name, _, port = host.partition(":")
    return name, port


async def answer(send: Send, status: int, message: str) -> None:
    """A JSON error ``{"error": message}`` with ``status``."""
    body = json.dumps({"error": message}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """The checks above, as ASGI middleware over the application; ``port``: the port the server
    listens on (``None``: any port, for an application not yet bound to one)."""

    def __init__(self, app: ASGIApp, port: int | None = None, max_body: int = MAX_BODY_BYTES) -> None:
        self.app, self.port, self.max_body = app, port, max_body

    def _ours(self, name: str, port: str) -> bool:
        return name.lower() in LOOPBACK_NAMES and (self.port is None or port == str(self.port))

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        """``(status, message)`` for a request refused before it is read, else ``None``."""
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not self._ours(*split_host(host)):
            where = f"port {self.port}" if self.port is not None else "its port"
            return 403, (f"refused: the request was sent to {host!r}, not to this server's address "
                         f"(127.0.0.1, localhost or [::1], {where}): pages of other sites cannot use it")
        method = scope["method"]
        origin = headers.get("origin")
        if method in CHANGING and origin is not None:
            scheme, _, rest = origin.partition("://")
            if scheme != "http" or not self._ours(*split_host(rest)):
                return 403, f"refused: a request from another site's page ({origin}) cannot change anything here"
        if method in CHANGING and headers.get("sec-fetch-site") == "cross-site":
            return 403, "refused: a request from another site's page cannot change anything here"
        if method == "POST":
            kind = headers.get("content-type", "").partition(";")[0].strip().lower()
            if kind != "application/json":
                return 415, f"a POST body is JSON, sent as Content-Type: application/json (got {kind or 'none'!r})"
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            return 413, f"the request body is larger than the server's bound of {self.max_body} bytes"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refused = self.refusal(scope)
        if refused is not None:
            await answer(send, *refused)
            return
        if scope["method"] in CHANGING:
            body = await self._read(receive)
            if body is None:
                await answer(send, 413, f"the request body is larger than the server's bound of {self.max_body} "
                                        "bytes")
                return
            receive = _replay(body, receive)
        started = False

        async def tracking(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracking)
        except Exception as e:  # the catch-all: JSON, one log line, the server goes on
            log.error("climbrl serve: %s %s failed: %s: %s", scope["method"], scope["path"], type(e).__name__, e)
            if not started:
                await answer(send, 500, f"the server failed on this request: {type(e).__name__}: {e}"[:2000])

    async def _read(self, receive: Receive) -> bytes | None:
        """The whole body, or ``None`` as soon as it passes the bound (the rest is never read)."""
        parts, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(parts)
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the body read already, then waits on the connection as before."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again
