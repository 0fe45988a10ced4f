"""One Apprise notification: a ``[[notify]]`` target's title and body, sent by Apprise.

The body is written in the format the service reads, as its Apprise plugin
tells (``apprise_urls.body_format``): Markdown for chats that render it, HTML
for e-mail (which Apprise sends with a plain-text alternative), else text.

Apprise opens its own connections, so the destination policy cannot guard
them as it guards the webhook sockets: the URL's host is checked right before
each send instead, against what it resolves to then (best effort: only for
services whose URL names a host, and DNS may answer differently a moment later).

An Apprise URL may hold its secrets anywhere (Telegram's bot token is its
"host"), so errors are scrubbed of every part of the URL.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from syncd.apprise_urls import body_format, load_apprise, network_host, url_parts
from syncd.delivery.redaction import scrub
from syncd.delivery.sender import DeliveryResult, log_attempt
from syncd.delivery.transport import resolve_host
from syncd.domain.destinations import (
    BlockedDestinationError,
    DestinationPolicy,
    Resolver,
    check_host,
)
from syncd.render.notification import BodyFormat

__all__ = ["AppriseSender", "Message"]

Message = Callable[[BodyFormat], tuple[str, str]]
"""A notification to send: its (title, body) written in the format asked for."""

# The levels of Apprise's log entries that say why a send failed (they are names).
_SAYS_WHAT_FAILED = frozenset({"WARNING", "ERROR", "CRITICAL"})


@dataclass(frozen=True, slots=True)
class AppriseSender:
    """Sends one notification per call through Apprise, for any ``[[notify]]`` target.

    ``policy`` is the webhook senders' destination policy; ``resolve`` turns
    host names into the addresses it checks (the system resolver by default).
    """

    policy: DestinationPolicy
    resolve: Resolver = resolve_host

    @classmethod
    def allowing(cls, allow_destinations: Collection[str] = ()) -> AppriseSender:
        """A sender under the policy that allows ``allow_destinations``."""
        return cls(DestinationPolicy.from_allow_list(allow_destinations))

    def send(self, url: str, timeout: float, msg_id: str, message: Message) -> DeliveryResult:
        """Notify ``url`` once with ``message`` in its service's format; a failure is a ``retry``.

        ``timeout`` bounds the whole call (Apprise gives up on the service at
        it) and each connect and read of the service's own requests.
        """
        started = time.monotonic()
        try:
            error = self._notify(url, timeout, message)
        except BlockedDestinationError as exc:
            error = str(exc)  # nothing was sent: a failed attempt, as for webhooks
        except OSError as exc:
            error = f"cannot resolve the destination: {exc}"
        except Exception as exc:
            # Apprise catches its services' errors; one that escapes is this
            # target's failed attempt, not the end of the whole batch of sends.
            error = f"Apprise failed: {type(exc).__name__}: {exc}"
        duration = time.monotonic() - started
        if error is None:
            result = DeliveryResult("delivered", None, None, None, duration)
        else:
            error = scrub(error, url, url_parts(url))
            result = DeliveryResult("retry", None, None, error, duration)
        log_attempt(msg_id, result)
        return result

    def _notify(self, url: str, timeout: float, message: Message) -> str | None:
        """Send; ``None`` on success, else what Apprise said went wrong (not yet scrubbed)."""
        apprise = load_apprise()
        # A plugin per send: plugins keep throttling state, and workers send in parallel.
        plugin = apprise.Apprise.instantiate(url)
        if plugin is None:
            return "Apprise cannot use this URL"
        plugin.socket_connect_timeout = plugin.socket_read_timeout = timeout
        self._check_destination(plugin)
        written_in = BodyFormat(body_format(plugin))
        title, body = message(written_in)
        notifier = apprise.Apprise()
        notifier.add(plugin)
        result = notifier.notify(
            body=body,
            title=title,
            body_format=apprise.NotifyFormat(written_in.value),
            timeout=timeout,
        )
        if result:
            return None
        said = [entry.message for entry in result.logs() if entry.level in _SAYS_WHAT_FAILED]
        return " ".join(said) or f"Apprise reported {result.status.name}"

    def _check_destination(self, plugin: Any) -> None:
        """Refuse a service whose network host resolves to a blocked address (OSError: none)."""
        host = network_host(plugin)
        if host is not None:
            check_host(host, plugin.port or 0, self.policy, resolve=self.resolve)
