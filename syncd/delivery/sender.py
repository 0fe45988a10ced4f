"""One webhook attempt: POST the signed bytes, classify the answer.

Per Standard Webhooks (https://www.standardwebhooks.com/): never a redirect,
2xx is success, 410 asks to be disabled, anything else is retried.
Scheduling, persistence and disabling endpoints are the worker's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import urljoin, urlsplit

import httpx
import structlog

from syncd import __version__
from syncd.delivery.redaction import redact_url, scrub
from syncd.delivery.transport import guarded_transport, resolve_host
from syncd.domain.destinations import (
    BlockedDestinationError,
    DestinationPolicy,
    Resolver,
    check_destination,
)
from syncd.domain.signing import sign
from syncd.domain.vocabulary import DeliveryFormat
from syncd.errors import ConfigError
from syncd.httpclient import (
    RETRY_AFTER_STATUSES,
    attempt_deadline,
    failure_reason,
    parse_retry_after,
    read_capped,
    retry_seconds,
)

__all__ = [
    "DEFAULT_USER_AGENT",
    "DeliveryResult",
    "Outcome",
    "WebhookSender",
    "log_attempt",
    "never_shown",
]

_log = structlog.get_logger(__name__)

DEFAULT_USER_AGENT = f"syncd/{__version__} (webhook sender; +https://pypi.org/project/syncd/)"
_MAX_RESPONSE_BYTES = 64 * 1024
_EXCERPT_CHARS = 200

Outcome = Literal["delivered", "retry", "gone"]


@dataclass(frozen=True, slots=True)
class DeliveryResult:
    """How one attempt went.

    ``delivered``: a 2xx.  ``gone``: 410, the receiver asks to be disabled.
    ``retry``: anything else (other statuses, 3xx, timeouts, connection errors,
    blocked destinations), as Standard Webhooks and Svix do.  ``error`` is
    redacted and safe to store; so is ``answer``, the start of the receiver's
    answer (at most 200 bytes) that ``syncd webhooks test`` shows.
    """

    outcome: Outcome
    status: int | None
    retry_after: float | None
    error: str | None
    duration_seconds: float
    answer: str = ""


class WebhookSender:
    """Sends signed webhook attempts, one POST each, never following redirects.

    Use it as a context manager.  ``timeout`` bounds the whole attempt:
    connecting, sending and reading the answer (at most 64 KiB of body), so a
    receiver that drips its answer is cut off at it.  (A ``transport`` given
    instead of the guarded one bounds each read only.)
    Connections go only to addresses ``DestinationPolicy`` allows, given
    ``allow_destinations``; ``resolve`` (default: ``resolve_host``, the system
    resolver) turns host names into addresses.  A ``transport`` replaces the
    guarded one (tests); the destination is then checked right before each send.
    """

    def __init__(
        self,
        timeout: float = 15.0,
        user_agent: str = DEFAULT_USER_AGENT,
        transport: httpx.BaseTransport | None = None,
        *,
        allow_destinations: Collection[str] = (),
        resolve: Resolver | None = None,
    ) -> None:
        self._timeout = timeout
        self._policy = DestinationPolicy.from_allow_list(allow_destinations)
        self._resolve = resolve if resolve is not None else resolve_host
        self._check_before_send = transport is not None
        self._http = httpx.Client(
            transport=(
                transport
                if transport is not None
                else guarded_transport(self._policy, self._resolve)
            ),
            timeout=httpx.Timeout(timeout),
            follow_redirects=False,
            # identity: the capped body read must not be a decompression bomb.
            headers={"user-agent": user_agent, "accept-encoding": "identity"},
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"WebhookSender(timeout={self._timeout!r})"

    def close(self) -> None:
        """Close every pooled connection."""
        self._http.close()

    def send(
        self,
        url: str,
        secrets: Sequence[str],
        msg_id: str,
        body: bytes,
        *,
        format: DeliveryFormat = DeliveryFormat.STANDARD,
        now: datetime | None = None,
    ) -> DeliveryResult:
        """POST ``body`` to ``url`` once, signed with ``secrets``; classify the answer.

        ``now`` gives ``webhook-timestamp`` (default: the current time).  Network
        trouble is a ``retry`` result, not an exception; a bad secret raises
        ``ConfigError`` before anything is sent.  A chat ``format`` (slack,
        discord) is sent unsigned: chat services know no signature headers, and
        their URL, a token in its path, is itself the secret.
        """
        when = now if now is not None else datetime.now(UTC)
        if when.tzinfo is None:
            raise ValueError("now must be timezone-aware")
        headers = {"content-type": "application/json"}
        if format == DeliveryFormat.STANDARD:
            timestamp = int(when.timestamp())
            headers |= {
                "webhook-id": msg_id,
                "webhook-timestamp": str(timestamp),
                "webhook-signature": sign(secrets, msg_id, timestamp, body),
            }
        started = time.monotonic()
        try:
            if self._check_before_send:
                self._check(url)
            result = self._post(url, headers, body, started, format)
        except BlockedDestinationError as exc:
            # Not a network error: nothing was sent.  Still a failed attempt
            # that the schedule retries (DNS may change, the operator may allow
            # it) and finally dead-letters, so it shows up like any other.
            result = DeliveryResult("retry", None, None, str(exc), time.monotonic() - started)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            reason = failure_reason(exc)
            result = DeliveryResult("retry", None, None, reason, time.monotonic() - started)
        hidden = never_shown(url, secrets, format)
        if result.error is not None:
            result = replace(result, error=scrub(result.error, url, hidden))
        if result.answer:
            result = replace(result, answer=scrub(result.answer, url, hidden))
        log_attempt(msg_id, result)
        return result

    def _check(self, url: str) -> None:
        """``check_destination`` for a sender whose transport does not check at connect time."""
        try:
            check_destination(url, self._policy, resolve=self._resolve)
        except BlockedDestinationError:
            raise
        except ConfigError:
            return  # not a URL httpx can send to either: it says why, as a failed attempt
        except (OSError, UnicodeError) as exc:
            raise httpx.ConnectError(str(exc)) from exc

    def _post(
        self,
        url: str,
        headers: dict[str, str],
        body: bytes,
        started: float,
        format: DeliveryFormat,
    ) -> DeliveryResult:
        """One POST; the status decides the outcome, the body only feeds the error text."""
        deadline = started + self._timeout
        with (
            attempt_deadline(deadline),
            self._http.stream("POST", url, headers=headers, content=body) as response,
        ):
            status = response.status_code
            answer = read_capped(response, _MAX_RESPONSE_BYTES, deadline, raw=True, partial=True)
            reason = response.reason_phrase
            location = response.headers.get("location")
            retry_after = None
            if status in RETRY_AFTER_STATUSES:
                retry_after = parse_retry_after(
                    response.headers.get("retry-after"), datetime.now(UTC)
                )
            if status == 429 and format == DeliveryFormat.DISCORD:
                retry_after = _later(retry_after, _discord_retry_after(answer))
        duration = time.monotonic() - started
        outcome = _outcome(status)
        error = None
        if outcome != "delivered":
            error = _status_error(
                status,
                reason,
                retry_after=retry_after,
                location=location,
                url=url,
                answer=answer,
            )
        shown = answer[:_EXCERPT_CHARS].decode("utf-8", "replace")
        return DeliveryResult(outcome, status, retry_after, error, duration, shown)


def never_shown(url: str, secrets: Sequence[str], format: DeliveryFormat) -> Sequence[str]:
    """What no error about a send to ``url`` may show (for ``scrub``): the ``secrets``, and for
    a chat format the URL's path, where chat services put the webhook's token."""
    if format != DeliveryFormat.STANDARD and len(path := urlsplit(url).path) > 1:
        return (*secrets, path)
    return secrets


def _outcome(status: int) -> Outcome:
    """Standard Webhooks: 2xx is success, 410 asks to be disabled, the rest is retried."""
    if 200 <= status < 300:
        return "delivered"
    if status == 410:
        return "gone"
    return "retry"


def _discord_retry_after(answer: bytes) -> float | None:
    """The seconds a Discord 429's JSON body asks to wait (``retry_after``), if it says.

    Read as ``retry_seconds`` reads any wait from a remote: capped, never
    infinite.  A body nested past Python's recursion limit is no answer either.
    """
    try:
        value = json.loads(answer).get("retry_after")
    except (ValueError, AttributeError, RecursionError):
        return None
    return retry_seconds(value)


def _later(first: float | None, second: float | None) -> float | None:
    """The longer of two waits asked for, either possibly not asked."""
    asked = [wait for wait in (first, second) if wait is not None]
    return max(asked) if asked else None


def _status_error(
    status: int,
    reason: str,
    *,
    retry_after: float | None,
    location: str | None,
    url: str,
    answer: bytes,
) -> str:
    """A one-line description of a non-2xx answer (scrubbed later by ``send``)."""
    error = f"HTTP {status} {reason}".rstrip()
    if retry_after is not None:
        error += f" (Retry-After {retry_after:g} s)"
    if 300 <= status < 400:
        error += f"; redirects are not followed (Location: {_redirect_target(url, location)})"
    excerpt = answer.decode("utf-8", "replace")[: _EXCERPT_CHARS * 2]
    excerpt = " ".join(excerpt.split())[:_EXCERPT_CHARS]
    if excerpt:
        error += f": {excerpt}"
    return error


def _redirect_target(url: str, location: str | None) -> str:
    """Where a redirect from ``url`` points, redacted; the receiver's ``location`` may be no URL."""
    if not location:
        return "(no Location)"
    try:
        return redact_url(urljoin(url, location))
    except ValueError:  # urljoin parses it: "//[" is an unclosed IPv6 literal
        return "<invalid URL>"


def log_attempt(msg_id: str, result: DeliveryResult) -> None:
    """One line per attempt; the caller binds the endpoint and attempt number."""
    fields: dict[str, Any] = {
        "event_id": msg_id,
        "outcome": result.outcome,
        "status": result.status,
        "duration_ms": round(result.duration_seconds * 1000.0, 1),
    }
    if result.retry_after is not None:
        fields["retry_after"] = result.retry_after
    if result.error is not None:
        fields["error"] = result.error
    if result.outcome == "delivered":
        _log.info("webhook_attempt", **fields)
    else:
        _log.warning("webhook_attempt", **fields)
