"""What every text target does to a string last: it mentions nobody and links nowhere.

A text is read by more than the platform it was written for.  Mattermost
and Rocket.Chat show a Slack body's ``text`` as Markdown and act on
``@channel``, ``@here``, ``@all`` and ``[x](y)`` in it; Mattermost turns
``<!channel>`` and ``<@U…>`` into mentions wherever they stand, even
backslash-escaped; Apprise titles go to plain-text and Markdown services
alike.  So a zero-width space follows every ``@``, ``<`` and ``]``: after it
no ``@`` names anyone, no ``<`` opens a mention or an autolink, and no ``]``
meets the ``(`` or ``:`` of a link, on any of them, and the text reads the
same.  Bidi controls (an unclosed U+202E would reverse syncd's words after
it) are dropped too (``syncd.textcontrols``).
"""

from __future__ import annotations

from syncd.domain.textcontrols import without_bidi_controls

__all__ = ["ZERO_WIDTH_SPACE", "neutral"]

ZERO_WIDTH_SPACE = "\u200b"
_NEUTRAL = str.maketrans({c: f"{c}{ZERO_WIDTH_SPACE}" for c in "@<]"})


def neutral(text: str) -> str:
    """``text`` with a zero-width space after every ``@``, ``<`` and ``]`` and without bidi
    controls: it mentions nobody, links nowhere and reorders none of syncd's words on
    Slack, Mattermost, Rocket.Chat or Discord, and reads the same."""
    return without_bidi_controls(text).translate(_NEUTRAL)
