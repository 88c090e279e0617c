"""The guard of ``ihmt gui``: ASGI middleware in front of every route.

- ``Host`` must name a loopback address (DNS rebinding) and ``Origin``, when present,
  a loopback ``http://`` origin: else 400 / 403;
- every ``/api/`` call carries the random token of the URL the command prints (header
  ``X-IHMT-Token`` or ``?token=``), compared in constant time: missing 401, wrong 403;
- only GET, HEAD and POST; a POST is ``application/json`` of at most ``MAX_BODY`` bytes,
  also when its body arrives in chunks.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["MAX_BODY", "SECURITY_HEADERS", "BodyTooLargeError", "Guard"]

MAX_BODY = 64 * 1024
"""Largest POST body accepted (bytes); the biggest legitimate one is a folder path."""
TOKEN_HEADER = "x-ihmt-token"

_LOOPBACK_HOST = re.compile(r"(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?", re.IGNORECASE)
_LOOPBACK_ORIGIN = re.compile(
    r"http://(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?", re.IGNORECASE
)
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}


BAD_HOST = "bad Host: the interface answers only to 127.0.0.1"
OPEN_URL = "open the exact URL 'ihmt gui' printed"


class Guard:
    """ASGI middleware: loopback Host and Origin, the token on /api/, bounded POST bodies."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode("ascii")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        import hmac

        from starlette.datastructures import Headers, QueryParams

        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not _LOOPBACK_HOST.fullmatch(host):
            await _refuse(scope, receive, send, 400, BAD_HOST)
            return
        origin = headers.get("origin")
        if origin is not None and not _LOOPBACK_ORIGIN.fullmatch(origin):
            await _refuse(scope, receive, send, 403, "foreign Origin refused")
            return
        path: str = scope["path"]
        method: str = scope["method"]
        if path.startswith("/api/") or path == "/api":
            given = headers.get(TOKEN_HEADER) or QueryParams(scope["query_string"]).get("token")
            if not given:
                await _refuse(scope, receive, send, 401, "missing token: " + OPEN_URL)
                return
            if not hmac.compare_digest(given.encode("utf-8", "replace"), self.token):
                await _refuse(scope, receive, send, 403, "wrong token: " + OPEN_URL)
                return
        if method not in ("GET", "HEAD", "POST"):
            await _refuse(scope, receive, send, 405, "only GET and POST are served")
            return
        if method == "POST":
            length = headers.get("content-length")
            if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
                await _refuse(scope, receive, send, 413, f"request body over {MAX_BODY} bytes")
                return
            if headers.get("content-type", "").split(";")[0].strip() != "application/json":
                await _refuse(scope, receive, send, 415, "POST bodies must be application/json")
                return
            receive = _bounded(receive)
        await self.app(scope, receive, send)


class BodyTooLargeError(Exception):
    """A chunked body grew past ``MAX_BODY`` while it was read."""


def _bounded(receive: Receive) -> Receive:
    seen = 0

    async def wrapped() -> Message:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > MAX_BODY:
                raise BodyTooLargeError
        return message

    return wrapped


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    from starlette.responses import JSONResponse

    response = JSONResponse({"error": message}, status_code=status, headers=SECURITY_HEADERS)
    await response(scope, receive, send)
