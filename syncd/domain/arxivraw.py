"""An OAI-PMH ``arXivRaw`` record: the latest version's metadata and every version's facts.

arXivRaw is "very close to the internal format stored at arXiv": the latest
version's title, authors (one string), abstract, categories, comments,
journal-ref and DOI, and for each version its number, submission date, size
and source flags.  ``as_record`` turns it into the canonical ``Record`` of
its latest version, as the API's entry of that paper would read
(``syncd.domain.canonical``: TeX converted, categories and times as the
API writes them), so a harvest and a cycle plan the same paper the same way.

What arXivRaw cannot carry compared with the API: authors' affiliations, and
the earlier versions' titles, abstracts and authors (only their dates, sizes
and flags); those versions are still fetched from the API by the backfill.

The per-version source flags are the authoritative withdrawal verdict
(``syncd.domain.withdrawal.source_type_verdict``): a withdrawn version has
``I`` (no files) and a size of 0 kb.  The size alone says nothing: arXiv
rounds sizes down, so a 484-byte source is listed as ``0kb`` too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from syncd.domain.canonical import canonical
from syncd.domain.moments import utc_stamp
from syncd.domain.record import Record
from syncd.domain.withdrawal import detect_withdrawal, source_type_verdict

__all__ = ["ArxivRawRecord", "RawVersion"]


@dataclass(frozen=True, slots=True)
class RawVersion:
    """One version as arXivRaw lists it: number, submission date, size and source flags."""

    number: int
    date: datetime
    size_kb: int | None
    source_type: str | None

    @property
    def withdrawal_verdict(self) -> bool | None:
        """Whether this version is withdrawn by its flags; ``None`` when it has none.

        ``I`` marks a version without files; other flags mark one with files.
        Without flags the text decides, whatever the size: a source under
        1024 bytes is ``0kb`` too (2310.08262 in arXiv's test data: 484 bytes,
        listed ``(0kb)``), and the 2015 service often wrote no flags at all.
        """
        return source_type_verdict(self.source_type)


@dataclass(frozen=True, slots=True)
class ArxivRawRecord:
    """One ``<record>`` of a ``ListRecords`` page; a deleted one has only its header."""

    arxiv_id: str
    datestamp: str
    sets: tuple[str, ...] = ()
    deleted: bool = False
    title: str | None = None
    abstract: str | None = None
    authors: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    comments: str | None = None
    journal_ref: str | None = None
    doi: str | None = None
    versions: tuple[RawVersion, ...] = ()

    @property
    def latest(self) -> RawVersion:
        """The version the metadata describes: arXivRaw lists versions in order."""
        return self.versions[-1]

    def as_record(self) -> Record:
        """The latest version as a canonical ``Record``, as the API's entry would read."""
        latest = self.latest
        withdrawal = detect_withdrawal(
            self.abstract, self.comments, authoritative=latest.withdrawal_verdict
        )
        record = Record(
            arxiv_id=self.arxiv_id,
            version=latest.number,
            title=self.title,
            abstract=self.abstract,
            authors=self.authors,
            authors_complete=True,
            primary_category=self.categories[0] if self.categories else None,
            categories=self.categories,
            comment=self.comments,
            journal_ref=self.journal_ref,
            doi=self.doi,
            published=utc_stamp(self.versions[0].date, seconds=True),
            updated=utc_stamp(latest.date, seconds=True),
            withdrawn=withdrawal.withdrawn,
            withdrawn_by=withdrawal.by,
        )
        return canonical(record)
