"""The messages chat endpoints and Apprise targets receive: one event, or a cycle's digest.

``message_body`` is what a slack or discord ``[[webhooks]]`` endpoint is
POSTed (``syncd.delivery.slack``, ``syncd.delivery.discord``), ``sample_body``
what ``syncd webhooks test`` sends it, ``notification`` the title and
Markdown body of an Apprise notification (``sample_notification`` the test's).  All render through
``syncd.rendering.describe`` and ``syncd.messages_text``, as the feeds and
pages do, so a change reads the same everywhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from syncd.delivery.discord import discord_digest, discord_message
from syncd.delivery.slack import slack_digest, slack_message
from syncd.domain.model import Event
from syncd.domain.record import Record
from syncd.domain.vocabulary import DeliveryFormat, EventType
from syncd.messages_text import (
    MARKDOWN,
    cut_text,
    digest_title,
    full_change,
    headline_link,
    more_line,
    neutral,
    render_diffs,
)
from syncd.rendering import describe

__all__ = ["message_body", "notification", "sample_body", "sample_notification"]

# An Apprise notification's diff: services cap bodies differently (Apprise
# splits or cuts per service); Discord's 4,096 is among the smallest.
_NOTIFY_DIFF = 4000
# A digest notification lists this many events, each with a diff this long.
_NOTIFY_EVENTS = 50
_NOTIFY_HEADLINE = 200
_NOTIFY_ENTRY_DIFF = 400
# The sample change `syncd webhooks test` sends.
_SAMPLE_ID = "2401.00001"
_SAMPLE_TITLE = "A sample paper: syncd's test message with a revised title"
_SAMPLE_AUTHOR = "Ada Lovelace"


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
    return message_body(format, [_sample_event(datetime.now(UTC))], public_url=public_url)


def sample_notification(*, public_url: str | None) -> tuple[str, str]:
    """The (title, body) `syncd webhooks test NAME` sends an Apprise target: a sample change."""
    return notification([_sample_event(datetime.now(UTC))], public_url=public_url)


def notification(events: Sequence[Event], *, public_url: str | None) -> tuple[str, str]:
    """(title, body in Markdown) for Apprise: one event, or a cycle's digest.

    The title is only made ``neutral``, not Markdown-escaped: some services
    show it as plain text (a mail's subject), where backslashes would show.
    """
    if not events:
        raise ValueError("a notification needs at least one event")
    if len(events) == 1:
        described = describe(events[0], public_url=public_url)
        more = full_change(described, MARKDOWN)
        parts = [
            MARKDOWN.escape(described.summary),
            render_diffs(described.diffs, MARKDOWN, _NOTIFY_DIFF, more),
            " · ".join(MARKDOWN.link(link) for link in described.links),
        ]
        title = neutral(cut_text(described.headline, _NOTIFY_HEADLINE))
        return title, "\n\n".join(p for p in parts if p)
    entries = []
    for event in events[:_NOTIFY_EVENTS]:
        described = describe(event, public_url=public_url)
        more = full_change(described, MARKDOWN)
        headline = f"**{headline_link(described, MARKDOWN, _NOTIFY_HEADLINE)}**"
        diff = render_diffs(described.diffs, MARKDOWN, _NOTIFY_ENTRY_DIFF, more)
        entries.append(f"{headline}\n{diff}" if diff else headline)
    if len(events) > _NOTIFY_EVENTS:
        entries.append(more_line(len(events) - _NOTIFY_EVENTS, MARKDOWN, public_url))
    title = digest_title([event.author for event in events], len(events))
    return neutral(title), "\n\n".join(entries)


def _sample_event(now: datetime) -> Event:
    """A made-up change a person recognises as a sample: a paper's v2 with a new title."""
    record = Record(arxiv_id=_SAMPLE_ID, version=2, title=_SAMPLE_TITLE, authors=(_SAMPLE_AUTHOR,))
    changes = {
        "version": {"old": 1, "new": 2},
        "title": {"old": "A sample paper: syncd's test message", "new": _SAMPLE_TITLE},
    }
    return Event(
        seq=0,
        id="evt_sample",
        type=EventType.REVISED,
        created_at=now,
        author=_SAMPLE_AUTHOR,
        paper_key=_SAMPLE_ID,
        arxiv_id=_SAMPLE_ID,
        kinds=("version", "title"),
        changes=changes,
        record=record,
    )
