"""Papers and their revisions: the record itself.

Reads open their own transaction.  ``PaperWriter`` works inside the caller's
transaction, so a cycle's papers, revisions and events commit together.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.author_names import name_key
from syncd.domain.model import (
    LatestChange,
    NewRevision,
    Paper,
    PaperState,
    PaperWrite,
    Revision,
)
from syncd.domain.record import content_hash, pasted_arxiv_id
from syncd.domain.vocabulary import PaperStatus
from syncd.errors import StalePlan
from syncd.storage import rows
from syncd.storage.database import Database, among, chunks, now, utc
from syncd.storage.schema import authors_table, events_table, papers_table, revisions_table

__all__ = [
    "Papers",
    "WrittenPaper",
    "author_id",
    "claim_writes",
    "current_revision_ids",
    "last_seqs",
    "paper_select",
    "revision_row",
    "write_papers",
]


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

    def states(self, author: str, arxiv_ids: Collection[str]) -> dict[str, PaperState]:
        """The author's papers among ``arxiv_ids``, by arXiv id; unknown ids are left out."""
        found: dict[str, PaperState] = {}
        with self._db.transaction() as conn:
            for chunk in chunks(list(arxiv_ids)):
                query = _state_select(author).where(among(conn, papers_table.c.arxiv_id, chunk))
                found |= {row.arxiv_id: rows.paper_state(row) for row in conn.execute(query)}
        return found

    def owners(self, arxiv_ids: Collection[str]) -> dict[str, set[str]]:
        """The authors who have a paper among ``arxiv_ids`` (any status), by arXiv id."""
        found: dict[str, set[str]] = {}
        query = sa.select(papers_table.c.arxiv_id, authors_table.c.name).join(authors_table)
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


def author_id(db: Database, conn: Connection, name: str, *, lock: bool = False) -> int:
    """The author's id, created if new; ``lock`` holds the row until the transaction ends.

    Found by ``name_key``: another spelling of the name is the same author.
    """
    key = name_key(name)
    query = sa.select(authors_table.c.id).where(authors_table.c.name_key == key)
    if lock:
        query = query.with_for_update()
    found = conn.execute(query).scalar()
    if found is None:
        conn.execute(
            db.insert_ignoring_conflicts(authors_table, "name_key").values(
                name=name, name_key=key, created_at=now()
            )
        )
        found = conn.execute(query).scalar_one()
    return int(found)


def claim_writes(conn: Connection, author_id: int, read_seq: int | None) -> None:
    """Move the author's write sequence on for an apply that writes their papers.

    With ``read_seq`` (what ``Papers.write_seqs`` said before the plan read
    the papers), only from that value: if another apply moved it since, its
    writes may already be this plan's, and ``StalePlan`` rolls this one back
    to be planned again.  One statement, so a compare-and-set on both
    databases: PostgreSQL re-checks the condition on the row a concurrent
    apply committed, SQLite runs one writer at a time.
    """
    seq = authors_table.c.write_seq
    statement = authors_table.update().where(authors_table.c.id == author_id)
    if read_seq is not None:
        statement = statement.where(seq == read_seq)
    if conn.execute(statement.values(write_seq=seq + 1)).rowcount != 1:
        raise StalePlan("another writer changed the author's papers after this plan read them")


def known_keys(conn: Connection, author_id: int) -> set[str]:
    """The keys of the author's papers."""
    query = sa.select(papers_table.c.key).where(papers_table.c.author_id == author_id)
    return set(conn.scalars(query))


@dataclass(frozen=True, slots=True)
class WrittenPaper:
    """A write as applied: the paper's id and, if it is announced, its latest revision's id
    (appended by the write, or for a removal the last one it had)."""

    write: PaperWrite
    paper_id: int
    last_revision_id: int | None


def write_papers(
    conn: Connection,
    author_id: int,
    writes: Sequence[PaperWrite],
    *,
    run_id: int | None,
    when: datetime,
) -> list[WrittenPaper]:
    """Apply ``writes`` with a few executemany statements, inside the caller's transaction.

    Ids are read back by unique keys rather than RETURNING, which would make
    SQLite insert row by row.
    """
    # Each record is hashed once, for its revision and, if latest, its paper.
    hashes = {id(r.record): content_hash(r.record) for w in writes for r in w.revisions}
    paper_ids = _insert_papers(conn, author_id, writes, when, hashes)
    pairs = list(zip(writes, paper_ids, strict=True))
    last_seq = last_seqs(
        conn, [paper_id for write, paper_id in pairs if write.paper_id and write.revisions]
    )
    revision_rows = [
        revision_row(
            paper_id,
            last_seq.get(paper_id, 0) + offset,
            revision,
            hashes[id(revision.record)],
            run_id=run_id,
            when=when,
        )
        for write, paper_id in pairs
        for offset, revision in enumerate(write.revisions, start=1)
    ]
    if revision_rows:
        conn.execute(revisions_table.insert(), revision_rows)
    _update_papers(conn, writes, when, hashes, last_seq)
    # Only announced writes need their paper's current revision: their event points
    # at it, a removal's or a return's too (the paper's last known state), so every
    # event carries the record of the paper it names.
    last_revision = current_revision_ids(
        conn, [paper_id for write, paper_id in pairs if write.event_type]
    )
    return [
        WrittenPaper(write, paper_id, last_revision.get(paper_id) if write.event_type else None)
        for write, paper_id in pairs
    ]


def revision_row(
    paper_id: int,
    seq: int,
    revision: NewRevision,
    record_hash: str,
    *,
    run_id: int | None,
    when: datetime,
) -> dict[str, Any]:
    """The revisions row of ``revision``, the ``seq``-th of its paper."""
    record = revision.record
    return {
        "paper_id": paper_id,
        "seq": seq,
        "observed_at": when,
        "source": revision.source,
        "version": record.version,
        "version_date": record.version_date,
        "kinds": list(revision.kinds),
        "changes": dict(revision.changes),
        "record": record.to_dict(),
        "record_hash": record_hash,
        "sync_run_id": run_id,
    }


def last_seqs(conn: Connection, paper_ids: Sequence[int]) -> dict[int, int]:
    """The seq of each paper's last revision, by paper id (papers without one left out)."""
    return _per_paper(conn, sa.func.max(revisions_table.c.seq), paper_ids)


def _insert_papers(
    conn: Connection,
    author_id: int,
    writes: Sequence[PaperWrite],
    when: datetime,
    hashes: Mapping[int, str],
) -> list[int]:
    """Insert the new papers; return every write's paper id, in order."""
    inserts: list[dict[str, Any]] = [
        {
            "author_id": author_id,
            "key": write.key,
            "arxiv_id": write.arxiv_id,
            "status": write.status,
            "origin": write.origin,
            "absent_syncs": write.absent_syncs,
            "backfill_pending": write.backfill_pending,
            "candidate_reason": write.candidate_reason,
            "record": write.revisions[-1].record.to_dict(),
            "record_hash": hashes[id(write.revisions[-1].record)],
            "created_at": when,
            "updated_at": when,
        }
        for write in writes
        if write.paper_id is None
    ]
    if inserts:
        conn.execute(papers_table.insert(), inserts)
    new_ids = _paper_ids(conn, author_id, [row["key"] for row in inserts])
    return [w.paper_id if w.paper_id is not None else new_ids[w.key] for w in writes]


def _update_papers(
    conn: Connection,
    writes: Sequence[PaperWrite],
    when: datetime,
    hashes: Mapping[int, str],
    last_seq: Mapping[int, int],
) -> None:
    """Update the known papers, after their new revisions are written.

    A paper's record is its latest revision's, copied in SQL rather than
    encoded a second time: a busy cycle rewrites thousands of records.
    """
    p, r = papers_table, revisions_table
    latest_record = (
        sa.select(r.c.record)
        .where(r.c.paper_id == p.c.id, r.c.seq == sa.bindparam("b_seq"))
        .scalar_subquery()
    )
    by_shape: dict[bool, list[dict[str, Any]]] = {True: [], False: []}
    for write in writes:
        if write.paper_id is None:
            continue
        row: dict[str, Any] = {
            "b_id": write.paper_id,
            "arxiv_id": write.arxiv_id,  # set when a seed paper is linked
            "status": write.status,
            "absent_syncs": write.absent_syncs,
            "b_backfill": write.backfill_pending,
            "b_reason": write.candidate_reason,
            "updated_at": when,
        }
        if write.revisions:
            row["record_hash"] = hashes[id(write.revisions[-1].record)]
            row["b_seq"] = last_seq.get(write.paper_id, 0) + len(write.revisions)
        by_shape[bool(write.revisions)].append(row)
    # executemany needs one shape per statement: with or without a new record
    for with_record, same_shape in by_shape.items():
        if not same_shape:
            continue
        values: dict[str, Any] = {
            c: sa.bindparam(c) for c in ("arxiv_id", "status", "absent_syncs", "updated_at")
        }
        # Only a backfill clears the flag: a later write must not drop it.
        values["backfill_pending"] = sa.or_(
            p.c.backfill_pending, sa.bindparam("b_backfill", type_=sa.Boolean)
        )
        # Only candidates have a reason; a write without one keeps the held one's.
        values["candidate_reason"] = sa.case(
            (sa.bindparam("status") != PaperStatus.CANDIDATE, sa.null()),
            else_=sa.func.coalesce(sa.bindparam("b_reason", type_=sa.String), p.c.candidate_reason),
        )
        if with_record:
            values |= {"record_hash": sa.bindparam("record_hash"), "record": latest_record}
        statement = p.update().where(p.c.id == sa.bindparam("b_id")).values(values)
        conn.execute(statement, same_shape)


def _paper_ids(conn: Connection, author_id: int, keys: Sequence[str]) -> dict[str, int]:
    ids: dict[str, int] = {}
    for chunk in chunks(keys):
        query = sa.select(papers_table.c.key, papers_table.c.id).where(
            papers_table.c.author_id == author_id, among(conn, papers_table.c.key, chunk)
        )
        ids |= {row.key: row.id for row in conn.execute(query)}
    return ids


def current_revision_ids(conn: Connection, paper_ids: Sequence[int]) -> dict[int, int]:
    """The id of the revision holding each paper's current record, by paper id.

    The latest revision whose hash is the paper's: a version backfilled
    since is stored later but is not the paper's record.
    """
    p, r = papers_table, revisions_table
    found: dict[int, int] = {}
    for chunk in chunks(paper_ids):
        query = (
            sa.select(r.c.paper_id, sa.func.max(r.c.id))
            .join(p, sa.and_(p.c.id == r.c.paper_id, p.c.record_hash == r.c.record_hash))
            .where(r.c.paper_id.in_(chunk))
            .group_by(r.c.paper_id)
        )
        found |= {row[0]: row[1] for row in conn.execute(query)}
    return found


def _per_paper(
    conn: Connection, aggregate: sa.ColumnElement[Any], paper_ids: Sequence[int]
) -> dict[int, int]:
    """``aggregate`` over each paper's revisions, by paper id."""
    found: dict[int, int] = {}
    for chunk in chunks(paper_ids):
        query = (
            sa.select(revisions_table.c.paper_id, aggregate)
            .where(among(conn, revisions_table.c.paper_id, chunk))
            .group_by(revisions_table.c.paper_id)
        )
        found |= {row[0]: row[1] for row in conn.execute(query)}
    return found


def _state_select(author: str) -> sa.Select[Any]:
    p = papers_table
    return (
        sa.select(
            p.c.id, p.c.key, p.c.arxiv_id, p.c.status, p.c.origin, p.c.record_hash, p.c.absent_syncs
        )
        .join(authors_table)
        .where(authors_table.c.name == author)
    )


def paper_select() -> sa.Select[Any]:
    """Papers joined with their author's name, as ``rows.paper`` reads them."""
    return sa.select(papers_table, authors_table.c.name.label("author")).join(authors_table)
