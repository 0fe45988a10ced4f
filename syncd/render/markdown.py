"""Markdown (Discord, Apprise): ``~~removed~~`` and ``**added**``, and its escaping.

The characters that open formatting, links, quotes or headings are
backslash-escaped, then the text is made ``neutral`` (Discord bodies also
say ``allowed_mentions: {"parse": []}``).
"""

from __future__ import annotations

from urllib.parse import quote

from syncd.render.describe import Link
from syncd.render.neutral import neutral
from syncd.render.text import TextStyle

__all__ = ["MARKDOWN"]

# CommonMark lets any ASCII punctuation be backslash-escaped; these are the
# ones that open emphasis, code, spoilers, quotes, headings, links (a link
# needs its brackets: parentheses alone are text) or Discord's <@mentions>,
# <#channels> and <t:timestamps>.
_MARKDOWN_ESCAPES = str.maketrans({c: f"\\{c}" for c in "\\*_~`|>#[]<"})
# What may stay unquoted in a link's target: neither parentheses nor spaces,
# which would end a Markdown link early.
_URL_SAFE = ":/?#@!$&'*+,;=%~-._"


def _markdown_escape(text: str) -> str:
    escaped = neutral(text.translate(_MARKDOWN_ESCAPES))
    # A line starting "- " or "+ " would be a list item.
    return f"\\{escaped}" if escaped[:1] in ("-", "+") else escaped


def _markdown_link(link: Link) -> str:
    return f"[{_markdown_escape(link.label)}]({quote(link.url, safe=_URL_SAFE)})"


MARKDOWN = TextStyle(_markdown_escape, ("~~", "~~"), ("**", "**"), ("**", "**"), _markdown_link)
