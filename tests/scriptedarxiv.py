"""A scripted arXiv on ``httpx.MockTransport``, a fake clock, and an API client of them.

The unit tests of the API client and of the OAI-PMH client (which sends
through the API client's connection) share these; the ``fake_time`` and
``fresh_pacer`` fixtures are ``tests.helpers``'.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from syncd.config import ArxivSettings
from syncd.sources.arxiv import ArxivClient

API_URL = "https://export.arxiv.test/api/query"

Handler = Callable[[httpx.Request], httpx.Response]


class FakeTime:
    """A monotonic clock that only moves when someone sleeps, and a UTC one moving with it."""

    EPOCH = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def wall(self) -> datetime:
        return self.EPOCH + timedelta(seconds=self.now)

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class Server:
    """A scripted arXiv: answers requests in turn and records them with the fake time."""

    def __init__(self, time: FakeTime, *answers: httpx.Response | Exception | Handler) -> None:
        self.time = time
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []
        self.times: list[float] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        self.times.append(self.time.now)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        if callable(answer):
            return answer(request)
        return answer

    @property
    def params(self) -> list[dict[str, str]]:
        return [dict(r.url.params) for r in self.requests]

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self)


def settings(**overrides: Any) -> ArxivSettings:
    values: dict[str, Any] = {
        "api_url": API_URL,
        "request_interval": 3.0,
        "page_size": 10,
        "max_retries": 3,
        "backoff_base": 2.0,
        "backoff_max": 300.0,
        "max_response_bytes": 64 * 1024,
    }
    values.update(overrides)
    return ArxivSettings(**values)


def make_client(server: Server, **overrides: Any) -> ArxivClient:
    return ArxivClient(
        settings(**overrides),
        transport=server.transport(),
        sleep=server.time.sleep,
        clock=server.time.clock,
        now=server.time.wall,
        rng=random.Random(7),
    )


def ok(body: bytes, **headers: str) -> httpx.Response:
    return httpx.Response(200, content=body, headers=headers)
