"""A loopback HTTP server that sends a status line, then drips header bytes (tests).

It answers every connection with ``HTTP/1.1 200 OK`` and then ``X-Pad: aaa…``,
one byte per ``interval`` seconds, never ending the headers: a client whose
timeout bounds each read but not the whole attempt waits as long as the server
likes.  The server is bounded itself: after ``lifetime`` seconds it hangs up
and stops, so a test of a client without the bound fails instead of hanging::

    from tests.dripper import HeaderDripper

    with HeaderDripper(interval=0.2, lifetime=5.0) as server:
        ...  # send to server.url; expect a timeout well before 5 s
"""

from __future__ import annotations

import socket
import threading
import time
from typing import Self

from tests.loopback import LoopbackHandler, LoopbackServer

__all__ = ["HeaderDripper"]

_HEAD = b"HTTP/1.1 200 OK\r\nX-Pad: "


class HeaderDripper(LoopbackServer):
    """Drips to every connection on 127.0.0.1 until the lifetime, counted from the start, ends."""

    def __init__(self, *, interval: float = 0.2, lifetime: float = 5.0) -> None:
        super().__init__(_Dripping)
        self._interval = interval
        self._lifetime = lifetime
        self._end = 0.0
        self._count = threading.Lock()
        self.connections = 0

    def start(self) -> Self:
        self._end = time.monotonic() + self._lifetime
        return super().start()

    @property
    def url(self) -> str:
        """The URL to send to (any path gets the same answer)."""
        return f"http://127.0.0.1:{self.port}/api/query"

    def _drip(self, connection: socket.socket) -> None:
        with self._count:
            self.connections += 1
        try:
            connection.recv(65536)
            connection.sendall(_HEAD)
            while time.monotonic() < self._end:
                if self._stopping.wait(self._interval):
                    return
                connection.sendall(b"a")
        except OSError:
            return  # the client hung up, as it should


class _Dripping(LoopbackHandler):
    timeout = 1.0

    def handle(self) -> None:
        """Never parse a request: read what came, then drip header bytes (see the module)."""
        self.owner._drip(self.connection)
