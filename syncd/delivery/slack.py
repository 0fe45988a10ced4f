"""Slack-format bodies (also Mattermost's and Rocket.Chat's incoming webhooks).

``{"text": <fallback>, "blocks": [...]}`` within Slack's limits: at most 50
blocks, a header's plain_text at most 150 characters, a section's text at
most 3,000, all text together under 40,000.  One event: a header (title and
arXiv id), a section naming what happened, the version and the kinds, the
word-level diff in mrkdwn (cut at a word, with a link to the whole change)
and a context with the links.  A digest: a header, one short section per
event while they fit, then ``…and K more``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from syncd.domain.model import Event
from syncd.render.describe import Described, describe
from syncd.render.mrkdwn import SLACK
from syncd.render.text import (
    PLAIN,
    cut_text,
    digest_title,
    full_change,
    headline_link,
    more_line,
    render_diffs,
    title_line,
)

__all__ = ["slack_digest", "slack_message"]

MAX_BLOCKS = 50
MAX_HEADER = 150
MAX_SECTION = 3000
MAX_TEXT = 40_000  # exclusive
# A headline (the fallback text, a digest's entry) has at most this many
# characters before escaping; a digest's entry, a diff of at most _DIGEST_DIFF
# more: at most about 1,600 in all.
_DIGEST_HEADLINE = 200
_DIGEST_DIFF = 400


def slack_message(described: Described) -> dict[str, Any]:
    """One event as a Slack message."""
    blocks = [
        _header(title_line(described, PLAIN, MAX_HEADER)),
        _section(SLACK.escape(described.summary)),
    ]
    if described.diffs:
        more = full_change(described, SLACK)
        blocks.append(_section(render_diffs(described.diffs, SLACK, MAX_SECTION, more)))
    if described.links:
        links = " · ".join(SLACK.link(link) for link in described.links)
        blocks.append({"type": "context", "elements": [_mrkdwn(links)]})
    # A headline keeps a title's whole part before its colon, however long: cut it.
    fallback = SLACK.escape(cut_text(described.headline, _DIGEST_HEADLINE))
    return {"text": fallback, "blocks": blocks}


def slack_digest(events: Sequence[Event], public_url: str | None) -> dict[str, Any]:
    """Many events as one Slack message: as many entries as fit, then ``…and K more``."""
    title = digest_title([name for event in events for name in event.names], len(events))
    blocks = [_header(PLAIN.escape(title))]
    used = 2 * len(title)  # the header and the fallback text
    more_room = len(more_line(len(events), SLACK, public_url))
    shown = 0
    for event in events:
        entry = _digest_entry(describe(event, public_url=public_url))
        last = shown == len(events) - 1
        # Unless this is the last event, leave a block and its text for "…and K more".
        if len(blocks) + 1 + (0 if last else 1) > MAX_BLOCKS:
            break
        if used + len(entry) + (0 if last else more_room) >= MAX_TEXT:
            break
        blocks.append(_section(entry))
        used += len(entry)
        shown += 1
    if shown < len(events):
        blocks.append(_section(more_line(len(events) - shown, SLACK, public_url)))
    return {"text": SLACK.escape(title), "blocks": blocks}


def _digest_entry(described: Described) -> str:
    headline = f"*{headline_link(described, SLACK, _DIGEST_HEADLINE)}*"
    if not described.diffs:
        return headline
    diff = render_diffs(described.diffs, SLACK, _DIGEST_DIFF, full_change(described, SLACK))
    return f"{headline}\n{diff}"


def _header(text: str) -> dict[str, Any]:
    return {"type": "header", "text": {"type": "plain_text", "text": text}}


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": _mrkdwn(text)}


def _mrkdwn(text: str) -> dict[str, str]:
    return {"type": "mrkdwn", "text": text}
