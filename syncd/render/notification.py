"""An Apprise notification's text: a title and a Markdown body, for one event or a digest.

Apprise hands one (title, body) to services of every kind (chat, mail,
push) and splits or cuts it per service; ``syncd.delivery.worker`` sends
``notification``, ``syncd webhooks test`` sends ``sample_notification``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from syncd.domain.model import Event
from syncd.render.describe import describe, sample_event
from syncd.render.markdown import MARKDOWN
from syncd.render.neutral import neutral
from syncd.render.text import (
    cut_text,
    digest_title,
    full_change,
    headline_link,
    more_line,
    render_diffs,
)

__all__ = ["notification", "sample_notification"]

# An Apprise notification's diff: services cap bodies differently (Apprise
# splits or cuts per service); Discord's 4,096 is among the smallest.
_NOTIFY_DIFF = 4000
# A digest notification lists this many events, each with a diff this long.
_NOTIFY_EVENTS = 50
_NOTIFY_HEADLINE = 200
_NOTIFY_ENTRY_DIFF = 400


def sample_notification(*, public_url: str | None) -> tuple[str, str]:
    """The (title, body) `syncd webhooks test NAME` sends an Apprise target: a sample change."""
    return notification([sample_event(datetime.now(UTC))], public_url=public_url)


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
    title = digest_title([name for event in events for name in event.names], len(events))
    return neutral(title), "\n\n".join(entries)
