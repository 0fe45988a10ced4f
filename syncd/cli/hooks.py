"""``syncd webhooks``: list endpoints, send a test, queue deliveries again."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from syncd.cli.output import EXIT_FAILURE, EXIT_OK, TIME_FORMAT, print_json, print_table
from syncd.cli.table import Column
from syncd.delivery.apprise_sender import AppriseSender
from syncd.delivery.messages import sample_body
from syncd.delivery.payload import test_body
from syncd.delivery.sender import WebhookSender
from syncd.domain.counting import counted
from syncd.domain.model import EndpointSummary
from syncd.domain.routing import Endpoint
from syncd.domain.textcontrols import for_terminal
from syncd.domain.views import endpoint_json
from syncd.domain.vocabulary import DeliveryFormat
from syncd.errors import NotFoundError
from syncd.render.notification import sample_notification
from syncd.service.app import App

__all__ = ["webhooks_list", "webhooks_redeliver", "webhooks_test"]

_COLUMNS = (
    Column("NAME"),
    Column("URL", drop_rank=1),
    *map(Column, ("STATE", "PENDING", "DELIVERED", "DEAD", "NEXT TRY (UTC)")),
    Column("LAST ERROR", shrink_to=10),
)


def webhooks_list(args: argparse.Namespace, app: App) -> int:
    summaries = app.endpoint_summaries()
    if args.json:
        return print_json([endpoint_json(e, app.endpoint_origin(e.name)) for e in summaries])
    rows = [
        (
            e.name,
            app.endpoint_origin(e.name),
            _endpoint_state(e),
            str(e.pending),
            str(e.delivered),
            str(e.dead),
            e.next_attempt_at.strftime(TIME_FORMAT) if e.next_attempt_at else "-",
            e.last_error or "-",
        )
        for e in summaries
    ]
    print_table(_COLUMNS, rows)
    return EXIT_OK


def webhooks_test(args: argparse.Namespace, app: App) -> int:
    endpoint = next(
        (e for e in app.endpoints.values() if args.target in (e.name, e.spec.url)), None
    )
    if endpoint is None:
        raise NotFoundError(f"no configured webhook named or at {args.target!r}")
    format = endpoint.spec.format
    if format == DeliveryFormat.APPRISE:
        return _notify_test(endpoint, app)
    msg_id, body = test_body(datetime.now(UTC))
    if format != DeliveryFormat.STANDARD:
        body = sample_body(format, public_url=app.settings.http.public_url)
    allowed = app.settings.delivery.allow_destinations
    with WebhookSender(timeout=endpoint.timeout, allow_destinations=allowed) as sender:
        result = sender.send(endpoint.spec.url, endpoint.secrets, msg_id, body, format=format)
    if result.outcome == "delivered" and format != DeliveryFormat.STANDARD:
        # A chat service's answer is short ("ok", or nothing): what users check.
        print(f"{endpoint.name}: delivered a sample {format} message (HTTP {result.status})")
        if result.answer:
            print(for_terminal(result.answer))  # a remote's words: no escape acts here
        return EXIT_OK
    if result.outcome == "delivered":
        print(f"{endpoint.name}: delivered {msg_id} (HTTP {result.status})")
        return EXIT_OK
    print(f"{endpoint.name}: {result.outcome}: {result.error or result.status}", file=sys.stderr)
    return EXIT_FAILURE


def _notify_test(endpoint: Endpoint, app: App) -> int:
    """``webhooks test`` for a [[notify]] target: Apprise says sent or not, and no more."""
    notifier = AppriseSender.allowing(app.settings.delivery.allow_destinations)
    msg_id, _ = test_body(datetime.now(UTC))
    public_url = app.settings.http.public_url
    result = notifier.send(
        endpoint.spec.url,
        endpoint.timeout,
        msg_id,
        lambda written_in: sample_notification(public_url=public_url, body_format=written_in),
    )
    if result.outcome == "delivered":
        print(f"{endpoint.name}: delivered a sample notification")
        return EXIT_OK
    print(f"{endpoint.name}: {result.outcome}: {result.error}", file=sys.stderr)
    return EXIT_FAILURE


def webhooks_redeliver(args: argparse.Namespace, app: App) -> int:
    queued = app.storage.outbox.redeliver(args.event_id, dead=args.dead)
    print(f"{counted(queued, 'delivery', 'deliveries')} queued")
    return EXIT_OK


def _endpoint_state(summary: EndpointSummary) -> str:
    if summary.disabled_at:
        return "disabled"
    return "active" if summary.active else "retired"
