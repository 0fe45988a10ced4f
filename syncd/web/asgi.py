"""syncd's one ASGI app: the operations endpoints, the read API, the Atom feeds, the pages.

``build_app`` assembles it; ``syncd.web.server`` serves it.  Without an ``App``
(tests of the operations surface, the container's health check) only
``/metrics``, ``/healthz`` and ``/readyz`` answer.

Everything here reads public arXiv metadata; only the operators' routes
behind ``[http] admin_token`` write (followed authors).  Whatever a
client sends, the answer is never a stack trace or a 500 it caused: a bad
parameter is a 400 naming it, an unknown paper a 404, a database that does
not answer a 503; errors are JSON (``{"error": ...}`` under ``/api``,
``{"status": "error", ...}`` on the operations paths) or an HTML page.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import urlsplit

import structlog
from fastapi import FastAPI
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from syncd import __version__
from syncd.errors import StoreError
from syncd.service.app import App
from syncd.web.api import API_PREFIX, api_router
from syncd.web.author_pages import author_pages_router
from syncd.web.authors_api import authors_router
from syncd.web.exports import exports_router
from syncd.web.feeds import feeds_router
from syncd.web.fragments import Fragments
from syncd.web.group_pages import group_pages_router
from syncd.web.groups_api import groups_router
from syncd.web.groups_read_api import groups_read_router
from syncd.web.index import NextSync
from syncd.web.ops import Readiness, ops_routes
from syncd.web.pages import (
    PAGE_PREFIXES,
    SWAGGER_UI,
    error_page,
    pages_router,
    static_files,
    swagger_files,
)
from syncd.web.publications_api import publications_router
from syncd.web.webhooks_api import webhooks_router

__all__ = ["build_app"]

_log = structlog.get_logger(__name__)

# Sent with every answer that sets none of its own: nothing may run, embed or frame it.
_DEFAULT_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"
_NO_BODY = "a request here takes no body"
# A body still unread when the answer closes the connection makes the kernel
# reset it, which can destroy the answer before the client has read it.  What
# a client sends at once is taken first: up to this much, while each piece
# follows the last within this long (a client that drips or stalls is answered
# and closed anyway, so it holds the connection no longer than that).
_DRAIN_BYTES = 64 * 1024
_DRAIN_GAP = 0.2
# The operators' writes (``POST /api/v1/authors...``, ``/groups...``) take a small JSON body,
# read whole here within a deadline, so a slow client holds nothing longer.
_BODY_BYTES = 64 * 1024
_BODY_SECONDS = 5.0


def build_app(
    ready: Callable[[], Readiness], app: App | None = None, next_sync: NextSync | None = None
) -> ASGIApp:
    """The ASGI app: operations endpoints always, the read surface when ``app`` is given.

    ``next_sync`` tells the pages when the scheduler of this process syncs
    next; without it (a server with no scheduler) they say it is not known.
    """
    api = FastAPI(
        title="syncd",
        version=__version__,
        summary="The record of an author's arXiv papers: papers, revisions and change events.",
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,
        redoc_url=None,
    )
    api.router.routes.extend(ops_routes(ready))
    if app is not None:
        fragments = Fragments()
        api.include_router(api_router(app))
        api.include_router(webhooks_router(app))
        api.include_router(authors_router(app))
        api.include_router(groups_router(app))
        api.include_router(publications_router(app))
        api.include_router(feeds_router(app, fragments))
        api.include_router(pages_router(app, fragments, next_sync))
        # Before the authors' pages: /authors/{name} would take /authors/{name}/papers.bib.
        api.include_router(exports_router(app))
        api.include_router(author_pages_router(app, next_sync))
        api.include_router(groups_read_router(app))
        api.include_router(group_pages_router(app, next_sync))
        # Before /static, which would otherwise take its paths.
        api.mount(SWAGGER_UI, swagger_files(), name="swagger-ui")
        api.mount("/static", static_files(), name="static")
    api.add_exception_handler(HTTPException, _http_error)
    api.add_exception_handler(RequestValidationError, _bad_parameter)
    api.add_exception_handler(Exception, _failed)
    return _Edge(api, app.settings.http.public_url if app is not None else None)


async def _failed(request: Request, exc: Exception) -> Response:
    # Starlette answers with this, then raises on to _Edge, which logs it.
    if isinstance(exc, StoreError):
        return error_response(request.url.path, 503, "the database is unavailable")
    return error_response(request.url.path, 500, "internal error")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    phrase = HTTPStatus(exc.status_code).phrase
    message = exc.detail if isinstance(exc.detail, str) else phrase
    if message == phrase:
        message = message.lower()  # "not found": the routes' own messages say more
    headers = dict(exc.headers or {})
    if exc.status_code == 405:
        headers["Allow"] = "GET, HEAD"
    return error_response(request.url.path, exc.status_code, message, headers)


async def _bad_parameter(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, RequestValidationError)
    first = exc.errors()[0] if exc.errors() else {}
    if first.get("type") == "json_invalid":
        # Its location is an offset into the body, not a parameter.
        why = (first.get("ctx") or {}).get("error", "")
        return error_response(request.url.path, 400, f"the body is not JSON: {why}".rstrip(": "))
    where = [str(part) for part in first.get("loc", ())[1:]]
    name = ".".join(where) or "request"
    # pydantic's message says what was expected, never what was sent.
    message = f"bad parameter {name!r}: {first.get('msg', 'invalid')}"
    return error_response(request.url.path, 400, message)


def error_response(
    path: str, status: int, message: str, headers: dict[str, str] | None = None
) -> Response:
    """An error in the shape of where it happened: the API's, a page's, or the ops paths'."""
    if path.startswith(f"{API_PREFIX}/") or path == API_PREFIX:
        return JSONResponse({"error": message}, status_code=status, headers=headers)
    if path == "/" or path.startswith(PAGE_PREFIXES):
        return error_page(status, message, headers)
    return JSONResponse({"status": "error", "error": message}, status_code=status, headers=headers)


class _Edge:
    """What every request passes: HEAD as GET without a body, safety headers, one log line.

    Also the last catch: an exception no route handled becomes a 503 (the
    database) or a 500 with nothing but the status, and a warning in the log.
    A request announcing a body is closed after its answer: 413 for a GET.
    """

    def __init__(self, app: ASGIApp, public_url: str | None) -> None:
        self._app = app
        self._public_url = public_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = time.monotonic()
        path: str = scope["path"]
        status = 500
        answered = False
        # No route reads a body, and one left unread would let a client hold the
        # connection by sending it slowly: the answer closes the connection.
        with_body = _announces_body(scope["headers"])

        async def send_with_headers(message: Message) -> None:
            nonlocal status, answered
            if message["type"] == "http.response.start":
                status, answered = message["status"], True
                headers = _own_location(message.get("headers", []), self._public_url)
                if with_body:
                    headers.append((b"connection", b"close"))
                message["headers"] = _with_safety_headers(headers)
            await send(message)

        # uvicorn drops a HEAD answer's body itself; the routes see a GET.
        inner = {**scope, "method": "GET"} if scope["method"] == "HEAD" else scope
        refusal: tuple[int, str] | None = None
        if with_body and _takes_body(inner):
            receive, refusal = await _read_body(receive)
            with_body = refusal is not None  # read whole: the connection may stay open
        elif with_body:
            await _discard_body(receive)
        try:
            if refusal is not None:
                await error_response(path, *refusal)(inner, receive, send_with_headers)
            elif with_body and inner["method"] == "GET":
                # A write keeps its 405 (or 404); a read with a body is refused.
                await error_response(path, 413, _NO_BODY)(inner, receive, send_with_headers)
            else:
                await self._app(inner, receive, send_with_headers)
        except Exception as exc:
            status = 503 if isinstance(exc, StoreError) else 500
            _log.warning("http_handler_failed", path=path[:200], status=status, exc_info=True)
            if not answered:
                message = "the database is unavailable" if status == 503 else "internal error"
                await error_response(path, status, message)(inner, receive, send_with_headers)
        _log.debug(
            "http_request",
            method=scope["method"],
            path=path[:200],
            status=status,
            duration_ms=round((time.monotonic() - started) * 1000.0, 1),
        )


def _own_location(headers: Any, public_url: str | None) -> list[tuple[bytes, bytes]]:
    """Headers with a redirect's ``Location`` under ``public_url``, or a bare path without it.

    Starlette's trailing-slash redirect names the host the client sent, so a
    forged Host would send a reader elsewhere.  Every redirect syncd makes is
    to a path of its own; the path keeps one leading slash, as ``//host``
    would name another site.
    """
    return [
        (name, _own_target(value, public_url) if name.lower() == b"location" else value)
        for name, value in headers
    ]


def _own_target(location: bytes, public_url: str | None) -> bytes:
    target = urlsplit(location.decode("latin-1"))
    path = "/" + target.path.lstrip("/") + (f"?{target.query}" if target.query else "")
    return ((public_url or "") + path).encode("latin-1")


def _takes_body(scope: Scope) -> bool:
    """Whether the request is one of the few that take a body: the operators' writes."""
    writes = (f"{API_PREFIX}/authors", f"{API_PREFIX}/groups", f"{API_PREFIX}/publications")
    return bool(scope["method"] == "POST" and scope["path"].startswith(writes))


async def _read_body(receive: Receive) -> tuple[Receive, tuple[int, str] | None]:
    """The whole body, replayed to the app; or why it is refused (too large, too slow)."""
    chunks: list[bytes] = []
    size = 0

    async def read() -> None:
        nonlocal size
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > _BODY_BYTES:
                return
            if message["type"] != "http.request" or not message.get("more_body"):
                return

    try:
        await asyncio.wait_for(read(), _BODY_SECONDS)
    except TimeoutError:
        return receive, (408, f"the body did not arrive within {_BODY_SECONDS:g} s")
    if size > _BODY_BYTES:
        return receive, (413, f"a body here is at most {_BODY_BYTES // 1024} KiB")
    pending = [{"type": "http.request", "body": b"".join(chunks), "more_body": False}]

    async def replay() -> Message:
        # The body once; then what the connection says (a disconnect).
        return pending.pop() if pending else await receive()

    return replay, None


async def _discard_body(receive: Receive) -> None:
    """Read and drop what a client sends of a body at once (see ``_DRAIN_BYTES``)."""
    taken = 0
    with contextlib.suppress(TimeoutError):
        while taken <= _DRAIN_BYTES:
            message = await asyncio.wait_for(receive(), _DRAIN_GAP)
            taken += len(message.get("body", b""))
            if message["type"] != "http.request" or not message.get("more_body"):
                return


def _announces_body(headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a request says a body follows: chunked, or a Content-Length other than 0."""
    for name, value in headers:
        if name == b"transfer-encoding" or (name == b"content-length" and value.lstrip(b"0")):
            return True
    return False


def _with_safety_headers(headers: Any) -> list[tuple[bytes, bytes]]:
    present = {name.lower() for name, _ in headers}
    extra = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]
    if b"content-security-policy" not in present:
        extra.append((b"content-security-policy", _DEFAULT_CSP.encode()))
    if b"cache-control" not in present:
        extra.append((b"cache-control", b"no-store"))
    return [*headers, *extra]
