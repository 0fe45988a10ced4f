"""The bytes a webhook carries, and that its signatures cover.

Payload types apart from domain types: ``event_body`` turns a stored event
into the ``{"type", "timestamp", "data"}`` envelope of Standard Webhooks,
``digest_body`` a cycle's digest, and ``claim_body`` picks the body a claimed
delivery carries in its endpoint's format (chat formats: ``messages``).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from syncd.delivery.messages import message_body
from syncd.domain.model import Event
from syncd.domain.moments import utc_stamp
from syncd.domain.views import event_json
from syncd.domain.vocabulary import DeliveryFormat

if TYPE_CHECKING:
    # Only a type here: the body builders run without loading the database.
    from syncd.storage.models import Claim

__all__ = [
    "DIGEST_EVENT_TYPE",
    "TEST_EVENT_TYPE",
    "claim_body",
    "digest_body",
    "event_body",
    "test_body",
    "webhook_body",
]

TEST_EVENT_TYPE = "webhook.test"
DIGEST_EVENT_TYPE = "cycle.digest"


def webhook_body(event_type: str, data: dict[str, Any], timestamp: datetime) -> bytes:
    """The payload: compact UTF-8 JSON ``{"type", "timestamp", "data"}``; signatures cover it."""
    if timestamp.tzinfo is None:
        raise ValueError("webhook timestamps must be timezone-aware")
    # "Z", as in the Standard Webhooks payload example.
    payload = {"type": event_type, "timestamp": utc_stamp(timestamp), "data": data}
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def event_body(event: Event) -> bytes:
    """The payload of a stored event: its ``event_json`` shape as ``data``."""
    return webhook_body(event.type, event_json(event), event.created_at)


def digest_body(events: Sequence[Event]) -> bytes:
    """The payload of a cycle's digest: its events' ``event_json`` shapes, in order."""
    data = {"events": [event_json(event) for event in events]}
    return webhook_body(DIGEST_EVENT_TYPE, data, events[0].created_at)


def claim_body(claim: Claim, format: DeliveryFormat, *, public_url: str | None) -> bytes:
    """What a claimed delivery POSTs to an endpoint taking ``format``."""
    if format != DeliveryFormat.STANDARD:
        return message_body(format, claim.events, public_url=public_url)
    if claim.digest_id is not None:
        return digest_body(claim.events)
    return event_body(claim.events[0])


def test_body(now: datetime) -> tuple[str, bytes]:
    """A fresh message id (``msg_test_<hex>``) and the payload of a ``webhook.test`` event."""
    msg_id = f"msg_test_{uuid.uuid4().hex}"
    return msg_id, webhook_body(TEST_EVENT_TYPE, {"message": "syncd webhook test"}, now)


# Not a pytest test, although the name says so.
test_body.__test__ = False  # type: ignore[attr-defined]
