"""Versions: which earlier versions each paper's history lacks, and backfilled ones written in.

A paper's history is arXiv's own record: every version's metadata, each a
revision.  ``gaps`` finds what is missing, ``anchors`` loads the stored
versions the missing ones are compared with, and ``store`` adds fetched
versions, one transaction per call, clearing ``papers.backfill_pending``
only once a paper's history holds every version up to its current one.
``refusals``, ``refused`` and ``served`` keep the count of versions arXiv
refused (``syncd.domain.refusals`` decides what the count means).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.model import BackfillWrite, VersionGap, VersionRefusal
from syncd.domain.record import Record, content_hash, split_arxiv_id
from syncd.domain.vocabulary import PaperStatus
from syncd.storage.database import Database, chunks, now, utc
from syncd.storage.paper_index import mark_changed
from syncd.storage.papers import last_seqs, revision_row
from syncd.storage.schema import (
    authors_table,
    paper_authors_table,
    papers_table,
    revisions_table,
    version_refusals_table,
)

__all__ = ["Versions"]


class Versions:
    """The version history of tracked papers."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def gaps(self, author: str | None = None, *, pending_only: bool = False) -> list[VersionGap]:
        """Tracked papers (all, one author's, or only flagged ones) with the versions they hold.

        Every matching paper is listed, complete or not: a flagged paper
        whose history turned out complete still needs its flag cleared.
        """
        p, t, r = papers_table, paper_authors_table, revisions_table
        query = (
            sa.select(p.c.id, p.c.key, p.c.arxiv_id, authors_table.c.name, r.c.version)
            .distinct()
            .select_from(
                p.join(t, t.c.paper_id == p.c.id)
                .join(authors_table, authors_table.c.id == t.c.author_id)
                .join(r, sa.and_(r.c.paper_id == p.c.id, r.c.version.is_not(None)))
            )
            .where(t.c.status == PaperStatus.TRACKED, p.c.arxiv_id.is_not(None))
            .order_by(p.c.id, authors_table.c.name)
        )
        if author is not None:
            query = query.where(authors_table.c.name == author)
        if pending_only:
            query = query.where(p.c.backfill_pending.is_(True))
        held: dict[int, tuple[str, str, str, set[int]]] = {}
        with self._db.transaction() as conn:
            for row in conn.execution_options(yield_per=5000).execute(query):
                held.setdefault(row.id, (row.name, row.key, row.arxiv_id, set()))[3].add(
                    row.version
                )
        return [
            VersionGap(paper_id, name, key, arxiv_id, max(versions), frozenset(versions))
            for paper_id, (name, key, arxiv_id, versions) in held.items()
        ]

    def anchors(self, wanted: Collection[tuple[int, int]]) -> dict[tuple[int, int], Record]:
        """The stored record of each (paper id, version) asked for that the history holds.

        A version observed more than once (a DOI added later) gives its latest revision.
        """
        r = revisions_table
        pairs = set(wanted)
        found: dict[tuple[int, int], Record] = {}
        with self._db.transaction() as conn:
            for chunk in chunks(sorted({paper_id for paper_id, _ in pairs})):
                query = (
                    sa.select(r.c.paper_id, r.c.version, r.c.record)
                    .where(r.c.paper_id.in_(chunk))
                    .where(r.c.version.in_({version for _, version in pairs}))
                    .order_by(r.c.seq)
                )
                for row in conn.execute(query):
                    if (row.paper_id, row.version) in pairs:
                        found[row.paper_id, row.version] = Record.from_dict(row.record)
        return found

    def store(self, writes: Sequence[BackfillWrite]) -> int:
        """Add the backfilled versions in one transaction; return how many revisions were added.

        Versions the history already holds (another process backfilled them
        meanwhile) are skipped, and a paper whose history now holds every
        version up to its current one has its flag cleared.
        """
        when = now()
        paper_ids = [w.paper_id for w in writes]
        with self._db.transaction() as conn:
            # Two backfills of one paper take turns (PostgreSQL; SQLite has one writer).
            _lock_papers(conn, paper_ids)
            held = _stored_versions(conn, paper_ids)
            seqs = last_seqs(conn, paper_ids)
            rows = []
            for write in writes:
                versions = held.setdefault(write.paper_id, set())
                seq = seqs.get(write.paper_id, 0)
                for revision in write.revisions:
                    if revision.record.version in versions:
                        continue
                    versions.add(revision.record.version or 0)
                    seq += 1
                    digest = content_hash(revision.record)
                    rows.append(
                        revision_row(write.paper_id, seq, revision, digest, run_id=None, when=when)
                    )
            if rows:
                conn.execute(revisions_table.insert(), rows)
                mark_changed(conn, {row["paper_id"]: when for row in rows}, revisions=True)
            complete = [
                paper_id
                for paper_id, versions in held.items()
                if versions and versions == set(range(1, max(versions) + 1))
            ]
            for chunk in chunks(complete):
                conn.execute(
                    papers_table.update()
                    .where(papers_table.c.id.in_(chunk))
                    .values(backfill_pending=False)
                )
        return len(rows)

    def refusals(self, ids: Collection[str] | None = None) -> dict[str, VersionRefusal]:
        """The refused versions among versioned ``ids`` (all when None), by versioned id."""
        with self._db.transaction() as conn:
            return _refusals(conn, ids)

    def refused(
        self, reasons: Mapping[str, str], wait: Callable[[int], timedelta | None]
    ) -> dict[str, VersionRefusal]:
        """Count one more refusal of each versioned id (id → why); return their records.

        ``wait(failures)`` is how long a version refused that many times in
        a row is set aside; None keeps it asked for every cycle.
        """
        if not reasons:
            return {}
        when = now()
        with self._db.transaction() as conn:
            before = _refusals(conn, reasons)
            rows = []
            for ident, reason in reasons.items():
                arxiv_id, version = split_arxiv_id(ident)
                if version is None:
                    continue  # only versioned ids are ever refused one by one
                previous = before.get(ident)
                failures = previous.failures + 1 if previous is not None else 1
                delay = wait(failures)
                rows.append(
                    {
                        "arxiv_id": arxiv_id,
                        "version": version,
                        "failures": failures,
                        "last_error": reason[:500],
                        "last_refused_at": when,
                        "next_try_at": when + delay if delay is not None else None,
                    }
                )
            conn.execute(self._db.upsert(version_refusals_table, ("arxiv_id", "version")), rows)
            return _refusals(conn, reasons)

    def served(self, ids: Collection[str]) -> None:
        """Forget the refusals of versioned ``ids``: arXiv has served them now."""
        t = version_refusals_table
        with self._db.transaction() as conn:
            for chunk in chunks(_pairs(ids), _PAIRS_PER_QUERY):
                conn.execute(t.delete().where(sa.tuple_(t.c.arxiv_id, t.c.version).in_(chunk)))

    def set_aside_count(self) -> int:
        """How many refused versions wait for their next try."""
        t = version_refusals_table
        query = sa.select(sa.func.count()).where(t.c.next_try_at.is_not(None))
        with self._db.transaction() as conn:
            return int(conn.scalar(query) or 0)


# Two bound parameters a pair: half of what chunks() allows a plain IN list.
_PAIRS_PER_QUERY = 250


def _pairs(ids: Collection[str]) -> list[tuple[str, int]]:
    """Versioned ids as sorted (arXiv id, version) pairs; ids without a version are skipped."""
    pairs = (split_arxiv_id(i) for i in ids)
    return sorted((arxiv_id, version) for arxiv_id, version in pairs if version is not None)


def _refusals(conn: Connection, ids: Collection[str] | None) -> dict[str, VersionRefusal]:
    t = version_refusals_table
    query = sa.select(t).order_by(t.c.arxiv_id, t.c.version)
    if ids is None:
        rows = list(conn.execute(query))
    else:
        rows = []
        for chunk in chunks(_pairs(ids), _PAIRS_PER_QUERY):
            where = sa.tuple_(t.c.arxiv_id, t.c.version).in_(chunk)
            rows += conn.execute(query.where(where))
    refusals = (
        VersionRefusal(
            row.arxiv_id,
            row.version,
            row.failures,
            row.last_error,
            utc(row.last_refused_at),
            utc(row.next_try_at) if row.next_try_at is not None else None,
        )
        for row in rows
    )
    return {r.versioned_id: r for r in refusals}


def _lock_papers(conn: Connection, paper_ids: Sequence[int]) -> None:
    for chunk in chunks(sorted(paper_ids)):
        conn.execute(
            sa.select(papers_table.c.id).where(papers_table.c.id.in_(chunk)).with_for_update()
        )


def _stored_versions(conn: Connection, paper_ids: Sequence[int]) -> dict[int, set[int]]:
    """The arXiv versions each paper's history holds, by paper id."""
    r = revisions_table
    found: dict[int, set[int]] = {}
    for chunk in chunks(paper_ids):
        query = (
            sa.select(r.c.paper_id, r.c.version)
            .distinct()
            .where(r.c.paper_id.in_(chunk), r.c.version.is_not(None))
        )
        for row in conn.execute(query):
            found.setdefault(row.paper_id, set()).add(row.version)
    return found
