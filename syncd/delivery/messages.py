"""Chat messages: the bodies POSTed to slack and discord endpoints, and Apprise's text.

Temporary stand-in with the shared signatures; helper "render" owns this module.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from syncd.storage.models import Event
from syncd.vocabulary import DeliveryFormat

__all__ = ["message_body", "notification", "sample_body"]


def message_body(
    format: DeliveryFormat, events: Sequence[Event], *, public_url: str | None
) -> bytes:
    """The JSON bytes POSTed to a slack or discord endpoint: one event, or a digest."""
    title, body = notification(events, public_url=public_url)
    if format == DeliveryFormat.DISCORD:
        payload: object = {"embeds": [{"title": title[:256], "description": body[:4096]}]}
    else:
        payload = {"text": f"{title}\n{body}"}
    return json.dumps(payload, ensure_ascii=False).encode()


def sample_body(format: DeliveryFormat, *, public_url: str | None) -> bytes:
    """The body `syncd webhooks test NAME` sends to a slack or discord endpoint: a sample change."""
    if format == DeliveryFormat.DISCORD:
        return json.dumps({"embeds": [{"title": "syncd webhook test"}]}).encode()
    return json.dumps({"text": "syncd webhook test"}).encode()


def notification(events: Sequence[Event], *, public_url: str | None) -> tuple[str, str]:
    """(title, body in Markdown) for Apprise: one event, or a cycle's digest."""
    title = (
        f"{len(events)} changes" if len(events) > 1 else f"{events[0].type} {events[0].arxiv_id}"
    )
    lines = [f"- {e.type} {e.paper_key} {e.arxiv_id or ''}".rstrip() for e in events]
    return title, "\n".join(lines)
