"""Characters that act instead of showing: bidi formatting and C0/C1 controls.

An arXiv string may hold an unclosed U+202E (RIGHT-TO-LEFT OVERRIDE) or an
isolate opener such as U+2067, which reverses or reorders everything after
it up to the end of the paragraph: syncd's own words included.  Text targets
(chat messages, headlines) drop them; HTML isolates each arXiv string in
``<bdi>`` instead (``syncd.render.html``).  A terminal also obeys C0 and C1
controls (ANSI escapes recolour, move, retitle), so the CLI shows none.
"""

from __future__ import annotations

import re

__all__ = ["for_terminal", "json_for_terminal", "without_bidi_controls"]

# UAX #9's explicit formatting characters: the marks (ALM, LRM, RLM), the
# embeddings and overrides (LRE RLE PDF LRO RLO), the isolates (LRI RLI FSI PDI).
_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_BIDI_CONTROLS = re.compile(f"[{_BIDI}]")
# What a terminal acts on: C0 (tab and line breaks too: they break a table's
# rows), DEL, C1, and the bidi controls.
_TERMINAL_CONTROLS = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
# JSON already escapes C0; these it would write as they are.
_JSON_UNESCAPED_CONTROLS = re.compile(f"[\x7f-\x9f{_BIDI}]")
REPLACEMENT = "\ufffd"


def without_bidi_controls(text: str) -> str:
    """``text`` without bidi formatting characters: it reorders nothing after it."""
    return _BIDI_CONTROLS.sub("", text)


def for_terminal(text: str) -> str:
    """``text`` with every control a terminal would obey shown as U+FFFD."""
    return _TERMINAL_CONTROLS.sub(REPLACEMENT, text)


def json_for_terminal(document: str) -> str:
    r"""A JSON ``document`` with DEL, C1 and bidi controls written as ``\uXXXX``: the
    same value, and nothing in it acts on a terminal.

    Outside its strings JSON holds only ASCII punctuation and whitespace, so
    every such character is inside a string, where the escape is valid.
    """
    return _JSON_UNESCAPED_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", document)
