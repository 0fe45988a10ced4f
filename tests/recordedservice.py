"""What the fakes of Crossref and OpenAlex share: a loopback server answering GETs from recorded
answers, logging every request, and failing on demand.

A fake subclasses ``RecordedService`` and implements ``answer(path, query)``;
every request is logged (``requests``: path, query, User-Agent, status) so a
test can count requests by kind and see what was sent.  ``fail(503)`` makes
every request answer that status (``fail(None)`` heals it); ``stop()`` (from
``LoopbackServer``) refuses connections until ``start()``, on the same port.
"""

from __future__ import annotations

import json
import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.loopback import LoopbackHandler, LoopbackServer

__all__ = ["FIXTURES", "Answer", "LoggedRequest", "RecordedService", "recorded", "recorded_text"]

FIXTURES = Path(__file__).parent / "fixtures"


def recorded(name: str) -> Any:
    """A recorded JSON answer from ``tests/fixtures/`` (``crossref/work-updated-by.json``)."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def recorded_text(name: str) -> str:
    """A recorded answer that is not JSON (Crossref's 404 text, OpenAlex's 404 page)."""
    return (FIXTURES / name).read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True)
class Answer:
    """What a fake answers one request."""

    status: int
    content_type: str
    body: bytes

    @classmethod
    def json(cls, value: Any, status: int = 200) -> Answer:
        return cls(status, "application/json", json.dumps(value).encode())


@dataclass(frozen=True, slots=True)
class LoggedRequest:
    """One request a fake received, and the status it answered."""

    path: str
    query: dict[str, list[str]]
    user_agent: str | None
    status: int
    kind: str

    def param(self, name: str) -> str | None:
        """The query parameter's (first) value, or ``None``."""
        values = self.query.get(name)
        return values[0] if values else None


class RecordedService(LoopbackServer, ABC):
    """A loopback server whose subclass answers each GET from recorded answers."""

    def __init__(self) -> None:
        super().__init__(_Handler)
        self.lock = threading.Lock()
        self.requests: list[LoggedRequest] = []
        self._failure: int | None = None

    @property
    def url(self) -> str:
        """The base URL to configure the client with."""
        return f"http://127.0.0.1:{self.port}"

    def fail(self, status: int | None = 503) -> None:
        """Answer every request with ``status`` (a 500 or 503) from now on; ``None`` heals."""
        with self.lock:
            self._failure = status

    def requests_of(self, kind: str) -> list[LoggedRequest]:
        """The requests of one kind (as the fake's ``kind_of`` names them)."""
        with self.lock:
            return [request for request in self.requests if request.kind == kind]

    @abstractmethod
    def kind_of(self, path: str, query: dict[str, list[str]]) -> str:
        """What a request asks for, in one word; subclasses name their kinds."""

    @abstractmethod
    def answer(self, path: str, query: dict[str, list[str]]) -> Answer:
        """The answer to a GET of ``path`` with ``query``; called under ``lock``."""

    def respond(self, target: str, user_agent: str | None) -> Answer:
        """Log the request and answer it, or fail it as told."""
        parts = urlsplit(target)
        query = parse_qs(parts.query, keep_blank_values=True)
        with self.lock:
            if self._failure is not None:
                answer = Answer(self._failure, "text/plain", b"Service Unavailable")
            else:
                answer = self.answer(parts.path, query)
            kind = self.kind_of(parts.path, query)
            self.requests.append(LoggedRequest(parts.path, query, user_agent, answer.status, kind))
        return answer


class _Handler(LoopbackHandler):
    def do_GET(self) -> None:
        answer = self.owner.respond(self.path, self.headers.get("User-Agent"))
        self.send_response(answer.status)
        self.send_header("Content-Type", answer.content_type)
        self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        self.wfile.write(answer.body)
