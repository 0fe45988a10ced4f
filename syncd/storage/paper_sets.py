"""Reads of papers by a set of people: a group's, an export's, the API's list with details.

Each paper once, however many of the people hold it (one story per paper);
each read opens its own transaction.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from syncd.domain.citations import Cited, ExportFilter, cited
from syncd.domain.model import Paper, PaperDetails, VersionDate
from syncd.domain.record import Record
from syncd.domain.vocabulary import PaperStatus
from syncd.storage.database import Database, among, chunks, utc
from syncd.storage.paper_reads import stories_of
from syncd.storage.papers import paper_select
from syncd.storage.publication_reads import published
from syncd.storage.schema import authors_table, paper_authors_table, revisions_table
from syncd.storage.stories import tracked_names

__all__ = ["PaperSets"]


class PaperSets:
    """Papers of a set of followed authors, each once."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def of_authors(
        self, authors: Collection[str], statuses: Collection[PaperStatus] | None = None
    ) -> list[Paper]:
        """The papers any of ``authors`` (a group's members) hold with one of ``statuses``
        (any when None), each once, ordered by key."""
        query = _held(statuses)
        with self._db.transaction() as conn:
            found: list[sa.Row[Any]] = []
            for chunk in chunks(sorted(authors)):
                found += conn.execute(query.where(among(conn, authors_table.c.name, chunk))).all()
            papers = stories_of(conn, found)
        return sorted(papers, key=lambda p: (p.key, p.id))

    def for_export(self, authors: Collection[str] | None, wanted: ExportFilter) -> list[Cited]:
        """The papers of ``authors`` (everyone's when None) that ``wanted`` takes, each once,
        under their keys, in an export's order (``citations.cited``)."""
        query = _held(wanted.statuses)
        with self._db.transaction() as conn:
            if authors is None:
                found = conn.execute(query).all()
            else:
                found = []
                for chunk in chunks(sorted(authors)):
                    named = query.where(among(conn, authors_table.c.name, chunk))
                    found += conn.execute(named).all()
            papers = stories_of(conn, found)
        chosen = [paper for paper in papers if wanted.passes(paper)]
        return cited(chosen, self._first_records([paper.id for paper in chosen]))

    def details(self, papers: Sequence[Paper]) -> dict[int, PaperDetails]:
        """What each paper's page shows beyond its row, by paper id, read for all at once:
        the followed authors who track it, its versions with arXiv's dates, and its
        published version with that version's notices."""
        with self._db.transaction() as conn:
            holders = tracked_names(conn, [p.id for p in papers])
            publications = published(conn, [p.id for p in papers])
        dates = self._version_dates([p.id for p in papers])
        details = {}
        for paper in papers:
            publication, notices = publications.get(paper.id, (None, ()))
            details[paper.id] = PaperDetails(
                followed_authors=holders.get(paper.id, ()),
                versions=tuple(
                    VersionDate(version, dates.get((paper.id, version)))
                    for version in range(1, (paper.record.version or 0) + 1)
                ),
                publication=publication,
                notices=notices,
            )
        return details

    def _version_dates(self, paper_ids: Sequence[int]) -> dict[tuple[int, int], datetime]:
        """arXiv's date of each version the papers' histories hold, by (paper id, version)."""
        r = revisions_table
        found: dict[tuple[int, int], datetime] = {}
        with self._db.transaction() as conn:
            for chunk in chunks(list(paper_ids)):
                query = (
                    sa.select(r.c.paper_id, r.c.version, sa.func.min(r.c.version_date))
                    .where(among(conn, r.c.paper_id, chunk), r.c.version_date.is_not(None))
                    .group_by(r.c.paper_id, r.c.version)
                )
                for paper_id, version, date in conn.execute(query):
                    found[paper_id, version] = utc(date)
        return found

    def _first_records(self, paper_ids: Sequence[int]) -> dict[int, Record]:
        """Each paper's earliest arXiv version's record (its first observation), by paper id;
        a paper with no arXiv revision is left out."""
        r = revisions_table
        found: dict[int, Record] = {}
        with self._db.transaction() as conn:
            for chunk in chunks(paper_ids):
                earliest = (
                    sa.select(r.c.paper_id, sa.func.min(r.c.version).label("version"))
                    .where(among(conn, r.c.paper_id, chunk), r.c.version.is_not(None))
                    .group_by(r.c.paper_id)
                    .subquery()
                )
                on_earliest = sa.and_(
                    r.c.paper_id == earliest.c.paper_id, r.c.version == earliest.c.version
                )
                query = (
                    sa.select(r.c.paper_id, r.c.record)
                    .join(earliest, on_earliest)
                    .order_by(r.c.paper_id, r.c.seq)
                )
                for row in conn.execute(query):
                    found.setdefault(row.paper_id, Record.from_dict(row.record))
        return found


def _held(statuses: Collection[PaperStatus] | None) -> sa.Select[Any]:
    """Papers as their authors hold them, with one of ``statuses`` (any when None)."""
    query = paper_select().order_by(paper_authors_table.c.paper_id)
    if statuses is not None:
        query = query.where(paper_authors_table.c.status.in_(sorted(statuses)))
    return query
