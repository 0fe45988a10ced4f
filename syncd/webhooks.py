"""Webhook delivery per Standard Webhooks (https://www.standardwebhooks.com/).

Pure parts: the retry schedule (``next_retry_delay``), signing (``sign``), the
signed bytes (``webhook_body``, ``event_body``, ``test_body``), the destination
policy (``DestinationPolicy``, ``check_destination``); endpoint filters live in
``syncd.outbox``.  One impure part: ``WebhookSender`` POSTs one attempt and
classifies the answer; scheduling, persistence and disabling endpoints are the
caller's.

Destinations: http and https only, never a redirect, and by default never a
link-local or cloud-metadata address (169.254.0.0/16, fe80::/10,
fd00:ec2::254, and IPv4 addresses of those embedded in IPv6), wherever the
URL's host name resolves to at the moment of connecting; ``[delivery]
allow_destinations`` lifts that for listed hosts and networks.

Secrets and URL credentials never reach a log line, an error or a repr: URLs
are shown as ``redact_url`` gives them, and error texts are scrubbed of the
secrets, userinfo and query string of the request they belong to.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import ipaddress
import json
import random
import socket
import time
import uuid
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import parse_qsl, unquote, urljoin, urlsplit

import httpcore
import httpx
import structlog

from syncd import __version__
from syncd.config import DEFAULT_RETRY_SCHEDULE
from syncd.errors import ConfigError
from syncd.httpio import (
    RETRY_AFTER_STATUSES,
    DeadlineBackend,
    DeadlineTransport,
    attempt_deadline,
    failure_reason,
    parse_retry_after,
    read_capped,
)
from syncd.storage import Event
from syncd.views import event_json

__all__ = [
    "DEFAULT_USER_AGENT",
    "RETRY_SCHEDULE",
    "TEST_EVENT_TYPE",
    "BlockedDestinationError",
    "DeliveryResult",
    "DestinationPolicy",
    "Outcome",
    "Resolver",
    "WebhookSender",
    "check_destination",
    "event_body",
    "next_retry_delay",
    "redact_url",
    "resolve_host",
    "sign",
    "signing_key",
    "test_body",
    "url_origin",
    "webhook_body",
]

_log = structlog.get_logger(__name__)

# Seconds before attempt 2, 3, ...: quick first retry for blips, then hours
# apart so a receiver that is down over a long weekend still gets everything.
RETRY_SCHEDULE: tuple[float, ...] = DEFAULT_RETRY_SCHEDULE

TEST_EVENT_TYPE = "webhook.test"
DEFAULT_USER_AGENT = f"syncd/{__version__} (webhook sender; +https://pypi.org/project/syncd/)"

# ±20 %: spreads the retries of many events failed by one outage.
_JITTER = 0.2
# A receiver's Retry-After may stretch a step this much, never beyond a day:
# a hostile or buggy receiver must not park deliveries for a year.
_RETRY_AFTER_FACTOR = 4.0
_RETRY_AFTER_MAX = 86400.0

_SECRET_PREFIX = "whsec_"
_MAX_RESPONSE_BYTES = 64 * 1024
_EXCERPT_CHARS = 200
_REDACTED = "[redacted]"
_MIN_SCRUBBED_VALUE = 4

Outcome = Literal["delivered", "retry", "gone"]


# -- retry schedule ---------------------------------------------------------------


def next_retry_delay(
    failed_attempts: int,
    retry_after: float | None,
    rng: random.Random,
    schedule: Sequence[float] = RETRY_SCHEDULE,
) -> float | None:
    """Seconds to wait before the next attempt, or ``None`` when the schedule is exhausted.

    ``failed_attempts`` counts the attempts made so far (at least 1).  The
    scheduled step gets ±20 % jitter; a ``retry_after`` is a floor, itself
    capped at four times the step or 24 h, whichever is smaller.
    """
    if failed_attempts < 1:
        raise ValueError(f"failed_attempts counts attempts made, at least 1; got {failed_attempts}")
    if failed_attempts > len(schedule):
        return None
    step = float(schedule[failed_attempts - 1])
    delay = step * rng.uniform(1.0 - _JITTER, 1.0 + _JITTER)
    if retry_after is not None:
        ceiling = min(step * _RETRY_AFTER_FACTOR, _RETRY_AFTER_MAX)
        delay = max(delay, min(max(retry_after, 0.0), ceiling))
    return delay


# -- signing ------------------------------------------------------------------------


def signing_key(secret: str) -> bytes:
    """The HMAC key of a ``whsec_<base64>`` secret (or bare base64); ``ConfigError`` if invalid.

    The message never quotes the secret, so callers may show it to operators.
    """
    # Strip: a secret read from a file or an environment variable often ends in a newline.
    encoded = secret.strip().removeprefix(_SECRET_PREFIX)
    # Accept unpadded base64, as the reference implementations do.
    padded = encoded + "=" * (-len(encoded) % 4)
    try:
        key = base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        raise ConfigError(
            "webhook secret is not valid base64: expected 'whsec_' followed by standard base64"
            " (for example 'whsec_' + the output of 'openssl rand -base64 32')"
        ) from None
    if not key:
        raise ConfigError("webhook secret is empty: expected 'whsec_' followed by base64")
    return key


def sign(secrets: Sequence[str], msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` header: ``v1,<base64 HMAC-SHA256>`` per secret, space-separated.

    Several secrets mean key rotation: a receiver holding any one of them verifies.
    """
    if not secrets:
        raise ConfigError("a webhook endpoint needs at least one secret to sign with")
    signed = f"{msg_id}.{timestamp}.".encode() + body
    signatures = []
    for number, secret in enumerate(secrets, start=1):
        try:
            key = signing_key(secret)
        except ConfigError as exc:
            if len(secrets) == 1:
                raise
            raise ConfigError(f"secret {number} of {len(secrets)}: {exc}") from None
        digest = hmac.new(key, signed, hashlib.sha256).digest()
        signatures.append("v1," + base64.b64encode(digest).decode("ascii"))
    return " ".join(signatures)


# -- what is signed -----------------------------------------------------------------


def webhook_body(event_type: str, data: dict[str, Any], timestamp: datetime) -> bytes:
    """The payload: compact UTF-8 JSON ``{"type", "timestamp", "data"}``; signatures cover it."""
    if timestamp.tzinfo is None:
        raise ValueError("webhook timestamps must be timezone-aware")
    # "Z", as in the Standard Webhooks payload example.
    stamp = timestamp.astimezone(UTC).isoformat().replace("+00:00", "Z")
    payload = {"type": event_type, "timestamp": stamp, "data": data}
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def event_body(event: Event) -> bytes:
    """The payload of a stored event: its ``event_json`` shape as ``data``."""
    return webhook_body(event.type, event_json(event), event.created_at)


def test_body(now: datetime) -> tuple[str, bytes]:
    """A fresh message id (``msg_test_<hex>``) and the payload of a ``webhook.test`` event."""
    msg_id = f"msg_test_{uuid.uuid4().hex}"
    return msg_id, webhook_body(TEST_EVENT_TYPE, {"message": "syncd webhook test"}, now)


# Not a pytest test, although the name says so.
test_body.__test__ = False  # type: ignore[attr-defined]


# -- endpoint filters ---------------------------------------------------------------


# -- redaction ----------------------------------------------------------------------


def redact_url(url: str) -> str:
    """``scheme://host[:port]/path`` of ``url``: no userinfo, query or fragment."""
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        return "<invalid URL>"
    if not parts.scheme or not host:
        return "<invalid URL>"
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    return f"{parts.scheme.lower()}://{netloc}{parts.path}"


def url_origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``, and ``/…`` for any path: what lists may show.

    Slack-, Discord- and Mattermost-style endpoints carry their token in the
    path, so a listing shows where an endpoint points and nothing more.
    """
    redacted = redact_url(url)
    scheme, sep, rest = redacted.partition("://")
    if not sep:
        return redacted
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host}/…" if slash and path else f"{scheme}://{host}"


def _sensitive_strings(url: str, secrets: Sequence[str]) -> list[str]:
    """What must not appear in an error about a request to ``url`` signed with ``secrets``.

    The secrets are never sent, but the URL's query and credentials are, and a
    receiver may echo them (request line, ``Authorization``) in its answer.
    """
    found: list[str] = []
    for secret in secrets:
        found += [secret, secret.strip(), secret.strip().removeprefix(_SECRET_PREFIX)]
    try:
        parts = urlsplit(url)
        username, password = parts.username, parts.password
    except ValueError:
        return sorted({s for s in [*found, url] if s}, key=len, reverse=True)
    if url != redact_url(url):
        found.append(url)
    found += [parts.netloc.rpartition("@")[0], parts.query, parts.fragment]
    # Single values too, when long enough to be a token: shorter ones would
    # blot out ordinary words and digits of the error without protecting anything.
    values = [value for _, value in parse_qsl(parts.query, keep_blank_values=True)]
    values += [pair.partition("=")[2] for pair in parts.query.split("&")]  # as sent, encoded
    found += [value for value in [*values, password or ""] if len(value) >= _MIN_SCRUBBED_VALUE]
    if username is not None or password is not None:
        basic = f"{username or ''}:{password or ''}".encode()
        found.append(base64.b64encode(basic).decode("ascii"))
    # Longest first, so a shorter match cannot leave part of a longer secret behind.
    return sorted({s for s in found if s}, key=len, reverse=True)


def _scrub(text: str, url: str, secrets: Sequence[str]) -> str:
    """``text`` without the URL's credentials and query, the secrets, or control characters."""
    for sensitive in _sensitive_strings(url, secrets):
        text = text.replace(sensitive, _REDACTED)
    # One printable line: the text goes into log lines and the database.
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())


# -- destinations -------------------------------------------------------------------

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
# (host, port) -> the numeric addresses to connect to, in order of preference.
Resolver = Callable[[str, int], Sequence[str]]

# Never a webhook's business unless allowed: the link-local ranges, where the
# cloud metadata services live (169.254.169.254 on AWS, GCP, Azure and others,
# 169.254.170.2 for ECS task credentials), and AWS's IPv6 metadata address.
# Loopback and private ranges stay allowed: receivers on the LAN are normal.
_BLOCKED_NETWORKS: tuple[IPNetwork, ...] = (
    ipaddress.ip_network("169.254.0.0/16"),
    ipaddress.ip_network("fe80::/10"),
    ipaddress.ip_network("fd00:ec2::254/128"),
)
_BLOCKED_KIND = "link-local/metadata"
# IPv6 forms that carry an IPv4 address the packets may end up at.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_HOST_LABEL = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")
_MAX_HOST_LENGTH = 253
_MAX_LABEL_LENGTH = 63


class BlockedDestinationError(ConfigError):
    """A webhook URL points at an address the destination policy refuses.

    The message names the host and the address and says how to allow it; it
    never quotes the URL's path, query or credentials.
    """


def _embedded_forms(address: IPAddress) -> list[IPAddress]:
    """``address`` and any IPv4 address embedded in it (mapped, compatible, NAT64, 6to4)."""
    forms: list[IPAddress] = [address]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            forms.append(address.ipv4_mapped)
        elif address.sixtofour is not None:
            forms.append(address.sixtofour)
        elif address in _NAT64 or (address in _IPV4_COMPATIBLE and int(address) > 1):
            forms.append(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    return forms


def _host_key(host: str) -> str:
    """A host name as the allow list compares it: lower case, no trailing dot or brackets."""
    return host.strip().strip("[]").rstrip(".").lower()


def _parse_allowed(entry: str) -> IPNetwork | str:
    """One ``allow_destinations`` entry: a network, an address, or a host name."""
    text = _host_key(entry)
    if "/" in text:
        try:
            return ipaddress.ip_network(text)
        except ValueError as exc:
            raise ValueError(f"{entry!r} is not a network: {exc}") from None
    try:
        return ipaddress.ip_network(ipaddress.ip_address(text))
    except ValueError:
        pass
    labels = text.split(".")
    if (
        not text
        or len(text) > _MAX_HOST_LENGTH
        or any(
            not label
            or len(label) > _MAX_LABEL_LENGTH
            or not set(label) <= _HOST_LABEL
            or label.startswith("-")
            or label.endswith("-")
            for label in labels
        )
    ):
        raise ValueError(
            f"{entry!r} is neither an IP address, a network such as 169.254.10.0/24,"
            " nor a host name such as metadata.internal"
        )
    return text


@dataclass(frozen=True, slots=True)
class DestinationPolicy:
    """Which webhook destinations are refused: link-local and metadata addresses, unless allowed.

    ``networks`` and ``hosts`` come from ``[delivery] allow_destinations``: an
    allowed host name lets through whatever it resolves to; an allowed network
    lets through its addresses, also in IPv4-mapped form.
    """

    networks: tuple[IPNetwork, ...] = ()
    hosts: frozenset[str] = frozenset()

    @classmethod
    def from_allow_list(cls, entries: Iterable[str]) -> DestinationPolicy:
        """The policy allowing ``entries``: IP addresses, networks and host names.

        Raises ``ValueError`` naming the first entry that is none of those.
        """
        networks: list[IPNetwork] = []
        hosts: set[str] = set()
        for entry in entries:
            parsed = _parse_allowed(entry)
            if isinstance(parsed, str):
                hosts.add(parsed)
            else:
                networks.append(parsed)
        return cls(tuple(networks), frozenset(hosts))

    def blocked(self, address: str) -> bool:
        """Whether connecting to the numeric ``address`` is refused (unparsable ones are)."""
        try:
            forms = _embedded_forms(ipaddress.ip_address(address))
        except ValueError:
            return True
        if not any(form in network for form in forms for network in _BLOCKED_NETWORKS):
            return False
        return not any(form in network for form in forms for network in self.networks)

    def check(self, host: str, addresses: Iterable[str]) -> None:
        """Raise ``BlockedDestinationError`` unless ``host`` may be reached at every address."""
        if _host_key(host) in self.hosts:
            return
        for address in addresses:
            if self.blocked(address):
                raise BlockedDestinationError(_blocked_message(host, address))


def _blocked_message(host: str, address: str) -> str:
    shown_host = _host_key(host)
    try:
        literal = ipaddress.ip_address(shown_host) == ipaddress.ip_address(address)
    except ValueError:
        literal = False
    where = (
        f"destination {address} is blocked"
        if literal
        else f"destination {shown_host} resolves to {address}, which is blocked"
    )
    return f"{where} ({_BLOCKED_KIND}); allow it with [delivery] allow_destinations"


def _numeric_addresses(host: str) -> list[str] | None:
    """The address ``host`` spells, if it is an IP literal in any form the resolver accepts.

    ``None`` for a host name.  No DNS: besides the usual forms, this catches
    ``2852039166``, ``0xa9fea9fe`` and ``0251.0376.0251.0376``, which the C
    resolver reads as 169.254.169.254, and IPv6 literals with a zone id.
    """
    zoned = _zoned_ipv6(host)
    if zoned is not None:
        return [zoned]
    try:
        infos = socket.getaddrinfo(
            _host_key(host), None, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST
        )
    except (OSError, UnicodeError):
        return None
    return _unique_addresses(infos)


def _zoned_ipv6(host: str) -> str | None:
    """``address%zone`` when ``host`` is an IPv6 literal with a zone id; ``None`` otherwise.

    A URL writes the zone's "%" as "%25" (RFC 6874: ``[fe80::1%25eth0]``).
    getaddrinfo refuses a zone naming no interface, "25eth0" among them, so
    such a literal passed for a host name and skipped the start-up check; the
    address alone says whether it is blocked, whatever the zone.
    """
    address, percent, zone = host.strip().strip("[]").partition("%")
    if not percent:
        return None
    try:
        ipaddress.IPv6Address(address)
    except ValueError:
        return None
    # Interface names are case-sensitive: only the address is lowered.
    return f"{address.lower()}%{unquote('%' + zone)[1:]}"


def resolve_host(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to now, in the resolver's order; ``OSError`` if none."""
    return _unique_addresses(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))


def _unique_addresses(infos: Iterable[tuple[Any, ...]]) -> list[str]:
    addresses: list[str] = []
    for family, _, _, _, sockaddr in infos:
        address = str(sockaddr[0])
        if family == socket.AF_INET6 and len(sockaddr) > 3 and sockaddr[3] and "%" not in address:
            address = f"{address}%{sockaddr[3]}"  # a link-local address needs its interface
        if address not in addresses:
            addresses.append(address)
    return addresses


def check_destination(
    url: str,
    allowed: Collection[str] | DestinationPolicy = (),
    *,
    resolve: Resolver | None = None,
) -> None:
    """Refuse a webhook URL that is not http(s) or whose host is a blocked address.

    Without ``resolve`` this is pure: IP literals are checked, host names pass
    (their addresses are checked at send time, because DNS changes).  With
    ``resolve`` every address of a host name is checked.  Raises
    ``BlockedDestinationError`` for a blocked address and ``ConfigError`` for a
    URL that is not http(s); neither message quotes the URL.
    """
    try:
        parts = urlsplit(url.strip())
        host, port = parts.hostname, parts.port
    except ValueError:
        raise ConfigError("not a valid URL") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise ConfigError("must be an http:// or https:// URL")
    if not host:
        raise ConfigError("the URL has no host")
    policy = (
        allowed
        if isinstance(allowed, DestinationPolicy)
        else DestinationPolicy.from_allow_list(allowed)
    )
    addresses = _numeric_addresses(host)
    if addresses is None:
        if resolve is None:
            return
        addresses = list(resolve(host, port or (443 if scheme == "https" else 80)))
    policy.check(host, addresses)


class _GuardedBackend(DeadlineBackend):
    """Opens TCP connections only to addresses the destination policy allows.

    DNS rebinding: checking a name's addresses and then letting the HTTP client
    resolve it again leaves a window in which a hostile DNS server (TTL 0) can
    swap a public answer for 169.254.169.254.  So the name is resolved once,
    here, for each new connection; every address it resolves to is checked (one
    blocked address refuses the destination: a name that mixes a receiver with a
    metadata address is not one to trust); and the socket connects to those
    checked addresses and nothing else.  TLS still verifies the certificate
    against the host name (httpcore passes it as server_hostname) and the Host
    header keeps the name, so nothing changes for the receiver.  The price: a
    pooled keep-alive connection (at most 5 s idle) keeps the address it was
    opened to after DNS changes, which is still a checked address.
    """

    def __init__(self, policy: DestinationPolicy, resolve: Resolver) -> None:
        self._policy = policy
        self._resolve = resolve

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = _numeric_addresses(host)
        if addresses is None:
            try:
                addresses = list(self._resolve(host, port))
            except (OSError, UnicodeError) as exc:
                # What the stock backend raises when the resolver fails.
                raise httpcore.ConnectError(str(exc)) from exc
        if not addresses:
            raise httpcore.ConnectError(f"{host} resolves to no address")
        self._policy.check(host, addresses)
        failure: httpcore.ConnectError | httpcore.ConnectTimeout | None = None
        for address in addresses:
            try:
                # The shared backend bounds the connect and the connection by
                # the attempt's deadline.
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure


def _guarded_transport(policy: DestinationPolicy, resolve: Resolver) -> httpx.BaseTransport:
    """httpx's transport (httpx's default limits), connecting through ``_GuardedBackend``."""
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=20)
    return DeadlineTransport(limits, _GuardedBackend(policy, resolve))


# -- delivery -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DeliveryResult:
    """How one attempt went.

    ``delivered``: a 2xx.  ``gone``: 410, the receiver asks to be disabled.
    ``retry``: anything else (other statuses, 3xx, timeouts, connection errors,
    blocked destinations), as Standard Webhooks and Svix do.  ``error`` is
    redacted and safe to store.
    """

    outcome: Outcome
    status: int | None
    retry_after: float | None
    error: str | None
    duration_seconds: float


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
                else _guarded_transport(self._policy, self._resolve)
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
        now: datetime | None = None,
    ) -> DeliveryResult:
        """POST ``body`` to ``url`` once, signed with ``secrets``; classify the answer.

        ``now`` gives ``webhook-timestamp`` (default: the current time).  Network
        trouble is a ``retry`` result, not an exception; a bad secret raises
        ``ConfigError`` before anything is sent.
        """
        when = now if now is not None else datetime.now(UTC)
        if when.tzinfo is None:
            raise ValueError("now must be timezone-aware")
        timestamp = int(when.timestamp())
        headers = {
            "content-type": "application/json",
            "webhook-id": msg_id,
            "webhook-timestamp": str(timestamp),
            "webhook-signature": sign(secrets, msg_id, timestamp, body),
        }
        started = time.monotonic()
        try:
            if self._check_before_send:
                self._check(url)
            result = self._post(url, headers, body, started)
        except BlockedDestinationError as exc:
            # Not a network error: nothing was sent.  Still a failed attempt
            # that the schedule retries (DNS may change, the operator may allow
            # it) and finally dead-letters, so it shows up like any other.
            result = DeliveryResult("retry", None, None, str(exc), time.monotonic() - started)
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            reason = failure_reason(exc)
            result = DeliveryResult("retry", None, None, reason, time.monotonic() - started)
        if result.error is not None:
            result = replace(result, error=_scrub(result.error, url, secrets))
        _log_attempt(msg_id, result)
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
        self, url: str, headers: dict[str, str], body: bytes, started: float
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
        return DeliveryResult(outcome, status, retry_after, error, duration)


def _outcome(status: int) -> Outcome:
    """Standard Webhooks: 2xx is success, 410 asks to be disabled, the rest is retried."""
    if 200 <= status < 300:
        return "delivered"
    if status == 410:
        return "gone"
    return "retry"


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
        target = redact_url(urljoin(url, location)) if location else "(no Location)"
        error += f"; redirects are not followed (Location: {target})"
    excerpt = answer.decode("utf-8", "replace")[: _EXCERPT_CHARS * 2]
    excerpt = " ".join(excerpt.split())[:_EXCERPT_CHARS]
    if excerpt:
        error += f": {excerpt}"
    return error


def _log_attempt(msg_id: str, result: DeliveryResult) -> None:
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
