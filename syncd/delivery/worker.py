"""The outbox worker: claim due deliveries, send them in their endpoint's format, record
what happened.

At least once: a delivery is marked done only after a 2xx, and a lease that
runs out (a crash, a kill -9) makes it due again with the same message id
(the event's, or a digest's), so receivers deduplicate on ``webhook-id``.
"""

from __future__ import annotations

import os
import random
import socket
import threading
import time
import traceback
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Self

import structlog

from syncd import metrics
from syncd.config import DeliverySettings
from syncd.delivery.apprise_sender import AppriseSender
from syncd.delivery.payload import claim_body
from syncd.delivery.redaction import scrub
from syncd.delivery.sender import DeliveryResult, WebhookSender, never_shown
from syncd.domain.retries import next_retry_delay
from syncd.domain.routing import Endpoint
from syncd.domain.vocabulary import DeliveryFormat
from syncd.errors import StoreError
from syncd.faults import fault_point
from syncd.httpclient import failure_reason
from syncd.render.notification import notification
from syncd.storage import Attempt, Claim, Outbox

__all__ = ["Dispatcher", "worker_name"]

_log = structlog.get_logger(__name__)

# A batch's rendered bodies, by format, digest or not, and the events they carry.
_Bodies = dict[tuple[DeliveryFormat, bool, tuple[int, ...]], bytes]
# How often a running worker deletes the delivered rows older than keep_delivered,
# and how many a transaction deletes (short, so claims never wait long behind it).
PRUNE_EVERY = 3600.0
_PRUNE_BATCH = 5000
# Deliveries a batch claims per worker.  A claim and a record cost about 17 ms
# of CPU a batch whatever its size (statements, a commit each), plus about
# 130 µs a delivery (its event read back and decoded): at 16 a worker 400-430 µs
# of every delivery's CPU, at 64 190-210 µs, and the pool stands idle while they
# run.  The price: a crash sends up to that many again, each under its own
# webhook-id, and a batch records its results a little later.
CLAIMS_PER_WORKER = 64


def worker_name() -> str:
    """A lease owner id unique to this process: host, pid and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Dispatcher:
    """Works the outbox for the configured endpoints."""

    def __init__(
        self,
        outbox: Outbox,
        endpoints: Mapping[str, Endpoint],
        settings: DeliverySettings,
        *,
        owner: str | None = None,
        rng: random.Random | None = None,
        public_url: str | None = None,
    ) -> None:
        self._outbox = outbox
        self._endpoints = endpoints
        self._settings = settings
        self._public_url = public_url
        # One client per timeout, shared by the endpoints that have it: a pool per
        # endpoint would open a connection for every message to a thousand chat
        # endpoints on one host, and cost a client (and its TLS context) each.
        self._clients = {
            timeout: WebhookSender(timeout=timeout, allow_destinations=settings.allow_destinations)
            for timeout in {endpoint.timeout for endpoint in endpoints.values()}
        }
        self._senders = {
            name: self._clients[endpoint.timeout] for name, endpoint in endpoints.items()
        }
        # [[notify]] targets: Apprise opens its own connections, per send.
        self._notifier = AppriseSender.allowing(settings.allow_destinations)
        self.owner = owner or worker_name()
        self._rng = rng or random.Random()
        self._pool = ThreadPoolExecutor(settings.workers, thread_name_prefix="syncd-delivery")
        self._next_prune = time.monotonic()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self, *, wait: bool = True) -> None:
        """Wait for sends in flight (unless not ``wait``), give back unfinished leases."""
        self._pool.shutdown(wait=wait, cancel_futures=True)
        try:
            self._outbox.release_leases(self.owner)
        except StoreError as exc:
            # The leases lapse on their own; shutting down must not fail for them.
            _log.warning("leases_not_released", error=str(exc))
        for sender in self._clients.values():
            sender.close()

    def run_once(self) -> int:
        """Claim what is due, send it concurrently, record the results; return how many.

        Results are recorded together, in one transaction: writers queueing
        for the database one delivery at a time would cost more than the sends.
        """
        claims = self._outbox.claim(
            self.owner, self._settings.lease, limit=self._settings.workers * CLAIMS_PER_WORKER
        )
        # Claims hold at most one delivery per paper and endpoint, so sending
        # them in parallel keeps each receiver's per-paper order.
        bodies: _Bodies = {}
        futures = [self._pool.submit(self._send_isolated, claim, bodies) for claim in claims]
        self._wait_renewing(claims, futures)
        results = [future.result() for future in futures]
        sent = [(claim, result) for claim, result in zip(claims, results, strict=True) if result]
        now = datetime.now(UTC)
        attempts = [self._judge(claim, result, now) for claim, result in sent]
        if any(a.delivered for a in attempts):
            fault_point("dispatch.sent")
        self._outbox.record_attempts(self.owner, attempts)
        if any(a.delivered for a in attempts):
            fault_point("dispatch.acknowledged")
        for (claim, result), attempt in zip(sent, attempts, strict=True):
            self._report(claim, result, attempt, now)
        return len(claims)

    def _wait_renewing(self, claims: Sequence[Claim], futures: Sequence[Future[Any]]) -> None:
        """Wait for a batch's sends, renewing its leases every third of a lease.

        A batch can outlast the lease (64 sends per worker to a slow receiver),
        and its results are recorded only at its end; with renewals a lease
        runs out only when this process stops, so no other worker sends a
        delivery this one is sending or has sent but not yet recorded.
        """
        ids = [claim.delivery_id for claim in claims]
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=self._settings.lease / 3)
            if pending:
                self._outbox.renew_leases(self.owner, ids, self._settings.lease)

    def run(self, stop: threading.Event, wake: threading.Event) -> None:
        """Work the outbox until ``stop``; sleep between polls unless woken."""
        outage = False
        while not stop.is_set():
            try:
                self.prune_delivered()
                worked = self.run_once()
            except StoreError as exc:
                # One line when the database stops answering, one when it is back:
                # not a traceback every poll of an outage.
                if not outage:
                    _log.error("dispatch_failed", error=str(exc), error_type="StoreError")
                outage, worked = True, 0
            except Exception:
                _log.exception("dispatch_failed")
                worked = 0
            else:
                if outage:
                    _log.info("dispatch_recovered")
                outage = False
            if not worked:
                wake.wait(self._settings.poll_interval)
                wake.clear()

    def prune_delivered(self) -> int:
        """Delete a batch of the deliveries delivered more than ``keep_delivered`` ago, when
        one is due; return how many.

        Without it the outbox keeps a row per event and endpoint forever.  A
        full batch makes the next one due at once, so a backlog (the first
        start after an upgrade) goes batch by batch between claims; otherwise
        the next is due in ``PRUNE_EVERY`` seconds.
        """
        keep = self._settings.keep_delivered
        if not keep or time.monotonic() < self._next_prune:
            return 0
        before = datetime.now(UTC) - timedelta(seconds=keep)
        deleted = self._outbox.prune_delivered(before, _PRUNE_BATCH)
        if deleted < _PRUNE_BATCH:
            self._next_prune = time.monotonic() + PRUNE_EVERY
        if deleted:
            _log.info("deliveries_pruned", deliveries=deleted, delivered_before=before.isoformat())
        return deleted

    def drain(self, seconds: float) -> int:
        """Deliver what is due, and retries that fall due, for at most ``seconds``.

        Returns how many attempts were made.
        """
        deadline = time.monotonic() + seconds
        attempted = 0
        while time.monotonic() < deadline:
            worked = self.run_once()
            attempted += worked
            if worked:
                continue
            due = self._outbox.next_due()
            if due is None:
                break
            # Never spin: a due delivery another worker holds takes a poll to free.
            wait = max((due - datetime.now(UTC)).total_seconds(), self._settings.poll_interval)
            if wait > deadline - time.monotonic():
                break
            time.sleep(wait)
        return attempted

    def _send_isolated(self, claim: Claim, bodies: _Bodies) -> DeliveryResult | None:
        """``_send``, where an exception it did not expect is a failed attempt of ``claim``.

        Raised out of the pool, it would lose the whole batch: sent but never
        recorded, every delivery in it went out again once its lease ran out,
        to every endpoint, for as long as the one that raised kept raising.
        """
        started = time.monotonic()
        try:
            return self._send(claim, bodies)
        except Exception as exc:
            return self._failed(claim, exc, time.monotonic() - started)

    def _failed(self, claim: Claim, exc: Exception, duration: float) -> DeliveryResult:
        """A retry result for the bug ``exc``, logged and described without the endpoint's URL."""
        endpoint = self._endpoints[claim.endpoint]
        hidden = never_shown(endpoint.spec.url, endpoint.secrets, endpoint.spec.format)
        error = "syncd failed to send it: " + scrub(failure_reason(exc), endpoint.spec.url, hidden)
        # Where it went wrong, with no message (a URL, a token) the scrub could miss.
        where = traceback.extract_tb(exc.__traceback__)[-1]
        with structlog.contextvars.bound_contextvars(
            endpoint=claim.endpoint, event_id=claim.message_id, attempt=claim.attempts + 1
        ):
            _log.error(
                "delivery_failed",
                error=error,
                error_type=type(exc).__name__,
                where=f"{where.filename}:{where.lineno} in {where.name}",
            )
        return DeliveryResult("retry", None, None, error, duration)

    def _send(self, claim: Claim, bodies: _Bodies) -> DeliveryResult | None:
        """Send ``claim`` once; ``bodies`` holds the batch's bodies rendered so far."""
        with structlog.contextvars.bound_contextvars(
            endpoint=claim.endpoint, event_id=claim.message_id, attempt=claim.attempts + 1
        ):
            endpoint = self._endpoints.get(claim.endpoint)
            if endpoint is None:
                # Only configured endpoints are active, so this needs another
                # process with another config; its lease will lapse for it.
                _log.warning("endpoint_not_configured")
                return None
            format = endpoint.spec.format
            if format == DeliveryFormat.APPRISE:
                events, public_url = claim.events, self._public_url
                return self._notifier.send(
                    endpoint.spec.url,
                    endpoint.timeout,
                    claim.message_id,
                    lambda written_in: notification(
                        events, public_url=public_url, body_format=written_in
                    ),
                )
            # A cycle's digests to endpoints of one format and filters are one
            # message: rendered once a batch, not once an endpoint.  (A race
            # renders it twice, the same bytes.)
            key = (format, claim.digest_id is not None, tuple(e.seq for e in claim.events))
            body = bodies.get(key)
            if body is None:
                body = bodies[key] = claim_body(claim, format, public_url=self._public_url)
            return self._senders[claim.endpoint].send(
                endpoint.spec.url, endpoint.secrets, claim.message_id, body, format=format
            )

    def _judge(self, claim: Claim, result: DeliveryResult, now: datetime) -> Attempt:
        """What to record for one attempt: done, retry when, dead, or endpoint gone."""
        if result.outcome == "delivered":
            return Attempt(claim.delivery_id, result.status or 200, delivered=True)
        if result.outcome == "gone":
            return Attempt(claim.delivery_id, result.status, result.error, disable_endpoint=True)
        delay = next_retry_delay(
            claim.attempts + 1, result.retry_after, self._rng, self._settings.retry_schedule
        )
        retry_at = now + timedelta(seconds=delay) if delay is not None else None
        return Attempt(claim.delivery_id, result.status, result.error, retry_at=retry_at)

    def _report(
        self, claim: Claim, result: DeliveryResult, attempt: Attempt, now: datetime
    ) -> None:
        """Count the attempt; log what was decided (the sender logged the attempt itself)."""
        if attempt.delivered:
            # One line per delivery is enough: the sender's webhook_attempt.
            age = now - claim.events[0].created_at
            metrics.observe_delivery("delivered", age.total_seconds())
            return
        with structlog.contextvars.bound_contextvars(
            endpoint=claim.endpoint, event_id=claim.message_id, attempt=claim.attempts + 1
        ):
            if attempt.disable_endpoint:
                metrics.observe_delivery("gone", None)
                _log.warning("endpoint_disabled", reason=f"HTTP {result.status}")
            elif attempt.retry_at is None:
                metrics.observe_delivery("dead", None)
                _log.error("delivery_dead_lettered", status=result.status, error=result.error)
            else:
                metrics.observe_delivery("retry", None)
                _log.warning(
                    "delivery_retry_scheduled",
                    status=result.status,
                    error=result.error,
                    retry_delay_in_seconds=round((attempt.retry_at - now).total_seconds(), 1),
                )
