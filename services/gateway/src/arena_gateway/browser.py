"""What a browser needs of the gateway besides the API (docs/client.md): the built web client at
``/``, and sessions kept in an HttpOnly cookie rather than in a token page scripts could read.

Both are ASGI middleware on the gateway's app, so no route changes:

- :class:`CookieSessions`. A request that sends ``X-Arena-Session: cookie`` gets the token of any
  answer that carries one (``POST /v1/guests``, ``/v1/accounts``, ``/v1/accounts/upgrade``,
  ``/v1/sessions``) as the cookie ``arena_session`` (HttpOnly, SameSite=Strict, Path=/, Secure
  over https) instead of in the body; signing out clears it. A later request that carries the
  cookie and no ``Authorization`` is authenticated by it, as if it had sent ``Authorization:
  Bearer <cookie>``: reads (GET, HEAD) always, anything else and the WebSocket handshake only from
  the same origin (their ``Origin`` is the gateway's own), so no other site can act with it.
- :class:`WebClient`. ``GET`` of ``/`` and of the files the build produced answer from the build
  directory (``ARENA_WEB_DIR``, by default ``services/gateway/web/dist``), gzip-compressed;
  hashed assets are cached for good, ``index.html`` revalidated. Every other path goes to the app,
  so routes added later are never shadowed.
"""

from __future__ import annotations

import json
import os
import time
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any

from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException
from starlette.middleware.gzip import GZipMiddleware
from starlette.responses import HTMLResponse, PlainTextResponse, Response
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena_gateway.limits import same_origin

COOKIE = "arena_session"
#: The request header by which a page asks for its session in the cookie.
ASK_HEADER = "x-arena-session"
#: A guest's cookie outlives its session (ARENA_SESSION_TTL_SECONDS, renewed by use); the
#: server's session decides. 400 days is the longest a browser keeps a cookie.
GUEST_COOKIE_SECONDS = 400 * 86_400
SAFE_METHODS = frozenset({"GET", "HEAD"})
SIGN_OUT = "/v1/sessions/current"
#: The default build directory: services/gateway/web/dist beside this package's source tree.
DEFAULT_WEB_DIR = Path(__file__).resolve().parents[2] / "web" / "dist"


def cookie_token(headers: Headers) -> str | None:
    raw = headers.get("cookie")
    if not raw:
        return None
    cookies: SimpleCookie = SimpleCookie()
    try:
        cookies.load(raw)
    except Exception:  # a malformed Cookie header authenticates nobody
        return None
    morsel = cookies.get(COOKIE)
    return morsel.value if morsel is not None and morsel.value else None


def _from_own_page(scope: Scope, headers: Headers) -> bool:
    return same_origin(headers.get("origin"), headers.get("host"), scope.get("scheme", "http"))


def _secure(scope: Scope) -> bool:
    return scope.get("scheme") in ("https", "wss")


def session_cookie(token: str, max_age: int, secure: bool) -> str:
    flags = "; Secure" if secure else ""
    return f"{COOKIE}={token}; Max-Age={max_age}; Path=/; HttpOnly; SameSite=Strict{flags}"


def cleared_cookie(secure: bool) -> str:
    return session_cookie("", 0, secure)


class CookieSessions:
    """Sessions in an HttpOnly cookie for the browser client; the bearer token for the rest."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        token = cookie_token(headers)
        if token is not None and "authorization" not in headers and self._may_use(scope, headers):
            scope = dict(scope)
            scope["headers"] = [*scope["headers"], (b"authorization", f"Bearer {token}".encode())]
        if (
            scope["type"] == "http"
            and headers.get(ASK_HEADER) == "cookie"
            and _from_own_page(scope, headers)
        ):
            send = _CookieWriter(send, scope).send
        await self.app(scope, receive, send)

    @staticmethod
    def _may_use(scope: Scope, headers: Headers) -> bool:
        if scope["type"] == "http" and scope.get("method", "GET") in SAFE_METHODS:
            return True
        return _from_own_page(scope, headers)


class _CookieWriter:
    """Moves the token of a JSON answer into the session cookie (and clears it at sign-out)."""

    def __init__(self, send: Send, scope: Scope) -> None:
        self._send = send
        self._secure = _secure(scope)
        self._sign_out = scope.get("method") == "DELETE" and scope.get("path") == SIGN_OUT
        self._start: Message | None = None
        self._body = bytearray()

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            status = int(message["status"])
            kind = Headers(raw=message.get("headers", [])).get("content-type", "")
            if 200 <= status < 300 and kind.startswith("application/json"):
                self._start = message  # held until the body is whole
                return
            if self._sign_out and 200 <= status < 300:
                MutableHeaders(scope=message).append("set-cookie", cleared_cookie(self._secure))
            await self._send(message)
            return
        if message["type"] != "http.response.body" or self._start is None:
            await self._send(message)
            return
        self._body.extend(message.get("body", b""))
        if message.get("more_body", False):
            return
        start, body = self._start, bytes(self._body)
        self._start = None
        answer = _json(body)
        if isinstance(answer, dict) and isinstance(answer.get("token"), str):
            token = answer.pop("token")
            expires = answer.get("expires_at_ms")
            max_age = (
                max(0, int(expires / 1000 - time.time()))
                if isinstance(expires, int)
                else GUEST_COOKIE_SECONDS
            )
            body = json.dumps(answer, separators=(",", ":")).encode()
            out = MutableHeaders(scope=start)
            out["content-length"] = str(len(body))
            out.append("set-cookie", session_cookie(token, max_age, self._secure))
            out.append("cache-control", "no-store")
        await self._send(start)
        await self._send({"type": "http.response.body", "body": body})


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


class _Build(StaticFiles):
    """The build directory, with caching that suits Vite's output: files under ``assets/`` have
    content hashes in their names (cached for good), anything else is revalidated."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        # Outside a router nothing turns StaticFiles' HTTPException into an answer.
        try:
            return await super().get_response(path, scope)
        except HTTPException as exc:
            return PlainTextResponse(exc.detail, status_code=exc.status_code)

    def file_response(self, full_path: Any, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(full_path, *args, **kwargs)
        hashed = f"{os.sep}assets{os.sep}" in str(full_path)
        response.headers["cache-control"] = (
            "public, max-age=31536000, immutable" if hashed else "no-cache"
        )
        response.headers["x-content-type-options"] = "nosniff"
        return response


NOT_BUILT = """<!doctype html><html lang="en"><meta charset="utf-8"><title>Arena</title>
<p>The web client is not built. Run <code>make install</code> (it needs npm), then reload.</p>
<p>The API is at <a href="/docs">/docs</a>.</p></html>"""


class WebClient:
    """Serves the built client for ``/`` and the build's own files; the app for the rest."""

    def __init__(self, app: ASGIApp, directory: Path | None = None) -> None:
        self.app = app
        self.directory = directory or DEFAULT_WEB_DIR
        self._files: ASGIApp | None = None

    def _names(self) -> frozenset[str]:
        """The build's top-level names, read each time: a rebuild needs no restart."""
        try:
            return frozenset(entry.name for entry in self.directory.iterdir())
        except OSError:
            return frozenset()

    def _serves(self, path: str) -> bool:
        if path == "/":
            return True
        first = path.lstrip("/").split("/", 1)[0]
        return bool(first) and first in self._names()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") not in SAFE_METHODS
            or not self._serves(scope.get("path", ""))
        ):
            await self.app(scope, receive, send)
            return
        if not (self.directory / "index.html").is_file():
            await HTMLResponse(NOT_BUILT, status_code=503)(scope, receive, send)
            return
        if self._files is None:
            self._files = GZipMiddleware(_Build(directory=self.directory, html=True), 512)
        await self._files(scope, receive, send)


__all__ = ["COOKIE", "CookieSessions", "WebClient", "cookie_token"]
