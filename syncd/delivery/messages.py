"""The messages chat endpoints receive: one event, or a cycle's digest.

``message_body`` is what a slack or discord ``[[webhooks]]`` endpoint is
POSTed (``syncd.delivery.slack``, ``syncd.delivery.discord`` build the
platform's JSON within its limits), ``sample_body`` what ``syncd webhooks
test`` sends it.  The text in them is rendered by ``syncd.render``, as the
feeds, the pages and Apprise's notifications (``syncd.render.notification``)
are, so a change reads the same everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from syncd.delivery.discord import discord_digest, discord_message
from syncd.delivery.slack import slack_digest, slack_message
from syncd.domain.model import Event
from syncd.domain.vocabulary import DeliveryFormat
from syncd.render.describe import describe, sample_event

__all__ = ["message_body", "sample_body"]


def message_body(
    format: DeliveryFormat, events: Sequence[Event], *, public_url: str | None
) -> bytes:
    """The JSON bytes POSTed to a slack or discord endpoint: one event, or a cycle's digest
    of many."""
    if not events:
        raise ValueError("a message needs at least one event")
    payload: dict[str, Any]
    if format == DeliveryFormat.SLACK:
        payload = (
            slack_message(describe(events[0], public_url=public_url))
            if len(events) == 1
            else slack_digest(events, public_url)
        )
    elif format == DeliveryFormat.DISCORD:
        payload = (
            discord_message(describe(events[0], public_url=public_url))
            if len(events) == 1
            else discord_digest(events, public_url)
        )
    else:
        raise ValueError(f"{format} endpoints are not sent chat messages")
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def sample_body(format: DeliveryFormat, *, public_url: str | None) -> bytes:
    """The body `syncd webhooks test NAME` sends to a slack or discord endpoint: a sample change."""
    return message_body(format, [sample_event(datetime.now(UTC))], public_url=public_url)
