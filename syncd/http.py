"""The operations surface: ``/metrics``, ``/healthz`` and ``/readyz`` over plain HTTP.

A stdlib ``ThreadingHTTPServer`` on a daemon thread, so a stuck scraper can
never keep the process alive or block a sync cycle.  ``/healthz`` (liveness)
only proves the process answers and touches nothing else; ``/readyz`` asks the
daemon's ``ready`` callback, whose verdict ``readiness`` computes.  Responses
carry counts, states and check names only: no configuration, URLs or secrets.
Requests are logged at debug level, since Prometheus scrapes every few seconds.

The port is open to whatever can reach it, so what a client can hold is
bounded: at most ``max_connections`` at once (more are closed at once), a
request head of at most 16 KiB (else 431), arriving within ``head_timeout``
seconds however slowly it drips, and one request per connection.
"""

from __future__ import annotations

import http.client
import io
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

import structlog

from syncd.metrics import render

__all__ = ["HttpServer", "Readiness", "readiness"]

_log = structlog.get_logger(__name__)

_JSON = "application/json"
MAX_CONNECTIONS = 32
MAX_HEAD_BYTES = 16 * 1024
HEAD_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class Readiness:
    """Whether syncd should receive traffic, and the verdict of each check by name."""

    ready: bool
    checks: dict[str, str]


def readiness(
    database_ok: bool,
    last_success: datetime | None,
    started_at: datetime,
    now: datetime,
    max_age: float,
) -> Readiness:
    """Ready when the database answers and a cycle succeeded within ``max_age`` seconds.

    Before the first successful cycle the process counts as ready for
    ``max_age`` seconds after ``started_at`` (startup grace), then not.
    """
    cycle_ok, cycle_check = _last_cycle_check(last_success, started_at, now, max_age)
    checks = {
        "database": "ok" if database_ok else "unreachable",
        "last_cycle": cycle_check,
    }
    return Readiness(ready=database_ok and cycle_ok, checks=checks)


def _last_cycle_check(
    last_success: datetime | None, started_at: datetime, now: datetime, max_age: float
) -> tuple[bool, str]:
    """The ``last_cycle`` verdict and its one-line explanation."""
    if last_success is None:
        uptime = (now - started_at).total_seconds()
        if uptime <= max_age:
            return True, f"starting: no successful cycle yet, {uptime:.0f} s since start"
        return False, f"missing: no successful cycle in {uptime:.0f} s since start"
    age = (now - last_success).total_seconds()
    if age <= max_age:
        return True, f"ok: last success {age:.0f} s ago"
    return False, f"stale: last success {age:.0f} s ago, more than {max_age:g} s"


class HttpServer:
    """Serves the operations endpoints on ``host:port`` from a daemon thread.

    ``port`` 0 picks a free port; ``.port`` tells which once started.  Use it
    as a context manager or call ``start()`` and ``stop()``.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        ready: Callable[[], Readiness],
        max_connections: int = MAX_CONNECTIONS,
        head_timeout: float = HEAD_TIMEOUT,
    ) -> None:
        self._host = host
        self._requested_port = port
        self._ready = ready
        self._max_connections = max_connections
        self._head_timeout = head_timeout
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._port: int | None = None

    @property
    def port(self) -> int:
        """The bound port; raises ``RuntimeError`` before the first ``start()``."""
        if self._port is None:
            raise RuntimeError("the HTTP server has not been started")
        return self._port

    def start(self) -> None:
        """Bind and start serving; raises ``OSError`` when the address is taken."""
        with self._lock:
            if self._server is not None:
                return
            server_class = _Server6 if ":" in self._host else _Server
            server = server_class((self._host, self._requested_port), _Handler)
            server.ready = self._ready
            server.slots = threading.BoundedSemaphore(self._max_connections)
            server.head_timeout = self._head_timeout
            self._port = int(server.server_address[1])
            thread = threading.Thread(
                target=server.serve_forever,
                kwargs={"poll_interval": 0.2},
                name=f"syncd-http-{self._port}",
                daemon=True,
            )
            thread.start()
            self._server, self._thread = server, thread
        _log.info("http_listening", host=self._host, port=self._port)

    def stop(self) -> None:
        """Stop serving and close the socket; calling it again does nothing."""
        with self._lock:
            server, thread = self._server, self._thread
            self._server, self._thread = None, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5.0)
        _log.info("http_stopped", port=self._port)

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


class _Server(ThreadingHTTPServer):
    """The stdlib server plus the readiness callback, with errors logged instead of printed."""

    daemon_threads = True
    ready: Callable[[], Readiness]
    slots: threading.BoundedSemaphore
    head_timeout: float

    def process_request(self, request: Any, client_address: Any) -> None:
        # A thread per connection, but only while a slot is free: a flood of
        # idle connections is closed at once instead of growing threads.
        if not self.slots.acquire(blocking=False):
            _log.debug("http_connection_refused", reason="too many connections")
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The stdlib prints a traceback to stderr; a client hanging up mid-answer
        # is routine, so it goes to the debug log instead.
        _log.debug("http_connection_error", exc_info=True)


class _Server6(_Server):
    """The same server on an IPv6 address (``::`` or ``::1``)."""

    address_family = socket.AF_INET6


class _Handler(BaseHTTPRequestHandler):
    """Routes GET and HEAD to the three endpoints; everything else gets JSON errors."""

    server: _Server
    # No Python version in the Server header; it says nothing useful to a scraper.
    server_version = "syncd"
    sys_version = ""
    # A client that goes silent frees its thread after this many seconds.
    timeout = 10.0

    def setup(self) -> None:
        super().setup()
        # The head is all we ever read (no route takes a body): bound its
        # size and the time it may take to arrive, not just each read.
        head = _HeadReader(self.connection, MAX_HEAD_BYTES, self.server.head_timeout)
        self.rfile = io.BufferedReader(head)

    def do_GET(self) -> None:
        self._route()

    def do_HEAD(self) -> None:
        self._route()

    def do_POST(self) -> None:
        self._method_not_allowed()

    def do_PUT(self) -> None:
        self._method_not_allowed()

    def do_DELETE(self) -> None:
        self._method_not_allowed()

    def do_PATCH(self) -> None:
        self._method_not_allowed()

    def do_OPTIONS(self) -> None:
        self._method_not_allowed()

    def _route(self) -> None:
        started = time.monotonic()
        path = urlsplit(self.path).path
        try:
            status, body, content_type = self._answer(path)
        except Exception:
            # Whatever broke, the client learns nothing about it but the status.
            _log.warning("http_handler_failed", path=path[:200], exc_info=True)
            status, body, content_type = _json(
                HTTPStatus.INTERNAL_SERVER_ERROR, {"status": "error"}
            )
        # Logged before answering, so the line is written before the client
        # (or a test) can move on and shut the server down.
        _log.debug(
            "http_request",
            method=self.command,
            path=path[:200],
            status=int(status),
            duration_ms=round((time.monotonic() - started) * 1000.0, 1),
        )
        self._send(status, body, content_type)

    def _answer(self, path: str) -> tuple[HTTPStatus, bytes, str]:
        if path == "/metrics":
            body, content_type = render()
            return HTTPStatus.OK, body, content_type
        if path == "/healthz":
            return _json(HTTPStatus.OK, {"status": "ok"})
        if path == "/readyz":
            return self._readyz()
        return _json(HTTPStatus.NOT_FOUND, {"status": "error", "error": "not found"})

    def _readyz(self) -> tuple[HTTPStatus, bytes, str]:
        try:
            verdict = self.server.ready()
        except Exception as exc:
            # A failing check is a verdict, not a crash; its message may name
            # hosts or users, so it goes to the log and not into the response.
            _log.warning("readiness_check_failed", error=f"{type(exc).__name__}: {exc}")
            verdict = Readiness(ready=False, checks={"readiness": f"error: {type(exc).__name__}"})
        status = HTTPStatus.OK if verdict.ready else HTTPStatus.SERVICE_UNAVAILABLE
        label = "ready" if verdict.ready else "unready"
        return _json(status, {"status": label, "checks": dict(verdict.checks)})

    def _method_not_allowed(self) -> None:
        status, body, content_type = _json(
            HTTPStatus.METHOD_NOT_ALLOWED, {"status": "error", "error": "method not allowed"}
        )
        self._send(status, body, content_type, extra={"Allow": "GET, HEAD"})

    def _send(
        self,
        status: HTTPStatus,
        body: bytes,
        content_type: str,
        extra: dict[str, str] | None = None,
    ) -> None:
        """Answer with ``body``, or with its headers alone for HEAD."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        if getattr(self, "command", None) != "HEAD":
            self.wfile.write(body)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Malformed requests get a JSON error too, echoing nothing the client sent."""
        self.close_connection = True
        status = HTTPStatus(code)
        payload = {"status": "error", "error": status.phrase.lower()}
        _, body, content_type = _json(status, payload)
        self._send(status, body, content_type)

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        # _route logs each answered request once, with its duration.
        pass

    def log_message(self, format: str, *args: Any) -> None:
        # Timeouts and malformed requests: routine noise on an open port.
        _log.debug("http_message", message=format % args)


class _HeadReader(io.RawIOBase):
    """The connection's bytes, at most ``limit`` of them, all within ``timeout`` seconds.

    Past the limit it raises ``LineTooLong``, which ``BaseHTTPRequestHandler``
    answers with 431; past the deadline, ``TimeoutError``, which drops the
    connection.
    """

    def __init__(self, connection: socket.socket, limit: int, timeout: float) -> None:
        super().__init__()
        self._connection = connection
        self._left = limit
        self._deadline = time.monotonic() + timeout

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._left <= 0:
            raise http.client.LineTooLong("request head")
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the request head took too long")
        self._connection.settimeout(remaining)
        view = memoryview(buffer)[: self._left]
        count = self._connection.recv_into(view)
        self._left -= count
        return count


def _json(status: HTTPStatus, payload: dict[str, Any]) -> tuple[HTTPStatus, bytes, str]:
    """A status and a compact JSON body."""
    return status, json.dumps(payload, separators=(",", ":")).encode(), _JSON
