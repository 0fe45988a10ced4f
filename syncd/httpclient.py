"""HTTP plumbing shared by syncd's two clients: the arXiv client and the webhook sender.

Both send one request per attempt and must not let the other side decide how
long that attempt lasts.  httpx's timeouts bound each read and write, not the
attempt: a server that drips its status line, headers or body a byte at a time
held an attempt for as long as it liked (100 s with a 3 s timeout), and with it
a sync cycle or the dispatcher's batch.  So an attempt runs inside
``attempt_deadline`` on a ``DeadlineTransport``, whose every connect, TLS
handshake, read and write ends by that deadline.

Also here, so both clients read answers alike: the body, read under a size
cap by the same deadline; which statuses carry a ``Retry-After`` worth
honouring and how to read it; the server's ``Date``; and how a failed attempt
is described.  A header is the remote's to write, so reading one never
raises: a value unreadable or out of range is ignored or capped (a wait at a
day).  Nothing here knows about configuration, metrics, the store or webhooks.
"""

from __future__ import annotations

import email.utils
import ssl
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, Literal, overload

import httpcore
import httpx

__all__ = [
    "MAX_RETRY_AFTER",
    "RETRY_AFTER_STATUSES",
    "BodyTooLarge",
    "DeadlineBackend",
    "DeadlineTransport",
    "attempt_deadline",
    "capped_chunks",
    "failure_reason",
    "parse_http_date",
    "parse_retry_after",
    "read_capped",
    "response_time",
    "retry_seconds",
]

# Statuses whose Retry-After is honoured: RFC 9110 §10.2.3 names 503 (and 3xx,
# which neither client follows); RFC 6585 §4 adds 429.
RETRY_AFTER_STATUSES: frozenset[int] = frozenset({429, 503})
# The longest wait a remote may ask for: a day, longer than either client waits
# (the arXiv client stops at backoff_max, the webhook schedule at a day).  A
# longer wait asked for is this one, so no wait is too big for a float, a
# timedelta or a JSON log line.
MAX_RETRY_AFTER = 86400.0

# The deadline (time.monotonic()) of the attempt this thread is sending, read
# by every stream DeadlineBackend opens.  Thread-local because the clients are
# synchronous: the thread that sends an attempt is the one that reads it.
_attempt = threading.local()


@contextmanager
def attempt_deadline(deadline: float) -> Iterator[None]:
    """Bound every network operation of this thread by ``deadline`` (``time.monotonic()``).

    Only connections opened by a ``DeadlineBackend`` obey it; a pooled one
    obeys the deadline of whichever attempt uses it.
    """
    previous: float | None = getattr(_attempt, "deadline", None)
    _attempt.deadline = deadline
    try:
        yield
    finally:
        _attempt.deadline = previous


def _within_deadline(
    timeout: float | None, expired: type[httpcore.TimeoutException]
) -> float | None:
    """``timeout``, shortened to what is left of the current attempt; raise ``expired`` if none."""
    deadline: float | None = getattr(_attempt, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise expired("the attempt's timeout ran out")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose reads and writes all end by the current attempt's deadline."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _within_deadline(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _within_deadline(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls = self._stream.start_tls(
            ssl_context, server_hostname, _within_deadline(timeout, httpcore.ConnectTimeout)
        )
        return _DeadlineStream(tls)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class DeadlineBackend(httpcore.SyncBackend):
    """httpcore's socket backend, opening connections that end by the attempt's deadline.

    Subclasses that choose where to connect (the webhook sender's destination
    check) override ``connect_tcp`` and call this one for each address.
    """

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        stream = super().connect_tcp(
            host,
            port,
            _within_deadline(timeout, httpcore.ConnectTimeout),
            local_address,
            socket_options,
        )
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        stream = super().connect_unix_socket(
            path, _within_deadline(timeout, httpcore.ConnectTimeout), socket_options
        )
        return _DeadlineStream(stream)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's transport (no retries), connecting through a ``DeadlineBackend``."""

    def __init__(self, limits: httpx.Limits, backend: DeadlineBackend | None = None) -> None:
        # httpx's default SSL context, built once for both pools: loading the
        # CA bundle takes tens of milliseconds, and the arXiv client builds a
        # transport every cycle.
        ssl_context = httpx.create_ssl_context()
        super().__init__(verify=ssl_context, limits=limits, retries=0)
        # httpx takes no network backend, so its pool is replaced by one built
        # the same way (that SSL context, these limits) with ours; the
        # clients' tests with dripping servers prove it is in the path.
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            retries=0,
            network_backend=backend if backend is not None else DeadlineBackend(),
        )


# -- reading answers ----------------------------------------------------------------


@overload
def read_capped(
    response: httpx.Response,
    limit: int,
    deadline: float,
    *,
    raw: bool = False,
    partial: Literal[True],
) -> bytes: ...


@overload
def read_capped(
    response: httpx.Response,
    limit: int,
    deadline: float,
    *,
    raw: bool = False,
    partial: Literal[False] = False,
) -> bytes | None: ...


def read_capped(
    response: httpx.Response,
    limit: int,
    deadline: float,
    *,
    raw: bool = False,
    partial: bool = False,
) -> bytes | None:
    """The body of a streamed ``response``, at most ``limit`` bytes, read by ``deadline``.

    Whole (the default, for a body that is used): ``None`` as soon as the body,
    declared or read, exceeds ``limit``; ``httpx.ReadTimeout`` when it is not
    all there by the deadline.  ``partial`` (for a body that only explains a
    status): its first ``limit`` bytes, or whatever arrived by the deadline or
    before the connection broke; it never raises.  ``raw``: the bytes as sent,
    with no Content-Encoding undone.  ``deadline`` is on ``time.monotonic()``.
    """
    if not partial:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return None
    chunks = response.iter_raw() if raw else response.iter_bytes()
    if partial:
        return _read_prefix(chunks, limit, deadline)
    return _read_whole(chunks, limit, deadline)


def _read_whole(chunks: Iterator[bytes], limit: int, deadline: float) -> bytes | None:
    """All of ``chunks``, or ``None`` past ``limit``; ``httpx.ReadTimeout`` past ``deadline``."""
    try:
        return b"".join(_capped(chunks, limit, deadline))
    except BodyTooLarge:
        return None


class BodyTooLarge(Exception):
    """A body, declared or read, is longer than the cap it is read under."""


def capped_chunks(response: httpx.Response, limit: int, deadline: float) -> Iterator[bytes]:
    """The chunks of a streamed ``response``'s body as they arrive, under ``read_capped``'s rules.

    For a body parsed as it arrives, never held whole: ``BodyTooLarge`` as
    soon as it exceeds ``limit``, ``httpx.ReadTimeout`` past ``deadline``.
    """
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge
    return _capped(response.iter_bytes(), limit, deadline)


def _capped(chunks: Iterator[bytes], limit: int, deadline: float) -> Iterator[bytes]:
    size = 0
    for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("the response took longer than the timeout to arrive")
        yield chunk


def _read_prefix(chunks: Iterator[bytes], limit: int, deadline: float) -> bytes:
    """Up to ``limit`` bytes of ``chunks``, read until ``deadline``; what arrived on a failure."""
    read: list[bytes] = []
    size = 0
    try:
        for chunk in chunks:
            read.append(chunk)
            size += len(chunk)
            if size >= limit or time.monotonic() >= deadline:
                break
    except httpx.HTTPError:
        pass  # the caller has its answer from the status already; a broken body changes nothing
    return b"".join(read)[:limit]


def parse_http_date(value: str) -> datetime | None:
    """The moment an HTTP-date (RFC 9110 §5.6.7) names, timezone-aware; ``None`` if unreadable.

    Unreadable includes a date no ``datetime`` holds: email.utils raises
    ValueError for a year past 9999 and OverflowError for one past a C long.
    """
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    # An HTTP-date is always GMT; email.utils gives "-0000" as a naive datetime.
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


# More digits than this (leading zeros aside) is more than MAX_RETRY_AFTER
# seconds, and soon more than int() reads (4,300 digits) or a float holds (309).
_LONGEST_DELTA_SECONDS = len(str(int(MAX_RETRY_AFTER)))


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds asked for by a ``Retry-After`` value (delta-seconds or HTTP-date), else ``None``.

    A date in the past means 0; a wait past ``MAX_RETRY_AFTER`` means that
    (however many digits); an unreadable value is ignored (``None``).
    """
    if value is None:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        digits = text.lstrip("0")
        if len(digits) > _LONGEST_DELTA_SECONDS:
            return MAX_RETRY_AFTER
        return retry_seconds(int(digits or "0"))
    when = parse_http_date(text)
    if when is None:
        return None
    return retry_seconds(max(0.0, (when - now).total_seconds()))


def retry_seconds(value: object) -> float | None:
    """A wait a remote asked for as a number, at most ``MAX_RETRY_AFTER``; else ``None``.

    Negative, NaN and anything but a real number (a JSON ``true``, a string)
    ask for nothing.  Compared before converting: an int of 400 digits has no float.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not value >= 0:  # negative, or NaN
        return None
    return MAX_RETRY_AFTER if value >= MAX_RETRY_AFTER else float(value)


def response_time(headers: httpx.Headers) -> datetime:
    """The server's ``Date`` (so an HTTP-date Retry-After ignores our clock's skew), else now."""
    value = headers.get("date")
    when = parse_http_date(value) if value else None
    return when if when is not None else datetime.now(UTC)


def failure_reason(exc: BaseException) -> str:
    """``"ReadTimeout: <message>"``, or the bare type name of an exception without a message."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
