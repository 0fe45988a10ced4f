"""An Apprise notification: a title and a body in its service's format, for events.

Apprise hands one (title, body) to services of every kind (chat, mail,
push) and splits or cuts it per service; the body is written in the format
the service reads (``BodyFormat``): Markdown where it renders Markdown,
HTML for e-mail (``syncd.render.email``), plain text otherwise.
``syncd.delivery.worker`` sends ``notification``, ``syncd webhooks test``
sends ``sample_notification``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime
from enum import StrEnum

from syncd.domain.model import Event
from syncd.render.describe import describe, sample_event
from syncd.render.email import email_html
from syncd.render.markdown import MARKDOWN
from syncd.render.neutral import neutral
from syncd.render.text import (
    PLAIN,
    TextStyle,
    cut_text,
    digest_title,
    full_change,
    headline_link,
    more_line,
    render_diffs,
)

__all__ = ["BodyFormat", "notification", "sample_notification"]


class BodyFormat(StrEnum):
    """The formats a notification's body is written in: Apprise's names for them."""

    MARKDOWN = "markdown"
    HTML = "html"
    TEXT = "text"


# An Apprise notification's diff: services cap bodies differently (Apprise
# splits or cuts per service); Discord's 4,096 is among the smallest.
_NOTIFY_DIFF = 4000
# A digest notification lists this many events, each with a diff this long.
_NOTIFY_EVENTS = 50
_NOTIFY_HEADLINE = 200
_NOTIFY_ENTRY_DIFF = 400


# Plain text for services that show text as it is: ``PLAIN``'s marks, made ``neutral``
# (some such services still turn an @name into a mention).
_TEXT = replace(PLAIN, escape=neutral)


def sample_notification(
    *, public_url: str | None, body_format: BodyFormat = BodyFormat.MARKDOWN
) -> tuple[str, str]:
    """The (title, body) `syncd webhooks test NAME` sends an Apprise target: a sample change."""
    return notification(
        [sample_event(datetime.now(UTC))], public_url=public_url, body_format=body_format
    )


def notification(
    events: Sequence[Event],
    *,
    public_url: str | None,
    body_format: BodyFormat = BodyFormat.MARKDOWN,
) -> tuple[str, str]:
    """(title, body in ``body_format``) for Apprise: one event, or a cycle's digest.

    The title is only made ``neutral``, not escaped: services show it as
    plain text (a mail's subject), where backslashes would show.
    """
    if not events:
        raise ValueError("a notification needs at least one event")
    if len(events) == 1:
        title = cut_text(describe(events[0], public_url=public_url).headline, _NOTIFY_HEADLINE)
    else:
        title = digest_title([name for event in events for name in event.names], len(events))
    if body_format == BodyFormat.HTML:
        return neutral(title), email_html(events, public_url=public_url)
    style = MARKDOWN if body_format == BodyFormat.MARKDOWN else _TEXT
    return neutral(title), _text_body(events, style, public_url)


def _text_body(events: Sequence[Event], style: TextStyle, public_url: str | None) -> str:
    """The body in Markdown or plain text: one event's change whole, or a digest's entries."""
    if len(events) == 1:
        described = describe(events[0], public_url=public_url)
        more = full_change(described, style)
        parts = [
            style.escape(described.summary),
            render_diffs(described.diffs, style, _NOTIFY_DIFF, more),
            " · ".join(style.link(link) for link in described.links),
        ]
        return "\n\n".join(p for p in parts if p)
    entries = []
    for event in events[:_NOTIFY_EVENTS]:
        described = describe(event, public_url=public_url)
        more = full_change(described, style)
        bold_open, bold_close = style.bold
        headline = f"{bold_open}{headline_link(described, style, _NOTIFY_HEADLINE)}{bold_close}"
        diff = render_diffs(described.diffs, style, _NOTIFY_ENTRY_DIFF, more)
        entries.append(f"{headline}\n{diff}" if diff else headline)
    if len(events) > _NOTIFY_EVENTS:
        entries.append(more_line(len(events) - _NOTIFY_EVENTS, style, public_url))
    return "\n\n".join(entries)
