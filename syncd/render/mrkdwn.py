"""Slack's mrkdwn: ``~removed~`` and ``*added*``, and Slack's escaping.

``&``, ``<`` and ``>`` become entities, so ``<!channel>`` and
``<http://evil|click>`` are inert text; ``*``, ``_``, ``~`` and a backtick
get a zero-width space on each side, so they cannot open or close
formatting and the text still reads the same.  Then the text is made
``neutral`` (Mattermost and Rocket.Chat read the same body as Markdown).
"""

from __future__ import annotations

from syncd.render.describe import Link
from syncd.render.neutral import ZERO_WIDTH_SPACE, neutral
from syncd.render.text import TextStyle

__all__ = ["SLACK"]

_SLACK_ESCAPES = str.maketrans(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
    | {c: f"{ZERO_WIDTH_SPACE}{c}{ZERO_WIDTH_SPACE}" for c in "*_~`"}
)


def _slack_escape(text: str) -> str:
    return neutral(text.translate(_SLACK_ESCAPES))


def _slack_link(link: Link) -> str:
    url = link.url.replace("&", "&amp;").replace("<", "%3C").replace(">", "%3E")
    return f"<{url.replace('|', '%7C')}|{_slack_escape(link.label)}>"


SLACK = TextStyle(_slack_escape, ("~", "~"), ("*", "*"), ("*", "*"), _slack_link)
