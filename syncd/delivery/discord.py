"""Discord-format bodies: embeds within Discord's limits, and no mention that pings.

``{"embeds": [...], "allowed_mentions": {"parse": []}}``: at most 10 embeds,
an embed's title at most 256 characters and its description at most 4,096,
at most 25 fields, at most 6,000 characters over the message's embeds.  One
event: one embed (title and arXiv id, linking the abstract page; what
happened and the diff in Markdown, cut at a word with a link to the whole
change; version, kinds and author as fields; a colour by event type; the
event's time).  A digest: its title as the content, one short embed per
event while they fit, then one saying ``…and K more``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from syncd.domain.model import Event
from syncd.domain.vocabulary import AUTHOR_EVENTS, PUBLICATION_EVENTS, EventType
from syncd.render.describe import Described, describe
from syncd.render.markdown import MARKDOWN
from syncd.render.text import (
    digest_title,
    fit_text,
    full_change,
    more_line,
    render_diffs,
    title_line,
)

__all__ = ["discord_digest", "discord_message"]

MAX_EMBEDS = 10
MAX_TITLE = 256
MAX_DESCRIPTION = 4096
MAX_EMBED_TEXT = 6000
_COLOURS: dict[str, int] = {
    EventType.ADDED: 0x2EA043,  # green
    EventType.LINKED: 0x1F6FEB,  # blue
    EventType.REVISED: 0xD29922,  # amber
    EventType.REMOVED: 0xCF222E,  # red
    EventType.AUTHOR_ADDED: 0x8250DF,  # purple
    EventType.REVIEW_NEEDED: 0xBF8700,  # dark yellow: someone is asked to act
    EventType.PUBLISHED: 0x1B7C83,  # teal
    EventType.PUBLICATION_CHANGED: 0x1B7C83,
    EventType.CORRECTED: 0xBC4C00,  # orange
    EventType.RETRACTED: 0x82071E,  # dark red: the published version was taken back
}
# What no event's type colours: "…and K more", and a type without a colour of its own.
_NEUTRAL_COLOUR = 0x8B949E  # grey
# A withdrawn paper is greyed out, whatever the event.
_WITHDRAWN_COLOUR = _NEUTRAL_COLOUR
# An author's name in a field: far inside the field's 1,024.
_AUTHOR_CHARS = 200
# A digest's embed: a title of at most _DIGEST_TITLE and a description of at
# most _DIGEST_DIFF, so nine of them and "…and K more" stay within 6,000;
# unless the link to the whole change, which a cut description always keeps,
# is longer than _DIGEST_DIFF by itself (a long public_url): so the total is
# still counted as embeds are added.
_DIGEST_TITLE = 200
_DIGEST_DIFF = 400


def discord_message(described: Described) -> dict[str, Any]:
    """One event as a Discord message of one embed."""
    summary = MARKDOWN.escape(described.summary)
    room = MAX_DESCRIPTION - len(summary) - 2
    diff = render_diffs(described.diffs, MARKDOWN, room, full_change(described, MARKDOWN))
    description = f"{summary}\n\n{diff}" if diff else summary
    embed = _embed(described, title_line(described, MARKDOWN, MAX_TITLE), description)
    author = {
        "name": "Author",
        "value": fit_text(described.author, MARKDOWN, _AUTHOR_CHARS).strip() or "—",
        "inline": True,
    }
    # An author's event is about no paper, a publication event about no arXiv version:
    # neither has a version or a changed field to show.
    embed["fields"] = (
        [author]
        if described.event_type in AUTHOR_EVENTS | PUBLICATION_EVENTS
        else [
            {"name": "Version", "value": _version(described), "inline": True},
            {"name": "Changed", "value": ", ".join(described.kinds) or "—", "inline": True},
            author,
        ]
    )
    return {"embeds": [embed], "allowed_mentions": _no_mentions()}


def discord_digest(events: Sequence[Event], public_url: str | None) -> dict[str, Any]:
    """Many events as one Discord message: an embed per event while they fit, then
    ``…and K more``."""
    title = digest_title([name for event in events for name in event.names], len(events))
    embeds: list[dict[str, Any]] = []
    used = 0
    more_room = len(more_line(len(events), MARKDOWN, public_url=None))
    for event in events:
        described = describe(event, public_url=public_url)
        more = full_change(described, MARKDOWN)
        embed = _embed(
            described,
            fit_text(described.headline, MARKDOWN, _DIGEST_TITLE),
            render_diffs(described.diffs, MARKDOWN, _DIGEST_DIFF, more),
        )
        size = len(embed["title"]) + len(embed.get("description", ""))
        last = len(embeds) == len(events) - 1
        # Unless this is the last event, leave an embed and its title for "…and K more".
        if len(embeds) + 1 + (0 if last else 1) > MAX_EMBEDS:
            break
        if used + size + (0 if last else more_room) > MAX_EMBED_TEXT:
            break
        embeds.append(embed)
        used += size
    if len(embeds) < len(events):
        embeds.append(_more(len(events) - len(embeds), public_url))
    return {
        "content": MARKDOWN.strong(title),
        "embeds": embeds,
        "allowed_mentions": _no_mentions(),
    }


def _embed(described: Described, title: str, description: str) -> dict[str, Any]:
    embed: dict[str, Any] = {"title": title}
    if described.links:
        embed["url"] = described.links[0].url
    if description:
        embed["description"] = description
    embed["color"] = _colour(described)
    embed["timestamp"] = described.created_at.isoformat()
    return embed


def _more(count: int, public_url: str | None) -> dict[str, Any]:
    """The embed a cut digest ends with; its title links the events page here, if any."""
    embed: dict[str, Any] = {
        "title": more_line(count, MARKDOWN, public_url=None),
        "color": _NEUTRAL_COLOUR,
    }
    if public_url is not None:
        embed["url"] = f"{public_url}/events"
    return embed


def _no_mentions() -> dict[str, list[str]]:
    """Never parse a mention, whatever the text says: escaping is the first guard, this
    the second."""
    return {"parse": []}


def _colour(described: Described) -> int:
    if described.withdrawn:
        return _WITHDRAWN_COLOUR
    return _COLOURS.get(described.event_type, _NEUTRAL_COLOUR)


def _version(described: Described) -> str:
    return f"v{described.version}" if described.version is not None else "—"
