"""Papers and their revisions written: the record itself.

Every write works inside the caller's transaction, so a cycle's papers,
revisions and events commit together; the reads, each in a transaction of
its own, are ``syncd.storage.paper_reads``'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from syncd.domain.author_names import name_key
from syncd.domain.model import NewRevision, PaperWrite
from syncd.domain.record import content_hash
from syncd.domain.vocabulary import PaperStatus
from syncd.errors import StalePlan
from syncd.storage.database import Database, among, chunks, now
from syncd.storage.schema import authors_table, papers_table, revisions_table

__all__ = [
    "WrittenPaper",
    "author_id",
    "claim_writes",
    "current_revision_ids",
    "last_seqs",
    "paper_select",
    "revision_row",
    "write_papers",
]


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


def paper_select() -> sa.Select[Any]:
    """Papers joined with their author's name, as ``rows.paper`` reads them."""
    return sa.select(papers_table, authors_table.c.name.label("author")).join(authors_table)
