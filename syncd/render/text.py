"""A described change as chat text: the text styles' common part, and plain text.

``syncd.render.describe`` describes a change once, as lines of segments; a
``TextStyle`` renders those segments with a target's own marks and its own
escaping, applied to every string that came from arXiv or a seed document:
``PLAIN`` here (``[-removed-]`` and ``{+added+}``, bidi controls dropped),
``syncd.render.mrkdwn.SLACK`` and ``syncd.render.markdown.MARKDOWN``.

Chat platforms cap their texts, so ``render_diffs`` renders up to a length
and, when the diff is longer, cuts it at a word and ends it with a mark
(``…`` and a link).  It stops rendering at the cut: a long abstract costs no
more than the part shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from syncd.domain.textcontrols import without_bidi_controls
from syncd.render.describe import Described, Link
from syncd.render.field_diffs import FieldDiff, Segment

__all__ = [
    "PLAIN",
    "TextStyle",
    "cut_text",
    "digest_title",
    "fit_text",
    "full_change",
    "headline_link",
    "more_line",
    "render_diffs",
    "title_line",
]

ELLIPSIS = "…"
# A digest's title fits a Slack header (150) with room to spare.
_DIGEST_TITLE_CHARS = 140


@dataclass(frozen=True, slots=True)
class TextStyle:
    """How a target writes text: its escaping, its marks (open, close), its links."""

    escape: Callable[[str], str]
    removed: tuple[str, str]
    added: tuple[str, str]
    bold: tuple[str, str]
    link: Callable[[Link], str]

    def segment(self, segment: Segment) -> str:
        """``segment`` escaped and, when removed or added, marked."""
        return self.mark(segment, self.escape(segment.text))

    def strong(self, text: str) -> str:
        """``text`` escaped, in bold."""
        return f"{self.bold[0]}{self.escape(text)}{self.bold[1]}"

    def mark(self, segment: Segment, escaped: str) -> str:
        """``escaped`` (the text of ``segment``, escaped) marked as ``segment``'s kind."""
        if segment.kind in ("text", "own"):
            return escaped
        opening, closing = self.removed if segment.kind == "removed" else self.added
        return f"{opening}{escaped}{closing}"


def _plain_link(link: Link) -> str:
    return f"{link.label}: {link.url}"


PLAIN = TextStyle(without_bidi_controls, ("[-", "-]"), ("{+", "+}"), ("", ""), _plain_link)

# A run of output: its rendered text and, when it may be cut at a word, its segment.
_Run = tuple[str, Segment | None]


def render_diffs(diffs: Sequence[FieldDiff], style: TextStyle, limit: int, more: str) -> str:
    """``diffs`` in ``style``, one field after another under its label, at most ``limit``
    characters; a longer rendering is cut at a word and ends with `` …`` and ``more``."""
    return _fitted(_diff_runs(diffs, style), style, limit, f" {ELLIPSIS}{more}")


def fit_text(text: str, style: TextStyle, limit: int) -> str:
    """``text`` escaped in ``style``, at most ``limit`` characters: cut at a word and
    ended with `` …`` when longer."""
    return _fitted(
        iter([(style.escape(text), Segment("text", text))]), style, limit, f" {ELLIPSIS}"
    )


def title_line(described: Described, style: TextStyle, limit: int) -> str:
    """``Title (2401.00001)`` in at most ``limit`` characters: the title is cut, the id kept."""
    suffix = style.escape(f" ({described.arxiv_id})") if described.arxiv_id else ""
    return fit_text(described.title, style, limit - len(suffix)) + suffix


def headline_link(described: Described, style: TextStyle, limit: int) -> str:
    """The headline, cut to ``limit`` characters, linking the paper's first link if any."""
    label = cut_text(described.headline, limit)
    if not described.links:
        return style.escape(label)
    return style.link(Link(label, described.links[0].url))


def full_change(described: Described, style: TextStyle) -> str:
    """What a cut diff ends with: a link to the whole change (the page here, else arXiv's)."""
    if not described.links:
        return ""
    return " " + style.link(Link("full change", described.links[-1].url))


def digest_title(authors: Sequence[str], count: int) -> str:
    """``3 changes to Ada Lovelace's papers`` (plain text, to be escaped)."""
    changes = "1 change" if count == 1 else f"{count} changes"
    distinct = set(authors)
    whose = f"{authors[0]}'s" if len(distinct) == 1 else "tracked"
    return cut_text(f"{changes} to {whose} papers", _DIGEST_TITLE_CHARS)


def more_line(count: int, style: TextStyle, public_url: str | None) -> str:
    """``…and 12 more``, linking the events page here when there is one."""
    more = f"{ELLIPSIS}and {count} more"
    if public_url is None:
        return more
    return f"{more}: {style.link(Link('all changes', f'{public_url}/events'))}"


def cut_text(text: str, limit: int) -> str:
    """``text`` if it has at most ``limit`` characters, else cut at a word and ended with ``…``."""
    if len(text) <= limit:
        return text
    head = text[: limit - len(ELLIPSIS)]
    space = head.rfind(" ")
    return (head[:space] if space > 0 else head).rstrip() + ELLIPSIS


def _diff_runs(diffs: Sequence[FieldDiff], style: TextStyle) -> Iterator[_Run]:
    for number, diff in enumerate(diffs):
        yield (("\n" if number else "") + style.strong(diff.label) + "\n", None)
        for index, line in enumerate(diff.lines):
            if index:
                yield "\n", None
            if diff.listed:
                yield "• ", None
            for segment in line:
                yield style.segment(segment), segment


def _fitted(runs: Iterator[_Run], style: TextStyle, limit: int, tail: str) -> str:
    """The runs joined, when they fit in ``limit``; else as many as fit with ``tail`` after.

    Rendering stops at the first run that does not fit, so the cost is
    bounded by ``limit`` and one run, not by everything ``runs`` could give.
    """
    kept: list[_Run] = []
    used = 0
    for run in runs:
        if used + len(run[0]) > limit:
            break
        kept.append(run)
        used += len(run[0])
    else:
        return "".join(text for text, _ in kept)
    room = limit - len(tail)
    while kept and used > room:  # give back what the tail needs; the last run may be cut
        text, _ = run = kept.pop()
        used -= len(text)
    partial = _cut_run(run[1], style, room - used)
    return ("".join(text for text, _ in kept) + partial).rstrip() + tail


def _cut_run(segment: Segment | None, style: TextStyle, room: int) -> str:
    """As many of ``segment``'s words as fit in ``room``, marked as the whole segment was;
    nothing for a run that is not a segment.

    A first word too long for ``room`` is cut between characters instead.
    """
    room -= len(style.segment(Segment(segment.kind, ""))) if segment is not None else 0
    if segment is None or room <= 0:
        return ""
    words: list[str] = []
    used = 0
    for word in segment.text.split(" "):
        escaped = style.escape(word)
        if used + len(escaped) + (1 if words else 0) > room:
            break
        used += len(escaped) + (1 if words else 0)
        words.append(escaped)
    if not words:
        words = [_cut_word(segment.text, style, room)]
    return style.mark(segment, " ".join(words)) if words[0] else ""


def _cut_word(text: str, style: TextStyle, room: int) -> str:
    """The longest start of ``text`` whose escaped characters fit in ``room``."""
    characters: list[str] = []
    used = 0
    for character in text:
        escaped = style.escape(character)
        if used + len(escaped) > room:
            break
        characters.append(escaped)
        used += len(escaped)
    return "".join(characters)
