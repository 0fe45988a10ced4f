"""Papers as citations: which papers an export holds, their keys, and their authors' names.

What every export format shares (``syncd.render.exports`` writes them):

- **Which papers.** ``ExportFilter``: the statuses asked for (tracked alone
  by default), a period of the paper's *first version* (arXiv's
  ``published`` date, the one a citation's year gives; a paper whose first
  version's date is unknown, a seed paper not yet on arXiv, is left out
  when a period is asked), and published or not (published: it has a DOI or
  a journal reference).
- **Keys.** ``citation_key`` is a function of the paper alone: its first
  version's first author's family name, year and title's first word, folded
  to ASCII, then the arXiv id, which no other paper has.  The key is thus the
  same on every run and in every export that holds the paper (an author's, a
  group's, everyone's), and a later version that reorders the authors or
  retitles the paper leaves it as it was; no two papers share one.  (A paper
  whose history lacks its first version, until backfill brings it, is keyed
  by its earliest known one.)
- **Names.** ``person_name`` splits a name as arXiv lists it ("Given
  Family") into its parts, as BibTeX reads "von Last, First": the last word
  is the family name, the lower-case words before it (``van der``, ``'t``)
  its particle, a trailing ``Jr.`` or ``III`` (after a comma or not) a suffix.  A collaboration
  ("ATLAS Collaboration"), a single word and a name with a comma are kept
  whole, as a literal.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from enum import StrEnum

from syncd.domain.model import Paper
from syncd.domain.record import Record, parse_arxiv_time
from syncd.domain.vocabulary import PaperStatus

__all__ = [
    "DEFAULT_STATUSES",
    "Cited",
    "ExportFilter",
    "ExportFormat",
    "PersonName",
    "citation_key",
    "cited",
    "first_version_date",
    "is_published",
    "person_name",
    "withdrawal_note",
]

DEFAULT_STATUSES = frozenset({PaperStatus.TRACKED})

# Words that make a name a group's, kept whole ("ATLAS Collaboration", "LIGO Scientific
# Collaboration and Virgo Collaboration", "The Event Horizon Telescope Consortium").
_GROUP_WORDS = frozenset(
    {"collaboration", "collaborations", "consortium", "team", "group", "project", "survey"}
)
_SUFFIXES = frozenset({"jr", "jr.", "sr", "sr.", "ii", "iii", "iv"})
# Words a key skips at the start of a title.
_STOP_WORDS = frozenset(
    {"a", "an", "the", "on", "of", "in", "for", "to", "and", "with", "from", "at", "by", "via"}
)
# Letters NFKD does not take apart, folded to ASCII as people spell them in keys.
_FOLDS = str.maketrans(
    {"ß": "ss", "ł": "l", "Ł": "L", "ø": "o", "Ø": "O", "đ": "d", "Đ": "D", "æ": "ae",
     "Æ": "AE", "œ": "oe", "Œ": "OE", "þ": "th", "Þ": "Th", "ð": "d", "Ð": "D", "\u0131": "i"}
)  # fmt: skip
_NOT_KEY = re.compile(r"[^a-z0-9]")


class ExportFormat(StrEnum):
    """The export formats, by the name ``syncd export --format`` takes."""

    BIBTEX = "bibtex"
    CSL_JSON = "csl-json"
    RIS = "ris"

    @property
    def media_type(self) -> str:
        """The format's registered media type (RIS's and BibTeX's as tools send them)."""
        return _MEDIA_TYPES[self]

    @property
    def extension(self) -> str:
        """The file name's ending: ``papers.bib``, ``papers.json``, ``papers.ris``."""
        return _EXTENSIONS[self]


_MEDIA_TYPES = {
    ExportFormat.BIBTEX: "application/x-bibtex",
    ExportFormat.CSL_JSON: "application/vnd.citationstyles.csl+json",
    ExportFormat.RIS: "application/x-research-info-systems",
}
_EXTENSIONS = {ExportFormat.BIBTEX: "bib", ExportFormat.CSL_JSON: "json", ExportFormat.RIS: "ris"}


@dataclass(frozen=True, slots=True)
class PersonName:
    """A name's parts, or the name whole (``literal``) when it has no parts to tell apart."""

    given: str = ""
    particle: str = ""
    family: str = ""
    suffix: str = ""
    literal: str = ""


def _particle_like(word: str) -> bool:
    """Whether ``word`` reads as a particle: its first letter is lower-case (BibTeX's rule)."""
    first = next((char for char in word if char.isalpha()), None)
    return first is not None and first.islower()


def person_name(name: str) -> PersonName:
    """``name`` as arXiv lists it ("Given [particle] Family [Suffix]", the suffix perhaps
    after a comma), split into its parts."""
    words, suffix = name.split(), ""
    head, comma, tail = name.rpartition(",")
    if comma and tail.strip().casefold() in _SUFFIXES and len(head.split()) > 1:
        words, suffix = head.split(), tail.strip()
    elif len(words) > 2 and words[-1].casefold() in _SUFFIXES:
        words, suffix = words[:-1], words[-1]
    folded = {word.casefold() for word in words}
    # A comma, or the word "and", would split the name in a BibTeX author list.
    if len(words) < 2 or "," in "".join(words) or folded & _GROUP_WORDS or "and" in folded:
        return PersonName(literal=" ".join(name.split()))
    family, before = words[-1], words[:-1]
    start = len(before)
    # The particle is the lower-case words just before the family name, never the first word.
    while start > 1 and _particle_like(before[start - 1]):
        start -= 1
    return PersonName(
        given=" ".join(before[:start]),
        particle=" ".join(before[start:]),
        family=family,
        suffix=suffix,
    )


def _ascii_word(text: str) -> str:
    """``text`` folded to lower-case ASCII letters and digits: what a key is made of."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_FOLDS))
    return _NOT_KEY.sub("", decomposed.casefold())


def first_version_date(record: Record) -> date | None:
    """The date of the paper's first version (arXiv's ``published``); None when unknown."""
    moment = parse_arxiv_time(record.published)
    return moment.date() if moment is not None else None


def citation_key(paper: Paper, first: Record | None = None) -> str:
    """The paper's citation key: ``surname`` ``year`` ``firstword`` ``_`` ``arXiv id``.

    The surname and word from ``first``, the record of the paper's earliest
    version, when known (else its latest); each part folded to ASCII (a part
    with no ASCII letter left is left out); the arXiv id (``/`` of an
    old-style id as ``-``) makes it unique, and a seed paper not yet on arXiv
    has its syncd key instead.
    """
    record = first if first is not None else paper.record
    surname = ""
    if record.authors:
        lead = person_name(record.authors[0])
        surname = _ascii_word(lead.family or lead.literal.split()[0])
    day = first_version_date(paper.record)
    words = [_ascii_word(word) for word in (record.title or "").split()]
    word = next((w for w in words if w and w not in _STOP_WORDS), "")
    unique = (paper.arxiv_id or paper.key).replace("/", "-")
    return f"{surname}{day.year if day else ''}{word}_{unique}"


def is_published(record: Record) -> bool:
    """Whether the paper is published beyond arXiv: it has a DOI or a journal reference."""
    return record.doi is not None or record.journal_ref is not None


def withdrawal_note(record: Record) -> str | None:
    """What an export says of a withdrawn paper (by whom, when arXiv's notice says); None
    when the paper's latest version is not a withdrawal."""
    if not record.withdrawn:
        return None
    by = {"author": " by its authors", "admin": " by arXiv's administrators"}
    version = f" (v{record.version})" if record.version is not None else ""
    return f"Withdrawn from arXiv{by.get(record.withdrawn_by or '', '')}{version}"


@dataclass(frozen=True, slots=True)
class ExportFilter:
    """Which papers an export holds: statuses, a period of first versions, published or not.

    ``since`` and ``until`` are inclusive days; ``published`` None takes both.  The
    statuses are storage's to select by (``Papers.for_export``); ``passes`` checks the rest.
    """

    statuses: frozenset[PaperStatus] = field(default=DEFAULT_STATUSES)
    since: date | None = None
    until: date | None = None
    published: bool | None = None

    @classmethod
    def asked(
        cls,
        statuses: Iterable[PaperStatus] | None,
        since: date | None = None,
        until: date | None = None,
        published: bool | None = None,
    ) -> ExportFilter:
        """The filter a request or a command asks for: tracked papers when it names no status."""
        return cls(frozenset(statuses or DEFAULT_STATUSES), since, until, published)

    def problem(self) -> str | None:
        """Why no paper could pass (a period that ends before it starts); None when none."""
        if self.since is not None and self.until is not None and self.until < self.since:
            return f"until ({self.until}) is before since ({self.since})"
        return None

    def passes(self, paper: Paper) -> bool:
        """Whether ``paper``, of one of the statuses, is one the export holds."""
        if self.published is not None and is_published(paper.record) != self.published:
            return False
        if self.since is None and self.until is None:
            return True
        day = first_version_date(paper.record)
        if day is None:
            return False
        return (self.since is None or self.since <= day) and (
            self.until is None or day <= self.until
        )


@dataclass(frozen=True, slots=True)
class Cited:
    """A paper as an export holds it: under its key."""

    key: str
    paper: Paper


def cited(papers: Iterable[Paper], firsts: Mapping[int, Record]) -> list[Cited]:
    """``papers`` under their keys (``firsts``: each one's earliest version's record, by
    paper id), newest first version first, then by key: one order on every run."""
    kept = [Cited(citation_key(p, firsts.get(p.id)), p) for p in papers]
    kept.sort(key=lambda c: c.key)
    kept.sort(key=lambda c: first_version_date(c.paper.record) or date.min, reverse=True)
    return kept
