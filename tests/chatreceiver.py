"""Loopback receivers shaped like Slack's and Discord's incoming webhooks.

They answer as the platforms do and check every body against the platforms'
published limits, independently of syncd's own renderer, so an integration
test that sends an oversized or malformed message sees the refusal a real
channel would give::

    from tests.chatreceiver import DiscordReceiver, SlackReceiver

    with SlackReceiver() as slack:
        slack.fail_with("channel_is_archived")    # the first POST gets 410
        slack.rate_limit(retry_after=3)           # the second 429 with Retry-After
        ...  # send to slack.url
        assert slack.wait_for(1, timeout=5)       # one accepted message (200 "ok")

A body within the limits is ``verified`` (``Received.error`` is ``None``); one
that breaks a limit is answered like the platform (Slack: 400 ``invalid_blocks``,
Discord: 400 with its JSON error) without using up a scripted response, and
``Received.error`` says which limit.  ``respond_with``, ``always``, ``go_down``
and ``come_up`` work as on ``tests.receiver.Receiver``.

Limits, as the platforms document them (characters are code points):
Slack (api.slack.com/reference/block-kit): at most 50 blocks; a header's
plain_text at most 150; a section's text at most 3,000, its fields at most 10
of 2,000 each; a context at most 10 elements; all text together under 40,000.
Discord (discord.com/developers/docs/resources/message#embed-object-embed-limits):
content at most 2,000; at most 10 embeds; title 256, description 4,096, 25
fields (name 256, value 1,024), footer 2,048, author name 256; all those
together at most 6,000 over the message's embeds.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from tests.receiver import Answer, Receiver

__all__ = [
    "DiscordReceiver",
    "SlackReceiver",
    "discord_problem",
    "slack_problem",
]

# Slack's plain-text error codes and the status each comes with.
SLACK_ERRORS = {
    "invalid_payload": 400,
    "no_text": 400,
    "invalid_blocks": 400,
    "action_prohibited": 403,
    "invalid_token": 403,
    "no_service": 404,
    "channel_not_found": 404,
    "channel_is_archived": 410,
    "rate_limited": 429,
    "internal_error": 500,
}
_SLACK_MAX_BLOCKS = 50
_SLACK_MAX_HEADER = 150
_SLACK_MAX_SECTION = 3000
_SLACK_MAX_FIELDS = 10
_SLACK_MAX_FIELD = 2000
_SLACK_MAX_CONTEXT_ELEMENTS = 10
_SLACK_MAX_TOTAL = 40_000  # exclusive: "under 40,000"
_SLACK_TEXT_TYPES = ("plain_text", "mrkdwn")

_DISCORD_MAX_CONTENT = 2000
_DISCORD_MAX_EMBEDS = 10
_DISCORD_MAX_TOTAL = 6000
_DISCORD_MAX_FIELDS = 25
_DISCORD_MAX_COLOR = 0xFFFFFF
# (where in an embed, its limit); each counts towards the 6,000 of the message.
_DISCORD_TEXTS = (
    (("title",), 256),
    (("description",), 4096),
    (("footer", "text"), 2048),
    (("author", "name"), 256),
)
_DISCORD_MENTION_KINDS = {"roles", "users", "everyone"}


class SlackReceiver(Receiver):
    """A Slack incoming webhook on 127.0.0.1: 200 ``ok``, plain-text error codes."""

    def __init__(self) -> None:
        super().__init__(())
        self.always(200)

    def fail_with(self, code: str, *, times: int = 1) -> None:
        """Answer the next ``times`` POSTs with Slack's error ``code`` and its status."""
        self.respond_with(SLACK_ERRORS[code], times=times, body=code.encode())

    def rate_limit(self, retry_after: float, *, times: int = 1) -> None:
        """Answer the next ``times`` POSTs 429 with ``Retry-After`` (seconds)."""
        self.respond_with(429, times=times, retry_after=retry_after, body=b"rate_limited")

    def _verify(self, body: bytes, headers: dict[str, str]) -> str | None:
        return slack_problem(body)

    def _rejection(self, error: str) -> Answer:
        code = error.partition(":")[0]
        return Answer(SLACK_ERRORS[code], body=code.encode())


class DiscordReceiver(Receiver):
    """A Discord webhook on 127.0.0.1: 204 on success, JSON errors."""

    def __init__(self) -> None:
        super().__init__(())

    def fail_with(self, code: int, message: str, *, status: int = 400, times: int = 1) -> None:
        """Answer the next ``times`` POSTs ``status`` with Discord's JSON error."""
        self.respond_with(
            status, times=times, body=_json({"code": code, "message": message}), headers=_JSON
        )

    def rate_limit(
        self,
        retry_after: float,
        *,
        header: bool = True,
        body: bool = True,
        is_global: bool = False,
        times: int = 1,
    ) -> None:
        """Answer the next ``times`` POSTs 429, saying ``retry_after`` (float seconds)
        in the JSON body and/or the ``Retry-After`` header, as Discord does."""
        payload = {
            "message": "You are being rate limited.",
            "retry_after": retry_after,
            "global": is_global,
        }
        self.respond_with(
            429,
            times=times,
            retry_after=retry_after if header else None,
            body=_json(payload) if body else b"",
            headers=_JSON,
        )

    def _verify(self, body: bytes, headers: dict[str, str]) -> str | None:
        return discord_problem(body)

    def _rejection(self, error: str) -> Answer:
        code = 50006 if error.startswith("empty") else 50035
        message = "Cannot send an empty message" if code == 50006 else "Invalid Form Body"
        answer = {"code": code, "message": message, "errors": {"detail": error}}
        return Answer(400, body=_json(answer), headers=_JSON)


_JSON = {"Content-Type": "application/json"}


def _json(value: Any) -> bytes:
    return json.dumps(value).encode()


# ---- Slack's limits


def slack_problem(body: bytes) -> str | None:
    """``None`` for a body Slack would post, else ``"<error code>: <which limit>"``."""
    try:
        _check_slack(_json_object(body, "invalid_payload"))
    except _Refused as refused:
        return str(refused)
    return None


def _check_slack(payload: dict[str, Any]) -> None:
    text, blocks = payload.get("text"), payload.get("blocks")
    if text is not None and not isinstance(text, str):
        raise _Refused("invalid_payload: text is not a string")
    if not text and not blocks:
        raise _Refused("no_text: neither text nor blocks")
    blocks = blocks or []
    if not isinstance(blocks, list):
        raise _Refused("invalid_blocks: blocks is not a list")
    if len(blocks) > _SLACK_MAX_BLOCKS:
        raise _Refused(f"invalid_blocks: {len(blocks)} blocks > {_SLACK_MAX_BLOCKS}")
    total = len(text or "")
    for index, block in enumerate(blocks):
        try:
            total += sum(_slack_block_texts(block))
        except ValueError as exc:
            raise _Refused(f"invalid_blocks: block {index}: {exc}") from None
    if total >= _SLACK_MAX_TOTAL:
        raise _Refused(f"invalid_blocks: {total} characters of text, not under {_SLACK_MAX_TOTAL}")


class _Refused(Exception):
    """A body the platform would refuse; the message says why, its code first."""


def _json_object(body: bytes, code: str) -> dict[str, Any]:
    try:
        payload = json.loads(body)
    except ValueError:
        raise _Refused(f"{code}: not JSON") from None
    if not isinstance(payload, dict):
        raise _Refused(f"{code}: not a JSON object")
    return payload


def _slack_block_texts(block: Any) -> Iterator[int]:
    """The length of each text in ``block``; ``ValueError`` naming a broken limit."""
    if not isinstance(block, dict):
        raise ValueError("not an object")
    kind = block.get("type")
    if kind == "header":
        yield _slack_text(block.get("text"), _SLACK_MAX_HEADER, plain_only=True)
    elif kind == "section":
        text, fields = block.get("text"), block.get("fields")
        if text is None and not fields:
            raise ValueError("a section needs text or fields")
        if text is not None:
            yield _slack_text(text, _SLACK_MAX_SECTION)
        fields = fields or []
        if not isinstance(fields, list) or len(fields) > _SLACK_MAX_FIELDS:
            raise ValueError(f"fields: at most {_SLACK_MAX_FIELDS}")
        for field in fields:
            yield _slack_text(field, _SLACK_MAX_FIELD)
    elif kind == "context":
        elements = block.get("elements")
        if not isinstance(elements, list) or not 1 <= len(elements) <= 10:
            raise ValueError(f"context: 1 to {_SLACK_MAX_CONTEXT_ELEMENTS} elements")
        for element in elements:
            yield _slack_text(element, _SLACK_MAX_SECTION)
    elif kind != "divider":
        raise ValueError(f"unknown block type {kind!r}")


def _slack_text(value: Any, limit: int, *, plain_only: bool = False) -> int:
    if not isinstance(value, dict):
        raise ValueError("a text object is missing")
    kind, text = value.get("type"), value.get("text")
    allowed = ("plain_text",) if plain_only else _SLACK_TEXT_TYPES
    if kind not in allowed:
        raise ValueError(f"text type {kind!r} not one of {allowed}")
    if not isinstance(text, str) or not text:
        raise ValueError("empty text")
    if len(text) > limit:
        raise ValueError(f"{kind} text of {len(text)} characters > {limit}")
    return len(text)


# ---- Discord's limits


def discord_problem(body: bytes) -> str | None:
    """``None`` for a body Discord would post, else ``"empty: ..."`` or ``"form: ..."``."""
    try:
        _check_discord(_json_object(body, "form"))
    except _Refused as refused:
        return str(refused)
    return None


def _check_discord(payload: dict[str, Any]) -> None:
    content, embeds = payload.get("content"), payload.get("embeds")
    if content is not None and (
        not isinstance(content, str) or len(content) > _DISCORD_MAX_CONTENT
    ):
        raise _Refused(f"form: content is not a string of at most {_DISCORD_MAX_CONTENT}")
    if not content and not embeds:
        raise _Refused("empty: neither content nor embeds")
    embeds = embeds or []
    if not isinstance(embeds, list) or len(embeds) > _DISCORD_MAX_EMBEDS:
        raise _Refused(f"form: embeds is not a list of at most {_DISCORD_MAX_EMBEDS}")
    problem = _allowed_mentions_problem(payload.get("allowed_mentions"))
    if problem is not None:
        raise _Refused(f"form: {problem}")
    total = 0
    for index, embed in enumerate(embeds):
        try:
            total += _discord_embed_size(embed)
        except ValueError as exc:
            raise _Refused(f"form: embeds[{index}]: {exc}") from None
    if total > _DISCORD_MAX_TOTAL:
        raise _Refused(f"form: embeds hold {total} characters > {_DISCORD_MAX_TOTAL}")


def _allowed_mentions_problem(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        return "allowed_mentions is not an object"
    parse = value.get("parse", [])
    if not isinstance(parse, list) or not set(parse) <= _DISCORD_MENTION_KINDS:
        return f"allowed_mentions.parse is not a list of {sorted(_DISCORD_MENTION_KINDS)}"
    return None


def _discord_embed_size(embed: Any) -> int:
    """The characters ``embed`` counts towards the message's 6,000; ``ValueError`` if broken."""
    if not isinstance(embed, dict):
        raise ValueError("not an object")
    size = 0
    for path, limit in _DISCORD_TEXTS:
        value: Any = embed
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if value is None:
            continue
        size += _discord_text(".".join(path), value, limit)
    fields = embed.get("fields") or []
    if not isinstance(fields, list) or len(fields) > _DISCORD_MAX_FIELDS:
        raise ValueError(f"fields is not a list of at most {_DISCORD_MAX_FIELDS}")
    for field in fields:
        if not isinstance(field, dict):
            raise ValueError("a field is not an object")
        size += _discord_text("fields.name", field.get("name"), 256, required=True)
        size += _discord_text("fields.value", field.get("value"), 1024, required=True)
    color = embed.get("color")
    if color is not None and not (isinstance(color, int) and 0 <= color <= _DISCORD_MAX_COLOR):
        raise ValueError(f"color {color!r} is not an integer 0 to 0xFFFFFF")
    url = embed.get("url")
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise ValueError(f"url {url!r} is not an http(s) URL")
    timestamp = embed.get("timestamp")
    if timestamp is not None:
        try:
            datetime.fromisoformat(timestamp)
        except (TypeError, ValueError):
            raise ValueError(f"timestamp {timestamp!r} is not ISO 8601") from None
    return size


def _discord_text(name: str, value: Any, limit: int, *, required: bool = False) -> int:
    if not isinstance(value, str):
        raise ValueError(f"{name} is not a string")
    if required and not value.strip():
        raise ValueError(f"{name} is empty")
    if len(value) > limit:
        raise ValueError(f"{name} of {len(value)} characters > {limit}")
    return len(value)
