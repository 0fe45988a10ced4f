"""What every loopback test server shares: a port on 127.0.0.1, a serving thread, a clean stop.

A server subclasses ``LoopbackServer`` and passes it its request handler, a
``LoopbackHandler`` subclass that reaches the server object as
``self.owner``.  ``start`` binds a free port the first time and the same one
afterwards (a receiver that goes down comes back where senders look for it);
``stop`` cuts open connections and waits for every handler thread, so nothing
of one test's server outlives it.  Used as a context manager, a server that
met an unexpected error while serving fails the test on the way out.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

__all__ = ["LoopbackHandler", "LoopbackServer"]


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1; use it as a context manager."""

    def __init__(self, handler: type[LoopbackHandler]) -> None:
        self.handler = handler
        self.errors: list[BaseException] = []
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        self._port = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> Self:
        """Bind a port (a free one the first time, the same one afterwards) and serve."""
        name = type(self).__name__
        if self._server is not None:
            raise RuntimeError(f"{name} is already running")
        self._stopping.clear()
        self._server = _Server(self, self._port)
        self._port = self._server.server_port
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},
            name=f"{name}:{self._port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, cut open connections and wait for every handler thread."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        self._stopping.set()
        server.shutdown()
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            shutdown_quietly(connection)
        server.server_close()  # joins the handler threads (block_on_close)
        thread.join()
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
        if exc is None and self.errors:
            raise RuntimeError(f"{type(self).__name__} failed while serving: {self.errors!r}")

    @property
    def port(self) -> int:
        """The port, fixed once the server first started."""
        if not self._port:
            raise RuntimeError(f"{type(self).__name__} has not been started")
        return self._port

    def _track(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.add(connection)
            if self._stopping.is_set():
                shutdown_quietly(connection)

    def _untrack(self, connection: socket.socket) -> None:
        with self._connections_lock:
            self._connections.discard(connection)


class _Server(ThreadingHTTPServer):
    daemon_threads = False
    block_on_close = True

    def __init__(self, owner: LoopbackServer, port: int) -> None:
        self.owner = owner
        super().__init__(("127.0.0.1", port), owner.handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name, which can stall without DNS.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name, self.server_port = str(host), int(port)

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if error is not None and not isinstance(error, OSError):
            self.owner.errors.append(error)


class LoopbackHandler(BaseHTTPRequestHandler):
    """Tracks its connection with the server (so ``stop`` can cut it) and logs nothing."""

    protocol_version = "HTTP/1.1"
    sys_version = ""
    timeout = 10.0  # an idle keep-alive connection is closed after this long
    disable_nagle_algorithm = True  # headers and body go out in separate writes
    server: _Server

    @property
    def owner(self) -> Any:
        """The ``LoopbackServer`` this handler serves for."""
        return self.server.owner

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.owner._untrack(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        """Keep the test output quiet."""


def shutdown_quietly(connection: socket.socket) -> None:
    """Shut both directions of ``connection``; it may be closed already."""
    with contextlib.suppress(OSError):
        connection.shutdown(socket.SHUT_RDWR)
