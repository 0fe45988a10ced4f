"""A polite connection to arXiv's services: paced, retried while worth it, size-capped.

Polite: one connection, a descriptive User-Agent, and never two requests of
this process starting closer than ``request_interval`` seconds apart, whatever
client instance or thread sends them (arXiv asks for 3 s).  Failures that may
pass (timeouts, connection errors, 429, 5xx) are retried with exponential
backoff and full jitter, honouring ``Retry-After``.  ``timeout`` bounds a whole
attempt, from connecting to the body's last byte, so a server dripping its
headers or body cannot hold a cycle past it.

With several replicas on PostgreSQL the pacer is the database's
(``syncd.storage.pacer``), so the interval holds for all of them together.

When arXiv throttles us (a 429, or a 503 with ``Retry-After``), the host
that answered cools down for every request of every replica: the cooldown
(``syncd.domain.throttle``) lives in the store the client is given
(``syncd.storage.cooldowns`` in the database; by default this process's
memory), and is read before every request.  A throttled request is retried
once the cooldown ends, without a backoff of its own; a cooldown longer than
``backoff_max`` is not waited out in place: the request fails with
``Throttled``, saying when the next try is, and its caller resumes then.

Every body is read with a size cap and handed to the caller's parser; the
API's queries (``syncd.sources.arxiv._client``) and OAI-PMH's pages
(``syncd.sources.oai``) share all of this through ``request``.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx
import structlog

from syncd import metrics
from syncd.config import ArxivSettings
from syncd.errors import (
    FeedError,
    PermanentUpstreamError,
    RequestRefused,
    RetryableUpstreamError,
)
from syncd.httpclient import (
    RETRY_AFTER_STATUSES,
    DeadlineTransport,
    attempt_deadline,
    failure_reason,
    parse_retry_after,
    read_capped,
    response_time,
)
from syncd.sources.arxiv._pacing import (
    _COOLDOWNS,
    _PACER,
    CooldownStore,
    Pacer,
    Politeness,
    arxiv_host,
)

__all__ = ["ArxivConnection"]

_log = structlog.get_logger(__name__)

T = TypeVar("T")


# Transport failures that another try may cure.  The rest of httpx's errors
# (unsupported scheme, a request we built wrongly, an undecodable body) will not.
_RETRYABLE_ERRORS: tuple[type[httpx.HTTPError], ...] = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
    httpx.ProxyError,
)


def _utc_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class _Answer:
    """A response read under the size cap; ``body`` is ``None`` when it exceeded the cap."""

    status: int
    reason: str
    headers: httpx.Headers
    body: bytes | None


class ArxivConnection:
    """One connection to arXiv, shared by every request; use it as a context manager.

    ``requests``, ``retries`` and ``backoff_seconds`` count this instance's
    requests sent, retries made and seconds slept in backoff (or cooldown).
    ``pacer`` and ``cooldowns`` are ``syncd.sources.arxiv._pacing``'s: by
    default this process's own.  ``now`` (UTC) dates cooldowns.
    """

    def __init__(
        self,
        settings: ArxivSettings,
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = _utc_now,
        rng: random.Random | None = None,
        pacer: Pacer | None = None,
        cooldowns: CooldownStore | None = None,
    ) -> None:
        self._settings = settings
        self._politeness = Politeness(
            settings,
            pacer if pacer is not None else _PACER,
            cooldowns if cooldowns is not None else _COOLDOWNS,
            sleep=sleep,
            clock=clock,
            now=now,
            rng=rng if rng is not None else random.Random(),
        )
        self._sleep = sleep
        self._clock = clock
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        if transport is None:
            transport = DeadlineTransport(limits)
        user_agent = settings.user_agent
        if settings.contact:
            user_agent = f"{user_agent} mailto:{settings.contact}"
        self._http = httpx.Client(
            transport=transport,
            limits=limits,
            timeout=httpx.Timeout(settings.timeout),
            follow_redirects=False,
            headers={"User-Agent": user_agent, "Accept": "application/atom+xml"},
        )
        self.requests = 0
        self.retries = 0
        self.backoff_seconds = 0.0

    @property
    def settings(self) -> ArxivSettings:
        """The ``[arxiv]`` settings this client follows."""
        return self._settings

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self._http.close()

    def check_throttle(self, url: str) -> None:
        """``Throttled`` when ``url``'s host cools down longer than a request waits: work
        about to start (a batch of cycles, a harvest) is then left for later."""
        self._politeness.cooldown_wait(arxiv_host(url), None, None)

    def request(
        self,
        url: str,
        params: dict[str, str | int],
        context: dict[str, Any],
        parse: Callable[[bytes], T],
        *,
        setting: str = "arxiv.api_url",
    ) -> T:
        """One logical request to any arXiv service: paced, retried while worth it, parsed.

        ``parse`` reads a 200's body, and a 4xx's to find the service's own
        error (it raises it); the API's feeds and OAI-PMH's pages share the
        pacing, deadlines, size cap and retries this way.  ``setting`` is the
        configuration key that holds ``url``, which a redirect's error names.
        """
        settings = self._settings
        host = arxiv_host(url)
        failure = "no attempt made"
        cause: BaseException | None = None
        retry_after: float | None = None
        throttled = False
        for attempt in range(settings.max_retries + 1):
            if attempt:
                delay = self._politeness.retry_wait(
                    attempt, host, failure, retry_after, throttled=throttled
                )
                _log.warning(
                    "arxiv_retry",
                    **context,
                    attempt=attempt + 1,
                    reason=failure,
                    retry_delay_in_seconds=round(delay, 3),
                )
                self.retries += 1
                self.backoff_seconds += delay
                metrics.observe_retry(delay)
                self._sleep(delay)
            sent_at = self._politeness.take_turn(host, failure if throttled else None, retry_after)
            self.requests += 1
            started = self._clock()
            try:
                answer = self._send(url, params)
            except httpx.HTTPError as exc:
                reason = failure_reason(exc)
                self._log_attempt(context, attempt, None, started, error=reason)
                if not isinstance(exc, _RETRYABLE_ERRORS):
                    raise PermanentUpstreamError(f"the request to arXiv failed: {reason}") from exc
                failure, cause, retry_after, throttled = reason, exc, None, False
                continue
            self._log_attempt(context, attempt, answer.status, started)
            status = answer.status
            if status == 429 or status >= 500:
                failure, retry_after = _server_failure(answer)
                throttled = status == 429 or retry_after is not None
                cause = None
                if throttled:
                    self._politeness.note_throttle(host, sent_at, retry_after, status)
                continue
            self._politeness.note_answer(host, sent_at)
            return _accepted(answer, parse, setting, self._settings.max_response_bytes)
        if throttled:
            raise self._politeness.throttled(host, failure, retry_after) from cause
        raise RetryableUpstreamError(
            f"arXiv did not answer usefully in {settings.max_retries + 1} attempts;"
            f" last failure: {failure}"
        ) from cause

    def _send(self, url: str, params: dict[str, str | int]) -> _Answer:
        """Send one GET and read the body, streamed and capped, when it may be of use."""
        # httpx's timeout bounds each read; a server dripping its headers or
        # body a byte at a time could stretch one attempt forever, and later
        # scheduled cycles would be skipped as still running.  The deadline
        # bounds the whole attempt (on the default transport; the body read
        # checks it on any transport).
        deadline = time.monotonic() + self._settings.timeout
        with (
            attempt_deadline(deadline),
            self._http.stream("GET", url, params=params) as response,
        ):
            status = response.status_code
            wanted = status == 200 or (400 <= status < 500 and status != 429)
            body: bytes | None = b""
            if wanted:
                body = read_capped(response, self._settings.max_response_bytes, deadline)
            return _Answer(status, response.reason_phrase, response.headers, body)

    def _log_attempt(
        self,
        context: dict[str, Any],
        attempt: int,
        status: int | None,
        started: float,
        *,
        error: str | None = None,
    ) -> None:
        fields: dict[str, Any] = {
            **context,
            "status": status,
            "attempt": attempt + 1,
            "duration_ms": round((self._clock() - started) * 1000.0, 1),
        }
        if error is not None:
            fields["error"] = error
        _log.info("arxiv_request", **fields)
        metrics.observe_upstream(status)


def _server_failure(answer: _Answer) -> tuple[str, float | None]:
    """A 429's or 5xx's failure in words, and its ``Retry-After`` where the status has one."""
    retry_after = None
    if answer.status in RETRY_AFTER_STATUSES:
        retry_after = parse_retry_after(
            answer.headers.get("retry-after"), response_time(answer.headers)
        )
    failure = f"HTTP {answer.status} {answer.reason}".rstrip()
    if retry_after is not None:
        failure += f" (Retry-After {retry_after:g} s)"
    return failure, retry_after


def _accepted(answer: _Answer, parse: Callable[[bytes], T], setting: str, max_bytes: int) -> T:
    """Turn a final (non-retryable) answer into a page or the right permanent error."""
    status = answer.status
    if status == 200:
        if answer.body is None:
            raise FeedError(
                f"the response exceeds arxiv.max_response_bytes ({max_bytes} bytes); not reading it"
            )
        return parse(answer.body)
    if 300 <= status < 400:
        location = answer.headers.get("location", "(no Location)")
        raise PermanentUpstreamError(
            f"arXiv answered HTTP {status} redirecting to {location[:200]};"
            f" point {setting} at the final address"
        )
    if 400 <= status < 500 and answer.body:
        # Not the service's error answer: report the status below.
        with contextlib.suppress(FeedError):
            parse(answer.body)
    raise RequestRefused(f"arXiv answered HTTP {status} {answer.reason}".rstrip(), status)
