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
from types import TracebackType
from typing import Self

__all__ = ["HeaderDripper"]

_HEAD = b"HTTP/1.1 200 OK\r\nX-Pad: "


class HeaderDripper:
    """Serves connections one at a time on 127.0.0.1, each dripped until the lifetime ends."""

    def __init__(self, *, interval: float = 0.2, lifetime: float = 5.0) -> None:
        self._interval = interval
        self._lifetime = lifetime
        self._stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self._thread = threading.Thread(target=self._serve, name="header-dripper", daemon=True)
        self.connections = 0

    @property
    def url(self) -> str:
        """The URL to send to (any path gets the same answer)."""
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/api/query"

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(5.0)
        self._listener.close()

    def _serve(self) -> None:
        end = time.monotonic() + self._lifetime
        while not self._stop.is_set() and time.monotonic() < end:
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            with connection:
                self._drip(connection, end)

    def _drip(self, connection: socket.socket, end: float) -> None:
        connection.settimeout(1.0)
        try:
            connection.recv(65536)
            connection.sendall(_HEAD)
            while time.monotonic() < end:
                if self._stop.wait(self._interval):
                    return
                connection.sendall(b"a")
        except OSError:
            return  # the client hung up, as it should
