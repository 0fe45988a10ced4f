"""A plain HTTP endpoint on loopback that records every request: what Apprise services post to.

Unlike ``tests.receiver`` it verifies nothing (Apprise signs nothing); it
answers every request with one status, 200 unless told otherwise::

    with Recorder() as recorder:
        recorder.status = 500
        ...  # notify json://127.0.0.1:{recorder.port}/path
        assert recorder.wait_for(1, timeout=5)
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl

from tests.loopback import LoopbackHandler, LoopbackServer

__all__ = ["Recorded", "Recorder"]


@dataclass(frozen=True, slots=True)
class Recorded:
    """One request as the recorder saw it, and the status it answered."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    status: int

    def fields(self) -> dict[str, Any]:
        """The body as a JSON object, or as form fields when it is not JSON."""
        try:
            value = json.loads(self.body)
        except ValueError:
            return dict(parse_qsl(self.body.decode()))
        return value if isinstance(value, dict) else {}


class Recorder(LoopbackServer):
    """A threaded HTTP server on 127.0.0.1 recording requests; use it as a context manager."""

    def __init__(self) -> None:
        super().__init__(_Handler)
        self.status = 200
        self._received: list[Recorded] = []
        self._changed = threading.Condition()

    @property
    def received(self) -> list[Recorded]:
        with self._changed:
            return list(self._received)

    def wait_for(self, count: int, timeout: float) -> bool:
        """Whether ``count`` requests have arrived within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            return self._changed.wait_for(
                lambda: len(self._received) >= count, max(0.0, deadline - time.monotonic())
            )

    def record(self, handler: BaseHTTPRequestHandler) -> int:
        length = int(handler.headers.get("content-length") or 0)
        body = handler.rfile.read(length)
        with self._changed:
            status = self.status
            self._received.append(
                Recorded(handler.command, handler.path, dict(handler.headers), body, status)
            )
            self._changed.notify_all()
        return status


class _Handler(LoopbackHandler):
    def _answer(self) -> None:
        status = self.owner.record(self)
        body = b"{}" if status < 400 else b'{"error": "recorder told to fail"}'
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_PUT = _answer
