"""A described change as HTML, for the Atom feeds and the web pages.

Every string that came from arXiv or a seed document is escaped (``Markup``
formats it), so an abstract holding ``<script>`` shows as text wherever it
lands, and isolated in ``<bdi>``: a bidi control in one arXiv string then
reorders nothing outside it.  Removed words are in ``<del>``, added words in
``<ins>``; a name list is a ``<ul>``, a change a definition list.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup, escape

from syncd.domain.record import Record
from syncd.render.describe import Link
from syncd.render.field_diffs import (
    FieldDiff,
    Line,
    Segment,
    collapsed,
    field_diffs,
    name_lines,
    word_segments,
)

__all__ = [
    "FieldChange",
    "changes_html",
    "described_html",
    "field_changes",
    "names_diff",
    "record_html",
    "removal_html",
    "word_diff",
]

_HTML_TAGS = {"removed": "del", "added": "ins"}


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One changed field: its name, what a person calls it, and the change as HTML."""

    field: str
    label: str
    html: Markup


def word_diff(old: str | None, new: str | None) -> Markup:
    """``new`` against ``old`` word by word: removed words in ``<del>``, added in ``<ins>``."""
    return _line_html(word_segments(old, new))


def names_diff(old: Sequence[str], new: Sequence[str], *, ordered: bool = True) -> Markup:
    """Names added (``<ins>``), removed (``<del>``) and, for ``ordered`` lists, moved."""
    return _diff_html(FieldDiff("", "", name_lines(old, new, ordered=ordered), listed=True))


def field_changes(changes: Mapping[str, Mapping[str, Any]]) -> list[FieldChange]:
    """Each changed field of a stored ``changes`` mapping, rendered, in the mapping's order."""
    return [FieldChange(d.field, d.label, _diff_html(d)) for d in field_diffs(changes)]


def changes_html(changes: Mapping[str, Mapping[str, Any]]) -> Markup:
    """A stored ``changes`` mapping as a definition list, one entry per changed field."""
    return _fields_html(field_changes(changes))


def described_html(summary: str, diffs: Sequence[FieldDiff], links: Sequence[Link]) -> Markup:
    """A change that is no diff of the record (where a paper was published, a notice on
    that version): its sentence, its fields as a definition list, and its links."""
    fields = _fields_html([FieldChange(d.field, d.label, _diff_html(d)) for d in diffs])
    anchors = Markup(" · ").join(
        Markup('<a href="{}">{}</a>').format(link.url, _isolated(link.label)) for link in links
    )
    shown = Markup('<p class="links">{}</p>').format(anchors) if links else Markup("")
    return Markup('<p class="summary">{}</p>{}{}').format(summary, fields, shown)


def _fields_html(changes: Sequence[FieldChange]) -> Markup:
    items = [
        Markup('<dt>{}</dt><dd class="change-{}">{}</dd>').format(c.label, c.field, c.html)
        for c in changes
    ]
    return Markup('<dl class="changes">{}</dl>').format(Markup("").join(items))


def record_html(record: Record) -> Markup:
    """A record as a person first meets it: title, authors, abstract, categories, each
    arXiv string isolated in ``<bdi>``."""
    categories = " ".join(record.categories or filter(None, [record.primary_category]))
    names = Markup(", ").join(_isolated(name) for name in record.authors)
    more = "" if record.authors_complete else " et al." if names else "et al."
    return Markup(
        '<div class="record"><p class="title">{}</p><p class="authors">{}</p>'
        '<p class="abstract">{}</p><p class="categories">{}</p></div>'
    ).format(
        _isolated(record.title or "(no title)"),
        names + more,
        _isolated(record.abstract) if record.abstract else "",
        _isolated(categories) if categories else "",
    )


def removal_html(record: Record | None) -> Markup:
    """A removal: the paper left the author's arXiv results; as last known, when it is."""
    said = Markup("No longer in the author's arXiv results.")
    if record is None:
        return Markup('<p class="removal">{}</p>').format(said)
    version = f", v{record.version}" if record.version is not None else ""
    return Markup('<p class="removal">{} Last known: {}{}.</p>').format(
        said, _isolated(record.title or "(no title)"), version
    )


def _line_html(line: Line) -> Markup:
    return Markup("").join(_segment_html(s) for s in line)


def _segment_html(segment: Segment) -> Markup:
    if segment.kind == "own":
        return escape(segment.text)
    isolated = _isolated(segment.text)
    if segment.kind == "text":
        return isolated
    return Markup("<{0}>{1}</{0}>").format(Markup(_HTML_TAGS[segment.kind]), isolated)


def _isolated(text: str) -> Markup:
    """An arXiv string, escaped, in ``<bdi>``: its direction and controls stay inside."""
    return Markup("<bdi>{}</bdi>").format(text)


def _diff_html(diff: FieldDiff) -> Markup:
    if diff.listed:
        items = Markup("").join(
            Markup("<li>{}</li>").format(_line_html(line)) for line in diff.lines
        )
        return Markup('<ul class="names">{}</ul>').format(items)
    if diff.stacked:
        parts = Markup("").join(Markup("<p>{}</p>").format(_line_html(line)) for line in diff.lines)
        return Markup('<div class="stacked">{}</div>').format(parts)
    # A record's field changes on one line; a publication's fields take one each.
    return Markup("<br>").join(_folded_html(diff.label, line) for line in diff.lines)


def _folded_html(label: str, line: Line) -> Markup:
    """A line, or a long one's changes with a few words around each and, folded in a
    ``<details>`` that opens without script, the whole of it."""
    short = collapsed(line)
    if short == line:
        return _line_html(line)
    return Markup(
        '<span class="excerpt">{}</span>'
        '<details class="whole"><summary>The whole {} with its changes</summary>'
        "<p>{}</p></details>"
    ).format(_line_html(short), label.lower(), _line_html(line))
