"""How a changed field reads: lines of segments of text kept, removed and added.

A change's ``changes`` mapping (what storage keeps of a revision or an
event) becomes one ``FieldDiff`` per field: titles and abstracts word by
word with ``difflib.SequenceMatcher`` (records are whitespace-normalised, so
words joined by one space lose nothing), author lists as names added,
removed and moved, every other field as old → new.  The segments are the
small form every target renders with its own escaping (``syncd.render.html``,
``text``, ``mrkdwn``, ``markdown``); ``syncd.render.describe`` puts them in
a message.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from itertools import chain
from typing import Any, Literal, TypeVar

__all__ = [
    "ELIDED",
    "FieldDiff",
    "Line",
    "Segment",
    "collapsed",
    "field_diffs",
    "kind_label",
    "name_lines",
    "word_segments",
]

ELIDED = "…"
_T = TypeVar("_T")
# What a person calls each field of the record, and each change kind (a chip, a heading).
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
# Below this share of words in common, a text's old and new read better whole,
# one above the other, than interleaved word by word.
_STACK_BELOW = 0.5
# A diffed text longer than this many words is shown collapsed: each change
# with this many unchanged words on either side, the rest folded away.
_COLLAPSE_WORDS = 40
_CONTEXT_WORDS = 6


@dataclass(frozen=True, slots=True)
class Segment:
    """A run of text in a diff: arXiv's text kept as it was, removed or added, or syncd's
    ``own`` words around them (labels, separators, arrows, positions).

    HTML isolates every run but ``own`` in ``<bdi>``: a bidi control in one
    arXiv string then reorders nothing outside it.
    """

    kind: Literal["text", "removed", "added", "own"]
    text: str


# One line of a diff: its segments, in reading order, separators included.
Line = tuple[Segment, ...]


@dataclass(frozen=True, slots=True)
class FieldDiff:
    """One changed field described for every target: its lines of segments.

    A ``listed`` diff (names added, removed, moved) reads as a list, one
    entry per line; a ``stacked`` one is a text that mostly changed, its old
    and new whole, one line each; any other has one line.
    """

    field: str
    label: str
    lines: tuple[Line, ...]
    listed: bool = False
    stacked: bool = False


def word_segments(old: str | None, new: str | None) -> Line:
    """``new`` against ``old`` word by word: runs of kept, removed and added words."""
    before, after = (old or "").split(), (new or "").split()
    return _segments(before, after, _word_matcher(before, after))


def name_lines(old: Sequence[str], new: Sequence[str], *, ordered: bool = True) -> tuple[Line, ...]:
    """Names added, removed and, for ``ordered`` lists, moved: one line each."""
    kept_old = [n for n in old if n in new]
    kept_new = [n for n in new if n in old]
    lines: list[Line] = []
    added = [n for n in new if n not in old]
    removed = [n for n in old if n not in new]
    if added:
        lines.append(_names_line("added", added, "added"))
    if removed:
        lines.append(_names_line("removed", removed, "removed"))
    # zip, not indexes: a name listed twice on one side only makes the lists' lengths differ.
    moved = [
        (Segment("text", name), Segment("own", f" ({_ordinal(old, name)} → {_ordinal(new, name)})"))
        for was, name in zip(kept_old, kept_new, strict=False)
        if was != name
    ]
    if ordered and moved:
        cells = chain.from_iterable(_joined(moved, (Segment("own", ", "),)))
        lines.append((Segment("own", "moved: "), *cells))
    return tuple(lines)


def field_diffs(changes: Mapping[str, Mapping[str, Any]]) -> list[FieldDiff]:
    """Each changed field of a stored ``changes`` mapping, described, in the mapping's order.

    A withdrawal's notice (or the abstract that replaces it) is shown whole,
    never diffed word by word against the abstract it stands in for.
    """
    described = []
    notice = "withdrawn" in changes
    for name, change in changes.items():
        old, new = change.get("old"), change.get("new")
        label = kind_label(name)
        if name == "abstract" and notice:
            described.append(FieldDiff(name, label, (_notice_line(changes["withdrawn"], new),)))
        elif name in _WORD_FIELDS:
            described.append(_text_diff(name, label, old, new))
        elif isinstance(old, list) or isinstance(new, list):
            lines = name_lines(old or [], new or [], ordered=name == "authors")
            described.append(FieldDiff(name, label, lines, listed=True))
        else:
            line = (
                _scalar_segment("removed", old),
                Segment("own", " → "),
                _scalar_segment("added", new),
            )
            described.append(FieldDiff(name, label, (line,)))
    return described


def kind_label(kind: str) -> str:
    """What a person calls a change kind: ``Journal reference`` for ``journal_ref``."""
    return _LABELS.get(kind, kind)


def collapsed(line: Line, *, longer_than: int = _COLLAPSE_WORDS) -> Line:
    """A word diff's line with long unchanged runs cut to a few words around each change.

    A cut is an ``own`` segment ``…``; a line of at most ``longer_than``
    words, or one without a change, is returned as it is.
    """
    if sum(len(s.text.split()) for s in line if s.kind != "own") <= longer_than:
        return line
    if not any(s.kind in ("removed", "added") for s in line):
        return line
    last = len(line) - 1
    shown: list[Segment] = []
    for index, segment in enumerate(line):
        words = segment.text.split()
        if segment.kind != "text" or len(words) <= 2 * _CONTEXT_WORDS + 1:
            shown.append(segment)
            continue
        head = words[:_CONTEXT_WORDS] if index > 0 else []
        tail = words[-_CONTEXT_WORDS:] if index < last else []
        if head:
            shown += [Segment("text", " ".join(head)), Segment("own", " ")]
        shown.append(Segment("own", ELIDED))
        if tail:
            shown += [Segment("own", " "), Segment("text", " ".join(tail))]
    return tuple(shown)


def _text_diff(name: str, label: str, old: str | None, new: str | None) -> FieldDiff:
    """A title or abstract: word by word, or old and new whole when most of it changed."""
    before, after = (old or "").split(), (new or "").split()
    matcher = _word_matcher(before, after)
    if before and after and matcher.ratio() < _STACK_BELOW:
        lines = (
            (Segment("own", "was: "), Segment("removed", " ".join(before))),
            (Segment("own", "now: "), Segment("added", " ".join(after))),
        )
        return FieldDiff(name, label, lines, stacked=True)
    return FieldDiff(name, label, (_segments(before, after, matcher),))


def _word_matcher(before: list[str], after: list[str]) -> SequenceMatcher[str]:
    # autojunk would treat words frequent in a long abstract ("the") as noise.
    return SequenceMatcher(None, before, after, autojunk=False)


def _segments(before: list[str], after: list[str], matcher: SequenceMatcher[str]) -> Line:
    """The runs of kept, removed and added words ``matcher`` found between the two."""
    runs: list[Segment] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            runs.append(Segment("text", " ".join(before[i1:i2])))
            continue
        if i2 > i1:
            runs.append(Segment("removed", " ".join(before[i1:i2])))
        if j2 > j1:
            runs.append(Segment("added", " ".join(after[j1:j2])))
    return _joined(runs, Segment("own", " "))


def _notice_line(withdrawn: Mapping[str, Any], new: str | None) -> Line:
    """The abstract of a version that is withdrawn (arXiv's notice) or is no longer."""
    lead = "arXiv's withdrawal notice: " if withdrawn.get("new") else "restored: "
    return (Segment("own", lead), Segment("added", new or ""))


def _names_line(label: str, names: Sequence[str], kind: Literal["removed", "added"]) -> Line:
    cells = _joined([Segment(kind, n) for n in names], Segment("own", ", "))
    return (Segment("own", f"{label}: "), *cells)


def _joined(items: Sequence[_T], separator: _T) -> tuple[_T, ...]:
    """``items`` with ``separator`` between each two."""
    joined: list[_T] = []
    for item in items:
        if joined:
            joined.append(separator)
        joined.append(item)
    return tuple(joined)


def _ordinal(names: Sequence[str], name: str) -> str:
    return f"#{list(names).index(name) + 1}"


def _scalar_segment(kind: Literal["removed", "added"], value: Any) -> Segment:
    """One side of an old → new change; a missing value is syncd's ``(none)``, not arXiv's."""
    if value is None or value == "":
        return Segment("own", "(none)")
    return Segment(kind, _scalar(value))


def _scalar(value: Any) -> str:
    if value is None or value == "":
        return "(none)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
