"""The HTTP server of ``syncd run``: one ASGI app (``syncd.web``) on uvicorn, in a thread.

uvicorn runs its own event loop on a daemon thread, so a stuck client can
never keep the process alive or block a sync cycle; ``stop()`` asks it to
exit and waits a bounded time.

The port is open to whatever can reach it, so what a client can hold is
bounded here, as the hand-written server before it did: at most
``max_connections`` connections at once (more are closed at once, before a
byte is read), a request head of at most 16 KiB (else 431), arriving within
``head_timeout`` seconds of the connection or of the previous answer however
slowly it drips (else the connection is dropped), and an idle kept-alive
connection closed after 5 s.  No route takes a body, so a request announcing
one is answered (a GET with 413) and closed (``syncd.web``): a client never
holds a connection by sending a body slowly.  An answer the client stops
reading (no byte taken within ``head_timeout``) is dropped, unsent rest and
all.  A malformed request gets a JSON 400 that echoes nothing back.  Dropped
connections count in ``syncd_http_connections_dropped_total{reason}``; those
dropped for the deadline are logged (``http_connection_dropped``).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import socket
import struct
import termios
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self

import h11
import structlog
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from syncd import metrics
from syncd.logs import route_library_logs
from syncd.service.app import App
from syncd.web.asgi import build_app
from syncd.web.index import NextSync
from syncd.web.ops import Readiness

__all__ = ["HttpServer"]

_log = structlog.get_logger(__name__)

MAX_CONNECTIONS = 32
MAX_HEAD_BYTES = 16 * 1024
HEAD_TIMEOUT = 10.0
KEEP_ALIVE = 5.0
# How long start() waits for the socket to listen, and stop() for the loop to end.
_START_WAIT = 10.0
_STOP_WAIT = 5.0
# A TCP socket's bytes not yet taken by the peer (SIOCOUTQ, Linux); elsewhere
# asyncio's own buffer stands alone.
_OUTQ: int | None = getattr(termios, "TIOCOUTQ", None)
_ERROR_PHRASES = {400: "Bad Request", 431: "Request Header Fields Too Large"}


class HttpServer:
    """Serves ``syncd.web`` on ``host:port`` from a daemon thread.

    Without ``app`` only the operations endpoints answer (``/metrics``,
    ``/healthz``, ``/readyz``); with it, the read API, the feeds and the pages
    too; ``next_sync`` is when the scheduler of this process syncs next, for
    the pages' status strip.  ``port`` 0 picks a free port; ``.port`` tells which once started.
    Use it as a context manager or call ``start()`` and ``stop()``.
    """

    def __init__(
        self,
        host: str,
        port: int,
        *,
        ready: Callable[[], Readiness],
        app: App | None = None,
        next_sync: NextSync | None = None,
        max_connections: int = MAX_CONNECTIONS,
        head_timeout: float = HEAD_TIMEOUT,
    ) -> None:
        self._host = host
        self._requested_port = port
        self._asgi = build_app(ready, app, next_sync)
        # Its warnings ("Invalid HTTP request received.") are routine on an open port.
        route_library_logs("uvicorn")
        self._max_connections = max_connections
        self._head_timeout = head_timeout
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
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
            # Bound here, in the caller's thread, so a taken port raises here.
            sock = _bind(self._host, self._requested_port)
            self._port = int(sock.getsockname()[1])
            server = uvicorn.Server(self._config())
            thread = threading.Thread(
                target=_serve, args=(server, sock), name=f"syncd-http-{self._port}", daemon=True
            )
            thread.start()
            deadline = time.monotonic() + _START_WAIT
            while not server.started and thread.is_alive() and time.monotonic() < deadline:
                time.sleep(0.005)
            self._server, self._thread = server, thread
        _log.info("http_listening", host=self._host, port=self._port)

    def stop(self) -> None:
        """Stop serving and close the socket; calling it again does nothing."""
        with self._lock:
            server, thread = self._server, self._thread
            self._server, self._thread = None, None
        if server is None or thread is None:
            return
        server.should_exit = True
        thread.join(timeout=_STOP_WAIT)
        if thread.is_alive():
            # A request stuck in the database: drop the connections rather than wait.
            server.force_exit = True
            thread.join(timeout=_STOP_WAIT)
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

    def _config(self) -> uvicorn.Config:
        protocol = _bounded_protocol(self._max_connections, self._head_timeout)
        return uvicorn.Config(
            self._asgi,
            http=protocol,
            ws="none",
            lifespan="off",
            # syncd logs each request itself (syncd.web), through structlog.
            log_config=None,
            access_log=False,
            server_header=False,
            headers=[("server", "syncd")],
            # Over max_connections a connection is closed before its request
            # (BoundedProtocol), so uvicorn's own 503 (at this many connections or
            # running requests, the asking one included) only meets requests left
            # running by clients that went away.
            limit_concurrency=self._max_connections + 1,
            h11_max_incomplete_event_size=MAX_HEAD_BYTES,
            timeout_keep_alive=int(KEEP_ALIVE),
            timeout_graceful_shutdown=int(_STOP_WAIT),
        )


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (IPv6 when the host is an IPv6 literal)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _serve(server: uvicorn.Server, sock: socket.socket) -> None:
    """The thread's body: uvicorn's loop until ``should_exit``; signals stay the daemon's."""
    # uvicorn installs signal handlers only on the main thread; this is not it.
    try:
        asyncio.run(server.serve(sockets=[sock]))
    except Exception:
        _log.exception("http_server_failed")
    finally:
        sock.close()


class _BoundedProtocol(H11Protocol):
    """uvicorn's h11 protocol with syncd's bounds on connections, request heads and answers.

    One deadline per connection, set at connect, after each answer and
    whenever an answer waits on the client: when it passes, a client that
    owes a head, or has taken nothing of an answer since, is dropped.
    """

    max_connections = MAX_CONNECTIONS
    head_timeout = HEAD_TIMEOUT
    _deadline: asyncio.TimerHandle | None = None
    _head_bytes = 0
    # How much of an answer waited unsent when the deadline was set: unmoved
    # when it passes, the client has stopped reading.
    _unsent = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        # Over the limit: closed before a byte is read (uvicorn itself would
        # read the request and answer 503, holding the connection meanwhile).
        if len(self.connections) >= self.max_connections:
            self.transport = transport
            transport.close()
            # No log line: a flood of connections would be a flood of lines.
            metrics.observe_http_dropped("over_limit")
            return
        # Without it, an answer shorter than a segment waited for the client's
        # delayed ACK of its head: 40 to 50 ms for every small page or JSON answer.
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
        self._arm_head_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        # The next request on a kept-alive connection gets the same deadline.
        self._arm_head_deadline()

    def pause_writing(self) -> None:
        super().pause_writing()
        # An answer waits on the client: it must keep reading, deadline by deadline.
        self._arm()

    def data_received(self, data: bytes) -> None:
        # h11 bounds only a head still incomplete; one that arrives whole
        # in a single read would pass at any size, so count it here.
        if self.conn.their_state is h11.IDLE:
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES:
                _send_error(self, 431)
                return
        super().data_received(data)

    def send_400_response(self, msg: str) -> None:
        # A malformed request: JSON that echoes nothing of it.
        _send_error(self, 400)

    def _arm_head_deadline(self) -> None:
        self._head_bytes = 0
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._unsent = _unsent(self.transport)
        self._deadline = self.loop.call_later(self.head_timeout, self._deadline_passed)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _deadline_passed(self) -> None:
        self._deadline = None
        unsent = _unsent(self.transport)
        if unsent and unsent != self._unsent:
            self._arm()  # the client took some of the answer: another deadline
        elif unsent:
            self._drop("response_timeout")
        elif self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            # Still waiting for a request's head (h11 has not seen one).
            self._drop("head_timeout" if self._head_bytes else "idle_timeout")

    def _drop(self, reason: str) -> None:
        _log.info("http_connection_dropped", reason=reason)
        metrics.observe_http_dropped(reason)
        # Not close(): it would wait for the unsent answer to be taken.
        self.transport.abort()


def _bounded_protocol(max_connections: int, head_timeout: float) -> type[H11Protocol]:
    """``_BoundedProtocol`` with these bounds (uvicorn makes one per connection from a class)."""

    class Bounded(_BoundedProtocol):
        pass

    Bounded.max_connections = max_connections
    Bounded.head_timeout = head_timeout
    return Bounded


def _unsent(transport: asyncio.Transport) -> int:
    """Bytes of answers the client has not taken: asyncio's buffer and the kernel's queue.

    asyncio's buffer alone moves only when the kernel's has room for a third
    of itself, which a slow but steady reader can take longer than a deadline
    to make.
    """
    queued = 0
    sock = transport.get_extra_info("socket")
    if _OUTQ is not None and sock is not None:
        with contextlib.suppress(OSError):  # closed meanwhile: nothing is queued
            queued = struct.unpack("i", fcntl.ioctl(sock.fileno(), _OUTQ, bytes(4)))[0]
    return transport.get_write_buffer_size() + queued


def _send_error(protocol: H11Protocol, status: int) -> None:
    """A JSON error answer, written raw (h11 has given up on the connection), then close."""
    phrase = _ERROR_PHRASES[status]
    body = json.dumps({"status": "error", "error": phrase.lower()}, separators=(",", ":"))
    head = (
        f"HTTP/1.1 {status} {phrase}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\nserver: syncd\r\n\r\n"
    )
    if not protocol.transport.is_closing():
        protocol.transport.write((head + body).encode())
        protocol.transport.close()
