"""Reads of the papers and revisions tables: each opens its own transaction.

What a cycle writes goes through ``syncd.storage.papers`` inside the
caller's transaction; these reads serve the planner's look-ups, the pages,
the API and the commands.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

import sqlalchemy as sa

from syncd.domain.citations import Cited, ExportFilter, cited
from syncd.domain.model import (
    LatestChange,
    Paper,
    PaperDetails,
    PaperState,
    Revision,
    VersionDate,
)
from syncd.domain.record import Record, pasted_arxiv_id
from syncd.domain.vocabulary import PaperStatus
from syncd.storage import rows
from syncd.storage.database import Database, among, chunks, utc
from syncd.storage.papers import paper_select
from syncd.storage.schema import authors_table, events_table, papers_table, revisions_table

__all__ = ["Papers"]


class Papers:
    """Reads of the papers and revisions tables."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def all(self, author: str | None = None) -> list[Paper]:
        """Every paper, or one author's, ordered by author and key."""
        query = paper_select().order_by(authors_table.c.name, papers_table.c.key)
        if author is not None:
            query = query.where(authors_table.c.name == author)
        with self._db.transaction() as conn:
            return [rows.paper(row) for row in conn.execute(query)]

    def of_authors(
        self, authors: Collection[str], statuses: Collection[PaperStatus] | None = None
    ) -> list[Paper]:
        """The papers of any of ``authors`` (a group's members), of ``statuses`` (all when
        None), each once, ordered by key.

        A paper two of them share is one row per author today: the first of its rows
        (by status, tracked first, then by id) stands for it.
        """
        query = paper_select().order_by(papers_table.c.id)
        if statuses is not None:
            query = query.where(papers_table.c.status.in_(sorted(statuses)))
        found: dict[str, Paper] = {}
        with self._db.transaction() as conn:
            for chunk in chunks(sorted(authors)):
                for row in conn.execute(query.where(among(conn, authors_table.c.name, chunk))):
                    paper = rows.paper(row)
                    # An unlinked seed paper has no arXiv id: it is its author's alone.
                    same = paper.arxiv_id or f"{paper.author}\n{paper.key}"
                    kept = found.get(same)
                    if kept is None or _stands_before(paper, kept):
                        found[same] = paper
        return sorted(found.values(), key=lambda p: (p.key, p.id))

    def for_export(self, authors: Collection[str] | None, wanted: ExportFilter) -> list[Cited]:
        """The papers of ``authors`` (everyone's when None) that ``wanted`` takes, under
        their keys, in an export's order (``citations.cited``).

        One per paper: a paper several of them have is one row each today, and the
        row of its latest version stands for it (then the oldest row, so that every
        run picks the same).
        """
        query = paper_select().where(papers_table.c.status.in_(list(wanted.statuses)))
        found: list[Paper] = []
        with self._db.transaction() as conn:
            if authors is None:
                found = [rows.paper(row) for row in conn.execute(query)]
            for chunk in chunks(list(authors or ())):
                rows_of = conn.execute(query.where(among(conn, authors_table.c.name, chunk)))
                found += [rows.paper(row) for row in rows_of]
        papers: dict[str, Paper] = {}
        for paper in sorted(found, key=lambda p: (-(p.record.version or 0), p.id)):
            papers.setdefault(paper.arxiv_id or f"key:{paper.key}", paper)
        chosen = [paper for paper in papers.values() if wanted.passes(paper)]
        return cited(chosen, self._first_records([paper.id for paper in chosen]))

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
                query = (
                    sa.select(r.c.paper_id, r.c.record)
                    .join(
                        earliest,
                        sa.and_(
                            r.c.paper_id == earliest.c.paper_id, r.c.version == earliest.c.version
                        ),
                    )
                    .order_by(r.c.paper_id, r.c.seq)
                )
                for row in conn.execute(query):
                    found.setdefault(row.paper_id, Record.from_dict(row.record))
        return found

    def states(self, author: str, arxiv_ids: Collection[str]) -> dict[str, PaperState]:
        """The author's papers among ``arxiv_ids``, by arXiv id; unknown ids are left out."""
        found: dict[str, PaperState] = {}
        with self._db.transaction() as conn:
            for chunk in chunks(list(arxiv_ids)):
                query = _state_select(author).where(among(conn, papers_table.c.arxiv_id, chunk))
                found |= {row.arxiv_id: rows.paper_state(row) for row in conn.execute(query)}
        return found

    def owners(self, arxiv_ids: Collection[str], *, holding: bool = False) -> dict[str, set[str]]:
        """The authors who have a paper among ``arxiv_ids`` (any status), by arXiv id;
        with ``holding``, only the followed authors who hold it as theirs (tracked).

        Who shares a paper is read here alone: a paper of two followed authors
        is a row of each, and the API names both on each.
        """
        found: dict[str, set[str]] = {}
        query = sa.select(papers_table.c.arxiv_id, authors_table.c.name).join(authors_table)
        if holding:
            query = query.where(
                papers_table.c.status == PaperStatus.TRACKED, authors_table.c.removed_at.is_(None)
            )
        with self._db.transaction() as conn:
            for chunk in chunks(list(arxiv_ids)):
                for row in conn.execute(query.where(papers_table.c.arxiv_id.in_(chunk))):
                    found.setdefault(row.arxiv_id, set()).add(row.name)
        return found

    def details(self, papers: Sequence[Paper]) -> dict[int, PaperDetails]:
        """What each paper's page shows beyond its row, by paper id, read for all at once:
        the followed authors who hold it and its versions with arXiv's dates."""
        holders = self.owners({p.arxiv_id for p in papers if p.arxiv_id}, holding=True)
        dates = self._version_dates([p.id for p in papers])
        return {
            paper.id: PaperDetails(
                followed_authors=tuple(sorted(holders.get(paper.arxiv_id or "", ()))),
                versions=tuple(
                    VersionDate(version, dates.get((paper.id, version)))
                    for version in range(1, (paper.record.version or 0) + 1)
                ),
            )
            for paper in papers
        }

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

    def write_seqs(self, authors: Collection[str]) -> dict[str, int]:
        """Each author's write sequence, by name (0 for one not stored yet).

        Read before the papers a plan reads: ``claim_writes`` then tells whether
        another apply wrote them since.
        """
        found = dict.fromkeys(authors, 0)
        query = sa.select(authors_table.c.name, authors_table.c.write_seq)
        with self._db.transaction() as conn:
            for chunk in chunks(list(authors)):
                found |= {
                    row.name: row.write_seq
                    for row in conn.execute(query.where(authors_table.c.name.in_(chunk)))
                }
        return found

    def with_ids(self, author: str, arxiv_ids: Collection[str]) -> list[Paper]:
        """The author's papers among ``arxiv_ids``, records included."""
        papers: list[Paper] = []
        with self._db.transaction() as conn:
            for chunk in chunks(list(arxiv_ids)):
                query = (
                    paper_select()
                    .where(authors_table.c.name == author)
                    .where(among(conn, papers_table.c.arxiv_id, chunk))
                )
                papers += [rows.paper(row) for row in conn.execute(query)]
        return papers

    def with_status(self, author: str, status: PaperStatus) -> list[Paper]:
        """The author's papers of one status (e.g. the few ``unlinked`` seed papers)."""
        query = (
            paper_select()
            .where(authors_table.c.name == author, papers_table.c.status == status)
            .order_by(papers_table.c.id)
        )
        with self._db.transaction() as conn:
            return [rows.paper(row) for row in conn.execute(query)]

    def tracked_count(self, author: str) -> int:
        """How many of the author's tracked papers the name query should find.

        Claimed ones aside: the author's own feed vouches for them, and a
        name query may miss them (a name written otherwise on arXiv).
        """
        query = (
            sa.select(sa.func.count())
            .select_from(papers_table.join(authors_table))
            .where(
                authors_table.c.name == author,
                papers_table.c.status == PaperStatus.TRACKED,
                papers_table.c.claimed.is_(False),
            )
        )
        with self._db.transaction() as conn:
            return int(conn.scalar(query) or 0)

    def candidate_count(self, author: str) -> int:
        """How many of the author's papers are held as candidates."""
        query = (
            sa.select(sa.func.count())
            .select_from(papers_table.join(authors_table))
            .where(authors_table.c.name == author, papers_table.c.status == PaperStatus.CANDIDATE)
        )
        with self._db.transaction() as conn:
            return int(conn.scalar(query) or 0)

    def tracked_missing_from(self, author: str, seen: Collection[str]) -> list[PaperState]:
        """The author's tracked papers whose arXiv id is not in ``seen``.

        Streams the tracked ids so a large record is never loaded whole.
        """
        # A claimed paper is the author's by their own feed, read only daily:
        # the name query missing it says nothing.
        query = _state_select(author).where(
            papers_table.c.status == PaperStatus.TRACKED, papers_table.c.claimed.is_(False)
        )
        with self._db.transaction() as conn:
            found = conn.execution_options(yield_per=5000).execute(query)
            return [rows.paper_state(row) for row in found if row.arxiv_id not in seen]

    def identity_basis(self, author: str) -> tuple[set[str], set[str]]:
        """Author names and categories of the author's tracked and seed papers.

        What a new entry must share something with to be taken as the
        author's own (see ``syncd.domain.linking.identify``).
        """
        query = (
            sa.select(papers_table.c.record)
            .join(authors_table)
            .where(authors_table.c.name == author)
            .where(papers_table.c.status.in_((PaperStatus.TRACKED, PaperStatus.UNLINKED)))
        )
        names: set[str] = set()
        categories: set[str] = set()
        with self._db.transaction() as conn:
            for (record,) in conn.execution_options(yield_per=2000).execute(query):
                names.update(record.get("authors") or ())
                categories.update(record.get("categories") or ())
                if record.get("primary_category"):
                    categories.add(record["primary_category"])
        return names, categories

    def find(self, ref: str) -> Paper | None:
        """The paper whose key is ``ref``, or whose arXiv id it names in any form people
        paste (``record.pasted_arxiv_id``: versioned, ``arXiv:``, an arxiv.org address);
        None when there is none."""
        arxiv_id = pasted_arxiv_id(ref)
        condition = papers_table.c.key == ref
        if arxiv_id is not None:
            condition = sa.or_(condition, papers_table.c.arxiv_id == arxiv_id)
        query = paper_select().where(condition).order_by(papers_table.c.id)
        with self._db.transaction() as conn:
            row = conn.execute(query).first()
        return rows.paper(row) if row is not None else None

    def history(self, paper_id: int) -> list[Revision]:
        """A paper's revisions in version order: seed revisions, then each version's.

        Backfilled versions are stored after the version syncd first saw, so
        the order is by version, then by when each revision was stored.
        """
        r = revisions_table
        seeds_first = sa.case((r.c.version.is_(None), 0), else_=1)
        query = (
            sa.select(r).where(r.c.paper_id == paper_id).order_by(seeds_first, r.c.version, r.c.seq)
        )
        with self._db.transaction() as conn:
            return [rows.revision(row) for row in conn.execute(query)]

    def histories(self, paper_ids: Sequence[int]) -> dict[int, list[Revision]]:
        """The revisions of several papers, oldest first, by paper id."""
        found: dict[int, list[Revision]] = {paper_id: [] for paper_id in paper_ids}
        with self._db.transaction() as conn:
            for chunk in chunks(paper_ids):
                query = (
                    sa.select(revisions_table)
                    .where(among(conn, revisions_table.c.paper_id, chunk))
                    .order_by(revisions_table.c.paper_id, revisions_table.c.seq)
                )
                for row in conn.execute(query):
                    found[row.paper_id].append(rows.revision(row))
        return found

    def latest_changes(self, paper_ids: Sequence[int]) -> dict[int, LatestChange]:
        """Each paper's latest change, by paper id: its last event, else its last revision."""
        found: dict[int, LatestChange] = {}
        events, revisions = events_table, revisions_table
        with self._db.transaction() as conn:
            for chunk in chunks(paper_ids):
                last_events = (
                    sa.select(sa.func.max(events.c.seq))
                    .where(among(conn, events.c.paper_id, chunk))
                    .group_by(events.c.paper_id)
                )
                query = sa.select(
                    events.c.paper_id, events.c.created_at, events.c.type, events.c.kinds
                ).where(events.c.seq.in_(last_events))
                for row in conn.execute(query):
                    found[row.paper_id] = LatestChange(
                        utc(row.created_at), row.type, tuple(row.kinds)
                    )
                silent = [paper_id for paper_id in chunk if paper_id not in found]
                if not silent:
                    continue
                last = (
                    sa.select(revisions.c.paper_id, sa.func.max(revisions.c.seq).label("seq"))
                    .where(among(conn, revisions.c.paper_id, silent))
                    .group_by(revisions.c.paper_id)
                    .subquery()
                )
                latest_revisions = sa.select(
                    revisions.c.paper_id, revisions.c.observed_at, revisions.c.kinds
                ).join(
                    last,
                    sa.and_(revisions.c.paper_id == last.c.paper_id, revisions.c.seq == last.c.seq),
                )
                for revision in conn.execute(latest_revisions):
                    found[revision.paper_id] = LatestChange(
                        utc(revision.observed_at), None, tuple(revision.kinds)
                    )
        return found

    def counts(self) -> dict[str, int]:
        """How many papers have each status."""
        query = sa.select(papers_table.c.status, sa.func.count()).group_by(papers_table.c.status)
        with self._db.transaction() as conn:
            return {row[0]: row[1] for row in conn.execute(query)}


# Which of a shared paper's rows stands for it: the one whose status says most.
_STATUS_ORDER = {
    PaperStatus.TRACKED: 0,
    PaperStatus.UNLINKED: 1,
    PaperStatus.REMOVED: 2,
    PaperStatus.CANDIDATE: 3,
}


def _stands_before(paper: Paper, kept: Paper) -> bool:
    return (_STATUS_ORDER[paper.status], paper.id) < (_STATUS_ORDER[kept.status], kept.id)


def _state_select(author: str) -> sa.Select[Any]:
    p = papers_table
    return (
        sa.select(
            p.c.id, p.c.key, p.c.arxiv_id, p.c.status, p.c.origin, p.c.record_hash, p.c.absent_syncs
        )
        .join(authors_table)
        .where(authors_table.c.name == author)
    )
