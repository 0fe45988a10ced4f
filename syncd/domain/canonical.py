"""One version of a paper is one record, whichever of arXiv's formats it was read from.

syncd reads arXiv three ways, and arXiv writes one version differently in each:

| | the API's Atom | an author's feed (``/a/<id>.atom``) | OAI-PMH ``arXivRaw`` |
|---|---|---|---|
| text | UTF-8 (arXiv's ``tex2utf``) | TeX as submitted | TeX as submitted |
| authors | one element each | one each (``.atom2``: one, joined) | one string |
| categories | an alias pair by its canonical name | as recorded, aliases too | as recorded |
| times | ``2007-03-31T09:49:10Z`` | ``2007-03-31T09:49:10+00:00`` | ``Sat, 31 Mar 2007 ...`` |

The canonical record is the API's reading (DESIGN.md, "The canonical
record"), and ``canonical`` turns a record read from any format into it:
TeX converted as arXiv converts it (``syncd.domain.tex``) in the title,
abstract, authors, comment and journal-ref; categories named as the API
names them; times written as the API writes them.  Every reader hands its
records through it, and so does the migration that re-reads stored ones, so
a version met by a sweep, a feed and a harvest hashes alike and publishes
nothing.

The categories: arXiv files a paper in an alias pair (``cs.IT`` and
``math.IT``, arXiv/arxiv-base ``CATEGORY_ALIASES``) under both names, and
arXivRaw and the feeds list both, but the API lists the canonical one only
(over the recorded API answers, ``cs.IT``, ``math.ST`` and ``econ.GN``
appear 20 times, their aliases never).  Defunct archives that a category
subsumed (``ao-sci`` and ``physics.ao-ph``) are kept as recorded: no API
answer shows how the API writes them.  An old paper whose feed entry has no
category (arxiv-browse writes none when its abstract file names none) is
filed under the archive its identifier names, as arXiv files it.

What no format disagrees on is kept as arXiv holds it: the DOI (all three
copy the same field, ``doi:10.1103/...`` prefix included when a submitter
typed one), the version, the withdrawal (``syncd.domain.withdrawal``).

``same_names`` is the one tolerance of comparison: two author lists that
are the same names read differently (split by other rules, initials spaced
otherwise, TeX left as written) are no change to announce.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from syncd.domain.moments import utc_stamp
from syncd.domain.record import Record, normalize_text, parse_arxiv_time
from syncd.domain.tex import tex_to_utf8

__all__ = ["canonical", "canonical_text", "same_names", "split_joined_names"]

# arXiv's alias pairs, each alias with the canonical name the API shows.
_CATEGORY_ALIASES: dict[str, str] = {
    "math.MP": "math-ph",
    "stat.TH": "math.ST",
    "math.IT": "cs.IT",
    "q-fin.EC": "econ.GN",
    "cs.SY": "eess.SY",
    "cs.NA": "math.NA",
}
_TEXT_FIELDS = ("title", "abstract", "comment", "journal_ref")
# A canonical time: 2007-03-31T09:49:10Z, twenty characters.
_TIME_LENGTH = 20
# arXiv joins an entry's names with ", " in ``.atom2``.  A name holds ", "
# only before a suffix its author parser joined back to the name ("Robert W.
# Heath, Jr."; from "M. Finger,\, Jr." even the name "\, Jr.").
_NAME_SEPARATOR = ", "
_JOINED_SUFFIXES = frozenset({"Jr", "Jr."})
_NOT_A_NAME_RE = re.compile(r"et\.?\s+al\.?", re.IGNORECASE)
_PUNCTUATION_RE = re.compile(r"[^\w\s]")


def canonical_text(value: str | None) -> str | None:
    """``value`` with the TeX arXiv converts written in UTF-8, whitespace collapsed, NFC.

    Text without TeX (nearly all, and all the API sends) is returned as it is.
    """
    if value is None:
        return None
    converted = tex_to_utf8(value)
    return value if converted is value else normalize_text(converted)


def canonical(record: Record) -> Record:
    """``record`` as the API reads that version; ``record`` itself when it already is.

    A seed record is returned as it is: it is what a page showed, not arXiv.
    Every entry of every page comes here, and nearly all are already the
    API's reading: each rule first asks, cheaply, whether it has work.
    """
    if record.version is None:
        return record
    updates: dict[str, Any] = {}
    for name in _TEXT_FIELDS:
        value = getattr(record, name)
        if value is not None and ("\\" in value or "{{" in value):
            converted = canonical_text(value)
            if converted != value:
                updates[name] = converted
    authors = _canonical_names(record.authors)
    if authors is not record.authors:
        updates["authors"] = authors
    categories = record.categories
    if (
        not categories
        or categories[0] != record.primary_category
        or not _CATEGORY_ALIASES.keys().isdisjoint(categories)
    ):
        primary, named = _canonical_categories(record)
        if named != categories or primary != record.primary_category:
            updates["primary_category"], updates["categories"] = primary, named
    for name in ("published", "updated"):
        value = getattr(record, name)
        if value is not None and not (len(value) == _TIME_LENGTH and value[-1] == "Z"):
            moment = parse_arxiv_time(value)
            if moment is not None:
                updates[name] = utc_stamp(moment, seconds=True)
    return replace(record, **updates) if updates else record


def split_joined_names(text: str) -> tuple[str, ...]:
    """The names arXiv joined into one ``<name>`` for an ``.atom2`` entry, as it joined them."""
    names: list[str] = []
    for part in text.split(_NAME_SEPARATOR):
        if part in _JOINED_SUFFIXES and names:
            names[-1] += _NAME_SEPARATOR + part
        elif part:
            names.append(part)
    return tuple(names)


def same_names(old: Sequence[str], new: Sequence[str]) -> bool:
    """Whether two author lists are the same names in the same order, read two ways.

    Read with other splitting rules ("C.N. Pope" and "C. N. Pope", ", Jr."
    as a name of its own, "A & B" as one name, a collaboration prefix, an
    "et al" that is no one, ``.atom2``'s one joined name) or with TeX left
    as written, a list is the same words: joined, TeX converted, with TeX's
    braces, punctuation and spacing set aside.  Letters, accents and case
    still count.
    """
    return _reading(old) == _reading(new)


def _reading(names: Sequence[str]) -> str:
    text = " ".join(name for name in names if not _NOT_A_NAME_RE.fullmatch(name.strip()))
    # TeX's braces group, they part nothing: Pl{\"o}tz reads Pl{ö}tz, as arXiv keeps it.
    letters = unicodedata.normalize("NFC", tex_to_utf8(text)).replace("{", "").replace("}", "")
    return " ".join(_PUNCTUATION_RE.sub(" ", letters).split())


def _canonical_names(names: tuple[str, ...]) -> tuple[str, ...]:
    joined = "\0".join(names)
    if "\\" not in joined and "{{" not in joined:
        return names  # one test for the hundreds of names of a collaboration
    converted = tuple(canonical_text(name) or name for name in names)
    return names if converted == names else converted


def _canonical_categories(record: Record) -> tuple[str | None, tuple[str, ...]]:
    """The record's primary category and categories as the API lists them."""
    primary, categories = record.primary_category, record.categories
    if primary is None and not categories and record.arxiv_id and "/" in record.arxiv_id:
        archive = record.arxiv_id.split("/", 1)[0]
        return archive, (archive,)
    if primary is not None:
        categories = (primary, *(c for c in categories if c != primary))
    named = tuple(dict.fromkeys(_CATEGORY_ALIASES.get(name, name) for name in categories))
    return (None if primary is None else _CATEGORY_ALIASES.get(primary, primary)), named
