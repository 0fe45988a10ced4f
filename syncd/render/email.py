"""An e-mail's HTML body: one change or a digest, with inline styles and the diff in words.

Mail clients drop ``<style>`` sheets, scripts and ``<details>``, so this is
not ``syncd.render.html``'s markup: every style is inline, a long field is
shown whole, and removed and added words are ``<del>`` and ``<ins>`` coloured
in place.  Every string from arXiv is escaped and stripped of bidi controls.

Apprise sends the HTML with a plain-text alternative it converts from it
(tags dropped, each block on a line of its own, a link's address lost).  So
that the plain part still tells removed from added words and says where
each link goes, every ``<del>`` and ``<ins>`` holds the plain text's marks
(``[-removed-]``, ``{+added+}``: ``syncd.render.text.PLAIN``'s) and every
link its address in spans the HTML hides (``display:none``; ``mso-hide`` for
Outlook): a plain client reads what ``PLAIN`` would write.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup

from syncd.domain.model import Event
from syncd.domain.textcontrols import without_bidi_controls
from syncd.render.describe import Described, Link, describe
from syncd.render.field_diffs import FieldDiff, Line, Segment
from syncd.render.text import ELLIPSIS, PLAIN

__all__ = ["email_html"]

_BODY = "font-family:Arial,Helvetica,sans-serif;font-size:15px;line-height:1.5;color:#1f2328"
_HEADLINE = "margin:0 0 8px;font-size:17px;font-weight:bold"
_PARAGRAPH = "margin:0 0 8px"
_LABEL = "margin:12px 0 4px;font-weight:bold;color:#57606a"
_LINKS = "margin:12px 0 0;color:#57606a"
_RULE = "border:0;border-top:1px solid #d0d7de;margin:20px 0"
_MARKS = {
    "removed": (
        "del",
        "background:#ffebe9;color:#82071e;text-decoration:line-through",
        PLAIN.removed,
    ),
    "added": ("ins", "background:#dafbe1;color:#116329;text-decoration:underline", PLAIN.added),
}
# Hidden from HTML readers, kept by the plain-text alternative Apprise derives.
_HIDDEN = Markup('<span style="display:none;mso-hide:all">{}</span>')
# A digest lists this many events; the rest are counted and linked.
_DIGEST_EVENTS = 50


def email_html(events: Sequence[Event], *, public_url: str | None) -> str:
    """The HTML body of an e-mail about ``events``: one change, or a cycle's digest."""
    if not events:
        raise ValueError("an e-mail needs at least one event")
    if len(events) == 1:
        sections = [_event_html(describe(events[0], public_url=public_url), headline=False)]
    else:
        shown = events[:_DIGEST_EVENTS]
        sections = [_event_html(describe(e, public_url=public_url), headline=True) for e in shown]
        if len(events) > _DIGEST_EVENTS:
            sections.append(_more_html(len(events) - _DIGEST_EVENTS, public_url))
    rule = Markup('<hr style="{}">').format(_RULE)
    return str(Markup('<div style="{}">{}</div>').format(_BODY, rule.join(sections)))


def _event_html(described: Described, *, headline: bool) -> Markup:
    """One event: (in a digest, its headline,) what happened, the changed fields, the links."""
    parts: list[Markup] = []
    if headline:
        parts.append(_paragraph(_HEADLINE, _text(described.headline)))
    parts.append(_paragraph(_PARAGRAPH, _text(described.summary)))
    parts += [_diff_html(diff) for diff in described.diffs]
    if described.links:
        links = Markup(" · ").join(_link(link) for link in described.links)
        parts.append(_paragraph(_LINKS, links))
    return Markup("").join(parts)


def _diff_html(diff: FieldDiff) -> Markup:
    """A changed field under its label, a line a paragraph (a name list's lines bulleted)."""
    bullet = "• " if diff.listed else ""
    lines = [_paragraph(_PARAGRAPH, bullet + _line_html(line)) for line in diff.lines]
    return _paragraph(_LABEL, _text(diff.label)) + Markup("").join(lines)


def _line_html(line: Line) -> Markup:
    return Markup("").join(_segment_html(segment) for segment in line)


def _segment_html(segment: Segment) -> Markup:
    text = _text(segment.text)
    if segment.kind not in _MARKS:
        return text
    tag, style, (opening, closing) = _MARKS[segment.kind]
    return Markup('<{0} style="{1}">{2}{3}{4}</{0}>').format(
        Markup(tag), style, _HIDDEN.format(opening), text, _HIDDEN.format(closing)
    )


def _link(link: Link) -> Markup:
    """A link, its address hidden after it for the plain part (``PLAIN``'s ``label: url``)."""
    return Markup('<a href="{}" style="color:#0969da">{}</a>{}').format(
        link.url, _text(link.label), _HIDDEN.format(f": {link.url}")
    )


def _more_html(count: int, public_url: str | None) -> Markup:
    more = _text(f"{ELLIPSIS}and {count} more")
    if public_url is None:
        return _paragraph(_PARAGRAPH, more)
    return _paragraph(_PARAGRAPH, more + ": " + _link(Link("all changes", f"{public_url}/events")))


def _paragraph(style: str, content: Markup | str) -> Markup:
    return Markup('<p style="{}">{}</p>').format(style, content)


def _text(text: str) -> Markup:
    """An arXiv string (or syncd's words around one), escaped, without bidi controls."""
    return Markup("{}").format(without_bidi_controls(text))
