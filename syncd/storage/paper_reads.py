"""Reads of the papers and revisions tables: each opens its own transaction.

What a cycle writes goes through ``syncd.storage.papers`` inside the
caller's transaction; these reads serve the planner's look-ups, the pages,
the API and the commands.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.authors import Candidate
from syncd.domain.model import LatestChange, Paper, PaperState, Revision
from syncd.domain.record import pasted_arxiv_id
from syncd.domain.vocabulary import PaperStatus
from syncd.storage import rows
from syncd.storage.database import Database, among, chunks, utc
from syncd.storage.papers import paper_select
from syncd.storage.schema import (
    authors_table,
    events_table,
    paper_authors_table,
    papers_table,
    revisions_table,
)
from syncd.storage.stories import tracked_names

__all__ = ["HOLDS", "Papers", "status_counts", "stories_of"]


class Papers:
    """Reads of the papers and revisions tables."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def all(self, author: str | None = None) -> list[Paper]:
        """Every paper once, or one author's, ordered by key; each with the followed authors
        tracking it.

        A paper several authors hold is shown as the one holding it best
        holds it (tracked first, then by name): one story, whoever found it.
        """
        query = paper_select().order_by(papers_table.c.key, authors_table.c.name)
        if author is not None:
            query = query.where(authors_table.c.name == author)
        with self._db.transaction() as conn:
            return stories_of(conn, conn.execute(query).all())

    def states(self, author: str, arxiv_ids: Collection[str]) -> dict[str, PaperState]:
        """The author's papers among ``arxiv_ids``, by arXiv id; unknown ids are left out."""
        found: dict[str, PaperState] = {}
        with self._db.transaction() as conn:
            for chunk in chunks(list(arxiv_ids)):
                query = _state_select(author).where(among(conn, papers_table.c.arxiv_id, chunk))
                found |= {row.arxiv_id: rows.paper_state(row) for row in conn.execute(query)}
        return found

    def stories(self, arxiv_ids: Collection[str]) -> dict[str, Paper]:
        """The known papers among ``arxiv_ids``, whoever holds them, by arXiv id: what an
        author's new entry joins rather than starting a second story."""
        found: dict[str, Paper] = {}
        with self._db.transaction() as conn:
            for chunk in chunks(list(arxiv_ids)):
                query = paper_select().where(among(conn, papers_table.c.arxiv_id, chunk))
                found |= {p.arxiv_id or "": p for p in stories_of(conn, conn.execute(query).all())}
        return found

    def owners(self, arxiv_ids: Collection[str]) -> dict[str, set[str]]:
        """The authors who have a paper among ``arxiv_ids`` (any status), by arXiv id."""
        found: dict[str, set[str]] = {}
        query = sa.select(papers_table.c.arxiv_id, authors_table.c.name).select_from(_TIED)
        with self._db.transaction() as conn:
            for chunk in chunks(list(arxiv_ids)):
                for row in conn.execute(query.where(papers_table.c.arxiv_id.in_(chunk))):
                    found.setdefault(row.arxiv_id, set()).add(row.name)
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
                found = conn.execute(query).all()
                tracking = tracked_names(conn, [row.id for row in found])
                papers += [rows.paper(row, tracking.get(row.id, ())) for row in found]
        return papers

    def with_status(self, author: str, status: PaperStatus) -> list[Paper]:
        """The author's papers of one status (e.g. the few ``unlinked`` seed papers)."""
        query = (
            paper_select()
            .where(authors_table.c.name == author, paper_authors_table.c.status == status)
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
            .select_from(_TIED)
            .where(
                authors_table.c.name == author,
                paper_authors_table.c.status == PaperStatus.TRACKED,
                paper_authors_table.c.claimed.is_(False),
            )
        )
        with self._db.transaction() as conn:
            return int(conn.scalar(query) or 0)

    def candidate_count(self, author: str) -> int:
        """How many of the author's papers are held as candidates."""
        query = (
            sa.select(sa.func.count())
            .select_from(_TIED)
            .where(
                authors_table.c.name == author,
                paper_authors_table.c.status == PaperStatus.CANDIDATE,
            )
        )
        with self._db.transaction() as conn:
            return int(conn.scalar(query) or 0)

    def tracked_missing_from(self, author: str, seen: Collection[str]) -> list[PaperState]:
        """The author's tracked papers whose arXiv id is not in ``seen``.

        Streams the tracked ids so a large record is never loaded whole.
        """
        # A claimed paper is the author's by their own feed, read only daily:
        # the name query missing it says nothing.
        t = paper_authors_table
        query = _state_select(author).where(
            t.c.status == PaperStatus.TRACKED, t.c.claimed.is_(False)
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
            .select_from(_TIED)
            .where(authors_table.c.name == author)
            .where(paper_authors_table.c.status.in_((PaperStatus.TRACKED, PaperStatus.UNLINKED)))
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

    def candidates(self, name: str, limit: int | None = None) -> list[Candidate]:
        """The author's candidates with the reason each is held, by arXiv id (the first
        ``limit`` of them, given)."""
        p, t = papers_table, paper_authors_table
        query = (
            sa.select(p.c.arxiv_id, p.c.record, t.c.candidate_reason)
            .select_from(p.join(t, t.c.paper_id == p.c.id).join(authors_table))
            .where(authors_table.c.name == name, t.c.status == PaperStatus.CANDIDATE)
            .order_by(p.c.arxiv_id)
            .limit(limit)
        )
        with self._db.transaction() as conn:
            return [
                Candidate(
                    row.arxiv_id,
                    row.record.get("title"),
                    row.record.get("version"),
                    row.candidate_reason,
                )
                for row in conn.execute(query)
            ]

    def find(self, ref: str) -> Paper | None:
        """The paper whose key is ``ref``, or whose arXiv id it names in any form people
        paste (``record.pasted_arxiv_id``: versioned, ``arXiv:``, an arxiv.org address);
        None when there is none."""
        arxiv_id = pasted_arxiv_id(ref)
        condition = papers_table.c.key == ref
        if arxiv_id is not None:
            condition = sa.or_(condition, papers_table.c.arxiv_id == arxiv_id)
        first = sa.select(papers_table.c.id).where(condition).order_by(papers_table.c.id).limit(1)
        query = paper_select().where(papers_table.c.id == first.scalar_subquery())
        with self._db.transaction() as conn:
            found = stories_of(conn, conn.execute(query).all())
        return found[0] if found else None

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
        """How many papers have each status: a paper's is its best hold's (``HOLDS``)."""
        with self._db.transaction() as conn:
            return {str(status): n for status, n in status_counts(conn, sa.true()).items()}


# How well an author holds a paper, best first: a paper is shown as its best hold.
HOLDS = (
    PaperStatus.TRACKED,
    PaperStatus.CANDIDATE,
    PaperStatus.UNLINKED,
    PaperStatus.REMOVED,
    PaperStatus.REJECTED,
)
_TIED = papers_table.join(
    paper_authors_table, paper_authors_table.c.paper_id == papers_table.c.id
).join(authors_table, authors_table.c.id == paper_authors_table.c.author_id)


def _hold_rank(status: sa.ColumnElement[str]) -> sa.ColumnElement[int]:
    return sa.case(*((status == s, rank) for rank, s in enumerate(HOLDS)), else_=len(HOLDS))


def status_counts(conn: Connection, holds: sa.ColumnElement[bool]) -> dict[PaperStatus, int]:
    """How many papers have each status among the ``paper_authors`` rows ``holds`` takes,
    a paper's being its best hold's; statuses no paper has are left out."""
    t = paper_authors_table
    best = sa.func.min(_hold_rank(t.c.status))
    per_paper = sa.select(best.label("rank")).where(holds).group_by(t.c.paper_id).subquery()
    query = sa.select(per_paper.c.rank, sa.func.count()).group_by(per_paper.c.rank)
    return {HOLDS[rank]: count for rank, count in conn.execute(query)}


def stories_of(conn: Connection, found: Sequence[sa.Row[Any]]) -> list[Paper]:
    """Papers from ``paper_select`` rows, each once (as its best hold: tracked first, then
    by author name), in the rows' order, with the followed authors tracking it; claimed
    when one of the rows' authors claims it."""
    best: dict[int, sa.Row[Any]] = {}
    claimed: set[int] = set()
    for row in found:
        held = best.get(row.id)
        if held is None or _rank(row) < _rank(held):
            best[row.id] = row
        if row.claimed:
            claimed.add(row.id)
    tracking = tracked_names(conn, list(best))
    return [
        replace(rows.paper(row, tracking.get(row.id, ())), claimed=row.id in claimed)
        for row in best.values()
    ]


def _rank(row: sa.Row[Any]) -> tuple[int, str]:
    status = PaperStatus(row.status)
    return (HOLDS.index(status) if status in HOLDS else len(HOLDS), row.author)


def _state_select(author: str) -> sa.Select[Any]:
    p, t = papers_table, paper_authors_table
    return (
        sa.select(
            p.c.id, p.c.key, p.c.arxiv_id, t.c.status, t.c.origin, p.c.record_hash, t.c.absent_syncs
        )
        .select_from(_TIED)
        .where(authors_table.c.name == author)
    )
