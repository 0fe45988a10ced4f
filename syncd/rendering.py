"""How a change reads: word-level diffs and one-line headlines, as escaped HTML.

One renderer for every place a person reads a change: the Atom feeds, the
web pages and, next, chat messages.  Its input is what storage keeps (a
revision's or an event's ``changes``, a record); its output is ``Markup``,
HTML in which every string that came from arXiv or a seed document is
escaped, so an abstract holding ``<script>`` shows as text wherever it lands.

Titles and abstracts are diffed word by word with ``difflib.SequenceMatcher``
(records are whitespace-normalised, so words joined by one space lose
nothing): removed words in ``<del>``, added words in ``<ins>``.  Author lists
read as names added, removed and moved; every other field as old → new.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from markupsafe import Markup, escape

from syncd.record import Record
from syncd.vocabulary import EventType

__all__ = [
    "FieldChange",
    "changes_html",
    "event_headline",
    "field_changes",
    "names_diff",
    "record_html",
    "short_title",
    "word_diff",
]

# What a person calls each field of the record.
_LABELS = {
    "version": "Version",
    "title": "Title",
    "abstract": "Abstract",
    "authors": "Authors",
    "primary_category": "Primary category",
    "categories": "Categories",
    "comment": "Comment",
    "journal_ref": "Journal reference",
    "doi": "DOI",
    "withdrawn": "Withdrawn",
    "withdrawn_by": "Withdrawn by",
}
_WORD_FIELDS = ("title", "abstract")
# A headline keeps a title's part before its colon, or this many characters.
_HEADLINE_CHARS = 60
_TYPE_WORDS: dict[str, str] = {
    EventType.ADDED: "new paper",
    EventType.LINKED: "linked to arXiv",
    EventType.REMOVED: "gone from arXiv",
}


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One changed field: its name, what a person calls it, and the change as HTML."""

    field: str
    label: str
    html: Markup


def word_diff(old: str | None, new: str | None) -> Markup:
    """``new`` against ``old`` word by word: removed words in ``<del>``, added in ``<ins>``."""
    before, after = (old or "").split(), (new or "").split()
    # autojunk would treat words frequent in a long abstract ("the") as noise.
    matcher = SequenceMatcher(None, before, after, autojunk=False)
    parts: list[Markup] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            parts.append(escape(" ".join(before[i1:i2])))
            continue
        if i2 > i1:
            parts.append(Markup("<del>{}</del>").format(" ".join(before[i1:i2])))
        if j2 > j1:
            parts.append(Markup("<ins>{}</ins>").format(" ".join(after[j1:j2])))
    return Markup(" ").join(parts)


def names_diff(old: Sequence[str], new: Sequence[str], *, ordered: bool = True) -> Markup:
    """Names added (``<ins>``), removed (``<del>``) and, for ``ordered`` lists, moved."""
    kept_old = [n for n in old if n in new]
    kept_new = [n for n in new if n in old]
    lines: list[Markup] = []
    added = [n for n in new if n not in old]
    removed = [n for n in old if n not in new]
    if added:
        lines.append(_names_line("added", added, "ins"))
    if removed:
        lines.append(_names_line("removed", removed, "del"))
    if ordered and kept_old != kept_new:
        moved = [
            Markup("{} ({} → {})").format(name, _ordinal(old, name), _ordinal(new, name))
            for position, name in enumerate(kept_new)
            if kept_old[position] != name
        ]
        lines.append(Markup("<li>moved: {}</li>").format(Markup(", ").join(moved)))
    return Markup('<ul class="names">{}</ul>').format(Markup("").join(lines))


def field_changes(changes: Mapping[str, Mapping[str, Any]]) -> list[FieldChange]:
    """Each changed field of a stored ``changes`` mapping, rendered, in the mapping's order."""
    rendered = []
    for name, change in changes.items():
        old, new = change.get("old"), change.get("new")
        if name in _WORD_FIELDS:
            html = word_diff(old, new)
        elif isinstance(old, list) or isinstance(new, list):
            html = names_diff(old or [], new or [], ordered=name == "authors")
        else:
            html = Markup("<del>{}</del> → <ins>{}</ins>").format(_scalar(old), _scalar(new))
        rendered.append(FieldChange(name, _LABELS.get(name, name), html))
    return rendered


def changes_html(changes: Mapping[str, Mapping[str, Any]]) -> Markup:
    """A stored ``changes`` mapping as a definition list, one entry per changed field."""
    items = [
        Markup('<dt>{}</dt><dd class="change-{}">{}</dd>').format(c.label, c.field, c.html)
        for c in field_changes(changes)
    ]
    return Markup('<dl class="changes">{}</dl>').format(Markup("").join(items))


def record_html(record: Record) -> Markup:
    """A record as a person first meets it: title, authors, abstract, categories."""
    authors = ", ".join(record.authors) + ("" if record.authors_complete else " et al.")
    categories = " ".join(record.categories or filter(None, [record.primary_category]))
    return Markup(
        '<div class="record"><p class="title">{}</p><p class="authors">{}</p>'
        '<p class="abstract">{}</p><p class="categories">{}</p></div>'
    ).format(record.title or "(no title)", authors.strip(), record.abstract or "", categories)


def short_title(title: str | None) -> str:
    """A title as a headline names it: ``NestPipe: …``, or cut at ``_HEADLINE_CHARS``."""
    text = title or "(no title)"
    head, colon, _ = text.partition(":")
    if colon and head.strip():
        return f"{head.strip()}: …"
    return text if len(text) <= _HEADLINE_CHARS else text[: _HEADLINE_CHARS - 1].rstrip() + "…"


def event_headline(
    event_type: str,
    title: str | None,
    arxiv_id: str | None,
    version: int | None,
    kinds: Sequence[str],
) -> str:
    """One line a person can read: ``NestPipe: … (2604.06956) v2: title, authors, abstract``.

    Plain text; whoever puts it into markup escapes it.
    """
    where = f" ({arxiv_id})" if arxiv_id else ""
    what = ", ".join(filter(None, [_TYPE_WORDS.get(event_type, ""), *kinds]))
    shown_version = f" v{version}" if version is not None else ""
    return f"{short_title(title)}{where}{shown_version}: {what or 'changed'}"


def _names_line(label: str, names: Sequence[str], tag: str) -> Markup:
    cells = Markup(", ").join(Markup("<{0}>{1}</{0}>").format(Markup(tag), n) for n in names)
    return Markup("<li>{}: {}</li>").format(label, cells)


def _ordinal(names: Sequence[str], name: str) -> str:
    return f"#{list(names).index(name) + 1}"


def _scalar(value: Any) -> str:
    if value is None or value == "":
        return "(none)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
