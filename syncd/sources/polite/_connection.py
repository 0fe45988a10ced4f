"""A polite connection to an upstream service: paced, retried while worth it, size-capped.

Polite: one connection, a descriptive User-Agent, and never two requests to
a host starting closer than the policy's ``request_interval`` apart, whatever
client instance or thread sends them (arXiv asks for 3 s; Crossref's polite
pool allows 10 a second).  Failures that may pass (timeouts, connection
errors, 429, 5xx) are retried with exponential backoff and full jitter,
honouring ``Retry-After``.  ``timeout`` bounds a whole attempt, from
connecting to the body's last byte, so a server dripping its headers or body
cannot hold a cycle past it.

With several replicas on PostgreSQL the pacer is the database's
(``syncd.storage.pacer``), so the interval holds for all of them together.

When a host throttles us (a 429, or a 503 with ``Retry-After``), it cools
down for every request of every replica: the cooldown
(``syncd.domain.throttle``) lives in the store the connection is given
(``syncd.storage.cooldowns`` in the database; by default this process's
memory), and is read before every request.  A throttled request is retried
once the cooldown ends, without a backoff of its own; a cooldown longer than
``backoff_max`` is not waited out in place: the request fails with
``Throttled``, saying when the next try is, and its caller resumes then.

Every body is read with a size cap and handed to the caller's parser, or fed
to the caller's ``BodyReader`` piece by piece as it arrives, so a large body
is never held whole (arXiv's feeds).  arXiv's API and OAI-PMH
(``syncd.sources.arxiv``), Crossref and OpenAlex (``syncd.sources.crossref``,
``syncd.sources.openalex``) share all of this through ``request``, each with
its own ``ConnectionPolicy``.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Protocol, Self, TypeVar, cast

import httpx
import structlog

from syncd import metrics
from syncd.errors import (
    PermanentUpstreamError,
    RequestRefused,
    RetryableUpstreamError,
    UpstreamError,
)
from syncd.httpclient import (
    RETRY_AFTER_STATUSES,
    BodyTooLarge,
    DeadlineTransport,
    attempt_deadline,
    capped_chunks,
    failure_reason,
    parse_retry_after,
    read_capped,
    response_time,
)
from syncd.sources.polite._pacing import (
    PROCESS_COOLDOWNS,
    CooldownStore,
    Pacer,
    Politeness,
    host_of,
)
from syncd.sources.polite._policy import ConnectionPolicy

__all__ = ["BodyReader", "PoliteConnection", "utc_now"]

_log = structlog.get_logger(__name__)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class BodyReader(Protocol[T_co]):
    """A parser fed a 200's body piece by piece as it arrives, instead of the body whole."""

    def feed(self, chunk: bytes) -> None:
        """Parse the next piece of the body; raise the service's error for a bad one."""

    def close(self) -> T_co:
        """The body's meaning, once every piece was fed; raise the service's error if none."""


# Transport failures that another try may cure.  The rest of httpx's errors
# (unsupported scheme, a request we built wrongly, an undecodable body) will not.
_RETRYABLE_ERRORS: tuple[type[httpx.HTTPError], ...] = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
    httpx.ProxyError,
)


def utc_now() -> datetime:
    """Now, in UTC: when a connection dates cooldowns unless told otherwise."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class _Answer:
    """A response read under the size cap; ``body`` is ``None`` when it exceeded the cap.

    A body fed to a ``BodyReader`` (``fed``) is not kept: ``read`` is what
    the reader made of it, or ``refused`` the error it raised.
    """

    status: int
    reason: str
    headers: httpx.Headers
    body: bytes | None
    fed: bool = False
    read: Any = None
    refused: UpstreamError | None = None


class PoliteConnection:
    """One connection to a service, shared by every request; use it as a context manager.

    ``requests``, ``retries`` and ``backoff_seconds`` count this instance's
    requests sent, retries made and seconds slept in backoff (or cooldown).
    ``pacer`` spaces the service's requests (``process_pacer``, or a
    ``syncd.storage.pacer.SharedPacer``); ``cooldowns`` keeps its hosts'
    cooldowns, by default this process's own.  ``now`` (UTC) dates cooldowns.
    """

    def __init__(
        self,
        policy: ConnectionPolicy,
        *,
        pacer: Pacer,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = utc_now,
        rng: random.Random | None = None,
        cooldowns: CooldownStore | None = None,
    ) -> None:
        self._policy = policy
        self._politeness = Politeness(
            policy,
            pacer,
            cooldowns if cooldowns is not None else PROCESS_COOLDOWNS,
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
        self._http = httpx.Client(
            transport=transport,
            limits=limits,
            timeout=httpx.Timeout(policy.timeout),
            follow_redirects=False,
            headers={"User-Agent": policy.user_agent, "Accept": policy.accept},
        )
        self.requests = 0
        self.retries = 0
        self.backoff_seconds = 0.0

    @property
    def policy(self) -> ConnectionPolicy:
        """How politely this connection asks its service."""
        return self._policy

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
        self._politeness.cooldown_wait(host_of(url), None, None)

    def request(
        self,
        url: str,
        params: dict[str, str | int],
        context: dict[str, Any],
        parse: Callable[[bytes], T],
        *,
        setting: str,
        reader: Callable[[], BodyReader[T]] | None = None,
    ) -> T:
        """One logical request to the service: paced, retried while worth it, parsed.

        ``parse`` reads a 200's body, and a 4xx's to find the service's own
        error (it raises it); every request shares the pacing, deadlines,
        size cap and retries this way.  With ``reader``, a 200's body is fed to
        a fresh reader as it arrives instead, never held whole.  ``setting`` is
        the configuration key that holds ``url``, which a redirect's error names.
        """
        policy = self._policy
        host = host_of(url)
        failure = "no attempt made"
        cause: BaseException | None = None
        retry_after: float | None = None
        throttled = False
        for attempt in range(policy.max_retries + 1):
            if attempt:
                delay = self._politeness.retry_wait(
                    attempt, host, failure, retry_after, throttled=throttled
                )
                _log.warning(
                    f"{policy.log_name}_retry",
                    **context,
                    attempt=attempt + 1,
                    reason=failure,
                    retry_delay_in_seconds=round(delay, 3),
                )
                self.retries += 1
                self.backoff_seconds += delay
                if policy.metered:
                    metrics.observe_retry(delay)
                self._sleep(delay)
            sent_at = self._politeness.take_turn(host, failure if throttled else None, retry_after)
            self.requests += 1
            started = self._clock()
            try:
                answer = self._send(url, params, reader)
            except httpx.HTTPError as exc:
                reason = failure_reason(exc)
                self._log_attempt(context, attempt, None, started, error=reason)
                if not isinstance(exc, _RETRYABLE_ERRORS):
                    raise PermanentUpstreamError(
                        f"the request to {policy.service} failed: {reason}"
                    ) from exc
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
            return _accepted(answer, parse, setting, policy)
        if throttled:
            raise self._politeness.throttled(host, failure, retry_after) from cause
        raise RetryableUpstreamError(
            f"{policy.service} did not answer usefully in {policy.max_retries + 1} attempts;"
            f" last failure: {failure}"
        ) from cause

    def _send(
        self,
        url: str,
        params: dict[str, str | int],
        reader: Callable[[], BodyReader[T]] | None,
    ) -> _Answer:
        """Send one GET and read the body, streamed and capped, when it may be of use."""
        # httpx's timeout bounds each read; a server dripping its headers or
        # body a byte at a time could stretch one attempt forever, and later
        # scheduled cycles would be skipped as still running.  The deadline
        # bounds the whole attempt (on the default transport; the body read
        # checks it on any transport).
        deadline = time.monotonic() + self._policy.timeout
        with (
            attempt_deadline(deadline),
            self._http.stream("GET", url, params=params) as response,
        ):
            status = response.status_code
            wanted = status == 200 or (400 <= status < 500 and status != 429)
            answer = _Answer(status, response.reason_phrase, response.headers, b"")
            if status == 200 and reader is not None:
                return self._fed(answer, response, reader(), deadline)
            if wanted:
                body = read_capped(response, self._policy.max_response_bytes, deadline)
                return replace(answer, body=body)
            return answer

    def _fed(
        self, answer: _Answer, response: httpx.Response, reader: BodyReader[T], deadline: float
    ) -> _Answer:
        """``answer`` with its body fed to ``reader`` as it arrives, under the cap and deadline.

        What the reader refuses is kept for ``_accepted`` to raise, after the
        attempt is logged and paced as any answer is; transport errors
        propagate, to be retried with a fresh reader.
        """
        try:
            for chunk in capped_chunks(response, self._policy.max_response_bytes, deadline):
                reader.feed(chunk)
            return replace(answer, fed=True, read=reader.close())
        except BodyTooLarge:
            return replace(answer, body=None)
        except UpstreamError as exc:
            return replace(answer, refused=exc)

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
        _log.info(f"{self._policy.log_name}_request", **fields)
        if self._policy.metered:
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


def _accepted(
    answer: _Answer, parse: Callable[[bytes], T], setting: str, policy: ConnectionPolicy
) -> T:
    """Turn a final (non-retryable) answer into a page or the right permanent error."""
    status = answer.status
    if status == 200:
        if answer.body is None:
            raise policy.garbled(
                f"the response exceeds {policy.config_section}.max_response_bytes"
                f" ({policy.max_response_bytes} bytes); not reading it"
            )
        if answer.refused is not None:
            raise answer.refused
        if answer.fed:
            return cast("T", answer.read)
        return parse(answer.body)
    if 300 <= status < 400:
        location = answer.headers.get("location", "(no Location)")
        raise PermanentUpstreamError(
            f"{policy.service} answered HTTP {status} redirecting to {location[:200]};"
            f" point {setting} at the final address"
        )
    if 400 <= status < 500 and answer.body:
        # Not the service's error answer: report the status below.
        with contextlib.suppress(policy.garbled):
            parse(answer.body)
    raise RequestRefused(
        f"{policy.service} answered HTTP {status} {answer.reason}".rstrip(), status
    )
