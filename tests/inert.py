"""Checks that a chat message, a Markdown text or a mail's HTML holds nothing live but
syncd's own links: no mention, no markup from arXiv's or a source's strings, no bidi control.

Shared by the tests of the messages of every event type.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from typing import Any

# Unicode's bidi formatting characters (UAX #9): marks, embeddings, overrides, isolates.
BIDI_CONTROL = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
SLACK_LINK = re.compile(r"<https?://[^|<>\s]+\|[^<>]*>")
# syncd's own Markdown links, their labels' escapes read: to arXiv, to a DOI or to the pages here.
OWN_MARKDOWN_LINK = re.compile(
    r"\[[^\[\]]*\]\("
    r"(https://arxiv\.org/abs/|https://doi\.org/10\.|https://syncd\.example\.org/)"
    r"[^)\s]*\)"
)


def slack_texts(payload: dict[str, Any]) -> list[str]:
    """Every mrkdwn text of a Slack body, the fallback text first."""
    texts = [payload["text"]]
    for block in payload["blocks"]:
        for text in [block.get("text"), *block.get("elements", []), *block.get("fields", [])]:
            if text is not None and text["type"] == "mrkdwn":
                texts.append(text["text"])
    return texts


def discord_texts(payload: dict[str, Any]) -> list[str]:
    """Every text of a Discord body Discord renders as Markdown."""
    texts = [payload.get("content") or ""]
    for embed in payload["embeds"]:
        texts += [embed.get("title", ""), embed.get("description", "")]
        texts += [field["value"] for field in embed.get("fields", [])]
    return texts


def assert_slack_inert(payload: dict[str, Any]) -> None:
    """No ``<`` or ``>`` but syncd's own links; and, as Mattermost and Rocket.Chat show
    the texts as Markdown, nothing live there either; no bidi control anywhere."""
    assert not BIDI_CONTROL.search(json.dumps(payload, ensure_ascii=False))  # header included
    for text in slack_texts(payload):
        outside_links = SLACK_LINK.sub("", text)
        assert "<" not in outside_links and ">" not in outside_links, text
        for label in re.findall(r"\|([^<>]*)>", text):
            assert "<" not in label and ">" not in label
        assert_markdown_inert(outside_links)


def assert_discord_inert(payload: dict[str, Any]) -> None:
    """No mention Discord would parse, no link or markup but syncd's own."""
    assert payload["allowed_mentions"] == {"parse": []}
    for text in discord_texts(payload):
        assert_markdown_inert(text)


def assert_markdown_inert(text: str) -> None:
    """No mention and no link but syncd's own in ``text``, for every reader that takes it
    as Markdown (Discord, Mattermost, Rocket.Chat, Apprise's services).

    Mattermost turns Slack's ``<!channel>``, ``<!here>``, ``<!all>`` and
    ``<@U…>`` into mentions wherever they stand, escaped or not, so those
    must not appear at all.  Otherwise a backslash-escaped character is
    literal text (CommonMark, Discord): escapes are read first, as the
    platforms do (``\\<0`` is the text ``<0``).  What is left must open no
    ``<…>`` (autolinks, Discord's ``<@123>``, ``<t:…>``) and no link but
    syncd's own (``[x](y)``, or ``[x]`` with a ``[x]: y`` definition).  And
    no bidi control, which would reverse syncd's words after it.
    """
    assert not re.search(r"@(everyone|here|channel|all)", text), text
    assert not BIDI_CONTROL.search(text), text
    assert not re.search(r"<[!@#]", text), text
    unescaped = re.sub(r"\\.", "", text, flags=re.DOTALL)
    assert not re.search(r"<[\w!@#/:?&]", unescaped), text
    assert not re.search(r"\]\(|\]:", OWN_MARKDOWN_LINK.sub("", unescaped)), text


class _MailTags(HTMLParser):
    """Every tag and attribute name of an HTML text, and whether its nesting closes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()
        self.open: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes.update(name for name, _ in attrs)
        if tag != "hr":
            self.open.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.open.pop() == tag, tag


def assert_mail_html_inert(html: str) -> None:
    """Only the tags and attributes syncd writes in a mail, closed as opened; no bidi control."""
    parser = _MailTags()
    parser.feed(html)
    parser.close()
    assert parser.tags <= {"div", "p", "del", "ins", "span", "a", "hr"}, parser.tags
    assert parser.attributes <= {"style", "href"}, parser.attributes
    assert parser.open == []
    assert not BIDI_CONTROL.search(html)
